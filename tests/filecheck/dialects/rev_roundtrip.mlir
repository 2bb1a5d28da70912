// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s

// CHECK-LABEL: rev.func @instructions(%y: f64, %a: f64, %b: f64)
rev.func @instructions(%y: f64, %a: f64, %b: f64) {
  // CHECK-NEXT: %t = arith.mulf %a, %b : f64
  // CHECK-NEXT: %y1 = rev.add %y, %t : f64
  // CHECK-NEXT: %y2 = rev.sub %y1, %a : f64
  // CHECK-NEXT: %y3 = rev.neg %y2 : f64
  // CHECK-NEXT: %p, %q = rev.swap %y3, %a : f64
  // CHECK-NEXT: %r, %s = rev.rot %p, %q, %b : f64
  // CHECK-NEXT: %u, %v = rev.irot %r, %s, %b : f64
  // CHECK-NEXT: rev.return %u, %v, %b : f64, f64, f64
  %t = arith.mulf %a, %b : f64
  %y1 = rev.add %y, %t : f64
  %y2 = rev.sub %y1, %a : f64
  %y3 = rev.neg %y2 : f64
  %p, %q = rev.swap %y3, %a : f64
  %r, %s = rev.rot %p, %q, %b : f64
  %u, %v = rev.irot %r, %s, %b : f64
  rev.return %u, %v, %b : f64, f64, f64
}
