"""ADBench's GMM gradient on the GPU: points in parallel, parameters shared
(``adbench_gmm.py`` holds the objective).

The points' log-likelihoods (``point_logsumexp``, the whole cost of the
objective) are one kernel, a thread per point, each adding its term to a
``point_err`` element of its own and reading the parameters and the points
whole.  The adjoint kernel runs the points backwards in parallel: the
adjoint of each call only accumulates into the parameter gradients, which
the parallel rule admits for a callee and the compiler makes atomic in it
(``memref.atomic_rmw``, f64 atomics on the GPU).  The
parameter-only terms (log-sum-exp of the weights, the Wishart prior) and the
preprocessing are small and run on the CPU, and their gradients are chained
with the kernel's: ``gmm_gradient`` equals ``rv.gradient(gmm_objective)``.
Without a GPU the kernels run on the CPU.
"""

import math

import numpy as np

import revmlir as rv
from adbench_gmm import log_wishart_prior, logsumexp, point_logsumexp, preprocess_qs


@rv.reversible
def gmm_points(point_err, alphas, means, icf, x, qdiags, sum_qs):
    """``point_err[i] +=`` the log-likelihood of point ``i`` up to the constants."""
    for ix in rv.prange(x.shape[0]):
        point_logsumexp(point_err[ix], ix, alphas, means, icf, x, qdiags, sum_qs)


@rv.reversible
def gmm_parameter_terms(err, alphas, icf, qdiags, sum_qs, gamma, m, n, d):
    """``err +=`` the terms of ``gmm_objective`` that involve no point: the
    normalisation ``−n·d/2·log 2π − n·logsumexp(α)`` and the prior."""
    with rv.routine() as r:
        lse_alphas = rv.ancilla(0.0)
        logsumexp(lse_alphas, alphas)
        prior = rv.ancilla(0.0)
        log_wishart_prior(prior, qdiags, sum_qs, icf, gamma, m)
    err += -0.5 * float(n * d) * math.log(2.0 * math.pi) - float(n) * lse_alphas
    err += prior
    ~r


def gmm_gradient(alphas, means, icf, x, gamma, m, run=None):
    """The objective and its gradient with respect to ``alphas``, ``means``
    and ``icf``; ``run(function, *args)`` runs the point kernels (on the GPU
    in ``gpu_elementwise.run``), by default on the CPU."""
    run = run or (lambda function, *args: function(*args))
    (k, d), n = means.shape, x.shape[0]
    qdiags, sum_qs = np.zeros((k, d)), np.zeros(k)
    preprocess_qs(qdiags, sum_qs, icf)
    point_err = np.zeros(n)
    run(gmm_points, point_err, alphas, means, icf, x, qdiags, sum_qs)
    value = float(np.sum(point_err))  # the adjoint uncomputes point_err
    g_alphas, g_means, g_icf = np.zeros(k), np.zeros((k, d)), np.zeros(icf.shape)
    g_qdiags, g_sum_qs = np.zeros((k, d)), np.zeros(k)
    run(
        rv.adjoint(gmm_points),
        point_err,
        alphas,
        means,
        icf,
        x,
        qdiags,
        sum_qs,
        np.ones(n),
        g_alphas,
        g_means,
        g_icf,
        np.zeros(x.shape),
        g_qdiags,
        g_sum_qs,
    )
    args = (0.0, alphas, icf, qdiags, sum_qs, gamma, m, n, d)
    value += gmm_parameter_terms(*args)[0]
    _, r_alphas, r_icf, r_qdiags, r_sum_qs, *_ = rv.gradient(gmm_parameter_terms, args, iloss=0)
    g_qdiags, g_sum_qs = g_qdiags + r_qdiags, g_sum_qs + r_sum_qs
    g_icf += r_icf
    rv.adjoint(preprocess_qs)(qdiags, sum_qs, icf, g_qdiags, g_sum_qs, g_icf)
    return value, (g_alphas + r_alphas, g_means, g_icf)


if __name__ == "__main__":
    from adbench_data import read_gmm
    from gpu_elementwise import run

    problem = read_gmm("gmm/10k/gmm_d10_K5.txt")
    value, gradient = gmm_gradient(problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m, run)
    print("objective:", value, "‖∂/∂alphas‖:", np.linalg.norm(gradient[0]))
