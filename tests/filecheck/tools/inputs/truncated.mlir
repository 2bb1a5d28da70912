rev.func @unterminated(%x: f64) {
  %y = rev.neg %x : f64
