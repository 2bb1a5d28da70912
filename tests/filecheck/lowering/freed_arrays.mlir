// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s

// The checked free of an array whose sizes are known at compile time and
// that has at most 30 elements tests every element at once, in straight-line
// code (no loop, which native code would poll for Ctrl-C): each element's
// load, their bits or-ed, shifted left by one (a float's sign dropped) and
// compared with 0, and one branch on the result leads to the
// element-by-element checks, which load the elements again and report the
// first that is not zero within tolerance, with its indices.  A larger
// array, or one of run-time size, is checked element by element.

// CHECK-LABEL: func.func @known(%y: f64, %err: memref<6xi64>) -> f64 {
// CHECK:         memref.store
// CHECK:         %{{.*}} = arith.constant 0.000000e+00 : f64
// CHECK-NOT:     scf.for
// CHECK:         %[[E00:.*]] = memref.load %a[%{{.*}}, %{{.*}}] : memref<2x3xf64>
// CHECK-COUNT-5: memref.load %a[%{{.*}}, %{{.*}}] : memref<2x3xf64>
// CHECK-NOT:     math.absf
// CHECK:         %[[B00:.*]] = arith.bitcast %[[E00]] : f64 to i64
// CHECK-COUNT-5: arith.bitcast
// CHECK-NEXT:    %{{.*}} = arith.ori %[[B00]], %{{.*}} : i64
// CHECK-COUNT-4: arith.ori
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[MAGNITUDE:.*]] = arith.shli %{{.*}}, %[[ONE]] : i64
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[SOME:.*]] = arith.cmpi ne, %[[MAGNITUDE]], %[[ZERO]] : i64
// CHECK-NEXT:    scf.if %[[SOME]] {
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          %[[AGAIN:.*]] = memref.load %a[%[[K]], %[[L]]] : memref<2x3xf64>
// CHECK-NEXT:          %[[SIZE2:.*]] = math.absf %[[AGAIN]] : f64
// CHECK-NEXT:          %[[TOL2:.*]] = arith.constant 1.000000e-08 : f64
// CHECK-NEXT:          %[[OK2:.*]] = arith.cmpf ole, %[[SIZE2]], %[[TOL2]] : f64
// CHECK-NEXT:          %{{.*}} = arith.constant true
// CHECK-NEXT:          %[[BAD:.*]] = arith.xori %[[OK2]], %{{.*}} : i1
// CHECK-NEXT:          scf.if %[[BAD]] {
// CHECK:                 %[[BITS:.*]] = arith.bitcast %[[AGAIN]] : f64 to i64
// CHECK-NEXT:            %[[AT_K:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:            %[[AT_L:.*]] = arith.index_cast %[[L]] : index to i64
// CHECK:                 func.call @revmlir.report(%err, %{{.*}}, %[[BITS]], %[[AT_K]], %[[AT_L]], %{{.*}})
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : f64
rev.func @known(%y: f64) {
  %a = anc.array_alloc() : memref<2x3xf64>
  anc.array_free %a() : memref<2x3xf64>
  rev.return %y : f64
}

// CHECK-LABEL: func.func @large(%y: f64, %err: memref<6xi64>) -> f64 {
// CHECK:         memref.store
// CHECK-NOT:     arith.ori
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[E:.*]] = memref.load %a[%[[I]], %[[J]]] : memref<5x7xf64>
// CHECK-NEXT:        %[[SIZE:.*]] = math.absf %[[E]] : f64
// CHECK-NEXT:        %[[TOL:.*]] = arith.constant 1.000000e-08 : f64
// CHECK-NEXT:        %[[OK:.*]] = arith.cmpf ole, %[[SIZE]], %[[TOL]] : f64
// CHECK-NEXT:        %{{.*}} = arith.constant true
// CHECK-NEXT:        %[[BAD:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK-NEXT:        scf.if %[[BAD]] {
// CHECK:               func.call @revmlir.report
// CHECK-NOT:     arith.ori
// CHECK:         func.return %y : f64
rev.func @large(%y: f64) {
  %a = anc.array_alloc() : memref<5x7xf64>
  anc.array_free %a() : memref<5x7xf64>
  rev.return %y : f64
}

// CHECK-LABEL: func.func @sized(%y: f64, %n: index, %err: memref<6xi64>) -> (f64, index) {
// CHECK:         memref.store
// CHECK-NOT:     iter_args
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[E:.*]] = memref.load %a[%[[I]]] : memref<?xf64>
// CHECK-NEXT:      %[[SIZE:.*]] = math.absf %[[E]] : f64
// CHECK-NEXT:      %[[TOL:.*]] = arith.constant 1.000000e-08 : f64
// CHECK-NEXT:      %[[OK:.*]] = arith.cmpf ole, %[[SIZE]], %[[TOL]] : f64
// CHECK-NEXT:      %{{.*}} = arith.constant true
// CHECK-NEXT:      %[[BAD:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK-NEXT:      scf.if %[[BAD]] {
// CHECK:             func.call @revmlir.report
// CHECK-NOT:     iter_args
// CHECK:         func.return %y, %n : f64, index
rev.func @sized(%y: f64, %n: index) {
  %a = anc.array_alloc(%n) : memref<?xf64>
  anc.array_free %a(%n) : memref<?xf64>
  rev.return %y, %n : f64, index
}

// At the limit (30 elements) the test is straight-line: 30 loads with
// constant indices, 29 `or`s, one branch.
// CHECK-LABEL: func.func @limit(%y: f64, %err: memref<6xi64>) -> f64 {
// CHECK:         memref.store
// CHECK:         %{{.*}} = arith.constant 0.000000e+00 : f64
// CHECK-NOT:     scf.for
// CHECK-COUNT-30: memref.load %a[%{{.*}}] : memref<30xf64>
// CHECK-NOT:     scf.for
// CHECK-COUNT-29: arith.ori
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : i64
// CHECK-NEXT:    %{{.*}} = arith.shli
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : i64
// CHECK-NEXT:    %{{.*}} = arith.cmpi ne
// CHECK-NEXT:    scf.if
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        memref.load %a[%[[I]]] : memref<30xf64>
// CHECK:         func.return %y : f64
rev.func @limit(%y: f64) {
  %a = anc.array_alloc() : memref<30xf64>
  anc.array_free %a() : memref<30xf64>
  rev.return %y : f64
}

// One past the limit (31 elements) the elements are checked in a loop.
// CHECK-LABEL: func.func @past(%y: f64, %err: memref<6xi64>) -> f64 {
// CHECK:         memref.store
// CHECK-NOT:     memref.load
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.load %a[%[[I]]] : memref<31xf64>
// CHECK-NOT:     arith.ori
// CHECK:         func.return %y : f64
rev.func @past(%y: f64) {
  %a = anc.array_alloc() : memref<31xf64>
  anc.array_free %a() : memref<31xf64>
  rev.return %y : f64
}

// An array of no elements has nothing to check: after its zero fill, no
// load and no branch before the return.
// CHECK-LABEL: func.func @none(%y: f64, %err: memref<6xi64>) -> f64 {
// CHECK:         memref.store %{{.*}}, %a[%{{.*}}, %{{.*}}] : memref<0x3xf64>
// CHECK-NOT:     memref.load
// CHECK-NOT:     scf.if
// CHECK:         func.return %y : f64
rev.func @none(%y: f64) {
  %a = anc.array_alloc() : memref<0x3xf64>
  anc.array_free %a() : memref<0x3xf64>
  rev.return %y : f64
}

