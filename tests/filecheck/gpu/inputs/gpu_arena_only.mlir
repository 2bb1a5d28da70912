// Not a test: input of ../arena.mlir (std code whose kernel's only check
// is the arena's: an ancilla array of a run-time size and nothing else).
func.func @only_arena(%y: memref<?xf64>, %n: index, %err: memref<6xi64>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = memref.alloc(%n) : memref<?xf64>
    memref.dealloc %a : memref<?xf64>
    scf.reduce
  }
  func.return %n : index
}
