// RUN: not rev-opt %s 2>&1 | filecheck %s

// An op no dialect defines: one located diagnostic, no traceback.

// CHECK-NOT: Traceback
// CHECK:     {{^.*}}unknown_op.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: Operation rev.frobnicate is not registered{{$}}
// CHECK-NOT: {{.}}

rev.func @f(%x: f64) {
  rev.frobnicate %x : f64
  rev.return %x : f64
}
