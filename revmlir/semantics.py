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

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    MemRefType,
    ModuleOp,
    f64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.traits import MemoryEffectKind, SymbolTable, is_side_effect_free, only_has_effect

from revmlir.call_graph import components
from revmlir.dialects import anc
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import (
    CallOp,
    FixedType,
    FuncOp,
    IfOp,
    LogType,
    ReturnOp,
    TakeOp,
    TropicalType,
    UncallOp,
    YieldOp,
)
from revmlir.interfaces import StateConsumer, is_invertible_op

# The value model's classification of types is decided on the type
# interfaces (the dialects ask it too); passes ask it here.
from revmlir.interfaces import is_reference_type as is_reference_type
from revmlir.interfaces import is_state_type as is_state_type
from revmlir.ir_utils import nested_ops
from revmlir.kept_answers import kept, kept_answer

PURE_DIALECTS = frozenset({"arith", "math", "complex"})
"""Every op of these dialects computes a value from its operands; xDSL 0.74
does not give all of them a ``Pure`` trait (``arith.extsi`` has none)."""


@functools.lru_cache(maxsize=1024)
def gradient_type(type: Attribute) -> Attribute | None:
    """The type of the gradient a value of ``type`` carries, ``None`` for none.

    Floats carry a float gradient; log numbers carry the gradient with respect
    to their stored logarithm; a complex ``z = x + iy`` carries the complex
    ``∂L/∂x + i ∂L/∂y`` (NiLang's convention: for holomorphic ``r = f(z)`` the
    rules read ``ḡz = ḡr · conj(f'(z))``); integers, indices and booleans
    carry none.  Fixed-point and tropical numbers carry the f64 gradient
    with respect to their real value (fixed-point rounding is not
    differentiated).
    A memref or stack of such elements carries a *shadow*: a memref (stack) of
    the same shape holding one gradient per element, updated in place as the
    elements are (GVar arrays, without interleaving values and gradients).

    Kept per type (types are values): the derivative passes ask it of every
    value they meet, and the answer cost 4 µs for a float, 12 µs for an
    integer (a miss of every float class, ABCs all) and 110 µs for an
    array (a ``MemRefType`` built and checked), where a hit costs the
    type's hash.
    """
    if isinstance(type, LogType | TropicalType):
        return type.element_type
    if isinstance(type, FixedType):
        return f64
    if isinstance(type, AnyFloat | ComplexType):
        return type
    if isinstance(type, MemRefType):
        element = gradient_type(type.element_type)
        if element is None:
            return None
        return MemRefType(element, type.shape, type.layout, type.memory_space)
    if isinstance(type, StackType):
        element = gradient_type(type.element_type)
        return None if element is None else StackType(element)
    return None


def is_expression_op(op: Operation) -> bool:
    """Pure ops and memory reads: the inverse recomputes them where it needs them."""
    if op.regions:
        return False
    decided = _expression_class(op.__class__)
    if decided is not None:
        return decided
    return is_side_effect_free(op) or only_has_effect(op, MemoryEffectKind.READ)


@functools.cache
def _expression_class(kind: type[Operation]) -> bool | None:
    """What ``is_expression_op`` decides from an op's class alone (None: its
    effects decide), once per class: every analysis asks it of every op,
    and the class checks (ABCs) cost more than the rest of the question."""
    if issubclass(kind, StateConsumer):
        return False
    if issubclass(kind, memref.LoadOp | memref.DimOp) or kind.dialect_name() in PURE_DIALECTS:
        return True
    return None


def is_state_value(value: SSAValue) -> bool:
    """A version of a reversible variable (as opposed to a pure or reference value)."""
    if not is_state_type(value.type):
        return False
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        if isinstance(owner, FuncOp):
            return True
        if is_invertible_op(owner):
            region = value.block.parent
            return region is not None and value in owner.state_block_args(region)
        return False
    return is_invertible_op(value.owner)


ArgumentUse = tuple[Operation, int]
"""An op and the position of its operand that is a function's argument."""


def argument_uses(func: FuncOp) -> list[list[ArgumentUse]]:
    """Per argument of ``func``: its uses by the ops in ``func``'s body (a
    value's own use list may still hold an op that a rewrite detached)."""
    return function_uses(func).arguments


Origin: TypeAlias = int | Operation | None
"""Where a reference a function uses comes from: the position of the
function's argument it is, the op that allocated it, or ``None``: an origin
not followed, which may be any argument.  A ``memref.cast`` is followed to
its operand: it is the same memory, typed otherwise (the lowering casts a
static ``alloca`` it hoists back to its type, decision 152)."""

FRESH_REFERENCES: tuple[type[Operation], ...] = (
    memref.AllocOp,
    memref.AllocaOp,
    anc.ArrayAllocOp,
    anc.StackAllocOp,
)
"""Ops whose result is new memory, which no argument reaches."""

Function: TypeAlias = FuncOp | func.FuncOp
"""A function with arguments the analyses below follow: a reversible one, or
ordinary (``reversibilize``'s input) and lowered code (the native pipeline)."""


def reference_origin(function: Function, value: SSAValue) -> Origin:
    """The origin of reference ``value`` used in ``function``'s body."""
    return _origin(function.body.blocks[0], value)


def _origin(entry: Block, value: SSAValue) -> Origin:
    """``reference_origin`` in the function whose entry block is ``entry``,
    by exact classes: xDSL's values are not subclassed, and an instance
    check against their ABC costs more than the rest, where
    ``function_uses`` asks it of every operand of a function."""
    kind = value.__class__
    while kind is OpResult and value.op.__class__ is memref.CastOp:
        value = value.op.source  # a cast is a view of its operand's memory
        kind = value.__class__
    if kind is BlockArgument and value.block is entry:
        return value.index
    if kind is OpResult and _is_fresh(value.op):
        return value.op
    return None


def viewed_arrays(array: SSAValue) -> set[SSAValue]:
    """The arrays ``array`` is, or is a view of, through any pure op that
    makes an array of arrays (``memref.cast`` among them): whether two
    arguments of a call may share memory (verifier rules ``call`` and
    ``alias``).  ``reference_origin`` follows a ``memref.cast`` alone, and
    that is sound for its users: an origin it does not follow is ``None``,
    which the ``noalias`` analysis and ``argument_writes`` take as any
    argument, so a view it stops at can only cost a ``noalias``."""
    if isinstance(array, OpResult) and is_expression_op(array.op):
        viewed = [viewed_arrays(o) for o in array.op.operands if isinstance(o.type, MemRefType)]
        if viewed:
            return set[SSAValue]().union(*viewed)
    return {array}


@dataclass(frozen=True)
class FunctionUses:
    """Where a function's body uses its arguments and references, found in
    one walk: the uses of arguments (``argument_uses``) and the references
    of unknown origin (``argument_writes``) were a walk of the function
    each, asked again by every analysis and every function's verifier."""

    arguments: list[list[ArgumentUse]]
    """Per argument of the function: its uses, in the order of the walk."""
    unknown: list[ArgumentUse]
    """The uses of references whose origin is not followed
    (``reference_origin`` is ``None``)."""


def function_uses(function: Function) -> FunctionUses:
    """``function``'s ``FunctionUses`` (kept while its IR is unchanged,
    ``revmlir.kept_answers``)."""
    return kept(_function_uses, function)


def _function_uses(function: Function) -> FunctionUses:
    entry = function.body.blocks[0]
    arguments: list[list[ArgumentUse]] = [[] for _ in entry.args]
    unknown: list[ArgumentUse] = []
    for op in nested_ops(function):
        for index, operand in enumerate(op.operands):
            origin = _origin(entry, operand)
            if origin.__class__ is int:
                arguments[origin].append((op, index))
            elif origin is None and is_reference_type(operand.type):
                unknown.append((op, index))
    return FunctionUses(arguments, unknown)


def _is_fresh(op: Operation) -> bool:
    """Whether ``op``'s result is new memory (``FRESH_REFERENCES``),
    decided once per class."""
    return _is_fresh_class(op.__class__)


@functools.cache
def _is_fresh_class(kind: type[Operation]) -> bool:
    return issubclass(kind, FRESH_REFERENCES)


class Writes(Enum):
    """How a function's runs may change one of its arguments."""

    NONE = "none"
    """Never: the function at most reads it."""
    ACCUMULATES = "accumulates"
    """Only by accumulations (``InvertibleOp.accumulated_memrefs``), in the
    function and in every callee it passes the array to, and it reads
    nothing of the array but its shape: runs that share the array commute."""
    OTHER = "other"
    """Any other way."""


REVERSIBLE_DIALECTS = frozenset({"rev", "anc", "ad"})
"""The dialects whose ops say which references they write: an
``InvertibleOp`` by ``written_memrefs``, any other op of them writes none
(an expression such as ``rev.apply`` reads; ``anc.restore`` puts back what
an ``anc.snapshot`` of the same function saved)."""

_CALLS = (CallOp, UncallOp, func.CallOp)
_READS = (memref.LoadOp, memref.DimOp)
_SHAPES = (memref.DimOp, memref.CastOp)
"""Uses that read at most the array's shape: a ``memref.cast``'s result is
the array itself, whose own uses (``reference_origin``) read or write it."""


def scalars_given_back(functions: Mapping[str, FuncOp]) -> dict[str, frozenset[int]]:
    """Per function of ``functions``, the positions, among its scalar
    parameters (its results), of those it gives back as it took them: its
    ``rev.return`` returns the parameter itself, so a call only reads it
    (``sq(acc, v)`` adding ``v * v`` into ``acc`` gives ``v`` back), and so
    does its inverse, which ``rev.uncall`` runs.  A parameter passed on to
    a call (or uncall) of one of ``functions`` is given back where that
    callee gives it back, at any depth; passed to any other op, it counts
    as changed.  A greatest fixpoint over the call graph's strongly
    connected components (``call_graph.components``), callees first: a
    recursion that only passes a parameter on gives it back, since each
    call that returns does."""
    callees = {
        name: [c.callee.string_value() for c in function.walk() if isinstance(c, CallOp | UncallOp)]
        for name, function in functions.items()
    }
    graph = {name: [c for c in found if c in functions] for name, found in callees.items()}
    members: dict[int, list[str]] = {}
    for name, component in components(graph).items():
        members.setdefault(component, []).append(name)
    given: dict[str, frozenset[int]] = {}
    for names in members.values():
        for name in names:
            given[name] = frozenset(range(_scalar_count(functions[name])))
        changed = True
        while changed:
            changed = False
            for name in names:
                found = _given_back(functions[name], given)
                changed |= found != given[name]
                given[name] = found
    return given


def _scalar_count(function: FuncOp) -> int:
    return len([a for a in function.body.block.args if is_state_type(a.type)]) if function.body.blocks else 0


def _given_back(function: FuncOp, given: Mapping[str, frozenset[int]]) -> frozenset[int]:
    """The scalar parameters ``function`` gives back, where each callee
    gives back ``given``'s."""
    returned = function.body.block.last_op if function.body.blocks else None
    if not isinstance(returned, ReturnOp):
        return frozenset()
    parameters = [a for a in function.body.block.args if is_state_type(a.type)]
    return frozenset(
        k
        for k, (parameter, value) in enumerate(zip(parameters, returned.operands))
        if _passed_through(value, given) is parameter
    )


def _passed_through(value: SSAValue | None, given: Mapping[str, frozenset[int]]) -> SSAValue | None:
    """The value ``value`` is, back through the calls and uncalls that give
    it back (``given``) and the ``rev.if``s both of whose branches do (a
    recursion's base case is a branch)."""
    while isinstance(value, OpResult):
        op, index = value.op, value.index
        if isinstance(op, CallOp | UncallOp) and index in given.get(op.callee.string_value(), frozenset()):
            value = op.scalar_args()[index]
        elif isinstance(op, IfOp) and all(
            _passed_through(_yielded(region, index), given) is region.block.args[index]
            for region in (op.then_region, op.else_region)
        ):
            value = op.operands[index]
        else:
            break
    return value


def _yielded(region: Region, index: int) -> SSAValue | None:
    """The value a branch yields at ``index``."""
    last = region.block.last_op
    return last.operands[index] if isinstance(last, YieldOp) else None


def argument_writes(module: ModuleOp) -> dict[str, tuple[Writes, ...]]:
    """Per function of ``module`` that has a body (a ``rev.func`` or a
    ``func.func``): how it may change each argument, by its own ops or by the functions it
    passes them to.  This is the one answer to which arrays a function
    writes: the interpreter's and the native code's overlap checks, the
    frontend's outputs, ``reversibilize``'s output arrays, the verifier's
    parallel loops and the lowering's ``noalias`` parameters all rest on it.

    A call of a function of the module writes what its callee writes; a
    load or ``memref.dim`` reads; a ``memref.cast`` is the array its uses
    write; an op of the reversible dialects writes
    what it says (``REVERSIBLE_DIALECTS``); any other op (a
    ``memref.store``, a call of a declared function, an op of lowered code)
    may write every reference it is given.  A write through a reference of
    unknown origin (``reference_origin``) may write every reference
    argument.  Writes are a least fixpoint over the call graph
    (from "none"), so that a call of a helper that only reads an array does
    not count as writing it; accumulations a greatest one (from "all"), so
    that a recursive accumulation stays one.

    The answer is kept while the module is unchanged
    (``revmlir.kept_answers``): inside a verification, the verifier of every
    function with a parallel loop that calls asks it of the same module.
    The frontend's outputs, the lowering's ``noalias`` parameters and its
    atomic accumulations (``parallel.shared_arguments``) ask it outside any
    block, and compute it."""
    return kept(_argument_writes, module)


def _argument_writes(module: ModuleOp) -> dict[str, tuple[Writes, ...]]:
    functions: dict[str, Function] = {
        op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp | func.FuncOp) and op.body.blocks
    }
    references = {
        name: frozenset(k for k, arg in enumerate(f.body.blocks[0].args) if is_reference_type(arg.type))
        for name, f in functions.items()
    }
    # per function, the uses of references by origin: an argument's
    # position, or None for those not followed (fresh memory is no argument)
    uses: dict[str, dict[int | None, list[ArgumentUse]]] = {}
    for name, function in functions.items():
        found = function_uses(function)
        uses[name] = {**{k: found.arguments[k] for k in references[name]}, None: found.unknown}

    def passed(use: ArgumentUse, positions: dict[str, frozenset[int]]) -> bool:
        """Whether ``use`` passes its array to a callee at one of ``positions``."""
        op, index = use
        if not isinstance(op, _CALLS):
            return False
        callee = positions.get(op.callee.string_value())
        return callee is not None and index in callee

    def fixpoint(own: Callable[[ArgumentUse], bool | None], least: bool) -> dict[str, frozenset[int]]:
        """Per function, the reference arguments one of whose uses keeps
        its array (``least``: from none) or all of whose uses do (from
        all); a use of unknown origin counts as one of every argument's.
        ``own`` answers for a use by itself, once, or is ``None`` where the
        answer is whether the use passes the array to a callee at a
        position found so far: only those are asked again each round."""
        quantifier = any if least else all
        answers: dict[str, dict[int, list[tuple[ArgumentUse, bool | None]]]] = {}
        for name in functions:
            unknown = [(use, own(use)) for use in uses[name][None]]
            answers[name] = {k: [(use, own(use)) for use in uses[name][k]] + unknown for k in references[name]}
        found = {name: frozenset[int]() if least else references[name] for name in functions}
        changed = True
        while changed:
            changed = False
            for name in functions:
                new = frozenset(
                    k
                    for k, kept_uses in answers[name].items()
                    if quantifier(passed(use, found) if answer is None else answer for use, answer in kept_uses)
                )
                if new != found[name]:
                    found[name], changed = new, True
        return found

    def calls_module(op: Operation) -> bool:
        return isinstance(op, _CALLS) and op.callee.string_value() in functions

    def writes(use: ArgumentUse) -> bool | None:
        op, index = use
        if calls_module(op):
            return None
        if isinstance(op, _READS) or isinstance(op, _SHAPES):
            return False
        if is_invertible_op(op):
            return op.operands[index] in op.written_memrefs()
        return op.dialect_name() not in REVERSIBLE_DIALECTS

    def accumulates(use: ArgumentUse) -> bool | None:
        op, index = use
        if isinstance(op, _SHAPES) or (is_invertible_op(op) and op.operands[index] in op.accumulated_memrefs()):
            return True
        return None if calls_module(op) else False

    written = fixpoint(writes, least=True)
    accumulating = fixpoint(accumulates, least=False)
    return {
        name: tuple(
            Writes.NONE if k not in written[name] else Writes.ACCUMULATES if k in accumulating[name] else Writes.OTHER
            for k in range(len(function.body.blocks[0].args))
        )
        for name, function in functions.items()
    }


def kept_argument_writes(module: ModuleOp) -> dict[str, tuple[Writes, ...]] | None:
    """``argument_writes(module)`` where the current ``ir_unchanged()``
    block has computed it already (``kept_answer``), else None."""
    return kept_answer(_argument_writes, module)


def written_arguments(module: ModuleOp) -> dict[str, frozenset[int]]:
    """Per function of ``module`` that has a body: the positions of the
    arguments its runs may write (``argument_writes``)."""
    return {name: written_positions(writes) for name, writes in argument_writes(module).items()}


def written_positions(writes: Sequence[Writes]) -> frozenset[int]:
    """The positions of the arguments of one function's ``argument_writes``
    that its runs may write."""
    return frozenset(k for k, how in enumerate(writes) if how is not Writes.NONE)


def interleaved_accumulation(module: ModuleOp, name: str, positions: Iterable[int]) -> TakeOp | None:
    """A ``rev.take`` that accumulates into an argument of function ``name``
    at one of ``positions``, or into an array the function passes on to a
    callee of the module, with more than its own update between it and its
    ``rev.put``; ``None`` where every such borrow is adjacent (the take,
    the ``rev.add``/``rev.sub`` updates and pure expressions, the put).

    ``Writes.ACCUMULATES`` says that runs sharing an array commute; it does
    not say that one run may reach the array through two of its own
    parameters.  Native code loads the element at the take and stores it at
    the put, so a borrow of the other parameter's element (or a call) open
    in between loses one update, where the interpreter finds the element
    borrowed twice.  An adjacent borrow has nothing open in between: the
    derived code (``y[j] += v``, the adjoint's gradient accumulations) is
    all so.  The search follows the call graph from ``name`` alone."""
    pending = [(name, k) for k in positions]
    seen = set(pending)
    while pending:
        callee, position = pending.pop()
        function = SymbolTable.lookup_symbol(module, callee)
        if not isinstance(function, FuncOp | func.FuncOp) or not function.body.blocks:
            continue  # a declaration: ``argument_writes`` calls it a write
        found = function_uses(function)
        for op, index in [*found.arguments[position], *found.unknown]:
            if isinstance(op, _CALLS):
                step = (op.callee.string_value(), index)
                if step not in seen:
                    seen.add(step)
                    pending.append(step)
            elif isinstance(op, TakeOp) and not _adjacent(op):
                return op
    return None


def _adjacent(take: TakeOp) -> bool:
    """Whether nothing but its own updates and pure expressions lies
    between ``take`` and the put of its accumulation."""
    found = take.accumulation()
    if found is None:
        return False
    updates, put = found
    op = take.next_op
    while op is not put:
        if op is None or not (op in updates or is_expression_op(op)):
            return False
        op = op.next_op
    return True
