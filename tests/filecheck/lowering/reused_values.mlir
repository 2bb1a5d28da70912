// RUN: rev-opt %s -p convert-std-to-llvm | filecheck %s

// A constant, an array element's address and an integer comparison are
// emitted once in a scope and used again by the code after an scf.if or a
// loop, which its block dominates (every checked access is an scf.if, so
// each access emitted its own before); what a branch or a loop body emitted
// is not used after it, and the same constant in a branch is a constant of
// its own. A field of a descriptor the translation built (here a
// parameter's: its pointer and sizes) is that value itself, in every block.

// CHECK-LABEL: llvm.func internal @after_an_if(%a_data: !llvm.ptr {llvm.noalias}, %a_size0: i64, %c: i1) -> f64
// CHECK:         %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[FIRST:.*]] = llvm.getelementptr inbounds %a_data[%[[TWO]]]
// An if without else branches to the join directly, not through an empty
// block.
// CHECK:         llvm.cond_br %{{.*}}, ^[[THEN:.*]], ^[[MERGE:.*]]
// CHECK-NEXT:  ^[[THEN]]:
// CHECK-NEXT:    %[[AGAIN:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[INNER:.*]] = llvm.getelementptr inbounds %a_data[%[[AGAIN]]]
// CHECK-NEXT:    llvm.load %[[INNER]]
// CHECK-NEXT:    llvm.store %{{.*}}, %[[INNER]]
// CHECK-NEXT:    llvm.br ^[[MERGE]]
// CHECK-NEXT:  ^[[MERGE]]:
// CHECK-NEXT:    %z = llvm.load %[[FIRST]]
// CHECK:         llvm.return
// CHECK-NOT:     llvm.extractvalue
// CHECK-LABEL: llvm.func @_mlir_ciface_after_an_if(
func.func @after_an_if(%a: memref<?xf64>, %c: i1) -> f64 {
  %two = arith.constant 2 : index
  %x = memref.load %a[%two] : memref<?xf64>
  scf.if %c {
    %again = arith.constant 2 : index
    %y = memref.load %a[%again] : memref<?xf64>
    memref.store %y, %a[%again] : memref<?xf64>
  }
  %z = memref.load %a[%two] : memref<?xf64>
  %s = arith.addf %x, %z : f64
  func.return %s : f64
}

// CHECK-LABEL: llvm.func internal @after_a_loop(
// CHECK:         %[[C0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[C1:.*]] = llvm.mlir.constant(1) : i64
// CHECK:         llvm.cond_br %{{.*}}, ^[[BODY:.*]](%[[C0]] : i64), ^[[EXIT:.*]]
// CHECK-NEXT:  ^[[BODY]](%i: i64):
// CHECK-NEXT:    llvm.getelementptr inbounds %a_data_1[%i]
// CHECK:         llvm.getelementptr inbounds %a_data_1[%[[C0]]]
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.getelementptr inbounds %a_data_1[%[[C1]]]
// CHECK:         llvm.return
func.func @after_a_loop(%a: memref<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    memref.store %v, %a[%c0] : memref<?xf64>
  }
  %w = memref.load %a[%c1] : memref<?xf64>
  func.return %w : f64
}

// A two-dimensional address is one multiplication, addition and
// getelementptr for its every access in the scope, and a comparison of the
// same values by the same predicate is one icmp: each access's check (here
// written out) compares the same index with the same size again.

// CHECK-LABEL: llvm.func internal @checked_twice(
// CHECK:         %[[FITS:.*]] = llvm.icmp "ult" %i{{[_0-9]*}}, %a_size0
// CHECK-NEXT:    llvm.cond_br %[[FITS]]
// CHECK:         llvm.mul %i{{[_0-9]*}}, %a_size1
// CHECK-NEXT:    llvm.add
// CHECK-NEXT:    %[[AT:.*]] = llvm.getelementptr inbounds %a_data
// CHECK-NEXT:    llvm.load %[[AT]]
// CHECK-NEXT:    llvm.cond_br %[[FITS]]
// CHECK-NOT:     llvm.icmp
// CHECK-NOT:     llvm.getelementptr
// CHECK:         llvm.store %{{.*}}, %[[AT]]
// CHECK-NEXT:    llvm.return
func.func @checked_twice(%a: memref<?x?xf64>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %size = memref.dim %a, %c0 : memref<?x?xf64>
  %fits = arith.cmpi ult, %i, %size : index
  cf.assert %fits, "out of bounds"
  %x = memref.load %a[%i, %j] : memref<?x?xf64>
  %fits_again = arith.cmpi ult, %i, %size : index
  cf.assert %fits_again, "out of bounds"
  %y = arith.addf %x, %x : f64
  memref.store %y, %a[%i, %j] : memref<?x?xf64>
  func.return
}
