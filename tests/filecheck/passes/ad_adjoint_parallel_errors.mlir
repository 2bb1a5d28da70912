// RUN: rev-opt %s -p 'ad-adjoint{functions=nested}' --verify-diagnostics

// An outer scalar read inside an inner loop: its gradient would be summed in
// the inner loop's state, which no shared sum can take.
rev.func @nested(%y: memref<?x3xf64>, %a: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // expected-error-re @+1 {{'rev.for' at {{.*}} cannot be differentiated: the gradient of an outer scalar it reads (%a (block argument #1)) would be summed inside a region of the parallel loop's body; read a copy made in the body instead (b = rv.ancilla(a) … rv.free(b, a))}}
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    rev.for %c0 to %c3 step %c1 : index () {
    ^bb0(%k: index):
      %v = rev.take %y[%i, %k] : memref<?x3xf64>
      %v1 = rev.add %v, %a : f64
      rev.put %v1, %y[%i, %k] : memref<?x3xf64>
      rev.yield
    }
    rev.yield
  }
  rev.return %a, %n : f64, index
}
