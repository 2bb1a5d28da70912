"""ADBench's Gaussian mixture model objective (microsoft/ADBench,
``src/cpp/shared/gmm.h``) as a reversible program, the GMM benchmark of the
NiLang AD paper (seed 002, section 4.3).

For ``n`` points ``x_i`` in ``d`` dimensions and ``k`` components::

    err = −n·d/2·log 2π
          + Σ_i logsumexp_k( α_k + Σ_j q_kj − ½‖Q_k (x_i − μ_k)‖² )
          − n · logsumexp(α)
          + Σ_k ( ½γ²(‖diag Q_k‖² + ‖ltri Q_k‖²) − m Σ_j q_kj ) − k·C(γ, m, d)

where ``icf[k] = (q_k1 … q_kd, l_k…)`` gives ``Q_k`` with diagonal
``exp(q_kj)`` and the strictly lower triangle ``l_k`` packed column by column
(ADBench's ``Qtimesx``), and ``C`` is the log normalisation constant of the
Wishart prior, ``n_w·d·(log γ − ½ log 2) − log Γ_d(n_w/2)`` with
``n_w = d + m + 1`` and the multivariate log-gamma
``log Γ_d(a) = ¼d(d−1) log π + Σ_{j=1..d} log Γ(a + (1−j)/2)``.

The reversible formulation:

* every intermediate is computed, used and uncomputed (``rv.routine``):
  per point, ``x_i − μ_k`` and ``Q_k(x_i − μ_k)`` for every component (rows
  of ``k × d`` arrays) and the ``k`` main terms, uncomputed together once
  the point's log-sum-exp is taken; the log-normalised ``Q`` diagonals for
  the whole run.  Each point's log-sum-exp is *added* to ``err``, so the
  loop over points needs no ancilla that would have to be uncomputed, and
  the objective evaluates every ``Q·x`` product twice (once forward, once
  to uncompute it) where ADBench's C++ does once;
* the arrays ADBench allocates (``Qdiags``, ``sum_qs``, ``xcentered``,
  ``Qxcentered``, ``main_term``, plus the running maxima of the
  log-sum-exp) are *ancilla arrays* (``rv.zeros``, NiLang's ``zeros``),
  allocated where ADBench allocates them and freed, checked to hold zeros
  again (up to rounding: ``(a + b) − b`` need not be exactly ``a``), when
  the routine has uncomputed them.  Their gradients live as long as they
  do, so the gradient of one point's intermediates never reaches the next
  point (a workspace passed in as an argument would carry one: the result
  depends on the values it starts with);
* ``logsumexp`` needs ``max(v)``; a running maximum cannot be overwritten
  reversibly, so the prefix maxima are kept in an array (Bennett's "keep
  the history"), uncomputed in reverse afterwards;
* ``math.lgamma`` is not an expression of reversible Python.  The Wishart
  constant only needs ``log Γ`` at half-integers ``z/2`` (``n_w`` is an
  integer, as ADBench's ``Wishart.m``), computed exactly from the recurrence
  ``Γ(x) = (x − 1)Γ(x − 1)`` down to ``Γ(1) = 1`` or ``Γ(½) = √π``
  (``log_gamma_half``).

``err`` is accumulated into (``err += objective``): pass ``0.0``.
"""

import math

import revmlir as rv


@rv.reversible
def logsumexp(out, v):
    """``out += log Σ exp(v)``, shifted by ``max(v)`` as ADBench does so that
    no exponential overflows; the prefix maxima are kept while the sum is
    formed."""
    with rv.routine() as r:
        running_max = rv.zeros(len(v))
        running_max[0] += v[0]
        for i in range(1, len(v)):
            running_max[i] += max(running_max[i - 1], v[i])
        total = rv.ancilla(0.0)
        for i in range(len(v)):
            total += math.exp(v[i] - running_max[len(v) - 1])
    out += math.log(total) + running_max[len(v) - 1]
    ~r


@rv.reversible
def sqnorm(out, v):
    """``out += ‖v‖²``."""
    for j in range(len(v)):
        out += v[j] * v[j]


@rv.reversible
def preprocess_qs(qdiags, sum_qs, icf):
    """``qdiags[k] += exp(q_k)`` and ``sum_qs[k] += Σ q_k`` (ADBench's
    ``preprocess_qs``); ``Σ q_k = log det Q_k``."""
    for ik in range(qdiags.shape[0]):
        for j in range(qdiags.shape[1]):
            sum_qs[ik] += icf[ik, j]
            qdiags[ik, j] += math.exp(icf[ik, j])


@rv.reversible
def qtimesx(out, qdiags, icf, ik, v):
    """``out[ik] += Q_ik · v[ik]`` (rows of ``(k, d)`` arrays) with ``Q``'s
    strictly lower triangle read from ``icf[ik, d:]`` column by column
    (ADBench's ``Qtimesx``)."""
    for j in range(v.shape[1]):
        out[ik, j] += qdiags[ik, j] * v[ik, j]
    for i in range(v.shape[1]):
        for j in range(i + 1, v.shape[1]):
            out[ik, j] += icf[ik, v.shape[1] + i * (2 * v.shape[1] - i - 1) // 2 + j - i - 1] * v[ik, i]


@rv.reversible
def main_term(term, ix, ik, alphas, means, icf, x, qdiags, sum_qs, xcentered, qxcentered):
    """``term += α_k + Σ q_k − ½‖Q_k (x_ix − μ_k)‖²``, the log-density of
    point ``ix`` under component ``ik`` up to the constant, with
    ``x_ix − μ_k`` and ``Q_k (x_ix − μ_k)`` left in row ``ik`` of
    ``xcentered`` and ``qxcentered`` (the caller uncomputes them by running
    this backwards)."""
    for j in range(xcentered.shape[1]):
        xcentered[ik, j] += x[ix, j] - means[ik, j]
    qtimesx(qxcentered, qdiags, icf, ik, xcentered)
    for j in range(xcentered.shape[1]):
        term -= 0.5 * qxcentered[ik, j] * qxcentered[ik, j]
    term += alphas[ik] + sum_qs[ik]


@rv.reversible
def point_logsumexp(out, ix, alphas, means, icf, x, qdiags, sum_qs):
    """``out += logsumexp_k main_term(ix, k)``: the log-likelihood of point
    ``ix`` up to the constants; ``terms`` (``k``) holds the main terms and
    ``xcentered``/``qxcentered`` (``k × d``) their intermediates while the
    log-sum-exp is formed, and the routine's uncomputation clears them all:
    each ``Q·x`` product is formed once and uncomputed once."""
    with rv.routine() as r:
        xcentered = rv.zeros((len(alphas), x.shape[1]))
        qxcentered = rv.zeros((len(alphas), x.shape[1]))
        terms = rv.zeros(len(alphas))
        for ik in range(len(alphas)):
            main_term(terms[ik], ix, ik, alphas, means, icf, x, qdiags, sum_qs, xcentered, qxcentered)
    logsumexp(out, terms)
    ~r


@rv.reversible
def log_gamma_half(out, z):
    """``out += log Γ(z/2)`` for an integer ``z ≥ 1``, by the recurrence."""
    for i in range(1, (z - 1) // 2 + 1):
        out += math.log(z / 2 - i)
    if z % 2 == 1:
        out += 0.5 * math.log(math.pi)


@rv.reversible
def log_wishart_prior(out, qdiags, sum_qs, icf, gamma, m):
    """``out +=`` the log Wishart prior of the precision matrices, ADBench's
    ``log_wishart_prior``."""
    with rv.routine() as r:
        log_gamma_d = rv.ancilla(0.25 * qdiags.shape[1] * (qdiags.shape[1] - 1) * math.log(math.pi))
        for j in range(1, qdiags.shape[1] + 1):
            log_gamma_half(log_gamma_d, qdiags.shape[1] + m + 2 - j)
        constant = rv.ancilla(
            float((qdiags.shape[1] + m + 1) * qdiags.shape[1]) * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_d
        )
    for ik in range(qdiags.shape[0]):
        with rv.routine() as s:
            diagonal = rv.ancilla(0.0)
            for j in range(qdiags.shape[1]):
                diagonal += qdiags[ik, j] * qdiags[ik, j]
            triangle = rv.ancilla(0.0)
            for j in range(qdiags.shape[1], icf.shape[1]):
                triangle += icf[ik, j] * icf[ik, j]
        out += 0.5 * gamma * gamma * (diagonal + triangle) - float(m) * sum_qs[ik]
        ~s
    out -= float(qdiags.shape[0]) * constant
    ~r


@rv.reversible
def gmm_objective(err, alphas, means, icf, x, gamma, m):
    """``err +=`` ADBench's GMM objective (see the module docstring)."""
    with rv.routine() as r:
        qdiags = rv.zeros((len(alphas), x.shape[1]))
        sum_qs = rv.zeros(len(alphas))
        preprocess_qs(qdiags, sum_qs, icf)
        lse_alphas = rv.ancilla(0.0)
        logsumexp(lse_alphas, alphas)
        prior = rv.ancilla(0.0)
        log_wishart_prior(prior, qdiags, sum_qs, icf, gamma, m)
    for ix in range(x.shape[0]):
        point_logsumexp(err, ix, alphas, means, icf, x, qdiags, sum_qs)
    err += -0.5 * float(x.shape[0] * x.shape[1]) * math.log(2.0 * math.pi) - float(x.shape[0]) * lse_alphas
    err += prior
    ~r


if __name__ == "__main__":
    from adbench_data import read_gmm

    problem = read_gmm("gmm/1k/gmm_d10_K5.txt")
    args = (0.0, problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
    print("objective:", gmm_objective(*args)[0])
