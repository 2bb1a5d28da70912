// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-outline,convert-gpu-to-nvvm | filecheck %s

// The device's revmlir.report, which the checks call: the first failing
// thread wins the shared slot's check id by compare-and-swap (LLVM's
// cmpxchg, no inline assembly) and stores its values and element; every
// failing thread then exits.
// CHECK-LABEL: func.func private @revmlir.report(%thread_err: memref<6xi64>, %check: i64, %word: i64, %word_1: i64, %word_2: i64, %word_3: i64) {
// CHECK:         %[[CTX:.*]] = memref.load %thread_err
// CHECK-NEXT:    %[[P:.*]] = llvm.inttoptr %[[CTX]] : i64 to !llvm.ptr
// CHECK-NEXT:    %[[SHARED:.*]] = llvm.load %[[P]] : !llvm.ptr -> i64
// CHECK-NEXT:    %[[EP:.*]] = llvm.getelementptr %[[P]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:    %[[E:.*]] = llvm.load %[[EP]] : !llvm.ptr -> i64
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.inttoptr %[[SHARED]] : i64 to !llvm.ptr
// CHECK-NEXT:    %[[SWAP:.*]] = llvm.cmpxchg %[[SLOT]], %[[ZERO]], %check monotonic monotonic : !llvm.ptr, i64
// CHECK-NEXT:    %[[WON:.*]] = llvm.extractvalue %[[SWAP]][1] : !llvm.struct<(i64, i1)>
// CHECK-NEXT:    scf.if %[[WON]] {
// CHECK:           llvm.store %word,
// CHECK:           llvm.store %word_1,
// CHECK:           llvm.store %word_2,
// CHECK:           llvm.store %word_3,
// CHECK:           llvm.store %[[E]]
// CHECK:         }
// CHECK-NEXT:    nvvm.exit
// CHECK-NEXT:    func.return
// CHECK-NOT:   llvm.inline_asm
// Every check of device code reports through it, the arena's too: the
// device has no revmlir.fail.
// CHECK-NOT:   revmlir.fail
// The thread's place in the grid, from PTX's special registers:
// CHECK:       "gpu.func"()
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT:    %{{.*}} = arith.index_cast %[[TID]] : i32 to index
// CHECK:         nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK:         nvvm.read.ptx.sreg.ntid.x : i32
// CHECK:         nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NOT:     gpu.thread_id

func.func @add(%y: memref<?xf64>, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %yi = memref.load %y[%i] : memref<?xf64>
    %s = arith.addf %yi, %xi : f64
    memref.store %s, %y[%i] : memref<?xf64>
    scf.reduce
  }
  func.return
}
