"""The cost of counting steps in a recursive function made resumable: the
plain machine against the compiled primal, natively.

The programs are those of ``tests/checkpoint_programs/recursion.mlir``.
The primal is the recursive ``func.func`` compiled as it is (native calls,
with native code's stack-depth check at each); the plain machine is what
``make-resumable`` makes of it (one loop over segments, the recursion's
frames on local stacks), reversibilized in tape mode and then taken as its
untaped copy (``revmlir.ad.untaped``: the frames pushed and popped, no
tape), which is what a checkpointed gradient's counting and recomputing
steps run.  Each row: the median of paired samples of the ratio machine ÷
primal, both results checked equal.

``--gradient`` times the checkpointed gradient instead
(``ad-checkpoint{functions=… policy=bisection}``, natively): each snapshot
holds the frames' live part and each restore puts it back, so its time
follows how the frames are copied (decision 72).  Each row: the median of
the samples' CPU time.

Run:  .venv/bin/python benchmarks/bench_resumable_recursion.py [--samples N] [--gradient]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.traits import SymbolTable

from revmlir.ad.untaped import untaped_copy
from revmlir.dialects import anc
from revmlir.parsing import make_context, parse_module
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.passes.resumable import MakeResumablePass
from revmlir.passes.reversibilize import ReversibilizePass
from revmlir.runtime.native import NativeModule
from revmlir.semantics import gradient_type

SOURCE = (pathlib.Path(__file__).resolve().parents[1] / "tests" / "checkpoint_programs" / "recursion.mlir").read_text()
CASES: dict[str, tuple[Any, ...]] = {
    "looped (depth 100, 1000 calls)": ("looped", 0.7, 100, 1000),
    "looped (depth 1000, 300 calls)": ("looped", 0.7, 1000, 300),
    "mutual (depth 2000, a loop inside)": ("mutual", 2000, 0.6),
    "halve (depth 1000, data-dependent)": ("halve", 1.0e300, 0.9),
}


def primal(name: str) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """``@name`` compiled as it is, called through a wrapper written to
    rev's calling convention (scalar arguments and a result slot in, their
    final values out)."""
    module = parse_module(SOURCE, "recursion.mlir", make_context())
    for function in module.ops:
        if isinstance(function, func.FuncOp):
            function.sym_visibility = StringAttr("private")
    target = SymbolTable.lookup_symbol(module, name)
    assert isinstance(target, func.FuncOp)
    inputs, outputs = list(target.function_type.inputs.data), list(target.function_type.outputs.data)
    wrapper = func.FuncOp(name + ".primal", ((*inputs, *outputs), (*inputs, *outputs)))
    block = wrapper.body.block
    call = func.CallOp(name, block.args[: len(inputs)], outputs)
    block.add_ops([call, func.ReturnOp(*block.args[: len(inputs)], *call.res)])
    module.body.block.add_op(wrapper)
    return NativeModule.compile(module).std_caller(wrapper)


def machine(name: str) -> tuple[Callable[[Sequence[Any]], tuple[Any, ...]], int]:
    """The untaped copy of ``@name``'s resumable machine, and its tapes."""
    ctx = make_context()
    module = parse_module(SOURCE, "recursion.mlir", ctx)
    MakeResumablePass(functions=(name,)).apply(ctx, module)
    ReversibilizePass(mode="tape").apply(ctx, module)
    plain = untaped_copy(module, name)
    assert plain is not None
    function = SymbolTable.lookup_symbol(module, plain)
    assert function is not None
    tapes = sum(isinstance(t, anc.StackType) for t in function.function_type.inputs.data)
    return NativeModule.compile(module).caller(plain, backward=False), tapes


GRADIENT_CASES: dict[str, tuple[Any, ...]] = {
    "looped (depth 100, 100 calls)": ("looped", 0.7, 100, 100),
    "looped (depth 1000, 10 calls)": ("looped", 0.7, 1000, 10),
    "mutual (depth 2000, a loop inside)": ("mutual", 2000, 0.6),
    "halve (depth 1000, data-dependent)": ("halve", 1.0e300, 0.9),
}


def checkpointed(name: str) -> tuple[Callable[[Sequence[Any]], tuple[Any, ...]], Callable[[Sequence[Any]], list[Any]]]:
    """``@name.ckpt`` compiled, and the arguments it takes for ``@name``'s
    scalar arguments: them, a zero result slot and empty tapes, then the
    gradients' seeds (one for the result)."""
    ctx = make_context()
    module = parse_module(SOURCE, "recursion.mlir", ctx)
    AdCheckpointPass(functions=(name,), policy="bisection").apply(ctx, module)
    function = SymbolTable.lookup_symbol(module, name)
    assert function is not None
    types = function.function_type.inputs.data

    def arguments(args: Sequence[Any]) -> list[Any]:
        state = [*args, 0.0, *([] for t in types[len(args) + 1 :] if isinstance(t, anc.StackType))]
        seeds = [
            [] if isinstance(t, anc.StackType) else float(number == len(args))
            for number, t in enumerate(types)
            if gradient_type(t) is not None
        ]
        return [*state, *seeds]

    return NativeModule.compile(module).caller(name + ".ckpt", backward=False), arguments


def gradients(samples: int) -> None:
    print(f"{'case':<36} {'gradient ms':>12}")
    for label, (name, *args) in GRADIENT_CASES.items():
        run, arguments = checkpointed(name)
        times = []
        for _ in range(samples):
            start = time.process_time()
            run(arguments(args))
            times.append(time.process_time() - start)
        print(f"{label:<36} {1e3 * statistics.median(times):>12.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument("--gradient", action="store_true")
    options = parser.parse_args()
    samples = options.samples
    if options.gradient:
        gradients(samples)
        return
    compiled: dict[str, tuple[Any, Any, int]] = {}
    print(f"{'case':<36} {'primal ms':>10} {'machine ms':>11} {'machine/primal':>15}")
    for label, (name, *args) in CASES.items():
        if name not in compiled:
            compiled[name] = (primal(name), *machine(name))
        run_primal, run_machine, tapes = compiled[name]
        expected = run_primal((*args, 0.0))[len(args)]
        assert run_machine((*args, 0.0, *([] for _ in range(tapes))))[len(args)] == expected
        rows = []
        for _ in range(samples):
            start = time.process_time()
            run_primal((*args, 0.0))
            middle = time.process_time()
            run_machine((*args, 0.0, *([] for _ in range(tapes))))
            end = time.process_time()
            rows.append((middle - start, end - middle))
        ratio = statistics.median(m / p for p, m in rows if p > 0)
        p, m = (statistics.median(r[k] for r in rows) for k in (0, 1))
        print(f"{label:<36} {1e3 * p:>10.2f} {1e3 * m:>11.2f} {ratio:>15.2f}")


if __name__ == "__main__":
    main()
