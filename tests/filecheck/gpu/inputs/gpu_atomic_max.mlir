// Not a test: input of ../ptx_errors.mlir (an atomic maximum).
func.func @largest(%m: memref<?xf64>, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %old = memref.atomic_rmw maximumf %xi, %m[%c0] : (f64, memref<?xf64>) -> f64
    scf.reduce
  }
  func.return
}
