// RUN: rev-opt %s -p convert-std-to-llvm | filecheck %s

// Functions of several blocks, as mlir-opt --convert-scf-to-cf leaves them:
// blocks are translated dominators first (^bb2 uses a value ^bb1 defines,
// although it is written before it), block arguments become phis.
// CHECK-LABEL: llvm.func internal @count(%n: i64) -> i64
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    llvm.br ^[[HEAD:.*]](%[[ZERO]] : i64)
// CHECK-NEXT:  ^[[HEAD]](%i: i64):
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "slt" %i, %n : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]](%i : i64)
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %next = llvm.add %i, %[[ONE]] : i64
// CHECK-NEXT:    llvm.br ^[[HEAD]](%next : i64)
// CHECK-NEXT:  ^[[EXIT]](%r: i64):
// CHECK-NEXT:    llvm.return %r : i64
func.func @count(%n: i64) -> i64 {
  %zero = arith.constant 0 : i64
  cf.br ^head(%zero : i64)
^exit(%r: i64):
  func.return %r : i64
^head(%i: i64):
  %more = arith.cmpi slt, %i, %n : i64
  cf.cond_br %more, ^body, ^exit(%i : i64)
^body:
  %one = arith.constant 1 : i64
  %next = arith.addi %i, %one : i64
  cf.br ^head(%next : i64)
}

// A failed cf.assert traps; the function goes on where it holds.
// CHECK-LABEL: llvm.func internal @checked(%x: i64) -> i64
// CHECK:         llvm.cond_br %{{.*}}, ^[[HOLDS:.*]], ^[[FAILS:.*]]
// CHECK-NEXT:  ^[[HOLDS]]:
// CHECK-NEXT:    llvm.return %x : i64
// CHECK-NEXT:  ^[[FAILS]]:
// CHECK-NEXT:    llvm.call_intrinsic "llvm.trap"() : () -> ()
// CHECK-NEXT:    llvm.unreachable
func.func @checked(%x: i64) -> i64 {
  %zero = arith.constant 0 : i64
  %positive = arith.cmpi sgt, %x, %zero : i64
  cf.assert %positive, "x must be positive"
  func.return %x : i64
}
