"""``convert-std-to-llvm``: the output of ``rev-lower-to-std`` in xDSL's
``llvm`` dialect, which ``xdsl.backend.llvm.convert`` turns into llvmlite IR.

xDSL 0.74 ships no conversions into the llvm dialect, so revmlir has its own,
one rule table per source dialect (func, scf, arith, math, memref, complex).
Structured control flow becomes basic blocks directly.

Value representation:

- ``index`` is ``i64``; integers and floats keep their type;
- ``complex<T>`` is ``!llvm.struct<(T, T)>``;
- a memref of rank r is ``!llvm.struct<(ptr, i64 × r)>``: a pointer to
  contiguous row-major data and the sizes, so a C-contiguous numpy array maps
  onto it without a copy; a function the module defines takes it as its
  pointer, then its sizes (``expanded_inputs``), the pointer ``noalias``
  where ``revmlir.lowering.aliasing`` proves it may be;
- a function with several results returns a struct of them;
- ``memref.alloca`` of a static shape (or of sizes that are constants) is
  allocated once, in the entry block (``rev-lower-to-std`` uses it for stack
  headers, which never outlive one iteration of a loop; the GPU compiler for
  arrays of a known size, ``revmlir.gpu.local_arrays``), so a loop does not
  grow the frame; of a dynamic shape, where it is (``rev-lower-to-std`` uses it for ancilla arrays
  outside loops); ``memref.alloc``/``dealloc`` call ``malloc``/``free``;
- a declared function is external (libm, or the C library's allocator
  declared as an ``llvm.func``), unless it is one of the stack runtime's,
  which the pass defines first (``revmlir.lowering.stacks``); one whose
  ``rev.arrays`` attribute names how a primitive's C function takes arrays
  gets them that way (a pointer and a length or BLAS's stride);
- ``llvm`` ops in a function (the stack runtime's address its buffer with
  them) are kept as they are.

A function may have several blocks (``cf.br``, ``cf.cond_br``, ``cf.assert``,
as ``mlir-opt --convert-scf-to-cf`` leaves it): its blocks are translated
dominators first, block arguments becoming LLVM phis.

Every public function gets C-callable entry points:

- ``@_mlir_ciface_<name>``, upstream MLIR's C interface, so that objects link
  with C written against MLIR's (``mlir/ExecutionEngine/CRunnerUtils.h``): a
  memref argument is a pointer to upstream's descriptor ``{allocated ptr,
  aligned ptr, offset, sizes[rank], strides[rank]}`` (the data must be
  row-major contiguous, as the memref type's identity layout says), other
  arguments are passed by value; one scalar result is returned, a struct
  result (several results, a memref, a complex number) is stored through a
  pointer passed first.
- ``@<name>_ciface(ptr)``, revmlir's own, for functions written to rev's
  calling convention (results are the final values of the scalar arguments,
  in order): its argument points to an array of pointers, one per argument,
  to the argument's storage (a scalar, two floats for a complex, a ``{ptr,
  i64…}`` descriptor for a memref).  It calls the function and writes the
  scalar results back into the scalar arguments' storage, in order: the
  caller gets every argument, updated.  The native runtime calls this one:
  one pointer per argument, filled once per call frame, is what its fast
  path (``revmlir.runtime.marshal``) writes.

Both refuse, before the call, what a C caller passes that the code would
read or write past, or that no Python call passes (``_check_entry``): an
error slot shorter than ``ERROR_WORDS``, an array's negative size, sizes
other than its static shape or too large, a null data pointer, upstream's
negative offsets and strides other than row-major, a tropical or log
number that is not finite.  A
function of the module named like a C function its machine code calls,
or like an entry point, is refused (``check_symbol_names``): its symbol
would stand for both.  One named like the math LLVM makes of the code's,
which no source names, gets a symbol of its own instead (``own_symbol``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm, math, memref, scf, ub
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    ComplexType,
    DenseArrayBase,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from revmlir import fast_ops
from revmlir.collector import take_apart
from revmlir.dialects import rev
from revmlir.dialects.float_functions import HypotOp, RemFOp
from revmlir.dialects.primitives import ARRAYS_ATTR
from revmlir.dialects.upstream_forms import KINDS, AtomicRMWOp, ParallelOp
from revmlir.errors import describe_op
from revmlir.ir_utils import RuleTable, constant_index, constant_shape, is_float_type
from revmlir.lowering import complex_functions, stacks
from revmlir.lowering.aliasing import ArrayAliasing, analyse_arrays
from revmlir.lowering.checked_code import ABORT, CheckOp, report_words
from revmlir.lowering.intrinsics import check_intrinsic_call
from revmlir.lowering.native_types import FRAME_ARRAY_BYTES, element_bytes, refuse_unsupported
from revmlir.naming import RUNTIME_PREFIX
from revmlir.runtime_checks import (
    ALLOCATION_CHECK_ATTR,
    ARRAY_TOO_LARGE,
    BAD_STACK,
    ERROR_SLOT,
    ERROR_WORDS,
    FINITE_ARGUMENTS_ATTR,
    NEGATIVE_OFFSET,
    NEGATIVE_SIZE,
    NULL_DATA,
    OUT_OF_DOMAIN,
    PAYLOAD_SLOTS,
    REPORT,
    SHAPE_MISMATCH,
    SHORT_ERROR_SLOT,
    STACK_ARGUMENTS_ATTR,
    STRIDE_MISMATCH,
)

PTR = llvm.LLVMPointerType()
CIFACE_SUFFIX = "_ciface"
MLIR_CIFACE_PREFIX = "_mlir_ciface_"
UNGUARDED = ".unguarded"
"""``<entry>.unguarded``: an entry point's own code, which its guard calls
(``revmlir.runtime.guard``)."""
SETJMP, LONGJMP, SYSCALL = "_setjmp", "longjmp", "syscall"
GUARD_FUNCTIONS = (
    SETJMP,
    LONGJMP,
    "getpid",
    SYSCALL,
    "pthread_self",
    "pthread_getattr_np",
    "pthread_attr_getstack",
    "pthread_attr_destroy",
)
"""The C library functions the guards of host entry points call
(``revmlir.runtime.guard``): declared, but not pure."""
CODE_GENERATED_MATH = frozenset(("sincos", "sincosf", "exp2", "exp2f", "ldexp", "ldexpf"))
"""The libm functions LLVM's optimizer makes of the math host code
computes, under names the code never calls: ``sincos`` of a ``sin`` and a
``cos`` of one operand (complex ``exp``, ``sin``, ``cos``, ``tan``,
``pow``, ``expm1``), ``exp2`` of ``pow(2.0, x)``, ``ldexp`` of
``pow(2.0, n)`` and ``exp2(n)`` for a 32-bit ``n``; with ``f`` for
``f32``.  Read off the host's code at ``-O3`` for every op the lowering
translates, of ``f64`` and ``f32`` (``tests/test_native_numerics.py``
compiles the code that makes them); what else LLVM's code
generation may call (``__divti3`` and the other integer routines of
compiler-rt, ``__powidf2``, ``memcmp``) the code never makes it call: no
``i128`` division (a fixed-point product is only multiplied and shifted),
``math.fpowi`` as ``pow``."""
NO_LIBRARY_INTRINSICS = frozenset(("minimum", "maximum", "minimumnum", "maximumnum", "fptosi", "fptoui"))
"""LLVM's intrinsics the lowering calls (by the word after ``llvm.``) that
name no C library function: code generation makes instructions of them,
so a function of the module named ``@minimumnum`` is no clash, where one
named after the libm function an intrinsic may become (``@exp`` beside
``llvm.exp``) is (``check_symbol_names``).  ``tests/test_native_numerics.py``
checks the C functions the host's code calls."""
RUNTIME_LIBRARY = frozenset(
    (*stacks.MEMORY_FUNCTIONS, ABORT, *GUARD_FUNCTIONS, "memcpy", "memmove", "memset", *CODE_GENERATED_MATH)
)
"""The C library functions host code may call whatever its source calls:
the allocator (stacks, ancilla arrays), ``abort``, the guards', the
functions LLVM makes of copies and fills of memory, and those it makes of
math (``CODE_GENERATED_MATH``).  A function of the module named so would
be called in their place (``check_symbol_names``), but for those of
``CODE_GENERATED_MATH``, which host code gives a symbol of its own
(``own_symbol``)."""
OWN_SYMBOL_PREFIX = RUNTIME_PREFIX + "fn."
"""The prefix of the symbol host code gives a function of the module named
like the math LLVM makes (``own_symbol``): a program's function may not be
named so (``RUNTIME_PREFIX``), nor may a C function."""


def own_symbol(name: str) -> str:
    """The machine-code symbol of the module's function ``@name`` in host
    code: its name, but for a name of ``CODE_GENERATED_MATH``, which
    LLVM's optimizer gives calls of its own making (``sincos`` of a ``sin``
    and a ``cos``) and which would then run the function.  A user never
    sees these names in the code, so such a function is not refused but
    named apart, with ``OWN_SYMBOL_PREFIX``; its entry points keep its
    name (``<name>_ciface``), which no C function has, so that C callers,
    the JIT's look-ups and errors all call it as its source does."""
    return OWN_SYMBOL_PREFIX + name if name in CODE_GENERATED_MATH else name


def entry_point_names(name: str) -> tuple[str, str]:
    """The C entry points of a function ``@name``: upstream's
    ``_mlir_ciface_<name>`` and ``<name>_ciface``."""
    return MLIR_CIFACE_PREFIX + name, name + CIFACE_SUFFIX


def named_like_entry_point(name: str) -> bool:
    """Whether ``name`` has the form of an entry point's, or of its guarded
    code's (``<f>_ciface.unguarded``)."""
    return name.startswith(MLIR_CIFACE_PREFIX) or name.removesuffix(UNGUARDED).endswith(CIFACE_SUFFIX)


def llvm_type(type: Attribute) -> Attribute:
    """The LLVM type of a value of ``type`` (module docstring).  Dispatched
    on the exact class: ``isinstance`` on xDSL's attribute classes goes
    through ``ABCMeta``, and a translation asks about every value."""
    kind = type.__class__
    if kind is IndexType:
        return i64
    if kind is MemRefType:
        return _array_type(type.get_num_dims())
    if kind is ComplexType:
        element = llvm_type(type.element_type)
        return llvm.LLVMStructType.from_type_list([element, element])
    return type


_ICMP = fast_ops.CMPI_PREDICATES
"""``llvm.icmp``'s predicates by name (numbered as ``arith.cmpi``'s)."""


@functools.cache
def _array_type(rank: int) -> llvm.LLVMStructType:
    """An array of ``rank`` dimensions: its data pointer, then its sizes."""
    return llvm.LLVMStructType.from_type_list([PTR] + [i64] * rank)


def descriptor_type(type: MemRefType) -> llvm.LLVMStructType:
    """Upstream MLIR's memref descriptor: allocated and aligned pointers,
    offset, then sizes and strides (in elements) when the rank is not 0."""
    rank = type.get_num_dims()
    arrays = [llvm.LLVMArrayType(rank, i64)] * 2 if rank else []
    return llvm.LLVMStructType.from_type_list([PTR, PTR, i64, *arrays])


def expanded_inputs(types: Sequence[Attribute]) -> list[Attribute]:
    """The parameters of a function the module defines: an array is passed
    as its data pointer then its sizes, so that the pointer can carry
    ``noalias``; every other value as its ``llvm_type``."""
    expanded: list[Attribute] = []
    for type in types:
        if isinstance(type, MemRefType):
            expanded += [PTR, *[i64] * type.get_num_dims()]
        else:
            expanded.append(llvm_type(type))
    return expanded


def _results_type(types: Sequence[Attribute]) -> Attribute | None:
    converted = [llvm_type(t) for t in types]
    if not converted:
        return None
    if len(converted) == 1:
        return converted[0]
    return llvm.LLVMStructType.from_type_list(converted)


@functools.cache
def llvm_position(*indices: int) -> DenseArrayBase:
    """An aggregate's field (attributes are immutable: one per position)."""
    return DenseArrayBase.from_list(i64, indices)


def _float_suffix(type: Attribute) -> str:
    if isinstance(type, Float32Type):
        return "f32"
    if isinstance(type, Float64Type):
        return "f64"
    raise PassFailedException(f"no LLVM intrinsics for {type}")


# ---------------------------------------------------------------------------
# The translator
# ---------------------------------------------------------------------------

Rule = Callable[["FunctionTranslation", Operation], None]
translates: RuleTable[Rule] = RuleTable()


@dataclass
class ModuleTranslation:
    """Collects the llvm functions and the external declarations they need."""

    functions: list[Operation] = field(default_factory=list[Operation])
    declared: dict[str, llvm.LLVMFunctionType] = field(default_factory=dict[str, llvm.LLVMFunctionType])
    noalias: dict[str, frozenset[int]] = field(default_factory=dict[str, frozenset[int]])
    """Per function the module defines (which take each array as a pointer
    and its sizes, ``expanded_inputs``): its array parameters whose pointer
    is ``noalias`` (``revmlir.lowering.aliasing``).  A function declared
    here that has an entry was defined by the analysed module and is
    another module's now, in the same machine code (the native rest of a
    module, ``revmlir.runtime.native``): it takes its arrays the same way."""
    conventions: dict[str, str] = field(default_factory=dict[str, str])
    """Per external function of a primitive that takes arrays: how it takes
    them (``ARRAY_CONVENTIONS``, from the declaration's ``rev.arrays``)."""
    overrides: RuleTable[Rule] | None = None
    """Rules that take precedence over ``translates``, for a target whose
    code differs (GPU code: ``revmlir.gpu.nvptx``)."""
    library: set[str] = field(default_factory=set[str])
    """The C library functions the code calls: libm calls, and the
    functions LLVM's math intrinsics may become (``exp``, ``expf`` for
    ``llvm.exp.*``)."""
    rules: dict[type[Operation], Rule | None] = field(default_factory=dict[type[Operation], "Rule | None"])
    """Per class of op met so far, its rule (``rule``)."""
    report: str = REPORT
    """The name of the module's ``revmlir.report``, which a failing
    ``CheckOp`` calls (device code names it as PTX allows)."""
    own_symbols: bool = False
    """Whether the module's functions get ``own_symbol``'s symbols (host
    code, which LLVM gives calls of ``CODE_GENERATED_MATH``; a kernel is
    looked up by its name)."""

    def symbol(self, name: str) -> str:
        """The symbol of the function ``@name``: ``own_symbol``'s where it is
        the analysed module's (defined here, or another module's of
        ``noalias``), else a C function's, its name."""
        return own_symbol(name) if self.own_symbols and name in self.noalias else name

    def rule(self, op: Operation) -> Rule | None:
        """The rule that translates ``op``: the target's, else the common
        one, else ``keep_llvm_op`` for an ``llvm`` op without regions or
        successors; looked up once per class of op."""
        kind = type(op)
        if kind in self.rules:
            return self.rules[kind]
        rule = (self.overrides.get(kind) if self.overrides is not None else None) or translates.get(kind)
        if rule is None and op.dialect_name() == "llvm" and not op.regions and not op.successors:
            rule = keep_llvm_op
        self.rules[kind] = rule
        return rule

    def declare(self, name: str, inputs: Sequence[Attribute], output: Attribute | None) -> None:
        if name not in self.declared:
            self.declared[name] = llvm.LLVMFunctionType(list(inputs), output)

    def add_declaration(self, source: func.FuncOp) -> None:
        """A body-less ``func.func``: an external function (the stack
        runtime's are defined before, ``stacks.define_runtime``), or one of
        ``noalias``'s that another module defines."""
        types = source.function_type.inputs.data
        name = source.sym_name.data
        if name in self.noalias:
            inputs = expanded_inputs(types)
        elif (convention := self.conventions.get(name)) is not None:
            inputs = _convention_inputs(types, convention)
        else:
            inputs = [llvm_type(t) for t in types]
        output = _results_type(source.function_type.outputs.data)
        self.declare(self.symbol(name), inputs, output)

    def module(self) -> list[Operation]:
        externals: list[Operation] = [
            llvm.FuncOp(name, type, linkage=llvm.LinkageAttr("external"))
            for name, type in sorted(self.declared.items())
        ]
        return externals + self.functions


class FunctionTranslation:
    def __init__(self, module: ModuleTranslation, source: func.FuncOp):
        self.module = module
        self.source = source
        self.mapping: dict[SSAValue, SSAValue] = {}
        self.region = Region()
        self.block = Block()
        self.blocks: dict[Block, Block] = {}
        """Each block of the source function's body: its translation's
        first block (``cf`` branches target it)."""
        self.reused: dict[tuple[Block | None, Hashable, Hashable], SSAValue] = {}
        """Constants, descriptor fields, array addresses and integer
        comparisons already emitted, by the scope (``continue_in``) that
        may use them again (``const``, ``extract``, ``_element_address``,
        ``_cmpi``), or by ``None``, the whole function (``function_const``):
        a kernel's every array access is checked, and each check branches,
        so each access emitted its own in a block of its own."""
        self.checked: set[tuple[Block, SSAValue]] = set()
        """The conditions checked, by scope (``_check``): a check of one of
        them again in the scope cannot fail."""
        self.scopes: dict[Block, Block] = {}
        """A block that continues another's code (``continue_in``): the
        first block of their scope."""
        self.fields: dict[SSAValue, list[SSAValue]] = {}
        """The fields of the aggregates ``pack`` built (array descriptors of
        parameters and allocations): ``extract`` gives them back, in any
        block, since they dominate the aggregate and so its every use."""
        self.strided_arguments = any(_has_layout(t) for t in source.function_type.inputs)
        """Whether a parameter is a memref with a layout (``check_layouts``)."""

    # -- emission -------------------------------------------------------------

    def new_block(self, types: Sequence[Attribute] = ()) -> Block:
        block = Block(arg_types=[llvm_type(t) for t in types])
        self.region.add_block(block)
        return block

    def emit(self, op: Operation, like: Operation | None = None) -> Operation:
        if like is not None:
            op.location = like.location
        self.block.add_op(op)
        return op

    def continue_in(self, block: Block) -> None:
        """Emit the code after a structured op in ``block``, which the
        current block dominates and branches to, and which is where the
        current block's code goes on (it gets no more ops): what the current
        block's scope emitted, ``block`` uses again."""
        self.scopes[block] = self.scope()
        self.block = block

    def scope(self) -> Block:
        """The first block of the current block's scope (``continue_in``):
        what a block of the scope emitted dominates the current one, so a
        pure value computed there is used again (``reused``)."""
        return self.scopes.get(self.block, self.block)

    def value(self, op: Operation, like: Operation | None = None) -> SSAValue:
        return self.emit(op, like).results[0]

    def get(self, value: SSAValue) -> SSAValue:
        return self.mapping[value]

    def set(self, old: SSAValue, new: SSAValue) -> None:
        if old.name_hint and not new.name_hint:
            new.name_hint = old.name_hint
        self.mapping[old] = new

    def const(self, value: int | float, type: Attribute, like: Operation | None = None) -> SSAValue:
        type = llvm_type(type)
        number = float(value) if is_float_type(type) else int(value)
        # repr tells -0.0 from 0.0, which compare equal
        key = (self.scope(), type, repr(number))
        if (found := self.reused.get(key)) is None:
            found = self.reused[key] = self.value(fast_ops.llvm_constant(number, type), like)
        return found

    def function_const(self, value: int, type: Attribute) -> SSAValue:
        """An integer constant of the whole function, at the start of its
        entry block: a constant is no LLVM instruction, so where it is
        placed does not change the LLVM IR, and the constants every check
        uses (``_check``) are then one op each per function instead of one
        per check."""
        key = (None, type, str(value))
        if (found := self.reused.get(key)) is None:
            entry = self.region.blocks[0]
            constant = fast_ops.llvm_constant(value, type)
            if entry.first_op is None:
                entry.add_op(constant)
            else:
                entry.insert_op_before(constant, entry.first_op)
            found = self.reused[key] = constant.results[0]
        return found

    def extract(self, container: SSAValue, index: int, type: Attribute, like: Operation | None = None) -> SSAValue:
        if (fields := self.fields.get(container)) is not None:
            return fields[index]
        key = (self.scope(), container, index)
        if (found := self.reused.get(key)) is None:
            found = self.reused[key] = self.value(fast_ops.llvm_extract(llvm_position(index), container, type), like)
        return found

    def pack(self, type: Attribute, values: Sequence[SSAValue], like: Operation | None = None) -> SSAValue:
        result = self.value(fast_ops.llvm_undef(type), like)
        for index, value in enumerate(values):
            result = self.value(fast_ops.llvm_insert(llvm_position(index), result, value), like)
        self.fields[result] = list(values)
        return result

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute, like: Operation) -> SSAValue:
        function = name.split(".")[1]
        if function not in NO_LIBRARY_INTRINSICS:
            self.module.library.update((function, function + "f"))
        return self.value(fast_ops.llvm_intrinsic(name, list(args), [result]), like)

    def libm(self, name: str, args: Sequence[SSAValue], like: Operation) -> SSAValue:
        type = args[0].type
        symbol = name if isinstance(type, Float64Type) else name + "f"
        self.module.library.add(symbol)
        self.module.declare(symbol, [a.type for a in args], type)
        return self.value(fast_ops.llvm_call(symbol, args, type), like)

    # -- translation ------------------------------------------------------------

    def translate(self) -> llvm.FuncOp:
        source = self.source
        entry = source.body.blocks[0]
        inputs = expanded_inputs(source.function_type.inputs.data)
        self.block = Block(arg_types=inputs)
        self.region.add_block(self.block)
        parameters = iter(self.block.args)
        for old in entry.args:
            if isinstance(old.type, MemRefType):
                fields = [next(parameters) for _ in range(1 + old.type.get_num_dims())]
                if old.name_hint:
                    for index, field in enumerate(fields):
                        field.name_hint = old.name_hint + (f"_size{index - 1}" if index else "_data")
                self.set(old, self.pack(llvm_type(old.type), fields))
            else:
                self.set(old, next(parameters))
        order = _dominators_first(entry)
        self.blocks = {entry: self.block} | {b: self.new_block([a.type for a in b.args]) for b in order[1:]}
        for block in order:
            self.block = self.blocks[block]
            if block is not entry:
                for old, new in zip(block.args, self.block.args, strict=True):
                    self.set(old, new)
            self.translate_ops(block.ops)
        output = _results_type(source.function_type.outputs.data)
        op = llvm.FuncOp(
            self.module.symbol(source.sym_name.data),
            llvm.LLVMFunctionType(inputs, output),
            linkage=llvm.LinkageAttr("internal"),
            body=self.region,
        )
        op.properties["arg_attrs"] = ArrayAttr(self.parameter_attributes())
        op.location = source.location
        return op

    def parameter_attributes(self) -> list[DictionaryAttr]:
        noalias = self.module.noalias[self.source.sym_name.data]
        attributes: list[DictionaryAttr] = []
        for index, arg in enumerate(self.source.body.blocks[0].args):
            if isinstance(arg.type, MemRefType):
                pointer = {"llvm.noalias": UnitAttr()} if index in noalias else {}
                attributes += [DictionaryAttr(pointer), *[DictionaryAttr({})] * arg.type.get_num_dims()]
            else:
                attributes.append(DictionaryAttr({}))
        return attributes

    def translate_ops(self, ops: Iterable[Operation]) -> None:
        rule_of = self.module.rule
        for op in ops:
            rule = rule_of(op)
            if rule is None:
                raise PassFailedException(f"{describe_op(op)} cannot be compiled to native code")
            self.check_layouts(op)
            rule(self, op)

    def check_layouts(self, op: Operation) -> None:
        """Refuse ``op`` if a memref it takes or gives has a layout.  Its
        operands need no look unless a parameter has one: every other value
        is an op's result, refused at that op, which is translated first
        (blocks go dominators first), or a block argument, whose type is
        that of the values the edge into its block from a dominator
        carries (a branch, an ``scf.for``'s initial values), refused where
        they were made: a back edge's branch is translated after the
        block, but its values have the same types.  The operand types are
        most of what looking costs."""
        values = (*op.operands, *op.results) if self.strided_arguments else op.results
        for value in values:
            if _has_layout(value.type):
                raise PassFailedException(
                    f"{describe_op(op)}: {value.type} is not row-major contiguous, "
                    "which native code requires of every memref"
                )

    def translate_region_into(self, region: Region, args: Sequence[SSAValue]) -> list[SSAValue]:
        """Translate ``region``'s block at the current block; return the
        translated operands of its terminator (which is not translated)."""
        block = region.block
        for old, new in zip(block.args, args, strict=True):
            self.set(old, new)
        self.translate_ops(list(block.ops)[:-1])
        terminator = block.last_op
        assert terminator is not None
        return [self.get(v) for v in terminator.operands]


def _dominators_first(entry: Block) -> list[Block]:
    """The blocks reachable from ``entry`` in breadth-first order, in which
    every block comes after its dominators (on every path to it, so on the
    shortest), and so after the definitions of the values it uses."""
    order, seen = [entry], {entry}
    for block in order:
        assert block.last_op is not None
        for successor in block.last_op.successors:
            if successor not in seen:
                seen.add(successor)
                order.append(successor)
    return order


def follows_rev_convention(source: func.FuncOp) -> bool:
    """Whether the results of ``source`` are the final values of its scalar
    (non-memref) arguments, in order, as rev functions' are."""
    inputs = source.function_type.inputs.data
    return list(source.function_type.outputs.data) == [t for t in inputs if not isinstance(t, MemRefType)]


def ciface(module: ModuleTranslation, source: func.FuncOp) -> llvm.FuncOp:
    """``void <name>_ciface(ptr args)`` of a function that
    ``follows_rev_convention``: see the module docstring."""
    inputs = list(source.function_type.inputs.data)
    outputs = list(source.function_type.outputs.data)
    t = FunctionTranslation(module, source)
    t.block = t.new_block([PTR])
    slots: list[SSAValue] = []
    values: list[SSAValue] = []
    for index, type in enumerate(inputs):
        slot = t.value(fast_ops.llvm_load(t.value(llvm.GEPOp(t.block.args[0], [index], PTR)), PTR))
        slots.append(slot)
        values.append(t.value(fast_ops.llvm_load(slot, llvm_type(type))))
    args = _expanded_arguments(
        list(source.body.blocks[0].args), values, lambda value, index, type: t.extract(value, index, type)
    )
    passed = [
        _Passed(
            data := t.extract(value, 0, PTR), [data], [t.extract(value, 1 + d, i64) for d in range(type.get_num_dims())]
        )
        for value, type in zip(values, inputs)
        if isinstance(type, MemRefType)
    ]
    _check_entry(t, source, args, passed, None)
    call = t.emit(fast_ops.llvm_call(module.symbol(source.sym_name.data), args, _results_type(outputs)))
    scalar_slots = [s for s, t in zip(slots, inputs) if not isinstance(t, MemRefType)]
    if len(outputs) == 1:
        t.emit(fast_ops.llvm_store(call.results[0], scalar_slots[0]))
    else:
        for index, (slot, type) in enumerate(zip(scalar_slots, outputs, strict=True)):
            t.emit(fast_ops.llvm_store(t.extract(call.results[0], index, llvm_type(type)), slot))
    t.emit(llvm.ReturnOp())
    op = llvm.FuncOp(
        entry_point_names(source.sym_name.data)[1],
        llvm.LLVMFunctionType([PTR], None),
        linkage=llvm.LinkageAttr("external"),
        body=t.region,
    )
    op.location = source.location
    return op


def mlir_ciface(module: ModuleTranslation, source: func.FuncOp) -> llvm.FuncOp:
    """``_mlir_ciface_<name>``, upstream MLIR's C interface: see the module
    docstring."""
    inputs = list(source.function_type.inputs.data)
    outputs = list(source.function_type.outputs.data)
    packed = [descriptor_type(t) if isinstance(t, MemRefType) else llvm_type(t) for t in outputs]
    returned = llvm.LLVMStructType.from_type_list(packed) if len(packed) > 1 else (packed or [None])[0]
    by_pointer = isinstance(returned, llvm.LLVMStructType)
    parameters = [PTR if isinstance(t, MemRefType) else llvm_type(t) for t in inputs]
    t = FunctionTranslation(module, source)
    entry = t.block = t.new_block([PTR] * by_pointer + parameters)
    args: list[SSAValue] = []
    passed: list[_Passed] = []
    checked = list(inputs[-1:]) == [ERROR_SLOT]
    for arg, type in zip(entry.args[by_pointer:], inputs, strict=True):
        if isinstance(type, MemRefType):
            descriptor = t.value(fast_ops.llvm_load(arg, descriptor_type(type)))
            passed.append(_from_descriptor(t, descriptor, type, checked))
            args += [passed[-1].data, *passed[-1].sizes]
        else:
            args.append(arg)
    _check_entry(t, source, args, passed, None if by_pointer else returned)
    call = t.emit(fast_ops.llvm_call(module.symbol(source.sym_name.data), args, _results_type(outputs)))
    results = (
        list(call.results)
        if len(outputs) == 1
        else [t.extract(call.results[0], index, llvm_type(type)) for index, type in enumerate(outputs)]
    )
    results = [_to_descriptor(t, r, o) if isinstance(o, MemRefType) else r for r, o in zip(results, outputs)]
    if by_pointer:
        assert returned is not None
        value = t.pack(returned, results) if len(results) > 1 else results[0]
        t.emit(fast_ops.llvm_store(value, entry.args[0]))
    t.emit(llvm.ReturnOp(*results[:1]) if returned is not None and not by_pointer else llvm.ReturnOp())
    op = llvm.FuncOp(
        entry_point_names(source.sym_name.data)[0],
        llvm.LLVMFunctionType(list(entry.arg_types), None if by_pointer else returned),
        linkage=llvm.LinkageAttr("external"),
        body=t.region,
    )
    op.location = source.location
    return op


@dataclass(frozen=True)
class _Passed:
    """The fields of an array's descriptor as a C caller passed them."""

    data: SSAValue
    """Where its elements start, as the function takes it."""
    pointers: Sequence[SSAValue]
    """By their place in the descriptor: ``revmlir_memrefN``'s data,
    upstream's allocated and aligned pointers."""
    sizes: Sequence[SSAValue]
    offset: SSAValue | None = None
    """Upstream's, in elements from the aligned pointer."""
    strides: Sequence[SSAValue] = ()
    """Upstream's, in elements."""


INT64_MAX = 2**63 - 1
"""The most bytes an argument's array or stack may span (numpy's limit)."""


def _check_entry(
    t: FunctionTranslation,
    source: func.FuncOp,
    args: Sequence[SSAValue],
    passed: Sequence[_Passed],
    returned: Attribute | None,
) -> None:
    """Refuse, in a C entry point of ``source`` whose last argument is the
    error slot, before its call (``args``: the call's arguments;
    ``passed``: each array's descriptor), whatever a C caller passes that
    the code would read or write past, or that no Python call passes:

    - an error slot of fewer than ``ERROR_WORDS`` words, or with a null
      data pointer, a negative offset or a stride other than 1 (such a
      slot has no words; ``SHORT_ERROR_SLOT`` in its word 0, where it has
      one);
    - per array, in order: a negative dynamic size (``NEGATIVE_SIZE``; the
      code's index checks compare sizes as counts), a size other than its
      type's static one (``SHAPE_MISMATCH``), sizes whose product in bytes
      passes ``INT64_MAX`` (``ARRAY_TOO_LARGE``; index arithmetic would
      wrap), a null pointer of an array with elements (``NULL_DATA``),
      upstream's negative offset (``NEGATIVE_OFFSET``) and strides other
      than row-major (``STRIDE_MISMATCH``), and a stack's header whose
      size, capacity and buffer disagree (``BAD_STACK``, by
      ``STACK_ARGUMENTS_ATTR``);
    - a scalar outside the values of its type (``OUT_OF_DOMAIN``, by
      ``FINITE_ARGUMENTS_ATTR``): a tropical -inf, a log number's NaN.

    Each stores its id and payload and returns at once, as a failed check
    does: a scalar result ``returned`` is 0, a struct result is not
    written.  A descriptor's rank is the type's: C passes no rank to
    check."""
    inputs = source.function_type.inputs.data
    if list(inputs[-1:]) != [ERROR_SLOT]:
        return
    slot = passed[-1]
    data = slot.data
    usable = _compare(t, _address(t, slot.pointers[-1]), "ne", 0)
    if slot.offset is not None:
        usable = _and(t, usable, _compare(t, slot.offset, "sge", 0))
        usable = _and(t, usable, _compare(t, slot.strides[0], "eq", 1))
    size = t.value(fast_ops.llvm_select(usable, slot.sizes[0], t.const(0, i64)))

    def store(words: Sequence[SSAValue]) -> None:
        for index, value in enumerate(words):
            t.emit(fast_ops.llvm_store(value, t.value(fast_ops.llvm_gep(data, t.const(index, i64), i64))))

    def leave_when(bad: SSAValue, failed: Callable[[], None]) -> None:
        failure, after = t.new_block(), t.new_block()
        t.emit(fast_ops.llvm_cond_branch(bad, failure, [], after, []))
        before, t.block = t.block, failure
        failed()
        t.emit(llvm.ReturnOp(t.const(0, returned)) if returned is not None else llvm.ReturnOp())
        t.block = before
        t.continue_in(after)

    def refuse(bad: SSAValue, id: int, *payload: int | SSAValue) -> None:
        words = [t.const(v, i64) if isinstance(v, int) else v for v in (id, *payload)]
        leave_when(bad, functools.partial(store, words))

    def short() -> None:
        stored, done = t.new_block(), t.new_block()
        t.emit(fast_ops.llvm_cond_branch(_compare(t, size, "sgt", 0), stored, [], done, []))
        t.block = stored
        store([t.const(SHORT_ERROR_SLOT, i64)])
        t.emit(fast_ops.llvm_branch(done))
        t.block = done

    leave_when(_compare(t, size, "slt", ERROR_WORDS), short)
    must_be_finite, element_sizes = _entry_attributes(source)
    arrays = iter(passed)
    position = 0
    for index, type in enumerate(inputs[:-1]):
        if not isinstance(type, MemRefType):
            if index in must_be_finite:
                bad, bits = _not_finite(t, args[position])
                refuse(bad, OUT_OF_DOMAIN, index, bits)
            position += 1
            continue
        array = next(arrays)
        _check_array(t, index, type, array, refuse)
        if element_sizes[index]:
            _check_stack(t, index, array.data, element_sizes[index], refuse)
        position += 1 + type.get_num_dims()


STACK_HEADER = MemRefType(i64, [3])
"""A stack argument's type at the std level: its header."""


def _entry_attributes(source: func.FuncOp) -> tuple[set[int], tuple[int, ...]]:
    """The positions of ``source``'s arguments that must be finite and, per
    argument but the error slot, a stack's element bytes (0: not a stack),
    by its ``FINITE_ARGUMENTS_ATTR`` and ``STACK_ARGUMENTS_ATTR``.  Std IR
    is printed, edited and read back, and the entry points load and
    convert by these without another look at the signature, so one that
    does not fit it (a float check of an integer, a header read from an
    array of any size) is refused at the function."""
    inputs = source.function_type.inputs.data[:-1]

    def integers(name: str, what: str) -> tuple[int, ...]:
        found = source.attributes.get(name)
        if found is None:
            return ()
        if isinstance(found, DenseArrayBase) and found.elt_type == i64:
            return tuple(int(v) for v in found.get_values())
        raise PassFailedException(f"{describe_op(source)}: {name} must be an array<i64: ...> of {what}, got {found}")

    finite = integers(FINITE_ARGUMENTS_ATTR, "positions of float arguments")
    for position in finite:
        if not (0 <= position < len(inputs) and is_float_type(inputs[position])):
            raise PassFailedException(
                f"{describe_op(source)}: {FINITE_ARGUMENTS_ATTR} names argument {position}, "
                f"which is not a float argument of @{source.sym_name.data}"
            )
    sizes = integers(STACK_ARGUMENTS_ATTR, "a stack's element bytes per argument")
    if sizes and len(sizes) != len(inputs):
        raise PassFailedException(
            f"{describe_op(source)}: {STACK_ARGUMENTS_ATTR} has {len(sizes)} entries, "
            f"but @{source.sym_name.data} has {len(inputs)} arguments before its error slot"
        )
    for position, size in enumerate(sizes):
        if size < 0 or (size and inputs[position] != STACK_HEADER):
            raise PassFailedException(
                f"{describe_op(source)}: {STACK_ARGUMENTS_ATTR} gives argument {position} ({inputs[position]}) "
                f"{size} bytes: a stack's entry is its element's bytes, positive, on a {STACK_HEADER} header"
            )
    return set(finite), sizes or (0,) * len(inputs)


def _check_array(
    t: FunctionTranslation,
    index: int,
    type: MemRefType,
    array: _Passed,
    refuse: Callable[..., None],
) -> None:
    """``_check_entry``'s checks of array argument ``index``."""
    total = t.const(element_bytes(type.element_type), i64)
    elements = t.const(1, i1)
    for dim, (expected, given) in enumerate(zip(type.get_shape(), array.sizes, strict=True)):
        if expected == DYNAMIC_INDEX:
            refuse(_compare(t, given, "slt", 0), NEGATIVE_SIZE, index, dim, given)
        else:
            refuse(_compare(t, given, "ne", expected), SHAPE_MISMATCH, index, dim, expected, given)
        # numpy's limit: the nonzero sizes' product, in bytes (``total`` is never 0)
        empty = _compare(t, given, "eq", 0)
        factor = t.value(fast_ops.llvm_select(empty, t.const(1, i64), given))
        room = t.value(fast_ops.binary(llvm.SDivOp, t.const(INT64_MAX, i64), total))
        refuse(_compare(t, factor, "sgt", room), ARRAY_TOO_LARGE, index, dim, given)
        total = t.value(fast_ops.binary(llvm.MulOp, total, factor))
        elements = _and(t, elements, _compare(t, given, "ne", 0))
    for place, pointer in enumerate(array.pointers):
        refuse(_and(t, elements, _compare(t, _address(t, pointer), "eq", 0)), NULL_DATA, index, place)
    if array.offset is not None:
        refuse(_compare(t, array.offset, "slt", 0), NEGATIVE_OFFSET, index, array.offset)
    # numpy's relaxed row-major rule: a size-1 dimension's index is always 0
    # and an empty array is never read, so their strides are free (numpy
    # gives 0 or arbitrary ones there, and MLIR's numpy helper passes them on)
    stride = t.const(1, i64)
    for dim in reversed(range(len(array.strides))):
        given = array.strides[dim]
        free = _and(t, elements, _compare(t, array.sizes[dim], "ne", 1))
        refuse(_and(t, free, _compare(t, given, "ne", stride)), STRIDE_MISMATCH, index, dim, stride, given)
        stride = t.value(fast_ops.binary(llvm.MulOp, stride, array.sizes[dim]))


def _check_stack(
    t: FunctionTranslation, index: int, header: SSAValue, bytes_each: int, refuse: Callable[..., None]
) -> None:
    """``_check_entry``'s check of the header ``[buffer, size, capacity]``
    of stack argument ``index`` (its descriptor checked already), whose
    elements take ``bytes_each``."""
    buffer, size, capacity = (
        t.value(fast_ops.llvm_load(t.value(fast_ops.llvm_gep(header, t.const(word, i64), i64)), i64))
        for word in (stacks.DATA, stacks.SIZE, stacks.CAPACITY)
    )
    bad = [
        _compare(t, size, "slt", 0),
        _compare(t, size, "sgt", capacity),
        _compare(t, capacity, "sgt", INT64_MAX // bytes_each),
        _and(t, _compare(t, buffer, "eq", 0), _compare(t, capacity, "ne", 0)),
    ]
    refuse(
        functools.reduce(lambda a, b: t.value(fast_ops.binary(llvm.OrOp, a, b)), bad),
        BAD_STACK,
        index,
        size,
        capacity,
        buffer,
    )


def _compare(t: FunctionTranslation, value: SSAValue, predicate: str, bound: int | SSAValue) -> SSAValue:
    """``value predicate bound`` of 64-bit integers."""
    other = t.const(bound, i64) if isinstance(bound, int) else bound
    return t.value(fast_ops.llvm_icmp(value, other, _ICMP[predicate]))


def _and(t: FunctionTranslation, a: SSAValue, b: SSAValue) -> SSAValue:
    return t.value(fast_ops.binary(llvm.AndOp, a, b))


def _address(t: FunctionTranslation, pointer: SSAValue) -> SSAValue:
    return t.value(llvm.PtrToIntOp(pointer, i64))


def _not_finite(t: FunctionTranslation, value: SSAValue) -> tuple[SSAValue, SSAValue]:
    """Whether the float ``value`` is an infinity or NaN, and its bits as a
    ``double``'s."""
    wide = value if isinstance(value.type, Float64Type) else t.value(fast_ops.cast(llvm.FPExtOp, value, f64))
    magnitude = t.value(llvm.FAbsOp(wide, f64))
    # ``ueq``: NaN too
    bad = t.value(fast_ops.llvm_fcmp(magnitude, t.const(float("inf"), f64), fast_ops.CMPF_PREDICATES["ueq"]))
    return bad, t.value(fast_ops.cast(llvm.BitcastOp, wide, i64))


def _from_descriptor(t: FunctionTranslation, descriptor: SSAValue, type: MemRefType, checked: bool) -> _Passed:
    """The fields of an upstream memref descriptor: the data pointer
    (aligned pointer plus offset) and the sizes, as ``expanded_inputs``
    passes an array; with ``checked``, the rest, for ``_check_entry``."""
    rank = type.get_num_dims()

    def part(*position: int, type: Attribute = i64) -> SSAValue:
        return t.value(fast_ops.llvm_extract(llvm_position(*position), descriptor, type))

    aligned, offset = part(1, type=PTR), part(2)
    data = t.value(fast_ops.llvm_gep(aligned, offset, llvm_type(type.element_type)))
    sizes = [part(3, d) for d in range(rank)]
    if not checked:
        return _Passed(data, [aligned], sizes)
    return _Passed(data, [part(0, type=PTR), aligned], sizes, offset, [part(4, d) for d in range(rank)])


def _to_descriptor(t: FunctionTranslation, array: SSAValue, type: MemRefType) -> SSAValue:
    """The upstream descriptor of an array: its data as both pointers,
    offset 0, row-major strides."""
    rank = type.get_num_dims()
    data = t.extract(array, 0, PTR)
    descriptor = t.value(fast_ops.llvm_undef(descriptor_type(type)))
    fields: list[tuple[tuple[int, ...], SSAValue]] = [((0,), data), ((1,), data), ((2,), t.const(0, i64))]
    stride = t.const(1, i64)
    for dim in reversed(range(rank)):
        size = t.extract(array, dim + 1, i64)
        fields += [((3, dim), size), ((4, dim), stride)]
        stride = t.value(fast_ops.binary(llvm.MulOp, stride, size))
    for position, value in fields:
        descriptor = t.value(fast_ops.llvm_insert(llvm_position(*position), descriptor, value))
    return descriptor


# ---------------------------------------------------------------------------
# func
# ---------------------------------------------------------------------------


@translates(func.ReturnOp)
def _return(t: FunctionTranslation, op: Operation) -> None:
    values = [t.get(v) for v in op.operands]
    result_type = _results_type([v.type for v in op.operands])
    if result_type is None:
        t.emit(llvm.ReturnOp(), op)
    elif len(values) == 1:
        t.emit(llvm.ReturnOp(values[0]), op)
    else:
        t.emit(llvm.ReturnOp(t.pack(result_type, values, op)), op)


@translates(func.CallOp)
def _call(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    # IRDL's accessors cost a lookup of the op's definition each: read once
    callee, sources, results = op.callee.string_value(), list(op.arguments), op.results
    result_type = _results_type(results.types)
    arguments = _call_arguments(t, callee, sources, op)
    call = t.emit(fast_ops.llvm_call(t.module.symbol(callee), arguments, result_type), op)
    if len(results) == 1:
        t.set(results[0], call.results[0])
    for index, result in enumerate(results if len(results) > 1 else ()):
        t.set(result, t.extract(call.results[0], index, llvm_type(result.type), op))


def _call_arguments(t: FunctionTranslation, callee: str, sources: Sequence[SSAValue], op: Operation) -> list[SSAValue]:
    """The translated arguments ``sources`` of a call of ``callee``, passed
    as the callee takes them."""
    args = [t.get(a) for a in sources]
    if callee in t.module.noalias:
        return _expanded_arguments(sources, args, lambda value, index, type: t.extract(value, index, type, op))
    if (convention := t.module.conventions.get(callee)) is not None:
        return _convention_arguments(t, sources, args, convention, op)
    return args


@translates(CheckOp)
def _check(t: FunctionTranslation, op: Operation) -> None:
    """A check (``revmlir.lowering.checked_code``): the LLVM IR of its std
    form, without the std ops: a branch on ``ok xor true`` to a block that
    computes the payload's words, calls the report and branches to the
    code after the check (the report does not return), or else there
    directly.  Branching on ``ok`` instead, the blocks swapped, is the
    same program, which LLVM's InstCombine makes of this one; but the
    ``simplifycfg`` runs before it count the ``xor`` among a block's
    instructions, and lay out some kernels otherwise (GMM's points: 170
    registers instead of 166).

    A check of the condition a check before it in the scope checked (the
    same ``icmp``, which ``_cmpi`` emits once per scope: each access of an
    element checks its index again) is dropped: it cannot fail, since the
    report of the first does not return.  Only this form drops it; the std
    form's ``scf.if`` is translated as it is."""
    assert isinstance(op, CheckOp)
    ok = t.get(op.ok)
    key = (t.scope(), ok)
    if key in t.checked:
        # a check of this condition came first in the scope, and so
        # dominates: had the condition failed, its report (which does not
        # return) would have ended the run
        return
    t.checked.add(key)
    bad = t.value(fast_ops.binary(llvm.XOrOp, ok, t.function_const(1, i1)), op)

    def payload() -> list[SSAValue]:
        words: list[SSAValue] = []
        for value in op.payload:
            if value.type.__class__ is IndexType or value.type == i64:
                # its own word: an index is an i64 (what its index_cast becomes)
                words.append(t.get(value))
                continue
            ops, found = report_words(value)
            for word in ops:
                word.location = op.location
            t.translate_ops(ops)
            words += [t.get(w) for w in found]
            for word in reversed(ops):
                word.erase()
        return words

    _report_when(t, bad, op.error, op.check.value.data, payload, op)


def _report_when(
    t: FunctionTranslation,
    bad: SSAValue,
    error: SSAValue,
    identifier: int,
    payload: Callable[[], list[SSAValue]],
    op: Operation,
) -> None:
    """Branch on ``bad`` to a block that reports check ``identifier``
    through the error slot ``error`` (the source's value) with the words
    ``payload`` emits there, and branches to the code after (the report
    does not return), where the current block's code goes on."""
    report, after = t.new_block(), t.new_block()
    t.emit(fast_ops.llvm_cond_branch(bad, report, [], after, []), op)
    before = t.block
    t.block = report
    words = [t.value(fast_ops.llvm_constant(identifier, i64), op), *payload()]
    if unused := PAYLOAD_SLOTS - (len(words) - 1):
        words += [t.function_const(0, i64)] * unused
    slot = _call_arguments(t, t.module.report, [error], op)
    t.emit(fast_ops.llvm_call(t.module.report, [*slot, *words], None), op)
    t.emit(fast_ops.llvm_branch(after), op)
    t.block = before
    t.continue_in(after)


def _expanded_arguments(
    sources: Sequence[SSAValue],
    values: Sequence[SSAValue],
    extract: Callable[[SSAValue, int, Attribute], SSAValue],
) -> list[SSAValue]:
    """``values`` (for the arguments ``sources``) as ``expanded_inputs``
    passes them: each array's descriptor split into its pointer and sizes
    (``extract``: a field of a descriptor)."""
    expanded: list[SSAValue] = []
    for source, value in zip(sources, values, strict=True):
        type = source.type
        if type.__class__ is not MemRefType:
            expanded.append(value)
            continue
        expanded.append(extract(value, 0, PTR))
        for index in range(1, 1 + type.get_num_dims()):
            expanded.append(extract(value, index, i64))
    return expanded


def _count_type(convention: str) -> Attribute:
    return i32 if convention == "blas32" else i64


def _convention_inputs(types: Sequence[Attribute], convention: str) -> list[Attribute]:
    """The C parameters of a primitive's function that takes arrays as
    ``convention`` says (``ARRAY_CONVENTIONS``): BLAS's leading length, then
    each array as a pointer and its length or stride."""
    count = _count_type(convention)
    expanded: list[Attribute] = [count] if convention != "pointer_length" else []
    for type in types:
        expanded += [PTR, count] if isinstance(type, MemRefType) else [llvm_type(type)]
    return expanded


def _convention_arguments(
    t: FunctionTranslation, sources: Sequence[SSAValue], values: Sequence[SSAValue], convention: str, like: Operation
) -> list[SSAValue]:
    """``values`` as ``_convention_inputs`` takes them; the lowering checked
    that BLAS's arrays have one length (``rev-lower-to-std``)."""
    count = _count_type(convention)

    def length(array: SSAValue) -> SSAValue:
        size = t.extract(array, 1, i64, like)
        return size if count == i64 else t.value(fast_ops.cast(llvm.TruncOp, size, count), like)

    arrays = [v for source, v in zip(sources, values, strict=True) if isinstance(source.type, MemRefType)]
    expanded = [length(arrays[0])] if convention != "pointer_length" else []
    for source, value in zip(sources, values, strict=True):
        if not isinstance(source.type, MemRefType):
            expanded.append(value)
            continue
        second = length(value) if convention == "pointer_length" else t.const(1, count, like)
        expanded += [t.extract(value, 0, PTR, like), second]
    return expanded


def _has_layout(type: Attribute) -> bool:
    """Whether ``type`` is a memref with a layout other than the identity
    (``llvm_type`` represents a memref by its data pointer and sizes)."""
    return type.__class__ is MemRefType and type.layout.__class__ is not NoneAttr


def keep_llvm_op(t: FunctionTranslation, op: Operation) -> None:
    """An ``llvm`` op, with its operands translated.  A call of an LLVM
    intrinsic whose types LLVM refuses is a located error here, not LLVM's
    unlocated one for the whole module."""
    if isinstance(op, llvm.CallIntrinsicOp):
        check_intrinsic_call(op, [llvm_type(a.type) for a in op.operands], [llvm_type(r) for r in op.result_types])
    clone = t.emit(op.clone(value_mapper=dict(t.mapping)), op)
    for old, new in zip(op.results, clone.results, strict=True):
        t.set(old, new)


# ---------------------------------------------------------------------------
# cf
# ---------------------------------------------------------------------------


@translates(cf.BranchOp)
def _branch(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, cf.BranchOp)
    t.emit(fast_ops.llvm_branch(t.blocks[op.successor], [t.get(v) for v in op.arguments]), op)


@translates(cf.ConditionalBranchOp)
def _conditional_branch(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, cf.ConditionalBranchOp)
    then_args, else_args = ([t.get(v) for v in args] for args in (op.then_arguments, op.else_arguments))
    then_block, else_block = t.blocks[op.then_block], t.blocks[op.else_block]
    t.emit(fast_ops.llvm_cond_branch(t.get(op.cond), then_block, then_args, else_block, else_args), op)


@translates(cf.AssertOp)
def _assert(t: FunctionTranslation, op: Operation) -> None:
    """A failed assertion traps (upstream prints the message and aborts;
    revmlir's own checks report through the error slot instead)."""
    assert isinstance(op, cf.AssertOp)
    holds, fails = t.new_block(), t.new_block()
    t.emit(fast_ops.llvm_cond_branch(t.get(op.arg), holds, [], fails, []), op)
    before = t.block
    t.block = fails
    t.emit(llvm.CallIntrinsicOp("llvm.trap", [], []), op)
    t.emit(llvm.UnreachableOp(), op)
    t.block = before
    t.continue_in(holds)


# ---------------------------------------------------------------------------
# scf
# ---------------------------------------------------------------------------


@translates(scf.IfOp)
def _if(t: FunctionTranslation, op: Operation) -> None:
    """Two branches joining again; an ``if`` without ``else`` (every
    run-time check) branches to the join directly, without an empty block
    that only branches there: checks are most of a checked module's
    ``scf.if``s, and their empty blocks were built, converted and given to
    LLVM only to be folded away (the PTX is the same)."""
    assert isinstance(op, scf.IfOp)
    condition = t.get(op.cond)
    types = list(op.output.types)
    then_block, merge = t.new_block(), t.new_block(types)
    branches = [(then_block, op.true_region)]
    if op.false_region.blocks:
        branches.append((t.new_block(), op.false_region))
    else_block = branches[1][0] if len(branches) > 1 else merge
    t.emit(fast_ops.llvm_cond_branch(condition, then_block, [], else_block, []), op)
    before = t.block
    for block, region in branches:
        t.block = block
        values = t.translate_region_into(region, [])
        t.emit(fast_ops.llvm_branch(merge, values), op)
    t.block = before
    t.continue_in(merge)
    for old, new in zip(op.output, merge.args, strict=True):
        t.set(old, new)


@translates(scf.ForOp)
def _for(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, scf.ForOp)
    bounds = (op.lb, op.ub, op.step)
    results = _counted_loop(t, op, bounds, list(op.iter_args), op.body)
    for old, new in zip(op.res, results, strict=True):
        t.set(old, new)


@translates(scf.ParallelOp, ParallelOp)
def _parallel(t: FunctionTranslation, op: Operation) -> None:
    """One thread runs the iterations in ascending order (any order is
    valid); a GPU kernel runs them at once instead."""
    assert isinstance(op, scf.ParallelOp)
    if len(op.lowerBound) != 1 or op.initVals:
        raise PassFailedException(
            f"{describe_op(op)}: only one-dimensional scf.parallel loops without reductions "
            "can be lowered (a parallel rev.for lowers to one)"
        )
    _counted_loop(t, op, (op.lowerBound[0], op.upperBound[0], op.step[0]), [], op.body)


def _counted_loop(
    t: FunctionTranslation, op: Operation, bounds: Sequence[SSAValue], carried: Sequence[SSAValue], region: Region
) -> Sequence[SSAValue]:
    """The iterations ``range(lb, ub, step)`` carrying ``carried`` through
    ``region``; the values after the loop.  ``step`` is read as unsigned.

    *Exactly those iterations, at every width*: ``i += step`` in the loop's
    type wraps where ``ub`` is within ``step`` of the type's top (an ``i8``
    loop from 0 to 127 by 2 would step from 126 to −128 and never end), so
    the loop does not compare ``i + step`` with ``ub``.  It enters where
    ``lb < ub`` and goes on after ``i`` where ``ub − i > step``, unsigned:
    ``lb ≤ i < ub``, so ``ub − i`` is exactly the distance, from 1 to
    2^N − 1, which no signed type holds; ``i + step`` is used only where it
    is below ``ub``.  Against ``i + step < ub`` this costs a subtraction
    per iteration where LLVM does not remove it (it does in counted loops:
    the exit count of ``ub − i > c`` is known for a constant ``c``, which
    also lets loops of a constant step other than 1 vectorize).  Reading
    the step unsigned lets the grid-stride loop of a GPU kernel take a
    stride of up to 2^64 − 1 (``revmlir.gpu.outline``); every step
    ``rev-lower-to-std`` builds is positive, so it reads the same signed."""
    lb, ub, step = (t.get(v) for v in bounds)
    types = [bounds[0].type, *(v.type for v in carried)]
    body, exit = t.new_block(types), t.new_block(types[1:])
    initial = [t.get(v) for v in carried]
    enter = t.value(fast_ops.llvm_icmp(lb, ub, _ICMP["slt"]), op)
    t.emit(fast_ops.llvm_cond_branch(enter, body, [lb, *initial], exit, initial), op)
    before = t.block
    t.block = body
    index, *state = body.args
    yielded = t.translate_region_into(region, [index, *state])
    left = t.value(fast_ops.binary(llvm.SubOp, ub, index), op)
    more = t.value(fast_ops.llvm_icmp(left, step, _ICMP["ugt"]), op)
    following = t.value(fast_ops.binary(llvm.AddOp, index, step), op)
    t.emit(fast_ops.llvm_cond_branch(more, body, [following, *yielded], exit, yielded), op)
    t.block = before
    t.continue_in(exit)
    return exit.args


@translates(scf.WhileOp)
def _while(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, scf.WhileOp)
    before_types = [a.type for a in op.before_region.block.args]
    after_types = [a.type for a in op.after_region.block.args]
    before, after, exit = t.new_block(before_types), t.new_block(after_types), t.new_block(list(op.res.types))
    t.emit(fast_ops.llvm_branch(before, [t.get(v) for v in op.arguments]), op)
    t.block = before
    condition, *forwarded = t.translate_region_into(op.before_region, list(before.args))
    t.emit(fast_ops.llvm_cond_branch(condition, after, forwarded, exit, forwarded), op)
    t.block = after
    yielded = t.translate_region_into(op.after_region, list(after.args))
    t.emit(fast_ops.llvm_branch(before, yielded), op)
    t.block = exit
    for old, new in zip(op.res, exit.args, strict=True):
        t.set(old, new)


# ---------------------------------------------------------------------------
# arith
# ---------------------------------------------------------------------------

_SAME_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}


@translates(*_SAME_BINARY)
def _binary(t: FunctionTranslation, op: Operation) -> None:
    a, b = (t.get(v) for v in op.operands)
    t.set(op.results[0], t.value(fast_ops.binary(_SAME_BINARY[type(op)], a, b), op))


@translates(arith.ConstantOp)
def _constant(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp)
    value = op.value
    if not isinstance(value, IntegerAttr | FloatAttr):
        raise PassFailedException(f"{describe_op(op)}: only scalar constants are supported")
    t.set(op.result, t.const(value.value.data, op.result.type, op))


@translates(arith.CmpiOp)
def _cmpi(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, arith.CmpiOp)
    a, b = t.get(op.lhs), t.get(op.rhs)
    predicate = op.predicate.value.data
    key = (t.scope(), (a, b), predicate)
    if (found := t.reused.get(key)) is None:
        # arith and llvm number the integer predicates the same way.
        found = t.reused[key] = t.value(fast_ops.llvm_icmp(a, b, predicate), op)
    t.set(op.result, found)


@translates(arith.CmpfOp)
def _cmpf(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, arith.CmpfOp)
    a, b = t.get(op.lhs), t.get(op.rhs)
    if (constant := _CONSTANT_PREDICATES.get(op.predicate.value.data)) is not None:
        t.set(op.result, t.const(constant, i1, op))
        return
    t.set(op.result, t.value(fast_ops.llvm_fcmp(a, b, op.predicate.value.data), op))


_CONSTANT_PREDICATES = {0: 0, 15: 1}
"""``arith.cmpf``'s ``false`` and ``true``, which need no comparison."""


@translates(arith.SelectOp)
def _select(t: FunctionTranslation, op: Operation) -> None:
    c, a, b = (t.get(v) for v in op.operands)
    t.set(op.results[0], t.value(fast_ops.llvm_select(c, a, b), op))


@translates(arith.NegfOp)
def _negf(t: FunctionTranslation, op: Operation) -> None:
    t.set(op.results[0], t.value(fast_ops.llvm_fneg(t.get(op.operands[0])), op))


_INTEGER_EXTREMA: dict[type[Operation], int] = {
    arith.MaxSIOp: _ICMP["sgt"],
    arith.MinSIOp: _ICMP["slt"],
    arith.MaxUIOp: _ICMP["ugt"],
    arith.MinUIOp: _ICMP["ult"],
}
"""The predicate under which an integer extremum takes its first operand."""


@translates(*_INTEGER_EXTREMA)
def _integer_extremum(t: FunctionTranslation, op: Operation) -> None:
    a, b = (t.get(v) for v in op.operands)
    take_a = t.value(fast_ops.llvm_icmp(a, b, _INTEGER_EXTREMA[type(op)]), op)
    t.set(op.results[0], t.value(fast_ops.llvm_select(take_a, a, b), op))


@translates(arith.CeilDivUIOp)
def _ceildivui(t: FunctionTranslation, op: Operation) -> None:
    """Upstream's expansion: 0 for a = 0, else (a − 1) / b + 1, unsigned
    (which cannot overflow); division by zero stays undefined."""
    a, b = (t.get(v) for v in op.operands)
    zero, one = t.const(0, a.type, op), t.const(1, a.type, op)
    quotient = t.value(fast_ops.binary(llvm.UDivOp, t.value(fast_ops.binary(llvm.SubOp, a, one), op), b), op)
    is_zero = t.value(fast_ops.llvm_icmp(a, zero, _ICMP["eq"]), op)
    t.set(
        op.results[0],
        t.value(fast_ops.llvm_select(is_zero, zero, t.value(fast_ops.binary(llvm.AddOp, quotient, one), op)), op),
    )


@translates(arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp)
def _float_extremum(t: FunctionTranslation, op: Operation) -> None:
    """IEEE 754-2019's extrema, ``-0.0`` below ``0.0``: ``minimumf`` its
    minimum (NaN wins), ``minnumf`` its minimumNumber (NaN loses), which
    ``llvm.minimumnum`` is on every target, x86's code and LLVM's folding
    alike.  Not ``llvm.minnum``, which may return either of two zeros:
    x86's returns the first, so the result's sign followed the operands'
    order and could differ from the interpreter's and a folded one's."""
    names = {
        arith.MaximumfOp: "llvm.maximum",
        arith.MinimumfOp: "llvm.minimum",
        arith.MaxnumfOp: "llvm.maximumnum",
        arith.MinnumfOp: "llvm.minimumnum",
    }
    a, b = (t.get(v) for v in op.operands)
    name = f"{names[type(op)]}.{_float_suffix(a.type)}"
    t.set(op.results[0], t.intrinsic(name, [a, b], a.type, op))


def _signed_division(t: FunctionTranslation, op: Operation, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The truncated quotient and remainder of ``a / b``, with division by
    −1 defined as wrapping negation (remainder 0): LLVM's ``sdiv``/``srem``
    are undefined for ``INT_MIN / −1``, while integers wrap everywhere else
    (and in the interpreter).  Division by zero stays undefined."""
    zero, minus_one = t.const(0, a.type, op), t.const(-1, a.type, op)
    by_minus_one = t.value(fast_ops.llvm_icmp(b, minus_one, _ICMP["eq"]), op)
    divisor = t.value(fast_ops.llvm_select(by_minus_one, t.const(1, a.type, op), b), op)
    quotient = t.value(fast_ops.binary(llvm.SDivOp, a, divisor), op)
    negated = t.value(fast_ops.binary(llvm.SubOp, zero, a), op)
    remainder = t.value(fast_ops.binary(llvm.SRemOp, a, divisor), op)
    return (
        t.value(fast_ops.llvm_select(by_minus_one, negated, quotient), op),
        t.value(fast_ops.llvm_select(by_minus_one, zero, remainder), op),
    )


@translates(arith.DivSIOp, arith.RemSIOp)
def _truncated_division(t: FunctionTranslation, op: Operation) -> None:
    quotient, remainder = _signed_division(t, op, *(t.get(v) for v in op.operands))
    t.set(op.results[0], quotient if isinstance(op, arith.DivSIOp) else remainder)


@translates(arith.FloorDivSIOp, arith.CeilDivSIOp)
def _rounded_division(t: FunctionTranslation, op: Operation) -> None:
    """Signed division rounding down (or up): adjust the truncated quotient
    when the remainder is non-zero and its sign calls for it."""
    a, b = (t.get(v) for v in op.operands)
    zero, one = t.const(0, a.type, op), t.const(1, a.type, op)
    quotient, remainder = _signed_division(t, op, a, b)
    inexact = t.value(fast_ops.llvm_icmp(remainder, zero, _ICMP["ne"]), op)
    negative_a = t.value(fast_ops.llvm_icmp(a, zero, _ICMP["slt"]), op)
    negative_b = t.value(fast_ops.llvm_icmp(b, zero, _ICMP["slt"]), op)
    signs_differ = t.value(fast_ops.binary(llvm.XOrOp, negative_a, negative_b), op)
    if isinstance(op, arith.FloorDivSIOp):
        adjust = t.value(fast_ops.binary(llvm.AndOp, inexact, signs_differ), op)
        adjusted = t.value(fast_ops.binary(llvm.SubOp, quotient, one), op)
    else:
        true = t.const(1, i1, op)
        same_sign = t.value(fast_ops.binary(llvm.XOrOp, signs_differ, true), op)
        adjust = t.value(fast_ops.binary(llvm.AndOp, inexact, same_sign), op)
        adjusted = t.value(fast_ops.binary(llvm.AddOp, quotient, one), op)
    t.set(op.results[0], t.value(fast_ops.llvm_select(adjust, adjusted, quotient), op))


def _int_width(type: Attribute) -> int:
    return 64 if isinstance(type, IndexType) else type.width.data


def _resize(t: FunctionTranslation, op: Operation, signed: bool = True) -> None:
    value = t.get(op.operands[0])
    source, target = _int_width(op.operands[0].type), _int_width(op.results[0].type)
    result_type = llvm_type(op.results[0].type)
    if source == target:
        t.set(op.results[0], value)
    elif source < target:
        kind = llvm.SExtOp if signed else llvm.ZExtOp
        t.set(op.results[0], t.value(fast_ops.cast(kind, value, result_type), op))
    else:
        t.set(op.results[0], t.value(fast_ops.cast(llvm.TruncOp, value, result_type), op))


@translates(arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp)
def _int_cast(t: FunctionTranslation, op: Operation) -> None:
    _resize(t, op)


@translates(arith.ExtUIOp)
def _extui(t: FunctionTranslation, op: Operation) -> None:
    _resize(t, op, signed=False)


@translates(arith.SIToFPOp)
def _sitofp(t: FunctionTranslation, op: Operation) -> None:
    t.set(op.results[0], t.value(fast_ops.cast(llvm.SIToFPOp, t.get(op.operands[0]), op.results[0].type), op))


@translates(arith.FPToSIOp)
def _fptosi(t: FunctionTranslation, op: Operation) -> None:
    value = t.get(op.operands[0])
    target = llvm_type(op.results[0].type)
    name = f"llvm.fptosi.sat.i{_int_width(target)}.{_float_suffix(value.type)}"
    t.set(op.results[0], t.intrinsic(name, [value], target, op))


@translates(arith.UIToFPOp)
def _uitofp(t: FunctionTranslation, op: Operation) -> None:
    """By ``sitofp`` (the llvm dialect has no ``uitofp``): a narrow value
    zero-extended to 64 bits; a wide one with its top bit set halved first,
    its lowest bit kept as a sticky bit so the result rounds as a direct
    conversion does, then doubled."""
    value = t.get(op.operands[0])
    result_type = op.results[0].type
    if _int_width(value.type) < 64:
        wide = t.value(fast_ops.cast(llvm.ZExtOp, value, i64), op)
        t.set(op.results[0], t.value(fast_ops.cast(llvm.SIToFPOp, wide, result_type), op))
        return
    one = t.const(1, value.type, op)
    direct = t.value(fast_ops.cast(llvm.SIToFPOp, value, result_type), op)
    sticky = t.value(
        fast_ops.binary(
            llvm.OrOp,
            t.value(fast_ops.binary(llvm.LShrOp, value, one), op),
            t.value(fast_ops.binary(llvm.AndOp, value, one), op),
        ),
        op,
    )
    halved = t.value(fast_ops.cast(llvm.SIToFPOp, sticky, result_type), op)
    doubled = t.value(fast_ops.binary(llvm.FAddOp, halved, halved), op)
    small = t.value(fast_ops.llvm_icmp(value, t.const(0, value.type, op), _ICMP["sge"]), op)
    t.set(op.results[0], t.value(fast_ops.llvm_select(small, direct, doubled), op))


@translates(arith.FPToUIOp)
def _fptoui(t: FunctionTranslation, op: Operation) -> None:
    """Saturating, as ``arith.fptosi``: out-of-range values clamp to 0 or
    the largest unsigned value, NaN gives 0 (upstream leaves them poison)."""
    value = t.get(op.operands[0])
    target = llvm_type(op.results[0].type)
    name = f"llvm.fptoui.sat.i{_int_width(target)}.{_float_suffix(value.type)}"
    t.set(op.results[0], t.intrinsic(name, [value], target, op))


@translates(arith.BitcastOp)
def _bitcast(t: FunctionTranslation, op: Operation) -> None:
    t.set(op.results[0], t.value(fast_ops.cast(llvm.BitcastOp, t.get(op.operands[0]), op.results[0].type), op))


@translates(arith.ExtFOp)
def _extf(t: FunctionTranslation, op: Operation) -> None:
    t.set(op.results[0], t.value(fast_ops.cast(llvm.FPExtOp, t.get(op.operands[0]), op.results[0].type), op))


@translates(arith.TruncFOp)
def _truncf(t: FunctionTranslation, op: Operation) -> None:
    t.set(op.results[0], t.value(fast_ops.cast(llvm.FPTruncOp, t.get(op.operands[0]), op.results[0].type), op))


# ---------------------------------------------------------------------------
# math
# ---------------------------------------------------------------------------

_INTRINSIC_UNARY: dict[type[Operation], str] = {
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.LogOp: "log",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
    math.SqrtOp: "sqrt",
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.AbsFOp: "fabs",
    math.FloorOp: "floor",
    math.CeilOp: "ceil",
    math.TruncOp: "trunc",
    math.RoundOp: "round",
    math.RoundEvenOp: "roundeven",
}
_LIBM_UNARY: dict[type[Operation], str] = {
    math.TanOp: "tan",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.AtanOp: "atan",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.TanhOp: "tanh",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.ErfOp: "erf",
    math.CbrtOp: "cbrt",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
}


@translates(*_INTRINSIC_UNARY)
def _intrinsic_unary(t: FunctionTranslation, op: Operation) -> None:
    value = t.get(op.operands[0])
    name = f"llvm.{_INTRINSIC_UNARY[type(op)]}.{_float_suffix(value.type)}"
    t.set(op.results[0], t.intrinsic(name, [value], value.type, op))


@translates(*_LIBM_UNARY)
def _libm_unary(t: FunctionTranslation, op: Operation) -> None:
    t.set(op.results[0], t.libm(_LIBM_UNARY[type(op)], [t.get(op.operands[0])], op))


@translates(math.RsqrtOp)
def _rsqrt(t: FunctionTranslation, op: Operation) -> None:
    value = t.get(op.operands[0])
    root = t.intrinsic(f"llvm.sqrt.{_float_suffix(value.type)}", [value], value.type, op)
    t.set(op.results[0], t.value(fast_ops.binary(llvm.FDivOp, t.const(1.0, value.type, op), root), op))


@translates(math.PowFOp, math.CopySignOp)
def _intrinsic_binary(t: FunctionTranslation, op: Operation) -> None:
    a, b = (t.get(v) for v in op.operands)
    base = "pow" if isinstance(op, math.PowFOp) else "copysign"
    t.set(op.results[0], t.intrinsic(f"llvm.{base}.{_float_suffix(a.type)}", [a, b], a.type, op))


_LIBM_BINARY: dict[type[Operation], str] = {math.Atan2Op: "atan2", HypotOp: "hypot", RemFOp: "fmod"}
"""Binary ops that are the C library's functions: ``arith.remf`` is libm's
``fmod`` rather than LLVM's ``frem``, which NVPTX expands to the rounded
``a - b·trunc(a/b)`` (libdevice's ``fmod`` is exact)."""


@translates(*_LIBM_BINARY)
def _libm_binary(t: FunctionTranslation, op: Operation) -> None:
    t.set(op.results[0], t.libm(_LIBM_BINARY[type(op)], [t.get(v) for v in op.operands], op))


@translates(math.FPowIOp)
def _fpowi(t: FunctionTranslation, op: Operation) -> None:
    """``pow(a, (double) b)``, as the interpreter computes it: libm's pow is
    correctly rounded where ``llvm.powi``'s repeated squaring is off by a
    few ulps, and needs no compiler-runtime call (``__powidf2``)."""
    base, exponent = (t.get(v) for v in op.operands)
    real = t.value(fast_ops.cast(llvm.SIToFPOp, exponent, base.type), op)
    t.set(op.results[0], t.intrinsic(f"llvm.pow.{_float_suffix(base.type)}", [base, real], base.type, op))


@translates(math.IPowIOp)
def _ipowi(t: FunctionTranslation, op: Operation) -> None:
    """Exponentiation by squaring (LLVM has no integer power).  A negative
    exponent gives ``math.ipowi``'s truncated results: 0 unless the base is
    ±1, whose powers stay ±1."""
    base, exponent = (t.get(v) for v in op.operands)
    type = base.type
    one, zero = t.const(1, type, op), t.const(0, type, op)
    header, body, exit = t.new_block([type] * 3), t.new_block(), t.new_block([type])
    t.emit(fast_ops.llvm_branch(header, [one, base, exponent]), op)
    t.block = header
    power, square, rest = header.args
    more = t.value(fast_ops.llvm_icmp(rest, zero, _ICMP["sgt"]), op)
    t.emit(fast_ops.llvm_cond_branch(more, body, [], exit, [power]), op)
    t.block = body
    odd = t.value(fast_ops.llvm_icmp(t.value(fast_ops.binary(llvm.AndOp, rest, one), op), zero, _ICMP["ne"]), op)
    multiplied = t.value(fast_ops.llvm_select(odd, t.value(fast_ops.binary(llvm.MulOp, power, square), op), power), op)
    halved = t.value(fast_ops.binary(llvm.AShrOp, rest, one), op)
    t.emit(
        fast_ops.llvm_branch(header, [multiplied, t.value(fast_ops.binary(llvm.MulOp, square, square), op), halved]), op
    )
    t.block = exit
    odd_exponent = t.value(
        fast_ops.llvm_icmp(t.value(fast_ops.binary(llvm.AndOp, exponent, one), op), zero, _ICMP["ne"]), op
    )
    unit = t.value(
        fast_ops.binary(
            llvm.OrOp,
            t.value(fast_ops.llvm_icmp(base, one, _ICMP["eq"]), op),
            t.value(fast_ops.llvm_icmp(base, t.const(-1, type, op), _ICMP["eq"]), op),
        ),
        op,
    )
    unit_power = t.value(fast_ops.llvm_select(odd_exponent, base, one), op)
    truncated = t.value(fast_ops.llvm_select(unit, unit_power, zero), op)
    negative = t.value(fast_ops.llvm_icmp(exponent, zero, _ICMP["slt"]), op)
    t.set(op.results[0], t.value(fast_ops.llvm_select(negative, truncated, exit.args[0]), op))


@translates(math.FmaOp)
def _fma(t: FunctionTranslation, op: Operation) -> None:
    a, b, c = (t.get(v) for v in op.operands)
    t.set(op.results[0], t.intrinsic(f"llvm.fma.{_float_suffix(a.type)}", [a, b, c], a.type, op))


@translates(math.CtPopOp)
def _ctpop(t: FunctionTranslation, op: Operation) -> None:
    value = t.get(op.operands[0])
    name = f"llvm.ctpop.i{_int_width(value.type)}"
    t.set(op.results[0], t.intrinsic(name, [value], value.type, op))


@translates(math.AbsIOp)
def _absi(t: FunctionTranslation, op: Operation) -> None:
    value = t.get(op.operands[0])
    zero = t.const(0, value.type, op)
    negative = t.value(fast_ops.llvm_icmp(value, zero, _ICMP["slt"]), op)
    flipped = t.value(fast_ops.binary(llvm.SubOp, zero, value), op)
    t.set(op.results[0], t.value(fast_ops.llvm_select(negative, flipped, value), op))


# ---------------------------------------------------------------------------
# ub
# ---------------------------------------------------------------------------


@translates(ub.PoisonOp)
def _poison(t: FunctionTranslation, op: Operation) -> None:
    """Zero, a value poison may be refined to, so that native code agrees
    with the interpreter; a poisoned array has nothing to point to."""
    type = op.results[0].type
    if isinstance(type, ComplexType):
        zero = t.const(0, type.element_type, op)
        _complex(t, op, zero, zero)
    elif isinstance(type, IntegerType | IndexType | AnyFloat):
        t.set(op.results[0], t.const(0, type, op))
    else:
        raise PassFailedException(f"{describe_op(op)}: a poison {type} cannot be compiled to native code")


# ---------------------------------------------------------------------------
# memref
# ---------------------------------------------------------------------------


def _element_address(
    t: FunctionTranslation, op: Operation, array: SSAValue, indices: Sequence[SSAValue], element: Attribute
) -> SSAValue:
    """Row-major address of ``array[indices]``, computed once per scope
    (``FunctionTranslation.continue_in``): an array element a scope reads
    and writes again (BA's kernel: half of its addresses) is the
    value its first access emitted, which dominates the later ones, rather
    than the same multiplications, additions and ``getelementptr`` again
    for every later stage to build, print, parse and for LLVM to merge.
    Its key holds the element's LLVM type, the stride of the
    ``getelementptr``: GPU code may view one descriptor as arrays of two
    element types (``revmlir.gpu.nvptx.array_at_address``)."""
    stride = llvm_type(element)
    key = (t.scope(), (array, stride), tuple(indices))
    if (found := t.reused.get(key)) is not None:
        return found
    pointer = t.extract(array, 0, PTR, op)
    linear: SSAValue | None = None
    for dim, index in enumerate(indices):
        if linear is None:
            linear = index
            continue
        size = t.extract(array, dim + 1, i64, op)
        scaled = t.value(fast_ops.binary(llvm.MulOp, linear, size), op)
        linear = t.value(fast_ops.binary(llvm.AddOp, scaled, index), op)
    if linear is None:
        linear = t.const(0, i64, op)
    found = t.reused[key] = t.value(fast_ops.llvm_gep(pointer, linear, stride), op)
    return found


@translates(memref.LoadOp)
def _load(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, memref.LoadOp)
    element = op.res.type
    address = _element_address(t, op, t.get(op.memref), [t.get(i) for i in op.indices], element)
    t.set(op.res, t.value(fast_ops.llvm_load(address, llvm_type(element)), op))


@translates(memref.StoreOp)
def _store(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, memref.StoreOp)
    element = op.value.type
    address = _element_address(t, op, t.get(op.memref), [t.get(i) for i in op.indices], element)
    t.emit(fast_ops.llvm_store(t.get(op.value), address), op)


@translates(memref.AtomicRMWOp, AtomicRMWOp)
def _atomic_rmw(t: FunctionTranslation, op: Operation) -> None:
    """Load, add, store: native code runs one thread, so no other thread can
    touch the element in between."""
    assert isinstance(op, memref.AtomicRMWOp)
    kind = op.kind.value.data
    adds = {KINDS.index("addf"): llvm.FAddOp, KINDS.index("addi"): llvm.AddOp}
    if kind not in adds:
        raise PassFailedException(f"{describe_op(op)}: only atomic_rmw addf and addi can be lowered, not kind {kind}")
    element = op.result.type
    address = _element_address(t, op, t.get(op.memref), [t.get(i) for i in op.indices], element)
    old = t.value(fast_ops.llvm_load(address, llvm_type(element)), op)
    t.emit(fast_ops.llvm_store(t.value(adds[kind](old, t.get(op.value)), op), address), op)
    t.set(op.result, old)


@translates(memref.AllocaOp)
def _alloca(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, memref.AllocaOp)
    type = op.memref.type
    assert isinstance(type, MemRefType)
    shape = frame_shape(type, op.dynamic_sizes)
    if shape is None:
        # in place: its sizes are known here (rev-lower-to-std only uses
        # this outside loops, so the frame does not grow per iteration)
        sizes = _sizes(t, op, type, op.dynamic_sizes)
        count = t.const(1, i64, op)
        for extent in sizes:
            count = t.value(fast_ops.binary(llvm.MulOp, count, extent), op)
        storage = t.value(llvm.AllocaOp(count, llvm_type(type.element_type)), op)
        t.set(op.memref, t.pack(llvm_type(type), [storage, *sizes], op))
        return
    size = llvm.ConstantOp(IntegerAttr(prod(shape), i64), i64)
    storage = llvm.AllocaOp(size, llvm_type(type.element_type))
    for allocation in (size, storage):
        allocation.location = op.location
    entry = t.region.blocks[0]
    if entry.first_op is None:
        entry.add_ops([size, storage])
    else:
        entry.insert_ops_before([size, storage], entry.first_op)
    sizes = [t.const(d, i64, op) for d in shape]
    t.set(op.memref, t.pack(llvm_type(type), [storage.results[0], *sizes], op))


def frame_shape(type: MemRefType, dynamic_sizes: Sequence[SSAValue]) -> list[int] | None:
    """The shape to allocate once in the entry block: a static one, or one
    whose sizes are constants (``rv.zeros((1, 11))`` has a dynamic type),
    which LLVM's SROA can then keep in registers, if it takes at most
    ``FRAME_ARRAY_BYTES`` (``rev-lower-to-std`` also allocates with
    constant sizes in the frame branch of its run-time choice between
    frame and heap, which never runs for a larger array)."""
    shape = constant_shape(type.get_shape(), dynamic_sizes)
    if shape is None or not dynamic_sizes:
        return shape
    if any(d < 0 for d in shape) or prod(shape) * element_bytes(type.element_type) > FRAME_ARRAY_BYTES:
        return None
    return shape


@translates(memref.CastOp)
def _cast(t: FunctionTranslation, op: Operation) -> None:
    """An array of the same rank under another type: the same value, whose
    descriptor holds every extent whether the type knows it or not.  A cast
    that gives a run-time extent a static one is taken only where the extent
    is a constant of the allocation it casts (what ``rev-host-safety`` makes
    of a large static ``memref.alloca``): index checks read the static
    extent, so one that does not hold would let loads and stores past the
    array's end."""
    assert isinstance(op, memref.CastOp)
    if not _extents_kept(op):
        raise PassFailedException(
            f"{describe_op(op)}: a cast that fixes a run-time extent cannot be checked in native code; "
            "keep the extent dynamic (memref<?x…>)"
        )
    t.set(op.dest, t.get(op.source))


def _extents_kept(op: memref.CastOp) -> bool:
    """Whether every extent ``op``'s result type fixes is the source's: a
    static one of the source's type, or a constant size of the allocation
    the source is."""
    source, dest = op.source.type, op.dest.type
    if (
        not isinstance(source, MemRefType)
        or not isinstance(dest, MemRefType)
        or source.get_shape().__len__() != len(dest.get_shape())
    ):
        return False
    owner = op.source.owner
    sizes = iter(owner.dynamic_sizes) if isinstance(owner, memref.AllocaOp | memref.AllocOp) else None
    for known, wanted in zip(source.get_shape(), dest.get_shape(), strict=True):
        size = next(sizes, None) if sizes is not None and known == DYNAMIC_INDEX else None
        if wanted == DYNAMIC_INDEX or wanted == known:
            continue
        if known != DYNAMIC_INDEX or size is None:
            return False
        constant = size.owner
        if not (
            isinstance(constant, arith.ConstantOp)
            and isinstance(constant.value, IntegerAttr)
            and constant.value.value.data == wanted
        ):
            return False
    return True


@translates(memref.AllocOp)
def _alloc(t: FunctionTranslation, op: Operation) -> None:
    """``malloc`` of the sizes' product of elements (contents undefined, as
    ``memref.alloc``'s), and of one byte for an empty array: C lets
    ``malloc(0)`` return null, which would read as memory running out (the
    GPU launch's ``cuMemAlloc`` asks at least one byte too); ``calloc`` of
    as many bytes where the allocation is marked zeroed
    (``stacks.ZEROED_ATTR``).  One that has
    an allocation check (``ALLOCATION_CHECK_ATTR``: native code's) reports
    it, with the bytes, where the allocator returns null, through the
    function's error slot."""
    assert isinstance(op, memref.AllocOp)
    type = op.memref.type
    assert isinstance(type, MemRefType)
    sizes = _sizes(t, op, type, op.dynamic_sizes)
    bytes = stacks.size_of(lambda o: t.value(o, op), llvm_type(type.element_type))
    for size in sizes:
        bytes = t.value(fast_ops.binary(llvm.MulOp, bytes, size), op)
    empty = t.value(fast_ops.llvm_icmp(bytes, t.const(0, i64, op), _ICMP["eq"]), op)
    asked = t.value(fast_ops.llvm_select(empty, t.const(1, i64, op), bytes), op)
    if stacks.ZEROED_ATTR in op.attributes:
        t.module.declare("calloc", stacks.CALLOC.inputs.data, stacks.CALLOC.output)
        pointer = t.value(fast_ops.llvm_call("calloc", [asked, t.const(1, i64, op)], PTR), op)
    else:
        t.module.declare("malloc", stacks.MALLOC.inputs.data, stacks.MALLOC.output)
        pointer = t.value(fast_ops.llvm_call("malloc", [asked], PTR), op)
    if isinstance(check := op.attributes.get(ALLOCATION_CHECK_ATTR), IntegerAttr):
        address = t.value(llvm.PtrToIntOp(pointer, i64), op)
        null = t.value(fast_ops.llvm_icmp(address, t.const(0, i64, op), _ICMP["eq"]), op)
        parameters = t.source.body.blocks[0].args
        if not parameters or parameters[-1].type != ERROR_SLOT:
            raise PassFailedException(f"{describe_op(op)}: an allocation check needs the function's error slot")
        _report_when(t, null, parameters[-1], check.value.data, lambda: [bytes], op)
    t.set(op.memref, t.pack(llvm_type(type), [pointer, *sizes], op))


@translates(memref.DeallocOp)
def _dealloc(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, memref.DeallocOp)
    t.module.declare("free", [PTR], None)
    t.emit(fast_ops.llvm_call("free", [t.extract(t.get(op.memref), 0, PTR, op)], None), op)


def _sizes(t: FunctionTranslation, op: Operation, type: MemRefType, dynamic: Sequence[SSAValue]) -> list[SSAValue]:
    """Every extent of an allocation: the dynamic ones given, the others
    constants."""
    given = iter(t.get(s) for s in dynamic)
    return [next(given) if d < 0 else t.const(d, i64, op) for d in type.get_shape()]


@translates(memref.DimOp)
def _dim(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, memref.DimOp)
    index = op.index
    dim = constant_index(index)
    if dim is None:
        raise PassFailedException(f"{describe_op(op)}: the dimension must be a constant")
    source = op.source.type
    assert isinstance(source, MemRefType)
    if not 0 <= dim < source.get_num_dims():
        raise PassFailedException(f"{describe_op(op)}: dimension {dim} is out of range for {source}")
    t.set(op.result, t.extract(t.get(op.source), dim + 1, i64, op))


# ---------------------------------------------------------------------------
# complex
# ---------------------------------------------------------------------------


def _parts(t: FunctionTranslation, value: SSAValue, like: Operation) -> tuple[SSAValue, SSAValue]:
    assert isinstance(value.type, llvm.LLVMStructType)
    element = value.type.types.data[0]
    return t.extract(value, 0, element, like), t.extract(value, 1, element, like)


def _complex(t: FunctionTranslation, op: Operation, re: SSAValue, im: SSAValue) -> None:
    t.set(op.results[0], t.pack(llvm_type(op.results[0].type), [re, im], op))


@translates(complexd.CreateOp)
def _create(t: FunctionTranslation, op: Operation) -> None:
    _complex(t, op, *(t.get(v) for v in op.operands))


@translates(complexd.ConstantOp)
def _complex_constant(t: FunctionTranslation, op: Operation) -> None:
    assert isinstance(op, complexd.ConstantOp)
    element = op.results[0].type.element_type
    assert isinstance(op.value, ArrayAttr)
    re, im = (t.const(v.value.data, element, op) for v in op.value.data)
    _complex(t, op, re, im)


@translates(complexd.ReOp, complexd.ImOp)
def _part(t: FunctionTranslation, op: Operation) -> None:
    re, im = _parts(t, t.get(op.operands[0]), op)
    t.set(op.results[0], re if isinstance(op, complexd.ReOp) else im)


@translates(complexd.AddOp, complexd.SubOp)
def _complex_add(t: FunctionTranslation, op: Operation) -> None:
    (ar, ai), (br, bi) = (_parts(t, t.get(v), op) for v in op.operands)
    kind = llvm.FAddOp if isinstance(op, complexd.AddOp) else llvm.FSubOp
    _complex(t, op, t.value(kind(ar, br), op), t.value(kind(ai, bi), op))


@translates(complexd.NegOp, complexd.ConjOp)
def _complex_neg(t: FunctionTranslation, op: Operation) -> None:
    re, im = _parts(t, t.get(op.operands[0]), op)
    if isinstance(op, complexd.NegOp):
        re = t.value(fast_ops.llvm_fneg(re), op)
    _complex(t, op, re, t.value(fast_ops.llvm_fneg(im), op))


@translates(*complex_functions.TO_REAL)
def _complex_to_real(t: FunctionTranslation, op: Operation) -> None:
    r, ((re, im),) = _real(t, op)
    t.set(op.results[0], complex_functions.TO_REAL[type(op)](r, re, im))


@translates(*complex_functions.UNARY)
def _complex_function(t: FunctionTranslation, op: Operation) -> None:
    r, ((a, b),) = _real(t, op)
    _complex(t, op, *complex_functions.UNARY[type(op)](r, a, b))


@translates(complexd.MulOp)
def _complex_mul(t: FunctionTranslation, op: Operation) -> None:
    r, (x, y) = _real(t, op)
    _complex(t, op, *complex_functions.multiply(r, x, y))


@translates(complexd.DivOp)
def _complex_div(t: FunctionTranslation, op: Operation) -> None:
    r, ((ar, ai), (br, bi)) = _real(t, op)
    _complex(t, op, *complex_functions.divide(r, ar, ai, br, bi))


@translates(complexd.PowOp)
def _complex_pow(t: FunctionTranslation, op: Operation) -> None:
    r, ((a, b), (c, d)) = _real(t, op)
    _complex(t, op, *complex_functions.power(r, a, b, c, d))


class _Real:
    """``complex_functions.Real`` emitted while translating ``op``: LLVM
    instructions, intrinsics and libm calls, so that the complex functions
    need no C ``complex`` ABI."""

    OEQ, OGT, OGE, OLT = 1, 2, 3, 4  # arith.cmpf / LLVM fcmp predicates

    def __init__(self, t: FunctionTranslation, op: Operation, type: Attribute):
        self.t, self.op, self.type = t, op, type

    def c(self, value: float) -> SSAValue:
        return self.t.const(value, self.type, self.op)

    def _emit(self, op: Operation) -> SSAValue:
        return self.t.value(op, self.op)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._emit(fast_ops.binary(llvm.FAddOp, a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._emit(fast_ops.binary(llvm.FSubOp, a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._emit(fast_ops.binary(llvm.FMulOp, a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._emit(fast_ops.binary(llvm.FDivOp, a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self._emit(fast_ops.llvm_fneg(a))

    def cmp(self, predicate: int, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._emit(fast_ops.llvm_fcmp(a, b, predicate))

    def both(self, first: SSAValue, second: SSAValue) -> SSAValue:
        return self._emit(fast_ops.binary(llvm.AndOp, first, second))

    def select(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._emit(fast_ops.llvm_select(condition, a, b))

    def intrinsic(self, name: str, *args: SSAValue) -> SSAValue:
        return self.t.intrinsic(f"llvm.{name}.{_float_suffix(self.type)}", list(args), self.type, self.op)

    def libm(self, name: str, *args: SSAValue) -> SSAValue:
        return self.t.libm(name, list(args), self.op)

    def integer(self, value: SSAValue) -> SSAValue:
        """``llvm.fptosi.sat``: an i64, NaN as 0, beyond the range its ends."""
        return self.t.intrinsic(f"llvm.fptosi.sat.i64.{_float_suffix(self.type)}", [value], i64, self.op)

    def has_bit(self, integer: SSAValue, bit: int) -> SSAValue:
        masked = self._emit(fast_ops.binary(llvm.AndOp, integer, self.t.const(1 << bit, i64, self.op)))
        return self._emit(fast_ops.llvm_icmp(masked, self.t.const(0, i64, self.op), _ICMP["ne"]))


def _real(t: FunctionTranslation, op: Operation) -> tuple[_Real, list[tuple[SSAValue, SSAValue]]]:
    """The arithmetic for ``op`` and its complex operands as (re, im)."""
    parts = [_parts(t, t.get(v), op) for v in op.operands]
    return _Real(t, op, parts[0][0].type), parts


@translates(complexd.EqualOp, complexd.NotEqualOp)
def _complex_equal(t: FunctionTranslation, op: Operation) -> None:
    (ar, ai), (br, bi) = (_parts(t, t.get(v), op) for v in op.operands)
    equal = op.__class__ is complexd.EqualOp
    predicate = fast_ops.CMPF_PREDICATES["oeq" if equal else "une"]
    first = t.value(fast_ops.llvm_fcmp(ar, br, predicate), op)
    second = t.value(fast_ops.llvm_fcmp(ai, bi, predicate), op)
    combine = llvm.AndOp if equal else llvm.OrOp
    t.set(op.results[0], t.value(fast_ops.binary(combine, first, second), op))


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvertStdToLLVMPass(ModulePass):
    """Lower func/scf/arith/math/memref/complex to the llvm dialect."""

    name = "convert-std-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        translate_module(op, ModuleTranslation(), entry_points=True)


def check_native_name(function: Operation, name: str) -> None:
    """Refuse, at ``function``, a name (``name``) native code cannot have:
    LLVM takes the empty name for an unnamed value, and a machine-code
    symbol is looked up by its ASCII bytes (the interpreter, which looks
    nothing up, runs either)."""
    if not name or not name.isascii():
        raise PassFailedException(
            f'{describe_op(function)}: @"{name}" cannot name native code, whose symbols are non-empty ASCII names: '
            "rename it"
        )


def check_symbol_names(defined: Iterable[tuple[Operation, str]], library: Collection[str], entry_points: bool) -> None:
    """Refuse, at the function, a function of ``defined`` (its op and name)
    whose symbol
    means another in the same machine code: a C function of ``library``,
    which the code calls or may call (libm's, those LLVM's math intrinsics
    become, the runtime's), and whose calls would run the function instead
    (a symbol is the function's name, of the eDSL's functions their
    Python name, which their entry points and the JIT's look-ups are named
    after; the message says so, for a user who never wrote a symbol);
    or, where the module gets ``entry_points``, a name of their forms
    (``<f>_ciface``, ``_mlir_ciface_<f>``) or of their guarded code's
    (``<f>_ciface.unguarded``), whatever the module's functions: an entry point
    of ``@f`` and one of its inverse ``@f.inv`` may be compiled apart (each
    direction of a ``NativeModule``) into one engine."""
    for source, name in defined:
        if name in library:
            raise PassFailedException(
                f"{describe_op(source)}: @{name} is named like a C library function "
                "native code calls, whose calls would run it instead, as native code names a function by its "
                "own name (a Python function's too): rename it"
            )
        if entry_points and named_like_entry_point(name):
            raise PassFailedException(
                f"{describe_op(source)}: @{name} is named like a C entry point or its guarded code "
                f"(<f>{CIFACE_SUFFIX}, {MLIR_CIFACE_PREFIX}<f>, <f>{CIFACE_SUFFIX}{UNGUARDED}): rename it"
            )


def translate_module(
    op: ModuleOp,
    translation: ModuleTranslation,
    entry_points: bool,
    aliasing: ArrayAliasing | None = None,
    *,
    owned: bool = False,
) -> None:
    """Replace the std functions of ``op`` by their llvm translation, with
    the C entry points of its public functions where ``entry_points`` (host
    code; a GPU has no C callers).  ``aliasing`` is ``analyse_arrays(op)``
    where the caller needed it already (the native pipeline's calls check
    their arguments against its written arrays).

    The functions replaced (and the declarations the translation declares
    again) are removed only once every op is translated, so that a failure
    leaves ``op`` whole for its diagnostic.  They are detached, as xDSL's
    rewriters leave what they erase, for a caller may hold them; where
    ``owned`` (``op`` is the compile's own copy, whose functions no one
    else holds) they are taken apart, for reference counting to free
    (``revmlir.collector``)."""
    stacks.define_runtime(op)
    sources = [f for f in op.ops if isinstance(f, func.FuncOp)]
    declarations: list[llvm.FuncOp] = []
    for other in op.ops:
        if isinstance(other, llvm.FuncOp) and not other.body.blocks:
            translation.declared.setdefault(other.sym_name.data, other.function_type)
            declarations.append(other)
        elif not isinstance(other, func.FuncOp):
            # a reversible function is lowered to std first: say so
            lower_first = "; run rev-lower-to-std first" if isinstance(other, rev.FuncOp) else ""
            raise PassFailedException(f"{describe_op(other)} cannot be compiled to native code{lower_first}")
    translation.noalias = (analyse_arrays(op) if aliasing is None else aliasing).noalias
    translation.own_symbols = entry_points
    translation.conventions = {
        f.sym_name.data: convention.data
        for f in sources
        if f.is_declaration and isinstance(convention := f.attributes.get(ARRAYS_ATTR), StringAttr)
    }
    for source in sources:
        check_native_name(source, source.sym_name.data)
        # the types a caller passes: the lowering's own values inside (a
        # fixed-point product's i128) are LLVM's to compute on
        refuse_unsupported(source, (*source.function_type.inputs, *source.function_type.outputs))
        if source.is_declaration:
            translation.add_declaration(source)
            continue
        translation.functions.append(FunctionTranslation(translation, source).translate())
        if entry_points and (source.sym_visibility is None or source.sym_visibility.data != "private"):
            translation.functions.append(mlir_ciface(translation, source))
            if follows_rev_convention(source):
                translation.functions.append(ciface(translation, source))
    check_symbol_names(
        ((f, translation.symbol(f.sym_name.data)) for f in sources if not f.is_declaration),
        translation.library | (RUNTIME_LIBRARY if entry_points else set()),
        entry_points,
    )
    for replaced in (*declarations, *sources):
        replaced.detach()
        if owned:
            take_apart(replaced)
    op.body.block.add_ops(translation.module())
