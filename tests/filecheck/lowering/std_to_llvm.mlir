// RUN: rev-opt %s -p rev-invert,rev-lower-to-std,convert-std-to-llvm | filecheck %s
// RUN: rev-opt %s -p rev-invert,rev-lower-to-std,convert-std-to-llvm -t llvm | filecheck %s --check-prefix=IR

// Scalars keep their types, index is i64, a memref is {ptr, sizes}, passed
// as its noalias pointer and its sizes (the error slot too); several results
// come back as a struct; structured loops become blocks.
// CHECK-LABEL: llvm.func internal @scale(%s: f64, %m_data: !llvm.ptr {llvm.noalias}, %m_size0: i64, %n: i64, %err_data: !llvm.ptr {llvm.noalias}, %err_size0: i64) -> !llvm.struct<(f64, i64)>
// A constant positive step needs no check: the loop's entry test comes
// first, then the body: the index checked against the array's size (a
// failing check calls the module's report, which stores in the error slot
// and leaves the run), load, compute, store; then the next iteration where
// the distance left to n exceeds the step, unsigned (i + step may wrap).
// CHECK-NOT:     llvm.call @revmlir.report
// CHECK:         %[[ENTER:.*]] = llvm.icmp "slt" %zero, %n : i64
// CHECK-NEXT:    llvm.cond_br %[[ENTER]], ^[[BODY:.*]](%zero, %s : i64, f64), ^[[EXIT:.*]](%s : f64)
// CHECK-NEXT:  ^[[BODY]](%[[I:.*]]: i64, %acc: f64):
// CHECK:         llvm.icmp "ult" %[[I]], %{{.*}} : i64
// CHECK:         llvm.return %{{.*}} : !llvm.struct<(f64, i64)>
// CHECK-NOT:     llvm.store
// CHECK:         llvm.call @revmlir.report(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i64, i64, i64, i64, i64) -> ()
// CHECK:         llvm.getelementptr inbounds %{{.*}}[%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:    %[[E:.*]] = llvm.load
// CHECK-NEXT:    %[[P:.*]] = llvm.fmul
// CHECK-NEXT:    %{{.*}} = llvm.fadd %[[E]], %[[P]] : f64
// CHECK:         llvm.store
// CHECK-NEXT:    %[[LEFT:.*]] = llvm.sub %n, %[[I]] : i64
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "ugt" %[[LEFT]], %one : i64
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.add %[[I]], %one : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[BODY]](%[[NEXT]], %acc : i64, f64), ^[[EXIT]](%acc : f64)
// The C entry point: one pointer per argument plus the error slot (the
// native runtime later wraps it in a setjmp guard, revmlir/runtime/guard.py).
// CHECK-LABEL: llvm.func @scale_ciface(%{{.*}}: !llvm.ptr)
// CHECK:         llvm.call @scale
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func internal @scale.inv(
// CHECK:         llvm.fmul
// CHECK:         llvm.fsub
// IR: define {double, i64} @"scale"(double %{{.*}}, ptr noalias %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, ptr noalias %{{.*}}, i64 %{{.*}})
// IR: define void @"scale_ciface"(ptr
// IR: define void @"scale.inv_ciface"(ptr
rev.func @scale(%s: f64, %m: memref<?xf64>, %n: index) {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %s1 = rev.for %zero to %n step %one : index (%s) : f64 {
  ^bb0(%i: index, %acc: f64):
    %e = rev.take %m[%i] : memref<?xf64>
    %p = arith.mulf %acc, %acc : f64
    %e1 = rev.add %e, %p : f64
    rev.put %e1, %m[%i] : memref<?xf64>
    rev.yield %acc : f64
  }
  rev.return %s1, %n : f64, index
}
