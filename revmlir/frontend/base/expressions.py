"""Pure Python expressions → arith/math/complex/memref ops through the builder.

Expressions read current versions of variables, array elements, ``.real`` and
``.imag``, constants from the function's globals, ``math``/``cmath``/``numpy``
functions and pure helper functions (inlined from their source).

An integer expression of constants only (literals, numeric globals and
attributes) is folded as Python computes it, unbounded, and becomes a
constant where it meets a type: a float beside a float, else an integer of
the type it meets (``int64`` alone) that must hold it, a uint64's bits
beside an ``int64`` in modular arithmetic (docs/design.md, decision 144).
"""

from __future__ import annotations

import ast
import builtins
import cmath
import copy
import inspect
import math
import operator
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    FileLineColLoc,
    IndexType,
    IntegerType,
    MemRefType,
    UnitAttr,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from revmlir.builder import BuildError, ExpressionBuilder, Loc, Value
from revmlir.dialects.primitives import ApplyOp, InvokeOp, is_scalar_type
from revmlir.dialects.rev import LogType, TropicalType
from revmlir.frontend.base import markers
from revmlir.frontend.base.bindings import UNRESOLVED, namespace_of
from revmlir.frontend.base.errors import ReversibleSyntaxError
from revmlir.frontend.base.source import location
from revmlir.frontend.base.types import describe_type
from revmlir.naming import FORGETFUL_ATTR
from revmlir.runtime.numbers import Fixed

UNARY_FUNCTIONS: dict[Any, str] = {}
for _name in (
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "erf",
):
    for _module in (math, cmath, np):
        _fn = getattr(_module, _name, None)
        if _fn is not None:
            UNARY_FUNCTIONS[_fn] = _name
UNARY_FUNCTIONS.update(
    {
        np.arcsin: "asin",
        np.arccos: "acos",
        np.arctan: "atan",
        np.floor: "floor",
        np.ceil: "ceil",
        abs: "abs",
        np.abs: "abs",
        np.absolute: "abs",
        np.conj: "conj",
        np.conjugate: "conj",
        math.fabs: "fabs",
    }
)

BINARY_FUNCTIONS: dict[Any, str] = {
    math.atan2: "atan2",
    np.arctan2: "atan2",
    math.pow: "pow",
    np.power: "pow",
    math.copysign: "copysign",
    np.copysign: "copysign",
    min: "min",
    max: "max",
    np.minimum: "min",
    np.maximum: "max",
    np.fmin: "fmin",
    np.fmax: "fmax",
}

_FLOAT_TYPES: dict[Any, Attribute] = {np.float32: f32, np.float64: f64}
"""numpy's float types, whose calls convert a value (``np.float32(s)``
rounds an ``f64`` for a ``float32`` target)."""

REAL_FUNCTIONS: dict[Any, str] = {math.hypot: "hypot", np.hypot: "hypot", math.fmod: "fmod"}
"""The C library's functions of two real numbers (libm's on every engine,
libdevice's on a GPU), computed in the type ``a / b`` computes in
(``_real_type``): ``math.fmod`` is C's ``fmod``, the dividend's sign."""

DIVISIONS: dict[Any, str] = {np.remainder: "%", np.floor_divide: "//", np.fmod: "fmod"}
"""numpy's division functions (``np.mod`` is ``np.remainder``), of
numbers as its scalars compute them: ``np.remainder`` is Python's ``%``,
``np.floor_divide`` its ``//``, ``np.fmod`` C's ``fmod``; an integer by
zero is 0 (``_division``)."""

PHASE = (cmath.phase, np.angle)

SPELLED_HERE: dict[Any, str] = {
    math.floor: "np.floor({x}), a float (math.floor's int: int(np.floor({x})))",
    math.ceil: "np.ceil({x}), a float (math.ceil's int: int(np.ceil({x})))",
    math.trunc: "int({x}), which truncates toward zero",
    math.isnan: "{x} != {x}, true for NaN alone",
    np.isnan: "{x} != {x}, true for NaN alone",
    math.isinf: "abs({x}) == math.inf",
    np.isinf: "abs({x}) == math.inf",
    math.isfinite: "abs({x}) < math.inf, false for NaN and ±inf",
    np.isfinite: "abs({x}) < math.inf, false for NaN and ±inf",
    math.degrees: "{x} * (180.0 / math.pi), as math.degrees computes it",
    np.degrees: "{x} * (180.0 / math.pi)",
    math.radians: "{x} * (math.pi / 180.0), as math.radians computes it",
    np.radians: "{x} * (math.pi / 180.0)",
    np.exp2: "2.0 ** {x}",
    np.square: "{x} * {x}",
    np.reciprocal: "1.0 / {x} (of a float)",
    np.fabs: "abs({x}) (of a float)",
}
"""Library functions revmlir has no rules for that an expression it
compiles writes otherwise: the refusal says what to write (``math.floor``
where ``np.floor`` is a rule), rather than to declare a primitive."""

_ARITIES: dict[Any, int] = {
    **dict.fromkeys((*UNARY_FUNCTIONS, *PHASE, *_FLOAT_TYPES), 1),
    **dict.fromkeys((*BINARY_FUNCTIONS, *REAL_FUNCTIONS, *DIVISIONS), 2),
}
"""How many numbers each of these functions takes in an expression: a
call of another count is refused as such, not as a function without
rules."""

SCALAR_FUNCTIONS = frozenset(_ARITIES)
"""The math, cmath and numpy functions an expression computes on numbers
(numpy's others make arrays)."""

MAX_INLINE_DEPTH = 16

TOO_DEEP = (
    "expression nested too deeply",
    "split it: compute parts into variables or ancillas first",
)
"""The error of an expression, or a statement, whose compile exhausted
Python's recursion limit (raised while compiling, ``room_for_calls``): its
message and hint."""

Folded = int | float
"""A folded integer expression of constants: an ``int``, or the ``float``
Python's ``/`` and ``**`` make of ints."""

_FOLDED: dict[type, Callable[[int, int], Folded]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}

MAX_FOLDED_BITS = 4096
"""The widest integer folding computes: four times a float's range, far
beyond any ``int64``, and small enough that ``2 ** 10 ** 9`` is refused at
once instead of computed."""

_MODULAR = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
"""The operators whose bits two's complement computes alike for signed and
unsigned operands: beside a ``w``-bit integer, a constant below ``2**w``
gives its bits (``_constant``)."""

_OF_INTS = frozenset({"abs", "floor", "ceil", "conj"})
"""The unary functions whose result is an ``int`` for an ``int``: the others
are float functions, whose folded argument is a float."""

_SYMBOLS: dict[type, str] = {
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}


@dataclass
class Context:
    """What an expression can see besides the builder's variables."""

    fn: ExpressionBuilder
    filename: str
    line_offset: int
    column_offset: int
    namespace: Callable[[str], Any]
    primitive: Callable[[Any], str]
    """Declares a user primitive (``rv.primitive``) in the module being
    compiled and names it."""
    bindings: list[dict[str, Value]] = field(default_factory=list[dict[str, Value]])
    inline_depth: int = 0
    variables: str = "the function's arguments and ancillas (x = rv.ancilla(0.0))"
    """Where variables come from, for the hint of an unknown name."""

    def loc(self, node: ast.AST) -> FileLineColLoc:
        line = getattr(node, "lineno", 1) + self.line_offset
        column = getattr(node, "col_offset", 0) + self.column_offset + 1
        return location(self.filename, line, column)

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> ReversibleSyntaxError:
        line = getattr(node, "lineno", 1) + self.line_offset
        column = getattr(node, "col_offset", 0) + self.column_offset + 1
        return ReversibleSyntaxError(message, self.filename, line, column, hint)

    def lookup_binding(self, name: str) -> Value | None:
        for scope in reversed(self.bindings):
            if name in scope:
                return scope[name]
        return None

    def resolve(self, node: ast.expr) -> Any:
        """The Python object a dotted name (or a fixed-point format) refers
        to, or a sentinel."""
        if isinstance(node, ast.Name):
            if self.lookup_binding(node.id) is not None or self.fn.has(node.id):
                return UNRESOLVED
            return self.namespace(node.id)
        if isinstance(node, ast.Attribute):
            if (path := _dotted(node)) is not None:  # cfg.K: read once, as a name is
                head = path.partition(".")[0]
                if self.lookup_binding(head) is not None or self.fn.has(head):
                    return UNRESOLVED
                return self.namespace(path)
            base = self.resolve(node.value)
            if base is UNRESOLVED:
                return UNRESOLVED
            return getattr(base, node.attr, UNRESOLVED)
        if isinstance(node, ast.Subscript) and self.resolve(node.value) is Fixed:
            # a format written in place, rv.Fixed[43] or rv.Fixed[16, 32]
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            sizes = [p.value for p in parts if isinstance(p, ast.Constant) and type(p.value) is int]
            if len(sizes) == len(parts):
                try:
                    return Fixed(*sizes)
                except (TypeError, ValueError) as error:
                    raise self.error(node, str(error)) from None
        return UNRESOLVED


class ExpressionCompiler:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.updating: ast.AugAssign | None = None
        """The update whose value is being compiled (``y *= a ** 3``), whose
        target a refusal's hint names."""

    @property
    def fn(self) -> ExpressionBuilder:
        return self.ctx.fn

    def compile(
        self,
        node: ast.expr,
        like: Attribute | None = None,
        *,
        bits: bool = False,
        updating: ast.AugAssign | None = None,
    ) -> Value:
        """The value of ``node``, which updates or becomes a value of type
        ``like`` where that is known: an integer of constants beside a
        float is that float, beside an integer one of its type
        (``_constant``; ``bits`` for a modular update; ``updating``, the
        update whose value ``node`` is)."""
        previous, self.updating = self.updating, updating
        try:
            return self._constant(node, self._evaluate(node), like, bits=bits)
        except BuildError as error:
            raise self.ctx.error(node, error.message) from None
        except RecursionError:
            raise self.ctx.error(node, *TOO_DEEP) from None
        finally:
            self.updating = previous

    def _compile(self, node: ast.expr, like: Attribute | None = None) -> Value:
        """The value of ``node``; a folded one a constant (``_constant``)."""
        return self._constant(node, self._evaluate(node), like)

    def _constant(self, node: ast.expr, value: Value | Folded, like: Attribute | None, *, bits: bool = False) -> Value:
        """``value`` of ``node`` as an IR value: a folded ``int`` beyond
        ``int64`` meeting a float or complex ``like`` converts to a float,
        as Python converts an int meeting a float; any other folded ``int``
        is a (weak) integer constant, which must fit the integer ``like``
        (``int64`` where ``like`` is no integer), and a folded ``float`` a
        weak ``f64`` one.  Where ``bits`` (an operand of ``+ - * & | ^``,
        or a ``+= -= ^=``, whose bits two's complement computes alike) an
        int in ``[2**(w-1), 2**w)`` meeting a ``w``-bit integer is the
        integer with its bits: a uint64 constant held in an ``int64``, as
        C and numpy convert it (decision 144)."""
        if isinstance(value, Value):
            return value
        fn, loc = self.ctx.fn, self.ctx.loc(node)
        if isinstance(value, int) and _is_float_or_complex(like) and not _fits_int64(value):
            try:
                return fn.const(float(value), None, loc)
            except OverflowError:
                raise self.ctx.error(node, f"the integer {_spelled(value)} does not fit a float") from None
        if isinstance(value, int):
            target = like if like is not None and _is_int(like) else i64
            bits = bits and target is like
            self._check_fits(node, value, target, bits)
            if bits and value >= 2 ** (_width(target) - 1):
                value -= 2 ** _width(target)
        return fn.const(value, None, loc)

    def _check_fits(self, node: ast.expr, value: int, type: Attribute, bits: bool) -> None:
        """Refuse a folded ``value`` that ``type`` (an integer) cannot
        hold, unless ``bits`` takes its unsigned bits, with the way to
        write what Python meant: ``float(…)``, or ``N - 2**w`` for the
        bits of an unsigned constant."""
        width = _width(type)
        low, high = -(2 ** (width - 1)), 2 ** (width - (0 if bits else 1))
        if low <= value < high:
            return
        spelled, name = _spelled(value), self.fn.spell(type)
        if 2 ** (width - 1) <= value < 2**width:
            hint = f"for the bits of a uint{width} constant write {spelled} - 2**{width}"
        else:
            hint = f"Python's ints are unbounded; for a float write float({ast.unparse(node)})"
        raise self.ctx.error(node, f"the integer {spelled} does not fit {name}", hint)

    def folded_int(self, node: ast.expr) -> int | None:
        """The ``int`` of ``node`` where it is an integer expression of
        constants only (a ``range()`` step, an index), else None; nothing
        is compiled for an expression that is not one."""
        if not self._of_constants(node):
            return None
        value = self._evaluate(node)
        return value if _is_folded_int(value) else None

    def _of_constants(self, node: ast.expr) -> bool:
        """Whether ``node`` folds: ints, names and attributes bound to one,
        and the operators of ints."""
        match node:
            case ast.Constant(value=value):
                return _is_folded_int(value)
            case ast.Name() | ast.Attribute():
                return _is_folded_int(_python_number(self.ctx.resolve(node)))
            case ast.BinOp(left=left, right=right):
                return self._of_constants(left) and self._of_constants(right)
            case ast.UnaryOp(op=ast.USub() | ast.UAdd() | ast.Invert(), operand=operand):
                return self._of_constants(operand)
        return False

    def _evaluate(self, node: ast.expr) -> Value | Folded:
        """The value of ``node``: compiled, or folded where it is an
        integer expression of constants only."""
        ctx, fn = self.ctx, self.ctx.fn
        loc = ctx.loc(node)
        match node:
            case ast.Constant(value=int() as value) if not isinstance(value, bool):
                return value
            case ast.Constant(value=value) if isinstance(value, bool | float | complex):
                return fn.const(value, None, loc)
            case ast.Name(id=name):
                return self._name(node, name)
            case ast.BinOp(left=left, op=op, right=right):
                return self._binop(node, op, self._evaluate(left), self._evaluate(right))
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                negated = self._evaluate(operand)
                self._check_no_log_number(node, [negated])
                return fn.unary("neg", negated, loc) if isinstance(negated, Value) else -negated
            case ast.UnaryOp(op=ast.UAdd(), operand=operand):
                return self._evaluate(operand)
            case ast.UnaryOp(op=ast.Not(), operand=operand):
                return fn.logical("not", self._boolean(operand), None, loc)
            case ast.UnaryOp(op=ast.Invert(), operand=operand):
                folded = self._evaluate(operand)
                if isinstance(folded, int):
                    return ~folded
                integer = self._constant(operand, folded, None)
                if not isinstance(integer.type, IntegerType | IndexType):
                    raise ctx.error(node, f"'{ast.unparse(node)}': ~ needs an integer")
                return fn.binary("xor", integer, fn.const(-1, integer.type, loc), loc)
            case ast.BoolOp(op=op, values=values):
                kind = "and" if isinstance(op, ast.And) else "or"
                result = self._boolean(values[0])
                for value in values[1:]:
                    result = fn.logical(kind, result, self._boolean(value), loc)
                return result
            case ast.Compare(left=left, ops=ops, comparators=comparators):
                return self._compare(node, left, ops, comparators)
            case ast.IfExp(test=test, body=body, orelse=orelse):
                condition = self._boolean(test)
                return fn.select(
                    condition, *self._pair(body, self._evaluate(body), orelse, self._evaluate(orelse)), loc
                )
            case ast.Subscript():
                return self._subscript(node)
            case ast.Attribute(value=value, attr=attr):
                return self._attribute(node, value, attr)
            case ast.Call():
                return self._call(node)
        raise ctx.error(
            node,
            f"'{ast.unparse(node)}' is not a supported expression",
            "expressions may use arithmetic, comparisons, math/numpy functions, "
            "array elements, .real/.imag and pure helper functions",
        )

    def _boolean(self, node: ast.expr) -> Value:
        value = self._compile(node)
        if value.type != i1:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is not a boolean", "compare it explicitly")
        return value

    def _name(self, node: ast.Name, name: str) -> Value | Folded:
        ctx, fn = self.ctx, self.ctx.fn
        if (bound := ctx.lookup_binding(name)) is not None:
            return bound
        if fn.has(name):
            return fn.get(name, ctx.loc(node))
        if (number := self._number(node, ctx.namespace(name))) is not None:
            return number
        raise ctx.error(
            node,
            f"unknown variable '{name}'",
            f"variables are {ctx.variables}; globals must be numbers",
        )

    def _number(self, node: ast.expr, value: object) -> Value | Folded | None:
        """A global's (or an attribute's) number as an expression, None for
        anything else: an ``int`` folds, numpy's numbers are Python's."""
        number = _python_number(value)
        if number is None or _is_folded_int(number):
            return number
        return self.ctx.fn.const(number, None, self.ctx.loc(node))

    def _pair(
        self, left_node: ast.expr, left: Value | Folded, right_node: ast.expr, right: Value | Folded, bits: bool = False
    ) -> tuple[Value, Value]:
        """Two operands as IR values, a folded one typed by the other
        (``_constant``): those of an operator, a comparison, ``min``/
        ``max``/``math.pow`` and the two branches of ``a if c else b``."""
        a = self._constant(left_node, left, _met(_type_of(right)), bits=bits)
        return a, self._constant(right_node, right, _met(a.type), bits=bits)

    def _binop(self, node: ast.BinOp, op: ast.operator, left: Value | Folded, right: Value | Folded) -> Value | Folded:
        if isinstance(left, int) and isinstance(right, int):
            return self._fold(node, op, left, right)
        if isinstance(op, ast.Pow) and isinstance(right, int) and right < 0 and _is_int_value(left):
            raise self.ctx.error(
                node,
                f"'{ast.unparse(node)}': an int to a negative power is a float",
                f"raise a float: float({ast.unparse(node.left)}) ** {ast.unparse(node.right)}",
            )
        if not _is_first_power(node):  # a ** 1 is a: no arithmetic
            self._check_no_log_number(node, [left, right])
        a, b = self._pair(node.left, left, node.right, right, isinstance(op, _MODULAR))
        fn, loc = self.fn, self.ctx.loc(node)
        both_int = _is_int(a.type) and _is_int(b.type)
        symbol = _SYMBOLS.get(type(op))
        integral = all(isinstance(t, IntegerType | IndexType) for t in (a.type, b.type))
        if isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor | ast.LShift | ast.RShift) and not integral:
            raise self.ctx.error(node, f"'{ast.unparse(node)}': {symbol} needs integers or booleans")
        if isinstance(op, ast.FloorDiv | ast.Mod) and ComplexType in (type(a.type), type(b.type)):
            raise self.ctx.error(node, f"'{ast.unparse(node)}': {symbol} is not defined on complex numbers")
        match op:
            case ast.Add():
                return fn.binary("add", a, b, loc)
            case ast.Sub():
                return fn.binary("sub", a, b, loc)
            case ast.Mult():
                return fn.binary("mul", a, b, loc)
            case ast.Div():
                if both_int:
                    a, b = fn.cast(a, f64, loc), fn.cast(b, f64, loc)
                return fn.binary("div", a, b, loc)
            case ast.FloorDiv() | ast.Mod():
                return self._division(node, _SYMBOLS[type(op)], a, b)
            case ast.Pow():
                return self._power(node, a, b)
            case ast.BitAnd():
                return fn.binary("and", a, b, loc)
            case ast.BitOr():
                return fn.binary("or", a, b, loc)
            case ast.BitXor():
                return fn.binary("xor", a, b, loc)
            case ast.LShift():
                return fn.binary("shl", a, b, loc)
            case ast.RShift():
                return fn.binary("shr", a, b, loc)
        raise self.ctx.error(node, f"operator '{ast.unparse(node)}' is not supported")

    def _division(self, node: ast.BinOp | ast.Call, kind: str, a: Value, b: Value, *, numpy: bool = False) -> Value:
        """``a // b``, ``a % b`` (``kind``) or C's ``fmod`` in the type
        ``a / b`` computes in (an ``f32`` meeting an ``f64`` widens, as in
        ``/``), bools taken as the ints Python takes them for: integers' if
        both are integers or bools, ``float_divmod``'s (``fmod``'s)
        otherwise.  An integer divisor of 0 stops the run at the op (Python's
        ``ZeroDivisionError``), where a ``numpy`` function's gives 0, as
        numpy's integer ufuncs do."""
        fn, loc = self.fn, self.ctx.loc(node)
        if isinstance(node, ast.Call):
            self._check_real(f"{ast.unparse(node.func)}()", node.args, (a, b))
        else:
            self._check_real(f"'{ast.unparse(node)}': {kind}", (node.left, node.right), (a, b))
        real = _arithmetic_type(fn, a, b)
        a, b = fn.cast(a, real, loc), fn.cast(b, real, loc)
        if isinstance(real, AnyFloat):
            if kind == "fmod":
                return fn.binary("fmod", a, b, loc)
            quotient, remainder = float_divmod(fn, a, b, loc)
            return quotient if kind == "//" else remainder
        by_zero = fn.compare("eq", b, 0, loc) if numpy else None
        if by_zero is not None:
            b = fn.select(by_zero, 1, b, loc)
        if kind == "fmod":
            result = fn.binary("rem", a, b, loc)
        else:
            quotient = fn.binary("floordiv", a, b, loc)
            # Python's % takes the sign of the divisor: a - b * (a // b).
            result = quotient if kind == "//" else fn.binary("sub", a, fn.binary("mul", b, quotient, loc), loc)
        return result if by_zero is None else fn.select(by_zero, 0, result, loc)

    def _fold(self, node: ast.BinOp, op: ast.operator, a: int, b: int) -> Folded:
        """``a op b`` as Python computes it; what Python raises is an error
        at ``node``, and so is an integer wider than ``MAX_FOLDED_BITS``."""
        operation = _FOLDED.get(type(op))
        if operation is None:
            raise self.ctx.error(node, f"operator '{ast.unparse(node)}' is not supported")
        magnitude = abs(a).bit_length()
        if (isinstance(op, ast.Pow) and magnitude > 1 and b * (magnitude - 1) > MAX_FOLDED_BITS) or (
            isinstance(op, ast.LShift) and a != 0 and b > MAX_FOLDED_BITS
        ):
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is an integer wider than {MAX_FOLDED_BITS} bits")
        try:
            result = operation(a, b)
        except (ArithmeticError, ValueError) as error:
            raise self.ctx.error(
                node, f"'{ast.unparse(node)}' raises {type(error).__name__} in Python: {error}"
            ) from None
        if isinstance(result, int) and result.bit_length() > MAX_FOLDED_BITS:
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is an integer wider than {MAX_FOLDED_BITS} bits")
        return result

    def _check_no_log_number(self, node: ast.BinOp | ast.UnaryOp, operands: Sequence[Value | Folded]) -> None:
        """Refuse, at ``node``, arithmetic on a log number in a reversible
        function: its ``rev.mul``/``rev.div`` are updates, and what the
        builder would say names an op the user did not write (``a ** 3`` is
        repeated ``mul``, ``-a`` a ``neg``) or a mix (``a ** 0.5``: "cannot
        combine ULog and float").  (Ordinary code computes with the real
        values of its ``rv.ULog`` parameters and refuses ``rv.ulog``: no
        value of its expressions is a log number.)  The
        hint gives the real value's expression, and, where ``node`` is the
        whole value of an update of a log number by a constant int power
        (``y *= a ** 3``), the updates that make it, in the user's names."""
        logs = [isinstance(v, Value) and isinstance(v.type, LogType) for v in operands]
        if not any(logs):
            return
        real = copy.deepcopy(node)
        if isinstance(real, ast.UnaryOp):
            real.operand = ast.Call(ast.Name("float"), [real.operand], [])
            hint = f"a log number is positive, so its negation is not one: compute with the real value, {ast.unparse(real)}"
        else:
            real.left, real.right = (
                ast.Call(ast.Name("float"), [side], []) if log else side
                for side, log in zip((real.left, real.right), logs, strict=True)
            )
            hint = f"convert the real value: rv.ulog({ast.unparse(real)})"
            if (factors := self._factor_updates(node, logs)) is not None:
                hint = f"update once per factor ({factors}), or {hint}"
        raise self.ctx.error(
            node,
            f"'{ast.unparse(node)}': a log number (rv.ULog) has no arithmetic in an expression of a reversible "
            "function: log numbers multiply by updates (ly *= lx, ly /= lx)",
            hint,
        )

    def _factor_updates(self, node: ast.BinOp | ast.UnaryOp, logs: Sequence[bool]) -> str | None:
        """The updates that multiply the target of the update being compiled
        by ``node``, a log number to a constant int power other than 0 and
        1 that is the update's whole value (``y *= a ** -2``: ``for _ in
        range(2): y /= a``), or None."""
        update = self.updating
        if (
            update is None
            or update.value is not node
            or not isinstance(node, ast.BinOp)
            or not isinstance(node.op, ast.Pow)
            or logs != [True, False]
        ):
            return None
        exponent = _constant_int(node.right)
        if exponent is None or exponent == 0:
            return None
        dividing = (exponent < 0) != isinstance(update.op, ast.Div)
        step = f"{ast.unparse(update.target)} {'/' if dividing else '*'}= {ast.unparse(node.left)}"
        return step if abs(exponent) == 1 else f"for _ in range({abs(exponent)}): {step}"

    def _power(self, node: ast.BinOp, a: Value, b: Value) -> Value:
        """``a ** b``.  A non-integer ``a`` to a constant integer power
        from 1 to 4 is repeated multiplication, as numba and JAX's
        ``lax.integer_pow`` make it: ``mul`` is defined on every number
        type that multiplies (``rv.Fixed``, ``rv.Tropical``, complex),
        where ``pow`` is not; a loop of it is twenty times faster than of
        the C library's ``pow``; and it rounds alike on both engines and
        the GPU, whose ``pow`` is libdevice's, not the C library's.  It
        may be an ulp per multiplication from Python's ``pow`` (``0.3 **
        3`` is ``0.027``, Python's ``0.026999999999999996``); a float
        exponent (``a ** 3.0``) is ``pow``, rounded as ``pow`` rounds it
        (decision 164)."""
        fn, loc = self.fn, self.ctx.loc(node)
        exponent = node.right
        if (
            isinstance(exponent, ast.Constant)
            and isinstance(exponent.value, int)
            and 1 <= exponent.value <= 4
            and not isinstance(a.type, IntegerType | IndexType)
        ):
            result = a
            for _ in range(exponent.value - 1):
                result = fn.binary("mul", result, a, loc)
            return result
        # both in one type, a bool as the int Python takes it for: an int's
        # power of a bool is not a bool's (3 ** True is 3)
        real = _arithmetic_type(fn, a, b)
        if real is not None:
            a, b = fn.cast(a, real, loc), fn.cast(b, real, loc)
        return fn.binary("pow", a, b, loc)

    def _compare(
        self,
        node: ast.Compare,
        left: ast.expr,
        ops: Sequence[ast.cmpop],
        comparators: Sequence[ast.expr],
    ) -> Value:
        names = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
        fn, loc = self.fn, self.ctx.loc(node)
        result: Value | None = None
        lhs, lhs_node = self._evaluate(left), left
        for op, right in zip(ops, comparators, strict=True):
            kind = names.get(type(op))
            if kind is None:
                raise self.ctx.error(node, f"'{ast.unparse(node)}': only <, <=, >, >=, ==, != compare values")
            rhs = self._evaluate(right)
            test = fn.compare(kind, *self._pair(lhs_node, lhs, right, rhs), loc)
            result = test if result is None else fn.logical("and", result, test, loc)
            lhs, lhs_node = rhs, right
        assert result is not None
        return result

    def indices(self, node: ast.Subscript) -> list[Value]:
        """The indices of an element of an array, one per dimension."""
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if any(isinstance(p, ast.Slice) for p in parts):
            raise self.ctx.error(node, "slices are not supported", "index single elements: x[i]")
        array, fn = node.value, self.ctx.fn
        if isinstance(array, ast.Name) and fn.has(array.id):
            type = fn.type_of(array.id)
            rank = len(type.get_shape()) if isinstance(type, MemRefType) else len(parts)
            if rank != len(parts):
                raise self.ctx.error(
                    node,
                    f"'{array.id}' is {describe_type(type)}, indexed with {len(parts)} "
                    f"{'index' if len(parts) == 1 else 'indices'}",
                    f"give one index per dimension: {array.id}[{', '.join('ijklmn'[:rank])}]" if rank else None,
                )
        values = [self._compile(p) for p in parts]
        for part, value in zip(parts, values):
            if not _is_int(value.type):
                raise self.ctx.error(
                    part, f"array index '{ast.unparse(part)}' is not an integer", "convert it: int(...)"
                )
        return values

    def _subscript(self, node: ast.Subscript) -> Value:
        ctx, fn = self.ctx, self.ctx.fn
        target = node.value
        if isinstance(target, ast.Attribute) and target.attr == "shape":
            return self._dimension(node, target.value)
        if not isinstance(target, ast.Name) or not fn.has(target.id):
            raise ctx.error(node, f"'{ast.unparse(target)}' is not an array argument")
        return fn.load(target.id, self.indices(node), ctx.loc(node))

    def _dimension(self, node: ast.Subscript, array: ast.expr) -> Value:
        ctx, fn = self.ctx, self.ctx.fn
        if not isinstance(array, ast.Name) or not fn.has(array.id):
            raise ctx.error(node, f"'{ast.unparse(array)}' is not an array argument")
        if not isinstance(node.slice, ast.Constant) or not isinstance(node.slice.value, int):
            raise ctx.error(node, "x.shape[d] needs a constant d")
        ref = fn.get(array.id).ssa
        if not isinstance(ref.type, MemRefType):
            raise ctx.error(node, f"'{array.id}' is not an array")
        dim = node.slice.value
        if not 0 <= dim < len(ref.type.get_shape()):
            raise ctx.error(node, f"'{array.id}' has no dimension {dim}")
        index = fn.const(dim, IndexType(), ctx.loc(node))
        op = fn.emit(memref.DimOp(ref, index.ssa), ctx.loc(node))
        return Value(fn, op.results[0])

    def _attribute(self, node: ast.Attribute, value: ast.expr, attr: str) -> Value | Folded:
        ctx, fn = self.ctx, self.ctx.fn
        if (number := self._number(node, ctx.resolve(node))) is not None:
            return number
        if attr in ("real", "imag"):
            if isinstance(value, ast.Name) and (kept := fn.kept_part(value.id, attr)) is not None:
                return kept
            inner = self._compile(value)
            if not isinstance(inner.type, ComplexType):
                return inner if attr == "real" else fn.const(0.0, inner.type, ctx.loc(node))
            return (fn.real if attr == "real" else fn.imag)(inner, ctx.loc(node))
        raise ctx.error(node, f"'{ast.unparse(node)}' is not supported in an expression")

    def _call(self, node: ast.Call) -> Value:
        ctx, fn = self.ctx, self.ctx.fn
        loc = ctx.loc(node)
        if node.keywords:
            raise ctx.error(node, "keyword arguments are not supported in expressions")
        callee = ctx.resolve(node.func)
        args = node.args
        if callee in UNARY_FUNCTIONS and len(args) == 1:
            kind = UNARY_FUNCTIONS[callee]
            return self._unary_function(node, kind, self._compile(args[0], None if kind in _OF_INTS else f64))
        if callee in BINARY_FUNCTIONS and len(args) == 2:
            a, b = self._pair(args[0], self._evaluate(args[0]), args[1], self._evaluate(args[1]))
            return fn.binary(BINARY_FUNCTIONS[callee], a, b, loc)
        if callee in REAL_FUNCTIONS and len(args) == 2:
            # libm's hypot on every engine: sqrt(a² + b²) would overflow
            # above 1e154 and lose hypot(inf, nan) = inf.
            a, b = self._pair(args[0], self._evaluate(args[0]), args[1], self._evaluate(args[1]))
            real = self._real_type(node, a, b)
            return fn.binary(REAL_FUNCTIONS[callee], fn.cast(a, real, loc), fn.cast(b, real, loc), loc)
        if callee in DIVISIONS and len(args) == 2:
            a, b = self._pair(args[0], self._evaluate(args[0]), args[1], self._evaluate(args[1]))
            return self._division(node, DIVISIONS[callee], a, b, numpy=True)
        if callee in PHASE and len(args) == 1:
            return fn.angle(self._compile(args[0]), loc)
        if callee is markers.ulog and len(args) == 1:
            return fn.to_log(self._compile(args[0]), loc)
        if callee is markers.tropical and len(args) == 1:
            return fn.cast(self._compile(args[0]), TropicalType(f64), loc)
        if isinstance(callee, Fixed) and len(args) == 1:
            return fn.cast(self._compile(args[0]), callee.type, loc)
        if callee is builtins.float and len(args) == 1:
            value = self._compile(args[0], f64)
            return fn.from_log(value, loc) if isinstance(value.type, LogType) else fn.cast(value, f64, loc)
        if callee in _FLOAT_TYPES and len(args) == 1:
            return fn.cast(self._compile(args[0], _FLOAT_TYPES[callee]), _FLOAT_TYPES[callee], loc)
        if callee is builtins.int and len(args) == 1:
            return fn.cast(self._compile(args[0]), i64, loc)
        if callee is builtins.complex and len(args) in (1, 2):
            re = self._compile(args[0], f64)
            if len(args) == 1:
                return fn.cast(re, ComplexType(f64), loc)
            return fn.complex(fn.cast(re, f64, loc), fn.cast(self._compile(args[1], f64), f64, loc), loc)
        if callee is builtins.len and len(args) == 1 and isinstance(args[0], ast.Name):
            shape = ast.Subscript(value=ast.Attribute(value=args[0], attr="shape"), slice=ast.Constant(0))
            ast.copy_location(shape, node)
            return fn.cast(self._dimension(shape, args[0]), i64, loc)
        if getattr(callee, "__revmlir_primitive__", False):
            return self._primitive(node, callee)
        if inspect.isfunction(callee) or getattr(callee, "__revmlir_reversible__", False):
            return self._inline(node, callee)
        if (
            callee is UNRESOLVED
            and isinstance(node.func, ast.Name)
            and not fn.has(node.func.id)
            and ctx.lookup_binding(node.func.id) is None
        ):
            raise ctx.error(
                node,
                f"unknown function '{node.func.id}'",
                "use math/cmath/numpy functions or a pure helper function",
            )
        if (count := _ARITIES.get(callee)) is not None:
            raise ctx.error(
                node,
                f"{ast.unparse(node.func)}() takes {count} argument{'s' if count > 1 else ''} here, got {len(args)}",
            )
        if _library_function(callee):
            name = ast.unparse(node.func)
            if (spelling := SPELLED_HERE.get(callee)) is not None:
                x = ast.unparse(args[0]) if len(args) == 1 else "x"
                raise ctx.error(node, f"revmlir does not compile '{name}'", "write " + spelling.format(x=x))
            raise ctx.error(
                node,
                f"'{name}' has no rules in revmlir: its inverse and derivatives are unknown",
                'declare it with @rv.primitive and give it its rules (docs/python.md, "User primitives")',
            )
        raise ctx.error(
            node,
            f"cannot call '{ast.unparse(node.func)}' in an expression",
            "use math/cmath/numpy functions or a pure helper function",
        )

    def _real_type(self, call: ast.Call, a: Value, b: Value) -> Attribute:
        """The float type a function of two real numbers computes ``a`` and
        ``b`` in: the type ``a / b`` computes in (a literal takes the
        other argument's float type, ``f32`` meeting ``f64`` widens), ints
        and bools made ``f64``."""
        self._check_real(f"{ast.unparse(call.func)}()", call.args, (a, b))
        joined = self.fn.joined_type(a.ssa, b.ssa)
        return joined if isinstance(joined, AnyFloat) else f64

    def _check_real(self, what: str, nodes: Sequence[ast.expr], values: Sequence[Value]) -> None:
        """An error at the first operand of ``what`` that is no real number
        (an int, a float or a bool), naming its type: a function of real
        numbers says which argument it cannot take, and why."""
        for node, value in zip(nodes, values, strict=True):
            if not (isinstance(value.type, AnyFloat) or _is_int(value.type) or value.type == i1):
                raise self.ctx.error(
                    node,
                    f"{what} takes real numbers, not {describe_type(value.type)}",
                    "pass the parts: .real, .imag, or abs(z)" if isinstance(value.type, ComplexType) else None,
                )

    def _primitive(self, node: ast.Call, primitive: Any) -> Value:
        """``rev.apply`` of a pure user primitive."""
        if primitive.updates:
            raise self.ctx.error(
                node,
                f"primitive {primitive.__name__} updates arrays: it is a statement, not a value",
                f"call it on its own line: {ast.unparse(node)}",
            )
        args, callee = self._primitive_arguments(node, primitive)
        op = self.ctx.fn.emit(ApplyOp(callee, args, primitive.signature.outputs.data), self.ctx.loc(node))
        return Value(self.ctx.fn, op.results[0])

    def primitive_statement(self, node: ast.Call, primitive: Any) -> None:
        """``rev.invoke`` of a user primitive that updates arrays in place;
        an updated array may be no other argument (it would read what it
        writes)."""
        ctx = self.ctx
        if not primitive.updates:
            raise ctx.error(
                node,
                f"primitive {primitive.__name__} returns a value and changes nothing",
                "use its value in an expression: y += f(...)",
            )
        args, callee = self._primitive_arguments(node, primitive)
        for position in primitive.updates:
            if any(other is args[position] for i, other in enumerate(args) if i != position):
                raise ctx.error(
                    node.args[position],
                    f"{primitive.__name__}() updates argument {position + 1}, which is also another of its arguments",
                    "an updated array may share memory with no other argument: pass a copy",
                )
        invoke = InvokeOp(callee, args, primitive.signature.outputs.data)
        if "inverse" not in primitive.rules:
            invoke.attributes[FORGETFUL_ATTR] = UnitAttr()  # it has no inverse
        ctx.fn.emit(invoke, ctx.loc(node))

    def _primitive_arguments(self, node: ast.Call, primitive: Any) -> tuple[list[SSAValue], str]:
        """The arguments of a call of a user primitive, converted to its
        parameter types where that is exact (an ``int`` for a ``float``;
        arrays must have the parameter's rank and dtype), and its name in
        the module."""
        ctx, fn = self.ctx, self.ctx.fn
        name = primitive.__name__
        inputs = primitive.signature.inputs.data
        if node.keywords:
            raise ctx.error(node.keywords[0], f"{name}() takes no keyword arguments", "pass its arguments in order")
        if len(node.args) != len(inputs):
            raise ctx.error(node, f"{name}() takes {len(inputs)} argument(s), got {len(node.args)}")
        args: list[SSAValue] = []
        for i, (arg, type) in enumerate(zip(node.args, inputs)):
            value = self._compile(arg, type)
            if value.type != type and not (_is_int(value.type) and is_scalar_type(type) and not _is_int(type)):
                error = ctx.error(
                    arg,
                    f"argument {i + 1} of {name}() is {describe_type(value.type)}; it must be {describe_type(type)}",
                )
                args.append(self._mistyped(error, value, type, ctx.loc(arg)))
                continue
            args.append(value.ssa if value.type == type else fn.cast(value, type, ctx.loc(arg)).ssa)
        return args, ctx.primitive(primitive)

    def _mistyped(self, error: ReversibleSyntaxError, value: Value, type: Attribute, loc: FileLineColLoc) -> SSAValue:
        """The value to pass as a primitive's argument of ``type`` for
        ``value``, of another type, refused with ``error``: none here, a
        frontend that may postpone the error gives one."""
        raise error

    def _unary_function(self, node: ast.Call, kind: str, value: Value) -> Value:
        fn, loc = self.fn, self.ctx.loc(node)
        if kind == "fabs":  # math.fabs: the absolute value of a real number, as a float
            if isinstance(value.type, ComplexType):
                raise self.ctx.error(node, "math.fabs takes a real number", "abs(z) is a complex number's modulus")
            return fn.unary("abs", fn.cast(value, f64, loc) if _is_int(value.type) else value, loc)
        if kind in ("floor", "ceil") and _is_int(value.type):
            return value
        if kind == "conj" and not isinstance(value.type, ComplexType):
            return value  # numpy: the conjugate of a real number is itself
        return fn.unary(kind, value, loc)

    def _inline(self, node: ast.Call, helper: Any) -> Value:
        """Inline a pure helper: ``[docstring] (name = expr)* return expr``."""
        ctx = self.ctx
        if getattr(helper, "__revmlir_reversible__", False):
            raise ctx.error(
                node,
                f"'{helper.__name__}' is reversible; call it as a statement",
                f"write {helper.__name__}(...) on its own line to update its arguments",
            )
        if ctx.inline_depth >= MAX_INLINE_DEPTH:
            raise ctx.error(node, f"helper '{helper.__name__}' is recursive or nested too deeply")
        try:
            lines, first = inspect.getsourcelines(helper)
        except (OSError, TypeError):
            raise ctx.error(node, f"the source of '{helper.__name__}' is not available") from None
        try:
            definition: ast.stmt | None = ast.parse(textwrap.dedent("".join(lines))).body[0]
        except SyntaxError:  # a lambda inside a larger expression
            definition = None
        if not isinstance(definition, ast.FunctionDef):
            raise ctx.error(
                node,
                f"helper '{helper.__name__}' is not defined with def",
                "write helpers as `def name(args): … return expr`",
            )
        params = [a.arg for a in definition.args.args]
        if len(params) != len(node.args):
            raise ctx.error(node, f"'{helper.__name__}' takes {len(params)} argument(s), got {len(node.args)}")
        scope = {p: self._compile(a) for p, a in zip(params, node.args)}
        # The helper's own statements are located in the helper's source.
        saved = (ctx.namespace, ctx.filename, ctx.line_offset, ctx.column_offset)
        ctx.namespace = namespace_of(helper)
        ctx.filename = inspect.getsourcefile(helper) or ctx.filename
        ctx.line_offset, ctx.column_offset = first - 1, len(lines[0]) - len(lines[0].lstrip())
        ctx.bindings.append(scope)
        ctx.inline_depth += 1
        try:
            body = definition.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            for statement in body:
                if (
                    isinstance(statement, ast.Assign)
                    and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)
                ):
                    scope[statement.targets[0].id] = self._compile(statement.value)
                elif isinstance(statement, ast.Return) and statement.value is not None:
                    return self._compile(statement.value)
                else:
                    break
        finally:
            ctx.bindings.pop()
            ctx.inline_depth -= 1
            ctx.namespace, ctx.filename, ctx.line_offset, ctx.column_offset = saved
        raise ctx.error(
            node,
            f"helper '{helper.__name__}' is not a pure expression function",
            "helpers may only assign local names and end with `return expr`",
        )


def float_divmod(fn: ExpressionBuilder, a: Value, b: Value, loc: Loc) -> tuple[Value, Value]:
    """Python's ``a // b`` and ``a % b`` of floats (CPython's ``float_divmod``,
    numpy's ``npy_divmod``): the remainder is ``fmod``'s, which is exact,
    moved to the divisor's sign, and the quotient is ``(a - fmod) / b``
    rounded to the integer it is within an ulp of.  ``floor(a / b)``
    rounds ``a / b`` first (``5.0 // 0.1`` would be 50.0, not 49.0) and
    ``a - b·floor(a / b)`` loses every digit beyond 2⁵³ (``1e17 % 3.0``).
    Where ``b`` is 0 Python raises and numpy gives ``a / b`` and NaN,
    as IEEE's ``/`` does, which this follows (float ``/`` raises nothing)."""
    zero = fn.const(0.0, a.type, loc)
    mod = fn.binary("fmod", a, b, loc)
    div = fn.binary("div", fn.binary("sub", a, mod, loc), b, loc)
    # a nonzero remainder (NaN is one, as in C) of the other sign than b
    moved = fn.logical(
        "and",
        fn.compare("ne", mod, zero, loc),
        fn.compare("ne", fn.compare("lt", b, zero, loc), fn.compare("lt", mod, zero, loc), loc),
        loc,
    )
    mod = fn.select(moved, fn.binary("add", mod, b, loc), mod, loc)
    div = fn.select(moved, fn.binary("sub", div, 1.0, loc), div, loc)
    # a zero remainder has the divisor's sign: a select, not copysign,
    # which upstream MLIR's libm lowering leaves illegal
    signed_zero = fn.select(fn.compare("lt", b, zero, loc), fn.const(-0.0, a.type, loc), zero, loc)
    mod = fn.select(fn.compare("eq", mod, zero, loc), signed_zero, mod, loc)
    floor = fn.unary("floor", div, loc)
    floor = fn.select(
        fn.compare("gt", fn.binary("sub", div, floor, loc), 0.5, loc), fn.binary("add", floor, 1.0, loc), floor, loc
    )
    quotient = fn.binary("div", a, b, loc)
    # a zero quotient has the sign of a / b, finite here (|a| < |b|)
    floor = fn.select(fn.compare("ne", div, zero, loc), floor, fn.binary("mul", zero, quotient, loc), loc)
    return fn.select(fn.compare("eq", b, zero, loc), quotient, floor, loc), mod


def _arithmetic_type(fn: ExpressionBuilder, a: Value, b: Value) -> Attribute | None:
    """The type Python's arithmetic of ``a`` and ``b`` computes in
    (``joined_type``), where two bools are ints (``i64``), not a bool."""
    joined = fn.joined_type(a.ssa, b.ssa)
    return i64 if joined == i1 else joined


def _is_int(type: Any) -> bool:
    return isinstance(type, IntegerType | IndexType) and type != i1


def _constant_int(node: ast.expr) -> int | None:
    """The int a literal (``3``, ``-2``) is, or None."""
    match node:
        case ast.Constant(value=int() as value) if not isinstance(value, bool):
            return value
        case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int() as value)) if not isinstance(value, bool):
            return -value
    return None


def _is_first_power(node: ast.BinOp) -> bool:
    """Whether ``node`` is ``x ** 1``, which is ``x`` (``_power``)."""
    return isinstance(node.op, ast.Pow) and _constant_int(node.right) == 1


def _is_folded_int(value: object) -> TypeGuard[int]:
    """An ``int`` that folding computes with (a ``bool`` is an ``i1``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_int_value(value: Value | Folded) -> bool:
    return isinstance(value, Value) and _is_int(value.type)


def _is_float_or_complex(type: Attribute | None) -> bool:
    return isinstance(type, AnyFloat | ComplexType)


def _type_of(value: Value | Folded) -> Attribute | None:
    """The type a folded int beside ``value`` takes a hint from: a value's
    own, ``f64`` for a folded float."""
    return value.type if isinstance(value, Value) else f64 if isinstance(value, float) else None


def _python_number(value: object) -> bool | int | float | complex | None:
    """``value`` as Python's number (numpy's ``.item()``), or None."""
    if isinstance(value, np.number):
        number: bool | int | float | complex = value.item()
        return number
    return value if isinstance(value, bool | int | float | complex) else None


def _width(type: Attribute) -> int:
    """The bits of an integer or index type."""
    return type.width.data if isinstance(type, IntegerType) else 64


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` of names and attributes only, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def _met(type: Attribute | None) -> Attribute | None:
    """The type a folded int beside a value of ``type`` meets: integers
    compute as the wider (``joined_type``), so beside a narrower integer
    it is an ``int64``."""
    return i64 if isinstance(type, IntegerType) and type != i1 and type.width.data < 64 else type


def _fits_int64(value: int) -> bool:
    return -(2**63) <= value < 2**63


def _spelled(value: Folded) -> str:
    """An integer as a message shows it: its digits, or how many it has."""
    digits = str(value)
    return digits if len(digits) <= 40 else f"with {len(digits.lstrip('-'))} digits"


def _library_function(callee: object) -> bool:
    """Whether ``callee`` is a function of ``math``, ``cmath`` or NumPy that
    the compiler has no rule for (``math.lgamma``, ``np.i0``): a user can
    still call it as an ``@rv.primitive`` that states its rules."""
    module = getattr(callee, "__module__", None) or ""
    return module in ("math", "cmath") or module.partition(".")[0] == "numpy" or isinstance(callee, np.ufunc)
