"""Which array parameters of a lowered module LLVM may take as ``noalias``.

``noalias`` on a pointer parameter promises that memory written during the
call through that pointer is reached through no other pointer, and the
reverse.  It is what lets LLVM keep an element in a register across stores
to other arrays, and vectorise a loop that reads one array and updates
another.  Reversible code seldom breaks the promise, but it can: a call
``@dot(%x, %x)`` passes one array twice (harmless: ``@dot`` only reads
them), and its adjoint ``@dot.adj`` then receives the one gradient array
twice and adds to it through both (not harmless).  So the promise is
proved, per parameter, over the whole module:

- *written*: the parameters a function may write
  (``revmlir.semantics.written_arguments``, the one analysis of written
  arrays, which reads lowered code as it reads reversible code);
- *aliased*: the pairs of parameters a call may bind to overlapping memory:
  the same value twice, two parameters of the caller that may alias, or a
  value whose origin the analysis does not follow (another fixpoint);
- a parameter is ``noalias`` unless it may alias another and one of the two
  is written.

Arrays from outside the module reach only public functions, through their
C entry points, whose callers promise that an array the function writes
shares no memory with another argument (``ArrayAliasing.written``):
revmlir's Python calls check it (``revmlir.runtime.backend.overlapping`` and
the machine-code marshaller), a C caller of an object file must keep it.
Arrays that are only read may overlap: ``noalias`` constrains only memory
written during the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block

from revmlir.ir_utils import nested_ops
from revmlir.kept_answers import ir_unchanged
from revmlir.semantics import Origin, function_uses, reference_origin, written_arguments


@dataclass
class _Function:
    """What the analysis knows of one defined function."""

    op: func.FuncOp
    written: frozenset[int]
    aliased: set[frozenset[int]] = field(default_factory=set[frozenset[int]])
    opaque: bool = False
    """Whether it uses an array of unknown origin, which may be a parameter
    under another name: none of its parameters is then ``noalias``."""

    @property
    def entry(self) -> Block:
        return self.op.body.blocks[0]

    def may_alias(self, first: Origin, second: Origin) -> bool:
        if first is None or second is None or first == second:
            return True
        return isinstance(first, int) and isinstance(second, int) and frozenset((first, second)) in self.aliased

    def arrays(self) -> Iterator[int]:
        return (i for i, a in enumerate(self.entry.args) if isinstance(a.type, MemRefType))

    def noalias(self) -> frozenset[int]:
        if self.opaque:
            return frozenset()
        blocked = {p for pair in self.aliased if pair & self.written for p in pair}
        return frozenset(self.arrays()) - blocked


@dataclass(frozen=True)
class ArrayAliasing:
    """Per function a module defines, positions of array parameters."""

    noalias: dict[str, frozenset[int]]
    """Those that may be declared ``noalias``."""
    written: dict[str, frozenset[int]]
    """Those a call may write (``written_arguments``): a caller from outside
    must not pass them memory another parameter reaches
    (``revmlir.runtime.backend``)."""


def analyse_arrays(module: ModuleOp) -> ArrayAliasing:
    # the written arrays and the opaque functions both read where each
    # function uses its references (``function_uses``): found once per
    # function while the module is unchanged, not once for each
    with ir_unchanged():
        written = written_arguments(module)
        functions = {
            f.sym_name.data: _Function(f, written[f.sym_name.data], opaque=_opaque(f))
            for f in module.ops
            if isinstance(f, func.FuncOp) and not f.is_declaration
        }
    calls: list[_Call] = []
    for caller in functions.values():
        # a kernel's every op is looked at, so by exact class, not ABCMeta's isinstance
        for op in nested_ops(caller.op):
            if op.__class__ is func.CallOp and (callee := functions.get(op.callee.string_value())) is not None:
                calls.append((caller, op, callee))
    _until_stable(calls, _aliased_down)
    return ArrayAliasing(
        {name: f.noalias() for name, f in functions.items()},
        {name: f.written for name, f in functions.items()},
    )


def _opaque(function: func.FuncOp) -> bool:
    """Whether ``function`` uses an array whose origin is not followed
    (``reference_origin`` is None)."""
    return any(op.operands[index].type.__class__ is MemRefType for op, index in function_uses(function).unknown)


_Call = tuple[_Function, func.CallOp, _Function]


def _until_stable(calls: list[_Call], step: Callable[[_Function, func.CallOp, _Function], bool]) -> None:
    """Apply ``step`` to every call until none changes anything."""
    changed = True
    while changed:
        changed = False
        for call in calls:
            changed |= step(*call)


def _aliased_down(caller: _Function, op: func.CallOp, callee: _Function) -> bool:
    before = len(callee.aliased)
    origins = [
        (i, reference_origin(caller.op, a)) for i, a in enumerate(op.arguments) if isinstance(a.type, MemRefType)
    ]
    for (i, first), (j, second) in combinations(origins, 2):
        if caller.may_alias(first, second):
            callee.aliased.add(frozenset((i, j)))
    return len(callee.aliased) != before
