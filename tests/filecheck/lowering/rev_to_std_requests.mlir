// RUN: rev-opt %s -p rev-lower-to-std --verify-diagnostics --split-input-file

// An ad request left in the module is refused at the request, naming the
// pass that expands it: lowering would replace the rev.func it names by a
// func.func, which no ad-* pass can differentiate.
rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}
// expected-error-re @+1 {{'ad.adjoint' at {{.*}}: what it requests of @f is not derived yet: run ad-adjoint before rev-lower-to-std}}
ad.adjoint @f

// -----

rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}
// expected-error-re @+1 {{'ad.tangent' at {{.*}}: what it requests of @f is not derived yet: run ad-tangent before rev-lower-to-std}}
ad.tangent @f

// -----

rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}
// expected-error-re @+1 {{'ad.hessian' at {{.*}}: what it requests of @f is not derived yet: run ad-hessian before rev-lower-to-std}}
ad.hessian @f

// -----

rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}
// expected-error-re @+1 {{'ad.jacobian' at {{.*}}: what it requests of @f is not derived yet: run ad-jacobian before rev-lower-to-std}}
ad.jacobian @f

// -----

rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}
// expected-error-re @+1 {{'ad.checkpoint' at {{.*}}: what it requests of @f is not derived yet: run ad-checkpoint before rev-lower-to-std}}
ad.checkpoint @f

// -----

// A request of an inverse the module lacks is refused as well.
rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}
// expected-error-re @+1 {{'ad.inverse_tangent' at {{.*}}: what it requests of @f.inv is not derived yet: run ad-inverse-tangent before rev-lower-to-std}}
ad.inverse_tangent @f.inv

// -----

rev.func @f(%x: f64) {
  %x1 = rev.neg %x : f64
  rev.return %x1 : f64
}
// expected-error-re @+1 {{'ad.inverse_adjoint' at {{.*}}: what it requests of @f is not derived yet: run ad-inverse-adjoint before rev-lower-to-std}}
ad.inverse_adjoint @f
