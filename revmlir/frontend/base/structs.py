"""Struct arguments: dataclasses and named tuples of numbers and arrays.

A reversible function takes a struct as its fields: a call with a struct
argument ``d`` runs the function compiled with one parameter per field,
named ``d.x`` (in the IR and in diagnostics), whose body reads and updates
``d.x`` like any variable.  ``d.x += d.y`` is then an update of one
variable reading another, which is reversible, and ``d.x -= d.x`` is
rejected as ``x -= x`` is.  The call gives the struct back as a new
instance of its class holding the updated fields (arrays in it are updated
in place, as any array argument is); ``rv.gradient`` and ``rv.vjp`` give a
struct's gradient back the same way.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar, cast

from revmlir.frontend.base.types import is_struct_class, type_of_value

if TYPE_CHECKING:
    from revmlir.frontend.base.source import Source

Error = Callable[[ast.AST, str, str | None], Exception]
R = TypeVar("R")


def is_struct(value: Any) -> bool:
    """A struct argument: an instance of a struct class that is no number
    of revmlir's own (``FixedPoint`` is a dataclass too)."""
    return is_struct_class(type(value)) and type_of_value(value) is None


class StructArgument(TypeError):
    """A struct where only numbers, arrays and stacks go: in the
    Jacobians and Hessians, which take the fields (``rv.gradient``,
    ``rv.vjp`` and ``rv.jvp`` flatten structs as calls do), and on the
    first call with a struct, which the function's call then flattens (so
    that calls without structs pay nothing for them)."""


def struct_argument(function: str, name: str, value: Any) -> StructArgument:
    """The error for struct ``value`` passed as argument ``name`` where
    only its fields go."""
    return StructArgument(
        f"{function}(): argument '{name}' has unsupported type {type(value).__name__} (struct arguments are "
        "taken by calls and by rv.gradient, rv.vjp and rv.jvp; pass the fields here)"
    )


class _NamedTupleClass(Protocol):
    _fields: tuple[str, ...]


def field_names(cls: type) -> tuple[str, ...]:
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    # A struct class that is no dataclass is a named tuple (is_struct_class).
    return tuple(cast(_NamedTupleClass, cls)._fields)


@dataclass(frozen=True)
class Layout:
    """Which parameters of a function are structs in one call: per
    parameter, the struct's class, or None."""

    classes: tuple[type | None, ...]

    @staticmethod
    def of(parameters: Sequence[str], hints: dict[str, Any], args: Sequence[Any]) -> Layout | None:
        """The layout of a call with ``args``, or None when no parameter is
        a struct.  A parameter annotated with a struct class must get an
        instance of it (a ``TypeError`` naming the parameter otherwise)."""
        layout = Layout(tuple(type(value) if is_struct(value) else None for value in args))
        if (problem := layout.mismatch(parameters, hints)) is not None:
            raise TypeError(problem)
        for name, value, cls in zip(parameters, args, layout.classes):
            for field in field_names(cls) if cls is not None else ():
                if is_struct(getattr(value, field)):
                    raise TypeError(
                        f"argument '{name}.{field}' is a struct inside a struct, which is not supported "
                        f"(a field is one parameter): pass {name}.{field} as an argument of its own"
                    )
        return layout if any(layout.classes) else None

    def mismatch(self, parameters: Sequence[str], hints: dict[str, Any]) -> str | None:
        """What disagrees with a parameter annotated with a struct class, or None."""
        for name, cls in zip(parameters, self.classes):
            declared = hints.get(name)
            if is_struct_class(declared) and not (cls is not None and issubclass(cls, declared)):
                found = "no struct" if cls is None else cls.__name__
                return f"argument '{name}' is declared {declared.__name__}, got {found}"
        return None

    def flat_parameters(self, parameters: Sequence[str]) -> list[str]:
        """The parameters of the function compiled for this layout."""
        return [
            name
            for parameter, cls in zip(parameters, self.classes)
            for name in ([parameter] if cls is None else [f"{parameter}.{f}" for f in field_names(cls)])
        ]

    def field_hints(self, parameters: Sequence[str]) -> dict[str, Any]:
        """The annotations of the fields, as the annotations of the flat
        parameters (those that fix a type, ``x: float``, convert the field in
        a reversible function; ordinary code checks them)."""
        hints: dict[str, Any] = {}
        for parameter, cls in zip(parameters, self.classes):
            if cls is not None:
                declared = typing.get_type_hints(cls)
                for name in field_names(cls):
                    if name in declared:
                        hints[f"{parameter}.{name}"] = declared[name]
        return hints

    def flatten(self, args: Sequence[Any]) -> list[Any]:
        flat: list[Any] = []
        for value, cls in zip(args, self.classes):
            flat.extend([value] if cls is None else [getattr(value, f) for f in field_names(cls)])
        return flat

    def after(self, count: int) -> Layout:
        """The layout of outputs that are ``count`` numbers, then the
        parameters (an ordinary function's: what it returns, then its
        arguments as it left them)."""
        return Layout((None,) * count + self.classes)

    def flatten_cotangents(self, cotangents: Sequence[Any], what: str = "cotangent") -> list[Any]:
        """Cotangents (or tangents: ``what``) shaped like the call's outputs
        (inputs), per field: a struct's as an instance of its class, or
        ``None`` for zero."""
        flat: list[Any] = []
        for value, cls in zip(cotangents, self.classes, strict=True):
            if cls is None:
                flat.append(value)
            elif value is None:
                flat.extend([None] * len(field_names(cls)))
            elif isinstance(value, cls):
                flat.extend(getattr(value, f) for f in field_names(cls))
            else:
                raise TypeError(f"the {what} of a {cls.__name__} is one, or None, not {type(value).__name__}")
        return flat

    def flat_output(self, args: Sequence[Any], output: int) -> int:
        """The position among the flattened outputs of output ``output``
        (``args``: the outputs, a struct's value as an instance), which
        must not be a struct (a loss is a number)."""
        classes = self.classes
        if -len(classes) <= output < len(classes) and (cls := classes[output]) is not None:
            raise TypeError(
                f"output #{output % len(classes)} is a {cls.__name__}, not a number: the loss is a float "
                "of its own, returned or an argument (a field of a struct cannot be the loss)"
            )
        if not -len(classes) <= output < len(classes):
            return output  # out of range: said where the flattened call checks it
        return len(self.flatten(args[: output % len(classes)]))

    def rebuild(self, args: Sequence[Any], results: Sequence[Any]) -> tuple[Any, ...]:
        """The call's results per parameter: each struct a new instance of
        its class holding the fields the flat call returned."""
        out: list[Any] = []
        position = 0
        for value, cls in zip(args, self.classes):
            if cls is None:
                out.append(results[position])
                position += 1
                continue
            names = field_names(cls)
            updated = dict(zip(names, results[position : position + len(names)]))
            position += len(names)
            out.append(
                dataclasses.replace(value, **updated) if dataclasses.is_dataclass(cls) else value._replace(**updated)
            )
        return tuple(out)


class TakesStructs:
    """What a compiled function needs to take struct arguments: its syntax
    tree and annotations, and its caches of specializations, which its
    flattened copies start empty."""

    source: Source
    hints: dict[str, Any]
    _specializations: dict[Any, Any]
    _by_python_types: dict[Any, Any]
    _flattened: dict[Layout, Self]

    @functools.cached_property
    def struct_parameters(self) -> bool:
        """Whether a parameter is annotated with a struct class: then every
        call is checked for structs, not only those that pass one."""
        return any(is_struct_class(h) for h in self.hints.values())

    def takes_structs_in_expressions(self, callee: ast.expr) -> bool:
        """Whether a call of ``callee`` in an expression of this function
        may pass a struct whole (a reversible function's calls that pass
        structs are statements)."""
        return False

    def layout_of(self, args: Sequence[Any]) -> Layout | None:
        """The struct layout of a call with ``args``, or None without structs."""
        self.source.check_count(args)
        return Layout.of(self.source.parameters, self.hints, args)

    def run_flat(self, args: Sequence[Any], run: Callable[[Self, Sequence[Any]], R]) -> tuple[R, Layout | None]:
        """``run`` of the function a call with ``args`` runs and of its
        arguments (this function and ``args``, or with structs its
        flattened copy and their fields), and the call's layout (None
        without structs)."""
        if not self.struct_parameters:
            try:
                return run(self, args), None
            except StructArgument:
                pass
        if (layout := self.layout_of(args)) is None:
            return run(self, args), None
        return run(self.flattened(layout), layout.flatten(args)), layout

    def flattened(self, layout: Layout) -> Self:
        """This function taking the fields of its struct arguments in
        ``layout`` as parameters of their own (cached)."""
        if (flat := self._flattened.get(layout)) is None:
            flat = copy.copy(self)
            tree = flatten_tree(self.source.tree, layout, self.source.error, self.takes_structs_in_expressions)
            flat.source = dataclasses.replace(self.source, tree=tree)
            flat.hints = {**self.hints, **layout.field_hints(self.source.parameters)}
            flat._specializations, flat._by_python_types, flat._flattened = {}, {}, {}
            self._flattened[layout] = flat
        return flat


CALLEE_LAYOUT = "revmlir_struct_layout"
"""The attribute of a call statement of a flattened tree that passes
structs whole: the callee's ``Layout``, whose flattened function the call
runs."""


def flatten_tree(
    tree: ast.FunctionDef, layout: Layout, error: Error, whole_in_expressions: Callable[[ast.expr], bool]
) -> ast.FunctionDef:
    """``tree`` with each struct parameter ``d`` replaced by its fields,
    ``d.x`` read and updated as the variable ``d.x``, and ``d`` passed whole
    to a call as its fields: a call statement's, or a call in an expression
    of a function for which ``whole_in_expressions`` holds.  Any other use
    of ``d`` (an unknown field, ``d`` in an expression) is an error at it."""
    classes = {arg.arg: cls for arg, cls in zip(tree.args.args, layout.classes) if cls is not None}
    structs = {name: field_names(cls) for name, cls in classes.items()}

    class Flatten(ast.NodeTransformer):
        def visit_Expr(self, node: ast.Expr) -> ast.AST:
            """A call statement passing a struct whole, ``g(y, d)``."""
            if isinstance(node.value, ast.Call) and self.passes_whole(node.value):
                self.pass_whole(node.value)
                return node
            return self.generic_visit(node)

        def visit_Call(self, node: ast.Call) -> ast.AST:
            """A call in an expression passing a struct whole, ``e = g(d)``."""
            if whole_in_expressions(node.func) and self.passes_whole(node):
                return self.pass_whole(node)
            return self.generic_visit(node)

        def passes_whole(self, call: ast.Call) -> bool:
            return any(isinstance(a, ast.Name) and a.id in structs for a in call.args)

        def pass_whole(self, call: ast.Call) -> ast.Call:
            """``call`` passing the fields of the structs it passes whole, to
            the callee taking them as parameters (its ``CALLEE_LAYOUT``)."""
            callee = tuple(classes.get(a.id) if isinstance(a, ast.Name) else None for a in call.args)
            args: list[ast.expr] = []
            for arg in call.args:
                if isinstance(arg, ast.Name) and arg.id in structs:
                    args.extend(
                        ast.copy_location(ast.Name(id=f"{arg.id}.{f}", ctx=ast.Load()), arg) for f in structs[arg.id]
                    )
                else:
                    args.append(self.visit(arg))
            call.func = self.visit(call.func)
            call.args = args
            setattr(call, CALLEE_LAYOUT, Layout(callee))
            return call

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if isinstance(node.value, ast.Name) and (fields := structs.get(node.value.id)) is not None:
                if node.attr not in fields:
                    raise error(
                        node,
                        f"'{node.value.id}' has no field '{node.attr}'",
                        f"its fields are {', '.join(fields)}",
                    )
                return ast.copy_location(ast.Name(id=f"{node.value.id}.{node.attr}", ctx=node.ctx), node)
            return self.generic_visit(node)

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if (fields := structs.get(node.id)) is not None:
                raise error(
                    node,
                    f"'{node.id}' is a struct argument, which is read and updated field by field",
                    f"use its fields ({', '.join(f'{node.id}.{f}' for f in fields)}), or pass it whole "
                    f"to a function that takes it: g({node.id})",
                )
            return node

    flat = copy.deepcopy(tree)
    flat.body = [Flatten().visit(statement) for statement in flat.body]
    arguments: list[ast.arg] = []
    for arg in flat.args.args:
        fields = structs.get(arg.arg)
        names = [arg.arg] if fields is None else [f"{arg.arg}.{f}" for f in fields]
        arguments.extend(ast.copy_location(ast.arg(arg=name), arg) for name in names)
    flat.args.args = arguments
    return flat
