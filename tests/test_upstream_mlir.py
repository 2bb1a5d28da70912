"""Differential tests against upstream MLIR (``mlir-opt``/``mlir-runner`` 22).

Each example's std-level IR (and that of programs with stacks, whose
runtime the module defines) (``rev-invert`` then ``rev-lower-to-std``) gets a
probe: ``@probe(%out: memref<?xi64>)`` calls the example's function on fixed
arguments, then its inverse on what the call returned, and stores the bits
of every result, every array element and the error slot in ``%out``.  Then:

- upstream's pipeline lowers the module (``convert-to-llvm``) and
  ``mlir-runner`` runs it, printing ``%out``: it must match revmlir's native
  code (bit for bit where both compute the same way; complex functions are
  written differently, so floats are compared to 1e-14) and the interpreter;
- upstream's transformations (``convert-scf-to-cf``, ``canonicalize``,
  ``cse``, ``inline``, with the debug locations printed as aliases after
  the module) feed revmlir's ``convert-std-to-llvm``, and the probe run
  natively through ``_mlir_ciface_probe`` must give the same bits.
"""

from __future__ import annotations

import ctypes
import math
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ComplexType,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute

import revmlir as rv
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.naming import inverse_name
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime.native import NativeModule
from revmlir.runtime_checks import ERROR_SLOT
from test_std_interop import MemRef1D, compile_std, entry
from upstream_tools import c_runner_utils, tool

pytestmark = pytest.mark.upstream_mlir

EXAMPLES = Path(__file__).parent.parent / "examples"
rng = np.random.default_rng(5)

CASES: dict[str, tuple[str, list[Any]]] = {
    "multiplier.mlir": ("multiplier", [2, 3, 5]),
    "fibonacci.mlir": ("rrfib", [0, 12]),
    "complex_log.mlir": ("complex_log", [0.5j, 3 - 4j]),
    "complex_log_routine.mlir": ("complex_log", [0.5j, -1 + 2j]),
    "bennett.mlir": ("bennett", [1.0, 0.0, 4]),
    "power.mlir": ("mypower", [0.25, 1.5, 7]),
    "affine.mlir": (
        "i_affine",
        [rng.normal(size=3), rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=4)],
    ),
    "unitary.mlir": ("i_ummm", [rng.normal(size=(4, 2)), rng.normal(size=12)]),
}

UPSTREAM_LOWERING = [
    "--convert-complex-to-standard",
    "--convert-math-to-libm",
    "--convert-scf-to-cf",
    "--convert-to-llvm",
    "--reconcile-unrealized-casts",
]
UPSTREAM_TRANSFORMS = [
    "--convert-scf-to-cf",
    "--canonicalize",
    "--cse",
    "--inline",
    "--mlir-print-debuginfo",
]


# Values move through a local stack that grows past its first buffer
# (``revmlir.lowering.stacks``): a and b come back swapped.
SWAP = (
    """
rev.func @swap(%a: ELEM, %b: ELEM) {
  %t = anc.stack_alloc : !anc.stack<ELEM>
"""
    + "  anc.copy_push %t, %a : !anc.stack<ELEM>\n" * 9
    + """
  anc.push %t, %a : !anc.stack<ELEM>
  anc.push %t, %b : !anc.stack<ELEM>
  %b1 = anc.pop %t : !anc.stack<ELEM>
  %a1 = anc.pop %t : !anc.stack<ELEM>
"""
    + "  anc.copy_pop %t, %a1 : !anc.stack<ELEM>\n" * 9
    + """
  anc.stack_free %t : !anc.stack<ELEM>
  rev.return %b1, %a1 : ELEM, ELEM
}
"""
)
STACKS: dict[str, list[Any]] = {
    "f64": [0.1, -1e300],
    "complex<f64>": [1 + 2j, -0.5 - 1e-300j],
    "index": [2**62, -5],
    "i32": [-(2**31), 7],
    "i1": [True, False],
}
for element, pair in STACKS.items():
    CASES[f"swap<{element}>"] = ("swap", pair)


def _divmod_hypot(y, a, b):
    y += math.hypot(a, b) + a % b + a // b


# Python's float % and // (fmod, signed zeros by select) and math.hypot
# (a call of libm's hypot in the std output): a zero remainder and quotient
# of either sign, a quotient that a / b would round up, an overflowing a² + b².
DIVMOD_HYPOT: dict[str, list[Any]] = {
    "zeros": [0.0, -0.0, 5.0],
    "rounded": [0.0, 5.0, -0.1],
    "large": [0.0, 3e154, -4e154],
}
for label, operands in DIVMOD_HYPOT.items():
    CASES[f"divmod_hypot<{label}>"] = ("_divmod_hypot", operands)


def source(case: str) -> tuple[str, str]:
    """The rev source of a case and its file name."""
    if case.startswith("swap<"):
        return SWAP.replace("ELEM", case[len("swap<") : -1]), "swap.mlir"
    if case.startswith("divmod_hypot<"):
        return rv.reversible(_divmod_hypot).mlir(*CASES[case][1]), "divmod_hypot.mlir"
    path = EXAMPLES / case
    return path.read_text(), str(path)


def test_every_example_has_a_case():
    examples = sorted(p.name for p in EXAMPLES.glob("*.mlir"))
    assert [c for c in sorted(CASES) if c.endswith(".mlir")] == examples


# ---------------------------------------------------------------------------
# Bits: the one form in which all three engines report values
# ---------------------------------------------------------------------------


def _bits(value: Any) -> Iterator[int]:
    if isinstance(value, np.ndarray):
        for element in value.ravel():
            yield from _bits(element)
    elif isinstance(value, complex | np.complexfloating):
        yield from _bits(float(value.real))
        yield from _bits(float(value.imag))
    elif isinstance(value, float | np.floating):
        yield struct.unpack("<q", struct.pack("<d", float(value)))[0]
    else:
        yield int(value)


def expected_bits(backend: Any, name: str, args: list[Any]) -> list[int]:
    """What the probe stores, from a Python backend: the forward call's
    results (arrays as updated), its error slot, then the inverse's."""
    forward = backend.call(name, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    backward = backend.uncall(name, *[a.copy() if isinstance(a, np.ndarray) else a for a in forward])
    bits: list[int] = []
    for results in (forward, backward):
        for value in results:
            bits += _bits(value)
        bits.append(0)  # the error slot: no check failed
    return bits


# ---------------------------------------------------------------------------
# The probe, in std-level MLIR text
# ---------------------------------------------------------------------------


def _float(value: float) -> str:
    """A float literal both parsers read back exactly (MLIR's needs a dot)."""
    return f"{float(value):.17e}"


class Probe:
    """``@probe(%out: memref<?xi64>)``: see the module docstring."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.stored = 0

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def emit(self, text: str) -> str:
        name = self.fresh()
        self.lines.append(f"    {name} = {text}")
        return name

    def index(self, value: int) -> str:
        return self.emit(f"arith.constant {value} : index")

    def constant(self, value: Any, type: Attribute) -> str:
        if isinstance(type, ComplexType):
            return self.emit(f"complex.constant [{_float(value.real)}, {_float(value.imag)}] : {type}")
        if isinstance(type, Float64Type):
            return self.emit(f"arith.constant {_float(value)} : {type}")
        return self.emit(f"arith.constant {int(value)} : {type}")

    def array(self, value: np.ndarray, type: MemRefType) -> str:
        sizes = [self.index(n) for n in value.shape]
        array = self.emit(f"memref.alloc({', '.join(sizes)}) : {type}")
        for position, element in np.ndenumerate(value):
            indices = ", ".join(self.index(i) for i in position)
            self.lines.append(
                f"    memref.store {self.constant(element, type.element_type)}, {array}[{indices}] : {type}"
            )
        return array

    def store(self, value: str, type: Attribute) -> None:
        """Store the bits of a scalar at the next position of ``%out``."""
        if isinstance(type, ComplexType):
            for part in ("re", "im"):
                self.store(self.emit(f"complex.{part} {value} : {type}"), type.element_type)
            return
        if isinstance(type, Float64Type):
            value = self.emit(f"arith.bitcast {value} : f64 to i64")
        elif isinstance(type, IndexType):
            value = self.emit(f"arith.index_cast {value} : index to i64")
        elif isinstance(type, IntegerType) and type.width.data < 64:
            extend = "extui" if type.width.data == 1 else "extsi"
            value = self.emit(f"arith.{extend} {value} : {type} to i64")
        self.lines.append(f"    memref.store {value}, %out[{self.index(self.stored)}] : memref<?xi64>")
        self.stored += 1

    def store_array(self, array: str, shape: tuple[int, ...], type: MemRefType) -> None:
        for position in np.ndindex(*shape):
            indices = ", ".join(self.index(i) for i in position)
            self.store(self.emit(f"memref.load {array}[{indices}] : {type}"), type.element_type)

    def call(self, function: func.FuncOp, args: list[str], shapes: list[tuple[int, ...]]) -> list[str]:
        """Call ``function`` on ``args`` (the error slot last) and store
        what it returns: its results in the scalars' places, the arrays'
        elements, the error code.  Returns the arguments of the inverse."""
        types = list(function.function_type.inputs.data)
        outputs = list(function.function_type.outputs.data)
        results = [self.fresh() for _ in outputs]
        signature = f"({', '.join(map(str, types))}) -> ({', '.join(map(str, outputs))})"
        call = f"func.call @{function.sym_name.data}({', '.join(args)}) : {signature}"
        self.lines.append(f"    {', '.join(results)} = {call}" if results else f"    {call}")
        following, scalars = [], iter(zip(results, outputs))
        for arg, type, shape in zip(args[:-1], types[:-1], shapes, strict=True):
            if isinstance(type, MemRefType):
                self.store_array(arg, shape, type)
                following.append(arg)
            else:
                result, result_type = next(scalars)
                self.store(result, result_type)
                following.append(result)
        error = self.emit(f"memref.load {args[-1]}[{self.index(0)}] : {ERROR_SLOT}")
        self.store(error, IntegerType(64))
        return following + [args[-1]]

    def text(self) -> str:
        body = "\n".join(self.lines)
        return f"  func.func @probe(%out: memref<?xi64>) {{\n{body}\n    func.return\n  }}\n"


def probe_module(std: ModuleOp, name: str, args: list[Any]) -> tuple[str, int]:
    """The std module's text with the probe added, and how many values the
    probe stores."""
    functions = {f.sym_name.data: f for f in std.ops if isinstance(f, func.FuncOp)}
    forward, backward = functions[name], functions[inverse_name(name)]
    probe = Probe()
    values = []
    for value, type in zip(args, forward.function_type.inputs.data):
        values.append(probe.array(value, type) if isinstance(value, np.ndarray) else probe.constant(value, type))
    error = probe.emit(f"memref.alloc() : {ERROR_SLOT}")
    zero = probe.emit("arith.constant 0 : i64")
    for word in range(ERROR_SLOT.get_shape()[0]):
        probe.lines.append(f"    memref.store {zero}, {error}[{probe.index(word)}] : {ERROR_SLOT}")
    shapes = [np.shape(a) for a in args]
    following = probe.call(forward, values + [error], shapes)
    probe.call(backward, following, shapes)
    text = str(std)
    assert text.rstrip().endswith("}")
    return text.rstrip()[:-1] + probe.text() + "}\n", probe.stored


MAIN = """
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func @main() {{
    %n = arith.constant {count} : index
    %out = memref.alloc(%n) : memref<?xi64>
    func.call @probe(%out) : (memref<?xi64>) -> ()
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {{
      %v = memref.load %out[%i] : memref<?xi64>
      func.call @printI64(%v) : (i64) -> ()
      func.call @printNewline() : () -> ()
    }}
    func.return
  }}
"""


def with_main(text: str, count: int) -> str:
    return text.rstrip()[:-1] + MAIN.format(count=count) + "}\n"


def std_of(case: str) -> ModuleOp:
    module = parse_module(*source(case))
    ctx = make_context()
    RevInvertPass().apply(ctx, module)
    RevLowerToStdPass().apply(ctx, module)
    module.attributes.clear()
    return module


def mlir_opt(text: str, *options: str) -> str:
    result = subprocess.run([tool("mlir-opt"), *options], input=text, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def run_upstream(text: str) -> list[int]:
    """Lower with upstream's pipeline and run under ``mlir-runner``."""
    lowered = mlir_opt(text, *UPSTREAM_LOWERING)
    result = subprocess.run(
        [tool("mlir-runner"), "-e", "main", "--entry-point-result=void", f"-shared-libs={c_runner_utils()}"],
        input=lowered,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [int(line) for line in result.stdout.split()]


def run_revmlir(text: str, count: int) -> list[int]:
    """Compile a std module with revmlir's ``convert-std-to-llvm`` and run
    its probe through ``_mlir_ciface_probe``."""
    machine_code = compile_std(text)  # alive while the probe runs
    probe = entry(machine_code, "probe", None, ctypes.POINTER(MemRef1D))
    out = np.zeros(count + 1, dtype=np.int64)
    out[0] = -1  # before the offset: must stay untouched
    address = out.ctypes.data
    probe(ctypes.byref(MemRef1D(address, address, 1, (count,), (1,))))
    assert out[0] == -1
    return [int(v) for v in out[1:]]


def assert_same_bits(expected: list[int], actual: list[int], exact: bool) -> None:
    assert len(actual) == len(expected)
    for position, (a, b) in enumerate(zip(expected, actual)):
        if a == b or exact:
            assert a == b, position
            continue
        x, y = (struct.unpack("<d", struct.pack("<q", v))[0] for v in (a, b))
        assert abs(x - y) <= 1e-14 * max(1.0, abs(x)), (position, x, y)


@pytest.fixture(scope="module", params=sorted(CASES))
def probed(request: pytest.FixtureRequest) -> tuple[str, str, int, list[int]]:
    case = request.param
    name, args = CASES[case]
    text, count = probe_module(std_of(case), name, args)
    native = expected_bits(NativeModule.compile(parse_module(*source(case))), name, args)
    assert len(native) == count
    return case, text, count, native


def test_upstream_lowering_runs_like_native_code(probed):
    example, text, count, native = probed
    upstream = run_upstream(with_main(text, count))
    assert_same_bits(native, upstream, exact="complex" not in example)


def test_native_code_agrees_with_the_interpreter(probed):
    case, _, _, native = probed
    name, args = CASES[case]
    interpreted = expected_bits(RevInterpreter(parse_module(*source(case))), name, args)
    assert_same_bits(interpreted, native, exact=False)


def test_upstream_transformed_ir_compiles_with_revmlir(probed):
    example, text, count, native = probed
    transformed = mlir_opt(text, *UPSTREAM_TRANSFORMS)
    assert "#loc" in transformed  # aliases, defined after the module
    if example != "multiplier.mlir" and not example.startswith("divmod_hypot<"):  # loops or branches
        assert "cf.cond_br" in transformed
    if example.startswith("swap<"):  # upstream inlined the stack runtime
        assert "llvm.call @realloc" in transformed
    assert_same_bits(native, run_revmlir(transformed, count), exact=True)


def test_revmlir_runs_the_probe_it_was_given(probed):
    """The same probe, untransformed, natively: the ciface path itself."""
    _, text, count, native = probed
    assert run_revmlir(text, count) == native


TROPICAL = """
rev.func @f(%y: !rev.tropical<f64>, %x: !rev.tropical<f64>) {
  %y1 = rev.mul %y, %x : !rev.tropical<f64>
  rev.return %y1, %x : !rev.tropical<f64>, !rev.tropical<f64>
}
"""


def test_upstream_transformations_keep_what_revmlir_records_for_its_later_passes():
    """``rev-lower-to-std`` records on the module that it ran
    (``rev.lowered``) and on a function which arguments its C entry must
    find finite (``rev.finite_arguments``: tropical numbers); upstream
    keeps both, attributes of a dialect it does not know, through its
    transformations, so the std IR it gives back is lowered once and
    checked at its entry as before."""
    ctx = make_context()
    module = parse_module(TROPICAL, "tropical.mlir", ctx)
    RevLowerToStdPass().apply(ctx, module)
    transformed = mlir_opt(str(module), *UPSTREAM_TRANSFORMS)
    assert "rev.lowered" in transformed
    assert "rev.finite_arguments = array<i64: 0, 1>" in transformed
