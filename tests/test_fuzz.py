"""A bounded run of both fuzzers (``tests/fuzz``), fixed seeds, about a
minute on one core: it must find no traceback, crash, hang, soundness
violation or engine difference beyond the known open ones (``fuzz.known``).
The oracles are tested too: each must be able to fail."""

from __future__ import annotations

import os
import random
import time
from unittest.mock import patch

from fuzz import differential, mutation, outcomes
from fuzz.known import is_known
from fuzz.outcomes import Finding
from fuzz.worker import Died, Worker
from program_generator import Extensions

# Every generator feature: i1 state and its extension, division by zero,
# shifts of 64 and more, out-of-bounds indices, failed checks, complex
# functions and loops at the limits of index, on which both engines agree
# (the same result or the same located error).
TODAY = Extensions(
    flags=True,
    division=True,
    wide_shifts=True,
    out_of_bounds=True,
    failing_checks=True,
    complex=True,
    loop_limits=True,
)


# Counted loops and calls in them, and loads at indices affine in a loop's
# index whose invariant part divides by constants (decision 135), out of
# range at some iteration: what loop versioning acts on.
VERSIONED = Extensions(versioned_loops=True, out_of_bounds=True, division=True)


def describe(findings: list[Finding]) -> str:
    return "\n\n".join(f"{f.kind} in {f.stage}: {f.summary}\n{f.reproducer}\n{f.detail}" for f in findings)


def test_mutated_repository_programs_end_in_results_or_diagnostics():
    count, findings = mutation.fuzz(seed=1, more=lambda n: n < 200, ordinary=False)
    assert count == 200
    new = [f for f in findings if not is_known(f)]
    assert not new, describe(new)


def test_generated_programs_invert_and_agree_on_both_engines():
    count, findings = differential.fuzz(seed=1, more=lambda n: n < 30, extensions=TODAY)
    assert count == 30
    assert not findings, describe(findings)


def test_versioned_loops_agree_on_both_engines():
    count, findings = differential.fuzz(seed=2, more=lambda n: n < 8, extensions=VERSIONED)
    assert count == 8
    assert not findings, describe(findings)


# -- the oracles can fail -------------------------------------------------------


def _crash(case: int) -> int:
    if case == 1:
        os.abort()
    if case == 2:
        time.sleep(60)
    return case * 10


def test_the_worker_survives_crashes_and_hangs():
    worker: Worker[int] = Worker(_crash, timeout=2.0)
    try:
        assert worker.run(3) == 30
        assert worker.run(1) == Died("crash", "worker died (exit code -6)")
        assert worker.run(2) == Died("hang", "no answer within 2 s")
        assert worker.run(4) == 40  # a fresh worker took over
    finally:
        worker.close()


UNCHECKED_FREE = """
rev.func @f(%y: i64) {
  %c1 = arith.constant 1 : i64
  %a = anc.alloc %c1 : i64
  %a1 = rev.add %a, %y : i64
  anc.free %a1, %c1 {nocheck} : i64
  rev.return %y : i64
}
"""


def test_the_soundness_oracle_sees_an_unchecked_wrong_free():
    outcome = differential.run_case(differential.Case(UNCHECKED_FREE, "f", (5,), exact=True))
    stages = sorted(stage for kind, stage, _, _ in outcome.problems if kind == "soundness")
    assert stages == ["interpreter uncall", "native uncall"]


def test_the_engine_oracle_sees_different_errors():
    assert not outcomes.equal((1, 2.0), (1, 2.0 + 1e-12), exact=True)
    assert outcomes.equal((1, 2.0), (1, 2.0 + 1e-12), exact=False)
    assert outcomes.equal([float("nan")], [float("nan")], exact=True)
    assert not outcomes.equal((True,), (1,), exact=True)


def test_the_traceback_oracle_sees_an_unexpected_exception():
    with patch("revmlir.parsing.parse_module", side_effect=ValueError("not a diagnostic")):
        findings = mutation.run_case(mutation.Case(FORWARD_REFERENCE, ("rev-verify",)))
    assert [stage for stage, _, _ in findings] == ["parse and verify"]


def test_mutations_change_the_text_deterministically():
    source = mutation.corpus(ordinary=False)[0]
    first = [mutation.mutate(random.Random(s), source) for s in range(20)]
    again = [mutation.mutate(random.Random(s), source) for s in range(20)]
    assert first == again
    assert sum(text != source for text in first) >= 15


# -- findings fixed since: each a regression test --------------------------------

# An operand of a region op named like its region's block argument stayed a
# forward reference, and xDSL's parser ended in "Forward declared values do not
# have an owner" (tests/filecheck/tools/use_before_definition.mlir has the
# other forms of a use before its definition).
FORWARD_REFERENCE = """rev.func @f(%n: index) {
  %c1 = arith.constant 1 : index
  rev.for %i to %n step %c1 : index () {
  ^bb0(%i: index):
    rev.yield
  }
  rev.return %n : index
}
"""


def test_an_operand_defined_in_its_own_region_ends_in_a_diagnostic():
    pipelines = ("rev-verify", "rev-lower-to-std,convert-std-to-llvm")
    assert mutation.run_case(mutation.Case(FORWARD_REFERENCE, pipelines)) == []
