// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s
// RUN: rev-opt %s -p rev-host-safety,rev-lower-to-std | filecheck %s

// A check table (rev.checks) does not say that rev-lower-to-std has run:
// rev-host-safety writes one too, and a program may bring one. Only the
// pass's own mark (rev.lowered) makes it leave a module as it is, so here
// both functions are lowered, the func.func with its error slot and bounds
// check, where before the pass refused @f as left unlowered by an earlier
// run, or passed @g through unchecked.
// CHECK:      builtin.module attributes {rev.checks = ["ExecutionError|memref.load|{{[^"]*}}|g|i64,i64|index {0} is out of bounds for axis 0 with size {1}"], rev.lowered} {
// CHECK:        func.func @g(%m: memref<4xf64>, %i: index, %err: memref<6xi64>) -> f64 {
// CHECK:          func.call @revmlir.report(%err, {{.*}})
// CHECK:          memref.load %m[%i] : memref<4xf64>
// CHECK:        func.func @f(%x: f64, %err: memref<6xi64>) -> f64 {
// CHECK-NEXT:     arith.negf %x : f64

builtin.module attributes {rev.checks = []} {
  func.func @g(%m: memref<4xf64>, %i: index) -> f64 {
    %v = memref.load %m[%i] : memref<4xf64>
    func.return %v : f64
  }
  rev.func @f(%x: f64) {
    %y = rev.neg %x : f64
    rev.return %y : f64
  }
}
