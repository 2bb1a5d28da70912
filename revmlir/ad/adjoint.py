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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    FloatAttr,
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
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects import anc, rev
from revmlir.errors import describe_op
from revmlir.interfaces import DifferentiableOp, NotDifferentiable
from revmlir.inversion import Inverter, inverse_name, invert_function
from revmlir.semantics import is_expression_op, is_state_type, is_state_value

ADJOINT_SUFFIX = ".adj"


def adjoint_name(name: str) -> str:
    """``@f`` → ``@f.adj`` (deterministic, so FileCheck tests are stable)."""
    return name + ADJOINT_SUFFIX


def gradient_type(type: Attribute) -> Attribute | None:
    """The type of the gradient a value of ``type`` carries, ``None`` for none.

    Floats carry a float gradient; log numbers carry the gradient with respect
    to their stored logarithm; integers, indices and booleans carry none.
    """
    if isinstance(type, rev.LogType):
        return type.element_type
    if isinstance(type, AnyFloat):
        return type
    return None


class AdjointError(PassFailedException):
    """A construct ``ad-adjoint`` does not differentiate, reported at its op."""


def unsupported(op: Operation, why: str) -> AdjointError:
    return AdjointError(f"{describe_op(op)} cannot be differentiated: {why}")


def _defining_node(value: SSAValue) -> Operation | Block:
    return value.block if isinstance(value, BlockArgument) else value.op  # type: ignore[union-attr]


def _gradient_name(value: SSAValue) -> str | None:
    return f"g_{value.name_hint}" if value.name_hint else None


@dataclass
class Adjointer(Inverter):
    """Emits the adjoint of the code inside ``root``.

    ``gradients`` maps a forward float state version to the adjoint-side value
    holding its gradient at the insertion point (the walk goes backwards, so
    that is the gradient of the version *after* the forward code at this
    point).  ``request`` returns the name of the adjoint of a called function
    (and schedules it).
    """

    gradients: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    request: Callable[[str, Operation], str] | None = None
    current: Operation | None = None
    _needs: dict[SSAValue, bool] = field(default_factory=dict[SSAValue, bool])

    # -- gradients of state values -------------------------------------------

    def gradient(self, value: SSAValue) -> SSAValue | None:
        """The gradient of forward ``value`` here; ``None`` if it carries none."""
        if gradient_type(value.type) is None:
            return None
        found = self.gradients.get(value)
        if found is None:
            raise AdjointError(
                f"internal error: no gradient for {_describe(value)} where the "
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

    def discard_gradient(self, gradient: SSAValue) -> None:
        """End a gradient's life: an unchecked ``anc.free`` against zero (the
        gradient of an ancilla is dropped when the ancilla is born)."""
        free = anc.FreeOp(gradient, self.const(0.0, gradient.type))
        free.attributes[anc.FreeOp.CHECK_ATTR] = UnitAttr()
        self.emit_op(free)

    # -- emitting arithmetic (used by the derivative rules) -------------------

    def emit_op(self, op: Operation) -> Operation:
        if self.current is not None:
            op.location = self.current.location
        self.builder.insert(op)
        return op

    def emit(self, op: Operation) -> SSAValue:
        return self.emit_op(op).results[0]

    def primal(self, value: SSAValue) -> SSAValue:
        """The forward ``value`` at the inverse point (recomputed if needed)."""
        return self.lookup(value)

    def const(self, value: float, type: Attribute) -> SSAValue:
        assert isinstance(type, AnyFloat)
        return self.emit(arith.ConstantOp(FloatAttr(value, type)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddfOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SubfOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.MulfOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.DivfOp(a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self.emit(arith.NegfOp(a))

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
            if isinstance(type, ComplexType):
                raise unsupported(_owner(value), "complex numbers carry no gradient yet")
            return gradient_type(type) is not None
        if not (isinstance(value, OpResult) and is_expression_op(value.op)):
            return False  # an induction variable, a condition's argument, a reference
        if gradient_type(type) is None and not isinstance(type, ComplexType):
            return False  # integers and booleans are piecewise constant
        op = value.op
        if isinstance(op, memref.LoadOp):
            raise unsupported(
                op,
                "reading elements of a float array is not differentiable yet "
                "(gradients of arrays need shadow arrays)",
            )
        needed = any(self.wants(o) for o in op.operands)
        if needed and isinstance(type, ComplexType):
            raise unsupported(op, "complex expressions are not differentiable yet")
        return needed

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

    # -- blocks and regions ---------------------------------------------------

    def adjoint_body(
        self,
        block: Block,
        state_args: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
        output_gradients: Sequence[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """Emit the adjoint of ``block``'s ops at the insertion point.

        ``outputs`` stand for the operands of the block's terminator and
        ``output_gradients`` for the gradients of those of them that carry one.
        Returns the values standing for ``state_args`` before the block ran and
        the gradients of those that carry one.
        """
        terminator = block.last_op
        assert terminator is not None
        for value, output in zip(terminator.operands, outputs, strict=True):
            self.bind(value, output)
        carrying = [v for v in terminator.operands if gradient_type(v.type) is not None]
        for value, gradient in zip(carrying, output_gradients, strict=True):
            self.bind_gradient(value, gradient)
        saved = self.current
        try:
            for op in reversed(list(block.ops)[:-1]):
                if is_expression_op(op):
                    continue  # recomputed (and differentiated) where it is read
                self.current = op
                _check_no_complex(op)
                if isinstance(op, DifferentiableOp):
                    op.adjoint(self)
                elif (mark := op.get_trait(NotDifferentiable)) is not None:
                    raise unsupported(op, mark.reason)
                else:
                    raise unsupported(op, f"'{op.name}' has no adjoint rule")
        finally:
            self.current = saved
        results = [self.lookup(a) for a in state_args]
        gradients = [self.gradient(a) for a in state_args if gradient_type(a.type)]
        return results, gradients  # type: ignore[return-value]

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
        its results, their gradients, then the gradients of the outer values
        its regions read (returned second)."""
        captured = self.captured_gradients(op)
        values = [self.lookup(r) for r in results]
        values += [g for r in results if (g := self.gradient(r)) is not None]
        values += [self.gradients[c] for c in captured]
        return values, captured

    def bind_carried(
        self,
        inputs: Sequence[SSAValue],
        new_results: Sequence[SSAValue],
        captured: Sequence[SSAValue],
    ) -> None:
        """Bind the results of an adjoint region op built on ``carried_state``."""
        results = iter(new_results)
        for value in inputs:
            self.bind(value, next(results))
        for value in inputs:
            if gradient_type(value.type) is not None:
                self.bind_gradient(value, next(results))
        for value in captured:
            self.bind_gradient(value, next(results))
        assert next(results, None) is None

    def adjoint_region(self, region: Region, captured: Sequence[SSAValue]) -> Region:
        """A new region computing the adjoint of state-carrying ``region``.

        Block arguments: the forward block's non-state arguments (an induction
        variable), what the forward region yields, the gradients of those
        values, the gradients of ``captured``.  It yields the forward block's
        state arguments, their gradients and the gradients of ``captured``.
        """
        owner = region.parent_op()
        assert owner is not None
        forward = region.block
        state_args = owner.state_block_args(region)  # type: ignore[attr-defined]
        fixed = [a for a in forward.args if a not in state_args]
        terminator = forward.last_op
        assert terminator is not None
        yielded = list(terminator.operands)
        carrying = [v for v in yielded if gradient_type(v.type) is not None]
        types = [a.type for a in fixed] + [v.type for v in yielded]
        types += [gradient_type(v.type) for v in carrying]
        types += [gradient_type(c.type) for c in captured]
        block = Block(arg_types=types)  # type: ignore[arg-type]
        args: Iterator[BlockArgument] = iter(block.args)
        for old in fixed:
            new = next(args)
            new.name_hint = old.name_hint
            self.bind(old, new)
        outputs = [next(args) for _ in yielded]
        for old, new in zip(yielded, outputs):
            new.name_hint = old.name_hint
        output_gradients = [next(args) for _ in carrying]
        for old, new in zip(carrying, output_gradients):
            new.name_hint = _gradient_name(old)
        for value in captured:
            self.bind_gradient(value, next(args))
            self.gradients[value].name_hint = _gradient_name(value)
        with self._at_end(block):
            results, gradients = self.adjoint_body(
                forward, state_args, outputs, output_gradients
            )
            captured_out = [self.gradients[c] for c in captured]
            self.insert(rev.YieldOp(*results, *gradients, *captured_out), like=terminator)
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


def _owner(value: SSAValue) -> Operation:
    if isinstance(value, OpResult):
        return value.op
    op = value.block.parent_op()  # type: ignore[union-attr]
    assert op is not None
    return op


def _describe(value: SSAValue) -> str:
    name = f"%{value.name_hint}" if value.name_hint else "a value"
    if isinstance(value, OpResult):
        return f"{name} (result of {describe_op(value.op)})"
    return f"{name} (block argument #{value.index})"


def _check_no_complex(op: Operation) -> None:
    for value in (*op.operands, *op.results):
        if isinstance(value.type, ComplexType):
            raise unsupported(op, "complex numbers carry no gradient yet")


# ---------------------------------------------------------------------------
# Functions and modules
# ---------------------------------------------------------------------------


def adjoint_function(
    func: rev.FuncOp, name: str, request: Callable[[str, Operation], str] | None = None
) -> rev.FuncOp:
    """``@name``: the adjoint of ``func`` (already free of routines and
    ``rev.inv``).  Arguments: ``func``'s arguments holding its outputs, then one
    gradient per float scalar argument; results: ``func``'s inputs, then their
    gradients."""
    forward = func.body.block
    for arg in forward.args:
        if isinstance(arg.type, ComplexType):
            raise AdjointError(
                f"{describe_op(func)} cannot be differentiated: argument "
                f"#{arg.index} is complex; complex numbers carry no gradient yet"
            )
    carrying = [a for a in forward.args if gradient_type(a.type) is not None]
    block = Block(
        arg_types=[a.type for a in forward.args]
        + [gradient_type(a.type) for a in carrying]  # type: ignore[misc]
    )
    adjointer = Adjointer(func, Builder(InsertPoint.at_end(block)), request=request)
    state_args: list[SSAValue] = []
    outputs: list[SSAValue] = []
    for old, new in zip(forward.args, block.args):
        new.name_hint = old.name_hint
        if is_state_type(old.type):
            state_args.append(old)
            outputs.append(new)
        else:
            adjointer.bind(old, new)
    output_gradients = list(block.args[len(forward.args) :])
    for old, new in zip(carrying, output_gradients):
        new.name_hint = _gradient_name(old)
    results, gradients = adjointer.adjoint_body(forward, state_args, outputs, output_gradients)
    terminator = forward.last_op
    assert terminator is not None
    adjointer.insert(rev.ReturnOp(*results, *gradients), like=terminator)
    adjoint = rev.FuncOp(name, [a.type for a in block.args], Region(block))
    adjoint.attributes.update(func.attributes)
    adjoint.location = func.location
    return adjoint


def prepare(func: rev.FuncOp) -> rev.FuncOp:
    """A copy of ``func`` with routines expanded and ``rev.inv`` regions
    inlined as their inverse, as ``rev-lower-to-std`` prepares functions."""
    from revmlir.passes.expand_routines import forward_only

    module = ModuleOp([func.clone()])
    forward_only(module)
    prepared = module.body.block.first_op
    assert isinstance(prepared, rev.FuncOp)
    prepared.detach()
    return prepared


def generate_adjoints(module: ModuleOp, names: Sequence[str]) -> list[rev.FuncOp]:
    """Add ``@f.adj`` for each named ``@f`` and for every function their
    adjoints call (recursion included), right after the primal function.
    Existing adjoints are kept.  ``rev.uncall @g`` is differentiated through
    ``@g.inv``, which is added when missing."""
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, rev.FuncOp)}
    queue: list[str] = []
    scheduled: set[str] = set()
    created: list[rev.FuncOp] = []

    def schedule(name: str, where: Operation | None) -> str:
        if name not in funcs:
            base = inverse_name(name)
            if name.endswith(".inv") and base in funcs:
                inverse = invert_function(funcs[base], name)
                funcs[base].parent_block().insert_op_after(inverse, funcs[base])  # type: ignore[union-attr]
                funcs[name] = inverse
            elif where is not None:
                raise unsupported(where, f"no rev.func named @{name} in the module")
            else:
                raise AdjointError(f"no rev.func named @{name} in the module")
        if name not in scheduled:
            scheduled.add(name)
            queue.append(name)
        return adjoint_name(name)

    for name in names:
        schedule(name, None)
    while queue:
        name = queue.pop(0)
        target = adjoint_name(name)
        if target in funcs:
            continue
        primal = funcs[name]
        adjoint = adjoint_function(prepare(primal), target, schedule)
        # after @f and the functions derived from it (@f.inv, @f.adj, …)
        base = name.removesuffix(".inv")
        anchor: Operation = funcs.get(base, primal)
        while isinstance(after := anchor.next_op, rev.FuncOp) and (
            after.sym_name.data.startswith(base + ".")
        ):
            anchor = after
        primal.parent_block().insert_op_after(adjoint, anchor)  # type: ignore[union-attr]
        funcs[target] = adjoint
        created.append(adjoint)
    return created


def invert_without_gradient(op: Operation, adjointer: Adjointer, why: str) -> None:
    """The adjoint of an op whose values carry no gradient (integers,
    booleans, stacks, integer arrays) is its inverse; ``why`` explains the
    error when one of its values does carry a gradient."""
    for value in (*op.operands, *op.results):
        type = value.type
        element = getattr(type, "element_type", None)
        if gradient_type(type) is not None or (
            not is_state_type(type) and element is not None and gradient_type(element)
        ):
            raise unsupported(op, why)
    assert isinstance(op, DifferentiableOp)
    op.invert(adjointer)  # type: ignore[attr-defined]
