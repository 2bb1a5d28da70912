"""Elements lent to read-only parameters in ``rv.prange`` loops, as copies.

The eDSL passes an element argument by borrowing it (``rev.take``, the call,
``rev.put``), which the parallel rule counts as a write of the element
(``revmlir.parallel``): ``sq(y[i], x[idx[i]])``, ``sq`` reading its second
parameter, was refused as an update of ``x``.  Where the callee gives that
parameter back as it took it (``semantics.scalars_given_back``, through
the callees it passes the parameter on to), the call
only reads the element, and a copy is what ``x[idx[i]] + 0.0`` would pass:
an ancilla of the loaded element, freed holding it after the call.  So the
borrow becomes a read, which iterations share, and its gradient an
accumulation into ``x``'s gradient, which the adjoint makes atomic; kept a
borrow, the adjoint would update the gradient's element through its call,
which no atomic add covers.

Only a borrow the parallel rule would refuse is rewritten (an element that
some enclosing parallel loop does not hold privately), so programs it
accepted compile as they did; and only of an array whose elements
accumulate atomically (floats and integers): a complex copy's gradient
would be a shared accumulation the adjoint cannot make, so such a borrow
stays, and is refused in the words of the call (``violations``).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from revmlir.dialects import anc, rev
from revmlir.fast_ops import memref_load
from revmlir.parallel import can_accumulate_atomically, is_private
from revmlir.semantics import scalars_given_back


def copy_lent_elements(module: ModuleOp) -> None:
    """Rewrite, in every function of ``module``, each borrow of a float or
    integer element that an enclosing parallel loop does not hold privately
    and that only lends its element to a call giving it back."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, rev.FuncOp)}
    given_back = scalars_given_back(functions)
    lent = {
        take: found
        for function in functions.values()
        for loop in function.walk()
        if isinstance(loop, rev.ForOp) and loop.is_parallel
        for take in loop.body.walk()
        if isinstance(take, rev.TakeOp)
        and not is_private(take.memref, take.indices, loop)
        and can_accumulate_atomically(take.memref)
        and (found := _lent_and_given_back(take, given_back)) is not None
    }
    for take, (call, put) in lent.items():
        location = take.location
        load = memref_load(take.memref, take.indices)
        copy = anc.AllocOp(load.res)
        take.parent_block().insert_ops_before([load, copy], take)
        take.result.replace_all_uses_with(copy.result)
        take.detach()
        take.erase()
        position = call.scalar_args().index(copy.result)
        free = anc.FreeOp(call.res[position], load.res)
        put.parent_block().insert_op_before(free, put)
        put.detach()
        put.erase()
        for op in (load, copy, free):
            op.location = location


def _lent_and_given_back(
    take: rev.TakeOp, given_back: dict[str, frozenset[int]]
) -> tuple[rev.CallOp | rev.UncallOp, rev.PutOp] | None:
    """The call ``take`` lends its element to and the put that returns it,
    where the callee (of the module) gives it back as it took it, through
    the calls it passes it on to too (``given_back``)."""
    uses = list(take.result.uses)
    if len(uses) != 1 or not isinstance(call := uses[0].operation, rev.CallOp | rev.UncallOp):
        return None
    position = call.scalar_args().index(take.result)
    if position not in given_back.get(call.callee.string_value(), frozenset()):
        return None
    back = list(call.res[position].uses)
    if len(back) != 1 or not isinstance(put := back[0].operation, rev.PutOp):
        return None
    same = put.memref == take.memref and tuple(put.indices) == tuple(take.indices)
    return (call, put) if same and put.parent_block() is take.parent_block() else None
