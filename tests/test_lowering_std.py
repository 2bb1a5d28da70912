"""rev-lower-to-std preserves behaviour: every example, lowered to
func/scf/arith/memref and run by the same interpreter, gives exactly the results
of the rev program, forward and backward; checks still fire."""

from pathlib import Path

import numpy as np
import pytest

from revmlir import InvertibilityError
from revmlir.errors import LocatedError
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass

EXAMPLES = Path(__file__).parent.parent / "examples"
rng = np.random.default_rng(7)


def unitary_args():
    m, n = 4, 2
    return [rng.normal(size=(m, n)), rng.normal(size=n * m * (m - 1) // 2)]


CASES = {
    "multiplier.mlir": ("multiplier", lambda: [2, 3, 5]),
    "fibonacci.mlir": ("rrfib", lambda: [0, 12]),
    "complex_log.mlir": ("complex_log", lambda: [0.5j, 3 - 4j]),
    "complex_log_routine.mlir": ("complex_log", lambda: [0.5j, -1 + 2j]),
    "bennett.mlir": ("bennett", lambda: [1.0, 0.0, 3]),
    "power.mlir": ("mypower", lambda: [0.25, 1.5, 7]),
    "affine.mlir": (
        "i_affine",
        lambda: [rng.normal(size=3), rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=4)],
    ),
    "unitary.mlir": ("i_ummm", unitary_args),
}


def lowered(path: Path):
    ctx = make_context()
    module = parse_module(path.read_text(), str(path), ctx)
    RevInvertPass().apply(ctx, module)
    RevLowerToStdPass().apply(ctx, module)
    module.verify()
    return module


def copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("example", CASES)
def test_lowered_example_matches_the_rev_program(example):
    path = EXAMPLES / example
    name, make_args = CASES[example]
    args = make_args()
    reference = RevInterpreter(parse_module(path.read_text(), str(path)))
    native = RevInterpreter(lowered(path))

    expected_args = copy(args)
    expected = reference.call(name, *expected_args)
    actual_args = copy(args)
    scalars = native.call_lowered(name, *actual_args)
    for a, b in zip(expected_args, actual_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    assert list(scalars) == [v for v in expected if not isinstance(v, np.ndarray)]

    # and backwards, through the lowered inverse function
    inputs = [v for v in expected]
    restored_args = [v.copy() if isinstance(v, np.ndarray) else v for v in inputs]
    native.call_lowered(name + ".inv", *restored_args)
    reference_args = [v.copy() if isinstance(v, np.ndarray) else v for v in inputs]
    reference.uncall(name, *reference_args)
    for a, b in zip(reference_args, restored_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


DIRTY = """
rev.func @f(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %n = anc.alloc %zero : f64
  %n1 = rev.add %n, %x : f64
  anc.free %n1, %zero : f64
  rev.return %x : f64
}
"""


OUTSIDE = """
rev.func @g(%m: memref<4xf64>, %i: index, %x: f64) {
  %e = rev.take %m[%i] : memref<4xf64>
  %e1 = rev.add %e, %x : f64
  rev.put %e1, %m[%i] : memref<4xf64>
  rev.return %i, %x : index, f64
}
"""


def test_lowered_checks_report_through_the_error_slot():
    ctx = make_context()
    module = parse_module(DIRTY, "dirty.mlir", ctx)
    RevLowerToStdPass().apply(ctx, module)
    program = RevInterpreter(module)
    assert program.call_lowered("f", 1e-12) == (1e-12,)
    with pytest.raises(InvertibilityError) as info:
        program.call_lowered("f", 3.0)
    assert info.value.op_name == "anc.free"
    assert info.value.location == "dirty.mlir:6:3"


@pytest.mark.parametrize(
    ("source", "name", "args"),
    [(DIRTY, "f", (3.0,)), (OUTSIDE, "g", (np.zeros(4), 7, 1.0)), (OUTSIDE, "g", (np.zeros(4), -2, 1.0))],
)
def test_lowered_std_ir_reports_the_rev_programs_error(source, name, args):
    """The interpreter running lowered std IR (the check's words stored by
    the module's ``revmlir.report``, decoded from the error slot) raises the
    error the interpreter raises on the rev program: message, payload
    values, op and location."""
    ctx = make_context()
    with pytest.raises(LocatedError) as expected:
        RevInterpreter(parse_module(source, "checks.mlir", ctx)).call(name, *copy(args))
    module = parse_module(source, "checks.mlir", ctx)
    RevLowerToStdPass().apply(ctx, module)
    with pytest.raises(LocatedError) as found:
        RevInterpreter(module).call_lowered(name, *copy(args))
    assert type(found.value) is type(expected.value)
    assert str(found.value) == str(expected.value)
    assert (found.value.op_name, found.value.location) == (expected.value.op_name, expected.value.location)


def test_no_stack_op_or_type_survives_lowering():
    from xdsl.dialects import func, llvm

    from revmlir.dialects.anc import StackType

    ctx = make_context()
    module = parse_module(
        "rev.func @f(%x: f64, %r: !anc.stack<i64>) {\n"
        "  %s = anc.stack_alloc : !anc.stack<f64>\n"
        "  anc.push %s, %x : !anc.stack<f64>\n"
        "  %x1 = anc.pop %s : !anc.stack<f64>\n"
        "  anc.stack_free %s : !anc.stack<f64>\n"
        "  rev.return %x1 : f64\n}\n",
        "stack.mlir",
        ctx,
    )
    RevLowerToStdPass().apply(ctx, module)
    ops = list(module.walk())
    assert not [op.name for op in ops if op.name.startswith("anc.")]
    types = [v.type for op in ops for v in (*op.operands, *op.results)]
    types += [a.type for op in ops for r in op.regions for b in r.blocks for a in b.args]
    assert not [t for t in types if isinstance(t, StackType)]
    called = {op.callee.string_value() for op in ops if isinstance(op, func.CallOp)}
    # the runtime is defined in the module (private), over the C library's
    # realloc, free and abort only: std IR is complete for any pipeline
    defined = {
        op.sym_name.data
        for op in module.ops
        if isinstance(op, func.FuncOp) and not op.is_declaration and op.sym_visibility is not None
    }
    assert not [op for op in ops if isinstance(op, func.FuncOp) and op.is_declaration]
    assert (
        called
        == defined
        == {"revmlir.stack.push.f64", "revmlir.stack.pop.f64", "revmlir.stack.free", "revmlir.fail", "revmlir.report"}
    )
    external = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)}
    assert external == {"realloc", "free", "abort"}
