// Not a test: input of ../ptx_errors.mlir (std code, not lowered from rev,
// whose function pushes on a stack without an error slot).
func.func private @revmlir.stack.push.f64(memref<3xi64>, f64)
func.func @pushes(%header: memref<3xi64>, %x: f64) {
  func.call @revmlir.stack.push.f64(%header, %x) : (memref<3xi64>, f64) -> ()
  func.return
}
