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

import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    IndexType,
    IntegerAttr,
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

from revmlir.ad.derivatives import derivatives
from revmlir.ad.derived import (
    Differentiator,
    ModuleFunctions,
    add_sequence,
    derived_attributes,
    lanes_suffix,
    prepare,
)
from revmlir.ad.parallel import (
    share_carried_gradients,
    unshareable_gradients,
    unsummable_accumulations,
    unsummable_gradients,
)
from revmlir.collector import take_apart
from revmlir.dialects import anc, rev
from revmlir.dialects.primitives import ApplyOp, has_shadow
from revmlir.errors import AdjointError, describe_op, describe_value, unsupported
from revmlir.interfaces import DifferentiableOp, set_checks
from revmlir.ir_utils import nested_ops
from revmlir.naming import FORGETFUL_ATTR
from revmlir.parallel import can_accumulate_atomically, unsummable_calls
from revmlir.semantics import Writes, argument_writes, gradient_type, is_expression_op, is_state_type, is_state_value

ADJOINT_SUFFIX = ".adj"

AdjointRequest = Callable[[str, Operation, frozenset[int]], tuple[str, frozenset[int]]]
"""``request(callee, call, zeros)``: the name of the adjoint a call of
``@callee`` calls when its gradients at the positions ``zeros`` are known
zero (built or scheduled), and the positions it leaves zero."""


LOSS_SUFFIX = ".loss"


def adjoint_name(name: str, lanes: int = 1, loss: int | None = None) -> str:
    """``@f`` → ``@f.adj`` (``@f.adj2`` with 2 lanes, ``@f.adj.loss0``
    seeded at argument 0 only); deterministic, so FileCheck tests are
    stable."""
    name += lanes_suffix(ADJOINT_SUFFIX, lanes)
    return name if loss is None else f"{name}{LOSS_SUFFIX}{loss}"


def derivative_arguments(types: Sequence[Attribute], lanes: int = 1) -> list[Attribute]:
    """The argument types of ``@f.adj`` and ``@f.tan`` (``@f.adjL``,
    ``@f.tanL``) for ``@f``'s argument ``types``: those, then lane by lane
    the derivative of each that carries one."""
    return [*types, *(t for _ in range(lanes) for a in types if (t := gradient_type(a)) is not None)]


def _defining_node(value: SSAValue) -> Operation | Block:
    return value.block if isinstance(value, BlockArgument) else value.op


def _gradient_name(value: SSAValue) -> str | None:
    return f"g_{value.name_hint}" if value.name_hint else None


def _unsummable_read(array: str | None) -> str:
    """Why the gradient of a complex ``array`` read at a shared element
    cannot be summed over a parallel loop."""
    name = array or "the array"
    return (
        f"{name} has complex elements and the parallel loop reads {name}[…] at an index other than its own, "
        f"so every iteration reading that element adds to its gradient: a shared sum holds floats or integers; "
        f"pass {name}'s real and imaginary parts as two float arrays, or read only the loop's own {name}[i, …]"
    )


def _refuse_unsummable_calls(module: ModuleOp, adjoints: Sequence[rev.FuncOp]) -> None:
    """Refuse a parallel loop of ``adjoints`` that passes a complex gradient
    whole to a callee's adjoint that adds to it (its callee reads the
    array at elements that iterations share).  Whether the callee's
    adjoint adds to it is known once every adjoint is built, from the
    module's ``argument_writes``: the verifier's own test, which otherwise
    failed on the derived adjoint as an internal error.  The module is
    asked only where a parallel loop passes such an array to a call, as
    the analysis is kept for the verifier only while the IR is unchanged."""
    loops = [
        loop
        for function in adjoints
        for loop in function.walk()
        if isinstance(loop, rev.ForOp)
        and loop.is_parallel
        and any(
            isinstance(op, rev.CallOp | rev.UncallOp)
            and any(isinstance(a.type, MemRefType) and not can_accumulate_atomically(a) for a in op.args)
            for op in loop.body.walk()
        )
    ]
    if not loops:
        return
    writes = argument_writes(module)

    def call_writes(call: rev.CallOp | rev.UncallOp) -> Sequence[Writes]:
        return writes.get(call.callee.string_value(), (Writes.NONE,) * len(call.args))

    for loop in loops:
        for call, gradient in unsummable_calls(loop, call_writes):
            hint = gradient.name_hint
            raise unsupported(call, _unsummable_read(hint[2:] if hint and hint.startswith("g_") else None))


@dataclass
class Adjointer(Differentiator):
    """Emits the adjoint of the code inside ``root``.

    ``gradients`` maps a forward float state version to the adjoint-side value
    holding its gradient at the insertion point, in the current ``lane`` (the
    walk goes backwards, so that is the gradient of the version *after* the
    forward code at this point).  ``request`` returns the name of the adjoint
    of a called function, specialised for the call's zero gradients, and
    what it leaves zero (``AdjointRequest``).  Known zeros — ``zeros``,
    ``zero_shadows`` and the symbolic zeros not yet made into state — let
    the rules leave out what could only add zero (design decision 18).
    """

    request: AdjointRequest | None = None
    zero_shadows: set[SSAValue] = field(default_factory=set[SSAValue])
    """Shadows (arrays of gradients) known to hold only zeros at the
    insertion point.  Unlike ``zeros``, a fact about a place in the program:
    any op emitted with a shadow as operand may write it, and forgets it."""
    _needs: dict[SSAValue, bool] = field(default_factory=dict[SSAValue, bool])
    _lane_gradients: list[dict[SSAValue, SSAValue]] = field(default_factory=list[dict[SSAValue, SSAValue]])
    _unmade: set[SSAValue] = field(default_factory=set[SSAValue])
    """Symbolic zero gradients (constants) not made into state yet."""
    _region_entry: _ZeroFacts | None = None
    _region_exits: list[_ZeroFacts] = field(default_factory=list["_ZeroFacts"])

    def __post_init__(self) -> None:
        self._lane_gradients = [{} for _ in range(self.lanes)]
        # through a weak reference: the builder, which the adjointer holds,
        # would otherwise hold it in a cycle, and with it the IR it read,
        # until the collector ran (an adjointer gone knows no shadows)
        adjointer = weakref.ref(self)

        def forget_written_shadows(op: Operation) -> None:
            if (alive := adjointer()) is not None:
                alive.forget_written_shadows(op)

        self.builder.operation_insertion_handler.append(forget_written_shadows)

    def forget_written_shadows(self, op: Operation) -> None:
        """Any op emitted with a shadow as operand may write it."""
        if self.zero_shadows:
            self.zero_shadows.difference_update(op.operands)

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

    def gradient_type(self, type: Attribute) -> Attribute | None:
        return gradient_type(type)

    # -- gradients of state values -------------------------------------------

    def gradient(self, value: SSAValue) -> SSAValue | None:
        """The gradient of forward ``value`` here, as state (an ancilla made
        for it now if it was a symbolic zero); ``None`` if it carries none."""
        found = self.gradient_value(value)
        if found is None or found not in self._unmade:
            return found
        made = self.emit_op(anc.AllocOp(found)).results[0]
        self.zeros.add(made)
        self.bind_gradient(value, made)
        return made

    def gradient_value(self, value: SSAValue) -> SSAValue | None:
        """The gradient of forward ``value`` here, for rules that only read
        it or pass it on: possibly a symbolic zero not made into state yet
        (``new_gradient``); ``None`` if it carries none."""
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
        # a symbolic zero stays unnamed: the ancilla made from it takes the name
        if not gradient.name_hint and gradient not in self._unmade and (name := _gradient_name(forward)):
            gradient.name_hint = name
        self.gradients[forward] = gradient

    def new_gradient(self, type: Attribute) -> SSAValue:
        """A zero gradient, for a value whose forward life ends: a symbolic
        zero, made into state (an ancilla) only where something adds to it
        or a region, call or return carries it (``gradient``).  Until then
        it costs nothing and sits between no inverse pairs."""
        zero = self.const(0.0, type)
        self._unmade.add(zero)
        return zero

    def zero_gradient_state(self, type: Attribute) -> SSAValue:
        """A zero gradient made into state at once (an ancilla), for a
        gradient that an op consumes right away."""
        gradient = self.emit_op(anc.AllocOp(self.const(0.0, type))).results[0]
        self.zeros.add(gradient)
        return gradient

    def is_zero(self, value: SSAValue) -> bool:
        """Whether the gradient ``value`` (a scalar, or a shadow here) is
        known to be zero."""
        return value in self.zeros or value in self.zero_shadows

    def add_to_element(self, memref_value: SSAValue, indices: Sequence[SSAValue], contribution: SSAValue) -> None:
        """``shadow[i…] += contribution`` for an element of a float array read
        by the forward program (the indices are recomputed at this point).

        The borrow is not checked at run time: the forward program read the
        element while the same elements were borrowed, so its own checks
        (of the primal arrays) already ruled out a shared read/write."""
        if contribution in self.zeros:
            return
        shadow = self.gradient(memref_value)
        assert shadow is not None
        where = [self.primal(i) for i in indices]
        take = rev.TakeOp(shadow, where)
        set_checks(take, False)
        element = self.emit(take)
        self.emit_op(rev.PutOp(self.emit(rev.AddOp(element, contribution)), shadow, where))

    def take_gradient(self, shadow: SSAValue, indices: Sequence[SSAValue], like: Operation) -> SSAValue:
        """Borrow the gradient of an element from its shadow (the adjoint of
        putting the element back): zero when the shadow is."""
        zero = shadow in self.zero_shadows
        element = self.insert(rev.TakeOp(shadow, indices), like=like).result
        if zero:
            self.zero_shadows.add(shadow)
            self.zeros.add(element)
        return element

    def put_gradient(self, gradient: SSAValue, shadow: SSAValue, indices: Sequence[SSAValue], like: Operation) -> None:
        """Return an element's gradient to its shadow (the adjoint of taking
        the element): the shadow stays zero if it was and the gradient is."""
        zero = shadow in self.zero_shadows and gradient in self.zeros
        self.insert(rev.PutOp(gradient, shadow, indices), like=like)
        if zero:
            self.zero_shadows.add(shadow)

    def new_shadow(self, type: MemRefType, sizes: Sequence[SSAValue], like: Operation) -> SSAValue:
        """The zero gradient of an ancilla array (an array of zeros), for an
        array whose forward life ends."""
        shadow = self.insert(anc.ArrayAllocOp(type, sizes), like=like).result
        self.zero_shadows.add(shadow)
        return shadow

    def discard_shadow(self, shadow: SSAValue, sizes: Sequence[SSAValue], like: Operation) -> None:
        """End an ancilla array's gradient, unchecked: the array is born
        holding zeros, whatever the gradient says."""
        free = anc.ArrayFreeOp(shadow, sizes)
        set_checks(free, False)
        self.insert(free, like=like)

    def discard_gradient(self, gradient: SSAValue) -> None:
        """End a gradient's life: an unchecked ``anc.free`` against zero (the
        gradient of an ancilla is dropped when the ancilla is born); a
        symbolic zero never made into state ends without code."""
        if gradient in self._unmade:
            return
        free = anc.FreeOp(gradient, self.const(0.0, gradient.type))
        free.attributes[anc.FreeOp.CHECK_ATTR] = UnitAttr()
        # the gradient is not zero in general, so the adjoint forgets it and
        # has no inverse (docs/design.md, decision 28)
        free.attributes[FORGETFUL_ATTR] = UnitAttr()
        self.emit_op(free)

    def assume_zero(self, func: rev.FuncOp, outputs: Sequence[SSAValue], zeros: frozenset[int], checked: bool) -> None:
        """Know the gradients of ``outputs`` (``func``'s arguments as it
        returns them, lane by lane, those carrying a gradient) at the
        positions ``zeros`` zero.  ``checked``: first free each scalar one
        against zero (checked at run time) and replace it by a zero
        ancilla, each element of a shadow likewise (a loop nest), so a
        nonzero one is reported — and, with run-time checks off, zeroed."""
        saved, self.current = self.current, func
        try:
            for position in sorted(zeros):
                value = outputs[position]
                self.lane = position // (len(outputs) // self.lanes)
                g = self.gradient(value)
                assert g is not None
                if isinstance(g.type, MemRefType):
                    if checked:
                        self._zero_elements(g)
                    self.zero_shadows.add(g)
                elif isinstance(g.type, anc.StackType):
                    continue
                elif checked:
                    self.emit_op(anc.FreeOp(g, self.const(0.0, g.type)))
                    self.bind_gradient(value, self.new_gradient(g.type))
                else:
                    self.zeros.add(g)
        finally:
            self.current, self.lane = saved, 0

    def _zero_elements(self, shadow: SSAValue) -> None:
        """Free every element of ``shadow`` against zero and put a zero
        ancilla in its place."""
        assert isinstance(shadow.type, MemRefType)
        index = IndexType()
        start, step = (self.emit(arith.ConstantOp(IntegerAttr(v, index))) for v in (0, 1))

        def level(indices: list[SSAValue]) -> None:
            if len(indices) == shadow.type.get_num_dims():
                take = rev.TakeOp(shadow, indices)
                set_checks(take, False)
                element = self.emit(take)
                self.emit_op(anc.FreeOp(element, self.const(0.0, element.type)))
                zero = self.emit(anc.AllocOp(self.const(0.0, element.type)))
                self.emit_op(rev.PutOp(zero, shadow, indices))
                return
            dimension = self.emit(arith.ConstantOp(IntegerAttr(len(indices), index)))
            size = self.emit(memref.DimOp(shadow, dimension))
            body = Block(arg_types=[index])
            with self._at_end(body):
                level([*indices, body.args[0]])
                self.emit_op(rev.YieldOp())
            self.emit_op(rev.ForOp(start, size, step, [], Region(body)))

        level([])

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
        if isinstance(op, ApplyOp) and any(has_shadow(o.type) for o in op.operands):
            return True  # a primitive of float arrays: their shadows get the gradient
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
        pending: dict[SSAValue, SSAValue] = {}

        def add(value: SSAValue, contribution: SSAValue) -> None:
            old = pending.get(value)
            pending[value] = contribution if old is None else self.add(old, contribution)

        order: list[Operation] = []
        seen: set[Operation] = set()
        for value, contribution in seeds:
            if self.wants(value) and contribution not in self.zeros:
                self._expression_ops(value, seen, order)
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
                if contribution is not None and contribution not in self.zeros and self.wants(operand):
                    add(operand, contribution)
        for value, contribution in pending.items():
            g = self.gradient(value)
            assert g is not None
            self.bind_gradient(value, self.emit(rev.AddOp(g, contribution)))

    def _expression_ops(self, value: SSAValue, seen: set[Operation], order: list[Operation]) -> None:
        """Append to ``order`` the ops not ``seen`` of the expression under
        ``value`` that gradient flows through, each after those it reads.
        A method, not a closure calling itself: that is a cycle (the
        function, its cell) which held the adjointer and the IR it reads
        until the collector ran."""
        if not self.wants(value) or is_state_value(value):
            return
        assert isinstance(value, OpResult)
        if value.op in seen:
            return
        seen.add(value.op)
        for operand in value.op.operands:
            self._expression_ops(operand, seen, order)
        order.append(value.op)

    # -- every lane's gradients at once -----------------------------------------

    def lane_gradients(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """The gradients of the ``values`` that carry one, lane by lane, as
        state: the gradient half of a region's state, of a call's operands
        or results."""
        return [g for _ in self.each_lane() for v in values if (g := self.gradient(v)) is not None]

    def lane_gradient_values(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """``lane_gradients`` for reading only (``gradient_value``)."""
        return [g for _ in self.each_lane() for v in values if (g := self.gradient_value(v)) is not None]

    def bind_lane_gradients(self, values: Sequence[SSAValue], gradients: Sequence[SSAValue]) -> None:
        """Bind the gradients of the ``values`` that carry one to
        ``gradients``, laid out lane by lane (as ``lane_gradients`` makes them)."""
        carrying = [v for v in values if gradient_type(v.type) is not None]
        self.bind_lane_by_lane(carrying, gradients, self.bind_gradient)

    # -- blocks and regions ---------------------------------------------------

    def adjoint_body(self, block: Block, state_args: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> list[SSAValue]:
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
        for inner in op.walk():
            if inner is op:
                continue
            for operand in inner.operands:
                if not op.is_ancestor(_defining_node(operand)):
                    _collect_float_state(operand, visited, found)
        return list(found)

    def carried_state(self, op: Operation, results: Sequence[SSAValue]) -> tuple[list[SSAValue], list[SSAValue]]:
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

    def adjoint_region_op(
        self,
        op: Operation,
        inputs: Sequence[SSAValue],
        results: Sequence[SSAValue],
        build: Callable[[list[SSAValue], list[SSAValue]], Operation],
        loop: bool,
    ) -> None:
        """Emit the adjoint of region op ``op`` (its state ``inputs`` and
        ``results``): ``build(state, captured)`` makes the adjoint op on
        ``carried_state``, its regions made by ``adjoint_region``.  The
        adjoint of a parallel loop carries no state: the gradients it would
        carry are shared sums (``revmlir.ad.parallel``).

        The gradients and shadows known zero where the op starts are
        assumed zero where each adjoint region starts.  A branch takes that
        as it is; a loop body runs again after it ends, so what it assumed
        must still be zero at its end: when it is not, the regions are built
        again assuming less, until the assumptions hold (each round drops at
        least one, so a loop whose body changes nothing is built once)."""
        state, captured = self.carried_state(op, results)
        count = len(results)
        entry = self._zero_facts(state[count:])
        assumed = entry
        saved = self._region_entry, self._region_exits
        try:
            while True:
                self._region_entry, self._region_exits = assumed, []
                adjoint = build(state, captured)
                held = _ZeroFacts.common(self._region_exits)
                if not loop or assumed.within(held):
                    break
                assumed = assumed.meet(held)
                # the round built is dropped, never inserted: its ops are on
                # the use lists of the values they read until it is erased
                adjoint.erase()
        finally:
            self._region_entry, self._region_exits = saved
        self.insert(adjoint, like=op)
        results = list(adjoint.results)
        if isinstance(adjoint, rev.ForOp) and adjoint.is_parallel and (shared := unsummable_accumulations(adjoint)):
            raise unsupported(shared[0], self._unsummable_read(shared[0].memref))
        if isinstance(adjoint, rev.ForOp) and adjoint.is_parallel and results:
            if unsummable := unsummable_gradients(adjoint):
                raise unsupported(
                    op,
                    f"the gradient of an outer complex scalar it reads ({_names(captured, unsummable)}) "
                    "cannot be summed over the parallel loop's iterations (a shared sum holds floats "
                    "or integers); pass its real and imaginary parts as two floats instead",
                )
            if unshareable := unshareable_gradients(adjoint):
                raise unsupported(
                    op,
                    f"the gradient of an outer scalar it reads ({_names(captured, unshareable)}) would be "
                    "summed inside a region of the parallel loop's body; read a copy made in the body "
                    "instead (b = rv.ancilla(a) … rv.free(b, a))",
                )
            results = share_carried_gradients(adjoint)
        self.bind_carried(inputs, results, captured)
        after = assumed if loop else held.meet(entry)
        self.zeros.update(results[count + i] for i in after.gradients)
        self.zero_shadows = set(after.shadows)

    def _unsummable_read(self, shadow: SSAValue) -> str:
        """Why the gradient ``shadow`` of a complex array read at a shared
        element cannot be summed over a parallel loop, in the array's name."""
        primal = next((value for value, gradient in self.gradients.items() if gradient is shadow), shadow)
        return _unsummable_read(primal.name_hint)

    def _zero_facts(self, gradients: Sequence[SSAValue]) -> _ZeroFacts:
        """What is zero here: which of a region op's ``gradients``, and
        which shadows."""
        return _ZeroFacts(
            frozenset(i for i, g in enumerate(gradients) if g in self.zeros), frozenset(self.zero_shadows)
        )

    def adjoint_region(self, region: Region, captured: Sequence[SSAValue]) -> Region:
        """A new region computing the adjoint of state-carrying ``region``.

        Block arguments: the forward block's non-state arguments (an induction
        variable), what the forward region yields, then lane by lane the
        gradients of those values and of ``captured``.  It yields the forward
        block's state arguments, then lane by lane their gradients and those
        of ``captured``.  Inside ``adjoint_region_op`` it starts from the
        zeros assumed there and reports those at its end.
        """
        owner = region.parent_op()
        assert owner is not None
        forward = region.block
        state_args = owner.state_block_args(region)
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
        carried = block.args[len(types) :]
        self.bind_lane_gradients(yielded, carried)
        entry = self._region_entry or _ZeroFacts(frozenset(), frozenset())
        self.zeros.update(carried[i] for i in entry.gradients)
        outer, self.zero_shadows = self.zero_shadows, set(entry.shadows)
        try:
            with self._at_end(block):
                results = self.adjoint_body(forward, state_args, outputs)
                gradients = self.lane_gradients([*state_args, *captured])
                self._region_exits.append(self._zero_facts(gradients))
                self.insert(rev.YieldOp(*results, *gradients), like=terminator)
        finally:
            self.zero_shadows = outer
        return Region(block)

    def clone_condition(self, region: Region, extra: Sequence[Attribute]) -> Region:
        """A copy of condition ``region`` taking ``extra`` trailing arguments
        (the gradients the adjoint op carries; conditions ignore them)."""
        return self.clone_region(region, extra)

    # -- calls ------------------------------------------------------------------

    def adjoint_of(self, callee: str, call: Operation, zeros: frozenset[int]) -> tuple[str, frozenset[int]]:
        """The adjoint a call of ``@callee`` calls when its gradients at
        ``zeros`` are zero, and the positions whose gradients it leaves zero."""
        if self.request is None:
            raise unsupported(call, "calls need the module (run ad-adjoint)")
        return self.request(callee, call, zeros)

    def note_zeros_after(
        self,
        values: Sequence[SSAValue],
        gradients: Sequence[SSAValue],
        results: Sequence[SSAValue],
        exits: frozenset[int],
    ) -> None:
        """After a call of an adjoint on ``gradients`` (``lane_gradients``
        of ``values``, shadows updated in place, scalars' new gradients
        among ``results``): the positions ``exits`` are zero again."""
        carrying = [v for v in values if gradient_type(v.type) is not None] * self.lanes
        scalars = iter(results)
        for position, (value, g) in enumerate(zip(carrying, gradients, strict=True)):
            new = next(scalars) if is_state_type(value.type) else None
            if position not in exits:
                continue
            if new is not None:
                self.zeros.add(new)
            elif isinstance(g.type, MemRefType):
                self.zero_shadows.add(g)


def _collect_float_state(value: SSAValue, visited: set[SSAValue], found: dict[SSAValue, None]) -> None:
    """Add to ``found`` the float state values ``value`` is or reads
    through expressions, the values ``visited`` left out (a function, not a
    closure calling itself: see ``Adjointer._expression_ops``)."""
    if value in visited:
        return
    visited.add(value)
    if is_state_value(value):
        if gradient_type(value.type) is not None:
            found[value] = None
    elif isinstance(value, OpResult) and is_expression_op(value.op):
        for operand in value.op.operands:
            _collect_float_state(operand, visited, found)


# ---------------------------------------------------------------------------
# Functions and modules
# ---------------------------------------------------------------------------


def adjoint_function(
    func: rev.FuncOp,
    name: str,
    request: AdjointRequest | None = None,
    lanes: int = 1,
    zeros: frozenset[int] = frozenset(),
    checked: bool = False,
) -> tuple[rev.FuncOp, frozenset[int]]:
    """``@name``: the adjoint of ``func`` (already free of routines and
    ``rev.inv``) with ``lanes`` gradients per value.  Arguments: ``func``'s
    arguments holding its outputs, then lane by lane one gradient per
    argument that carries one (``gradient_type``), in argument order: a value
    for a scalar, a shadow for a float memref or stack, which is updated in
    place from the output's gradient to the input's.  Results: ``func``'s
    inputs, then lane by lane the gradients of the scalar ones.

    The gradients at the positions ``zeros`` (among the gradient arguments)
    are zero on entry, and the adjoint leaves out the updates they would
    feed: ``checked`` (for entry points) frees each against zero first, so
    that run-time checks report a nonzero one; otherwise the caller knows
    them zero.  Also returned: the positions whose input gradients are
    known zero when it returns (zeros a caller may keep)."""
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
    carrying = [a for a in forward.args if gradient_type(a.type) is not None] * lanes
    gradient_args = block.args[len(types) :]
    for old, new in zip(carrying, gradient_args, strict=True):
        new.name_hint = _gradient_name(old)
    adjointer.bind_lane_gradients([final.get(a, a) for a in forward.args], gradient_args)
    adjointer.assume_zero(func, [final.get(a, a) for a in carrying], zeros, checked)
    results = adjointer.adjoint_body(forward, state_args, outputs)
    returned = adjointer.lane_gradients(state_args)
    adjointer.insert(rev.ReturnOp(*results, *returned), like=terminator)
    adjoint = rev.FuncOp(name, [a.type for a in block.args], Region(block))
    adjoint.attributes.update(derived_attributes(func, name))
    adjoint.location = func.location
    scalars = iter(returned)
    exits = frozenset(
        position
        for position, (arg, shadow) in enumerate(zip(carrying, gradient_args, strict=True))
        if (next(scalars) in adjointer.zeros if is_state_type(arg.type) else shadow in adjointer.zero_shadows)
    )
    return adjoint, exits


def zeros_suffix(zeros: frozenset[int]) -> str:
    """``.zero_1_3`` for an adjoint whose gradient arguments 1 and 3 are
    zero on entry (a callee's adjoint specialised for its call), nothing
    when none is."""
    return ".zero_" + "_".join(map(str, sorted(zeros))) if zeros else ""


def _refuse_reverse_over_forgetful(callee: rev.FuncOp, call: Operation) -> None:
    """An adjoint inverts every op it passes, so a call's adjoint needs the
    callee's inverse; a callee that forgets state (an adjoint dropping the
    gradients of its ancillas at their birth, decision 28) has none.  Said
    at the call that needs it, with what the callee forgets: reported at the
    forgetting free alone, the error did not say why an inverse was wanted."""
    if FORGETFUL_ATTR in callee.attributes:
        forgets = f"@{callee.sym_name.data} forgets state as a whole"
    else:
        op = next((op for op in callee.walk() if FORGETFUL_ATTR in op.attributes and op is not callee), None)
        if op is None:
            return
        forgets = f"{describe_op(op)} forgets the value it frees"
    raise AdjointError(
        f"{describe_op(call)}: its adjoint needs the inverse of @{callee.sym_name.data}, which has none: "
        f"{forgets} (reverse mode over a derived function that drops gradients, docs/design.md decision 28; "
        "forward mode over an adjoint, as rv.hvp and rv.hessian build, has no such limit)"
    )


@dataclass
class _Adjoints:
    """The adjoints a module gets while differentiating.  A call whose
    gradients are partly known zero calls an adjoint specialised for them
    (``@g.adj.zero_…``), and what that adjoint leaves zero is known to the
    caller afterwards, so adjoints are built on request, depth first, each
    specialisation once (a recursive call, while its adjoint is being built,
    learns nothing)."""

    functions: ModuleFunctions
    lanes: int
    exits: dict[str, frozenset[int]] = field(default_factory=dict[str, frozenset[int]])
    specialised: set[str] = field(default_factory=set[str])

    def request(
        self, callee: str, call: Operation | None, zeros: frozenset[int] = frozenset()
    ) -> tuple[str, frozenset[int]]:
        name = adjoint_name(callee, self.lanes) + zeros_suffix(zeros)
        if zeros:
            self.specialised.add(name)
        return name, self.build(callee, call, name, zeros, checked=False)

    def build(
        self, callee: str, call: Operation | None, name: str, zeros: frozenset[int], checked: bool
    ) -> frozenset[int]:
        """Add ``@name`` unless the module has it; what it leaves zero."""
        if name in self.exits or name in self.functions.funcs:
            return self.exits.get(name, frozenset())
        self.exits[name] = frozenset()
        primal = self.functions.primal(callee, call)
        if call is not None:
            _refuse_reverse_over_forgetful(primal, call)
        prepared = prepare(primal)
        adjoint, exits = adjoint_function(prepared, name, self.request, self.lanes, zeros, checked)
        # the copy the adjoint was derived from, in a module of its own
        take_apart(prepared.parent_op())
        self.functions.add(callee, adjoint)
        self.exits[name] = exits
        return exits

    def unused_dropped(self) -> list[rev.FuncOp]:
        """The adjoints built, less the specialisations nothing calls: a
        loop body built again assuming fewer zeros leaves behind those its
        first build asked for."""
        module = self.functions.module
        while True:
            called = {
                op.callee.string_value() for op in nested_ops(module) if isinstance(op, rev.CallOp | rev.UncallOp)
            }
            unused = [f for f in self.functions.created if f.sym_name.data in self.specialised - called]
            if not unused:
                return self.functions.created
            for function in unused:
                self.functions.created.remove(function)
                del self.functions.funcs[function.sym_name.data]
                function.detach()
                function.erase()


def generate_adjoints(
    module: ModuleOp, names: Sequence[str], lanes: int = 1, loss: int | None = None
) -> list[rev.FuncOp]:
    """Add ``@f.adj`` (``@f.adjL`` with ``lanes`` = L ≥ 2, ``@f.adj.lossK``
    seeded at argument ``loss`` = K only) for each named ``@f`` and the
    adjoints of every function they call (recursion included), right after
    the primal function.  Existing adjoints are kept.  ``rev.uncall @g`` is
    differentiated through ``@g.inv``, which is added when missing."""
    adjoints = _Adjoints(ModuleFunctions(module, _missing), lanes)
    if loss is not None and lanes != 1:
        raise AdjointError(f"a loss-seeded adjoint has one lane (its seeds are fixed), not {lanes}")
    for name in names:
        if loss is None:
            adjoints.request(name, None)
            continue
        primal = adjoints.functions.primal(name, None)
        carrying = [i for i, a in enumerate(primal.body.block.args) if gradient_type(a.type) is not None]
        real = AnyFloat | ComplexType | rev.FixedType | rev.TropicalType  # gradients w.r.t. the value
        if loss not in carrying or not isinstance(primal.body.block.args[loss].type, real):
            raise AdjointError(
                f"{describe_op(primal)}: the loss of a seeded adjoint of @{name} "
                f"must be a float, complex, fixed-point or tropical scalar argument; argument #{loss} is not one"
            )
        others = frozenset(p for p, i in enumerate(carrying) if i != loss)
        adjoints.build(name, None, adjoint_name(name, loss=loss), others, checked=True)
    created = adjoints.unused_dropped()
    _refuse_unsummable_calls(module, created)
    return created


def add_adjoint(module: ModuleOp, primal: str, name: str) -> list[rev.FuncOp]:
    """Add ``@name``, the adjoint of ``@primal`` under a name of its own
    (the inverse adjoint ``@f.iadj`` is the adjoint of ``@f.inv``), and the
    adjoints of what it calls; returns the functions added."""
    adjoints = _Adjoints(ModuleFunctions(module, _missing), lanes=1)
    adjoints.build(primal, None, name, frozenset(), checked=False)
    created = adjoints.unused_dropped()
    _refuse_unsummable_calls(module, created)
    return created


GRADIENT_SUFFIX = ".grad"


def gradient_name(name: str, loss: int | None = None) -> str:
    """``@f`` → ``@f.grad`` (``@f.grad.loss0`` for the gradient of argument 0)."""
    name += GRADIENT_SUFFIX
    return name if loss is None else f"{name}{LOSS_SUFFIX}{loss}"


def generate_gradients(module: ModuleOp, names: Sequence[str], loss: int | None = None) -> list[rev.FuncOp]:
    """Add ``@f.grad`` for each named ``@f``: ``rev.call @f`` followed by
    ``rev.call @f.adj`` in one function, with ``@f.adj``'s signature.  Given
    the inputs and the output gradients (the seeds), it returns the inputs
    (up to rounding) and the input gradients: a whole gradient in one call,
    with nothing kept between the forward and the backward run.  With a
    ``loss``, ``@f.grad.lossK`` calls the loss-seeded ``@f.adj.lossK``
    instead: the gradient of argument K, the other seeds zero."""
    generate_adjoints(module, names, loss=loss)
    existing = {f.sym_name.data for f in module.ops if isinstance(f, rev.FuncOp)}
    return [
        add_sequence(
            module, gradient_name(name, loss), name, range(_arity(module, name)), adjoint_name(name, loss=loss)
        )
        for name in names
        if gradient_name(name, loss) not in existing
    ]


def _arity(module: ModuleOp, name: str) -> int:
    func = SymbolTable.lookup_symbol(module, name)
    assert isinstance(func, rev.FuncOp)
    return len(func.function_type.inputs.data)


_FINISHED = object()


@dataclass(frozen=True)
class _ZeroFacts:
    """What is known zero where an adjoint region starts or ends: positions
    among the gradients the region op carries, and shadows."""

    gradients: frozenset[int]
    shadows: frozenset[SSAValue]

    def within(self, other: _ZeroFacts) -> bool:
        return self.gradients <= other.gradients and self.shadows <= other.shadows

    def meet(self, other: _ZeroFacts) -> _ZeroFacts:
        return _ZeroFacts(self.gradients & other.gradients, self.shadows & other.shadows)

    @staticmethod
    def common(facts: Sequence[_ZeroFacts]) -> _ZeroFacts:
        """What every one of ``facts`` knows."""
        first, *rest = facts
        for other in rest:
            first = first.meet(other)
        return first


def _missing(where: Operation | None, message: str) -> AdjointError:
    return AdjointError(message) if where is None else unsupported(where, message)


def _names(captured: Sequence[SSAValue], positions: Sequence[int]) -> str:
    """The outer values whose gradients a parallel loop's adjoint carries at
    ``positions`` (lane by lane, so modulo the values)."""
    return ", ".join(sorted({describe_value(captured[k % len(captured)]) for k in positions}))
