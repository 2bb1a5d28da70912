// RUN: rev-opt %s -p 'rev-lower-to-std{tolerance=2.0}' | filecheck %s

// With a tolerance of 1 or more a float's zero check is `same`'s general
// test, one `scf.if` per value; the test at once of a freed array still
// is straight-line, its elements' bits or-ed before one branch.
// CHECK-LABEL: func.func @tolerant(%y: f64, %err: memref<6xi64>) -> f64 {
// CHECK:         memref.store
// CHECK-COUNT-4: memref.load %a[%{{.*}}] : memref<4xf64>
// CHECK-NOT:     scf.if
// CHECK-COUNT-3: arith.ori
// CHECK-NOT:     scf.if
// CHECK:         %[[SOME:.*]] = arith.cmpi ne
// CHECK-NEXT:    scf.if %[[SOME]] {
// CHECK:           scf.for
// CHECK:             arith.cmpf oeq
// CHECK:         func.return %y : f64
rev.func @tolerant(%y: f64) {
  %a = anc.array_alloc() : memref<4xf64>
  anc.array_free %a() : memref<4xf64>
  rev.return %y : f64
}
