// Nested loops over a 2-d array: k layers x <- tanh(W x), through y.
func.func @layers(%w: memref<4x4xf64>, %x: memref<4xf64>, %y: memref<4xf64>, %k: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  scf.for %layer = %c0 to %k step %c1 {
    scf.for %i = %c0 to %c4 step %c1 {
      %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
        %wij = memref.load %w[%i, %j] : memref<4x4xf64>
        %xj = memref.load %x[%j] : memref<4xf64>
        %p = arith.mulf %wij, %xj : f64
        %acc1 = arith.addf %acc, %p : f64
        scf.yield %acc1 : f64
      }
      memref.store %s, %y[%i] : memref<4xf64>
    }
    scf.for %i = %c0 to %c4 step %c1 {
      %yi = memref.load %y[%i] : memref<4xf64>
      %t = math.tanh %yi : f64
      memref.store %t, %x[%i] : memref<4xf64>
    }
  }
  %norm = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
    %xi = memref.load %x[%i] : memref<4xf64>
    %sq = arith.mulf %xi, %xi : f64
    %acc1 = arith.addf %acc, %sq : f64
    scf.yield %acc1 : f64
  }
  func.return %norm : f64
}
