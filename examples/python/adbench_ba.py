"""ADBench's bundle adjustment residuals (microsoft/ADBench,
``src/cpp/shared/ba.h``) as a reversible program, the BA benchmark of the
NiLang AD paper (seed 002, section 4.3).

A camera has 11 parameters: a Rodrigues rotation vector ``r`` (0–2), the
centre ``C`` (3–5), the focal length ``f`` (6), the principal point
``x0`` (7–8) and two radial distortion coefficients ``κ`` (9–10).
Observation ``i`` of point ``X`` by camera ``c`` with weight ``w`` and
feature ``feat`` has the residuals::

    p    = R(r)·(X − C)                  Rodrigues: X cosθ + (ω×X) sinθ + ω(ω·X)(1 − cosθ),
                                         ω = r/θ, θ = ‖r‖; X + r×X when θ = 0
    u    = p[0:2] / p[2]
    u'   = u·(1 + κ0‖u‖² + κ1‖u‖⁴)
    err  = w·(u'·f + x0 − feat)          (computeReprojError, 2 values)
    werr = 1 − w²                        (computeZachWeightError)

The reversible formulation: the residuals are *added* into variables the
caller zeroes, so nothing is overwritten; every intermediate (``X − C``, the
rotated point, ``θ``, ``cosθ``, ``sinθ``, ``ω``, the distortion factor …) is
a scalar ancilla computed, used and uncomputed with ``rv.routine``.
ADBench's in-place updates (``proj *= L``, ``proj = proj·f + x0``) become
fresh ancillas holding the new value.  The stages of ``project`` are one
routine of ``compute_reproj_error`` instead of nested functions, which
halves the work (see its docstring).  Rodrigues' small-angle branch is an ``if``
whose condition (``θ² ≠ 0``) the branch does not change, so it is its own
postcondition.  The residual arrays are accumulated into: pass zeros.
"""

import math

import revmlir as rv


@rv.reversible
def rodrigues_rotate_point(out0, out1, out2, cams, c, p0, p1, p2):
    """``out += R(cams[c, 0:3])·p`` (ADBench's ``rodrigues_rotate_point``,
    including its ``θ = 0`` branch ``p + r×p``)."""
    with rv.routine() as r:
        sqtheta = rv.ancilla(0.0)
        sqtheta += cams[c, 0] * cams[c, 0] + cams[c, 1] * cams[c, 1] + cams[c, 2] * cams[c, 2]
    if sqtheta != 0:
        with rv.routine() as s:
            theta = rv.ancilla(math.sqrt(sqtheta))
            costheta = rv.ancilla(math.cos(theta))
            sintheta = rv.ancilla(math.sin(theta))
            w0 = rv.ancilla(cams[c, 0] * (1.0 / theta))
            w1 = rv.ancilla(cams[c, 1] * (1.0 / theta))
            w2 = rv.ancilla(cams[c, 2] * (1.0 / theta))
            tmp = rv.ancilla((w0 * p0 + w1 * p1 + w2 * p2) * (1.0 - costheta))
        out0 += p0 * costheta + (w1 * p2 - w2 * p1) * sintheta + w0 * tmp
        out1 += p1 * costheta + (w2 * p0 - w0 * p2) * sintheta + w1 * tmp
        out2 += p2 * costheta + (w0 * p1 - w1 * p0) * sintheta + w2 * tmp
        ~s
    else:
        out0 += p0 + (cams[c, 1] * p2 - cams[c, 2] * p1)
        out1 += p1 + (cams[c, 2] * p0 - cams[c, 0] * p2)
        out2 += p2 + (cams[c, 0] * p1 - cams[c, 1] * p0)
    ~r


@rv.reversible
def compute_reproj_error(err0, err1, cams, c, X, p, w, feat0, feat1):
    """``err += w·(project(cams[c], X[p]) − feat)`` (ADBench's
    ``computeReprojError``).

    ADBench's ``project`` (centre, rotate, divide by depth) and
    ``radial_distort`` are stages of this one routine rather than functions
    of their own: a function called inside a routine runs twice (computed,
    then uncomputed by ``~r``), and its own routine twice per run, so each
    level of nesting doubles the work below it.  With ``project`` and
    ``radial_distort`` as nested functions the objective and the Jacobian
    took twice as long.  Only ``rodrigues_rotate_point`` stays a function:
    its angle ancillas live in a branch and must be uncomputed there."""
    with rv.routine() as r:
        # project: the point relative to the camera centre, rotated
        centred0 = rv.ancilla(X[p, 0] - cams[c, 3])
        centred1 = rv.ancilla(X[p, 1] - cams[c, 4])
        centred2 = rv.ancilla(X[p, 2] - cams[c, 5])
        rotated0 = rv.ancilla(0.0)
        rotated1 = rv.ancilla(0.0)
        rotated2 = rv.ancilla(0.0)
        rodrigues_rotate_point(rotated0, rotated1, rotated2, cams, c, centred0, centred1, centred2)
        u0 = rv.ancilla(rotated0 / rotated2)
        u1 = rv.ancilla(rotated1 / rotated2)
        # radial_distort: u·(1 + κ0‖u‖² + κ1‖u‖⁴)
        rsq = rv.ancilla(u0 * u0 + u1 * u1)
        factor = rv.ancilla(1.0 + cams[c, 9] * rsq + cams[c, 10] * rsq * rsq)
    # project's last step (·f + x0), then the weighted residual
    err0 += w * (u0 * factor * cams[c, 6] + cams[c, 7] - feat0)
    err1 += w * (u1 * factor * cams[c, 6] + cams[c, 8] - feat1)
    ~r


@rv.reversible
def compute_zach_weight_error(err, w):
    """``err += 1 − w²`` (ADBench's ``computeZachWeightError``)."""
    err += 1.0 - w * w


@rv.reversible
def ba_objective(reproj_err, w_err, cams, X, w, obs, feats):
    """``reproj_err (p, 2) +=`` the reprojection residuals and
    ``w_err (p,) +=`` the weight residuals of every observation (ADBench's
    ``ba_objective``)."""
    for i in range(obs.shape[0]):
        compute_reproj_error(
            reproj_err[i, 0], reproj_err[i, 1], cams, obs[i, 0], X, obs[i, 1], w[i], feats[i, 0], feats[i, 1]
        )
    for i in range(len(w)):
        compute_zach_weight_error(w_err[i], w[i])


@rv.reversible
def reproj_jacobian_block(J, i, cams, c, X, p, w, feat0, feat1, g_cams0, g_X0, g_cams1, g_X1):
    """Observation ``i``'s block: the zero rows ``J[i, r, :]`` receive
    ``∂err_r/∂(cams[c], X[p], w)`` (11 + 3 + 1 columns), both rows in one
    backward run.

    The residuals are computed into ancillas, then the two-lane adjoint
    ``@compute_reproj_error.adj2`` (``rv.adjoint(…, lanes=2)``) uncomputes
    them once while lane ``r`` carries the seed ``e_r`` back into its shadow
    arrays (``g_camsr``/``g_Xr``, zeroed workspaces shaped like
    ``cams``/``X``) and scalar gradients; the block's entries are swapped out
    of the shadows into ``J``, which leaves the shadows zero again.  The
    features' gradients are ``−w·e_r`` and are uncomputed."""
    e0 = rv.ancilla(0.0)
    e1 = rv.ancilla(0.0)
    compute_reproj_error(e0, e1, cams, c, X, p, w, feat0, feat1)
    seed00 = rv.ancilla(1.0)  # lane r's seed is e_r: ∂err_r
    seed01 = rv.ancilla(0.0)
    seed10 = rv.ancilla(0.0)
    seed11 = rv.ancilla(1.0)
    g_w0 = rv.ancilla(0.0)
    g_w1 = rv.ancilla(0.0)
    g_f00 = rv.ancilla(0.0)
    g_f01 = rv.ancilla(0.0)
    g_f10 = rv.ancilla(0.0)
    g_f11 = rv.ancilla(0.0)
    rv.adjoint(compute_reproj_error, lanes=2)(
        e0,
        e1,
        cams,
        c,
        X,
        p,
        w,
        feat0,
        feat1,
        seed00,
        seed01,
        g_cams0,
        g_X0,
        g_w0,
        g_f00,
        g_f01,
        seed10,
        seed11,
        g_cams1,
        g_X1,
        g_w1,
        g_f10,
        g_f11,
    )
    for j in range(11):
        J[i, 0, j], g_cams0[c, j] = g_cams0[c, j], J[i, 0, j]
        J[i, 1, j], g_cams1[c, j] = g_cams1[c, j], J[i, 1, j]
    for j in range(3):
        J[i, 0, 11 + j], g_X0[p, j] = g_X0[p, j], J[i, 0, 11 + j]
        J[i, 1, 11 + j], g_X1[p, j] = g_X1[p, j], J[i, 1, 11 + j]
    J[i, 0, 14], g_w0 = g_w0, J[i, 0, 14]
    J[i, 1, 14], g_w1 = g_w1, J[i, 1, 14]
    rv.free(g_w0)
    rv.free(g_w1)
    rv.free(g_f00, -w)
    rv.free(g_f01)
    rv.free(g_f10)
    rv.free(g_f11, -w)
    rv.free(seed00, 1.0)
    rv.free(seed01)
    rv.free(seed10)
    rv.free(seed11, 1.0)
    rv.free(e0)
    rv.free(e1)


@rv.reversible
def weight_jacobian(wJ, i, w):
    """The zero ``wJ[i]`` receives ``∂(1 − w²)/∂w``, by the adjoint of
    ``compute_zach_weight_error``."""
    e = rv.ancilla(0.0)
    compute_zach_weight_error(e, w)
    seed = rv.ancilla(1.0)
    g_w = rv.ancilla(0.0)
    rv.adjoint(compute_zach_weight_error)(e, w, seed, g_w)
    wJ[i], g_w = g_w, wJ[i]
    rv.free(g_w)
    rv.free(seed, 1.0)
    rv.free(e)


@rv.reversible
def ba_jacobian(J, wJ, cams, X, w, obs, feats, g_cams0, g_X0, g_cams1, g_X1):
    """The per-observation Jacobian blocks of ADBench's BA into zeroed
    ``J (p, 2, 15)`` (the reprojection error's; columns: the camera's 11
    parameters, the point's 3, the weight) and ``wJ (p,)`` (the weight
    error's).  The blocks of the sparse ``(2p + p) × (11n + 3m + p)``
    Jacobian are what ADBench's ``ba_jacobian`` fills in; the gradients are
    swapped out of the shadows into ``J``, which therefore must start at
    zero.  ``g_cams0``, ``g_X0``, ``g_cams1``, ``g_X1`` are zeroed
    workspaces shaped like ``cams``, ``X``, ``cams``, ``X``: the shadows of
    the blocks' first and second rows, given back zero."""
    for i in range(obs.shape[0]):
        reproj_jacobian_block(
            J, i, cams, obs[i, 0], X, obs[i, 1], w[i], feats[i, 0], feats[i, 1], g_cams0, g_X0, g_cams1, g_X1
        )
    for i in range(len(w)):
        weight_jacobian(wJ, i, w[i])


if __name__ == "__main__":
    import numpy as np

    from adbench_data import read_ba

    problem = read_ba("ba/ba1_n49_m7776_p31843.txt")
    reproj_err, w_err = np.zeros((len(problem.w), 2)), np.zeros(len(problem.w))
    ba_objective(reproj_err, w_err, problem.cams, problem.X, problem.w, problem.obs, problem.feats)
    print("first residuals:", reproj_err[0], w_err[0])
