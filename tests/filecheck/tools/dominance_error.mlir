// RUN: not rev-opt %s -p rev-invert 2>&1 | filecheck %s
// RUN: not rev-run %s -e f --args 1.0 2.0 2>&1 | filecheck %s
// RUN: not rev-run %s -e f --backend interpreter --args 1.0 2.0 2>&1 | filecheck %s
// RUN: not rev-translate %s 2>&1 | filecheck %s

// A use before its definition is one located diagnostic from every tool:
// rev-invert no longer reorders it silently, the interpreter no longer fails
// on a missing value, native compilation no longer fails inside LLVM.

// CHECK-NOT: Traceback
// CHECK:     {{^.*}}dominance_error.mlir:[[# @LINE + 4]]:3: error: [dominance] 'rev.add' uses %t before 'arith.mulf'{{.*$}}
// CHECK-NOT: {{.}}

rev.func @f(%y: f64, %a: f64) {
  %y1 = rev.add %y, %t : f64
  %t = arith.mulf %a, %a : f64
  rev.return %y1, %a : f64, f64
}
