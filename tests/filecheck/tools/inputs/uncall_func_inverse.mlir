rev.func @f(%y: f64, %a: f64) {
  %y1 = rev.add %y, %a : f64
  rev.return %y1, %a : f64, f64
}
func.func @f.inv(%y: f64) -> f64 {
  func.return %y : f64
}
rev.func @h(%y: f64, %a: f64) {
  %y1, %a1 = rev.uncall @f(%y, %a) : (f64, f64) -> (f64, f64)
  rev.return %y1, %a1 : f64, f64
}
