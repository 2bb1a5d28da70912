// RUN: not rev-run %s -e rounded --args 0.0 0.1 2>&1 | filecheck %s --check-prefix=NATIVE
// RUN: not rev-translate %s --emit=asm 2>&1 | filecheck %s --check-prefix=TRANSLATE
// RUN: rev-run %s -e rounded --backend=interpreter --args 0.0 0.1 | filecheck %s --check-prefix=INTERPRETER

// Native floats are f32 and f64: f16, bf16, f80 and f128 are refused at the
// op that makes a value of one (LLVM has no libm intrinsics for them, a C
// caller no type), the interpreter runs them.

// NATIVE-NOT: Traceback
// NATIVE:  {{^.*}}native_float_types.mlir: error: cannot run natively: 'arith.truncf' at {{.*}}native_float_types.mlir:[[# @LINE + 11]]:3: native code does not support type f16; its floats are f32 or f64 (use --backend=interpreter)
// NATIVE-NOT: {{.}}

// TRANSLATE-NOT: Traceback
// TRANSLATE:     {{^.*}}native_float_types.mlir: error: 'arith.truncf' at {{.*}}native_float_types.mlir:[[# @LINE + 7]]:3: native code does not support type f16; its floats are f32 or f64
// TRANSLATE-NOT: {{.}}

// INTERPRETER:      0.0999755859375 : f64
// INTERPRETER-NEXT: 0.1 : f64

rev.func @rounded(%y: f64, %x: f64) {
  %h = arith.truncf %x : f64 to f16
  %w = arith.extf %h : f16 to f64
  %y1 = rev.add %y, %w : f64
  rev.return %y1, %x : f64, f64
}
