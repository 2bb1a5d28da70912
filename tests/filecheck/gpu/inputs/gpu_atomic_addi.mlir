// Not a test: input of ../ptx_errors.mlir (an integer atomic addition).
func.func @count(%m: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %n = memref.dim %m, %c0 : memref<?xi64>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %old = "memref.atomic_rmw"(%one, %m, %c0) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
