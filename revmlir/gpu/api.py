"""``rv.cuda``: reversible functions, their inverses and adjoints run as GPU
kernels.

    import revmlir as rv

    @rv.reversible
    def f(y, x):
        for i in rv.prange(len(x)):
            y[i] += log(x[i]) * sin(x[i])

    k = rv.cuda.kernel(f)       # also ~f and rv.adjoint(f)
    k(y, x)                     # CuPy, JAX, PyTorch arrays in place; numpy copied

A kernel is called like the function it runs and returns what that returns
(arrays are updated in place, scalars come back unchanged: a kernel's
parallel loop carries no state).  It specialises on the argument types as
``@rv.reversible`` does (a device array like a numpy array of its element
type and rank), and compiles once per specialisation, which the disk
cache keeps across processes (``revmlir.gpu.cache``: a later process runs
the frontend and loads the program).  Compiling needs no GPU
(``Kernel.compile``); launching needs one and the ``revmlir[cuda]``
extra, and says what is missing at the first launch: importing this module
imports nothing of CUDA.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.collector import collector_paused, pausing
from revmlir.frontend.base.derived import AdjointFunction
from revmlir.frontend.base.errors import at_op
from revmlir.frontend.base.specialization import (
    NativeCompilationError,
    Specialization,
    bound_by_position,
    named_arguments,
    room_to_nest,
)
from revmlir.frontend.reversible_code.functions import InverseFunction, ReversibleFunction
from revmlir.gpu import runtime
from revmlir.gpu.runtime import (
    ContextLostError,
    CUDAError,
    CUDAUnavailableError,
    release_arenas,
    synchronize,
    unavailable_reason,
)
from revmlir.gpu.toolkit import DEFAULT_ARCH
from revmlir.ir_utils import clone
from revmlir.kept_answers import ir_unchanged
from revmlir.naming import inverse_name
from revmlir.runtime.arguments import ArgumentProblem
from revmlir.semantics import written_arguments

__all__ = [
    "CUDAError",
    "ContextLostError",
    "CUDAUnavailableError",
    "Kernel",
    "is_available",
    "kernel",
    "release_arenas",
    "synchronize",
    "unavailable_reason",
]

Target = ReversibleFunction | InverseFunction | AdjointFunction

LAUNCH_OPTIONS = ("stream", "arena")
"""The keywords of a launch (``Kernel.__call__``), which a function's
parameter may not be named: by name it would be given to one or the other."""


@dataclass(frozen=True)
class CompiledKernel:
    """One specialisation of a kernel: its program and what a launch needs."""

    program: Any
    """The ``GPUProgram`` (PTX, kernel ABI, check table)."""
    name: str
    """The rev function the kernel runs (``f``, ``f.inv``, ``f.adj``)."""
    written: frozenset[int]
    """The positions of the arrays it may write."""

    @functools.cached_property
    def plan(self) -> runtime.LaunchPlan:
        """What every launch of it takes, worked out at the first (a
        compile alone needs none of it)."""
        return runtime.LaunchPlan.of(self.program, self.name, self.written)


class Kernel:
    """``rv.cuda.kernel(f)``: see the module's docstring."""

    def __init__(self, function: Target, arch: str = DEFAULT_ARCH, max_registers: int | None = None):
        if not isinstance(function, Target):
            raise TypeError(
                f"rv.cuda.kernel expects a @rv.reversible function, its inverse ~f or rv.adjoint(f), got {function!r}"
            )
        # lazy: the kernel compiler (libdevice, NVPTX) loads at the first compile
        from revmlir.gpu.program import check_architecture, check_max_registers

        check_architecture(arch)  # a mistyped GPU, where it is named rather than at the first compile
        check_max_registers(max_registers)
        self.function = function
        if clash := [p for p in LAUNCH_OPTIONS if p in self.parameters]:
            raise TypeError(
                f"rv.cuda.kernel({self.__name__}): its parameter '{clash[0]}' has the name of a launch "
                f"option ({', '.join(LAUNCH_OPTIONS)}=), which a keyword would give: rename the parameter"
            )
        self.arch = arch
        self.max_registers = max_registers
        self._compiled: dict[tuple[Specialization, str], CompiledKernel] = {}

    @functools.cached_property
    def __name__(self) -> str:  # a launch names the function to its checks: looked up once
        return self.function.__name__

    def __repr__(self) -> str:
        return f"<CUDA kernel of {self.__name__}>"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled and copied as what makes it, before its first compile as
        after (its compiled programs are of this process): ``rv.cuda.kernel``
        of the function, which pickles by name (``by_name``), so that the
        loading process compiles it again and a copy here is the kernel
        itself."""
        return kernel, (self.function, self.arch, self.max_registers)

    def __call__(self, *args: Any, stream: Any = None, arena: int | None = None, **keywords: Any) -> Any:
        """Launch on ``args``; with ``stream=`` queue the launch on that
        stream and return at once (its errors surface at
        ``rv.cuda.synchronize()``), unless a numpy array must be copied back.
        ``arena=``: bytes per thread of the per-thread arena that ancilla
        arrays of a dynamic size and the buffers of stacks come from
        (default ``runtime.DEFAULT_ARENA``; kernels without either take
        none).  The arguments are checked (count, types, shapes, what may be
        written) before the device is asked for, so that a mistake in them
        is reported as such on any machine, one without a GPU too, and
        names them as a call of the function on the CPU does."""
        target, who = self.function, f"{self.__name__}()"
        if isinstance(target, AdjointFunction):
            args = target.bound(who, args, keywords)
        else:
            args = bound_by_position(who, self.parameters, args, keywords)
            target.source.check_count(args)  # before an argument past the parameters is described
        if arena is not None:
            arena = runtime.arena_bytes(arena)
        handle = runtime.stream_handle(stream)
        gradient: Callable[[int], str] | None = None  # how an adjoint's are named, once f's specialisation is known
        try:
            if isinstance(target, AdjointFunction):
                # f's arguments first: they select the specialisation that
                # says how many gradients follow and whose each one is, so
                # that a gradient is described (and named) only within them
                count = len(self.parameters)
                own = runtime.describe(args[:count], handle, self.__name__)
                spec = target.specialization([*map(runtime.stand_in, own), *args[count:]])
                gradient = functools.partial(target.gradient_name, spec)
                described = own + runtime.describe(args[count:], handle, self.__name__, count)
            else:
                described = runtime.describe(args, handle, self.__name__)
                spec = self._specialization([runtime.stand_in(a) for a in described])
            compiled = self._compiled_kernel(spec)
            runtime.launch(compiled.plan, described, handle, stream is None, arena)
        except ArgumentProblem as error:
            raise (
                named_arguments(self, error) if gradient is None else named_arguments(self, error, gradient)
            ) from None
        return args[0] if len(args) == 1 else args

    @property
    def parameters(self) -> list[str]:
        """The names of the arguments a launch takes that have one: the
        function's (an adjoint's gradients have none), which messages name
        and keywords give."""
        function = self.function.function if isinstance(self.function, AdjointFunction) else self.function
        return function.parameters

    def compile(self, *args: Any) -> Any:
        """The ``GPUProgram`` for these arguments (numpy arrays and scalars
        here stand for device arrays of their type); needs no GPU."""
        return self.specialise(*args).program

    def specialise(self, *args: Any) -> CompiledKernel:
        """The compiled kernel for these arguments (as ``compile``), with
        what a launch needs."""
        return self._compiled_kernel(self._specialization(args))

    def _compiled_kernel(self, spec: Specialization) -> CompiledKernel:
        """The compiled kernel of the specialisation ``spec``."""
        name, generate = self._runs(spec)
        if (found := self._compiled.get((spec, name))) is None:
            # the passes recurse per operand, as for the CPU's compiles
            with collector_paused(), room_to_nest(spec.function, f"the kernel of {self.__name__}"):
                found = self._compiled[(spec, name)] = self._compile(spec, name, generate)
        return found

    def _compile(
        self, spec: Specialization, name: str, generate: Callable[[ModuleOp], object] | None
    ) -> CompiledKernel:
        # lazy: the kernel compiler (libdevice, NVPTX) loads at the first compile
        from revmlir.gpu.outline import NotAKernel, ScalarGradient
        from revmlir.gpu.program import compile_kernels

        # without derived functions to add, the specialisation's own module
        # serves, and compile_kernels lowers a copy of it; with them, the
        # copy made for them is this compile's alone, and is lowered in
        # place (a second copy: 18 ms of GMM's adjoint kernel)
        if generate is None:
            # ~f writes the arrays f writes: the specialisation's answer,
            # worked out once for its kernels and its CPU derivatives
            module = spec.module
            written = frozenset(
                i for i, (w, t) in enumerate(zip(spec.written, spec.types)) if w and isinstance(t, MemRefType)
            )
        else:
            module, writes = self._with_derived(spec, generate)
            written = writes[name]
        try:
            program = compile_kernels(
                module, [name], arch=self.arch, max_registers=self.max_registers, owned=generate is not None
            )
        except ScalarGradient as error:
            # what to_torch raises for what it does not run yet (docs/gpu.md)
            raise NotImplementedError(
                f"rv.cuda.kernel({self.__name__}): the gradient of scalar argument '{error.argument}' is not "
                "a kernel yet (an adjoint kernel returns nothing, docs/gpu.md); run rv.adjoint on the CPU"
            ) from None
        except NotAKernel as error:
            # a mistake in the source, as one in a reversible function's structure is
            raise at_op(error.op, f"{self.__name__} is not a kernel: {error.reason}") from None
        except PassFailedException as error:
            # what the CPU's backend="native" raises where native code cannot run f
            raise NativeCompilationError(f"the kernel of {self.__name__} cannot be compiled: {error}") from None
        return CompiledKernel(program, name, written)

    @pausing
    def rev_module(self, *args: Any) -> tuple[ModuleOp, str]:
        """The verified rev module the kernel for these arguments is compiled
        from (derived functions generated) and the rev function it runs."""
        spec = self._specialization(args)
        name, generate = self._runs(spec)
        return (clone(spec.module) if generate is None else self._with_derived(spec, generate)[0]), name

    @staticmethod
    def _with_derived(
        spec: Specialization, generate: Callable[[ModuleOp], object]
    ) -> tuple[ModuleOp, dict[str, frozenset[int]]]:
        """A copy of the specialisation's module with the functions
        ``generate`` derives, verified: the parallel rule holds for derived
        functions too, kernels must not race (the specialisation's own
        functions were verified when it was compiled).  With it, per
        function, the arrays a run may write (``written_arguments``): the
        verifier asks that of the module once per function with a parallel
        loop, and the answer is kept for all of them and the launch."""
        module = clone(spec.module)
        generate(module)
        with ir_unchanged():
            module.verify()
            return module, written_arguments(module)

    def _specialization(self, args: Sequence[Any]) -> Specialization:
        """The specialisation ``args`` select (of ``f`` for ``~f`` and
        ``rv.adjoint(f)``)."""
        target = self.function
        if isinstance(target, AdjointFunction):
            return target.specialization(args)
        if isinstance(target, InverseFunction):
            return target.function.specialization_for(*args)
        return target.specialization_for(*args)

    def _runs(self, spec: Specialization) -> tuple[str, Callable[[ModuleOp], object] | None]:
        """The rev function the kernel of ``spec`` runs, and what adds it
        to a copy of the specialisation's module (None: it is there)."""
        target = self.function
        if isinstance(target, AdjointFunction):
            return adjoint_name(spec.name, target.lanes), lambda m: generate_adjoints(
                m, [spec.name], lanes=target.lanes
            )
        if isinstance(target, InverseFunction):
            return inverse_name(spec.name), None
        return spec.name, None


KERNEL_CACHE_SIZE = 256
"""How many kernels ``kernel`` keeps (least recently used go first)."""


def kernel(function: Target, arch: str = DEFAULT_ARCH, max_registers: int | None = None) -> Kernel:
    """``f`` (``~f``, ``rv.adjoint(f)``) as a GPU kernel; ``f``'s body is one
    ``rv.prange`` loop (``docs/gpu.md`` says what a kernel may hold).
    ``arch``: the GPU architecture the PTX targets; ``max_registers``: a
    bound on the registers per thread (PTX's ``.maxnreg``: more threads per
    multiprocessor, at the cost of spills; default: as ptxas chooses).

    The same function and architecture give the same ``Kernel`` (``~f``
    and ``rv.adjoint(f)`` made again compare equal), so a kernel made
    where it is launched (``rv.cuda.kernel(f)(x)`` in a loop) compiles
    each specialisation once and its program loads on the device once."""
    if not isinstance(function, Target) or not isinstance(arch, str) or not isinstance(max_registers, int | None):
        return Kernel(function, arch, max_registers)  # its errors, at once or at the first compile
    return _kernel(function, arch, max_registers)


@functools.lru_cache(maxsize=KERNEL_CACHE_SIZE)
def _kernel(function: Target, arch: str, max_registers: int | None) -> Kernel:
    return Kernel(function, arch, max_registers)


def is_available() -> bool:
    """Whether a GPU and the CUDA packages are here to launch kernels."""
    return runtime.unavailable_reason() is None
