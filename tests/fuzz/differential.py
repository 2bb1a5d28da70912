"""Differential fuzzing of the engines on generated programs.

``program_generator`` builds modules the verifier accepts.  For each, one
function runs on random inputs on the interpreter and on native code (in a
worker process), and the fuzzer checks:

* soundness: a run that succeeds is undone by the inverse, to the input
  bits for integers (within rounding for floats), on both engines;
* agreement: both engines give the same results, or the same error (type
  and message);
* robustness: no exception outside ``outcomes.CLEAN_ERRORS``, no crash, no
  hang, and the verifier accepts every generated program.

Batches of programs are drawn by hypothesis with a fixed seed per batch, so
a run is reproducible from its seed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from program_generator import Extensions, arguments, programs

from .outcomes import Finding, summary_of, unexpected

BATCH = 10  # programs per hypothesis run; the time limit is checked between runs


@dataclass(frozen=True)
class Case:
    text: str
    function: str
    args: tuple[Any, ...]
    exact: bool  # integers only: results must match to the bit

    def reproducer(self) -> str:
        return f"{self.text}\n// @{self.function}{tuple(self.args)!r}"


@dataclass
class Run:
    """One engine's run: the results, or the error it ended with."""

    values: tuple[Any, ...] | None = None
    error: str | None = None  # "Type: message" of a clean error
    trace: str | None = None  # an unexpected exception
    summary: str = ""


def _run(call: Callable[[], tuple[Any, ...]]) -> Run:
    try:
        return Run(values=tuple(call()))
    except RecursionError as error:
        return Run(trace="RecursionError", summary=summary_of(error))
    except BaseException as error:  # the oracle itself: any exception may come
        if (trace := unexpected(error)) is not None:
            return Run(trace=trace, summary=summary_of(error))
        return Run(error=f"{type(error).__name__}: {error}")


def equal(a: Any, b: Any, exact: bool) -> bool:
    """Values alike: numbers to the bit (NaN equal to NaN) when ``exact``,
    else within 1e-9; arrays and stacks element by element."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and equal(a.ravel().tolist(), b.ravel().tolist(), exact)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(equal(x, y, exact) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b if exact else math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return type(a) is type(b) and a == b


@dataclass
class Outcome:
    """What the worker reports on a case: (kind, stage, summary, detail)."""

    problems: list[tuple[str, str, str, str]] = field(default_factory=list)

    def add(self, kind: str, stage: str, summary: str, detail: str = "") -> None:
        self.problems.append((kind, stage, summary, detail))


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
    compiled = _run(lambda: (NativeModule.compile(module),))
    if compiled.values is None:
        outcome.add("traceback" if compiled.trace else "engines", "native compilation",
                    compiled.summary or (compiled.error or "")[:120], compiled.trace or compiled.error or "")
        return outcome
    native = compiled.values[0]
    engines = {"interpreter": interpreter, "native": native}
    forward = {name: _run(lambda e=e: e.call(case.function, *copy.deepcopy(case.args)))
               for name, e in engines.items()}
    for name, run in forward.items():
        if run.trace is not None:
            outcome.add("traceback", f"{name} call", run.summary, run.trace)
        elif run.values is not None:
            back = _run(lambda e=engines[name], v=run.values: e.uncall(case.function, *copy.deepcopy(v)))
            if back.values is None or not equal(back.values, case.args, case.exact):
                outcome.add("soundness", f"{name} uncall", "~f after f does not restore the inputs",
                            f"forward {run.values!r}\nbackward {back.values or back.error or back.trace!r}")
    expected, actual = forward["interpreter"], forward["native"]
    if expected.trace is None and actual.trace is None:
        if (expected.values is None) != (actual.values is None):
            which = expected.error or actual.error or ""
            outcome.add("engines", "call", f"only one engine fails: {which.split(':')[0]}",
                        f"interpreter {expected.values or expected.error!r}\nnative {actual.values or actual.error!r}")
        elif expected.values is not None and actual.values is not None:
            if not equal(expected.values, actual.values, case.exact):
                outcome.add("engines", "call", "the engines compute different results",
                            f"interpreter {expected.values!r}\nnative {actual.values!r}")
        elif expected.error != actual.error:
            outcome.add("engines", "call", "the engines fail differently",
                        f"interpreter {expected.error}\nnative {actual.error}")
    return outcome


def fuzz(
    seed: int,
    more: Callable[[int], bool],
    extensions: Extensions = Extensions(),
    timeout: float = 60.0,
) -> tuple[int, list[Finding]]:
    """Runs generated programs while ``more(programs run so far)``; returns how
    many ran and the findings (one per kind, stage and summary)."""
    from .worker import Died, Worker

    worker: Worker[Case] = Worker(run_case, timeout)
    findings: dict[tuple[str, str, str], Finding] = {}
    count = 0

    def check(program: Any, data: st.DataObject) -> None:
        nonlocal count
        if not more(count):
            return
        func = data.draw(st.sampled_from(program.functions))
        case = Case(program.text, func.name, data.draw(arguments(func)), "f64" not in program.text)
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
