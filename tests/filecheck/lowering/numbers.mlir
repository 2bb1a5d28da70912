// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s
// RUN: rev-translate %s --emit=header | filecheck %s --check-prefix=HEADER

// A C caller passes a fixed-point number as its stored integer.
// HEADER: // fixed(y: int64_t /* fixed point, 43 fraction bits */, a: int64_t /* fixed point, 43 fraction bits */, x: double)
// HEADER: // tropical(y: double /* tropical: finite */, x: double)

// A fixed-point number becomes the integer it stores. A sum or product is
// computed at twice the width (a product shifted right by the fraction bits)
// and checked against the type before it is truncated; a real is scaled,
// rounded to even and checked before it is converted.
// CHECK: "ExecutionError|rev.to_fixed|{{.*}}numbers.mlir:[[# @LINE + 26]]:3|fixed|f64|{0} has no fixed-point number in Fixed[43]", "ExecutionError|rev.fixed_mul|{{.*}}|fixed||fixed-point overflow: the result is out of range for Fixed[43]"
// CHECK-LABEL: func.func @fixed(%y: i64, %a: i64, %x: f64, %err: memref<6xi64>) -> (i64, i64, f64)
// CHECK:      %[[SCALE:.*]] = arith.constant 0x42A0000000000000 : f64
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %x, %[[SCALE]] : f64
// CHECK-NEXT: %[[ROUNDED:.*]] = math.roundeven %[[SCALED]] : f64
// CHECK:      arith.cmpf oge, %[[ROUNDED]]
// CHECK:      arith.cmpf olt, %[[ROUNDED]]
// CHECK:      %fx = arith.fptosi %[[ROUNDED]] : f64 to i64
// CHECK:      %[[A:.*]] = arith.extsi %a : i64 to i128
// CHECK-NEXT: %[[B:.*]] = arith.extsi %fx : i64 to i128
// CHECK-NEXT: %[[WIDE:.*]] = arith.muli %[[A]], %[[B]] : i128
// CHECK-NEXT: %[[SHIFT:.*]] = arith.constant 43 : i128
// CHECK-NEXT: %[[PRODUCT:.*]] = arith.shrsi %[[WIDE]], %[[SHIFT]] : i128
// CHECK-NEXT: %[[LOW:.*]] = arith.constant -9223372036854775808 : i128
// CHECK-NEXT: arith.cmpi sge, %[[PRODUCT]], %[[LOW]] : i128
// CHECK-NEXT: %[[HIGH:.*]] = arith.constant 9223372036854775807 : i128
// CHECK-NEXT: arith.cmpi sle, %[[PRODUCT]], %[[HIGH]] : i128
// CHECK:      scf.if
// CHECK:      %p = arith.trunci %[[PRODUCT]] : i128 to i64
// CHECK:      arith.addi {{.*}} : i128
// CHECK:      %y1 = arith.trunci {{.*}} : i128 to i64
// CHECK:      %[[REAL:.*]] = arith.sitofp %y1 : i64 to f64
// CHECK-NEXT: %[[UNIT:.*]] = arith.constant 1.1368683772161603e-13 : f64
// CHECK-NEXT: %r = arith.mulf %[[REAL]], %[[UNIT]] : f64
// CHECK:      func.return %y1, %a, %x : i64, i64, f64
rev.func @fixed(%y: !rev.fixed<64, 43>, %a: !rev.fixed<64, 43>, %x: f64) {
  %fx = rev.to_fixed %x : !rev.fixed<64, 43>
  %p = rev.fixed_mul %a, %fx : !rev.fixed<64, 43>
  %y1 = rev.add %y, %p : !rev.fixed<64, 43>
  %r = rev.from_fixed %y1 : !rev.fixed<64, 43>
  rev.return %y1, %a, %x : !rev.fixed<64, 43>, !rev.fixed<64, 43>, f64
}

// A tropical number becomes its real, checked finite when made; *= is addf.
// The C entry points check the tropical argument finite (rev.finite_arguments).
// CHECK-LABEL: func.func @tropical(%y: f64, %x: f64, %err: memref<6xi64>) -> (f64, f64) attributes {rev.finite_arguments = array<i64: 0>}
// CHECK:      %[[MAGNITUDE:.*]] = math.absf %x : f64
// CHECK-NEXT: %[[INF:.*]] = arith.constant 0x7ff0000000000000 : f64
// CHECK-NEXT: arith.cmpf olt, %[[MAGNITUDE]], %[[INF]] : f64
// CHECK:      %y1 = arith.addf %y, %x : f64
// CHECK-NEXT: func.return %y1, %x : f64, f64
rev.func @tropical(%y: !rev.tropical<f64>, %x: f64) {
  %t = rev.to_tropical %x : f64
  %y1 = rev.mul %y, %t : !rev.tropical<f64>
  rev.return %y1, %x : !rev.tropical<f64>, f64
}
