// RUN: rev-opt %s -p ad-tangent -o %t && filecheck %s --input-file %t

// Tangent rules of array primitives. The rule of daxpy (y += a*x) takes the
// arguments as the primitive receives them and the tangent of each float
// argument (a tangent array for an array), and adds the tangent of the
// update to the tangent array of y in place: it runs before the call. The
// rule of the pure ddot is an expression like the primitive.

rev.extern @ddot : (memref<?xf64>, memref<?xf64>) -> f64 {adjoint = @ddot_adj, tangent = @ddot_tan}
rev.extern @daxpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>, inverse = @daxpy_inv, tangent = @daxpy_tan}

func.func @daxpy_inv(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  %m = arith.negf %a : f64
  rev.invoke @daxpy(%m, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}
func.func @ddot_adj(%x: memref<?xf64>, %y: memref<?xf64>, %g: f64, %gx: memref<?xf64>, %gy: memref<?xf64>) {
  rev.invoke @daxpy(%g, %y, %gx) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.invoke @daxpy(%g, %x, %gy) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}
// (a, x, y, tangent of a, tangent arrays of x and y) -> ()
func.func @daxpy_tan(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>, %da: f64, %dx: memref<?xf64>, %dy: memref<?xf64>) {
  rev.invoke @daxpy(%da, %x, %dy) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.invoke @daxpy(%a, %dx, %dy) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}
// (x, y, tangent arrays of x and y) -> tangent of x.y
func.func @ddot_tan(%x: memref<?xf64>, %y: memref<?xf64>, %dx: memref<?xf64>, %dy: memref<?xf64>) -> f64 {
  %a = rev.apply @ddot(%dx, %y) : (memref<?xf64>, memref<?xf64>) -> f64
  %b = rev.apply @ddot(%x, %dy) : (memref<?xf64>, memref<?xf64>) -> f64
  %s = arith.addf %a, %b : f64
  func.return %s : f64
}

// CHECK-LABEL: rev.func @f.tan(%s: f64, %a: f64, %x: memref<?xf64>, %y: memref<?xf64>, %d_s: f64, %d_a: f64, %d_x: memref<?xf64>, %d_y: memref<?xf64>)
// CHECK-NEXT:    rev.invoke @daxpy_tan(%a, %x, %y, %d_a, %d_x, %d_y) {rev.forgetful} : (f64, memref<?xf64>, memref<?xf64>, f64, memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    rev.invoke @daxpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    %[[DD:.*]] = rev.apply @ddot_tan(%x, %y, %d_x, %d_y) : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> f64
// CHECK:         rev.add %d_s, %[[DD]] : f64
rev.func @f(%s: f64, %a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  rev.invoke @daxpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  %d = rev.apply @ddot(%x, %y) : (memref<?xf64>, memref<?xf64>) -> f64
  %s1 = rev.add %s, %d : f64
  rev.return %s1, %a : f64, f64
}
ad.tangent @f
