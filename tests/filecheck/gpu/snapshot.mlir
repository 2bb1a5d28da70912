// RUN: rev-translate %s --emit=ptx | filecheck %s

// Snapshots on the GPU (what a checkpointed gradient's step takes): the
// store's buffer, and the stack a record holds the live part of, are
// pieces of the thread's per-thread arena, as every stack's buffer is
// there. The snapshot fills the record's room at once and copies the
// stack's part into it; the restore copies it back: each reserves in the
// arena, then writes as native code does (a memmove, which NVPTX expands
// into a loop). No realloc, no malloc, no free anywhere in the PTX: before
// the kernel (the device functions, any declaration) as in it.
// tests/test_gpu_stacks.py runs the kernel thread by thread on the CPU
// against the interpreter.

// CHECK-NOT:   realloc
// CHECK-NOT:   malloc
// CHECK-NOT:   free
// CHECK-LABEL: .visible .entry kernel(
// CHECK-NOT:   realloc
// CHECK-NOT:   malloc
// CHECK-NOT:   free

// y ← y + 2x² through a record of (y, [x, 2x]): the stack changes after the
// snapshot (2x popped, y moved by it) and the restore brings both back.
rev.func @frames(%y: f64, %x: f64) {
  %f = anc.stack_alloc : !anc.stack<f64>
  %a = anc.alloc %x : f64
  anc.push %f, %a : !anc.stack<f64>
  %two = arith.constant 2.0 : f64
  %x2 = arith.mulf %x, %two : f64
  %b = anc.alloc %x2 : f64
  anc.push %f, %b : !anc.stack<f64>
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %y, %f : !anc.stack<f64>, f64, !anc.stack<f64>
  %p = anc.pop %f : !anc.stack<f64>
  %y1 = rev.add %y, %p : f64
  anc.free %p, %x2 : f64
  %r = anc.restore %s, %y1, %f : !anc.stack<f64>, f64, !anc.stack<f64> -> (f64)
  %z = anc.alloc %r : f64
  anc.drop %s, %z, %f : !anc.stack<f64>, f64, !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  %q = anc.pop %f : !anc.stack<f64>
  %t = arith.mulf %q, %x : f64
  %z1 = rev.add %z, %t : f64
  anc.free %q, %x2 : f64
  %c = anc.pop %f : !anc.stack<f64>
  anc.free %c, %x : f64
  anc.stack_free %f : !anc.stack<f64>
  rev.return %z1, %x : f64, f64
}

rev.func @kernel(%y: memref<?xf64>, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %a = rev.take %y[%i] : memref<?xf64>
    %b = rev.take %x[%i] : memref<?xf64>
    %a1, %b1 = rev.call @frames(%a, %b) : (f64, f64) -> (f64, f64)
    rev.put %b1, %x[%i] : memref<?xf64>
    rev.put %a1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return
}
