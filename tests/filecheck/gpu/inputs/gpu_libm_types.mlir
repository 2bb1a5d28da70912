// Not a test: input of ../ptx_errors.mlir (libm's hypot declared on f32:
// it was linked to libdevice's f64 __nv_hypot and called with floats).
func.func private @hypot(f32, f32) -> f32
func.func @norms(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %y[%i] : memref<?xf32>
    %h = func.call @hypot(%v, %v) : (f32, f32) -> f32
    memref.store %h, %y[%i] : memref<?xf32>
    scf.reduce
  }
  func.return
}
