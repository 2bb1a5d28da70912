// RUN: not rev-translate --emit=llvm %s 2>&1 | filecheck %s --check-prefix=HOST
// RUN: not rev-translate --emit=ptx %s 2>&1 | filecheck %s --check-prefix=GPU

// What LLVM's parser refuses of a module's LLVM IR (xDSL's verifier takes a
// bitcast between types of other sizes) is a compile error at the function
// LLVM names, with LLVM's reason and the instruction it read, not the
// first line of llvmlite's unlocated RuntimeError ("LLVM IR parsing error").
// HOST-NOT: Traceback
// HOST:     {{^.*}}llvm_refused.mlir:[[# @LINE + 9]]:1: error: 'func.func': LLVM refuses the code of @cast: invalid cast opcode for cast from 'i64' to 'float' (at '{{.*}} = bitcast i64 {{.*}} to float')
// HOST-NOT: {{.}}

// The GPU's LLVM IR is printed from the ops (decision 149): the same
// refusal, its values named otherwise.
// GPU-NOT: Traceback
// GPU:     {{^.*}}llvm_refused.mlir:[[# @LINE + 3]]:1: error: 'func.func': LLVM refuses the code of @cast: invalid cast opcode for cast from 'i64' to 'float' (at '%v{{[0-9]+}} = bitcast i64 %v{{[0-9]+}} to float')
// GPU-NOT: {{.}}

func.func @cast(%x: i64) -> f32 {
  %y = llvm.bitcast %x : i64 to f32
  func.return %y : f32
}
