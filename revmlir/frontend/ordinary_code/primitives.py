"""``@rv.primitive``: a function of scalars and vectors the program calls
but revmlir does not compile, with the rules its users give it
(docs/python.md, "User primitives"; docs/design.md, decisions 37 and 44).

A primitive is declared on a stub whose annotations give its signature
(``float``, ``int``, ``complex``, and ``numpy.typing.NDArray[numpy.float64]``
and the like for vectors).  Its implementations are a C function found by
``symbol`` in this process, or in the shared library ``library``, or the
BLAS routine ``blas`` of numpy's CBLAS (native code calls it), and a Python
callable (the interpreter calls it); its rules are ordinary functions
(``@rv.ordinary``, or plain functions, which are made ordinary), which may
call primitives themselves: ``adjoint(args…, ḡ?, shadows…) -> ḡa…`` and
``tangent(args…, ȧ…) -> ṙ`` (one gradient or tangent per float argument;
the shadows and tangent arrays of float arrays are updated in place), and for a primitive that
``updates`` arrays, ``inverse(args…)``, which undoes it.  A reversible
function calls a pure primitive in an expression and an updating one as a
statement, an ordinary function only a pure one (docs/design.md, decision
64); the module it compiles to holds a ``rev.extern`` declaration and the
rules as ``func.func``s.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import FunctionType, MemRefType
from xdsl.ir import Attribute

from revmlir.dialects.primitives import RULES, is_scalar_type, is_vector_type, rule_signature
from revmlir.frontend.base.errors import ReversibleSyntaxError
from revmlir.frontend.base.source import read_source
from revmlir.frontend.base.types import (
    NUMPY_SCALAR_ANNOTATIONS,
    describe_type,
    type_of_annotation,
    type_of_vector_annotation,
)
from revmlir.frontend.ordinary_code.functions import OrdinaryFunction
from revmlir.interpreter.primitives import register_python
from revmlir.runtime.blas import BlasNotFound, numpy_blas
from revmlir.runtime.jit import has_symbol, load_library

_implementations: dict[str, Callable[..., Any] | None] = {}
"""The Python implementation of each primitive name in use: the interpreter
finds a primitive's callable by its name in the IR, so two primitives share
a name only when they share their Python implementation."""


def _unique_name(name: str, python: Callable[..., Any] | None) -> str:
    candidate, count = name, 0
    while _implementations.setdefault(candidate, python) is not python:
        count += 1
        candidate = f"{name}.{count}"
    return candidate


class Primitive:
    """A user primitive (see the module docstring).  Calling it from Python
    calls its Python implementation."""

    __revmlir_primitive__ = True
    __name__: str  # the decorated function's, set by functools.update_wrapper
    __wrapped__: Callable[..., Any]  # the decorated function, set there too

    def __init__(
        self,
        stub: Callable[..., Any],
        *,
        symbol: str | None,
        library: str | None,
        python: Callable[..., Any] | None,
        rules: dict[str, Callable[..., Any] | None],
        updates: Sequence[str] = (),
        arrays: str | None = None,
        blas: str | None = None,
    ):
        functools.update_wrapper(self, stub)
        self.source = source = read_source(stub, "@rv.primitive")
        where = source.tree.decorator_list[0] if source.tree.decorator_list else source.tree
        if problem := source.unsupported_signature():
            raise source.error(source.tree, f"primitives do not support {problem}")
        self.signature = self._signature(updates)
        self.updates = self._updated(updates, where)
        if blas is not None:
            if symbol is not None or library is not None or arrays is not None:
                raise source.error(
                    where,
                    "blas= names the symbol, the library and the arrays' convention itself",
                    "leave symbol=, library= and arrays= out",
                )
            try:
                found = numpy_blas()
            except BlasNotFound as error:
                raise source.error(
                    where,
                    f"primitive {stub.__name__} calls the BLAS routine '{blas}': {error}",
                    "give symbol= and library= of a CBLAS, or leave blas= out to run on the interpreter only",
                ) from None
            symbol, arrays = found.symbol(blas), found.arrays
        self.arrays = arrays
        if symbol is None and python is None:
            raise source.error(
                where,
                f"primitive {stub.__name__} has no implementation",
                "give symbol= (a C function) and/or python= (a callable for the interpreter)",
            )
        if library is not None:
            try:
                load_library(library)
            except RuntimeError as error:
                raise source.error(where, f"cannot load the library '{library}': {error}") from None
        if symbol is not None and not has_symbol(symbol):
            raise source.error(
                where,
                f"no C function '{symbol}' is loaded in this process",
                "name the shared library that defines it (library=path) or leave symbol= out "
                "to run the primitive on the interpreter only",
            )
        if python is not None and not callable(python):
            raise source.error(where, f"python= of primitive {stub.__name__} is not callable")
        self.symbol = symbol
        self.python = python
        self.rules: dict[str, OrdinaryFunction] = {}
        for kind in RULES:
            rule = rules.get(kind)
            if rule is None:
                continue
            if kind == "inverse" and (not self.updates or self.signature.outputs.data):
                raise source.error(
                    where,
                    f"primitive {stub.__name__} has an inverse= rule but updates no array",
                    "a pure primitive is an expression, which the inverse recomputes: leave inverse= out",
                )
            if not isinstance(rule, OrdinaryFunction):
                if not callable(rule) or isinstance(rule, Primitive):
                    raise source.error(where, f"{kind}= of primitive {stub.__name__} must be a function")
                rule = OrdinaryFunction(rule)
            self.rules[kind] = rule
        self.name = _unique_name(stub.__name__, python)
        if python is not None:
            register_python(self.name, python)

    def _signature(self, updates: Sequence[str]) -> FunctionType:
        tree = self.source.tree
        try:
            annotations = inspect.get_annotations(self.__wrapped__, eval_str=True)
        except (NameError, AttributeError, SyntaxError, TypeError) as error:  # Python's own error, located
            raise self.source.error(
                tree, f"the annotations of primitive {self.__name__} do not evaluate: {error}"
            ) from None
        inputs = [self._annotated(annotations, arg.arg, arg, f"parameter '{arg.arg}'") for arg in tree.args.args]
        if updates and annotations.get("return", None) is None:
            return FunctionType.from_lists(inputs, [])
        result = self._annotated(annotations, "return", tree, "the result")
        if not is_scalar_type(result):
            raise self.source.error(tree, f"the result of primitive {self.__name__} is an array", _ANNOTATION_HINT)
        return FunctionType.from_lists(inputs, [result])

    def _annotated(self, annotations: dict[str, Any], key: str, node: ast.AST, what: str) -> Attribute:
        if key not in annotations:
            raise self.source.error(
                node, f"{what} of primitive {self.__name__} has no type annotation", _ANNOTATION_HINT
            )
        type = type_of_annotation(annotations[key]) or type_of_vector_annotation(annotations[key])
        if type is None or not (is_scalar_type(type) or is_vector_type(type)):
            raise self.source.error(
                node, f"{what} of primitive {self.__name__} is annotated {annotations[key]!r}", _ANNOTATION_HINT
            )
        return type

    def _updated(self, names: Sequence[str], where: ast.AST) -> tuple[int, ...]:
        """The positions of the parameters named in ``updates=``: arrays."""
        parameters = [arg.arg for arg in self.source.tree.args.args]
        positions: list[int] = []
        for name in names:
            if name not in parameters or not isinstance(self.signature.inputs.data[parameters.index(name)], MemRefType):
                raise self.source.error(
                    where,
                    f"updates= of primitive {self.__name__} names '{name}', which is not one of its array parameters",
                )
            positions.append(parameters.index(name))
        return tuple(positions)

    def check_rule(self, kind: str, rule: OrdinaryFunction) -> FunctionType:
        """The signature ``rule`` must have; a located error when it takes
        the wrong number of arguments."""
        expected = rule_signature(kind, self.signature)
        count = len(expected.inputs.data)
        if len(rule.parameters) != count:
            raise rule.source.error(
                rule.source.tree,
                f"the {kind} rule {rule.__name__} of primitive {self.__name__} takes "
                f"{len(rule.parameters)} argument(s); it must take {count}",
                _RULE_HINTS[kind],
            )
        return expected

    def rule_error(self, kind: str, rule: OrdinaryFunction, results: tuple[Attribute, ...]) -> ReversibleSyntaxError:
        expected = rule_signature(kind, self.signature).outputs.data
        return rule.source.error(
            rule.source.tree,
            f"the {kind} rule {rule.__name__} of primitive {self.__name__} returns "
            f"({', '.join(map(describe_type, results))}); it must return ({', '.join(map(describe_type, expected))})",
            _RULE_HINTS[kind],
        )

    def __call__(self, *args: Any) -> Any:
        if self.python is None:
            raise TypeError(f"primitive {self.__name__} has no Python implementation (python=)")
        return self.python(*args)

    def __repr__(self) -> str:
        return f"<primitive {self.__name__}>"


_ANNOTATION_HINT = (
    f"annotate every parameter and the result with float, int, complex or a numpy scalar type "
    f"({NUMPY_SCALAR_ANNOTATIONS}), arrays with numpy.typing.NDArray[numpy.float64] (or another dtype)"
)


_RULE_HINTS = {
    "inverse": "an inverse rule takes the primitive's arguments, returns nothing, and undoes its updates",
    "adjoint": "an adjoint rule takes the primitive's arguments, the gradient of its result (if it returns one) "
    "and the gradient arrays of its float arrays (which it updates), and returns one gradient per float scalar argument",
    "tangent": "a tangent rule takes the primitive's arguments and one tangent per float argument "
    "(a tangent array for a float array, which it updates where the primitive updates the array), "
    "and returns the tangent of the result (if it returns one)",
}


def primitive(
    symbol: str | None = None,
    *,
    library: str | None = None,
    blas: str | None = None,
    arrays: str | None = None,
    python: Callable[..., Any] | None = None,
    updates: Sequence[str] = (),
    inverse: Callable[..., Any] | None = None,
    adjoint: Callable[..., Any] | None = None,
    tangent: Callable[..., Any] | None = None,
) -> Callable[[Callable[..., Any]], Primitive]:
    """Declare a user primitive on a signature stub::

    @rv.primitive("lgamma", python=math.lgamma, adjoint=lgamma_adjoint)
    def lgamma(x: float) -> float: ...

    @rv.primitive(blas="daxpy", python=axpy, updates=["y"], inverse=daxpy_inverse, adjoint=daxpy_adjoint)
    def daxpy(a: float, x: NDArray[np.float64], y: NDArray[np.float64]) -> None: ...
    """
    if isinstance(updates, str):
        updates = (updates,)
    return lambda stub: Primitive(
        stub,
        symbol=symbol,
        library=library,
        python=python,
        rules={"inverse": inverse, "adjoint": adjoint, "tangent": tangent},
        updates=updates,
        arrays=arrays,
        blas=blas,
    )
