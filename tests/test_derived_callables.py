"""What chains of derived callables mean (docs/python.md, "Gradients"):
``~~f`` is ``f``, ``~rv.adjoint(f)`` runs ``@f.adj`` backwards
(from Python and inside reversible code, on both engines), and the adjoint
of an inverse or of an adjoint is refused naming the user's function."""

import numpy as np
import pytest

import revmlir as rv
from revmlir.errors import InversionError
from revmlir.frontend.base.errors import ReversibleSyntaxError

BACKENDS = ("interpreter", "native")


def square_into(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def square(y, x):
        for i in range(len(x)):
            y[i] += x[i] * x[i]

    return square


def forgetful(backend: str) -> rv.ReversibleFunction:
    """A function whose adjoint drops the gradient its ancilla has at its
    birth, so that the adjoint has no inverse (decision 28)."""

    @rv.reversible(backend=backend)
    def cubed(y, x):
        a = rv.ancilla(x * x)
        y += a * x
        rv.free(a, x * x)

    return cubed


@pytest.mark.parametrize("backend", BACKENDS)
def test_double_inverse_is_the_function(backend):
    f = square_into(backend)
    assert ~~f is f and (~f).inverse is f and f.inverse.inverse is f
    y, x = (~~f)(np.zeros(2), np.array([1.0, 2.0]))
    assert y.tolist() == [1.0, 4.0] and x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_inverse_adjoint_returns_what_the_adjoint_took(backend):
    f = square_into(backend)
    adj = rv.adjoint(f)
    assert ~~adj == adj and adj.inverse == ~adj and (~adj).inverse == adj
    assert isinstance(adj, rv.AdjointFunction) and isinstance(~adj, rv.InverseAdjoint)
    assert isinstance(~f, rv.InverseFunction) and "InverseAdjoint" in rv.__all__
    y, x = f(np.zeros(2), np.array([1.0, 2.0]))
    g_y, g_x = np.array([1.0, 3.0]), np.zeros(2)
    after = adj(y.copy(), x.copy(), g_y.copy(), g_x.copy())
    assert [a.tolist() for a in after] == [[0.0, 0.0], [1.0, 2.0], [1.0, 3.0], [2.0, 12.0]]
    back = (~adj)(*after)
    assert [a.tolist() for a in back] == [[1.0, 4.0], [1.0, 2.0], [1.0, 3.0], [0.0, 0.0]]
    with pytest.raises(TypeError, match=r"^~rv.adjoint\(square\) takes 2 argument\(s\) and 2 gradient\(s\), got 3"):
        (~adj)(*after[:3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_inverse_adjoint_with_lanes(backend):
    f = square_into(backend)
    adj = rv.adjoint(f, lanes=2)
    y, x = f(np.zeros(1), np.array([3.0]))
    after = adj(y, x, np.ones(1), np.zeros(1), np.full(1, 2.0), np.zeros(1))
    assert [a.tolist() for a in after] == [[0.0], [3.0], [1.0], [6.0], [2.0], [12.0]]
    back = (~adj)(*after)
    assert [a.tolist() for a in back] == [[9.0], [3.0], [1.0], [0.0], [2.0], [0.0]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_inverse_of_a_forgetful_adjoint_names_the_function(backend):
    f = forgetful(backend)
    with pytest.raises(InversionError) as error:
        (~rv.adjoint(f))(0.0, 2.0, 1.0, 12.0)
    message = str(error.value)
    assert message.startswith("~rv.adjoint(cubed): the adjoint of cubed has no inverse: 'anc.free' at ")
    assert "test_derived_callables.py:31:9" in message
    assert message.endswith("to get cubed's outputs back, call cubed on its inputs")
    assert rv.adjoint(f)(8.0, 2.0, 1.0, 0.0) == (0.0, 2.0, 1.0, 12.0)  # forward, it runs


@pytest.mark.parametrize("backend", BACKENDS)
def test_chains_inside_reversible_code(backend):
    @rv.reversible(backend=backend)
    def f(y, x):
        y += x * x

    adj = rv.adjoint(f)
    unadj = ~adj

    @rv.reversible(backend=backend)
    def chains(y, x, g_y, g_x):
        adj(y, x, g_y, g_x)  # (0, 2, 1, 4)
        (~adj)(y, x, g_y, g_x)  # (4, 2, 1, 0)
        (~rv.adjoint(f))(y, x, g_y, g_x)  # (8, 2, 1, -4)
        adj.inverse(y, x, g_y, g_x)  # (12, 2, 1, -8)
        (~~rv.adjoint(f))(y, x, g_y, g_x)  # (8, 2, 1, -4)
        unadj(y, x, g_y, g_x)  # (12, 2, 1, -8)
        (~~f)(y, x)  # 16
        (~f).inverse(y, x)  # 20

    assert chains(4.0, 2.0, 1.0, 0.0) == (20.0, 2.0, 1.0, -8.0)
    assert (~chains)(20.0, 2.0, 1.0, -8.0) == (4.0, 2.0, 1.0, 0.0)
    assert chains.mlir(4.0, 2.0, 1.0, 0.0).count("rev.uncall @f.adj") == 4


def test_adjoint_of_a_derived_form_is_refused():
    f = square_into("interpreter")
    with pytest.raises(TypeError, match=r"^rv.adjoint\(~square\): the adjoint of an inverse is not supported; "):
        rv.adjoint(~f)
    second = r"an adjoint's adjoint is not supported; for second derivatives of square use rv.hvp\(square, …\)"
    with pytest.raises(TypeError, match=r"^rv.adjoint\(rv.adjoint\(square\)\): " + second):
        rv.adjoint(rv.adjoint(f))
    with pytest.raises(TypeError, match=r"^rv.adjoint\(~rv.adjoint\(square\)\): " + second):
        rv.adjoint(~rv.adjoint(f))
    # what takes no derived callable shows it as it is written, not as nested dataclasses
    with pytest.raises(TypeError, match=r"its inverse ~f or rv.adjoint\(f\), got <~rv.adjoint\(square\)>$"):
        rv.cuda.kernel(~rv.adjoint(f))
    with pytest.raises(TypeError, match=r"or its inverse, got <rv.adjoint\(square, lanes=2\)>$"):
        rv.gradient(rv.adjoint(f, lanes=2), (np.zeros(1), np.ones(1)))


def test_adjoint_of_an_adjoint_is_refused_inside_reversible_code():
    f = square_into("interpreter")
    adj = rv.adjoint(f)

    @rv.reversible
    def second(y, x, g_y, g_x):
        rv.adjoint(adj)(y, x, g_y, g_x)

    with pytest.raises(ReversibleSyntaxError, match=r"test_derived_callables.py:\d+:20: rv.adjoint\(rv.adjoint\(sq"):
        second(np.zeros(1), np.ones(1), np.ones(1), np.zeros(1))


def test_inline_derived_forms_are_refused_as_rv_adjoint_refuses_them():
    """Written in place, a chain is the callable Python makes of it, and
    is refused in ``rv.adjoint``'s words, at the argument."""
    f = square_into("interpreter")

    @rv.reversible
    def of_an_inverse(y, x, g_y, g_x):
        rv.adjoint(~f)(y, x, g_y, g_x)

    @rv.reversible
    def of_an_adjoint(y, x, g_y, g_x):
        rv.adjoint(rv.adjoint(f))(y, x, g_y, g_x)

    @rv.reversible
    def inverted(y, x, g_y, g_x):
        (~rv.adjoint(~f))(y, x, g_y, g_x)

    inverse = r"rv.adjoint\(~square\): the adjoint of an inverse is not supported; differentiate ~square with"
    second = r"rv.adjoint\(rv.adjoint\(square\)\): an adjoint's adjoint is not supported; for second derivatives"
    args = (np.zeros(1), np.ones(1), np.ones(1), np.zeros(1))
    for function, column, message in [
        (of_an_inverse, 20, inverse),
        (of_an_adjoint, 20, second),
        (inverted, 22, inverse),
    ]:
        with pytest.raises(ReversibleSyntaxError, match=rf"test_derived_callables.py:\d+:{column}: {message}"):
            function(*args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_inverse_adjoint_is_named_as_written(backend):
    f, h = square_into(backend), forgetful(backend)
    adj = rv.adjoint(f, lanes=2)
    assert adj.__name__ == "rv.adjoint(square, lanes=2)" and (~adj).__name__ == "~rv.adjoint(square, lanes=2)"
    with pytest.raises(TypeError, match=r"^~rv.adjoint\(square, lanes=2\) takes 2 argument\(s\) and 2 gradient"):
        (~adj)(np.zeros(1), np.ones(1), np.ones(1))
    with pytest.raises(InversionError, match=r"^~rv.adjoint\(cubed, lanes=2\): the adjoint of cubed has no inverse"):
        (~rv.adjoint(h, lanes=2))(0.0, 2.0, 1.0, 12.0, 1.0, 12.0)

    @rv.reversible(backend=backend)
    def short(y, x, g_y):
        (~rv.adjoint(f))(y, x, g_y)

    @rv.reversible(backend=backend)
    def short_lanes(y, x, g_y):
        (~rv.adjoint(f, lanes=2))(y, x, g_y)

    for function, shown in [(short, r"~rv.adjoint\(square\)"), (short_lanes, r"~rv.adjoint\(square, lanes=2\)")]:
        with pytest.raises(ReversibleSyntaxError, match=rf":\d+:9: {shown} takes 2 argument\(s\) \(y, x\) and then"):
            function(np.zeros(1), np.ones(1), np.ones(1))
