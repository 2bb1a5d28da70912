// Reversible complex logarithm, y += log(|x|) + i*Arg(x)
// (seed 000, section 3.2, Listing 5).
//
//   @i @inline function (:+=)(log)(y!::Complex{T}, x::Complex{T}) where T
//       n ← zero(T)
//       n += abs(x)
//
//       y!.re += log(n)
//       y!.im += angle(x)
//
//       n -= abs(x)
//       n → zero(T)
//   end
//
// `n` is an ancilla: anc.alloc gives it the known value 0 and anc.free checks
// that it is 0 again when it is given back.  NiLang mutates the fields y!.re
// and y!.im of the complex number in place; here rev.unpack splits the current
// version of y into two state values and rev.pack joins the updated parts into
// the next version.  x is only read, so it is returned unchanged.
rev.func @complex_log(%y: complex<f64>, %x: complex<f64>) {
  %zero = arith.constant 0.0 : f64
  // n ← zero(T); n += abs(x)
  %n0 = anc.alloc %zero : f64
  %abs = complex.abs %x : complex<f64>
  %n1 = rev.add %n0, %abs : f64
  // y!.re += log(n); y!.im += angle(x)
  %re, %im = rev.unpack %y : complex<f64>
  %logn = math.log %n1 : f64
  %re1 = rev.add %re, %logn : f64
  %arg = complex.angle %x : complex<f64>
  %im1 = rev.add %im, %arg : f64
  %y1 = rev.pack %re1, %im1 : complex<f64>
  // n -= abs(x); n → zero(T)
  %abs2 = complex.abs %x : complex<f64>
  %n2 = rev.sub %n1, %abs2 : f64
  anc.free %n2, %zero : f64
  rev.return %y1, %x : complex<f64>, complex<f64>
}
