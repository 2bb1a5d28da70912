// Not a test: input of ../ptx_errors.mlir (an NVVM intrinsic of sm_80 and
// later, compiled for sm_75: LLVM aborted the process selecting it).
func.func @reduce(%y: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xi32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %y[%i] : memref<?xi32>
    %mask = arith.constant -1 : i32
    %sum = llvm.call_intrinsic "llvm.nvvm.redux.sync.add"(%v, %mask) : (i32, i32) -> i32
    memref.store %sum, %y[%i] : memref<?xi32>
    scf.reduce
  }
  func.return
}
