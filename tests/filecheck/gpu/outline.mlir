// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-outline | filecheck %s

// A function whose body is one parallel loop (plus checks) is a kernel: its
// host function launches it with the grid and block sizes it is given.
// CHECK:       builtin.module attributes {{{.*}}gpu.container_module}
// CHECK-LABEL: func.func @scale(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64, %err: memref<8xi64>, %blocks: index, %threads: index) -> f64 {
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    "gpu.launch_func"(%blocks, %[[ONE]], %[[ONE]], %threads, %[[ONE]], %[[ONE]], %y, %x, %a, %err) <{kernel = @module_kernels::@scale, {{.*}}}>
// CHECK-NEXT:    func.return %a : f64
// A function without a parallel loop stays on the host.
// CHECK-LABEL: func.func @host_only(
// CHECK:       "gpu.module"() <{sym_name = "module_kernels"}> ({
// The kernel's callees are copied to the device; revmlir.report is only
// declared (convert-gpu-to-nvvm defines the device's), and revmlir.fail,
// which only the report's std body calls, is not there.
// CHECK-DAG:     func.func @twice(%v: f64, %{{.*}}: memref<6xi64>) -> f64
// CHECK-DAG:     func.func private @revmlir.report(memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// CHECK-NOT:     revmlir.fail
// CHECK:         "gpu.func"() <{function_type = (memref<?xf64>, memref<?xf64>, f64, memref<8xi64>) -> (), kernel}> ({
// CHECK-NEXT:    ^bb0(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64, %err: memref<8xi64>):
// Each thread's own error slot, whose last word points to the context
// [shared slot's address, element]:
// CHECK-NEXT:      %thread_err = memref.alloca() : memref<6xi64>
// CHECK-NEXT:      %err_context = memref.alloca() : memref<2xi64>
// CHECK-NEXT:      %[[SHARED:.*]] = "memref.extract_aligned_pointer_as_index"(%err) : (memref<8xi64>) -> index
// CHECK:           memref.store %{{.*}}, %err_context[%{{.*}}] : memref<2xi64>
// CHECK:           %[[NONE:.*]] = arith.constant -1 : i64
// CHECK:           memref.store %[[NONE]], %err_context
// CHECK:           "memref.extract_aligned_pointer_as_index"(%err_context)
// CHECK:           memref.store %{{.*}}, %thread_err[%{{.*}}] : memref<6xi64>
// The grid-stride loop: i = lb + (block·threads per block + thread)·step,
// stepping by the grid's thread count times the step; a thread whose first
// index would pass n starts at n, and a stride beyond 2^64 - 1 is 2^64 - 1
// (the products are compared with (2^64 - 1) / step first).
// CHECK:           %[[TID:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[BID:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[BDIM:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[GDIM:.*]] = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK-NEXT:      %[[T:.*]] = arith.addi %[[B]], %[[TID]] : index
// CHECK-NEXT:      %[[ALL:.*]] = arith.muli %[[GDIM]], %[[BDIM]] : index
// CHECK-NEXT:      %[[MOST:.*]] = arith.constant -1 : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[MOST]], %c1 : index
// CHECK-NEXT:      %[[O:.*]] = arith.muli %[[T]], %c1 : index
// CHECK-NEXT:      %[[SPAN:.*]] = arith.subi %n, %c0 : index
// CHECK-NEXT:      %[[RUNS:.*]] = arith.cmpi slt, %c0, %n : index
// CHECK-NEXT:      %[[TFITS:.*]] = arith.cmpi ule, %[[T]], %[[Q]] : index
// CHECK-NEXT:      %[[WITHIN:.*]] = arith.cmpi ult, %[[O]], %[[SPAN]] : index
// CHECK-NEXT:      %[[BOTH:.*]] = arith.andi %[[TFITS]], %[[WITHIN]] : i1
// CHECK-NEXT:      %[[HAS:.*]] = arith.andi %[[RUNS]], %[[BOTH]] : i1
// CHECK-NEXT:      %[[SHIFTED:.*]] = arith.addi %c0, %[[O]] : index
// CHECK-NEXT:      %first = arith.select %[[HAS]], %[[SHIFTED]], %n : index
// CHECK-NEXT:      %[[SFITS:.*]] = arith.cmpi ule, %[[ALL]], %[[Q]] : index
// CHECK-NEXT:      %[[PRODUCT:.*]] = arith.muli %[[ALL]], %c1 : index
// CHECK-NEXT:      %stride = arith.select %[[SFITS]], %[[PRODUCT]], %[[MOST]] : index
// The loop is versioned on its index checks (docs/design.md, decision 58):
// where x[i] is in range at the thread's first element and at n − 1, the
// thread runs the loop without them, otherwise the loop as it was.
// CHECK:           %[[LAST:.*]] = arith.subi %n, %{{.*}} : index
// CHECK:           %{{.*}} = arith.cmpi ult, %first, %[[SIZE:.*]] : index
// CHECK-NEXT:      %{{.*}} = arith.cmpi ult, %[[LAST]], %[[SIZE]] : index
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        scf.for %i = %first to %n step %stride {
// Its loads come first (revmlir.gpu.load_order), then the element a failing
// check reports:
// CHECK-NEXT:          %xi = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:          %[[E:.*]] = arith.index_cast %i : index to i64
// CHECK-NEXT:          %[[ONEW:.*]] = arith.constant 1 : index
// CHECK-NEXT:          memref.store %[[E]], %err_context[%[[ONEW]]] : memref<2xi64>
// CHECK-NEXT:          func.call @twice(%xi, %thread_err)
// CHECK:               memref.atomic_rmw addf %{{.*}}, %y[%i] : (f64, memref<?xf64>) -> f64
// CHECK:           } else {
// CHECK-NEXT:        scf.for %i_1 = %first to %n step %stride {
// Checks report through the thread's own slot:
// CHECK:               func.call @revmlir.report(%thread_err, {{.*}}) : (memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// CHECK:               func.call @twice(%{{.*}}, %thread_err)
// CHECK:               memref.atomic_rmw addf %{{.*}}, %y[%i_1] : (f64, memref<?xf64>) -> f64
// CHECK:           "gpu.return"() : () -> ()
// CHECK-NEXT:    }) {sym_name = "scale"} : () -> ()

func.func @twice(%v: f64) -> f64 {
  %r = arith.addf %v, %v : f64
  func.return %r : f64
}

func.func @scale(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %t = func.call @twice(%xi) : (f64) -> f64
    %p = arith.mulf %t, %a : f64
    %old = memref.atomic_rmw addf %p, %y[%i] : (f64, memref<?xf64>) -> f64
    scf.reduce
  }
  func.return %a : f64
}

func.func @host_only(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %y[%c0] : memref<?xf64>
  func.return
}
