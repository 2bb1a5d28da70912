// Recursive Fibonacci, reversibly (seed 000, Listing 11).
//
//   @i function rrfib(out!, n)
//     @invcheckoff if (n >= 1, ~)
//       counter ← 0
//       counter += n
//       while (counter > 1, counter != n)
//         rrfib(out!, counter - 1)
//         counter -= 2
//       end
//       counter -= n % 2
//       counter → 0
//     end
//     out! += 1
//   end
//
// The expression argument `counter - 1` becomes an ancilla holding it for the
// duration of the call, freed (with a check) afterwards.
rev.func @rrfib(%out: i64, %n: i64) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %out2 = rev.if (%out) : i64 attributes {nocheck} pre {
  ^bb0(%o: i64):
    %ge = arith.cmpi sge, %n, %one : i64
    rev.cond %ge
  } then {
  ^bb0(%o: i64):
    %c0 = anc.alloc %zero : i64
    %c1 = rev.add %c0, %n : i64
    %o2, %c2 = rev.while (%o, %c1) : i64, i64 pre {
    ^bb0(%po: i64, %pc: i64):
      %gt = arith.cmpi sgt, %pc, %one : i64
      rev.cond %gt
    } post {
    ^bb0(%qo: i64, %qc: i64):
      %ne = arith.cmpi ne, %qc, %n : i64
      rev.cond %ne
    } do {
    ^bb0(%wo: i64, %wc: i64):
      %m = arith.subi %wc, %one : i64
      %arg = anc.alloc %m : i64
      %wo2, %arg2 = rev.call @rrfib(%wo, %arg) : (i64, i64) -> (i64, i64)
      anc.free %arg2, %m : i64
      %wc2 = rev.sub %wc, %two : i64
      rev.yield %wo2, %wc2 : i64, i64
    }
    %parity = arith.remsi %n, %two : i64
    %c3 = rev.sub %c2, %parity : i64
    anc.free %c3, %zero : i64
    rev.yield %o2 : i64
  } else {
  ^bb0(%o: i64):
    rev.yield %o : i64
  }
  %out3 = rev.add %out2, %one : i64
  rev.return %out3, %n : i64, i64
}
