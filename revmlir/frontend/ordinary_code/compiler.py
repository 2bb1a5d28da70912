"""Ordinary Python → ordinary IR (``func``, ``scf``, ``arith``, ``math``,
``memref``), the input ``reversibilize`` takes (docs/design.md,
"Reversibilize").

A variable is a name for the SSA value last assigned to it, as in any SSA
construction: re-assignment rebinds the name, element writes are
``memref.store``, and structured control flow carries the names its body
re-assigns (``scf.for``/``scf.while`` iteration arguments, ``scf.if``
results).  Expressions are those of reversible Python (the same
``ExpressionCompiler``) plus calls of other ``@rv.ordinary`` functions.
Anything else is a ``ReversibleSyntaxError`` at the user's line with a hint.
"""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, TypeGuard, TypeVar, cast

import numpy as np
from xdsl.dialects import cf, func, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from revmlir.ad.checkpointed import CHECKPOINT_ATTR, SPLIT_ATTR
from revmlir.builder import ALIASED_ARGUMENTS, BuildError, ExpressionBuilder, Loc, Operand, Value
from revmlir.checkpoint.cursor import MAX_COUNT
from revmlir.dialects.ad import ScheduleAttr
from revmlir.dialects.primitives import ExternOp, is_scalar_type
from revmlir.frontend.base import compilation as base
from revmlir.frontend.base import markers
from revmlir.frontend.base.errors import ReversibleSyntaxError
from revmlir.frontend.base.expressions import (
    SCALAR_FUNCTIONS,
    TOO_DEEP,
    UNRESOLVED,
    Context,
    ExpressionCompiler,
    Folded,
)
from revmlir.frontend.base.ranges import ZERO_STEP, run_time_range
from revmlir.frontend.base.source import Source
from revmlir.frontend.base.structs import CALLEE_LAYOUT, Layout
from revmlir.frontend.base.types import describe_type
from revmlir.frontend.ordinary_code.results import (
    RESULT_ANNOTATIONS,
    UnknownResults,
    declared_results,
    describe_results,
    returned_values,
)
from revmlir.kept_answers import ir_unchanged
from revmlir.reachability import drop_unreached_functions

Key = tuple[int, tuple[Attribute, ...]]
"""A specialisation: ``id`` of the function and its argument types."""


class Ordinary(Protocol):
    """What the compiler reads of an ``@rv.ordinary`` function
    (``revmlir.frontend.ordinary_code.functions``, which compiles itself with this
    module): recognised by its ``__revmlir_ordinary__`` marker."""

    __revmlir_ordinary__: bool
    pyfunc: Callable[..., Any]
    source: Source
    hints: dict[str, Any]

    @property
    def __name__(self) -> str: ...

    @property
    def parameters(self) -> list[str]: ...

    def flattened(self, layout: Layout) -> Ordinary: ...


def is_ordinary(value: object) -> TypeGuard[Ordinary]:
    """Whether ``value`` is an ``@rv.ordinary`` function."""
    return getattr(value, "__revmlir_ordinary__", False) is True


class Merged(NamedTuple):
    """A variable's type where paths meet (``OrdinaryBuilder.merged``)."""

    type: Attribute
    weak: bool
    stand_in: bool
    """Whether it stands for a value a postponed error left unknown, as
    the values met do (``OrdinaryBuilder.stand_ins``)."""


Iteration = tuple[list[Block], Block, list[SSAValue]]
"""A loop's blocks built for its carried types: every block, the one
that ends an iteration, and the carried values it ends with."""


class OrdinaryBuilder(ExpressionBuilder):
    """Builds one ``func.func`` from named variables (see the module
    docstring).  Python's ``int`` is ``i64`` throughout: values of type
    ``index`` (loop variables, array sizes) are converted when assigned."""

    def __init__(
        self,
        name: str,
        args: Sequence[tuple[str, Attribute]],
        loc: Loc = None,
    ):
        self.name = name
        self.arg_types = [t for _, t in args]
        super().__init__(Block(arg_types=self.arg_types), [a for a, _ in args], loc)
        self._entry = self.current_block
        self.retyped = 0
        """How many weak values took the type of a value they met (``_weakly``)."""
        self._postponed: list[list[ReversibleSyntaxError]] = []
        """Per loop body being built (innermost last), the errors it
        postponed (``stand_ins``)."""
        self._stand_ins: set[SSAValue] = set()
        """The values that stand for those of an error postponed, and
        arithmetic of them and weak values only (``_of_stand_ins``), and
        where they meet (``merged``)."""

    def is_array(self, name: str) -> bool:
        return self.has(name) and isinstance(self.type_of(name), MemRefType)

    def assign(self, name: str, value: Value, loc: Loc = None) -> None:
        if isinstance(value.type, IndexType):
            value = self.cast(value, i64, loc)
        self._define(name, value.ssa)

    def store(self, name: str, indices: Sequence[Value], value: Value, loc: Loc = None) -> None:
        array = self._current(name, loc)
        assert isinstance(array.type, MemRefType)
        element = array.type.element_type
        if value.type != element:
            if isinstance(value.type, AnyFloat) and not isinstance(element, AnyFloat):
                raise BuildError(
                    f"cannot store {describe_type(value.type)} into '{name}', an array of {describe_type(element)}",
                    loc,
                )
            value = self.fitted(value, element, loc)
        self.emit(memref.StoreOp.get(value.ssa, array, [self.index(i, loc) for i in indices]), loc)

    def _branch(self, body: Callable[[], None], names: Sequence[str]) -> tuple[Block, dict[str, SSAValue]]:
        """Build one branch of an ``if``; also the final values of those of
        ``names`` it ends with."""
        block = Block()
        with self._nested(block):
            body()
            return block, {n: self._current(n, None) for n in names if self.has(n)}

    def _of_stand_ins(self, result: Value, *operands: Operand) -> Value:
        """``result``, a stand-in (``stand_ins``) where its type comes of
        its ``operands`` and they are stand-ins and weak values only: a
        stand-in plus ``1`` knows no more of its type than the stand-in.
        Only arithmetic (``binary``, ``unary``, ``select``) takes its type
        of its operands so: a comparison is ``i1``, a call's results and an
        explicit conversion have the types they name, and an ``if``'s
        results are typed by its branches (``merged``)."""
        if any(self._stands_in(o) for o in operands) and all(self._stands_in(o) or self.is_weak(o) for o in operands):
            self._stand_ins.add(result.ssa)
        return result

    def _stands_in(self, value: Operand) -> bool:
        return isinstance(value, Value | SSAValue) and self.is_stand_in(value)

    def binary(self, kind: str, a: Operand, b: Operand, loc: Loc = None) -> Value:
        return self._of_stand_ins(super().binary(kind, a, b, loc), a, b)

    def unary(self, kind: str, a: Operand, loc: Loc = None) -> Value:
        return self._of_stand_ins(super().unary(kind, a, loc), a)

    def select(self, cond: Operand, a: Operand, b: Operand, loc: Loc = None) -> Value:
        return self._of_stand_ins(super().select(cond, a, b, loc), a, b)

    def is_stand_in(self, value: Value | SSAValue) -> bool:
        """Whether ``value`` stands for one that a postponed error left
        unknown (``stand_ins``)."""
        return (value.ssa if isinstance(value, Value) else value) in self._stand_ins

    def joined_type(self, x: SSAValue, y: SSAValue) -> Attribute | None:
        """The builder's rule, below which a stand-in is (``stand_ins``):
        it takes the other value's type, whatever that is, int types too."""
        if x in self._stand_ins:
            return y.type
        if y in self._stand_ins:
            return x.type
        return super().joined_type(x, y)

    def _weakly(self, value: SSAValue, other: Attribute) -> Attribute | None:
        """The builder's rule for arithmetic (``_promote``), counting the
        weak values that took another type (``retyped``), which a loop's
        body built again with a carried variable strong could type
        otherwise (``_carried``)."""
        found = super()._weakly(value, other)
        if found is not None:
            self.retyped += 1
        return found

    def merged(self, a: SSAValue, b: SSAValue) -> Merged | None:
        """The type, and whether it is weak, of a variable that is ``a`` on
        one path and ``b`` on another (after the branches of an ``if``;
        before a loop and after its body), as JAX types a value of either
        (``jnp.where``): the type arithmetic of the two computes in
        (``joined_type``: a weak value takes the other's float type, a
        float meets a wider one at the wider, an integer a float at the
        float), weak where both are; or None where arithmetic refuses them
        too.  Unlike JAX's, a weak int meeting an ``int32`` is an ``int64``,
        as in arithmetic: a Python ``int`` is an ``int64`` here.
        A weak value taking the other's type counts in ``retyped``
        (``_weakly``) as in arithmetic, also inside an inner ``if`` or
        loop: built again with the enclosing loop's carried variable
        strong, that merge may type otherwise (``if c: t = total`` beside
        ``else: t = x32[i]`` is ``float32`` while ``total`` is weak, ``f64``
        once it is a strong ``f64``).  A stand-in (``stand_ins``) takes
        the other value's type and weakness; two stand-ins meet as values
        of their types would, and are a stand-in, which knows no more of
        its type than they do (``t = g(s)`` in both branches, or carried
        into an inner loop, still takes the type of an ``int32`` it meets)."""
        weak = self.is_weak(a) and self.is_weak(b)
        if a in self._stand_ins and b in self._stand_ins:
            type = super().joined_type(a, b)
            return None if type is None else Merged(type, weak, True)
        for x, y in ((a, b), (b, a)):
            if x in self._stand_ins:
                return Merged(y.type, self.is_weak(y), False)
        type = self.joined_type(a, b)
        return None if type is None else Merged(type, weak, False)

    def _as(self, value: SSAValue, type: Attribute, block: Block, loc: Loc) -> SSAValue:
        """``value`` converted to ``type`` at the end of ``block``."""
        with self._nested(block):
            return self.cast(Value(self, value), type, loc).ssa

    def if_(
        self,
        condition: Value,
        then: Callable[[], None],
        else_: Callable[[], None],
        names: Sequence[str],
        loc: Loc = None,
    ) -> None:
        """``if``/``else``; of ``names``, those that both branches end with
        (assigned there or before) are the ``scf.if``'s results, typed as
        ``merged`` types them."""
        (then_block, then_values), (else_block, else_values) = (self._branch(then, names), self._branch(else_, names))
        merged = [n for n in then_values if n in else_values]
        types: list[Merged] = []
        for name in merged:
            if (found := self.merged(then_values[name], else_values[name])) is None:
                a, b = then_values[name].type, else_values[name].type
                raise BuildError(
                    f"'{name}' is {describe_type(a)} after one branch and "
                    f"{describe_type(b)} after the other, which do not mix; give it one type in both",
                    loc,
                )
            types.append(found)
        for block, values in ((then_block, then_values), (else_block, else_values)):
            yielded = [self._as(values[n], t, block, loc) for n, (t, *_) in zip(merged, types, strict=True)]
            block.add_op(_locate(scf.YieldOp(*yielded), loc))
        op = self.emit(scf.IfOp(condition.ssa, [t for t, *_ in types], Region(then_block), Region(else_block)), loc)
        self._define_all(merged, op.results, types)

    def _define_all(self, names: Sequence[str], values: Sequence[SSAValue], types: Sequence[Merged]) -> None:
        """Name ``values`` (a structured op's results or a block's
        arguments), weak and stand-ins where ``types`` says."""
        for name, value, (_, weak, stand_in) in zip(names, values, types, strict=True):
            if weak:
                self._weak.add(value)
            if stand_in:
                self._stand_ins.add(value)
            self._define(name, value)

    def _carried(
        self, carried: Sequence[str], build: Callable[[list[Merged]], Iteration], loc: Loc
    ) -> tuple[list[SSAValue], list[Merged], list[Block]]:
        """A loop carrying ``carried``: ``build`` makes its blocks for the
        carried types and weakness (the ``Iteration``).  A carried
        variable's type is ``merged``'s of its value before the loop and
        after the body, which may be another type than the one it starts
        with (``total = 0.0`` summing ``float32``s is ``float32``, as in
        JAX): the blocks are then built again with that type, until none
        changes (``merged`` only raises a type in a finite lattice: weak to
        strong, narrower to wider, an int to a float, so a few builds at
        most).  Where every carried variable
        comes out strong, of the type it went in with, and no weak value
        took another type in the body, a second build would be the same:
        the first is kept (``total = 0.0`` summing ``f64``s is built once).
        One still weak is built again: its weakness may have come from
        another's that has turned strong (``s = total`` before ``total``
        turns strong leaves ``s`` weak after the first build only).
        Returns the values before the loop converted to their types, the
        types, and the blocks, the iteration's ending with its ``scf.yield``."""
        initial = [self._current(n, loc) for n in carried]
        types = [Merged(v.type, self.is_weak(v), v in self._stand_ins) for v in initial]
        while True:
            retyped = self.retyped
            (blocks, block, final), postponed = self._tentatively(build, types)
            weakness_typed_nothing = self.retyped == retyped
            args = block.args[len(block.args) - len(carried) :]
            found = [self.merged(arg, value) for arg, value in zip(args, final, strict=True)]
            for name, arg, value, merged in zip(carried, args, final, found, strict=True):
                if merged is None:
                    raise _noting(
                        BuildError(
                            f"'{name}' is {describe_type(arg.type)} before the loop and "
                            f"{describe_type(value.type)} after its body, which do not mix; "
                            "give it one type before the loop and in its body",
                            loc,
                        ),
                        postponed,
                    )
            joined = [m for m in found if m is not None]  # none is None: refused above
            if joined == types:
                break
            if weakness_typed_nothing and joined == [Merged(t, False, stand_in) for t, _, stand_in in types]:
                types = joined  # only weak variables turned strong: a second build would be the same
                break
            types = joined
        self._keep(postponed)
        if not self._postponed:
            self._stand_ins.clear()  # the builds thrown away; the one kept has none
        yielded = [self._as(value, t, block, loc) for value, (t, *_) in zip(final, types, strict=True)]
        block.add_op(_locate(scf.YieldOp(*yielded), loc))
        return [self.cast(Value(self, v), t, loc).ssa for v, (t, *_) in zip(initial, types, strict=True)], types, blocks

    def _tentatively(
        self, build: Callable[[list[Merged]], Iteration], types: list[Merged]
    ) -> tuple[Iteration, list[ReversibleSyntaxError]]:
        """``build(types)``, which ``_carried`` may throw away, and the
        errors it postponed (``stand_ins``).  An error it raises is its
        own, not one of a stand-in (those are postponed too): it is
        reported, noting the first postponed one, which may explain it."""
        self._postponed.append([])
        try:
            return build(types), self._postponed[-1]
        except (BuildError, ReversibleSyntaxError) as error:
            raise _noting(error, self._postponed[-1])
        finally:
            self._postponed.pop()

    def _keep(self, postponed: list[ReversibleSyntaxError]) -> None:
        """The build of a loop body that settled its carried types: the
        errors it postponed are those of the loop, reported here, or, in
        the body of an enclosing loop, postponed with that one's build,
        which may still be thrown away."""
        if postponed and not self._postponed:
            raise postponed[0]
        if postponed:
            self._postponed[-1].extend(postponed)

    def stand_ins(self, error: ReversibleSyntaxError, count: int, loc: Loc) -> list[Value]:
        """The values of an expression that raised ``error`` for the types
        of its operands: a call whose callee does not compile for them, a
        primitive's argument of another type than its parameter's, an
        operation on a stand-in.  Inside a loop body, whose build may be
        thrown away (the final build may have other types there), the
        error is postponed with the build (``_keep``) and ``count`` stand-ins
        are the values: weak int zeros, but below every type
        (``joined_type``, ``merged``: they take the type and weakness of
        what they meet, an ``int32`` too), so that the loop's other values
        still find the carried types; the build is then either thrown away
        or its first error reported.  Elsewhere ``error`` is raised."""
        if not self._postponed:
            raise error
        self._postponed[-1].append(error)
        values = [self.const(0, None, loc) for _ in range(count)]
        self._stand_ins.update(v.ssa for v in values)
        return values

    def _loop_body(
        self, block: Block, carried: Sequence[str], types: Sequence[Merged], body: Callable[[], None]
    ) -> list[SSAValue]:
        """Build one iteration into ``block``, whose last arguments are the
        ``carried`` variables (weak where ``types`` says); returns the
        values it ends with."""
        with self._nested(block):
            self._define_all(carried, block.args[len(block.args) - len(carried) :], types)
            body()
            return [self._current(n, None) for n in carried]

    def for_(
        self,
        lb: Value,
        ub: Value,
        step: Value,
        body: Callable[[Value], None],
        carried: Sequence[str],
        loc: Loc = None,
        schedule: ScheduleAttr | None = None,
        split: str | None = None,
    ) -> None:
        """``scf.for`` over ``range(lb, ub, step)`` (``step > 0``) carrying
        the variables ``carried`` (typed by ``_carried``); ``body`` gets the
        loop variable.  A ``schedule`` becomes the loop's ``checkpoint``
        attribute, which ``reversibilize`` carries to the ``rev.for``;
        ``split = "work"`` asks for split points at primitive steps
        (``SPLIT_ATTR``)."""

        def build(types: list[Merged]) -> Iteration:
            block = Block(arg_types=[IndexType(), *(t for t, *_ in types)])
            index = Value(self, block.args[0])
            return [block], block, self._loop_body(block, carried, types, lambda: body(index))

        initial, types, (block,) = self._carried(carried, build, loc)
        bounds = [self.index(v, loc) for v in (lb, ub, step)]
        op = self.emit(scf.ForOp(*bounds, initial, Region(block)), loc)
        if schedule is not None:
            op.attributes[CHECKPOINT_ATTR] = schedule
        if split == "work":
            op.attributes[SPLIT_ATTR] = StringAttr(split)
        self._define_all(carried, op.results, types)

    def while_(
        self,
        condition: Callable[[], Value],
        body: Callable[[], None],
        carried: Sequence[str],
        loc: Loc = None,
    ) -> None:
        """``scf.while`` carrying the variables ``carried`` (typed by
        ``_carried``): the condition is evaluated on them before every
        iteration."""

        def build(types: list[Merged]) -> Iteration:
            before = Block(arg_types=[t for t, *_ in types])
            with self._nested(before):
                self._define_all(carried, before.args, types)
                test = condition()
                before.add_op(_locate(scf.ConditionOp(test.ssa, *before.args), loc))
            after = Block(arg_types=[t for t, *_ in types])
            return [before, after], after, self._loop_body(after, carried, types, body)

        initial, types, (before, after) = self._carried(carried, build, loc)
        op = self.emit(scf.WhileOp(initial, [t for t, *_ in types], Region(before), Region(after)), loc)
        self._define_all(carried, op.results, types)

    def call(
        self,
        callee: str,
        args: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        loc: Loc = None,
        weak: Sequence[bool] = (),
    ) -> list[Value]:
        """``func.call``; ``weak`` says which results are weak (a recursive
        call's, ``ModuleCompiler.weak``)."""
        op = self.emit(func.CallOp(callee, args, result_types), loc)
        if weak:
            self._weak.update(r for r, w in zip(op.results, weak, strict=True) if w)
        return [Value(self, r) for r in op.results]

    def continue_with(self, branch: Callable[[], None], names: Sequence[str]) -> None:
        """Go on as if only ``branch`` ran, with the values of ``names`` it
        ends with: how a probing compile, which is only good for the types
        its return gets, takes an ``if`` one of whose branches never returns
        (``revmlir.frontend.ordinary_code.results``).  The branch's ops
        move into the current block, where its values then are: the names
        defined from them are read after the branch, which a block of its
        own would have ended."""
        block, values = self._branch(branch, names)
        for op in list(block.ops):
            op.detach()
            self.current_block.add_op(op)
        for name, value in values.items():
            self._define(name, value)

    def finish(self, results: Sequence[Value], loc: Loc = None) -> func.FuncOp:
        """Return ``results`` and close the function."""
        values = [self.cast(r, i64, loc) if isinstance(r.type, IndexType) else r for r in results]
        self.emit(func.ReturnOp(*(v.ssa for v in values)), loc)
        function = func.FuncOp(self.name, (self.arg_types, [v.type for v in values]), Region(self._entry))
        return _locate(function, loc or self.loc)


_OpT = TypeVar("_OpT", bound=Operation)
_ErrorT = TypeVar("_ErrorT", bound=Exception)


_POSTPONED_NOTE = "the loop's body also postponed this error: "


def _noting(error: _ErrorT, postponed: Sequence[ReversibleSyntaxError]) -> _ErrorT:
    """``error`` of a loop body's build, noting the first error the build
    postponed (``OrdinaryBuilder.stand_ins``), whose stand-ins may have
    led to it.  Once: an error out of an inner loop's body passes through
    the builds of the loops around it, and its innermost loop's postponed
    error is the nearest explanation."""
    if postponed and not any(note.startswith(_POSTPONED_NOTE) for note in getattr(error, "__notes__", ())):
        error.add_note(f"{_POSTPONED_NOTE}{postponed[0]}")
    return error


def _locate(op: _OpT, loc: Loc) -> _OpT:
    if loc is not None:
        op.location = loc
    return op


# ---------------------------------------------------------------------------
# Python syntax
# ---------------------------------------------------------------------------

_UNSUPPORTED: dict[type[ast.AST], tuple[str, str]] = {
    ast.List: ("lists are not supported", "pass a numpy array and index it"),
    ast.ListComp: ("lists are not supported", "pass a numpy array and fill it in a loop"),
    ast.Tuple: ("tuples are only supported in assignments and return", "use separate variables"),
    ast.Dict: ("dicts are not supported", "use separate variables or numpy arrays"),
    ast.DictComp: ("dicts are not supported", "use separate variables or numpy arrays"),
    ast.Set: ("sets are not supported", "use separate variables or numpy arrays"),
    ast.SetComp: ("sets are not supported", "use separate variables or numpy arrays"),
    ast.GeneratorExp: ("generators are not supported", "write the loop out"),
    ast.Lambda: ("lambdas are not supported", "define a function with def"),
    ast.Starred: ("starred expressions are not supported", "pass the arguments one by one"),
    ast.NamedExpr: ("':=' is not supported", "assign the value in a statement of its own"),
    ast.JoinedStr: ("strings are not supported", "ordinary functions compute with numbers"),
    ast.Break: ("'break' is not supported", "use a while loop whose condition says when to stop"),
    ast.Continue: ("'continue' is not supported", "put the rest of the body under an if"),
    ast.Slice: ("slices are not supported", "index single elements in a loop: u[i]"),
}
_NEVER = (*base.NEVER_COMPILED, ast.With, ast.Yield, ast.YieldFrom, ast.Await)


def check_structure(tree: ast.FunctionDef, error: Callable[[ast.AST, str, str | None], Exception]) -> None:
    """Errors that need no types, reported when the function is decorated."""
    last = tree.body[-1]
    for node in ast.walk(tree):
        if node is tree:
            continue
        if isinstance(node, _NEVER):
            kind = type(node).__name__.lower()
            raise error(
                node,
                f"'{kind}' statements are not supported in ordinary functions",
                'see the list of supported Python in docs/python.md, "Ordinary Python"',
            )
        if isinstance(node, ast.For) and not isinstance(node.target, ast.Name):
            # before its target's own refusal as a tuple, which said nothing of loops
            raise error(node.target, *base.ONE_LOOP_VARIABLE)
        if isinstance(node, ast.Tuple) and _is_tuple_place(tree, node):
            continue
        if type(node) in _UNSUPPORTED:
            message, hint = _UNSUPPORTED[type(node)]
            raise error(node, message, hint)
        if isinstance(node, ast.Return) and node is not last:
            raise error(
                node,
                "return must be the last statement of an ordinary function",
                "assign the result to a variable and return it at the end",
            )


def _is_tuple_place(tree: ast.FunctionDef, node: ast.Tuple) -> bool:
    """Tuples may be assigned (``a, b = b, a``), returned and index arrays."""
    for parent in ast.walk(tree):
        if isinstance(parent, ast.Assign) and (node in parent.targets or node is parent.value):
            return True
        if isinstance(parent, ast.Return) and node is parent.value:
            return True
        if isinstance(parent, ast.Subscript) and node is parent.slice:
            return True
    return False


def _assigned(body: Sequence[ast.stmt]) -> list[str]:
    """The names ``body`` assigns, in order of appearance."""
    names: dict[str, None] = {}
    for statement in body:
        for node in ast.walk(statement):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign):
                targets = [node.target]
            for target in targets:
                for leaf in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(leaf, ast.Name):
                        names[leaf.id] = None
    return list(names)


class ModuleCompiler(base.ModuleCompiler):
    """Compiles an entry function and every ``@rv.ordinary`` function it
    calls, each specialised to the argument types it is called with."""

    def __init__(self, primitive: Callable[[Any], str] | None = None) -> None:
        super().__init__()
        self.primitives: PrimitiveDeclarations | None = None
        """The primitives the program calls, with their rules; ``None`` for
        the rules of primitives, which the program's declarations compile."""
        if primitive is None:
            self.primitives = PrimitiveDeclarations(self.used)
            primitive = self.primitives.declare
        self.primitive: Callable[[Any], str] = primitive
        """Declares a user primitive the functions call (``Context.primitive``)."""
        self.functions: list[func.FuncOp] = []
        self.names: dict[Key, str] = {}
        """The name of each specialisation requested."""
        self.results: dict[Key, tuple[Attribute, ...]] = {}
        """The result types of each specialisation known so far: declared,
        inferred by a probing compile, or compiled."""
        self.done: set[Key] = set()
        """The specialisations ``functions`` holds."""
        self.weak: dict[str, tuple[bool, ...]] = {}
        """Per specialisation being compiled with inferred result types,
        by name, which of them a compile returned weak values of
        (``is_weak``): its recursive calls return weak values there, which
        may take another type (``total = 0.0`` beside a ``float32``)."""
        self.active: set[Key] = set()
        """The specialisations being compiled: calling one is recursion."""
        self.unknown: list[set[Key]] = []
        """Per compile in progress (innermost last), the specialisations
        with unknown result types that it called: where there are any it is
        a probe, whose body took those calls as paths that never return and
        so is good only for its result types."""

    def request(
        self, function: Ordinary, types: Sequence[Attribute], error: Callable[[str, str], Exception]
    ) -> tuple[str, tuple[Attribute, ...]]:
        """The name and result types of ``function`` specialised to
        ``types``, compiled on first request.  A recursive call takes the
        result types declared or inferred (``revmlir.frontend.ordinary_code.results``);
        ``error`` makes an error located at the call from a message and a hint."""
        key: Key = (id(function), tuple(types))
        if key not in self.names:
            self.names[key] = self.fresh_name(function.__name__)
        name = self.names[key]
        if key in self.done or (key in self.active and key in self.results):
            return name, self.results[key]
        if key in self.active:
            raise UnknownResults(key, function.__name__, error)
        declared = declared_results(function.source.tree, function.hints, function.source.error)
        if declared is not None:
            self.results[key] = declared
        compiled, unknown, weak = self._compile(key, function, name, types, declared)
        if key in unknown:
            # the types of the paths that do not recurse: a second compile
            # gives the recursive calls these, and compiles go on while a
            # weak one takes another type or turns strong
            try:
                compiles = 1
                while (found := tuple(compiled.function_type.outputs.data), weak) != (
                    self.results.get(key),
                    self.weak.get(name),
                ):
                    if compiles == _settling_compiles(found):
                        raise error(
                            f"internal compiler error: the result types of {function.__name__} did not settle "
                            f"after {compiles} compiles (the last returned {describe_results(found)})",
                            f"please report it; declaring them with a return annotation avoids this: "
                            f"{RESULT_ANNOTATIONS}",
                        )
                    self.results[key], self.weak[name] = found, weak
                    compiled, unknown, weak = self._compile(key, function, name, types, declared)
                    compiles += 1
            finally:
                self.weak.pop(name, None)
        found = self.results[key] = tuple(compiled.function_type.outputs.data)
        if unknown:
            # functions being compiled around this one are still unknown
            # here: the caller's compile is a probe too, and calls this
            # one again once it knows them
            self.unknown[-1] |= unknown
        else:
            self.functions.append(compiled)
            self.done.add(key)
        return name, found

    def _compile(
        self,
        key: Key,
        function: Ordinary,
        name: str,
        types: Sequence[Attribute],
        declared: tuple[Attribute, ...] | None,
    ) -> tuple[func.FuncOp, set[Key], tuple[bool, ...]]:
        """Compile ``function`` once, its recursive calls given the result
        types known for it; also the calls with unknown result types it
        made (a probe where there are any), and which of its results are
        weak.  An ``UnknownResults`` for ``function`` itself that no ``if``
        or loop caught is reported at its call."""
        self.active.add(key)
        self.unknown.append(set())
        try:
            compiler = FunctionCompiler(self, function, name, types)
            compiled = compiler.compile(self.results.get(key), declared is not None)
            weak = compiler.weak_results
        except UnknownResults as unknown:
            if unknown.key == key:
                raise unknown.report() from None
            raise
        finally:
            self.active.discard(key)
            unknown_calls = self.unknown.pop()
        return compiled, unknown_calls, weak

    def finish(self, entry: str) -> ModuleOp:
        """The module of ``entry`` and what it calls.  A loop's body built
        with carried types it then drops (``OrdinaryBuilder._carried``) may
        have requested callees that the final build does not call, in the
        program or in a rule: they stay compiled, for a later build that
        requests them again, and are left out here (``drop_unreached_functions``,
        which keeps the rules each ``rev.extern`` names and what they call),
        so that they are not reversibilized and compiled natively, uncalled."""
        declared = self.primitives.ops if self.primitives is not None else []
        module = ModuleOp([*self.functions, *declared])
        drop_unreached_functions(module, [entry])
        with ir_unchanged():  # the module's analyses, asked by each function's checks, once
            module.verify()
        return module


def _settling_compiles(results: tuple[Attribute, ...]) -> int:
    """How many compiles a recursive function returning ``results`` may
    take until its inferred result types settle (``ModuleCompiler.request``):
    the first (the probe) and the one confirming them, and between them one
    per change.  A result changes once at most: ``expected_results`` lets
    its type change only where it was weak and only to another float, so
    it goes from weak to strong (a weak ``f64`` to a ``float32`` or a
    strong ``f64``, a weak int to a strong one) and stays there, as a
    compile's results join its paths (``merged``), which only go up with
    the recursive calls' results.  Each change may wait for another result's
    (``b = q + p`` turns strong the compile after ``p`` does), so the
    changes take one compile each at worst.  More means that rule no
    longer holds: an internal error, not a compile that never ends."""
    return len(results) + 2


class PrimitiveDeclarations:
    """The user primitives a module calls, each declared once: a
    ``rev.extern`` and its rules, ``func.func``s compiled by a module
    compiler of their own, which shares the module's names, so that no
    function of the program is also (part of) a rule."""

    def __init__(self, used: set[str]) -> None:
        self.used = used
        self.names: dict[int, str] = {}
        """``id(primitive)`` → its ``rev.extern``."""
        self.rules: ModuleCompiler | None = None
        self.ops: list[Operation] = []
        """The declarations and the rules, in the order they were made."""
        self.emitted_rules = 0
        """How many of the rules ``ops`` holds (a rule calling a primitive
        declares it, with the rules compiled so far, before its own)."""

    def declare(self, primitive: Any) -> str:
        """Declare ``primitive`` (an ``rv.primitive``, which the compilers
        know only as what they call, as ``base.expressions`` does) and its
        rules, once; its name."""
        if (name := self.names.get(id(primitive))) is not None:
            return name
        if self.rules is None:
            self.rules = ModuleCompiler(primitive=self.declare)
            self.rules.used = self.used
        name = primitive.name
        if name in self.used:
            raise primitive.source.error(
                primitive.source.tree,
                f"another function or primitive of the program is named {name}",
                "rename one of them",
            )
        self.used.add(name)
        self.names[id(primitive)] = name  # before its rules, which may call it
        rules: dict[str, str] = {}
        try:
            for kind, rule in primitive.rules.items():
                expected = primitive.check_rule(kind, rule)
                error = functools.partial(rule.source.error, rule.source.tree)
                rules[kind], results = self.rules.request(rule, expected.inputs.data, error)
                if results != tuple(expected.outputs.data):
                    raise primitive.rule_error(kind, rule, results)
        except ReversibleSyntaxError:
            # undeclared again: a loop body's build thrown away may have
            # called it (``OrdinaryBuilder.stand_ins``), and the next
            # build's call must meet the error again, not a name without
            # its declaration
            del self.names[id(primitive)]
            self.used.discard(name)
            raise
        extern = ExternOp(name, primitive.signature, primitive.symbol, rules, primitive.updates, primitive.arrays)
        extern.location = primitive.source.loc(primitive.source.tree)
        self.ops.extend([extern, *self.rules.functions[self.emitted_rules :]])
        self.emitted_rules = len(self.rules.functions)
        return name


class FunctionCompiler(base.FunctionCompiler[Ordinary, OrdinaryBuilder]):
    def __init__(self, module: ModuleCompiler, function: Ordinary, name: str, types: Sequence[Attribute]):
        super().__init__(
            function,
            types,
            lambda args, loc: OrdinaryBuilder(name, args, loc),
            module.primitive,
            variables="the function's arguments and the names assigned before this "
            "point (a name first assigned inside a loop or a branch ends with it)",
        )
        self.module = module
        self.expr = OrdinaryExpressions(self.ctx, self.call)
        self.weak_results: tuple[bool, ...] = ()
        """Which values ``compile`` returned are weak (``is_weak``)."""

    def compile(self, expected: tuple[Attribute, ...] | None, declared: bool) -> func.FuncOp:
        """The function, returning ``expected`` where its result types are
        known before (``declared`` by its annotation or inferred)."""
        body = list(self.tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        end: ast.AST = body.pop() if body and isinstance(body[-1], ast.Return) else self.tree
        returned = returned_values(self.tree)
        self.statements(body)
        results = [self.scalar(node) for node in returned]
        if expected is not None:
            results = self.expected_results(results, expected, declared, end)
        self.weak_results = tuple(self.fn.is_weak(r) for r in results)
        return self.fn.finish(results, self.ctx.loc(end))

    def expected_results(
        self, results: list[Value], expected: tuple[Attribute, ...], declared: bool, end: ast.AST
    ) -> list[Value]:
        """``results`` as the types recursive calls were given, an index
        as the ``int`` a return makes it (``finish``).  Declared ones: an
        integer or another float where a float is declared is converted,
        as for a parameter; any other difference is an error at the return.
        Inferred ones are those the probe's return had: a variable has one
        type after an ``if`` or a loop whichever path reached it (the
        builder refuses two), so the paths the probe dropped cannot change
        them, except where the probe returned a weak value, which a path
        it dropped may have made a float of another type (a loop it left
        out carrying ``total = 0.0`` over ``float32``s): such a result is
        the float found, compiled again (``ModuleCompiler.request``)."""
        loc = self.ctx.loc(end)
        results = [self.fn.cast(r, i64, loc) if isinstance(r.type, IndexType) else r for r in results]
        if declared and len(results) == len(expected):
            results = [
                self.fn.cast(r, t, loc) if isinstance(t, AnyFloat) and _is_real(r.type) else r
                for r, t in zip(results, expected, strict=True)
            ]
        found = tuple(r.type for r in results)
        weak = self.module.weak.get(self.fn.name, ())
        if (
            not declared
            and len(found) == len(weak)
            and all(
                f == e or (w and isinstance(e, AnyFloat) and isinstance(f, AnyFloat))
                for f, e, w in zip(found, expected, weak, strict=True)
            )
        ):
            return results
        if found != expected and not declared:
            raise self.error(
                end,
                f"{self.function.__name__} returns {describe_results(found)} here, but "
                f"{describe_results(expected)} where it returns without recursing",
                "return values of one type on every path, or declare them with a return annotation",
            )
        if found != expected:
            raise self.error(
                end,
                f"{self.function.__name__} is declared to return {describe_results(expected)} "
                f"but returns {describe_results(found)}",
                "return values of the declared types, or change the annotation",
            )
        return results

    # -- helpers --------------------------------------------------------------

    def scalar(self, node: ast.expr, like: Attribute | None = None) -> Value:
        """A number, of type ``like`` where it meets one (``compile``):
        arrays are only read and written element by element."""
        value = self.expr.compile(node, like)
        if isinstance(value.type, MemRefType):
            raise self.error(
                node,
                f"'{ast.unparse(node)}' is an array, not a number; arrays are "
                "arguments, updated in place, and cannot be assigned or returned",
                "read and write their elements: u[i]",
            )
        return value

    def condition(self, node: ast.expr) -> Value:
        """A test with Python's truth: numbers are true when not zero."""
        return self.fn.truth(self.scalar(node), self.ctx.loc(node))

    def call(self, node: ast.Call, callee: Ordinary) -> list[Value]:
        """``func.call`` of another ordinary function: scalars are passed by
        value, arrays by reference (and must be distinct)."""
        fn, loc = self.fn, self.ctx.loc(node)
        params = callee.parameters
        if node.keywords:
            raise self.error(
                node,
                f"{callee.__name__} takes positional arguments only",
                f"write {callee.__name__}({', '.join(params)})",
            )
        # a struct passed whole (a call statement) is passed as its fields
        layout = getattr(node, CALLEE_LAYOUT, None) or Layout((None,) * len(node.args))
        if len(layout.structs) != len(params):
            raise self.error(
                node, f"{callee.__name__} takes {len(params)} argument(s) ({', '.join(params)}), got {len(node.args)}"
            )
        if (problem := layout.mismatch(params, callee.hints)) is not None:
            raise self.error(node, f"{callee.__name__}(): {problem}")
        if any(layout.structs):
            callee = callee.flattened(layout)
        operands: list[SSAValue] = []
        arrays: list[str] = []
        for arg in node.args:
            if isinstance(arg, ast.Name) and fn.is_array(arg.id):
                if arg.id in arrays:
                    raise self.error(
                        arg,
                        f"'{arg.id}' is passed to {callee.__name__} twice",
                        f"{ALIASED_ARGUMENTS}, made outside",
                    )
                arrays.append(arg.id)
                operands.append(fn.get(arg.id).ssa)
                continue
            value = self.scalar(arg)
            operands.append((fn.cast(value, i64, loc) if isinstance(value.type, IndexType) else value).ssa)
        try:
            name, result_types = self.module.request(
                callee, [o.type for o in operands], lambda message, hint: self.error(node, message, hint)
            )
        except ReversibleSyntaxError as error:
            return fn.stand_ins(error, len(returned_values(callee.source.tree)), loc)
        return fn.call(name, operands, result_types, loc, self.module.weak.get(name, ()))

    # -- statements ---------------------------------------------------------------

    def statements(self, body: Sequence[ast.stmt]) -> None:
        for statement in body:
            try:
                self.statement(statement)
            except BuildError as error:
                located = self.error(statement, error.message)
                for note in getattr(error, "__notes__", ()):
                    located.add_note(note)  # a loop's (``_noting``)
                raise located from None
            except RecursionError:
                raise self.error(statement, *TOO_DEEP) from None

    def statement(self, node: ast.stmt) -> None:
        match node:
            case ast.Assign():
                self.assign(node)
            case ast.AugAssign():
                self.update(node)
            case ast.Expr(value=ast.Call() as call) if is_ordinary(self.ctx.resolve(call.func)):
                self.call(call, self.ctx.resolve(call.func))
            case ast.Expr(value=ast.Call() as call) if getattr(
                self.ctx.resolve(call.func), "__revmlir_primitive__", False
            ):
                self.expr.primitive_statement(call, self.ctx.resolve(call.func))
            case ast.If():
                self.if_(node)
            case ast.For():
                self.loop(lambda: self.for_(node))
            case ast.While():
                self.loop(lambda: self.while_(node))
            case ast.Pass():
                pass
            case ast.Expr(value=ast.Constant()):
                pass  # a docstring or a comment string
            case _:
                raise self.error(
                    node,
                    f"'{ast.unparse(node).splitlines()[0]}' is not supported in an ordinary function",
                    "statements are assignments, element writes u[i] = …, calls of "
                    "@rv.ordinary functions, if, for … in range(…) and while",
                )

    def if_(self, node: ast.If) -> None:
        """``if``/``else``; in a probing compile, a branch that calls a
        function whose result types are unknown never returns, so the
        other one goes on alone (``revmlir.frontend.ordinary_code.results``)."""
        condition = self.condition(node.test)
        names = _assigned([*node.body, *node.orelse])
        branches = (lambda: self.statements(node.body), lambda: self.statements(node.orelse))
        try:
            self.fn.if_(condition, *branches, names, self.ctx.loc(node))
        except UnknownResults as unknown:
            self.module.unknown[-1].add(unknown.key)
            for branch in branches:
                try:
                    self.fn.continue_with(branch, names)
                    return
                except UnknownResults:
                    continue
            raise unknown from None

    def loop(self, build: Callable[[], None]) -> None:
        """A loop; in a probing compile, one whose body calls a function
        whose result types are unknown goes on as if it ran no iteration.
        Its carried variables then keep the types they had before it,
        which the loop may change only where one is weak (``total = 0.0``
        summing ``float32``s): a result that is such a variable is weak in
        the probe, and the compiles after it find its type
        (``ModuleCompiler.request``)."""
        try:
            build()
        except UnknownResults as unknown:
            self.module.unknown[-1].add(unknown.key)

    def assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment is not supported", "assign each name on its own line")
        target, value = node.targets[0], node.value
        targets = target.elts if isinstance(target, ast.Tuple) else [target]
        for element in targets:
            self.check_target(element)
        if not isinstance(target, ast.Tuple):
            values = [self.scalar(value, self._stored_type(target))]
        elif isinstance(value, ast.Tuple):
            if len(value.elts) != len(targets):
                raise self.error(node, f"cannot assign {len(value.elts)} value(s) to {len(targets)} target(s)")
            values = [self.scalar(v, self._stored_type(t)) for t, v in zip(targets, value.elts)]
        elif isinstance(value, ast.Call) and is_ordinary(callee := self.ctx.resolve(value.func)):
            values = self.call(value, callee)
            if len(values) != len(targets):
                raise self.error(
                    node, f"{callee.__name__} returns {len(values)} value(s), assigned to {len(targets)} target(s)"
                )
        else:
            raise self.error(
                node,
                f"cannot unpack '{ast.unparse(value)}'",
                "unpack a tuple (a, b = x, y) or the call of an @rv.ordinary function",
            )
        for element, element_value in zip(targets, values, strict=True):
            self.store(element, element_value)

    def check_target(self, target: ast.expr) -> None:
        """Reject what cannot be assigned: loop variables, whole arrays,
        anything but names and array elements."""
        fn, ctx = self.fn, self.ctx
        if isinstance(target, ast.Name):
            if ctx.lookup_binding(target.id) is not None:
                raise self.error(
                    target, f"loop variable '{target.id}' cannot be assigned", "use another name for the new value"
                )
            if fn.is_array(target.id):
                raise self.error(
                    target,
                    f"'{target.id}' is an array argument; it cannot be re-assigned",
                    f"write its elements: {target.id}[i] = …",
                )
        elif not isinstance(target, ast.Subscript) or not isinstance(target.value, ast.Name):
            raise self.error(
                target,
                f"cannot assign to '{ast.unparse(target)}'",
                "assign a variable or an element of an array argument: u[i] = …",
            )
        elif not fn.is_array(target.value.id):
            raise self.error(
                target,
                f"'{target.value.id}' is not an array argument",
                "only the elements of array arguments can be written",
            )

    def _stored_type(self, target: ast.expr) -> Attribute | None:
        """The element type of a checked target that is an array's
        element, which a value stored there meets (``x[0] = 10**20`` of a
        float array stores the float)."""
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            array = self.fn.type_of(target.value.id)
            return array.element_type if isinstance(array, MemRefType) else None
        return None

    def store(self, target: ast.expr, value: Value) -> None:
        """Assign ``value`` to a checked target: a variable or an element."""
        loc = self.ctx.loc(target)
        if isinstance(target, ast.Name):
            self.fn.assign(target.id, value, loc)
        else:
            assert isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            self.fn.store(target.value.id, self.expr.indices(target), value, loc)

    def update(self, node: ast.AugAssign) -> None:
        target = node.target
        if isinstance(target, ast.Name) and self.fn.is_array(target.id):
            raise self.error(
                node,
                f"'{ast.unparse(node)}' updates a whole array",
                f"update its elements in a loop: {target.id}[i] {ast.unparse(node).split()[1]} …",
            )
        self.check_target(target)
        read = ast.Subscript(target.value, target.slice, ast.Load()) if isinstance(target, ast.Subscript) else target
        ast.copy_location(read, target)
        self.store(target, self.scalar(ast.copy_location(ast.BinOp(read, node.op, node.value), node)))

    def for_(self, node: ast.For) -> None:
        ctx, fn = self.ctx, self.fn
        loc = ctx.loc(node)
        assert isinstance(node.target, ast.Name), "check_structure refuses other loop targets"
        name = node.target.id
        if node.orelse:
            raise self.error(node, "for … else is not supported")
        iterator = node.iter
        schedule = split = None
        if isinstance(iterator, ast.Call) and ctx.resolve(iterator.func) is markers.checkpointed:
            schedule, split = self.schedule(node, iterator)
            iterator = iterator.args[0]
        if not (
            isinstance(iterator, ast.Call)
            and ctx.resolve(iterator.func) is builtins.range
            and 1 <= len(iterator.args) <= 3
            and not iterator.keywords
        ):
            raise self.error(
                node.iter,
                f"cannot loop over '{ast.unparse(iterator)}'",
                "loop over range(...) and index arrays with the loop variable",
            )
        if fn.has(name):
            raise self.error(
                node.target, f"loop variable '{name}' is already a variable", "use a new name for the loop variable"
            )
        bounds = list(iterator.args)
        if len(bounds) == 1:
            bounds.insert(0, ast.Constant(0))
        step = self.expr.folded_int(bounds[2]) if len(bounds) == 3 else 1
        if step == 0:
            raise self.error(bounds[2], ZERO_STEP)
        start, stop = (self.integer(b) for b in bounds[:2])
        position: Callable[[Value], Value] | None = None
        if step is None:
            # a run-time step, of either sign, as reversible code takes it;
            # a zero one stops the run at the range call
            count, nonzero, position = run_time_range(fn, start, stop, self.integer(bounds[2]), loc)
            fn.emit(cf.AssertOp(nonzero.ssa, StringAttr(ZERO_STEP)), ctx.loc(iterator))
            start, stop, step = fn.const(0, IndexType(), loc), count, 1
        elif step < 0:
            # range(a, b, -s) visits a - k·s for k in range(len(range(a, b, -s)))
            first, stride = start, -step

            def descending(k: Value) -> Value:
                return first - k * stride

            position = descending
            count = fn.descending_count(start, stop, stride, loc)
            start, stop, step = fn.const(0, IndexType(), loc), count, 1

        def body(k: Value) -> None:
            ctx.bindings.append({name: k if position is None else position(k)})
            try:
                self.statements(node.body)
            finally:
                ctx.bindings.pop()

        carried = [n for n in _assigned(node.body) if fn.has(n) and not fn.is_array(n)]
        fn.for_(start, stop, fn.const(step, IndexType(), loc), body, carried, loc, schedule, split)

    def schedule(self, node: ast.For, call: ast.Call) -> tuple[ScheduleAttr, str]:
        """The schedule ``rv.checkpointed(range(…), snapshots=k,
        split=…)`` asks for, and where it splits.  ``ad-checkpoint``
        reverses loops at the top level of a function, one step at a time,
        so only such a loop can carry one."""
        if not any(node is statement for statement in self.tree.body):
            raise self.error(
                call,
                "rv.checkpointed() marks a loop at the top level of the function",
                "checkpoint the outermost (time-stepping) loop",
            )
        keywords = {k.arg: k.value for k in call.keywords}
        if len(call.args) != 1 or not set(keywords) <= {"snapshots", "split"} or len(keywords) != len(call.keywords):
            raise self.error(
                call,
                "rv.checkpointed() takes a range, an optional snapshots=k and an optional split='work'",
                "write rv.checkpointed(range(n), snapshots=20)",
            )
        split = "iterations"
        if "split" in keywords:
            value = keywords["split"]
            if not (isinstance(value, ast.Constant) and value.value in ("iterations", "work")):
                raise self.error(
                    value,
                    "split must be 'iterations' or 'work'",
                    "write split='work' to split inside iterations, at the iterations of the inner loop",
                )
            split = value.value
        if "snapshots" not in keywords:
            return ScheduleAttr("bisection"), split
        snapshots = self.expr.folded_int(keywords["snapshots"])
        if snapshots is None or snapshots < 1:
            raise self.error(
                keywords["snapshots"], "snapshots must be a positive integer constant", "write e.g. snapshots=20"
            )
        if snapshots > MAX_COUNT:
            raise self.error(
                keywords["snapshots"],
                f"snapshots must be at most 2**63 - 1 ({MAX_COUNT}), the largest count the schedule's "
                f"cursor holds, not {snapshots}",
                "a budget past the loop's trip count changes nothing: write e.g. snapshots=20",
            )
        return ScheduleAttr("binomial", snapshots), split

    def integer(self, node: ast.expr) -> Value:
        value = self.scalar(node)
        if not isinstance(value.type, IntegerType | IndexType) or value.type == i1:
            raise self.error(node, f"range() needs integers, got {describe_type(value.type)}", "convert it: int(...)")
        return self.fn.cast(value, IndexType(), self.ctx.loc(node))

    def while_(self, node: ast.While) -> None:
        if node.orelse:
            raise self.error(node, "while … else is not supported")
        for call in ast.walk(node.test):
            if isinstance(call, ast.Call) and is_ordinary(self.ctx.resolve(call.func)):
                raise self.error(
                    call,
                    "a while condition cannot call an @rv.ordinary function",
                    "compute the value in a variable before the loop and at the end of its body",
                )
        fn = self.fn
        carried = [n for n in _assigned(node.body) if fn.has(n) and not fn.is_array(n)]
        fn.while_(lambda: self.condition(node.test), lambda: self.statements(node.body), carried, self.ctx.loc(node))


class OrdinaryExpressions(ExpressionCompiler):
    """The expressions of reversible Python, plus calls of ``@rv.ordinary``
    functions; array allocations and methods get their own diagnostics."""

    def __init__(self, ctx: Context, call: Callable[[ast.Call, Ordinary], list[Value]]):
        super().__init__(ctx)
        self.ordinary_call = call
        self._operands: list[list[Value]] = []
        """Per expression being compiled (innermost last), the values of
        its subexpressions compiled so far."""
        self._judged: Exception | None = None
        """The error last raised out of an expression: the enclosing ones
        pass it on, it is not theirs."""

    @property
    def fn(self) -> OrdinaryBuilder:
        return cast(OrdinaryBuilder, self.ctx.fn)  # an ordinary function's

    def compile(
        self,
        node: ast.expr,
        like: Attribute | None = None,
        *,
        bits: bool = False,
        updating: ast.AugAssign | None = None,
    ) -> Value:
        """An error out of a whole expression (an ordinary call's argument
        is one) is its own, not that of the call around it: ``compile``
        raises a new error for a ``BuildError``, which is judged here, so
        that the call does not take it for an error of its operation on
        a stand-in beside it."""
        try:
            return super().compile(node, like, bits=bits, updating=updating)
        except ReversibleSyntaxError as error:
            self._judged = error
            raise

    def _evaluate(self, node: ast.expr) -> Value | Folded:
        """An expression whose own operation fails on a stand-in
        (``OrdinaryBuilder.stand_ins``) is a stand-in too, its error
        postponed: ``math.atan2(g(s), 2)`` of a stand-in int for ``g(s)``
        may be a float's in the build that is kept.  An error of any other
        expression is raised, by it and by those around it."""
        self._operands.append([])
        value: Value | Folded
        try:
            value = super()._evaluate(node)
        except (BuildError, ReversibleSyntaxError) as error:
            if error is self._judged or not any(self.fn.is_stand_in(v) for v in self._operands[-1]):
                self._judged = error
                raise
            located = self.ctx.error(node, error.message) if isinstance(error, BuildError) else error
            value = self.fn.stand_ins(located, 1, self.ctx.loc(node))[0]
        finally:
            self._operands.pop()
        if self._operands and isinstance(value, Value):
            self._operands[-1].append(value)
        return value

    def _mistyped(self, error: ReversibleSyntaxError, value: Value, type: Attribute, loc: Loc) -> SSAValue:
        """A primitive's scalar argument of another scalar type than its
        parameter's is a stand-in (``OrdinaryBuilder.stand_ins``) in a loop
        build that may be thrown away: a ``float32`` there may be an ``f64``
        in the build that is kept.  An array's type, or a scalar given for
        an array, is the same in every build: that error is raised."""
        if not (is_scalar_type(type) and is_scalar_type(value.type)):
            raise error
        return self.fn.cast(self.fn.stand_ins(error, 1, loc)[0], type, loc).ssa

    def _call(self, node: ast.Call) -> Value:
        ctx = self.ctx
        callee = ctx.resolve(node.func)
        if is_ordinary(callee):
            results = self.ordinary_call(node, callee)
            if len(results) != 1:
                raise ctx.error(
                    node,
                    f"{callee.__name__} returns {len(results)} values, not one number",
                    f"assign them: a, b = {ast.unparse(node)}",
                )
            return results[0]
        if callee is markers.ulog:
            # no op of ordinary code computes on a log number, which only
            # a reversible update (``ly *= lx``) multiplies
            real = f": {ast.unparse(node.args[0])}" if len(node.args) == 1 else ""
            raise ctx.error(
                node,
                f"'{ast.unparse(node)}': rv.ulog makes a log number for a reversible update; "
                "ordinary code computes with real values",
                f"drop rv.ulog{real}",
            )
        if (
            callee is not UNRESOLVED
            and callee not in SCALAR_FUNCTIONS
            and getattr(callee, "__module__", None) == np.__name__
        ):
            raise ctx.error(
                node,
                f"'{ast.unparse(node)}' allocates an array",
                "ordinary functions cannot allocate arrays; allocate it outside and pass it in",
            )
        if (
            isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and self.fn.has(node.func.value.id)
        ):
            raise ctx.error(
                node,
                f"'{ast.unparse(node.func)}': array methods are not supported",
                "read and write elements in loops; allocate arrays outside and pass them in",
            )
        return super()._call(node)

    def indices(self, node: ast.Subscript) -> list[Value]:
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            literal = self.folded_int(part)
            if literal is not None and literal < 0:
                raise self.ctx.error(
                    part,
                    f"negative index {literal}: indices count from 0",
                    f"write {ast.unparse(node.value)}[len({ast.unparse(node.value)}) - {-literal}]",
                )
        return super().indices(node)


def _is_integer(type: Attribute) -> bool:
    return isinstance(type, IntegerType) and type != i1


def _is_real(type: Attribute) -> bool:
    return _is_integer(type) or isinstance(type, AnyFloat)
