// Power of a real number with logarithmic numbers
// (seed 000, appendix B.3, Listing 16; Listing 15 is the irreversible original).
//
//   @i function mypower(out, x::T, n::Int) where T
//       if (x != 0, ~)
//           @routine begin
//               ly ← one(ULogarithmic{T})
//               lx ← one(ULogarithmic{T})
//               lx *= convert(x)
//               for i=1:n
//                   ly *= x
//               end
//           end
//           out += convert(ly)
//       end
//   end
//
// `*=` is not reversible on fixed- or floating-point numbers, but it is on
// log numbers (!rev.log<f64>, NiLang's ULogarithmic): rev.mul adds the
// logarithms and rev.div subtracts them.  So x^n is computed in constant
// memory with no stack: ly and lx are ancillas that the routine's
// uncompute half divides back down to one and frees.
//
// Translation notes.
//   * `ly *= x` in the printed listing multiplies by the log number lx
//     (`ly *= lx`), which is what is written here.
//   * convert(x) is rev.to_log (x must be positive: log numbers are unsigned)
//     and convert(ly) is rev.from_log.
//   * `for i=1:n` is the half-open rev.for over [1, n + 1).
//   * `if (x != 0, ~)`: the postcondition is the precondition again, so the
//     `post` region is omitted.  The condition and the routine only read x and
//     n, so only `out` is carried through them as state.
rev.func @mypower(%out: f64, %x: f64, %n: i64) {
  %out3 = rev.if (%out) : f64 pre {
  ^bb0(%po: f64):
    %fzero = arith.constant 0.0 : f64
    %nonzero = arith.cmpf une, %x, %fzero : f64
    rev.cond %nonzero
  } then {
  ^bb0(%o: f64):
    %o2 = rev.routine (%o) : f64 compute {
    ^bb0(%co: f64):
      %fone = arith.constant 1.0 : f64
      %one = rev.to_log %fone : f64
      // ly ← one(ULogarithmic{T}); lx ← one(ULogarithmic{T})
      %ly0 = anc.alloc %one : !rev.log<f64>
      %lx0 = anc.alloc %one : !rev.log<f64>
      // lx *= convert(x)
      %logx = rev.to_log %x : f64
      %lx1 = rev.mul %lx0, %logx : !rev.log<f64>
      // for i=1:n; ly *= lx; end
      %c1 = arith.constant 1 : i64
      %np1 = arith.addi %n, %c1 : i64
      %ly1 = rev.for %c1 to %np1 step %c1 : i64 (%ly0) : !rev.log<f64> {
      ^bb0(%i: i64, %ly: !rev.log<f64>):
        %ly2 = rev.mul %ly, %lx1 : !rev.log<f64>
        rev.yield %ly2 : !rev.log<f64>
      }
      rev.yield %co, %ly1, %lx1 : f64, !rev.log<f64>, !rev.log<f64>
    } do {
    ^bb0(%do: f64, %ly: !rev.log<f64>, %lx: !rev.log<f64>):
      // out += convert(ly)
      %y = rev.from_log %ly : !rev.log<f64>
      %do1 = rev.add %do, %y : f64
      rev.yield %do1, %ly, %lx : f64, !rev.log<f64>, !rev.log<f64>
    }
    rev.yield %o2 : f64
  } else {
  ^bb0(%o: f64):
    rev.yield %o : f64
  }
  rev.return %out3, %x, %n : f64, f64, i64
}
