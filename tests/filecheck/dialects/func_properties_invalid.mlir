// RUN: rev-opt %s --verify-diagnostics --split-input-file

// A 'rev.func' whose properties are missing or of the wrong kind says so
// itself. Its 'rev.return' is verified first (xDSL verifies an op's regions
// before the op) and used to fail reading them, with a Python KeyError or
// AttributeError as its message.

// expected-error@+1 {{property 'sym_name' expected in operation 'rev.func'}}
"rev.func"() ({
^bb0(%y: f64):
  rev.return %y : f64
}) {function_type = (f64) -> (f64)} : () -> ()

// -----

// expected-error@+1 {{property 'function_type' expected in operation 'rev.func'}}
"rev.func"() ({
^bb0(%y: f64):
  rev.return %y : f64
}) {sym_name = "f"} : () -> ()

// -----

// expected-error@+1 {{'rev.func': 3 : i64 should be a string}}
"rev.func"() ({
^bb0(%y: f64):
  rev.return %y : f64
}) {sym_name = 3, function_type = (f64) -> (f64)} : () -> ()

// -----

// expected-error@+1 {{'rev.func': f64 should be of base attribute fun}}
"rev.func"() ({
^bb0(%y: f64):
  rev.return %y : f64
}) {sym_name = "f", function_type = f64} : () -> ()

// -----

// A name defined twice is reported at its second definition (xDSL says it
// at the module, which has no location).

rev.func @f(%y: f64) {
  rev.return %y : f64
}
// expected-error@+1 {{[symbols] @f is defined again; its first definition is 'rev.func' at}}
rev.func @f(%y: f64) {
  rev.return %y : f64
}
