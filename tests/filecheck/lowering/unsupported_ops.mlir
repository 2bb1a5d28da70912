// RUN: rev-opt %s -p convert-std-to-llvm --verify-diagnostics --split-input-file

// An op with no translation is reported where it is, by name.
func.func @f(%x: i32) {
  %c = arith.constant 0 : i32
  // expected-error-re @+1 {{'cf.switch' at {{.*}} cannot be compiled to native code}}
  cf.switch %x : i32, [default: ^bb1]
^bb1:
  func.return
}

// -----

func.func @g() -> memref<?xf64> {
  // expected-error @+1 {{a poison memref<?xf64> cannot be compiled to native code}}
  %m = ub.poison : memref<?xf64>
  func.return %m : memref<?xf64>
}

// -----

// Native code addresses a memref as contiguous row-major data.
func.func @h(%m: memref<?xf64, strided<[2]>>) -> f64 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{memref<?xf64, strided<[2]>> is not row-major contiguous, which native code requires of every memref}}
  %v = memref.load %m[%c0] : memref<?xf64, strided<[2]>>
  func.return %v : f64
}

// -----

// A value of such a type that no parameter has is refused at the op that
// gives it, before any op that uses it.
func.func @given() -> f64 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{memref<?xf64, strided<[2]>> is not row-major contiguous, which native code requires of every memref}}
  %m = ub.poison : memref<?xf64, strided<[2]>>
  %v = memref.load %m[%c0] : memref<?xf64, strided<[2]>>
  func.return %v : f64
}

// -----

// A signature of a type native code does not take is refused at its
// function, before xDSL's llvm dialect or the argument marshalling see it.
// expected-error-re @+1 {{'func.func' at {{.*}}: native code does not support type ui8; its integers are signless i1, i8, i16, i32 or i64}}
func.func @unsigned(%x: ui8) -> ui8 {
  func.return %x : ui8
}

// -----

// expected-error-re @+1 {{'func.func' at {{.*}}: native code does not support type f16; its floats are f32 or f64}}
func.func private @half(f64) -> f16

// -----

// A failure leaves the module whole: the declaration a call uses is still
// there, so the error reported is the op's, not a call to a missing symbol.
llvm.func @ext(f64) -> f64
func.func @declared(%x: f64, %i: i32) -> f64 {
  %y = llvm.call @ext(%x) : (f64) -> f64
  // expected-error-re @+1 {{'cf.switch' at {{.*}} cannot be compiled to native code}}
  cf.switch %i : i32, [default: ^bb1]
^bb1:
  func.return %y : f64
}
