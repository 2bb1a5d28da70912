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

from revmlir.ad.derived import Differentiator, add_sequence, derive_functions
from revmlir.dialects import anc, rev
from revmlir.errors import describe_op, describe_value
from revmlir.interfaces import DifferentiableOp, set_checks
from revmlir.semantics import is_expression_op, is_state_type, is_state_value

ADJOINT_SUFFIX = ".adj"


def adjoint_name(name: str) -> str:
    """``@f`` → ``@f.adj`` (deterministic, so FileCheck tests are stable)."""
    return name + ADJOINT_SUFFIX


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
    holding its gradient at the insertion point (the walk goes backwards, so
    that is the gradient of the version *after* the forward code at this
    point).  ``request`` returns the name of the adjoint of a called function
    (and schedules it).
    """

    gradients: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    request: Callable[[str, Operation], str] | None = None
    _needs: dict[SSAValue, bool] = field(default_factory=dict[SSAValue, bool])

    RULE = "adjoint"

    def apply_rule(self, op: Operation) -> bool:
        if not isinstance(op, DifferentiableOp):
            return False
        op.adjoint(self)
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
        self.differentiate(reversed(list(block.ops)[:-1]))
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


# ---------------------------------------------------------------------------
# Functions and modules
# ---------------------------------------------------------------------------


def adjoint_function(
    func: rev.FuncOp, name: str, request: Callable[[str, Operation], str] | None = None
) -> rev.FuncOp:
    """``@name``: the adjoint of ``func`` (already free of routines and
    ``rev.inv``).  Arguments: ``func``'s arguments holding its outputs, then one
    gradient per argument that carries one (``gradient_type``), in argument
    order: a value for a scalar, a shadow for a float memref or stack, which
    is updated in place from the output's gradient to the input's.  Results:
    ``func``'s inputs, then the gradients of the scalar ones."""
    forward = func.body.block
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
    output_gradients: list[SSAValue] = []
    for old, new in zip(carrying, block.args[len(forward.args) :], strict=True):
        new.name_hint = _gradient_name(old)
        if is_state_type(old.type):
            output_gradients.append(new)
        else:
            adjointer.bind_gradient(old, new)  # a shadow array or stack
    results, gradients = adjointer.adjoint_body(forward, state_args, outputs, output_gradients)
    terminator = forward.last_op
    assert terminator is not None
    adjointer.insert(rev.ReturnOp(*results, *gradients), like=terminator)
    adjoint = rev.FuncOp(name, [a.type for a in block.args], Region(block))
    adjoint.attributes.update(func.attributes)
    adjoint.location = func.location
    return adjoint


def generate_adjoints(module: ModuleOp, names: Sequence[str]) -> list[rev.FuncOp]:
    """Add ``@f.adj`` for each named ``@f`` and for every function their
    adjoints call (recursion included), right after the primal function.
    Existing adjoints are kept.  ``rev.uncall @g`` is differentiated through
    ``@g.inv``, which is added when missing."""
    return derive_functions(module, names, ADJOINT_SUFFIX, adjoint_function, _missing)


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


def _missing(where: Operation | None, message: str) -> AdjointError:
    return AdjointError(message) if where is None else unsupported(where, message)
