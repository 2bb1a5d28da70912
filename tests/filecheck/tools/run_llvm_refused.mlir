// RUN: not rev-run %s -e f --args 1 2>&1 | filecheck %s

// rev-run says what LLVM refuses of a function the run reaches where
// rev-translate says it: at that function, not as an unlocated line; and
// suggests no interpreter, which has no semantics for `llvm` ops either.
// CHECK-NOT: Traceback
// CHECK:     {{^.*}}run_llvm_refused.mlir:[[# @LINE + 3]]:1: error: 'func.func': LLVM refuses the code of @cast: invalid cast opcode for cast from 'i64' to 'float' (at '{{.*}} = bitcast i64 {{.*}} to float'){{$}}
// CHECK-NOT: {{.}}

func.func @cast(%x: i64) -> f32 {
  %y = llvm.bitcast %x : i64 to f32
  func.return %y : f32
}

// The entry names @cast, so the run reaches it.
rev.func @f(%y: i64) {
  "rev.return"(%y) {keeps = @cast} : (i64) -> ()
}
