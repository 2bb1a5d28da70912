// Calls between ordinary functions: results, scalar arguments, arrays
// written by the callee.
func.func @axpy(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %xi = memref.load %x[%i] : memref<?xf64>
    %yi = memref.load %y[%i] : memref<?xf64>
    %p = arith.mulf %a, %xi : f64
    %s = arith.addf %yi, %p : f64
    memref.store %s, %y[%i] : memref<?xf64>
  }
  func.return
}
func.func @dot(%x: memref<?xf64>, %y: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %d = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %yi = memref.load %y[%i] : memref<?xf64>
    %p = arith.mulf %xi, %yi : f64
    %acc1 = arith.addf %acc, %p : f64
    scf.yield %acc1 : f64
  }
  func.return %d : f64
}
func.func @driver(%x: memref<?xf64>, %y: memref<?xf64>, %a: f64) -> f64 {
  func.call @axpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  %d = func.call @dot(%x, %y) : (memref<?xf64>, memref<?xf64>) -> f64
  %d2 = arith.mulf %d, %d : f64
  %sn = math.sin %a : f64
  func.call @axpy(%sn, %y, %x) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  %d3 = func.call @dot(%x, %x) : (memref<?xf64>, memref<?xf64>) -> f64
  %r = arith.addf %d2, %d3 : f64
  func.return %r : f64
}
