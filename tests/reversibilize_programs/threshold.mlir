// A loop with a data-dependent branch that overwrites the element it tests,
// and a carried value that is not updated in place (it is damped).
func.func @threshold(%a: memref<?xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %decay = arith.constant 0.9 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %x = memref.load %a[%i] : memref<?xf64>
    %pos = arith.cmpf ogt, %x, %zero : f64
    %v = scf.if %pos -> (f64) {
      %y = arith.mulf %x, %s : f64
      memref.store %y, %a[%i] : memref<?xf64>
      scf.yield %y : f64
    } else {
      %y = arith.mulf %x, %x : f64
      scf.yield %y : f64
    }
    %damped = arith.mulf %acc, %decay : f64
    %acc1 = arith.addf %damped, %v : f64
    scf.yield %acc1 : f64
  }
  func.return %r : f64
}
