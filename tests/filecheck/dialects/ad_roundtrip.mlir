// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The ad dialect's ops survive printing and re-parsing, in the custom form
// and the generic form.

rev.func @f(%y: f64, %x: f64) {
  %y1 = rev.add %y, %x : f64
  rev.return %y1, %x : f64, f64
}
ad.adjoint @f
ad.adjoint @f {note = "attributes survive"}

// CHECK-LABEL: rev.func @f(
// CHECK:       ad.adjoint @f
// CHECK-NEXT:  ad.adjoint @f {note = "attributes survive"}

// GENERIC: "ad.adjoint"() <{function = @f}> : () -> ()
// GENERIC: "ad.adjoint"() <{function = @f}> {note = "attributes survive"} : () -> ()

// A schedule's run-time cursor: eight index words threaded through ad.next.
rev.func @cursor(%n: index) attributes {rev.forgetful} {
  %frames = anc.stack_alloc : !anc.stack<index>
  %z = arith.constant 0 : index
  %w0 = anc.alloc %z : index
  %w1 = anc.alloc %z : index
  %w2 = anc.alloc %z : index
  %w3 = anc.alloc %z : index
  %w4 = anc.alloc %z : index
  %w5 = anc.alloc %z : index
  %w6 = anc.alloc %z : index
  %w7 = anc.alloc %z : index
  %c:8 = ad.next #ad.schedule<binomial, snapshots = 3> %frames, %n (%w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7) {note = "kept"}
  anc.free %c#0, %z {nocheck} : index
  anc.free %c#1, %z {nocheck} : index
  anc.free %c#2, %z {nocheck} : index
  anc.free %c#3, %z {nocheck} : index
  anc.free %c#4, %z {nocheck} : index
  anc.free %c#5, %z {nocheck} : index
  anc.free %c#6, %z {nocheck} : index
  anc.free %c#7, %z {nocheck} : index
  anc.stack_free %frames : !anc.stack<index>
  rev.return %n : index
}

// CHECK-LABEL: rev.func @cursor(
// CHECK:       %c, %c_1, %c_2, %c_3, %c_4, %c_5, %c_6, %c_7 = ad.next #ad.schedule<binomial, snapshots = 3> %frames, %n (%w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7) {note = "kept"}
// GENERIC: "ad.next"(%frames, %n, %w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7) <{schedule = #ad.schedule<binomial, snapshots = 3>}> {note = "kept"} : (!anc.stack<index>, index, index, index, index, index, index, index, index, index) -> (index, index, index, index, index, index, index, index)
