// RUN: not rev-opt %s 2>&1 | filecheck %s
// RUN: not rev-translate %s 2>&1 | filecheck %s

// A block label defined twice after a branch to it is a located parse error
// (xDSL's parser lost the first definition and raised a KeyError).

// CHECK-NOT: Traceback
// CHECK:     {{^.*}}block_redefinition.mlir:[[# @LINE + 7]]:1: error: re-declaration of block 'bb1'
// CHECK-NOT: {{.}}

func.func @branchy(%x: i1) {
  cf.br ^bb1
^bb1:
  func.return
^bb1:
  func.return
}
