// RUN: rev-translate %s --emit=ptx | filecheck %s
// RUN: rev-translate %s --emit=ptx --gpu-arch=sm_60 | filecheck %s --check-prefix=OLD

// A shared accumulation whose old value is unused is aggregated over the
// warp: where the whole warp is active and every lane adds to lane 0's
// address, a butterfly of five shuffles sums the 32 values and lane 0
// alone adds the sum; otherwise every lane adds its own. 64-bit values
// move through the shuffles in two halves, 32-bit ones whole. An addition
// whose old value is used stays one atom.add per lane.
// OLD:         .version 6.3
// OLD:         .target sm_60
// CHECK-LABEL: .entry k(
// CHECK:         activemask.b32 mask;
// CHECK-NEXT:    setp.eq.b32 full, mask, 0xffffffff;
// CHECK-NEXT:    mov.b64 {lo, hi}, [[ADDRESS:%rd[0-9]+]];
// CHECK-NEXT:    @full shfl.sync.idx.b32 lo, lo, 0, 31, 0xffffffff;
// CHECK-NEXT:    @full shfl.sync.idx.b32 hi, hi, 0, 31, 0xffffffff;
// CHECK-NEXT:    mov.b64 first, {lo, hi};
// CHECK-NEXT:    setp.eq.and.b64 equal, first, [[ADDRESS]], full;
// CHECK-NEXT:    mov.pred same, 0;
// CHECK-NEXT:    @full vote.sync.all.pred same, equal, 0xffffffff;
// CHECK-NEXT:    mov.f64 sum, [[VALUE:%rd[0-9]+]];
// CHECK-COUNT-5: @same shfl.sync.bfly.b32 hi, hi, {{16|8|4|2|1}}, 31, 0xffffffff;
// CHECK:         @same add.f64 sum, sum, other;
// CHECK-NEXT:    mov.u32 lane, %laneid;
// CHECK-NEXT:    setp.eq.and.u32 lead, lane, 0, same;
// CHECK-NEXT:    @lead red.add.f64 [[[ADDRESS]]], sum;
// CHECK-NEXT:    @!same red.add.f64 [[[ADDRESS]]], [[VALUE]];
// CHECK:         .reg .f32 sum, other;
// CHECK:         mov.f32 sum, %r{{[0-9]+}};
// CHECK-COUNT-5: @same shfl.sync.bfly.b32 other, sum, {{16|8|4|2|1}}, 31, 0xffffffff;
// CHECK:         @lead red.add.f32
// CHECK:         .reg .u64 sum, other;
// CHECK:         @same add.u64 sum, sum, other;
// CHECK:         @lead red.add.u64
// CHECK:         .reg .u32 sum, other;
// CHECK:         @same add.u32 sum, sum, other;
// CHECK:         @lead red.add.u32
// CHECK:         end inline asm
// CHECK-NOT:     shfl.sync
// CHECK:         atom.add.f64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// The loop's checked copy (a grid whose ends are out of range) is the same.
// CHECK:         activemask.b32 mask;
// CHECK:         @lead red.add.u32
// CHECK:         end inline asm
// CHECK-NOT:     shfl.sync
// CHECK:         atom.add.f64 %rd{{[0-9]+}}, [%rd{{[0-9]+}}], %rd{{[0-9]+}};
// CHECK-NOT:     shfl.sync

func.func @k(%y: memref<?xf64>, %x: memref<?xf64>, %yf: memref<?xf32>, %c64: memref<?xi64>,
             %c32: memref<?xi32>, %old: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one64 = arith.constant 1 : i64
  %one32 = arith.constant 1 : i32
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %a = memref.atomic_rmw addf %xi, %y[%c0] : (f64, memref<?xf64>) -> f64
    %xf = arith.truncf %xi : f64 to f32
    %b = memref.atomic_rmw addf %xf, %yf[%c0] : (f32, memref<?xf32>) -> f32
    %c = memref.atomic_rmw addi %one64, %c64[%c0] : (i64, memref<?xi64>) -> i64
    %d = memref.atomic_rmw addi %one32, %c32[%c0] : (i32, memref<?xi32>) -> i32
    %e = memref.atomic_rmw addf %xi, %y[%c1] : (f64, memref<?xf64>) -> f64
    memref.store %e, %old[%i] : memref<?xf64>
    scf.reduce
  }
  func.return
}
