"""One-line diagnostics (``file:line:col: error: message``) for every failure a
user can cause, in the format compilers and editors understand."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException, ParseError

from revmlir.errors import (
    AfterPass,
    BuildError,
    ExecutionError,
    InvertibilityError,
    LLVMRejected,
    LocatedError,
    RuleViolation,
    format_location,
)


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, with the line after it where
    it ends in ``:`` (xDSL says why a constraint fails on the next line:
    ``operand 'value' at position 1 does not verify:`` then ``attribute f64
    expected …``); an error without one (a bare ``assert``) is named by its
    class, as an internal error: its message would otherwise be empty, or
    the class of its text."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return internal_error(error)
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def internal_error(error: BaseException) -> str:
    """``error`` as a tool reports a failure that is no mistake of its
    user: its class and its message on one line.  The class, because the
    message alone may say nothing (a bare ``assert``, ``KeyError('x')``'s
    ``'x'``, an ``OSError()``)."""
    message = " ".join(str(error).split())
    return f"internal error ({type(error).__name__})" + (f": {message}" if message else "")


def failing_op(module: ModuleOp) -> tuple[Operation, Exception] | None:
    """The innermost op whose own verifier fails, in verification order."""
    for op in module.walk(reverse=False, region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except Exception as error:  # the op's own verifier may raise anything
            return op, error
    return None


def format_error(error: BaseException, module: ModuleOp | None = None, file: str = "<stdin>") -> str:
    """Render ``error`` as ``file:line:col: error: message``."""
    if isinstance(error, AfterPass):
        return _after_pass(error, module, file)
    if isinstance(error, ParseError):
        where = error.span.get_location()
        return f"{where.file}:{where.line}:{where.col}: error: {error.msg}"
    if isinstance(error, InvertibilityError):
        where = error.location or file
        subject = f"'{error.op_name}'" if error.op_name else "the program"
        within = f" in @{error.function}" if error.function else ""
        return f"{where}: error: [invertibility] {subject}{within}: {error.message}"
    if isinstance(error, ExecutionError):
        # located as the other errors are: the op's location first, where it has one
        unlocated = LocatedError(error.message, op_name=error.op_name, function=error.function)
        return f"{error.location or file}: error: {unlocated}"
    op: Operation | None = None
    message = first_line(error)
    if isinstance(error, BuildError) and (built_at := format_location(error.loc)) is not None:
        return f"{built_at}: error: {message}"
    if isinstance(error, RuleViolation):
        op = error.op
    elif isinstance(error, LLVMRejected):
        # at the function of the symbol LLVM refused, where the module has one
        op = SymbolTable.lookup_symbol(module, error.function) if module and error.function else None
    elif module is not None and isinstance(error, DiagnosticException | Exception):
        found = failing_op(module)
        if found is not None:
            op, cause = found
            message = first_line(cause)
            if isinstance(cause, RuleViolation):
                op = cause.op  # the op breaking the rule, not its rev.func
    prefix = (format_location(op.location) if op is not None else None) or file
    if op is not None and f"'{op.name}'" not in message:
        message = f"'{op.name}': {message}"
    return f"{prefix}: error: {message}"


def _after_pass(error: AfterPass, module: ModuleOp | None, file: str) -> str:
    """``error``'s cause, named after its pass: where the pass's output
    failed to verify, as that failure is located; where the pass raised,
    its own exception by class and message (the module is half rewritten:
    none of its ops is to blame), at the file."""
    if error.verifying:
        where, _, message = format_error(error.cause, module, file).partition(": error: ")
    else:
        cause = error.cause
        where, message = (
            file,
            f"{type(cause).__name__}: {first_line(cause)}" if str(cause).strip() else first_line(cause),
        )
    return f"{where}: error: after pass '{error.pass_name}': {message}"
