"""The verifier's rules on parallel loops and borrowed elements said in the
words of the Python a function was written in.

The verifier words a violation in the IR's terms (``'memref.load' in a
parallel loop reads an element of %x``), which is right for ``.mlir``
input; a Python user wrote ``x[i + 1]`` in an ``rv.prange`` loop.  The
violations carry what went wrong (``parallel.Race``, the array, the loop,
the borrow), and the op's location is the user's line, so the message is
rebuilt here from the names the user gave: an array by its variable, a
callee by its Python function (not by the specialisation it was compiled
to, ``scale_2``), the loop by its index variable.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, SSAValue

from revmlir.dialects import rev
from revmlir.errors import ReversibilityViolation
from revmlir.frontend.base.types import describe_type
from revmlir.parallel import ParallelViolation, Race, can_accumulate_atomically
from revmlir.verifier import AliasViolation


def in_python(violation: ReversibilityViolation, functions: Mapping[str, str]) -> str:
    """``violation``'s message in Python's words where its rule has them,
    else the verifier's; ``functions`` names each compiled function by the
    Python function it specialises."""
    if isinstance(violation, ParallelViolation):
        return _race(violation, functions)
    if isinstance(violation, AliasViolation):
        array = _name(violation.array)
        copy = f"a copy made before it (a = rv.ancilla({array}[…]), then rv.free it after)"
        if isinstance(violation.op, memref.LoadOp):
            return (
                f"reads {array}[…] while it updates that element of {array}: an update may not read its own "
                f"target; read {copy}"
            )
        # a second borrow: the same element passed twice to a call (``f(y[0], y[0])``), or
        # passed while it is updated, whether or not the callee writes its parameter
        return (
            f"uses {array}[…] twice at once (passed to a call, or updated, while it is passed or updated "
            f"already): an element is lent once at a time; pass {copy}"
        )
    return violation.message


def _race(violation: ParallelViolation, functions: Mapping[str, str]) -> str:
    array = _name(violation.array)
    index = violation.loop.body.block.args[0].name_hint or "index"
    match violation.race:
        case Race.WRITES_WHOLE:
            what = (
                f"passes {array} whole to {_callee(violation.op, functions)}, which writes it: another iteration may "
                f"write the same elements; pass the element ({array}[{index}]) instead"
            )
        case Race.ACCUMULATES_UNSHARABLE:
            what = (
                f"accumulates into elements of {array} that iterations share, and they are "
                f"{_elements(violation.array)}: shared accumulations need float or integer elements"
            )
        case Race.PASSES_WRITTEN:
            what = (
                f"passes {array} whole to {_callee(violation.op, functions)} while the loop updates it: the callee "
                "reading it would race with other iterations"
            )
        case Race.BORROWS_ACCUMULATED:
            what = (
                f"updates {array}[…], which iterations accumulate into, otherwise than with += or -=: "
                "its shared elements may only be added to"
            )
        case Race.WRITES_SHARED if (call := _lent_to(violation.op)) is not None and not can_accumulate_atomically(
            violation.array
        ):
            callee = _callee(call, functions)
            what = (
                f"lends {callee} an element of {array} whose first index is not the loop's {index}, and "
                f"{array}'s elements are {_elements(violation.array)}: even a copy's gradient would be a "
                f"shared accumulation, which needs float or integer elements; {_own(violation, 'lend it')}"
            )
        case Race.WRITES_SHARED if (call := _lent_to(violation.op)) is not None:
            callee = _callee(call, functions)
            what = (
                f"lends {callee} an element of {array} whose first index is not the loop's {index}, and "
                f"{callee} may change it while another iteration uses the same element; "
                f"{_own(violation, 'lend it')}, or add to the element in the loop itself ({array}[…] += …): "
                "iterations may share additions"
            )
        case Race.WRITES_SHARED:
            what = (
                f"updates an element of {array} whose first index is not the loop's {index}: another "
                f"iteration may update it too; {_own(violation, 'update')}, or only add to shared "
                "elements (+= or -=)"
            )
        case Race.READS_ACCUMULATED:
            what = f"reads {array}, which iterations accumulate into: its elements change while the loop runs"
        case Race.READS_WRITTEN:
            what = (
                f"reads {array}[…] at an index other than the loop's {index}, and the loop updates "
                f"{array}: another iteration may be updating that element"
            )
    return f"an rv.prange loop {what}"


def _name(value: SSAValue) -> str:
    """A value by the Python variable it was compiled from."""
    return value.name_hint or "the array"


def _own(violation: ParallelViolation, verb: str) -> str:
    """How to ``verb`` an element the loop's iteration owns: one whose
    first index is the loop's.  Where the first index is an enclosing
    ``rv.prange``'s (``y[i, j]`` in the ``j`` loop), the element is that
    iteration's already, and this loop is what to make sequential: every
    ``rv.prange`` loop owns elements by their first index alone."""
    array = _name(violation.array)
    index = violation.loop.body.block.args[0].name_hint or "index"
    op = violation.op
    first = op.indices[0] if isinstance(op, rev.TakeOp) and op.indices else None
    if isinstance(first, BlockArgument) and isinstance(outer := first.block.parent_op(), rev.ForOp):
        if outer.is_parallel and first is outer.body.block.args[0]:
            return (
                f"make the loop over {index} a range (an rv.prange loop owns an element by its first "
                f"index alone, here the outer loop's {first.name_hint or 'index'})"
            )
    return f"{verb} {array}[{index}, …]"


def _lent_to(op: Operation) -> rev.CallOp | rev.UncallOp | None:
    """The call a borrowed element is passed to, if it is: the eDSL borrows
    an element argument (``f(y[i], x[j])``) for the call's duration, unless
    the callee gives it back unchanged (then it lends a copy), so the
    verifier sees the borrow as a write."""
    if isinstance(op, rev.TakeOp):
        for use in op.result.uses:
            if isinstance(use.operation, rev.CallOp | rev.UncallOp):
                return use.operation
    return None


def _callee(op: Operation, functions: Mapping[str, str]) -> str:
    assert isinstance(op, rev.CallOp | rev.UncallOp)
    compiled = op.callee.string_value()
    name = functions.get(compiled, compiled)
    return f"~{name}" if isinstance(op, rev.UncallOp) else name


def _elements(array: SSAValue) -> str:
    assert isinstance(array.type, MemRefType)
    return describe_type(array.type.element_type)
