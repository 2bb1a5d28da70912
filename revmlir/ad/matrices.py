"""Whole derivative matrices in one function: ``@f.jacobian`` and
``@f.hessian``.

A Jacobian is a tangent per unit direction, a Hessian a Hessian-vector
product per unit direction.  Doing the loop over directions in Python costs
a native call (and its argument marshalling) per column; doing it in the IR
costs nothing extra, and the matrix is one call.  A column is:

    set the direction e_j   (an ancilla 1.0 for a scalar, += 1.0 on a
                             workspace element for an array)
    rev.call @d             (f's arguments and the derivative slots, in place)
    swap the gathered slots with the zero row C[j, :]
    zero every other slot   (see below)
    (Jacobians) rev.uncall @f, which restores f's arguments

so ``C`` (zero on entry) receives the columns as its rows — the transpose
of the matrix, written a contiguous row per column — and every workspace
comes back zero.  With ``L`` lanes (vector mode, ``@f.tanL``) one run
computes columns ``j … j + L − 1``.

A slot is not put back by undoing what ``@d`` did to it: an infinite
derivative (``sqrt`` or ``log`` at 0) cannot be subtracted back out
(``∞ − ∞`` is ``NaN``), and the next column would read the ``NaN``; nor
can the Hessian-vector product ``@f.grad.lossK.tan`` be uncalled (the
gradient program inside it discards the gradients of ancillas at their
birth).  The slots that are not swapped into ``C`` (the direction, the
seeds, an idle lane's) are zeroed whatever they hold, scalars by an
unchecked ``anc.free``, array elements by a swap with a zero discarded so.
The Hessian's columns are all ``@f.hessian`` computes: each
Hessian-vector product runs the gradient it differentiates, so a gradient
computed before them would be work nothing reads.

The float arguments of ``f`` are laid out as ``rv.jacobian``/``rv.hessian``
do: argument by argument, a scalar as one entry, an array's elements in C
order.  Only f64 arguments (and integers, which carry nothing) are supported
here; a diagnostic names the function otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, MemRefType, ModuleOp, UnitAttr, f64
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.derived import derived_function
from revmlir.ad.tangent import generate_hvps, generate_tangents, hvp_name, tangent_name
from revmlir.builder import FunctionBuilder, ModuleBuilder, Value
from revmlir.dialects import anc, rev
from revmlir.errors import describe_op
from revmlir.interfaces import set_checks
from revmlir.naming import FORGETFUL_ATTR

JACOBIAN_SUFFIX = ".jacobian"
HESSIAN_SUFFIX = ".hessian"

Init = Literal["direction", "zero", "seed"]


@dataclass(frozen=True)
class SlotGroup:
    """One derivative slot per float argument of ``f`` in ``@d``'s
    signature: how it starts each column (the unit direction, zero, or the
    loss's unit seed), whether the column is read from it afterwards, and
    which of the columns a vector-mode ``@d`` computes at once it belongs to
    (its lane)."""

    prefix: str
    init: Init
    gathered: bool
    lane: int = 0


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
    loss: str | None = None  # the scalar whose seed is 1 (Hessians)

    def dims(self, arg: _Argument) -> list[Value]:
        fn = self.fn
        return [
            Value(fn, fn.emit(memref.DimOp(fn.get(arg.name).ssa, fn.const(k, IndexType()).ssa)).results[0])
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

    def each_element(self, arg: _Argument, body: Callable[[list[Value], Value], None]) -> None:
        """``body(indices, flat)`` for every element of array ``arg``."""
        fn, dims = self.fn, self.dims(arg)

        def loops(level: int, indices: list[Value], flat: Value) -> None:
            if level == len(dims):
                body(indices, flat)
                return
            fn.for_(0, dims[level], 1, lambda i: loops(level + 1, [*indices, i], flat * dims[level] + i))

        loops(0, [], fn.const(0, IndexType()))

    def initial(self, group: SlotGroup, arg: _Argument, j: Value, offset: Value) -> Value:
        """What a scalar slot holds at the start of column ``j``."""
        fn = self.fn
        if group.init == "direction":
            return fn.select(fn.compare("eq", j, offset), 1.0, 0.0)
        return fn.const(1.0 if group.init == "seed" and arg.name == self.loss else 0.0, f64)

    def direction(self, group: SlotGroup, arg: _Argument, j: Value, offset: Value) -> None:
        """``+1`` on the array element the unit direction ``j`` selects."""
        fn, name = self.fn, self.slot(group, arg)
        in_range = lambda: fn.logical(  # noqa: E731
            "and", fn.compare("ge", j, offset), fn.compare("lt", j, offset + self.size(arg))
        )
        fn.if_(in_range, lambda: fn.add(fn.at(name, *self.unflatten(arg, j - offset)), 1.0))

    def start(self, js: Sequence[Value], offsets: Sequence[Value]) -> None:
        """Allocate the scalar slots, set the direction (lane ``l``'s is
        ``js[l]``) in the arrays (the other array slots are zero
        workspaces)."""
        for group in self.groups:
            j = js[group.lane]
            for arg, offset in zip(self.floats, offsets, strict=True):
                if not arg.is_array:
                    self.fn.alloc(self.slot(group, arg), self.initial(group, arg, j, offset))
                elif group.init == "direction":
                    self.direction(group, arg, j, offset)

    def gather(
        self,
        matrix: str,
        js: Sequence[Value],
        offsets: Sequence[Value],
        present: Mapping[int, Callable[[], Value]] | None = None,
    ) -> None:
        """Lane ``l``'s gathered slots swapped with the (zero) row
        ``C[js[l], :]`` where ``present[l]()`` holds (always for a lane
        without a condition), which leaves the slots zero.  ``C`` holds the
        columns as rows, so a column is written contiguously."""
        fn = self.fn

        for group in (g for g in self.groups if g.gathered):
            j = js[group.lane]

            def gather_group(group: SlotGroup = group, j: Value = j) -> None:
                for arg, offset in zip(self.floats, offsets, strict=True):
                    name = self.slot(group, arg)
                    if not arg.is_array:
                        fn.swap(fn.at(matrix, j, offset), name)
                    else:
                        self.each_element(
                            arg,
                            lambda indices, flat: fn.swap(fn.at(matrix, j, offset + flat), fn.at(name, *indices)),
                        )

            condition = (present or {}).get(group.lane)
            if condition is None:
                gather_group()
            else:
                fn.if_(condition, gather_group)

    def finish(self, present: Mapping[int, Callable[[], Value]]) -> None:
        """End a column whose gathered slots were moved into ``C``
        (``gather``), so are zero, except in idle lanes
        (``present[l]()`` false), which hold what lane 0 moved: every slot
        that may not be zero is zeroed whatever it holds.  Putting a slot
        back by subtracting what it is known to hold (or uncalling ``@d``)
        cannot take an infinite derivative back out (``∞ − ∞`` is
        ``NaN``), which the next column would then read."""
        fn = self.fn
        for group in reversed(self.groups):
            gathered = present.get(group.lane) if group.gathered else None
            for arg in reversed(self.floats):
                name = self.slot(group, arg)
                if group.gathered and gathered is None:
                    if not arg.is_array:
                        fn.free(name, 0.0)
                elif not arg.is_array:
                    self.discard(name)
                elif gathered is None:
                    self.clear(arg, name)
                else:
                    self.clear_if_idle(gathered, arg, name)

    def clear_if_idle(self, gathered: Callable[[], Value], arg: _Argument, name: str) -> None:
        """``clear`` array slot ``name`` of a lane where ``gathered()`` is
        false (idle: it holds a copy of lane 0's column)."""
        self.fn.if_(lambda: self.fn.logical("not", gathered()), lambda: self.clear(arg, name))

    def discard(self, name: str) -> None:
        """End scalar slot ``name`` whatever it holds: its free is
        unchecked (the next column allocates it afresh), and forgetful, as
        an adjoint's (decision 28): the matrix function has no inverse, so
        ``rev-invert`` leaves it out."""
        fn = self.fn
        fn.free(name, 0.0)
        freed = fn.current_block.last_op
        assert isinstance(freed, anc.FreeOp)
        set_checks(freed, False)
        freed.attributes[FORGETFUL_ATTR] = UnitAttr()

    def clear(self, arg: _Argument, name: str) -> None:
        """Zero array slot ``name`` whatever it holds, element by element:
        each is swapped with a new zero, which is discarded."""
        fn = self.fn

        def zero(indices: list[Value], flat: Value) -> None:
            fn.alloc(_SPENT, 0.0, f64)
            fn.swap(fn.at(name, *indices), _SPENT)
            self.discard(_SPENT)

        self.each_element(arg, zero)


_SPENT = "spent"
"""The ancilla ``_ColumnBuilder.clear`` swaps an element into."""


def _primal(module: ModuleOp, name: str) -> tuple[rev.FuncOp, list[str], list[_Argument]]:
    primal = SymbolTable.lookup_symbol(module, name)
    assert isinstance(primal, rev.FuncOp)
    names = [f"a{i}" for i in range(len(primal.function_type.inputs.data))]
    floats = _float_arguments(primal, names)
    if not floats:
        raise PassFailedException(f"{describe_op(primal)} has no float argument to differentiate")
    return primal, names, floats


_MATRIX = MemRefType(f64, [DYNAMIC_INDEX, DYNAMIC_INDEX])


def _lane_columns(
    fn: FunctionBuilder, j: Value, last: Value, lanes: int
) -> tuple[list[Value], dict[int, Callable[[], Value]]]:
    """The columns a vector-mode derived function computes from ``j`` on:
    lane ``l`` computes column ``j + l``, except past ``last``, where it
    recomputes column ``j`` (bit for bit what lane 0 computes), is not
    gathered (the conditions returned) and is put back like lane 0."""

    def present_in(lane: int) -> Callable[[], Value]:
        return lambda: fn.compare("lt", j + lane, last)

    present = {lane: present_in(lane) for lane in range(1, lanes)}
    return [j, *(fn.select(present[lane](), j + lane, j) for lane in range(1, lanes))], present


def _lane_groups(lanes: int, *groups: SlotGroup) -> list[SlotGroup]:
    """``groups`` once per lane (named with the lane's number when there
    are several)."""
    return [
        SlotGroup(g.prefix + (str(lane) if lanes > 1 else ""), g.init, g.gathered, lane)
        for lane in range(lanes)
        for g in groups
    ]


def _jacobian_function(module: ModuleOp, primal_name: str, lanes: int) -> rev.FuncOp:
    primal, names, floats = _primal(module, primal_name)
    groups = _lane_groups(lanes, SlotGroup("t", "direction", gathered=True))
    workspaces = [(f"{g.prefix}_{a.name}", a.type) for g in groups for a in floats if a.is_array]
    types = primal.function_type.inputs.data
    fn = ModuleBuilder().function(primal_name + JACOBIAN_SUFFIX, [*zip(names, types), ("C", _MATRIX), *workspaces])
    columns = _ColumnBuilder(fn, floats, groups)
    offsets = columns.offsets()
    targets = [*names, *(columns.slot(g, a) for g in groups for a in floats)]
    derived = tangent_name(primal_name, lanes)
    last = offsets[-1] + columns.size(floats[-1])

    def column(j: Value) -> None:
        js, present = _lane_columns(fn, j, last, lanes)
        columns.start(js, offsets)
        fn.call(derived, targets)
        columns.gather("C", js, offsets, present)
        fn.call(primal_name, names, inverse=True)
        columns.finish(present)

    fn.for_(0, last, lanes, column)
    function = fn.finish()
    function.location = primal.location
    return function


def _hessian_function(module: ModuleOp, primal_name: str, loss: int, lanes: int) -> rev.FuncOp:
    primal, names, floats = _primal(module, primal_name)
    if names[loss] not in {a.name for a in floats if not a.is_array}:
        raise PassFailedException(f"{describe_op(primal)}: argument #{loss} is not an f64 scalar")
    groups = [
        SlotGroup("g", "seed", gathered=False),
        *_lane_groups(lanes, SlotGroup("t", "direction", gathered=False), SlotGroup("h", "zero", gathered=True)),
    ]
    workspaces = [(f"{g.prefix}_{a.name}", a.type) for g in groups for a in floats if a.is_array]
    types = primal.function_type.inputs.data
    fn = ModuleBuilder().function(
        primal_name + HESSIAN_SUFFIX,
        [*zip(names, types), ("C", _MATRIX), ("first", IndexType()), ("last", IndexType()), *workspaces],
    )
    columns = _ColumnBuilder(fn, floats, groups, names[loss])
    offsets = columns.offsets()
    targets = [*names, *(columns.slot(g, a) for g in groups for a in floats)]
    last = fn.get("last")

    def column(j: Value) -> None:
        js, present = _lane_columns(fn, j, last, lanes)
        columns.start(js, offsets)
        fn.call(hvp_name(primal_name, lanes, loss), targets)
        columns.gather("C", js, offsets, present)
        columns.finish(present)

    fn.for_(fn.get("first"), last, lanes, column)
    function = fn.finish()
    function.location = primal.location
    return function


def _add(module: ModuleOp, function: rev.FuncOp, after: str) -> rev.FuncOp:
    anchor = SymbolTable.lookup_symbol(module, after)
    assert anchor is not None
    module.body.block.insert_op_after(function, anchor)
    return function


def generate_jacobians(module: ModuleOp, names: Sequence[str], lanes: int = 1) -> list[rev.FuncOp]:
    """Add ``@f.jacobian(args…, C, tangent workspaces…)``: ``C[j, :] +=``
    the tangent of every float argument along the ``j``-th unit direction
    (forward mode: ``@f.tan`` per column, or ``@f.tanL`` per ``L`` =
    ``lanes`` columns); one zeroed tangent workspace per float array
    argument and lane."""
    generate_tangents(module, names, lanes)
    return [
        _add(module, _jacobian_function(module, n, lanes), tangent_name(n, lanes))
        for n in names
        if derived_function(module, n + JACOBIAN_SUFFIX, n) is None
    ]


def generate_hessian_matrices(module: ModuleOp, names: Sequence[str], loss: int, lanes: int = 1) -> list[rev.FuncOp]:
    """Add ``@f.hessian(args…, C, first, last, workspaces…)``: for
    ``first ≤ j < last``, row ``C[j, :]`` (zero on entry) receives column
    ``j`` of the Hessian of argument ``loss``
    (an f64 scalar) along the ``j``-th unit direction (forward over reverse:
    ``@f.grad.lossK.tan`` per column, or ``@f.grad.lossK.tanL`` per ``L`` =
    ``lanes`` columns, the adjoint seeded at the loss only).  The
    workspaces are zeroed arrays, per f64 array argument: its seed, then
    per lane its tangent and seed tangent; they come back zero."""
    generate_hvps(module, names, lanes, loss)
    return [
        _add(module, _hessian_function(module, n, loss, lanes), hvp_name(n, lanes, loss))
        for n in names
        if derived_function(module, n + HESSIAN_SUFFIX, n) is None
    ]
