"""What every way of running a reversible module has in common: finding the
function, checking and converting the arguments, and returning every argument,
updated.  The interpreter implements ``_execute``; native code, whose calls
are often shorter than their marshalling, builds its own callers."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FuncOp
from revmlir.errors import ExecutionError
from revmlir.parsing import verify_module
from revmlir.runtime.arguments import ArgumentTypeError, ArgumentValueError, converter, from_runtime
from revmlir.semantics import is_state_type, written_arguments

Caller = Callable[[Sequence[Any]], tuple[Any, ...]]
"""Runs one function (or its inverse) on a sequence of arguments and returns
every argument, updated."""


def verify_given(module: ModuleOp, verified: bool) -> None:
    """Verify a module an engine is given (``verify_module``: the located
    ``VerifyException`` or ``ReversibilityViolation`` of its first broken
    rule), unless its maker ``verified`` it: the frontend, ``rev-run`` and
    the derived programs verify theirs as they build them, and a module of
    a thousand functions takes a second.  Either engine ran an unverified
    module as it was: ``y += y`` computed ``2y``, which no inverse undoes,
    and a call of a missing function was a ``KeyError``."""
    if not verified:
        verify_module(module)


class Backend:
    module: ModuleOp

    def function(self, name: str) -> FuncOp:
        for op in self.module.ops:
            if isinstance(op, FuncOp) and op.sym_name.data == name:
                return op
        known = ", ".join("@" + op.sym_name.data for op in self.module.ops if isinstance(op, FuncOp))
        raise ExecutionError(f"no rev.func named @{name} (module has: {known or 'none'})")

    def call(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run ``@name`` forward; returns every argument, updated."""
        return self.caller(name, backward=False)(args)

    def uncall(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run ``@name`` backward (its inverse); returns every argument."""
        return self.caller(name, backward=True)(args)

    def caller(self, name: str, backward: bool) -> Caller:
        """The ``Caller`` of ``@name`` or its inverse, built once: everything
        that depends only on the signature is worked out then, and callers
        on hot paths keep hold of it."""
        callers: dict[tuple[str, bool], Caller] = self.__dict__.setdefault("_callers", {})
        if (found := callers.get((name, backward))) is None:
            found = callers[(name, backward)] = self._caller(self.function(name), backward)
        return found

    def _caller(self, func: FuncOp, backward: bool) -> Caller:
        """Check and convert every argument, ``_execute``, bring the scalars
        back."""
        name = func.sym_name.data
        types = list(func.function_type.inputs.data)
        converters = [converter(t, name, i) for i, t in enumerate(types)]
        scalar = [is_state_type(t) for t in types]
        arrays = [i for i, t in enumerate(types) if isinstance(t, MemRefType)]
        stacks = [i for i, t in enumerate(types) if isinstance(t, StackType)]
        written = self._written[name]

        def run(args: Sequence[Any]) -> tuple[Any, ...]:
            if len(args) != len(types):
                raise TypeError(f"@{name} takes {len(types)} argument(s), got {len(args)}")
            values = [convert(a) for convert, a in zip(converters, args)]
            for i in arrays:
                if i in written and not values[i].flags.writeable:
                    raise read_only_error(name, i, func.body.block.args[i].name_hint)
            if (pair := overlapping([(i, values[i]) for i in arrays], written)) is not None:
                raise overlap_error(name, pair)
            if len(stacks) > 1 and (pair := same_stack([(i, values[i]) for i in stacks])) is not None:
                raise same_stack_error(name, pair)
            outputs = iter(self._execute(func, values, backward))
            return tuple(
                from_runtime(t, next(outputs)) if is_scalar else value
                for t, is_scalar, value in zip(types, scalar, values)
            )

        return run

    @functools.cached_property
    def _written(self) -> dict[str, frozenset[int]]:
        """Per function, the positions of the arrays a run (either way) may
        write, which no other argument may overlap."""
        return written_arguments(self.module)

    def _execute(self, func: FuncOp, values: list[Any], backward: bool) -> Sequence[Any]:
        """Run ``func`` (or its inverse) on canonical values; return the final
        values of its scalar arguments, in order (arrays are updated in place).
        Backends that marshal arguments themselves override ``_caller``
        instead."""
        raise NotImplementedError()


def overlapping(arrays: Sequence[tuple[int, np.ndarray]], written: Collection[int]) -> tuple[int, int] | None:
    """The positions of the first two of ``arrays`` that share memory where
    the function writes one (its position is in ``written``).  Native code
    takes arrays as ``noalias`` pointers (``revmlir.lowering.aliasing``),
    which a write through one seen through another breaks, and a reversible
    update ``y[i] += x[i]`` has no inverse when ``y`` is ``x``; every
    backend checks, so that a program means the same on each."""
    for a, (i, first) in enumerate(arrays):
        for j, second in arrays[a + 1 :]:
            if (i in written or j in written) and np.shares_memory(first, second):
                return min(i, j), max(i, j)
    return None


def overlap_error(name: str, pair: tuple[int, int]) -> ArgumentValueError:
    return ArgumentValueError(
        "arguments {0} and {1} of {function} share memory, and {function} "
        "writes one of them; pass distinct arrays (a copy of one)",
        name,
        pair,
    )


def same_stack(stacks: Sequence[tuple[int, list[Any]]]) -> tuple[int, int] | None:
    """The positions of the first two of ``stacks`` that are one list.  A
    function updates each stack argument in place as a stack of its own:
    native code copies each into a buffer and copies each back when the
    call ends (the last copy wins, and what was pushed onto the other is
    lost), the interpreter pushes and pops the one list through both; so
    every backend refuses one list passed twice, as it refuses arrays that
    share memory."""
    first: dict[int, int] = {}
    for i, stack in stacks:
        if (j := first.setdefault(id(stack), i)) != i:
            return j, i
    return None


def same_stack_error(name: str, pair: tuple[int, int]) -> ValueError:
    return ArgumentValueError(
        "arguments {0} and {1} of {function} are the same stack, and {function} "
        "updates each in place; pass distinct stacks (a copy of one)",
        name,
        pair,
    )


def not_contiguous_error(name: str, index: int) -> TypeError:
    """A strided array where compiled code takes a pointer and sizes (native
    code, a kernel's copy of a numpy array): it would read the wrong
    elements."""
    return ArgumentTypeError(
        "argument {0} of {function} must be a C-contiguous array (use numpy.ascontiguousarray)", name, (index,)
    )


def read_only_error(name: str, index: int, parameter: str | None) -> ValueError:
    """An array the function writes that numpy marks read-only (a view of
    ``bytes``, a read-only ``mmap``): writing it would change an immutable
    object or fault."""
    return ArgumentValueError(
        "argument {0} of {function} is a read-only array, and {function} writes it; "
        "pass a writeable copy (numpy.array(...))",
        name,
        (index,),
        labels=[f"#{index}" + (f" ({parameter})" if parameter else "")],
    )
