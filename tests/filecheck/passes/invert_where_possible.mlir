// RUN: rev-opt %s -p rev-invert | filecheck %s --check-prefix=DEFAULT
// RUN: rev-opt %s -p 'rev-invert{where_possible=true}' | filecheck %s --check-prefix=POSSIBLE
// RUN: rev-opt %s -p 'rev-invert{in_place=true where_possible=true}' | filecheck %s --check-prefix=IN-PLACE
// RUN: not rev-opt %s -p 'rev-invert{functions=forget where_possible=true}' 2>&1 | filecheck %s --check-prefix=NAMED

// @forget forgets the value it frees: the inverter cannot invert it.  By
// default rev-invert also leaves out @caller, which calls it; where
// possible, @caller's inverse is built, and uncalls it; in place, @forget
// stays as it is and @caller's body becomes that inverse.  A function named
// in `functions` is inverted or refused, where possible or not.

// DEFAULT-NOT: rev.func @forget.inv
// DEFAULT-NOT: rev.func @caller.inv
// POSSIBLE-NOT: rev.func @forget.inv
// POSSIBLE-LABEL: rev.func @caller.inv(%x: f64) {
// POSSIBLE-NEXT:    %{{.*}} = rev.uncall @forget(%x) : (f64) -> f64
// POSSIBLE-NOT: rev.func @forget.inv

// IN-PLACE-LABEL: rev.func @forget(%x: f64) {
// IN-PLACE:         anc.free %{{.*}}, %{{.*}} {rev.forgetful} : f64
// IN-PLACE-LABEL: rev.func @caller(%x: f64) {
// IN-PLACE-NEXT:    %{{.*}} = rev.uncall @forget(%x) : (f64) -> f64
// IN-PLACE-NOT: rev.func

// NAMED: error: 'anc.free' at {{.*}}invert_where_possible.mlir:{{[0-9]+}}:3 forgets the value it frees
// NAMED-NOT: rev.func

rev.func @forget(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %x : f64
  anc.free %t1, %zero {rev.forgetful} : f64
  rev.return %x : f64
}

rev.func @caller(%x: f64) {
  %y = rev.call @forget(%x) : (f64) -> f64
  rev.return %y : f64
}
