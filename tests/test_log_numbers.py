"""Log numbers at their edges, alike on both engines: ``rv.ulog`` of a real
that is not positive and finite is a located error at the call, as such an
argument is a ``TypeError``, and a check that compares log numbers shows
the numbers, not their logarithms."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import revmlir as rv
from marked_lines import MarkedLines
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

ENGINES = ["interpreter", "native"]
LINES = MarkedLines(Path(__file__))


def _scaled(y, x):
    ly = rv.ancilla(rv.ulog(1.0))
    ly *= rv.ulog(x)  # E:made
    y += float(ly)
    ly /= rv.ulog(x)
    rv.free(ly, rv.ulog(1.0))


def _kept(y, x, z):
    ly = rv.ancilla(rv.ulog(1.0))
    ly *= rv.ulog(x)
    ly *= rv.ulog(z)
    y += 1.0
    rv.free(ly, rv.ulog(1.0))  # E:freed


@pytest.mark.parametrize("engine", ENGINES)
def test_a_log_number_of_a_real_not_positive_and_finite_is_refused_where_it_is_made(engine):
    scaled = rv.reversible(backend=engine)(_scaled)
    assert scaled(0.0, 2.0) == pytest.approx((2.0, 2.0))
    for x in (-2.0, 0.0, -0.0, math.inf, math.nan):
        with pytest.raises(rv.ExecutionError) as raised:
            scaled(0.0, x)
        LINES.located(
            raised.value,
            "E:made",
            f"'rev.to_log' in @_scaled: {x!r} is no log number: a log number is the logarithm of a positive, finite real",
        )


@pytest.mark.parametrize("engine", ENGINES)
def test_a_freed_log_number_is_shown_as_the_number(engine):
    """The free compares logarithms; its message shows the numbers, and one
    beyond the floats as ``inf``."""
    kept = rv.reversible(backend=engine)(_kept)
    for x, z, shown in ((2.5, 1.0, "2.5"), (1e300, 1e300, "inf")):
        with pytest.raises(rv.InvertibilityError) as raised:
            kept(0.0, x, z)
        LINES.located(raised.value, "E:freed", f"'anc.free' in @_kept: ancilla freed holding {shown}, expected 1.0")


LOG_ARGUMENT = """
rev.func @lg(%y: !rev.log<f64>, %a: !rev.log<f64>) {
  %y1 = rev.mul %y, %a : !rev.log<f64>
  rev.return %y1, %a : !rev.log<f64>, !rev.log<f64>
}
"""


@pytest.mark.parametrize("engine", [RevInterpreter, NativeModule.compile])
def test_a_log_number_argument_of_a_real_not_positive_and_finite_is_refused(engine):
    """An argument of ``inf`` was taken (its logarithm stored), and the
    inverse gave back NaN (``inf - inf``) where ``rv.ulog(inf)`` already
    stopped: a log argument is a positive, finite real, as the number
    ``rev.to_log`` makes."""
    functions = engine(parse_module(LOG_ARGUMENT))
    assert functions.uncall("lg", *functions.call("lg", 3.0, 2.0)) == pytest.approx((3.0, 2.0))
    for x in (math.inf, 0.0, -1.0, math.nan):
        with pytest.raises(
            TypeError, match=r"argument #1 of @lg must be a positive, finite real number \(!rev.log<f64>\), got float"
        ):
            functions.call("lg", 3.0, x)
