"""A pass that fails leaves the module as it was.

``rev-opt`` reports a failed pass at the first op of the module that does
not verify, when there is one, so a half-changed module (a gradient calling
an adjoint not built yet, a caller redirected to a copy that was removed)
would show that op's error instead of the pass's; and a caller of a pass
from Python keeps the module it passed in.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation


@contextmanager
def rolled_back_on_failure(
    module: ModuleOp, rewritten: type[Operation] | tuple[type[Operation], ...] = ()
) -> Iterator[None]:
    """Run the body; if it raises, remove the top-level ops it added and
    put back the ``rewritten`` ones as they were, then re-raise.

    ``rewritten``: the kinds of top-level op the body may change in place,
    replace or erase (``make-resumable`` rewrites ``func.func``s); each is
    copied first, so that only the ops a failure can have changed are
    copied.  Every other op the body leaves where it was and as it was
    (building derived functions only adds functions): those stay the same
    objects, so a caller holding one still holds the module's."""
    block = module.body.block
    before = list(block.ops)
    copies = {op: op.clone() for op in before if isinstance(op, rewritten)}
    try:
        yield
    except Exception:
        kept = set(before) - copies.keys()
        for op in list(block.ops):
            if op in kept:
                op.detach()
            else:
                block.erase_op(op)
        block.add_ops(copies.get(op, op) for op in before)
        raise
