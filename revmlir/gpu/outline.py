"""``rev-gpu-outline``: kernels of std-level functions, in xDSL's ``gpu``
dialect.

A *kernel function* is a function ``rev-lower-to-std`` produced (its last
argument the error slot) whose body holds exactly one top-level
``scf.parallel`` and whose other top-level ops write no memory but the
error slot (run-time checks).  Every thread of a launch runs the whole body;
the parallel loop becomes a grid-stride loop, so any grid covers any trip
count::

    for (i = lb + (ctaid.x·ntid.x + tid.x)·s; i < ub; i += nctaid.x·ntid.x·s)

(without overflow: ``_grid_stride``).

The pass moves each kernel into ``gpu.module @<module>_kernels`` as a
``gpu.func … kernel``, with a device copy (``func.func``) of every function
it calls, and replaces the host function by a ``gpu.launch_func`` whose grid
and block sizes are two new trailing ``index`` arguments.

The error slot of a kernel holds ``GPU_ERROR_WORDS`` words, ``[check id,
payload…, element, unused, unused]`` (``revmlir.runtime_checks``), shared
by every thread.  Checks report through a thread's own slot, as on the CPU,
by calling ``revmlir.report`` (the arena's checks too); the slot's last
word (the CPU's jump word) holds the address of a two-word context
``[address of the shared slot, element]``, where the device's
``revmlir.report`` (``convert-gpu-to-nvvm``) finds where to report.  The
element is the parallel index, or −1 for a check outside the loop.

Arrays of a dynamic size (``memref.alloc``) and the buffers of stacks in a
kernel or the functions it calls come from a per-thread arena
(``revmlir.gpu.arena``, ``revmlir.gpu.stacks``): such a kernel takes the
arena's address and bytes per thread after the error slot, and its context
holds three more words, the thread's ``[top, base, end]``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.adjoint import ADJOINT_SUFFIX
from revmlir.errors import describe_op
from revmlir.gpu.arena import (
    BASE_WORD,
    CONTEXT_WORDS,
    END_WORD,
    TOP_WORD,
    arena_allocations,
    carve,
    register_checks,
    store_checks,
)
from revmlir.gpu.load_order import loads_first
from revmlir.gpu.stacks import ARENA_KINDS, arena_calls, place
from revmlir.gpu.trip_count import LoopBounds, loop_bounds
from revmlir.ir_utils import nested_ops
from revmlir.lowering import stacks
from revmlir.lowering.checked_code import CheckOp, display_name
from revmlir.lowering.loop_versioning import version_loop, version_loops_in
from revmlir.naming import INVERSE_SUFFIX, identifier, shown_name
from revmlir.runtime_checks import ERROR_SLOT, FAIL, GPU_ERROR_WORDS, JUMP_WORD, REPORT, REPORT_INPUTS, CheckTable
from revmlir.semantics import gradient_type

GPU_ERROR_SLOT = MemRefType(i64, [GPU_ERROR_WORDS])
ARENA_PARAMETERS = (i64, i64)
"""A kernel with an arena takes its address and bytes per thread last."""
ARENA_NAMES = ("arena", "arena_bytes")
CONTAINER = "gpu.container_module"
NO_ELEMENT = -1


def kernel_module_name(module: ModuleOp) -> str:
    name = module.sym_name.data if module.sym_name is not None else "module"
    return f"{name}_kernels"


def check_not_outlined(module: ModuleOp) -> None:
    """Refuse, at the op, the ``gpu.module`` of an earlier outlining: the
    pass runs once, naming every kernel (the host functions of that run
    launch kernels instead of holding loops)."""
    name = kernel_module_name(module)
    if isinstance(found := SymbolTable.lookup_symbol(module, name), gpu.ModuleOp):
        raise PassFailedException(
            f"{describe_op(found)}: rev-gpu-outline has run on this module already: @{name} holds its kernels "
            "(outline once, naming every kernel)"
        )


def check_module_name_free(module: ModuleOp, moved: Collection[func.FuncOp]) -> None:
    """Refuse, at the op, a symbol named as the kernels' ``gpu.module`` that
    stays beside it, which the new ``gpu.module`` would redefine.  A device
    function ``moved`` into the ``gpu.module`` (a compile's, without
    ``keep_host``) leaves the name free: there ``@module_kernels`` is a
    legitimate name for the program's function."""
    name = kernel_module_name(module)
    found = SymbolTable.lookup_symbol(module, name)
    if found is not None and found not in moved:
        raise PassFailedException(
            f"{describe_op(found)}: @{name} is the name rev-gpu-outline gives the kernels' gpu.module: rename it"
        )


def entry_name(function: str) -> str:
    """The PTX ``.entry`` of a kernel: PTX names have no dots, which the
    ABI makes ``_`` (``k.adj`` is ``k_adj``), and any other character not
    in ``[A-Za-z0-9_]`` is ``$<hex>$`` (``revmlir.naming.identifier``)."""
    return identifier(function, "_")


def takes_arena(kernel: gpu.FuncOp) -> bool:
    """Whether a kernel takes a per-thread arena (its last parameters, after
    the error slot)."""
    return kernel.function_type.inputs.data[-1] != GPU_ERROR_SLOT


def has_parallel_loop(function: func.FuncOp) -> bool:
    return any(isinstance(op, scf.ParallelOp) for op in function.body.ops)


def _implicit_kernels(graph: _Functions, all_functions: bool) -> dict[str, scf.ParallelOp | None]:
    """The kernels when none are named: the functions with a top-level
    parallel loop, with that loop where it is already found.  With
    ``all_functions`` (``--emit=ptx``) such a function that breaks the
    kernel rule (an adjoint returning its scalar gradient, say), or that
    a function calls (itself included), is a device function instead: its parallel
    loop then runs in order in the calling thread, one of the loop's
    meanings, so the module's other functions still compile; a named
    kernel that breaks the rule or is called stays an error (``kernel_loop``
    and ``outline`` report it)."""
    functions = graph.by_name
    called = {c.callee.string_value() for f in functions.values() for c in graph.calls(f)} if all_functions else set()
    found: dict[str, scf.ParallelOp | None] = {}
    for name, function in functions.items():
        if function.is_declaration or not has_parallel_loop(function):
            continue
        if not all_functions:
            found[name] = None
            continue
        if name in called:
            continue
        try:
            found[name] = kernel_loop(function)
        except PassFailedException:
            continue
    return found


class NotAKernel(PassFailedException):
    """A function named as a kernel that breaks the kernel rule in a way
    its Python source can, at the op that breaks it.  The message speaks
    of the IR, which a ``rev-opt`` user writes; ``reason`` says the same in
    the source's terms, for ``rv.cuda.kernel`` (``revmlir.gpu.api``)."""

    def __init__(self, op: Operation, name: str, ir: str, reason: str):
        super().__init__(f"{describe_op(op)}: @{name} is not a kernel function: {ir}")
        self.op = op
        self.reason = reason


class ScalarGradient(PassFailedException):
    """An adjoint named as a kernel that returns the gradient of a scalar
    argument, which ``rev-lower-to-std`` sums in a one-element array and
    returns: not a kernel yet (a kernel returns nothing, and has no result
    buffer for the threads' sum; docs/gpu.md), rather than a breach of the
    kernel rule its source made.  ``argument`` is the scalar's name in
    the source."""

    def __init__(self, op: Operation, name: str, argument: str):
        super().__init__(
            f"{describe_op(op)}: @{name} is not a kernel function yet: it returns the gradient of its scalar "
            f"argument '{argument}' (a kernel returns nothing)"
        )
        self.argument = argument


def python_call_name(name: str) -> str:
    """How Python source calls the function ``name`` of a kernel module:
    ``~f`` for ``@f.inv``, ``rv.adjoint(f)`` for ``@f.adj`` (where
    ``naming.source_name`` names the function a derived one computes
    from, for run-time errors)."""
    if name.endswith(ADJOINT_SUFFIX):
        return f"rv.adjoint({python_call_name(name[: -len(ADJOINT_SUFFIX)])})"
    return shown_name(name, name.endswith(INVERSE_SUFFIX))


def kernel_loop(function: func.FuncOp) -> scf.ParallelOp:
    """The parallel loop of a kernel function; anything that breaks the
    kernel rule (module docstring) is a located error."""
    where = describe_op(function)
    name = function.sym_name.data
    if function.is_declaration or function.function_type.inputs.data[-1:] != (ERROR_SLOT,):
        raise PassFailedException(
            f"{where}: @{name} is not a kernel function: it is not a lowered reversible function "
            f"(its last argument must be the error slot {ERROR_SLOT})"
        )
    if len(function.body.blocks) != 1:
        raise PassFailedException(f"{where}: @{name} is not a kernel function: its body has several blocks")
    loops = [op for op in function.body.ops if isinstance(op, scf.ParallelOp)]
    if not loops:
        raise NotAKernel(
            function,
            name,
            "its body has no top-level scf.parallel (a parallel loop: rv.prange in Python, rev.for parallel in rev IR)",
            "it has no rv.prange loop at its top level",
        )
    if len(loops) > 1:
        raise NotAKernel(
            loops[1],
            name,
            f"it has {len(loops)} top-level parallel loops (one launch runs one)",
            f"it has {len(loops)} rv.prange loops at its top level (one launch runs one)",
        )
    (loop,) = loops
    if len(loop.lowerBound) != 1 or loop.initVals:
        raise PassFailedException(
            f"{describe_op(loop)}: a kernel's parallel loop must be one-dimensional without reductions"
        )
    error = function.body.block.args[-1]
    for op in function.body.ops:
        if op is not loop:
            _check_top_level(op, error, name)
    returned = function.body.block.last_op
    if isinstance(returned, func.ReturnOp) and returned.arguments:
        scalars = [a for a in function.body.block.args if not isinstance(a.type, MemRefType)]
        _check_returned(returned, scalars, name, _gradients(function))
    _check_own_sums(loop, name)  # after the returned gradient of a scalar, its sum's own reason
    return loop


def _gradients(function: func.FuncOp) -> dict[int, str]:
    """Where ``function`` is an adjoint (``@f.adj``): the position of each
    gradient argument, by the name of the parameter of ``f`` it is the
    gradient of.  An adjoint takes ``f``'s arguments, then the gradient of
    each that carries one (``derivative_arguments``), and its error slot."""
    if not function.sym_name.data.endswith(ADJOINT_SUFFIX):
        return {}
    arguments = function.body.block.args[:-1]
    for count in range(len(arguments) + 1):
        carrying = [a for a in arguments[:count] if gradient_type(a.type) is not None]
        if count + len(carrying) == len(arguments):
            return {count + i: a.name_hint or f"#{a.index}" for i, a in enumerate(carrying)}
    return {}


def _check_returned(
    returned: func.ReturnOp, scalars: list[BlockArgument], name: str, gradients: dict[int, str]
) -> None:
    """A kernel returns nothing: a function may be one if it returns
    nothing, or its scalar arguments unchanged, in order (as lowered
    reversible code returns them), which its host function then returns.
    An adjoint's gradient of a scalar (``gradients``: ``_gradients``) is
    ``ScalarGradient``."""
    values = list(returned.arguments)
    for scalar, value in zip(scalars, values):
        if value is scalar:
            continue
        if scalar.index in gradients:
            raise ScalarGradient(returned, name, gradients[scalar.index])
        which = f"%{scalar.name_hint}" if scalar.name_hint else f"#{scalar.index}"
        said = f"'{scalar.name_hint}'" if scalar.name_hint else f"#{scalar.index}"
        raise NotAKernel(
            returned,
            name,
            f"it returns a new value of its scalar argument {which} (a kernel returns nothing)",
            f"it changes its scalar argument {said} (a kernel returns nothing)",
        )
    if len(values) != len(scalars):
        raise PassFailedException(
            f"{describe_op(returned)}: @{name} is not a kernel function: it returns {len(values)} value(s) "
            f"and takes {len(scalars)} scalar argument(s) (a kernel returns nothing, or its scalar "
            "arguments unchanged)"
        )


def _check_top_level(op: Operation, error: SSAValue, name: str) -> None:
    """Outside the parallel loop, every thread runs ``op``: it may write
    only the error slot and its own allocations."""
    for inner in op.walk():
        if (
            isinstance(inner, memref.StoreOp | memref.AtomicRMWOp)
            and inner.memref is not error
            and not _own_allocation(inner.memref)
        ):
            raise NotAKernel(
                inner,
                name,
                "it writes an array outside its parallel loop, which every thread would do",
                "it writes an array outside its rv.prange loop, which every thread would do",
            )
        if isinstance(inner, func.CallOp) and (callee := inner.callee.string_value()) != REPORT:
            raise NotAKernel(
                inner,
                name,
                f"it calls @{callee} outside its parallel loop, which every thread would do",
                f"it calls {python_call_name(callee)} outside its rv.prange loop, which every thread would do",
            )


def _check_own_sums(loop: scf.ParallelOp, name: str) -> None:
    """An array the kernel allocates before its loop is each thread's own:
    a sum of the loop's iterations into one of its elements (an atomic
    addition, a shared accumulation or a count) would hold only the
    thread's iterations, so the result would depend on the grid."""
    for op in loop.body.walk():
        if isinstance(op, memref.AtomicRMWOp) and _own_allocation(op.memref):
            hint = op.memref.name_hint
            raise NotAKernel(
                op,
                name,
                f"its parallel loop sums into an element of {f'%{hint}' if hint else 'an array'} allocated outside "
                "the loop: each thread would hold its own copy, the sum of its own iterations",
                f"its rv.prange loop adds into {hint or 'an array'}[…] at an element its iterations share, but "
                f"{hint or 'the array'} is allocated outside the loop, one copy per thread: each copy would sum "
                "only its thread's iterations; pass the array as an argument",
            )


def _own_allocation(array: SSAValue) -> bool:
    """Whether ``array`` is an allocation of the thread's own: a
    ``memref.alloca`` or ``memref.alloc``, or an ``scf.if`` that yields one
    in each branch (``rev-lower-to-std`` puts an ancilla array of a size
    known at run time in the frame or on the heap by its size)."""
    owner = array.owner
    if isinstance(owner, memref.AllocaOp | memref.AllocOp):
        return True
    if not isinstance(owner, scf.IfOp) or not isinstance(array, OpResult):
        return False
    yields = [region.block.last_op for region in owner.regions if region.blocks]
    return len(yields) == 2 and all(
        isinstance(y, scf.YieldOp) and _own_allocation(y.operands[array.index]) for y in yields
    )


class _Functions:
    """What outlining asks of a module's functions (whom each calls, whether
    it allocates from the arena), each function walked once: the kernels'
    callees, the check that no device code calls a kernel and the arena's
    users were a walk each of every function."""

    def __init__(self, module: ModuleOp):
        self.by_name = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        self._calls: dict[func.FuncOp, list[func.CallOp]] = {}
        self._arena: dict[func.FuncOp, bool] = {}
        self._reports: dict[func.FuncOp, bool] = {}

    def _walk(self, function: func.FuncOp) -> None:
        ops = nested_ops(function)
        # by exact class, as every walk of a kernel's every op tests it
        # (isinstance on xDSL's ops goes through ABCMeta)
        self._calls[function] = [op for op in ops if op.__class__ is func.CallOp]
        self._arena[function] = bool(arena_allocations(function, ops) or arena_calls(function, ops))
        self._reports[function] = any(op.__class__ is CheckOp for op in ops)

    def calls(self, function: func.FuncOp) -> list[func.CallOp]:
        """The calls in ``function``."""
        if function not in self._calls:
            self._walk(function)
        return self._calls[function]

    def uses_arena(self, function: func.FuncOp) -> bool:
        """Whether ``function`` (as it was first asked about: a copy of it
        allocates as it does) allocates from the arena: arrays of a dynamic
        size, the buffers of stacks."""
        if function not in self._arena:
            self._walk(function)
        return self._arena[function]

    def callees(self, roots: list[func.FuncOp]) -> list[func.FuncOp]:
        """The functions ``roots`` call, directly or not, in module order
        (``revmlir.report`` where a ``CheckOp`` is: it calls it); not what
        the std body of ``revmlir.report`` calls (``revmlir.fail``): the
        device has a report of its own (``convert-gpu-to-nvvm``)."""
        seen: set[str] = set()
        work = list(roots)
        while work:
            caller = work.pop()
            calls = self.calls(caller)
            if self._reports[caller]:
                seen.add(REPORT)
            for op in calls:
                if (callee := op.callee.string_value()) not in seen:
                    seen.add(callee)
                    if callee in self.by_name and callee != REPORT:
                        work.append(self.by_name[callee])
        return [f for f in self.by_name.values() if f.sym_name.data in seen]


def _error_slot(function: func.FuncOp) -> SSAValue:
    """The error slot of a device function that allocates from the arena,
    through which it reaches the thread's arena."""
    args = function.body.block.args
    if not args or args[-1].type != ERROR_SLOT:
        user = next(iter([*arena_allocations(function), *arena_calls(function)]))
        raise PassFailedException(
            f"{describe_op(user)}: @{function.sym_name.data} allocates from the per-thread arena in GPU code but "
            f"takes no error slot {ERROR_SLOT}, through which device code reaches the arena (only lowered "
            "reversible functions have one)"
        )
    return args[-1]


def _in_arena(function: Operation, own: SSAValue, checks: CheckTable, name: str, check_ops: bool) -> None:
    """Give ``function``'s arrays and stacks the arena of the thread whose
    own error slot is ``own`` (its checks in the form ``check_ops`` says)."""
    carve(function, own, checks, name, check_ops)
    place(function, own, checks, name, check_ops)


def _device_copy(function: func.FuncOp, copy: bool) -> func.FuncOp:
    """A function for the device, a copy or ``function`` itself detached:
    ``revmlir.report`` and ``revmlir.fail`` only declared (their std bodies
    store in the thread's own slot and abort the process;
    ``convert-gpu-to-nvvm`` defines the device's report; the device has no
    ``revmlir.fail``)."""
    if (name := function.sym_name.data) in (FAIL, REPORT):
        return func.FuncOp.external(name, function.function_type.inputs.data, function.function_type.outputs.data)
    if copy:
        return function.clone()
    function.detach()
    return function


def _index(value: int) -> Operation:
    return arith.ConstantOp.from_int_and_width(value, IndexType())


def _store(value: SSAValue, array: SSAValue, word: int, ops: list[Operation]) -> None:
    position = _index(word)
    ops += [position, memref.StoreOp.get(value, array, [position])]


def _address(array: SSAValue, ops: list[Operation]) -> SSAValue:
    pointer = memref.ExtractAlignedPointerAsIndexOp.get(array)
    cast = arith.IndexCastOp(pointer, i64)
    ops += [pointer, cast]
    return cast.result


def kernel(
    function: func.FuncOp, loop: scf.ParallelOp, arena: bool, checks: CheckTable, copy: bool, check_ops: bool
) -> gpu.FuncOp:
    """The ``gpu.func`` of a kernel function: see the module docstring;
    with ``arena``, its arrays of a dynamic size come from a per-thread
    arena (``revmlir.gpu.arena``), whose address and bytes per thread are
    two more parameters after the error slot.  Without ``copy`` the body is
    ``function``'s own, moved (``function`` is left without one)."""
    source = function.clone() if copy else function
    inputs = [*source.function_type.inputs.data[:-1], GPU_ERROR_SLOT, *(ARENA_PARAMETERS if arena else ())]
    body = source.body.block
    if copy:
        loop = list(body.ops)[list(function.body.ops).index(loop)]
        assert isinstance(loop, scf.ParallelOp)
    error = body.args[-1]
    shared = body.insert_arg(GPU_ERROR_SLOT, len(body.args))
    shared.name_hint = error.name_hint
    prologue: list[Operation] = []
    own = memref.AllocaOp.get(i64, shape=ERROR_SLOT.get_shape())
    context = memref.AllocaOp.get(i64, shape=[CONTEXT_WORDS if arena else 2])
    prologue += [own, context]
    own.memref.name_hint, context.memref.name_hint = "thread_err", "err_context"
    error.replace_all_uses_with(own.memref)
    body.erase_arg(error)
    _store(_address(shared, prologue), context.memref, 0, prologue)
    none = arith.ConstantOp.from_int_and_width(NO_ELEMENT, i64)
    prologue.append(none)
    _store(none.result, context.memref, 1, prologue)
    if arena:
        _arena_context(body, context.memref, prologue)
    _store(_address(context.memref, prologue), own.memref, JUMP_WORD, prologue)
    body.insert_ops_before(prologue, body.first_op)
    if arena:
        _in_arena(source, own.memref, checks, display_name(function), check_ops)

    ops: list[Operation] = []
    (lb,), (ub,), (step,) = loop.lowerBound, loop.upperBound, loop.step
    thread, bdim, gdim = _global_thread(ops)
    threads = arith.MuliOp(gdim, bdim)
    ops.append(threads)
    start, stride = _grid_stride(lb, ub, step, thread, threads.result, ops)
    grid_loop = scf.ForOp(start, ub, stride, [], Region(Block(arg_types=[IndexType()])))
    ops.append(grid_loop)
    Rewriter.insert_op(ops, InsertPoint.before(loop))
    i = grid_loop.body.block.args[0]
    old = loop.body.block
    i.name_hint = old.args[0].name_hint
    element = arith.IndexCastOp(i, i64)
    iteration: list[Operation] = [element]
    _store(element.result, context.memref, 1, iteration)
    if arena:
        _restore_top(context.memref, grid_loop, iteration)
    grid_loop.body.block.add_ops(iteration)
    for op in list(old.ops)[:-1]:
        op.detach()
        grid_loop.body.block.add_op(op)
    old.args[0].replace_all_uses_with(i)
    grid_loop.body.block.add_op(scf.YieldOp())
    loop.detach()
    loop.erase()
    unchecked = version_loop(grid_loop, checks.entries)
    if unchecked is None:
        # its innermost loops instead (decision 131): unrolled with a check
        # each, BA's loops over a camera, a point and a row of ``J`` loaded
        # each element after a branch on its bound; where a row is in range
        # its loads are now issued together
        version_loops_in(grid_loop, checks.entries)
    loads_first((unchecked or grid_loop).body.block, body)
    returned = body.last_op
    assert isinstance(returned, func.ReturnOp)
    Rewriter.replace_op(returned, gpu.ReturnOp([]))
    kernel_op = gpu.FuncOp(
        function.sym_name.data, FunctionType.from_lists(inputs, []), source.detach_region(source.body), kernel=True
    )
    kernel_op.location = function.location
    return kernel_op


def _grid_stride(
    lb: SSAValue, ub: SSAValue, step: SSAValue, thread: SSAValue, threads: SSAValue, ops: list[Operation]
) -> tuple[SSAValue, SSAValue]:
    """The first index of ``thread`` among ``threads`` and the stride of
    the grid-stride loop, such that it runs exactly the iterations
    ``lb + k·step`` of ``range(lb, ub, step)`` with ``k ≡ thread`` modulo
    ``threads``.

    ``lb + thread·step`` and ``threads·step`` may pass 2⁶³ (a loop that
    starts near the top, a large step): a thread with no iteration, ``thread
    · step ≥ ub − lb``, starts at ``ub``; the stride is the exact product,
    read unsigned by the loop (``std_to_llvm._counted_loop``), or 2⁶⁴ − 1
    where the product does not fit, under which no thread gets a second
    iteration.  Both overflows are found against one quotient, ``(2⁶⁴ −
    1) ÷ step``: ``thread·step`` and ``threads·step`` fit where the factors
    are at most that."""
    most = _index(-1)
    quotient = arith.DivUIOp(most, step)
    offset = arith.MuliOp(thread, step)
    span = arith.SubiOp(ub, lb)
    conditions = [arith.CmpiOp(lb, ub, "slt"), arith.CmpiOp(thread, quotient, "ule"), arith.CmpiOp(offset, span, "ult")]
    both = arith.AndIOp(conditions[1], conditions[2])
    runs = arith.AndIOp(conditions[0], both)
    shifted = arith.AddiOp(lb, offset)
    start = arith.SelectOp(runs, shifted, ub)
    stride_fits = arith.CmpiOp(threads, quotient, "ule")
    product = arith.MuliOp(threads, step)
    stride = arith.SelectOp(stride_fits, product, most)
    ops += [most, quotient, offset, span, *conditions, both, runs, shifted, start, stride_fits, product, stride]
    start.result.name_hint, stride.result.name_hint = "first", "stride"
    return start.result, stride.result


def _global_thread(ops: list[Operation]) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The thread's index in the grid, ``ctaid.x·ntid.x + tid.x``, the
    block size and the grid size."""
    x = gpu.DimensionAttr(gpu.DimensionEnum.X)
    tid, bid, bdim, gdim = gpu.ThreadIdOp(x), gpu.BlockIdOp(x), gpu.BlockDimOp(x), gpu.GridDimOp(x)
    block_start = arith.MuliOp(bid, bdim)
    thread = arith.AddiOp(block_start, tid)
    ops += [tid, bid, bdim, gdim, block_start, thread]
    return thread.result, bdim.result, gdim.result


def _arena_context(body: Block, context: SSAValue, ops: list[Operation]) -> None:
    """The thread's part of the arena, ``[arena + t·bytes, arena + (t +
    1)·bytes)`` for its global thread id ``t``, as its context's top, base
    and end."""
    pointer, per_thread = (body.insert_arg(t, len(body.args)) for t in ARENA_PARAMETERS)
    pointer.name_hint, per_thread.name_hint = ARENA_NAMES
    thread, _, _ = _global_thread(ops)
    thread_word = arith.IndexCastOp(thread, i64)
    offset = arith.MuliOp(thread_word, per_thread)
    base = arith.AddiOp(pointer, offset)
    end = arith.AddiOp(base, per_thread)
    ops += [thread_word, offset, base, end]
    base.result.name_hint, end.result.name_hint = "arena_base", "arena_end"
    for word, value in ((TOP_WORD, base), (BASE_WORD, base), (END_WORD, end)):
        _store(value.result, context, word, ops)


def _restore_top(context: SSAValue, loop: scf.ForOp, iteration: list[Operation]) -> None:
    """Set the arena's top back at the start of every iteration to where it
    was before the loop: what an iteration allocates cannot outlive it, and
    stacks it does not free or bytes freed below a live stack's buffer
    (``revmlir.gpu.arena``) are not lost for the next one."""
    word = _index(TOP_WORD)
    top = memref.LoadOp.get(context, [word])
    Rewriter.insert_op([word, top], InsertPoint.before(loop))
    _store(top.res, context, TOP_WORD, iteration)


def launch(function: func.FuncOp, module_name: str, arena: bool) -> func.FuncOp:
    """The host function: a ``gpu.launch_func`` of the kernel (given its
    arena's address and bytes per thread if it has one), with the grid and
    block sizes as two more arguments."""
    inputs = [
        *function.function_type.inputs.data[:-1],
        GPU_ERROR_SLOT,
        *(ARENA_PARAMETERS if arena else ()),
        IndexType(),
        IndexType(),
    ]
    block = Block(arg_types=inputs)
    for old, new in zip(function.body.block.args, block.args):
        new.name_hint = old.name_hint
    *args, blocks, threads = block.args
    blocks.name_hint, threads.name_hint = "blocks", "threads"
    if arena:
        args[-2].name_hint, args[-1].name_hint = ARENA_NAMES
    one = _index(1)
    symbol = SymbolRefAttr(module_name, [function.sym_name.data])
    run = gpu.LaunchFuncOp(symbol, [blocks, one, one], [threads, one, one], kernelOperands=args)
    own = args[: len(function.function_type.inputs.data) - 1]
    scalars = [a for a in own if not isinstance(a.type, MemRefType)]
    returned = scalars if function.function_type.outputs.data else []
    block.add_ops([one, run, func.ReturnOp(*returned)])
    host = func.FuncOp(
        function.sym_name.data, FunctionType.from_lists(inputs, function.function_type.outputs.data), Region(block)
    )
    host.location = function.location
    return host


def check_distinct_kernels(names: Sequence[str]) -> None:
    """A ``PassFailedException`` naming the first of ``names`` named twice:
    a function is outlined once, and a program has one kernel per name, so
    a repeated name is a mistake in the list (``rev-gpu-outline{kernels=f,f}``),
    said before anything is built for it."""
    for index, name in enumerate(names):
        if name in names[:index]:
            listed = ", ".join("@" + n for n in names)
            raise PassFailedException(f"kernel @{name} is named twice (kernels: {listed})")


def check_kernel_names(names: Sequence[str], functions: Collection[str]) -> None:
    """A ``PassFailedException`` naming the first of ``names`` named twice
    (``check_distinct_kernels``) or that is not one of the module's
    ``functions``, and those it has."""
    check_distinct_kernels(names)
    for name in names:
        if name not in functions:
            known = ", ".join("@" + n for n in functions) or "none"
            raise PassFailedException(f"no function @{name} to make a kernel of (module has: {known})")


def outline(
    module: ModuleOp,
    names: list[str] | None = None,
    all_functions: bool = False,
    keep_host: bool = True,
    check_ops: bool = False,
) -> dict[str, LoopBounds | None]:
    """Outline the kernels ``names`` (default: every function with a
    top-level parallel loop; with ``all_functions``, those that no function
    calls and that keep the kernel rule) of ``module``; with ``all_functions``, every
    other function gets a device copy too.  Returns each kernel's loop
    bounds, where its arguments determine them (``revmlir.gpu.trip_count``:
    a launch shapes its grid by them).  Without ``keep_host`` the device
    functions are moved, not copied: for a compiler that reads only the
    ``gpu.module`` (``compile_kernels``), which the host functions left
    calling them would no longer verify, and copying them was a tenth of
    BA's kernel compile.  ``check_ops``: the arena's checks are one
    ``CheckOp`` each, as ``lower_to_std(check_ops=True)`` lowered the rest
    (else the printed std form)."""
    check_not_outlined(module)
    graph = _Functions(module)
    functions = graph.by_name
    known: dict[str, scf.ParallelOp | None] = {}
    if names is None:
        known = _implicit_kernels(graph, all_functions)
        names = list(known)
    check_kernel_names(names, functions)
    kernels = [functions[n] for n in names]
    loops = [found if (found := known.get(n)) is not None else kernel_loop(functions[n]) for n in names]
    devices = (
        [f for f in functions.values() if f.sym_name.data not in names] if all_functions else graph.callees(kernels)
    )
    for caller in [*devices, *kernels]:
        for call in graph.calls(caller):
            if call.callee.string_value() in names:
                raise PassFailedException(
                    f"{describe_op(call)}: kernel @{call.callee.string_value()} is called from GPU code; "
                    "a kernel is launched, not called (call a function it calls instead)"
                )
    if not kernels and not all_functions:
        return {}
    bounds = {n: loop_bounds(f, loop) for n, f, loop in zip(names, kernels, loops)}
    module_name = kernel_module_name(module)
    checks = register_checks(module)
    arenas = [any(graph.uses_arena(g) for g in [f, *graph.callees([f])]) for f in kernels]
    devices = [f for f in devices if stacks.runtime_kind(f.sym_name.data) not in ARENA_KINDS]
    check_module_name_free(module, () if keep_host else devices)
    in_arena = [graph.uses_arena(f) for f in devices]
    copies = [_device_copy(f, keep_host) for f in devices]
    for copy in [copy for copy, arena in zip(copies, in_arena) if arena]:
        _in_arena(copy, _error_slot(copy), checks, display_name(copy), check_ops)
    for copy in copies:
        version_loops_in(copy, checks.entries)
    if (any(in_arena) or any(arenas)) and REPORT not in {c.sym_name.data for c in copies}:
        # the arena's checks report as every check does
        copies.append(func.FuncOp.external(REPORT, list(REPORT_INPUTS), []))
    # the host functions first: without ``keep_host`` a kernel takes its
    # function's body
    hosts = [launch(f, module_name, arena) for f, arena in zip(kernels, arenas)]
    body = Block()
    body.add_ops(copies)
    body.add_ops(
        [kernel(f, loop, arena, checks, keep_host, check_ops) for f, loop, arena in zip(kernels, loops, arenas)]
    )
    store_checks(module, checks)
    device_module = gpu.ModuleOp(StringAttr(module_name), Region(body))
    if placed := [*kernels, *devices]:
        # where the code it holds comes from, for diagnostics that cite it
        # (``check_not_outlined``)
        device_module.location = placed[0].location
    for f, host in zip(kernels, hosts):
        Rewriter.replace_op(f, host)
    module.body.block.add_op(device_module)
    module.attributes[CONTAINER] = UnitAttr()
    return bounds


@dataclass(frozen=True)
class RevGpuOutlinePass(ModulePass):
    """Std-level kernel functions become ``gpu.func`` kernels launched by
    their host functions (``kernels``: the functions to outline, comma
    separated; default: every function with a top-level ``scf.parallel``;
    ``all_functions``: copy every function to the device, not only the
    kernels' callees, and make such a function that a function calls, or
    that breaks the kernel rule, a device function instead of a kernel)."""

    name = "rev-gpu-outline"

    kernels: tuple[str, ...] = ()
    all_functions: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = [n.strip().lstrip("@") for n in self.kernels if n.strip()] or None
        outline(op, names, self.all_functions)
