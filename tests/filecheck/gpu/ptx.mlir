// RUN: rev-translate %s --emit=ptx | filecheck %s
// RUN: rev-translate %s --emit=ptx --gpu-arch=sm_80 | filecheck %s --check-prefix=ARCH

// Every function is a .func (its dots made PTX's _$_), a kernel an .entry
// named after its function with dots made _; an array is its pointer and
// its size, the error slot last. Math calls libdevice, linked in and
// inlined; a shared accumulation is an f64 red.add; a failing check
// calls the device's revmlir.report with its id and values (out of line: a
// report inlined at every check would bloat the loops), which takes the
// shared slot by atom.cas (LLVM's cmpxchg: relaxed, at system scope) and
// exits.
// ARCH: .target sm_80
// CHECK:       .version
// CHECK:       .target sm_90
// CHECK-NOT:   .extern
// CHECK-LABEL: .visible .func  (.param .b64 func_retval0) twice(
// CHECK-LABEL: .func revmlir_$_report(
// CHECK:         atom{{(\.relaxed)?}}.sys.cas.b64 {{.*}}%rd{{[0-9]+}}, [%rd{{[0-9]+}}], {{%rd[0-9]+|[0-9]+}}, {{%rd[0-9]+|[0-9]+}};
// CHECK:         exit;
// CHECK-LABEL: .visible .entry k_adj(
// CHECK-NEXT:    .param .u64 .ptr .align 1 k_adj_param_0,
// CHECK-NEXT:    .param .u64 k_adj_param_1,
// CHECK-NEXT:    .param .u64 .ptr .align 1 k_adj_param_2,
// CHECK-NEXT:    .param .u64 k_adj_param_3,
// CHECK-NEXT:    .param .f64 k_adj_param_4,
// CHECK-NEXT:    .param .u64 .ptr .align 1 k_adj_param_5,
// CHECK-NEXT:    .param .u64 k_adj_param_6
// CHECK-NEXT:  )
// CHECK-DAG:     mov.u32 %r{{[0-9]+}}, %tid.x;
// CHECK-DAG:     mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK-DAG:     mov.u32 %r{{[0-9]+}}, %ntid.x;
// CHECK-DAG:     mov.u32 %r{{[0-9]+}}, %nctaid.x;
// CHECK-DAG:     red.add.f64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-DAG:     call.uni revmlir_$_report, (param0, {{.*}});
// CHECK-NOT:   __nv_

func.func @twice(%v: f64) -> f64 {
  %r = arith.addf %v, %v : f64
  func.return %r : f64
}

func.func @k.adj(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %l = math.log %xi : f64
    %s = math.sin %xi : f64
    %t = math.atan2 %l, %s : f64
    %u = func.call @twice(%t) : (f64) -> f64
    %p = arith.mulf %u, %a : f64
    %j = arith.remui %i, %c1 : index
    %old = memref.atomic_rmw addf %p, %y[%j] : (f64, memref<?xf64>) -> f64
    scf.reduce
  }
  func.return %a : f64
}
