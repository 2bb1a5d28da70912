"""``@rv.reversible``: Python functions written in reversible Python.

The decorator reads the function's syntax tree (it never traces), checks its
structure at decoration time, and compiles it to rev IR on first call, once per
argument-type signature.  Calling runs the compiled program (on the reference
interpreter) and returns every argument, updated; ``~f`` runs it backwards.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from xdsl.dialects.builtin import AnyFloat, ComplexType, IntegerType
from xdsl.ir import Attribute

from revmlir.dialects.rev import FixedType, LogType, TropicalType
from revmlir.frontend.base.bindings import compiling
from revmlir.frontend.base.by_name import ByName
from revmlir.frontend.base.errors import ReversibleSyntaxError
from revmlir.frontend.base.source import Source, read_source, resolved_annotations
from revmlir.frontend.base.specialization import (
    BACKENDS,
    BUILDING,
    Specialization,
    bound_by_position,
    matched_specialization,
)
from revmlir.frontend.base.structs import Layout, TakesStructs, struct_argument
from revmlir.frontend.base.types import (
    RangeChecks,
    describe_type,
    is_struct_class,
    type_of_annotation,
    type_of_value,
    unsigned_hint,
)
from revmlir.frontend.reversible_code.compiler import ModuleCompiler, check_structure
from revmlir.interpreter.recursion import room_for_calls


class ReversibleFunction(TakesStructs, ByName):
    """A function written in reversible Python; see ``docs/python.md``."""

    __revmlir_reversible__ = True
    __name__: str  # the decorated function's, set by functools.update_wrapper

    def __init__(self, pyfunc: Callable[..., Any], *, checks: bool = True, backend: str = "auto"):
        functools.update_wrapper(self, pyfunc)
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}")
        self.pyfunc = pyfunc
        self.checks = checks
        self.backend = backend
        self.source = read_source(pyfunc)
        self.hints = resolved_annotations(pyfunc)
        self._check_signature()
        check_structure(self.source.tree, self._error)
        self._specializations: dict[tuple[Attribute, ...], Specialization] = {}
        self._by_python_types: dict[tuple[Any, ...], tuple[Specialization, RangeChecks]] = {}
        self._flattened: dict[Layout, ReversibleFunction] = {}
        self._checked_layouts: set[Layout] = set()

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
                    raise struct_argument(self.__name__, name, value)
                hint = " (pass a numpy array, or an rv.Stack for a stack)" if isinstance(value, list | tuple) else ""
                if (unsigned := unsigned_hint(value, name)) is not None:
                    hint = f" ({unsigned})"
                elif isinstance(value, np.ndarray):
                    hint = f" (arrays of {value.dtype} are not supported)"
                raise TypeError(
                    f"{self.__name__}(): argument '{name}' has unsupported type {type(value).__name__}{hint}"
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
        with BUILDING, room_for_calls():  # one build at a time (``BUILDING``), expressions deeply nested
            if (spec := self._specializations.get(key)) is None:
                with compiling():  # the globals it reads are kept only if it compiles
                    compiler = ModuleCompiler()
                    name = compiler.request(self, key)
                    module = compiler.finish()
                spec = Specialization(self, key, name, module, compiler.writes)
                self._specializations[key] = spec
        return spec

    def specialization_for(self, *args: Any) -> Specialization:
        return matched_specialization(self, args)

    def mlir(self, *args: Any) -> str:
        """The rev IR for these arguments (a struct argument's fields are
        parameters of their own), or for the annotated signature."""
        if args:
            spec, _ = self.run_flat(args, lambda f, a: f.specialization_for(*a))
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
                spec = self.specialize(declared)
        return spec.text()

    # -- running --------------------------------------------------------------

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        return self.run(bound_by_position(f"{self.__name__}()", self.parameters, args, keywords), backward=False)

    def run(self, args: Sequence[Any], backward: bool) -> Any:
        """Run forward or backward; struct arguments go in field by field
        and come back as new instances (``revmlir.frontend.base.structs``)."""
        results, layout = self.run_flat(args, lambda f, a: f.specialization_for(*a).run(a, backward=backward))
        if layout is None:
            return results
        updated = layout.rebuild(args, (results,) if sum(layout.sizes) == 1 else results)
        return updated[0] if len(updated) == 1 else updated

    @property
    def runs_backwards(self) -> Literal[True]:
        return True

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

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        return self.function.run(
            bound_by_position(f"{self.__name__}()", self.parameters, args, keywords), backward=True
        )

    @property
    def inverse(self) -> ReversibleFunction:
        """``(~f).inverse`` is ``f``, as ``~~f`` is."""
        return self.function

    def __invert__(self) -> ReversibleFunction:
        return self.function

    @property
    def runs_backwards(self) -> Literal[True]:
        return True

    @property
    def __name__(self) -> str:
        return "~" + self.function.__name__

    @property
    def backend(self) -> str:
        return self.function.backend

    @property
    def parameters(self) -> list[str]:
        return self.function.parameters

    @property
    def source(self) -> Source:
        return self.function.source

    def specialization_for(self, *args: Any) -> Specialization:
        """The specialization of ``~f`` for ``args`` (``f``'s outputs)."""
        return self.function.specialization_for(*args).inverse

    def mlir(self, *args: Any) -> str:
        return self.function.mlir(*args)


def _is_real_number(declared: Attribute) -> bool:
    """A type whose arguments are given as reals: log, fixed-point and
    tropical numbers."""
    return isinstance(declared, LogType | FixedType | TropicalType)


def _converts(found: Attribute, declared: Attribute) -> bool:
    """Whether an argument of type ``found`` is passed as ``declared``: an
    int as a float, a complex number or an integer of another width (a
    numpy scalar type's annotation: ``n: np.int32``, range-checked by the
    call), a float as a float of another width or a complex number, a
    complex number as one of another width (``x: np.float32``,
    ``z: np.complex64``, rounded as numpy's conversions round)."""
    if isinstance(found, IntegerType) and found.width.data > 1:
        wider = isinstance(declared, IntegerType) and declared.width.data > 1
        return isinstance(declared, AnyFloat | ComplexType) or wider or _is_real_number(declared)
    if isinstance(found, AnyFloat):
        return isinstance(declared, AnyFloat | ComplexType) or _is_real_number(declared)
    if isinstance(found, ComplexType):
        return isinstance(declared, ComplexType)
    return _is_real_number(declared) and isinstance(found, AnyFloat | IntegerType)


def reversible(function: Callable[..., Any] | None = None, *, checks: bool = True, backend: str = "auto") -> Any:
    """Decorate a function written in reversible Python.

    ``checks=False`` turns run-time reversibility checks off in the whole
    function (NiLang's ``@invcheckoff``).  ``backend`` selects how it runs:
    ``"auto"`` (native code when the program compiles, else the interpreter),
    ``"native"`` or ``"interpreter"``.
    """
    if function is None:
        return lambda f: ReversibleFunction(f, checks=checks, backend=backend)
    return ReversibleFunction(function, checks=checks, backend=backend)
