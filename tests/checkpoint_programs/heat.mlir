func.func @heat(%u: memref<?xf64>, %tmp: memref<?xf64>, %c: f64) -> (f64) {
  %steps = arith.constant 5 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %u, %c0 : memref<?xf64>
  %last = arith.subi %n, %c1 : index
  %two = arith.constant 2.0 : f64
  scf.for %t = %c0 to %steps step %c1 {
    scf.for %i = %c1 to %last step %c1 {
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %a = memref.load %u[%im] : memref<?xf64>
      %b = memref.load %u[%i] : memref<?xf64>
      %d = memref.load %u[%ip] : memref<?xf64>
      %s = arith.addf %a, %d : f64
      %b2 = arith.mulf %two, %b : f64
      %lap = arith.subf %s, %b2 : f64
      %dl = arith.mulf %c, %lap : f64
      %new = arith.addf %b, %dl : f64
      memref.store %new, %tmp[%i] : memref<?xf64>
    }
    scf.for %i = %c1 to %last step %c1 {
      %v = memref.load %tmp[%i] : memref<?xf64>
      memref.store %v, %u[%i] : memref<?xf64>
    }
  }
  %zero = arith.constant 0.0 : f64
  %e = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %u[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    %acc1 = arith.addf %acc, %sq : f64
    scf.yield %acc1 : f64
  }
  func.return %e : f64
}
