// RUN: rev-opt %s --verify-diagnostics --split-input-file

// A fixed-point number is stored in 8, 16, 32 or 64 bits, with fewer fraction bits.
rev.func @wide(%x: f64) {
  // expected-error@+1 {{a fixed-point number is stored in (8, 16, 32, 64) bits, not 128}}
  %f = rev.to_fixed %x : !rev.fixed<128, 43>
  rev.return %x : f64
}

// -----

rev.func @fraction(%x: f64) {
  // expected-error@+1 {{a 64-bit fixed-point number has 0 to 63 fraction bits, not 64}}
  %f = rev.to_fixed %x : !rev.fixed<64, 64>
  rev.return %x : f64
}

// -----

// One type per instruction: no mixing of formats.
rev.func @formats(%y: !rev.fixed<64, 43>, %a: !rev.fixed<32, 16>) {
  // expected-error@+1 {{}}
  %y1 = rev.add %y, %a : !rev.fixed<64, 43>
  rev.return %y1, %a : !rev.fixed<64, 43>, !rev.fixed<32, 16>
}

// -----

// Tropical numbers have no += (it would be max).
rev.func @tropical_add(%y: !rev.tropical<f64>, %a: !rev.tropical<f64>) {
  // expected-error@+1 {{}}
  %y1 = rev.add %y, %a : !rev.tropical<f64>
  rev.return %y1, %a : !rev.tropical<f64>, !rev.tropical<f64>
}

// -----

// Fixed-point numbers have no *= (a product rounds).
rev.func @fixed_mul(%y: !rev.fixed<64, 43>, %a: !rev.fixed<64, 43>) {
  // expected-error@+1 {{}}
  %y1 = rev.mul %y, %a : !rev.fixed<64, 43>
  rev.return %y1, %a : !rev.fixed<64, 43>, !rev.fixed<64, 43>
}
