// RUN: not rev-opt %s 2>&1 | filecheck %s

// A token that can start neither an op nor a block, first in a region, is
// named (xDSL's message was only " in block definition"; after an op, the
// op's custom form says what it expected instead).

// CHECK-NOT: Traceback
// CHECK:     {{^.*}}stray_token.mlir:[[# @LINE + 4]]:3: error: expected an op, a block label or '}', got '42'
// CHECK-NOT: {{.}}

func.func @f() {
  42
}
