"""The number types native code takes, checked on the rev module before the
lowering starts.

Native code represents a value by the C type a caller passes
(``revmlir.runtime.native``): signless integers of 1, 8, 16, 32 and 64
bits, ``index`` (64 bits), ``f32`` and ``f64``, complex numbers and arrays
of those, and the rev number types over them.  Anything else the
interpreter runs (``ui8``, ``i7``, ``i128``, ``f16``, ``bf16``, ``f80`` …)
would reach xDSL's verifier, LLVM or the argument marshalling and fail
there with their text and no location, so every entry point (``rev-run``,
``rev-translate``, ``NativeModule.compile``, the Python eDSL) refuses it
here, at the first op that has a value of it.  The lowering's own values
(the ``i128`` products of fixed-point numbers) are not the user's and are
not checked.

How native code lays those types out is here too, for every layer that
counts bytes: an element's (``element_bytes``: the lowering, the GPU's
arena and local memory, the interpreter's count of snapshot bytes) and
the largest array a function's frame holds (``FRAME_ARRAY_BYTES``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    UnrankedMemRefType,
    VectorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.llvm import LLVMType
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FixedType, LogType, TropicalType
from revmlir.errors import describe_op
from revmlir.ir_utils import nested_ops
from revmlir.runtime_checks import LOG_KIND

INTEGER_WIDTHS = (1, 8, 16, 32, 64)
"""The widths of the C integer types a native call passes."""

FRAME_ARRAY_BYTES = 4096
"""The largest ancilla array kept in the function's frame; larger ones go to
the heap, so they cannot overflow the stack."""


def element_bytes(type: Attribute) -> int:
    """The bytes of one element, as native code lays it out (a rev number
    as the value it is lowered to)."""
    if isinstance(type, LogType | TropicalType):
        return element_bytes(type.element_type)
    if isinstance(type, FixedType):
        return max(1, type.width.data // 8)
    if isinstance(type, ComplexType):
        return 2 * element_bytes(type.element_type)
    if isinstance(type, IndexType):
        return 8
    if isinstance(type, IntegerType):
        return max(1, type.width.data // 8)
    assert isinstance(type, AnyFloat)
    return type.bitwidth // 8


def shown_kind(type: Attribute) -> str | None:
    """The payload kind a check reports a value of the program's ``type``
    as where it is not its lowered type's: a log number's, whose
    logarithm a message shows as the number the program wrote
    (``LOG_KIND``); ``None`` for any other."""
    return LOG_KIND if isinstance(type, LogType) else None


def native_type_problem(type: Attribute) -> str | None:
    """Why native code does not take values of ``type``, or None where it
    does (types that hold no number, such as a function's, are for other
    checks)."""
    if isinstance(type, UnrankedMemRefType):
        return "its arrays have a rank (memref<*x...> has none; give the array's rank)"
    if isinstance(type, MemRefType) and isinstance(type.element_type, FixedType | LogType | TropicalType):
        return "its arrays hold integers, floats or complex numbers (rev's number types are scalars and stack elements)"
    if isinstance(type, MemRefType | StackType | ComplexType | LogType | TropicalType):
        element = type.element_type
        assert isinstance(element, Attribute)
        return native_type_problem(element)
    if isinstance(type, FixedType | IndexType | Float32Type | Float64Type):
        return None
    if isinstance(type, IntegerType):
        if type.signedness.data == Signedness.SIGNLESS and type.width.data in INTEGER_WIDTHS:
            return None
        return "its integers are signless i1, i8, i16, i32 or i64"
    if isinstance(type, AnyFloat):
        return "its floats are f32 or f64"
    return None


def std_signature_problem(type: Attribute) -> str | None:
    """Why native code does not pass ``type`` to or from a ``func.func``
    (code the module brought, which runs as it is written), or None where
    it does: what ``native_type_problem`` takes, but only the types that
    LLVM has a form of (the ``llvm`` dialect's own among them).  A type
    that holds no number (a tensor, ``none``, a tuple) or a stack or number
    type of revmlir's (which only a ``rev.func``'s lowering translates)
    would reach the verifier of xDSL's ``llvm.func`` with no location."""
    if isinstance(type, IntegerType | IndexType | AnyFloat | ComplexType | MemRefType | UnrankedMemRefType):
        return native_type_problem(type)
    if isinstance(type, VectorType | LLVMType):
        return native_type_problem(type)
    return "its func.func functions take and return numbers, complex numbers, vectors and arrays (a stack or rev's numbers only in a rev.func)"


def check_native_types(module: ModuleOp) -> None:
    """Raise a located ``PassFailedException`` at the first op defining a
    value of a type native code does not take: a result, or an argument of
    a block of its regions (a function's parameters), or at a function's
    type (a declaration has no body).  Every operand is one of those, so
    operands need no check of their own."""
    # a module has a few dozen types and ten thousand values: each type is
    # asked about once
    problems: dict[Attribute, str | None] = {}
    for op in nested_ops(module):
        if isinstance(op, FuncOp):
            signature_types = (*op.function_type.inputs, *op.function_type.outputs)
            refuse_unsupported(op, signature_types, {}, std_signature_problem)
        arguments = (arg.type for region in op.regions for block in region.blocks for arg in block.args)
        signature = op.properties.get("function_type")
        declared = (*signature.inputs, *signature.outputs) if isinstance(signature, FunctionType) else ()
        refuse_unsupported(op, (*op.result_types, *arguments, *declared), problems)


def refuse_unsupported(
    op: Operation,
    types: Iterable[Attribute],
    problems: dict[Attribute, str | None] | None = None,
    problem_of: Callable[[Attribute], str | None] = native_type_problem,
) -> None:
    """Raise a ``PassFailedException`` at ``op`` for the first of ``types``
    native code does not take, by ``problem_of`` (``problems``: what is
    known of types already asked about, added to)."""
    known = {} if problems is None else problems
    for type in types:
        if type in known:
            problem = known[type]
        else:
            problem = known[type] = problem_of(type)
        if problem is not None:
            raise PassFailedException(f"{describe_op(op)}: native code does not support type {type}; {problem}")
