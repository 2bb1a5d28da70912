// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s
// RUN: env REVMLIR_STACK_MAX_MB=1048576 rev-opt %s -p rev-lower-to-std,convert-std-to-llvm | filecheck %s --check-prefix=LLVM
// RUN: rev-opt %s -p rev-lower-to-std,convert-std-to-llvm -t llvm | filecheck %s --check-prefix=IR

// A stack is a header memref<3xi64> (buffer address, size, capacity); the
// checks read the size and report through the error slot.
// CHECK: builtin.module attributes {rev.checks = ["InvertibilityError|anc.copy_pop|{{.*}}stacks.mlir:[[# @LINE + 77]]:3|stacks||pop from an empty stack", "InvertibilityError|anc.copy_pop|{{.*}}stacks.mlir:[[# @LINE + 77]]:3|stacks|f64,f64|popped {0}, but the live value is {1}", "InvertibilityError|anc.pop|{{.*}}stacks.mlir:[[# @LINE + 79]]:3|stacks||pop from an empty stack", "InvertibilityError|anc.pop|{{.*}}stacks.mlir:[[# @LINE + 82]]:3|stacks||pop from an empty stack", "InvertibilityError|anc.stack_free|{{.*}}stacks.mlir:[[# @LINE + 83]]:3|stacks|i64|stack freed holding {0} value(s)", "ExecutionError|anc.copy_push|{{.*}}stacks.mlir:[[# @LINE + 76]]:3|stacks|i64|cannot grow a stack of {0} elements: out of memory", "ExecutionError|anc.push|{{.*}}stacks.mlir:[[# @LINE + 78]]:3|stacks|i64|cannot grow a stack of {0} elements: out of memory", "ExecutionError|anc.push|{{.*}}stacks.mlir:[[# @LINE + 81]]:3|stacks|i64|cannot grow a stack of {0} elements: out of memory"], rev.lowered}
// The C library functions the runtime calls are declared as upstream's
// convert-to-llvm declares them (abort is what a failed check calls,
// through revmlir.fail, outside native code):
// CHECK-NEXT:  llvm.func @abort()
// CHECK-NEXT:  llvm.func @realloc(!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT:  llvm.func @free(!llvm.ptr)
// CHECK-LABEL: func.func @stacks(%y: f64, %s: memref<3xi64>, %z: complex<f64>, %err: memref<6xi64>) -> (f64, complex<f64>) attributes {rev.stack_arguments = array<i64: 0, 8, 0>}
// CHECK-NEXT:    %[[BEFORE_AT:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[BEFORE:.*]] = memref.load %s[%[[BEFORE_AT]]] : memref<3xi64>
// CHECK-NEXT:    func.call @revmlir.stack.push.f64(%s, %y) {rev.source_op = "anc.copy_push"} : (memref<3xi64>, f64) -> ()
// A push that could not grow its stack left the size as it was: the run
// stops there.
// CHECK-NEXT:    %[[AFTER:.*]] = memref.load %s[%[[BEFORE_AT]]] : memref<3xi64>
// CHECK-NEXT:    %{{.*}} = arith.cmpi ne, %[[AFTER]], %[[BEFORE]] : i64
// CHECK:         func.call @revmlir.report(%err,
// CHECK:         %[[SIZE_AT:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[SIZE:.*]] = memref.load %s[%[[SIZE_AT]]] : memref<3xi64>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %{{.*}} = arith.cmpi sgt, %[[SIZE]], %[[ZERO]] : i64
// CHECK:         scf.if
// CHECK:         %[[COPY:.*]] = func.call @revmlir.stack.pop.f64(%s) : (memref<3xi64>) -> f64
// Equal values pass at one comparison; the tolerance is computed only for
// values that differ.
// CHECK-NEXT:    %[[EQUAL:.*]] = arith.cmpf oeq, %[[COPY]], %y : f64
// CHECK-NEXT:    %{{.*}} = scf.if %[[EQUAL]] -> (i1) {
// Where they differ, a NaN is the value a NaN is: the parts NaN in both
// are taken as 0.
// CHECK:         %[[NAN_COPY:.*]] = arith.cmpf uno, %[[COPY]], %[[COPY]] : f64
// CHECK-NEXT:    %[[NAN_Y:.*]] = arith.cmpf uno, %y, %y : f64
// CHECK-NEXT:    %[[BOTH:.*]] = arith.andi %[[NAN_COPY]], %[[NAN_Y]] : i1
// CHECK-NEXT:    %[[ZERO_F:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[A:.*]] = arith.select %[[BOTH]], %[[ZERO_F]], %[[COPY]] : f64
// CHECK-NEXT:    %[[B:.*]] = arith.select %[[BOTH]], %[[ZERO_F]], %y : f64
// CHECK-NEXT:    %{{.*}} = arith.subf %[[A]], %[[B]] : f64
// CHECK:         arith.cmpf ole
// CHECK:         scf.if
// CHECK:         func.call @revmlir.stack.push.f64(%s, %y)
// CHECK:         arith.cmpi sgt
// CHECK:         scf.if
// CHECK:         %y1 = func.call @revmlir.stack.pop.f64(%s) : (memref<3xi64>) -> f64
// A local stack: a zeroed header in the frame.
// CHECK-NEXT:    %t = memref.alloca() : memref<3xi64>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[Z]], %t[%[[I0]]] : memref<3xi64>
// CHECK-NEXT:    %[[I1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    memref.store %[[Z]], %t[%[[I1]]] : memref<3xi64>
// CHECK-NEXT:    %[[I2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    memref.store %[[Z]], %t[%[[I2]]] : memref<3xi64>
// CHECK:         func.call @revmlir.stack.push.complex_f64(%t, %z) {rev.source_op = "anc.push"} : (memref<3xi64>, complex<f64>) -> ()
// CHECK:         %z1 = func.call @revmlir.stack.pop.complex_f64(%t) : (memref<3xi64>) -> complex<f64>
// stack_free checks emptiness; nocheck leaves only the release.
// CHECK:         arith.cmpi eq
// CHECK:         scf.if
// CHECK:         func.call @revmlir.stack.free(%t) : (memref<3xi64>) -> ()
// CHECK-NOT:     scf.if
// CHECK:         func.call @revmlir.stack.free(%u) : (memref<3xi64>) -> ()
// CHECK-NEXT:    func.return %y1, %z1 : f64, complex<f64>
// The runtime is defined in the module once per function and element type,
// in std but for the buffer, which llvm ops address (a complex number as its
// two parts):
// CHECK-LABEL: func.func private @revmlir.stack.free(%header: memref<3xi64>)
// CHECK:         %[[FREED:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK-NEXT:    llvm.call @free(%[[FREED]]) : (!llvm.ptr) -> ()
// CHECK-LABEL: func.func private @revmlir.stack.pop.complex_f64(%header: memref<3xi64>) -> complex<f64>
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> f64
// CHECK-NEXT:    llvm.load %{{.*}} : !llvm.ptr -> f64
// CHECK-NEXT:    complex.create
// CHECK-LABEL: func.func private @revmlir.stack.pop.f64(%header: memref<3xi64>) -> f64
// CHECK-LABEL: func.func private @revmlir.stack.push.complex_f64(%header: memref<3xi64>, %value: complex<f64>)
// CHECK:         llvm.call @realloc(
// CHECK:         complex.re %value
// CHECK-NEXT:    complex.im %value
// CHECK-LABEL: func.func private @revmlir.stack.push.f64(%header: memref<3xi64>, %value: f64)
rev.func @stacks(%y: f64, %s: !anc.stack<f64>, %z: complex<f64>) {
  anc.copy_push %s, %y : !anc.stack<f64>
  anc.copy_pop %s, %y : !anc.stack<f64>
  anc.push %s, %y : !anc.stack<f64>
  %y1 = anc.pop %s : !anc.stack<f64>
  %t = anc.stack_alloc : !anc.stack<complex<f64>>
  anc.push %t, %z : !anc.stack<complex<f64>>
  %z1 = anc.pop %t : !anc.stack<complex<f64>>
  anc.stack_free %t : !anc.stack<complex<f64>>
  %u = anc.stack_alloc : !anc.stack<i1>
  anc.stack_free %u {nocheck} : !anc.stack<i1>
  rev.return %y1, %z1 : f64, complex<f64>
}

// Headers of local stacks are allocated once, in the entry block, even
// inside a loop; the runtime is defined in the module, over realloc and free.
// LLVM-LABEL: llvm.func internal @stacks(
// LLVM-NEXT:     %[[THREE:.*]] = llvm.mlir.constant(3) : i64
// LLVM-NEXT:     %{{.*}} = llvm.alloca %[[THREE]] x i64
// LLVM-NEXT:     %[[THREE2:.*]] = llvm.mlir.constant(3) : i64
// LLVM-NEXT:     %{{.*}} = llvm.alloca %[[THREE2]] x i64
// LLVM-LABEL: llvm.func internal @revmlir.stack.free(
// LLVM:          llvm.call @free(
// LLVM-LABEL: llvm.func internal @revmlir.stack.pop.complex_f64(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64) -> !llvm.struct<(f64, f64)>
// An empty stack pops zero (the check has reported it).
// LLVM:          llvm.icmp "eq"
// LLVM:          llvm.mlir.constant(0.000000e+00 : f64) : f64
// LLVM:          llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// LLVM-LABEL: llvm.func internal @revmlir.stack.push.complex_f64(
// A full buffer doubles (starting at 8 elements of sizeof(element) bytes),
// asking realloc for SIZE_MAX bytes (which it refuses) past the stack limit
// (REVMLIR_STACK_MAX_MB, here 2^40 bytes):
// LLVM:          llvm.icmp "eq"
// LLVM:          llvm.mlir.constant(8) : i64
// LLVM:          llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, f64
// LLVM:          llvm.mlir.constant(1099511627776) : i64
// LLVM:          llvm.icmp "ule"
// LLVM:          llvm.mlir.constant(-1) : i64
// LLVM:          llvm.call @realloc(
// IR: declare void @"free"(ptr
// IR: declare ptr @"realloc"(ptr
