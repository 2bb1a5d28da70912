"""Appendix D.1 of the NiLang paper (seed 000): reversible sparse matrix
products, in reversible Python on CSR arrays (``data, indices, indptr`` as
scipy stores them).

(The paper's captions are swapped: "Listing 22: sparse matrix multiplication"
holds ``i_dot`` and "Listing 23: sparse matrix dot-product" holds ``i_mul!``.)

* ``csr_mul``  — ``i_mul!`` for CSR: ``y += alpha * A @ x``.  Each ``y[row]``
  accumulates the row's products; nothing is overwritten, so no ancilla is
  needed (the CSC listing hoists ``αxj ← B[col]*α`` into an ancilla because
  one column scatters a single ``x[col]``).
* ``csc_mul``  — ``i_mul!`` as printed, on CSC arrays (``nzval, rowval,
  colptr``): ``C[:, k] += alpha * A @ B[:, k]`` with the ancilla ``αxj``
  computed and uncomputed per column.  Fed with a CSR matrix's arrays it
  computes ``Aᵀ @ B``.
* ``csr_dot``  — ``i_dot``: the Frobenius product ``r += Σ conj(A) ∘ B`` of two
  CSR matrices of the same shape.  Each row merges the two sorted column
  lists; the direction taken at merge step ``i`` (move in B or in A) is
  recorded by ``branch_keeper[i] ^= …`` (NiLang's ``∨=`` on a false bit), and
  a second, inverted loop (``with rv.inverse():``, NiLang's ``~for``) walks
  the merge back, restoring the pointers and clearing ``branch_keeper``.

Differences from the listings, all deliberate:

* ``branch_keeper ← zeros(Bool, 2m)`` is an array ancilla; reversible Python
  has scalar ancillas only, so the caller passes a workspace of ``False``
  (length ≥ the longest merge, e.g. 2 × number of columns) and gets it back
  all ``False`` (the tests check this).
* The listing runs ``na + nb − 1`` merge steps per column even when one of the
  columns is empty, and then reads ``rowval`` outside the column (and may add a
  wrong product).  Here a row is merged only when both rows are non-empty:
  ``if ia2 > ia1 and ib2 > ib1`` (postcondition omitted: the bounds are not
  changed by the body).
* The listing never frees ``ia1, ib1, ia2, ib2, ia, ib``; here they are freed
  with the values they must hold.
* ``@safe size(A) == size(B) || throw(…)`` and the ``β != 1`` error are
  left out: the shapes are the caller's (an ``assert`` in an ``rv.safe``
  block would check them, as ``i_affine`` in ``paper_appendix_b.py`` does).

The index arrays may be scipy's int32 or int64 (``csr_arrays`` returns a
matrix's arrays with sorted indices and optionally another index dtype).
"""

import numpy as np

import revmlir as rv


@rv.reversible
def csr_mul(y, data, indices, indptr, x, alpha):
    with rv.nocheck():
        for row in range(len(indptr) - 1):
            for j in range(indptr[row], indptr[row + 1]):
                y[row] += data[j] * x[indices[j]] * alpha


@rv.reversible
def csc_mul(C, nzval, rowval, colptr, B, alpha):
    with rv.nocheck():
        for k in range(C.shape[1]):
            for col in range(len(colptr) - 1):
                axj = rv.ancilla(0.0)
                axj += B[col, k] * alpha
                for j in range(colptr[col], colptr[col + 1]):
                    C[rowval[j], k] += nzval[j] * axj
                axj -= B[col, k] * alpha
                rv.free(axj)


@rv.reversible
def csr_dot(r, a_data, a_indices, a_indptr, b_data, b_indices, b_indptr, branch_keeper):
    with rv.nocheck():
        for row in range(len(a_indptr) - 1):
            ia1 = rv.ancilla(a_indptr[row])
            ib1 = rv.ancilla(b_indptr[row])
            ia2 = rv.ancilla(a_indptr[row + 1])
            ib2 = rv.ancilla(b_indptr[row + 1])
            if ia2 > ia1 and ib2 > ib1:
                ia = rv.ancilla(ia1)
                ib = rv.ancilla(ib1)
                for i in range(ia2 - ia1 + ib2 - ib1 - 1):
                    ra = rv.ancilla(a_indices[ia])
                    rb = rv.ancilla(b_indices[ib])
                    if ra == rb:
                        r += np.conj(a_data[ia]) * b_data[ib]
                    # b moves -> True, a moves -> False
                    branch_keeper[i] ^= ia == ia2 - 1 or (ib != ib2 - 1 and ra > rb)
                    rv.free(ra, a_indices[ia])
                    rv.free(rb, b_indices[ib])
                    if branch_keeper[i]:
                        rv.inc(ib)
                    else:
                        rv.inc(ia)
                with rv.inverse():
                    for i in range(ia2 - ia1 + ib2 - ib1 - 1):
                        branch_keeper[i] ^= ia == ia2 - 1 or (ib != ib2 - 1 and a_indices[ia] > b_indices[ib])
                        if branch_keeper[i]:
                            rv.inc(ib)
                        else:
                            rv.inc(ia)
                rv.free(ia, ia1)
                rv.free(ib, ib1)
            rv.free(ib2, b_indptr[row + 1])
            rv.free(ia2, a_indptr[row + 1])
            rv.free(ib1, b_indptr[row])
            rv.free(ia1, a_indptr[row])


def csr_arrays(matrix, index_dtype=None):
    """``(data, indices, indptr)`` of a scipy sparse matrix, duplicates summed
    and indices sorted (the merge in ``csr_dot`` needs sorted rows)."""
    matrix = matrix.copy()
    matrix.sum_duplicates()
    matrix.sort_indices()
    indices, indptr = matrix.indices, matrix.indptr
    if index_dtype is not None:
        indices, indptr = indices.astype(index_dtype), indptr.astype(index_dtype)
    return matrix.data, indices, indptr


if __name__ == "__main__":
    import scipy.sparse as sp

    a = sp.random(8, 6, density=0.3, format="csr", random_state=1)
    b = sp.random(8, 6, density=0.3, format="csr", random_state=2)
    x = np.arange(6.0)
    y = np.zeros(8)
    csr_mul(y, *csr_arrays(a), x, 1.0)
    print("A @ x:", y, "scipy:", a @ x)
    keeper = np.zeros(12, dtype=bool)
    r = csr_dot(0.0, *csr_arrays(a), *csr_arrays(b), keeper)[0]
    print("sum(A .* B):", r, "scipy:", a.multiply(b).sum())
