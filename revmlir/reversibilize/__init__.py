"""Turning ordinary ``func``/``scf``/``arith``/``math``/``memref`` code into
reversible ``rev`` functions (the ``reversibilize`` pass; the contract is in
docs/design.md, section "Reversibilize").

Each ``func.func @f`` is replaced by a *tape function* that saves what the
ordinary code forgets on stacks passed in by the caller (``translate``).
``mode="tape"`` names it ``@f``; ``mode="bennett"`` names it ``@f.tape`` and
adds ``@f``, Bennett's compute–copy–uncompute around it: the tapes live
inside ``@f``, the results are added into result slots and the final
contents of the written arrays into output arrays, then the computation runs
backwards, so ``@f`` leaves its inputs as it found them and no tape survives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import AnyFloat, IndexType, MemRefType, ModuleOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.dialects import anc, rev
from revmlir.interfaces import set_checks
from revmlir.naming import TAPE_SUFFIX
from revmlir.reachability import reached_among, rule_functions
from revmlir.reversibilize.analysis import (
    ReversibilizeError,
    check_function,
    saved_types,
)
from revmlir.reversibilize.translate import (
    FunctionTranslator,
    Interface,
    zero,
)
from revmlir.semantics import is_state_type, written_arguments

__all__ = ["Mode", "ReversibilizeError", "reversibilize"]

Mode = Literal["tape", "bennett"]
MODES: tuple[Mode, ...] = ("tape", "bennett")


def reversibilize(
    module: ModuleOp, mode: Mode = "bennett", roots: Sequence[str] | None = None
) -> dict[str, frozenset[int]]:
    """Replace every ``func.func`` of ``module`` that has a body by its
    reversible form (declarations stay; calling one is an error), except the
    rules of the primitives the module declares (``rev.extern``) and what
    they call: the derivative passes call them as the ordinary code they are.  Returns,
    per function, the positions of the array arguments it may write, for
    which its Bennett form takes output arrays (``written_arguments``, exact
    on the stores and calls of the ordinary code ``check_function``
    admits).  With ``roots``, only these functions and those they reach are
    replaced: the others stay ordinary code, which a later pass may still
    convert (``ad-checkpoint`` run once per function)."""
    rules = rule_functions(module)
    functions = [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and not op.is_declaration and op.sym_name.data not in rules
    ]
    if roots is not None:
        reached = reached_among({f.sym_name.data: f for f in functions}, roots)
        functions = [f for f in functions if f.sym_name.data in reached]
    by_name = {f.sym_name.data: f for f in functions}
    for function in functions:
        check_function(function, by_name)
    written = written_arguments(module)
    tapes = saved_types(functions)
    interfaces = {
        name: Interface(
            tape_name=name + TAPE_SUFFIX if mode == "bennett" else name,
            argument_types=tuple(f.function_type.inputs.data),
            result_types=tuple(f.function_type.outputs.data),
            written=written[name],
        )
        for name, f in by_name.items()
    }
    for function in functions:
        name = function.sym_name.data
        tape_function = FunctionTranslator(function, interfaces, tapes).translate()
        replacements = [tape_function]
        if mode == "bennett":
            replacements.insert(0, bennett_function(function, interfaces[name], tapes))
        for replacement in replacements:
            discard_float_ancillas(replacement)
        Rewriter.insert_op(replacements, InsertPoint.before(function))
        function.detach()
        function.erase()
    return written


def discard_float_ancillas(function: rev.FuncOp) -> None:
    """Float ancillas of generated code are freed unchecked
    (docs/design.md, decision 25).

    The translation uncomputes each ancilla it makes by the exact mirror of
    its computation, so in real arithmetic every free holds its known value:
    a float free can differ only by round-off, which grows with the largest
    value the ancilla held (an accumulator summing to 10⁸ and back ends
    ~10⁻⁸ off zero), not with its final value, so no tolerance on the final
    value separates it from an error.  The residue is discarded; integer
    ancillas stay checked (their arithmetic is exact)."""
    for op in function.walk():
        if isinstance(op, anc.AllocOp | anc.FreeOp) and isinstance(op.operands[0].type, AnyFloat):
            set_checks(op, False)


def bennett_function(source: func.FuncOp, interface: Interface, tapes: list[Attribute]) -> rev.FuncOp:
    """``@f(args, results, outputs)``: compute with ``@f.tape`` on private
    tapes, add the results into ``results`` and each written array into its
    output array, uncompute (a ``rev.routine``).  Memory: the peak tape of one
    run of ``f``, released before ``@f`` returns; time: two runs of ``f``."""
    arrays = sorted(interface.written)
    block = Block(
        arg_types=[
            *interface.argument_types,
            *interface.result_types,
            *(interface.argument_types[i] for i in arrays),
        ]
    )
    count = len(interface.argument_types)
    arguments = block.args[:count]
    results = block.args[count : count + len(interface.result_types)]
    outputs = block.args[count + len(results) :]
    for old, new in zip(source.body.block.args, arguments, strict=True):
        new.name_hint = old.name_hint
    for index, result in enumerate(results):
        result.name_hint = f"result{index}"
    for position, output in zip(arrays, outputs, strict=True):
        output.name_hint = f"{arguments[position].name_hint or 'array'}_out"
    builder = Builder(InsertPoint.at_end(block))
    stacks = [builder.insert(anc.StackAllocOp(anc.StackType(t))).result for t in tapes]
    for type, stack in zip(tapes, stacks):
        stack.name_hint = f"tape_{type}"
    scalars = [a for a in arguments if is_state_type(a.type)]
    state = [*scalars, *results]
    names = [v.name_hint for v in state]
    values = [f"value{i}" for i in range(len(results))]

    compute = Block(arg_types=[v.type for v in state])
    _name(compute.args, names)
    builder.insertion_point = InsertPoint.at_end(compute)
    carried = iter(compute.args)
    call_arguments = [next(carried) if is_state_type(a.type) else a for a in arguments]
    slots = [builder.insert(anc.AllocOp(zero(builder, t))).result for t in interface.result_types]
    _name(slots, values)
    call = builder.insert(rev.CallOp(interface.tape_name, [*call_arguments, *slots, *stacks]))
    kept = call.res[: len(scalars)]
    computed = call.res[len(scalars) :]
    builder.insert(rev.YieldOp(*kept, *compute.args[len(scalars) :], *computed))

    copy = Block(arg_types=[*(v.type for v in state), *interface.result_types])
    _name(copy.args, [*names, *values])
    builder.insertion_point = InsertPoint.at_end(copy)
    copied_scalars = copy.args[: len(scalars)]
    totals = copy.args[len(scalars) : len(state)]
    computed = copy.args[len(state) :]
    added = [builder.insert(rev.AddOp(t, v)).result for t, v in zip(totals, computed, strict=True)]
    for position, output in zip(arrays, outputs, strict=True):
        _accumulate_array(builder, arguments[position], output)
    builder.insert(rev.YieldOp(*copied_scalars, *added, *computed))

    builder.insertion_point = InsertPoint.at_end(block)
    routine = builder.insert(rev.RoutineOp(state, Region(compute), Region(copy)))
    for stack in stacks:
        builder.insert(anc.StackFreeOp(stack))
    builder.insert(rev.ReturnOp(*routine.res))
    function = rev.FuncOp(source.sym_name.data, [a.type for a in block.args], Region(block))
    for op in function.walk():
        op.location = source.location
    return function


def _name(values: Sequence[SSAValue], names: Sequence[str | None]) -> None:
    for value, name in zip(values, names, strict=True):
        value.name_hint = name


def _accumulate_array(builder: Builder, source: SSAValue, target: SSAValue) -> None:
    """``target[...] += source[...]`` over every element, one loop per
    dimension."""
    assert isinstance(source.type, MemRefType)
    rank = source.type.get_num_dims()

    def loop(indices: list[SSAValue]) -> None:
        if len(indices) == rank:
            element = builder.insert(rev.TakeOp(target, indices)).result
            value = builder.insert(memref.LoadOp.get(source, indices)).res
            updated = builder.insert(rev.AddOp(element, value)).result
            builder.insert(rev.PutOp(updated, target, indices))
            return
        start = zero(builder, IndexType())
        one = builder.insert(arith.ConstantOp.from_int_and_width(1, IndexType())).result
        dimension = builder.insert(arith.ConstantOp.from_int_and_width(len(indices), IndexType())).result
        size = builder.insert(memref.DimOp(source, dimension)).result
        body = Block(arg_types=[IndexType()])
        saved = builder.insertion_point
        builder.insertion_point = InsertPoint.at_end(body)
        loop([*indices, body.args[0]])
        builder.insert(rev.YieldOp())
        builder.insertion_point = saved
        builder.insert(rev.ForOp(start, size, one, [], Region(body)))

    loop([])
