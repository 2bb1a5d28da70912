"""Which integer parameters of an ordinary function it uses as floats.

An int a derivative is asked about is most likely a float its author
meant (``a=3`` for ``3.0``) when the function converts it to a float and
computes with it: as an integer, its derivative would be a silent 0.0.
The question is asked of the ordinary IR, where the conversion is
``arith.sitofp``/``uitofp``, and the int may reach it through anything the
frontend compiles: integer arithmetic, a callee's parameter or its result,
a loop's carried value, an ``if``'s result.  A conversion only compared
(``x > n``) or only raised to (``x ** n``, an integer power, as Python and
JAX read it) is no use as a float: no derivative flows through it.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import arith, func, math, scf
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable


def floated_parameters(module: ModuleOp, name: str) -> tuple[int, ...]:
    """The positions of ``@name``'s integer parameters whose value reaches
    a conversion to a float that is used as a number."""
    function = SymbolTable.lookup_symbol(module, name)
    assert isinstance(function, func.FuncOp)
    calls = _calls(module)
    return tuple(
        position
        for position, parameter in enumerate(function.body.block.args)
        if isinstance(parameter.type, IntegerType) and _reaches_a_float_use(parameter, module, calls)
    )


def _calls(module: ModuleOp) -> dict[str, list[func.CallOp]]:
    """Each function's call sites, by its name."""
    calls: dict[str, list[func.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            calls.setdefault(op.callee.string_value(), []).append(op)
    return calls


def _reaches_a_float_use(parameter: SSAValue, module: ModuleOp, calls: dict[str, list[func.CallOp]]) -> bool:
    """Whether ``parameter``, or an integer computed from it, is converted
    to a float that is computed with; every value holding it is visited
    once, so a recursive callee or a loop ends the walk."""
    pending = [parameter]
    seen: set[SSAValue] = set()
    while pending:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            op = use.operation
            if isinstance(op, arith.SIToFPOp | arith.UIToFPOp):
                if any(_is_a_number_use(u.operation, u.index) for u in op.result.uses):
                    return True
            elif isinstance(op, arith.CmpiOp):
                continue
            elif op.dialect_name() == "arith":
                pending += [r for r in op.results if isinstance(r.type, IntegerType)]
            else:
                pending += _passed_on(op, use.index, module, calls)
    return False


def _is_a_number_use(op: Operation, index: int) -> bool:
    """Whether a float converted from an int is computed with where ``op``
    uses it as operand ``index``: not in a comparison, nor as an exponent."""
    return not isinstance(op, arith.CmpfOp) and not (isinstance(op, math.PowFOp) and index == 1)


def _passed_on(op: Operation, index: int, module: ModuleOp, calls: dict[str, list[func.CallOp]]) -> list[SSAValue]:
    """The values that hold what ``op`` takes as operand ``index``: a
    callee's parameter, the callers' results of a returned value, a loop's
    carried value and its result, an ``if``'s result."""
    match op:
        case func.CallOp():
            callee = SymbolTable.lookup_symbol(module, op.callee)
            return [callee.body.block.args[index]] if isinstance(callee, func.FuncOp) else []
        case func.ReturnOp():
            function = op.parent_op()
            assert isinstance(function, func.FuncOp)
            return [call.results[index] for call in calls.get(function.sym_name.data, [])]
        case scf.ForOp() if index >= 3:  # an initial value: lb, ub and step come first
            return [op.body.block.args[index - 2], op.results[index - 3]]
        case scf.WhileOp():
            return [op.before_region.block.args[index]]
        case scf.ConditionOp() if index >= 1:
            loop = op.parent_op()
            assert isinstance(loop, scf.WhileOp)
            return [loop.after_region.block.args[index - 1], loop.results[index - 1]]
        case scf.YieldOp():
            return list(_yielded(op, index))
    return []


def _yielded(op: scf.YieldOp, index: int) -> Iterator[SSAValue]:
    parent = op.parent_op()
    if isinstance(parent, scf.WhileOp):  # the after region's values go round to the before region
        yield parent.before_region.block.args[index]
        return
    if parent is not None and index < len(parent.results):
        yield parent.results[index]
    if isinstance(parent, scf.ForOp):
        yield parent.body.block.args[index + 1]
