"""First calls of new eDSL functions from several threads at once: each
thread builds or waits for the specialization it runs, and every call gets
its own right result (the frontend's compilers share a callee's
specialization across its callers' modules, which concurrent builds tore:
an op inserted into two blocks)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

import revmlir as rv


def programs() -> tuple[rv.ReversibleFunction, rv.ReversibleFunction]:
    """A callee and a caller, new (no specialization built yet)."""

    @rv.reversible(backend="native")
    def scaled(y, x):
        y += 3.0 * x

    @rv.reversible(backend="native")
    def twice(y, x):
        scaled(y, x)
        scaled(y, x)

    return scaled, twice


def at_once(threads: int, work: Callable[[int], object]) -> list[object]:
    """``work(k)`` in thread ``k`` of ``threads``, released together: what
    each returned, or the exception it raised (a torn build), which the
    caller's assertion names."""
    start = threading.Barrier(threads)
    results: list[object] = [None] * threads

    def run(k: int) -> None:
        start.wait()
        try:
            results[k] = work(k)
        except Exception as error:
            results[k] = error

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


@pytest.mark.parametrize("round", range(3))
def test_first_calls_from_several_threads_build_each_specialization_once(switching_often, round):
    scaled, twice = programs()
    builds: list[object] = []
    build = twice.specialize

    def counted(types):
        builds.append(types)
        return build(types)

    twice.specialize = counted  # type: ignore[method-assign]
    threads = 6
    # a float and an int x: two specializations, each built by three threads at once
    results = at_once(threads, lambda k: twice(1.0, float(k) if k % 2 else k))
    assert results == [(1 + 6.0 * k, k) for k in range(threads)]
    assert len(twice._by_python_types) == 2
    assert len(builds) == 2, builds  # each specialization built once, the other threads waited for it


def ordinary_programs(count: int) -> list[rv.OrdinaryFunction]:
    """``count`` new ``@rv.ordinary`` functions that overwrite an array
    element in a loop: their derivatives keep a tape stack, whose lowering
    builds ops with xDSL's ``ImplicitBuilder``."""

    def program(k: float) -> rv.OrdinaryFunction:
        @rv.ordinary
        def overwriting(x, w):
            x[0] = x[0] * w + k
            return x[0] * x[0]

        return overwriting

    return [program(float(k)) for k in range(count)]


def test_first_gradients_from_several_threads_lower_their_tape_stacks_at_once(monkeypatch):
    """Eight threads compile the gradients of eight functions at once, each
    lowering its tape stack with ``ImplicitBuilder``, which swaps xDSL's op
    initialiser for the whole process: unserialised, two threads' builders
    inserted one op twice ("Can't add to a block an operation already
    attached to a block") in some of them."""
    monkeypatch.setenv("REVMLIR_CACHE", "0")  # every compile lowers
    threads = 8
    functions, x = ordinary_programs(threads), np.array([1.0, 2.0])
    for k, result in enumerate(at_once(threads, lambda k: rv.gradient(functions[k], (x.copy(), 0.5)))):
        assert isinstance(result, tuple), result
        # (w x₀ + k)²: 2 w (w x₀ + k) for x₀, 2 x₀ (w x₀ + k) for w
        np.testing.assert_allclose(result[0], [2 * 0.5 * (0.5 + k), 0.0])
        assert result[1] == 2 * (0.5 + k)
