"""Operational semantics of the ``rev`` dialect (seed 000, appendix G.2).

Backward execution is never interpreted separately: ``rev.uncall``,
``rev.inv`` and the uncompute half of ``rev.routine`` run code derived by the
same inverter that ``rev-invert`` uses, so the interpreter checks the
transformation as much as the program.
"""

from __future__ import annotations

import math
from typing import Any

from xdsl.interpreter import (
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Region

from revmlir.dialects import rev
from revmlir.errors import InversionError, LocatedError, describe_op
from revmlir.interpreter.loops import positive_step
from revmlir.interpreter.memref import checked_index, element_key
from revmlir.interpreter.recursion import too_deep
from revmlir.interpreter.state import Frame, RuntimeInterpreter
from revmlir.naming import DERIVED_INVERSE_ATTR
from revmlir.runtime.values import normalize
from revmlir.runtime_checks import borrowed_element, format_message, shown_indices
from revmlir.safety import MAX_CALL_DEPTH


def _result(op: rev.InstructionOp, *values: Any) -> PythonValues:
    return tuple(normalize(r.type, v) for r, v in zip(op.results, values, strict=True))


def _run(interpreter: RuntimeInterpreter, region: Region, args: PythonValues, name: str) -> PythonValues:
    return interpreter.run_ssacfg_region(region, tuple(args), name)


def _condition(interpreter: RuntimeInterpreter, region: Region, state: PythonValues) -> bool:
    (value,) = _run(interpreter, region, state, "condition")
    return bool(value)


def invoke(
    interpreter: RuntimeInterpreter,
    func: rev.FuncOp,
    args: PythonValues,
    name: str,
    backward: bool,
) -> PythonValues:
    """Run ``func`` (already inverted when ``backward``) as function ``name``."""
    runtime = interpreter.runtime
    counters = runtime.counters[name]
    if backward:
        counters.uncalls += 1
    else:
        counters.calls += 1
    runtime.frames.append(Frame(name, backward, not backward and DERIVED_INVERSE_ATTR in func.attributes))
    try:
        return _run(interpreter, func.body, args, name)
    except (LocatedError, RecursionError):
        # a recursion too deep is reported at the call (``_nested``)
        raise
    except Exception as error:
        # located here, in the innermost function, where native code's
        # check is: its caller only passes it on
        raise runtime.failed_execution(error) from error
    finally:
        runtime.frames.pop()


@register_impls
class RevFunctions(InterpreterFunctions):
    # -- instructions ---------------------------------------------------------

    @impl(rev.AddOp)
    def run_add(self, interpreter: RuntimeInterpreter, op: rev.AddOp, args: PythonValues):
        y, v = args
        return _result(op, y + v)

    @impl(rev.SubOp)
    def run_sub(self, interpreter: RuntimeInterpreter, op: rev.SubOp, args: PythonValues):
        y, v = args
        return _result(op, y - v)

    @impl(rev.XorOp)
    def run_xor(self, interpreter: RuntimeInterpreter, op: rev.XorOp, args: PythonValues):
        y, v = args
        return _result(op, int(y) ^ int(v))

    @impl(rev.MulOp)
    def run_mul(self, interpreter: RuntimeInterpreter, op: rev.MulOp, args: PythonValues):
        log_y, log_v = args
        return _result(op, log_y + log_v)

    @impl(rev.DivOp)
    def run_div(self, interpreter: RuntimeInterpreter, op: rev.DivOp, args: PythonValues):
        log_y, log_v = args
        return _result(op, log_y - log_v)

    @impl(rev.NegOp)
    def run_neg(self, interpreter: RuntimeInterpreter, op: rev.NegOp, args: PythonValues):
        return _result(op, -args[0])

    @impl(rev.IncOp)
    def run_inc(self, interpreter: RuntimeInterpreter, op: rev.IncOp, args: PythonValues):
        return _result(op, args[0] + 1)

    @impl(rev.DecOp)
    def run_dec(self, interpreter: RuntimeInterpreter, op: rev.DecOp, args: PythonValues):
        return _result(op, args[0] - 1)

    @impl(rev.SwapOp)
    def run_swap(self, interpreter: RuntimeInterpreter, op: rev.SwapOp, args: PythonValues):
        a, b = args
        return _result(op, b, a)

    @impl(rev.RotOp)
    def run_rot(self, interpreter: RuntimeInterpreter, op: rev.RotOp, args: PythonValues):
        return _result(op, *_rotate(*args))

    @impl(rev.IRotOp)
    def run_irot(self, interpreter: RuntimeInterpreter, op: rev.IRotOp, args: PythonValues):
        a, b, theta = args
        return _result(op, *_rotate(a, b, -theta))

    # -- data views -----------------------------------------------------------

    @impl(rev.TakeOp)
    def run_take(self, interpreter: RuntimeInterpreter, op: rev.TakeOp, args: PythonValues):
        array, *indices = args
        index = checked_index(array, tuple(indices))
        runtime = interpreter.runtime
        key = element_key(array, index)
        if (other := runtime.borrowed.get(key)) is not None and runtime.checking(op):
            message = borrowed_element(len(index), False, describe_op(other))
            raise runtime.fail(op, format_message(message, shown_indices([int(i) for i in index])))
        runtime.borrowed[key] = op
        return (normalize(op.result.type, array[index].item()),)

    @impl(rev.PutOp)
    def run_put(self, interpreter: RuntimeInterpreter, op: rev.PutOp, args: PythonValues):
        value, array, *indices = args
        index = checked_index(array, tuple(indices))
        interpreter.runtime.borrowed.pop(element_key(array, index), None)
        array[index] = value
        return ()

    @impl(rev.UnpackOp)
    def run_unpack(self, interpreter: RuntimeInterpreter, op: rev.UnpackOp, args: PythonValues):
        (z,) = args
        return (z.real, z.imag)

    @impl(rev.PackOp)
    def run_pack(self, interpreter: RuntimeInterpreter, op: rev.PackOp, args: PythonValues):
        re, im = args
        return (normalize(op.result.type, complex(re, im)),)

    # -- control flow ---------------------------------------------------------

    @impl(rev.IfOp)
    def run_if(self, interpreter: RuntimeInterpreter, op: rev.IfOp, args: PythonValues):
        pre = _condition(interpreter, op.pre, args)
        branch = op.then_region if pre else op.else_region
        results = _run(interpreter, branch, args, "then" if pre else "else")
        if interpreter.runtime.checking(op):
            post_region = op.post if op.has_post() else op.pre
            post = _condition(interpreter, post_region, results)
            if post != pre:
                raise interpreter.runtime.fail(
                    op,
                    f"postcondition is {post} after the {'then' if pre else 'else'} "
                    f"branch, but the precondition was {pre}",
                )
        return results

    @impl(rev.WhileOp)
    def run_while(self, interpreter: RuntimeInterpreter, op: rev.WhileOp, args: PythonValues):
        runtime = interpreter.runtime
        checking = runtime.checking(op)
        state = args
        if checking and _condition(interpreter, op.post, state):
            raise runtime.fail(op, "postcondition must be false when the loop starts")
        iteration = 0
        while _condition(interpreter, op.pre, state):
            state = _run(interpreter, op.body, state, "while")
            iteration += 1
            if checking and not _condition(interpreter, op.post, state):
                raise runtime.fail(op, f"postcondition must be true after iteration {iteration}")
        return state

    @impl(rev.ForOp)
    def run_for(self, interpreter: RuntimeInterpreter, op: rev.ForOp, args: PythonValues):
        lb, ub, step, *state = args
        indices = range(lb, ub, positive_step(step))
        # A parallel loop's iterations are independent: ascending is as valid
        # as any order, and it is the one native code uses.
        backwards = op.is_reverse and not op.is_parallel
        for index in reversed(indices) if backwards else indices:
            state = _run(interpreter, op.body, (index, *state), "for")
        return tuple(state)

    @impl(rev.RoutineOp)
    def run_routine(self, interpreter: RuntimeInterpreter, op: rev.RoutineOp, args: PythonValues):
        computed = _run(interpreter, op.compute, args, "compute")
        used = _run(interpreter, op.body, computed, "do")
        try:
            uncompute = interpreter.runtime.inverse_region(op)
        except InversionError as error:
            # the op last run is the body's terminator: the failure is the routine's
            raise interpreter.runtime.failed_execution(error, op) from None
        return _run(interpreter, uncompute, used, "uncompute")

    @impl(rev.InvOp)
    def run_inv(self, interpreter: RuntimeInterpreter, op: rev.InvOp, args: PythonValues):
        inverse = interpreter.runtime.inverse_region(op)
        return _run(interpreter, inverse, args, "inv")

    @impl(rev.SafeOp)
    def run_safe(self, interpreter: RuntimeInterpreter, op: rev.SafeOp, args: PythonValues):
        if op.runs_forward:
            _run(interpreter, op.body, (), "safe")
        return ()

    # -- calls ----------------------------------------------------------------

    @impl(rev.CallOp)
    def run_call(self, interpreter: RuntimeInterpreter, op: rev.CallOp, args: PythonValues):
        callee = _callee(interpreter, op)
        return _nested(interpreter, op, callee, args, False)

    @impl(rev.UncallOp)
    def run_uncall(self, interpreter: RuntimeInterpreter, op: rev.UncallOp, args: PythonValues):
        """``f`` run backwards, or where the module has ``@f.inv``, that
        function run forwards, as native code runs it (the lowering calls
        the module's ``@f.inv`` and derives one only where it has none)."""
        callee = _callee(interpreter, op)
        inverse = interpreter.runtime.module_inverse(interpreter.module, callee)
        if inverse is not None:
            return _nested(interpreter, op, inverse, args, False)
        return _nested(interpreter, op, callee, args, True)

    # -- terminators ----------------------------------------------------------

    @impl_terminator(rev.ReturnOp)
    def run_return(
        self, interpreter: RuntimeInterpreter, op: rev.ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(rev.YieldOp)
    def run_yield(
        self, interpreter: RuntimeInterpreter, op: rev.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(rev.CondOp)
    def run_cond(
        self, interpreter: RuntimeInterpreter, op: rev.CondOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


def _rotate(a: float, b: float, theta: float) -> tuple[float, float]:
    c, s = math.cos(theta), math.sin(theta)
    return a * c - b * s, a * s + b * c


def _nested(
    interpreter: RuntimeInterpreter,
    op: rev.CallOp | rev.UncallOp,
    callee: rev.FuncOp,
    args: PythonValues,
    backward: bool,
) -> PythonValues:
    """A call or an uncall.  One that may recurse (``Runtime.may_recurse``)
    with ``MAX_CALL_DEPTH`` such calls already running, or one that Python's
    frames cannot hold, stops with the error native code raises at the same
    call (building the error may itself hit Python's limit: an outer call
    reports it then)."""
    body = interpreter.runtime.inverse_function(callee) if backward else callee
    runtime = interpreter.runtime
    frames = runtime.frames
    recursive = bool(frames) and runtime.may_recurse(interpreter.module, frames[-1].name, callee.sym_name.data)
    if recursive:
        if runtime.recursive_calls >= MAX_CALL_DEPTH:
            raise too_deep(op, str(frames[-1]))
        runtime.recursive_calls += 1
    try:
        return invoke(interpreter, body, args, callee.sym_name.data, backward)
    except RecursionError:
        frames = interpreter.runtime.frames
        raise too_deep(op, str(frames[-1]) if frames else None) from None
    finally:
        if recursive:
            runtime.recursive_calls -= 1


def _callee(interpreter: RuntimeInterpreter, op: rev.CallOp | rev.UncallOp) -> rev.FuncOp:
    callee = interpreter.get_op_for_symbol(op.callee.string_value())
    assert isinstance(callee, rev.FuncOp)
    return callee
