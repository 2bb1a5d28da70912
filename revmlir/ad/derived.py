"""What building derived functions (``@f.adj``, ``@f.tan``, …) has in common.

Reverse mode (``revmlir.ad.adjoint``) and forward mode
(``revmlir.ad.tangent``) both walk a prepared copy of ``@f`` with an
``Inverter``'s value mapping and on-demand recomputation of pure
expressions, both emit arithmetic for the derivative rules of pure ops, and
both add derived functions to a module on demand, following calls
(recursion included).  That machinery lives here, once.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import AnyFloat, ArrayAttr, ComplexType, FloatAttr, ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriteWalker
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

from revmlir.canonicalization import CancelInversePair
from revmlir.dialects import rev
from revmlir.dialects.primitives import ExternOp
from revmlir.errors import describe_op
from revmlir.expansion import forward_only
from revmlir.fast_ops import arith_constant, binary, unary
from revmlir.interfaces import NotDifferentiable
from revmlir.inversion import Inverter, derive_inverse, inline_block
from revmlir.ir_utils import clone
from revmlir.naming import DERIVED_INVERSE_ATTR, INVERSE_SUFFIX, inverse_name, source_name
from revmlir.semantics import is_expression_op, is_state_type

Request = Callable[[str, Operation], str]
"""``request(callee, call)``: schedule the derived function of ``@callee``
that ``call`` needs and return its name."""


@dataclass
class Differentiator(Inverter):
    """An ``Inverter`` that also emits the arithmetic of derivative rules.

    ``current`` is the op being differentiated: emitted code takes its
    location, so run-time errors in derived code point at the user's source.
    """

    current: Operation | None = None
    lanes: int = 1
    """Derivatives per value (vector mode): ``L`` tangents, or ``L``
    gradients, each lane its own direction or cotangent, sharing the copy
    of the primal program."""
    lane: int = 0
    """The lane whose derivatives the per-value helpers read and bind."""
    zeros: set[SSAValue] = field(default_factory=set[SSAValue])
    """Derivative values known to be exactly zero (symbolic zeros): a
    ``0.0`` constant, the gradient of an ancilla at its birth, and what the
    arithmetic helpers below make of them.  The helpers fold them as
    derivative arithmetic does (``0·x = 0`` even where ``x`` is infinite:
    a zero derivative contributes nothing, as JAX's symbolic zeros), and
    rules skip the updates they would feed, so work that can only add zero
    is never emitted."""

    RULE: ClassVar[str]
    """The kind of rule the mode asks each op for ("adjoint", "tangent")."""

    @abc.abstractmethod
    def apply_rule(self, op: Operation) -> bool:
        """Emit ``op``'s rule for this mode; ``False`` if it has none."""

    @abc.abstractmethod
    def fail(self, op: Operation, why: str) -> PassFailedException:
        """The mode's diagnostic for ``op``, which cannot be differentiated."""

    def differentiate(self, ops: Iterable[Operation]) -> None:
        """Apply the mode's rule to each op of a block, in the order given
        (pure expressions are differentiated where they are read)."""
        saved = self.current
        try:
            for op in ops:
                if is_expression_op(op):
                    continue
                self.current = op
                if not self.apply_rule(op):
                    mark = op.get_trait(NotDifferentiable)
                    raise self.fail(op, mark.reason if mark else f"'{op.name}' has no {self.RULE} rule")
        finally:
            self.current = saved

    def each_lane(self) -> Iterator[int]:
        """Make each lane current in turn (then lane 0 again).  Not nested:
        the ops that carry every lane run with lane 0 current."""
        assert self.lane == 0, "lanes are iterated from lane 0, once at a time"
        try:
            for lane in range(self.lanes):
                self.lane = lane
                yield lane
        finally:
            self.lane = 0

    def bind_lane_by_lane(
        self,
        carrying: Sequence[SSAValue],
        derivatives: Sequence[SSAValue],
        bind: Callable[[SSAValue, SSAValue], None],
    ) -> None:
        """``bind`` each of the ``carrying`` values to its derivative, in
        every lane: ``derivatives`` are laid out lane by lane, as derived
        functions, region states and calls pass them."""
        new = iter(derivatives)
        for _ in self.each_lane():
            for value in carrying:
                bind(value, next(new))
        assert next(new, None) is None

    def emit_op(self, op: Operation) -> Operation:
        if self.current is not None:
            op.location = self.current.location
        self.builder.insert(op)
        return op

    def emit(self, op: Operation) -> SSAValue:
        return self.emit_op(op).results[0]

    def primal(self, value: SSAValue) -> SSAValue:
        """The forward ``value`` at the insertion point (recomputed if needed)."""
        return self.lookup(value)

    def const(self, value: float, type: Attribute) -> SSAValue:
        """``value`` as a float, or as the complex ``value + 0i``."""
        if isinstance(type, ComplexType):
            element = type.element_type
            parts = ArrayAttr([FloatAttr(value, element), FloatAttr(0.0, element)])
            result = self.emit(complexd.ConstantOp(parts, type))
        else:
            assert isinstance(type, AnyFloat)
            result = self.emit(arith_constant(float(value), type))
        if value == 0.0:
            self.zeros.add(result)
        return result

    def is_zero(self, value: SSAValue) -> bool:
        return value in self.zeros

    # Derivative rules are written once for floats and complex numbers: the
    # arithmetic below picks the op from the operands' type, and folds zeros.

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if a in self.zeros:
            return b
        if b in self.zeros:
            return a
        return self._binary(a, b, arith.AddfOp, complexd.AddOp)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if b in self.zeros:
            return a
        if a in self.zeros:
            return self.neg(b)
        return self._binary(a, b, arith.SubfOp, complexd.SubOp)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if a in self.zeros:
            return a
        if b in self.zeros:
            return b
        return self._binary(a, b, arith.MulfOp, complexd.MulOp)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if a in self.zeros:
            return a
        return self._binary(a, b, arith.DivfOp, complexd.DivOp)

    def neg(self, a: SSAValue) -> SSAValue:
        if a in self.zeros:
            return a
        op = complexd.NegOp if isinstance(a.type, ComplexType) else arith.NegfOp
        return self.emit(unary(op, a))

    def conj(self, a: SSAValue) -> SSAValue:
        """``conj(a)``; the identity on floats."""
        if a in self.zeros or not isinstance(a.type, ComplexType):
            return a
        return self.emit(complexd.ConjOp(a))

    def _binary(
        self,
        a: SSAValue,
        b: SSAValue,
        real: type[arith.FloatingPointLikeBinaryOperation],
        complex_op: type[complexd.ComplexBinaryOp],
    ) -> SSAValue:
        if isinstance(a.type, ComplexType):
            return self.emit(binary(complex_op, a, b))
        return self.emit(binary(real, a, b))


def lanes_suffix(suffix: str, lanes: int) -> str:
    """``suffix`` for one lane, ``suffix`` + ``L`` for ``L`` lanes (vector
    mode: ``.tan4``, ``.adj2``)."""
    if lanes < 1:
        raise PassFailedException(f"vector mode carries at least one derivative per value (lanes ≥ 1), not {lanes}")
    return suffix if lanes == 1 else f"{suffix}{lanes}"


def prepare(func: rev.FuncOp) -> rev.FuncOp:
    """A copy of ``func`` with routines expanded and ``rev.inv`` regions
    inlined as their inverse, as ``rev-lower-to-std`` prepares functions.
    The copy sits in a module of its own with the declarations of the
    primitives of ``func``'s module, whose rules derived code calls."""
    source = func.parent_op()
    declarations = [clone(op) for op in source.ops if isinstance(op, ExternOp)] if isinstance(source, ModuleOp) else []
    module = ModuleOp([*declarations, clone(func)])
    if errors := forward_only(module):
        raise errors[0]  # derived code runs the region backwards on every input
    prepared = module.body.block.last_op
    assert isinstance(prepared, rev.FuncOp)
    return prepared


def derived_attributes(func: rev.FuncOp, name: str) -> dict[str, Attribute]:
    """The attributes the function ``@name`` derived from ``func`` takes
    over: all, but the mark of an inverse a pass derived
    (``DERIVED_INVERSE_ATTR``, which names ``@g.inv`` ``~g``) only where
    ``@name`` runs the code errors name as ``func``'s (``source_name``): a
    checkpointed ``@g.inv.ckpt`` is ``~g`` as ``@g.inv`` is, but
    ``@g.inv.tan`` is no inverse, and ``~g.inv.tan.inv`` names nothing."""
    keep = source_name(name) == source_name(func.sym_name.data)
    return {key: value for key, value in func.attributes.items() if keep or key != DERIVED_INVERSE_ATTR}


def derived_function(module: ModuleOp, name: str, source: str) -> rev.FuncOp | None:
    """``@name``, derived from ``@source``, when the module has it: a
    ``rev.func`` of that name is that function (an earlier run's, kept, so
    that passes are idempotent).  Another symbol holding the name is an
    error at it, where it was an unlocated redefinition the verifier found
    after the pass, or was silently taken for the derived function."""
    taken = SymbolTable.lookup_symbol(module, name)
    if taken is None or isinstance(taken, rev.FuncOp):
        return taken
    raise PassFailedException(
        f"{describe_op(taken)}: @{name} is the name of a function derived from @{source}, "
        "which this run builds; rename this function"
    )


Build = Callable[[rev.FuncOp, str, Request], rev.FuncOp]
"""``build(prepared copy of @f, name, request)``: one derived function."""


@dataclass
class ModuleFunctions:
    """A module's ``rev.func``s by name while functions derived from them
    are added: where each goes, and the inverses calls need."""

    module: ModuleOp
    error: Callable[[Operation | None, str], PassFailedException]
    """``error(op, message)``: the diagnostic for a call of a function the
    module lacks."""
    funcs: dict[str, rev.FuncOp] = field(init=False)
    created: list[rev.FuncOp] = field(default_factory=list[rev.FuncOp])

    def __post_init__(self) -> None:
        self.funcs = {f.sym_name.data: f for f in self.module.ops if isinstance(f, rev.FuncOp)}

    def primal(self, name: str, where: Operation | None) -> rev.FuncOp:
        """``@name``; ``@g.inv`` (what ``rev.uncall @g`` is derived
        through) is added when missing."""
        if name not in self.funcs:
            base = inverse_name(name)
            if not (name.endswith(INVERSE_SUFFIX) and base in self.funcs):
                raise self.error(where, f"no rev.func named @{name} in the module")
            self._check_free(name, base)
            inverse = derive_inverse(self.funcs[base], name)
            self.funcs[base].parent_block().insert_op_after(inverse, self.funcs[base])
            self.funcs[name] = inverse
        return self.funcs[name]

    def _check_free(self, name: str, source: str) -> None:
        """No symbol of the module is ``@name``, which is derived from
        ``@source`` and no ``rev.func`` (one of that name is the derived
        function, kept, and never asked about)."""
        derived_function(self.module, name, source)

    def add(self, name: str, derived: rev.FuncOp) -> None:
        """Place ``derived`` (derived from ``@name``) right after the
        function ``@name`` comes from and the functions already derived
        from it."""
        self._check_free(derived.sym_name.data, name)
        primal = self.funcs[name]
        base = name.removesuffix(INVERSE_SUFFIX)
        anchor: Operation = self.funcs.get(base, primal)
        while isinstance(after := anchor.next_op, rev.FuncOp) and (after.sym_name.data.startswith(base + ".")):
            anchor = after
        primal.parent_block().insert_op_after(derived, anchor)
        self.funcs[derived.sym_name.data] = derived
        self.created.append(derived)


def derive_functions(
    module: ModuleOp,
    names: Sequence[str],
    suffix: str,
    build: Build,
    error: Callable[[Operation | None, str], PassFailedException],
) -> list[rev.FuncOp]:
    """Add ``@f<suffix>`` for each named ``@f`` and for every function those
    call (``build`` requests them), right after ``@f`` and the functions
    already derived from it.  Existing derived functions are kept, so passes
    are idempotent.  ``rev.uncall @g`` asks for ``@g.inv<suffix>``; ``@g.inv``
    is added when missing."""
    functions = ModuleFunctions(module, error)
    queue: list[str] = []
    scheduled: set[str] = set()

    def schedule(name: str, where: Operation | None) -> str:
        functions.primal(name, where)
        if name not in scheduled:
            scheduled.add(name)
            queue.append(name)
        return name + suffix

    for name in names:
        schedule(name, None)
    while queue:
        name = queue.pop(0)
        if name + suffix not in functions.funcs:
            functions.add(name, build(prepare(functions.funcs[name]), name + suffix, schedule))
    return functions.created


def add_sequence(module: ModuleOp, name: str, first: str, first_arguments: Sequence[int], second: str) -> rev.FuncOp:
    """Add ``@name``, with ``@second``'s signature, running ``@first`` on the
    arguments at ``first_arguments`` and then ``@second`` on all of them (the
    first run's results in place of the scalars it took).  Chaining a
    derived function after its primal this way (``@f`` then ``@f.adj``)
    gives a whole derivative in one native call, with nothing kept between
    the two runs.

    Both bodies are inlined, then simplified where they meet: ``@f`` ends by
    uncomputing its workspaces, and a loss-seeded ``@f.adj`` starts by
    undoing exactly that (its gradients are zero there), so those inverse
    pairs cancel (``CancelInversePair``, after merging common
    subexpressions so that recomputed expressions are the same values).
    Only pairs with one op from each run cancel: each run's own checks (the
    seeds a loss-seeded adjoint checks on entry) stay."""
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, rev.FuncOp)}
    last = funcs[second]
    block = Block(arg_types=last.function_type.inputs.data)
    for old, new in zip(last.body.block.args, block.args):
        new.name_hint = old.name_hint
    builder = Builder(InsertPoint.at_end(block))
    values: list[SSAValue] = list(block.args)
    returned = iter(inline_block(prepare(funcs[first]).body.block, [values[i] for i in first_arguments], builder))
    first_run = {op for top in block.ops for op in top.walk()}
    for i in first_arguments:
        if is_state_type(values[i].type):
            values[i] = next(returned)
    builder.insert(rev.ReturnOp(*inline_block(prepare(last).body.block, values, builder)))
    sequence = rev.FuncOp(name, [a.type for a in block.args], Region(block))
    sequence.location = funcs[first].location
    module.body.block.insert_op_after(sequence, last)
    cse(sequence)
    across = CancelInversePair(lambda a, b: a in first_run and b not in first_run)
    PatternRewriteWalker(across).rewrite_region(sequence.body)
    region_dce(sequence.body)
    return sequence
