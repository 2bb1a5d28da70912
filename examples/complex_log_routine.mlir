// Reversible complex logarithm with compute-copy-uncompute
// (seed 000, section 3.2, Listing 6; the same function as Listing 5).
//
//   @i @inline function (:+=)(log)(y!::Complex{T}, x::Complex{T}) where T
//       @routine begin
//           n ← zero(T)
//           n += abs(x)
//       end
//       y!.re += log(n)
//       y!.im += angle(x)
//       ~@routine
//   end
//
// rev.routine runs its `compute` region (which yields the routine's state, y,
// followed by the ancilla n it made), then its `do` region, then the inverse
// of `compute` (n -= abs(x); n → 0): the `~@routine` is generated, not written.
// x is only read, so it is captured by the regions instead of being carried as
// state.
rev.func @complex_log(%y: complex<f64>, %x: complex<f64>) {
  %y2 = rev.routine (%y) : complex<f64> compute {
  ^bb0(%cy: complex<f64>):
    %zero = arith.constant 0.0 : f64
    %n0 = anc.alloc %zero : f64
    %abs = complex.abs %x : complex<f64>
    %n1 = rev.add %n0, %abs : f64
    rev.yield %cy, %n1 : complex<f64>, f64
  } do {
  ^bb0(%dy: complex<f64>, %n: f64):
    %re, %im = rev.unpack %dy : complex<f64>
    %logn = math.log %n : f64
    %re1 = rev.add %re, %logn : f64
    %arg = complex.angle %x : complex<f64>
    %im1 = rev.add %im, %arg : f64
    %dy1 = rev.pack %re1, %im1 : complex<f64>
    rev.yield %dy1, %n : complex<f64>, f64
  }
  rev.return %y2, %x : complex<f64>, complex<f64>
}
