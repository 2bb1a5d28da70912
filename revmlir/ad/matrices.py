"""Whole derivative matrices in one function: ``@f.jacobian``.

A Jacobian is a tangent per unit direction.  Doing the loop over directions
in Python costs a native call (and its argument marshalling) per column;
doing it in the IR costs nothing extra, and the matrix is one call.  Each
column is built the same reversible way from a derived function ``@d``:

    set the direction e_j   (an ancilla 1.0 for a scalar, += 1.0 on a
                             workspace element for an array)
    rev.call @d             (f's arguments and the derivative slots, in place)
    M[:, j] += what @d left in the gathered slots
    rev.uncall @d           (everything back, the slots included)
    clear the direction

so ``M`` (zero on entry) receives the columns and every workspace comes back
as it was (up to rounding).  This needs ``@d`` to be exactly invertible,
which tangent programs are (the inverse of a tangent is the tangent of the
inverse); gradient programs are not — they discard the gradients of
ancillas at their birth, so running them backwards does not give the seeds
back — which is why Hessian matrices are assembled column by column from
``@f.hvp`` by the caller instead.  The float arguments of ``f`` are laid out as
``rv.jacobian``/``rv.hessian`` do: argument by argument, a scalar as one
entry, an array's elements in C order.  Complex and log-number arguments and
stacks are not supported here (a diagnostic names the function).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, MemRefType, ModuleOp, f64
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.builder import FunctionBuilder, ModuleBuilder, Value
from revmlir.dialects import rev
from revmlir.errors import describe_op

JACOBIAN_SUFFIX = ".jacobian"

Init = Literal["direction", "zero"]


@dataclass(frozen=True)
class SlotGroup:
    """One derivative slot per float argument of ``f`` in ``@d``'s
    signature: how it starts each column (the unit direction or zero) and
    whether the column is read from it afterwards."""

    prefix: str
    init: Init
    gathered: bool


@dataclass(frozen=True)
class _Argument:
    """A float argument of ``f``: its name in the matrix function and, for an
    array, its rank."""

    name: str
    type: Attribute

    @property
    def is_array(self) -> bool:
        return isinstance(self.type, MemRefType)

    @property
    def rank(self) -> int:
        return len(self.type.get_shape()) if isinstance(self.type, MemRefType) else 0


def _float_arguments(primal: rev.FuncOp, names: Sequence[str]) -> list[_Argument]:
    """The f64 arguments and arrays; integers carry no derivative; anything
    else is not supported here."""
    found: list[_Argument] = []
    for name, type in zip(names, primal.function_type.inputs.data, strict=True):
        element = type.element_type if isinstance(type, MemRefType) else type
        if element == f64:
            found.append(_Argument(name, type))
        elif not isinstance(element, IntegerType | IndexType):
            raise PassFailedException(
                f"{describe_op(primal)}: derivative matrices support f64, integer "
                f"and boolean arguments and arrays of them, not {type}"
            )
    return found


@dataclass
class _ColumnBuilder:
    """Emits the matrix function around one derived function ``@d``."""

    fn: FunctionBuilder
    floats: list[_Argument]
    groups: Sequence[SlotGroup]

    def dims(self, arg: _Argument) -> list[Value]:
        return [
            Value(self.fn, self.fn.emit(memref.DimOp(self.fn.get(arg.name).ssa, self.fn.const(k, IndexType()).ssa)).results[0])
            for k in range(arg.rank)
        ]

    def size(self, arg: _Argument) -> Value:
        total = self.fn.const(1, IndexType())
        for d in self.dims(arg):
            total = total * d
        return total

    def offsets(self) -> list[Value]:
        found, running = [], self.fn.const(0, IndexType())
        for arg in self.floats:
            found.append(running)
            running = running + self.size(arg)
        return found

    def slot(self, group: SlotGroup, arg: _Argument) -> str:
        return f"{group.prefix}_{arg.name}"

    def unflatten(self, arg: _Argument, flat: Value) -> list[Value]:
        """C-order indices of element ``flat`` of ``arg``."""
        indices: list[Value] = []
        for d in reversed(self.dims(arg)):
            indices.append(self.fn.binary("rem", flat, d))
            flat = self.fn.binary("div", flat, d)
        return indices[::-1]

    def in_range(self, j: Value, offset: Value, arg: _Argument) -> Callable[[], Value]:
        return lambda: self.fn.logical(
            "and", self.fn.compare("ge", j, offset), self.fn.compare("lt", j, offset + self.size(arg))
        )

    def unit(self, j: Value, offset: Value) -> Value:
        return self.fn.select(self.fn.compare("eq", j, offset), 1.0, 0.0)

    def start(self, j: Value, offsets: Sequence[Value]) -> None:
        """Allocate the scalar slots and set the direction in the arrays."""
        for group in self.groups:
            for arg, offset in zip(self.floats, offsets, strict=True):
                self._slot(group, arg, j, offset, start=True)

    def finish(self, j: Value, offsets: Sequence[Value]) -> None:
        for group in reversed(self.groups):
            for arg, offset in reversed(list(zip(self.floats, offsets, strict=True))):
                self._slot(group, arg, j, offset, start=False)

    def _slot(self, group: SlotGroup, arg: _Argument, j: Value, offset: Value, start: bool) -> None:
        fn, name = self.fn, self.slot(group, arg)
        if not arg.is_array:
            value = self.unit(j, offset) if group.init == "direction" else fn.const(0.0, f64)
            if start:
                fn.alloc(name, value)
            else:
                fn.free(name, value)
        elif group.init == "direction":
            update = fn.add if start else fn.sub
            element = lambda: fn.at(name, *self.unflatten(arg, j - offset))  # noqa: E731
            fn.if_(self.in_range(j, offset, arg), lambda: update(element(), 1.0))

    def gather(self, matrix: str, j: Value, offsets: Sequence[Value]) -> None:
        fn = self.fn
        for group in self.groups:
            if not group.gathered:
                continue
            for arg, offset in zip(self.floats, offsets, strict=True):
                name = self.slot(group, arg)
                if not arg.is_array:
                    fn.add(fn.at(matrix, offset, j), fn.get(name))
                    continue
                dims = self.dims(arg)

                def loops(level: int, indices: list[Value], flat: Value, name: str = name, dims: list[Value] = dims, offset: Value = offset) -> None:
                    if level == len(dims):
                        fn.add(fn.at(matrix, offset + flat, j), lambda: fn.load(name, indices))
                        return
                    fn.for_(0, dims[level], 1, lambda i: loops(level + 1, [*indices, i], flat * dims[level] + i))

                loops(0, [], fn.const(0, IndexType()))


def _matrix_function(
    module: ModuleOp, name: str, primal_name: str, derived: str, groups: Sequence[SlotGroup]
) -> rev.FuncOp:
    primal = SymbolTable.lookup_symbol(module, primal_name)
    assert isinstance(primal, rev.FuncOp)
    types = list(primal.function_type.inputs.data)
    names = [f"a{i}" for i in range(len(types))]
    floats = _float_arguments(primal, names)
    if not floats:
        raise PassFailedException(f"{describe_op(primal)} has no float argument to differentiate")
    matrix_type = MemRefType(f64, [DYNAMIC_INDEX, DYNAMIC_INDEX])
    workspaces = [
        (f"{g.prefix}_{a.name}", a.type) for g in groups for a in floats if a.is_array
    ]
    fn = ModuleBuilder().function(name, [*zip(names, types), ("M", matrix_type), *workspaces])
    columns = _ColumnBuilder(fn, floats, groups)
    offsets = columns.offsets()
    total = offsets[-1] + columns.size(floats[-1])
    targets = [*names, *(columns.slot(g, a) for g in groups for a in floats)]

    def column(j: Value) -> None:
        columns.start(j, offsets)
        fn.call(derived, targets)
        columns.gather("M", j, offsets)
        fn.call(derived, targets, inverse=True)
        columns.finish(j, offsets)

    fn.for_(0, total, 1, column)
    function = fn.finish()
    function.location = primal.location
    return function


def _add(module: ModuleOp, function: rev.FuncOp, after: str) -> rev.FuncOp:
    anchor = SymbolTable.lookup_symbol(module, after)
    assert anchor is not None
    module.body.block.insert_op_after(function, anchor)
    return function


def generate_jacobians(module: ModuleOp, names: Sequence[str]) -> list[rev.FuncOp]:
    """Add ``@f.jacobian(args…, M, tangent workspaces…)``: ``M[:, j] +=``
    the tangent of every float argument along the ``j``-th unit direction
    (forward mode, ``@f.tan`` per column); one zeroed tangent workspace per
    float array argument."""
    from revmlir.ad.tangent import TANGENT_SUFFIX, generate_tangents

    generate_tangents(module, names)
    groups = [SlotGroup("t", "direction", gathered=True)]
    return [
        _add(module, _matrix_function(module, n + JACOBIAN_SUFFIX, n, n + TANGENT_SUFFIX, groups), n + TANGENT_SUFFIX)
        for n in names
        if SymbolTable.lookup_symbol(module, n + JACOBIAN_SUFFIX) is None
    ]
