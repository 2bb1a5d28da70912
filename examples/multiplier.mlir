// A reversible multiplier (seed 000, Listing 4): y += a * b.
//   multiplier(2, 3, 5)    == (17, 3, 5)
//   (~multiplier)(17, 3, 5) == (2, 3, 5)
rev.func @multiplier(%y: i64, %a: i64, %b: i64) {
  %t = arith.muli %a, %b : i64
  %y1 = rev.add %y, %t : i64
  rev.return %y1, %a, %b : i64, i64, i64
}
