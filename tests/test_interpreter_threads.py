"""One interpreter serves calls from several threads at once: every call
and uncall gets its own result, and the counters add up."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module

EXAMPLES = Path(__file__).parent.parent / "examples"
FIB = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144]

ARRAYS = """
rev.func @shift(%x: memref<?xf64>, %s: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %e = rev.take %x[%i] : memref<?xf64>
    %e1 = rev.add %e, %s : f64
    rev.put %e1, %x[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %s : f64
}
"""


def test_concurrent_calls_and_uncalls_of_one_interpreter(switching_often: None):
    path = EXAMPLES / "fibonacci.mlir"
    interpreter = RevInterpreter(parse_module(path.read_text(), str(path)))
    alone = RevInterpreter(parse_module(path.read_text(), str(path)))
    start = threading.Barrier(6)
    rounds = 12

    def hammer(worker: int) -> list[str]:
        start.wait()
        wrong = []
        for round in range(rounds):
            n = (worker + round) % len(FIB)
            if (result := interpreter.call("rrfib", 0, n)) != (FIB[n], n):
                wrong.append(f"call rrfib(0, {n}) = {result}")
            if (result := interpreter.uncall("rrfib", FIB[n], n)) != (0, n):
                wrong.append(f"uncall rrfib({FIB[n]}, {n}) = {result}")
        return wrong

    with ThreadPoolExecutor(6) as pool:
        wrong = [line for lines in pool.map(hammer, range(6)) for line in lines]
    assert wrong == []
    for worker in range(6):  # the same calls one after another
        for round in range(rounds):
            n = (worker + round) % len(FIB)
            alone.call("rrfib", 0, n)
            alone.uncall("rrfib", FIB[n], n)
    assert interpreter.counters == alone.counters
    assert interpreter.live_ancillas == 0


def test_concurrent_array_calls_each_update_their_own_array(switching_often: None):
    interpreter = RevInterpreter(parse_module(ARRAYS))

    def hammer(worker: int) -> bool:
        x = np.arange(1.0, 6.0) + worker
        original = x.copy()
        for _ in range(10):
            interpreter.call("shift", x, 0.5)
            if not np.array_equal(x, original + 0.5):
                return False
            interpreter.uncall("shift", x, 0.5)
            if not np.array_equal(x, original):
                return False
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(hammer, range(4)))
