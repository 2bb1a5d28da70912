"""A pass that fails leaves the module as it was.

``rev-opt`` reports a failed pass at the first op of the module that does
not verify, when there is one, so a half-changed module (a gradient calling
an adjoint not built yet, a caller redirected to a copy that was removed)
would show that op's error instead of the pass's; and a caller of a pass
from Python keeps the module it passed in.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from revmlir.collector import take_apart


@contextmanager
def rolled_back_on_failure(module: ModuleOp, rewritten: Collection[Operation] = ()) -> Iterator[None]:
    """Run the body; if it raises, remove the top-level ops it added and
    put back the ``rewritten`` ones as they were, then re-raise.  Any
    exception counts, Ctrl-C's ``KeyboardInterrupt`` too: a long run
    interrupted half-way would otherwise leave the module half-rewritten.

    ``rewritten``: the top-level ops of ``module`` the body may change in
    place, replace or erase (what ``make-resumable`` rewrites:
    ``revmlir.reversibilize.resumable.rewritten_functions``).  Only these
    are copied first, and the copies are taken apart once the body
    succeeds (``revmlir.collector``).  Every other op the body must leave
    where it was and as it was (building derived functions only adds
    functions): those stay the same objects whether it fails or not, so a
    caller holding one still holds the module's."""
    block = module.body.block
    before = list(block.ops)
    copies = {op: op.clone() for op in rewritten}
    try:
        yield
    except BaseException:
        kept = set(before) - copies.keys()
        for op in list(block.ops):
            if op in kept:
                op.detach()
            else:
                block.erase_op(op)
        block.add_ops(copies.get(op, op) for op in before)
        raise
    for copy in copies.values():
        take_apart(copy)
