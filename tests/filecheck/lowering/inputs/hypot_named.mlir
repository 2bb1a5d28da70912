// A function of the program named like the C library's hypot, which the
// std output of math.hypot calls.
func.func @hypot(%a: f64) -> f64 {
  func.return %a : f64
}
func.func @f(%a: f64, %b: f64) -> f64 {
  %h = math.hypot %a, %b : f64
  func.return %h : f64
}
