// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s
// RUN: rev-opt %s -p rev-invert | filecheck %s --check-prefix=INV

// Fixed-point numbers: conversions, the expression ops, += and -= on the
// stored integer.
// CHECK-LABEL: rev.func @fixed(%y: !rev.fixed<64, 43>, %a: !rev.fixed<64, 43>, %x: f64) {
// CHECK-NEXT: %fx = rev.to_fixed %x : !rev.fixed<64, 43>
// CHECK-NEXT: %p = rev.fixed_mul %a, %fx : !rev.fixed<64, 43>
// CHECK-NEXT: %s = rev.fixed_add %p, %a : !rev.fixed<64, 43>
// CHECK-NEXT: %d = rev.fixed_sub %s, %fx : !rev.fixed<64, 43>
// CHECK-NEXT: %y1 = rev.add %y, %d : !rev.fixed<64, 43>
// CHECK-NEXT: %y2 = rev.sub %y1, %a : !rev.fixed<64, 43>
// CHECK-NEXT: %real = rev.from_fixed %y2 : !rev.fixed<64, 43>
// CHECK-NEXT: rev.return %y2, %a, %x : !rev.fixed<64, 43>, !rev.fixed<64, 43>, f64
// INV-LABEL: rev.func @fixed.inv(%y: !rev.fixed<64, 43>, %a: !rev.fixed<64, 43>, %x: f64) {
// INV-NEXT:  %y1 = rev.add %y, %a : !rev.fixed<64, 43>
// INV:       %d = rev.fixed_sub %s, %fx : !rev.fixed<64, 43>
// INV-NEXT:  %y_1 = rev.sub %y1, %d : !rev.fixed<64, 43>
rev.func @fixed(%y: !rev.fixed<64, 43>, %a: !rev.fixed<64, 43>, %x: f64) {
  %fx = rev.to_fixed %x : !rev.fixed<64, 43>
  %p = rev.fixed_mul %a, %fx : !rev.fixed<64, 43>
  %s = rev.fixed_add %p, %a : !rev.fixed<64, 43>
  %d = rev.fixed_sub %s, %fx : !rev.fixed<64, 43>
  %y1 = rev.add %y, %d : !rev.fixed<64, 43>
  %y2 = rev.sub %y1, %a : !rev.fixed<64, 43>
  %real = rev.from_fixed %y2 : !rev.fixed<64, 43>
  rev.return %y2, %a, %x : !rev.fixed<64, 43>, !rev.fixed<64, 43>, f64
}

// Tropical numbers: *= and /= add and subtract the reals.
// CHECK-LABEL: rev.func @tropical(%y: !rev.tropical<f64>, %x: f64) {
// CHECK-NEXT: %t = rev.to_tropical %x : f64
// CHECK-NEXT: %y1 = rev.mul %y, %t : !rev.tropical<f64>
// CHECK-NEXT: %y2 = rev.div %y1, %t : !rev.tropical<f64>
// CHECK-NEXT: %r = rev.from_tropical %y2 : !rev.tropical<f64>
// INV-LABEL: rev.func @tropical.inv(%y: !rev.tropical<f64>, %x: f64) {
// INV-NEXT:  %t = rev.to_tropical %x : f64
// INV-NEXT:  %y1 = rev.mul %y, %t : !rev.tropical<f64>
// INV-NEXT:  %y_1 = rev.div %y1, %t : !rev.tropical<f64>
rev.func @tropical(%y: !rev.tropical<f64>, %x: f64) {
  %t = rev.to_tropical %x : f64
  %y1 = rev.mul %y, %t : !rev.tropical<f64>
  %y2 = rev.div %y1, %t : !rev.tropical<f64>
  %r = rev.from_tropical %y2 : !rev.tropical<f64>
  rev.return %y2, %x : !rev.tropical<f64>, f64
}
