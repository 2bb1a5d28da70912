// RUN: rev-translate %s --emit=ptx | filecheck %s

// A kernel's grid-stride loop is versioned on its index checks
// (docs/design.md, decision 58): where x[i] and y[i] are in range at the
// thread's first element and at n − 1 (and n ≤ 2³¹), the thread runs the
// loop without its checks: per element the two addresses, the two loads
// (x read only: ld.global.nc), the math, the store and the loop's step and
// test (the distance left to n against the stride, which cannot overflow),
// eleven instructions. Otherwise it runs the checked loop, which
// reports the first element out of range as before.
// CHECK-LABEL: .entry axpy(
// CHECK:         setp.gt.s64 %p{{[0-9]+}}, %rd{{[0-9]+}}, 2147483648;
// CHECK:         @%p{{[0-9]+}} bra [[CHECKED:\$L__BB[0-9_]+]];
// CHECK:       [[FAST:\$L__BB[0-9_]+]]:
// CHECK-NEXT:    add.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// CHECK-NEXT:    ld.global.nc.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}];
// CHECK-NEXT:    add.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// CHECK-NEXT:    ld.global.b64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}];
// CHECK-NEXT:    mul.rn.f64
// CHECK-NEXT:    add.rn.f64
// CHECK-NEXT:    st.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NEXT:    add.s64
// CHECK-NEXT:    sub.s64
// CHECK-NEXT:    setp.gt.u64
// CHECK-NEXT:    @%p{{[0-9]+}} bra [[FAST]];
// CHECK:       [[CHECKED]]:
// CHECK:         call.uni revmlir_$_report, (param0, param1, param2, param3);
// CHECK:         call.uni revmlir_$_report, (param0, param1, param2, param3);

func.func @axpy(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %yi = memref.load %y[%i] : memref<?xf64>
    %p = arith.mulf %xi, %a : f64
    %s = arith.addf %yi, %p : f64
    memref.store %s, %y[%i] : memref<?xf64>
    scf.reduce
  }
  func.return %a : f64
}
