"""Checkpointing anywhere, with no annotation (seed 001): ``rv.gradient(f,
args, checkpoint=…)`` runs an ``@rv.ordinary`` function as its resumable
form (``make-resumable``: one loop of primitive steps, callees inlined) and
reverses it under the schedule.

Every policy's gradient equals the store-all one (Bennett's reversible
form) and JAX's on a program with nested loops, nested calls, a branch
holding a loop and a ``while`` whose trip count depends on the data; a
callee's ``rv.checkpointed`` loop joins the caller's schedule; the
interpreter and native code agree; the steps the gradient reverses are the
program's primitive steps (a closed form), and the plain and taped steps and
peak snapshots are exactly the schedule's ``stats()``, so under bisection
the snapshots grow with the logarithm of the run length.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import revmlir as rv
from revmlir.ad.adjoint import gradient_name
from revmlir.checkpoint.cursor import MAX_COUNT
from revmlir.dialects import anc
from revmlir.dialects.ad import ScheduleAttr
from revmlir.frontend.base.checkpoint_policy import CheckpointPolicy, parse_memory
from revmlir.frontend.base.derived import own_gradient

jax.config.update("jax_enable_x64", True)


def damp(x, a):
    x[0] = x[0] * a
    return x[0]


def kick(x, a, s):
    r = DAMP(x, a)
    return np.sin(s) + r


def program(x, l, a):
    s = 0.0
    for i in range(l):
        for j in range(2):
            x[j + 1] = x[j + 1] * 0.9 + 0.1 * s
        s = KICK(x, a, s)
    while s > 0.1:
        s = s * 0.5
    if s > 0.05:
        for j in range(3):
            s = s + 0.01 * x[j]
    return s + x[1]


DAMP = rv.ordinary(damp, backend="interpreter")
KICK = rv.ordinary(kick, backend="interpreter")
PROGRAM = rv.ordinary(program, backend="interpreter")


def loop_jax(x, a, l):
    """``program``'s for loop in JAX: the carried ``s`` and the array."""
    s = 0.0
    for i in range(l):
        for j in range(2):
            x = x.at[j + 1].set(x[j + 1] * 0.9 + 0.1 * s)
        x = x.at[0].set(x[0] * a)
        s = jnp.sin(s) + x[0]
    return s, x


def program_jax(x, a, l, halvings, branch):
    """``program`` in JAX; the while loop's trip count and the branch are
    taken from a float run (JAX cannot trace data-dependent control flow)."""
    s, x = loop_jax(x, a, l)
    for _ in range(halvings):
        s = s * 0.5
    if branch:
        for j in range(3):
            s = s + 0.01 * x[j]
    return s + x[1]


def control(x, l, a):
    """The while loop's trip count and the branch ``program`` takes."""
    x, s = x.copy(), 0.0
    for i in range(l):
        for j in range(2):
            x[j + 1] = x[j + 1] * 0.9 + 0.1 * s
        x[0] *= a
        s = math.sin(s) + x[0]
    halvings = 0
    while s > 0.1:
        s, halvings = s * 0.5, halvings + 1
    return halvings, s > 0.05


X = np.array([1.3, 0.4, -0.2])
POLICIES = [
    {"checkpoint": "bisection"},
    {"checkpoint": "binomial", "snapshots": 3},
    {"checkpoint": "store_all"},
    {"checkpoint": "auto", "memory": "200B"},
    {"checkpoint": "bisection", "base": 4},
]


@pytest.fixture(scope="module")
def reference():
    l, a = 4, 0.9
    halvings, branch = control(X, l, a)
    assert halvings > 0 and branch  # the run takes the while loop and the branch
    store_all = rv.gradient(PROGRAM, (X.copy(), l, a))
    jx, ja = jax.grad(program_jax, argnums=(0, 1))(jnp.asarray(X), a, l, halvings, branch)
    np.testing.assert_allclose(store_all[0], np.asarray(jx), rtol=1e-12, atol=1e-14)
    assert store_all[2] == pytest.approx(float(ja), rel=1e-12)
    return (l, a), store_all


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: "-".join(map(str, p.values())))
def test_every_policy_equals_store_all_and_jax(reference, policy):
    (l, a), store_all = reference
    x = X.copy()
    gradient = rv.gradient(PROGRAM, (x, l, a), **policy)
    np.testing.assert_array_equal(x, X)  # the arguments are not modified
    np.testing.assert_allclose(gradient[0], store_all[0], rtol=1e-12, atol=1e-14)
    assert gradient[1] == 0.0
    assert gradient[2] == pytest.approx(store_all[2], rel=1e-12)


def test_vjp_pulls_back_through_the_schedule(reference):
    """An array cotangent too: the pullback of (loss, x as the run leaves
    it) equals JAX's."""
    (l, a), _ = reference
    halvings, branch = control(X, l, a)
    outputs, pullback = rv.vjp(PROGRAM, X, l, a, checkpoint="bisection")

    expected, jax_pullback = jax.vjp(
        lambda x, a: (program_jax(x, a, l, halvings, branch), loop_jax(x, a, l)[1]), jnp.asarray(X), a
    )
    assert outputs[0] == pytest.approx(float(expected[0]), rel=1e-12)
    np.testing.assert_allclose(outputs[1], np.asarray(expected[1]), rtol=1e-12)
    w = np.array([0.5, -1.0, 2.0])
    got = pullback(1.0, w, None, None)
    jx, ja = jax_pullback((1.0, jnp.asarray(w)))
    np.testing.assert_allclose(got[0], np.asarray(jx), rtol=1e-12, atol=1e-14)
    assert got[2] == pytest.approx(float(ja), rel=1e-12)


def relax(x, n):
    for t in rv.checkpointed(range(n), snapshots=2):
        x[0] = x[0] * 0.9 + 0.1 * x[1]
    return x[0]


RELAX = rv.ordinary(relax, backend="interpreter")


def relaxations(x, m, n):
    s = 0.0
    for k in range(m):
        s = s + RELAX(x, n)
    return s


def test_a_checkpointed_callee_nests_in_the_schedule():
    """A callee with an rv.checkpointed loop: without checkpoint= its mark
    is honoured, with it the callee's steps join the caller's schedule.
    Both equal the closed form: after T steps x0 = 0.9^T x0 + (1 - 0.9^T) x1."""
    f = rv.ordinary(relaxations, backend="interpreter")
    x, m, n = np.array([1.0, 0.5]), 3, 4
    decay = 0.9 ** (n * np.arange(1, m + 1))
    expected = [decay.sum(), (1.0 - decay).sum()]
    for policy in ({}, {"checkpoint": "bisection"}):
        np.testing.assert_allclose(rv.gradient(f, (x, m, n), **policy)[0], expected, rtol=1e-12)


def loop(x, l):
    s = 0.0
    for i in range(l):
        s = s + x[0] * np.sin(s)
    return s


LOOP = rv.ordinary(loop, backend="interpreter")


def resumable(f, args, policy: dict):
    """The resumable form ``checkpoint=`` runs for ``f`` and ``policy``."""
    spec, checked = f.specialization_for(*args), CheckpointPolicy.of(**policy, api="gradient")
    size = spec.snapshot_bytes(args)
    return spec.resumable_gradient(checked.schedule(size), checked.steps_per_base(size))


def counted(policy: dict, l: int) -> tuple[dict, int, int]:
    """The gradient's step counters and peak snapshots, and the number of
    snapshot stores (one per element type of the state)."""
    x = np.array([0.7])
    spec = resumable(LOOP, (x, l), policy)
    run = own_gradient(spec)
    run.reset_counters()
    gradient = rv.gradient(LOOP, (x, l), **policy)[0]
    np.testing.assert_allclose(gradient, rv.gradient(LOOP, (x, l))[0], rtol=1e-12)
    step = f"{spec.name}.ckpt.step0"
    return (
        {
            "steps": run.counters[f"{step}.adj"].calls,
            "taped": run.counters[step].calls,
            "plain": run.counters[f"{step}.plain"].calls,
        },
        run.peak_snapshots,
        snapshot_stores(spec),
    )


def snapshot_stores(spec) -> int:
    """The snapshot stores of a resumable gradient: one per element type of
    its state."""
    grad = next(
        f for f in spec.module.ops if getattr(f, "sym_name", None) and f.sym_name.data == gradient_name(spec.name)
    )
    return sum(1 for op in grad.walk() if isinstance(op, anc.StackAllocOp) and op.result.name_hint == "snapshots")


@pytest.mark.parametrize(
    "policy", [{"checkpoint": "bisection", "base": 1}, {"checkpoint": "binomial", "snapshots": 3, "base": 1}]
)
def test_steps_and_snapshots_are_the_schedules(policy):
    """A loop of l iterations is l + 2 primitive steps (the entry with the
    first loop test, l bodies each ending with the next test, the return);
    with ``base=1`` each is a checkpointed step, taped once, run plain as the schedule
    says and once more to count them; the snapshots held peak at the
    schedule's peak, in each store."""
    l = 6
    counts, peak, stores = counted(policy, l)
    steps = l + 2
    schedule = (
        rv.checkpoint.bisection(steps) if policy["checkpoint"] == "bisection" else rv.checkpoint.binomial(steps, 3)
    )
    stats = schedule.stats()
    assert counts["steps"] == stats["taped"] == steps
    assert counts["taped"] == stats["taped"]  # plain steps run the untaped copy
    assert counts["plain"] == steps + stats["plain"]
    assert peak == stores * stats["peak"]


def test_the_default_base_is_four_steps_per_word_of_a_snapshot():
    """``base="auto"`` (the default): four primitive steps per word of one
    snapshot, rounded up to a power of two, whatever the run's length."""
    policy = CheckpointPolicy.of("bisection", api="gradient")
    assert policy == CheckpointPolicy.of("bisection", base="auto", api="gradient")
    assert [policy.steps_per_base(size) for size in (8, 24, 80, 8080)] == [4, 16, 64, 4096]
    assert CheckpointPolicy.of("bisection", base=3, api="gradient").steps_per_base(8080) == 3
    x = np.array([0.7])
    base = policy.steps_per_base(LOOP.specialization_for(x, 2).snapshot_bytes((x, 2)))
    for l in (2, 62):
        counts, _, _ = counted({"checkpoint": "bisection"}, l)
        assert counts["steps"] == -(-(l + 2) // base)


def test_bisection_memory_is_logarithmic_in_the_run_length():
    peaks = {}
    for l in (2, 14, 62):
        counts, peak, stores = counted({"checkpoint": "bisection", "base": 1}, l)
        peaks[counts["steps"]] = peak // stores
    assert peaks == {steps: math.ceil(math.log2(steps)) + 1 for steps in (4, 16, 64)}


def sweeps(x, n):
    s = 0.0
    for t in range(n):
        for k in range(1, 5):
            x[k] = 0.5 * x[k] + 0.25 * (x[k - 1] + x[k + 1])
        s = s + x[2]
    while s > 0.5:
        s = s * 0.75
    return s + x[3]


SWEEPS = rv.ordinary(sweeps, backend="interpreter")


def test_grouped_segments_repeat_loop_bodies_in_place():
    """With ``base=b`` a loop body with no loop or call inside repeats in a
    loop of its own within a step (the ``for``'s test first, the ``while``'s
    condition selecting the next point), and a step may end inside it: the
    steps are still ``⌈segments / b⌉`` (segments counted with ``base=1``),
    taped once each, the snapshots peak at the schedule's, and the gradient
    is store-all's (native code runs grouped steps in
    tests/test_rotations_seed.py, against the exact gradient)."""
    x, n, base = np.array([0.3, 1.2, -0.4, 0.8, 0.1, 0.6]), 5, 3
    policy = {"checkpoint": "bisection"}
    reference = rv.gradient(SWEEPS, (x.copy(), n))[0]
    counts = {}
    for b in (1, base):
        spec = SWEEPS.specialization_for(x, n).resumable_gradient(ScheduleAttr("bisection"), b)
        run = own_gradient(spec)
        run.reset_counters()
        np.testing.assert_allclose(
            rv.gradient(SWEEPS, (x.copy(), n), **policy, base=b)[0], reference, rtol=1e-12, atol=1e-15
        )
        peak = run.peak_snapshots // snapshot_stores(spec)
        counts[b] = run.counters[f"{spec.name}.ckpt.step0.adj"].calls, peak
    segments = counts[1][0]
    steps = -(-segments // base)
    assert segments > 4 * n  # the loop bodies are most of the segments
    assert counts[base] == (steps, rv.checkpoint.bisection(steps).stats()["peak"])


def test_native_code_agrees_with_the_interpreter():
    native = rv.ordinary(loop)
    x = np.array([0.7])
    policy = {"checkpoint": "binomial", "snapshots": 2}
    assert resumable(native, (x, 9), policy).native is not None
    np.testing.assert_allclose(
        rv.gradient(native, (x, 9), **policy)[0], rv.gradient(LOOP, (x, 9), **policy)[0], rtol=1e-12
    )


def spiral(x, a):
    s = 0.0
    for i in range(len(x)):
        s = s * a + x[i] * x[i]
    while s > 1.0:
        s = s * 0.5
    return s * s


SPIRAL = rv.ordinary(spiral, backend="interpreter")


def test_hessians_of_a_checkpointed_gradient():
    """``rv.hvp`` and ``rv.hessian`` take ``checkpoint=`` as ``rv.gradient``
    does: forward mode over the gradient checkpointed under that policy
    equals it over the store-all gradient, and the Hessian's columns are
    those products."""
    x, a = np.array([0.7, -0.4, 0.9]), 0.8
    v = (np.array([0.5, -1.0, 0.25]), 0.75)
    # s = x₀²a² + x₁²a + x₂², halved once by the while loop: f = s²/4
    s = x[0] ** 2 * a * a + x[1] ** 2 * a + x[2] ** 2
    assert 1.0 < s <= 2.0
    store_all = rv.hvp(SPIRAL, (x, a), v)
    hx, ha = rv.hvp(SPIRAL, (x.copy(), a), v, checkpoint="bisection")
    np.testing.assert_allclose(hx, store_all[0], rtol=1e-12)
    assert ha == pytest.approx(store_all[1], rel=1e-12)
    hessian = rv.hessian(SPIRAL, (x, a), checkpoint="bisection")
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-12)
    np.testing.assert_allclose(hessian @ np.append(*v), np.append(hx, ha), rtol=1e-12)
    assert hessian[2, 2] == pytest.approx(2 * x[2] ** 2 + s, rel=1e-12)  # ∂²(s²/4)/∂x₂², ∂s/∂x₂ = 2x₂
    with pytest.raises(ValueError, match="snapshots=k is required by checkpoint='binomial'"):
        rv.hvp(SPIRAL, (x, a), v, checkpoint="binomial")
    with pytest.raises(TypeError, match=r"rv.hessian\(\) got an unexpected keyword argument 'chekpoint'"):
        rv.hessian(SPIRAL, (x, a), chekpoint="bisection")


@pytest.mark.parametrize(
    "options, error, match",
    [
        ({"checkpoint": "revolve"}, ValueError, "checkpoint must be one of 'bisection', 'binomial'"),
        ({"checkpoint": "binomial"}, ValueError, "snapshots=k is required by checkpoint='binomial'"),
        ({"checkpoint": "bisection", "snapshots": 3}, ValueError, "and only by it"),
        ({"checkpoint": "binomial", "snapshots": 0}, ValueError, "^rv.gradient: snapshots must be >= 1, got 0$"),
        (
            {"checkpoint": "binomial", "snapshots": 2.5},
            TypeError,
            r"^rv.gradient: snapshots must be an integer, got 2.5 \(float\)$",
        ),
        ({"checkpoint": "binomial", "snapshots": True}, TypeError, r"snapshots must be an integer, got True \(bool\)$"),
        ({"checkpoint": "auto"}, ValueError, "memory= is required by checkpoint='auto'"),
        ({"checkpoint": "auto", "memory": "lots"}, ValueError, "a size like '64MB'"),
        ({"checkpoint": "auto", "memory": "8B"}, ValueError, "holds no snapshot"),
        ({"checkpoint": "bisection", "base": 0}, ValueError, "^rv.gradient: base must be >= 1, got 0$"),
        (
            {"checkpoint": "bisection", "base": "many"},
            TypeError,
            "^rv.gradient: base must be an integer or 'auto', got 'many'$",
        ),
        (
            {"checkpoint": "binomial", "snapshots": 10**30},
            ValueError,
            "^rv.gradient: snapshots must be at most 9223372036854775807, got 10{30}",
        ),
        (
            {"checkpoint": "bisection", "base": 2**63},
            ValueError,
            "^rv.gradient: base must be at most 9223372036854775807, got 9223372036854775808$",
        ),
        ({"snapshots": 3}, ValueError, "snapshots= needs checkpoint="),
    ],
)
def test_bad_policies_are_reported(options, error, match):
    with pytest.raises(error, match=match):
        rv.gradient(LOOP, (np.array([0.7]), 3), **options)


def test_numpy_integers_are_counts_as_the_schedules_take_them():
    """``snapshots=`` and ``base=`` are counts as ``revmlir.checkpoint``'s
    functions take them: numpy's integers too, refusals naming the API."""
    args = (np.array([0.7]), 3)
    expected = rv.gradient(LOOP, args)[0]
    for options in (
        {"checkpoint": "binomial", "snapshots": np.int64(2)},
        {"checkpoint": "bisection", "base": np.int32(2)},
    ):
        np.testing.assert_allclose(rv.gradient(LOOP, args, **options)[0], expected, rtol=1e-14)
    with pytest.raises(ValueError, match=r"^rv.vjp: snapshots must be >= 1, got 0$"):
        rv.vjp(LOOP, *args, checkpoint="binomial", snapshots=np.uint8(0))


def test_a_budget_beyond_a_word_keeps_as_many_snapshots_as_a_word_counts():
    """``memory=`` of any size is a budget: the snapshots it holds are capped
    at the cursor's largest count instead of failing the schedule's check."""
    schedule = CheckpointPolicy.of("auto", memory=10**30, api="gradient").schedule(8)
    schedule.verify()
    assert schedule == ScheduleAttr("binomial", MAX_COUNT)
    with pytest.raises(VerifyException, match="beyond the cursor's 64-bit words"):
        ScheduleAttr("binomial", MAX_COUNT + 1).verify()


def test_checkpoint_needs_an_ordinary_function():
    @rv.reversible
    def shift(x: float):
        x += 1.0

    with pytest.raises(TypeError, match="checkpoint= applies to @rv.ordinary functions"):
        rv.gradient(shift, (1.0,), checkpoint="bisection")


def test_memory_sizes():
    parse = parse_memory
    assert parse("64MB") == 64 * 10**6 and parse("1.5 GiB") == 3 * 2**29 and parse(512) == 512
    assert parse(1e9) == 10**9 and parse(64.5) == 64  # a float of bytes, as Python writes large numbers
    for wrong in (0, -1, 0.5, math.nan, -math.inf):
        with pytest.raises(ValueError, match="memory must be at least one byte"):
            parse(wrong)
    with pytest.raises(ValueError, match="memory must be a number of bytes, not inf"):
        parse(math.inf)
