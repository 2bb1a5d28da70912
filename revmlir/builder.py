"""A builder for reversible functions, for frontends that do not want to manage
SSA versions and region signatures themselves.

Frontends name variables; the builder keeps the current SSA version of each,
emits instructions that consume and replace it, and works out which variables a
region op must carry (those its regions modify) and which it only reads::

    from revmlir.builder import ModuleBuilder
    from xdsl.dialects.builtin import f64

    mb = ModuleBuilder()
    fn = mb.function("multiplier", [("y", f64), ("a", f64), ("b", f64)])
    fn.add("y", fn["a"] * fn["b"])
    fn.finish()
    module = mb.finish()          # verified; raises ReversibilityViolation

Every method takes an optional ``loc`` (an xDSL location attribute) that is
attached to the ops it creates, so diagnostics point at the frontend's source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeGuard

from xdsl.dialects import arith, math, memref
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ComplexType,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    MemRefType,
    ModuleOp,
    UnknownLoc,
    i1,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from revmlir.dialects import anc, rev
from revmlir.dialects.float_functions import HypotOp, RemFOp
from revmlir.semantics import is_reference_type, is_state_type

Loc: TypeAlias = LocationAttr | None


class BuildError(Exception):
    """A frontend asked for something that cannot be built (an unknown
    variable, an ancilla that escapes its region, mismatched types)."""

    def __init__(self, message: str, loc: Loc = None):
        self.message = message
        self.loc = loc
        super().__init__(message)


class InstructionTypeError(BuildError):
    """An instruction given an operand of a type it does not take, with the
    types for a frontend to word the error in its own language: the
    target's, and the value's where it is the value that differs from it
    (None where the target's type is one the instruction does not work on,
    ``takes`` saying which it works on)."""

    def __init__(self, message: str, loc: Loc, target: Attribute, value: Attribute | None, takes: str):
        super().__init__(message, loc)
        self.target, self.value, self.takes = target, value, takes


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Value:
    """An SSA value with Python operators that build pure expressions."""

    fn: ExpressionBuilder
    ssa: SSAValue

    @property
    def type(self) -> Attribute:
        return self.ssa.type

    def __add__(self, other: Any) -> Value:
        return self.fn.binary("add", self, other)

    def __radd__(self, other: Any) -> Value:
        return self.fn.binary("add", other, self)

    def __sub__(self, other: Any) -> Value:
        return self.fn.binary("sub", self, other)

    def __rsub__(self, other: Any) -> Value:
        return self.fn.binary("sub", other, self)

    def __mul__(self, other: Any) -> Value:
        return self.fn.binary("mul", self, other)

    def __rmul__(self, other: Any) -> Value:
        return self.fn.binary("mul", other, self)

    def __truediv__(self, other: Any) -> Value:
        return self.fn.binary("div", self, other)

    def __rtruediv__(self, other: Any) -> Value:
        return self.fn.binary("div", other, self)

    def __neg__(self) -> Value:
        return self.fn.unary("neg", self)

    def __lt__(self, other: Any) -> Value:
        return self.fn.compare("lt", self, other)

    def __le__(self, other: Any) -> Value:
        return self.fn.compare("le", self, other)

    def __gt__(self, other: Any) -> Value:
        return self.fn.compare("gt", self, other)

    def __ge__(self, other: Any) -> Value:
        return self.fn.compare("ge", self, other)


Operand: TypeAlias = Value | SSAValue | int | float | complex | bool


def _is_int(type: Attribute) -> bool:
    return isinstance(type, IntegerType | IndexType)


def _is_float_like(type: Attribute) -> bool:
    """A type a float converts to: a float, complex, fixed-point or
    tropical number."""
    return isinstance(type, AnyFloat | ComplexType | rev.FixedType | rev.TropicalType)


def _wider_int(a: Attribute, b: Attribute) -> Attribute:
    if isinstance(a, IndexType) or isinstance(b, IndexType):
        return IndexType()
    assert isinstance(a, IntegerType) and isinstance(b, IntegerType)
    return a if a.width.data >= b.width.data else b


def _strong_join(x: Attribute, y: Attribute) -> Attribute | None:
    """``ExpressionBuilder.joined_type`` of two strongly typed values of
    different types."""
    if _is_int(x) and _is_int(y):
        return _wider_int(x, y)
    if isinstance(x, AnyFloat) and isinstance(y, AnyFloat):
        return x if x.bitwidth > y.bitwidth else y
    for a, b in ((x, y), (y, x)):
        if isinstance(b, rev.FixedType | rev.TropicalType) and (_is_int(a) or isinstance(a, AnyFloat)):
            return b
        if _is_int(a) and isinstance(b, AnyFloat):
            return b
        if isinstance(b, ComplexType) and not isinstance(a, ComplexType):
            return b
    return None


_INT_BINARY: dict[str, type[Operation]] = {
    "add": arith.AddiOp,
    "sub": arith.SubiOp,
    "mul": arith.MuliOp,
    "div": arith.DivSIOp,
    "floordiv": arith.FloorDivSIOp,
    "rem": arith.RemSIOp,
    "max": arith.MaxSIOp,
    "min": arith.MinSIOp,
    "and": arith.AndIOp,
    "or": arith.OrIOp,
    "xor": arith.XOrIOp,
    "shl": arith.ShLIOp,
    "shr": arith.ShRSIOp,
    "pow": math.IPowIOp,
}
_FLOAT_BINARY: dict[str, type[Operation]] = {
    "add": arith.AddfOp,
    "sub": arith.SubfOp,
    "mul": arith.MulfOp,
    "div": arith.DivfOp,
    "max": arith.MaximumfOp,
    "min": arith.MinimumfOp,
    "pow": math.PowFOp,
    "atan2": math.Atan2Op,
    "copysign": math.CopySignOp,
    "fmod": RemFOp,
    "hypot": HypotOp,
}
_FIXED_BINARY: dict[str, type[Operation]] = {
    "add": rev.FixedAddOp,
    "sub": rev.FixedSubOp,
    "mul": rev.FixedMulOp,
}
_TROPICAL_BINARY: dict[str, str] = {"mul": "add", "div": "sub", "add": "max", "max": "max"}
"""Tropical arithmetic as the real arithmetic it is (max-plus)."""
_COMPLEX_BINARY: dict[str, type[Operation]] = {
    "add": complexd.AddOp,
    "sub": complexd.SubOp,
    "mul": complexd.MulOp,
    "div": complexd.DivOp,
    "pow": complexd.PowOp,
}
_FLOAT_UNARY: dict[str, type[Operation]] = {
    "neg": arith.NegfOp,
    "abs": math.AbsFOp,
    "exp": math.ExpOp,
    "expm1": math.ExpM1Op,
    "log": math.LogOp,
    "log1p": math.Log1pOp,
    "log2": math.Log2Op,
    "log10": math.Log10Op,
    "sqrt": math.SqrtOp,
    "sin": math.SinOp,
    "cos": math.CosOp,
    "tan": math.TanOp,
    "asin": math.AsinOp,
    "acos": math.AcosOp,
    "atan": math.AtanOp,
    "sinh": math.SinhOp,
    "cosh": math.CoshOp,
    "tanh": math.TanhOp,
    "erf": math.ErfOp,
    "floor": math.FloorOp,
    "ceil": math.CeilOp,
}
_COMPLEX_UNARY: dict[str, type[Operation]] = {
    "neg": complexd.NegOp,
    "exp": complexd.ExpOp,
    "log": complexd.LogOp,
    "sqrt": complexd.SqrtOp,
    "sin": complexd.SinOp,
    "cos": complexd.CosOp,
    "tan": complexd.TanOp,
    "tanh": complexd.TanhOp,
    "conj": complexd.ConjOp,
}
_CMPI = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}


# ---------------------------------------------------------------------------
# Views: what an instruction can update
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Element:
    """``name[indices]``: an element of a memref variable."""

    name: str
    indices: tuple[Operand, ...]


@dataclass(frozen=True)
class Part:
    """``name.real`` or ``name.imag`` of a complex variable."""

    name: str
    part: str  # "real" | "imag"


Target = str | Element | Part


# ---------------------------------------------------------------------------
# Scopes
# ---------------------------------------------------------------------------


@dataclass
class _Scope:
    """The variables visible while one block is being built."""

    block: Block
    parent: _Scope | None
    values: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    imported: dict[str, BlockArgument] = field(default_factory=dict[str, BlockArgument])
    outer: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    carries: bool = True
    """Whether outer state read here becomes a block argument (state regions)
    or is read directly (condition regions read carried state through the
    arguments they are given)."""

    def find(self, name: str) -> SSAValue | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None

    def carried(self, name: str) -> SSAValue:
        """The value of a variable a region carries, which is visible here
        since the regions that carry it were built from this scope."""
        value = self.find(name)
        assert value is not None, f"carried variable '{name}' is not visible"
        return value

    def enclosing(self) -> _Scope:
        """The scope a nested region's scope was opened in: every scope but
        the function's entry one, which is never left, has one."""
        assert self.parent is not None, "the entry scope is never left"
        return self.parent


@dataclass
class _RegionResult:
    block: Block
    imported: dict[str, BlockArgument]
    values: dict[str, SSAValue]
    outer: dict[str, SSAValue]


class ExpressionBuilder:
    """Named variables and pure expressions (``arith``, ``math``,
    ``complex``, ``memref.load``) appended to the block being built.

    The reversible ``FunctionBuilder`` and builders of ordinary code
    (``revmlir.frontend.ordinary_code.compiler``) share it, so one expression compiler
    serves both kinds of function.
    """

    spell: Callable[[Attribute], str] = str
    """How the messages of its errors write a type: as the IR does, or
    as a frontend's users write it (the Python frontend sets it)."""

    def __init__(self, entry: Block, names: Sequence[str], loc: Loc = None):
        """Build into ``entry``, whose arguments are the variables ``names``."""
        self.loc = loc
        self._scope = _Scope(entry, None)
        self._kept_parts: dict[tuple[str, str], SSAValue] = {}
        """Per complex variable and part: that part while an update of the
        other part has the number unpacked (see ``kept_part``)."""
        self._weak: set[SSAValue] = set()
        """Weakly typed values (``is_weak``)."""
        for name, arg in zip(names, entry.args, strict=True):
            arg.name_hint = name
            self._scope.values[name] = arg

    # -- variables ------------------------------------------------------------

    def __getitem__(self, name: str) -> Value:
        return self.get(name)

    def get(self, name: str, loc: Loc = None) -> Value:
        """The current version of variable ``name``."""
        return Value(self, self._current(name, loc))

    def has(self, name: str) -> bool:
        return self._scope.find(name) is not None

    def kept_part(self, name: str, part: str) -> Value | None:
        """``part`` of the complex variable ``name`` while an update of its
        other part is being built (``z.imag`` in ``z.real -= z.imag``): the
        update unpacks ``name``, which it may then no longer read whole, but
        this part it leaves alone."""
        value = self._kept_parts.get((name, part))
        return None if value is None else Value(self, value)

    def type_of(self, name: str, loc: Loc = None) -> Attribute:
        return self._current(name, loc).type

    def _current(self, name: str, loc: Loc) -> SSAValue:
        value = self._visible(self._scope, name)
        if value is None:
            raise BuildError(f"unknown variable '{name}'", loc)
        return value

    def _visible(self, scope: _Scope, name: str) -> SSAValue | None:
        return scope.find(name)

    def _define(self, name: str, value: SSAValue) -> None:
        value.name_hint = name
        self._scope.values[name] = value

    @property
    def current_block(self) -> Block:
        """The block ops are being appended to."""
        return self._scope.block

    # -- emitting ops ---------------------------------------------------------

    def emit(self, op: Operation, loc: Loc = None) -> Operation:
        """Append an op to the current block (for frontends with their own ops)."""
        op.location = loc or self.loc or UnknownLoc()
        self._scope.block.add_op(op)
        return op

    def _ssa(self, value: Operand, like: Attribute | None = None, loc: Loc = None) -> SSAValue:
        if isinstance(value, Value):
            return value.ssa
        if isinstance(value, SSAValue):
            return value
        return self.const(value, like, loc).ssa

    def is_weak(self, value: Operand) -> bool:
        """Whether ``value`` is weakly typed, as JAX's Python scalars are: a
        number literal (``const`` without a type), or arithmetic and
        functions of such values only.  Its ``f64`` is a default, not a
        choice: meeting a value of another float type, it takes that type
        (``2.0 * x[i]`` and ``2 * math.pi * x[i]`` of a ``float32`` array
        are ``float32``)."""
        if isinstance(value, Value):
            value = value.ssa
        if isinstance(value, SSAValue):
            return value in self._weak
        return isinstance(value, int | float | complex) and not isinstance(value, bool)

    def const(self, value: Any, type: Attribute | None = None, loc: Loc = None) -> Value:
        """A constant; its type follows ``type`` or the Python type of
        ``value``, a number's then weakly (``is_weak``)."""
        from xdsl.dialects.builtin import f64, i64

        weak = type is None and self.is_weak(value)
        if type is None:
            type = i1 if isinstance(value, bool) else i64 if isinstance(value, int) else f64
            if isinstance(value, complex):
                type = ComplexType(f64)
        if isinstance(type, ComplexType):
            op = complexd.ConstantOp.from_floats((complex(value).real, complex(value).imag), type.element_type)
        elif isinstance(type, AnyFloat):
            op = arith.ConstantOp(FloatAttr(float(value), type))
        elif isinstance(type, IntegerType | IndexType):
            if isinstance(value, float):
                raise BuildError(f"cannot use the float {value} as {self.spell(type)}", loc)
            width = 64 if isinstance(type, IndexType) else type.width.data
            if not -(2 ** (width - 1)) <= int(value) < 2 ** (width - 1) and not (width == 1 and value == 1):
                raise BuildError(f"the integer {value} does not fit {self.spell(type)}", loc)
            op = arith.ConstantOp(IntegerAttr(int(value), type))
        elif isinstance(type, rev.LogType):
            return self.to_log(self.const(value, type.element_type, loc), loc)
        elif isinstance(type, rev.FixedType | rev.TropicalType):
            return self.cast(self.const(float(value), _f64(), loc), type, loc)
        else:
            raise BuildError(f"no constants of type {self.spell(type)}", loc)
        if weak:
            self._weak.add(op.results[0])
        return Value(self, self.emit(op, loc).results[0])

    def _pair(self, a: Operand, b: Operand, loc: Loc) -> tuple[SSAValue, SSAValue]:
        like = a.type if isinstance(a, Value | SSAValue) else None
        like = like or (b.type if isinstance(b, Value | SSAValue) else None)
        x, y = self._ssa(a, like, loc), self._ssa(b, like, loc)
        if x.type != y.type:
            x, y = self._promote(x, y, loc)
        return x, y

    def _promote(self, x: SSAValue, y: SSAValue, loc: Loc) -> tuple[SSAValue, SSAValue]:
        """Mixed arithmetic: both converted to ``joined_type``'s type."""
        type = self.joined_type(x, y)
        if type is None:
            raise BuildError(f"cannot combine {self.spell(x.type)} and {self.spell(y.type)}", loc)
        return self.cast(Value(self, x), type, loc).ssa, self.cast(Value(self, y), type, loc).ssa

    def joined_type(self, x: SSAValue, y: SSAValue) -> Attribute | None:
        """The type mixed arithmetic of ``x`` and ``y`` computes in, or
        None where they do not mix: integers meet as index (or the wider
        integer), a weakly typed value takes the other's float type
        (``is_weak``), floats widen to the wider float, integers to floats,
        reals to complex, integers and floats meet fixed-point and tropical
        numbers as such.  One rule, so that a frontend's merges of paths
        type a variable as arithmetic of its values would."""
        if x.type == y.type:
            return x.type
        if _is_int(x.type) and _is_int(y.type):
            return _wider_int(x.type, y.type)
        for a, b in ((x, y), (y, x)):
            if (like := self._weakly(a, b.type)) is not None:
                return like if like == b.type else _strong_join(like, b.type)
        return _strong_join(x.type, y.type)

    def _weakly(self, value: SSAValue, other: Attribute) -> Attribute | None:
        """The type a weakly typed float or complex ``value`` takes beside
        a value of type ``other`` of another float precision, or None."""
        if not self.is_weak(value):
            return None
        precision = other.element_type if isinstance(other, ComplexType) else other
        if not isinstance(precision, AnyFloat):
            return None
        if isinstance(value.type, ComplexType):
            return ComplexType(precision) if precision != value.type.element_type else None
        return precision if precision != value.type else None

    def binary(self, kind: str, a: Operand, b: Operand, loc: Loc = None) -> Value:
        """``a <kind> b`` with the op chosen by type (add, sub, mul, div,
        floordiv, rem, max, min, and, or, xor, shl, shr, pow, atan2, copysign,
        fmod, hypot)."""
        weak = self.is_weak(a) and self.is_weak(b)
        x, y = self._pair(a, b, loc)
        if isinstance(x.type, rev.TropicalType) and kind in _TROPICAL_BINARY:
            real = self.binary(_TROPICAL_BINARY[kind], self.from_number(x, loc), self.from_number(y, loc), loc)
            return self.cast(real, x.type, loc)
        table = (
            _INT_BINARY
            if _is_int(x.type)
            else _FIXED_BINARY
            if isinstance(x.type, rev.FixedType)
            else _COMPLEX_BINARY
            if isinstance(x.type, ComplexType)
            else _FLOAT_BINARY
            if isinstance(x.type, AnyFloat)
            else {}
        )
        if kind not in table:
            raise BuildError(f"'{kind}' is not defined on {self.spell(x.type)}", loc)
        op_type = table[kind]
        op = op_type.create(operands=[x, y], result_types=[x.type])
        if weak:
            self._weak.add(op.results[0])
        return Value(self, self.emit(op, loc).results[0])

    def unary(self, kind: str, a: Operand, loc: Loc = None) -> Value:
        """Negation, absolute value and the elementary functions."""
        x = self._ssa(a, None, loc)
        if isinstance(x.type, rev.FixedType) and kind == "neg":
            return self.binary("sub", self.const(0, x.type, loc), Value(self, x), loc)
        if isinstance(x.type, rev.FixedType | rev.TropicalType):
            x = self.from_number(x, loc).ssa  # elementary functions of the real value
        if _is_int(x.type):
            if kind == "neg":
                return self.binary("sub", self.const(0, x.type, loc), Value(self, x), loc)
            if kind == "abs":
                return Value(self, self.emit(math.AbsIOp(x), loc).results[0])
            x = self.cast(Value(self, x), _f64(), loc).ssa
        if isinstance(x.type, ComplexType):
            if kind == "abs":
                return Value(self, self.emit(complexd.AbsOp(x), loc).results[0])
            table = _COMPLEX_UNARY
        else:
            table = _FLOAT_UNARY if isinstance(x.type, AnyFloat) else {}
        if kind not in table:
            raise BuildError(f"'{kind}' is not defined on {self.spell(x.type)}", loc)
        op = table[kind].create(operands=[x], result_types=[x.type])
        if self.is_weak(a):
            self._weak.add(op.results[0])
        return Value(self, self.emit(op, loc).results[0])

    def compare(self, kind: str, a: Operand, b: Operand, loc: Loc = None) -> Value:
        """``lt``, ``le``, ``gt``, ``ge``, ``eq``, ``ne``; the result is ``i1``."""
        x, y = self._pair(a, b, loc)
        if isinstance(x.type, rev.FixedType):
            # exact: a nonzero difference is a nonzero f64 of its sign
            difference = self.from_number(self.binary("sub", Value(self, x), Value(self, y), loc), loc)
            return self.compare(kind, difference, self.const(0.0, _f64(), loc), loc)
        if isinstance(x.type, rev.TropicalType):
            return self.compare(kind, self.from_number(x, loc), self.from_number(y, loc), loc)
        if _is_int(x.type):
            op: Operation = arith.CmpiOp(x, y, _CMPI[kind])
        elif isinstance(x.type, AnyFloat):
            op = arith.CmpfOp(x, y, _CMPF[kind])
        elif isinstance(x.type, ComplexType) and kind in ("eq", "ne"):
            op = (complexd.EqualOp if kind == "eq" else complexd.NotEqualOp)(x, y)
        else:
            raise BuildError(f"cannot compare values of type {self.spell(x.type)} with '{kind}'", loc)
        return Value(self, self.emit(op, loc).results[0])

    def logical(self, kind: str, a: Operand, b: Operand | None = None, loc: Loc = None) -> Value:
        """``and``, ``or`` and ``not`` on ``i1``."""
        x = self._ssa(a, i1, loc)
        if kind == "not":
            return self.binary("xor", Value(self, x), self.const(True, i1, loc), loc)
        assert b is not None
        return self.binary(kind, Value(self, x), b, loc)

    def descending_count(self, start: Operand, stop: Operand, step: Operand, loc: Loc = None) -> Value:
        """``len(range(start, stop, -step))`` for a positive ``step``:
        ``(start − stop − 1) ÷ step + 1`` where ``start > stop``, else 0,
        the division unsigned: ``start − stop`` passes 2⁶³ where the bounds
        are far apart, and read unsigned it is exact (decision 115)."""
        distance = self.binary("sub", self.binary("sub", start, stop, loc), 1, loc)
        x, y = self._pair(distance, step, loc)
        quotient = Value(self, self.emit(arith.DivUIOp(x, y), loc).results[0])
        return self.select(self.compare("gt", start, stop, loc), self.binary("add", quotient, 1, loc), 0, loc)

    def select(self, cond: Operand, a: Operand, b: Operand, loc: Loc = None) -> Value:
        """``a`` where ``cond`` holds, else ``b``, typed as arithmetic of
        the two is (``joined_type``): weak where both are."""
        x, y = self._pair(a, b, loc)
        op = arith.SelectOp(self._ssa(cond, i1, loc), x, y)
        if self.is_weak(a) and self.is_weak(b):
            self._weak.add(op.results[0])
        return Value(self, self.emit(op, loc).results[0])

    def cast(self, a: Operand, type: Attribute, loc: Loc = None) -> Value:
        """Convert between integer, index, float, complex, fixed-point and
        tropical types (fixed-point numbers and tropical numbers through
        their real value)."""
        x = self._ssa(a, None, loc)
        src = x.type
        if src == type:
            return Value(self, x)
        if isinstance(src, rev.FixedType | rev.TropicalType):
            return self.cast(self.from_number(x, loc), type, loc)
        if isinstance(type, rev.FixedType | rev.TropicalType):
            if not (_is_int(src) or isinstance(src, AnyFloat)):
                raise BuildError(f"cannot convert {self.spell(src)} to {self.spell(type)}", loc)
            real = self.cast(Value(self, x), _f64(), loc).ssa
            fixed = rev.ToFixedOp(real, type) if isinstance(type, rev.FixedType) else rev.ToTropicalOp(real)
            return Value(self, self.emit(fixed, loc).results[0])
        if isinstance(type, ComplexType) and isinstance(src, ComplexType):
            re, im = self.real(x, loc), self.imag(x, loc)
            return self.complex(self.cast(re, type.element_type, loc), self.cast(im, type.element_type, loc), loc)
        if isinstance(type, ComplexType):
            re = self.cast(Value(self, x), type.element_type, loc)
            zero = self.const(0.0, type.element_type, loc)
            return self.complex(re, zero, loc)
        boolean = isinstance(src, IntegerType) and src.width.data == 1
        if boolean and isinstance(type, IndexType | AnyFloat):
            # True is 1 (MLIR's extui), not the -1 of a signed extension
            x = self.emit(arith.ExtUIOp(x, IntegerType(64)), loc).results[0]
            src = IntegerType(64)
        if _is_int(src) and isinstance(type, AnyFloat):
            if isinstance(src, IndexType):
                x = self.emit(arith.IndexCastOp(x, IntegerType(64)), loc).results[0]
            op: Operation = arith.SIToFPOp(x, type)
        elif isinstance(src, AnyFloat) and _is_int(type):
            target = IntegerType(64) if isinstance(type, IndexType) else type
            op = arith.FPToSIOp(x, target)
            if isinstance(type, IndexType):
                x = self.emit(op, loc).results[0]
                op = arith.IndexCastOp(x, type)
        elif _is_int(src) and _is_int(type):
            if isinstance(src, IndexType) or isinstance(type, IndexType):
                op = arith.IndexCastOp(x, type)
            elif src.width.data < type.width.data:
                op = (arith.ExtUIOp if boolean else arith.ExtSIOp)(x, type)
            else:
                op = arith.TruncIOp(x, type)
        elif isinstance(src, AnyFloat) and isinstance(type, AnyFloat):
            wider = src.bitwidth < type.bitwidth
            op = (arith.ExtFOp if wider else arith.TruncFOp)(x, type)
        else:
            raise BuildError(f"cannot convert {self.spell(src)} to {self.spell(type)}", loc)
        return Value(self, self.emit(op, loc).results[0])

    def real(self, z: Operand, loc: Loc = None) -> Value:
        return Value(self, self.emit(complexd.ReOp(self._ssa(z, None, loc)), loc).results[0])

    def imag(self, z: Operand, loc: Loc = None) -> Value:
        return Value(self, self.emit(complexd.ImOp(self._ssa(z, None, loc)), loc).results[0])

    def angle(self, z: Operand, loc: Loc = None) -> Value:
        return Value(self, self.emit(complexd.AngleOp(self._ssa(z, None, loc)), loc).results[0])

    def complex(self, re: Operand, im: Operand, loc: Loc = None) -> Value:
        x, y = self._pair(re, im, loc)
        op = complexd.CreateOp(x, y, ComplexType(x.type))
        return Value(self, self.emit(op, loc).results[0])

    def to_log(self, a: Operand, loc: Loc = None) -> Value:
        x = self._ssa(a, _f64(), loc)
        if _is_int(x.type):
            x = self.cast(Value(self, x), _f64(), loc).ssa
        if not isinstance(x.type, AnyFloat):
            raise BuildError(f"a log number is made from a positive real, not {self.spell(x.type)}", loc)
        return Value(self, self.emit(rev.ToLogOp(x), loc).results[0])

    def from_number(self, a: Operand, loc: Loc = None) -> Value:
        """The real value (f64) of a fixed-point or tropical number."""
        x = self._ssa(a, None, loc)
        op = rev.FromFixedOp(x) if isinstance(x.type, rev.FixedType) else rev.FromTropicalOp(x)
        return Value(self, self.emit(op, loc).results[0])

    def from_log(self, a: Operand, loc: Loc = None) -> Value:
        return Value(self, self.emit(rev.FromLogOp(self._ssa(a, None, loc)), loc).results[0])

    def load(self, name: str, indices: Sequence[Operand], loc: Loc = None) -> Value:
        """Read ``name[indices]`` (a memref element) into an expression."""
        array = self._current(name, loc)
        if not isinstance(array.type, MemRefType):
            raise BuildError(f"'{name}' is not an array", loc)
        op = memref.LoadOp.get(array, [self.index(i, loc) for i in indices])
        return Value(self, self.emit(op, loc).results[0])

    def index(self, value: Operand, loc: Loc = None) -> SSAValue:
        x = self._ssa(value, IndexType(), loc)
        return x if isinstance(x.type, IndexType) else self.cast(Value(self, x), IndexType(), loc).ssa

    @contextmanager
    def _nested(self, block: Block) -> Iterator[None]:
        """Append to ``block``, the body of a region nested in the current
        block; outer variables are read directly and the variables defined
        in it end with it."""
        self._scope = _Scope(block, self._scope, carries=False)
        try:
            yield
        finally:
            self._scope = self._scope.enclosing()


class FunctionBuilder(ExpressionBuilder):
    """Builds one ``rev.func``; see the module docstring."""

    def __init__(
        self,
        module: ModuleBuilder | None,
        name: str,
        args: Sequence[tuple[str, Attribute]],
        loc: Loc = None,
    ):
        self.module = module
        self.name = name
        self.arg_names = [a for a, _ in args]
        self.arg_types = [t for _, t in args]
        for arg_name, type in args:
            if not (is_state_type(type) or is_reference_type(type)):
                raise BuildError(
                    f"argument '{arg_name}' of {name} has type {self.spell(type)}; reversible "
                    "functions take scalars, memrefs and stacks",
                    loc,
                )
        entry = Block(arg_types=self.arg_types)
        super().__init__(entry, self.arg_names, loc)
        self._entry = entry
        self._func: rev.FuncOp | None = None
        self._array_sizes: dict[SSAValue, list[SSAValue]] = {}
        """The sizes each ancilla array was allocated with, which its free
        restates."""

    # -- variables ------------------------------------------------------------

    def _visible(self, scope: _Scope, name: str) -> SSAValue | None:
        if name in scope.values:
            return scope.values[name]
        if scope.parent is None:
            return None
        # Import through every enclosing region, not only the innermost: a
        # read nested in a region that later consumes the variable (passes it
        # to a call) must read that region's version, not the outer one.
        value = self._visible(scope.parent, name)
        if value is None or not is_state_type(value.type) or not scope.carries:
            return value
        # Outer state read or updated inside a region: give the region its own
        # version, an argument; `_seal` turns it back into a plain read of the
        # outer value if the region never updates it.
        arg = scope.block.insert_arg(value.type, len(scope.block.args))
        arg.name_hint = name
        scope.imported[name] = arg
        scope.outer[name] = value
        scope.values[name] = arg
        return arg

    def _update(self, name: str, value: SSAValue) -> None:
        self._current(name, None)
        self._define(name, value)

    def _forget(self, name: str, loc: Loc) -> None:
        self._current(name, loc)
        if name not in self._scope.values:  # a stack from outside this region
            raise BuildError(f"'{name}' was created outside this region; it cannot end inside it", loc)
        del self._scope.values[name]

    # -- views ----------------------------------------------------------------

    def at(self, name: str, *indices: Operand) -> Element:
        return Element(name, tuple(indices))

    @contextmanager
    def _borrow(self, targets: Sequence[Target], loc: Loc) -> Iterator[list[SSAValue]]:
        """Make each target a state value, let the caller replace the values,
        then give them back (put elements, repack complex parts)."""
        current: list[SSAValue] = []
        restore: list[Callable[[SSAValue], None]] = []
        for target in targets:
            value, give_back = self._open(target, loc)
            current.append(value)
            restore.append(give_back)
        yield current
        for give_back, value in reversed(list(zip(restore, current, strict=True))):
            give_back(value)

    def _open(self, target: Target, loc: Loc) -> tuple[SSAValue, Callable[[SSAValue], None]]:
        if isinstance(target, str):
            value = self._current(target, loc)
            if not is_state_type(value.type):
                whole = "; update its elements, one at a time" if isinstance(value.type, MemRefType) else ""
                raise BuildError(f"'{target}' ({self.spell(value.type)}) cannot be updated{whole}", loc)
            return value, lambda new: self._define(target, new)
        if isinstance(target, Element):
            array = self._current(target.name, loc)
            if not isinstance(array.type, MemRefType):
                raise BuildError(f"'{target.name}' is not an array", loc)
            indices = [self.index(i, loc) for i in target.indices]
            take = self.emit(rev.TakeOp(array, indices), loc)

            def put(new: SSAValue) -> None:
                self.emit(rev.PutOp(new, array, indices), loc)

            return take.results[0], put
        name = target.name
        whole = self._current(name, loc)
        if not isinstance(whole.type, ComplexType):
            raise BuildError(f"'{name}' is not complex; it has no .{target.part}", loc)
        unpack = self.emit(rev.UnpackOp(whole), loc)
        re, im = unpack.results
        keep = im if target.part == "real" else re
        kept = (name, "imag" if target.part == "real" else "real")
        self._kept_parts[kept] = keep

        def pack(new: SSAValue) -> None:
            del self._kept_parts[kept]
            parts = (new, keep) if target.part == "real" else (keep, new)
            self._define(name, self.emit(rev.PackOp(*parts), loc).results[0])

        return (re if target.part == "real" else im), pack

    # -- instructions ---------------------------------------------------------

    def _instruction(
        self,
        op_type: type[rev.InstructionOp],
        targets: Sequence[Target],
        reads: Sequence[Operand | Callable[[], Operand]],
        loc: Loc,
    ) -> None:
        with self._borrow(targets, loc) as values:
            like = values[0].type
            operands = [self._ssa(r() if callable(r) else r, like, loc) for r in reads]
            for i, operand in enumerate(operands):
                if operand.type != like and (
                    _is_int(operand.type)
                    or (isinstance(operand.type, AnyFloat) and _is_float_like(like))
                    or (isinstance(operand.type, ComplexType) and isinstance(like, ComplexType))
                ):  # an integer to any number; a float to the target's precision,
                    # rounded where it is narrower, as numpy's ``+=`` rounds, a real to
                    # complex, a float to a fixed-point number (rounded) or tropical one
                    operands[i] = self.cast(Value(self, operand), like, loc).ssa
            _check_instruction_types(op_type, [v.type for v in values], [o.type for o in operands], loc, self.spell)
            op = self.emit(
                op_type.create(operands=[*values, *operands], result_types=[v.type for v in values]),
                loc,
            )
            values[:] = list(op.results)

    def add(self, target: Target, value: Operand | Callable[[], Operand], loc: Loc = None) -> None:
        """``target += value``.  Pass ``value`` as a callable to evaluate it
        after an element target is borrowed (so run-time alias checks see it)."""
        self._instruction(rev.AddOp, [target], [value], loc)

    def sub(self, target: Target, value: Operand | Callable[[], Operand], loc: Loc = None) -> None:
        self._instruction(rev.SubOp, [target], [value], loc)

    def xor(self, target: Target, value: Operand | Callable[[], Operand], loc: Loc = None) -> None:
        self._instruction(rev.XorOp, [target], [value], loc)

    def mul(self, target: Target, value: Operand | Callable[[], Operand], loc: Loc = None) -> None:
        """``target *= value`` on a log number."""
        self._instruction(rev.MulOp, [target], [value], loc)

    def div(self, target: Target, value: Operand | Callable[[], Operand], loc: Loc = None) -> None:
        self._instruction(rev.DivOp, [target], [value], loc)

    def neg(self, target: Target, loc: Loc = None) -> None:
        self._instruction(rev.NegOp, [target], [], loc)

    def inc(self, target: Target, loc: Loc = None) -> None:
        self._instruction(rev.IncOp, [target], [], loc)

    def dec(self, target: Target, loc: Loc = None) -> None:
        self._instruction(rev.DecOp, [target], [], loc)

    def swap(self, a: Target, b: Target, loc: Loc = None) -> None:
        self._instruction(rev.SwapOp, [a, b], [], loc)

    def rot(self, a: Target, b: Target, angle: Operand | Callable[[], Operand], loc: Loc = None) -> None:
        self._instruction(rev.RotOp, [a, b], [angle], loc)

    def irot(self, a: Target, b: Target, angle: Operand | Callable[[], Operand], loc: Loc = None) -> None:
        self._instruction(rev.IRotOp, [a, b], [angle], loc)

    # -- ancillas and stacks ----------------------------------------------------

    def alloc(self, name: str, value: Operand, type: Attribute | None = None, loc: Loc = None) -> None:
        """``name ← value``: a new variable holding a known value."""
        if name in self._scope.values:
            raise BuildError(f"'{name}' is already a variable here", loc)
        initial = self._ssa(value, type, loc)
        if not is_state_type(initial.type):
            raise BuildError(f"an ancilla holds a scalar, not {self.spell(initial.type)}", loc)
        op = self.emit(anc.AllocOp(initial), loc)
        self._define(name, op.results[0])

    def free(self, name: str, value: Operand, loc: Loc = None) -> None:
        """``name → value``: the variable must hold ``value``; it ends here."""
        current = self._current(name, loc)
        if not is_state_type(current.type):
            raise BuildError(f"'{name}' ({self.spell(current.type)}) is not an ancilla; it cannot be freed", loc)
        known = self._ssa(value, current.type, loc)
        if known.type != current.type and _is_int(known.type):
            # e.g. `rv.free(k, x.shape[0])`: an index/other-width integer
            # compared with an i64 (or float) ancilla, as instructions do.
            known = self.cast(Value(self, known), current.type, loc).ssa
        if known.type != current.type:
            raise BuildError(
                f"'{name}' ({self.spell(current.type)}) cannot be freed against a {self.spell(known.type)} value", loc
            )
        self.emit(anc.FreeOp(current, known), loc)
        self._forget(name, loc)

    def zeros(self, name: str, sizes: Sequence[Operand], element_type: Attribute, loc: Loc = None) -> None:
        """``name``: a new ancilla array of zeros, one (index) size per
        dimension (NiLang's ``zeros``)."""
        if name in self._scope.values:
            raise BuildError(f"'{name}' is already a variable here", loc)
        extents = [self._index(size, loc) for size in sizes]
        type = MemRefType(element_type, [DYNAMIC_INDEX] * len(extents))
        op = self.emit(anc.ArrayAllocOp(type, extents), loc)
        self._define(name, op.results[0])
        self._array_sizes[op.results[0]] = extents

    def _allocated(self, value: SSAValue) -> bool:
        """Whether ``value`` must be freed before its scope ends: state (an
        ancilla), a stack, an ancilla array."""
        return is_state_type(value.type) or isinstance(value.type, anc.StackType) or value in self._array_sizes

    def is_ancilla_array(self, name: str) -> bool:
        return self.has(name) and self._current(name, None) in self._array_sizes

    def free_array(self, name: str, loc: Loc = None) -> None:
        """End the ancilla array ``name``, which must hold zeros."""
        array = self._current(name, loc)
        sizes = self._array_sizes.get(array)
        if sizes is None:
            raise BuildError(f"'{name}' is not an ancilla array (rv.zeros); it cannot be freed", loc)
        self.emit(anc.ArrayFreeOp(array, sizes), loc)
        self._forget(name, loc)

    def _index(self, size: Operand, loc: Loc) -> SSAValue:
        value = self._ssa(size, IndexType(), loc)
        if isinstance(value.type, IndexType):
            return value
        if not _is_int(value.type):
            raise BuildError(f"an array size is an integer, not {self.spell(value.type)}", loc)
        return self.cast(Value(self, value), IndexType(), loc).ssa

    def stack(self, name: str, element_type: Attribute, loc: Loc = None) -> None:
        op = self.emit(anc.StackAllocOp(anc.StackType(element_type)), loc)
        self._define(name, op.results[0])

    def free_stack(self, name: str, loc: Loc = None) -> None:
        self.emit(anc.StackFreeOp(self._stack(name, loc)), loc)
        self._forget(name, loc)

    def _stack(self, name: str, loc: Loc, value: SSAValue | None = None) -> SSAValue:
        """The stack ``name``; ``value`` must have its element type."""
        stack = self._current(name, loc)
        if not isinstance(stack.type, anc.StackType):
            raise BuildError(f"'{name}' is not a stack", loc)
        if value is not None and value.type != stack.type.element_type:
            raise BuildError(
                f"stack '{name}' holds {self.spell(stack.type.element_type)}, not {self.spell(value.type)}", loc
            )
        return stack

    def push(self, stack: str, name: str, loc: Loc = None) -> None:
        """Move variable ``name`` onto ``stack``; it ends here."""
        value = self._current(name, loc)
        self.emit(anc.PushOp(self._stack(stack, loc, value), value), loc)
        self._forget(name, loc)

    def pop(self, stack: str, name: str, loc: Loc = None) -> None:
        """A new variable ``name`` from the top of ``stack``."""
        op = self.emit(anc.PopOp(self._stack(stack, loc)), loc)
        self._define(name, op.results[0])

    def copy_push(self, stack: str, value: Operand, loc: Loc = None) -> None:
        copied = self._ssa(value, None, loc)
        self.emit(anc.CopyPushOp(self._stack(stack, loc, copied), copied), loc)

    def copy_pop(self, stack: str, value: Operand, loc: Loc = None) -> None:
        expected = self._ssa(value, None, loc)
        self.emit(anc.CopyPopOp(self._stack(stack, loc, expected), expected), loc)

    # -- calls ----------------------------------------------------------------

    def call(self, callee: str, args: Sequence[Target], loc: Loc = None, inverse: bool = False) -> None:
        """Call ``callee`` (or run it backwards) on variables, elements and
        complex parts; scalar arguments are updated, arrays passed by reference."""
        scalars = [a for a in args if not self._is_reference(a, loc)]
        with self._borrow(scalars, loc) as values:
            current = iter(values)
            operands = [next(current) if not self._is_reference(a, loc) else self._current(a, loc) for a in args]
            op_type = rev.UncallOp if inverse else rev.CallOp
            op = self.emit(op_type(callee, operands), loc)
            values[:] = list(op.results)

    def _is_reference(self, target: Target, loc: Loc) -> TypeGuard[str]:
        return isinstance(target, str) and is_reference_type(self._current(target, loc).type)

    # -- regions ----------------------------------------------------------------

    def _build_region(
        self,
        body: Callable[..., Any],
        arg_types: Sequence[Attribute] = (),
        carries: bool = True,
        named: Sequence[str] = (),
    ) -> _RegionResult:
        """Build ``body`` into a new block.  The block starts with arguments of
        ``arg_types``; the first ones are bound to the variables ``named`` and
        the rest are passed to ``body``."""
        block = Block(arg_types=arg_types)
        scope = _Scope(block, self._scope, carries=carries)
        for name, arg in zip(named, block.args):
            arg.name_hint = name
            scope.values[name] = arg
        self._scope = scope
        try:
            body(*[Value(self, a) for a in block.args[len(named) :]])
        finally:
            self._scope = scope.enclosing()
        return _RegionResult(block, scope.imported, scope.values, scope.outer)

    def _carried(self, results: Sequence[_RegionResult]) -> list[str]:
        """Outer variables some region updated, in first-seen order."""
        names: list[str] = []
        for result in results:
            for name, arg in result.imported.items():
                if result.values.get(name) is not arg and name not in names:
                    names.append(name)
        return names

    def _seal(
        self,
        result: _RegionResult,
        carried: Sequence[str],
        extra: Sequence[str] = (),
        leading: int = 0,
        trailing: int = 0,
        loc: Loc = None,
    ) -> Region:
        """Rebuild a region's block with arguments ``leading`` fixed ones, the
        carried variables, ``trailing`` fixed ones; it yields the carried
        variables, then the variables named in ``extra``.  Outer variables the
        region only read become plain reads of the outer value."""
        old = result.block
        fixed = list(old.args[: leading + trailing])
        types = [self._scope.carried(n).type for n in carried]
        new_types = [a.type for a in fixed[:leading]] + types + [a.type for a in fixed[leading:]]
        block = Block(arg_types=new_types)
        new_fixed = list(block.args[:leading]) + list(block.args[leading + len(types) :])
        renamed: dict[SSAValue, SSAValue] = dict(zip(fixed, new_fixed, strict=True))
        for name, arg in zip(carried, block.args[leading : leading + len(types)]):
            arg.name_hint = name
            if name in result.imported:
                renamed[result.imported[name]] = arg
        for name, arg in result.imported.items():
            if name not in carried:
                renamed[arg] = result.outer[name]
        for old_arg, new in renamed.items():
            new.name_hint = new.name_hint or old_arg.name_hint
            old_arg.replace_all_uses_with(new)
        for op in list(old.ops):
            old.detach_op(op)
            block.add_op(op)
        final: list[SSAValue] = []
        for name in [*carried, *extra]:
            value = result.values.get(name)
            if value is None:
                value = block.args[leading + list(carried).index(name)]
            final.append(renamed.get(value, value))
        block.add_op(_located(rev.YieldOp(*final), loc or self.loc))
        return Region(block)

    def _condition_region(self, cond: Callable[[], Operand], carried: Sequence[str], loc: Loc) -> Region:
        """A condition evaluated on the carried variables (its arguments)."""
        block = Block(arg_types=[self._scope.carried(n).type for n in carried])
        scope = _Scope(block, self._scope, carries=False)
        for name, arg in zip(carried, block.args, strict=True):
            arg.name_hint = name
            scope.values[name] = arg
        self._scope = scope
        try:
            value = self._ssa(cond(), i1, loc)
            if value.type != i1:
                raise BuildError(f"a condition must be a boolean, got {self.spell(value.type)}", loc)
            self.emit(rev.CondOp(value), loc)
        finally:
            self._scope = scope.enclosing()
        return Region(block)

    def _finish_region_op(self, op: Operation, carried: Sequence[str], loc: Loc) -> None:
        self.emit(op, loc)
        for name, value in zip(carried, op.results, strict=True):
            self._define(name, value)

    def _check_scope_closed(self, result: _RegionResult, what: str, loc: Loc, allowed: Sequence[str] = ()) -> None:
        leaked = [
            n
            for n, v in result.values.items()
            if n not in result.imported and n not in allowed and self._allocated(v) and not isinstance(v, BlockArgument)
        ]
        if leaked:
            raise BuildError(
                f"{', '.join(repr(n) for n in leaked)} allocated in the {what} is not "
                f"freed there; free it (x → value) before the end of the {what}",
                loc,
            )

    def if_(
        self,
        pre: Callable[[], Operand],
        then: Callable[[], Any],
        else_: Callable[[], Any] | None = None,
        post: Callable[[], Operand] | None = None,
        loc: Loc = None,
    ) -> None:
        """NiLang's ``if (pre, post)``; ``post=None`` re-checks ``pre``."""
        then_result = self._build_region(then)
        else_result = self._build_region(else_ or (lambda: None))
        self._check_scope_closed(then_result, "then-branch", loc)
        self._check_scope_closed(else_result, "else-branch", loc)
        carried = self._carried([then_result, else_result])
        then_region, else_region = (self._seal(r, carried, loc=loc) for r in (then_result, else_result))
        op = rev.IfOp(
            [self._current(n, loc) for n in carried],
            self._condition_region(pre, carried, loc),
            then_region,
            else_region,
            self._condition_region(post, carried, loc) if post else None,
        )
        self._finish_region_op(op, carried, loc)

    def while_(
        self,
        pre: Callable[[], Operand],
        post: Callable[[], Operand],
        body: Callable[[], Any],
        loc: Loc = None,
    ) -> None:
        """NiLang's ``while (pre, post)``: ``post`` is false on entry and true
        after every iteration."""
        result = self._build_region(body)
        self._check_scope_closed(result, "loop body", loc)
        carried = self._carried([result])
        region = self._seal(result, carried, loc=loc)
        op = rev.WhileOp(
            [self._current(n, loc) for n in carried],
            self._condition_region(pre, carried, loc),
            self._condition_region(post, carried, loc),
            region,
        )
        self._finish_region_op(op, carried, loc)

    def for_(
        self,
        lb: Operand,
        ub: Operand,
        step: Operand,
        body: Callable[[Value], Any],
        reverse: bool = False,
        loc: Loc = None,
        parallel: bool = False,
        index_name: str = "i",
    ) -> None:
        """A loop over ``range(lb, ub, step)`` (``step > 0``); ``body`` gets the
        induction variable, named ``index_name`` (the source's variable, which
        diagnostics of the loop speak of).  A ``parallel`` loop's iterations
        are independent (``revmlir.parallel``): its body updates no variable
        outside it."""
        first, last, stride = (self.index(v, loc) for v in (lb, ub, step))
        result = self._build_region(body, [IndexType()])
        result.block.args[0].name_hint = index_name
        self._check_scope_closed(result, "loop body", loc)
        carried = self._carried([result])
        if parallel and carried:
            raise BuildError(
                f"a parallel loop updates {', '.join(repr(n) for n in carried)}, defined outside it: "
                "its iterations are independent, so they may only write array elements",
                loc,
            )
        region = self._seal(result, carried, leading=1, loc=loc)
        op = rev.ForOp(first, last, stride, [self._current(n, loc) for n in carried], region, reverse, parallel)
        self._finish_region_op(op, carried, loc)

    def routine(self, compute: Callable[[], Any], body: Callable[[], Any], loc: Loc = None) -> None:
        """Compute–copy–uncompute: ``compute``, ``body``, then ``compute``
        backwards.  Variables ``compute`` allocates are visible in ``body``."""
        computed = self._build_region(compute)
        extra = [n for n, v in computed.values.items() if n not in computed.imported and is_state_type(v.type)]
        extra_types = [computed.values[n].type for n in extra]
        used = self._build_region(body, extra_types, named=extra)
        self._check_scope_closed(used, "routine body", loc, allowed=extra)
        carried = self._carried([computed, used])
        op = rev.RoutineOp(
            [self._current(n, loc) for n in carried],
            self._seal(computed, carried, extra, loc=loc),
            self._seal(used, carried, extra, trailing=len(extra), loc=loc),
        )
        self._finish_region_op(op, carried, loc)

    def inverse(self, body: Callable[[], Any], loc: Loc = None) -> None:
        """Run ``body`` backwards (NiLang's ``~begin … end``)."""
        result = self._build_region(body)
        self._check_scope_closed(result, "inverted block", loc)
        carried = self._carried([result])
        region = self._seal(result, carried, loc=loc)
        op = rev.InvOp([self._current(n, loc) for n in carried], region)
        self._finish_region_op(op, carried, loc)

    def safe(self, body: Callable[[], Any], when: str = "forward", loc: Loc = None) -> None:
        """Host side effects that touch no reversible state."""
        result = self._build_region(body, carries=False)
        self.emit(rev.SafeOp(Region(result.block), when), loc)

    # -- finishing ----------------------------------------------------------------

    def finish(self, loc: Loc = None) -> rev.FuncOp:
        """Close the function: return the final version of every scalar argument."""
        scope = self._scope
        if scope.parent is not None:
            raise BuildError("finish() called inside a region", loc)
        outputs: list[SSAValue] = []
        for name, type in zip(self.arg_names, self.arg_types, strict=True):
            if is_state_type(type):
                if name not in scope.values:
                    raise BuildError(f"argument '{name}' was freed or pushed; it must be returned", loc)
                outputs.append(scope.values[name])
        leaked = [n for n, v in scope.values.items() if n not in self.arg_names and self._allocated(v)]
        if leaked:
            raise BuildError(
                f"{', '.join(repr(n) for n in leaked)} is allocated but never freed; "
                "free it (x → value) before the function ends",
                loc,
            )
        self.emit(rev.ReturnOp(*outputs), loc)
        func = rev.FuncOp(self.name, self.arg_types, Region(self._entry))
        func.location = self.loc or UnknownLoc()
        self._func = func
        if self.module is not None:
            self.module.ops.append(func)
        return func


def _f64() -> Attribute:
    from xdsl.dialects.builtin import f64

    return f64


def _located(op: Operation, loc: Loc) -> Operation:
    op.location = loc or UnknownLoc()
    return op


def _check_instruction_types(
    op_type: type[Operation],
    targets: Sequence[Attribute],
    reads: Sequence[Attribute],
    loc: Loc,
    spell: Callable[[Attribute], str],
) -> None:
    """An instruction's type errors as a BuildError at ``loc`` (rather than an
    operand that fails to verify when the module is finished)."""
    accepts: Callable[[Attribute], bool]
    if op_type in (rev.XorOp, rev.IncOp, rev.DecOp):
        accepts, what = _is_int, "integers and booleans"
    elif op_type in (rev.MulOp, rev.DivOp):
        accepts, what = (lambda t: isinstance(t, rev.LogType | rev.TropicalType)), "log and tropical numbers"
    elif op_type in (rev.RotOp, rev.IRotOp):
        accepts, what = (lambda t: isinstance(t, AnyFloat)), "floats"
    elif op_type is rev.SwapOp:
        accepts, what = (lambda t: True), "values"
    else:
        accepts, what = (lambda t: _is_int(t) or isinstance(t, AnyFloat | ComplexType | rev.FixedType)), "numbers"
    for type in targets:
        if not accepts(type):
            raise InstructionTypeError(f"'{op_type.name}' works on {what}, not {spell(type)}", loc, type, None, what)
    for type in [*targets[1:], *reads]:
        if type != targets[0]:
            raise InstructionTypeError(
                f"'{op_type.name}' needs operands of one type, got {spell(targets[0])} and {spell(type)}",
                loc,
                targets[0],
                type,
                what,
            )


@dataclass
class ModuleBuilder:
    """Collects functions into a module."""

    ops: list[Operation] = field(default_factory=list[Operation])

    def function(self, name: str, args: Sequence[tuple[str, Attribute]], loc: Loc = None) -> FunctionBuilder:
        return FunctionBuilder(self, name, args, loc)

    def finish(self, verify: bool = True) -> ModuleOp:
        module = ModuleOp(list(self.ops))
        self.ops.clear()
        if verify:
            module.verify()
        return module
