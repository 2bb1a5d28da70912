// RUN: rev-translate %s --emit=ptx | filecheck %s

// A name PTX does not take is spelled in PTX's characters [A-Za-z0-9_$]:
// a dot is _$_, any other character (and a leading digit) its code point in
// hex between two $, the empty name $$; a kernel's dots are _ (the ABI's
// k_adj). LLVM's NVPTX back end aborted the process on such a name.
// CHECK-DAG: .visible .entry k$2d$1(
// CHECK-DAG: .visible .entry k$20$2_inv(
// CHECK-DAG: .visible .func {{.*}} a$2d$b(
// CHECK-DAG: .visible .func {{.*}} a$2d$b_$_inv(
// CHECK-DAG: .visible .func {{.*}} a$20$b(
// CHECK-DAG: .visible .func {{.*}} $3b1$(
// CHECK-DAG: .visible .func {{.*}} $$(
// CHECK-DAG: .visible .func {{.*}} _$_inv(
// CHECK-DAG: .visible .func {{.*}} a$24$b(
// CHECK-DAG: .visible .func {{.*}} $39$x(

rev.func @"k-1"(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = rev.take %y[%i] : memref<?xf64>
    %one = arith.constant 1.0 : f64
    %v1 = rev.add %v, %one : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

rev.func @"k 2"(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = rev.take %y[%i] : memref<?xf64>
    %one = arith.constant 2.0 : f64
    %v1 = rev.add %v, %one : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

rev.func @"a-b"(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}

rev.func @"a b"(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}

rev.func @"α"(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}

rev.func @""(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}

rev.func @"a$b"(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}

rev.func @"9x"(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}
