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
