"""Views of a variable that an instruction may update in place: one part
of a complex number (``z.real -= z.imag``) and the fields of a struct
argument (``d.x += d.y``).

The instruction's expression may read what the view leaves untouched (the
other part, the other fields) but not the view itself: ``z.real -= z.real``
would destroy the value its inverse needs, like ``x -= x``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

COMPLEX_PARTS = ("real", "imag")


def check_part_update(
    target: ast.Attribute, value: ast.expr, error: Callable[[ast.AST, str, str | None], Exception]
) -> None:
    """An error at the first read in ``value`` of the complex variable
    ``target`` updates a part of, other than of its other part: reading the
    part updated, or the whole number, aliases the target."""
    assert isinstance(target.value, ast.Name)
    name, part = target.value.id, target.attr
    other = COMPLEX_PARTS[1 - COMPLEX_PARTS.index(part)]

    def visit(node: ast.AST) -> None:
        read_part: str | None = None  # the part of the variable ``node`` reads, if it reads one
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            read_part = node.attr
        if read_part == other:
            return
        if read_part is not None or isinstance(node, ast.Name) and node.id == name:
            raise error(
                node,
                f"'{ast.unparse(node)}' aliases '{name}.{part}', which this instruction updates: "
                "its inverse would need the value it destroyed",
                f"read only {name}.{other}, or copy {name}.{part} into an ancilla first",
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(value)
