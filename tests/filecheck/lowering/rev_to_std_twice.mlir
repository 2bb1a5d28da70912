// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std,rev-lower-to-std | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std | rev-opt - -p rev-lower-to-std | filecheck %s

// A module the pass has lowered carries its mark (rev.lowered), and the
// pass leaves such a module as it is: run twice, or on its own printed
// output, it gives what one run gives. Before, the second run took the
// runtime's functions for the program's and refused @revmlir.report's name.
// CHECK:       builtin.module attributes {rev.checks = ["ExecutionError|rev.take|{{[^"]*}}|f|i64,i64|index {0} is out of bounds for axis 0 with size {1}"], rev.lowered} {
// CHECK-NEXT:    llvm.func @abort()
// CHECK-NEXT:    func.func @f(%x: f64, %i: index, %m: memref<4xf64>, %err: memref<6xi64>) -> (f64, index) {
// CHECK:           func.call @revmlir.report(%err, {{.*}}) : (memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// CHECK:           func.return %x1, %i : f64, index
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @revmlir.report(%error: memref<6xi64>, %check: i64, %word: i64, %word_1: i64, %word_2: i64, %word_3: i64) {
// CHECK:         func.func private @revmlir.fail(%error: memref<6xi64>) {
// CHECK-NOT:     func.func

rev.func @f(%x: f64, %i: index, %m: memref<4xf64>) {
  %e = rev.take %m[%i] : memref<4xf64>
  %x1 = rev.add %x, %e : f64
  rev.put %e, %m[%i] : memref<4xf64>
  rev.return %x1, %i : f64, index
}
