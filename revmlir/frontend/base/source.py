"""Where a compiled Python function comes from: its syntax tree, read from
its source file, and the diagnostics located in that file.

``@rv.reversible``, ``@rv.ordinary`` and ``@rv.primitive`` all read the
decorated function here, so each reports a name compiled code cannot carry
or an unknown annotation the same way, before compiling anything.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

from revmlir.frontend.base.errors import ReversibleSyntaxError
from revmlir.frontend.base.types import KNOWN_ANNOTATIONS, Stack, is_known_annotation, is_struct_class


@functools.lru_cache(maxsize=4096)
def location(filename: str, line: int, column: int) -> FileLineColLoc:
    """The location of ops compiled from ``line`` and ``column`` of
    ``filename``, built once per place: locations are values, and the
    compiler gives every op it builds one, several per place (BA's kernel:
    800 built from 200 places), each four attributes built and checked, a
    quarter of the time it took to compile the statements."""
    return FileLineColLoc(StringAttr(filename), IntAttr(line), IntAttr(column))


@dataclass(frozen=True)
class Source:
    tree: ast.FunctionDef
    filename: str
    line_offset: int
    column_offset: int

    def loc(self, node: ast.AST) -> FileLineColLoc:
        """``node``'s place in the user's file, as an op's location."""
        return location(
            self.filename,
            getattr(node, "lineno", 1) + self.line_offset,
            getattr(node, "col_offset", 0) + self.column_offset + 1,
        )

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
                f"{self.tree.name}() takes {len(params)} argument(s) ({', '.join(params)}), got {len(args)}"
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
        raise TypeError(f"{decorator} needs the source of {pyfunc.__name__}: {error}") from None
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
        if (annotation is Stack and decorator == "@rv.reversible") or (
            is_struct_class(annotation) and decorator != "@rv.primitive"
        ):
            continue  # the argument gives the element or field types (structs.Layout checks the class)
        node = arg.annotation
        written = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ast.unparse(node)
        known = f"annotate with {KNOWN_ANNOTATIONS}, or leave the parameter unannotated"
        if isinstance(annotation, Stack):  # the argument, written where its type goes
            raise source.error(
                node,
                f"'{written}' for parameter '{arg.arg}' is a stack, not a type",
                f"annotate '{arg.arg}: rv.Stack' and pass {written} as the argument, which gives the element type"
                if decorator == "@rv.reversible"
                else f"only @rv.reversible functions take stacks; {known}",
            )
        if annotation is None or not is_known_annotation(annotation):
            raise source.error(node, f"unknown annotation '{written}' for parameter '{arg.arg}'", known)


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
                f"'{name}' is not an ASCII name, and compiled functions and their variables need ASCII names",
                "rename it (for instance 'alpha' for 'α')",
            )
