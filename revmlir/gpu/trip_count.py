"""The trip count of a kernel's parallel loop, known at its launch.

A kernel's loop is a grid-stride loop (``revmlir.gpu.outline``), correct
for any grid, so a launch needs no trip count; knowing it lets the launch
spread a few iterations over every multiprocessor, or give each thread one
(``revmlir.gpu.launch_shape``).  Where the loop's bounds are computable from
the kernel's arguments alone, outlining records them as ``LoopBounds``,
expressions over:

* integer constants;
* integer and ``index`` scalar arguments;
* the sizes of array arguments (``memref.dim`` at a constant dimension);
* ``arith``'s addition, subtraction and multiplication of those, and its
  casts between integer widths (``index_cast``, ``extsi``, ``extui``,
  ``trunci``),

which is what the frontends' loops have (``rv.prange(len(x))``,
``rv.prange(a, b, s)``: an ``index_cast`` of a size or a scalar).  Other
bounds record nothing, and the launch is as without a count.

Evaluating one cannot fail: every operation is total, computed as the
kernel computes it, in two's complement at the operation's width; a
``memref.dim`` is read from the launch's own array, at a dimension its rank
has (checked when the bounds are made and when a cache entry is read).  The
count only shapes the launch: the kernel computes its own range.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Attribute, BlockArgument, SSAValue

from revmlir.runtime.values import INDEX_WIDTH, int_width, to_unsigned, wrap_int

Arguments = Sequence[Any] | Mapping[int, Any]
"""A launch's arguments by position: the launch's own list of them (arrays
as numpy arrays or ``DeviceArray``s, scalars as numbers), or a mapping of
some positions.  ``index`` is as wide on the device (NVPTX64) as on the
host, ``INDEX_WIDTH``."""


@dataclass(frozen=True)
class Constant:
    value: int
    width: int

    def evaluate(self, arguments: Arguments) -> int:
        """The value of the expression for a launch's ``arguments``, read
        as a signed integer of its width (the same for every kind of
        expression)."""
        return self.value


@dataclass(frozen=True)
class Scalar:
    """An integer or ``index`` argument of the kernel."""

    argument: int
    width: int

    def evaluate(self, arguments: Arguments) -> int:
        return wrap_int(arguments[self.argument], self.width)


@dataclass(frozen=True)
class Size:
    """The size of an array argument along one of its dimensions."""

    argument: int
    dimension: int
    width = INDEX_WIDTH

    def evaluate(self, arguments: Arguments) -> int:
        return int(arguments[self.argument].shape[self.dimension])


@dataclass(frozen=True)
class Arithmetic:
    operator: str
    """``add``, ``sub`` or ``mul``: ``OPERATORS``."""
    left: Expression
    right: Expression
    width: int

    def evaluate(self, arguments: Arguments) -> int:
        operate = OPERATORS[self.operator]
        return wrap_int(operate(self.left.evaluate(arguments), self.right.evaluate(arguments)), self.width)


@dataclass(frozen=True)
class Cast:
    """``operand`` at another width: extended (with its sign, or with zeros
    where ``unsigned``) or truncated."""

    operand: Expression
    width: int
    unsigned: bool

    def evaluate(self, arguments: Arguments) -> int:
        value = self.operand.evaluate(arguments)
        if self.unsigned and self.width > self.operand.width:
            value = to_unsigned(value, self.operand.width)
        return wrap_int(value, self.width)


Expression = Constant | Scalar | Size | Arithmetic | Cast

OPERATORS = {"add": int.__add__, "sub": int.__sub__, "mul": int.__mul__}
_ARITHMETIC = {arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul"}
_CASTS = {
    arith.IndexCastOp: False,
    arith.ExtSIOp: False,
    arith.ExtUIOp: True,
    arith.TruncIOp: False,
}
"""Each cast and whether it extends with zeros."""


@dataclass(frozen=True)
class LoopBounds:
    """A kernel loop's ``range(lb, ub, step)``, as expressions of the
    kernel's arguments."""

    lb: Expression
    ub: Expression
    step: Expression

    def trip_count(self, arguments: Arguments) -> int | None:
        """How many iterations the loop runs for a launch's ``arguments``;
        None for a step that is not positive, which the
        kernel's checks refuse before its loop (lowered reversible code)
        or which no launch shape serves better than another."""
        step = self.step.evaluate(arguments)
        if step <= 0:
            return None
        return max(0, -((self.lb.evaluate(arguments) - self.ub.evaluate(arguments)) // step))

    def unreadable(self, arguments: Sequence[Attribute]) -> str | None:
        """What the bounds read that a kernel of ``arguments`` does not
        have (an argument of another kind, a dimension past an array's
        rank), or None: a launch reads each ``Size`` position as an array
        and each ``Scalar`` one as an integer."""
        for expression in (self.lb, self.ub, self.step):
            for part in _parts(expression):
                if (reads := _reads(part, arguments)) is not None:
                    return reads
        return None

    def encode(self) -> list[object]:
        """The bounds as JSON holds them (a cache entry)."""
        return [_encode(self.lb), _encode(self.ub), _encode(self.step)]

    @staticmethod
    def decode(data: object, arguments: Sequence[Attribute]) -> LoopBounds:
        """The bounds ``encode`` gave ``data`` for a kernel of ``arguments``;
        a ``ValueError`` or ``TypeError`` for anything else: an expression
        of another shape, or one that reads an argument the kernel does not
        have, as a scalar or an array of that rank."""
        if not isinstance(data, list) or len(data) != 3:
            raise ValueError("an entry holds loop bounds that are not three expressions")
        lb, ub, step = (_decode(e) for e in data)
        if any(e.width != INDEX_WIDTH for e in (lb, ub, step)):
            raise ValueError("an entry holds loop bounds that are not of index")
        bounds = LoopBounds(lb, ub, step)
        if (reads := bounds.unreadable(arguments)) is not None:
            raise ValueError(f"an entry holds an expression that reads {reads}")
        return bounds


def _encode(expression: Expression) -> list[object]:
    match expression:
        case Constant(value, width):
            return ["constant", value, width]
        case Scalar(argument, width):
            return ["scalar", argument, width]
        case Size(argument, dimension):
            return ["size", argument, dimension]
        case Arithmetic(operator, left, right, width):
            return [operator, _encode(left), _encode(right), width]
        case Cast(operand, width, unsigned):
            return ["cast", _encode(operand), width, unsigned]


def _integer(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"an entry holds {type(value).__name__} where an integer is read")
    return value


def _width(value: object) -> int:
    if not 1 <= (width := _integer(value)) <= INDEX_WIDTH:
        raise ValueError(f"an entry holds an integer width of {width} bits")
    return width


def _decode(data: object) -> Expression:
    if not isinstance(data, list) or not data:
        raise ValueError("an entry holds an expression that is not a list")
    kind, *fields = data
    decoded: Expression
    if kind == "constant" and len(fields) == 2:
        decoded = Constant(_integer(fields[0]), _width(fields[1]))
        if wrap_int(decoded.value, decoded.width) != decoded.value:
            raise ValueError(f"an entry holds {decoded.value}, which {decoded.width} bits do not hold")
    elif kind == "scalar" and len(fields) == 2:
        decoded = Scalar(_integer(fields[0]), _width(fields[1]))
    elif kind == "size" and len(fields) == 2:
        decoded = Size(_integer(fields[0]), _integer(fields[1]))
    elif kind in OPERATORS and len(fields) == 3:
        left, right = _decode(fields[0]), _decode(fields[1])
        decoded = Arithmetic(str(kind), left, right, _width(fields[2]))
        if left.width != decoded.width or right.width != decoded.width:
            raise ValueError("an entry holds an operation on values of another width")
    elif kind == "cast" and len(fields) == 3 and isinstance(fields[2], bool):
        decoded = Cast(_decode(fields[0]), _width(fields[1]), fields[2])
    else:
        raise ValueError(f"an entry holds an expression {data!r}")
    return decoded


def _parts(expression: Expression) -> Iterator[Expression]:
    """``expression`` and each expression within it."""
    yield expression
    if isinstance(expression, Arithmetic):
        yield from _parts(expression.left)
        yield from _parts(expression.right)
    elif isinstance(expression, Cast):
        yield from _parts(expression.operand)


def _reads(expression: Expression, arguments: Sequence[Attribute]) -> str | None:
    """What ``expression`` itself (not its operands) reads that a kernel of
    ``arguments`` does not have, or None (``LoopBounds.unreadable``)."""
    if isinstance(expression, Scalar):
        if not 0 <= expression.argument < len(arguments):
            return f"argument #{expression.argument} of {len(arguments)}"
        if _scalar_width(arguments[expression.argument]) != expression.width:
            return f"argument #{expression.argument} as an integer of {expression.width} bits"
    if isinstance(expression, Size):
        if not 0 <= expression.argument < len(arguments):
            return f"argument #{expression.argument} of {len(arguments)}"
        if not _has_dimension(arguments[expression.argument], expression.dimension):
            return f"dimension {expression.dimension} of argument #{expression.argument}"
    return None


def _scalar_width(type: Attribute) -> int | None:
    """The width of an integer or ``index`` type; None for any other."""
    return int_width(type) if isinstance(type, IntegerType | IndexType) else None


def _has_dimension(type: Attribute, dimension: int) -> bool:
    return isinstance(type, MemRefType) and 0 <= dimension < type.get_num_dims()


MAX_OPERATIONS = 16
"""The most operations a recorded bound has: the frontends' have one or two,
and a launch evaluates them every time."""


def loop_bounds(function: func.FuncOp, loop: scf.ParallelOp) -> LoopBounds | None:
    """The bounds of ``function``'s kernel loop as expressions of its
    arguments (the rev function's, the error slot last), where they are
    such expressions (module docstring) of ``index``, of at most
    ``MAX_OPERATIONS`` operations each; else None."""
    (lb,), (ub,), (step,) = loop.lowerBound, loop.upperBound, loop.step
    found = [_Reader(function).expression(v) for v in (lb, ub, step)]
    bounds = [e for e in found if e is not None and e.width == INDEX_WIDTH]
    return LoopBounds(*bounds) if len(bounds) == 3 else None


class _Reader:
    """Reads values of a function as expressions of its arguments, within
    a budget of ``MAX_OPERATIONS`` operations."""

    def __init__(self, function: func.FuncOp):
        self.block = function.body.block
        self.arguments = function.function_type.inputs.data[:-1]
        self.budget = MAX_OPERATIONS

    def argument(self, value: SSAValue) -> int | None:
        """The position of ``value`` among the arguments, if it is one."""
        own = isinstance(value, BlockArgument) and value.block is self.block and value.index < len(self.arguments)
        return value.index if own else None

    def expression(self, value: SSAValue) -> Expression | None:
        """``value`` as an expression of the arguments, or None."""
        width = _scalar_width(value.type)
        if width is None:
            return None
        if isinstance(value, BlockArgument):
            position = self.argument(value)
            return None if position is None else Scalar(position, width)
        op = value.owner
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return Constant(wrap_int(op.value.value.data, width), width)
        self.budget -= 1
        if self.budget < 0:
            return None
        if isinstance(op, memref.DimOp):
            array, dimension = self.argument(op.source), self.expression(op.index)
            if array is None or not isinstance(dimension, Constant):
                return None
            return Size(array, dimension.value) if _has_dimension(self.arguments[array], dimension.value) else None
        if (operator := _ARITHMETIC.get(type(op))) is not None:
            left, right = (self.expression(o) for o in op.operands)
            return None if left is None or right is None else _folded(Arithmetic(operator, left, right, width))
        if (unsigned := _CASTS.get(type(op))) is not None:
            operand = self.expression(op.operands[0])
            if operand is None or operand.width == width:  # a cast to its own width changes nothing
                return operand
            return _folded(Cast(operand, width, unsigned))
        return None


def _folded(expression: Arithmetic | Cast) -> Expression:
    """``expression``, a constant where its operands are: what a launch
    evaluates is only what depends on its arguments."""
    operands = (expression.left, expression.right) if isinstance(expression, Arithmetic) else (expression.operand,)
    if all(isinstance(o, Constant) for o in operands):
        return Constant(expression.evaluate({}), expression.width)
    return expression
