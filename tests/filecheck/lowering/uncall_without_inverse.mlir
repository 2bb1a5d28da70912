// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s

// An uncall of a function without an inverse is a check that always fails,
// located at the uncall, whose message is the inverter's: a run fails there
// and only there, as on the interpreter.  Its result is its argument; the
// function it uncalls is lowered forward only.
// CHECK: "ExecutionError|rev.uncall|{{.*}}uncall_without_inverse.mlir:[[# @LINE + 23]]:3|g||'anc.free' at {{.*}}uncall_without_inverse.mlir:[[# @LINE + 18]]:3 forgets the value it frees {{.*}}so its function has no inverse"
// CHECK-NOT: func.func @f.inv
// CHECK-LABEL: func.func @g(%x: f64, %err: memref<6xi64>) -> f64 {
// CHECK-NEXT:    %[[FALSE:.*]] = arith.constant false
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[FAILS:.*]] = arith.xori %[[FALSE]], %[[TRUE]] : i1
// CHECK-NEXT:    scf.if %[[FAILS]] {
// CHECK-NEXT:      %[[ID:.*]] = arith.constant {{[0-9]+}} : i64
// CHECK-NEXT:      %[[UNUSED:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      func.call @revmlir.report(%err, %[[ID]], %[[UNUSED]], %[[UNUSED]], %[[UNUSED]], %[[UNUSED]])
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %x : f64
// CHECK-NOT: func.func @f.inv

rev.func @f(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %x : f64
  anc.free %t1, %zero {rev.forgetful} : f64
  rev.return %x : f64
}

rev.func @g(%x: f64) {
  %y = rev.uncall @f(%x) : (f64) -> f64
  rev.return %y : f64
}
