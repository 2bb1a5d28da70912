"""Integers into booleans (decision 150): an update (``b += n``, ``b -= n``,
``b ^= n``) or a store into a bool array keeps the integer's low bit, as it
wraps into every other width; an explicit conversion (a condition,
``rv.ancilla(n, bool)``) is Python's truth, a comparison with zero.  Both
engines agree on every input."""

import numpy as np
import pytest

import revmlir as rv

BACKENDS = ["native", "interpreter"]
INTEGERS = [0, 1, 2, 3, -2, 2**32, 2**32 + 2, 2**32 + 1]


def updated(a, s, x, n):
    a += n
    s -= n
    x ^= n


def stored(flags, n):
    flags[0] = n
    truth = False
    if n:
        truth = True
    return truth


def converted(y, n):
    b = rv.ancilla(n, bool)
    y += b
    rv.free(b, n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_update_of_a_boolean_by_an_integer_keeps_its_low_bit(backend: str):
    function = rv.reversible(updated, backend=backend)
    for n in INTEGERS:
        odd = bool(n & 1)
        assert function(False, True, True, n) == (odd, not odd, not odd, n), n


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_store_keeps_the_low_bit_and_a_condition_compares_with_zero(backend: str):
    function = rv.ordinary(stored, backend=backend)
    for n in INTEGERS:
        flags = np.ones(1, dtype=bool)
        assert function(flags, n) is (n != 0), n
        assert bool(flags[0]) is bool(n & 1), n


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ancilla_converted_to_a_boolean_is_the_integers_truth(backend: str):
    function = rv.reversible(converted, backend=backend)
    for n in INTEGERS:
        assert function(0, n) == (int(n != 0), n), n
