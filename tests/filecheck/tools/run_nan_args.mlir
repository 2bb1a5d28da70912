// RUN: rev-run %s -e f --args nan -inf "[inf, -nan]" 2>&1 | filecheck %s
// RUN: rev-run %s -e f --args nan -inf "[inf, -nan]" --backend interpreter 2>&1 | filecheck %s
// RUN: not rev-run %s -e f --args nanx 1.0 "[1.0, 2.0]" 2>&1 | filecheck %s --check-prefix=BAD

// --args reads nan, inf and -inf as floats, as the results print them, so
// the engines can be compared on them from the command line.
// CHECK:      nan : f64
// CHECK-NEXT: -inf : f64
// CHECK-NEXT: [inf, nan] : memref<2xf64>
// BAD: rev-run: error: argument #0 (f64): cannot read 'nanx' as a literal

rev.func @f(%y: f64, %x: f64, %a: memref<2xf64>) {
  %y1 = rev.add %y, %x : f64
  rev.return %y1, %x : f64, f64
}
