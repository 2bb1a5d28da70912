"""The statements of a ``with rv.safe():`` block: host side effects that
are no part of the reversible state (NiLang's ``@safe``).

- ``print(…, sep=…, end=…)`` prints as Python does (constant ``sep`` and
  ``end``; a newline by default);
- ``assert condition[, "message"]`` stops the run with an
  ``rv.ExecutionError`` at the assertion when the condition is false;
- ``c[i] += e`` (or ``-=``) counts into a *counter*: an array argument that
  only safe blocks use (``revmlir.counters``), which the caller reads after
  the call.  Running backwards does not undo a count, which is why nothing
  reversible may read the array.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Sequence
from typing import Any, TypeGuard

from xdsl.dialects import cf, memref, printf
from xdsl.dialects.builtin import MemRefType, StringAttr, i1

from revmlir.builder import FunctionBuilder, Value
from revmlir.frontend.base.expressions import Context, ExpressionCompiler

SAFE_STATEMENTS = "print(...), assert and counts (c[i] += …)"


def is_safe_block(node: ast.AST) -> TypeGuard[ast.With]:
    """Whether ``node`` is syntactically ``with <…>safe(…):``, the one
    place an ``assert`` may stand (checked when decorating, before names
    resolve; compiling the block checks that ``safe`` is ``rv.safe``)."""
    if not isinstance(node, ast.With) or len(node.items) != 1:
        return False
    call = node.items[0].context_expr
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) == "safe"


class SafeBlockCompiler:
    """Compiles the statements of one safe block into its region."""

    def __init__(self, ctx: Context, expr: ExpressionCompiler):
        self.ctx = ctx
        self.expr = expr

    @property
    def fn(self) -> FunctionBuilder:
        fn = self.ctx.fn
        assert isinstance(fn, FunctionBuilder), "safe blocks stand in reversible functions only"
        return fn

    def statements(self, body: Sequence[ast.stmt]) -> None:
        ctx = self.ctx
        for statement in body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            if isinstance(call, ast.Call) and ctx.resolve(call.func) is builtins.print:
                self._print(statement, call)
            elif isinstance(statement, ast.Assert):
                self._assert(statement)
            elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Subscript):
                self._count(statement, statement.target)
            elif isinstance(statement, ast.AugAssign):
                raise ctx.error(
                    statement,
                    f"'{ast.unparse(statement.target)}' is reversible state, which rv.safe "
                    "does not update: running backwards could not restore it",
                    "count into an element of an array argument that only rv.safe blocks use (c[0] += 1), "
                    "or count reversibly outside the block",
                )
            else:
                raise ctx.error(statement, f"only {SAFE_STATEMENTS} can run inside rv.safe")

    def _constant_string(self, node: ast.expr, what: str) -> str:
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            raise self.ctx.error(node, f"{what} must be a constant string, got '{ast.unparse(node)}'")
        return node.value

    def _print(self, statement: ast.stmt, call: ast.Call) -> None:
        """Python's ``print``: the arguments as ``str`` gives them, joined by
        ``sep``, then ``end``."""
        options = {"sep": " ", "end": "\n"}
        for keyword in call.keywords:
            if keyword.arg not in options:
                raise self.ctx.error(
                    keyword.value if keyword.arg else statement,
                    f"print(…, {keyword.arg or '**…'}=…) is not supported inside rv.safe",
                    "use sep= and end=",
                )
            options[keyword.arg] = self._constant_string(keyword.value, f"print's {keyword.arg}")
        pieces: list[str] = []
        values: list[Any] = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                raise self.ctx.error(arg, "print(*…) is not supported inside rv.safe")
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                pieces.append(_escaped(arg.value))
            elif isinstance(arg, ast.JoinedStr):
                pieces.append(self._formatted(arg, values))
            else:
                pieces.append("{}")
                values.append(self.expr.compile(arg).ssa)
        text = _escaped(options["sep"]).join(pieces) + _escaped(options["end"])
        loc = self.ctx.loc(statement)
        for part in _formats(text):
            count = part.count("{}")
            self.fn.emit(printf.PrintFormatOp(part, *values[:count]), loc)
            values = values[count:]

    def _formatted(self, text: ast.JoinedStr, values: list[Any]) -> str:
        """An f-string's text with each ``{value}`` a field that prints the
        value as ``str`` gives it, as a separate argument of ``print`` does;
        its values join ``values``."""
        pieces: list[str] = []
        for part in text.values:
            if isinstance(part, ast.Constant):
                pieces.append(_escaped(str(part.value)))
            elif (
                isinstance(part, ast.FormattedValue) and part.conversion in (-1, ord("s")) and part.format_spec is None
            ):
                pieces.append("{}")
                values.append(self.expr.compile(part.value).ssa)
            else:
                raise self.ctx.error(
                    part,
                    f"{ast.unparse(text)}: a conversion or format spec in an f-string is not supported inside rv.safe",
                    "print the value as str gives it: f'{x}'",
                )
        return "".join(pieces)

    def _assert(self, statement: ast.Assert) -> None:
        message = f"assertion failed: {ast.unparse(statement.test)}"
        if statement.msg is not None:
            message = self._constant_string(statement.msg, "an assertion's message")
        condition = self.expr.compile(statement.test)
        if condition.type != i1:
            raise self.ctx.error(
                statement.test, f"'{ast.unparse(statement.test)}' is not a boolean", "compare it explicitly"
            )
        self.fn.emit(cf.AssertOp(condition.ssa, StringAttr(message)), self.ctx.loc(statement))

    def _count(self, statement: ast.AugAssign, target: ast.Subscript) -> None:
        """``c[i] += e``: a load, the sum and a store; the verifier checks
        that ``c`` is a counter."""
        ctx, fn = self.ctx, self.fn
        if not isinstance(statement.op, ast.Add | ast.Sub):
            raise ctx.error(statement, f"'{ast.unparse(statement)}' is no count", "count with += or -=")
        array = target.value
        if not (isinstance(array, ast.Name) and fn.has(array.id) and isinstance(fn.type_of(array.id), MemRefType)):
            raise ctx.error(
                target, f"'{ast.unparse(array)}' is not an array", "count into an array argument: c[0] += 1"
            )
        loc = ctx.loc(statement)
        indices = [fn.index(i, loc) for i in self.expr.indices(target)]
        counter = fn.get(array.id).ssa
        old = Value(fn, fn.emit(memref.LoadOp.get(counter, indices), loc).results[0])
        step = self.expr.compile(statement.value)
        if step.type != old.type:
            step = fn.cast(step, old.type, loc)
        new = fn.binary("add" if isinstance(statement.op, ast.Add) else "sub", old, step, loc)
        fn.emit(memref.StoreOp.get(new.ssa, counter, indices), loc)


def _escaped(text: str) -> str:
    """``text`` as literal text of a ``printf.print_format`` string."""
    return text.replace("{", "{{").replace("}", "}}")


_FORMAT_TOKEN = re.compile(r"\{\{|\}\}|\{\}|[^{}]+")


def _formats(text: str) -> list[str]:
    """``text``, a ``str.format`` template, as consecutive templates that
    print it whole, each with as many ``{}`` in it as fields.

    xDSL's ``printf.print_format`` takes its number of fields to be the
    number of times ``{}`` occurs in its text, which a literal ``{`` before a
    literal ``}`` (``{{}}``, Python's ``{}``) also contains: the text is cut
    between the two, and each engine prints the pieces one after another."""
    parts = [""]
    previous = ""
    for token in _FORMAT_TOKEN.findall(text):
        if previous == "{{" and token == "}}":
            parts.append("")
        parts[-1] += token
        previous = token
    return parts
