// RUN: rev-opt %s -p rev-lump-widths 2>&1 >/dev/null | filecheck %s
// RUN: rev-opt %s -p rev-lump-widths --verify-diagnostics
// RUN: rev-opt %s -p 'rev-lump-widths{exhaustive_limit=2}' 2>&1 >/dev/null | filecheck %s --check-prefix=LIMIT
// RUN: rev-opt %s -p rev-lump-widths | filecheck %s --check-prefix=UNCHANGED
// RUN: not rev-opt %s -p 'rev-lump-widths{exhaustive_limit=17}' 2>&1 | filecheck %s --check-prefix=TOO-MANY
// RUN: not rev-opt %s -p 'rev-lump-widths{exhaustive_limit=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE

// The exhaustive search is exponential in the ops that may run in any
// order: a limit past 16, or a negative one, is an error.
// TOO-MANY: error: rev-lump-widths: exhaustive_limit must be <= 16, got 17: the exhaustive search takes time and memory exponential in the number of ops that may run in any order
// NEGATIVE: error: rev-lump-widths: exhaustive_limit must be >= 0, got -1

// A remark per function: constant-width or why not, and the widths l of
// its lumps (the order of each lump's dense Jacobian block) in program
// order, by greedy cutting and by exhaustive search, with their LU cost Σ l³.
// The module is left as it was.

// Each step overwrites one value: b += sin(a), then a *= b.
// CHECK: rev_lump_widths.mlir:[[# @LINE + 2]]:1: remark: @shear: constant-width: n = 2, every lump overwrites one active value; lumps in program order: widths 1,1 (cost 2); lumps greedy: widths 1,1 (cost 2); lumps exhaustive: widths 1,1 (cost 2)
// expected-remark @+1 {{@shear: constant-width}}
func.func @shear(%a: f64, %b: f64) -> (f64, f64) {
  %s = math.sin %a : f64
  %b1 = arith.addf %b, %s : f64
  %a1 = arith.mulf %a, %b1 : f64
  func.return %a1, %b1 : f64, f64
}

// The seed's Fig. 4: the order decides the lumps.  As written, sin(a) and
// cos(b) are both live before either is used, one lump of width 2; greedy
// uses sin(a) first and cuts twice.
// CHECK: remark: @order: constant-width: n = 2, every lump overwrites one active value; lumps in program order: widths 2 (cost 8); lumps greedy: widths 1,1 (cost 2); lumps exhaustive: widths 1,1 (cost 2)
// expected-remark @+1 {{lumps in program order: widths 2 (cost 8); lumps greedy: widths 1,1 (cost 2)}}
func.func @order(%a: f64, %b: f64) -> (f64, f64) {
  %p = math.sin %a : f64
  %q = math.cos %b : f64
  %y0 = arith.mulf %a, %p : f64
  %y1 = arith.mulf %b, %q : f64
  func.return %y0, %y1 : f64, f64
}

// A temporary both outputs read: no order cuts it, one lump of width 2.
// CHECK: remark: @temporary: not constant-width: n = 2, the lump from 'arith.mulf' at {{.*}}rev_lump_widths.mlir:[[# @LINE + 3]]:3 (5 ops, up to 4 active values live) overwrites 2 at once; lumps in program order: widths 2 (cost 8); lumps greedy: widths 2 (cost 8); lumps exhaustive: widths 2 (cost 8)
// expected-remark @+1 {{@temporary: not constant-width}}
func.func @temporary(%a: f64, %b: f64) -> (f64, f64) {
  %t = arith.mulf %a, %b : f64
  %s = math.sin %a : f64
  %u = arith.addf %s, %t : f64
  %y0 = arith.mulf %u, %b : f64
  %y1 = arith.addf %a, %t : f64
  func.return %y0, %y1 : f64, f64
}

// Loops with constant trip counts are unrolled; array entries are active
// values, x[0] passes through.
// CHECK: remark: @recurrence: constant-width: n = 3, every lump overwrites one active value; lumps in program order: widths 1,1 (cost 2)
// LIMIT: remark: @recurrence: constant-width: n = 3, every lump overwrites one active value; lumps in program order: widths 1,1 (cost 2); lumps greedy: widths 1,1 (cost 2)
// LIMIT-NOT: exhaustive
// expected-remark @+1 {{@recurrence: constant-width: n = 3}}
func.func @recurrence(%x: memref<3xf64>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c1 to %c3 step %c1 {
    %j = arith.subi %i, %c1 : index
    %p = memref.load %x[%j] : memref<3xf64>
    %q = memref.load %x[%i] : memref<3xf64>
    %r = arith.mulf %p, %q : f64
    %r2 = arith.addf %r, %q : f64
    memref.store %r2, %x[%i] : memref<3xf64>
  }
  func.return
}

// A reversible function is constant-width by the verifier.
// CHECK: remark: @reversible: constant-width: reversible, every step overwrites one of its inputs (checked by the rev verifier)
// expected-remark @+1 {{@reversible: constant-width: reversible}}
rev.func @reversible(%y: f64, %x: f64) {
  %t = math.sin %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}

// UNCHANGED: func.func @shear
// UNCHANGED: rev.func @reversible
