"""``@rv.ordinary``: differentiating Python the user did not write reversibly.

The decorator reads the function's syntax tree (it never traces) and
compiles it, once per argument-type signature, to ordinary IR (``func``,
``scf``, ``arith``, ``math``, ``memref``), which the ``reversibilize`` pass
turns into Bennett's compute–copy–uncompute (docs/design.md,
"Reversibilize"): ``@f(args…, r…, m_out…)`` adds the returned values into
result slots ``r`` and the final contents of each array ``f`` writes into an
output array ``m_out``, then runs backwards, so it leaves its inputs as it
found them and no tape survives.  That reversible function is an ordinary
``Specialization``, so it runs natively, and ``rv.gradient``/``rv.vjp``
differentiate it through the ``ReversibleCall`` this module builds.
Calls of ``f`` itself need no reversibility: they run the ordinary IR,
compiled as it is (``OrdinarySpecialization.plain``).
"""

from __future__ import annotations

import ast
import functools
import typing
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from io import StringIO
from typing import Any, NoReturn

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute
from xdsl.printer import Printer
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.adjoint import GRADIENT_SUFFIX
from revmlir.ad.checkpointed import CHECKPOINT_ATTR, generate_checkpointed
from revmlir.dialects import rev
from revmlir.dialects.ad import ScheduleAttr
from revmlir.frontend.base.bindings import compiling, namespace_of
from revmlir.frontend.base.by_name import ByName
from revmlir.frontend.base.checkpoint_policy import CheckpointPolicy
from revmlir.frontend.base.derived import ReversibleCall
from revmlir.frontend.base.errors import ReversibleSyntaxError, at_op
from revmlir.frontend.base.source import read_source, resolved_annotations
from revmlir.frontend.base.specialization import (
    BACKENDS,
    Specialization,
    bound_by_position,
    matched_specialization,
    named_arguments,
    verify_derived,
)
from revmlir.frontend.base.structs import Layout, TakesStructs, is_struct, struct_argument
from revmlir.frontend.base.types import RangeChecks, describe_type, type_of_annotation, type_of_value, unsigned_hint
from revmlir.frontend.ordinary_code.compiler import ModuleCompiler, check_structure, is_ordinary
from revmlir.frontend.ordinary_code.floated import FloatUse, floated_parameters
from revmlir.interpreter.recursion import room_for_calls
from revmlir.reversibilize import ReversibilizeError, reversibilize
from revmlir.reversibilize.flatten import flatten_marked_loops
from revmlir.reversibilize.resumable import make_resumable
from revmlir.runtime.arguments import ArgumentProblem
from revmlir.runtime.backend import Caller
from revmlir.runtime.native import NativeModule

FORMS = ("both", "ordinary", "reversible")
PLAIN_SUFFIX = ".plain"
STORE_ALL_HINT = "leave out checkpoint= to differentiate it store-all (on a tape), as any @rv.ordinary function can be"
"""What to do where ``checkpoint=`` cannot make ``f`` resumable: ``f``
compiled, so its Bennett form, which store-all derivatives run, exists."""


class OrdinaryFunction(TakesStructs, ByName):
    """A function written in ordinary Python; see docs/python.md,
    "Ordinary Python".  A struct argument is taken as its fields, as by a
    reversible function (``revmlir.frontend.base.structs``)."""

    __revmlir_ordinary__ = True
    __name__: str  # the decorated function's, set by functools.update_wrapper

    def __init__(self, pyfunc: Callable[..., Any], *, backend: str = "auto"):
        functools.update_wrapper(self, pyfunc)
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}")
        self.pyfunc = pyfunc
        self.backend = backend
        self.source = read_source(pyfunc, "@rv.ordinary")
        if problem := self.source.unsupported_signature():
            raise self.source.error(self.source.tree, f"ordinary functions do not support {problem}")
        self.hints = resolved_annotations(pyfunc)
        check_structure(self.source.tree, self.source.error)
        self._specializations: dict[tuple[Attribute, ...], OrdinarySpecialization] = {}
        self._by_python_types: dict[tuple[Any, ...], tuple[OrdinarySpecialization, RangeChecks]] = {}
        self._flattened: dict[Layout, OrdinaryFunction] = {}
        self._checked_layouts: set[Layout] = set()

    def __invert__(self) -> NoReturn:
        """Python's own refusal, "bad operand type for unary ~", said nothing
        of why an ordinary function, which revmlir makes reversible, has no
        inverse to call."""
        raise TypeError(
            f"~{self.__name__}: an @rv.ordinary function has no inverse (its reversible form keeps what it "
            "overwrites on a tape, for derivatives); write it with @rv.reversible to run it backwards"
        )

    @property
    def parameters(self) -> list[str]:
        return self.source.parameters

    def signature_of(self, args: Sequence[Any]) -> tuple[Attribute, ...]:
        """The argument types ``args`` specialise to: floats, integers and
        booleans, and numpy arrays of them."""
        params = self.parameters
        self.source.check_count(args)
        types: list[Attribute] = []
        for name, value in zip(params, args):
            found = type_of_value(value)
            element = found.element_type if isinstance(found, MemRefType) else found
            if not isinstance(element, AnyFloat | IntegerType):
                if is_struct(value):
                    raise struct_argument(self.__name__, name, value)
                hint = " (pass a numpy array)" if isinstance(value, list | tuple) else ""
                if (unsigned := unsigned_hint(value, name)) is not None:
                    hint = f" ({unsigned})"
                what = describe_type(found) if found is not None else type(value).__name__
                raise TypeError(
                    f"{self.__name__}(): argument '{name}' has unsupported type {what}{hint}; "
                    "ordinary functions take floats, integers, booleans, numpy arrays of them and structs of these"
                )
            if (declared := _declared_kind(self.hints.get(name), found)) is not None:
                raise TypeError(
                    f"{self.__name__}(): argument '{name}' is declared {declared}, got {describe_type(found)}"
                )
            types.append(_promoted(self.hints.get(name), found))
        return tuple(types)

    def takes_structs_in_expressions(self, callee: ast.expr) -> bool:
        """A call of another ``@rv.ordinary`` function in an expression
        (``e = energy(p)``) passes a struct whole, as a call statement does."""
        return isinstance(callee, ast.Name) and is_ordinary(namespace_of(self.pyfunc)(callee.id))

    def specialize(self, types: Sequence[Attribute]) -> OrdinarySpecialization:
        """The compiled program for one argument-type signature (cached)."""
        key = tuple(types)
        if (spec := self._specializations.get(key)) is None:
            spec = self._specializations[key] = OrdinarySpecialization.compile(self, key)
        return spec

    def specialization_for(self, *args: Any) -> OrdinarySpecialization:
        return matched_specialization(self, args)

    def mlir(self, *args: Any, form: str = "both") -> str:
        """The IR for these arguments: the ordinary IR the function compiles
        to, the reversible IR ``reversibilize`` makes of it, or both (a
        struct argument's fields are parameters of their own)."""
        if form not in FORMS:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, not {form!r}")
        spec, _ = self.run_flat(args, lambda f, a: f.specialization_for(*a))
        parts = {
            "ordinary": "// ordinary IR\n" + _text(spec.ordinary),
            "reversible": "// reversible IR (reversibilize, Bennett mode)\n" + spec.reversible.text(),
        }
        return parts[form] if form != "both" else parts["ordinary"] + "\n" + parts["reversible"]

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        """What ``f`` returns; a struct argument's arrays are written in
        place, its scalar fields are variables of the call (as scalar
        arguments are)."""
        args = bound_by_position(f"{self.__name__}()", self.parameters, args, keywords)
        return self.run_flat(args, lambda f, a: f.specialization_for(*a).run(a))[0]

    def reversible_call(self, args: Sequence[Any], wrt: Collection[int] | None = None) -> ReversibleCall:
        """``f``'s call as a run of its reversible form, which gradients
        differentiate with respect to the arguments ``wrt`` (default: every
        one): its outputs are the returned values, then every argument as
        ``f`` left it (a written array in its output array).  A function
        with a checkpointed loop runs its tape-mode form, whose gradient is
        the checkpointed one."""
        spec = self.specialization_for(*args)
        self._check_differentiable(spec, args, wrt)
        spec.check_aliasing(args)
        if spec.checkpointed:
            return spec.checkpointed_call(args, spec.checkpointed_gradient)
        return spec.bennett_call(args)

    def forward_call(self, args: Sequence[Any], wrt: Collection[int] | None = None) -> ReversibleCall:
        """``f``'s call as a run of its Bennett form, laid out as
        ``reversible_call``'s: what forward mode differentiates (with
        respect to ``wrt``), checkpointed loops or not (a tangent needs no
        schedule)."""
        spec = self.specialization_for(*args)
        self._check_differentiable(spec, args, wrt)
        spec.check_aliasing(args)
        return spec.bennett_call(args)

    def resumable_call(
        self, args: Sequence[Any], policy: CheckpointPolicy, wrt: Collection[int] | None = None
    ) -> ReversibleCall:
        """``f``'s call as a run of its resumable form, whose gradient is
        checkpointed under ``policy`` over primitive steps (``checkpoint=``
        of ``rv.gradient``), with respect to ``wrt``."""
        spec = self.specialization_for(*args)
        self._check_differentiable(spec, args, wrt)
        spec.check_aliasing(args)
        size = spec.snapshot_bytes(args)
        schedule = policy.schedule(size)
        return spec.checkpointed_call(args, spec.resumable_gradient(schedule, policy.steps_per_base(size)))

    def _check_differentiable(
        self, spec: OrdinarySpecialization, args: Sequence[Any], wrt: Collection[int] | None
    ) -> None:
        """Refuse an int that ``f`` converts to a float, passed for a
        parameter not annotated ``int`` and differentiated with respect to
        (in ``wrt``, default every one): most likely its author meant the
        float (``2`` for ``2.0``), and derivatives would treat it as an
        integer, whose derivative is 0.0, a wrong answer given silently.
        JAX's ``grad`` refuses integer inputs unless ``allow_int=True``;
        here only the ints used as floats are refused (a count or an index
        is not), and the annotation is the opt-in, per parameter, as it
        says what the parameter is, for every derivative of ``f``."""
        # a negative position counts from the end, as ``wrt`` does everywhere
        asked = None if wrt is None else {k % len(args) for k in wrt if -len(args) <= k < len(args)}
        parameters = self.source.tree.args.args
        for use in spec.floated_integers:
            arg = parameters[position := use.position]
            if (
                (asked is not None and position not in asked)
                or isinstance(type_of_annotation(self.hints.get(arg.arg)), IntegerType)
                or not isinstance(value := args[position], int | np.integer)
            ):
                continue
            where = self.source.loc(arg)
            names = [f"'{parameters[a].arg}'" for a in use.through or ()]
            arrays = f"arrays {', '.join(names)}" if len(names) > 1 else f"array {names[0]}" if names else "array"
            through = "" if use.through is None else f" through the int {arrays} it is stored into,"
            raise TypeError(
                f"{self.__name__}(): argument '{arg.arg}' is the int {value}, which {self.__name__} uses as a "
                f"float{through} but which has no derivative: pass a float ({float(value)!r}) to differentiate with "
                f"respect to it, or annotate '{arg.arg}: int' ({where.filename.data}:{where.line.data}:"
                f"{where.column.data}) if it is meant as an integer, whose gradient is 0.0"
            )

    def __repr__(self) -> str:
        return f"<ordinary function {self.__name__}>"


COMPUTES_REAL_NUMBERS = (
    "@rv.ordinary functions compute real numbers only: compute the real and imaginary parts as floats, "
    "or write the function with @rv.reversible, which computes complex numbers"
)


def check_real(module: ModuleOp) -> None:
    """Refuse a complex number that ordinary code makes or returns, at
    the source the frontend built it from and in Python's words.  Ordinary
    code is run through its reversible form, and ``reversibilize`` has no
    complex counterpart to translate (``is_scalar``): its refusal named the
    MLIR op and type (``'complex.create' … of type complex<f64>``)."""
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            for type in op.function_type.outputs.data:
                if isinstance(type, ComplexType):
                    number = describe_type(type)
                    raise at_op(op, f"'{op.sym_name.data}' returns a {number} number; {COMPUTES_REAL_NUMBERS}")
        for value in op.results:
            if isinstance(value.type, ComplexType):
                raise at_op(op, f"this makes a {describe_type(value.type)} number; {COMPUTES_REAL_NUMBERS}")


@dataclass(frozen=True)
class OrdinarySpecialization:
    """One compiled signature: the ordinary IR, and its reversible form as
    a ``Specialization`` (``@f`` in Bennett mode)."""

    function: OrdinaryFunction
    types: tuple[Attribute, ...]
    ordinary: ModuleOp
    reversible: Specialization
    result_types: tuple[Attribute, ...]
    written: tuple[int, ...]
    """The array arguments ``f`` may write, in order: ``@f`` takes an output
    array for each."""
    returns: str
    """What the Python function returns: ``"none"``, ``"one"`` or ``"tuple"``."""
    checkpointed: bool
    """Whether a loop is marked ``rv.checkpointed``: then gradients are
    checkpointed (``checkpointed_call``)."""
    resumable: dict[tuple[str, int, int], Specialization] = field(
        default_factory=dict[tuple[str, int, int], Specialization], compare=False, repr=False
    )
    """The resumable forms built so far, by schedule and base."""

    @staticmethod
    def compile(function: OrdinaryFunction, types: tuple[Attribute, ...]) -> OrdinarySpecialization:
        compiler = ModuleCompiler()
        with compiling(), room_for_calls():  # the globals it reads are kept only if it compiles; deep expressions
            name, result_types = compiler.request(
                function, types, lambda message, hint: function.source.error(function.source.tree, message, hint)
            )
            ordinary = compiler.finish(name)
            check_real(ordinary)
            module = ordinary.clone()
            try:
                written = tuple(sorted(reversibilize(module, "bennett")[name]))
            except ReversibilizeError as error:
                raise ReversibleSyntaxError(str(error), None, None, None) from None
        reversible_types = (*types, *result_types, *(types[i] for i in written))
        spec = Specialization(
            function, reversible_types, name, module, verify_derived(function, "reversible form", module)
        )
        last = function.source.tree.body[-1]
        value = last.value if isinstance(last, ast.Return) else None
        returns = "none" if value is None else "tuple" if isinstance(value, ast.Tuple) else "one"
        checkpointed = any(CHECKPOINT_ATTR in op.attributes for op in ordinary.walk())
        return OrdinarySpecialization(function, types, ordinary, spec, result_types, written, returns, checkpointed)

    @functools.cached_property
    def floated_integers(self) -> tuple[FloatUse, ...]:
        """The integer scalar parameters whose value ``f`` uses as a float
        (``floated_parameters``): an int used as a number, not as a count,
        an index, in a comparison or as an exponent."""
        return floated_parameters(self.ordinary, self.reversible.name)

    @functools.cached_property
    def checkpointed_gradient(self) -> Specialization:
        """``f``'s tape-mode form ``@f(args…, r…, tapes…)`` with its
        gradient ``@f.grad``, the checkpointed one (``ad-checkpoint``).  The
        schedule runs at run time, for the trip count the arguments give,
        so one compiled module serves every trip count."""
        return self._checkpointed(flatten_marked_loops)

    def resumable_gradient(self, schedule: ScheduleAttr, base: int) -> Specialization:
        """As ``checkpointed_gradient``, for ``f`` made resumable
        (``make-resumable``): the schedule runs over its primitive steps,
        ``base`` to a checkpointed step, with no loop marked.  One per
        schedule and base."""
        key = (schedule.scheme.data, schedule.snapshots.data, base)
        if (spec := self.resumable.get(key)) is None:
            name = self.reversible.name
            spec = self.resumable[key] = self._checkpointed(
                lambda module: make_resumable(module, (name,), schedule, base)[0], STORE_ALL_HINT
            )
        return spec

    @functools.cached_property
    def resumable_slots(self) -> int:
        """How many scalars the resumable form's state has (its program
        point included): a snapshot holds them and the arrays ``f`` writes."""
        name = self.reversible.name
        loop = self._prepared(
            lambda module: make_resumable(module, (name,), ScheduleAttr("bisection"))[0], STORE_ALL_HINT
        )[1]
        return len(loop.results)

    def snapshot_bytes(self, args: Sequence[Any]) -> int:
        """The size of one snapshot of the resumable form for ``args``."""
        return 8 * self.resumable_slots + sum(args[i].nbytes for i in self.written)

    def _prepared(self, prepare: Callable[[ModuleOp], Any], hint: str | None = None) -> tuple[ModuleOp, Any]:
        """A copy of the ordinary IR, ``prepare``d; its errors as syntax
        errors (located in their message, at the op), with ``hint``."""
        module = self.ordinary.clone()
        try:
            return module, prepare(module)
        except ReversibilizeError as error:
            raise ReversibleSyntaxError(str(error), None, None, None, hint) from None

    def _checkpointed(self, prepare: Callable[[ModuleOp], Any], hint: str | None = None) -> Specialization:
        """``f``'s tape-mode form and its checkpointed ``@f.grad``, from the
        ordinary IR ``prepare``d (loops marked with schedules)."""
        name = self.reversible.name
        module, _ = self._prepared(prepare, hint)
        reversibilize(module, "tape")
        (gradient,) = generate_checkpointed(module, [name])
        gradient.sym_name = StringAttr(name + GRADIENT_SUFFIX)
        tape = SymbolTable.lookup_symbol(module, name)
        assert isinstance(tape, rev.FuncOp)
        types = tuple(tape.function_type.inputs.data)
        writes = verify_derived(self.function, "checkpointed gradient", module)
        return Specialization(self.function, types, name, module, writes)

    def bennett_call(self, args: Sequence[Any]) -> ReversibleCall:
        """``f``'s call as a run of ``@f`` in Bennett mode (``reversible``)."""
        count, results = len(args), len(self.result_types)
        out = {position: count + results + k for k, position in enumerate(self.written)}
        return ReversibleCall(
            self.reversible,
            self.arguments(args),
            tuple(range(count)),
            (*range(count, count + results), *(out.get(i, i) for i in range(count))),
        )

    def checkpointed_call(self, args: Sequence[Any], spec: Specialization) -> ReversibleCall:
        """``f``'s call as a run of ``spec``'s ``@f`` (``checkpointed_gradient``
        or a ``resumable_gradient``): its gradient runs the schedule itself,
        so memory holds the snapshots and one step's tape, not a tape per
        step, and no Bennett round trip is needed."""
        count, results = len(args), len(self.result_types)
        tapes: list[list[float]] = [[] for _ in spec.types[count + results :]]
        return ReversibleCall(
            spec,
            (*args, *self.slots(), *tapes),
            tuple(range(count)),
            (*range(count, count + results), *range(count)),
            recompute=True,
        )

    def slots(self) -> list[Any]:
        """Zero result slots, into which the reversible forms add the
        results: a float's is ``-0.0``, which adding keeps every value of
        (``0.0 + -0.0`` is ``0.0``: ``return -x`` of ``0.0`` lost its
        sign)."""
        return [_ZEROS.get(t, 0) for t in self.result_types]

    def arguments(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """``@f``'s arguments for ``args``: zero result slots and output
        arrays, a float array's ``-0.0`` as a slot's."""
        return (*args, *self.slots(), *(np.full_like(args[i], _ZERO) for i in self.written))

    def check_aliasing(self, args: Sequence[Any]) -> None:
        """Arrays ``f`` writes must not share memory with other arguments:
        the reversible form assumes distinct arrays, as Python code that
        reads ``v`` while it writes ``u`` usually does too."""
        params = self.function.parameters
        for i in self.written:
            for j, other in enumerate(args):
                if j != i and isinstance(other, np.ndarray) and np.may_share_memory(args[i], other):
                    raise ValueError(
                        f"{self.function.__name__}(): arrays '{params[i]}' and '{params[j]}' "
                        f"share memory, and {self.function.__name__} writes '{params[i]}'; "
                        "pass distinct arrays (a copy of one)"
                    )

    @functools.cached_property
    def plain_code(self) -> tuple[NativeModule, str] | None:
        """``f`` compiled as the ordinary code it is, for calls of ``f``:
        no tape and no uncompute, so a long loop runs at native speed in
        the memory its arrays take.  The native module and its function
        ``@f.plain``, written to rev's calling convention, which takes
        ``f``'s arguments and zero result slots and writes the arrays in
        place.  None with the interpreter backend, or where the ordinary
        IR does not compile (the reversible form runs then)."""
        if self.function.backend == "interpreter":
            return None
        module = self.ordinary.clone()
        name = self.reversible.name
        for function in module.ops:
            if isinstance(function, func.FuncOp):
                function.sym_visibility = StringAttr("private")
        inputs = list(self.types)
        scalars = [t for t in inputs if not isinstance(t, MemRefType)]
        wrapper = func.FuncOp(name + PLAIN_SUFFIX, ((*inputs, *self.result_types), (*scalars, *self.result_types)))
        block = wrapper.body.block
        call = func.CallOp(name, block.args[: len(inputs)], self.result_types)
        kept = [a for a, t in zip(block.args, inputs) if not isinstance(t, MemRefType)]
        block.add_ops([call, func.ReturnOp(*kept, *call.res)])
        module.body.block.add_op(wrapper)
        try:
            return NativeModule.compile(module, verified=True), wrapper.sym_name.data
        except PassFailedException:
            return None

    @functools.cached_property
    def plain(self) -> Caller | None:
        """The caller of ``plain_code``'s ``@f.plain``, or None without it."""
        if self.plain_code is None:
            return None
        native, name = self.plain_code
        wrapper = SymbolTable.lookup_symbol(native.module, name)
        assert isinstance(wrapper, func.FuncOp)
        return native.std_caller(wrapper)

    def run(self, args: Sequence[Any]) -> Any:
        """Run ``f`` on the arguments: its plain native code where there
        is, else ``@f``, whose output arrays are then written back into the
        arrays ``f`` writes; return what ``f`` returns."""
        self.check_aliasing(args)
        count, results = len(args), len(self.result_types)
        try:
            if self.plain is not None:
                values = self.plain((*args, *self.slots()))[count:]
            else:
                spec = self.reversible
                runner = spec.native if spec.native is not None else spec.interpreter
                state = runner.call(spec.name, *self.arguments(args))
                for k, i in enumerate(self.written):
                    args[i][...] = state[count + results + k]
                values = state[count : count + results]
        except ArgumentProblem as error:
            raise named_arguments(self.function, error) from None
        if self.returns == "none":
            return None
        return values[0] if self.returns == "one" else tuple(values)


_ZERO = -0.0
"""The float zero that adding keeps every value of."""
_ZEROS: dict[Attribute, Any] = {f64: _ZERO, f32: _ZERO, i1: False}
"""The empty result slot of each type, 0 for the other integers.  No
complex type: ordinary code computes no complex value (``reversibilize``
refuses one), so no slot would need ``complex(-0.0, -0.0)``."""


def _declared_kind(annotation: Any, found: Attribute) -> str | None:
    """What ``annotation`` declares where ``found`` is not of it, or None:
    an array where a number is declared, a number where an array is, a
    float where an integer is (an integer where a float is declared is
    promoted where the code mixes them, as Python does).  A struct's field
    annotations are checked so too (the flattened function's hints)."""
    if annotation is np.ndarray or typing.get_origin(annotation) is np.ndarray:
        return None if isinstance(found, MemRefType) else "an array"
    if (declared := type_of_annotation(annotation)) is None:
        return None
    if isinstance(found, MemRefType) or (isinstance(declared, IntegerType) and isinstance(found, AnyFloat)):
        return describe_type(declared)
    return None


def _promoted(annotation: Any, found: Attribute) -> Attribute:
    """The type an argument of type ``found`` is passed as: an int for a
    parameter annotated ``float`` is that float, as the annotation says
    (and as a typed language would convert it), so that derivatives
    differentiate with respect to it; given as an integer, its derivative
    would be the 0.0 of an integer.  A number for a parameter annotated
    with a numpy scalar type is of that type (a float for ``a: np.float32``
    is an ``f32``, an int for ``n: np.int32`` an ``i32``), as the
    reversible form's annotations say (``type_of_annotation``)."""
    declared = type_of_annotation(annotation)
    if isinstance(declared, AnyFloat) and isinstance(found, IntegerType | AnyFloat):
        return declared
    if isinstance(declared, IntegerType) and isinstance(found, IntegerType) and found.width.data > 1:
        return declared if declared.width.data > 1 else found
    return found


def _text(module: ModuleOp) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def ordinary(function: Callable[..., Any] | None = None, *, backend: str = "auto") -> Any:
    """Decorate a function written in ordinary Python (docs/python.md,
    "Ordinary Python"): calling it runs it natively, ``rv.gradient``,
    ``rv.vjp``, ``rv.jvp``, ``rv.jacobian``, ``rv.hvp`` and ``rv.hessian``
    differentiate it.  ``backend`` as for ``@rv.reversible``:
    ``"auto"``, ``"native"`` or ``"interpreter"``."""
    if function is None:
        return lambda f: OrdinaryFunction(f, backend=backend)
    return OrdinaryFunction(function, backend=backend)
