// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s

// Every op and type of the anc dialect survives printing and re-parsing, in
// the custom form (first RUN line) and the generic form (second RUN line).

// Ancillas: alloc and free (with and without nocheck), of several types.
// CHECK-LABEL: rev.func @ancillas(%x: f64, %y: f64, %n: i64) {
// CHECK-NEXT: %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %t = anc.alloc %zero : f64
// CHECK-NEXT: %t1 = rev.add %t, %x : f64
// CHECK-NEXT: %y1 = rev.add %y, %t1 : f64
// CHECK-NEXT: %t2 = rev.sub %t1, %x : f64
// CHECK-NEXT: anc.free %t2, %zero : f64
// CHECK-NEXT: %c5 = arith.constant 5 : i64
// CHECK-NEXT: %k = anc.alloc %c5 : i64
// CHECK-NEXT: %k1 = rev.inc %k : i64
// CHECK-NEXT: %k2 = rev.dec %k1 : i64
// CHECK-NEXT: anc.free %k2, %c5 {nocheck} : i64
// CHECK-NEXT: rev.return %x, %y1, %n : f64, f64, i64
// CHECK-NEXT: }
rev.func @ancillas(%x: f64, %y: f64, %n: i64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %x : f64
  %y1 = rev.add %y, %t1 : f64
  %t2 = rev.sub %t1, %x : f64
  anc.free %t2, %zero : f64
  %c5 = arith.constant 5 : i64
  %k = anc.alloc %c5 : i64
  %k1 = rev.inc %k : i64
  %k2 = rev.dec %k1 : i64
  anc.free %k2, %c5 {nocheck} : i64
  rev.return %x, %y1, %n : f64, f64, i64
}

// Stacks: stack_alloc, push, pop, copy_push, copy_pop, stack_free.
// CHECK-LABEL: rev.func @stacks(%x: f64, %n: i64) {
// CHECK-NEXT: %s = anc.stack_alloc : !anc.stack<f64>
// CHECK-NEXT: anc.push %s, %x : !anc.stack<f64>
// CHECK-NEXT: %x1 = anc.pop %s : !anc.stack<f64>
// CHECK-NEXT: anc.copy_push %s, %x1 : !anc.stack<f64>
// CHECK-NEXT: %x2 = rev.neg %x1 : f64
// CHECK-NEXT: %x3 = rev.neg %x2 : f64
// CHECK-NEXT: anc.copy_pop %s, %x3 : !anc.stack<f64>
// CHECK-NEXT: anc.stack_free %s : !anc.stack<f64>
// CHECK-NEXT: %si = anc.stack_alloc : !anc.stack<i64>
// CHECK-NEXT: anc.push %si, %n : !anc.stack<i64>
// CHECK-NEXT: %n1 = anc.pop %si : !anc.stack<i64>
// CHECK-NEXT: anc.copy_push %si, %n1 : !anc.stack<i64>
// CHECK-NEXT: anc.copy_pop %si, %n1 {nocheck} : !anc.stack<i64>
// CHECK-NEXT: anc.stack_free %si {nocheck} : !anc.stack<i64>
// CHECK-NEXT: rev.return %x3, %n1 : f64, i64
// CHECK-NEXT: }
rev.func @stacks(%x: f64, %n: i64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.push %s, %x : !anc.stack<f64>
  %x1 = anc.pop %s : !anc.stack<f64>
  anc.copy_push %s, %x1 : !anc.stack<f64>
  %x2 = rev.neg %x1 : f64
  %x3 = rev.neg %x2 : f64
  anc.copy_pop %s, %x3 : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  %si = anc.stack_alloc : !anc.stack<i64>
  anc.push %si, %n : !anc.stack<i64>
  %n1 = anc.pop %si : !anc.stack<i64>
  anc.copy_push %si, %n1 : !anc.stack<i64>
  anc.copy_pop %si, %n1 {nocheck} : !anc.stack<i64>
  anc.stack_free %si {nocheck} : !anc.stack<i64>
  rev.return %x3, %n1 : f64, i64
}

// !anc.stack as a function argument (a reference, not returned), of
// scalar and complex element types.
// CHECK-LABEL: rev.func @stack_arguments(%s: !anc.stack<f64>, %c: !anc.stack<complex<f64>>, %z: complex<f64>) {
// CHECK-NEXT: anc.push %c, %z : !anc.stack<complex<f64>>
// CHECK-NEXT: %z1 = anc.pop %c : !anc.stack<complex<f64>>
// CHECK-NEXT: %z2 = anc.pop %c : !anc.stack<complex<f64>>
// CHECK-NEXT: anc.push %c, %z2 : !anc.stack<complex<f64>>
// CHECK-NEXT: rev.return %z1 : complex<f64>
// CHECK-NEXT: }
rev.func @stack_arguments(%s: !anc.stack<f64>, %c: !anc.stack<complex<f64>>, %z: complex<f64>) {
  anc.push %c, %z : !anc.stack<complex<f64>>
  %z1 = anc.pop %c : !anc.stack<complex<f64>>
  %z2 = anc.pop %c : !anc.stack<complex<f64>>
  anc.push %c, %z2 : !anc.stack<complex<f64>>
  rev.return %z1 : complex<f64>
}
