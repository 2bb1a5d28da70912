"""An instruction's operands of the wrong types said in the words of the
Python statement that asked for it.

The builder refuses ``rev.add`` of an ``f64`` on an ``i32`` in the IR's
terms (``'rev.add' needs operands of one type``), right for its own API; a
Python user wrote ``a[0] += x``.  The error carries the types
(``InstructionTypeError``), so the message is rebuilt here from the
statement: what it does with which value to which target, and the
conversion that makes it valid.
"""

from __future__ import annotations

import ast

from xdsl.dialects.builtin import AnyFloat, ComplexType, IndexType, IntegerType
from xdsl.ir import Attribute

from revmlir.builder import InstructionTypeError
from revmlir.dialects.rev import LogType
from revmlir.frontend.base.types import describe_type

_VERBS: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("adds {value} to {target}", "+="),
    ast.Sub: ("subtracts {value} from {target}", "-="),
    ast.BitXor: ("xors {value} into {target}", "^="),
    ast.Mult: ("multiplies {target} by {value}", "*="),
    ast.Div: ("divides {target} by {value}", "/="),
}
"""What an update does, with its value and its target, and its symbol."""


def in_python(statement: ast.stmt, error: InstructionTypeError) -> tuple[str, str | None]:
    """The message and the hint of ``error``, raised by ``statement``."""
    source = ast.unparse(statement)
    target = describe_type(error.target)
    if isinstance(statement, ast.AugAssign):
        verb, symbol = _VERBS.get(type(statement.op), ("updates {target} with {value}", "the update"))
        value_source, element = ast.unparse(statement.value), isinstance(statement.target, ast.Subscript)
        where = f"an element of {_a(target)} array" if element else f"'{ast.unparse(statement.target)}' ({_a(target)})"
    else:
        symbol = source.partition("(")[0]
    if error.value is None:
        return f"'{source}': {symbol} works on {error.takes.words}, not {target}", None
    value = describe_type(error.value)
    if not isinstance(statement, ast.AugAssign):
        return f"'{source}' mixes {_a(target)} and {_a(value)}", "its values must be of one type"
    message = f"'{source}' {verb.format(value=_a(value), target=where)}"
    holder = "array" if element else "variable"
    return message, _conversion(error.target, error.value, value_source, holder if _takes(error) else None)


def _takes(error: InstructionTypeError) -> bool:
    """Whether the instruction takes a target of the value's type: only then
    is a target of that type a fix (``n ^= x`` of a float ``x`` is not fixed
    by a float ``n``, which ``^=`` refuses)."""
    return error.value is not None and error.takes.accepts(error.value)


def _conversion(target: Attribute, value: Attribute, source: str, holder: str | None) -> str:
    """How to make a value of type ``value`` (written ``source``) one that
    updates a ``target``, or, where there is a ``holder`` (the instruction
    takes one of the value's type), a target that it updates."""
    if isinstance(target, LogType):
        return f"make it a log number: rv.ulog({source})"
    if isinstance(target, IntegerType | IndexType) and isinstance(value, AnyFloat):
        conversion = f"convert it: int({source})"
    elif isinstance(value, ComplexType) and not isinstance(target, ComplexType):
        conversion = f"take a part: {source}.real" if source.isidentifier() else f"take a part: ({source}).real"
    else:
        conversion = f"convert it to {describe_type(target)}"
    return conversion if holder is None else f"{conversion}, or use {_a(describe_type(value))} {holder}"


def _a(word: str) -> str:
    """``word`` with its indefinite article."""
    return f"an {word}" if word[0] in "aeioAEIO" else f"a {word}"
