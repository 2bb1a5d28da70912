// Bennett's time-space trade-off for reverse computing, k = 4
// (seed 000, section 2, Listing 3, and appendix A, Listing 12).
//
//   @i function bennett(f::AbstractVector, state::Dict{Int,T}, k::Int, base, len) where T
//     if (len == 1, ~)
//       state[base+1] ← zero(T)
//       f[base](state[base+1], state[base])
//       @safe PROG_COUNTER[] += 1
//       @safe (length(state) > PEAK_MEM[] && (PEAK_MEM[] = length(state)))
//     else
//       n ← 0
//       n += len÷k
//       # the P process
//       for j=1:k
//         bennett(f, state, k, base+n*(j-1), n)
//       end
//       # the Q process
//       for j=k-1:-1:1
//         ~bennett(f, state, k, base+n*(j-1), n)
//       end
//       n -= len÷k
//       n → 0
//     end
//   end
//
//   k = 4; n = 4; N = k^n; f(x) = x * 2.0
//   @test state[N+1] ≈ 2.0^N && length(state) == 2
//   @test PEAK_MEM[] == n*(k-1) + 2
//   @test PROG_COUNTER[] == (2*k-1)^n
//
// Here one unit step is the function @step, s_out += 2.0 * s_in (NiLang's
// PlusEq(f) with f(x) = x * 2.0), and
//
//   @bennett(s_in, s_out, level)  computes  s_out += F^len(s_in),  len = k^level,
//
// where F^len is len unit steps, so s_out += 2.0^len * s_in.  With k fixed at
// 4 the k - 1 intermediate states of a sector are three scalar ancillas t1, t2,
// t3 (NiLang keeps them in a Dict; each state is a scalar here, so it is state
// with value semantics and passed to and returned by the calls):
//
//   P: bennett(s_in, t1), bennett(t1, t2), bennett(t2, t3), bennett(t3, s_out)
//   Q: ~bennett(t2, t3), ~bennett(t1, t2), ~bennett(s_in, t1)
//
// after which t1..t3 are zero again and are freed (anc.free checks that).
//
// The sector length.  NiLang passes len and allocates an integer ancilla
// n ← len÷k per level.  We carry the exponent instead, level = log_k(len),
// and update it in place: `level -= 1` (rev.dec) before the sub-sector calls
// is len ÷= k, and `level += 1` (rev.inc) afterwards undoes it.  That needs
// no ancilla (y = y ÷ k is not an instruction: the target cannot be read by
// its own update), so the only ancillas are the intermediate states, and the
// interpreter's ancilla count is exactly NiLang's PEAK_MEM minus 2.
//
// Counting, for len = k^n:
//   * unit steps: a sector of length k^m runs k + (k - 1) = 2k - 1 sectors of
//     length k^(m-1), forward or backward, so (2k - 1)^n invocations of @step
//     (calls + uncalls), 7^4 = 2401 for n = 4;
//   * memory: each of the n nested levels holds its k - 1 ancillas while the
//     level below runs, so at most n(k - 1) = 12 ancillas are live at once.
//     Counting the two endpoint states s_in and s_out that the caller passes
//     in (NiLang's Dict starts with s_1 and ends holding s_1 and s_{N+1}), the
//     peak number of live states is n(k - 1) + 2 = 14, NiLang's PEAK_MEM.

// One unit step s_out += f(s_in) with f(x) = x * 2.0.
rev.func @step(%s_out: f64, %s_in: f64) {
  %two = arith.constant 2.0 : f64
  %fx = arith.mulf %s_in, %two : f64
  %s_out1 = rev.add %s_out, %fx : f64
  rev.return %s_out1, %s_in : f64, f64
}

rev.func @bennett(%s_in: f64, %s_out: f64, %level: i64) {
  %c0 = arith.constant 0 : i64
  %a, %b, %lv = rev.if (%s_in, %s_out, %level) : f64, f64, i64 pre {
  ^bb0(%pa: f64, %pb: f64, %pl: i64):
    // len == 1
    %unit = arith.cmpi eq, %pl, %c0 : i64
    rev.cond %unit
  } then {
  ^bb0(%x: f64, %y: f64, %l: i64):
    // s_out += f(s_in)
    %y1, %x1 = rev.call @step(%y, %x) : (f64, f64) -> (f64, f64)
    rev.yield %x1, %y1, %l : f64, f64, i64
  } else {
  ^bb0(%x: f64, %y: f64, %l: i64):
    %zero = arith.constant 0.0 : f64
    // len ÷= k
    %m = rev.dec %l : i64
    // the k - 1 intermediate states: t_j ← 0
    %t1 = anc.alloc %zero : f64
    %t2 = anc.alloc %zero : f64
    %t3 = anc.alloc %zero : f64
    // the P process: k sectors forward
    %x1, %t1a, %m1 = rev.call @bennett(%x, %t1, %m) : (f64, f64, i64) -> (f64, f64, i64)
    %t1b, %t2a, %m2 = rev.call @bennett(%t1a, %t2, %m1) : (f64, f64, i64) -> (f64, f64, i64)
    %t2b, %t3a, %m3 = rev.call @bennett(%t2a, %t3, %m2) : (f64, f64, i64) -> (f64, f64, i64)
    %t3b, %y1, %m4 = rev.call @bennett(%t3a, %y, %m3) : (f64, f64, i64) -> (f64, f64, i64)
    // the Q process: k - 1 sectors backward, clearing t3, t2, t1
    %t2c, %t3c, %m5 = rev.uncall @bennett(%t2b, %t3b, %m4) : (f64, f64, i64) -> (f64, f64, i64)
    %t1c, %t2d, %m6 = rev.uncall @bennett(%t1b, %t2c, %m5) : (f64, f64, i64) -> (f64, f64, i64)
    %x2, %t1d, %m7 = rev.uncall @bennett(%x1, %t1c, %m6) : (f64, f64, i64) -> (f64, f64, i64)
    // t_j → 0
    anc.free %t3c, %zero : f64
    anc.free %t2d, %zero : f64
    anc.free %t1d, %zero : f64
    // len *= k
    %l1 = rev.inc %m7 : i64
    rev.yield %x2, %y1, %l1 : f64, f64, i64
  }
  rev.return %a, %b, %lv : f64, f64, i64
}
