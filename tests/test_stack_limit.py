"""A stack grows to ``REVMLIR_STACK_MAX_MB`` megabytes at most
(``revmlir.safety.stack_limit``): a push past that stops the run with the
located "cannot grow its stack" error, alike on both engines, where
overcommitted memory let a tape without end grow until the kernel killed
the process.  Each run sets a small bound, in a process of its own (the
bound is read when a module is compiled)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from revmlir.lowering.stacks import most_elements
from revmlir.safety import stack_limit

ROOT = Path(__file__).parent.parent

ENDLESS_TAPE = """
import json
import sys
import revmlir as rv

@rv.ordinary(backend=sys.argv[1])
def halving(x):
    y = 0.0
    while x > 1.0:
        x = x * 0.5
        y = y + x
    return y + x

try:
    rv.gradient(halving, (float("inf"),))
except rv.ExecutionError as error:
    print(json.dumps(str(error)))
"""


def stopped(backend: str, tmp_path: Path) -> str:
    script = tmp_path / "endless_tape.py"
    script.write_text(ENDLESS_TAPE)
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "REVMLIR_STACK_MAX_MB": "0.01"}
    run = subprocess.run(
        [sys.executable, str(script), backend], capture_output=True, text=True, timeout=120, env=environment
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def test_a_tape_without_end_stops_at_the_bound_on_both_engines(tmp_path: Path):
    native, interpreter = (stopped(backend, tmp_path) for backend in ("native", "interpreter"))
    assert native == interpreter
    assert native.startswith(f"{tmp_path / 'endless_tape.py'}:9:5: 'anc.push' in @halving.tape: "), native
    # 0.01 MB of 8-byte elements: 1310, of which the doubling capacities
    # reach 1024
    assert native.endswith("cannot grow a stack of 1024 elements: out of memory"), native


def test_the_most_elements_are_the_largest_capacity_within_the_bound(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("REVMLIR_STACK_MAX_MB", "0.01")
    assert [most_elements(width, stack_limit()) for width in (1, 8, 16, 1400, 10486)] == [8192, 1024, 512, 0, 0]
    monkeypatch.setenv("REVMLIR_STACK_MAX_MB", "1")
    assert most_elements(8, stack_limit()) == 131072


def test_a_bound_that_is_no_positive_number_is_reported_and_the_default_used(monkeypatch: pytest.MonkeyPatch):
    default = stack_limit()
    for text in ("-1", "many", "inf"):
        monkeypatch.setenv("REVMLIR_STACK_MAX_MB", text)
        with pytest.warns(RuntimeWarning, match=f"REVMLIR_STACK_MAX_MB='{text}' is not a positive number of megabytes"):
            assert stack_limit() == default
