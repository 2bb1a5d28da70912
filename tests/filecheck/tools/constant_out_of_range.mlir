// RUN: not rev-opt %s 2>&1 | filecheck %s
// RUN: not rev-translate %s 2>&1 | filecheck %s

// A float constant too large for its width is a located parse error (xDSL
// raised an OverflowError packing it into an f32).

// CHECK-NOT: Traceback
// CHECK:     {{^.*}}constant_out_of_range.mlir:[[# @LINE + 4]]:3: error: a constant is out of range for its type (float too large to pack with f format)
// CHECK-NOT: {{.}}

rev.func @f(%x: f64) {
  %big = arith.constant 1.0e+308 : f32
  rev.return %x : f64
}
