"""Reverse-mode AD by reverse computing: building ``@f.adj``.

NiLang differentiates a reversible program by running its inverse on values
that carry a gradient (``GVar``, seed 000 appendix C): each instruction
uncomputes its target and, at the same time, moves gradient from the values it
wrote to the values it read.  No tape is needed, because the inverse recomputes
every intermediate value.

Here that is a source transformation.  The ``Adjointer`` is an ``Inverter``
(the same backward walk, the same on-demand recomputation of pure expressions)
that also keeps, for every float state version of the forward program, the SSA
value holding its gradient in the adjoint program.  Each op says how it is
differentiated (``DifferentiableOp.adjoint``, next to the op); pure expressions
are differentiated by a local reverse sweep with the derivative table of
``revmlir.ad.derivatives``.

``@f.adj`` takes ``f``'s arguments (holding ``f``'s outputs), then one
gradient per float (or log-number) scalar argument (the output adjoints); it
returns ``f``'s inputs, then the input adjoints.  Gradients are ordinary state
of the adjoint program: they are updated with ``rev.add``/``rev.neg``/
``rev.rot``…, created with ``anc.alloc`` of zero and discarded at the end of
their life with an unchecked ``anc.free``, so ``@f.adj`` is itself a verified
reversible function that runs on the interpreter and natively.

**Vector mode.**  ``@f.adjL`` (``L`` ≥ 2 *lanes*) carries ``L`` gradients per
value: ``L`` vector-Jacobian products (the rows of a Jacobian with few
outputs) in one backward run, which uncomputes the primal values once for all
of them.  Its arguments are ``f``'s, then lane 0's gradients (as ``@f.adj``
takes them), lane 1's, …; its results ``f``'s inputs, then lane 0's input
gradients, lane 1's, ….  An op's rule is a generator that yields where the
op's inverse step goes: the ``Adjointer`` runs every lane's rule up to that
point, emits the inverse once, then finishes every lane; region ops and calls
carry every lane at once (``DifferentiableOp.ADJOINT_OF_ALL_LANES``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    MemRefType,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Region,
    SSAValue,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.derived import Differentiator, add_sequence, derive_functions, lanes_suffix
from revmlir.dialects import anc, rev
from revmlir.errors import describe_op, describe_value
from revmlir.interfaces import DifferentiableOp, set_checks
from revmlir.semantics import is_expression_op, is_state_type, is_state_value

ADJOINT_SUFFIX = ".adj"


def adjoint_name(name: str, lanes: int = 1) -> str:
    """``@f`` → ``@f.adj`` (``@f.adj2`` with 2 lanes); deterministic, so
    FileCheck tests are stable."""
    return name + lanes_suffix(ADJOINT_SUFFIX, lanes)


def gradient_type(type: Attribute) -> Attribute | None:
    """The type of the gradient a value of ``type`` carries, ``None`` for none.

    Floats carry a float gradient; log numbers carry the gradient with respect
    to their stored logarithm; a complex ``z = x + iy`` carries the complex
    ``∂L/∂x + i ∂L/∂y`` (NiLang's convention: for holomorphic ``r = f(z)`` the
    rules read ``ḡz = ḡr · conj(f'(z))``); integers, indices and booleans
    carry none.
    A memref or stack of such elements carries a *shadow*: a memref (stack) of
    the same shape holding one gradient per element, updated in place as the
    elements are (GVar arrays, without interleaving values and gradients).
    """
    if isinstance(type, rev.LogType):
        return type.element_type
    if isinstance(type, AnyFloat | ComplexType):
        return type
    if isinstance(type, MemRefType):
        element = gradient_type(type.element_type)
        if element is None:
            return None
        return MemRefType(element, type.shape, type.layout, type.memory_space)
    if isinstance(type, anc.StackType):
        element = gradient_type(type.element_type)
        return None if element is None else anc.StackType(element)
    return None


def derivative_arguments(types: Sequence[Attribute], lanes: int = 1) -> list[Attribute]:
    """The argument types of ``@f.adj`` and ``@f.tan`` (``@f.adjL``,
    ``@f.tanL``) for ``@f``'s argument ``types``: those, then lane by lane
    the derivative of each that carries one."""
    return [*types, *(t for _ in range(lanes) for a in types if (t := gradient_type(a)) is not None)]


class AdjointError(PassFailedException):
    """A construct ``ad-adjoint`` does not differentiate, reported at its op."""


def unsupported(op: Operation, why: str) -> AdjointError:
    return AdjointError(f"{describe_op(op)} cannot be differentiated: {why}")


def _defining_node(value: SSAValue) -> Operation | Block:
    return value.block if isinstance(value, BlockArgument) else value.op  # type: ignore[union-attr]


def _gradient_name(value: SSAValue) -> str | None:
    return f"g_{value.name_hint}" if value.name_hint else None


@dataclass
class Adjointer(Differentiator):
    """Emits the adjoint of the code inside ``root``.

    ``gradients`` maps a forward float state version to the adjoint-side value
    holding its gradient at the insertion point, in the current ``lane`` (the
    walk goes backwards, so that is the gradient of the version *after* the
    forward code at this point).  ``request`` returns the name of the adjoint
    of a called function (and schedules it).
    """

    request: Callable[[str, Operation], str] | None = None
    _needs: dict[SSAValue, bool] = field(default_factory=dict[SSAValue, bool])
    _lane_gradients: list[dict[SSAValue, SSAValue]] = field(
        default_factory=list[dict[SSAValue, SSAValue]]
    )

    def __post_init__(self) -> None:
        self._lane_gradients = [{} for _ in range(self.lanes)]

    @property
    def gradients(self) -> dict[SSAValue, SSAValue]:
        return self._lane_gradients[self.lane]

    RULE = "adjoint"

    def apply_rule(self, op: Operation) -> bool:
        if not isinstance(op, DifferentiableOp):
            return False
        if op.ADJOINT_OF_ALL_LANES:
            op.adjoint(self)
            return True
        rules: list[Iterator[None]] = []
        for _ in self.each_lane():
            rule = op.adjoint(self)
            assert rule is not None, f"the adjoint rule of '{op.name}' is a generator"
            next(rule)  # the lane's updates that read the values after the op
            rules.append(rule)
        op.invert(self)
        for lane in self.each_lane():
            if next(rules[lane], _FINISHED) is not _FINISHED:
                raise AdjointError(f"internal error: the adjoint rule of '{op.name}' yields twice")
        return True

    def fail(self, op: Operation, why: str) -> AdjointError:
        return unsupported(op, why)

    # -- gradients of state values -------------------------------------------

    def gradient(self, value: SSAValue) -> SSAValue | None:
        """The gradient of forward ``value`` here; ``None`` if it carries none."""
        if gradient_type(value.type) is None:
            return None
        found = self.gradients.get(value)
        if found is None:
            raise AdjointError(
                f"internal error: no gradient for {describe_value(value)} where the "
                f"adjoint of {describe_op(self.current or self.root)} needs it"
            )
        return found

    def bind_gradient(self, forward: SSAValue, gradient: SSAValue) -> None:
        if not gradient.name_hint and (name := _gradient_name(forward)):
            gradient.name_hint = name
        self.gradients[forward] = gradient

    def new_gradient(self, type: Attribute) -> SSAValue:
        """A zero gradient (an ancilla), for a value whose forward life ends."""
        alloc = anc.AllocOp(self.const(0.0, type))
        return self.emit_op(alloc).results[0]

    def add_to_element(
        self, memref_value: SSAValue, indices: Sequence[SSAValue], contribution: SSAValue
    ) -> None:
        """``shadow[i…] += contribution`` for an element of a float array read
        by the forward program (the indices are recomputed at this point).

        The borrow is not checked at run time: the forward program read the
        element while the same elements were borrowed, so its own checks
        (of the primal arrays) already ruled out a shared read/write."""
        shadow = self.gradient(memref_value)
        assert shadow is not None
        where = [self.primal(i) for i in indices]
        take = rev.TakeOp(shadow, where)
        set_checks(take, False)
        element = self.emit(take)
        self.emit_op(rev.PutOp(self.emit(rev.AddOp(element, contribution)), shadow, where))

    def discard_gradient(self, gradient: SSAValue) -> None:
        """End a gradient's life: an unchecked ``anc.free`` against zero (the
        gradient of an ancilla is dropped when the ancilla is born)."""
        free = anc.FreeOp(gradient, self.const(0.0, gradient.type))
        free.attributes[anc.FreeOp.CHECK_ATTR] = UnitAttr()
        self.emit_op(free)

    # -- the local reverse sweep over an expression ----------------------------

    def wants(self, value: SSAValue) -> bool:
        """Whether gradient must flow into ``value``: it is a float state
        version, or an expression depending on one."""
        known = self._needs.get(value)
        if known is None:
            known = self._needs[value] = self._compute_needs(value)
        return known

    def _compute_needs(self, value: SSAValue) -> bool:
        type = value.type
        if is_state_value(value):
            return gradient_type(type) is not None
        if not (isinstance(value, OpResult) and is_expression_op(value.op)):
            return False  # an induction variable, a condition's argument, a reference
        if gradient_type(type) is None:
            return False  # integers and booleans are piecewise constant
        op = value.op
        if isinstance(op, memref.LoadOp):
            return True  # an element of a float array: its shadow gets the gradient
        return any(self.wants(o) for o in op.operands)

    def accumulate(self, seeds: Sequence[tuple[SSAValue, SSAValue]]) -> None:
        """Add each seed's gradient to the expression it belongs to.

        ``seeds`` pairs a forward value (read by the op being differentiated)
        with a contribution ``ḡ``.  The expression DAG under the seeds is swept
        backwards with the derivative table; contributions reaching the same
        state value are summed first (``y += x*x`` gives ``x`` the gradient
        ``2·x·ḡy``), then each state value's gradient is updated once with
        ``rev.add``.
        """
        from revmlir.ad.derivatives import derivatives

        pending: dict[SSAValue, SSAValue] = {}

        def add(value: SSAValue, contribution: SSAValue) -> None:
            old = pending.get(value)
            pending[value] = contribution if old is None else self.add(old, contribution)

        order: list[Operation] = []
        seen: set[Operation] = set()

        def visit(value: SSAValue) -> None:
            if not self.wants(value) or is_state_value(value):
                return
            assert isinstance(value, OpResult)
            if value.op in seen:
                return
            seen.add(value.op)
            for operand in value.op.operands:
                visit(operand)
            order.append(value.op)

        for value, contribution in seeds:
            if self.wants(value):
                visit(value)
                add(value, contribution)
        for op in reversed(order):
            g = pending.pop(op.results[0], None)
            if g is None:
                continue
            rule = derivatives.get(type(op))
            if rule is None:
                raise unsupported(op, f"'{op.name}' has no derivative rule")
            contributions = rule(self, op, g)
            for operand, contribution in zip(op.operands, contributions, strict=True):
                if contribution is not None and self.wants(operand):
                    add(operand, contribution)
        for value, contribution in pending.items():
            g = self.gradient(value)
            assert g is not None
            self.bind_gradient(value, self.emit(rev.AddOp(g, contribution)))

    # -- every lane's gradients at once -----------------------------------------

    def lane_gradients(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """The gradients of the ``values`` that carry one, lane by lane: the
        gradient half of a region's state, of a call's operands or results."""
        return [g for _ in self.each_lane() for v in values if (g := self.gradient(v)) is not None]

    def bind_lane_gradients(self, values: Sequence[SSAValue], gradients: Sequence[SSAValue]) -> None:
        """Bind the gradients of the ``values`` that carry one to
        ``gradients``, laid out lane by lane (as ``lane_gradients`` makes them)."""
        carrying = [v for v in values if gradient_type(v.type) is not None]
        self.bind_lane_by_lane(carrying, gradients, self.bind_gradient)

    # -- blocks and regions ---------------------------------------------------

    def adjoint_body(
        self, block: Block, state_args: Sequence[SSAValue], outputs: Sequence[SSAValue]
    ) -> list[SSAValue]:
        """Emit the adjoint of ``block``'s ops at the insertion point.

        ``outputs`` stand for the operands of the block's terminator, whose
        gradients are bound.  Returns the values standing for ``state_args``
        before the block ran (their gradients are bound).
        """
        terminator = block.last_op
        assert terminator is not None
        for value, output in zip(terminator.operands, outputs, strict=True):
            self.bind(value, output)
        self.differentiate(reversed(list(block.ops)[:-1]))
        return [self.lookup(a) for a in state_args]

    def captured_gradients(self, op: Operation) -> list[SSAValue]:
        """Float state values defined outside ``op`` that its regions read
        (directly or through outer expressions): their gradients must be
        carried through the adjoint region op as extra state."""
        found: dict[SSAValue, None] = {}
        visited: set[SSAValue] = set()

        def collect(value: SSAValue) -> None:
            if value in visited:
                return
            visited.add(value)
            if is_state_value(value):
                if gradient_type(value.type) is not None:
                    found[value] = None
            elif isinstance(value, OpResult) and is_expression_op(value.op):
                for operand in value.op.operands:
                    collect(operand)

        for inner in op.walk():
            if inner is op:
                continue
            for operand in inner.operands:
                if not op.is_ancestor(_defining_node(operand)):
                    collect(operand)
        return list(found)

    def carried_state(
        self, op: Operation, results: Sequence[SSAValue]
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """The state of the adjoint of region op ``op``: the primal values of
        its results, then lane by lane their gradients and the gradients of
        the outer values its regions read (those are returned second)."""
        captured = self.captured_gradients(op)
        values = [self.lookup(r) for r in results]
        return values + self.lane_gradients([*results, *captured]), captured

    def bind_carried(
        self,
        inputs: Sequence[SSAValue],
        new_results: Sequence[SSAValue],
        captured: Sequence[SSAValue],
    ) -> None:
        """Bind the results of an adjoint region op built on ``carried_state``."""
        for value, new in zip(inputs, new_results):
            self.bind(value, new)
        self.bind_lane_gradients([*inputs, *captured], new_results[len(inputs) :])

    def adjoint_region(self, region: Region, captured: Sequence[SSAValue]) -> Region:
        """A new region computing the adjoint of state-carrying ``region``.

        Block arguments: the forward block's non-state arguments (an induction
        variable), what the forward region yields, then lane by lane the
        gradients of those values and of ``captured``.  It yields the forward
        block's state arguments, then lane by lane their gradients and those
        of ``captured``.
        """
        owner = region.parent_op()
        assert owner is not None
        forward = region.block
        state_args = owner.state_block_args(region)  # type: ignore[attr-defined]
        fixed = [a for a in forward.args if a not in state_args]
        terminator = forward.last_op
        assert terminator is not None
        yielded = [*terminator.operands, *captured]
        types = [a.type for a in fixed] + [v.type for v in terminator.operands]
        block = Block(arg_types=[*types, *derivative_arguments([v.type for v in yielded], self.lanes)[len(yielded) :]])
        for old, new in zip([*fixed, *terminator.operands], block.args):
            new.name_hint = old.name_hint
        for old, new in zip(fixed, block.args):
            self.bind(old, new)
        outputs = block.args[len(fixed) : len(types)]
        self.bind_lane_gradients(yielded, block.args[len(types) :])
        with self._at_end(block):
            results = self.adjoint_body(forward, state_args, outputs)
            gradients = self.lane_gradients([*state_args, *captured])
            self.insert(rev.YieldOp(*results, *gradients), like=terminator)
        return Region(block)

    def clone_condition(self, region: Region, extra: Sequence[Attribute]) -> Region:
        """A copy of condition ``region`` taking ``extra`` trailing arguments
        (the gradients the adjoint op carries; conditions ignore them)."""
        return self.clone_region(region, extra)

    # -- calls ------------------------------------------------------------------

    def adjoint_of(self, callee: str, call: Operation) -> str:
        if self.request is None:
            raise unsupported(call, "calls need the module (run ad-adjoint)")
        return self.request(callee, call)


# ---------------------------------------------------------------------------
# Functions and modules
# ---------------------------------------------------------------------------


def adjoint_function(
    func: rev.FuncOp,
    name: str,
    request: Callable[[str, Operation], str] | None = None,
    lanes: int = 1,
) -> rev.FuncOp:
    """``@name``: the adjoint of ``func`` (already free of routines and
    ``rev.inv``) with ``lanes`` gradients per value.  Arguments: ``func``'s
    arguments holding its outputs, then lane by lane one gradient per
    argument that carries one (``gradient_type``), in argument order: a value
    for a scalar, a shadow for a float memref or stack, which is updated in
    place from the output's gradient to the input's.  Results: ``func``'s
    inputs, then lane by lane the gradients of the scalar ones."""
    forward = func.body.block
    types = [a.type for a in forward.args]
    block = Block(arg_types=derivative_arguments(types, lanes))
    adjointer = Adjointer(func, Builder(InsertPoint.at_end(block)), request=request, lanes=lanes)
    state_args: list[SSAValue] = []
    outputs: list[SSAValue] = []
    for old, new in zip(forward.args, block.args):
        new.name_hint = old.name_hint
        if is_state_type(old.type):
            state_args.append(old)
            outputs.append(new)
        else:
            adjointer.bind(old, new)
    terminator = forward.last_op
    assert terminator is not None
    final = dict(zip(state_args, terminator.operands, strict=True))
    carrying = [a for a in forward.args if gradient_type(a.type) is not None]
    for old, new in zip(carrying * lanes, block.args[len(types) :], strict=True):
        new.name_hint = _gradient_name(old)
    adjointer.bind_lane_gradients([final.get(a, a) for a in forward.args], block.args[len(types) :])
    results = adjointer.adjoint_body(forward, state_args, outputs)
    adjointer.insert(rev.ReturnOp(*results, *adjointer.lane_gradients(state_args)), like=terminator)
    adjoint = rev.FuncOp(name, [a.type for a in block.args], Region(block))
    adjoint.attributes.update(func.attributes)
    adjoint.location = func.location
    return adjoint


def generate_adjoints(module: ModuleOp, names: Sequence[str], lanes: int = 1) -> list[rev.FuncOp]:
    """Add ``@f.adj`` (``@f.adjL`` with ``lanes`` = L ≥ 2) for each named
    ``@f`` and for every function their adjoints call (recursion included),
    right after the primal function.  Existing adjoints are kept.
    ``rev.uncall @g`` is differentiated through ``@g.inv``, which is added
    when missing."""
    build = partial(adjoint_function, lanes=lanes)
    return derive_functions(module, names, lanes_suffix(ADJOINT_SUFFIX, lanes), build, _missing)


GRADIENT_SUFFIX = ".grad"


def generate_gradients(module: ModuleOp, names: Sequence[str]) -> list[rev.FuncOp]:
    """Add ``@f.grad`` for each named ``@f``: ``rev.call @f`` followed by
    ``rev.call @f.adj`` in one function, with ``@f.adj``'s signature.  Given
    the inputs and the output gradients (the seeds), it returns the inputs
    (up to rounding) and the input gradients: a whole gradient in one call,
    with nothing kept between the forward and the backward run."""
    generate_adjoints(module, names)
    existing = {f.sym_name.data for f in module.ops if isinstance(f, rev.FuncOp)}
    return [
        add_sequence(module, name + GRADIENT_SUFFIX, name, range(_arity(module, name)), adjoint_name(name))
        for name in names
        if name + GRADIENT_SUFFIX not in existing
    ]


def _arity(module: ModuleOp, name: str) -> int:
    func = SymbolTable.lookup_symbol(module, name)
    assert isinstance(func, rev.FuncOp)
    return len(func.function_type.inputs.data)


_FINISHED = object()


def _missing(where: Operation | None, message: str) -> AdjointError:
    return AdjointError(message) if where is None else unsupported(where, message)
