// RUN: not rev-run %s -e h --args 1.0 2.0 2>&1 | filecheck %s
// RUN: not rev-run %s -e h --args 1.0 2.0 --backend interpreter 2>&1 | filecheck %s
// RUN: not rev-run %S/inputs/uncall_func_inverse.mlir -e h --args 1.0 2.0 2>&1 | filecheck %s --check-prefix=FUNC
// RUN: not rev-run %S/inputs/uncall_func_inverse.mlir -e h --args 1.0 2.0 --backend interpreter 2>&1 | filecheck %s --check-prefix=FUNC

// An uncall of @f runs the module's @f.inv forwards on both engines, so a
// module whose @f.inv is not a rev.func of @f's type is refused before a
// run, at the uncall, alike on either engine: one that takes other
// arguments, and a func.func (which native code cannot call as @f's
// inverse and the interpreter would skip).

// CHECK-NOT: internal error
// CHECK: uncall_module_inverse.mlir:[[# @LINE + 13]]:3: error: [call] 'rev.uncall' of @f runs the module's @f.inv, which must be a 'rev.func' of @f's type (f64, f64) -> (f64, f64), not a 'rev.func' of type (f64) -> f64{{$}}

// FUNC-NOT: internal error
// FUNC: uncall_func_inverse.mlir:9:3: error: [call] 'rev.uncall' of @f runs the module's @f.inv, which must be a 'rev.func' of @f's type (f64, f64) -> (f64, f64), not a 'func.func' of type (f64) -> f64{{$}}

rev.func @f(%y: f64, %a: f64) {
  %y1 = rev.add %y, %a : f64
  rev.return %y1, %a : f64, f64
}
rev.func @f.inv(%y: f64) {
  rev.return %y : f64
}
rev.func @h(%y: f64, %a: f64) {
  %y1, %a1 = rev.uncall @f(%y, %a) : (f64, f64) -> (f64, f64)
  rev.return %y1, %a1 : f64, f64
}
