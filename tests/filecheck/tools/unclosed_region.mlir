// RUN: not rev-opt %s 2>&1 | filecheck %s
// RUN: not rev-translate %s 2>&1 | filecheck %s

// A file that ends inside a region names the op whose region is open (here the
// function: the inner region is closed), where
// the end is (xDSL's message was only " in block definition").

// CHECK-NOT: Traceback
// CHECK:     {{^.*}}unclosed_region.mlir:[[# @LINE + 7]]:1: error: the file ends inside a region of the op at [[# @LINE + 3]]:1: expected '}'
// CHECK-NOT: {{.}}

func.func @open(%x: f64) -> f64 {
  %y = scf.execute_region -> (f64) {
    scf.yield %x : f64
  }
