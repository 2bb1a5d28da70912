"""Which integer parameters of an ordinary function it uses as floats.

An int a derivative is asked about is most likely a float its author
meant (``a=3`` for ``3.0``) when the function converts it to a float and
computes with it: as an integer, its derivative would be a silent 0.0.
The question is asked of the ordinary IR, where the conversion is
``arith.sitofp``/``uitofp``, and the int may reach it through anything the
frontend compiles: any integer operation (``arith``, ``abs``, ``**``), a
callee's parameter or its result, a loop's carried value, an ``if``'s
result, an integer array it is stored into (``k[0] = n``, then
``x * k[0]``: an array holds whatever is stored into any of its elements,
and a load from it whatever it holds, in the function, in a callee it is
passed to or in a caller that passed it).  A conversion only compared (``x > n``) is no use as a float: no
derivative flows through it, nor is one whose every use ends in a
comparison or a conversion back to an integer (``int(math.log2(n))``);
nor is a parameter raised to (``x ** n``), which a user reads as an
integer power.

Each function is summarised once, callees before callers: which of its
parameters reach a float use, which of its results hold which parameters,
and which of its array parameters it stores which parameters into.  A call applies its callee's summary, so what a callee returns
goes back to the call it came through only, and one propagation of sets of
parameters over a function's values answers for all of them at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import AnyFloat, IntegerType, MemRefType, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue


@dataclass(frozen=True)
class _Summary:
    """What a function does with its integer parameters, by position."""

    floated: frozenset[int]
    """The parameters that reach a conversion to a float used as a number."""

    returned: tuple[frozenset[int], ...]
    """Per result, the parameters it may hold."""

    stored: tuple[frozenset[int], ...]
    """Per parameter, the parameters an integer array passed there may hold
    after the call: what the function stores into its elements."""


@dataclass(frozen=True)
class FloatUse:
    """An integer parameter whose value reaches a float use, and how."""

    position: int
    through: tuple[int, ...] | None
    """None where the value reaches the use without an array; else only
    through integer arrays it is stored into, and these are the array
    parameters holding it whose elements reach a float use (none where
    only the function's own arrays do),
    which a refusal names: the parameter alone would not say where to look."""


def floated_parameters(module: ModuleOp, name: str) -> tuple[FloatUse, ...]:
    """``@name``'s integer parameters whose value reaches a conversion to
    a float that is used as a number, by position (an integer array's
    position is followed too, for its callers, and left out here)."""
    function = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    scalars = function.function_type.inputs.data
    full = _summaries(module, True)
    floated = sorted(p for p in full[name].floated if isinstance(scalars[p], IntegerType))
    if not floated:
        return ()
    direct = _summaries(module, False)[name].floated
    held = _held(function, full, True)
    # an array is named only where its elements reach a float use: one
    # holding ``n`` that is only a loop's count says nothing of where to look
    arrays = [
        (a, held.get(array, set())) for a, array in enumerate(function.body.block.args) if a in full[name].floated
    ]
    return tuple(
        FloatUse(p, None if p in direct else tuple(a for a, holds in arrays if a != p and p in holds)) for p in floated
    )


def _holds_integers(type: Attribute) -> bool:
    """An integer, or an array of integers, whose elements hold what is
    stored into them."""
    return isinstance(type.element_type if isinstance(type, MemRefType) else type, IntegerType)


def _summaries(module: ModuleOp, arrays: bool) -> dict[str, _Summary]:
    """Every function's summary, a fixed point: a function is summarised
    again when a callee's summary grows, so recursion ends when nothing
    more is learned (summaries only grow).  ``arrays``: whether integer
    arrays hold what is stored into them (without, the summaries say what
    reaches a float use without crossing an array)."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks}
    callers: dict[str, set[str]] = {}
    for name, function in functions.items():
        for op in function.walk():
            if isinstance(op, func.CallOp):
                callers.setdefault(op.callee.string_value(), set()).add(name)
    summaries = {
        name: _Summary(
            frozenset(),
            tuple(frozenset() for _ in function.function_type.outputs),
            tuple(frozenset() for _ in function.function_type.inputs),
        )
        for name, function in functions.items()
    }
    pending = list(functions)
    while pending:
        name = pending.pop()
        summary = _summary(functions[name], summaries, arrays)
        if summary != summaries[name]:
            summaries[name] = summary
            pending += [caller for caller in callers.get(name, ()) if caller not in pending]
    return summaries


def _summary(function: func.FuncOp, summaries: dict[str, _Summary], arrays: bool) -> _Summary:
    """``function``'s summary given its callees'."""
    held = _held(function, summaries, arrays)
    floated: set[int] = set()
    returned: list[set[int]] = [set() for _ in function.function_type.outputs]
    for op in function.walk():
        match op:
            case arith.SIToFPOp() | arith.UIToFPOp() if any(
                _is_a_number_use(use.operation, use.index, op.input) for use in op.result.uses
            ):
                floated |= held.get(op.input, set())
            case func.CallOp() if (callee := summaries.get(op.callee.string_value())) is not None:
                for position in callee.floated:
                    floated |= held.get(op.arguments[position], set())
            case func.ReturnOp():
                for result, value in zip(returned, op.arguments):
                    result |= held.get(value, set())
            case _:
                pass
    parameters = function.body.block.args
    stored = (frozenset(held.get(p, set())) if isinstance(p.type, MemRefType) else frozenset() for p in parameters)
    return _Summary(frozenset(floated), tuple(frozenset(r) for r in returned), tuple(stored))


def _held(function: func.FuncOp, summaries: dict[str, _Summary], arrays: bool) -> dict[SSAValue, set[int]]:
    """The integer parameters each value of ``function`` may hold: one
    propagation of sets of parameters, swept over the ops in order until
    nothing changes (a loop's carried value goes back to an earlier op),
    rather than a walk per parameter."""
    held: dict[SSAValue, set[int]] = {
        parameter: {position}
        for position, parameter in enumerate(function.body.block.args)
        if _holds_integers(parameter.type)
    }
    ops = list(function.walk())
    changed = True
    while changed:
        changed = False
        for op in ops:
            for index, operand in enumerate(op.operands):
                if not (parameters := held.get(operand)):
                    continue
                for value in _passed_on(op, index, summaries, arrays):
                    into = held.setdefault(value, set())
                    if not parameters <= into:
                        into |= parameters
                        changed = True
    return held


def _is_a_number_use(op: Operation, index: int, converted: SSAValue) -> bool:
    """Whether the float ``op`` takes as operand ``index``, converted from
    the int ``converted``, is computed with: not in a comparison, nor as
    the exponent of ``x ** n``, a variable base raised to a parameter,
    which a user reads as an integer power (``2.0 ** n`` and
    ``x ** (n + 1)`` are floats of ``n``)."""
    if isinstance(op, math.PowFOp) and index == 1:
        is_a_parameter = isinstance(converted, BlockArgument) and isinstance(converted.owner.parent_op(), func.FuncOp)
        if is_a_parameter and not isinstance(op.lhs.owner, arith.ConstantOp):
            return False
    return _carries_a_derivative(op, set())


def _carries_a_derivative(op: Operation, seen: set[Operation]) -> bool:
    """Whether a float ``op`` takes can reach anything a derivative flows
    through: not when every path ends in a comparison or a conversion back
    to an integer (``int(math.log2(n))`` computes a count, and would have no
    derivative were ``n`` a float).  What leaves the function's own float
    arithmetic (a call, a store, a loop's or an ``if``'s value, a return)
    is taken to carry one."""
    if isinstance(op, arith.CmpfOp | arith.FPToSIOp | arith.FPToUIOp) or op in seen:
        return False
    seen.add(op)
    if op.regions or isinstance(op, func.CallOp) or not op.results:
        return True
    if not all(isinstance(result.type, AnyFloat) for result in op.results):
        return True
    return any(_carries_a_derivative(use.operation, seen) for result in op.results for use in result.uses)


def _passed_on(op: Operation, index: int, summaries: dict[str, _Summary], arrays: bool) -> list[SSAValue]:
    """The values that hold what ``op`` takes as operand ``index``: the
    results of a call its callee returns it in and the arrays it stores it
    into, the array a store writes it into, a loop's carried value and its
    result, an ``if``'s result, or else the integer results of an
    operation computing with it (``arith``, ``math.absi``, ``math.ipowi``,
    a load from an array holding it).
    A loop's bounds, an ``if``'s condition, a comparison and a return pass
    nothing on (a return is read by the summary), nor does a store or a
    call into an array without ``arrays``."""
    match op:
        case func.CallOp():
            callee = summaries.get(op.callee.string_value())
            if callee is None:  # a declaration's body is not ours to follow
                return []
            results = [op.results[r] for r, parameters in enumerate(callee.returned) if index in parameters]
            stored = [op.arguments[a] for a, parameters in enumerate(callee.stored) if index in parameters]
            return results + stored if arrays else results
        case memref.StoreOp():  # the array holds the value stored, not the indices
            return [op.memref] if arrays and index == 0 and _holds_integers(op.memref.type) else []
        case scf.ForOp():  # lb, ub and step come first, then the initial values
            return [op.body.block.args[index - 2], op.results[index - 3]] if index >= 3 else []
        case scf.WhileOp():
            return [op.before_region.block.args[index]]
        case scf.ConditionOp():
            loop = op.parent_op()
            assert isinstance(loop, scf.WhileOp)
            return [loop.after_region.block.args[index - 1], loop.results[index - 1]] if index >= 1 else []
        case scf.YieldOp():
            return list(_yielded(op, index))
        case scf.IfOp() | arith.CmpiOp() | func.ReturnOp():
            return []
    return [result for result in op.results if isinstance(result.type, IntegerType)]


def _yielded(op: scf.YieldOp, index: int) -> Iterator[SSAValue]:
    parent = op.parent_op()
    if isinstance(parent, scf.WhileOp):  # the after region's values go round to the before region
        yield parent.before_region.block.args[index]
        return
    if parent is not None and index < len(parent.results):
        yield parent.results[index]
    if isinstance(parent, scf.ForOp):
        yield parent.body.block.args[index + 1]
