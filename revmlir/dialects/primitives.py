"""User primitives: functions revmlir does not compile, declared with their
own rules (``rev.extern``), their pure calls (``rev.apply``) and their calls
that update arrays in place (``rev.invoke``).

A primitive is a function of scalars and vectors (``memref<?xT>``)
implemented outside the program: a C function resolved by its symbol in
native code, a Python callable on the interpreter.  Either it returns one
scalar and writes nothing (*pure*: BLAS's ``ddot``), or it updates the
arrays its declaration lists in ``updates`` and may return scalars
(*updating*: BLAS's ``daxpy``, ``y += a·x``).  It has no body to
differentiate or invert, so the declaration names the rule functions that
``ad-adjoint``, ``ad-tangent`` and the inverter call instead, and the
verifier checks that each has the signature its kind demands
(``rule_signature``).  Rules are ordinary code (``func.func``) or primitives
themselves.

``rev.apply`` calls a pure primitive or an ordinary function as an
expression: the inverse recomputes it like any ``math`` op (and, like a
``memref.load``, only where nothing wrote the arrays it reads since).
``rev.invoke`` calls an updating primitive as a reversible instruction, whose
inverse invokes the ``inverse`` rule; derived code also invokes the rules
that update gradient arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from typing import ClassVar, Self

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    DenseArrayBase,
    FlatSymbolRefAttr,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_attr_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    AlwaysSpeculatable,
    EffectInstance,
    MemoryEffect,
    MemoryEffectKind,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from revmlir.errors import InversionError, describe_op
from revmlir.interfaces import (
    AdjointBuilder,
    DifferentiableOp,
    ForwardDifferentiableOp,
    InverseBuilder,
    InvertibleOp,
    NotDifferentiable,
    NotInvertible,
    TangentBuilder,
)
from revmlir.naming import FORGETFUL_ATTR

RULE_KINDS = ("adjoint", "tangent")
"""The derivative rule attributes of ``rev.extern``, in the order
diagnostics name them."""

RULES = ("inverse", *RULE_KINDS)
"""Every rule attribute of ``rev.extern``; ``inverse`` only for a primitive
that updates arrays and returns nothing."""

ARRAY_CONVENTIONS = {
    "pointer_length": "each array as its data pointer and its length (i64)",
    "blas": "the length n (i64) first, then each array as its data pointer and the stride 1 (i64): "
    "CBLAS with 64-bit integers",
    "blas32": "the length n (i32) first, then each array as its data pointer and the stride 1 (i32): "
    "CBLAS with 32-bit integers",
}
"""How native code passes a primitive's arrays to its C function (the
``arrays`` attribute); scalars are passed by value, in argument order."""

DIFFERENT_LENGTHS = "the arrays passed to a primitive of BLAS differ in length; its C function takes one length for all"
"""What both engines report when a primitive whose C function takes one
length n (BLAS) is given arrays of different lengths."""


ARRAYS_ATTR = "rev.arrays"
"""The attribute of the external ``func.func`` of a primitive that takes
arrays: its convention, which the translation to LLVM follows."""


def is_scalar_type(type: Attribute) -> bool:
    return isinstance(type, AnyFloat | ComplexType | IntegerType | IndexType)


def is_vector_type(type: Attribute) -> bool:
    """The arrays primitives take: contiguous vectors of scalars."""
    return (
        isinstance(type, MemRefType)
        and type.get_num_dims() == 1
        and is_scalar_type(type.element_type)
        and isinstance(type.layout, NoneAttr)
    )


def carries_derivative(type: Attribute) -> bool:
    """Floats and complex numbers carry gradients and tangents; integers do not."""
    return isinstance(type, AnyFloat | ComplexType)


def has_shadow(type: Attribute) -> bool:
    """A vector of floats, whose gradients live in a shadow array."""
    return isinstance(type, MemRefType) and carries_derivative(type.element_type)


def has_tangent(type: Attribute) -> bool:
    """The arguments a tangent rule takes a tangent of: float scalars, and
    float arrays (a tangent array of the same shape)."""
    return carries_derivative(type) or has_shadow(type)


def rule_signature(kind: str, primitive: FunctionType) -> FunctionType:
    """The signature a rule of ``kind`` must have for a primitive
    ``(T1, …, Tn) -> (R?)``, where ``D`` lists the ``Ti`` that are float or
    complex scalars and ``S`` the ``Ti`` that are vectors of them:

    - ``adjoint``: ``(T1, …, Tn, R?, S…) -> (D…)``: the arguments (as the
      primitive received them), the gradient of the result and the shadows
      of the float arrays, to which the rule adds (and, for an array the
      primitive updates, which it maps back through the update in place),
      give one gradient per float scalar argument;
    - ``tangent``: ``(T1, …, Tn, Ḋ…) -> (R?)``: the arguments (as the
      primitive received them) and one tangent per float argument, in
      argument order (``Ḋ…``: a scalar for a float scalar, a tangent array
      for a float array), give the tangent of the result; the rule of a
      primitive that updates arrays adds the tangent of each update to the
      tangent arrays of the arrays it updates, in place, and reads the
      others;
    - ``inverse``: the primitive's own signature: it undoes the updates.
    """
    inputs = list(primitive.inputs.data)
    results = list(primitive.outputs.data)
    derivatives = [t for t in inputs if carries_derivative(t)]
    if kind == "adjoint":
        shadows = [t for t in inputs if has_shadow(t)]
        return FunctionType.from_lists([*inputs, *results, *shadows], derivatives)
    if kind == "tangent":
        tangents = [t for t in inputs if has_tangent(t)]
        return FunctionType.from_lists([*inputs, *tangents], results)
    assert kind == "inverse"
    return primitive


def callable_signature(op: Operation) -> FunctionType | None:
    """The signature of what ``rev.apply`` and ``rev.invoke`` may call: a
    primitive, or a ``func.func`` with a body that takes scalars and vectors
    and returns scalars."""
    if isinstance(op, ExternOp):
        return op.function_type
    if isinstance(op, func.FuncOp) and op.body.blocks:
        signature = op.function_type
        if all(is_scalar_type(t) or is_vector_type(t) for t in signature.inputs.data) and all(
            is_scalar_type(t) for t in signature.outputs.data
        ):
            return signature
    return None


def _in_symbol_table(op: Operation) -> bool:
    """Whether ``op`` sits in a module (or another symbol table) yet: a
    function built or verified on its own has no symbols to look up."""
    anchor = op.parent_op()
    while anchor is not None and not anchor.has_trait(SymbolTable):
        anchor = anchor.parent_op()
    return anchor is not None


def _lookup(op: Operation, name: str) -> Operation | None:
    return SymbolTable.lookup_symbol(op, name) if _in_symbol_table(op) else None


@irdl_op_definition
class ExternOp(IRDLOperation):
    """``rev.extern @f : (T…) -> (R?) {symbol = "f", arrays = "blas",
    updates = array<i64: …>, inverse = @f_inv, adjoint = @f_adj, tangent =
    @f_tan}``: a primitive implemented outside the program.  Native code
    calls the C function ``symbol``, passing arrays as ``arrays`` says
    (``ARRAY_CONVENTIONS``; without a symbol, the primitive runs on the
    interpreter only); the interpreter calls the Python callable registered
    for ``@f``.  ``updates`` lists the array arguments the primitive writes;
    it may write no others."""

    name = "rev.extern"
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    symbol = opt_attr_def(StringAttr)
    arrays = opt_attr_def(StringAttr)
    updates = opt_attr_def(DenseArrayBase)
    inverse = opt_attr_def(FlatSymbolRefAttr)
    adjoint = opt_attr_def(FlatSymbolRefAttr)
    tangent = opt_attr_def(FlatSymbolRefAttr)

    traits = traits_def(
        SymbolOpInterface(),
        NotInvertible(
            "a declaration; its calls are pure expressions (rev.apply) or invoke its inverse rule (rev.invoke)"
        ),
        NotDifferentiable("a declaration; ad-adjoint and ad-tangent call its rule functions"),
    )

    def __init__(
        self,
        name: str,
        signature: FunctionType,
        symbol: str | None = None,
        rules: dict[str, str] | None = None,
        updates: Sequence[int] = (),
        arrays: str | None = None,
    ):
        attributes: dict[str, Attribute] = {} if symbol is None else {"symbol": StringAttr(symbol)}
        if arrays is not None:
            attributes["arrays"] = StringAttr(arrays)
        if updates:
            attributes["updates"] = DenseArrayBase.from_list(i64, list(updates))
        attributes.update((kind, FlatSymbolRefAttr(rule)) for kind, rule in (rules or {}).items())
        super().__init__(properties={"sym_name": StringAttr(name), "function_type": signature}, attributes=attributes)

    def rule(self, kind: str) -> str | None:
        """The name of the rule function of ``kind``, if declared."""
        ref = self.attributes.get(kind)
        return ref.string_value() if isinstance(ref, SymbolRefAttr) else None

    def updated(self) -> tuple[int, ...]:
        """The positions of the array arguments the primitive writes."""
        if self.updates is None:
            return ()
        return tuple(int(v) for v in self.updates.get_values())

    def array_convention(self) -> str:
        return "pointer_length" if self.arrays is None else self.arrays.data

    def verify_(self) -> None:
        name = self.sym_name.data
        signature = self.function_type
        inputs = signature.inputs.data
        for i, t in enumerate(inputs):
            if not (is_scalar_type(t) or is_vector_type(t)):
                raise VerifyException(
                    f"argument #{i} of primitive @{name} has type {t}; primitives take scalars "
                    "and vectors (memref<?xT>)"
                )
        updated = self.updated()
        for i in updated:
            if not 0 <= i < len(inputs) or not is_vector_type(inputs[i]):
                raise VerifyException(f"primitive @{name} updates argument #{i}, which is not one of its arrays")
        if len(set(updated)) != len(updated):
            raise VerifyException(f"primitive @{name} lists an updated argument twice")
        outputs = signature.outputs.data
        if not all(is_scalar_type(t) for t in outputs):
            raise VerifyException(f"primitive @{name} must return scalars")
        if not updated and len(outputs) != 1:
            raise VerifyException(
                f"primitive @{name} must return one scalar, or update arrays (updates = array<i64: …>)"
            )
        convention = self.array_convention()
        if convention not in ARRAY_CONVENTIONS:
            raise VerifyException(
                f"primitive @{name} passes arrays as '{convention}'; known are {', '.join(map(repr, ARRAY_CONVENTIONS))}"
            )
        if self.rule("inverse") is not None and (not updated or outputs):
            raise VerifyException(
                f"primitive @{name} declares an inverse rule, which only a primitive that updates arrays "
                "and returns nothing has: the calls of a pure one are expressions, which the inverse recomputes"
            )
        for kind in RULES:
            if (rule := self.rule(kind)) is None or not _in_symbol_table(self):
                continue
            target = _lookup(self, rule)
            found = None if target is None else callable_signature(target)
            if found is None:
                raise VerifyException(
                    f"the {kind} rule of @{name} names @{rule}, which is not a rev.extern "
                    "or a func.func with a body of the module"
                )
            expected = rule_signature(kind, signature)
            if found != expected:
                raise VerifyException(
                    f"the {kind} rule @{rule} of @{name} has type {found}; for a primitive of type "
                    f"{signature} it must have type {expected}"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" : ")
        printer.print_attribute(self.function_type)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        name = parser.parse_symbol_name().data
        parser.parse_punctuation(":")
        signature = parser.parse_function_type()
        op = cls(name, signature)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op


def _called(
    op: Operation, callee: FlatSymbolRefAttr, args: Sequence[SSAValue], results: Sequence[SSAValue]
) -> Operation | None:
    """The primitive or function a call names, after checking the call
    against its signature (``None`` outside a module)."""
    name = callee.string_value()
    if not _in_symbol_table(op):
        return None
    target = _lookup(op, name)
    signature = None if target is None else callable_signature(target)
    if signature is None:
        raise VerifyException(
            f"'{op.name}' calls @{name}, which is not a rev.extern or a func.func of scalars and vectors of the module"
        )
    called = FunctionType.from_lists([a.type for a in args], [r.type for r in results])
    if called != signature:
        raise VerifyException(f"'{op.name}' calls @{name} of type {signature} as {called}")
    return target


class ReadsItsArrays(MemoryEffect):
    """A call that reads the arrays it is given and writes nothing: pure on
    scalars, a memory read (like ``memref.load``) on arrays, so no rewrite
    merges two calls across a write to an array they read."""

    @classmethod
    def get_effects(cls, op: Operation) -> Set[EffectInstance]:
        return frozenset(
            EffectInstance(MemoryEffectKind.READ, operand)
            for operand in op.operands
            if isinstance(operand.type, MemRefType)
        )


@irdl_op_definition
class ApplyOp(IRDLOperation):
    """``%r = rev.apply @f(%a, …) : (T…) -> R``: a call of a pure primitive
    or of an ordinary function (a rule) as an expression."""

    name = "rev.apply"
    callee = prop_def(FlatSymbolRefAttr)
    args = var_operand_def()
    res = var_result_def()

    traits = traits_def(ReadsItsArrays(), AlwaysSpeculatable())
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]):
        super().__init__(
            operands=[args], result_types=[list(result_types)], properties={"callee": FlatSymbolRefAttr(callee)}
        )

    def target(self) -> Operation | None:
        return _lookup(self, self.callee.string_value())

    def rule(self, kind: str, missing: Callable[[Operation, str], Exception]) -> str:
        """The rule function of ``kind`` of the primitive called; where there
        is none, ``missing(self, why)`` is raised."""
        return _rule(self, self.callee.string_value(), kind, missing)[1]

    def derivative_types(self) -> list[Attribute]:
        """The types of the scalar arguments that carry gradients and tangents."""
        return [t for t in self.args.types if carries_derivative(t)]

    def verify_(self) -> None:
        target = _called(self, self.callee, self.args, self.res)
        if isinstance(target, ExternOp) and target.updated():
            raise VerifyException(
                f"'rev.apply' calls @{self.callee.string_value()}, which updates arrays: invoke it (rev.invoke)"
            )


def _rule(op: Operation, name: str, kind: str, missing: Callable[[Operation, str], Exception]) -> tuple[ExternOp, str]:
    target = _lookup(op, name)
    if not isinstance(target, ExternOp):
        raise missing(op, f"@{name} is ordinary code, not a primitive with rules")
    if (rule := target.rule(kind)) is None:
        raise missing(op, f"primitive @{name} declares no {kind} rule")
    return target, rule


@irdl_op_definition
class InvokeOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """``rev.invoke @f(%a, …) : (T…) -> (R…)``: a call that updates arrays in
    place, a reversible instruction.  It writes the arrays a primitive
    declares in ``updates`` (every array it passes to ordinary code) and only
    reads its other operands.  ``{backward}`` calls the primitive's inverse
    rule instead; the inverse of an invoke toggles it.  An invoke with
    results calls a rule in derived code (an adjoint rule updating
    gradient arrays and returning gradients): its results are new state, and
    it has no inverse.  Neither has an invoke of a primitive without an
    inverse rule, which says so (``rev.forgetful``), so that ``~f`` of a
    function calling it is refused before anything runs."""

    name = "rev.invoke"
    callee = prop_def(FlatSymbolRefAttr)
    args = var_operand_def()
    res = var_result_def()
    backward = opt_attr_def(UnitAttr)

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(
        self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute] = (), backward: bool = False
    ):
        super().__init__(
            operands=[args],
            result_types=[list(result_types)],
            properties={"callee": FlatSymbolRefAttr(callee)},
            attributes={"backward": UnitAttr()} if backward else {},
        )

    def target(self) -> Operation | None:
        return _lookup(self, self.callee.string_value())

    def function(self) -> str:
        """The function this invoke runs: the primitive, or its inverse rule
        when ``backward``."""
        name = self.callee.string_value()
        if self.backward is None:
            return name
        target = self.target()
        rule = target.rule("inverse") if isinstance(target, ExternOp) else None
        assert rule is not None, f"{describe_op(self)} runs backward without an inverse rule"
        return rule

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def written_memrefs(self) -> Sequence[SSAValue]:
        target = self.target()
        # the analyses ask an invoke what it writes before its own verifier
        # has checked it against its callee's signature (a function's
        # verifier asks it of its callees' bodies), so a position past its
        # arguments is left out; a rule lowered to native code also takes
        # an error slot last, no argument here
        positions: Iterable[int]
        if isinstance(target, ExternOp):
            positions = target.updated()
        elif isinstance(target, func.FuncOp) and target.body.blocks:
            positions = sorted(function_writes(target))
        else:
            return [a for a in self.args if isinstance(a.type, MemRefType)]
        return [self.args[i] for i in positions if i < len(self.args)]

    def verify_(self) -> None:
        name = self.callee.string_value()
        target = _called(self, self.callee, self.args, self.res)
        if isinstance(target, ExternOp) and not target.updated():
            raise VerifyException(f"'rev.invoke' calls @{name}, which updates no array: apply it (rev.apply)")
        if isinstance(target, ExternOp) and target.rule("inverse") is None:
            if self.backward is not None:
                raise VerifyException(f"'rev.invoke' runs @{name} backward, which declares no inverse rule")
            if FORGETFUL_ATTR not in self.attributes:
                raise VerifyException(
                    f"'rev.invoke' calls @{name}, which declares no inverse rule: the call has no inverse "
                    f"and must say so ({FORGETFUL_ATTR})"
                )
        # a rule in derived code may get one gradient array twice where the
        # primal passed one array twice (docs/design.md, decision 20)
        for i in target.updated() if isinstance(target, ExternOp) else ():
            if any(other is self.args[i] for j, other in enumerate(self.args) if j != i):
                raise VerifyException(
                    f"'rev.invoke' passes the array it updates as argument #{i} of @{name} twice: "
                    "an updated array may share memory with no other argument"
                )

    def invert(self, inverter: InverseBuilder) -> None:
        name = self.callee.string_value()
        target = self.target()
        if self.res:
            raise InversionError(f"{describe_op(self)} returns values, which no inverse could take back")
        if self.backward is None and (not isinstance(target, ExternOp) or target.rule("inverse") is None):
            raise InversionError(
                f"{describe_op(self)} has no inverse: primitive @{name} updates arrays and declares no inverse rule"
            )
        op = InvokeOp(name, [inverter.lookup(a) for a in self.args])
        inverter.insert(op, like=self)
        if self.backward is None:
            op.attributes["backward"] = UnitAttr()
        else:
            del op.attributes["backward"]

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The adjoint rule runs after the inverse step, on the arguments
        as the primitive received them: it maps the shadows of the float
        arrays back through the update in place and returns the gradients
        of the float scalar arguments, which flow into their expressions."""
        name = self.callee.string_value()
        if self.backward is not None:
            raise adjointer.fail(self, f"the inverse of primitive @{name} has no adjoint rule")
        _, rule = _rule(self, name, "adjoint", adjointer.fail)
        yield
        invoke_rule(adjointer, rule, self.args, [])

    TANGENT_OF_ALL_LANES: ClassVar[bool] = True

    def tangent(self, tangenter: TangentBuilder) -> None:
        """A primitive's tangent rule runs before the call, on the arguments
        as the primitive receives them (the convention of the adjoint rule):
        it adds the tangent of the update to the tangent arrays of the
        updated arrays in place.  In vector mode it runs once per lane,
        every lane before the call, which changes what the rule reads.  The
        inverse runs the inverse rule's tangent rule.  Ordinary code (a rule
        that derived code invokes, or an inverse rule) has a derived tangent
        that runs it too, with every lane (``tangenter.ordinary_tangent``)."""
        name = self.function()
        if not is_primitive_call(self, name):
            tangenter.ordinary_tangent(name, self.args, self.res, _forgetful_invoke)
            return
        _, rule = _rule(self, name, "tangent", tangenter.fail)
        for _ in tangenter.each_lane():
            tangents = tangent_operands(tangenter, self, self.args)
            call = InvokeOp(rule, [*(tangenter.primal(a) for a in self.args), *tangents], list(self.res.types))
            call.attributes[FORGETFUL_ATTR] = UnitAttr()
            tangenter.emit_op(call)
            for result, dot in zip(self.res, call.res, strict=True):
                if carries_derivative(result.type):
                    tangenter.bind_tangent(result, dot)
        tangenter.copy(self)


def _forgetful_invoke(callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]) -> InvokeOp:
    """An invoke in derived code, which has no inverse."""
    call = InvokeOp(callee, args, result_types)
    call.attributes[FORGETFUL_ATTR] = UnitAttr()
    return call


def is_primitive_call(op: Operation, name: str) -> bool:
    """Whether ``@name``, which ``op`` calls, is a primitive rather than
    ordinary code.  In the copy that derived code is built from, ordinary
    code is not there to look up: what is not a primitive is ordinary code."""
    return isinstance(_lookup(op, name), ExternOp)


def tangent_operands(
    tangenter: TangentBuilder, op: Operation, args: Sequence[SSAValue], dots: Sequence[SSAValue | None] | None = None
) -> list[SSAValue]:
    """The tangents a tangent rule takes for a call on ``args``: one per
    float scalar (zero where it has none) and the tangent array of each
    float array, in argument order (``dots``: those already swept)."""
    found = [tangenter.tangent(a) for a in args] if dots is None else list(dots)
    tangents: list[SSAValue] = []
    for arg, dot in zip(args, found, strict=True):
        if not has_tangent(arg.type):
            continue
        if dot is None and isinstance(arg.type, MemRefType):
            raise tangenter.fail(op, f"internal error: {describe_op(op)} reads an array without a tangent array")
        tangents.append(tangenter.zero(arg) if dot is None else dot)
    return tangents


_READS = (memref.LoadOp, memref.DimOp, ApplyOp)


def function_writes(function: func.FuncOp, visiting: frozenset[str] = frozenset()) -> frozenset[int]:
    """The array arguments ordinary code (a rule) may write: those it
    stores into, or passes on to be written; any other use but a read
    counts as a write (so does recursion), to be safe."""
    name = function.sym_name.data
    arrays = [a for a in function.body.blocks[0].args if isinstance(a.type, MemRefType)]
    if name in visiting:
        return frozenset(a.index for a in arrays)
    written: set[int] = set()
    for array in arrays:
        for use in array.uses:
            user = use.operation
            if isinstance(user, _READS) or (isinstance(user, memref.StoreOp) and use.index != 1):
                continue
            if isinstance(user, InvokeOp) and array not in user.written_memrefs():
                continue
            if (
                isinstance(user, func.CallOp)
                and isinstance(callee := _lookup(user, user.callee.string_value()), func.FuncOp)
                and callee.body.blocks
                and use.index not in function_writes(callee, visiting | {name})
            ):
                continue
            written.add(array.index)
    return frozenset(written)


def invoke_rule(adjointer: AdjointBuilder, rule: str, args: Sequence[SSAValue], seeds: Sequence[SSAValue]) -> None:
    """Invoke the adjoint ``rule`` of a primitive called on ``args`` (the
    gradient of its result in ``seeds``, if it has one): the rule adds to
    the shadows of the float arrays in place and returns the gradients of
    the float scalars, which are swept into their expressions, then
    discarded (the rule's results are state of the adjoint, which forgets
    them: it has no inverse)."""
    inputs = [adjointer.primal(a) for a in args]
    shadows = [adjointer.gradient(a) for a in args if has_shadow(a.type)]
    scalars = [a for a in args if carries_derivative(a.type)]
    call = InvokeOp(rule, [*inputs, *seeds, *(s for s in shadows if s is not None)], [a.type for a in scalars])
    call.attributes[FORGETFUL_ATTR] = UnitAttr()
    adjointer.emit_op(call)
    adjointer.accumulate(list(zip(scalars, call.res, strict=True)))
    for gradient in call.res:
        adjointer.discard_gradient(gradient)
