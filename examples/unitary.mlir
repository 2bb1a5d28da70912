// Unitary matrix multiplication as a product of Givens rotations
// (seed 000, appendix B.2, Listing 14: two-level decomposition of a unitary).
//
//   @i function i_ummm!(x!::AbstractArray, θ)
//       M ← size(x!, 1)
//       N ← size(x!, 2)
//       k ← 0
//       @safe @assert length(θ) == M*(M-1)/2
//       for l = 1:N
//           for j=1:M
//               for i=M-1:-1:j
//                   INC(k)
//                   ROT(x![i,1], x![i+1,1], θ[k])
//               end
//           end
//       end
//       k → length(θ)
//   end
//
// The rotations reuse no memory: ROT is its own kind of reversible
// instruction (its inverse is the rotation by -θ), so running backwards needs
// neither a stack nor checkpoints.
//
// Translation notes.
//   * The listing is followed as printed: every rotation acts on column 1 of
//     x! (0 here), and k runs over all N*M(M-1)/2 rotations, so `k → length(θ)`
//     requires θ to have N*M(M-1)/2 entries.  (The printed @assert, length(θ)
//     == M(M-1)/2, only agrees with that for N = 1; the assertion is left
//     out, and anc.free's check `k → length(θ)` is what enforces the size.)
//   * M and N are read with memref.dim rather than held in ancillas: they are
//     never updated, so they are pure expressions.
//   * k is an index ancilla carried through the loops as their state.  After
//     INC(k) the 1-based θ[k] is θ[k - 1] in 0-based indexing.
//   * `for i=M-1:-1:j` with 1-based i, j visits rows i, i+1 = M-1..j; with
//     0-based j in [0, M) that is i in [j, M-1) in descending order, which is
//     `rev.for reverse %j to %M-1`.
//   * ROT(a, b, θ) on two elements borrows both with rev.take (different rows,
//     so not the same element; the interpreter checks that at run time), rotates
//     the borrowed values with rev.rot and puts both back.
rev.func @i_ummm(%x: memref<?x?xf64>, %theta: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %x, %c0 : memref<?x?xf64>
  %N = memref.dim %x, %c1 : memref<?x?xf64>
  %Mm1 = arith.subi %M, %c1 : index
  // k ← 0
  %k0 = anc.alloc %c0 : index
  %k3 = rev.for %c0 to %N step %c1 : index (%k0) : index {
  ^bb0(%l: index, %kl: index):
    %k2 = rev.for %c0 to %M step %c1 : index (%kl) : index {
    ^bb0(%j: index, %kj: index):
      %k1 = rev.for reverse %j to %Mm1 step %c1 : index (%kj) : index {
      ^bb0(%i: index, %ki: index):
        // INC(k)
        %kn = rev.inc %ki : index
        // ROT(x![i,1], x![i+1,1], θ[k])
        %kidx = arith.subi %kn, %c1 : index
        %th = memref.load %theta[%kidx] : memref<?xf64>
        %i1 = arith.addi %i, %c1 : index
        %a = rev.take %x[%i, %c0] : memref<?x?xf64>
        %b = rev.take %x[%i1, %c0] : memref<?x?xf64>
        %a1, %b1 = rev.rot %a, %b, %th : f64
        rev.put %b1, %x[%i1, %c0] : memref<?x?xf64>
        rev.put %a1, %x[%i, %c0] : memref<?x?xf64>
        rev.yield %kn : index
      }
      rev.yield %k1 : index
    }
    rev.yield %k2 : index
  }
  // k → length(θ)
  %len = memref.dim %theta, %c0 : memref<?xf64>
  anc.free %k3, %len : index
  rev.return
}
