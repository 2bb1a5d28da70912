"""What the names a compiled function reads stay bound to
(``revmlir.frontend.base.bindings``): kept only by a compile that succeeds,
so a helper or callee fixed after an error is read again, and kept on the
function, so a recursive function is freed with its specialisations."""

import gc
import weakref

import pytest

import revmlir as rv

BACKENDS = ("interpreter", "native")


def broken(x):
    return x + "oops"


def doubled(x):
    return x * 2.0


def add_broken(y, x):
    y += x * "bad"


def add_tripled(y, x):
    y += x * 3.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_helper_fixed_after_a_failed_compile_is_read_again(backend):
    helper = broken

    @rv.reversible(backend=backend)
    def f(y, x):
        y += helper(x)

    with pytest.raises(rv.ReversibleSyntaxError, match=r"test_bound_globals.py:17:16: ''oops'' is not a supported"):
        f(0.0, 1.0)
    helper = doubled  # fixed, as in a notebook, and called again
    assert f(0.0, 1.0) == (2.0, 1.0)
    helper = broken  # once compiled, the helper the compile read stays
    assert f(0.0, 2) == (4.0, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_callee_rebound_after_a_failed_compile_is_read_again(backend):
    callee = rv.reversible(add_broken, backend=backend)

    @rv.reversible(backend=backend)
    def caller(y, x):
        callee(y, x)

    with pytest.raises(rv.ReversibleSyntaxError, match=r"test_bound_globals.py:25:14: ''bad'' is not a supported"):
        caller(0.0, 1.0)
    callee = rv.reversible(add_tripled, backend=backend)
    assert caller(0.0, 1.0) == (3.0, 1.0)
    assert (~caller)(3.0, 1.0) == (0.0, 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ordinary_function_with_a_fixed_helper(backend):
    helper = broken

    @rv.ordinary(backend=backend)
    def f(x):
        return helper(x)

    with pytest.raises(rv.ReversibleSyntaxError, match=r"test_bound_globals.py:17:16: "):
        f(1.0)
    helper = doubled
    assert f(1.0) == 2.0 and rv.gradient(f, (1.0,)) == (2.0,)


def recursive(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def countdown(y, x, n: int):
        if n > 0:
            y += x
            countdown(y, x, n - 1)

    return countdown


def mutually_recursive(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def even(y, x, n: int):
        if n > 0:
            y += x
            odd(y, x, n - 1)

    @rv.reversible(backend=backend)
    def odd(y, x, n: int):
        if n > 0:
            y -= 0.5 * x
            even(y, x, n - 1)

    return even


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("make", "after"), [(recursive, 3.0), (mutually_recursive, 1.5)])
def test_a_recursive_function_is_freed_with_its_specialisations(backend, make, after):
    """Its own name is among the bindings it keeps: a table keyed by the
    function would hold it for ever through them."""
    f = make(backend)
    assert f(0.0, 1.0, 3) == (after, 1.0, 3)
    assert (~f)(after, 1.0, 3) == (0.0, 1.0, 3)
    function, python_function = weakref.ref(f), weakref.ref(f.pyfunc)
    del f
    gc.collect()
    assert function() is None and python_function() is None


K_WRAPPED = 2.0


def scaled(x):
    return x * K_WRAPPED


def wrapper_of_scaled():
    """A function ``functools.wraps`` makes like ``scaled``, reading its
    own ``K_WRAPPED`` (10.0): ``wraps`` copies ``scaled.__dict__``, where
    ``scaled`` keeps its bindings."""
    import functools

    K_WRAPPED = 10.0

    @functools.wraps(scaled)
    def wrapped(x):
        return x * K_WRAPPED

    return wrapped


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wrapper_made_after_a_compile_reads_its_own_names(backend):
    @rv.reversible(backend=backend)
    def f(y, x):
        y += scaled(x)

    assert f(0.0, 1.0) == (2.0, 1.0)
    wrapped = wrapper_of_scaled()
    assert wrapped(1.0) == 10.0

    @rv.reversible(backend=backend)
    def g(y, x):
        y += wrapped(x)

    assert g(0.0, 1.0) == (10.0, 1.0)
    assert f(0.0, 1.0) == (2.0, 1.0)
