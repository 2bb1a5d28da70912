"""The example problems written once more, independently, in array form
(numpy or ``jax.numpy``: pass the module as ``xp``), from their published
definitions: ADBench's GMM objective and BA reprojection error
(microsoft/ADBench ``src/cpp/shared/gmm.h``, ``ba.h``) and the graph
embedding loss of the NiLang paper (appendix D.2).

They share no code with the reversible programs — Q is assembled as a
matrix from the packed triangle, the log-gamma constant comes from
``math.lgamma``, the Rodrigues branch is a ``where`` — so the tests check
the programs against them, and the benchmarks time JAX on them.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np


def lower_triangle_placement(d: int) -> np.ndarray:
    """``P[l, row, col] = 1`` where ADBench's ``Qtimesx`` reads packed entry
    ``l``: the strictly lower triangle, column by column."""
    rows, cols = np.tril_indices(d, -1)
    order = np.lexsort((rows, cols))  # by column, then row
    placement = np.zeros((len(rows), d, d))
    placement[np.arange(len(rows)), rows[order], cols[order]] = 1.0
    return placement


def logsumexp_reference(xp: ModuleType, a: Any, axis: int = -1) -> Any:
    top = xp.max(a, axis=axis, keepdims=True)
    return xp.log(xp.sum(xp.exp(a - top), axis=axis)) + xp.squeeze(top, axis)


def gmm_reference(xp: ModuleType, alphas: Any, means: Any, icf: Any, x: Any, gamma: Any, m: int) -> Any:
    n, d = x.shape
    k = alphas.shape[0]
    log_diagonal = icf[:, :d]
    Q = xp.exp(log_diagonal)[:, :, None] * xp.eye(d) + xp.einsum("kl,lij->kij", icf[:, d:], lower_triangle_placement(d))
    centred = x[:, None, :] - means[None, :, :]
    mahalanobis = xp.sum(xp.einsum("kij,nkj->nki", Q, centred) ** 2, axis=-1)
    main = alphas + xp.sum(log_diagonal, axis=1) - 0.5 * mahalanobis
    n_w = d + m + 1
    log_gamma_d = 0.25 * d * (d - 1) * math.log(math.pi) + sum(
        math.lgamma(0.5 * n_w + 0.5 * (1 - j)) for j in range(1, d + 1)
    )
    constant = n_w * d * (xp.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_d
    frobenius = xp.sum(xp.exp(log_diagonal) ** 2, axis=1) + xp.sum(icf[:, d:] ** 2, axis=1)
    prior = xp.sum(0.5 * gamma**2 * frobenius - m * xp.sum(log_diagonal, axis=1)) - k * constant
    return (
        -0.5 * n * d * math.log(2 * math.pi)
        + xp.sum(logsumexp_reference(xp, main))
        - n * logsumexp_reference(xp, alphas)
        + prior
    )


def cross(xp: ModuleType, a: Any, b: Any) -> Any:
    return xp.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        axis=-1,
    )


def reproj_reference(xp: ModuleType, cam: Any, X: Any, w: Any, feat: Any) -> Any:
    """ADBench's ``computeReprojError`` for cameras ``(…, 11)``, points
    ``(…, 3)``, weights ``(…)`` and features ``(…, 2)``."""
    rot, centre = cam[..., 0:3], cam[..., 3:6]
    pt = X - centre
    sqtheta = xp.sum(rot * rot, axis=-1, keepdims=True)
    rotating = sqtheta != 0
    theta = xp.sqrt(xp.where(rotating, sqtheta, 1.0))  # a safe square root for θ = 0
    axis = rot / theta
    rodrigues = (
        pt * xp.cos(theta)
        + cross(xp, axis, pt) * xp.sin(theta)
        + axis * xp.sum(axis * pt, axis=-1, keepdims=True) * (1 - xp.cos(theta))
    )
    rotated = xp.where(rotating, rodrigues, pt + cross(xp, rot, pt))
    u = rotated[..., 0:2] / rotated[..., 2:3]
    rsq = xp.sum(u * u, axis=-1, keepdims=True)
    distorted = u * (1 + cam[..., 9:10] * rsq + cam[..., 10:11] * rsq * rsq)
    proj = distorted * cam[..., 6:7] + cam[..., 7:9]
    return w[..., None] * (proj - feat)


def embedding_loss_reference(xp: ModuleType, x: Any, edges: np.ndarray, non_edges: np.ndarray) -> Any:
    """Appendix D.2, equation 7: Var(d(L1)) + Var(d(L2)) + exp(relu(mean d(L1) − mean d(L2) + 0.1)) − 1,
    with the sample variance."""

    def distances(pairs: np.ndarray) -> Any:
        return xp.sqrt(xp.sum((x[pairs[:, 0]] - x[pairs[:, 1]]) ** 2, axis=1))

    def variance(v: Any) -> Any:
        return xp.sum((v - xp.mean(v)) ** 2) / (v.shape[0] - 1)

    d1, d2 = distances(edges), distances(non_edges)
    relu = xp.maximum(xp.mean(d1) - xp.mean(d2) + 0.1, 0.0)
    return variance(d1) + variance(d2) + xp.exp(relu) - 1
