"""A stack grows to ``REVMLIR_STACK_MAX_MB`` megabytes at most
(``revmlir.safety.stack_limit``): a push or a record (a checkpoint's
snapshot) past that stops the run with the located "cannot grow its stack"
error, alike on both engines, where overcommitted memory let a tape
without end grow until the kernel killed the process.  Each run sets a
small bound, in a process of its own (the bound is read when a module is
compiled)."""

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

LARGE_SNAPSHOTS = """
import json
import sys
import numpy as np
import revmlir as rv

@rv.ordinary(backend=sys.argv[1])
def oscillate(u, v, c, steps):
    for step in rv.checkpointed(range(steps), snapshots=4):
        for i in range(len(u)):
            v[i] = v[i] + c * u[i]
            u[i] = u[i] - c * v[i]
    return u[0]

try:
    rv.gradient(oscillate, (np.ones(30), np.zeros(30), 0.2, 8))
    print(json.dumps("no error"))
except rv.ExecutionError as error:
    print(json.dumps(str(error)))
"""


CURSOR_FRAMES = """
import json
import sys
sys.path.insert(0, sys.argv[2])
from cursor_driver import quiet
import revmlir as rv
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

module = parse_module(quiet("#ad.schedule<store_all>"), "drive.mlir")
engine = RevInterpreter(module) if sys.argv[1] == "interpreter" else NativeModule.compile(module)
try:
    print(json.dumps(str(engine.call("drive", 200))))
except rv.ExecutionError as error:
    print(json.dumps(str(error)))
"""
"""A store-all cursor over 200 steps, whose frames grow a level a step."""


def stopped(backend: str, tmp_path: Path, program: str = ENDLESS_TAPE, megabytes: str = "0.01") -> str:
    script = tmp_path / "endless_tape.py"
    script.write_text(program)
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "REVMLIR_STACK_MAX_MB": megabytes}
    run = subprocess.run(
        [sys.executable, str(script), backend, str(ROOT / "tests")],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def test_a_tape_without_end_stops_at_the_bound_on_both_engines(tmp_path: Path):
    native, interpreter = (stopped(backend, tmp_path) for backend in ("native", "interpreter"))
    assert native == interpreter
    assert native.startswith(f"{tmp_path / 'endless_tape.py'}:9:5: 'anc.push' in @halving: "), native
    # 0.01 MB of 8-byte elements: 1310, the last doubling cut short there
    assert native.endswith("cannot grow a stack of 1310 elements: out of memory"), native


def test_snapshots_past_the_bound_stop_at_the_same_record_on_both_engines(tmp_path: Path):
    """Records of 60 elements (two arrays of 30): the third would pass the
    131 elements of a 0.001 MB bound (the interpreter bounded single
    pushes only, and ran on)."""
    native, interpreter = (
        stopped(backend, tmp_path, LARGE_SNAPSHOTS, "0.001") for backend in ("native", "interpreter")
    )
    assert native == interpreter
    assert native.startswith(f"{tmp_path / 'endless_tape.py'}:9:5: 'anc.snapshot' in @oscillate: "), native
    assert native.endswith("cannot grow a stack of 120 elements: out of memory"), native


def test_the_most_elements_are_those_the_bound_holds(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("REVMLIR_STACK_MAX_MB", "0.01")
    assert [most_elements(width, stack_limit()) for width in (1, 8, 16, 1400, 10486)] == [10485, 1310, 655, 7, 0]
    monkeypatch.setenv("REVMLIR_STACK_MAX_MB", "1")
    assert most_elements(8, stack_limit()) == 131072


def test_a_bound_that_is_no_positive_number_is_reported_and_the_default_used(monkeypatch: pytest.MonkeyPatch):
    default = stack_limit()
    for text in ("-1", "many", "inf"):
        monkeypatch.setenv("REVMLIR_STACK_MAX_MB", text)
        with pytest.warns(RuntimeWarning, match=f"REVMLIR_STACK_MAX_MB='{text}' is not a positive number of megabytes"):
            assert stack_limit() == default


def test_a_cursors_frames_past_the_bound_stop_at_the_same_step_on_both_engines(tmp_path: Path):
    """``ad.next`` pushes a frame per level of the schedule, on native
    code's bounded stack; the interpreter's frames ran past the bound."""
    native, interpreter = (stopped(backend, tmp_path, CURSOR_FRAMES, "0.001") for backend in ("native", "interpreter"))
    assert native == interpreter
    assert native.startswith("drive.mlir:"), native
    assert "'ad.next' in @drive: cannot grow a stack of 131 elements: out of memory" in native, native
