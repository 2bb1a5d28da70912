"""Calls of native code from Python reuse their argument storage and error
slot (a frame per call in flight): calls from several threads, calls
re-entered while an argument converts and calls after a failed check must
each see only their own arguments."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import revmlir as rv
from revmlir import InvertibilityError


@rv.reversible
def weighted_sum(y, x, w):
    for i in range(len(x)):
        y += x[i] * w


@rv.reversible
def shift(x, a):
    for i in range(len(x)):
        x[i] += a


def test_calls_from_several_threads_keep_their_arguments_apart():
    def run(k: int) -> tuple[float, float]:
        x = np.full(20_000, float(k))
        found = [weighted_sum(0.0, x, 0.5)[0] for _ in range(20)]
        return min(found), max(found)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, range(16)))
    assert results == [(10_000.0 * k, 10_000.0 * k) for k in range(16)]


def test_a_call_re_entered_while_an_argument_converts_gets_its_own_frame():
    spec = weighted_sum.specialization_for(0.0, np.ones(3), 2.0)
    assert spec.native is not None

    class Weight:  # a number to the converters, which call float()
        def __float__(self) -> float:
            return spec.native.call(spec.name, 0.0, np.ones(3), 2.0)[0]  # 6.0

    y, _, w = spec.native.call(spec.name, 1.0, np.arange(3.0), Weight())
    assert (y, w) == (1.0 + 3.0 * 6.0, 6.0)


def test_a_failed_check_leaves_nothing_for_the_next_call():
    @rv.reversible
    def unchecked_free(y, x):
        t = rv.ancilla(x)
        y += t
        rv.free(t, 0.0)

    with pytest.raises(InvertibilityError):
        unchecked_free(0.0, 1.0)
    assert unchecked_free(5.0, 0.0) == (5.0, 0.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a,
        lambda a: a.view(type("Sub", (np.ndarray,), {})),
        lambda a: np.frombuffer(a.tobytes()),  # read-only
        lambda a: a[:0],  # empty
    ],
    ids=["array", "subclass", "read-only", "empty"],
)
def test_arrays_of_every_kind_are_passed_by_pointer(make):
    x = make(np.arange(4.0))
    expected = float(np.sum(x)) * 0.5
    assert weighted_sum(0.0, x, 0.5)[0] == expected
    if x.flags.writeable:
        shift(x, 2.0)
        assert x.tolist() == [v + 2.0 for v in range(len(x))]
