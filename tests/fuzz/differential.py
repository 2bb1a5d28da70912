"""Differential fuzzing of the engines on generated programs.

``program_generator`` builds modules the verifier accepts.  For each, one
function runs on random inputs on the interpreter and on native code (in a
worker process), and the fuzzer checks:

* soundness: a run that succeeds is undone by the inverse, to the input
  bits for integers (within rounding for floats), on both engines;
* agreement: both engines give the same results, or the same error (type
  and message);
* robustness: no exception outside ``outcomes.CLEAN_ERRORS``, no crash, no
  hang, and the verifier accepts every generated program;
* the GPU path, with the ``parallel`` extension: the entry function is a
  kernel, which always runs, and its kernels run thread by thread on the
  CPU must agree with both engines (``kernels``).

Batches of programs are drawn by hypothesis with a fixed seed per batch, so
a run is reproducible from its seed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from program_generator import Extensions, arguments, programs

from .kernels import GRIDS, KernelRun, check_kernel
from .outcomes import Finding, Outcome, equal, run_engine

BATCH = 10  # programs per hypothesis run; the time limit is checked between runs
PTX_EVERY = 5  # every fifth kernel is also compiled to PTX for ptxas


@dataclass(frozen=True)
class Case:
    text: str
    function: str
    args: tuple[Any, ...]
    exact: bool  # integers only: results must match to the bit
    gpu: KernelRun | None = None  # the function is a kernel: emulate it too

    def reproducer(self) -> str:
        grid = f" on {self.gpu.grid[0]}x{self.gpu.grid[1]} threads" if self.gpu is not None else ""
        return f"{self.text}\n// @{self.function}{tuple(self.args)!r}{grid}"


def run_case(case: Case) -> Outcome:
    """Both engines forward and backward on one case (in the worker)."""
    from revmlir.interpreter import RevInterpreter
    from revmlir.parsing import parse_module
    from revmlir.runtime.native import NativeModule

    outcome = Outcome()
    try:
        module = parse_module(case.text)
    except BaseException as error:  # the oracle itself: any exception may come
        outcome.add("soundness", "verifier", "a generated program is rejected", str(error))
        return outcome
    interpreter = RevInterpreter(module)
    compiled = run_engine(lambda: (NativeModule.compile(module),))
    if compiled.values is None:
        outcome.failed("native compilation", compiled)
        return outcome
    native = compiled.values[0]
    engines = {"interpreter": interpreter, "native": native}
    forward = {name: run_engine(lambda e=e: e.call(case.function, *copy.deepcopy(case.args)))
               for name, e in engines.items()}
    for name, run in forward.items():
        if run.trace is not None:
            outcome.add("traceback", f"{name} call", run.summary, run.trace)
        elif run.values is not None:
            back = run_engine(lambda e=engines[name], v=run.values: e.uncall(case.function, *copy.deepcopy(v)))
            if back.values is None or not equal(back.values, case.args, case.exact):
                outcome.add("soundness", f"{name} uncall", "~f after f does not restore the inputs",
                            f"forward {run.values!r}\nbackward {back.values or back.error or back.trace!r}")
    outcome.compare("call", ("interpreter", forward["interpreter"]), ("native", forward["native"]), case.exact)
    if case.gpu is not None:
        check_kernel(case.text, case.args, case.exact, case.gpu, interpreter, native, outcome)
    return outcome


def fuzz(
    seed: int,
    more: Callable[[int], bool],
    extensions: Extensions = Extensions(),
    timeout: float = 60.0,
    ptx_every: int = PTX_EVERY,
) -> tuple[int, list[Finding]]:
    """Runs generated programs while ``more(programs run so far)``; returns how
    many ran and the findings (one per kind, stage and summary).  Every
    ``ptx_every``-th kernel also goes through ptxas."""
    from .worker import Died, Worker

    worker: Worker[Case] = Worker(run_case, timeout)
    findings: dict[tuple[str, str, str], Finding] = {}
    count = 0

    def check(program: Any, data: st.DataObject) -> None:
        nonlocal count
        if not more(count):
            return
        gpu = None
        if program.kernel is not None:
            func = program.entry
            gpu = KernelRun(program.kernel, func, data.draw(st.sampled_from(GRIDS)), count % ptx_every == 0)
        else:
            func = data.draw(st.sampled_from(program.functions))
        case = Case(program.text, func.name, data.draw(arguments(func)), "f64" not in program.text, gpu)
        count += 1
        outcome = worker.run(case)
        if isinstance(outcome, Died):
            problems = [(outcome.kind, "engines", outcome.detail, "")]
        else:
            problems = outcome.problems
        for kind, stage, summary, detail in problems:
            findings.setdefault((kind, stage, summary), Finding(kind, stage, summary, case.reproducer(), detail))

    try:
        batch = 0
        while more(count):
            run = hypothesis_seed(seed * 1_000_003 + batch)(
                settings(
                    max_examples=BATCH, database=None, deadline=None, phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )(given(programs(extensions=extensions), st.data())(check))
            )
            run()
            batch += 1
    finally:
        worker.close()
    return count, list(findings.values())
