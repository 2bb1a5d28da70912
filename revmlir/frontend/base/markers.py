"""The names reversible Python uses for NiLang's statements.

They are recognised in the function's syntax tree (the frontend resolves the
called object and compares identities, so ``rv.ancilla`` and
``from revmlir import ancilla`` both work).  Called from ordinary Python they
raise, because they only have meaning inside ``@rv.reversible``.
"""

from __future__ import annotations

from typing import Any, NoReturn


class OutsideReversibleFunction(RuntimeError):
    pass


def _outside(name: str) -> NoReturn:
    raise OutsideReversibleFunction(f"rv.{name} only has a meaning inside a @rv.reversible function")


def prange(*bounds: int) -> range:
    """``for i in rv.prange(n):`` (or ``rv.prange(start, stop, step)``): a
    loop whose iterations are independent, a ``rev.for parallel``.  Each
    iteration writes only elements indexed by ``i`` (``y[i]``, ``a[i, k]``)
    and accumulates into shared ones (``g[j] += v``); the verifier checks it.
    Outside a reversible function it is ``range``."""
    return range(*bounds)


def checkpointed(steps: range, snapshots: int | None = None, split: str = "iterations") -> range:
    """Mark a time-stepping loop of an ``@rv.ordinary`` function,
    ``for t in rv.checkpointed(range(n), snapshots=k):``, so that its
    gradient keeps ``k`` snapshots of the loop state (Revolve, the initial
    state included) and recomputes the rest, instead of a tape of every
    step; without ``snapshots`` the schedule is binary bisection (about
    ``log₂ n`` snapshots).  ``split="work"`` splits at primitive steps, the
    iterations of the loop's inner loop, instead of at its own iterations:
    for bodies whose cost varies wildly (seed 001's adaptive grid).  In
    plain Python it is ``steps`` itself, so the undecorated function runs
    unchanged (docs/python.md, "Ordinary Python")."""
    return steps


def ancilla(value: Any, dtype: Any = None) -> Any:
    """``x = rv.ancilla(e)``: a new variable holding the known value ``e``
    (NiLang's ``x ← e``)."""
    _outside("ancilla")


def free(variable: Any, value: Any = None) -> None:
    """``rv.free(x, e)``: end an ancilla that must hold ``e`` (default: zero;
    NiLang's ``x → e``), or release an empty stack."""
    _outside("free")


def zeros(shape: Any, dtype: Any = float) -> Any:
    """``a = rv.zeros((m, n))``: a new ancilla array of zeros (NiLang's
    ``zeros``), ended by ``rv.free(a)`` (or a routine's uncomputation) when
    it holds zeros again.  Its gradient lives only as long as it does."""
    _outside("zeros")


def stack(dtype: Any) -> Any:
    """``s = rv.stack(float)``: a new, empty stack."""
    _outside("stack")


def push(stack: Any, variable: Any) -> None:
    """Move a variable onto a stack; the variable ends here."""
    _outside("push")


def pop(stack: Any) -> Any:
    """``x = rv.pop(s)``: a new variable from the top of a stack."""
    _outside("pop")


def copy_push(stack: Any, value: Any) -> None:
    """Push a copy of a value that stays live."""
    _outside("copy_push")


def copy_pop(stack: Any, value: Any) -> None:
    """Pop a value that must equal ``value`` (undoes ``copy_push``)."""
    _outside("copy_pop")


def view(place: Any, bijection: Any) -> Any:
    """``f(rv.view(x, g))``: pass ``x`` to ``f`` through the bijection ``g``,
    a ``@rv.reversible`` function of one argument (NiLang's ``x |> g``): the
    call runs ``g(x)``, then ``f``, then ``(~g)(x)``."""
    _outside("view")


def swap(a: Any, b: Any) -> None:
    """Exchange two variables or elements (also ``a, b = b, a``)."""
    _outside("swap")


def neg(x: Any) -> None:
    """``x = -x`` (also written ``x = -x``)."""
    _outside("neg")


def inc(x: Any) -> None:
    """``x += 1`` on integers."""
    _outside("inc")


def dec(x: Any) -> None:
    """``x -= 1`` on integers."""
    _outside("dec")


def rot(a: Any, b: Any, angle: Any) -> None:
    """Givens rotation of ``(a, b)`` by ``angle``."""
    _outside("rot")


def irot(a: Any, b: Any, angle: Any) -> None:
    """Rotation of ``(a, b)`` by ``-angle`` (undoes ``rot``)."""
    _outside("irot")


def cond(pre: Any, post: Any = None) -> bool:
    """``if rv.cond(pre, post):`` / ``while rv.cond(pre, post):`` — NiLang's
    ``(pre, post)`` conditions."""
    _outside("cond")


def ulog(x: Any) -> Any:
    """The log number equal to the positive real ``x``."""
    _outside("ulog")


def tropical(x: Any) -> Any:
    """The tropical number that is the real ``x``."""
    _outside("tropical")


class _Block:
    """A ``with`` block marker."""

    name = "block"

    def __enter__(self) -> _Block:
        _outside(self.name)

    def __exit__(self, *args: Any) -> None:
        return None


class routine(_Block):
    """``with rv.routine() as r: <compute>`` … ``~r``: compute–copy–uncompute
    (NiLang's ``@routine`` … ``~@routine``)."""

    name = "routine"


class inverse(_Block):
    """``with rv.inverse(): …`` runs the block backwards (NiLang's ``~begin … end``)."""

    name = "inverse"


class safe(_Block):
    """``with rv.safe(): print(…)`` — host side effects that touch no
    reversible state; ``rv.safe(when="both")`` also runs them backwards."""

    name = "safe"

    def __init__(self, when: str = "forward"):
        self.when = when


class nocheck(_Block):
    """``with rv.nocheck(): …`` turns run-time reversibility checks off in
    the block (NiLang's ``@invcheckoff``)."""

    name = "nocheck"
