"""Struct arguments: dataclasses and named tuples of numbers and arrays.

A reversible function takes a struct as its fields: a call with a struct
argument ``d`` runs the function compiled with one parameter per field,
named ``d.x`` (in the IR and in diagnostics), whose body reads and updates
``d.x`` like any variable.  ``d.x += d.y`` is then an update of one
variable reading another, which is reversible, and ``d.x -= d.x`` is
rejected as ``x -= x`` is.  The call gives the struct back as a new
instance of its class holding the updated fields (arrays in it are updated
in place, as any array argument is); the derivative entry points give a
struct's derivatives back the same way.  A field holding a struct is
flattened in turn, depth first: ``d.inner.x`` is one parameter.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar, cast
from weakref import WeakKeyDictionary

import numpy as np

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
    transformations that take the fields (the derivative entry points,
    ``rv.gradient`` to ``rv.hessian``, flatten structs as calls do), and on
    the first call with a struct, which the function's call then flattens
    (so that calls without structs pay nothing for them)."""


def struct_argument(function: str, name: str, value: Any) -> StructArgument:
    """The error for struct ``value`` passed as argument ``name`` where
    only its fields go."""
    return StructArgument(
        f"{function}(): argument '{name}' has unsupported type {type(value).__name__} (struct arguments are "
        "taken by calls and by rv.gradient, rv.vjp, rv.jvp, rv.jacobian, rv.hvp, rv.hessian, rv.inverse_jvp, "
        "rv.inverse_vjp, rv.newton_step and rv.constant_width; here, use a function taking the fields as "
        "parameters of their own)"
    )


_NOT_A_TUPLE = (np.ndarray, str, bytes, Mapping)
"""Iterables that are one value, not a tuple of them: an array given as
``args`` (``rv.gradient(f, x)``) would be read as one argument per element."""


def argument_tuple(
    values: Any, api: str, name: str = "args", what: str = "the tuple of f's arguments"
) -> tuple[Any, ...]:
    """The ``args`` of a call that ``api(f, args)`` takes as a tuple (or a
    list, or another iterable of them), or ``name``, another parameter that
    has one entry per argument or output (``tangents``, ``vectors``):
    every API taking these reads them here.  A struct there is one entry,
    which is ``(d,)`` (a named tuple would otherwise be read as its fields,
    a dataclass refused as not iterable), and so is an array, a string or a
    mapping (``_NOT_A_TUPLE``)."""
    if is_struct(values) or isinstance(values, _NOT_A_TUPLE) or not isinstance(values, Iterable):
        call = f"{api}(f, args)" if name == "args" else f"{api}(f, args, {name})"
        raise TypeError(f"{call}: {name} is {what}, got {type(values).__name__} (one: (x,))")
    return tuple(values)


class _NamedTupleClass(Protocol):
    _fields: tuple[str, ...]


_field_names: WeakKeyDictionary[type, tuple[str, ...]] = WeakKeyDictionary()


def field_names(cls: type) -> tuple[str, ...]:
    """The fields of struct class ``cls``, found once per class: every
    call with a struct reads them (``dataclasses.fields`` costs more than
    a small call)."""
    if (names := _field_names.get(cls)) is None:
        if dataclasses.is_dataclass(cls):
            names = tuple(f.name for f in dataclasses.fields(cls))
        else:  # a struct class that is no dataclass is a named tuple (is_struct_class)
            names = tuple(cast(_NamedTupleClass, cls)._fields)
        _field_names[cls] = names
    return names


def replaced(value: Any, fields: dict[str, Any]) -> Any:
    """A new instance of ``value``'s struct class holding ``fields``."""
    return dataclasses.replace(value, **fields) if dataclasses.is_dataclass(type(value)) else value._replace(**fields)


@dataclass(frozen=True)
class Struct:
    """The shape of one struct in a call: its class and, per field, the
    struct the field holds (``None``: a number or an array).  A nested
    struct is flattened depth first, so ``p.inner.x`` is one parameter."""

    cls: type
    fields: tuple[Struct | None, ...]

    @staticmethod
    def of(value: Any, name: str, within: tuple[int, ...] = ()) -> Struct | None:
        """The shape of argument ``value`` (named ``name``, ``p.inner`` for
        a field), or None when it is no struct; ``within``: the identities
        of the structs holding it, of which it must be none."""
        if not is_struct(value):
            return None
        if id(value) in within:
            raise TypeError(f"argument '{name}' is a struct holding itself, which has no fields to pass")
        inside = (*within, id(value))
        cls = type(value)
        return Struct(cls, tuple(Struct.of(getattr(value, f), f"{name}.{f}", inside) for f in field_names(cls)))

    @property
    def names(self) -> tuple[str, ...]:
        return field_names(self.cls)

    @property
    def size(self) -> int:
        """How many parameters the struct is."""
        return sum(1 if field is None else field.size for field in self.fields)

    def leaves(self, name: str) -> list[str]:
        """The names of its parameters, ``name.x`` and ``name.inner.y``."""
        return [
            leaf
            for field, shape in zip(self.names, self.fields)
            for leaf in ([f"{name}.{field}"] if shape is None else shape.leaves(f"{name}.{field}"))
        ]

    def flatten(self, value: Any) -> list[Any]:
        return [
            leaf
            for field, shape in zip(self.names, self.fields)
            for leaf in ([getattr(value, field)] if shape is None else shape.flatten(getattr(value, field)))
        ]

    def flatten_given(self, value: Any, what: str) -> list[Any]:
        """A cotangent (or tangent: ``what``) of the struct per parameter:
        an instance of its class, whose struct fields are instances or
        ``None``, or ``None`` for zero."""
        if value is None:
            return [None] * self.size
        if not isinstance(value, self.cls):
            raise TypeError(f"the {what} of a {self.cls.__name__} is one, or None, not {type(value).__name__}")
        return [
            leaf
            for field, shape in zip(self.names, self.fields)
            for leaf in ([getattr(value, field)] if shape is None else shape.flatten_given(getattr(value, field), what))
        ]

    def rebuild(self, value: Any, leaves: Iterator[Any]) -> Any:
        """A new instance of ``value``'s class holding the next of
        ``leaves`` in each parameter's place (its struct fields new
        instances too)."""
        return replaced(
            value,
            {
                field: next(leaves) if shape is None else shape.rebuild(getattr(value, field), leaves)
                for field, shape in zip(self.names, self.fields)
            },
        )

    def hints(self, name: str) -> dict[str, Any]:
        """The annotations of its parameters that fix a type."""
        declared = typing.get_type_hints(self.cls)
        hints: dict[str, Any] = {}
        for field, shape in zip(self.names, self.fields):
            if shape is not None:
                hints.update(shape.hints(f"{name}.{field}"))
            elif field in declared and not is_struct_class(declared[field]):
                hints[f"{name}.{field}"] = declared[field]
        return hints


def _mismatch(name: str, declared: Any, found: Struct | None) -> str | None:
    """What disagrees with the annotation ``declared`` of argument (or
    field) ``name`` holding ``found``: a struct where its class is declared
    must be an instance of it, and a struct where a number or an array is
    declared is refused; or None."""
    if is_struct_class(declared):
        if found is None or not issubclass(found.cls, declared):
            got = "no struct" if found is None else found.cls.__name__
            return f"argument '{name}' is declared {declared.__name__}, got {got}"
    elif found is not None and isinstance(declared, type) and declared is not object:
        return f"argument '{name}' is declared {declared.__name__}, got {found.cls.__name__}"
    if found is None:
        return None
    declared_fields = typing.get_type_hints(found.cls)
    for field, shape in zip(found.names, found.fields):
        if (problem := _mismatch(f"{name}.{field}", declared_fields.get(field), shape)) is not None:
            return problem
    return None


@dataclass(frozen=True)
class Layout:
    """Which parameters of a function are structs in one call: per
    parameter, the struct's shape, or None."""

    structs: tuple[Struct | None, ...]

    @staticmethod
    def of(parameters: Sequence[str], args: Sequence[Any]) -> Layout:
        """The layout of a call with ``args`` to a function with
        ``parameters`` (every entry None without structs)."""
        return Layout(tuple(Struct.of(value, name) for name, value in zip(parameters, args)))

    def mismatch(self, parameters: Sequence[str], hints: dict[str, Any]) -> str | None:
        """What disagrees with an annotation of a parameter or a field, or None."""
        for name, shape in zip(parameters, self.structs):
            if (problem := _mismatch(name, hints.get(name), shape)) is not None:
                return problem
        return None

    def flat_parameters(self, parameters: Sequence[str]) -> list[str]:
        """The parameters of the function compiled for this layout."""
        return [
            name
            for parameter, shape in zip(parameters, self.structs)
            for name in ([parameter] if shape is None else shape.leaves(parameter))
        ]

    def field_hints(self, parameters: Sequence[str]) -> dict[str, Any]:
        """The annotations of the fields, as the annotations of the flat
        parameters (those that fix a type, ``x: float``, convert the field in
        a reversible function; ordinary code checks them)."""
        hints: dict[str, Any] = {}
        for parameter, shape in zip(parameters, self.structs):
            if shape is not None:
                hints.update(shape.hints(parameter))
        return hints

    @property
    def sizes(self) -> list[int]:
        """How many flat parameters each parameter is."""
        return [1 if shape is None else shape.size for shape in self.structs]

    def flatten(self, args: Sequence[Any]) -> list[Any]:
        flat: list[Any] = []
        for value, shape in zip(args, self.structs):
            flat.extend([value] if shape is None else shape.flatten(value))
        return flat

    def after(self, count: int) -> Layout:
        """The layout of outputs that are ``count`` numbers, then the
        parameters (an ordinary function's: what it returns, then its
        arguments as it left them)."""
        return Layout((None,) * count + self.structs)

    def flatten_cotangents(self, cotangents: Sequence[Any], what: str = "cotangent") -> list[Any]:
        """Cotangents (or tangents, vectors: ``what``) shaped like the
        call's outputs (inputs), per field: a struct's as an instance of its
        class, or ``None`` for zero."""
        flat: list[Any] = []
        for value, shape in zip(cotangents, self.structs, strict=True):
            flat.extend([value] if shape is None else shape.flatten_given(value, what))
        return flat

    def flat_output(self, args: Sequence[Any], output: int) -> int:
        """The position among the flattened outputs of output ``output``
        (``args``: the outputs, a struct's value as an instance), which
        must not be a struct (a loss is a number)."""
        structs = self.structs
        if -len(structs) <= output < len(structs) and (shape := structs[output]) is not None:
            raise TypeError(
                f"output #{output % len(structs)} is a {shape.cls.__name__}, not a number: the loss is a float "
                "of its own, returned or an argument (a field of a struct cannot be the loss)"
            )
        if not -len(structs) <= output < len(structs):
            return output  # out of range: said where the flattened call checks it
        return sum(self.sizes[: output % len(structs)])

    def rebuild(self, args: Sequence[Any], results: Sequence[Any]) -> tuple[Any, ...]:
        """The call's results per parameter: each struct a new instance of
        its class holding the fields the flat call returned."""
        leaves = iter(results)
        return tuple(
            next(leaves) if shape is None else shape.rebuild(value, leaves) for value, shape in zip(args, self.structs)
        )


class TakesStructs:
    """What a compiled function needs to take struct arguments: its syntax
    tree and annotations, and its caches of specializations, which its
    flattened copies start empty."""

    source: Source
    hints: dict[str, Any]
    _specializations: dict[Any, Any]
    _by_python_types: dict[Any, Any]
    _flattened: dict[Layout, Self]
    _checked_layouts: set[Layout]
    """The layouts of calls that agree with the annotations: the check
    reads the classes' annotations, which costs more than a small call,
    so it is made once per layout."""

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
        """The struct layout of a call with ``args``, or None without
        structs.  A parameter or field annotated with a struct class must
        get an instance of it (a ``TypeError`` naming it otherwise)."""
        self.source.check_count(args)
        layout = Layout.of(self.source.parameters, args)
        if layout not in self._checked_layouts:
            if (problem := layout.mismatch(self.source.parameters, self.hints)) is not None:
                raise TypeError(problem)
            self._checked_layouts.add(layout)
        return layout if any(layout.structs) else None

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
            # a copy of its attributes: ``copy.copy`` of a function is the function (``by_name``)
            flat = object.__new__(type(self))
            vars(flat).update(vars(self))
            tree = flatten_tree(self.source.tree, layout, self.source.error, self.takes_structs_in_expressions)
            flat.source = dataclasses.replace(self.source, tree=tree)
            flat.hints = {**self.hints, **layout.field_hints(self.source.parameters)}
            flat._specializations, flat._by_python_types, flat._flattened = {}, {}, {}
            flat._checked_layouts = set()
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
    ``d.x`` (``d.inner.x`` in a nested struct) read and updated as the
    variable ``d.x``, and ``d`` (or ``d.inner``) passed whole to a call as
    its fields: a call statement's, or a call in an expression of a
    function for which ``whole_in_expressions`` holds.  Any other use of a
    struct (an unknown field, ``d`` in an expression) is an error at it."""
    structs = {arg.arg: shape for arg, shape in zip(tree.args.args, layout.structs) if shape is not None}

    def resolved(node: ast.expr) -> tuple[str, Struct | None] | None:
        """The name of the place ``node`` reads (``d.inner.x``) and its
        struct (None for a field holding a number or an array), or None
        when ``node`` is no struct or field of one."""
        if isinstance(node, ast.Name):
            return (node.id, structs[node.id]) if node.id in structs else None
        if not isinstance(node, ast.Attribute) or (outer := resolved(node.value)) is None:
            return None
        name, shape = outer
        if shape is None:
            return None  # an attribute of a field, z.real of a complex field
        if node.attr not in shape.names:
            raise error(node, f"'{name}' has no field '{node.attr}'", f"its fields are {', '.join(shape.names)}")
        return f"{name}.{node.attr}", shape.fields[shape.names.index(node.attr)]

    def whole(node: ast.expr) -> tuple[str, Struct] | None:
        """The struct ``node`` names as a whole, ``d`` or ``d.inner``."""
        found = resolved(node)
        return (found[0], found[1]) if found is not None and found[1] is not None else None

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
            return any(whole(a) is not None for a in call.args)

        def pass_whole(self, call: ast.Call) -> ast.Call:
            """``call`` passing the fields of the structs it passes whole, to
            the callee taking them as parameters (its ``CALLEE_LAYOUT``)."""
            callee: list[Struct | None] = []
            args: list[ast.expr] = []
            for arg in call.args:
                if (passed := whole(arg)) is not None:
                    name, shape = passed
                    args.extend(
                        ast.copy_location(ast.Name(id=leaf, ctx=ast.Load()), arg) for leaf in shape.leaves(name)
                    )
                    callee.append(shape)
                else:
                    args.append(self.visit(arg))
                    callee.append(None)
            call.func = self.visit(call.func)
            call.args = args
            setattr(call, CALLEE_LAYOUT, Layout(tuple(callee)))
            return call

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if (found := resolved(node)) is None:
                return self.generic_visit(node)
            name, shape = found
            if shape is not None:
                raise error(
                    node,
                    f"'{name}' is a struct field, which is read and updated field by field",
                    f"use its fields ({', '.join(shape.leaves(name))}), or pass it whole to a function "
                    f"that takes it: g({name})",
                )
            return ast.copy_location(ast.Name(id=name, ctx=node.ctx), node)

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if (shape := structs.get(node.id)) is not None:
                raise error(
                    node,
                    f"'{node.id}' is a struct argument, which is read and updated field by field",
                    f"use its fields ({', '.join(f'{node.id}.{f}' for f in shape.names)}), or pass it whole "
                    f"to a function that takes it: g({node.id})",
                )
            return node

    flat = copy.deepcopy(tree)
    flat.body = [Flatten().visit(statement) for statement in flat.body]
    arguments: list[ast.arg] = []
    for arg in flat.args.args:
        shape = structs.get(arg.arg)
        names = [arg.arg] if shape is None else shape.leaves(arg.arg)
        arguments.extend(ast.copy_location(ast.arg(arg=name), arg) for name in names)
    flat.args.args = arguments
    return flat
