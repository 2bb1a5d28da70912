// RUN: rev-opt %s -p convert-std-to-llvm | filecheck %s

// arith, math and ub ops that upstream MLIR emits, one rule each.
// CHECK-LABEL: llvm.func internal @ops(%a: i64, %b: i64, %x: f64)
// Unsigned extrema compare unsigned and select:
// CHECK:         %[[UGT:.*]] = llvm.icmp "ugt" %a, %b : i64
// CHECK-NEXT:    %{{.*}} = llvm.select %[[UGT]], %a, %b : i1, i64
// CHECK:         %[[ULT:.*]] = llvm.icmp "ult" %a, %b : i64
// CHECK-NEXT:    %{{.*}} = llvm.select %[[ULT]], %a, %b : i1, i64
// ceildivui: 0 for a = 0, else (a - 1) / b + 1
// CHECK:         llvm.sub %a
// CHECK-NEXT:    llvm.udiv
// CHECK-NEXT:    llvm.icmp "eq" %a
// CHECK:         llvm.select
// ctpop is LLVM's intrinsic
// CHECK:         llvm.call_intrinsic "llvm.ctpop.i64"(%a) : (i64) -> i64
// uitofp of 64 bits: direct when the top bit is clear, else halved with a
// sticky bit and doubled
// CHECK:         llvm.sitofp %a : i64 to f64
// CHECK:         llvm.lshr %a
// CHECK:         llvm.fadd
// CHECK:         llvm.icmp "sge" %a
// fptoui saturates
// CHECK:         llvm.call_intrinsic "llvm.fptoui.sat.i32.f64"(%x) : (f64) -> i32
// poison is zero; cmpf true/false are constants
// CHECK:         %{{.*}} = llvm.mlir.constant(0.000000e+00 : f64) : f64
// CHECK-NEXT:    %{{.*}} = llvm.mlir.constant(true) : i1
// CHECK-NEXT:    %{{.*}} = llvm.mlir.constant(false) : i1
func.func @ops(%a: i64, %b: i64, %x: f64) -> (i64, i64, i64, i64, f64, i32, f64, i1, i1) {
  %mx = arith.maxui %a, %b : i64
  %mn = arith.minui %a, %b : i64
  %cd = arith.ceildivui %a, %b : i64
  %pc = math.ctpop %a : i64
  %uf = arith.uitofp %a : i64 to f64
  %fu = arith.fptoui %x : f64 to i32
  %p = ub.poison : f64
  %t = arith.cmpf true, %x, %x : f64
  %f = arith.cmpf false, %x, %x : f64
  func.return %mx, %mn, %cd, %pc, %uf, %fu, %p, %t, %f : i64, i64, i64, i64, f64, i32, f64, i1, i1
}
