"""Copying and pickling decorated functions (``revmlir.frontend.base.by_name``):
a copy is the function itself, pickle sends a function by its name, and a
process that loads it compiles it again; a specialization is refused."""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import numpy as np
import pytest

import revmlir as rv
from pickled_functions import call, cube, scaled_sum


@pytest.mark.parametrize("function", [scaled_sum, cube], ids=["reversible", "ordinary"])
def test_a_copy_of_a_function_is_the_function(function: object):
    assert copy.copy(function) is function
    assert copy.deepcopy(function) is function
    assert copy.deepcopy([function, function]) == [function, function]


def test_derived_forms_copy_and_pickle_through_their_function():
    for derived in (~scaled_sum, rv.adjoint(scaled_sum), rv.adjoint(scaled_sum, lanes=2)):
        assert copy.deepcopy(derived) == derived
        assert pickle.loads(pickle.dumps(derived)) == derived
    inverse = pickle.loads(pickle.dumps(~scaled_sum))
    assert inverse(6.0, np.array([1.0, 2.0]), 2.0)[0] == 0.0


@pytest.mark.parametrize("function", [scaled_sum, cube], ids=["reversible", "ordinary"])
def test_pickle_sends_a_function_by_its_name(function: object):
    data = pickle.dumps(function)
    assert b"pickled_functions" in data and len(data) < 100
    assert pickle.loads(data) is function


def test_a_function_without_a_module_level_name_is_refused_by_name():
    def make() -> rv.ReversibleFunction:
        @rv.reversible
        def inner(y):
            y += 1.0

        return inner

    with pytest.raises(
        pickle.PicklingError,
        match=r"<reversible function inner> cannot be pickled: .*"
        r"test_pickling\.test_a_function_without_a_module_level_name_is_refused_by_name\.<locals>\.make"
        r"\.<locals>\.inner does not name it \(define it at the top level of a module",
    ):
        pickle.dumps(make())


def _plain(y):
    y += 1.0


alias = rv.reversible(_plain)


def test_a_function_whose_name_finds_another_object_is_refused_saying_so():
    """``alias = rv.reversible(_plain)``: the qualified name is that of the
    plain function, which the loading process would find instead."""
    with pytest.raises(
        pickle.PicklingError,
        match=r"<reversible function _plain> cannot be pickled: .*test_pickling\._plain names another "
        r"object, <function _plain at .*> \(decorate the def itself",
    ):
        pickle.dumps(alias)


@rv.reversible
def doubled(y, a):
    for i in rv.prange(len(a)):
        y[i] += a[i] * 2.0


def test_a_kernel_copies_and_pickles_alike_before_and_after_its_first_compile():
    """``rv.cuda.kernel(f)`` is sent as the call that makes it: compiled
    (which made a specialization, which is not pickled) or not, it loads
    and copies to the kernel itself."""
    k = rv.cuda.kernel(doubled, max_registers=64)
    for compile in (False, True):
        if compile:
            k.compile(np.zeros(4), np.ones(4))
        assert pickle.loads(pickle.dumps(k)) is k
        assert copy.copy(k) is k and copy.deepcopy(k) is k


def test_a_specialization_copies_to_itself_and_is_not_pickled():
    spec = scaled_sum.specialization_for(0.0, np.ones(2), 1.0)
    assert copy.copy(spec) is spec and copy.deepcopy(spec) is spec
    with pytest.raises(TypeError, match="a specialization of scaled_sum cannot be pickled: pickle the function"):
        pickle.dumps(spec)


def test_a_spawned_worker_receives_and_compiles_the_functions():
    """``multiprocessing`` with the spawn start method: the worker imports
    the functions' module, compiles them, and returns what they return
    here."""
    a = np.array([1.0, 2.0, 3.0])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        forward = pool.apply(call, (scaled_sum, 0.5, a, 2.0))
        backward = pool.apply(call, (~scaled_sum, 12.5, a, 2.0))
        cubed = pool.apply(call, (cube, 1.5))
    assert forward[0] == scaled_sum(0.5, a, 2.0)[0] == 12.5
    assert backward[0] == 0.5
    assert cubed == cube(1.5) == 3.375
