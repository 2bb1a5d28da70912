"""Reversible Python statements → rev IR through the builder API.

Each statement form maps to one NiLang statement (the table is in
``docs/python.md``).  Anything else is a ``ReversibleSyntaxError`` at the
user's line with a hint saying what to write instead.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard, cast

import numpy as np
from xdsl.dialects import cf
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    FileLineColLoc,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.builder import (
    ALIASED_ARGUMENTS,
    BuildError,
    Element,
    FunctionBuilder,
    InstructionTypeError,
    Loc,
    ModuleBuilder,
    Part,
    Target,
    Value,
)
from revmlir.diagnostics import failing_op
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import LogType, TropicalType
from revmlir.errors import ReversibilityViolation
from revmlir.frontend.base import compilation as base
from revmlir.frontend.base import markers
from revmlir.frontend.base.bindings import UNRESOLVED
from revmlir.frontend.base.derived import (
    AdjointFunction,
    InverseAdjoint,
    Reversible,
    adjoint,
    is_reversible,
    unsupported_adjoint,
)
from revmlir.frontend.base.errors import ReversibleSyntaxError, at_op
from revmlir.frontend.base.expressions import TOO_DEEP, Context, ExpressionCompiler
from revmlir.frontend.base.ranges import PRANGE_STEP, ZERO_STEP, run_time_range
from revmlir.frontend.base.specialization import Invertible
from revmlir.frontend.base.structs import CALLEE_LAYOUT, Layout
from revmlir.frontend.base.types import NUMPY_SCALAR_ANNOTATIONS, describe_type, type_of_annotation
from revmlir.frontend.ordinary_code.compiler import PrimitiveDeclarations
from revmlir.frontend.reversible_code import type_errors
from revmlir.frontend.reversible_code.lent_copies import copy_lent_elements
from revmlir.frontend.reversible_code.safe_blocks import SafeBlockCompiler, is_safe_block
from revmlir.frontend.reversible_code.views import check_part_update
from revmlir.frontend.reversible_code.violations import in_python
from revmlir.interfaces import has_switchable_checks, set_checks
from revmlir.kept_answers import ir_unchanged
from revmlir.semantics import Writes, gradient_type, kept_argument_writes

if TYPE_CHECKING:
    from revmlir.frontend.ordinary_code.primitives import Primitive


_UPDATES = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.BitXor: "xor",
    ast.Mult: "mul",
    ast.Div: "div",
}


def _dtype(node: ast.expr, ctx: Context) -> Attribute:
    value = ctx.resolve(node)
    type = type_of_annotation(value)
    if type is None:
        raise ctx.error(
            node,
            f"'{ast.unparse(node)}' is not a type",
            f"use float, int, complex, bool or a numpy scalar type ({NUMPY_SCALAR_ANNOTATIONS})",
        )
    return type


def _turned(callee: Any) -> Any:
    """``~callee`` for a callable that runs both ways (a reversible function,
    its inverse, an adjoint and its inverse), else nothing resolved: ``~``
    of any other object is no callee (``~3`` is an int)."""
    if isinstance(callee, Invertible | AdjointFunction | InverseAdjoint):
        return ~callee
    return UNRESOLVED


class ModuleCompiler(base.ModuleCompiler):
    """Compiles an entry function and every reversible function it calls,
    each specialised to the argument types it is called with."""

    def __init__(self) -> None:
        super().__init__()
        self.builder = ModuleBuilder()
        self.names: dict[tuple[int, tuple[Attribute, ...]], str] = {}
        self.python_names: dict[str, str] = {}  # each specialisation's function, as the user named it
        self.adjoints: dict[int, list[str]] = {}  # per lane count: functions whose @f.adj(L) the module calls
        self.primitives = PrimitiveDeclarations(self.used)
        self.declared = 0  # how many of their ops the module holds
        self.writes: dict[str, tuple[Writes, ...]] | None = None
        """``argument_writes`` of the finished module, where its
        verification worked it out (the verifier asks it of modules with
        parallel loops that call), for the specialisation's ``written``."""

    def request(self, function: Reversible, types: Sequence[Attribute]) -> str:
        """The name of ``function`` specialised to ``types``; named before
        it compiles, so that it may call itself."""
        key = (id(function), tuple(types))
        if (name := self.names.get(key)) is not None:
            return name
        # another specialisation, or a function named like one
        name = self.names[key] = self.fresh_name(function.__name__, first=len(self.used))
        self.python_names[name] = function.__name__
        FunctionCompiler(self, function, name, types).compile()
        return name

    def primitive(self, primitive: Primitive) -> str:
        """Declare ``primitive`` (a ``rev.extern``) and its rules (ordinary
        ``func.func``s) in the module, once; its name."""
        name = self.primitives.declare(primitive)
        self.builder.ops.extend(self.primitives.ops[self.declared :])
        self.declared = len(self.primitives.ops)
        return name

    def finish(self) -> ModuleOp:
        module = self.builder.finish(verify=False)
        copy_lent_elements(module)
        if self.adjoints:
            for lanes, names in self.adjoints.items():
                generate_adjoints(module, names, lanes)
        try:
            # each function's checks ask about its callees: their answers
            # are kept for the verification, which changes nothing
            with ir_unchanged():
                module.verify()
                self.writes = kept_argument_writes(module)
        except ReversibilityViolation as violation:
            raise at_op(violation.op, in_python(violation, self.python_names)) from None
        except VerifyException:
            found = failing_op(module)
            if found is None:
                raise
            op, cause = found
            lines = [line.strip() for line in str(cause).strip().splitlines() if line.strip()]
            raise at_op(op, f"'{op.name}': {' '.join(lines)}") from None
        return module


class FunctionCompiler(base.FunctionCompiler[Reversible, FunctionBuilder]):
    def __init__(
        self,
        module: ModuleCompiler,
        function: Reversible,
        name: str,
        types: Sequence[Attribute],
    ):
        super().__init__(function, types, lambda args, loc: module.builder.function(name, args, loc), module.primitive)
        self.module = module
        self.expr = ExpressionCompiler(self.ctx)
        self.ended: dict[str, ast.AST] = {}  # variable → the rv.free / rv.push that ended it

    def compile(self) -> None:
        first = self.fn.current_block.last_op
        self.statements(self.tree.body)
        end = self.tree.body[-1] if self.tree.body else self.tree
        for name, type in zip(self.fn.arg_names, self.fn.arg_types, strict=True):
            if not isinstance(type, MemRefType | StackType) and not self.fn.has(name) and name in self.ended:
                raise self.ctx.error(
                    self.ended[name],
                    f"argument '{name}' was freed or pushed; it must be returned",
                    "free or push only ancillas (or pop the argument back before the function ends)",
                )
        try:
            self.fn.finish(self.ctx.loc(end))
        except BuildError as error:
            raise self.ctx.error(self.tree, error.message) from None
        if not self.function.checks:
            _strip_checks(self.fn.current_block, first)

    # -- statement lists ----------------------------------------------------------

    def statements(self, body: Sequence[ast.stmt]) -> None:
        body = list(body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        index = 0
        while index < len(body):
            statement = body[index]
            name = self._routine_name(statement)
            if name is not None:
                assert isinstance(statement, ast.With)
                end = self._find_uncompute(body, index + 1, name)
                if end is None:
                    raise self.ctx.error(
                        statement,
                        f"routine '{name}' is never uncomputed",
                        f"end it with `~{name}` after the statements that use it",
                    )
                self._routine(statement, body[index + 1 : end])
                index = end + 1
                continue
            self.statement(statement)
            index += 1

    def _routine_name(self, statement: ast.stmt) -> str | None:
        if not isinstance(statement, ast.With) or len(statement.items) != 1:
            return None
        item = statement.items[0]
        call = item.context_expr
        if not (isinstance(call, ast.Call) and self.ctx.resolve(call.func) is markers.routine):
            return None
        if not isinstance(item.optional_vars, ast.Name):
            raise self.ctx.error(statement, "a routine needs a name", "write `with rv.routine() as r:` … `~r`")
        return item.optional_vars.id

    @staticmethod
    def _find_uncompute(body: Sequence[ast.stmt], start: int, name: str) -> int | None:
        for index in range(start, len(body)):
            statement = body[index]
            if (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.UnaryOp)
                and isinstance(statement.value.op, ast.Invert)
                and isinstance(statement.value.operand, ast.Name)
                and statement.value.operand.id == name
            ):
                return index
        return None

    def _routine(self, statement: ast.With, body: Sequence[ast.stmt]) -> None:
        """``compute; body; ~compute``.  An ancilla array the compute block
        allocates (``a = rv.zeros(…)``, at its top level) lives for the whole
        routine: it is allocated before it and freed after the uncomputation,
        which must leave it holding zeros (arrays are references, which a
        routine does not carry between its blocks)."""
        arrays = [s for s in statement.body if self._allocates_array(s)]
        compute = [s for s in statement.body if s not in arrays]
        for allocation in arrays:
            self.statement(allocation)
        try:
            self.fn.routine(
                compute=lambda: self.statements(compute),
                body=lambda: self.statements(body),
                loc=self.ctx.loc(statement),
            )
        except BuildError as error:
            raise self.ctx.error(statement, error.message) from None
        for allocation in reversed(arrays):
            name = cast(ast.Name, allocation.targets[0]).id  # as _allocates_array checked
            self.fn.free_array(name, self.ctx.loc(allocation))

    def _allocates_array(self, statement: ast.stmt) -> TypeGuard[ast.Assign]:
        return (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
            and self.ctx.resolve(statement.value.func) is markers.zeros
        )

    # -- single statements ----------------------------------------------------------

    def statement(self, node: ast.stmt) -> None:
        try:
            self._statement(node)
        except InstructionTypeError as error:
            raise self.ctx.error(node, *type_errors.in_python(node, error)) from None
        except BuildError as error:
            raise self.ctx.error(node, error.message) from None
        except RecursionError:
            raise self.ctx.error(node, *TOO_DEEP) from None

    def _statement(self, node: ast.stmt) -> None:
        match node:
            case ast.AugAssign():
                self._update(node)
            case ast.Assign():
                self._assign(node)
            case ast.Expr(value=ast.Call() as call):
                self._call_statement(node, call)
            case ast.If():
                self._if(node)
            case ast.While():
                self._while(node)
            case ast.For():
                self._for(node)
            case ast.With():
                self._with(node)
            case ast.Pass():
                pass
            case ast.Return(value=None) if node is self.tree.body[-1]:
                pass
            case ast.Return():
                raise self.ctx.error(
                    node,
                    "a reversible function returns all its arguments, updated",
                    "remove the return; callers receive every argument",
                )
            case ast.Expr(value=ast.UnaryOp(op=ast.Invert())):
                raise self.ctx.error(node, f"'{ast.unparse(node)}' does not close a routine opened in this block")
            case _:
                raise self.ctx.error(
                    node,
                    f"'{ast.unparse(node).splitlines()[0]}' is not a reversible statement",
                    "see the statement table in docs/python.md",
                )

    # -- targets ----------------------------------------------------------------------

    def target(self, node: ast.expr) -> Target:
        ctx, fn = self.ctx, self.fn
        if isinstance(node, ast.Name):
            if ctx.lookup_binding(node.id) is not None:
                raise ctx.error(node, f"loop variable '{node.id}' cannot be updated")
            if not fn.has(node.id):
                raise ctx.error(
                    node,
                    f"unknown variable '{node.id}'",
                    f"allocate it first: {node.id} = rv.ancilla(0.0)",
                )
            return node.id
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and fn.has(node.value.id):
            if not isinstance(fn.type_of(node.value.id), MemRefType):
                raise ctx.error(node, f"'{node.value.id}' is not an array", "index arrays only: x[i]")
            indices = self.expr.indices(node)
            return Element(node.value.id, tuple(indices))
        if isinstance(node, ast.Attribute) and node.attr in ("real", "imag") and isinstance(node.value, ast.Name):
            return Part(node.value.id, node.attr)
        raise ctx.error(
            node,
            f"cannot update '{ast.unparse(node)}'",
            "update a variable, an array element x[i] or a complex part z.real/z.imag",
        )

    def _target_type(self, target: Target) -> Attribute:
        fn = self.fn
        if isinstance(target, str):
            return fn.type_of(target)
        if isinstance(target, Element):
            array = fn.type_of(target.name)
            return array.element_type
        whole = fn.type_of(target.name)
        return whole.element_type if isinstance(whole, ComplexType) else whole

    # -- statements ---------------------------------------------------------------------

    def _update(self, node: ast.AugAssign) -> None:
        ctx, fn = self.ctx, self.fn
        kind = _UPDATES.get(type(node.op))
        if kind is None:
            raise ctx.error(
                node,
                f"'{ast.unparse(node)}' is not reversible",
                "only +=, -=, ^= (and *=, /= on log numbers) update a variable",
            )
        target = self.target(node.target)
        target_type = self._target_type(target)
        is_product = isinstance(target_type, LogType | TropicalType)
        if kind in ("mul", "div") and not is_product:
            raise ctx.error(
                node,
                f"'{ast.unparse(node)}' is not reversible on {describe_type(target_type)}",
                f"{'multiply' if kind == 'mul' else 'divide'} log numbers instead: "
                f"ly = rv.ancilla(rv.ulog(1.0)); ly {'*' if kind == 'mul' else '/'}= rv.ulog(x)",
            )
        if kind in ("add", "sub") and isinstance(target_type, TropicalType):
            raise ctx.error(
                node,
                f"'{ast.unparse(node)}' is not reversible: a tropical += is max, which forgets the smaller value",
                "tropical numbers are updated with *= and /=; compute a tropical sum into an ancilla: "
                "s = rv.ancilla(rv.tropical(0.0)); s *= a + b",
            )
        if kind in ("add", "sub") and is_product:
            raise ctx.error(node, "log numbers are updated with *= and /=")
        if isinstance(target, Part) and isinstance(node.target, ast.Attribute):
            check_part_update(node.target, node.value, ctx.error)
        bits = kind in ("add", "sub", "xor")  # modular: a uint64 constant's bits update an int64 alike
        getattr(fn, kind)(
            target, lambda: self.expr.compile(node.value, target_type, bits=bits, updating=node), ctx.loc(node)
        )

    def _assign(self, node: ast.Assign) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        if len(node.targets) != 1:
            raise ctx.error(node, "chained assignment is not reversible")
        target, value = node.targets[0], node.value
        if isinstance(value, ast.Call):
            callee = ctx.resolve(value.func)
            if callee in (markers.ancilla, markers.pop, markers.stack, markers.zeros):
                if not isinstance(target, ast.Name):
                    raise ctx.error(node, "allocate into a plain name")
                if fn.has(target.id):
                    raise ctx.error(
                        node,
                        f"'{target.id}' already exists",
                        "an ancilla needs a new name (or free the old one first)",
                    )
                self._allocation(node, target.id, callee, value)
                return
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            self._swap_assignment(node, target, value)
            return
        if (
            isinstance(value, ast.UnaryOp)
            and isinstance(value.op, ast.USub)
            and ast.unparse(value.operand) == ast.unparse(target)
        ):
            fn.neg(self.target(target), loc)
            return
        if isinstance(value, ast.Call):
            allocations = "a new variable is rv.ancilla(value), rv.zeros(shape), rv.stack(type) or rv.pop(s)"
            self._check_attribute_exists(value.func, allocations)
        new = isinstance(target, ast.Name) and not fn.has(target.id) and ctx.lookup_binding(target.id) is None
        # a call of math's or numpy's elementwise functions is a number
        callee = ctx.resolve(value.func) if isinstance(value, ast.Call) else None
        scalar = getattr(callee, "__module__", None) == "math" or isinstance(callee, np.ufunc)
        raise ctx.error(node, *_assignment_error(node, new, scalar))

    def _check_attribute_exists(self, node: ast.expr, hint: str | None = None) -> None:
        """A misspelt function of a module (``rv.ancilla_array``) is named
        as one, with the module's nearest names (``__all__`` too: revmlir
        imports its own on first use), not as whatever the statement it is
        in would otherwise be."""
        if not isinstance(node, ast.Attribute) or self.ctx.resolve(node) is not UNRESOLVED:
            return
        module = self.ctx.resolve(node.value)
        if not isinstance(module, types.ModuleType):
            return
        public = {name for name in (*getattr(module, "__all__", ()), *dir(module)) if not name.startswith("_")}
        near = [f"{ast.unparse(node.value)}.{name}" for name in difflib.get_close_matches(node.attr, sorted(public))]
        hints = [f"its nearest name{'s are' if len(near) > 1 else ' is'} {', '.join(near)}"] if near else []
        raise self.ctx.error(
            node,
            f"'{ast.unparse(node)}' does not exist: {module.__name__} has no '{node.attr}'",
            "; ".join([*hints, *([hint] if hint else [])]) or None,
        )

    def _allocation(self, node: ast.Assign, name: str, callee: Any, call: ast.Call) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        args = call.args
        if callee is markers.stack:
            if len(args) != 1:
                raise ctx.error(node, "rv.stack takes the element type: rv.stack(float)")
            fn.stack(name, _dtype(args[0], ctx), loc)
            return
        if callee is markers.pop:
            if len(args) != 1 or not isinstance(args[0], ast.Name):
                raise ctx.error(node, "rv.pop takes a stack: x = rv.pop(s)")
            fn.pop(args[0].id, name, loc)
            return
        if callee is markers.zeros:
            self._zeros(node, name, call)
            return
        if not 1 <= len(args) + len(call.keywords) <= 2 or any(k.arg != "dtype" for k in call.keywords):
            raise ctx.error(node, "rv.ancilla takes a value and optionally a type")
        dtype = None
        if len(args) == 2:
            dtype = _dtype(args[1], ctx)
        elif call.keywords and call.keywords[0].arg == "dtype":
            dtype = _dtype(call.keywords[0].value, ctx)
        value = self.expr.compile(args[0])
        if dtype is not None and value.type != dtype:
            value = fn.cast(value, dtype, loc)
        fn.alloc(name, value, None, loc)

    def _zeros(self, node: ast.Assign, name: str, call: ast.Call) -> None:
        """``a = rv.zeros(shape, dtype=float)``: the shape is a size or a
        tuple of sizes, integer expressions."""
        ctx = self.ctx
        usage = "rv.zeros takes a shape (a size or a tuple of sizes) and optionally dtype=float or int"
        if len(call.args) != 1 or any(k.arg != "dtype" for k in call.keywords):
            raise ctx.error(node, usage)
        shape = call.args[0]
        sizes = shape.elts if isinstance(shape, ast.Tuple) else [shape]
        if not sizes:
            raise ctx.error(node, "an ancilla array has at least one dimension", usage)
        dtype = _dtype(call.keywords[0].value, ctx) if call.keywords else _dtype(ast.Name("float"), ctx)
        if not isinstance(dtype, AnyFloat | IntegerType):
            raise ctx.error(node, f"ancilla arrays hold integers or floats, not {describe_type(dtype)}", usage)
        extents = []
        for size in sizes:
            value = self.expr.compile(size)
            if not isinstance(value.type, IntegerType | IndexType):
                raise ctx.error(size, f"the size '{ast.unparse(size)}' is not an integer", usage)
            extents.append(value)
        self.fn.zeros(name, extents, dtype, ctx.loc(node))

    def _swap_assignment(self, node: ast.Assign, targets: ast.Tuple, values: ast.Tuple) -> None:
        ctx = self.ctx
        left = [ast.unparse(t) for t in targets.elts]
        right = [ast.unparse(v) for v in values.elts]
        if len(left) != 2 or left != right[::-1]:
            raise ctx.error(
                node,
                f"'{ast.unparse(node)}' is not a swap",
                "exchange two places with a, b = b, a",
            )
        self._swap(node, *targets.elts)

    def _swap(self, node: ast.stmt, a: ast.expr, b: ast.expr) -> None:
        """Exchange two places, which must be two: a variable (or a part)
        swapped with itself would be consumed twice by one op."""
        first, second = self.target(a), self.target(b)
        if isinstance(first, str | Part) and first == second:
            raise self.ctx.error(
                node,
                f"'{ast.unparse(node)}' swaps {ast.unparse(a)} with itself",
                "a swap exchanges two different places; this one changes nothing: remove it",
            )
        self.fn.swap(first, second, self.ctx.loc(node))

    def _call_statement(self, node: ast.Expr, call: ast.Call) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        callee = ctx.resolve(call.func)
        args = call.args
        simple = {
            markers.swap: (2, lambda a: self._swap(node, a[0], a[1])),
            markers.neg: (1, lambda a: fn.neg(self.target(a[0]), loc)),
            markers.inc: (1, lambda a: fn.inc(self.target(a[0]), loc)),
            markers.dec: (1, lambda a: fn.dec(self.target(a[0]), loc)),
            markers.rot: (
                3,
                lambda a: fn.rot(self.target(a[0]), self.target(a[1]), lambda: self.expr.compile(a[2]), loc),
            ),
            markers.irot: (
                3,
                lambda a: fn.irot(self.target(a[0]), self.target(a[1]), lambda: self.expr.compile(a[2]), loc),
            ),
            markers.push: (2, lambda a: fn.push(self._name(a[0]), self._name(a[1]), loc)),
            markers.copy_push: (2, lambda a: fn.copy_push(self._name(a[0]), self.expr.compile(a[1]), loc)),
            markers.copy_pop: (2, lambda a: fn.copy_pop(self._name(a[0]), self.expr.compile(a[1]), loc)),
        }
        if callee in simple:
            count, emit = simple[callee]
            if len(args) != count or call.keywords:
                raise ctx.error(node, f"'{ast.unparse(call.func)}' takes {count} argument(s)")
            emit(args)
            if callee is markers.push:
                pushed = args[1]
                assert isinstance(pushed, ast.Name)  # emit read it as a variable
                self.ended[pushed.id] = node
            return
        if callee is markers.free:
            self._free(node, call)
            return
        if getattr(callee, "__revmlir_primitive__", False):
            self.expr.primitive_statement(call, callee)
            return
        function, mode, lanes = self._reversible_callee(call.func)
        if function is not None:
            layout = getattr(call, CALLEE_LAYOUT, None) or Layout((None,) * len(function.parameters))
            if (problem := layout.mismatch(function.parameters, function.hints)) is not None:
                raise ctx.error(node, f"{function.__name__}(): {problem}")
            if any(layout.structs):
                function = function.flattened(layout)  # structs passed whole, as their fields
            self._call_through_views(node, function, mode, call, lanes)
            return
        if callee is markers.view:
            raise ctx.error(
                node, "rv.view(x, g) is an argument of a call", "pass it to a reversible function: f(rv.view(x, g))"
            )
        if callee is builtins.print:
            raise ctx.error(node, "print is a host side effect", "wrap it in `with rv.safe():`")
        if (
            callee is UNRESOLVED
            and isinstance(call.func, ast.Name)
            and not (fn.has(call.func.id) or ctx.lookup_binding(call.func.id) is not None)
        ):
            raise ctx.error(
                node,
                f"unknown function '{call.func.id}'",
                "call @rv.reversible functions, or rv.* instructions",
            )
        self._check_attribute_exists(call.func)
        raise ctx.error(
            node,
            f"'{ast.unparse(call)}' is not a reversible statement",
            "call @rv.reversible functions, or rv.* instructions",
        )

    def _name(self, node: ast.expr) -> str:
        if not isinstance(node, ast.Name) or not self.fn.has(node.id):
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is not a variable")
        return node.id

    def _free(self, node: ast.Expr, call: ast.Call) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        if not 1 <= len(call.args) <= 2 or call.keywords:
            raise ctx.error(node, "rv.free takes a variable and optionally its value")
        name = self._name(call.args[0])
        var_type = fn.type_of(name)
        self.ended[name] = node
        if isinstance(var_type, StackType):
            if len(call.args) == 2:
                raise ctx.error(node, "a stack is freed without a value", f"rv.free({name}) checks that it is empty")
            if name in fn.arg_names:
                raise ctx.error(
                    node,
                    f"'{name}' is an argument stack; it goes back to the caller",
                    "free only stacks the function allocates (s = rv.stack(float))",
                )
            fn.free_stack(name, loc)
            return
        if isinstance(var_type, MemRefType):
            if len(call.args) == 2:
                raise ctx.error(
                    node, "an ancilla array is freed without a value", f"rv.free({name}) checks that it holds zeros"
                )
            if not fn.is_ancilla_array(name):
                raise ctx.error(
                    node,
                    f"'{name}' is an argument array; only ancillas, ancilla arrays (rv.zeros) and stacks can be freed",
                )
            fn.free_array(name, loc)
            return
        if len(call.args) == 2:
            value: Value = self.expr.compile(call.args[1])
        else:
            value = fn.const(1.0 if isinstance(var_type, LogType) else 0, var_type, loc)
        fn.free(name, value, loc)

    def _reversible_callee(self, node: ast.expr) -> tuple[Reversible | None, str, int]:
        """The function a call statement runs and how: ``"call"``,
        ``"uncall"`` (``~f``, ``f.inverse``), ``"adjoint"``
        (``rv.adjoint(f)``, ``rv.adjoint(f, lanes=L)``) or ``"unadjoint"``
        (``~rv.adjoint(f)``: ``@f.adj`` uncalled), and the lanes."""
        callee = self._derived(node)
        if isinstance(callee, InverseAdjoint):
            return callee.adjoint.function, "unadjoint", callee.adjoint.lanes
        if isinstance(callee, AdjointFunction):
            return callee.function, "adjoint", callee.lanes
        if isinstance(callee, Invertible) and not is_reversible(callee) and is_reversible(forward := ~callee):
            return forward, "uncall", 1  # ~f: f, run the other way
        if is_reversible(callee):
            return callee, "call", 1
        return None, "call", 1

    def _derived(self, node: ast.expr) -> Any:
        """The callable a callee expression makes, as Python makes it:
        each ``~`` or ``.inverse`` turns the direction of what it applies
        to (``~~f`` is ``f``), ``rv.adjoint(g)`` is the adjoint of whatever
        ``g`` makes, a name or path is what it is bound to.  Written in
        place or bound to a name, a chain is then the same callable, and
        refused (``_adjoint_of``) in the same words."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            return _turned(self._derived(node.operand))
        if isinstance(node, ast.Attribute) and node.attr == "inverse":
            return _turned(self._derived(node.value))
        if isinstance(node, ast.Call) and self.ctx.resolve(node.func) is adjoint:
            return self._adjoint_of(node)
        return self.ctx.resolve(node)

    def _adjoint_of(self, node: ast.Call) -> AdjointFunction:
        """``rv.adjoint(g)`` or ``rv.adjoint(g, lanes=L)`` written in a call
        statement, as the call in Python makes it: refused where ``g`` is
        not a ``@rv.reversible`` function, at ``g``."""
        if len(node.args) != 1 or any(k.arg != "lanes" for k in node.keywords):
            raise self.ctx.error(node, "rv.adjoint takes one @rv.reversible function (and lanes=)")
        callee = self._derived(node.args[0])
        if (problem := unsupported_adjoint(callee)) is not None:
            raise self.ctx.error(node.args[0], problem)
        if not is_reversible(callee):
            raise self.ctx.error(node.args[0], f"'{ast.unparse(node.args[0])}' is not a @rv.reversible function")
        return AdjointFunction(callee, self._lanes(node.keywords))

    def _lanes(self, keywords: list[ast.keyword]) -> int:
        """``lanes=L`` of ``rv.adjoint``: an integer known when compiling."""
        if not keywords:
            return 1
        node = keywords[0].value
        lanes = node.value if isinstance(node, ast.Constant) else self.ctx.resolve(node)
        if type(lanes) is not int or lanes < 1:
            raise self.ctx.error(node, f"lanes must be an integer ≥ 1 known when compiling, got '{ast.unparse(node)}'")
        return lanes

    def _call_through_views(self, node: ast.Expr, function: Reversible, mode: str, call: ast.Call, lanes: int) -> None:
        """A call with bijection views among its arguments (``rv.view(x, g)``,
        NiLang's ``x |> g``): ``g(x)`` gets the view, the call takes ``x``,
        ``(~g)(x)`` puts it back (SET-VIEW-BIJECTOR: the caller's ``x`` is
        ``~g`` of what the call left in the view)."""
        views: list[tuple[ast.expr, ast.expr, Reversible]] = []
        args: list[ast.expr] = []
        for arg in call.args:
            if isinstance(arg, ast.Call) and self.ctx.resolve(arg.func) is markers.view:
                views.append(self._view(arg))
                args.append(views[-1][0])
            else:
                args.append(arg)
        for place, g, bijection in views:
            self._call(node, bijection, "call", ast.copy_location(ast.Call(func=g, args=[place], keywords=[]), g))
        self._call(
            node,
            function,
            mode,
            ast.copy_location(ast.Call(func=call.func, args=args, keywords=call.keywords), call),
            lanes,
        )
        for place, g, bijection in reversed(views):
            self._call(node, bijection, "uncall", ast.copy_location(ast.Call(func=g, args=[place], keywords=[]), g))

    def _view(self, view: ast.Call) -> tuple[ast.expr, ast.expr, Reversible]:
        """The place and the bijection of ``rv.view(place, g)``: ``g`` a
        ``@rv.reversible`` function of one argument."""
        if len(view.args) != 2 or view.keywords:
            raise self.ctx.error(view, "rv.view takes a place and a bijection: rv.view(x, g)")
        place, g = view.args
        function, mode, _ = self._reversible_callee(g)
        if function is None or mode != "call" or len(function.parameters) != 1:
            raise self.ctx.error(
                g,
                f"the bijection '{ast.unparse(g)}' of a view must be a @rv.reversible function of one argument",
                "write a reversible function g(x) that updates x, and view through it: rv.view(x, g)",
            )
        return place, g, function

    def _call(self, node: ast.Expr, function: Reversible, mode: str, call: ast.Call, lanes: int = 1) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        params = function.parameters
        if call.keywords:
            raise ctx.error(
                node,
                f"{function.__name__} takes positional arguments only",
                f"write {function.__name__}({', '.join(params)})",
            )
        derived = mode in ("adjoint", "unadjoint")
        if len(call.args) != len(params) and not derived:
            # the name the source calls, where it is bound to ~f (or ~~f)
            callee = ast.unparse(call.func)
            named = callee if callee == function.__name__ else f"{callee}, which {mode}s {function.__name__},"
            raise ctx.error(
                node,
                f"{named} takes {len(params)} argument(s) ({', '.join(params)}), got {len(call.args)}",
            )
        targets: list[Target] = []
        temporaries: list[tuple[str, ast.expr]] = []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Name) and fn.has(arg.id) and ctx.lookup_binding(arg.id) is None:
                targets.append(arg.id)
            elif isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and fn.has(arg.value.id):
                targets.append(self.target(arg))
            elif isinstance(arg, ast.Attribute) and arg.attr in ("real", "imag"):
                targets.append(self.target(arg))
            else:
                # An expression argument lives in an ancilla for the call and
                # must come back unchanged (NiLang's semantics).
                temp = f"{function.__name__}_arg{index}_{arg.lineno}_{arg.col_offset}"
                fn.alloc(temp, self.expr.compile(arg), None, ctx.loc(arg))
                temporaries.append((temp, arg))
                targets.append(temp)
        for i, target in enumerate(targets):
            if isinstance(target, Element) and target.name in targets:
                raise ctx.error(
                    call.args[i],
                    f"{ast.unparse(call.args[i])} is passed to {function.__name__} beside '{target.name}' itself",
                    ALIASED_ARGUMENTS,
                )
            if isinstance(target, str) and targets.index(target) < i:
                if isinstance(fn.type_of(target), MemRefType | StackType):
                    hint = ALIASED_ARGUMENTS
                else:
                    hint = (
                        "a call takes each scalar it is passed and gives it back updated; "
                        "pass a second variable holding the same value"
                    )
                raise ctx.error(call.args[i], f"'{target}' is passed to {function.__name__} twice", hint)
        types = [self._argument_type(t) for t in targets]
        annotated = function.annotated_types()
        for i, (found, declared) in enumerate(zip(types, annotated)):
            if declared is not None and declared != found:
                raise ctx.error(
                    call.args[i],
                    f"argument '{params[i]}' of {function.__name__} is declared "
                    f"{describe_type(declared)}, got {describe_type(found)}",
                )
        if derived:
            name = self._adjoint(node, function, mode, call, types, lanes)
        else:
            name = self.module.request(function, types)
        fn.call(name, targets, loc, inverse=mode in ("uncall", "unadjoint"))
        for temp, arg in reversed(temporaries):
            fn.free(temp, self.expr.compile(arg), ctx.loc(arg))

    def _adjoint(
        self, node: ast.Expr, function: Reversible, mode: str, call: ast.Call, types: list[Attribute], lanes: int
    ) -> str:
        """``@f.adj`` for ``rv.adjoint(f)(args…, gradients…)`` (``@f.adjL``
        with ``lanes=L``: the gradients lane by lane), or for its inverse
        (``mode`` ``"unadjoint"``): ``f`` is specialised to the first
        arguments, and the gradients must have the types ``@f.adj`` takes
        for them.  Refusals name the callee as written, as Python's do."""
        derived = AdjointFunction(function, lanes)
        shown = (~derived if mode == "unadjoint" else derived).__name__
        params = function.parameters
        primal = types[: len(params)]
        carrying = [t for t in primal if gradient_type(t) is not None] * lanes
        if len(types) != len(params) + len(carrying):
            per_lane = f" per lane ({lanes} lanes)" if lanes > 1 else ""
            raise self.ctx.error(
                node,
                f"{shown} takes {len(params)} argument(s) "
                f"({', '.join(params)}) and then one gradient for each of the "
                f"{len(carrying) // lanes} that carry one{per_lane}, got {len(types)} value(s)",
            )
        for offset, (found, of) in enumerate(zip(types[len(params) :], carrying)):
            expected = gradient_type(of)
            if found != expected:
                raise self.ctx.error(
                    call.args[len(params) + offset],
                    f"this gradient of {shown} must be {describe_type(expected)}, got {describe_type(found)}",
                )
        name = self.module.request(function, primal)
        requested = self.module.adjoints.setdefault(lanes, [])
        if name not in requested:
            requested.append(name)
        return adjoint_name(name, lanes)

    def _argument_type(self, target: Target) -> Attribute:
        if isinstance(target, str):
            return self.fn.type_of(target)
        return self._target_type(target)

    def _condition(self, test: ast.expr) -> tuple[ast.expr, ast.expr | None]:
        if isinstance(test, ast.Call) and self.ctx.resolve(test.func) is markers.cond:
            bound = dict(zip(("pre", "post"), test.args))
            for keyword in test.keywords:
                if keyword.arg not in ("pre", "post") or keyword.arg in bound:
                    bound.clear()
                    break
                bound[keyword.arg] = keyword.value
            if len(test.args) > 2 or "pre" not in bound:
                raise self.ctx.error(
                    test, "rv.cond takes a precondition and a postcondition", "write rv.cond(pre, post=...)"
                )
            return bound["pre"], bound.get("post")
        return test, None

    def _if(self, node: ast.If) -> None:
        pre, post = self._condition(node.test)
        self.fn.if_(
            pre=lambda: self.expr.compile(pre),
            then=lambda: self.statements(node.body),
            else_=lambda: self.statements(node.orelse),
            post=(lambda: self.expr.compile(post)) if post is not None else None,
            loc=self.ctx.loc(node),
        )

    def _while(self, node: ast.While) -> None:
        ctx = self.ctx
        pre, post = self._condition(node.test)
        if post is None:
            raise ctx.error(
                node,
                "a reversible while loop needs a postcondition",
                "write `while rv.cond(pre, post):` where post is false before the loop and true after every iteration",
            )
        if node.orelse:
            raise ctx.error(node, "while … else is not supported")
        self.fn.while_(
            pre=lambda: self.expr.compile(pre),
            post=lambda: self.expr.compile(post),
            body=lambda: self.statements(node.body),
            loc=ctx.loc(node),
        )

    def _for(self, node: ast.For) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        if not isinstance(node.target, ast.Name):
            raise ctx.error(node, *base.ONE_LOOP_VARIABLE)
        if node.orelse:
            raise ctx.error(node, "for … else is not supported")
        iterator, reverse = node.iter, False
        if (
            isinstance(iterator, ast.Call)
            and ctx.resolve(iterator.func) is builtins.reversed
            and len(iterator.args) == 1
        ):
            iterator, reverse = iterator.args[0], True
        kind = ctx.resolve(iterator.func) if isinstance(iterator, ast.Call) else None
        parallel = kind is markers.prange
        if parallel and reverse:
            raise ctx.error(
                node,
                f"cannot loop over '{ast.unparse(node.iter)}': a parallel loop has no order",
                "loop over rv.prange(...) itself",
            )
        if kind is markers.checkpointed:
            raise ctx.error(
                node,
                "rv.checkpointed() marks loops of @rv.ordinary functions, whose gradients keep a tape; "
                "a reversible function's gradient runs it backwards instead",
                "loop over range(...) itself",
            )
        if kind not in (builtins.range, markers.prange):
            raise ctx.error(
                node,
                f"cannot loop over '{ast.unparse(node.iter)}'",
                "loop over range(...), reversed(range(...)) or rv.prange(...)",
            )
        assert isinstance(iterator, ast.Call)
        if not (1 <= len(iterator.args) <= 3 and not iterator.keywords):
            name = "rv.prange" if parallel else "range"
            raise ctx.error(
                node,
                f"{name}() takes one to three integers: stop, or start, stop and an optional step",
                f"write {name}(n) or {name}(start, stop, step)",
            )
        bounds = list(iterator.args)
        if len(bounds) == 1:
            bounds.insert(0, ast.Constant(0))
        lb, ub = self.expr.compile(bounds[0]), self.expr.compile(bounds[1])
        for bound_node, bound in ((bounds[0], lb), (bounds[1], ub)):
            if not isinstance(bound.type, IntegerType | IndexType):
                raise ctx.error(
                    bound_node, f"range() needs integers, got {describe_type(bound.type)}", "convert it: int(...)"
                )
        step_node = bounds[2] if len(bounds) == 3 else ast.Constant(1)
        step_value = self.expr.folded_int(step_node)
        # range(a, b, s) as k in range(len(range(a, b, s))) visiting a + k·s,
        # where s is negative: no index is computed past the range, so
        # nothing wraps (decision 115)
        position: Callable[[Value], Value] | None = None
        checked_after: Callable[[], None] | None = None
        if step_value is not None and step_value < 0:
            first, stride = fn.index(lb, loc), -step_value

            def position(k: Value) -> Value:
                return fn.binary("sub", first, fn.binary("mul", k, stride, loc), loc)

            lb = fn.const(0, IndexType(), loc)
            ub = fn.descending_count(first, fn.index(ub, loc), stride, loc)
            step = fn.const(1, IndexType(), loc)
        elif step_value == 0:
            raise ctx.error(node, ZERO_STEP)
        else:
            step = self.expr.compile(step_node)
            if not isinstance(step.type, IntegerType | IndexType):
                raise ctx.error(
                    step_node, f"range() needs integers, got {describe_type(step.type)}", "convert it: int(...)"
                )
            if step_value is None and not parallel:
                lb, ub, step, position = self._either_direction(lb, ub, step, loc, ctx.loc(iterator))
            elif step_value is None:
                # a parallel loop keeps its bounds and step, which a kernel's
                # launch reads: a run-time step must be positive, said at
                # the call in the source's words before the loop runs, in
                # either direction (an assertion after it runs first
                # backwards)
                call = ctx.loc(iterator)
                positive = fn.compare("gt", step, 0, loc)

                def check() -> None:
                    fn.emit(cf.AssertOp(positive.ssa, StringAttr(PRANGE_STEP)), call)

                fn.safe(check, "forward", call)
                checked_after = check
        name = node.target.id

        def body(index: Value) -> None:
            if position is not None:
                index = position(index)
            ctx.bindings.append({name: index})
            try:
                self.statements(node.body)
            finally:
                ctx.bindings.pop()

        try:
            fn.for_(lb, ub, step, body, reverse=reverse, loc=loc, parallel=parallel, index_name=name)
        except BuildError as error:
            # a parallel loop's update by a call stands at the call
            if parallel and isinstance(where := error.loc, FileLineColLoc):
                raise ReversibleSyntaxError(
                    error.message, where.filename.data, where.line.data, where.column.data
                ) from None
            raise
        if checked_after is not None:
            fn.safe(checked_after, "inverse", ctx.loc(iterator))

    def _either_direction(
        self, lb: Value, ub: Value, step: Value, loc: Loc, call: Loc
    ) -> tuple[Value, Value, Value, Callable[[Value], Value]]:
        """``range(a, b, s)`` of a step known only at run time, of either
        sign, as Python's (``run_time_range``), the loop's step 1.  A zero
        ``s`` stops the run at the ``range`` ``call`` with Python's words,
        an assertion run forwards and backwards (the loop's own refusal of
        a zero step would speak of ``rev.for``)."""
        fn = self.fn
        count, nonzero, position = run_time_range(fn, lb, ub, step, loc)
        fn.safe(lambda: fn.emit(cf.AssertOp(nonzero.ssa, StringAttr(ZERO_STEP)), call), "both", call)
        return fn.const(0, IndexType(), loc), count, fn.const(1, IndexType(), loc), position

    def _with(self, node: ast.With) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        if len(node.items) != 1 or not isinstance(node.items[0].context_expr, ast.Call):
            raise ctx.error(
                node, "use `with rv.inverse():`, `with rv.safe():`, `with rv.nocheck():` or `with rv.routine() as r:`"
            )
        call = node.items[0].context_expr
        assert isinstance(call, ast.Call)
        kind = ctx.resolve(call.func)
        if kind is markers.inverse:
            fn.inverse(lambda: self.statements(node.body), loc)
        elif kind is markers.safe:
            when = "forward"
            options = [*((None, a) for a in call.args), *((k.arg, k.value) for k in call.keywords)]
            for arg, value in options:
                if len(options) == 1 and arg in (None, "when") and isinstance(value, ast.Constant):
                    when = str(value.value)
                else:
                    raise ctx.error(
                        node,
                        f"'with {ast.unparse(call)}': rv.safe takes one constant, when='forward', 'inverse' or 'both'",
                    )
            if when not in ("forward", "inverse", "both"):
                raise ctx.error(node, f"rv.safe(when={when!r}): use 'forward', 'inverse' or 'both'")
            fn.safe(lambda: SafeBlockCompiler(ctx, self.expr).statements(node.body), when, loc)
        elif kind is markers.nocheck:
            block = fn.current_block
            first = block.last_op
            self.statements(node.body)
            _strip_checks(block, first)
        else:
            raise ctx.error(node, f"'with {ast.unparse(call)}' is not a reversible block")


_NEVER_REVERSIBLE = (*base.NEVER_COMPILED, ast.Break, ast.Continue)


def check_structure(tree: ast.FunctionDef, error: Callable[[ast.AST, str, str | None], Exception]) -> None:
    """Errors that need no types, reported when the function is decorated."""
    checked = {id(s) for block in ast.walk(tree) if is_safe_block(block) for s in block.body}
    for node in ast.walk(tree):
        if node is tree:
            continue
        if isinstance(node, _NEVER_REVERSIBLE) and not (isinstance(node, ast.Assert) and id(node) in checked):
            kind = type(node).__name__.lower()
            hint = (
                "assert inside `with rv.safe():`"
                if isinstance(node, ast.Assert)
                else "see the statement table in docs/python.md"
            )
            raise error(node, f"'{kind}' statements are not reversible", hint)
        if isinstance(node, ast.Return) and node.value is not None:
            raise error(node, "a reversible function returns all its arguments, updated", "remove the return value")
        if isinstance(node, ast.AugAssign) and type(node.op) not in _UPDATES:
            raise error(
                node,
                f"'{ast.unparse(node)}' is not reversible",
                "only +=, -=, ^= (and *=, /= on log numbers) update a variable",
            )
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and _reads(node.value, node.target.id):
            # the verifier's [self-read] rule, said in the user's Python
            # rather than in the IR's ops and values, and at decoration
            name = node.target.id
            copy = f"{name}_old"
            raise error(
                node,
                f"'{ast.unparse(node)}' reads {name}, the variable it updates, which is not reversible",
                f"read a copy of its old value: {copy} = rv.ancilla({name}); {_renamed(node, name, copy)} "
                f"(running backwards needs that value: free {copy} where it is known, rv.free({copy}, value))",
            )
        if isinstance(node, ast.Assign) and not isinstance(node.value, ast.Call | ast.Tuple | ast.UnaryOp):
            target = node.targets[0]
            # before types are known, only arithmetic is known to be a number
            scalar = isinstance(node.value, ast.Constant | ast.BinOp | ast.BoolOp | ast.Compare | ast.IfExp)
            new = isinstance(target, ast.Name) and _new_name(tree, target)
            raise error(node, *_assignment_error(node, new, scalar))


def _new_name(tree: ast.FunctionDef, target: ast.Name) -> bool:
    """Whether ``target`` names no parameter of ``tree`` and nothing
    ``tree`` binds before it: the first assignment of a variable."""
    arguments = tree.args
    if target.id in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}:
        return False
    where = (target.lineno, target.col_offset)
    return not any(
        isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Store)
        and node.id == target.id
        and (node.lineno, node.col_offset) < where
        for node in ast.walk(tree)
    )


def _assignment_error(node: ast.Assign, new: bool, scalar: bool) -> tuple[str, str]:
    """The message and hint for an assignment that is no allocation, swap
    or negation: one that would overwrite a variable (``new`` false), or
    one that makes a new variable as Python does, where reversible code
    makes an ancilla, which starts from a value and is freed at one.  Only
    a number (``scalar``: known to be one) is an ancilla of its value:
    ``rv.ancilla`` of an array, a stack or a function is refused, so the
    hint names the allocation of each kind instead."""
    name, value = ast.unparse(node.targets[0]), ast.unparse(node.value)
    if new:
        message = f"'{ast.unparse(node)}' makes a new variable {name}; in reversible code a new variable is an ancilla"
        if not scalar:
            return (
                message,
                f"make it by its kind: {name} = rv.ancilla(number) for a number, {name} = rv.zeros(shape) "
                f"filled with += for an array, {name} = rv.stack(type) for a stack",
            )
        return (
            message,
            f"write {name} = rv.ancilla({value}) and free it where its value is known, rv.free({name}, {value}) "
            f"(an array of zeros: {name} = rv.zeros(shape))",
        )
    return (
        f"'{ast.unparse(node)}' overwrites {name}, which is not reversible",
        f"accumulate instead ({name} += …), or allocate a new variable: {name} = rv.ancilla(0.0); {name} += …",
    )


def _reads(expression: ast.expr, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(expression))


def _renamed(update: ast.AugAssign, name: str, copy: str) -> str:
    """``update`` reading ``copy`` where it reads ``name``: the statement a
    hint suggests, of whatever type ``name`` has."""
    value = ast.parse(ast.unparse(update.value), mode="eval").body
    for node in ast.walk(value):
        if isinstance(node, ast.Name) and node.id == name:
            node.id = copy
    return ast.unparse(ast.AugAssign(update.target, update.op, value))


def _strip_checks(block: Any, after: Operation | None) -> None:
    op = block.first_op if after is None else after.next_op
    while op is not None:
        for nested in op.walk():
            if has_switchable_checks(nested):
                set_checks(nested, False)
        op = op.next_op
