"""Which derived functions are invertible (docs/design.md, decision 28).

``@f.adj`` ends each ancilla's gradient where the ancilla is born: that
gradient is the derivative with respect to the ancilla's known initial
value, generally not zero, and the adjoint drops it (an unchecked
``anc.free`` marked ``rev.forgetful``).  Such an adjoint, and every function
calling it, has no inverse: inverting it reports the op that forgets, at its
source location, instead of re-allocating a zero where 6.0 was dropped.
Adjoints that forget nothing stay invertible."""

import pytest
from xdsl.dialects.builtin import ModuleOp

from revmlir.ad.adjoint import generate_adjoints
from revmlir.dialects import anc, rev
from revmlir.errors import AdjointError, ExecutionError, InversionError, format_location
from revmlir.interpreter import RevInterpreter
from revmlir.inversion import forgetful_functions, invert_function
from revmlir.naming import FORGETFUL_ATTR
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime.native import NativeModule

ANCILLA = """rev.func @f(%y: f64, %x: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %x : f64
  %y1 = rev.add %y, %t1 : f64
  %t2 = rev.sub %t1, %x : f64
  anc.free %t2, %zero : f64
  rev.return %y1, %x : f64, f64
}

rev.func @caller(%y: f64, %x: f64, %g_y: f64, %g_x: f64) {
  %a, %b, %c, %d = rev.call @f.adj(%y, %x, %g_y, %g_x) : (f64, f64, f64, f64) -> (f64, f64, f64, f64)
  rev.return %a, %b, %c, %d : f64, f64, f64, f64
}
"""

SQUARE = """rev.func @f(%y: f64, %x: f64) {
  %s = arith.mulf %x, %x : f64
  %y1 = rev.add %y, %s : f64
  rev.return %y1, %x : f64, f64
}
"""


def adjoint_module(source: str) -> ModuleOp:
    """``source``'s ``@f`` and its ``@f.adj`` (functions after ``@f`` come
    after the adjoint, so that a caller of ``@f.adj`` verifies)."""
    primal, _, rest = source.partition("\n\nrev.func @caller")
    module = parse_module(primal, "adjoint.mlir")
    generate_adjoints(module, ["f"])
    if rest:
        caller = parse_module("rev.func @caller" + rest, "caller.mlir", verify=False)
        for op in list(caller.ops):
            op.detach()
            module.body.block.add_op(op)
        module.verify()
    return module


def test_the_adjoint_marks_the_gradient_it_forgets():
    module = adjoint_module(ANCILLA)
    frees = [op for op in module.walk() if isinstance(op, anc.FreeOp) and FORGETFUL_ATTR in op.attributes]
    assert len(frees) == 1
    assert format_location(frees[0].location).startswith("adjoint.mlir:3:")  # at the ancilla's birth
    assert forgetful_functions(module) == {"f.adj", "caller"}


def test_inverting_a_forgetful_adjoint_reports_the_op_that_forgets():
    module = adjoint_module(ANCILLA)
    adjoint = next(f for f in module.ops if isinstance(f, rev.FuncOp) and f.sym_name.data == "f.adj")
    with pytest.raises(InversionError, match=r"'anc.free' at adjoint.mlir:3:\d+ forgets the value it frees"):
        invert_function(adjoint)


def test_uncalling_a_forgetful_adjoint_is_an_error_on_both_engines():
    """The adjoint drops ḡt = ḡy = 6.0; its inverse would re-create ḡt as 0
    and return a wrong g_x.  Both engines refuse instead, alike: the
    inverter's error for the adjoint; for its caller, whose inverse
    uncalls it, that error at the uncall."""
    module = adjoint_module(ANCILLA)
    interpreter = RevInterpreter(module)
    after = interpreter.call("f.adj", 3.0, 2.0, 6.0, 0.0)
    assert after == (1.0, 2.0, 6.0, 6.0)
    native = NativeModule.compile(module)
    assert native.call("f.adj", 3.0, 2.0, 6.0, 0.0) == after
    errors = []
    for engine in (interpreter, native):
        with pytest.raises(InversionError, match=r"^'anc.free' at adjoint.mlir:3:\d+ forgets the value it frees") as no:
            engine.uncall("f.adj", *after)
        with pytest.raises(ExecutionError) as at_uncall:
            engine.uncall("caller", *after)
        errors.append((str(no.value), str(at_uncall.value), at_uncall.value.function))
    assert errors[0] == errors[1]
    assert errors[0][1] == f"caller.mlir:2:3: 'rev.uncall' in @~caller: {errors[0][0]}"


def test_reverse_mode_over_a_forgetful_adjoint_is_refused_at_the_call_that_needs_its_inverse():
    """The adjoint of ``@caller`` would invert ``@f.adj``: the error names
    the call, the callee and the free that forgets (BA's Jacobian blocks,
    differentiated again, met this at a free deep in the callee)."""
    module = adjoint_module(ANCILLA)
    with pytest.raises(
        AdjointError,
        match=r"'rev.call' at caller.mlir:2:\d+: its adjoint needs the inverse of @f.adj, which has none: "
        r"'anc.free' at adjoint.mlir:3:\d+ forgets the value it frees \(reverse mode over",
    ):
        generate_adjoints(module, ["caller"])


def test_rev_invert_leaves_forgetful_functions_out_unless_named():
    module = adjoint_module(ANCILLA)
    RevInvertPass().apply(make_context(), module)
    names = {f.sym_name.data for f in module.ops if isinstance(f, rev.FuncOp)}
    assert names == {"f", "f.inv", "f.adj", "caller"}
    with pytest.raises(InversionError, match="forgets the value it frees"):
        RevInvertPass(functions=("f.adj",)).apply(make_context(), module)


def test_rev_invert_where_possible_leaves_out_only_what_the_inverter_cannot_invert():
    """As native code compiles: ``@caller`` calls the forgetful ``@f.adj``,
    and its inverse uncalls it."""
    module = adjoint_module(ANCILLA)
    RevInvertPass(where_possible=True).apply(make_context(), module)
    names = {f.sym_name.data for f in module.ops if isinstance(f, rev.FuncOp)}
    assert names == {"f", "f.inv", "f.adj", "caller", "caller.inv"}


def test_a_forgetful_free_is_not_cancelled_against_an_allocation():
    module = adjoint_module(ANCILLA)
    free = next(op for op in module.walk() if isinstance(op, anc.FreeOp) and FORGETFUL_ATTR in op.attributes)
    assert not free.is_inverse_of(anc.AllocOp(free.value))
    del free.attributes[FORGETFUL_ATTR]
    assert free.is_inverse_of(anc.AllocOp(free.value))


@pytest.mark.parametrize("engine", [RevInterpreter, NativeModule.compile])
def test_an_adjoint_that_forgets_nothing_is_inverted(engine):
    module = adjoint_module(SQUARE)
    assert forgetful_functions(module) == set()
    run = engine(module)
    after = run.call("f.adj", 10.0, 3.0, 2.0, 0.5)
    assert after == (1.0, 3.0, 2.0, 12.5)
    assert run.uncall("f.adj", *after) == (10.0, 3.0, 2.0, 0.5)
