"""What an ``rv.prange`` loop means on every engine, as a kernel's compiler
meets it: a safe block's count is an atomic addition, a complex array's
gradient at a shared index is a located refusal, a kernel allocates its
own ancilla arrays before its loop (each thread its own copy, so the loop
may not sum into one), an outer scalar passed to a call is an update
refused at the call, and a run-time step must be positive, checked at the
call.  The kernels run thread by thread on the CPU
(``tests/gpu_emulation.py``) and their PTX is read as text and assembled by
ptxas."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects import func, memref

import revmlir as rv
from gpu_emulation import EmulatedKernel
from revmlir.errors import AdjointError
from revmlir.gpu import toolkit
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.lowering.rev_to_std import RevLowerToStdPass, lower_to_std
from revmlir.parsing import make_context, parse_module

ENGINES = ("interpreter", "native")


def _copies(values: list[object]) -> list[object]:
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def _counting(y, x, calls, total):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        with rv.safe():
            calls[0] += 1
            calls[1] -= 2
            total[i % 2] -= x[i]
        y[i] += x[i]


def test_a_count_in_a_parallel_loop_is_an_atomic_addition_in_the_lowered_ir():
    """Each of the three counts is one ``memref.atomic_rmw`` into its
    counter (the old lowering's load, add and store made none); the
    private ``y[i] += x[i]`` stays a store."""
    module, name = rv.cuda.kernel(rv.reversible(_counting)).rev_module(
        np.zeros(11), np.ones(11), np.zeros(2, np.int64), np.zeros(2)
    )
    lower_to_std(module)
    (function,) = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name]
    atomics = [op for op in function.walk() if isinstance(op, memref.AtomicRMWOp)]
    assert [(str(a).split()[3], a.memref.name_hint) for a in atomics] == [
        ("addi", "calls"),
        ("addi", "calls"),
        ("addf", "total"),
    ]


def test_a_count_in_a_parallel_loop_counts_every_iteration_on_every_engine():
    """Every iteration counts into one element: on both CPU engines and in
    the emulated kernel at grids that give a thread several iterations.
    The emulated threads run one after another, so this checks the counts'
    sums and indices, not their atomicity (the lowered IR's test does)."""
    x = np.arange(1.0, 12.0)
    expected_total = np.array([-x[0::2].sum(), -x[1::2].sum()])
    for backend in ENGINES:
        y, _, calls, total = rv.reversible(_counting, backend=backend)(
            np.zeros(11), x, np.zeros(2, np.int64), np.zeros(2)
        )
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(calls, [11, -22])
        np.testing.assert_array_equal(total, expected_total)
    f = rv.reversible(_counting)
    for blocks, threads in [(1, 1), (2, 3), (4, 32)]:
        got = [np.zeros(11), x, np.zeros(2, np.int64), np.zeros(2)]
        slot = EmulatedKernel(*rv.cuda.kernel(f).rev_module(*got)).launch(got, blocks, threads)
        assert not slot.any()
        np.testing.assert_array_equal(got[2], [11, -22])
        np.testing.assert_array_equal(got[3], expected_total)


def test_a_count_in_a_parallel_loop_is_an_atomic_addition_in_the_ptx():
    """The count was a plain load, add and store, which LLVM kept in a
    register over a thread's iterations: threads lost each other's counts.
    It is a ``red.add`` now (no old value is used), ``f64`` for the float
    counter, subtraction as the addition of the negated step; ptxas takes
    it."""
    f = rv.reversible(_counting)
    args = [np.zeros(11), np.ones(11), np.zeros(2, np.int64), np.zeros(2)]
    ptx = rv.cuda.kernel(f).compile(*args).ptx
    atomics = re.findall(r"\b(?:red|atom)\.[\w.]+", ptx)
    assert any(a.startswith("red.") and a.endswith(".u64") for a in atomics), atomics
    assert any(a.startswith("red.") and a.endswith(".f64") for a in atomics), atomics
    assert toolkit.emit_cubin(ptx)[:4] == b"\x7fELF"


def test_a_count_out_of_bounds_in_a_parallel_loop_is_the_same_error_on_every_engine():
    """The atomic count checks its indices as the count's load does on the
    interpreter: the same op named, the same words."""

    def beyond(y, calls):  # noqa: ANN001, ANN202
        for i in rv.prange(len(y)):
            with rv.safe():
                calls[i + 1] += 1

    messages = []
    for backend in ENGINES:
        with pytest.raises(rv.ExecutionError) as error:
            rv.reversible(beyond, backend=backend)(np.zeros(2), np.zeros(2, np.int64))
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert "'memref.load' in @beyond: index 2 is out of bounds for axis 0 with size 2" in messages[0]


def test_a_complex_count_in_a_parallel_loop_is_refused_in_native_code():
    """No atomic addition updates a complex element: native code (and so
    the GPU) refuses the count, naming it; the interpreter, which runs the
    iterations in order, counts."""

    def complex_count(y, calls):  # noqa: ANN001, ANN202
        for i in rv.prange(len(y)):
            with rv.safe():
                calls[0] += 1j

    assert rv.reversible(complex_count, backend="interpreter")(np.zeros(3), np.zeros(1, complex))[1][0] == 3j
    with pytest.raises(rv.NativeCompilationError, match="no atomic addition updates a complex number"):
        rv.reversible(complex_count, backend="native")(np.zeros(3), np.zeros(1, complex))


def _self_count(y, calls):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        with rv.safe():
            calls[0] += calls[0]


def _cross_count(y, calls):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        with rv.safe():
            calls[1] += calls[0]
        with rv.safe():
            calls[0] += 1


@pytest.mark.parametrize(("counting", "in_order"), [(_self_count, [32, 1]), (_cross_count, [6, 16])])
def test_a_count_whose_step_reads_a_counted_array_is_refused_at_the_count(counting, in_order):  # noqa: ANN001
    """The step's read and the atomic addition are two steps: iterations
    that read the same old value lose each other's counts (two threads
    doubling 1 gave 3).  Native code and the GPU refuse the count, naming
    the array read; the interpreter runs the iterations in order."""
    line = counting.__code__.co_firstlineno + 3
    message = (
        rf"'memref.store' at .*test_gpu_prange_rules.py:{line}:13: a count in a parallel loop whose step reads "
        r"calls, which the loop counts into: another iteration may count between the read and the addition"
    )
    args = [np.zeros(5), np.ones(2, np.int64)]
    np.testing.assert_array_equal(rv.reversible(counting, backend="interpreter")(*_copies(args))[1], in_order)
    with pytest.raises(rv.NativeCompilationError, match=message):
        rv.reversible(counting, backend="native")(*_copies(args))
    with pytest.raises(rv.NativeCompilationError, match=message):
        rv.cuda.kernel(rv.reversible(counting)).compile(*_copies(args))


def test_a_bool_count_in_a_parallel_loop_is_refused_in_the_users_words():
    """No atomic addition updates a bool: the GPU refused the count in
    ``memref.atomic_rmw``'s words; native code and ``rv.cuda`` refuse it at
    the count, saying which counter to use."""

    def flag(y, calls):  # noqa: ANN001, ANN202
        for i in rv.prange(len(y)):
            with rv.safe():
                calls[0] += 1

    line = flag.__code__.co_firstlineno + 3
    message = (
        rf"'memref.store' at .*test_gpu_prange_rules.py:{line}:17: a count into bool elements in a parallel loop, "
        r"whose iterations may count at once: no atomic addition updates a bool; count into an int32 or int64 counter"
    )
    assert rv.reversible(flag, backend="interpreter")(np.zeros(3), np.zeros(1, np.bool_))[1][0]
    with pytest.raises(rv.NativeCompilationError, match=message):
        rv.reversible(flag, backend="native")(np.zeros(3), np.zeros(1, np.bool_))
    with pytest.raises(rv.NativeCompilationError, match=message):
        rv.cuda.kernel(rv.reversible(flag)).compile(np.zeros(3), np.zeros(1, np.bool_))


STORE_IN_PARALLEL_SAFE = """
rev.func @k(%y: memref<?xi64>, %c: memref<1xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    rev.safe {
      %v = arith.index_cast %i : index to i64
      memref.store %v, %c[%c0] : memref<1xi64>
    }
    rev.yield
  }
  rev.return %n : index
}
"""


def test_a_store_in_a_parallel_safe_region_that_is_no_count_is_refused_at_the_store():
    """Written IR may store anything into a counter; in a parallel loop only
    a count has an atomic form, so the lowering names the store."""
    module = parse_module(STORE_IN_PARALLEL_SAFE, "store.mlir")
    with pytest.raises(Exception, match=r"'memref.store' at store.mlir:9:7: a store in rev.safe inside a parallel"):
        RevLowerToStdPass().apply(make_context(), module)


def _complex_shared_read(y, x):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        y[i] += x[0] * x[i]


def test_the_gradient_of_a_complex_array_read_at_a_shared_index_is_a_located_error_on_every_path():
    """The gradient of ``x[0]`` is a shared accumulation into ``x``'s
    gradient, which no atomic addition makes for complex elements: it was an
    internal error on the CPU and a bare ParallelViolation in IR terms from
    ``rv.cuda``; both are the adjoint's refusal at the statement, in the
    array's name.  The forward loop runs."""
    f = rv.reversible(_complex_shared_read)
    line = _complex_shared_read.__code__.co_firstlineno + 2
    y, x = np.zeros(4, complex), np.arange(1.0, 5.0) + 0.5j
    np.testing.assert_allclose(f(y.copy(), x)[0], x[0] * x)
    message = (
        rf"'rev.take' at .*test_gpu_prange_rules.py:{line}:9 cannot be differentiated: x has complex elements and "
        r"the parallel loop reads x\[…\] at an index other than its own, .* a shared sum holds floats or integers; "
        r"pass x's real and imaginary parts as two float arrays"
    )
    with pytest.raises(AdjointError, match=message):
        rv.vjp(f, y.copy(), x)[1](np.ones(4, complex), None)
    with pytest.raises(AdjointError, match=message):
        rv.cuda.kernel(rv.adjoint(f)).compile(y.copy(), x, np.ones(4, complex), np.zeros(4, complex))


@rv.reversible
def _reads_two(out, x):  # noqa: ANN001, ANN202
    out += x[0] * x[1]


@rv.reversible
def _reads_none(out, x):  # noqa: ANN001, ANN202
    out += 1.0


def _complex_shared_call(y, x):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        _reads_two(y[i], x)


def _complex_unread_call(y, x):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        _reads_none(y[i], x)


def test_the_gradient_of_a_complex_array_a_callee_reads_in_a_parallel_loop_is_the_same_located_error():
    """Passed whole to a callee that reads ``x[0]``, a complex ``x``'s
    gradient is the same shared sum: the derived adjoint did not verify (an
    internal error, a bare ParallelViolation from ``rv.cuda``).  It is the
    adjoint's refusal at the call, on both engines and from ``rv.cuda``; a
    callee that does not read ``x`` differentiates, its gradient zero."""
    line = _complex_shared_call.__code__.co_firstlineno + 2
    message = (
        rf"'rev.call' at .*test_gpu_prange_rules.py:{line}:9 cannot be differentiated: x has complex elements and "
        r"the parallel loop reads x\[…\] at an index other than its own"
    )
    y, x = np.zeros(4, complex), np.arange(1.0, 5.0) + 0.5j
    for backend in ENGINES:
        f = rv.reversible(_complex_shared_call, backend=backend)
        np.testing.assert_allclose(f(y.copy(), x)[0], np.full(4, x[0] * x[1]))
        with pytest.raises(AdjointError, match=message):
            rv.vjp(f, y.copy(), x)[1](np.ones(4, complex), None)
        unread = rv.reversible(_complex_unread_call, backend=backend)
        np.testing.assert_array_equal(rv.vjp(unread, y.copy(), x)[1](np.ones(4, complex), None)[1], np.zeros(4))
    with pytest.raises(AdjointError, match=message):
        rv.cuda.kernel(rv.adjoint(rv.reversible(_complex_shared_call))).compile(
            y.copy(), x, np.ones(4, complex), np.zeros(4, complex)
        )


def _own_array(y, x, a, n):  # noqa: ANN001, ANN202
    t = rv.zeros(n)
    t[0] += a
    for i in rv.prange(len(y)):
        y[i] += t[0] * x[i]
    t[0] -= a
    rv.free(t)


@pytest.mark.parametrize("n", [3, 100])
def test_a_kernel_writes_its_own_ancilla_array_before_and_after_its_loop(n: int):
    """``rv.zeros(n)`` is put in the frame or on the heap by its size (an
    ``scf.if``), and the kernel rule saw only a bare allocation as the
    function's own: the zeroing and ``t[0] += a`` were refused as writes of
    a shared array.  Each thread writes its own copy; the emulated kernel
    is the CPU function, and ptxas takes the PTX."""
    f = rv.reversible(_own_array)
    x = np.arange(1.0, 8.0)
    args = [np.zeros(7), x, 0.5, n]
    np.testing.assert_array_equal(f(*_copies(args))[0], 0.5 * x)
    kernel = rv.cuda.kernel(f)
    got = _copies(args)
    slot = EmulatedKernel(*kernel.rev_module(*got)).launch(got, 2, 3)
    assert not slot.any()
    np.testing.assert_array_equal(got[0], 0.5 * x)
    assert toolkit.emit_cubin(kernel.compile(*args).ptx)[:4] == b"\x7fELF"


def _own_sum(y, x, n):  # noqa: ANN001, ANN202
    t = rv.zeros(n)
    for i in rv.prange(len(y)):
        t[0] += x[i]
        y[i] += x[i]
    rv.free(t)


def _own_private(y, x, n):  # noqa: ANN001, ANN202
    t = rv.zeros(n)
    for i in rv.prange(len(y)):
        t[i] += x[i]
        y[i] += 2.0 * t[i]
        t[i] -= x[i]
    rv.free(t)


@pytest.mark.parametrize("n", [3, 100])
def test_a_kernel_whose_loop_sums_into_its_own_array_is_refused_and_a_private_use_runs(n: int):
    """A kernel's own array is one copy per thread: a sum of the loop's
    iterations into one of its elements held only the thread's
    iterations, so ``t[0]`` was 0 at the free on a 1×1 grid and 1.0 on a
    1×2 grid.  It is refused at the sum, in the source's words; an array
    each iteration uses at its own index runs at either grid as on the
    CPU."""
    x = np.array([1.0, -1.0])
    args = [np.zeros(2), x, n]
    assert rv.reversible(_own_sum)(*_copies(args))[0].tolist() == [1.0, -1.0]
    line = _own_sum.__code__.co_firstlineno + 3
    message = (
        rf"test_gpu_prange_rules.py:{line}:9: _own_sum is not a kernel: "
        r"its rv.prange loop adds into t\[…\] at an element its iterations share, but t is allocated outside the "
        r"loop, one copy per thread"
    )
    with pytest.raises(rv.ReversibleSyntaxError, match=message):
        rv.cuda.kernel(rv.reversible(_own_sum)).compile(*_copies(args))
    private = rv.reversible(_own_private)
    np.testing.assert_array_equal(private(*_copies(args))[0], 2.0 * x)
    for blocks, threads in [(1, 1), (1, 2)]:
        got = _copies(args)
        assert not EmulatedKernel(*rv.cuda.kernel(private).rev_module(*got)).launch(got, blocks, threads).any()
        np.testing.assert_array_equal(got[0], 2.0 * x)
    got = _copies(args)
    with pytest.raises(
        Exception,
        match=r"'memref.atomic_rmw' at .*: @_own_sum is not a kernel function: its parallel "
        r"loop sums into an element of %t allocated outside the loop",
    ):
        EmulatedKernel(*rv.cuda.kernel(rv.reversible(_own_sum)).rev_module(*got))


def test_a_kernel_that_writes_an_argument_before_its_loop_is_still_refused():
    """Only the thread's own allocations: an argument written outside the
    loop is written by every thread."""

    def shared_first(y, x):  # noqa: ANN001, ANN202
        y[0] += 1.0
        for i in rv.prange(len(y)):
            y[i] += x[i]

    with pytest.raises(rv.ReversibleSyntaxError, match="shared_first is not a kernel: it writes an array outside"):
        rv.cuda.kernel(rv.reversible(shared_first)).compile(np.zeros(3), np.ones(3))


@rv.reversible
def _add_scaled(out, x, a):  # noqa: ANN001, ANN202
    out += x * a


def _direct(y, x, a):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        _add_scaled(y[i], x[i], a)


def _copied(y, x, a):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        b = rv.ancilla(a)
        _add_scaled(y[i], x[i], b)
        rv.free(b, a)


def test_an_outer_scalar_passed_to_a_call_in_a_parallel_loop_is_refused_at_the_call_with_the_copy_to_make():
    """A call gives each scalar argument back as a new value, an update of
    the outer ``a`` however the callee treats it: the refusal stood at the
    loop, saying the loop updates ``a``.  It stands at the call and names
    the copy that the loop may pass instead, which runs, and whose gradient
    is the shared sum of the closed form."""
    line = _direct.__code__.co_firstlineno + 2
    with pytest.raises(rv.ReversibleSyntaxError) as error:
        rv.reversible(_direct)(np.zeros(3), np.ones(3), 2.0)
    assert error.value.lineno == line and error.value.offset == 9
    assert "a parallel loop passes 'a', defined outside it, to _add_scaled, which gives it back as a new value" in str(
        error.value
    )
    assert "b = rv.ancilla(a), then rv.free(b, a) after the call" in str(error.value)
    copied = rv.reversible(_copied)
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_array_equal(copied(np.zeros(3), x, 2.0)[0], 2.0 * x)
    g_y, g_x, g_a = rv.vjp(copied, np.zeros(3), x, 2.0)[1](np.ones(3), None, None)
    np.testing.assert_array_equal(g_x, [2.0, 2.0, 2.0])
    assert g_a == x.sum()


@rv.reversible
def _changes(out, a):  # noqa: ANN001, ANN202
    a += 1.0
    out += a


def _changer(y, a):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        _changes(y[i], a)


def _keeper_in_if(y, x, a):  # noqa: ANN001, ANN202
    for i in rv.prange(len(y)):
        if x[i] > 0:
            _add_scaled(y[i], x[i], a)


def test_the_copy_is_advised_only_for_a_callee_that_gives_the_scalar_back_and_an_if_keeps_the_call_located():
    """For a callee that changes the scalar, the copy the refusal advised
    was freed holding another value at run time: the refusal says the
    callee changes it.  A call in an ``if`` of the body was refused at the
    loop, as "a parallel loop updates 'a'"; it is refused at the call."""
    with pytest.raises(rv.ReversibleSyntaxError) as error:
        rv.reversible(_changer)(np.zeros(3), 2.0)
    assert (error.value.lineno, error.value.offset) == (_changer.__code__.co_firstlineno + 2, 9)
    assert "_changes changes it, so a copy made in the loop would be freed holding another value" in str(error.value)
    assert "rv.ancilla" not in str(error.value)
    with pytest.raises(rv.ReversibleSyntaxError) as error:
        rv.reversible(_keeper_in_if)(np.zeros(3), np.ones(3), 2.0)
    assert (error.value.lineno, error.value.offset) == (_keeper_in_if.__code__.co_firstlineno + 3, 13)
    assert "passes 'a', defined outside it, to _add_scaled" in str(error.value)
    assert str(error.value).endswith("b = rv.ancilla(a), then rv.free(b, a) after the call)")


def _par_step(y, x, s):  # noqa: ANN001, ANN202
    for i in rv.prange(1, 8, s):
        y[i] += x[i] * x[i]


@pytest.mark.parametrize("s", [-3, 0])
def test_a_run_time_prange_step_that_is_not_positive_is_the_same_located_error_on_every_engine(s: int):
    """A parallel loop keeps its step, which a kernel's launch reads, so a
    step known only at run time must be positive: the refusal was the loop
    op's, in IR terms (``'rev.for' … step must be positive``), and a zero
    step did not say Python's ``range``'s words either.  It is an
    assertion at the ``rv.prange`` call, both directions, the same words on
    the interpreter, in native code and in the emulated kernel (a check
    before the loop: no element)."""
    line = _par_step.__code__.co_firstlineno + 1
    expected = f"test_gpu_prange_rules.py:{line}:14: 'cf.assert' in @_par_step: rv.prange() step must be positive"
    messages = []
    for backend in ENGINES:
        with pytest.raises(rv.ExecutionError) as error:
            rv.reversible(_par_step, backend=backend)(np.zeros(9), np.ones(9), s)
        messages.append(str(error.value))
    f = rv.reversible(_par_step)
    got = [np.zeros(9), np.ones(9), s]
    kernel = EmulatedKernel(*rv.cuda.kernel(f).rev_module(*got))
    slot = kernel.launch(got, 2, 3)
    with pytest.raises(rv.ExecutionError) as error:
        raise_gpu_error(kernel.check_table, slot)
    messages.append(str(error.value))
    assert all(expected in m for m in messages), messages
    assert "element" not in messages[2]
    with pytest.raises(rv.ExecutionError, match="step must be positive where it is known only at run time"):
        (~f)(np.zeros(9), np.ones(9), s)


@pytest.mark.parametrize("s", [1, 2, 3])
def test_a_positive_run_time_prange_step_runs_as_range_on_every_engine(s: int):
    """The check leaves a positive step's loop as it was: the elements of
    ``range(1, 8, s)`` forward, ``~f`` giving the inputs back, and the
    gradient ``2 * x[i]`` at those elements alone, on both engines and in
    the emulated forward and adjoint kernels (the launch reads the
    bounds)."""
    x = np.arange(1.0, 10.0)
    picked = list(range(1, 8, s))
    expected = np.zeros(9)
    expected[picked] = x[picked] ** 2
    gradient = np.zeros(9)
    gradient[picked] = 2.0 * x[picked]
    for backend in ENGINES:
        f = rv.reversible(_par_step, backend=backend)
        y = f(np.zeros(9), x, s)[0]
        np.testing.assert_array_equal(y, expected)
        np.testing.assert_array_equal((~f)(y, x, s)[0], np.zeros(9))
        np.testing.assert_array_equal(rv.vjp(f, np.zeros(9), x, s)[1](np.ones(9), None, None)[1], gradient)
    f = rv.reversible(_par_step)
    got = [np.zeros(9), x.copy(), s]
    assert not EmulatedKernel(*rv.cuda.kernel(f).rev_module(*got)).launch(got, 2, 3).any()
    np.testing.assert_array_equal(got[0], expected)
    adjoint = rv.adjoint(f)
    got = [expected.copy(), x.copy(), s, np.ones(9), np.zeros(9)]
    assert not EmulatedKernel(*rv.cuda.kernel(adjoint).rev_module(*got)).launch(got, 2, 3).any()
    np.testing.assert_array_equal(got[4], gradient)
    np.testing.assert_array_equal(got[0], np.zeros(9))


@rv.reversible
def _recursive(y, a, n):  # noqa: ANN001, ANN202
    if n > 0:
        for i in rv.prange(len(y)):
            _recursive(y, a, n - 1)


def test_the_copy_is_advised_on_its_condition_for_a_callee_not_yet_built():
    """A function calling itself in its parallel loop is not built when the
    call is refused, so whether it gives the scalar back is not known: the
    advice says on which condition the copy runs."""
    with pytest.raises(rv.ReversibleSyntaxError) as error:
        _recursive(np.zeros(2), 1.0, 1)
    assert (error.value.text or "").strip() == "_recursive(y, a, n - 1)" and error.value.offset == 13
    assert str(error.value).endswith(
        "(b = rv.ancilla(a), then rv.free(b, a) after the call), where _recursive gives it back unchanged"
    )
