"""Arguments stored by machine code (``revmlir.runtime.marshal``) must be
exactly what the Python converters store: every call below runs twice, once
marshalled and once with the machine code switched off, and the results are
compared; what the machine code does not recognise must reach the Python
converters, which convert it or report it."""

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revmlir.parsing import parse_module
from revmlir.runtime.marshal import ObjectLayout, marshaller
from revmlir.runtime.native import NativeModule, _NativeCall

PROBE = """
rev.func @probe(%x: f64, %k: i64, %a: i8, %b: i16, %c: i32, %i: index, %p: i1,
                %v: memref<?xf64>, %m: memref<?x?xf64>, %t: memref<?x?x?xi32>, %y: f32, %z: complex<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %v, %c0 : memref<?xf64>
  %rows = memref.dim %m, %c0 : memref<?x?xf64>
  %cols = memref.dim %m, %c1 : memref<?x?xf64>
  %d0 = memref.dim %t, %c0 : memref<?x?x?xi32>
  %d1 = memref.dim %t, %c1 : memref<?x?x?xi32>
  %d2 = memref.dim %t, %c2 : memref<?x?x?xi32>
  %vl = arith.subi %n, %c1 : index
  %ml = arith.subi %rows, %c1 : index
  %mc = arith.subi %cols, %c1 : index
  %t0 = arith.subi %d0, %c1 : index
  %t1 = arith.subi %d1, %c1 : index
  %t2 = arith.subi %d2, %c1 : index
  %ev = memref.load %v[%vl] : memref<?xf64>
  %em = memref.load %m[%ml, %mc] : memref<?x?xf64>
  %et = memref.load %t[%t0, %t1, %t2] : memref<?x?x?xi32>
  %x1 = rev.add %x, %ev : f64
  %x2 = rev.add %x1, %em : f64
  %et64 = arith.extsi %et : i32 to i64
  %k1 = rev.add %k, %et64 : i64
  %size = arith.muli %d0, %d1 : index
  %size3 = arith.muli %size, %d2 : index
  %i1 = rev.add %i, %size3 : index
  rev.return %x2, %k1, %a, %b, %c, %i1, %p, %y, %z : f64, i64, i8, i16, i32, index, i1, f32, complex<f64>
}
"""


@functools.cache
def probe_module() -> NativeModule:
    return NativeModule.compile(parse_module(PROBE, "probe.mlir"))


@pytest.fixture
def native() -> NativeModule:
    return probe_module()


def python_only(native: NativeModule) -> _NativeCall:
    call = _NativeCall(native, native._written, native.function("probe"), backward=False)
    call.marshal = None
    return call


def test_this_python_and_numpy_are_marshalled_natively():
    """CI runs CPython with numpy 2: the fast path must be there, or every
    test below would only compare the Python path with itself."""
    assert ObjectLayout.probe() is not None
    assert marshaller() is not None


def same(found, expected) -> bool:
    """Results compared entry by entry (arrays by value)."""
    return len(found) == len(expected) and all(
        np.array_equal(f, e) if isinstance(f, np.ndarray) else (type(f), f) == (type(e), e)
        for f, e in zip(found, expected)
    )


def arguments(x, k, a, b, c, i, p, shapes, y=0.5, z=1 + 2j):
    v, m, t = (np.arange(float(np.prod(s))).reshape(s) for s in shapes)
    return (x, k, a, b, c, i, p, v, m, t.astype(np.int32), y, z)


@settings(max_examples=60, deadline=None)
@given(
    x=st.floats(allow_nan=False, allow_infinity=False, width=64) | st.integers(-(2**60), 2**60),
    k=st.integers(-(2**63), 2**63 - 1),
    a=st.integers(-(2**70), 2**70),
    b=st.integers(-(2**20), 2**20),
    c=st.integers(-(2**40), 2**40),
    i=st.integers(0, 2**62),
    p=st.booleans() | st.integers(0, 3),
    sizes=st.lists(st.integers(1, 4), min_size=6, max_size=6),
)
def test_marshalled_calls_store_what_the_converters_store(x, k, a, b, c, i, p, sizes):
    # the module is not a parameter: hypothesis would print it, IR and all,
    # with a falsifying example
    native = probe_module()
    shapes = [(sizes[0],), (sizes[1], sizes[2]), (sizes[3], sizes[4], sizes[5])]
    fast = native.caller("probe", backward=False)(arguments(x, k, a, b, c, i, p, shapes))
    slow = python_only(native)(arguments(x, k, a, b, c, i, p, shapes))
    assert same(fast, slow)
    # in the function's order: x + v[-1] + m[-1, -1]
    assert fast[0] == float(x) + (sizes[0] - 1) + (sizes[1] * sizes[2] - 1)


def test_a_typical_call_leaves_nothing_to_python(native):
    caller = native.caller("probe", backward=False)
    caller(arguments(1.0, 2, 3, 4, 5, 6, True, [(2,), (2, 3), (1, 2, 3)]))
    (frame,) = caller.frames
    # f32 (rounded) and complex go through Python; everything else does not
    assert frame.plan.left_to_python() == [10, 11]


def test_what_machine_code_does_not_recognise_goes_to_the_converters(native):
    caller = native.caller("probe", backward=False)
    shapes = [(2,), (2, 3), (1, 2, 3)]
    base = arguments(1.0, 2, 3, 4, 5, 6, True, shapes)
    # numbers of other types are converted
    expected = caller(base)
    converted = caller((np.float64(1.0), np.int64(2), *base[2:]))
    (frame,) = caller.frames
    assert frame.plan.left_to_python() == [0, 1, 10, 11]
    assert same(converted, expected)

    class Subclass(np.ndarray):
        pass

    found = caller((*base[:7], base[7].view(Subclass), *base[8:]))
    assert same(found, caller(base))

    with pytest.raises(TypeError, match=r"argument #8 of @probe must be a C-contiguous array"):
        caller((*base[:8], np.zeros((3, 2)).T, *base[9:]))
    with pytest.raises(TypeError, match=r"argument #7 of @probe must be an array of float64 .* got int64"):
        caller((*base[:7], np.arange(2), *base[8:]))
    with pytest.raises(
        TypeError,
        match=r"argument #8 of @probe must be an array of float64 with shape \['\?', '\?'\], got float64 \[6\]",
    ):
        caller((*base[:8], np.zeros(6), *base[9:]))
    with pytest.raises(TypeError, match=r"argument #1 of @probe must be an integer"):
        caller((base[0], 2.5, *base[2:]))
    with pytest.raises(TypeError, match=r"argument #0 of @probe must be a scalar"):
        caller((None, *base[1:]))
    # a failed call leaves the frame to the next one
    assert same(caller(base), python_only(native)(base))


def test_argument_lists_are_marshalled_like_tuples(native):
    base = arguments(1.0, 2, 3, 4, 5, 6, False, [(2,), (2, 3), (1, 2, 3)])
    assert same(native.caller("probe", backward=False)(list(base)), python_only(native)(base))


def test_concurrent_marshalled_calls_keep_their_frames_apart(native):
    caller = native.caller("probe", backward=False)

    def run(n: int) -> set[float]:
        return {caller(arguments(0.0, 0, 0, 0, 0, 0, False, [(n,), (n, 1), (1, 1, n)]))[0] for _ in range(200)}

    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(run, range(1, 17)))
    assert found == [{float(n - 1 + n - 1)} for n in range(1, 17)]
