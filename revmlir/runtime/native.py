"""Native execution of reversible modules: the whole pipeline from rev IR to
machine code, and calls from Python with scalars and numpy arrays.

    rev ──rev-invert──► rev + @f.inv ──rev-lower-to-std──► func/scf/arith/…
        ──convert-std-to-llvm──► llvm dialect ──xdsl.backend.llvm──► LLVM IR
        ──llvmlite (-O3, host CPU)──► machine code

A compile builds one direction (``Direction``): the functions (and the
inverses their uncalls run), or the inverses; the first call in the other
direction compiles the rest.

Arrays are passed by pointer (no copy) and updated in place; a stack (a
Python list) is copied into a ``malloc``'d buffer behind a header
(``revmlir.lowering.stacks``) and copied back into the same list after the
call, which frees the buffer.  Run-time checks report through the error slot
and surface as ``InvertibilityError`` at the op's source location.
"""

from __future__ import annotations

import ctypes
import functools
import operator
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from llvmlite import ir
from xdsl.dialects.builtin import (
    ArrayAttr,
    ComplexType,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp as StdFuncOp
from xdsl.ir import Attribute

from revmlir.collector import pausing, take_apart, take_apart_llvm_ir
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FixedType, FuncOp, LogType, TropicalType
from revmlir.inversion import invert_function
from revmlir.lowering import stacks
from revmlir.lowering.aliasing import ArrayAliasing, analyse_arrays
from revmlir.lowering.host_safety import INTERRUPTED, polling_functions
from revmlir.lowering.llvm_ir import llvm_ir
from revmlir.lowering.native_types import check_native_types
from revmlir.lowering.printing import PRINT
from revmlir.lowering.rev_to_std import stack_element
from revmlir.lowering.std_to_llvm import (
    CIFACE_SUFFIX,
    RUNTIME_LIBRARY,
    ModuleTranslation,
    entry_point_names,
    own_symbol,
    translate_module,
)
from revmlir.naming import inverse_name
from revmlir.runtime.arguments import converter, from_runtime, numpy_dtype
from revmlir.runtime.backend import (
    Backend,
    Caller,
    not_contiguous_error,
    overlap_error,
    overlapping,
    read_only_error,
    same_stack,
    same_stack_error,
    verify_given,
)
from revmlir.runtime.guard import add_guards
from revmlir.runtime.interrupt import interrupted, interrupts, set_stack
from revmlir.runtime.jit import JITModule, c_function, jit
from revmlir.runtime.marshal import (
    IN_PYTHON,
    Extents,
    Kind,
    ObjectLayout,
    Plan,
    Row,
    marshaller,
)
from revmlir.runtime.once import Once
from revmlir.runtime.std_form import Direction, lower_for_native
from revmlir.runtime_checks import CHECKS_ATTR, DEFAULT_TOLERANCE, ERROR_SLOT, JUMP_WORD, check_error_slot

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

ERROR_SLOT_SIZE = ERROR_SLOT.get_shape()[0]


def _scalar_ctype(type: Attribute) -> Any:
    if isinstance(type, LogType | TropicalType):
        type = type.element_type
    if isinstance(type, FixedType):
        type = IntegerType(type.width.data)
    if isinstance(type, Float64Type):
        return ctypes.c_double
    if isinstance(type, Float32Type):
        return ctypes.c_float
    if isinstance(type, IndexType):
        return ctypes.c_int64
    if isinstance(type, IntegerType):
        width = type.width.data
        return {1: ctypes.c_bool, 8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32, 64: ctypes.c_int64}[width]
    if isinstance(type, ComplexType):
        return _scalar_ctype(type.element_type) * 2
    raise TypeError(f"no native representation for {type}")


@dataclass(frozen=True)
class LLVMModule:
    """A rev module lowered to LLVM IR, with what calling it needs."""

    source: ModuleOp = field(compare=False)
    """The rev module lowered."""
    direction: Direction
    tolerance: float
    """The options it was lowered with: a module compiled beside it is
    one of ``source``'s, lowered with the same ``tolerance``."""
    llvm_ir: str
    check_table: ModuleOp
    """The module's run-time checks, to report a failing one."""
    writes: dict[str, frozenset[int]]
    """Per function (inverses included): the array parameters a call may
    write (``revmlir.semantics.written_arguments`` of the std form, which
    ``revmlir.lowering.aliasing`` hands on)."""
    polling: frozenset[str]
    """The functions whose runs poll for Ctrl-C (``polling_functions``)."""
    copies: frozenset[str]
    """The functions of the module compiled beside it that it compiles again
    (``_borrow``), internal: with them, ``writes`` names every function it
    compiles but the runtime's."""
    exported: dict[str, frozenset[int]]
    """The functions it defines for a module compiled beside it to call
    (all with a body, but the runtime's, which are internal), each with
    the array parameters its code takes as ``noalias``; none where it was
    compiled beside another (which no third module joins)."""


def lower_to_llvm_ir(
    module: ModuleOp,
    tolerance: float | None = None,
    direction: Direction = Direction.BOTH,
    beside: LLVMModule | None = None,
    *,
    for_c: bool = False,
) -> LLVMModule:
    """LLVM IR for a verified rev module: the functions of ``direction``;
    ``beside``, another direction of it whose machine code this module's
    joins: the functions that one defines are declared, not compiled again
    (``_borrow``), and the check ids of the two are distinct.  Borrowing
    takes a function of the same name for the same code: a ``ValueError``
    where ``beside`` was lowered from another module, for the same
    direction or with another tolerance.

    ``for_c``: for an object a C program links (``rev-translate``), whose
    only symbols are the C entry points; every other function is
    internal, so that none takes the place of the program's own or its C
    library's (a ``@free`` of the module, a ``@main``)."""
    tolerance = DEFAULT_TOLERANCE if tolerance is None else tolerance
    if beside is not None:
        _check_beside(beside, module, tolerance, direction)
    check_native_types(module)
    std = _std_form(module, tolerance, direction, beside, version_exported=False)
    if std.copied & std.unversioned:
        # a function left unversioned to be borrowed is compiled after all
        take_apart(std.work)
        std = _std_form(module, tolerance, direction, beside, version_exported=True)
    work, aliasing, borrowed, copied = std.work, std.aliasing, std.borrowed, std.copied
    entries = {
        entry_point_names(f.sym_name.data)[1]: len(f.function_type.inputs) - 1
        for f in work.ops
        if isinstance(f, StdFuncOp)
        and f.body.blocks
        and f.function_type.inputs.data[-1:] == (ERROR_SLOT,)
        and (f.sym_visibility is None or f.sym_visibility.data != "private")
    }
    c_entries = {
        entry
        for f in work.ops
        if isinstance(f, StdFuncOp) and (f.sym_visibility is None or f.sym_visibility.data != "private")
        for entry in entry_point_names(f.sym_name.data)
    }
    translate_module(work, ModuleTranslation(), entry_points=True, aliasing=aliasing, owned=True)
    work.attributes.clear()
    llvm_module = llvm_ir(work)
    take_apart(work)  # the compile's own copy, dropped now (revmlir.collector)
    add_guards(llvm_module, entries, for_c)
    # the module's functions by their symbols (``own_symbol``)
    named = {own_symbol(name): name for name in aliasing.noalias}
    for function in llvm_module.functions:
        name = named.get(function.name, function.name)
        if stacks.runtime_kind(function.name) is not None:
            # one copy per object file: objects linked together do not clash
            function.linkage = "internal"
        elif name in copied or (for_c and not function.is_declaration and function.name not in c_entries):
            function.linkage = "internal"
        elif function.is_declaration and function.name not in RUNTIME_LIBRARY | {PRINT} and name not in borrowed:
            # Apart from the allocator, printing and the guard, only libm functions and
            # primitives are declared (see std_to_llvm): those of scalars are pure, so
            # LLVM may share and hoist their calls; those of arrays read and write them.
            function.attributes.add("nounwind")
            if not any(isinstance(argument.type, ir.PointerType) for argument in function.args):
                function.attributes.add("readnone")
    own = {name: positions for name, positions in aliasing.written.items() if name not in borrowed | copied}
    exported = (
        {
            name: aliasing.noalias[name]
            for f in llvm_module.functions
            if (name := named.get(f.name, f.name)) in own and f.linkage == ""
        }
        if beside is None
        else {}
    )
    text = str(llvm_module)
    take_apart_llvm_ir(llvm_module)
    return LLVMModule(
        module, direction, tolerance, text, std.checks, own, std.polling - borrowed - copied, copied, exported
    )


@dataclass(frozen=True)
class _StdForm:
    """A module's functions of one direction in std form, analysed: what
    ``lower_to_llvm_ir`` translates to LLVM."""

    work: ModuleOp
    checks: ModuleOp
    """The check table (a module holding only its attribute)."""
    aliasing: ArrayAliasing
    polling: frozenset[str]
    borrowed: frozenset[str]
    copied: frozenset[str]
    """``_borrow``'s two sets."""
    unversioned: frozenset[str]
    """The functions whose loops were not versioned (``lower_for_native``)."""


def _std_form(
    module: ModuleOp, tolerance: float, direction: Direction, beside: LLVMModule | None, version_exported: bool
) -> _StdForm:
    """``module``'s functions of ``direction`` lowered to std and analysed,
    those ``beside`` defines borrowed or copied (``_borrow``); unless
    ``version_exported``, the loops of ``lower_for_native``'s functions are left
    as they are."""
    numbered_after = () if beside is None else _check_entries(beside.check_table)
    exported = {} if beside is None else beside.exported
    work, unversioned = lower_for_native(module, tolerance, direction, numbered_after, exported, version_exported)
    # Between std IR and LLVM: keep what calls need of the std form (the
    # check table, the arrays each function writes, the error slot's
    # position in each C entry point).  The array analysis serves both the
    # calls and the translation's noalias parameters: it runs once.
    checks = ModuleOp([])
    checks.attributes.update(work.attributes)
    aliasing = analyse_arrays(work)
    polling = polling_functions(work)
    borrowed, copied = _borrow(work, aliasing.noalias, exported)
    return _StdForm(work, checks, aliasing, polling, borrowed, copied, unversioned)


def _check_beside(beside: LLVMModule, module: ModuleOp, tolerance: float, direction: Direction) -> None:
    if beside.source is not module:
        raise ValueError("a module compiles beside another direction of itself, not beside another module")
    if beside.direction is direction:
        raise ValueError(f"the {direction.value} functions cannot compile beside the {direction.value} functions")
    if beside.tolerance != tolerance:
        raise ValueError(f"a tolerance of {tolerance} cannot compile beside code of tolerance {beside.tolerance}")


def _check_entries(table: ModuleOp) -> list[str]:
    entries = table.attributes.get(CHECKS_ATTR)
    assert isinstance(entries, ArrayAttr)
    return [entry.data for entry in entries.data if isinstance(entry, StringAttr)]


def _borrow(
    work: ModuleOp, noalias: dict[str, frozenset[int]], exported: dict[str, frozenset[int]]
) -> tuple[frozenset[str], frozenset[str]]:
    """The functions of ``work`` (std form, analysed) that a module whose
    machine code its own joins defines already (``exported``), made
    private: they get no entry point here (calls of them run the other
    module's).  The first set, *borrowed*, lose their bodies, so that they
    are declared and a call of one runs the other module's code: those whose
    ``noalias`` parameters there are ``noalias`` here too, so that every
    call this module makes keeps the promise that code was compiled with.
    The second, *copied*, are the rest (a call here may pass overlapping
    arrays where the other module's never do), compiled again under
    internal names that cannot clash."""
    borrowed: set[str] = set()
    copied: set[str] = set()
    for function in work.ops:
        if isinstance(function, StdFuncOp) and (name := function.sym_name.data) in exported:
            function.sym_visibility = StringAttr("private")
            if exported[name] <= noalias[name]:
                borrowed.add(name)
                for block in list(function.body.blocks):
                    function.body.detach_block(block)
            else:
                copied.add(name)
    return frozenset(borrowed), frozenset(copied)


@pausing
def _compile(
    module: ModuleOp,
    opt_level: int,
    tolerance: float | None,
    direction: Direction,
    beside: tuple[LLVMModule, JITModule] | None,
) -> tuple[LLVMModule, JITModule]:
    """``module``'s functions of ``direction`` lowered and their machine
    code; ``beside``, those of another direction, whose engine it joins."""
    lowered_beside, machine_code_beside = (None, None) if beside is None else beside
    lowered = lower_to_llvm_ir(module, tolerance, direction, lowered_beside)
    return lowered, jit(lowered.llvm_ir, opt_level, machine_code_beside)


def check_inverse(module: ModuleOp, name: str) -> None:
    """The inverter's ``InversionError`` (the interpreter's error) for
    running ``@name`` backwards where it has no inverse, raised before
    anything is compiled for it: the backward compile inverts every
    function it can (``RevInvertPass(where_possible=True)``), so this is
    the one a call would find missing."""
    (func,) = [f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == name]
    invert_function(func)


@dataclass(repr=False)
class NativeModule(Backend):
    """A rev module compiled to machine code: the functions of one
    direction, and those of the other compiled when a call first needs one
    (``holding``).

    The two compiles hold each other without a reference cycle, so that
    the machine code goes with the last object holding either, not at the
    cyclic collector's next run: the rest holds the first compile
    (``beside``); the first holds the rest's machine code, and the
    ``NativeModule`` of it only weakly, made again from that machine code
    where nothing holds it any more."""

    module: ModuleOp
    lowered: LLVMModule
    machine_code: JITModule
    direction: Direction
    """What this compile holds; ``rest`` holds the other direction."""
    opt_level: int
    tolerance: float | None
    """The options of ``compile``, which ``rest`` is compiled with too."""
    beside: NativeModule | None = None
    """The compile whose rest this one is: its machine code's engine holds
    both, and this one calls the functions that one defines."""
    _rest: Once[tuple[LLVMModule, JITModule]] = field(init=False, repr=False, compare=False)
    """The rest's compile, of the module and the options alone (a bound
    method would hold this object: a cycle)."""
    _held_rest: weakref.ref[NativeModule] | None = field(init=False, repr=False, compare=False, default=None)
    _lock: threading.Lock = field(init=False, repr=False, compare=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        other = Direction.FORWARD if self.direction is Direction.BACKWARD else Direction.BACKWARD
        compile_rest = functools.partial(
            _compile, self.module, self.opt_level, self.tolerance, other, (self.lowered, self.machine_code)
        )
        self._rest = Once(compile_rest)

    @property
    def llvm_ir(self) -> str:
        return self.lowered.llvm_ir

    @property
    def check_table(self) -> ModuleOp:
        """``LLVMModule.check_table``: for the rest, the checks of both compiles."""
        return self.lowered.check_table

    @property
    def writes(self) -> dict[str, frozenset[int]]:
        """``LLVMModule.writes``: the arrays of a call that no other argument
        may overlap, for the functions whose entry points this compile holds."""
        return self.lowered.writes

    @property
    def polling(self) -> frozenset[str]:
        """``LLVMModule.polling``."""
        return self.lowered.polling

    def __repr__(self) -> str:
        # the dataclass's would print the whole module and its LLVM IR
        names = [op.sym_name.data for op in self.module.ops if isinstance(op, FuncOp)]
        return f"<NativeModule of {', '.join('@' + n for n in names) or 'no functions'}>"

    @classmethod
    def compile(
        cls,
        module: ModuleOp,
        opt_level: int = 3,
        tolerance: float | None = None,
        direction: Direction = Direction.FORWARD,
        *,
        verified: bool = False,
    ) -> NativeModule:
        """The functions of ``direction`` compiled now: by default what
        calls run, so that a first call compiles no inverse its run does
        not need; the first ``uncall`` compiles the inverses (``rest``).
        ``module`` is verified first unless the caller says it ``verified``
        it (``verify_given``)."""
        verify_given(module, verified)
        return cls(module, *_compile(module, opt_level, tolerance, direction, None), direction, opt_level, tolerance)

    def holding(self, name: str, backward: bool) -> NativeModule:
        """The compile whose machine code runs ``@name``, or its inverse if
        ``backward``: this one, or the rest of the module (``rest``),
        compiled now if it was not; the inverter's ``InversionError``, as the
        interpreter's, for the inverse of a function that has none, and the
        rest's compile error where it does not compile."""
        if (inverse_name(name) if backward else name) in self.writes:
            return self
        if backward:
            check_inverse(self.module, name)
        return self.rest

    @property
    def rest(self) -> NativeModule:
        """The functions of the other direction, compiled once, on first
        use, with the same options: a second machine-code module beside
        this one's, in its engine, so that the callers of this one stay as
        they are, and calling this one's functions rather than compiling
        them again.  A compile that fails raises the same error, the
        ``PassFailedException`` that ``compile`` raises, at every use, and
        is not tried again.  The rest of the rest is this one."""
        if self.beside is not None:
            return self.beside
        lowered, machine_code = self._rest.get()
        with self._lock:
            if self._held_rest is None or (rest := self._held_rest()) is None:
                rest = NativeModule(
                    self.module, lowered, machine_code, lowered.direction, self.opt_level, self.tolerance, self
                )
                self._held_rest = weakref.ref(rest)
            return rest

    def _caller(self, func: FuncOp, backward: bool) -> Caller:
        return _NativeCall(self.holding(func.sym_name.data, backward), self._written, func, backward)

    def std_caller(self, function: StdFuncOp) -> Caller:
        """The caller of a ``func.func`` of the module written to rev's
        calling convention (its results are the final values of its scalar
        arguments, in order; arrays change in place), such as the wrappers
        that run ordinary code as it is (``revmlir.frontend.ordinary_code.functions``)."""
        return _NativeCall(self, self._written, function, backward=False)


class _NativeCall:
    """A function of a native module (or its inverse), called from Python.

    The entry point takes an array of pointers to each argument's storage and
    to the error slot (``revmlir/lowering/std_to_llvm.py``).  That memory is
    a ``_Frame``, allocated once and refilled by every call, which checks,
    converts and stores each argument in one pass.  Machine code
    (``revmlir.runtime.marshal``) stores the common arguments; arguments of
    the exact Python type a check expects are otherwise stored as they are,
    all others go through the converters of ``revmlir.runtime.arguments``,
    which raise the messages for bad arguments.  A call takes a frame from
    a pool for its length, so calls from several threads (ctypes releases
    the GIL while the machine code runs) or re-entered while an argument
    converts never share one.  The entry point of a function that polls
    for Ctrl-C is called through ``run`` (``revmlir.runtime.interrupt``),
    which arms the frame's count first and raises ``KeyboardInterrupt``
    instead for a Ctrl-C pressed before; any other is called directly.
    """

    def __init__(self, code: NativeModule, written: dict[str, frozenset[int]], func: FuncOp, backward: bool):
        """``code`` holds the entry point (``NativeModule.holding``);
        ``written`` is the rev module's ``Backend._written``."""
        name = func.sym_name.data
        types = list(func.function_type.inputs.data)
        function = inverse_name(name) if backward else name
        self.entry = code.machine_code.address(function + CIFACE_SUFFIX)
        self.machine_code = code.machine_code  # alive while the entry may be called
        self.check_table = code.check_table
        self.name = name
        self.label = ("~" if backward else "") + name
        self.writes = code.writes[function]
        parameters = [arg.name_hint for arg in func.body.block.args]
        # what the program writes, as the interpreter decides it (``writes``
        # is the lowering's cover of it, for noalias; all there is for a
        # ``func.func`` run as it is)
        changed = written.get(name, self.writes)
        self.arguments = [_argument(t, name, i, i in changed, parameters[i]) for i, t in enumerate(types)]
        self.stores = [argument.store for argument in self.arguments]
        self.loads = [(i, argument.load) for i, argument in enumerate(self.arguments) if argument.load]
        self.stacks = [i for i, t in enumerate(types) if isinstance(t, StackType)]
        self.frames: list[_Frame] = []
        self.marshal = marshaller()
        self.polls = function in code.polling
        self.run = interrupts().run
        self.direct = _ENTRY(self.entry)

    def __call__(self, args: Sequence[Any]) -> tuple[Any, ...]:
        if len(args) != len(self.stores):
            raise TypeError(f"@{self.name} takes {len(self.stores)} argument(s), got {len(args)}")
        try:
            frame = self.frames.pop()
        except IndexError:
            frame = _Frame(self.arguments, self.writes, self.marshal is not None, self.entry)
        try:
            storage, error = frame.storage, frame.error
            try:
                extents = frame.extents
                if (
                    frame.plan is None
                    or self.marshal is None
                    or (left := self.marshal(args if type(args) is tuple else tuple(args), frame.plan.address)) > 0
                ):
                    for i in range(len(args)) if frame.plan is None else frame.plan.left_to_python():
                        self.stores[i](storage[i], args[i])
                    overlap = overlapping([(i, args[i]) for i in extents.positions], self.writes) if extents else None
                else:  # all stored by machine code, which checked the overlaps
                    overlap = extents.pair(-2 - left) if extents and left < 0 else None
                if overlap is not None:
                    raise overlap_error(self.name, overlap)
                if len(self.stacks) > 1 and (pair := same_stack([(i, args[i]) for i in self.stacks])) is not None:
                    raise same_stack_error(self.name, pair)
                for i in self.stacks:
                    storage[i].load()
                error[0] = 0
                error[JUMP_WORD] = frame.context_address
                if self.polls:  # a recursion's stack is the calling thread's
                    set_stack(frame.context)
                    self.run(frame.context_address)
                else:
                    self.direct(frame.address)
            finally:
                for i in self.stacks:
                    storage[i].give_back(args[i])
            if error[0]:
                if error[0] == INTERRUPTED:
                    interrupted()
                check_error_slot(self.check_table, list(error))
            results = list(args)
            for i, load in self.loads:
                results[i] = load(storage[i])
            return tuple(results)
        finally:
            self.frames.append(frame)


class _Frame:
    """The memory one call passes: each argument's storage, the error slot,
    the array of pointers to them that the entry point at ``entry`` takes,
    and the run context the slot names (``revmlir.runtime.interrupt``: the
    count of Ctrl-Cs this call started with is the frame's own)."""

    def __init__(self, arguments: Sequence[_Argument], writes: frozenset[int], marshalled: bool, entry: int):
        self.storage = [argument.allocate() for argument in arguments]
        extents = [(i, a.extent) for i, a in enumerate(arguments) if a.extent is not None]
        arrays = [i for i, _ in extents]
        self.extents = (
            Extents(arrays, self.storage, [extent for _, extent in extents], writes)
            if len(arrays) > 1 and writes
            else None
        )
        self.plan = Plan([a.row for a in arguments], self.storage, self.extents) if marshalled else None
        self.error = (ctypes.c_int64 * ERROR_SLOT_SIZE)()
        self.error_descriptor = (ctypes.c_int64 * 2)(ctypes.addressof(self.error), ERROR_SLOT_SIZE)
        pointers = [*map(ctypes.addressof, self.storage), ctypes.addressof(self.error_descriptor)]
        self.pointers = (ctypes.c_void_p * len(pointers))(*pointers)
        self.address = ctypes.addressof(self.pointers)
        self.context = interrupts().context(entry, self.address)
        self.context_address = ctypes.addressof(self.context)


@dataclass(frozen=True)
class _Argument:
    """How one argument crosses the C interface."""

    allocate: Callable[[], Any]
    """Fresh storage for it, at a fixed address."""
    store: Callable[[Any, Any], None]
    """Check and convert a value and write it into the storage."""
    load: Callable[[Any], Any] | None
    """The value the call leaves in the storage, for scalars."""
    row: Row = IN_PYTHON
    """What machine code stores without Python's help."""
    extent: tuple[int, int] | None = None
    """An array's rank and element size, for the overlap check."""


@functools.cache
def _allocator() -> tuple[Callable[[int], int | None], Callable[[int | None], None]]:
    """``malloc`` and ``free``, the very ones native code reallocs and frees with."""
    return (
        c_function("malloc", ctypes.c_void_p, ctypes.c_size_t),
        c_function("free", None, ctypes.c_void_p),
    )


class _StackArgument(ctypes.Structure):
    """A list passed as a stack: the memref descriptor of a header
    ``[buffer, size, capacity]``, which a call points at a ``malloc``'d copy
    of the list's elements and empties again when it copies them back."""

    _fields_ = [("header", ctypes.c_void_p), ("words", ctypes.c_int64)]

    def __init__(self) -> None:
        words = stacks.HEADER.get_shape()[0]
        self.fields = (ctypes.c_int64 * words)()
        super().__init__(ctypes.addressof(self.fields), words)
        self.elements: np.ndarray | None = None
        self.loaded = False

    def load(self) -> None:
        """Copy the stored elements into a fresh buffer behind the header."""
        elements, self.elements = self.elements, None
        assert elements is not None
        if size := len(elements):
            malloc, _ = _allocator()
            if (buffer := malloc(elements.nbytes)) is None:
                raise MemoryError(f"cannot allocate a stack of {size} elements")
            ctypes.memmove(buffer, elements.ctypes.data, elements.nbytes)
            self.fields[stacks.DATA] = buffer
            self.fields[stacks.SIZE] = self.fields[stacks.CAPACITY] = size
        self.dtype = elements.dtype
        self.loaded = True

    def give_back(self, target: list[Any]) -> None:
        """Copy the stack's elements into ``target`` and free the buffer; a
        stack that was not loaded (the call did not run) leaves ``target``
        alone."""
        self.elements = None
        if not self.loaded:
            return
        self.loaded = False
        _, free = _allocator()
        buffer, size = self.fields[stacks.DATA], self.fields[stacks.SIZE]
        nbytes = size * self.dtype.itemsize
        raw = (ctypes.c_char * nbytes).from_address(buffer) if size else b""
        target[:] = np.frombuffer(raw, dtype=self.dtype, count=size).tolist()
        free(buffer or None)
        self.fields[stacks.DATA] = self.fields[stacks.SIZE] = self.fields[stacks.CAPACITY] = 0


def _argument(arg_type: Attribute, name: str, index: int, written: bool, parameter: str | None) -> _Argument:
    convert = converter(arg_type, name, index)
    if isinstance(arg_type, StackType):
        element = stack_element(arg_type)
        dtype = numpy_dtype(element)
        convert_element = converter(element, name, index)

        def store_stack(slot: _StackArgument, values: Any) -> None:
            slot.elements = np.array([convert_element(v) for v in convert(values)], dtype=dtype)

        return _Argument(_StackArgument, store_stack, None)
    if isinstance(arg_type, MemRefType):
        dtype = numpy_dtype(arg_type.element_type)
        shape = arg_type.get_shape()
        rank = len(shape)
        descriptor = ctypes.c_int64 * (1 + rank)
        # static sizes are rare (annotations): those arrays take the long way
        quick = all(d < 0 for d in shape)

        def store_array(slot: ctypes.Array[ctypes.c_int64], value: Any) -> None:
            # ``is``: numpy's dtypes of numbers are singletons; ``convert``
            # accepts equal ones and subclasses, and raises for the rest
            if not (quick and type(value) is np.ndarray and value.dtype is dtype and value.ndim == rank):
                convert(value)
            if not value.flags.c_contiguous:
                raise not_contiguous_error(name, index)
            if written and not value.flags.writeable:
                raise read_only_error(name, index, parameter)
            slot[0] = _data_address(value)
            if rank == 1:  # most arrays: cheaper than a slice
                slot[1] = value.shape[0]
            else:
                slot[1:] = value.shape

        row = Row(Kind.ARRAY, rank, dtype) if quick else IN_PYTHON
        return _Argument(descriptor, store_array, None, row, (rank, dtype.itemsize))
    ctype = _scalar_ctype(arg_type)
    if isinstance(arg_type, ComplexType):

        def store_complex(slot: ctypes.Array[Any], value: Any) -> None:
            if type(value) is not complex:
                value = convert(value)
            slot[0], slot[1] = value.real, value.imag

        return _Argument(ctype, store_complex, lambda slot: complex(slot[0], slot[1]))
    if isinstance(arg_type, LogType | FixedType | TropicalType):

        def store_log(slot: Any, value: Any) -> None:
            slot.value = convert(value)  # checked: no Python value is stored as is

        return _Argument(ctype, store_log, lambda slot: from_runtime(arg_type, slot.value))
    exact = _STORED_AS_IS.get(ctype)

    def store_scalar(slot: Any, value: Any) -> None:
        slot.value = value if type(value) is exact else convert(value)

    return _Argument(ctype, store_scalar, _value, _ROWS.get(ctype, IN_PYTHON))


_value = operator.attrgetter("value")

_STORED_AS_IS: dict[Any, type] = {
    ctypes.c_double: float,
    ctypes.c_bool: bool,
    **{c: int for c in (ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64)},
}
"""The Python type whose values a scalar's storage takes as they are, like
``convert`` would store them (ctypes wraps integers to their width as
``normalize`` does); f32 is missing: ``convert`` rounds it."""

_ROWS: dict[Any, Row] = {
    ctypes.c_double: Row(Kind.F64),
    ctypes.c_bool: Row(Kind.BOOL),
    **{
        c: Row(Kind.INTEGER, 8 * ctypes.sizeof(c))
        for c in (ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64)
    },
}
"""The same scalars for the machine code, which stores exactly what ctypes
would for the types of ``_STORED_AS_IS``."""


_LAYOUT = ObjectLayout.probe()
_DATA_OFFSET = _LAYOUT.array_data if _LAYOUT is not None else None
"""Where an array object holds its data pointer (``PyArray_DATA`` reads
``PyArrayObject_fields.data``, and CPython's ``id`` is the object's
address), confirmed on probe arrays; None where that does not hold."""
_read_pointer = ctypes.c_void_p.from_address


def _data_address(array: np.ndarray) -> int:
    """``array.ctypes.data``, which costs a microsecond (it builds a ctypes
    object per call), read from the array object itself when it can be:
    calls with many small arrays spent most of their time here."""
    if _DATA_OFFSET is None:
        return array.ctypes.data
    return _read_pointer(id(array) + _DATA_OFFSET).value or 0
