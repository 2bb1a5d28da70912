"""The explicit call stack of a resumable function with recursion.

``make-resumable`` lays out each function of a recursive cycle of the call
graph once, as segments of the machine, so its values have one slot each
whatever the depth of the recursion.  A call within the cycle therefore
saves the caller's values that are live across it, and the point to return
to, on *frame stacks*, and the callee's return restores them
(``revmlir.reversibilize.resumable``).  This module knows how a value goes
on a frame stack and comes back; the cycles are ``revmlir.call_graph``'s.

Frames are ``!anc.stack`` values, local to the function: one of ``index``
for return points and every integer (``arith.index_cast`` there and back,
exact for every width), one of ``f64`` for every float (``arith.extf`` and
``arith.truncf``, exact too).  Two element types keep a snapshot record of
a frame stack self-describing: its length is stored after its elements, as
an element (``anc.snapshot``).  A stack grows as the recursion deepens; a
buffer that cannot grow stops the run at the push, as every stack does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, Float64Type, IndexType, f64
from xdsl.ir import Attribute, Operation, SSAValue

from revmlir.dialects import anc


def frame_type(type: Attribute) -> Attribute:
    """The element type of the frame stack that holds values of ``type``."""
    return f64 if isinstance(type, AnyFloat) else IndexType()


@dataclass
class FrameStacks:
    """The frame stacks of one machine, allocated at the function's entry
    (``stacks``) and freed, checked empty, where it returns."""

    stacks: dict[Attribute, SSAValue] = field(default_factory=dict[Attribute, SSAValue])
    allocations: list[Operation] = field(default_factory=list[Operation])

    def stack(self, type: Attribute) -> SSAValue:
        element = frame_type(type)
        if element not in self.stacks:
            alloc = anc.StackAllocOp(anc.StackType(element))
            alloc.result.name_hint = "frames_index" if isinstance(element, IndexType) else "frames_f64"
            self.allocations.append(alloc)
            self.stacks[element] = alloc.result
        return self.stacks[element]

    def push(self, value: SSAValue) -> Iterator[Operation]:
        """The ops that save ``value`` on its frame stack."""
        stack = self.stack(value.type)
        element = frame_type(value.type)
        pushed = value
        if value.type != element:
            cast = (
                arith.ExtFOp(value, element) if isinstance(element, Float64Type) else arith.IndexCastOp(value, element)
            )
            yield cast
            pushed = cast.result
        yield anc.CopyPushOp(stack, pushed)

    def pop(self, type: Attribute) -> tuple[list[Operation], SSAValue]:
        """The ops that take a value of ``type`` back, and that value."""
        stack = self.stack(type)
        pop = anc.PopOp(stack)
        ops: list[Operation] = [pop]
        if type == pop.result.type:
            return ops, pop.result
        cast = arith.TruncFOp(pop.result, type) if isinstance(type, AnyFloat) else arith.IndexCastOp(pop.result, type)
        ops.append(cast)
        return ops, cast.result
