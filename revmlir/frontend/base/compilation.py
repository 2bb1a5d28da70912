"""What the frontend's two compilers share: a module compiled on demand,
one function per Python function and argument types, each named once in
the module; and the compiler of one such function, which reads its source
and gives its expressions their context.

The reversible compiler (``reversible_code.compiler``) and the ordinary one
(``ordinary_code.compiler``) specialise both (docs/design.md, decision 45):
what a statement means, what a request returns (a name; a name and result
types) and whether a function may call itself are theirs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Attribute

from revmlir.builder import ExpressionBuilder
from revmlir.frontend.base.bindings import namespace_of
from revmlir.frontend.base.errors import ReversibleSyntaxError
from revmlir.frontend.base.expressions import Context
from revmlir.frontend.base.source import Source
from revmlir.frontend.base.types import describe_type

NEVER_COMPILED: tuple[type[ast.AST], ...] = (
    ast.Try,
    ast.Raise,
    ast.Delete,
    ast.Global,
    ast.Nonlocal,
    ast.Import,
    ast.ImportFrom,
    ast.ClassDef,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.AsyncFor,
    ast.AsyncWith,
    ast.Assert,
    ast.AnnAssign,
    ast.Match,
)
"""Statements neither compiler takes: what each also refuses is its own."""

ONE_LOOP_VARIABLE = (
    "a for loop needs one loop variable",
    "loop over range(...) and index arrays with the loop variable: for i in range(len(x)): … x[i] …",
)
"""Both compilers' refusal of ``for i, v in enumerate(x)``, ``for a, b in
…``: the message and its hint."""


class Compilable(Protocol):
    """A decorated Python function, as its compiler reads it."""

    @property
    def __name__(self) -> str: ...

    @property
    def source(self) -> Source: ...

    @property
    def pyfunc(self) -> Callable[..., Any]: ...


class ModuleCompiler:
    """The names a module being compiled defines: a specialization of a
    function is named after it, numbered when the name is taken."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        """Every name the module defines: functions, primitives, rules."""

    def fresh_name(self, base: str, first: int = 0) -> str:
        """``base``, or ``base_N`` for the first ``N ≥ first`` not taken;
        taken from now on."""
        name, suffix = base, first
        while name in self.used:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.used.add(name)
        return name


F = TypeVar("F", bound=Compilable)
B = TypeVar("B", bound=ExpressionBuilder)


class FunctionCompiler(Generic[F, B]):
    """One function's compiler: its syntax tree, its builder ``fn`` (made
    by ``build`` from the parameters and the function's location) and the
    ``Context`` its expressions see."""

    def __init__(
        self,
        function: F,
        types: Sequence[Attribute],
        build: Callable[[list[tuple[str, Attribute]], FileLineColLoc], B],
        primitive: Callable[[Any], str],
        **context: Any,
    ):
        self.function = function
        source = function.source
        self.tree = source.tree
        params = [a.arg for a in self.tree.args.args]
        self.fn: B = build(list(zip(params, types)), source.loc(self.tree))
        self.fn.spell = describe_type  # errors write types as the user does
        self.ctx = Context(
            fn=self.fn,
            filename=source.filename,
            line_offset=source.line_offset,
            column_offset=source.column_offset,
            namespace=namespace_of(function.pyfunc),
            primitive=primitive,
            **context,
        )

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> ReversibleSyntaxError:
        return self.ctx.error(node, message, hint)
