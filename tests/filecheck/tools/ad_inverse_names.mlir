// RUN: rev-opt %s -p 'ad-tangent{functions=h}' | not rev-run - -e h --args '[1.0, 2.0]' 5 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-tangent{functions=h}' | not rev-run - -e h --args '[1.0, 2.0]' 5 --backend interpreter 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{functions=h}' | not rev-run - -e h --args '[1.0, 2.0]' 5 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{functions=h}' | not rev-run - -e h --args '[1.0, 2.0]' 5 --backend interpreter 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-checkpoint{functions=f.inv}' | not rev-run - -e f.inv --args '[1.0, 2.0]' 5 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-checkpoint{functions=f.inv}' | not rev-run - -e f.inv --args '[1.0, 2.0]' 5 --backend interpreter 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-inverse-tangent{functions=f}' | not rev-run - -e f.inv --args '[1.0, 2.0]' 5 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-inverse-tangent{functions=f}' | not rev-run - -e f.inv --args '[1.0, 2.0]' 5 --backend interpreter 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-inverse-adjoint{functions=f}' | not rev-run - -e h --args '[1.0, 2.0]' 5 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-inverse-adjoint{functions=f}' | not rev-run - -e h --args '[1.0, 2.0]' 5 --backend interpreter 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-checkpoint{functions=f.inv}' | not rev-run - -e f.inv.ckpt --args '[1.0, 2.0]' 5 '[0.0, 0.0]' 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-checkpoint{functions=f.inv}' | not rev-run - -e f.inv.ckpt --args '[1.0, 2.0]' 5 '[0.0, 0.0]' --backend interpreter 2>&1 | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{functions=h}' | filecheck %s --check-prefix=MARKED
// RUN: not rev-run %s -e h --args '[1.0, 2.0]' 5 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: not rev-run %s -e h --args '[1.0, 2.0]' 5 --backend interpreter 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: rev-opt %s -p 'ad-inverse-tangent{functions=f},rev-invert{in_place=true functions=f.inv}' | filecheck %s --check-prefix=IN-PLACE
// RUN: rev-opt %s -p 'ad-inverse-tangent{functions=f},rev-invert{in_place=true functions=f.inv}' | not rev-run - -e f.inv --args '[1.0, 2.0]' 5 2>&1 | filecheck %s --check-prefix=INVERTED
// RUN: rev-opt %s -p 'ad-inverse-tangent{functions=f},rev-invert{in_place=true functions=f.inv}' | not rev-run - -e f.inv --args '[1.0, 2.0]' 5 --backend interpreter 2>&1 | filecheck %s --check-prefix=INVERTED

// The inverse an AD pass adds (@f.inv, for the uncall of @f in @h, or
// for a request of @f.inv or of an inverse mode) is marked derived, as
// the inverses a compile adds are, so that an error in it names it ~f on
// both engines, as before the pass, when @h's uncall ran @f backwards.
// The functions derived from it (@f.inv.adj) are no inverses and keep
// their names, but for an arrangement of it (@f.inv.ckpt), which runs its
// code and is named as it is. Before, the error named @f.inv.
// CHECK:      {{^}}stdin:{{[0-9]+}}:5: error: 'rev.take' in @~f: index 5 is out of bounds for axis 0 with size 2{{$}}
// CHECK-NOT:  {{.}}

// The module as written, before any pass: the uncall of @f runs it
// backwards, named ~f.
// BEFORE:     {{^}}{{.*}}ad_inverse_names.mlir:{{[0-9]+}}:3: error: 'rev.take' in @~f: index 5 is out of bounds for axis 0 with size 2{{$}}
// BEFORE-NOT: {{.}}

// rev-invert in place turns @f.inv back into @f's code, which is no
// derived inverse any more: the mark goes, and errors name it @f.inv.
// IN-PLACE:     rev.func @f.inv(%m: memref<2xf64>, %i: index) {
// IN-PLACE-NOT: rev.derived_inverse
// INVERTED:     {{^}}stdin:{{[0-9]+}}:5: error: 'rev.take' in @f.inv: index 4 is out of bounds for axis 0 with size 2{{$}}
// INVERTED-NOT: {{.}}

// MARKED:     rev.func @f.inv(%m: memref<2xf64>, %i: index) attributes {rev.derived_inverse} {
// MARKED:     rev.func @f.inv.adj(%m: memref<2xf64>, %i: index, %g_m: memref<2xf64>) {
// MARKED-NOT: rev.derived_inverse

rev.func @f(%m: memref<2xf64>, %i: index) {
  %i1 = rev.dec %i : index
  %e = rev.take %m[%i1] : memref<2xf64>
  rev.put %e, %m[%i1] : memref<2xf64>
  rev.return %i1 : index
}

rev.func @h(%m: memref<2xf64>, %i: index) {
  %i1 = rev.uncall @f(%m, %i) : (memref<2xf64>, index) -> index
  rev.return %i1 : index
}
