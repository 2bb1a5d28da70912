// RUN: rev-opt --help | filecheck %s
// RUN: rev-opt --version | filecheck %s --check-prefix=VERSION

// --help lists a flag per pass, then every revmlir pass with its one-line
// description and its options.

// CHECK:     usage: rev-opt
// CHECK:     --pass-pipeline PIPELINE
// CHECK:     pass flags:
// CHECK-DAG: {{^ +}}--rev-invert OPTIONS
// CHECK-DAG: {{^ +}}--ad-adjoint OPTIONS
// CHECK-DAG: {{^ +}}--canonicalize OPTIONS
// CHECK:     revmlir passes (use with -p
// CHECK-DAG: {{^ +}}rev-verify {{ *}}Check every rev.func against the reversibility rules.
// CHECK-DAG: {{^ +}}rev-invert {{ *}}Add @f.inv for each rev.func @f
// CHECK-DAG: {{^ +}}rev-expand-routines {{ *}}Inline every rev.routine
// CHECK-DAG: {{^ +}}rev-insert-checks {{ *}}Turn run-time checks on
// CHECK-DAG: {{^ +}}rev-strip-checks {{ *}}Turn run-time reversibility checks off
// CHECK-DAG: {{^ +}}in{{[-_]}}place: bool (default: false)
// CHECK-DAG: {{^ +}}functions: tuple[str, ...]
// CHECK:     canonicalize
// CHECK-NOT: Traceback

// VERSION: rev-opt (revmlir {{[0-9.]+.*}}) on xDSL 0.74
