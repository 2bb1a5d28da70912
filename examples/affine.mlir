// In-place affine transformation y += W*x + b on arrays
// (seed 000, appendix B.1, Listing 13).
//
//   @i function i_affine!(y!::AbstractVector{T}, W::AbstractMatrix{T},
//                         b::AbstractVector{T}, x::AbstractVector{T}) where T
//       @safe @assert size(W) == (length(y!), length(x)) && length(b) == length(y!)
//       @invcheckoff for j=1:size(W, 2)
//           for i=1:size(W, 1)
//               @inbounds y![i] += W[i,j]*x[j]
//           end
//       end
//       @invcheckoff for i=1:size(W, 1)
//           @inbounds y![i] += b[i]
//       end
//   end
//
// Arrays are memrefs updated in place.  `y![i] += e` borrows the element with
// rev.take, updates the borrowed value and gives it back with rev.put; W, x
// and b are only read (memref.load).  Julia's 1-based `for j=1:size(W, 2)`
// is the half-open rev.for over [0, size(W, 1)).  No loop carries scalar state:
// the only thing written is y, in place.  The @safe size assertion has no
// counterpart: the interpreter checks every index against the array's bounds.
// The reversibility checks that @invcheckoff turns off are kept on here
// (`nocheck` on the rev.take ops, or rev-strip-checks, would turn them off).
rev.func @i_affine(%y: memref<?xf64>, %W: memref<?x?xf64>, %b: memref<?xf64>, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %W, %c0 : memref<?x?xf64>
  %cols = memref.dim %W, %c1 : memref<?x?xf64>
  // y[i] += W[i,j] * x[j]
  rev.for %c0 to %cols step %c1 : index () {
  ^bb0(%j: index):
    rev.for %c0 to %rows step %c1 : index () {
    ^bb0(%i: index):
      %w = memref.load %W[%i, %j] : memref<?x?xf64>
      %xj = memref.load %x[%j] : memref<?xf64>
      %wx = arith.mulf %w, %xj : f64
      %yi = rev.take %y[%i] : memref<?xf64>
      %yi1 = rev.add %yi, %wx : f64
      rev.put %yi1, %y[%i] : memref<?xf64>
      rev.yield
    }
    rev.yield
  }
  // y[i] += b[i]
  rev.for %c0 to %rows step %c1 : index () {
  ^bb0(%i: index):
    %bi = memref.load %b[%i] : memref<?xf64>
    %yi = rev.take %y[%i] : memref<?xf64>
    %yi1 = rev.add %yi, %bi : f64
    rev.put %yi1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return
}
