// Not a test: input of ../ptx_errors.mlir (an ancilla array of a dynamic
// size in a parallel loop).
rev.func @scratch(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %a = anc.array_alloc(%n) : memref<?xf64>
    anc.array_free %a(%n) : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
