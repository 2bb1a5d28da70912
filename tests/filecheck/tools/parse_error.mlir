// RUN: not rev-opt %S/inputs/garbage.mlir 2>&1 | filecheck %s --check-prefix=GARBAGE
// RUN: not rev-opt %S/inputs/truncated.mlir 2>&1 | filecheck %s --check-prefix=TRUNCATED
// RUN: not rev-opt %S/inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: rev-opt %S/inputs/garbage.mlir --parsing-diagnostics | filecheck %s --check-prefix=GARBAGE

// Unparsable text gets one line, file:line:col: error: message, on stderr
// and a non-zero exit code (with --parsing-diagnostics: on stdout, exit 0).
// Nothing else is printed: no traceback, no partial IR.

// GARBAGE-NOT: Traceback
// GARBAGE:     {{^.*}}inputs{{/|\\}}garbage.mlir:3:1: error: {{.+$}}
// GARBAGE-NOT: {{.}}

// TRUNCATED-NOT: Traceback
// TRUNCATED:     {{^.*}}inputs{{/|\\}}truncated.mlir:3:1: error: {{.*$}}
// TRUNCATED-NOT: {{.}}

// MISSING-NOT: Traceback
// MISSING:     {{^}}rev-opt: error: {{.*}}does-not-exist.mlir{{.*$}}
// MISSING-NOT: {{.}}
