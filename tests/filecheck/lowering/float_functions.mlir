// RUN: rev-opt %s | filecheck %s --check-prefix=PARSE
// RUN: rev-opt %s -p convert-std-to-llvm | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s --check-prefix=STD
// RUN: not rev-opt %S/inputs/hypot_named.mlir -p rev-lower-to-std 2>&1 | filecheck %s --check-prefix=NAMED

// arith.remf (upstream's op, which xDSL's arith lacks) and math.hypot
// (revmlir's) read and print as written, and are the C library's fmod and
// hypot, fmodf and hypotf on f32: never frem, which NVPTX rounds.
// PARSE: %r = arith.remf %a, %b : f64
// PARSE: %h = math.hypot %a, %b : f64
// PARSE: %r32 = arith.remf %c, %d : f32
// PARSE: %h32 = math.hypot %c, %d : f32
// CHECK-DAG: llvm.func @fmod(f64, f64) -> f64
// CHECK-DAG: llvm.func @fmodf(f32, f32) -> f32
// CHECK-DAG: llvm.func @hypot(f64, f64) -> f64
// CHECK-DAG: llvm.func @hypotf(f32, f32) -> f32
// CHECK-LABEL: llvm.func internal @f(
// CHECK-NEXT: %r = llvm.call @fmod(%a, %b) : (f64, f64) -> f64
// CHECK-NEXT: %h = llvm.call @hypot(%a, %b) : (f64, f64) -> f64
// CHECK-NEXT: %r32 = llvm.call @fmodf(%c, %d) : (f32, f32) -> f32
// CHECK-NEXT: %h32 = llvm.call @hypotf(%c, %d) : (f32, f32) -> f32
// CHECK-NOT: frem

// rev-lower-to-std's output, which upstream MLIR reads (its math dialect
// has no hypot), calls the C library's hypot, declared in the module.
// STD: %h = func.call @hypot(%a, %b) : (f64, f64) -> f64
// STD: %h32 = func.call @hypotf(%c, %d) : (f32, f32) -> f32
// STD-DAG: func.func private @hypot(f64, f64) -> f64
// STD-DAG: func.func private @hypotf(f32, f32) -> f32
// NAMED: 'math.hypot' {{.*}} calls the C library's 'hypot', which is also the name of a function of the module: rename it
func.func @f(%a: f64, %b: f64, %c: f32, %d: f32) -> (f64, f64, f32, f32) {
  %r = arith.remf %a, %b : f64
  %h = math.hypot %a, %b : f64
  %r32 = arith.remf %c, %d : f32
  %h32 = math.hypot %c, %d : f32
  func.return %r, %h, %r32, %h32 : f64, f64, f32, f32
}
