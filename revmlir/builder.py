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
attached to the ops it creates, so diagnostics point at the frontend's source;
a misuse the builder sees (an unknown variable, a value that is not a number,
a region's value used after the region ends, a function used after its
``finish()``) is a ``BuildError`` at that ``loc``, or at the function's where
the call gave none.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeGuard

import numpy as np
from xdsl.dialects import arith, math, memref
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ComplexType,
    IndexType,
    IntegerType,
    LocationAttr,
    MemRefType,
    ModuleOp,
    UnknownLoc,
    i1,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue, TypeAttribute

from revmlir import fast_ops
from revmlir.diagnostics import failing_op, first_line
from revmlir.dialects import anc, rev
from revmlir.dialects.float_functions import HypotOp, RemFOp
from revmlir.errors import BuildError, RuleViolation, describe_value
from revmlir.kept_answers import ir_unchanged
from revmlir.naming import shown_name
from revmlir.semantics import is_reference_type, is_state_type, scalars_given_back

Loc: TypeAlias = LocationAttr | None


def _number_kind(value: object) -> str | None:
    """Whether ``value`` is a ``bool``, an ``integer``, a ``real`` or a
    ``complex`` number of Python's or numpy's, or None: what a constant may
    be made of (numpy's booleans are no ``numbers.Integral``)."""
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | float | complex):  # most are; the tower's checks are slower
        return "integer" if isinstance(value, int) else "real" if isinstance(value, float) else "complex"
    for kind, tower in (("integer", numbers.Integral), ("real", numbers.Real), ("complex", numbers.Complex)):
        if isinstance(value, tower):
            return kind
    return None


def _described(value: object) -> str:
    """What a user passed where a number, a name or a variable was
    expected, as a message names it."""
    if isinstance(value, Value | SSAValue):
        return "a value"
    return f"{value!r} ({type(value).__name__})"


@dataclass(frozen=True)
class Operands:
    """The types an instruction works on: ``words`` name them in a message
    (``'rev.xor' works on integers and booleans``), ``accepts`` tests one.
    One object carries both, so that a frontend that words an error
    otherwise tests a type by the instruction's own test, not by its
    words."""

    words: str
    accepts: Callable[[Attribute], bool]


class InstructionTypeError(BuildError):
    """An instruction given an operand of a type it does not take, with the
    types for a frontend to word the error in its own language: the
    target's, and the value's where it is the value that differs from it
    (None where the target's type is one the instruction does not work on,
    ``takes`` saying which it works on)."""

    def __init__(self, message: str, loc: Loc, target: Attribute, value: Attribute | None, takes: Operands):
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

    def __bool__(self) -> bool:
        """Refused: the value is known only when the function runs, and a
        Python ``if`` on it would pick one branch while building."""
        raise self.fn.error("a value has no truth value while the function is built; branch with if_ or select")

    def __eq__(self, other: object) -> bool:
        """Refused, as ``__bool__`` is: ``fn["x"] == 0.0`` in a Python
        ``if`` would compare the builder's objects, not the numbers."""
        raise self.fn.error("values are compared with compare('eq', a, b), not with ==")

    def __ne__(self, other: object) -> bool:
        raise self.fn.error("values are compared with compare('ne', a, b), not with !=")

    __hash__ = object.__hash__
    """Values stay keys of dicts and sets, by identity."""

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
    "fmax": arith.MaxSIOp,
    "fmin": arith.MinSIOp,
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
    "fmax": arith.MaxnumfOp,
    "fmin": arith.MinnumfOp,
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
_TROPICAL_BINARY: dict[str, str] = {"mul": "add", "div": "sub", "add": "max", "max": "max", "fmax": "max"}
"""Tropical arithmetic as the real arithmetic it is (max-plus); a tropical
number is never NaN, so ``fmax`` is ``max``."""
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

ALIASED_ARGUMENTS = "the arguments of a call must not alias: pass a copy of one of them"
"""What every frontend says of an array passed to a call twice, or beside
one of its own elements."""


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
    what: str
    """The region, as messages name it (``then-branch``, ``loop body``)."""
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

    def error(self, message: str, loc: Loc = None) -> BuildError:
        """A ``BuildError`` at ``loc``, or where there is none, at the
        function's own location, where the ops built without one are."""
        return BuildError(message, loc or self.loc)

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
            raise self.error(f"unknown variable '{name}'", loc)
        return value

    def _visible(self, scope: _Scope, name: str) -> SSAValue | None:
        return scope.find(name)

    def _name(self, name: object, what: str, loc: Loc) -> str:
        """``name`` as the name of a new variable (``what``): the IR names the
        variable's values after it, so it follows the IR's rule for value names."""
        if not isinstance(name, str):
            raise self.error(f"{what} is named by a string, not {_described(name)}", loc)
        if not SSAValue.is_valid_name(name):
            raise self.error(
                f"{name!r} cannot name {what}: a name starts with an ASCII letter or one of _ $ . - "
                "and goes on with letters, digits and those",
                loc,
            )
        return name

    def _define(self, name: str, value: SSAValue) -> None:
        value.name_hint = name
        self._scope.values[name] = value

    @property
    def current_block(self) -> Block:
        """The block ops are being appended to."""
        return self._scope.block

    # -- emitting ops ---------------------------------------------------------

    def emit(self, op: Operation, loc: Loc = None) -> Operation:
        """Append an op to the current block (for frontends with their own
        ops).  Its operands must be visible here, as every value the
        builder takes (``_visible_value``); what else its own rules say the
        module's ``finish()`` verifies, at ``loc``."""
        if not isinstance(op, Operation):
            raise self.error(f"only operations are emitted, not {_described(op)}", loc)
        if op.parent is not None:
            raise self.error(f"'{op.name}' is in a block already; emit each op once", loc)
        for operand in op.operands:
            self._visible_value(operand, loc, f"'{op.name}': ")
        op.location = loc or self.loc or UnknownLoc()
        self._scope.block.add_op(op)
        return op

    def _ssa(self, value: Operand, like: Attribute | None = None, loc: Loc = None) -> SSAValue:
        """An operand: a value, or a constant made of a number.  A value must
        be defined in the block being built or a block around it: one kept
        from a region that has ended, or from another function, would make
        IR that refers to ops outside it."""
        if isinstance(value, Value):
            ssa = value.ssa
        elif isinstance(value, SSAValue):
            ssa = value
        else:
            return self.const(value, like, loc).ssa
        return self._visible_value(ssa, loc)

    def _visible_value(self, ssa: SSAValue, loc: Loc, user: str = "") -> SSAValue:
        """``ssa``, which must be defined in the block being built or a
        block around it; ``user`` (the op using it, as ``'name': ``) begins
        the message where it is not."""
        owner = ssa.owner
        block = owner if isinstance(owner, Block) else owner.parent
        if block is None:
            raise self.error(
                f"{user}{describe_value(ssa)} is not visible here: its op was never emitted; emit it first", loc
            )
        scope: _Scope | None = self._scope
        while scope is not None and scope.block is not block:
            scope = scope.parent
        if scope is None:
            raise self.error(
                f"{user}{describe_value(ssa)} is not visible here: it was computed in a region "
                "that has ended, or in another function",
                loc,
            )
        return ssa

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

        kind = _number_kind(value)
        if kind is None:
            read = f" (fn[{value!r}] reads the variable)" if isinstance(value, str) and self.has(value) else ""
            raise self.error(f"{_described(value)} is not a number{read}", loc)
        if type is not None:
            self._check_type(type, loc)
        weak = type is None and self.is_weak(value)
        if type is None:
            type = {"bool": i1, "integer": i64, "real": f64, "complex": ComplexType(f64)}[kind]
        if not isinstance(type, ComplexType) and kind == "complex":
            raise self.error(f"cannot use the complex number {value} as {self.spell(type)}", loc)
        if isinstance(type, ComplexType):
            op = complexd.ConstantOp.from_floats((complex(value).real, complex(value).imag), type.element_type)
        elif isinstance(type, AnyFloat):
            op = fast_ops.arith_constant(self._float(value, type, loc), type)
        elif isinstance(type, IntegerType | IndexType):
            if kind not in ("integer", "bool"):
                raise self.error(f"cannot use the float {value} as {self.spell(type)}", loc)
            width = 64 if isinstance(type, IndexType) else type.width.data
            if not -(2 ** (width - 1)) <= int(value) < 2 ** (width - 1) and not (width == 1 and value == 1):
                raise self.error(f"the integer {value} does not fit {self.spell(type)}", loc)
            op = fast_ops.arith_constant(int(value), type)
        elif isinstance(type, rev.LogType):
            return self.to_log(self.const(value, type.element_type, loc), loc)
        elif isinstance(type, rev.FixedType | rev.TropicalType):
            return self.cast(self.const(self._float(value, type, loc), _f64(), loc), type, loc)
        else:
            raise self.error(f"no constants of type {self.spell(type)}", loc)
        if weak:
            self._weak.add(op.results[0])
        return Value(self, self.emit(op, loc).results[0])

    def _check_type(self, type: object, loc: Loc) -> None:
        """Refuse a ``type`` argument that is no type (a string, say)."""
        if not isinstance(type, TypeAttribute):
            raise self.error(f"{_described(type)} is not a type", loc)

    def _float(self, value: Any, type: Attribute, loc: Loc) -> float:
        """A real ``value`` as a constant of the float-like ``type`` holds it."""
        try:
            return float(value)
        except OverflowError:  # an integer past the largest float
            raise self.error(f"the integer {value} does not fit {self.spell(type)}", loc) from None

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
            raise self.error(f"cannot combine {self.spell(x.type)} and {self.spell(y.type)}", loc)
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
        fmod, hypot; and fmax, fmin: a NaN loses, where ``max``/``min`` give it)."""
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
            raise self.error(f"'{kind}' is not defined on {self.spell(x.type)}", loc)
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
            raise self.error(f"'{kind}' is not defined on {self.spell(x.type)}", loc)
        op = table[kind].create(operands=[x], result_types=[x.type])
        if self.is_weak(a):
            self._weak.add(op.results[0])
        return Value(self, self.emit(op, loc).results[0])

    def compare(self, kind: str, a: Operand, b: Operand, loc: Loc = None) -> Value:
        """``lt``, ``le``, ``gt``, ``ge``, ``eq``, ``ne``; the result is ``i1``."""
        if kind not in _CMPI:
            raise self.error(f"unknown comparison '{kind}': use one of {', '.join(_CMPI)}", loc)
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
            raise self.error(f"cannot compare values of type {self.spell(x.type)} with '{kind}'", loc)
        return Value(self, self.emit(op, loc).results[0])

    def logical(self, kind: str, a: Operand, b: Operand | None = None, loc: Loc = None) -> Value:
        """``and``, ``or`` and ``not`` on ``i1``."""
        given = "one operand" if b is None else "two operands"
        if {"and": 2, "or": 2, "not": 1}.get(kind) != (1 if b is None else 2):
            raise self.error(f"'{kind}' of {given} is no logical operation: 'and' and 'or' take two, 'not' one", loc)
        x = self._boolean(a, "a logical operand", loc)
        if b is None:
            return self.binary("xor", Value(self, x), self.const(True, i1, loc), loc)
        return self.binary(kind, Value(self, x), Value(self, self._boolean(b, "a logical operand", loc)), loc)

    def _boolean(self, value: Operand, what: str, loc: Loc) -> SSAValue:
        """``value``, which must be an ``i1``."""
        x = self._ssa(value, i1, loc)
        if x.type != i1:
            raise self.error(f"{what} must be a boolean, got {self.spell(x.type)}", loc)
        return x

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
        op = arith.SelectOp(self._boolean(cond, "a selection's condition", loc), x, y)
        if self.is_weak(a) and self.is_weak(b):
            self._weak.add(op.results[0])
        return Value(self, self.emit(op, loc).results[0])

    def cast(self, a: Operand, type: Attribute, loc: Loc = None) -> Value:
        """Convert between integer, index, float, complex, fixed-point and
        tropical types (fixed-point numbers and tropical numbers through
        their real value)."""
        self._check_type(type, loc)
        x = self._ssa(a, None, loc)
        src = x.type
        if src == type:
            return Value(self, x)
        if isinstance(src, rev.FixedType | rev.TropicalType):
            return self.cast(self.from_number(x, loc), type, loc)
        if isinstance(type, rev.FixedType | rev.TropicalType):
            if not (_is_int(src) or isinstance(src, AnyFloat)):
                raise self.error(f"cannot convert {self.spell(src)} to {self.spell(type)}", loc)
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
        if type == i1 and (_is_int(src) or isinstance(src, AnyFloat)):
            # an explicit conversion: fptosi to i1 is undefined for 1.0, and
            # a truncation keeps the low bit, which an update's does (fitted)
            return self.truth(x, loc)
        boolean = isinstance(src, IntegerType) and src.width.data == 1
        if boolean and isinstance(type, IndexType | AnyFloat):
            # True is 1 (MLIR's extui), not the -1 of a signed extension
            x = self.emit(fast_ops.cast(arith.ExtUIOp, x, IntegerType(64)), loc).results[0]
            src = IntegerType(64)
        if _is_int(src) and isinstance(type, AnyFloat):
            if isinstance(src, IndexType):
                x = self.emit(fast_ops.cast(arith.IndexCastOp, x, IntegerType(64)), loc).results[0]
            op: Operation = fast_ops.cast(arith.SIToFPOp, x, type)
        elif isinstance(src, AnyFloat) and _is_int(type):
            target = IntegerType(64) if isinstance(type, IndexType) else type
            op = fast_ops.cast(arith.FPToSIOp, x, target)
            if isinstance(type, IndexType):
                x = self.emit(op, loc).results[0]
                op = fast_ops.cast(arith.IndexCastOp, x, type)
        elif _is_int(src) and _is_int(type):
            if isinstance(src, IndexType) or isinstance(type, IndexType):
                op = fast_ops.cast(arith.IndexCastOp, x, type)
            elif src.width.data < type.width.data:
                op = fast_ops.cast(arith.ExtUIOp if boolean else arith.ExtSIOp, x, type)
            else:
                op = fast_ops.cast(arith.TruncIOp, x, type)
        elif isinstance(src, AnyFloat) and isinstance(type, AnyFloat):
            wider = src.bitwidth < type.bitwidth
            op = fast_ops.cast(arith.ExtFOp if wider else arith.TruncFOp, x, type)
        else:
            raise self.error(f"cannot convert {self.spell(src)} to {self.spell(type)}", loc)
        return Value(self, self.emit(op, loc).results[0])

    def truth(self, a: Operand, loc: Loc = None) -> Value:
        """Python's truth of a number, as ``bool(x)``, a condition and
        numpy's ``astype(bool)`` take it: not zero (NaN is true).  The
        explicit conversions to a boolean (``cast`` to ``i1``) are this."""
        x = self._ssa(a, None, loc)
        if x.type == i1:
            return Value(self, x)
        return self.compare("ne", Value(self, x), self.const(0, x.type, loc), loc)

    def fitted(self, a: Operand, type: Attribute, loc: Loc = None) -> Value:
        """``a`` converted to ``type``, that of a variable or array it updates
        or is stored into: as ``cast`` converts it, but an integer into a
        boolean keeps its low bit, as it wraps into every other width
        (decision 144's bits), where ``truth`` would make 2 true."""
        x = self._ssa(a, None, loc)
        if type != i1 or not _is_int(x.type) or x.type == i1:
            return self.cast(Value(self, x), type, loc)
        if isinstance(x.type, IndexType):
            x = self.emit(arith.IndexCastOp(x, IntegerType(64)), loc).results[0]
        return Value(self, self.emit(arith.TruncIOp(x, i1), loc).results[0])

    def real(self, z: Operand, loc: Loc = None) -> Value:
        return Value(self, self.emit(complexd.ReOp(self._typed(z, ComplexType, "'real'", loc)), loc).results[0])

    def imag(self, z: Operand, loc: Loc = None) -> Value:
        return Value(self, self.emit(complexd.ImOp(self._typed(z, ComplexType, "'imag'", loc)), loc).results[0])

    def angle(self, z: Operand, loc: Loc = None) -> Value:
        """The phase of ``z``; of a real number (an integer as ``f64``),
        ``atan2(0.0, x)``'s value, how ``cmath.phase`` and ``np.angle`` take
        a real (the complex number of imaginary part ``+0.0``): π where the
        sign bit is set (``-0.0`` and ``-inf`` too), else 0, and NaN for NaN
        (``x · 0``, the argument's NaN), at the argument's precision.
        Selected, not computed as ``atan2``: its derivative ``-0/(x²+0)`` is
        NaN at 0, where the function is constant on each side; each
        selected value has the derivative 0."""
        x = self._ssa(z, None, loc)
        if _is_int(x.type):
            x = self.cast(Value(self, x), _f64(), loc).ssa
        if isinstance(x.type, AnyFloat):
            real = Value(self, x)
            negative = self.compare("lt", self.binary("copysign", self.const(1.0, x.type, loc), real, loc), 0.0, loc)
            phase = self.select(negative, self.const(np.pi, x.type, loc), self.const(0.0, x.type, loc), loc)
            nan = self.binary("mul", real, self.const(0.0, x.type, loc), loc)
            return self.select(self.compare("ne", real, real, loc), nan, phase, loc)
        return Value(self, self.emit(complexd.AngleOp(self._typed(x, ComplexType, "'angle'", loc)), loc).results[0])

    def _typed(
        self, value: Operand, kind: type[Attribute] | tuple[type[Attribute], ...], what: str, loc: Loc
    ) -> SSAValue:
        """The operand ``value`` of ``what``, which takes values of ``kind``
        (complex numbers, say) only."""
        x = self._ssa(value, None, loc)
        if not isinstance(x.type, kind):
            raise self.error(f"{what} is not defined on {self.spell(x.type)}", loc)
        return x

    def complex(self, re: Operand, im: Operand, loc: Loc = None) -> Value:
        x, y = self._pair(re, im, loc)
        if not isinstance(x.type, AnyFloat):
            raise self.error(f"a complex number's parts are floats, not {self.spell(x.type)}", loc)
        op = complexd.CreateOp(x, y, ComplexType(x.type))
        return Value(self, self.emit(op, loc).results[0])

    def to_log(self, a: Operand, loc: Loc = None) -> Value:
        x = self._ssa(a, _f64(), loc)
        if _is_int(x.type):
            x = self.cast(Value(self, x), _f64(), loc).ssa
        if not isinstance(x.type, AnyFloat):
            raise self.error(f"a log number is made from a positive real, not {self.spell(x.type)}", loc)
        return Value(self, self.emit(rev.ToLogOp(x), loc).results[0])

    def from_number(self, a: Operand, loc: Loc = None) -> Value:
        """The real value (f64) of a fixed-point or tropical number."""
        x = self._typed(a, (rev.FixedType, rev.TropicalType), "'from_number'", loc)
        op = rev.FromFixedOp(x) if isinstance(x.type, rev.FixedType) else rev.FromTropicalOp(x)
        return Value(self, self.emit(op, loc).results[0])

    def from_log(self, a: Operand, loc: Loc = None) -> Value:
        return Value(self, self.emit(rev.FromLogOp(self._typed(a, rev.LogType, "'from_log'", loc)), loc).results[0])

    def load(self, name: str, indices: Sequence[Operand], loc: Loc = None) -> Value:
        """Read ``name[indices]`` (a memref element) into an expression."""
        array, at = self._element(name, indices, loc)
        return Value(self, self.emit(memref.LoadOp.get(array, at), loc).results[0])

    def _element(self, name: str, indices: Sequence[Operand], loc: Loc) -> tuple[SSAValue, list[SSAValue]]:
        """The array ``name`` and the index values of ``indices``, one
        integer per dimension: what a read and an update of an element take."""
        array = self._current(name, loc)
        if not isinstance(array.type, MemRefType):
            raise self.error(f"'{name}' is not an array", loc)
        indices = self._sequence(indices, f"the indices of '{name}'", loc)
        rank = array.type.get_num_dims()
        if len(indices) != rank:
            raise self.error(
                f"'{name}' has {rank} dimension{'s' * (rank != 1)}: it takes {rank} "
                f"ind{'ices' if rank != 1 else 'ex'}, not {len(indices)}",
                loc,
            )
        return array, [self.index(i, loc) for i in indices]

    def _sequence(self, values: Sequence[Any], what: str, loc: Loc) -> Sequence[Any]:
        """``values``, which must be a sequence (``what``: indices, sizes,
        arguments), not one value (a string is one name)."""
        if not isinstance(values, list | tuple) and (isinstance(values, str) or not isinstance(values, Sequence)):
            raise self.error(f"{what} are a sequence, not {_described(values)}", loc)
        return values

    def index(self, value: Operand, loc: Loc = None, what: str = "an index") -> SSAValue:
        """``value`` (``what``: an index, a size, a bound) as an ``index``;
        it is an integer of any width or a boolean, not a float, which would
        be truncated silently."""
        x = self._ssa(value, IndexType(), loc)
        if isinstance(x.type, IndexType):
            return x
        if not _is_int(x.type):
            raise self.error(f"{what} is an integer, not {self.spell(x.type)}", loc)
        return self.cast(Value(self, x), IndexType(), loc).ssa

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
        self.loc = loc  # where the errors in its arguments are
        if not isinstance(name, str):
            raise self.error(f"a function is named by a string, not {_described(name)}", loc)
        self.module = module
        self.name = name
        self.arg_names: list[str] = []
        self.arg_types: list[Attribute] = []
        for arg in args:
            if isinstance(arg, str) or not isinstance(arg, Sequence) or len(arg) != 2:
                raise self.error(f"an argument of {name} is a pair (name, type), not {_described(arg)}", loc)
            arg_name, type = self._name(arg[0], f"an argument of {name}", loc), arg[1]
            if arg_name in self.arg_names:
                raise self.error(f"argument '{arg_name}' of {name} is given twice", loc)
            if not (is_state_type(type) or is_reference_type(type)):
                raise self.error(
                    f"argument '{arg_name}' of {name} has type {self.spell(type)}; reversible "
                    "functions take scalars, memrefs and stacks",
                    loc,
                )
            self.arg_names.append(arg_name)
            self.arg_types.append(type)
        entry = Block(arg_types=self.arg_types)
        super().__init__(entry, self.arg_names, loc)
        self._entry = entry
        self._func: rev.FuncOp | None = None
        """The function, once ``finish()`` has made it."""
        self._array_sizes: dict[SSAValue, list[SSAValue]] = {}
        """The sizes each ancilla array was allocated with, which its free
        restates."""

    @property
    def finished(self) -> bool:
        return self._func is not None

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

    def _new_variable(self, name: object, loc: Loc) -> str:
        """``name``, for a variable about to be made in the block being built."""
        checked = self._name(name, "a variable", loc)
        if checked in self._scope.values:
            raise self.error(f"'{checked}' is already a variable here", loc)
        return checked

    def _update(self, name: str, value: SSAValue) -> None:
        self._current(name, None)
        self._define(name, value)

    def _forget(self, name: str, loc: Loc) -> None:
        self._current(name, loc)
        if name not in self._scope.values:  # a stack from outside this region
            raise self.error(f"'{name}' was created outside this region; it cannot end inside it", loc)
        del self._scope.values[name]

    # -- views ----------------------------------------------------------------

    def at(self, name: str, *indices: Operand) -> Element:
        return Element(name, tuple(indices))

    @contextmanager
    def _borrow(self, targets: Sequence[Target], loc: Loc) -> Iterator[list[SSAValue]]:
        """Make each target a state value, let the caller replace the values,
        then give them back (put elements, repack complex parts).  Where
        that fails (a value that is not a number, say), the ops emitted
        since are erased: a taken element that is never put back would
        make the function fail to verify, so a frontend that reports the
        error and goes on could not finish it."""
        names = [
            target if isinstance(target, str) else target.name for target in targets if isinstance(target, str | Part)
        ]
        if twice := [name for i, name in enumerate(names) if name in names[:i]]:
            raise self.error(
                f"'{twice[0]}' is passed twice to one op; each of its operands is a variable of its own", loc
            )
        block, last = self.current_block, self.current_block.last_op
        kept = dict(self._kept_parts)
        current: list[SSAValue] = []
        restore: list[Callable[[SSAValue], None]] = []
        try:
            for target in targets:
                value, give_back = self._open(target, loc)
                current.append(value)
                restore.append(give_back)
            yield current
        except Exception:
            while (op := block.last_op) is not None and op is not last:
                block.erase_op(op)
            self._kept_parts = kept
            raise
        for give_back, value in reversed(list(zip(restore, current, strict=True))):
            give_back(value)

    def _open(self, target: Target, loc: Loc) -> tuple[SSAValue, Callable[[SSAValue], None]]:
        if isinstance(target, str):
            value = self._current(target, loc)
            if not is_state_type(value.type):
                whole = "; update its elements, one at a time" if isinstance(value.type, MemRefType) else ""
                raise self.error(f"'{target}' ({self.spell(value.type)}) cannot be updated{whole}", loc)
            return value, lambda new: self._define(target, new)
        if isinstance(target, Element):
            array, indices = self._element(target.name, target.indices, loc)
            take = self.emit(rev.TakeOp(array, indices), loc)

            def put(new: SSAValue) -> None:
                self.emit(rev.PutOp(new, array, indices), loc)

            return take.results[0], put
        if not isinstance(target, Part):
            raise self.error(
                "an update takes a variable by name, an element (at) or a complex part (Part), "
                f"not {_described(target)}",
                loc,
            )
        name = target.name
        if target.part not in ("real", "imag"):
            raise self.error(f"a complex number's parts are 'real' and 'imag', not {target.part!r}", loc)
        whole = self._current(name, loc)
        if not isinstance(whole.type, ComplexType):
            raise self.error(f"'{name}' is not complex; it has no .{target.part}", loc)
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
                    operands[i] = self.fitted(operand, like, loc).ssa
            types = [v.type for v in values], [o.type for o in operands]
            if (problem := _instruction_type_error(op_type, *types, loc or self.loc, self.spell)) is not None:
                raise problem
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
        name = self._new_variable(name, loc)
        initial = self._ssa(value, type, loc)
        if type is not None and initial.type != type:
            raise self.error(
                f"an ancilla of type {self.spell(type)} cannot start from a {self.spell(initial.type)} value", loc
            )
        if not is_state_type(initial.type):
            raise self.error(f"an ancilla holds a scalar, not {self.spell(initial.type)}", loc)
        op = self.emit(anc.AllocOp(initial), loc)
        self._define(name, op.results[0])

    def free(self, name: str, value: Operand, loc: Loc = None) -> None:
        """``name → value``: the variable must hold ``value``; it ends here."""
        current = self._current(name, loc)
        if not is_state_type(current.type):
            raise self.error(f"'{name}' ({self.spell(current.type)}) is not an ancilla; it cannot be freed", loc)
        known = self._ssa(value, current.type, loc)
        if known.type != current.type and _is_int(known.type):
            # e.g. `rv.free(k, x.shape[0])`: an index/other-width integer
            # compared with an i64 (or float) ancilla, as instructions do.
            known = self.cast(Value(self, known), current.type, loc).ssa
        if known.type != current.type:
            raise self.error(
                f"'{name}' ({self.spell(current.type)}) cannot be freed against a {self.spell(known.type)} value", loc
            )
        self.emit(anc.FreeOp(current, known), loc)
        self._forget(name, loc)

    def zeros(self, name: str, sizes: Sequence[Operand], element_type: Attribute, loc: Loc = None) -> None:
        """``name``: a new ancilla array of zeros, one (index) size per
        dimension (NiLang's ``zeros``)."""
        name = self._new_variable(name, loc)
        if not isinstance(element_type, IntegerType | IndexType | AnyFloat):
            raise self.error(f"ancilla arrays hold integers or floats, not {self.spell(element_type)}", loc)
        extents = [
            self.index(size, loc, "an array size") for size in self._sequence(sizes, f"the sizes of '{name}'", loc)
        ]
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
            raise self.error(f"'{name}' is not an ancilla array (rv.zeros); it cannot be freed", loc)
        self.emit(anc.ArrayFreeOp(array, sizes), loc)
        self._forget(name, loc)

    def stack(self, name: str, element_type: Attribute, loc: Loc = None) -> None:
        """``name``: a new, empty stack of scalars of ``element_type``."""
        name = self._new_variable(name, loc)
        if not is_state_type(element_type):
            raise self.error(f"a stack holds scalars, not {self.spell(element_type)}", loc)
        op = self.emit(anc.StackAllocOp(anc.StackType(element_type)), loc)
        self._define(name, op.results[0])

    def free_stack(self, name: str, loc: Loc = None) -> None:
        self.emit(anc.StackFreeOp(self._stack(name, loc)), loc)
        self._forget(name, loc)

    def _stack(self, name: str, loc: Loc, value: SSAValue | None = None) -> SSAValue:
        """The stack ``name``; ``value`` must have its element type."""
        stack = self._current(name, loc)
        if not isinstance(stack.type, anc.StackType):
            raise self.error(f"'{name}' is not a stack", loc)
        if value is not None and value.type != stack.type.element_type:
            raise self.error(
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
        name = self._new_variable(name, loc)
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
        if not isinstance(callee, str):
            raise self.error(f"a callee is named by a string, not {_described(callee)}", loc)
        args = self._sequence(args, f"the arguments of '{callee}'", loc)
        scalars = [a for a in args if not self._is_reference(a, loc)]
        # An array the callee reads through one parameter and writes through
        # another has no inverse (verifier rule `call`); the builder names
        # variables, and refuses any reference named twice, as the eDSL does.
        references = [a for a in args if self._is_reference(a, loc)]
        if twice := [name for i, name in enumerate(references) if name in references[:i]]:
            raise self.error(f"'{twice[0]}' is passed to '{callee}' twice; {ALIASED_ARGUMENTS}", loc)
        # An element is borrowed for the call, so the callee would meet it
        # borrowed through the array (verifier rule `alias`).
        if beside := [a.name for a in args if isinstance(a, Element) and a.name in references]:
            raise self.error(
                f"'{beside[0]}' is passed to '{callee}' beside one of its own elements; {ALIASED_ARGUMENTS}", loc
            )
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
        what: str,
        loc: Loc,
        arg_types: Sequence[Attribute] = (),
        carries: bool = True,
        named: Sequence[str] = (),
    ) -> _RegionResult:
        """Build ``body`` (the region ``what``) into a new block.  The block
        starts with arguments of ``arg_types``; the first ones are bound to the
        variables ``named`` and the rest are passed to ``body``."""
        block = Block(arg_types=arg_types)
        given = [Value(self, a) for a in block.args[len(named) :]]
        self._check_callback(body, len(given), f"the {what}", loc)
        scope = _Scope(block, self._scope, carries=carries)
        for name, arg in zip(named, block.args):
            arg.name_hint = name
            scope.values[name] = arg
        self._scope = scope
        try:
            body(*given)
        finally:
            self._scope = scope.enclosing()
        return _RegionResult(what, block, scope.imported, scope.values, scope.outer)

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

    def _check_callback(self, body: object, arity: int, what: str, loc: Loc) -> None:
        """Refuse a ``body`` that the builder cannot call with ``arity``
        arguments to build ``what`` (a region, a condition): the user's
        ``TypeError`` would otherwise come from inside the builder."""
        takes = "one argument, the loop index" if arity else "no arguments"
        if not callable(body):
            raise self.error(f"{what} is given by a function of {takes}, not {_described(body)}", loc)
        try:
            signature = inspect.signature(body)
        except (ValueError, TypeError):  # a builtin without one, an object it cannot read:
            return  # called as it is
        try:
            signature.bind(*range(arity))
        except TypeError:
            name = getattr(body, "__name__", type(body).__name__)
            raise self.error(f"{what} is given by a function of {takes}, not {name}{signature}", loc) from None

    def _condition_region(self, cond: Callable[[], Operand], what: str, carried: Sequence[str], loc: Loc) -> Region:
        """A condition (``what``) evaluated on the carried variables (its arguments)."""
        self._check_callback(cond, 0, what, loc)
        block = Block(arg_types=[self._scope.carried(n).type for n in carried])
        scope = _Scope(block, self._scope, carries=False)
        for name, arg in zip(carried, block.args, strict=True):
            arg.name_hint = name
            scope.values[name] = arg
        self._scope = scope
        try:
            value = self._ssa(cond(), i1, loc)
            if value.type != i1:
                raise self.error(f"a condition must be a boolean, got {self.spell(value.type)}", loc)
            self.emit(rev.CondOp(value), loc)
        finally:
            self._scope = scope.enclosing()
        return Region(block)

    def _finish_region_op(self, op: Operation, carried: Sequence[str], loc: Loc) -> None:
        self.emit(op, loc)
        for name, value in zip(carried, op.results, strict=True):
            self._define(name, value)

    def _check_scope_closed(self, result: _RegionResult, loc: Loc, allowed: Sequence[str] = ()) -> None:
        """Refuse a region that leaves a variable it made allocated, or ends
        one made outside it (an outer variable, or one of ``allowed``: the
        variables a routine's computation makes, which the routine body
        only lends)."""
        what = result.what
        leaked = [
            n
            for n, v in result.values.items()
            if n not in result.imported and n not in allowed and self._allocated(v) and not isinstance(v, BlockArgument)
        ]
        if leaked:
            raise self.error(
                f"{', '.join(repr(n) for n in leaked)} allocated in the {what} is not "
                f"freed there; free it (x → value) before the end of the {what}",
                loc,
            )
        ended = [n for n in [*result.imported, *allowed] if n not in result.values]
        if ended:  # the region would yield the version it consumed
            raise self.error(
                f"{', '.join(repr(n) for n in ended)} was created outside the {what}; it cannot end inside it "
                "(freed, or pushed and not popped back)",
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
        then_result = self._build_region(then, "then-branch", loc)
        else_result = self._build_region((lambda: None) if else_ is None else else_, "else-branch", loc)
        self._check_scope_closed(then_result, loc)
        self._check_scope_closed(else_result, loc)
        carried = self._carried([then_result, else_result])
        then_region, else_region = (self._seal(r, carried, loc=loc) for r in (then_result, else_result))
        op = rev.IfOp(
            [self._current(n, loc) for n in carried],
            self._condition_region(pre, "the if's condition 'pre'", carried, loc),
            then_region,
            else_region,
            self._condition_region(post, "the if's condition 'post'", carried, loc) if post is not None else None,
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
        result = self._build_region(body, "loop body", loc)
        self._check_scope_closed(result, loc)
        carried = self._carried([result])
        region = self._seal(result, carried, loc=loc)
        op = rev.WhileOp(
            [self._current(n, loc) for n in carried],
            self._condition_region(pre, "the loop's condition 'pre'", carried, loc),
            self._condition_region(post, "the loop's condition 'post'", carried, loc),
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
        first, last, stride = (self.index(v, loc, "a loop's bound or step") for v in (lb, ub, step))
        index_name = self._name(index_name, "a loop index", loc)
        result = self._build_region(body, "loop body", loc, [IndexType()])
        result.block.args[0].name_hint = index_name
        self._check_scope_closed(result, loc)
        carried = self._carried([result])
        if parallel and carried:
            raise self._parallel_update(result, carried, loc)
        region = self._seal(result, carried, leading=1, loc=loc)
        op = rev.ForOp(first, last, stride, [self._current(n, loc) for n in carried], region, reverse, parallel)
        self._finish_region_op(op, carried, loc)

    def _parallel_update(self, result: _RegionResult, carried: Sequence[str], loc: Loc) -> BuildError:
        """The refusal of a parallel loop body that rebinds ``carried``,
        outer variables.  Where the first was last rebound by a call in the
        body (directly or in a branch of an ``if``), the call is what counts
        as the update, and the error stands at the call: a scalar argument
        comes back from a call as a new value even where the callee gives it
        back unchanged.  A copy made in the loop is the way out only for
        such a callee: one that changes the scalar would free the copy
        holding another value, so the advice names the copy only where the
        callee, already built, gives the scalar back (``scalars_given_back``)."""
        name = carried[0]
        found = _rebinding_call(result.values[name], result.block)
        if found is None:
            return self.error(
                f"a parallel loop updates {', '.join(repr(n) for n in carried)}, defined outside it: "
                "its iterations are independent, so they may only write array elements",
                loc,
            )
        call, position = found
        callee = call.callee.string_value()
        shown = shown_name(callee, False)
        built = {f.sym_name.data: f for f in self.module.ops if isinstance(f, rev.FuncOp)} if self.module else {}
        given = scalars_given_back(built).get(callee) if callee in built else None
        if given is not None and position not in given:
            advice = (
                f"{shown} changes it, so a copy made in the loop would be freed holding another value; "
                "pass an element of an array the loop writes at its own index instead"
            )
        else:
            advice = (
                f"pass a copy made in the loop (b = rv.ancilla({name}), then rv.free(b, {name}) after the call)"
                + ("" if given is not None else f", where {shown} gives it back unchanged")
            )
        return self.error(
            f"a parallel loop passes {name!r}, defined outside it, to {shown}, which gives it back as a new "
            f"value, an update: the loop's iterations are independent, so they may only write array elements; "
            f"{advice}",
            call.location,
        )

    def routine(self, compute: Callable[[], Any], body: Callable[[], Any], loc: Loc = None) -> None:
        """Compute–copy–uncompute: ``compute``, ``body``, then ``compute``
        backwards.  Variables ``compute`` allocates are visible in ``body``."""
        computed = self._build_region(compute, "routine's computation", loc)
        extra = [n for n, v in computed.values.items() if n not in computed.imported and is_state_type(v.type)]
        self._check_scope_closed(computed, loc, allowed=extra)
        extra_types = [computed.values[n].type for n in extra]
        used = self._build_region(body, "routine body", loc, extra_types, named=extra)
        self._check_scope_closed(used, loc, allowed=extra)
        carried = self._carried([computed, used])
        op = rev.RoutineOp(
            [self._current(n, loc) for n in carried],
            self._seal(computed, carried, extra, loc=loc),
            self._seal(used, carried, extra, trailing=len(extra), loc=loc),
        )
        self._finish_region_op(op, carried, loc)

    def inverse(self, body: Callable[[], Any], loc: Loc = None) -> None:
        """Run ``body`` backwards (NiLang's ``~begin … end``)."""
        result = self._build_region(body, "inverted block", loc)
        self._check_scope_closed(result, loc)
        carried = self._carried([result])
        region = self._seal(result, carried, loc=loc)
        op = rev.InvOp([self._current(n, loc) for n in carried], region)
        self._finish_region_op(op, carried, loc)

    def safe(self, body: Callable[[], Any], when: str = "forward", loc: Loc = None) -> None:
        """Host side effects that touch no reversible state, run ``when``
        the function runs forward, backward or both."""
        if when not in rev.SAFE_MODES:
            raise self.error(f"a safe block runs {', '.join(map(repr, rev.SAFE_MODES))}, not {when!r}", loc)
        result = self._build_region(body, "safe block", loc, carries=False)
        self.emit(rev.SafeOp(Region(result.block), when), loc)

    # -- finishing ----------------------------------------------------------------

    def emit(self, op: Operation, loc: Loc = None) -> Operation:
        """Append an op to the current block, which ``finish()`` closed for good."""
        if self.finished:
            raise self.error(f"function '{self.name}' is finished; nothing more can be built into it", loc)
        return super().emit(op, loc)

    def finish(self, loc: Loc = None) -> rev.FuncOp:
        """Close the function: return the final version of every scalar argument."""
        scope = self._scope
        if scope.parent is not None:
            raise self.error("finish() called inside a region", loc)
        outputs: list[SSAValue] = []
        for name, type in zip(self.arg_names, self.arg_types, strict=True):
            if is_state_type(type):
                if name not in scope.values:
                    raise self.error(f"argument '{name}' was freed or pushed; it must be returned", loc)
                outputs.append(scope.values[name])
        leaked = [n for n, v in scope.values.items() if n not in self.arg_names and self._allocated(v)]
        if leaked:
            raise self.error(
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


def _rebinding_call(value: SSAValue, block: Block) -> tuple[rev.CallOp | rev.UncallOp, int] | None:
    """The call of ``block`` (or of a branch of an ``if`` in it) whose
    result ``value`` is, with the result's position among the call's
    scalars; None where an op other than a call made it."""
    owner = value.owner
    if not isinstance(value, OpResult) or not isinstance(owner, Operation):
        return None
    if isinstance(owner, rev.CallOp | rev.UncallOp) and owner.parent_block() is block:
        return owner, value.index
    if isinstance(owner, rev.IfOp) and owner.parent_block() is block:
        for region in (owner.then_region, owner.else_region):
            last = region.block.last_op
            if isinstance(last, rev.YieldOp) and (found := _rebinding_call(last.operands[value.index], region.block)):
                return found
    return None


def _f64() -> Attribute:
    from xdsl.dialects.builtin import f64

    return f64


def _located(op: Operation, loc: Loc) -> Operation:
    op.location = loc or UnknownLoc()
    return op


def _instruction_type_error(
    op_type: type[Operation],
    targets: Sequence[Attribute],
    reads: Sequence[Attribute],
    loc: Loc,
    spell: Callable[[Attribute], str],
) -> InstructionTypeError | None:
    """An instruction's type error, for a BuildError at the instruction
    (rather than an operand that fails to verify when the module is
    finished), or None."""
    takes = _OPERANDS.get(op_type, _NUMBERS)
    for type in targets:
        if not takes.accepts(type):
            message = f"'{op_type.name}' works on {takes.words}, not {spell(type)}"
            return InstructionTypeError(message, loc, type, None, takes)
    for type in [*targets[1:], *reads]:
        if type != targets[0]:
            return InstructionTypeError(
                f"'{op_type.name}' needs operands of one type, got {spell(targets[0])} and {spell(type)}",
                loc,
                targets[0],
                type,
                takes,
            )
    return None


_NUMBERS = Operands("numbers", lambda t: _is_int(t) or isinstance(t, AnyFloat | ComplexType | rev.FixedType))
_INTEGERS = Operands("integers and booleans", _is_int)
_SCALES = Operands("log and tropical numbers", lambda t: isinstance(t, rev.LogType | rev.TropicalType))
_ANGLES = Operands("floats", lambda t: isinstance(t, AnyFloat))
_OPERANDS: dict[type[Operation], Operands] = {
    rev.XorOp: _INTEGERS,
    rev.IncOp: _INTEGERS,
    rev.DecOp: _INTEGERS,
    rev.MulOp: _SCALES,
    rev.DivOp: _SCALES,
    rev.RotOp: _ANGLES,
    rev.IRotOp: _ANGLES,
    rev.SwapOp: Operands("values", lambda t: True),
}
"""What each instruction works on; any other works on ``_NUMBERS``."""


@dataclass
class ModuleBuilder:
    """Collects functions into a module."""

    ops: list[Operation] = field(default_factory=list[Operation])
    _functions: dict[str, FunctionBuilder] = field(default_factory=dict[str, FunctionBuilder], init=False, repr=False)
    """The functions begun since the module was last finished, by name."""

    def function(self, name: str, args: Sequence[tuple[str, Attribute]], loc: Loc = None) -> FunctionBuilder:
        """Begin the function ``name``; its ``finish()`` adds it to the module."""
        if isinstance(name, str) and name in self._functions:
            raise BuildError(f"function '{name}' is already defined in this module", loc)
        function = FunctionBuilder(self, name, args, loc)
        self._functions[name] = function
        return function

    def finish(self, verify: bool = True) -> ModuleOp:
        """The module of the functions built (verified, unless ``verify`` is
        false), each of which must be finished: an unfinished one would be
        missing from it.  The functions are the module's now: the builder
        is left empty, to build another module, whose functions may take
        the same names and cannot call these.

        A broken reversibility rule is the verifier's located
        ``ReversibilityViolation``; an op that breaks its own rules (one a
        frontend emitted ill-typed) a ``BuildError`` at the op's location,
        or where it has none, its function's: xDSL's ``VerifyException``
        says neither."""
        for function in self._functions.values():
            if not function.finished:
                raise function.error(f"function '{function.name}' is not finished; call its finish()")
        module = ModuleOp(list(self.ops))
        self.ops.clear()
        self._functions.clear()
        if verify:
            with ir_unchanged():  # the module's analyses, asked by each function's checks, once
                try:
                    module.verify()
                except RuleViolation:
                    raise
                except Exception as error:  # an op's own verifier may raise anything
                    raise _verifier_error(module, error) from error
        return module


def _verifier_error(module: ModuleOp, error: Exception) -> BuildError:
    """``error``, which verifying ``module`` raised, as a ``BuildError`` at
    the op whose own verifier fails, or else at the function it names."""
    found = failing_op(module)
    op, cause = found if found is not None else (None, error)
    located = op
    while located is not None and isinstance(located.location, UnknownLoc):
        located = located.parent_op()
    message = first_line(cause)
    if op is not None and f"'{op.name}'" not in message:
        message = f"'{op.name}': {message}"
    return BuildError(message, None if located is None else located.location)
