"""Errors that revmlir reports to its users.

Three families exist: static violations found by the verifier (they derive from
xDSL's ``VerifyException`` so every xDSL driver reports them), constructs a
transformation does not handle (``InversionError``, ``AdjointError``,
``TangentError``, ``CheckpointError``: xDSL's pass failures), and dynamic
violations found while a program runs (``InvertibilityError``).  All carry the
operation and its source location so a diagnostic can point at the user's text.
They live at the bottom of the layers because the rules on the ops raise them
as much as the transformations that call those rules do.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, LocationAttr, StringAttr
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

SOURCE_OP_ATTR = "rev.source_op"
"""On an op a lowering made for another (the heap allocation of an
``anc.array_alloc``), or ``reversibilize`` (the ``rev.call`` of ordinary
code's ``func.call``, the ``rev.take`` and ``rev.put`` of its
``memref.store``): that op's name, which every error at the op gives
(``source_op_name``: a native check registered at it, the interpreter's
errors), as the engine running the source op names it."""


def source_op_name(op: Operation) -> str:
    """The name an error at ``op`` gives it: the op it stands for
    (``SOURCE_OP_ATTR``), else its own."""
    source = op.attributes.get(SOURCE_OP_ATTR)
    return source.data if isinstance(source, StringAttr) else op.name


def format_location(loc: LocationAttr | None) -> str | None:
    """``file:line:col`` for file locations, ``None`` when nothing is known."""
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def describe_op(op: Operation) -> str:
    """The op's name followed by its location, the way diagnostics cite an op."""
    where = format_location(op.location)
    return f"'{op.name}'" + (f" at {where}" if where else "")


def describe_value(value: SSAValue) -> str:
    """A value by its name and where it comes from, for diagnostics."""
    name = f"%{value.name_hint}" if value.name_hint else "a value"
    if isinstance(value, OpResult):
        return f"{name} (result of {describe_op(value.op)})"
    return f"{name} (block argument #{value.index})"


class RuleViolation(VerifyException):
    """A module that breaks a rule of the IR, reported at the op breaking it.

    ``rule`` is the short name of the broken rule (``dominance``,
    ``linearity``, ``stale-read``, ...); the docs list every rule under the
    same name.
    """

    def __init__(self, rule: str, op: Operation, message: str):
        self.rule = rule
        self.op = op
        self.message = message
        super().__init__(f"[{rule}] {message}")


class ReversibilityViolation(RuleViolation):
    """A program the verifier can prove irreversible."""


class InversionError(DiagnosticException):
    """The inverter met IR the verifier should have rejected, or an op that
    has no inverse (one that forgets a value)."""


class AdjointError(PassFailedException):
    """A construct ``ad-adjoint`` does not differentiate, reported at its op."""


class TangentError(PassFailedException):
    """A construct ``ad-tangent`` does not differentiate, reported at its op."""


class CheckpointError(PassFailedException):
    """A loop or snapshot ``ad-checkpoint`` cannot handle, or snapshots that
    escape or unbalance their store, reported at the op."""


class BuildError(Exception):
    """A frontend asked ``revmlir.builder`` for something that cannot be
    built (an unknown variable, an ancilla that escapes its region,
    mismatched types), at the frontend's ``loc``.  Here, below the builder,
    so that ``revmlir.diagnostics`` reports it at that location."""

    def __init__(self, message: str, loc: LocationAttr | None = None):
        self.message = message
        self.loc = loc
        super().__init__(message)


class LLVMRejected(PassFailedException):
    """LLVM's parser or verifier refused the LLVM IR made of a module
    (``revmlir.lowering.llvm_parse``), in the function whose LLVM symbol
    is ``function`` where the text says which."""

    def __init__(self, message: str, function: str | None):
        super().__init__(message)
        self.function = function


def unsupported(op: Operation, why: str) -> AdjointError:
    """What an adjoint rule raises for a construct it does not handle."""
    return AdjointError(f"{describe_op(op)} cannot be differentiated: {why}")


def unsupported_in_forward_mode(op: Operation, why: str) -> TangentError:
    """What a tangent rule raises for a construct it does not handle."""
    return TangentError(f"{describe_op(op)} cannot be differentiated in forward mode: {why}")


class AfterPass(Exception):
    """A pass of a pipeline that failed by no diagnostic of its own: it
    raised some other exception (a custom pass's bug, xDSL's refusal of
    what its rewriter was asked to do), or left IR that does not verify.
    The cause is reported with the pass's name, so a message about IR the
    user never wrote (the half-rewritten module's first failing op, a rule
    the pass's output breaks) is not taken for the input's."""

    def __init__(self, pass_name: str, cause: Exception, verifying: bool):
        self.pass_name = pass_name
        self.cause = cause
        self.verifying = verifying
        """Whether the cause is the verification of the pass's output,
        which is located at the failing op; else the pass raised it."""
        super().__init__(f"after pass '{pass_name}': {cause}")


class LocatedError(RuntimeError):
    """An error of a running program, reported at the op that failed: its
    name, its source location and the function running it (``~f`` when
    ``f`` runs backwards), which every engine fills in the same way."""

    def __init__(
        self,
        message: str,
        *,
        op_name: str | None = None,
        location: str | None = None,
        function: str | None = None,
    ):
        self.message = message
        self.op_name = op_name
        self.location = location
        self.function = function
        parts: list[str] = []
        if location:
            parts.append(f"{location}:")
        if op_name:
            parts.append(f"'{op_name}'")
        if function:
            parts.append(f"in @{function}:")
        elif op_name:
            parts[-1] += ":"
        parts.append(message)
        super().__init__(" ".join(parts))

    @classmethod
    def at(cls, op: Operation, message: str, function: str | None = None):
        return cls(
            message,
            op_name=source_op_name(op),
            location=format_location(op.location),
            function=function,
        )


class InvertibilityError(LocatedError):
    """A run broke reversibility: an ancilla freed holding the wrong value, a
    postcondition that does not match, a shared read/write of one element, ...

    Raised by the interpreter (and, with checks on, by compiled code).
    """


class ExecutionError(LocatedError):
    """A run failed for a reason other than reversibility (division by zero,
    an index out of bounds, a wrong argument), with the op's location."""


OWN_DIAGNOSTICS: tuple[type[Exception], ...] = (DiagnosticException, LocatedError, BuildError, AfterPass)
"""The exceptions by which revmlir's code, and a pass written to its
conventions (docs/writing-a-pass.md), reports a mistake: anything else a
pass raises is none of them (``AfterPass``)."""
