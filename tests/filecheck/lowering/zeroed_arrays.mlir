// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety | filecheck %s

rev.func @zeroed(%y: f64, %n: index, %m: index) {
  %a = anc.array_alloc(%n, %m) : memref<?x?xf64>
  anc.array_free %a(%n, %m) : memref<?x?xf64>
  rev.return %y, %n, %m : f64, index, index
}

// The loops that zero a new ancilla array, bounded by its sizes (checked
// before), neither count nor poll, which lets LLVM make them a memset; the
// free's check of every element polls as any loop does.
// CHECK-LABEL: func.func @zeroed(
// CHECK:         %[[ITERATIONS:.*]] = memref.alloca() : memref<1xi64>
// CHECK:         memref.alloc(
// CHECK:         scf.for
// CHECK-NOT:       revmlir.poll
// CHECK-NOT:       %[[ITERATIONS]]
// CHECK:           scf.for
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      } {rev.unpolled}
// CHECK-NEXT:    } {rev.unpolled}
// CHECK:         scf.for
// CHECK-NEXT:      %[[AT:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.load %[[ITERATIONS]][%[[AT]]]
// CHECK:           func.call @revmlir.poll(
