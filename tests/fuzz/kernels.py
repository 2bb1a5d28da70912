"""The emulated GPU engine of the differential fuzzer.

A program with the ``parallel`` extension has a kernel as its entry
function (``program_generator.Kernel``).  Its kernel, its inverse's (where
it has one) and its adjoint's (where that is a kernel: no gradient of a
scalar) are compiled as GPU kernels and run thread by thread on the CPU
(``tests/gpu_emulation.py``) on a small grid, and must give what the
interpreter and native code give: the same arrays, or the same error,
message and location, with the element of the thread that fails first.

Which element that is follows from the iterations alone: they are
independent, so each one's error is that of the loop run over it alone
(``Kernel.one_iteration``, on the interpreter), and the emulation runs
thread ``t`` of ``T`` over the elements ``t, t + T, …`` in order, threads
one after another; the first thread with a failing element reports its
first one.  Both engines' runs must fail with the same error as the first
failing element alone (they report no element, so that it is the first one
shows only where the elements' messages differ).  Floats may differ by
what adding a shared accumulation's terms in the threads' order rounds
otherwise (``Direction.moved``).

A sample of the kernels (``KernelRun.ptx``) is also compiled to PTX, with
its inverse and adjoint, and the whole module as ``rev-translate
--emit=ptx`` compiles it: ptxas must accept both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from program_generator import F64, FuncInfo, Kernel

from .outcomes import Outcome, Run, run_engine

FEWER = [(1, 1), (1, 2), (2, 1), (1, 3), (3, 1)]
GRIDS = [*FEWER, *FEWER, (2, 2), (2, 3)]
"""(blocks, threads per block), to draw from: mostly fewer threads than a
kernel's (usually four) elements, so a thread's grid-stride loop runs
several, sometimes as many threads or more."""


@dataclass(frozen=True)
class KernelRun:
    """How a case's kernel runs on the emulated GPU."""

    kernel: Kernel
    func: FuncInfo
    grid: tuple[int, int]
    ptx: bool  # also compile it to PTX and assemble it


@dataclass(frozen=True)
class Direction:
    """One kernel of a case: the engines' runs and the loop over one
    element, on the interpreter."""

    stage: str
    entry: str
    module: Any
    inputs: tuple[Any, ...]
    interpret: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    native: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    alone: Callable[[int], tuple[Any, ...]]

    @property
    def engines(self) -> dict[str, Callable[[], tuple[Any, ...]]]:
        return {
            "interpreter": lambda: self.interpret(copy.deepcopy(self.inputs)),
            "native": lambda: self.native(copy.deepcopy(self.inputs)),
        }

    def moved(self) -> tuple[Any, ...] | None:
        """How far the interpreter's writes moved each float array's
        elements, added up (per argument, None for the others), or None
        when it fails: the scale of what a launch may add in another order
        than the CPU (shared accumulations)."""
        inputs = tuple(
            _Moves.of(a) if isinstance(a, np.ndarray) and a.dtype == np.float64 else copy.deepcopy(a)
            for a in self.inputs
        )
        if run_engine(lambda: self.interpret(inputs)).values is None:
            return None
        return tuple(a.moved if isinstance(a, _Moves) else None for a in inputs)


class _Moves(np.ndarray):
    """A float array that adds up, per element, how far its writes move it."""

    moved: np.ndarray

    @staticmethod
    def of(array: np.ndarray) -> _Moves:
        moves = array.copy().view(_Moves)
        moves.moved = np.zeros(array.shape)
        return moves

    def __setitem__(self, index: Any, value: Any) -> None:
        self.moved[index] += np.abs(np.asarray(value, dtype=np.float64) - self.view(np.ndarray)[index])
        super().__setitem__(index, value)


def _launch(module: Any, entry: str, args: Sequence[Any], grid: tuple[int, int]) -> tuple[Any, ...]:
    from gpu_emulation import EmulatedKernel
    from revmlir.gpu.runtime import raise_gpu_error

    kernel = EmulatedKernel(module, entry)
    values = copy.deepcopy(list(args))
    slot = kernel.launch(values, *grid)
    if slot.any():
        raise_gpu_error(kernel.check_table, slot)
    return tuple(values)


def first_failure(kernel: Kernel, failures: dict[int, str], grid: tuple[int, int]) -> str | None:
    """The error the emulated launch reports: that of the first thread, in
    the order they run, with a failing element, at its first one."""
    threads = grid[0] * grid[1]
    elements = list(kernel.elements)
    for thread in range(threads):
        for element in elements[thread::threads]:
            if element in failures:
                return f"{failures[element]} (element {element})"
    return None


def adjoint_inputs(func: FuncInfo, args: tuple[Any, ...], seed: int) -> tuple[Any, ...]:
    """``args`` then a gradient for every float array (the adjoint's
    signature), drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    gradients = [rng.uniform(-2.0, 2.0, np.shape(a)) for p, a in zip(func.params, args, strict=True) if p.elem == F64]
    return (*args, *gradients)


def with_adjoint(text: str, name: str) -> Any:
    """The module of ``text`` with ``name.adj``."""
    from revmlir.parsing import make_context, parse_module
    from revmlir.passes.adjoint import AdAdjointPass

    module = parse_module(text)
    AdAdjointPass(functions=(name,)).apply(make_context(), module)
    return module


def _directions(
    text: str, args: tuple[Any, ...], run: KernelRun, interpreter: Any, native: Any, outcome: Outcome
) -> list[Direction]:
    from revmlir.interpreter import RevInterpreter
    from revmlir.parsing import parse_module
    from revmlir.runtime.native import NativeModule

    name, kernel = run.func.name, run.kernel

    def one(element: int) -> Any:
        return RevInterpreter(parse_module(kernel.one_iteration(text, element)))

    module = parse_module(text)
    directions = [
        Direction(
            "kernel", name, module, args,
            lambda a: interpreter.call(name, *a), lambda a: native.call(name, *a),
            lambda e: one(e).call(name, *copy.deepcopy(args)),
        )
    ]
    if run.func.bidirectional:
        directions.append(
            Direction(
                "inverse kernel", f"{name}.inv", module, args,
                lambda a: interpreter.uncall(name, *a), lambda a: native.uncall(name, *a),
                lambda e: one(e).uncall(name, *copy.deepcopy(args)),
            )
        )
    if any(p.kind == "scalar" and p.elem == F64 for p in run.func.params):
        return directions  # its adjoint returns a scalar's gradient: not a kernel
    built = run_engine(lambda: (with_adjoint(text, name),))
    if built.trace is not None:
        outcome.add("traceback", "ad-adjoint", built.summary, built.trace)
    if built.values is None:
        return directions  # a construct without an adjoint: a clean refusal
    (adjoint,) = built.values
    compiled = run_engine(lambda: (NativeModule.compile(adjoint),))
    if compiled.values is None:
        outcome.failed("native compilation of the adjoint", compiled)
        return directions
    adjoint_native, adjoint_interpreter = compiled.values[0], RevInterpreter(adjoint)
    inputs = adjoint_inputs(run.func, args, len(text))
    directions.append(
        Direction(
            "adjoint kernel", f"{name}.adj", adjoint, inputs,
            lambda a: adjoint_interpreter.call(f"{name}.adj", *a), lambda a: adjoint_native.call(f"{name}.adj", *a),
            lambda e: RevInterpreter(with_adjoint(kernel.one_iteration(text, e), name)).call(
                f"{name}.adj", *copy.deepcopy(inputs)),
        )
    )
    return directions


def check_kernel(
    text: str, args: tuple[Any, ...], exact: bool, run: KernelRun, interpreter: Any, native: Any, outcome: Outcome
) -> None:
    """The emulated kernels against both engines (in the worker)."""
    directions = _directions(text, args, run, interpreter, native, outcome)
    for direction in directions:
        stage = f"emulated {direction.stage}"
        emulated = run_engine(lambda d=direction: _launch(d.module, d.entry, d.inputs, run.grid))
        if emulated.trace is not None:
            outcome.add("traceback", stage, emulated.summary, emulated.trace)
        engines = {engine: run_engine(call) for engine, call in direction.engines.items()}
        scale = None if exact or emulated.values is None else direction.moved()
        for engine, result in engines.items():
            if result.trace is not None and direction.stage != "kernel":  # the forward run is reported already
                outcome.add("traceback", f"{engine} {direction.stage}", result.summary, result.trace)
            if result.error is None or emulated.error is None:
                outcome.compare(stage, (engine, result), ("emulated", emulated), exact, scale)
        if emulated.error is None and all(r.error is None for r in engines.values()):
            continue
        failures = {}
        for element in run.kernel.elements:
            alone = run_engine(lambda e=element, d=direction: d.alone(e))
            if alone.trace is not None:
                outcome.add("traceback", f"{stage}, element {element} alone", alone.summary, alone.trace)
            if alone.error is not None:
                failures[element] = alone.error
        first = Run(error=failures[min(failures)]) if failures else Run(values=())
        for engine, result in engines.items():
            if result.error is not None:
                outcome.compare(stage, ("its first failing element alone", first), (engine, result), exact)
        if emulated.error is not None:
            predicted = first_failure(run.kernel, failures, run.grid)
            expected = Run(error=predicted) if predicted is not None else Run(values=())
            outcome.compare(stage, ("the first failing thread's element alone", expected), ("emulated", emulated), exact)
    if run.ptx:
        assembled = run_engine(lambda: _assemble(directions))
        if assembled.values is None:
            outcome.failed("ptxas", assembled)


def _assemble(directions: list[Direction]) -> tuple[Any, ...]:
    """The kernels compiled to PTX together, and the whole module as
    ``rev-translate --emit=ptx`` compiles it (every function a device
    function), each assembled by ptxas."""
    from revmlir.gpu.program import compile_kernels, module_ptx
    from revmlir.gpu.toolkit import emit_cubin

    module = directions[-1].module  # the adjoint's module holds the others
    program = compile_kernels(module, [d.entry for d in directions])
    return emit_cubin(program.ptx, program.arch), emit_cubin(module_ptx(module, program.arch), program.arch)
