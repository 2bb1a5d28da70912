// RUN: not rev-run %s -e wide --args 1 2 2>&1 | filecheck %s --check-prefix=NATIVE
// RUN: not rev-translate %s --emit=llvm 2>&1 | filecheck %s --check-prefix=TRANSLATE
// RUN: not rev-translate %s --emit=header 2>&1 | filecheck %s --check-prefix=TRANSLATE
// RUN: not rev-translate %s --emit=ptx 2>&1 | filecheck %s --check-prefix=TRANSLATE
// RUN: rev-run %s -e wide --backend=interpreter --args 170141183460469231731687303715884105727 1 | filecheck %s --check-prefix=INTERPRETER

// Native code takes signless i1, i8, i16, i32 and i64: other integer types
// are refused at the first op with a value of one, before xDSL or LLVM see
// them (a C header, PTX too); the interpreter runs them, wrapping to their
// width.

// NATIVE-NOT: Traceback
// NATIVE:  {{^.*}}native_integer_types.mlir: error: cannot run natively: 'rev.func' at {{.*}}native_integer_types.mlir:[[# @LINE + 10]]:1: native code does not support type i128; its integers are signless i1, i8, i16, i32 or i64 (use --backend=interpreter)
// NATIVE-NOT: {{.}}

// TRANSLATE-NOT: Traceback
// TRANSLATE:     {{^.*}}native_integer_types.mlir: error: 'rev.func' at {{.*}}native_integer_types.mlir:[[# @LINE + 6]]:1: native code does not support type i128; its integers are signless i1, i8, i16, i32 or i64
// TRANSLATE-NOT: {{.}}

// INTERPRETER:      -170141183460469231731687303715884105728 : i128
// INTERPRETER-NEXT: 1 : i128

rev.func @wide(%y: i128, %x: i128) {
  %y1 = rev.add %y, %x : i128
  rev.return %y1, %x : i128, i128
}

rev.func @unsigned(%y: ui8, %x: ui8) {
  %y1 = rev.add %y, %x : ui8
  rev.return %y1, %x : ui8, ui8
}
