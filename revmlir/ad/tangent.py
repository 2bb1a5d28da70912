"""Forward-mode AD: building ``@f.tan``.

Forward mode carries, beside every float value of the program, its
*tangent*: the directional derivative along the input tangents.  Because
reversible programs are made of updates (``y += e(x…)``), the tangent program
is made of updates too: ``ẏ += ė``, where ``ė`` is the forward derivative of
the pure expression ``e`` (a forward sweep over its DAG with the tangent
rules of ``revmlir.ad.tangent_rules``).  Tangents are ordinary state of the
tangent program (updated with ``rev.add``, ``rev.neg``, ``rev.rot``…, carried
through ``rev.yield``), so ``@f.tan`` is itself a verified reversible function
that runs on the interpreter and natively — and can be differentiated in
reverse mode or inverted like any other.

The ``Tangenter`` walks ``@f``'s body forward; each op copies itself and
updates tangents (``ForwardDifferentiableOp.tangent``, next to the op).  It is
a ``Differentiator``: the ``Inverter``'s mapping from ``@f``'s values to the
tangent program's values and its on-demand recomputation of expressions
serve the copy.

``@f.tan`` takes ``f``'s arguments, then one tangent per argument that carries
a derivative (``gradient_type``), in argument order: a value for a float,
complex (``ẋ + iẏ``) or log-number scalar (log numbers: with respect to the
stored logarithm), a *shadow tangent array* (stack) for a float memref (stack), which is read as
the input tangents and overwritten in place with the output tangents.  It
returns ``f``'s results, then the tangents of its scalar results.

**Vector mode.**  ``@f.tanL`` (``L`` ≥ 2 *lanes*) carries ``L`` tangents per
value: ``L`` directional derivatives in one run, sharing the primal
computation, which is most of the work (a Hessian's columns, a Jacobian's).
Its arguments are ``f``'s, then lane 0's tangents (as ``@f.tan`` takes them),
lane 1's, …; its results likewise.  Each op's tangent rule runs once per
lane on the lane's tangents (``Tangenter.lane``), after one copy of the op;
region ops and calls carry every lane at once
(``ForwardDifferentiableOp.TANGENT_OF_ALL_LANES``).  The lanes are
separate scalars and separate shadow arrays: LLVM does not pack them into
SIMD registers, so a lane costs what its tangent updates cost, and vector
mode pays off as far as the shared part dominates (``docs/python.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from functools import partial

from xdsl.builder import Builder
from xdsl.dialects import func as std
from xdsl.dialects.builtin import ModuleOp, StringAttr
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

from revmlir.ad.adjoint import adjoint_name, generate_adjoints, generate_gradients, gradient_name
from revmlir.ad.adjoint import derivative_arguments as tangent_arguments
from revmlir.ad.derived import Differentiator, Request, derive_functions, derived_attributes, lanes_suffix
from revmlir.ad.tangent_rules import tangents
from revmlir.dialects import rev
from revmlir.dialects.primitives import ApplyOp, InvokeOp
from revmlir.errors import TangentError, describe_op, describe_value
from revmlir.errors import unsupported_in_forward_mode as unsupported
from revmlir.interfaces import ForwardDifferentiableOp, MakeCall, has_switchable_checks, set_checks
from revmlir.inversion import PerBlock
from revmlir.naming import TANGENT_SUFFIX
from revmlir.semantics import gradient_type, is_expression_op, is_reference_type, is_state_value

tangent_type = gradient_type
"""The type of the tangent a value carries: the same as its gradient's (a
float for floats and log numbers, a complex number for complex numbers, a
shadow for memrefs and stacks of those, ``None`` for integers, indices and
booleans)."""


tangent_suffix = partial(lanes_suffix, TANGENT_SUFFIX)
"""``.tan`` for one lane, ``.tanL`` for ``L`` lanes (vector mode)."""


def tangent_name(name: str, lanes: int = 1) -> str:
    """``@f`` → ``@f.tan`` (``@f.tan4`` with 4 lanes); deterministic, so
    FileCheck tests are stable."""
    return name + tangent_suffix(lanes)


def _tangent_name(value: SSAValue) -> str | None:
    return f"d_{value.name_hint}" if value.name_hint else None


class _Unset(Enum):
    """Not swept yet here (a swept tangent may be ``None``: zero)."""

    UNSET = auto()


def _bound_by_rule(value: SSAValue) -> bool:
    """Whether ``value`` is the result of an instruction whose tangent rule
    binds its tangent though it is no state version: the scalars
    ``anc.restore`` brings back from a snapshot."""
    return (
        isinstance(value, OpResult) and not is_expression_op(value.op) and isinstance(value.op, ForwardDifferentiableOp)
    )


@dataclass
class Tangenter(Differentiator):
    """Emits the tangent program of the code inside ``root``.

    ``tangents`` maps a state version or a reference (memref, stack) of the
    forward code to the value holding its tangent (its shadow) in the tangent
    program, in the current ``lane``; tangents of expressions are computed
    where they are read.  ``request`` returns the name of the tangent of a
    called function (and schedules it).
    """

    request: Request | None = None
    _varies: dict[SSAValue, bool] = field(default_factory=dict[SSAValue, bool])
    _lane_tangents: list[dict[SSAValue, SSAValue]] = field(default_factory=list[dict[SSAValue, SSAValue]])
    _lane_swept: list[PerBlock[SSAValue | None]] = field(default_factory=list[PerBlock[SSAValue | None]])

    def __post_init__(self) -> None:
        self._lane_tangents = [{} for _ in range(self.lanes)]
        self._lane_swept = [PerBlock() for _ in range(self.lanes)]

    @property
    def tangents(self) -> dict[SSAValue, SSAValue]:
        return self._lane_tangents[self.lane]

    RULE = "tangent"

    def apply_rule(self, op: Operation) -> bool:
        if not isinstance(op, ForwardDifferentiableOp):
            return False
        if op.TANGENT_OF_ALL_LANES:
            op.tangent(self)
        else:
            for _ in self.each_lane():
                op.tangent(self)
        return True

    def fail(self, op: Operation, why: str) -> TangentError:
        return unsupported(op, why)

    # -- tangents of values ------------------------------------------------------

    def varies(self, value: SSAValue) -> bool:
        """Whether ``value`` has a tangent that is not known to be zero: a
        float (complex, log-number) state version, an array or stack of
        those, or an expression depending on one."""
        known = self._varies.get(value)
        if known is None:
            known = self._varies[value] = self._compute_varies(value)
        return known

    def _compute_varies(self, value: SSAValue) -> bool:
        carries = tangent_type(value.type) is not None
        if is_state_value(value) or is_reference_type(value.type) or _bound_by_rule(value):
            return carries
        if not (isinstance(value, OpResult) and is_expression_op(value.op)):
            return False  # an induction variable, a condition's argument
        return carries and any(self.varies(o) for o in value.op.operands)

    def tangent(self, value: SSAValue) -> SSAValue | None:
        """The tangent of forward ``value`` here: ``None`` when it is zero or
        the value carries none; the shadow of a float array or stack."""
        if not self.varies(value):
            return None
        if not (isinstance(value, OpResult) and is_expression_op(value.op)):
            found = self.tangents.get(value)
            if found is None:
                raise TangentError(
                    f"internal error: no tangent for {describe_value(value)} where the "
                    f"tangent of {describe_op(self.current or self.root)} needs it"
                )
            return found
        swept = self._lane_swept[self.lane]
        here = self.builder.insertion_point.block
        cached = swept.get(value, here, _Unset.UNSET)
        if cached is _Unset.UNSET:
            cached = self._sweep(value)
            swept.set(value, here, cached)
        return cached

    def _sweep(self, value: OpResult) -> SSAValue | None:
        """The forward sweep over an expression DAG: operands first (each
        computed once while it stays visible), then the op's tangent rule."""
        op = value.op
        dots = [self.tangent(o) for o in op.operands]
        if all(d is None for d in dots):
            return None  # it only depends on values whose tangent is zero (floor)
        rule = tangents.get(type(op))
        if rule is None:
            raise unsupported(op, f"'{op.name}' has no tangent rule")
        return rule(self, op, dots)

    def bind_tangent(self, forward: SSAValue, tangent: SSAValue) -> None:
        if not tangent.name_hint and (name := _tangent_name(forward)):
            tangent.name_hint = name
        self.tangents[forward] = tangent

    def zero(self, forward: SSAValue) -> SSAValue:
        """A zero of the tangent type of float ``forward``."""
        type = tangent_type(forward.type)
        assert type is not None
        return self.const(0.0, type)

    def tangent_or_zero(self, value: SSAValue) -> SSAValue:
        found = self.tangent(value)
        return found if found is not None else self.zero(value)

    # -- emitting ------------------------------------------------------------------

    def copy(self, op: Operation) -> None:
        """Emit region-free ``op`` itself on the tangent program's values
        (once: in lane 0; the other lanes' rules find it copied)."""
        if self.lane > 0:
            return
        clone = op.clone_without_regions({o: self.lookup(o) for o in op.operands})
        self.builder.insert(clone)
        for old, new in zip(op.results, clone.results, strict=True):
            self.bind(old, new)

    def mirror(self, op: Operation) -> Operation | None:
        """Copy region-free ``op``, then run the same op on tangents: each
        operand that carries one is replaced by its tangent (zero for a
        constant float, the shadow for an array or stack), the others (indices)
        are read as they are; the results are the tangents of ``op``'s.
        ``anc.alloc x ← e`` gets ``ẋ ← ė``, ``rev.take`` takes the shadow
        element too, ``anc.push`` pushes the tangent onto the shadow stack.
        The twin's run-time checks would repeat ``op``'s on tangents, up to
        rounding: they are switched off.  Returns the twin, ``None`` when no
        value of ``op`` carries a tangent."""
        values = (*op.operands, *op.results)
        if all(tangent_type(v.type) is None for v in values):
            self.copy(op)
            return None
        operands = [
            self.tangent_or_zero(o) if tangent_type(o.type) is not None else self.lookup(o) for o in op.operands
        ]
        self.copy(op)
        twin = op.create(
            operands=operands,
            result_types=[tangent_type(r.type) for r in op.results],
            properties=dict(op.properties),
        )
        self.insert(twin, like=op)
        if has_switchable_checks(twin):
            set_checks(twin, False)
        for old, new in zip(op.results, twin.results, strict=True):
            self.bind_tangent(old, new)
        return twin

    def sum(self, *terms: SSAValue | None) -> SSAValue | None:
        """The sum of the tangent terms that are not zero (``None``)."""
        present = [t for t in terms if t is not None]
        if not present:
            return None
        total = present[0]
        for term in present[1:]:
            total = self.add(total, term)
        return total

    def scaled(self, dot: SSAValue | None, partial: Callable[[], SSAValue]) -> SSAValue | None:
        """``dot · partial``; the partial derivative is only built when the
        tangent is not zero."""
        return None if dot is None else self.mul(dot, partial())

    # -- blocks and regions ----------------------------------------------------------

    def tangent_body(self, block: Block) -> tuple[list[SSAValue], list[SSAValue]]:
        """Emit the tangent program of ``block``'s ops (its arguments and their
        tangents are bound).  Returns what its terminator passes on and the
        tangents of those values that carry one."""
        self.differentiate(list(block.ops)[:-1])
        terminator = block.last_op
        assert terminator is not None
        outputs = [self.lookup(v) for v in terminator.operands]
        return outputs, self.carried_tangents(terminator.operands)

    def carried_tangent(self, value: SSAValue) -> SSAValue | None:
        """The tangent of a state value that is passed on (yielded, returned,
        passed to a call); ``None`` for integers and booleans."""
        if tangent_type(value.type) is None:
            return None
        return self.tangent_or_zero(value)

    def carried_tangents(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """The tangents of the passed-on ``values`` that carry one, lane by
        lane: the tangent half of a region's state, a call's arguments."""
        return [d for _ in self.each_lane() for v in values if (d := self.carried_tangent(v)) is not None]

    def bind_tangents(self, old: Sequence[SSAValue], new: Sequence[SSAValue]) -> None:
        """Bind the tangents of the values of ``old`` that carry one to
        ``new``, laid out lane by lane (as ``carried_tangents`` makes them)."""
        carrying = [v for v in old if tangent_type(v.type) is not None]
        self.bind_lane_by_lane(carrying, new, self.bind_tangent)

    def bind_arguments(self, old: Sequence[BlockArgument], new: Sequence[BlockArgument]) -> None:
        """Bind a forward block's arguments to ``new``: copies of them, then
        one tangent per argument that carries one, lane by lane."""
        for forward, value in zip(old, new):
            value.name_hint = forward.name_hint
            self.bind(forward, value)
        self.bind_tangents(old, new[len(old) :])

    def tangent_region(self, region: Region) -> Region:
        """The tangent program of a state-carrying region: its block takes the
        forward block's arguments, then the tangents of those that carry one,
        and yields the forward values followed by their tangents."""
        forward = region.block
        types = [a.type for a in forward.args]
        block = Block(arg_types=tangent_arguments(types, self.lanes))
        self.bind_arguments(forward.args, block.args)
        terminator = forward.last_op
        assert terminator is not None
        with self._at_end(block):
            outputs, dots = self.tangent_body(forward)
            self.insert(rev.YieldOp(*outputs, *dots), like=terminator)
        return Region(block)

    def carried_state(self, state: Sequence[SSAValue]) -> list[SSAValue]:
        """The state of the tangent of a region op: the copies of its state
        operands, then the tangents of those that carry one."""
        return [*(self.lookup(s) for s in state), *self.carried_tangents(state)]

    def bind_carried(self, results: Sequence[SSAValue], new: Sequence[SSAValue]) -> None:
        """Bind the results of an op built on ``carried_state``, a call's
        results included."""
        for result, value in zip(results, new):
            self.bind(result, value)
        self.bind_tangents(results, new[len(results) :])

    def condition(self, region: Region, state: Sequence[SSAValue]) -> Region:
        """A copy of condition ``region`` taking (and ignoring) the tangents
        in ``state`` (built by ``carried_state``) as trailing arguments."""
        extra = [v.type for v in state[len(region.block.args) :]]
        return self.clone_region(region, extra)

    # -- calls ---------------------------------------------------------------------

    def tangent_of(self, callee: str, call: Operation) -> str:
        """The name of the tangent program (with this many lanes) a call of
        ``@callee`` calls."""
        if self.request is None:
            raise unsupported(call, "calls need the module (run ad-tangent)")
        return self.request(callee, call)

    def ordinary_tangent(
        self, callee: str, args: Sequence[SSAValue], results: Sequence[SSAValue], make: MakeCall
    ) -> None:
        """Call ``@callee.tan`` (``@callee.tanL``) in place of ``@callee``:
        ordinary code has a tangent with a reversible function's signature,
        which runs it as well (it may update arrays), derived from its body
        once the module's tangents are built (``derive_ordinary_tangents``)."""
        types = [tangent_type(r.type) for _ in range(self.lanes) for r in results]
        derived = make(
            tangent_name(callee, self.lanes),
            self.carried_state(args),
            [*(r.type for r in results), *(t for t in types if t is not None)],
        )
        self.emit_op(derived)
        self.bind_carried(results, derived.results)


# ---------------------------------------------------------------------------
# Functions and modules
# ---------------------------------------------------------------------------


def tangent_function(func: rev.FuncOp, name: str, request: Request | None = None, lanes: int = 1) -> rev.FuncOp:
    """``@name``: the tangent program of ``func`` (already free of routines
    and ``rev.inv``) with ``lanes`` tangents per value; see the module
    docstring for its signature."""
    forward = func.body.block
    block = Block(arg_types=tangent_arguments([a.type for a in forward.args], lanes))
    tangenter = Tangenter(func, Builder(InsertPoint.at_end(block)), request=request, lanes=lanes)
    tangenter.bind_arguments(forward.args, block.args)
    outputs, dots = tangenter.tangent_body(forward)
    terminator = forward.last_op
    assert terminator is not None
    tangenter.insert(rev.ReturnOp(*outputs, *dots), like=terminator)
    derived = rev.FuncOp(name, [a.type for a in block.args], Region(block))
    derived.attributes.update(derived_attributes(func, name))
    derived.location = func.location
    return derived


def _missing(where: Operation | None, message: str) -> TangentError:
    return TangentError(message) if where is None else unsupported(where, message)


def generate_tangents(module: ModuleOp, names: Sequence[str], lanes: int = 1) -> list[rev.FuncOp]:
    """Add ``@f.tan`` (``@f.tanL`` with ``lanes`` = L ≥ 2) for each named
    ``@f`` and for every function their tangents call (recursion included),
    right after ``@f`` and the functions derived from it.  Existing tangents
    are kept.  ``rev.uncall @g`` becomes a call of ``@g.inv.tan``;
    ``@g.inv`` is added when missing.  The tangents of the rules that
    derived code calls as ordinary code are added too
    (``derive_ordinary_tangents``)."""
    build = partial(tangent_function, lanes=lanes)
    created = derive_functions(module, names, tangent_suffix(lanes), build, _missing)
    try:
        derive_ordinary_tangents(module)
    except TangentError:
        # the module as it was: the diagnostic is the rule's, not the call of a missing tangent
        for function in created:
            function.detach()
            function.erase()
        raise
    return created


# ---------------------------------------------------------------------------
# Ordinary code that derived code calls: the rules of primitives
# ---------------------------------------------------------------------------


@dataclass
class OrdinaryTangenter(Tangenter):
    """Emits ``@g.tan`` (``@g.tanL``) for a ``func.func`` ``@g`` that
    derived code calls: the adjoint rule of a primitive in a gradient that
    a Hessian runs in forward mode, an inverse rule, or what those call.
    ``@g.tan`` has the signature of a reversible function's tangent: ``g``'s
    arguments and their tangents give ``g``'s results and theirs; it runs
    ``g`` too, since ``g`` may update arrays that later ops read.  Rules are
    straight-line code: pure ops (swept by the tangent table, primitives'
    calls included), ``rev.invoke``s and calls of ordinary functions;
    anything else is a located error naming the function."""

    def _compute_varies(self, value: SSAValue) -> bool:
        carries = tangent_type(value.type) is not None
        if isinstance(value, BlockArgument) and value.block.parent_op() is self.root:
            return carries
        if isinstance(value, OpResult) and isinstance(value.op, std.CallOp):
            return carries
        return super()._compute_varies(value)

    def apply_rule(self, op: Operation) -> bool:
        if not isinstance(op, std.CallOp):
            return super().apply_rule(op)
        self.ordinary_tangent(op.callee.string_value(), op.arguments, op.res, _call)
        return True

    def fail(self, op: Operation, why: str) -> TangentError:
        assert isinstance(self.root, std.FuncOp)
        return unsupported(
            op,
            f"{why}, in @{self.root.sym_name.data}, ordinary code that a derivative calls (a rule of a "
            "primitive) and differentiates again (a Hessian through a primitive): its tangent is derived "
            "for straight-line code only; declare what it computes a primitive with a tangent rule instead",
        )


def _call(callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]) -> std.CallOp:
    return std.CallOp(callee, args, result_types)


def ordinary_tangent(function: std.FuncOp, lanes: int = 1) -> std.FuncOp:
    """``@g.tan`` (``@g.tanL``) of ordinary ``@g`` (see ``OrdinaryTangenter``)."""
    forward = function.body.block
    block = Block(arg_types=tangent_arguments([a.type for a in forward.args], lanes))
    tangenter = OrdinaryTangenter(function, Builder(InsertPoint.at_end(block)), lanes=lanes)
    tangenter.bind_arguments(forward.args, block.args)
    tangenter.differentiate(list(forward.ops)[:-1])
    terminator = forward.last_op
    assert isinstance(terminator, std.ReturnOp)
    outputs = [tangenter.lookup(v) for v in terminator.arguments]
    tangenter.insert(std.ReturnOp(*outputs, *tangenter.carried_tangents(terminator.arguments)), like=terminator)
    derived = std.FuncOp(
        tangent_name(function.sym_name.data, lanes),
        (
            [a.type for a in block.args],
            [
                *function.function_type.outputs.data,
                *(
                    t
                    for _ in range(lanes)
                    for r in function.function_type.outputs.data
                    if (t := tangent_type(r)) is not None
                ),
            ],
        ),
        Region(block),
    )
    derived.location = function.location
    return derived


_TANGENT_NAME = re.compile(rf"(.+){re.escape(TANGENT_SUFFIX)}(\d*)")


def derive_ordinary_tangents(module: ModuleOp) -> list[std.FuncOp]:
    """Add ``@g.tan`` (``@g.tanL``) for each function ``@g`` of ordinary
    code whose tangent the module calls and lacks (``rev.apply``,
    ``rev.invoke`` or ``func.call`` of it, as the tangents of calls of
    ``@g`` are made), and then for those such a tangent calls, each right
    after ``@g``."""
    symbols: dict[str, Operation] = {
        name.data: op for op in module.ops if isinstance(name := op.properties.get("sym_name"), StringAttr)
    }
    created: list[tuple[std.FuncOp, std.FuncOp]] = []
    scan: list[Operation] = [module]
    while scan:
        for op in scan.pop().walk():
            if not isinstance(op, ApplyOp | InvokeOp | std.CallOp):
                continue
            name = op.callee.string_value()
            if name in symbols or (match := _TANGENT_NAME.fullmatch(name)) is None:
                continue
            base = symbols.get(match[1])
            if not isinstance(base, std.FuncOp) or not base.body.blocks:
                continue
            derived = symbols[name] = ordinary_tangent(base, int(match[2] or 1))
            created.append((base, derived))
            scan.append(derived)
    for base, derived in created:  # only once all are built: a failure leaves the module as it was
        module.body.block.insert_op_after(derived, base)
    return [derived for _, derived in created]


def generate_hessians(
    module: ModuleOp, names: Sequence[str], lanes: int = 1, loss: int | None = None
) -> list[rev.FuncOp]:
    """Forward over reverse: for each named ``@f`` add ``@f.tan``, ``@f.adj``
    and ``@f.adj.tan`` (the tangent of the adjoint, whose input-gradient
    tangents are Hessian-vector products), with ``lanes`` tangents per value
    (``@f.tanL``, ``@f.adj.tanL``); with a ``loss``, of the loss-seeded
    adjoint (``@f.adj.lossK``, ``@f.adj.lossK.tanL``)."""
    created = generate_tangents(module, names, lanes)
    created += generate_adjoints(module, names, loss=loss)
    created += generate_tangents(module, [adjoint_name(n, loss=loss) for n in names], lanes)
    return created


def hvp_name(name: str, lanes: int = 1, loss: int | None = None) -> str:
    """``@f`` → ``@f.grad.tan`` (``@f.grad.lossK.tanL`` with ``L`` lanes for
    the Hessian of argument K): Hessian-vector products are the tangent of
    the gradient."""
    return tangent_name(gradient_name(name, loss), lanes)


def generate_hvps(module: ModuleOp, names: Sequence[str], lanes: int = 1, loss: int | None = None) -> list[rev.FuncOp]:
    """Add ``@f.grad.tan`` (``@f.grad.lossK.tanL``) for each named ``@f``:
    the tangent of ``@f.grad`` (the forward run and the adjoint in one
    function, ``revmlir.ad.adjoint.generate_gradients``), with its
    signature: ``f``'s arguments, the seeds, then per lane the arguments'
    tangents ``v`` and the seeds' tangents, which come back as ``H·v``.  A
    gradient the module already has is differentiated as it is: a
    checkpointed ``@f.grad`` (``ad-checkpoint``) gives Hessian-vector
    products that recompute as its schedule does, the tangents snapshotted
    and restored with the state."""
    existing = {f.sym_name.data for f in module.ops if isinstance(f, rev.FuncOp)}
    missing = [n for n in names if gradient_name(n, loss) not in existing]
    created = generate_gradients(module, missing, loss) if missing else []
    return created + generate_tangents(module, [gradient_name(n, loss) for n in names], lanes)
