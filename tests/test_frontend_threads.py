"""First calls of new eDSL functions from several threads at once: each
thread builds or waits for the specialization it runs, and every call gets
its own right result (the frontend's compilers share a callee's
specialization across its callers' modules, which concurrent builds tore:
an op inserted into two blocks)."""

from __future__ import annotations

import threading

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


@pytest.mark.parametrize("round", range(3))
def test_first_calls_from_several_threads_build_each_specialization_once(switching_often, round):
    scaled, twice = programs()
    builds: list[object] = []
    build = twice.specialize

    def counted(types):
        builds.append(types)
        return build(types)

    twice.specialize = counted  # type: ignore[method-assign]
    threads, start = 6, threading.Barrier(6)
    results: list[object] = [None] * threads

    def call(k: int) -> None:
        start.wait()
        try:
            # a float and an int x: two specializations, each built by three threads at once
            results[k] = twice(1.0, float(k) if k % 2 else k)
        except Exception as error:  # a torn build: the assertion below names it
            results[k] = error

    workers = [threading.Thread(target=call, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert results == [(1 + 6.0 * k, k) for k in range(threads)]
    assert len(twice._by_python_types) == 2
    assert len(builds) == 2, builds  # each specialization built once, the other threads waited for it
