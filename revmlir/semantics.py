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

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import MemoryEffectKind, is_side_effect_free, only_has_effect

from revmlir.interfaces import InvertibleOp, StateConsumer


PURE_DIALECTS = frozenset({"arith", "math", "complex"})
"""Every op of these dialects computes a value from its operands; xDSL 0.74
does not give all of them a ``Pure`` trait (``arith.extsi`` has none)."""


def is_state_type(type: Attribute) -> bool:
    from revmlir.dialects.rev import LogType

    return isinstance(type, IntegerType | IndexType | ComplexType | LogType) or (
        isinstance(type, AnyFloat)
    )


def is_reference_type(type: Attribute) -> bool:
    from revmlir.dialects.anc import StackType

    return isinstance(type, MemRefType | StackType)


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
        from revmlir.dialects.rev import FuncOp

        if isinstance(owner, FuncOp):
            return True
        if isinstance(owner, InvertibleOp):
            region = value.block.parent
            return region is not None and value in owner.state_block_args(region)
        return False
    return isinstance(value.owner, InvertibleOp)


def written_arguments(module: ModuleOp) -> dict[str, frozenset[int]]:
    """Per function of ``module``: the positions of the arguments its runs
    may write, by its own ops or by the functions it passes them to (a
    fixpoint over the call graph, from "none"), so that a call of a helper
    that only reads an array does not count as writing it."""
    from revmlir.dialects.rev import CallOp, FuncOp, UncallOp
    from revmlir.interfaces import InvertibleOp

    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
    written = dict.fromkeys(functions, frozenset[int]())
    changed = True
    while changed:
        changed = False
        for name, func in functions.items():
            writes: set[SSAValue] = set()
            for op in func.walk():
                if isinstance(op, CallOp | UncallOp) and op.callee.string_value() in functions:
                    callee = written[op.callee.string_value()]
                    writes.update(arg for k, arg in enumerate(op.args) if k in callee)
                elif isinstance(op, InvertibleOp):
                    writes.update(op.written_memrefs())
            found = frozenset(k for k, arg in enumerate(func.body.block.args) if arg in writes)
            if found != written[name]:
                written[name], changed = found, True
    return written
