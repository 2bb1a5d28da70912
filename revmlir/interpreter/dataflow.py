"""The data-flow graph of an ordinary function (``func``, ``scf``,
``arith``, ``math``, ``memref``, ``cf.assert``) with its control flow
resolved, for lumps (``revmlir.ad.lumps``).

The function is evaluated op by op, loops unrolled and branches taken, and
every float result that depends on a float argument becomes a ``Node`` with
its local partial derivatives: the seed's view of a computation "at a point
x", a graph whose vertices are basis functions.  At a point (``arguments``
given, from Python) every value is known.  Statically (``rev-opt``) only
constants are: a loop whose trip count, a branch whose condition or a load
whose index is not a constant is a located ``LumpError``, and partials that
need unknown values are ``None``.

The active inputs are the float scalar arguments and the entries of the
float array arguments (argument by argument, arrays in C order); the active
outputs are the returned floats, then the entries of the float array
arguments as the function leaves them.  Scalars are passed by value, so they
are inputs only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, cf, func, memref, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import AnyFloat, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from revmlir.ad.lumps import Graph, LumpError, Node
from revmlir.dialects.float_functions import HypotOp, RemFOp
from revmlir.interpreter.pure import PURE_SEMANTICS
from revmlir.runtime.values import normalize

NODE_LIMIT = 200_000
"""The most active values a graph may have: unrolling is for small kernels."""

ITERATION_LIMIT = 200_000
"""The most loop iterations an evaluation may run (a loop that does not end)."""

Partial = Callable[[Sequence[Any], Any], Any]
"""``∂result/∂operand`` from the operand values and the result value; it
raises ``TypeError`` where a value it needs is unknown (``None``).  Floats
come as numpy's ``float64`` (``_known``), so that its arithmetic is IEEE's."""


PARTIALS: dict[type[Operation], tuple[Partial, ...]] = {
    arith.AddfOp: (lambda v, r: 1.0, lambda v, r: 1.0),
    arith.SubfOp: (lambda v, r: 1.0, lambda v, r: -1.0),
    arith.MulfOp: (lambda v, r: v[1], lambda v, r: v[0]),
    arith.DivfOp: (lambda v, r: 1.0 / v[1], lambda v, r: -r / v[1]),
    arith.NegfOp: (lambda v, r: -1.0,),
    arith.ExtFOp: (lambda v, r: 1.0,),
    arith.TruncFOp: (lambda v, r: 1.0,),
    # the operand the result is, the first on ties (the engines' rule)
    **dict.fromkeys(
        (arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp),
        (lambda v, r: float(v[0] == r), lambda v, r: float(v[0] != r)),
    ),
    mathd.FmaOp: (lambda v, r: v[1], lambda v, r: v[0], lambda v, r: 1.0),
    mathd.AbsFOp: (lambda v, r: math.copysign(1.0, v[0]),),
    mathd.ExpOp: (lambda v, r: r,),
    mathd.Exp2Op: (lambda v, r: r * math.log(2.0),),
    mathd.ExpM1Op: (lambda v, r: r + 1.0,),
    mathd.LogOp: (lambda v, r: 1.0 / v[0],),
    mathd.Log2Op: (lambda v, r: 1.0 / (v[0] * math.log(2.0)),),
    mathd.Log10Op: (lambda v, r: 1.0 / (v[0] * math.log(10.0)),),
    mathd.Log1pOp: (lambda v, r: 1.0 / (1.0 + v[0]),),
    mathd.SqrtOp: (lambda v, r: 0.5 / r,),
    mathd.RsqrtOp: (lambda v, r: -0.5 * r**3,),
    mathd.SinOp: (lambda v, r: np.cos(v[0]),),
    mathd.CosOp: (lambda v, r: -np.sin(v[0]),),
    mathd.TanOp: (lambda v, r: 1.0 + r * r,),
    mathd.TanhOp: (lambda v, r: 1.0 - r * r,),
    mathd.SinhOp: (lambda v, r: np.cosh(v[0]),),
    mathd.CoshOp: (lambda v, r: np.sinh(v[0]),),
    mathd.AtanOp: (lambda v, r: 1.0 / (1.0 + v[0] * v[0]),),
    mathd.Atan2Op: (
        lambda v, r: v[1] / (v[0] * v[0] + v[1] * v[1]),
        lambda v, r: -v[0] / (v[0] * v[0] + v[1] * v[1]),
    ),
    # JAX's rules at a zero base, as the engines' (decision 147); log of a negative base is NaN
    mathd.PowFOp: (
        lambda v, r: 0.0 if v[0] == 0.0 and v[1] == 0.0 else v[1] * v[0] ** (v[1] - 1.0),
        lambda v, r: 0.0 if v[0] == 0.0 else r * np.log(v[0]),
    ),
    mathd.CopySignOp: (lambda v, r: math.copysign(1.0, v[0]) * math.copysign(1.0, v[1]), lambda v, r: 0.0),
    mathd.FloorOp: (lambda v, r: 0.0,),
    mathd.CeilOp: (lambda v, r: 0.0,),
    # 0 at the origin, as the engines' rule (decision 158)
    HypotOp: (lambda v, r: v[0] / r if r else 0.0, lambda v, r: v[1] / r if r else 0.0),
    RemFOp: (lambda v, r: 1.0, lambda v, r: float(np.rint((r - v[0]) / v[1]))),
    mathd.FPowIOp: (lambda v, r: v[1] * v[0] ** (v[1] - 1),),
}
"""Local partial derivatives of the float ops a graph may hold, in IEEE
arithmetic as the engines' rules (numpy's functions, where ``math``'s
refuse ``cos(inf)`` and overflow)."""

LOGARITHMS: dict[type[Operation], tuple[str, float]] = {
    mathd.LogOp: ("log", 0.0),
    mathd.Log2Op: ("log2", 0.0),
    mathd.Log10Op: ("log10", 0.0),
    mathd.Log1pOp: ("log1p", -1.0),
}
"""The logarithms, each with the value at and below which it is not a real
function: ``log`` of a non-positive value, ``log1p`` of one at or below
-1."""


def undefined(op: Operation, args: Sequence[Any], values: Sequence[Any]) -> str | None:
    """Why ``op``'s derivative is not defined at its operands' ``values``,
    or None: a logarithm of a value where it is no real function (its
    result is NaN or -inf, and ``J`` has no value there, whatever its
    partial), or a power whose active exponent meets a negative base (its
    partial there is ``r·log x``, the log of a non-positive value)."""
    if (log := LOGARITHMS.get(type(op))) is not None and values[0] is not None:
        name, bound = log
        if values[0] <= bound:  # NaN is no value it is undefined at: its NaN step is reported as non-finite
            where = "a non-positive value" if bound == 0.0 else f"a value at or below {bound}"
            return f"takes the {name} of {values[0]!r}, {where}"
    if isinstance(op, mathd.PowFOp) and isinstance(args[1], _Active) and values[0] is not None and values[0] < 0.0:
        return f"raises the negative base {values[0]!r} to an active exponent: its partial is the log of the base"
    return None


class _Undefined(float):
    """A known float a logarithm of a constant where it is no real function
    made (``math.log(-1.0)``), or a known op computed from one that is not
    finite either: a NaN or infinity with the logarithm and why
    (``undefined``), so that an active value's op that reads it is refused
    at the logarithm, with its value, as a logarithm of an active value is
    (``Node.undefined_at``), not as the non-finite step of the op that
    reads it.  A finite value computed from one (``max(math.log(0.0),
    -20.0)``, ``math.exp(math.log(0.0))``) is a plain constant: the program
    clamped or mapped the infinity away, and its derivatives are defined."""

    op: Operation
    reason: str

    def __new__(cls, value: float, op: Operation, reason: str) -> _Undefined:
        made = super().__new__(cls, value)
        made.op, made.reason = op, reason
        return made


def _finite(value: float | None, partials: list[float | None]) -> bool:
    """Whether an active op's value and partial derivatives are known and
    finite, so that the step it makes no longer carries an undefined log
    it reads (``max(a, log(0.0))``) where ``a ** log(0.0)``, finite but with
    a NaN partial, does."""
    return value is not None and math.isfinite(value) and all(p is None or math.isfinite(p) for p in partials)


def _carried(op: Operation, args: Sequence[Any], known: Sequence[Any], value: Any) -> Any:
    """``value``, the known result of ``op`` of ``known``, as an
    ``_Undefined`` where it is not finite and a logarithm of a constant
    makes it undefined or an operand carries one."""
    if not isinstance(value, float) or math.isfinite(value):
        return value
    if (reason := undefined(op, args, known)) is not None:
        return _Undefined(value, op, reason)
    carried = next((k for k in known if isinstance(k, _Undefined)), None)
    return value if carried is None else _Undefined(value, carried.op, carried.reason)


class _Unknown:
    """A value not known statically."""

    def __repr__(self) -> str:
        return "unknown"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class _Active:
    """A float value in the graph: node ``index``."""

    index: int


@dataclass
class _Array:
    """A memref: its shape and its entries in C order."""

    shape: tuple[int, ...]
    cells: list[Any]

    def offset(self, op: Operation, indices: Sequence[Any]) -> int:
        if any(i is UNKNOWN for i in indices):
            raise LumpError(op, "the index is not known statically, so the data flow is not")
        flat = 0
        for index, size in zip(indices, self.shape):
            if not 0 <= index < size:
                raise LumpError(op, f"index {list(indices)} is out of bounds for shape {list(self.shape)}")
            flat = flat * size + index
        return flat


class _Evaluator:
    """Runs ordinary IR on known, unknown and active values, adding a node
    for every float op that reads an active value."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.nodes: list[Node] = []
        self.iterations = 0

    def add(self, node: Node) -> _Active:
        if len(self.nodes) >= NODE_LIMIT:
            raise LumpError(node.op, f"more than {NODE_LIMIT} active values: too large to lump")
        self.nodes.append(node)
        return _Active(len(self.nodes) - 1)

    def value_of(self, value: Any) -> Any:
        """A known value, ``None`` if unknown (for partials)."""
        if isinstance(value, _Active):
            return self.nodes[value.index].value
        return None if value is UNKNOWN else value

    def call(self, function: func.FuncOp, args: Sequence[Any]) -> list[Any]:
        return self.run_block(function.body.block, args, {})

    def run_block(self, block: Block, args: Sequence[Any], env: dict[SSAValue, Any]) -> list[Any]:
        """Run ``block`` in ``env`` (its function's values: SSA names are
        unique, and nested regions read the enclosing ones) and return its
        terminator's operand values."""
        env.update(zip(block.args, args))
        for op in block.ops:
            if isinstance(op, func.ReturnOp | scf.YieldOp | scf.ConditionOp):
                return [env[v] for v in op.operands]
            for result, value in zip(op.results, self.run(op, [env[v] for v in op.operands], env)):
                env[result] = value
        raise LumpError(block.parent_op(), "a block without a terminator")

    def run(self, op: Operation, args: list[Any], env: dict[SSAValue, Any]) -> Sequence[Any]:
        if isinstance(op, scf.ForOp):
            return self.run_for(op, args, env)
        if isinstance(op, scf.IfOp):
            taken = self.condition(op, args[0])
            region = op.true_region if taken else op.false_region
            return self.run_block(region.block, [], env) if region.blocks else []
        if isinstance(op, scf.WhileOp):
            return self.run_while(op, args, env)
        if isinstance(op, memref.LoadOp):
            array = args[0]
            return [array.cells[array.offset(op, args[1:])]]
        if isinstance(op, memref.StoreOp):
            array = args[1]
            array.cells[array.offset(op, args[2:])] = args[0]
            return []
        if isinstance(op, memref.DimOp):
            if args[1] is UNKNOWN:
                return [UNKNOWN]
            if not 0 <= args[1] < len(args[0].shape):
                raise LumpError(op, f"dimension {args[1]} is out of range for rank {len(args[0].shape)}")
            return [args[0].shape[args[1]]]
        if isinstance(op, func.CallOp):
            callee = SymbolTable.lookup_symbol(self.module, op.callee)
            if not isinstance(callee, func.FuncOp) or not callee.body.blocks:
                raise LumpError(op, f"calls @{op.callee.string_value()}, which is not a func.func with a body")
            return self.call(callee, args)
        if isinstance(op, arith.SelectOp):
            taken = self.condition(op, args[0])
            return [args[1] if taken else args[2]]
        if isinstance(op, cf.AssertOp):
            return self.check(op, args[0])
        semantics = PURE_SEMANTICS.get(type(op))
        if semantics is None:
            raise LumpError(op, "has no data-flow semantics for lumps")
        active = [a for a in args if isinstance(a, _Active)]
        (result,) = op.results
        if active and isinstance(result.type, AnyFloat):
            return [self.node(op, args)]
        known = [self.value_of(a) for a in args]
        if any(k is None for k in known):
            return [UNKNOWN]
        try:
            value = normalize(result.type, semantics(op, *known))
        except (InterpretationError, ArithmeticError, ValueError) as error:
            raise LumpError(op, str(error)) from None
        return [_carried(op, args, known, value)]

    def node(self, op: Operation, args: list[Any]) -> _Active:
        partials = PARTIALS.get(type(op))
        if partials is None:
            raise LumpError(op, "has no partial-derivative rule for lumps")
        values = [self.value_of(a) for a in args]
        result = None
        if all(v is not None for v in values):
            result = normalize(op.results[0].type, PURE_SEMANTICS[type(op)](op, *values))
        operands, found = [], []
        for arg, partial in zip(args, partials):
            if isinstance(arg, _Active):
                operands.append(arg.index)
                found.append(_known(partial, values, result))
        reason, at = undefined(op, args, values), op
        carried = next((v for v in values if isinstance(v, _Undefined)), None)
        if reason is None and carried is not None and not _finite(result, found):
            reason, at = carried.reason, carried.op
        return self.add(Node(op, tuple(operands), tuple(found), result, undefined=reason, undefined_at=at))

    def condition(self, op: Operation, value: Any) -> bool:
        if value is UNKNOWN:
            raise LumpError(op, "branches on a value not known statically, so the data flow is not")
        return bool(value)

    def check(self, op: cf.AssertOp, value: Any) -> list[Any]:
        """A check (ordinary code's ``range()`` step) stops the evaluation
        with its message where it is known to fail, as it stops a run; one
        known to hold, or not known (statically), leaves the data flow as it
        is, since it computes nothing."""
        if value is not UNKNOWN and not value:
            raise LumpError(op, op.msg.data)
        return []

    def run_for(self, op: scf.ForOp, args: list[Any], env: dict[SSAValue, Any]) -> list[Any]:
        lower, upper, step, *carried = args
        if UNKNOWN in (lower, upper, step):
            raise LumpError(op, "the trip count is not a constant, so the loop cannot be unrolled")
        if step <= 0:
            raise LumpError(op, f"the step {step} is not positive")
        for i in range(lower, upper, step):
            self.iterate(op)
            carried = self.run_block(op.body.block, [i, *carried], env)
        return carried

    def iterate(self, loop: Operation) -> None:
        self.iterations += 1
        if self.iterations > ITERATION_LIMIT:
            raise LumpError(loop, f"the evaluation runs more than {ITERATION_LIMIT} loop iterations: too large to lump")

    def run_while(self, op: scf.WhileOp, args: list[Any], env: dict[SSAValue, Any]) -> list[Any]:
        while True:
            self.iterate(op)
            cond, *values = self.run_block(op.before_region.block, args, env)
            if not self.condition(op, cond):
                return values
            args = self.run_block(op.after_region.block, values, env)


def _known(partial: Partial, values: Sequence[Any], result: Any) -> float | None:
    """``partial`` at known values, as the engines compute it: in numpy's
    ``float64``, so a division by zero is ±∞ or NaN, as IEEE's (``%``'s
    ∂/∂b at ``b = 0`` is NaN, the engines' rule's value), where Python's
    floats raised, which made a partial known at a point unknown.  None
    where a value it needs is unknown (``TypeError`` of ``None``): a value
    the engines compute is never unknown (``log`` of a negative number is
    NaN, and ``undefined`` says why)."""
    floats = [np.float64(v) if isinstance(v, float) else v for v in values]
    try:
        return float(partial(floats, np.float64(result) if isinstance(result, float) else result))
    except TypeError:
        return None


def dataflow_graph(module: ModuleOp, function: func.FuncOp, arguments: Sequence[Any] | None = None) -> Graph:
    """``function``'s graph at ``arguments`` (Python floats, ints, bools and
    numpy arrays), or statically when ``arguments`` is ``None``."""
    static = arguments is None
    evaluator = _Evaluator(module)
    types = function.function_type.inputs.data
    args: list[Any] = []
    arrays: list[tuple[int, _Array]] = []
    for k, type in enumerate(types):
        given = None if arguments is None else arguments[k]
        if isinstance(type, MemRefType):
            shape = tuple(np.shape(given)) if given is not None else tuple(type.get_shape())
            if any(size < 0 for size in shape):
                raise LumpError(
                    function,
                    f"argument #{k} has the dynamic shape {type}: lumps need its size "
                    "(static shapes, or the arguments from Python)",
                )
            size = math.prod(shape)
            if isinstance(type.element_type, AnyFloat):
                flat = np.ravel(given) if given is not None else [None] * size
                cells = [
                    evaluator.add(Node(None, value=_float(v), label=f"argument #{k}{_entry(shape, j)}"))
                    for j, v in enumerate(flat)
                ]
                array = _Array(shape, cells)
                arrays.append((k, array))
            else:
                flat = np.ravel(given).tolist() if given is not None else [UNKNOWN] * size
                array = _Array(shape, flat)
            args.append(array)
        elif isinstance(type, AnyFloat):
            args.append(evaluator.add(Node(None, value=_float(given), label=f"argument #{k}")))
        else:
            args.append(UNKNOWN if static else normalize(type, given))
    n = len(evaluator.nodes)
    try:
        # IEEE's values, as the interpreter's runner takes them
        with np.errstate(all="ignore"):
            results = evaluator.call(function, args)
    except RecursionError:
        raise LumpError(function, "calls nest too deeply to lump") from None
    returned = [
        (f"result #{k}", value)
        for k, (value, type) in enumerate(zip(results, function.function_type.outputs.data))
        if isinstance(type, AnyFloat)
    ]
    written = [
        (f"argument #{k}{_entry(array.shape, j)} as left", cell)
        for k, array in arrays
        for j, cell in enumerate(array.cells)
    ]
    outputs: list[int] = []
    labels: dict[int, str] = {}
    for label, value in (*returned, *written):
        if not isinstance(value, _Active):
            raise LumpError(function, f"{label} does not depend on the inputs: J has a zero row, so it is singular")
        if value.index in labels:
            raise LumpError(
                function,
                f"{labels[value.index]} and {label} are the same value: J has two equal rows, so it is singular",
            )
        labels[value.index] = label
        outputs.append(value.index)
    if n != len(outputs):
        raise LumpError(
            function,
            f"not square: {n} active inputs (float scalars and array entries) but {len(outputs)} "
            "active outputs (returned floats and float array entries)",
        )
    return Graph(function, tuple(evaluator.nodes), n, tuple(outputs))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _entry(shape: tuple[int, ...], flat: int) -> str:
    return str([int(i) for i in np.unravel_index(flat, shape)]) if shape else ""
