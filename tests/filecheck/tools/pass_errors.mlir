// RUN: not rev-opt %s -p nosuchpass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not rev-opt %s -p 'rev-invert{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not rev-opt %s -p 'rev-invert{in-place=maybe}' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not rev-opt %s -p 'rev-invert{' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not rev-opt %s -p 'rev-invert{functions=nosuch}' 2>&1 | filecheck %s --check-prefix=FUNCTION

// Bad pipelines get one line on stderr and a non-zero exit, no traceback;
// a syntax error adds its place, the argument and a caret under the column.

rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}

// PASS-NOT: Traceback
// PASS:     {{^}}rev-opt: error: {{.*}}nosuchpass{{.*$}}
// PASS-NOT: {{.}}

// OPTION-NOT: Traceback
// OPTION:     {{^}}rev-opt: error: {{.*}}bogus{{.*$}}
// OPTION-NOT: {{.}}

// VALUE-NOT: Traceback
// VALUE:     {{^}}rev-opt: error: {{.*}}maybe{{.*$}}
// VALUE-NOT: {{.}}

// SYNTAX-NOT: Traceback
// SYNTAX:      {{^}}rev-opt: error: Error parsing pass pipeline specification:{{$}}
// SYNTAX-NEXT: {{^}}pass-pipeline:1:12{{$}}
// SYNTAX-NEXT: {{^}}rev-invert{{[{]$}}
// SYNTAX-NEXT: {{^           \^$}}
// SYNTAX-NEXT: {{^           Expected argument name here$}}
// SYNTAX-NOT:  {{.}}

// A pass that fails reports it on the input file.
// FUNCTION-NOT: Traceback
// FUNCTION:     {{^.*}}pass_errors.mlir: error: no rev.func named @nosuch in the module{{$}}
// FUNCTION-NOT: {{.}}
