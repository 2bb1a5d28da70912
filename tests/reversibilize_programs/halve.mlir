// A while loop whose trip count depends on the data.
func.func @halve(%x0: f64, %a: memref<2xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %r:2 = scf.while (%x = %x0, %k = %c0) : (f64, index) -> (f64, index) {
    %more = arith.cmpf ogt, %x, %one : f64
    scf.condition(%more) %x, %k : f64, index
  } do {
  ^bb0(%x: f64, %k: index):
    %x1 = arith.mulf %x, %half : f64
    %e = memref.load %a[%c0] : memref<2xf64>
    %e1 = arith.addf %e, %x1 : f64
    memref.store %e1, %a[%c0] : memref<2xf64>
    %f = memref.load %a[%c1] : memref<2xf64>
    %g = arith.mulf %f, %x1 : f64
    memref.store %g, %a[%c1] : memref<2xf64>
    %k1 = arith.addi %k, %c1 : index
    scf.yield %x1, %k1 : f64, index
  }
  %ki = arith.index_cast %r#1 : index to i64
  %kf = arith.sitofp %ki : i64 to f64
  %y = arith.mulf %r#0, %kf : f64
  func.return %y : f64
}
