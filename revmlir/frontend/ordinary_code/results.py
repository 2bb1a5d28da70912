"""How an ``@rv.ordinary`` function's result types are known before it is
compiled, which a recursive call needs (docs/design.md, "Result types of
recursive ordinary functions").

A call's result types are those of the callee's compiled ``func.func``, so
a call of a function still being compiled (recursion) cannot take them from
there.  They come from the function's return annotation where it has one
(``-> float``, ``-> tuple[float, int]``), and are inferred otherwise: a
first, *probing* compile treats the recursive call as a path that never
returns (``UnknownResults``), so an ``if`` continues with the branch that
does not make it and a loop as if its body never ran; the types the return
then has are those of the paths that end without recursing, and a second
compile uses them for the recursive call.  A type the probe returned a
weak value of (``total = 0.0``, which a loop left out may have made a
``float32``) is weak in the recursive call too, and may come back another
float: the function is then compiled again with it (``ModuleCompiler.request``).
Where every path recurses, the call reports it and asks for the annotation.
"""

from __future__ import annotations

import ast
import typing
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Attribute

from revmlir.frontend.base.types import describe_type, is_known_annotation, type_of_annotation

RESULT_ANNOTATIONS = "-> float, -> int, -> bool, -> tuple[float, int] or -> None"
"""What a return annotation may say, in the words of a hint."""


class UnknownResults(Exception):
    """A call of a function whose result types are not known yet: raised
    at the call while the callee is being compiled and has no return
    annotation, caught by the ``if`` or loop around it in a probing compile
    and, where nothing catches it, by the callee's compile, which reports
    ``error`` (located at the call) then."""

    def __init__(self, key: tuple[int, tuple[Attribute, ...]], name: str, error: Callable[[str, str], Exception]):
        super().__init__(name)
        self.key = key
        self.name = name
        self.error = error

    def report(self) -> Exception:
        return self.error(
            f"the result types of {self.name} are needed at this call before any return of {self.name} "
            f"fixes them: every path to its return calls {self.name}",
            f"declare them with a return annotation: {RESULT_ANNOTATIONS}",
        )


def declared_results(
    tree: ast.FunctionDef, hints: dict[str, Any], error: Callable[[ast.AST, str, str], Exception]
) -> tuple[Attribute, ...] | None:
    """The result types the return annotation of ``tree`` declares (any
    type a parameter's annotation gives, numpy's scalar types included),
    or None where it has none or only documents them (``numpy.ndarray``);
    an annotation that means nothing here is an ``error`` at it."""
    if tree.returns is None:
        return None
    if isinstance(tree.returns, ast.Constant) and tree.returns.value is None:
        return ()
    annotation = hints.get("return")
    parts = typing.get_args(annotation) if typing.get_origin(annotation) is tuple else (annotation,)
    types = tuple(type_of_annotation(part) for part in parts)
    if annotation is not None and all(is_known_annotation(part) for part in parts) and None in types:
        return None  # numpy.ndarray documents a result, as it does a parameter
    if annotation is None or None in types:
        raise error(
            tree.returns,
            f"the return annotation '{ast.unparse(tree.returns)}' does not give the result types",
            f"annotate {RESULT_ANNOTATIONS}, or leave the return unannotated",
        )
    return typing.cast(tuple[Attribute, ...], types)


def describe_results(types: Sequence[Attribute]) -> str:
    """Result types as a Python user would write them."""
    if not types:
        return "nothing"
    words = [describe_type(t) for t in types]
    return words[0] if len(words) == 1 else f"({', '.join(words)})"


def returned_values(tree: ast.FunctionDef) -> list[ast.expr]:
    """The values ``tree`` returns, one per result: those of the return
    that ends it (an ordinary function returns there only), none where
    it ends without one."""
    last = tree.body[-1]
    if not isinstance(last, ast.Return) or last.value is None:
        return []
    return list(last.value.elts) if isinstance(last.value, ast.Tuple) else [last.value]
