"""What every compiled Python function shares: its specializations.

``@rv.reversible`` (``revmlir.frontend.reversible_code.functions``), ``~f`` and ``@rv.ordinary``
(``revmlir.frontend.ordinary_code.functions``) each compile once per argument-type
signature to a rev module, a ``Specialization``, which runs natively where
the backend allows and the program compiles, else on the interpreter; calls
find theirs by the arguments' Python types first.  The functions build on
this module, so it knows them only as ``Compiled``.
"""

from __future__ import annotations

import copy
import functools
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from types import FrameType
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException, VerifyException

from revmlir.collector import collector_paused, pausing
from revmlir.diagnostics import first_line
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FuncOp
from revmlir.frontend.base.by_name import Itself
from revmlir.frontend.base.expressions import TOO_DEEP
from revmlir.frontend.base.source import Source
from revmlir.frontend.base.types import RangeChecks, Stack, check_ranges, numpy_scalar_positions, range_checks
from revmlir.interpreter import RevInterpreter
from revmlir.interpreter.recursion import room_for_calls
from revmlir.inversion import invert_function
from revmlir.kept_answers import ir_unchanged
from revmlir.naming import inverse_name
from revmlir.parsing import verify_module
from revmlir.runtime.arguments import ArgumentProblem
from revmlir.runtime.backend import Backend, overlap_error, overlapping
from revmlir.runtime.native import Direction, NativeModule, check_inverse
from revmlir.runtime.numbers import FixedPoint
from revmlir.runtime.once import Once
from revmlir.semantics import Writes, argument_writes, gradient_type, kept_argument_writes, written_positions


class Compiled(Protocol):
    """What a specialization runs: a ``@rv.reversible`` function, its
    inverse ``~f`` or an ``@rv.ordinary`` function."""

    @property
    def __name__(self) -> str: ...

    @property
    def backend(self) -> str:
        """``"auto"``, ``"native"`` or ``"interpreter"`` (``BACKENDS``)."""
        ...

    @property
    def parameters(self) -> list[str]:
        """The Python parameter names, which messages name arguments by."""
        ...

    @property
    def source(self) -> Source:
        """The definition, where an error of the whole function is."""
        ...


@runtime_checkable
class Invertible(Compiled, Protocol):
    """A compiled function that runs backwards too: a ``@rv.reversible``
    function and its inverse, not an ``@rv.ordinary`` one."""

    @property
    def runs_backwards(self) -> Literal[True]:
        """What ``isinstance`` tells an invertible function by: an
        ``@rv.ordinary`` function has ``__invert__`` too, to refuse ``~f``
        with a message of its own."""
        ...

    def __invert__(self) -> Invertible:
        """The function run backwards: ``~f``, whose specialization is
        ``Specialization.inverse``."""
        ...


BACKENDS = ("auto", "native", "interpreter")


class _Typed(Protocol):
    @property
    def types(self) -> tuple[Attribute, ...]: ...


S = TypeVar("S", bound=_Typed)


def verify_derived(function: Compiled, what: str, module: ModuleOp) -> Mapping[str, tuple[Writes, ...]] | None:
    """Verify a module revmlir derived from ``function``'s verified code
    (``verify_module``), once, before an engine takes it as verified; the
    ``argument_writes`` the verification worked out, for the
    ``Specialization``.  ``function``'s own code verified when it was
    compiled, so a rejected derived module is revmlir's mistake: reported as
    an internal error at ``function``'s definition, not as the rule it
    breaks, which would read as the user's (it names values the user never
    wrote, at the op the derived code copies).  ``what`` names the derived
    code: "adjoint", "inverse"…"""
    try:
        with ir_unchanged():
            verify_module(module)
            return kept_argument_writes(module)
    except (VerifyException, PassFailedException) as error:  # the verifier's snapshot checks are a pass's
        source = function.source
        name = function.__name__
        raise source.error(
            source.tree,
            f"internal error: the {what} of {name}, which revmlir derives, does not verify: {first_line(error)}",
            "please report it",
        ) from error


class Specialization(Itself):
    """One compiled signature of a reversible function.

    It runs natively when the backend allows and the program compiles (the
    ``auto`` backend falls back to the interpreter for constructs native code
    does not support yet, such as ``print``, with an
    ``InterpreterFallbackWarning``); the interpreter is
    always available as ``.interpreter``, with its counters.
    """

    def __init__(
        self,
        function: Compiled,
        types: tuple[Attribute, ...],
        name: str,
        module: ModuleOp,
        writes: Mapping[str, tuple[Writes, ...]] | None = None,
    ):
        """``writes``: ``argument_writes(module)`` where the verification
        of ``module`` has worked it out already (``kept_argument_writes``),
        for ``written``."""
        self.function = function
        self.types = types
        self.name = name
        self.module = module
        self._writes = writes
        self.interpreter = RevInterpreter(module, verified=True)
        self._numpy_scalars = numpy_scalar_positions(types)
        self._forward: Once[NativeModule | None] = Once(self._compile_forward)
        self._backward: Once[Backend] = Once(self._run_backward)

    def __reduce__(self) -> tuple[Any, ...]:
        """Refused: a specialization is machine code and IR of this process,
        which the function it belongs to compiles again wherever it is
        called."""
        raise TypeError(
            f"a specialization of {self.function.__name__} cannot be pickled: pickle the function, "
            "whose first call in the loading process compiles it again"
        )

    @property
    def native(self) -> NativeModule | None:
        """The compile that holds ``f``'s entry point, or None where ``f``
        runs on the interpreter: the forward compile, or where ``~f`` ran
        first natively, the backward compile where its inverse runs ``f``,
        else that compile's rest (``_compile_forward``).  What runs ``f``,
        and what decides where derived programs run
        (``revmlir.frontend.base.derived``).  Compiled when first asked
        for, so that a specialization nothing runs natively (the reversible
        form of an ``@rv.ordinary`` function whose plain code runs its
        calls) compiles nothing; with ``auto``'s warning where it falls
        back, ``backend="native"`` raising, and decided once (``Once``):
        the same error at every call, no second compile.  Properties
        rather than ``cached_property``s: the warning points at the first
        frame outside revmlir, which would be ``functools``'."""
        return self._forward.get()

    def _compile_forward(self) -> NativeModule | None:
        """The functions: where ``~f`` has run natively, the backward
        compile where it holds ``f`` (its inverse runs it), else its rest,
        which joins its engine and calls the forward functions it holds (a
        routine's compute); else compiled alone."""
        if self.function.backend == "interpreter":
            return None
        if isinstance(backward := self._backward.computed(), NativeModule):
            return compile_natively(
                self.function, self.function.__name__, lambda: backward.holding(self.name, backward=False)
            )
        compile = functools.partial(NativeModule.compile, self.module, verified=True)
        return compile_natively(self.function, self.function.__name__, compile)

    @property
    def backward(self) -> Backend:
        """What runs ``~f``: native code where its inverse compiles,
        compiled at the first backward call, else the interpreter (with
        ``auto``'s warning; ``backend="native"`` raises).  The inverter's
        ``InversionError``, as the interpreter's, for a function without an
        inverse, as its call would raise.  Decided once, as ``native``."""
        return self._backward.get()

    def _run_backward(self) -> Backend:
        if self.function.backend == "interpreter":
            return self.interpreter
        compiled = compile_natively(self.function, f"the inverse of {self.function.__name__}", self._compile_backward)
        return self.interpreter if compiled is None else compiled

    def _compile_backward(self) -> NativeModule:
        """The inverses: where ``f`` has run natively, the forward compile,
        which compiles its rest now (``NativeModule.holding``) and whose
        caller of ``~f`` is then the one every backward call uses; else
        the inverses compiled alone, so that a first ``~f`` compiles no
        forward code, and runs natively where only the forward code does
        not compile.  The caller is built here, inside ``compile_natively``'s
        room to nest (the inverter recurses per operand)."""
        if (native := self._forward.computed()) is not None:
            native.caller(self.name, backward=True)
            return native
        check_inverse(self.module, self.name)
        return NativeModule.compile(self.module, direction=Direction.BACKWARD, verified=True)

    @functools.cached_property
    def inverse(self) -> Specialization:
        """The specialization of ``~f``: a module holding ``@f.inv`` as a
        function of its own, run forward, so that its derived functions are
        built (``@f.inv.adj``, ``@f.inv.tan``…) and called as any other
        function's."""
        function = self.function
        if not isinstance(function, Invertible):
            raise TypeError(f"{function.__name__} is not reversible: it has no inverse")
        module = self.module.clone()
        primal = next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == self.name)
        module.body.block.insert_op_after(invert_function(primal), primal)
        writes = verify_derived(function, "inverse", module)
        return Specialization(~function, self.types, inverse_name(self.name), module, writes)

    @functools.cached_property
    def written(self) -> tuple[bool, ...]:
        """Per argument: whether a run may change it (scalars are returned,
        not changed; an array is changed when some op writes it, here or in
        a function called with it, a stack always)."""
        writes = written_positions((argument_writes(self.module) if self._writes is None else self._writes)[self.name])
        return tuple(
            isinstance(t, StackType) or (isinstance(t, MemRefType) and i in writes) for i, t in enumerate(self.types)
        )

    @functools.cached_property
    def carrying(self) -> tuple[int, ...]:
        """The arguments that carry derivatives (floats, complex and log
        numbers, arrays and stacks of them): derived functions (``@f.adj``,
        ``@f.tan``) take one gradient or tangent for each."""
        return tuple(i for i, t in enumerate(self.types) if gradient_type(t) is not None)

    def private_copies(self, args: Sequence[Any]) -> list[Any]:
        """``args`` with copies of the arrays and stacks a run changes, so
        that running on them leaves the caller's data alone, and of strided
        views it only reads, which native code takes contiguous (a
        derivative, unlike a call, writes nothing back into them).  Arrays
        that share memory where the run writes one are refused, as the call
        refuses them: the copies would make them distinct, and the
        derivative that of a call ``f`` does not make."""
        arrays = [(i, a) for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        if len(arrays) > 1 and (pair := overlapping(arrays, self._written_positions)) is not None:
            raise named_arguments(self.function, overlap_error(self.name, pair))
        copies = list(args)
        for i in self._written_positions:
            value = args[i]
            # ndarray.copy: a third of copy.copy's dispatch, on every derivative call
            copies[i] = value.copy() if type(value) is np.ndarray else copy.copy(value)
        for i, value in enumerate(copies):
            if type(value) is np.ndarray and not value.flags.c_contiguous:
                copies[i] = np.ascontiguousarray(value)
        return copies

    @functools.cached_property
    def _written_positions(self) -> tuple[int, ...]:
        return tuple(i for i, changed in enumerate(self.written) if changed)

    @property
    def backend(self) -> str:
        """The engine of the forward direction, ``f``'s (compiled if it
        was not): ``"native"`` or ``"interpreter"``.  ``~f`` may run on the
        other: ``backward`` is its engine, a ``NativeModule`` or the
        interpreter."""
        return "native" if self.native is not None else "interpreter"

    def text(self) -> str:
        stream = StringIO()
        Printer(stream=stream).print_op(self.module)
        return stream.getvalue()

    def run(self, args: Sequence[Any], backward: bool, backend: str | None = None) -> Any:
        """Run forward or backward; ``backend="interpreter"`` forces the
        interpreter (for its counters), otherwise native code when compiled."""
        if backend == "interpreter":
            runner: Backend = self.interpreter
        elif backward:
            runner = self._backward.get()  # ``backward``, one call fewer on every call
        else:
            runner = self.interpreter if (native := self._forward.get()) is None else native
        try:
            results = runner.caller(self.name, backward)(args)
        except ArgumentProblem as error:
            raise named_arguments(self.function, error) from None
        if self._numpy_scalars:  # both engines return Python numbers
            typed = list(results)
            for i, scalar in self._numpy_scalars:
                typed[i] = scalar(typed[i])
            results = tuple(typed)
        return results[0] if len(results) == 1 else results


def bound_by_position(
    who: str, parameters: Sequence[str], args: tuple[Any, ...], keywords: Mapping[str, Any]
) -> tuple[Any, ...]:
    """The arguments of a call by position, those given by name put in
    their parameter's place, as Python binds a call of the function: a
    compiled function, its inverse and kernel, and its JAX and PyTorch
    bindings take them so (an adjoint takes none: ``AdjointFunction.bound``).  A name with no parameter, one given
    twice, or one after a parameter left out is a ``TypeError`` that
    ``who`` (``f()``) says, with the parameters."""
    if not keywords:
        return args
    bound, named = list(args), dict(keywords)
    for parameter in parameters[len(bound) :]:
        if parameter not in named:
            break
        bound.append(named.pop(parameter))
    for parameter in named:
        if parameter in parameters[: len(args)]:
            problem = f"got argument '{parameter}' twice, by position and by name"
        elif parameter in parameters:
            problem = f"is missing argument '{parameters[len(bound)]}'"
        else:
            problem = f"has no argument '{parameter}'"
        raise TypeError(f"{who} {problem} ({', '.join(parameters)})")
    return tuple(bound)


def named_arguments(
    function: Any, error: ArgumentProblem, beyond: Callable[[int], str] = lambda i: f"#{i}"
) -> Exception:
    """``error`` about the arguments of a call of ``function`` said as the
    call's author knows them: the function by its name and each argument
    by its parameter's (not ``argument #1 of @f``, the IR's positions and
    symbol), an argument past the parameters as ``beyond`` says it (a
    derived function's gradients).  Raised from an ``except`` around the
    call, which costs nothing until it raises (a context manager entered
    on every call costs about a microsecond)."""
    parameters = function.parameters
    names = [repr(parameters[i]) if i < len(parameters) else beyond(i) for i in error.indices]
    kind = ValueError if isinstance(error, ValueError) else TypeError
    return kind(error.say(function.__name__, names))


class NativeCompilationError(Exception):
    """``backend="native"`` was requested for a program native code cannot run."""


class InterpreterFallbackWarning(RuntimeWarning):
    """A function with the default ``backend="auto"`` runs on the
    interpreter because native code cannot run part of it.  The results are
    the same, but a loop runs thousands of times slower, which users should
    hear about rather than discover.  ``backend="interpreter"`` says it is
    intended (no warning); ``backend="native"`` makes it an error."""


@pausing
def compile_natively(function: Compiled, what: str, compile: Callable[[], NativeModule]) -> NativeModule | None:
    """What ``compile`` compiles (``what``), or None where ``function``'s
    ``auto`` backend falls back to the interpreter (with an
    ``InterpreterFallbackWarning`` naming ``what`` and the reason);
    ``backend="native"`` raises instead."""
    try:
        with room_to_nest(function, what):
            return compile()
    except PassFailedException as reason:
        if function.backend == "native":
            raise NativeCompilationError(f"{what} cannot run natively: {reason}") from None
        warnings.warn(
            f"{what} runs on the interpreter, much slower than native code: {reason} "
            "(backend='interpreter' says this is intended, backend='native' makes it an error)",
            InterpreterFallbackWarning,
            stacklevel=_first_frame_outside_package(),
        )
        return None


@contextmanager
def room_to_nest(function: Compiled, what: str) -> Iterator[None]:
    """Python's recursion limit raised (``room_for_calls``) while ``what``,
    a function derived from ``function`` (its inverse, adjoint, tangent…),
    is built and compiled: the passes recurse per operand as the frontend
    recurses per level of an expression, so what compiles forward derives
    too.  What still exhausts the room is ``TOO_DEEP`` at the definition,
    never a ``RecursionError`` (docs/design.md, decision 144)."""
    with room_for_calls():
        try:
            yield
        except RecursionError:
            message, hint = TOO_DEEP
            raise function.source.error(function.source.tree, f"{what}: {message}", hint) from None


def _first_frame_outside_package() -> int:
    """The ``stacklevel`` of the user's call, so a warning points at the line
    that called the function rather than at revmlir's internals (Python 3.11
    has no ``skip_file_prefixes``).  The package's directory ends in a
    separator, so a user's file beside it (``revmlir_scratch.py``) is not
    taken for one of its own."""
    package = str(Path(__file__).resolve().parents[2] / "_")[:-1]  # revmlir/
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


class Specializing(Protocol[S]):
    """A compiled Python function: ``@rv.reversible`` or ``@rv.ordinary``."""

    __name__: str
    _by_python_types: dict[tuple[Any, ...], tuple[S, RangeChecks]]

    @property
    def parameters(self) -> list[str]: ...

    def signature_of(self, args: Sequence[Any]) -> tuple[Attribute, ...]: ...

    def specialize(self, types: Sequence[Attribute]) -> S: ...


BUILDING = threading.RLock()
"""Held while a specialization is built: one at a time in a process.  The
frontend's compilers share state across functions (a callee's
specialization, built once, is inserted into each caller's module), and
first calls of new functions from several threads at once tore it (an op
inserted into two blocks); re-entrant, as building one specialization
builds its callees'.  Calls of built specializations take no lock."""


def matched_specialization(function: Specializing[S], args: Sequence[Any]) -> S:
    """The specialization of ``function`` that runs ``args``.  Building xDSL
    types for every call costs more than running small programs, so calls
    are first matched on the arguments' Python types; the numbers among
    them that their parameters' types may not hold (``range_checks``) are
    then checked against those types' ranges (nothing to do in calls
    without them)."""
    key = python_types(args)
    if (found := function._by_python_types.get(key)) is None:
        with BUILDING, collector_paused():
            if (found := function._by_python_types.get(key)) is None:
                spec = function.specialize(function.signature_of(args))
                found = function._by_python_types[key] = (spec, range_checks(spec.types, key))
    spec, ranges = found
    if ranges:
        check_ranges(function.__name__, function.parameters, spec.types, ranges, args)
    return spec


def python_types(args: Sequence[Any]) -> tuple[Any, ...]:
    """What calls are matched on first: each argument's Python type, and
    what else selects its revmlir type: an array's dtype and rank, a stack's
    element type, a fixed-point number's format."""
    return tuple([_python_type(a) for a in args])


def _python_type(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype, value.ndim)
    if isinstance(value, Stack):
        return (Stack, value.dtype)
    if isinstance(value, FixedPoint):
        return (FixedPoint, value.format)
    return type(value)
