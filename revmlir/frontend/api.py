"""``@rv.reversible``: Python functions written in reversible Python.

The decorator reads the function's syntax tree (it never traces), checks its
structure at decoration time, and compiles it to rev IR on first call, once per
argument-type signature.  Calling runs the compiled program (on the reference
interpreter) and returns every argument, updated; ``~f`` runs it backwards.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import inspect
import sys
import textwrap
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute
from xdsl.printer import Printer

from revmlir.frontend.errors import ReversibleSyntaxError
from revmlir.frontend.stack_values import Stack
from revmlir.frontend.structs import Layout, StructArgument, flatten_tree, is_struct_class
from revmlir.frontend.types import (
    KNOWN_ANNOTATIONS,
    IntRanges,
    check_int_ranges,
    describe_type,
    int_ranges,
    is_known_annotation,
    type_of_annotation,
    type_of_value,
)
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FuncOp
from revmlir.interpreter import RevInterpreter
from revmlir.runtime.native import NativeModule
from revmlir.semantics import written_arguments

BACKENDS = ("auto", "native", "interpreter")


class _Typed(Protocol):
    @property
    def types(self) -> tuple[Attribute, ...]: ...


S = TypeVar("S", bound=_Typed)


@dataclass(frozen=True)
class Source:
    tree: ast.FunctionDef
    filename: str
    line_offset: int
    column_offset: int

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> ReversibleSyntaxError:
        """A diagnostic at ``node``, located in the user's file."""
        return ReversibleSyntaxError(
            message,
            self.filename,
            getattr(node, "lineno", 1) + self.line_offset,
            getattr(node, "col_offset", 0) + self.column_offset + 1,
            hint,
        )

    @property
    def parameters(self) -> list[str]:
        return [a.arg for a in self.tree.args.args]

    def check_count(self, args: Sequence[Any]) -> None:
        """A ``TypeError`` like Python's when ``args`` does not fit."""
        params = self.parameters
        if len(args) != len(params):
            raise TypeError(
                f"{self.tree.name}() takes {len(params)} argument(s) "
                f"({', '.join(params)}), got {len(args)}"
            )

    def unsupported_signature(self) -> str | None:
        """What the parameter list uses that compiled functions do not support."""
        args = self.tree.args
        if args.vararg or args.kwarg:
            return "*args and **kwargs"
        if args.kwonlyargs or args.posonlyargs:
            return "keyword-only and positional-only parameters"
        if args.defaults:
            return "default values"
        if self.tree.decorator_list[1:]:
            return "other decorators"
        return None


def read_source(pyfunc: Callable[..., Any], decorator: str = "@rv.reversible") -> Source:
    """The syntax tree of ``pyfunc`` and where it is, for ``decorator``'s
    diagnostics."""
    if not inspect.isfunction(pyfunc) or pyfunc.__name__ == "<lambda>":
        kind = "a lambda" if inspect.isfunction(pyfunc) else type(pyfunc).__name__
        raise TypeError(f"{decorator} decorates functions defined with def, not {kind}")
    try:
        lines, first = inspect.getsourcelines(pyfunc)
    except (OSError, TypeError) as error:
        raise TypeError(
            f"{decorator} needs the source of {pyfunc.__name__}: {error}"
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip())
    module = ast.parse(dedented)
    definition = module.body[0]
    if not isinstance(definition, ast.FunctionDef):
        raise TypeError(f"{decorator} decorates functions")
    filename = inspect.getsourcefile(pyfunc) or "<unknown>"
    source = Source(definition, filename, first - 1, indent)
    _check_names(source)
    _check_annotations(source, pyfunc, decorator)
    return source


def _check_annotations(source: Source, pyfunc: Callable[..., Any], decorator: str) -> None:
    """A located error for a parameter annotation revmlir does not know,
    which it would otherwise ignore: ``y: Fixed43`` must not quietly
    compile ``y`` as a float.  Annotations written as strings (or under
    ``from __future__ import annotations``) are evaluated in the function's
    globals, as ``typing.get_type_hints`` does."""
    hints = resolved_annotations(pyfunc)
    for arg in source.tree.args.args:
        if arg.annotation is None or arg.arg not in hints:
            continue
        annotation = hints[arg.arg]
        if (annotation is Stack or is_struct_class(annotation)) and decorator == "@rv.reversible":
            continue  # the argument gives the element or field types (structs.Layout checks the class)
        if annotation is None or not is_known_annotation(annotation):
            node = arg.annotation
            written = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ast.unparse(node)
            raise source.error(
                arg.annotation,
                f"unknown annotation '{written}' for parameter '{arg.arg}'",
                f"annotate with {KNOWN_ANNOTATIONS}, or leave the parameter unannotated",
            )


def resolved_annotations(pyfunc: Callable[..., Any]) -> dict[str, Any]:
    """The parameter annotations of ``pyfunc``, those written as strings (or
    under ``from __future__ import annotations``) evaluated in its globals,
    as ``typing.get_type_hints`` does; None for one that does not evaluate."""
    hints = dict(pyfunc.__annotations__)
    for name, annotation in hints.items():
        if isinstance(annotation, str):
            try:
                hints[name] = eval(annotation, pyfunc.__globals__)  # noqa: S307 - the user's own annotation
            except Exception:
                hints[name] = None
    return hints


def _check_names(source: Source) -> None:
    """A located error for the first name compiled code cannot carry: the
    function, its parameters and its variables name MLIR symbols and values
    (and native symbols), which are ASCII."""
    for node in ast.walk(source.tree):
        if isinstance(node, ast.FunctionDef):
            name = node.name
        elif isinstance(node, ast.arg):
            name = node.arg
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            name = node.id
        else:
            continue
        if not name.isascii():
            raise source.error(
                node,
                f"'{name}' is not an ASCII name, and compiled functions and their variables "
                "need ASCII names",
                "rename it (for instance 'alpha' for 'α')",
            )


class ReversibleFunction:
    """A function written in reversible Python; see ``docs/python.md``."""

    __revmlir_reversible__ = True

    def __init__(
        self, pyfunc: Callable[..., Any], *, checks: bool = True, backend: str = "auto"
    ):
        functools.update_wrapper(self, pyfunc)
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}")
        self.pyfunc = pyfunc
        self.checks = checks
        self.backend = backend
        self.source = read_source(pyfunc)
        self.hints = resolved_annotations(pyfunc)
        self._struct_parameters = any(is_struct_class(h) for h in self.hints.values())
        self._check_signature()
        from revmlir.frontend.compiler import check_structure

        check_structure(self.source.tree, self._error)
        self._specializations: dict[tuple[Attribute, ...], Specialization] = {}
        self._by_python_types: dict[tuple[Any, ...], tuple[Specialization, IntRanges]] = {}
        self._flattened: dict[Layout, ReversibleFunction] = {}

    # -- signature ------------------------------------------------------------

    @property
    def parameters(self) -> list[str]:
        return self.source.parameters

    def _check_signature(self) -> None:
        if problem := self.source.unsupported_signature():
            raise self._error(self.source.tree, f"reversible functions do not support {problem}")

    def _error(self, node: ast.AST, message: str, hint: str | None = None) -> ReversibleSyntaxError:
        return self.source.error(node, message, hint)

    def annotated_types(self) -> list[Attribute | None]:
        return [type_of_annotation(self.hints.get(p)) for p in self.parameters]

    def signature_of(self, args: Sequence[Any]) -> tuple[Attribute, ...]:
        params = self.parameters
        self.source.check_count(args)
        types: list[Attribute] = []
        for name, declared, value in zip(params, self.annotated_types(), args):
            found = type_of_value(value)
            if found is None:
                if is_struct_class(type(value)):
                    raise StructArgument(
                        f"{self.__name__}(): argument '{name}' has unsupported type {type(value).__name__} "
                        "(struct arguments are taken by calls, f(…) and ~f(…); pass the fields here)"
                    )
                hint = " (pass a numpy array, or an rv.Stack for a stack)" if isinstance(value, list | tuple) else ""
                if isinstance(value, np.ndarray):
                    hint = f" (arrays of {value.dtype} are not supported)"
                raise TypeError(
                    f"{self.__name__}(): argument '{name}' has unsupported type "
                    f"{type(value).__name__}{hint}"
                )
            if declared is not None and declared != found:
                if not _converts(found, declared):
                    raise TypeError(
                        f"{self.__name__}(): argument '{name}' is declared "
                        f"{describe_type(declared)}, got {describe_type(found)}"
                    )
                found = declared
            types.append(found)
        return tuple(types)

    # -- compiling ----------------------------------------------------------------

    def specialize(self, types: Sequence[Attribute]) -> Specialization:
        """The compiled program for one argument-type signature (cached)."""
        key = tuple(types)
        if (spec := self._specializations.get(key)) is None:
            from revmlir.frontend.compiler import ModuleCompiler

            compiler = ModuleCompiler()
            name = compiler.request(self, key)
            spec = Specialization(self, key, name, compiler.finish())
            self._specializations[key] = spec
        return spec

    def specialization_for(self, *args: Any) -> Specialization:
        return matched_specialization(self, args)

    def mlir(self, *args: Any) -> str:
        """The rev IR for these arguments (or the annotated signature)."""
        if args:
            spec = self.specialization_for(*args)
        else:
            declared = self.annotated_types()
            if any(t is None for t in declared):
                if not self._specializations:
                    raise TypeError(
                        f"{self.__name__}.mlir() needs example arguments, type "
                        "annotations on every parameter, or a previous call"
                    )
                spec = next(iter(self._specializations.values()))
            else:
                spec = self.specialize(declared)  # type: ignore[arg-type]
        return spec.text()

    # -- running --------------------------------------------------------------

    def __call__(self, *args: Any) -> Any:
        return self.run(args, backward=False)

    def run(self, args: Sequence[Any], backward: bool) -> Any:
        """Run forward or backward; struct arguments go in field by field
        and come back as new instances (``revmlir.frontend.structs``)."""
        if not self._struct_parameters:
            try:
                return self.specialization_for(*args).run(args, backward=backward)
            except StructArgument:
                pass
        if (layout := Layout.of(self.parameters, self.hints, args)) is None:
            return self.specialization_for(*args).run(args, backward=backward)
        self.source.check_count(args)
        flat_args = layout.flatten(args)
        results = self.flattened(layout).specialization_for(*flat_args).run(flat_args, backward=backward)
        updated = layout.rebuild(args, (results,) if len(flat_args) == 1 else results)
        return updated[0] if len(updated) == 1 else updated

    def flattened(self, layout: Layout) -> ReversibleFunction:
        """This function taking the fields of its struct arguments in
        ``layout`` as parameters of their own (cached)."""
        if (flat := self._flattened.get(layout)) is None:
            flat = copy.copy(self)
            flat.source = dataclasses.replace(self.source, tree=flatten_tree(self.source.tree, layout, self._error))
            flat.hints = {**self.hints, **layout.field_hints(self.parameters)}
            flat._specializations, flat._by_python_types, flat._flattened = {}, {}, {}
            self._flattened[layout] = flat
        return flat

    @property
    def inverse(self) -> InverseFunction:
        return InverseFunction(self)

    def __invert__(self) -> InverseFunction:
        return self.inverse

    def __repr__(self) -> str:
        return f"<reversible function {self.__name__}>"


@dataclass(frozen=True)
class InverseFunction:
    """``~f``: runs ``f`` backwards.  It is differentiated like ``f``
    (``rv.gradient(~f, …)``, ``rv.jvp``, …): its derived functions are
    those of ``@f.inv`` (``Specialization.inverse``)."""

    function: ReversibleFunction

    def __call__(self, *args: Any) -> Any:
        return self.function.run(args, backward=True)

    def __invert__(self) -> ReversibleFunction:
        return self.function

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return "~" + self.function.__name__

    @property
    def backend(self) -> str:
        return self.function.backend

    @property
    def parameters(self) -> list[str]:
        return self.function.parameters

    def specialization_for(self, *args: Any) -> Specialization:
        """The specialization of ``~f`` for ``args`` (``f``'s outputs)."""
        return self.function.specialization_for(*args).inverse

    def mlir(self, *args: Any) -> str:
        return self.function.mlir(*args)


@dataclass(frozen=True)
class AdjointFunction:
    """``rv.adjoint(f)``: the gradient program ``@f.adj`` as a function.

    It takes ``f``'s arguments holding ``f``'s outputs, then one gradient per
    argument that carries one (a float for a float or complex scalar, an
    array shaped like the argument for an array of floats), and runs ``f``
    backwards while the gradients flow from the outputs to the inputs: it
    returns ``f``'s inputs and the input gradients (arrays are updated in
    place).  Called inside a reversible function it becomes a
    ``rev.call @f.adj``, so a program can compute many gradients natively
    (a Jacobian block per observation, for instance).

    ``rv.adjoint(f, lanes=L)`` is ``@f.adjL`` (vector mode): ``L`` sets of
    gradients, lane by lane, in one backward run that uncomputes ``f`` once
    for all of them (``L`` rows of a Jacobian).
    """

    function: ReversibleFunction
    lanes: int = 1

    def __call__(self, *args: Any) -> Any:
        from revmlir.ad.adjoint import adjoint_name
        from revmlir.frontend.gradient import adjoint_backend

        count = len(self.function.parameters)
        spec = self.function.specialization_for(*args[:count])
        if len(args) != count + self.lanes * len(spec.carrying):
            per_lane = f" per lane ({self.lanes} lanes)" if self.lanes > 1 else ""
            raise TypeError(
                f"rv.adjoint({self.function.__name__}) takes {count} argument(s) and "
                f"{len(spec.carrying)} gradient(s){per_lane}, got {len(args)} value(s)"
            )
        _, backend = adjoint_backend(spec, self.lanes)
        results = backend.call(adjoint_name(spec.name, self.lanes), *args)
        return results[0] if len(results) == 1 else results


def adjoint(function: ReversibleFunction, lanes: int = 1) -> AdjointFunction:
    """``rv.adjoint(f)`` (``rv.adjoint(f, lanes=L)``), see ``AdjointFunction``."""
    if not isinstance(function, ReversibleFunction):
        raise TypeError(f"rv.adjoint expects a @rv.reversible function, got {function!r}")
    if type(lanes) is not int or lanes < 1:
        raise TypeError(f"rv.adjoint: lanes must be an integer ≥ 1, got {lanes!r}")
    return AdjointFunction(function, lanes)


class Specialization:
    """One compiled signature of a reversible function.

    It runs natively when the backend allows and the program compiles (the
    ``auto`` backend falls back to the interpreter for constructs native code
    does not support yet, such as ``print``, with an
    ``InterpreterFallbackWarning``); the interpreter is
    always available as ``.interpreter``, with its counters.
    """

    def __init__(
        self,
        function: ReversibleFunction | InverseFunction,
        types: tuple[Attribute, ...],
        name: str,
        module: ModuleOp,
    ):
        self.function = function
        self.types = types
        self.name = name
        self.module = module
        self.interpreter = RevInterpreter(module)
        self.native: NativeModule | None = None
        if function.backend != "interpreter":
            self.native = compile_natively(function, module, function.__name__)

    @functools.cached_property
    def inverse(self) -> Specialization:
        """The specialization of ``~f``: a module holding ``@f.inv`` as a
        function of its own, run forward, so that its derived functions are
        built (``@f.inv.adj``, ``@f.inv.tan``…) and called as any other
        function's."""
        from revmlir.inversion import invert_function
        from revmlir.naming import inverse_name

        module = self.module.clone()
        primal = next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == self.name)
        module.body.block.insert_op_after(invert_function(primal), primal)
        return Specialization(InverseFunction(self.function), self.types, inverse_name(self.name), module)

    @functools.cached_property
    def written(self) -> tuple[bool, ...]:
        """Per argument: whether a run may change it (scalars are returned,
        not changed; an array is changed when some op writes it, here or in
        a function called with it, a stack always)."""
        writes = written_arguments(self.module)[self.name]
        return tuple(
            isinstance(t, StackType) or (isinstance(t, MemRefType) and i in writes)
            for i, t in enumerate(self.types)
        )

    @functools.cached_property
    def carrying(self) -> tuple[int, ...]:
        """The arguments that carry derivatives (floats, complex and log
        numbers, arrays and stacks of them): derived functions (``@f.adj``,
        ``@f.tan``) take one gradient or tangent for each."""
        from revmlir.semantics import gradient_type

        return tuple(i for i, t in enumerate(self.types) if gradient_type(t) is not None)

    def private_copies(self, args: Sequence[Any]) -> list[Any]:
        """``args`` with copies of the arrays and stacks a run changes, so
        that running on them leaves the caller's data alone."""
        copies = list(args)
        for i in self._written_positions:
            value = args[i]
            # ndarray.copy: a third of copy.copy's dispatch, on every derivative call
            copies[i] = value.copy() if type(value) is np.ndarray else copy.copy(value)
        return copies

    @functools.cached_property
    def _written_positions(self) -> tuple[int, ...]:
        return tuple(i for i, changed in enumerate(self.written) if changed)

    @property
    def backend(self) -> str:
        return "native" if self.native is not None else "interpreter"

    def text(self) -> str:
        from io import StringIO

        stream = StringIO()
        Printer(stream=stream).print_op(self.module)
        return stream.getvalue()

    def run(self, args: Sequence[Any], backward: bool, backend: str | None = None) -> Any:
        """Run forward or backward; ``backend="interpreter"`` forces the
        interpreter (for its counters), otherwise native code when compiled."""
        runner = self.interpreter if self.native is None or backend == "interpreter" else self.native
        results = runner.caller(self.name, backward)(args)
        return results[0] if len(results) == 1 else results


class NativeCompilationError(Exception):
    """``backend="native"`` was requested for a program native code cannot run."""


class InterpreterFallbackWarning(RuntimeWarning):
    """A function with the default ``backend="auto"`` runs on the
    interpreter because native code cannot run part of it.  The results are
    the same, but a loop runs thousands of times slower, which users should
    hear about rather than discover.  ``backend="interpreter"`` says it is
    intended (no warning); ``backend="native"`` makes it an error."""


def compile_natively(
    function: ReversibleFunction | InverseFunction, module: ModuleOp, what: str, inverses: bool = True
) -> NativeModule | None:
    """``module`` compiled (``inverses``: see ``NativeModule.compile``), or
    None where ``function``'s ``auto`` backend falls back to the interpreter
    (with an ``InterpreterFallbackWarning`` naming ``what`` and the reason);
    ``backend="native"`` raises instead."""
    try:
        return NativeModule.compile(module, inverses=inverses)
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


def _first_frame_outside_package() -> int:
    """The ``stacklevel`` of the user's call, so a warning points at the line
    that called the function rather than at revmlir's internals (Python 3.11
    has no ``skip_file_prefixes``)."""
    package = str(Path(__file__).resolve().parent.parent)
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


class Specializing(Protocol[S]):
    """A compiled Python function: ``@rv.reversible`` or ``@rv.ordinary``."""

    __name__: str
    _by_python_types: dict[tuple[Any, ...], tuple[S, IntRanges]]

    @property
    def parameters(self) -> list[str]: ...

    def signature_of(self, args: Sequence[Any]) -> tuple[Attribute, ...]: ...

    def specialize(self, types: Sequence[Attribute]) -> S: ...


def matched_specialization(function: Specializing[S], args: Sequence[Any]) -> S:
    """The specialization of ``function`` that runs ``args``.  Building xDSL
    types for every call costs more than running small programs, so calls
    are first matched on the arguments' Python types; the ints among them
    are then checked against their parameters' ranges (nothing to do in
    calls without ints)."""
    key = python_types(args)
    if (found := function._by_python_types.get(key)) is None:
        spec = function.specialize(function.signature_of(args))
        found = function._by_python_types[key] = (spec, int_ranges(spec.types, key))
    spec, ranges = found
    if ranges:
        check_int_ranges(function.__name__, function.parameters, spec.types, ranges, args)
    return spec


def python_types(args: Sequence[Any]) -> tuple[Any, ...]:
    """What calls are matched on first: each argument's Python type, and an
    array's dtype and rank."""
    return tuple(
        [(np.ndarray, a.dtype, a.ndim) if isinstance(a, np.ndarray) else type(a) for a in args]
    )


def _is_log(declared: Attribute) -> bool:
    from revmlir.dialects.rev import LogType

    return isinstance(declared, LogType)


def _is_real_number(declared: Attribute) -> bool:
    """A type whose arguments are given as reals: log, fixed-point and
    tropical numbers."""
    from revmlir.dialects.rev import FixedType, LogType, TropicalType

    return isinstance(declared, LogType | FixedType | TropicalType)


def _converts(found: Attribute, declared: Attribute) -> bool:
    from xdsl.dialects.builtin import AnyFloat, ComplexType, IntegerType

    if isinstance(found, IntegerType) and found.width.data > 1:
        return isinstance(declared, AnyFloat | ComplexType) or declared == found or _is_real_number(declared)
    if isinstance(found, AnyFloat):
        return isinstance(declared, ComplexType) or _is_real_number(declared)
    return _is_real_number(declared) and isinstance(found, AnyFloat | IntegerType)


def reversible(
    function: Callable[..., Any] | None = None, *, checks: bool = True, backend: str = "auto"
) -> Any:
    """Decorate a function written in reversible Python.

    ``checks=False`` turns run-time reversibility checks off in the whole
    function (NiLang's ``@invcheckoff``).  ``backend`` selects how it runs:
    ``"auto"`` (native code when the program compiles, else the interpreter),
    ``"native"`` or ``"interpreter"``.
    """
    if function is None:
        return lambda f: ReversibleFunction(f, checks=checks, backend=backend)
    return ReversibleFunction(function, checks=checks, backend=backend)
