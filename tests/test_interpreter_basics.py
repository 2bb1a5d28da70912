"""The interpreter runs parsed programs forward and backward."""

from pathlib import Path

import pytest

from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module

EXAMPLES = Path(__file__).parent.parent / "examples"


def load(name: str) -> RevInterpreter:
    path = EXAMPLES / name
    return RevInterpreter(parse_module(path.read_text(), str(path)))


FIB = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144]


@pytest.mark.parametrize("n", range(12))
def test_fibonacci_forward_and_back(n):
    interp = load("fibonacci.mlir")
    out, n_after = interp.call("rrfib", 0, n)
    assert (out, n_after) == (FIB[n], n)
    assert interp.uncall("rrfib", out, n) == (0, n)


RECURSE = """
rev.func @recurse(%y: f64, %n: i64) {
  %y1, %n1 = rev.if (%y, %n) : f64, i64 pre {
  ^bb0(%a: f64, %k: i64):
    %c0 = arith.constant 0 : i64
    %more = arith.cmpi sgt, %k, %c0 : i64
    rev.cond %more
  } then {
  ^bb0(%a: f64, %k: i64):
    %one = arith.constant 1.0 : f64
    %a1 = rev.add %a, %one : f64
    %c1 = arith.constant 1 : i64
    %k1 = rev.sub %k, %c1 : i64
    %a2, %k2 = rev.call @recurse(%a1, %k1) : (f64, i64) -> (f64, i64)
    %k3 = rev.add %k2, %c1 : i64
    rev.yield %a2, %k3 : f64, i64
  } else {
  ^bb0(%a: f64, %k: i64):
    rev.yield %a, %k : f64, i64
  }
  rev.return %y1, %n1 : f64, i64
}
"""


def test_calls_nest_up_to_the_interpreters_depth_and_stop_cleanly_beyond(monkeypatch):
    """Python's recursion limit is raised while the interpreter runs and put
    back after; the interpreter's own depth bounds the calls (small here;
    ``test_native_safety`` runs a recursion 5000 deep on both engines)."""
    import sys

    import revmlir.interpreter.rev as semantics
    from revmlir.errors import ExecutionError

    monkeypatch.setattr(semantics, "MAX_CALL_DEPTH", 300)
    interpreter = RevInterpreter(parse_module(RECURSE, "recurse.mlir"))
    limit = sys.getrecursionlimit()
    assert interpreter.call("recurse", 0.0, 300) == (300.0, 300)  # 300 recursive calls below the entry
    assert interpreter.uncall("recurse", 300.0, 300) == (0.0, 300)
    with pytest.raises(ExecutionError, match="recurse.mlir:14:5: 'rev.call' in @recurse: calls nest too deeply"):
        interpreter.call("recurse", 0.0, 301)
    assert sys.getrecursionlimit() == limit


def test_lowered_calls_nest_up_to_the_interpreters_depth_as_native_calls_do(monkeypatch):
    """``call_lowered`` counts the calls that may recurse as native code
    does, and names the one past the depth as native code does (the
    ``rev.call`` it was lowered from): lowered code 10,000 deep ran out of
    Python's frames at whatever op came next."""
    import revmlir.interpreter
    from revmlir.errors import ExecutionError
    from revmlir.lowering.rev_to_std import RevLowerToStdPass
    from revmlir.parsing import make_context

    monkeypatch.setattr(revmlir.interpreter, "MAX_CALL_DEPTH", 300)
    module = parse_module(RECURSE, "recurse.mlir")
    RevLowerToStdPass().apply(make_context(), module)
    interpreter = RevInterpreter(module)
    assert interpreter.call_lowered("recurse", 0.0, 300) == (300.0, 300)
    with pytest.raises(ExecutionError, match="recurse.mlir:14:5: 'rev.call' in @recurse: calls nest too deeply"):
        interpreter.call_lowered("recurse", 0.0, 301)
    assert interpreter.call_lowered("recurse", 0.0, 3) == (3.0, 3)  # the count is back at 0
