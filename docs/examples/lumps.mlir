// Lumps (Pearlmutter and Siskind, "Inverse Accumulation Mode", Fig. 4):
// rev-opt docs/examples/lumps.mlir -p rev-lump-widths -o /dev/null

// As written, sin(a) and cos(b) are both live before either is used: one
// lump of width 2. Greedy uses sin(a) first and cuts twice.
func.func @order(%a: f64, %b: f64) -> (f64, f64) {
  %p = math.sin %a : f64
  %q = math.cos %b : f64
  %y0 = arith.mulf %a, %p : f64
  %y1 = arith.mulf %b, %q : f64
  func.return %y0, %y1 : f64, f64
}

// A temporary both outputs read: no order cuts it.
func.func @temporary(%a: f64, %b: f64) -> (f64, f64) {
  %t = arith.mulf %a, %b : f64
  %s = math.sin %a : f64
  %u = arith.addf %s, %t : f64
  %y0 = arith.mulf %u, %b : f64
  %y1 = arith.addf %a, %t : f64
  func.return %y0, %y1 : f64, f64
}
