"""The ``ad`` dialect: differentiation as IR.

Ops at module level name a ``rev.func`` and request a derived function; the
``ad-*`` passes expand them into ordinary ``rev.func``s with deterministic
names, so the result can be printed, inspected and lowered like any other
reversible code.

    rev.func @f(%y: f64, %x: f64) { … }
    ad.adjoint @f                  // ad-adjoint adds rev.func @f.adj
    ad.tangent @f                  // ad-tangent adds rev.func @f.tan
    ad.hessian @f                  // ad-hessian adds @f.tan, @f.adj, @f.adj.tan
    ad.checkpoint @f               // ad-checkpoint adds @f.ckpt (loops marked
                                   // {checkpoint = #ad.schedule<…>} recompute)
    ad.inverse_tangent @f          // ad-inverse-tangent adds @f.itan (J⁻¹·v)
    ad.inverse_adjoint @f          // ad-inverse-adjoint adds @f.iadj (J⁻ᵀ·w)

A request may name the inverse ``@f.inv`` of a ``rev.func @f`` without the
module holding it: the pass adds it (as ``rev-invert`` would), so
``ad.adjoint @f.inv`` differentiates ``~f``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Self

from xdsl.dialects.builtin import (
    FlatSymbolRefAttr,
    IndexType,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, SymbolTable
from xdsl.utils.exceptions import VerifyException

from revmlir.checkpoint.cursor import MAX_COUNT, SCHEMES, WORDS
from revmlir.dialects import anc
from revmlir.dialects.anc import GRADIENT_ONLY
from revmlir.dialects.rev import FuncOp
from revmlir.errors import InversionError, describe_op
from revmlir.interfaces import ForwardDifferentiableOp, InverseBuilder, InvertibleOp, NotDifferentiable, TangentBuilder
from revmlir.naming import INVERSE_SUFFIX, inverse_name


class FunctionRequestOp(IRDLOperation):
    """An op that names a ``rev.func`` of its module and requests a function
    derived from it; an ``ad-*`` pass replaces it by that function."""

    function = prop_def(FlatSymbolRefAttr)

    EXPANDED_BY: ClassVar[str]
    """The ``ad-*`` pass that replaces the request, which the passes that
    read only functions (``rev-lower-to-std``) name when they meet one."""

    traits = traits_def(HasParent(ModuleOp))
    assembly_format = "$function attr-dict"

    def __init__(self, function: str | FlatSymbolRefAttr):
        if isinstance(function, str):
            function = FlatSymbolRefAttr(function)
        super().__init__(properties={"function": function})

    @property
    def function_name(self) -> str:
        return self.function.string_value()

    def verify_(self) -> None:
        name = self.function_name
        target = SymbolTable.lookup_symbol(self, name)
        if target is None and name.endswith(INVERSE_SUFFIX):
            # the inverse of a function, built by the pass when missing
            target = SymbolTable.lookup_symbol(self, inverse_name(name))
        if not isinstance(target, FuncOp):
            raise VerifyException(
                f"'{self.name}' names @{name}, which is not a rev.func of the module nor the inverse of one"
            )


@irdl_op_definition
class AdjointOp(FunctionRequestOp):
    """Request the adjoint (gradient program) of ``rev.func @f``.

    ``ad-adjoint`` replaces it with ``rev.func @f.adj``, which takes ``f``'s
    arguments holding ``f``'s outputs, then one gradient per float scalar
    argument (the output adjoints), and returns ``f``'s inputs followed by the
    input adjoints (reverse mode by reverse computing, NiLang's GVar
    semantics).
    """

    name = "ad.adjoint"
    EXPANDED_BY: ClassVar[str] = "ad-adjoint"


@irdl_op_definition
class TangentOp(FunctionRequestOp):
    """Request the tangent program (forward mode) of ``rev.func @f``.

    ``ad-tangent`` replaces it with ``rev.func @f.tan``, which takes ``f``'s
    arguments, then one tangent per argument carrying a derivative (a value
    per float scalar, a shadow tangent array per float memref, read as input
    tangents and overwritten with output tangents), and returns ``f``'s
    results followed by the tangents of its scalar results.
    """

    name = "ad.tangent"
    EXPANDED_BY: ClassVar[str] = "ad-tangent"


@irdl_op_definition
class HessianOp(FunctionRequestOp):
    """Request Hessian-vector products of ``rev.func @f``, forward over
    reverse.

    ``ad-hessian`` replaces it with ``@f.tan``, ``@f.adj`` and ``@f.adj.tan``:
    the tangent of the adjoint, whose input-gradient tangents are ``H·v`` when
    it runs on ``f``'s outputs and their tangents (from ``@f.tan``) with
    constant output gradients.
    """

    name = "ad.hessian"
    EXPANDED_BY: ClassVar[str] = "ad-hessian"


@irdl_op_definition
class JacobianOp(FunctionRequestOp):
    """Request the whole Jacobian of ``rev.func @f``, forward mode.

    ``ad-jacobian`` replaces it with ``@f.tan`` and ``@f.jacobian``, which
    takes ``f``'s arguments, a zeroed ``memref<?x?xf64>`` ``M`` and one
    zeroed tangent workspace per f64 array argument, and adds into ``M`` the
    Jacobian of ``f``'s f64 entries (arguments in order, arrays in C order)
    after the call with respect to the same entries before it: one column
    per unit direction, each a ``@f.tan`` call undone by a ``@f.tan`` uncall.
    """

    name = "ad.jacobian"
    EXPANDED_BY: ClassVar[str] = "ad-jacobian"


@irdl_op_definition
class CheckpointOp(FunctionRequestOp):
    """Request the checkpointed gradient of ``rev.func @f``.

    ``ad-checkpoint`` replaces it with ``rev.func @f.ckpt``, which has the
    signature and results of ``@f.adj`` but runs ``f`` forward first (so it
    takes ``f``'s inputs): a whole gradient in one function.  Each ``rev.for``
    of ``f`` carrying ``checkpoint = #ad.schedule<…>`` keeps only the
    snapshots the schedule asks for and recomputes the rest, instead of
    keeping every step's tape.
    """

    name = "ad.checkpoint"
    EXPANDED_BY: ClassVar[str] = "ad-checkpoint"


@irdl_op_definition
class InverseTangentOp(FunctionRequestOp):
    """Request the inverse tangent program of ``rev.func @f``: ``J⁻¹·v``
    without forming ``J`` (Pearlmutter and Siskind's inverse forward mode).

    ``ad-inverse-tangent`` replaces it with ``rev.func @f.itan``, the tangent
    program of ``~f``: it takes ``f``'s arguments holding ``f``'s outputs
    ``y``, then one tangent ``ẏ`` per argument carrying a derivative (as
    ``@f.tan`` takes them), runs ``f`` backwards, and returns ``f``'s inputs
    ``x`` followed by the scalar tangents ``ẋ``, with ``J·ẋ = ẏ`` (``J`` the
    Jacobian of ``f`` at ``x``).  Each step's inverse Jacobian is applied
    last step first, as its inverse runs.
    """

    name = "ad.inverse_tangent"
    EXPANDED_BY: ClassVar[str] = "ad-inverse-tangent"


@irdl_op_definition
class InverseAdjointOp(FunctionRequestOp):
    """Request the inverse adjoint program of ``rev.func @f``: ``J⁻ᵀ·w``
    without forming ``J`` (Pearlmutter and Siskind's inverse reverse mode).

    ``ad-inverse-adjoint`` replaces it with ``rev.func @f.iadj``, the
    adjoint of ``~f``: it takes ``f``'s inputs ``x``, then one cotangent
    ``x̄`` per argument carrying a derivative (as ``@f.adj`` takes them), runs
    ``f`` forward, and returns ``f``'s outputs ``y`` followed by the scalar
    cotangents ``ȳ``, with ``Jᵀ·ȳ = x̄``.  Each step's inverse transposed
    Jacobian is applied first step first, alongside the step itself.
    """

    name = "ad.inverse_adjoint"
    EXPANDED_BY: ClassVar[str] = "ad-inverse-adjoint"


@irdl_attr_definition
class ScheduleAttr(ParametrizedAttribute):
    """``#ad.schedule<binomial, snapshots = 4>``, ``#ad.schedule<bisection>``,
    ``#ad.schedule<store_all>``: how the adjoint of the loop carrying it is
    checkpointed.  ``snapshots`` counts stored states, the loop's initial
    state included (Revolve's convention, ``revmlir.checkpoint``).

    Bennett's pebble game is not one of the schemes: it reverses a chain
    without snapshots, by uncomputing (``reversibilize``'s default mode is
    its k = 2 case), so no adjoint cursor runs it."""

    name = "ad.schedule"
    scheme: StringAttr = param_def(StringAttr)
    snapshots: IntAttr = param_def(IntAttr)

    def __init__(self, scheme: str, snapshots: int = 0):
        super().__init__(StringAttr(scheme), IntAttr(snapshots))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            scheme = parser.parse_identifier()
            snapshots = 0
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("snapshots")
                parser.parse_punctuation("=")
                snapshots = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (StringAttr(scheme), IntAttr(snapshots))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.scheme.data}")
        if self.snapshots.data:
            printer.print_string(f", snapshots = {self.snapshots.data}")
        printer.print_string(">")

    def verify(self) -> None:
        if self.scheme.data not in SCHEMES:
            raise VerifyException(
                f"unknown checkpoint scheme '{self.scheme.data}'; expected one of {', '.join(SCHEMES)}"
            )
        if (self.scheme.data == "binomial") != (self.snapshots.data > 0):
            raise VerifyException("'snapshots = n' (n >= 1) is required by binomial and only by binomial")
        if self.snapshots.data > MAX_COUNT:
            raise VerifyException(
                f"snapshots = {self.snapshots.data} is beyond the cursor's 64-bit words (at most {MAX_COUNT})"
            )


@irdl_op_definition
class NextOp(IRDLOperation, InvertibleOp, ForwardDifferentiableOp):
    """``%next:8 = ad.next #ad.schedule<…> %frames, %steps (%cursor…)``:
    the run-time cursor (``revmlir.checkpoint.cursor``) of a loop of
    ``%steps`` steps, moved on to the schedule's next entry; its first two
    words are that entry, a kind of ``revmlir.checkpoint.table.Entry`` and
    a step.

    The schedule is computed while it runs, from a few words carried by the
    loops that consume it and a stack of segment starts (``%frames``, at
    most one per snapshot held), so a checkpointed loop of any length has
    code and memory of fixed size, and its trip count may be known only
    when it starts.  The cursor is state, threaded from one ``ad.next`` to
    the next: it starts as zeros and its last words are known (``END``),
    so freeing them checks that the schedule ran to its end.
    """

    name = "ad.next"
    schedule = prop_def(ScheduleAttr)
    frames = operand_def(anc.StackType)
    steps = operand_def(IndexType)
    words = var_operand_def(IndexType)
    next_words = var_result_def(IndexType)

    traits = traits_def(NotDifferentiable(GRADIENT_ONLY))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.schedule)
        printer.print_string(" ")
        printer.print_operand(self.frames)
        printer.print_string(", ")
        printer.print_operand(self.steps)
        printer.print_string(" (")
        printer.print_list(self.words, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        schedule = parser.parse_attribute()
        if not isinstance(schedule, ScheduleAttr):
            parser.raise_error(f"expected #ad.schedule<…>, got {schedule}")
        frames = parser.resolve_operand(parser.parse_unresolved_operand(), anc.StackType(IndexType()))
        parser.parse_punctuation(",")
        steps = parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())
        words = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN,
            lambda: parser.resolve_operand(parser.parse_unresolved_operand(), IndexType()),
        )
        op = cls(schedule, frames, steps, words)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def __init__(self, schedule: ScheduleAttr, frames: SSAValue, steps: SSAValue, words: Sequence[SSAValue]):
        super().__init__(
            operands=[frames, steps, words],
            properties={"schedule": schedule},
            result_types=[[IndexType()] * len(words)],
        )

    @property
    def kind(self) -> SSAValue:
        return self.next_words[0]

    @property
    def step(self) -> SSAValue:
        return self.next_words[1]

    def consumed_operands(self) -> Sequence[SSAValue]:
        return tuple(self.words)

    def invert(self, inverter: InverseBuilder) -> None:
        """A schedule only moves forward: its cursor is state (threaded
        linearly through the loops, so its words are checked at the end like
        any ancilla) but it has no inverse."""
        raise InversionError(f"{describe_op(self)} has no inverse: it {GRADIENT_ONLY}")

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The schedule is control: the tangent program runs the same one
        (the cursor's words are indices, which carry no tangent)."""
        tangenter.copy(self)

    def verify_(self) -> None:
        if len(self.words) != WORDS:
            raise VerifyException(f"a cursor has {WORDS} words (revmlir.checkpoint.cursor), got {len(self.words)}")
        element = self.frames.type
        assert isinstance(element, anc.StackType)
        if not isinstance(element.element_type, IndexType):
            raise VerifyException("the cursor's frames are a stack of index")


Ad = Dialect(
    "ad",
    [AdjointOp, TangentOp, HessianOp, JacobianOp, CheckpointOp, InverseTangentOp, InverseAdjointOp, NextOp],
    [ScheduleAttr],
)
