"""User primitives: functions revmlir does not compile, declared with their
own derivative rules (``rev.extern``), and pure calls (``rev.apply``).

A primitive is a scalar function ``(T1, …, Tn) -> R`` implemented outside the
program: a C function resolved by its symbol in native code, a Python
callable on the interpreter.  It has no body to differentiate, so the
declaration names the rule functions that ``ad-adjoint`` and ``ad-tangent``
call instead, and the verifier checks that each has the signature its kind
demands (``rule_signature``).  Rules are ordinary code (``func.func``) or
primitives themselves.

``rev.apply`` calls a primitive or an ordinary function with scalar
arguments and results as a pure expression: the inverse recomputes it like
any ``math`` op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Self

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    FlatSymbolRefAttr,
    FunctionType,
    IndexType,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
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
from xdsl.traits import Pure, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from revmlir.interfaces import NotDifferentiable, NotInvertible

RULE_KINDS = ("adjoint", "tangent")
"""The rule attributes of ``rev.extern``, in the order diagnostics name them."""


def is_scalar_type(type: Attribute) -> bool:
    return isinstance(type, AnyFloat | ComplexType | IntegerType | IndexType)


def carries_derivative(type: Attribute) -> bool:
    """Floats and complex numbers carry gradients and tangents; integers do not."""
    return isinstance(type, AnyFloat | ComplexType)


def rule_signature(kind: str, primitive: FunctionType) -> FunctionType:
    """The signature a rule of ``kind`` must have for a primitive
    ``(T1, …, Tn) -> R``, where ``D`` lists the ``Ti`` that are floats or
    complex numbers:

    - ``adjoint``: ``(T1, …, Tn, R) -> (D…)``: the arguments and the
      gradient of the result give one gradient per float argument;
    - ``tangent``: ``(T1, …, Tn, D…) -> R``: the arguments and one tangent
      per float argument give the tangent of the result.
    """
    inputs = list(primitive.inputs.data)
    (result,) = primitive.outputs.data
    derivatives = [t for t in inputs if carries_derivative(t)]
    if kind == "adjoint":
        return FunctionType.from_lists([*inputs, result], derivatives)
    assert kind == "tangent"
    return FunctionType.from_lists([*inputs, *derivatives], [result])


def callable_signature(op: Operation) -> FunctionType | None:
    """The signature of what ``rev.apply`` may call: a primitive, or a
    ``func.func`` with a body that takes and returns scalars only."""
    if isinstance(op, ExternOp):
        return op.function_type
    if isinstance(op, func.FuncOp) and op.body.blocks:
        signature = op.function_type
        if all(is_scalar_type(t) for t in (*signature.inputs.data, *signature.outputs.data)):
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
    """``rev.extern @f : (T…) -> R {symbol = "f", adjoint = @f_adj, tangent =
    @f_tan}``: a primitive implemented outside the program.  Native code
    calls the C function ``symbol`` (without one, the primitive runs on the
    interpreter only); the interpreter calls the Python callable registered
    for ``@f``."""

    name = "rev.extern"
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    symbol = opt_attr_def(StringAttr)
    adjoint = opt_attr_def(FlatSymbolRefAttr)
    tangent = opt_attr_def(FlatSymbolRefAttr)

    traits = traits_def(
        SymbolOpInterface(),
        NotInvertible("a declaration; its calls (rev.apply) are pure expressions"),
        NotDifferentiable("a declaration; ad-adjoint and ad-tangent call its rule functions"),
    )

    def __init__(
        self,
        name: str,
        signature: FunctionType,
        symbol: str | None = None,
        rules: dict[str, str] | None = None,
    ):
        attributes: dict[str, Attribute] = {} if symbol is None else {"symbol": StringAttr(symbol)}
        attributes.update((kind, FlatSymbolRefAttr(rule)) for kind, rule in (rules or {}).items())
        super().__init__(
            properties={"sym_name": StringAttr(name), "function_type": signature}, attributes=attributes
        )

    def rule(self, kind: str) -> str | None:
        """The name of the rule function of ``kind``, if declared."""
        ref = self.attributes.get(kind)
        return ref.string_value() if isinstance(ref, SymbolRefAttr) else None

    def verify_(self) -> None:
        name = self.sym_name.data
        signature = self.function_type
        for i, t in enumerate(signature.inputs.data):
            if not is_scalar_type(t):
                raise VerifyException(f"argument #{i} of primitive @{name} has type {t}; primitives take scalars")
        outputs = signature.outputs.data
        if len(outputs) != 1 or not is_scalar_type(outputs[0]):
            raise VerifyException(f"primitive @{name} must return one scalar")
        if "inverse" in self.attributes:
            raise VerifyException(
                f"primitive @{name} declares an inverse rule, which primitives do not have yet: "
                "their calls are pure expressions, which the inverse recomputes"
            )
        for kind in RULE_KINDS:
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
                    f"the {kind} rule @{rule} of @{name} has type {found}; a {kind} rule of "
                    f"{signature} must have type {expected}"
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


@irdl_op_definition
class ApplyOp(IRDLOperation):
    """``%r = rev.apply @f(%a, …) : (T…) -> R``: a pure call of a primitive
    or of an ordinary function of scalars (a rule)."""

    name = "rev.apply"
    callee = prop_def(FlatSymbolRefAttr)
    args = var_operand_def()
    res = var_result_def()

    traits = traits_def(Pure())
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
        name = self.callee.string_value()
        target = self.target()
        if not isinstance(target, ExternOp):
            raise missing(self, f"@{name} is ordinary code, not a primitive with rules")
        if (rule := target.rule(kind)) is None:
            raise missing(self, f"primitive @{name} declares no {kind} rule")
        return rule

    def derivative_types(self) -> list[Attribute]:
        """The types of the arguments that carry gradients and tangents."""
        return [t for t in self.args.types if carries_derivative(t)]

    def verify_(self) -> None:
        name = self.callee.string_value()
        if not _in_symbol_table(self):
            return
        target = self.target()
        signature = None if target is None else callable_signature(target)
        if signature is None:
            raise VerifyException(
                f"'rev.apply' calls @{name}, which is not a rev.extern or a func.func of scalars of the module"
            )
        called = FunctionType.from_lists(list(self.args.types), list(self.res.types))
        if called != signature:
            raise VerifyException(f"'rev.apply' calls @{name} of type {signature} as {called}")
