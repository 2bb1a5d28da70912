"""The value model: which values are reversible state, which are references and
which ops are pure expressions.

The central decision of the design brief (docs/brief.md) lives here so the verifier, the inverter and the
interpreter classify values the same way.  Scalars (integers, indices, floats,
complex numbers, log numbers) are *state*: linear SSA versions.  Memrefs and
stacks are *references*: mutated in place by element and stack instructions.
Everything else inside a reversible function is a pure expression over current
values, recomputed wherever the inverse needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    MemRefType,
    ModuleOp,
    f64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import MemoryEffectKind, is_side_effect_free, only_has_effect

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import CallOp, FixedType, FuncOp, LogType, TropicalType, UncallOp
from revmlir.interfaces import InvertibleOp, StateConsumer

# The value model's classification of types is decided on the type
# interfaces (the dialects ask it too); passes ask it here.
from revmlir.interfaces import is_reference_type as is_reference_type
from revmlir.interfaces import is_state_type as is_state_type

PURE_DIALECTS = frozenset({"arith", "math", "complex"})
"""Every op of these dialects computes a value from its operands; xDSL 0.74
does not give all of them a ``Pure`` trait (``arith.extsi`` has none)."""


def gradient_type(type: Attribute) -> Attribute | None:
    """The type of the gradient a value of ``type`` carries, ``None`` for none.

    Floats carry a float gradient; log numbers carry the gradient with respect
    to their stored logarithm; a complex ``z = x + iy`` carries the complex
    ``∂L/∂x + i ∂L/∂y`` (NiLang's convention: for holomorphic ``r = f(z)`` the
    rules read ``ḡz = ḡr · conj(f'(z))``); integers, indices and booleans
    carry none.  Fixed-point and tropical numbers carry the f64 gradient
    with respect to their real value (fixed-point rounding is not
    differentiated).
    A memref or stack of such elements carries a *shadow*: a memref (stack) of
    the same shape holding one gradient per element, updated in place as the
    elements are (GVar arrays, without interleaving values and gradients).
    """
    if isinstance(type, LogType | TropicalType):
        return type.element_type
    if isinstance(type, FixedType):
        return f64
    if isinstance(type, AnyFloat | ComplexType):
        return type
    if isinstance(type, MemRefType):
        element = gradient_type(type.element_type)
        if element is None:
            return None
        return MemRefType(element, type.shape, type.layout, type.memory_space)
    if isinstance(type, StackType):
        element = gradient_type(type.element_type)
        return None if element is None else StackType(element)
    return None


def is_expression_op(op: Operation) -> bool:
    """Pure ops and memory reads: the inverse recomputes them where it needs them."""
    if isinstance(op, StateConsumer) or op.regions:
        return False
    if isinstance(op, memref.LoadOp | memref.DimOp):
        return True
    if op.dialect_name() in PURE_DIALECTS:
        return True
    return is_side_effect_free(op) or only_has_effect(op, MemoryEffectKind.READ)


def is_state_value(value: SSAValue) -> bool:
    """A version of a reversible variable (as opposed to a pure or reference value)."""
    if not is_state_type(value.type):
        return False
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        if isinstance(owner, FuncOp):
            return True
        if isinstance(owner, InvertibleOp):
            region = value.block.parent
            return region is not None and value in owner.state_block_args(region)
        return False
    return isinstance(value.owner, InvertibleOp)


ArgumentUse = tuple[Operation, int]
"""An op and the position of its operand that is a function's argument."""


def argument_uses(func: FuncOp) -> list[list[ArgumentUse]]:
    """Per argument of ``func``: its uses by the ops in ``func``'s body (a
    value's own use list may still hold an op that a rewrite detached)."""
    found: list[list[ArgumentUse]] = [[] for _ in func.body.block.args]
    for op in func.walk():
        for index, operand in enumerate(op.operands):
            if isinstance(operand, BlockArgument) and operand.block is func.body.block:
                found[operand.index].append((op, index))
    return found


class Writes(Enum):
    """How a function's runs may change one of its arguments."""

    NONE = "none"
    """Never: the function at most reads it."""
    ACCUMULATES = "accumulates"
    """Only by accumulations (``InvertibleOp.accumulated_memrefs``), in the
    function and in every callee it passes the array to, and it reads
    nothing of the array but its shape: runs that share the array commute."""
    OTHER = "other"
    """Any other way."""


def argument_writes(module: ModuleOp) -> dict[str, tuple[Writes, ...]]:
    """Per function of ``module``: how it may change each argument, by its
    own ops or by the functions it passes them to.  Writes are a least
    fixpoint over the call graph (from "none"), so that a call of a helper
    that only reads an array does not count as writing it; accumulations a
    greatest one (from "all"), so that a recursive accumulation stays one."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
    uses = {name: argument_uses(func) for name, func in functions.items()}

    def passed(use: ArgumentUse, positions: dict[str, frozenset[int]]) -> bool:
        """Whether ``use`` passes its array to a callee at one of ``positions``."""
        op, index = use
        if not isinstance(op, CallOp | UncallOp):
            return False
        callee = positions.get(op.callee.string_value())
        return callee is not None and index in callee

    def fixpoint(
        keeps: Callable[[ArgumentUse, dict[str, frozenset[int]]], bool], least: bool
    ) -> dict[str, frozenset[int]]:
        """Per function, the array arguments one of whose uses ``keeps``
        (``least``: from none) or all of whose uses do (from all)."""
        quantifier = any if least else all
        found = {
            name: frozenset[int]() if least else frozenset(range(len(func.body.block.args)))
            for name, func in functions.items()
        }
        changed = True
        while changed:
            changed = False
            for name, func in functions.items():
                new = frozenset(
                    k
                    for k, arg in enumerate(func.body.block.args)
                    if is_reference_type(arg.type) and quantifier(keeps(use, found) for use in uses[name][k])
                )
                if new != found[name]:
                    found[name], changed = new, True
        return found

    def writes(use: ArgumentUse, written: dict[str, frozenset[int]]) -> bool:
        op, index = use
        if isinstance(op, CallOp | UncallOp) and op.callee.string_value() in functions:
            return passed(use, written)
        if isinstance(op, memref.StoreOp):
            return index == 1  # a count in rev.safe (revmlir.counters): nothing else stores
        return isinstance(op, InvertibleOp) and op.operands[index] in op.written_memrefs()

    def accumulates(use: ArgumentUse, accumulating: dict[str, frozenset[int]]) -> bool:
        op, index = use
        if isinstance(op, memref.DimOp) or passed(use, accumulating):
            return True
        return isinstance(op, InvertibleOp) and op.operands[index] in op.accumulated_memrefs()

    written = fixpoint(writes, least=True)
    accumulating = fixpoint(accumulates, least=False)
    return {
        name: tuple(
            Writes.NONE if k not in written[name]
            else Writes.ACCUMULATES if k in accumulating[name]
            else Writes.OTHER
            for k in range(len(func.body.block.args))
        )
        for name, func in functions.items()
    }


def written_arguments(module: ModuleOp) -> dict[str, frozenset[int]]:
    """Per function of ``module``: the positions of the arguments its runs
    may write (``argument_writes``)."""
    return {
        name: frozenset(k for k, how in enumerate(writes) if how is not Writes.NONE)
        for name, writes in argument_writes(module).items()
    }
