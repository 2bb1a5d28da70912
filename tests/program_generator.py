"""Random *valid* reversible programs, as MLIR text, for property-based tests.

``programs()`` is a hypothesis strategy producing a :class:`Program`: a module
of one to three ``rev.func``s (later ones call earlier ones) that passes the
verifier and runs without tripping any run-time reversibility check, from any
input.  ``arguments(func)`` draws inputs for one of its functions.

What the generator builds
-------------------------
Straight-line code over ``i64`` and ``f64`` (``rev.add/sub/xor/neg/inc/dec/
swap/rot/irot`` whose value operand is a pure ``arith``/``math`` expression over
any current state except the target, ``memref.load``s of array elements and
loop induction variables), and these patterns, nested up to ``max_depth``:

* ``rev.if`` with a precondition and an omitted or explicit postcondition (the
  same expression): the condition reads captured values, or carried values the
  branches do not modify, so post always agrees with pre;
* ``rev.for`` over constant bounds (sometimes ``reverse``) carrying state;
* ``rev.while`` with a counter ancilla (``c ← 0; while (c < n, c > 0) {…; c += 1};
  c → n``, or counting down), ``n`` constant or ``x & 3``;
* ancillas: ``a ← e; a ⊙= v…; <body reading a>; a ⊙=⁻¹ v…; a → e``;
* stacks: push/pop around a body (argument or local stack), ``copy_push`` /
  ``copy_pop``, and "overwrite" (``push x; x ← e``, forward-only code);
* ``rev.routine`` (compute makes ancillas and updates part of the state; do
  updates the rest) and ``rev.inv`` regions;
* ``rev.call`` / ``rev.uncall`` of other generated functions, plain or as a
  call-body-uncall sandwich with ancilla arguments;
* memrefs: ``rev.take``/``rev.put`` of one or two elements at constant or
  dynamic indices (``(x + k) & 3`` or a loop index), with loads of the other
  elements while they are borrowed.

``Extensions`` switches on features beyond these (``i1`` state, division by
values that may be zero, wide shifts, out-of-bounds indices, failing checks,
complex functions, GPU kernels: an entry function that is one parallel
loop, ``Program.kernel``, and what loop versioning acts on) for the fuzzer,
``tests/fuzz``.

Invariants the generator maintains (they are what makes programs valid):

* a value is read only while current; a variable that an enclosing pattern
  will read again (an ancilla's defining expression, a borrowed element's
  dynamic index, a condition over carried state) is *frozen* meanwhile; memrefs
  those expressions load from are write-locked;
* floats never flow into integers or conditions (so integer results are exact
  and control flow cannot diverge by rounding), and every float update adds
  ``c·g(e)`` with ``|c| ≤ 1`` and ``g`` one of tanh/sin/cos/atan of a
  Lipschitz-bounded expression: values stay moderate and rounding errors are
  not amplified much when the program runs backwards;
* code that can only run forward (stack overwrites, and plain calls of
  functions containing them) appears only where it runs forward: never under an
  odd number of ``rev.inv``, and a function containing it is never run
  backwards except to undo its own forward run.

By default half the programs are in the *canonical form* the inverter
produces: every pure expression is emitted right before its user, in the block
using it (condition regions compute their own constants), and no pure value is
shared between uses. Only then is ``invert(invert(f))`` structurally equal to
``f`` (the inverter re-materialises expressions where they are used). The
other half share pure values between uses while they are current, across
nested regions too (``Program.canonical`` says which), which exercises the
inverter's recomputation of captured expressions.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

I1, I64, F64 = "i1", "i64", "f64"
MEMREF_SIZE = 4  # a power of two: `& 3` gives an in-bounds index
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

# ---------------------------------------------------------------------------
# Public description of a generated program
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    kind: str  # "scalar" | "memref" | "stack"
    elem: str  # I1 | I64 | F64
    size: int = MEMREF_SIZE  # a memref's elements
    dynamic: bool = False  # a memref<?xT>

    @property
    def mlir_type(self) -> str:
        if self.kind == "scalar":
            return self.elem
        if self.kind == "memref":
            return f"memref<{'?' if self.dynamic else self.size}x{self.elem}>"
        return f"!anc.stack<{self.elem}>"


@dataclass
class FuncInfo:
    name: str
    params: list[Param]
    bidirectional: bool = True
    """False when the body contains forward-only code (stack overwrites):
    such a function may only be run backwards to undo its own forward run."""


@dataclass(frozen=True)
class Kernel:
    """The entry function of a program with the ``parallel`` extension: its
    body is one ``rev.for parallel`` over ``range(lb, ub, step)`` (the
    kernel rule of docs/gpu.md), whose bounds are ``%plb``, ``%pub`` (a
    constant, or ``memref.dim`` of the first output array: ``ub`` is its
    size) and ``%pstep``."""

    name: str
    lb: int
    ub: int
    step: int

    @property
    def elements(self) -> range:
        return range(self.lb, self.ub, self.step)

    def one_iteration(self, text: str, element: int) -> str:
        """``text`` with the kernel's loop running ``element`` alone: the
        iterations are independent, so whether that one fails, and how, is
        what it does inside the whole loop."""
        for name, new in (("plb", element), ("pub", element + 1)):
            text, count = re.subn(f"%{name} = .*", f"%{name} = arith.constant {new} : index", text)
            assert count == 1
        return text


@dataclass
class Program:
    text: str
    functions: list[FuncInfo]
    has_floats: bool
    canonical: bool
    """Pure values are recomputed at each use (no sharing across uses or
    blocks): the form the inverter produces."""
    kernel: Kernel | None = None
    """The entry function's parallel loop, with the ``parallel`` extension."""

    @property
    def entry(self) -> FuncInfo:
        return self.functions[-1]


@dataclass(frozen=True)
class Extensions:
    """Features beyond the default programs, each off unless asked for.

    They produce programs whose runs hit the corners of the semantics: the
    engines must still agree, with the same result or the same error.  Some
    corners are not defined alike on both engines yet, so the suites that
    must pass today leave them off; the fuzzer (``tests/fuzz``) switches them
    on by name."""

    flags: bool = False
    """``i1`` state (arguments, ancillas, stacks) updated by ``rev.xor`` with
    conditions, read by conditions and extended (``extui``/``extsi``) in
    integer expressions."""
    division: bool = False
    """Divisors computed from the state (zero, ``INT_MIN / -1``), also unsigned
    and rounding-up division."""
    wide_shifts: bool = False
    """Shift amounts of 63 to 127, negative, or computed from the state."""
    out_of_bounds: bool = False
    """Dynamic indices masked to twice the array size."""
    failing_checks: bool = False
    """Ancillas freed sometimes against a value one off: the run must fail
    with the same error on both engines."""
    complex: bool = False
    """Float leaves computed through a complex function (``exp``, ``log``,
    ``sqrt``, ``sin``, ``tanh``, ``pow``, ``div`` …) of numbers made from the
    state, read back as a part, the size or the angle: the engines must
    agree on them (infinities and NaN included)."""
    loop_limits: bool = False
    """``rev.for`` loops (not parallel ones) whose bounds sit at the top or
    the bottom of ``index``, with steps that pass 2⁶³ − 1: a few
    iterations, forwards or backwards, where ``i + step`` or ``ub − lb``
    overflows 64 bits.  Their index is not used as an array index."""
    parallel: bool = False
    """The entry function is a GPU kernel: one ``rev.for parallel`` loop
    whose iterations take their own element ``y[i]`` of each output array,
    read input arrays and the scalar arguments anywhere, accumulate into a
    shared array at any element (``g[j] += v``), and update the elements
    with any statement (ancillas, routines, stacks, loops, calls).  Local
    arrays (``anc.array_alloc``, of a static or dynamic type, sized from the
    state or not; written first in a routine's compute region, read in its
    do region) appear everywhere, and so do parallel loops over an array a
    block may write (in the other functions, device code that runs them in
    order; in a kernel's iteration, over its local arrays).  The other
    functions take no stacks, so the iteration can call them with its own
    arrays."""
    versioned_loops: bool = False
    """What loop versioning acts on (docs/design.md, decisions 47, 131 and
    135): more counted loops, and calls in their bodies, in every function
    and in a kernel's iterations; steps of 1 to 3 from 0 to 3, so 0 to 4
    iterations, forwards or reversed, most starting with a read; and loads
    at indices affine in a loop's index, ``k·i + c``, whose invariant part
    ``c`` is a constant (sometimes a product or a difference of constants),
    often chosen to leave the array at the loop's first, a middle or its
    last iteration,
    plus terms of the state the loop does not carry (mostly) through ``%``
    and the divisions by constants (negative ones and −1 among them),
    ``min`` and ``max``."""


def zero_of(type: str) -> Any:
    return 0.0 if type == F64 else 0


# ---------------------------------------------------------------------------
# Expression trees (re-emittable: patterns recompute the same expression)
# ---------------------------------------------------------------------------
#
#   ("var", vid)                    a scalar state variable
#   ("const", type, value)
#   ("iv", ssa)                     a loop index (index) cast to i64
#   ("load", rid, idx)              memref element; idx is an index tree
#   ("bin", op, type, a, b)         arith binary op
#   ("cmp", pred, a, b)             arith.cmpi on i64 -> i1
#   ("bool", op, a, b)              andi/ori/xori on i1
#   ("select", cond, a, b, type)
#   ("math", fn, a)                 math.<fn> on f64
#   ("negf", a)
#   ("sitofp", a)
#   ("ext", op, a)                  arith.extui/extsi of an i1 to i64
#   ("complex", fn, part, a, b)     complex.<part> of complex.<fn> of a + ib
#                                   (and of e^(b + ia), never 0, for a binary fn)
#
# index trees: ("cidx", k) | ("didx", base_int_tree, shift) | ("ividx", ssa)
#   | ("affine", ssa, k, offset_int_tree)   k·i + offset, unmasked

Tree = tuple[Any, ...]

# the unary trees: name prefix, and the op's text given the tree's middle
# fields and the operand ``a``
UNARY_FORMS = {
    "math": ("f", "math.{0} {a} : f64"),
    "negf": ("f", "arith.negf {a} : f64"),
    "ext": ("e", "arith.{0} {a} : i1 to i64"),
    "sitofp": ("f", "arith.sitofp {a} : i64 to f64"),
}

INT_BINOPS = ["addi", "subi", "muli", "xori", "andi", "ori", "maxsi", "minsi"]
SHIFT_OPS = ["shli", "shrsi", "shrui"]
CMP_PREDS = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
BOUNDED_FNS = ["tanh", "sin", "cos", "atan"]
INT_CONSTS = [0, 1, -1, 2, 3, 7, -5, 100, 2**31, INT_MAX, INT_MIN]
FLOAT_CONSTS = [0.0, 1.0, -1.0, 0.5, -0.25, 1.5, -2.0]
COMPLEX_UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "expm1", "log1p", "rsqrt", "sign"]
COMPLEX_BINARY = ["mul", "div", "pow"]
COMPLEX_PARTS = ["re", "im", "abs", "angle"]


def tree_vars(tree: Tree) -> set[int]:
    kind = tree[0]
    if kind == "var":
        return {tree[1]}
    out: set[int] = set()
    for part in tree[1:]:
        if isinstance(part, tuple):
            out |= tree_vars(part)
    return out


def tree_refs(tree: Tree) -> set[int]:
    out: set[int] = set()
    if tree[0] == "load":
        out.add(tree[1])
    for part in tree[1:]:
        if isinstance(part, tuple):
            out |= tree_refs(part)
    return out


def _float_literal(value: float) -> str:
    text = repr(float(value))
    return text if ("." in text or "e" in text) else text + ".0"


# ---------------------------------------------------------------------------
# Scopes: what a block may read and write
# ---------------------------------------------------------------------------


@dataclass
class Ref:
    kind: str  # "memref" | "stack"
    elem: str
    ssa: str
    dynamic: bool = False  # a memref<?xT>

    @property
    def mlir_type(self) -> str:
        if self.dynamic:
            return f"memref<?x{self.elem}>"
        return Param(self.kind, self.elem).mlir_type


@dataclass
class Scope:
    names: dict[int, str]  # readable scalar variables -> current SSA name
    mutable: set[int]  # variables this block may update (and consume)
    ivs: list[str]  # loop indices in [0, MEMREF_SIZE)
    refs: dict[int, Ref]
    ref_write: set[int]  # memrefs: take/put, calls; stacks: overwrite, calls
    ref_read: set[int]  # memrefs: loads; stacks: balanced push/pop
    borrows: dict[int, list[tuple[Any, int]]]  # memref -> borrowed (base, shift)
    # runs forward first: an even number of rev.inv between this block and the
    # function or the rev.routine compute region around it (compute regions
    # always run forward, then backward)
    forward: bool
    in_compute: bool  # inside a rev.routine compute region
    depth: int
    loop_depth: int
    lines: list[str] = field(default_factory=list[str])
    # non-canonical mode: expressions already emitted here or in an enclosing
    # block, with the versions of the variables they read
    caches: list[dict[Tree, tuple[str, dict[int, str]]]] = field(default_factory=lambda: [{}])
    accumulate: set[int] = field(default_factory=set[int])  # memrefs a parallel loop accumulates into

    @staticmethod
    def function_body() -> Scope:
        """A function's body, before its arguments are bound."""
        return Scope(
            names={},
            mutable=set(),
            ivs=[],
            refs={},
            ref_write=set(),
            ref_read=set(),
            borrows={},
            forward=True,
            in_compute=False,
            depth=0,
            loop_depth=0,
        )

    def child(self, carried: dict[int, str], mutable: set[int]) -> Scope:
        names = dict(self.names)
        names.update(carried)
        return Scope(
            names=names,
            mutable=set(mutable),
            ivs=list(self.ivs),
            refs=dict(self.refs),
            ref_write=set(self.ref_write),
            ref_read=set(self.ref_read),
            borrows={k: list(v) for k, v in self.borrows.items()},
            forward=self.forward,
            in_compute=self.in_compute,
            depth=self.depth + 1,
            loop_depth=self.loop_depth,
            caches=[*self.caches, {}],
            accumulate=set(self.accumulate),
        )

    def emit(self, line: str) -> None:
        self.lines.append(line)

    @contextmanager
    def section(
        self,
        freeze: set[int] = frozenset(),  # type: ignore[assignment]
        hide: set[int] = frozenset(),  # type: ignore[assignment]
        lock: set[int] = frozenset(),  # type: ignore[assignment]
        unread: set[int] = frozenset(),  # type: ignore[assignment]
    ) -> Iterator[None]:
        """Restrict the block for a stretch of statements, then restore."""
        saved = (set(self.mutable), set(self.ref_write), set(self.ref_read))
        hidden = {v: self.names.pop(v) for v in hide if v in self.names}
        self.mutable -= set(freeze) | set(hide)
        self.ref_write -= set(lock) | set(unread)
        self.ref_read -= set(unread)
        try:
            yield
        finally:
            self.mutable, self.ref_write, self.ref_read = saved
            for v in hidden:
                assert v not in self.names
            # hidden variables come back under the name the pattern gives them


# ---------------------------------------------------------------------------
# The builder
# ---------------------------------------------------------------------------


class ProgramBuilder:
    def __init__(
        self,
        draw: Callable[[st.SearchStrategy[Any]], Any],
        *,
        floats: bool,
        max_depth: int,
        budget: int,
        share: bool = False,
        stacks: bool = True,
        extensions: Extensions = Extensions(),
    ):
        self.draw = draw
        self.extensions = extensions
        self.floats = floats
        self.stacks = stacks
        self.share = share
        self.max_depth = max_depth
        self.function_budget = budget  # statements per function, nested ones included
        self.budget = budget
        self.counter = itertools.count()
        self.vtype: dict[int, str] = {}
        self.vids = itertools.count()
        self.rids = itertools.count()
        self.functions: list[FuncInfo] = []
        self.current: FuncInfo | None = None
        self.ranges: dict[str, range] = {}  # a loop index's values, for indices that leave the array

    # -- small helpers ----------------------------------------------------------

    def fresh(self, prefix: str = "v") -> str:
        return f"%{prefix}{next(self.counter)}"

    def new_var(self, type: str) -> int:
        vid = next(self.vids)
        self.vtype[vid] = type
        return vid

    def pick(self, options: list[Any]) -> Any:
        return self.draw(st.sampled_from(options))

    def chance(self, p_true_percent: int) -> bool:
        # shrinks towards False
        return self.draw(st.integers(0, 99)) >= 100 - p_true_percent

    def subset(self, items: list[Any], max_size: int | None = None) -> list[Any]:
        if not items:
            return []
        chosen = self.draw(st.lists(st.sampled_from(items), max_size=max_size or len(items), unique=True))
        return [x for x in items if x in chosen]  # keep a stable order

    def vars_of(self, scope: Scope, type: str, pool: set[int] | None = None) -> list[int]:
        source = scope.names.keys() if pool is None else pool
        return sorted(v for v in source if v in scope.names and self.vtype[v] == type)

    def mutable_of(self, scope: Scope, type: str) -> list[int]:
        return self.vars_of(scope, type, scope.mutable)

    def array_types(self) -> list[str]:
        return [I64, F64] if self.floats else [I64]

    def types(self) -> list[str]:
        return self.array_types() + ([I1] if self.extensions.flags else [])

    def refs_of(self, scope: Scope, kind: str, elem: str, allowed: set[int]) -> list[int]:
        return sorted(r for r in allowed if scope.refs[r].kind == kind and scope.refs[r].elem == elem)

    # -- expressions --------------------------------------------------------------

    def int_leaf(self, scope: Scope, exclude: set[int], allow_loads: bool = True) -> Tree:
        options: list[str] = ["const"]
        ints = [v for v in self.vars_of(scope, I64) if v not in exclude]
        if ints:
            options.insert(0, "var")
        if scope.ivs:
            options.append("iv")
        memrefs = self.refs_of(scope, "memref", I64, scope.ref_read)
        if allow_loads and memrefs:
            options += ["load", "load"] if self.extensions.versioned_loops and scope.ivs else ["load"]
        flags = [v for v in self.vars_of(scope, I1) if v not in exclude]
        if flags:
            options.append("flag")
        kind = self.pick(options)
        if kind == "var":
            return ("var", self.pick(ints))
        if kind == "flag":
            return ("ext", self.pick(["extui", "extsi"]), ("var", self.pick(flags)))
        if kind == "iv":
            return ("iv", self.pick(scope.ivs))
        if kind == "load":
            load = self.load(scope, self.pick(memrefs), exclude)
            if load is not None:
                return load
        return ("const", I64, self.pick(INT_CONSTS))

    def int_tree(self, scope: Scope, exclude: set[int], depth: int = 2, allow_loads: bool = True) -> Tree:
        if depth <= 0 or not self.chance(55):
            return self.int_leaf(scope, exclude, allow_loads)
        kind = self.pick(["bin", "shift", "divrem", "select"])
        sub = lambda: self.int_tree(scope, exclude, depth - 1, allow_loads)  # noqa: E731
        if kind == "bin":
            return ("bin", self.pick(INT_BINOPS), I64, sub(), sub())
        if kind == "shift":
            amount: Tree = ("const", I64, self.draw(st.integers(0, 7)))
            if self.extensions.wide_shifts and self.chance(50):
                amount = sub() if self.chance(50) else ("const", I64, self.pick([63, 64, 65, 127, -1]))
            return ("bin", self.pick(SHIFT_OPS), I64, sub(), amount)
        if kind == "divrem":
            divisor: Tree = ("const", I64, self.pick([1, 2, 3, -1, -7, 16]))
            ops = ["divsi", "remsi"]
            if self.extensions.division:
                ops += ["divui", "remui", "ceildivsi", "floordivsi"]
                if self.chance(50):
                    divisor = sub() if self.chance(50) else ("const", I64, self.pick([0, -1]))
            return ("bin", self.pick(ops), I64, sub(), divisor)
        cond = ("cmp", self.pick(CMP_PREDS), sub(), sub())
        return ("select", cond, sub(), sub(), I64)

    def cond_tree(self, scope: Scope, allowed: set[int]) -> Tree:
        """An i1 condition over integers (never floats: branches must not
        depend on rounding)."""
        exclude = set(scope.names) - allowed
        flags = [v for v in self.vars_of(scope, I1) if v not in exclude]
        if flags and self.chance(30):
            return ("var", self.pick(flags))

        def cmp() -> Tree:
            return (
                "cmp",
                self.pick(CMP_PREDS),
                self.int_tree(scope, exclude, 1),
                self.int_tree(scope, exclude, 1),
            )

        if self.chance(25):
            return ("bool", self.pick(["andi", "ori", "xori"]), cmp(), cmp())
        return cmp()

    def float_leaf(self, scope: Scope, exclude: set[int], complex: bool = True) -> Tree:
        """A bounded (|x| ≤ 2), 1-Lipschitz function of the current state;
        with the ``complex`` extension, sometimes one through a complex
        function instead (bounded, finite: ``tanh`` or ``atan`` of its
        result, which may be infinite)."""
        options = ["const", "int"]
        floats = [v for v in self.vars_of(scope, F64) if v not in exclude]
        if floats:
            options.insert(0, "var")
        memrefs = self.refs_of(scope, "memref", F64, scope.ref_read)
        if memrefs:
            options += ["load", "load"] if self.extensions.versioned_loops and scope.ivs else ["load"]
        kind = self.pick(options)
        if kind == "var":
            return ("math", self.pick(BOUNDED_FNS), ("var", self.pick(floats)))
        if kind == "load":
            load = self.load(scope, self.pick(memrefs), exclude)
            if load is not None:
                return ("math", self.pick(BOUNDED_FNS), load)
        if complex and self.extensions.complex and self.chance(25):
            fn, part = self.pick(COMPLEX_UNARY + COMPLEX_BINARY), self.pick(COMPLEX_PARTS)
            parts = self.float_leaf(scope, exclude, False), self.float_leaf(scope, exclude, False)
            return ("math", self.pick(["tanh", "atan"]), ("complex", fn, part, *parts))
        if kind == "int":
            small = ("bin", "andi", I64, self.int_tree(scope, exclude, 1), ("const", I64, 3))
            return ("bin", "mulf", F64, ("sitofp", small), ("const", F64, 0.5))
        return ("const", F64, self.pick(FLOAT_CONSTS))

    def float_inner(self, scope: Scope, exclude: set[int], depth: int = 2) -> Tree:
        if depth <= 0 or not self.chance(50):
            return self.float_leaf(scope, exclude)
        kind = self.pick(["addf", "subf", "mulf", "negf", "raw"])
        if kind == "negf":
            return ("negf", self.float_inner(scope, exclude, depth - 1))
        if kind == "raw":
            # y += g(a * b): a raw product of two current values
            floats = [v for v in self.vars_of(scope, F64) if v not in exclude]
            if len(floats) >= 1:
                a = ("var", self.pick(floats))
                return ("bin", "mulf", F64, a, self.float_leaf(scope, exclude))
            return self.float_leaf(scope, exclude)
        return (
            "bin",
            kind,
            F64,
            self.float_inner(scope, exclude, depth - 1),
            self.float_inner(scope, exclude, depth - 1),
        )

    def float_value(self, scope: Scope, exclude: set[int]) -> Tree:
        """The value operand of a float update: c·g(e), |c| ≤ 1."""
        if self.chance(15):
            return ("const", F64, self.pick(FLOAT_CONSTS))
        inner = ("math", self.pick(BOUNDED_FNS), self.float_inner(scope, exclude))
        scale = self.pick([1.0, 0.5, -0.5, 0.25])
        if scale == 1.0:
            return inner
        return ("bin", "mulf", F64, ("const", F64, scale), inner)

    def angle(self, scope: Scope, exclude: set[int]) -> Tree:
        """A rotation angle computed exactly (from integers and constants)."""
        if self.chance(40):
            small = ("bin", "andi", I64, self.int_tree(scope, exclude, 1), ("const", I64, 15))
            return ("bin", "mulf", F64, ("sitofp", small), ("const", F64, 0.375))
        return ("const", F64, self.pick([0.5, -1.25, 3.0, 0.0]))

    def value(self, scope: Scope, type: str, exclude: set[int]) -> Tree:
        if type == I1:
            return self.cond_tree(scope, set(scope.names) - exclude)
        if type == I64:
            return self.int_tree(scope, exclude)
        return self.float_value(scope, exclude)

    # -- memref indices -------------------------------------------------------------

    def index_base(self, scope: Scope, exclude: set[int]) -> Tree | None:
        """A dynamic index base: an int tree without loads, or a loop index."""
        options = []
        if [v for v in self.vars_of(scope, I64) if v not in exclude]:
            options.append("var")
        if scope.ivs:
            options.append("iv")
        if not options:
            return None
        if self.pick(options) == "iv":
            return ("iv", self.pick(scope.ivs))
        return self.int_tree(scope, exclude, 1, allow_loads=False)

    def load(self, scope: Scope, rid: int, exclude: set[int]) -> Tree | None:
        borrowed = scope.borrows.get(rid, [])
        if not borrowed:
            kinds = ["const", "dyn"]
            if self.extensions.parallel and self.extensions.out_of_bounds and scope.ivs:
                kinds.append("affine")
            if self.extensions.versioned_loops and scope.ivs:
                kinds += ["versioned", "versioned"]
            kind = self.pick(kinds)
            if kind == "versioned":
                iv, scale = self.pick(scope.ivs), self.pick([1, 1, 2, -1, -2, 3])
                return ("load", rid, ("affine", iv, scale, self.invariant(scope, exclude, iv, scale)))
            if kind == "affine":  # what loop versioning hoists checks of, in and out of range
                offset = self.int_tree(scope, exclude, 1, allow_loads=False) if self.chance(30) else None
                offset = offset or ("const", I64, self.draw(st.integers(-1, MEMREF_SIZE)))
                return ("load", rid, ("affine", self.pick(scope.ivs), self.pick([1, 1, 2, -1]), offset))
            if kind == "dyn":
                base = self.index_base(scope, exclude)
                if base is not None:
                    return ("load", rid, self.index_tree(base, self.draw(st.integers(0, 3))))
            return ("load", rid, ("cidx", self.draw(st.integers(0, MEMREF_SIZE - 1))))
        bases = {b for b, _ in borrowed}
        if len(bases) != 1:
            return None
        (base,) = bases
        used = {s % MEMREF_SIZE for _, s in borrowed}
        free = [s for s in range(MEMREF_SIZE) if s not in used]
        if not free:
            return None
        # every var the base reads is frozen while the element is borrowed
        if base is None:
            return ("load", rid, ("cidx", self.pick(free)))
        return ("load", rid, self.index_tree(base, self.pick(free)))

    def invariant(self, scope: Scope, exclude: set[int], iv: str, scale: int) -> Tree:
        """The invariant part ``c`` of an index ``scale·iv + c``: a constant,
        often the one that first leaves the array at the loop's first, a
        middle or its last iteration (in the loop's order or the other),
        plus up to two small terms of the state (``x % m``, a division of
        one by a constant, its ``min`` or ``max`` with a constant) and
        sometimes a large one (``x // d``): what decision 135 lets the
        precondition compute before the loop."""
        values = list(self.ranges.get(iv, range(MEMREF_SIZE)))
        base = self.draw(st.integers(-2, MEMREF_SIZE + 1))
        if values and self.chance(70):
            at = self.pick([values[0], values[len(values) // 2], values[-1]])
            base = (MEMREF_SIZE if self.chance(50) else -1) - scale * at
        tree: Tree = self.constant(base)
        # mostly values the loop does not carry: its carried state is not invariant
        state = [v for v in self.vars_of(scope, I64) if v not in exclude]
        captured = [v for v in state if v not in scope.mutable]
        state = captured if captured and self.chance(80) else state
        for _ in range(self.draw(st.integers(0, 2))):
            x: Tree = ("var", self.pick(state)) if state and self.chance(80) else self.constant(self.pick(INT_CONSTS))
            small: Tree = ("bin", self.pick(["remsi", "remsi", "remui"]), I64, x, self.divisor())
            term = self.pick(["rem", "div", "min", "max", "large"])
            if term == "div":
                small = ("bin", self.pick(["divsi", "floordivsi", "ceildivsi"]), I64, small, self.divisor())
            elif term in ("min", "max"):
                small = ("bin", f"{term}si", I64, small, self.constant(self.draw(st.integers(-2, 2))))
            elif term == "large":
                small = ("bin", self.pick(["divsi", "floordivsi", "ceildivsi", "divui"]), I64, x, self.divisor())
            tree = ("bin", self.pick(["addi", "subi"]), I64, tree, small)
        return tree

    def divisor(self) -> Tree:
        """A constant divisor other than zero, −1 and negative ones among
        them, sometimes written ``0 − d``, as the Python frontend writes −1."""
        d = self.pick([2, 3, 5, -1, -2, -3, 1, 2**62])
        return ("bin", "subi", I64, ("const", I64, 0), ("const", I64, -d)) if self.chance(25) else ("const", I64, d)

    def constant(self, value: int) -> Tree:
        """``value``, sometimes as a product of constants or a difference."""
        if value % 2 == 0 and value and self.chance(30):
            return ("bin", "muli", I64, ("const", I64, value // 2), ("const", I64, 2))
        if self.chance(20):
            return ("bin", "subi", I64, ("const", I64, 0), ("const", I64, -value))
        return ("const", I64, value)

    @staticmethod
    def index_tree(base: Tree | None, shift: int) -> Tree:
        if base is None:
            return ("cidx", shift)
        if base[0] == "iv" and shift == 0:
            return ("ividx", base[1])
        return ("didx", base, shift)

    # -- emission -------------------------------------------------------------------

    def emit_tree(self, scope: Scope, tree: Tree) -> str:
        kind = tree[0]
        if kind == "var":
            return scope.names[tree[1]]
        if not self.share or tree_refs(tree):
            return self._emit_tree(scope, tree)
        # reuse the value if every variable it reads is still the same version
        # (loads are never shared: a write in between would make them stale)
        for cache in reversed(scope.caches):
            if (hit := cache.get(tree)) is not None:
                name, versions = hit
                if all(scope.names.get(v) == n for v, n in versions.items()):
                    return name
        name = self._emit_tree(scope, tree)
        versions = {v: scope.names[v] for v in tree_vars(tree)}
        scope.caches[-1][tree] = (name, versions)
        return name

    def _emit_tree(self, scope: Scope, tree: Tree) -> str:
        kind = tree[0]
        if kind == "const":
            _, type, value = tree
            name = self.fresh("c")
            literal = _float_literal(value) if type == F64 else str(value)
            scope.emit(f"{name} = arith.constant {literal} : {type}")
            return name
        if kind == "iv":
            name = self.fresh("i")
            scope.emit(f"{name} = arith.index_cast {tree[1]} : index to i64")
            return name
        if kind == "load":
            _, rid, idx = tree
            index = self.emit_index(scope, idx)
            ref = scope.refs[rid]
            name = self.fresh("ld")
            scope.emit(f"{name} = memref.load {ref.ssa}[{index}] : {ref.mlir_type}")
            return name
        if kind == "bin":
            _, op, type, a, b = tree
            ea, eb = self.emit_tree(scope, a), self.emit_tree(scope, b)
            name = self.fresh("e")
            scope.emit(f"{name} = arith.{op} {ea}, {eb} : {type}")
            return name
        if kind == "cmp":
            _, pred, a, b = tree
            ea, eb = self.emit_tree(scope, a), self.emit_tree(scope, b)
            name = self.fresh("p")
            scope.emit(f"{name} = arith.cmpi {pred}, {ea}, {eb} : i64")
            return name
        if kind == "bool":
            _, op, a, b = tree
            ea, eb = self.emit_tree(scope, a), self.emit_tree(scope, b)
            name = self.fresh("p")
            scope.emit(f"{name} = arith.{op} {ea}, {eb} : i1")
            return name
        if kind == "select":
            _, cond, a, b, type = tree
            ec = self.emit_tree(scope, cond)
            ea, eb = self.emit_tree(scope, a), self.emit_tree(scope, b)
            name = self.fresh("e")
            scope.emit(f"{name} = arith.select {ec}, {ea}, {eb} : {type}")
            return name
        if kind == "complex":
            _, fn, part, a, b = tree
            ea, eb = self.emit_tree(scope, a), self.emit_tree(scope, b)
            z, swapped, w, result = (self.fresh("z") for _ in range(4))
            name = self.fresh("f")
            scope.emit(f"{z} = complex.create {ea}, {eb} : complex<f64>")
            if fn in COMPLEX_BINARY:
                scope.emit(f"{swapped} = complex.create {eb}, {ea} : complex<f64>")
                scope.emit(f"{w} = complex.exp {swapped} : complex<f64>")
                scope.emit(f"{result} = complex.{fn} {z}, {w} : complex<f64>")
            else:
                scope.emit(f"{result} = complex.{fn} {z} : complex<f64>")
            scope.emit(f"{name} = complex.{part} {result} : complex<f64>")
            return name
        if kind in UNARY_FORMS:
            prefix, form = UNARY_FORMS[kind]
            operand = self.emit_tree(scope, tree[-1])
            name = self.fresh(prefix)
            scope.emit(f"{name} = " + form.format(*tree[1:-1], a=operand))
            return name
        raise AssertionError(tree)

    def emit_index(self, scope: Scope, idx: Tree) -> str:
        kind = idx[0]
        if kind == "cidx":
            name = self.fresh("k")
            scope.emit(f"{name} = arith.constant {idx[1]} : index")
            return name
        if kind == "ividx":
            return idx[1]
        if kind == "affine":
            _, iv, scale, offset = idx
            scaled = self.emit_tree(scope, ("bin", "muli", I64, ("iv", iv), ("const", I64, scale)))
            at = self.fresh("e")
            scope.emit(f"{at} = arith.addi {scaled}, {self.emit_tree(scope, offset)} : i64")
            name = self.fresh("ix")
            scope.emit(f"{name} = arith.index_cast {at} : i64 to index")
            return name
        _, base, shift = idx
        value = self.emit_tree(scope, base)
        if shift:
            k = self.emit_tree(scope, ("const", I64, shift))
            shifted = self.fresh("e")
            scope.emit(f"{shifted} = arith.addi {value}, {k} : i64")
            value = shifted
        size = 2 * MEMREF_SIZE if self.extensions.out_of_bounds else MEMREF_SIZE
        mask = self.emit_tree(scope, ("const", I64, size - 1))
        masked = self.fresh("e")
        scope.emit(f"{masked} = arith.andi {value}, {mask} : i64")
        name = self.fresh("ix")
        scope.emit(f"{name} = arith.index_cast {masked} : i64 to index")
        return name

    def update(self, scope: Scope, vid: int, op: str, value: str | None) -> None:
        type = self.vtype[vid]
        name = self.fresh("x")
        if value is None:
            scope.emit(f"{name} = rev.{op} {scope.names[vid]} : {type}")
        else:
            scope.emit(f"{name} = rev.{op} {scope.names[vid]}, {value} : {type}")
        scope.names[vid] = name

    def region(
        self,
        header: str,
        scope: Scope,
        args: list[tuple[str, str]],
        body: list[str],
    ) -> None:
        """Append `header {` region `}` (header may be empty for a follow-on
        region)."""
        scope.emit(f"{header}{{")
        if args:
            scope.emit("^bb0(" + ", ".join(f"{n}: {t}" for n, t in args) + "):")
        for line in body:
            scope.emit("  " + line)
        scope.emit("}")

    def join_regions(self, scope: Scope, start: int) -> None:
        """Merge `}` / `keyword {` lines emitted for consecutive regions."""
        merged: list[str] = []
        for line in scope.lines[start:]:
            if merged and merged[-1] == "}" and line.startswith("} "):
                merged[-1] = line
            else:
                merged.append(line)
        scope.lines[start:] = merged

    # -- statements -----------------------------------------------------------------

    def block(self, scope: Scope, max_stmts: int = 4) -> None:
        count = self.draw(st.integers(0 if scope.depth else 1, max_stmts))
        for _ in range(count):
            if self.budget <= 0:
                return
            self.budget -= 1
            self.statement(scope)

    def statement(self, scope: Scope) -> None:
        kinds = ["update", "swap", "float", "ancilla", "if", "for", "take"]
        kinds += ["while", "stack", "routine", "inv", "call"]
        if self.functions:
            kinds += ["call", "call"]
        if self.extensions.parallel:
            kinds += ["array", "accumulate", "parallel"]
        if self.extensions.versioned_loops:
            kinds += ["for", "for", "call", "call"] if scope.loop_depth else ["for", "for"]
        kind = self.pick(kinds)
        nested = scope.depth < self.max_depth
        handlers = {
            "update": self.stmt_update,
            "swap": self.stmt_swap,
            "float": self.stmt_rot,
            "ancilla": self.stmt_ancilla if nested else None,
            "if": self.stmt_if if nested else None,
            "for": self.stmt_for if nested and scope.loop_depth < 2 else None,
            "while": self.stmt_while if nested and scope.loop_depth < 2 else None,
            "take": self.stmt_take if nested else None,
            "stack": self.stmt_stack if nested and self.stacks else None,
            "routine": self.stmt_routine if nested else None,
            "inv": self.stmt_inv if nested else None,
            "call": self.stmt_call,
            "array": self.stmt_array if nested else None,
            "accumulate": self.stmt_accumulate if scope.accumulate else None,
            "parallel": self.stmt_parallel if nested and scope.loop_depth < 2 else None,
        }
        handler = handlers[kind]
        if handler is None or not handler(scope):
            self.stmt_update(scope)

    def stmt_update(self, scope: Scope) -> bool:
        targets = sorted(scope.mutable)
        if not targets:
            return False
        self.write(scope, self.pick(targets))
        return True

    def write(self, scope: Scope, vid: int) -> None:
        """``vid`` ⊙= a value of the state around it."""
        if self.vtype[vid] == I1:
            op = "xor"
        elif self.vtype[vid] == I64:
            op = self.pick(["add", "sub", "xor", "neg", "inc", "dec"])
        else:
            op = self.pick(["add", "sub", "add", "sub", "neg"])
        if op in ("neg", "inc", "dec"):
            self.update(scope, vid, op, None)
            return
        tree = self.value(scope, self.vtype[vid], {vid})
        value = self.emit_tree(scope, tree)
        self.update(scope, vid, op, value)

    def stmt_swap(self, scope: Scope) -> bool:
        type = self.pick(self.types())
        targets = self.mutable_of(scope, type)
        if len(targets) < 2:
            return False
        a, b = self.draw(st.lists(st.sampled_from(targets), min_size=2, max_size=2, unique=True))
        na, nb = self.fresh("x"), self.fresh("x")
        scope.emit(f"{na}, {nb} = rev.swap {scope.names[a]}, {scope.names[b]} : {type}")
        scope.names[a], scope.names[b] = na, nb
        return True

    def stmt_rot(self, scope: Scope) -> bool:
        targets = self.mutable_of(scope, F64)
        if len(targets) < 2:
            return False
        a, b = self.draw(st.lists(st.sampled_from(targets), min_size=2, max_size=2, unique=True))
        theta = self.emit_tree(scope, self.angle(scope, {a, b}))
        op = self.pick(["rot", "irot"])
        na, nb = self.fresh("x"), self.fresh("x")
        scope.emit(f"{na}, {nb} = rev.{op} {scope.names[a]}, {scope.names[b]}, {theta} : f64")
        scope.names[a], scope.names[b] = na, nb
        return True

    # ancilla: a ← e; a ⊙= v…; body; a ⊙=⁻¹ v… (reversed); a → e
    def stmt_ancilla(self, scope: Scope) -> bool:
        type = self.pick(self.types())
        anc = self.new_var(type)
        if self.chance(50):
            init: Tree = ("const", type, zero_of(type))
        else:
            init = self.value(scope, type, set())
        steps: list[tuple[str, Tree | None]] = []
        name = self.fresh("a")
        scope.emit(f"{name} = anc.alloc {self.emit_tree(scope, init)} : {type}")
        scope.names[anc] = name
        inverse = {"add": "sub", "sub": "add", "xor": "xor", "neg": "neg", "inc": "dec", "dec": "inc"}
        for _ in range(self.draw(st.integers(1, 2))):
            ops = {I1: ["xor"], I64: ["add", "sub", "xor", "neg", "inc"]}.get(type, ["add", "sub", "neg"])
            op = self.pick(ops)
            tree = None if op in ("neg", "inc") else self.value(scope, type, {anc})
            steps.append((op, tree))
            value = None if tree is None else self.emit_tree(scope, tree)
            self.update(scope, anc, op, value)
        read_vars = tree_vars(init)
        read_refs = tree_refs(init)
        for _, tree in steps:
            if tree is not None:
                read_vars |= tree_vars(tree)
                read_refs |= tree_refs(tree)
        with scope.section(freeze=read_vars | {anc}, lock=read_refs):
            self.block(scope, 3)
        for op, tree in reversed(steps):
            value = None if tree is None else self.emit_tree(scope, tree)
            self.update(scope, anc, inverse[op], value)
        expected = self.emit_tree(scope, init)
        if self.extensions.failing_checks and type != I1 and self.chance(20):
            one = self.emit_tree(scope, ("const", type, 1 if type == I64 else 1.0))
            off = self.fresh("e")
            scope.emit(f"{off} = arith.{'addi' if type == I64 else 'addf'} {expected}, {one} : {type}")
            expected = off
        elif self.chance(10):  # a failing check is never switched off
            expected += " {nocheck}"
        scope.emit(f"anc.free {scope.names.pop(anc)}, {expected} : {type}")
        return True

    def carry(self, scope: Scope, max_size: int = 3) -> list[int]:
        return self.subset(sorted(scope.mutable), max_size)

    def block_args(self, carried: list[int]) -> tuple[dict[int, str], list[tuple[str, str]]]:
        names = {v: self.fresh("s") for v in carried}
        return names, [(names[v], self.vtype[v]) for v in carried]

    def state_text(self, scope: Scope, carried: list[int]) -> str:
        if not carried:
            return "()"
        values = ", ".join(scope.names[v] for v in carried)
        types = ", ".join(self.vtype[v] for v in carried)
        return f"({values}) : {types}"

    def results(self, scope: Scope, carried: list[int]) -> str:
        names = [self.fresh("x") for _ in carried]
        for v, n in zip(carried, names):
            scope.names[v] = n
        return (", ".join(names) + " = ") if names else ""

    def yield_line(self, scope: Scope, values: list[int], op: str = "rev.yield") -> str:
        if not values:
            return op
        return f"{op} " + ", ".join(scope.names[v] for v in values) + " : " + ", ".join(self.vtype[v] for v in values)

    def body_region(
        self,
        scope: Scope,
        carried: list[int],
        *,
        frozen: set[int] = frozenset(),  # type: ignore[assignment]
        lead_args: list[tuple[str, str]] = (),  # type: ignore[assignment]
        fill: Callable[[Scope], None] | None = None,
        extra_yield: list[int] = (),  # type: ignore[assignment]
    ) -> tuple[list[tuple[str, str]], list[str]]:
        names, args = self.block_args(carried)
        child = scope.child(names, set(carried) - set(frozen))
        if fill is not None:
            fill(child)
        else:
            self.block(child)
        child.emit(self.yield_line(child, [*carried, *extra_yield]))
        return [*lead_args, *args], child.lines

    def condition_region(self, scope: Scope, carried: list[int], tree: Tree) -> tuple[list[tuple[str, str]], list[str]]:
        names, args = self.block_args(carried)
        child = scope.child(names, set())
        value = self.emit_tree(child, tree)
        child.emit(f"rev.cond {value}")
        return args, child.lines

    def stmt_if(self, scope: Scope) -> bool:
        carried = self.carry(scope)
        ints = set(self.vars_of(scope, I64))
        tree = self.cond_tree(scope, ints)
        frozen = tree_vars(tree) & set(carried)
        locked = tree_refs(tree)
        start = len(scope.lines)
        state = self.state_text(scope, carried)
        attrs = " attributes {nocheck}" if self.chance(10) else ""
        pre = self.condition_region(scope, carried, tree)
        saved_write = set(scope.ref_write)
        scope.ref_write -= locked
        then = self.body_region(scope, carried, frozen=frozen)
        if self.chance(30):
            otherwise = self.body_region(scope, carried, fill=lambda s: None)
        else:
            otherwise = self.body_region(scope, carried, frozen=frozen)
        scope.ref_write = saved_write
        post = self.condition_region(scope, carried, tree) if self.chance(50) else None
        results = self.results(scope, carried)
        self.region(f"{results}rev.if {state}{attrs} pre ", scope, *pre)
        self.region("} then ", scope, *then)
        self.region("} else ", scope, *otherwise)
        if post is not None:
            self.region("} post ", scope, *post)
        self.join_regions(scope, start)
        return True

    def loop_bounds(self) -> tuple[int, int, int, bool]:
        """A ``rev.for``'s constant bounds and step, and whether its index
        may index arrays: small ones that it may, or with the
        ``loop_limits`` extension, sometimes ones at the limits of
        ``index`` (at most 8 iterations) that it may not."""
        if self.extensions.loop_limits and self.chance(40):
            top, bottom = 2**63 - 1, -(2**63)
            if self.chance(50):  # near the top, by small steps or one that passes it
                lb = self.draw(st.integers(top - 8, top))
                return lb, self.draw(st.integers(lb, top)), self.pick([1, 2, 3, top - 1, top]), False
            # across the whole range, by steps of a quarter of it or more
            lb, ub = self.draw(st.integers(bottom, bottom + 3)), self.draw(st.integers(top - 3, top))
            return lb, ub, self.draw(st.integers(2**62, top)), False
        if self.extensions.versioned_loops and self.chance(50):
            lb = self.draw(st.integers(0, MEMREF_SIZE - 1))
            return lb, self.draw(st.integers(lb, MEMREF_SIZE)), self.draw(st.integers(1, 3)), True
        lb = self.draw(st.integers(0, 2))
        return lb, self.draw(st.integers(lb, MEMREF_SIZE)), self.draw(st.integers(1, 2)), True

    def stmt_for(self, scope: Scope) -> bool:
        carried = self.carry(scope)
        lb, ub, step, indexes = self.loop_bounds()
        names = []
        for value in (lb, ub, step):
            name = self.fresh("k")
            scope.emit(f"{name} = arith.constant {value} : index")
            names.append(name)
        state = self.state_text(scope, carried)
        iv = self.fresh("iv")

        def fill(child: Scope) -> None:
            if indexes:
                child.ivs.append(iv)
                self.ranges[iv] = range(lb, ub, step)
            child.loop_depth += 1
            if indexes and self.extensions.versioned_loops and self.chance(70):
                self.versioned_read(child, iv)
            self.block(child)

        args, body = self.body_region(scope, carried, lead_args=[(iv, "index")], fill=fill)
        reverse = "reverse " if self.chance(30) else ""
        results = self.results(scope, carried)
        self.region(
            f"{results}rev.for {reverse}{names[0]} to {names[1]} step {names[2]} : index {state} ",
            scope,
            args,
            body,
        )
        return True

    def versioned_read(self, scope: Scope, iv: str) -> None:
        """A read of ``x[k·iv + c]`` at the top of a loop's body, so that
        most loops hold an index whose checks versioning hoists: added to
        an integer the body may update, or else held by an ancilla freed
        against the element read again."""
        memrefs = [r for r in sorted(scope.ref_read) if scope.refs[r].kind == "memref" and not scope.borrows.get(r)]
        if not memrefs:
            return
        rid, scale = self.pick(memrefs), self.pick([1, 1, 2, -1, -2, 3])
        targets = self.mutable_of(scope, I64) if scope.refs[rid].elem == I64 else []
        vid = self.pick(targets) if targets else None
        load = ("load", rid, ("affine", iv, scale, self.invariant(scope, {vid} - {None}, iv, scale)))
        if vid is not None:
            self.update(scope, vid, "add", self.emit_tree(scope, load))
            return
        ancilla, elem = self.fresh("a"), scope.refs[rid].elem
        scope.emit(f"{ancilla} = anc.alloc {self.emit_tree(scope, load)} : {elem}")
        scope.emit(f"anc.free {ancilla}, {self.emit_tree(scope, load)} : {elem}")

    def stmt_while(self, scope: Scope) -> bool:
        carried = self.carry(scope, 2)
        counter = self.new_var(I64)
        exclude = set(carried)
        if self.chance(50):
            bound: Tree = ("const", I64, self.draw(st.integers(0, 3)))
        else:
            bound = ("bin", "andi", I64, self.int_tree(scope, exclude, 1), ("const", I64, 3))
        up = self.chance(60)
        init = ("const", I64, 0) if up else bound
        final = bound if up else ("const", I64, 0)
        name = self.fresh("cnt")
        scope.emit(f"{name} = anc.alloc {self.emit_tree(scope, init)} : i64")
        scope.names[counter] = name
        state_vars = [counter, *carried]
        zero = ("const", I64, 0)
        if up:
            pre = ("cmp", "slt", ("var", counter), bound)
            post = ("cmp", self.pick(["sgt", "ne"]), ("var", counter), zero)
        else:
            pre = ("cmp", "sgt", ("var", counter), zero)
            post = ("cmp", "slt", ("var", counter), bound)
        start = len(scope.lines)
        state = self.state_text(scope, state_vars)
        locked = tree_refs(bound)
        attrs = " attributes {nocheck}" if self.chance(10) else ""
        pre_region = self.condition_region(scope, state_vars, pre)
        post_region = self.condition_region(scope, state_vars, post)
        step_first = self.chance(50)

        def fill(child: Scope) -> None:
            child.loop_depth += 1
            child.ref_write -= locked
            if step_first:
                self.update(child, counter, "inc" if up else "dec", None)
            child.mutable.discard(counter)
            self.block(child)
            if not step_first:
                self.update(child, counter, "inc" if up else "dec", None)

        names, args = self.block_args(state_vars)
        child = scope.child(names, set(state_vars))
        fill(child)
        child.emit(self.yield_line(child, state_vars))
        results = self.results(scope, state_vars)
        self.region(f"{results}rev.while {state}{attrs} pre ", scope, *pre_region)
        self.region("} post ", scope, *post_region)
        self.region("} do ", scope, args, child.lines)
        self.join_regions(scope, start)
        expected = self.emit_tree(scope, final)
        scope.emit(f"anc.free {scope.names.pop(counter)}, {expected} : i64")
        return True

    def stmt_take(self, scope: Scope) -> bool:
        memrefs = sorted(r for r in scope.ref_write if scope.refs[r].kind == "memref")
        if not memrefs:
            return False
        rid = self.pick(memrefs)
        ref = scope.refs[rid]
        kind = self.pick(["const", "dyn"])
        base: Tree | None = None
        if kind == "dyn":
            base = self.index_base(scope, set())
        shifts = [self.draw(st.integers(0, MEMREF_SIZE - 1))]
        if self.chance(35):
            shifts.append(self.pick([s for s in range(MEMREF_SIZE) if s != shifts[0]]))
        indices: list[str] = []
        elements: list[int] = []
        for shift in shifts:
            index = self.emit_index(scope, self.index_tree(base, shift))
            indices.append(index)
            vid = self.new_var(ref.elem)
            name = self.fresh("el")
            attrs = " {nocheck}" if base is not None and self.chance(10) else ""
            scope.emit(f"{name} = rev.take {ref.ssa}[{index}]{attrs} : {ref.mlir_type}")
            scope.names[vid] = name
            elements.append(vid)
        frozen = tree_vars(base) if base is not None else set()
        scope.borrows.setdefault(rid, [])
        added = [(base, s) for s in shifts]
        scope.borrows[rid].extend(added)
        scope.mutable |= set(elements)
        with scope.section(freeze=frozen, lock={rid}):
            if len(elements) == 2 and self.chance(50):
                a, b = elements
                na, nb = self.fresh("x"), self.fresh("x")
                scope.emit(f"{na}, {nb} = rev.swap {scope.names[a]}, {scope.names[b]} : {ref.elem}")
                scope.names[a], scope.names[b] = na, nb
            self.block(scope, 3)
        for item in added:
            scope.borrows[rid].remove(item)
        order = list(zip(elements, indices))
        if self.chance(50):
            order.reverse()
        for vid, index in order:
            scope.mutable.discard(vid)
            scope.emit(f"rev.put {scope.names.pop(vid)}, {ref.ssa}[{index}] : {ref.mlir_type}")
        return True

    def stmt_stack(self, scope: Scope) -> bool:
        kind = self.pick(["save", "overwrite", "copy", "local"])
        type = self.pick(self.types())
        targets = self.mutable_of(scope, type)
        if not targets:
            return False
        vid = self.pick(targets)
        if kind == "overwrite":
            if not scope.forward:  # must run forward first
                return False
            stacks = self.refs_of(scope, "stack", type, scope.ref_write)
            if not stacks:
                return False
            ref = scope.refs[self.pick(stacks)]
            scope.emit(f"anc.push {ref.ssa}, {scope.names.pop(vid)} : {ref.mlir_type}")
            scope.mutable.discard(vid)
            value = self.emit_tree(scope, self.value(scope, type, {vid}))
            name = self.fresh("ow")
            scope.emit(f"{name} = anc.alloc {value} : {type}")
            scope.names[vid] = name
            scope.mutable.add(vid)
            if not scope.in_compute:
                assert self.current is not None
                self.current.bidirectional = False
            return True
        local = kind == "local" or not self.refs_of(scope, "stack", type, scope.ref_read)
        if local:
            rid = next(self.rids)
            ssa = self.fresh("stk")
            scope.refs[rid] = Ref("stack", type, ssa)
            scope.emit(f"{ssa} = anc.stack_alloc : !anc.stack<{type}>")
            scope.ref_read.add(rid)
        else:
            rid = self.pick(self.refs_of(scope, "stack", type, scope.ref_read))
        ref = scope.refs[rid]
        if kind == "copy":
            scope.emit(f"anc.copy_push {ref.ssa}, {scope.names[vid]} : {ref.mlir_type}")
            with scope.section(freeze={vid}, lock={rid}):
                self.block(scope, 3)
            scope.emit(f"anc.copy_pop {ref.ssa}, {scope.names[vid]} : {ref.mlir_type}")
        else:
            scope.emit(f"anc.push {ref.ssa}, {scope.names[vid]} : {ref.mlir_type}")
            with scope.section(hide={vid}, lock={rid}):
                self.block(scope, 3)
            name = self.fresh("pop")
            scope.emit(f"{name} = anc.pop {ref.ssa} : {ref.mlir_type}")
            scope.names[vid] = name
        if local:
            attrs = " {nocheck}" if self.chance(10) else ""
            scope.emit(f"anc.stack_free {ref.ssa}{attrs} : {ref.mlir_type}")
            scope.ref_read.discard(rid)
            del scope.refs[rid]
        return True

    def stmt_routine(self, scope: Scope, computed: frozenset[int] = frozenset()) -> bool:
        """``computed``: arrays only the compute region may write."""
        carried = self.carry(scope)
        touched = set(self.subset(carried))  # the compute region updates these
        rest = [v for v in carried if v not in touched]
        writable = sorted(scope.ref_write)
        compute_refs = set(self.subset(writable)) | computed
        do_refs = set(writable) - compute_refs
        extras = [self.new_var(self.pick(self.types())) for _ in range(self.draw(st.integers(0, 2)))]
        start = len(scope.lines)
        state = self.state_text(scope, carried)

        names, args = self.block_args(carried)
        compute = scope.child(names, touched)
        for v in rest:
            compute.names.pop(v)  # the do region changes them: not readable here
        compute.ref_write = compute_refs
        compute.ref_read -= do_refs
        compute.forward, compute.in_compute = True, True
        for extra in extras:
            type = self.vtype[extra]
            init = self.value(compute, type, set()) if self.chance(50) else ("const", type, zero_of(type))
            name = self.fresh("a")
            compute.emit(f"{name} = anc.alloc {self.emit_tree(compute, init)} : {type}")
            compute.names[extra] = name
            compute.mutable.add(extra)
        if computed:  # start by writing them: a borrow, or a call that takes them
            with compute.section(lock=compute.ref_write - computed):
                writes = [self.stmt_take, self.stmt_call]
                if self.extensions.parallel and compute.loop_depth < 2:
                    writes.append(self.stmt_parallel)  # in a kernel's iteration, a nested parallel loop
                if not self.pick(writes)(compute):
                    self.stmt_update(compute)
        self.block(compute)
        for v in rest:
            compute.names[v] = names[v]
        compute.emit(self.yield_line(compute, [*carried, *extras]))

        do_names, do_args = self.block_args([*carried, *extras])
        do = scope.child(do_names, set(rest))
        do.ref_write = do_refs
        self.block(do)
        do.emit(self.yield_line(do, [*carried, *extras]))

        results = self.results(scope, carried)
        self.region(f"{results}rev.routine {state} compute ", scope, args, compute.lines)
        self.region("} do ", scope, do_args, do.lines)
        self.join_regions(scope, start)
        return True

    # local array: a ← zeros; routine {compute: writes a} do {reads a}; a → zeros
    def stmt_array(self, scope: Scope) -> bool:
        """The array has MEMREF_SIZE elements (its type says so, or not),
        or more: ``4 + (e & 3)`` from the state."""
        type = self.pick(self.array_types())
        rid = next(self.rids)
        ref = Ref("memref", type, self.fresh("arr"), dynamic=self.chance(40))
        size: Tree | None = None
        if ref.dynamic:
            size = ("const", I64, MEMREF_SIZE)
            if self.chance(50):
                masked = ("bin", "andi", I64, self.int_tree(scope, set(), 1, allow_loads=False), ("const", I64, 3))
                size = ("bin", "addi", I64, masked, size)
        scope.emit(f"{ref.ssa} = anc.array_alloc({self.emit_size(scope, size)}) : {ref.mlir_type}")
        scope.refs[rid] = ref
        scope.ref_write.add(rid)
        scope.ref_read.add(rid)
        with scope.section(freeze=tree_vars(size) if size is not None else set()):  # the free recomputes it
            self.stmt_routine(scope, frozenset({rid}))
        scope.ref_write.discard(rid)
        scope.ref_read.discard(rid)
        del scope.refs[rid]
        attrs = " {nocheck}" if self.chance(10) else ""
        scope.emit(f"anc.array_free {ref.ssa}({self.emit_size(scope, size)}){attrs} : {ref.mlir_type}")
        return True

    def emit_size(self, scope: Scope, size: Tree | None) -> str:
        """An array's size, or none for a static type."""
        if size is None:
            return ""
        name = self.fresh("n")
        scope.emit(f"{name} = arith.index_cast {self.emit_tree(scope, size)} : i64 to index")
        return name

    # for j in parallel(lb, ub, step): a[j] ⊙= …  (outside a kernel, or in one's iteration)
    def stmt_parallel(self, scope: Scope) -> bool:
        """A parallel loop over an array the block may write, each iteration
        updating its own element and reading the state around it, the
        other arrays and its local ones; device code runs it in order."""
        memrefs = [r for r in sorted(scope.ref_write) if scope.refs[r].kind == "memref" and not scope.borrows.get(r)]
        if not memrefs:
            return False
        rid = self.pick(memrefs)
        ref = scope.refs[rid]
        bounds = []
        lb = self.draw(st.integers(0, 1))
        values = (lb, self.draw(st.integers(lb, MEMREF_SIZE)), self.draw(st.integers(1, 2)))
        for value in values:
            bounds.append(self.fresh("k"))
            scope.emit(f"{bounds[-1]} = arith.constant {value} : index")
        iv, element = self.fresh("iv"), self.fresh("el")
        self.ranges[iv] = range(*values)
        iteration = scope.child({}, set())
        iteration.ivs.append(iv)
        iteration.loop_depth += 1
        iteration.ref_write, iteration.accumulate = set(), set()
        iteration.ref_read.discard(rid)
        vid = self.new_var(ref.elem)
        iteration.emit(f"{element} = rev.take {ref.ssa}[{iv}] : {ref.mlir_type}")
        iteration.names[vid] = element
        iteration.mutable.add(vid)
        self.block(iteration, 3)
        iteration.emit(f"rev.put {iteration.names[vid]}, {ref.ssa}[{iv}] : {ref.mlir_type}")
        iteration.emit("rev.yield")
        reverse = "reverse " if self.chance(30) else ""
        header = f"rev.for parallel {reverse}{bounds[0]} to {bounds[1]} step {bounds[2]} : index () "
        self.region(header, scope, [(iv, "index")], iteration.lines)
        return True

    # shared accumulation in a parallel loop: g[j] ⊕= v (take, add or sub, put)
    def stmt_accumulate(self, scope: Scope) -> bool:
        rid = self.pick(sorted(scope.accumulate))
        ref = scope.refs[rid]
        base = self.index_base(scope, set()) if self.chance(60) else None
        index = self.emit_index(scope, self.index_tree(base, self.draw(st.integers(0, MEMREF_SIZE - 1))))
        value = self.emit_tree(scope, self.value(scope, ref.elem, set()))
        taken, updated = self.fresh("el"), self.fresh("x")
        scope.emit(f"{taken} = rev.take {ref.ssa}[{index}] : {ref.mlir_type}")
        scope.emit(f"{updated} = rev.{self.pick(['add', 'sub'])} {taken}, {value} : {ref.elem}")
        scope.emit(f"rev.put {updated}, {ref.ssa}[{index}] : {ref.mlir_type}")
        return True

    def stmt_inv(self, scope: Scope) -> bool:
        carried = self.carry(scope)
        state = self.state_text(scope, carried)
        names, args = self.block_args(carried)
        child = scope.child(names, set(carried))
        child.forward = not scope.forward
        self.block(child)
        child.emit(self.yield_line(child, carried))
        results = self.results(scope, carried)
        self.region(f"{results}rev.inv {state} ", scope, args, child.lines)
        return True

    def stmt_call(self, scope: Scope) -> bool:
        if not self.functions:
            return False
        callee = self.pick(self.functions)
        sandwich = scope.depth < self.max_depth and self.chance(50)
        uncall = self.chance(40)
        # The first call runs the callee on whatever state there is, so it may
        # run it backwards only if it has no forward-only code.  A plain call
        # runs backwards under an odd number of rev.inv; a sandwich
        # [X; body; X⁻¹] inverts to [X; body⁻¹; X⁻¹], so its first call is X
        # in both directions (and its second call just undoes it).
        runs_backward = uncall if sandwich else scope.forward == uncall
        if runs_backward and not callee.bidirectional:
            return False
        used: set[int] = set()
        used_refs: set[int] = set()
        operands: list[tuple[str, Any]] = []  # ("var", vid) | ("anc", vid, tree) | ("ref", rid)
        for param in callee.params:
            if param.kind == "scalar":
                options = [v for v in self.mutable_of(scope, param.elem) if v not in used]
                if options and (not sandwich or self.chance(60)):
                    vid = self.pick(options)
                    used.add(vid)
                    operands.append(("var", vid))
                elif sandwich:
                    vid = self.new_var(param.elem)
                    init = self.value(scope, param.elem, set())
                    operands.append(("anc", vid, init))
                else:
                    return False
            else:
                options = [
                    r
                    for r in self.refs_of(scope, param.kind, param.elem, scope.ref_write)
                    if r not in used_refs and scope.refs[r].mlir_type == param.mlir_type
                ]
                if not options:
                    return False
                rid = self.pick(options)
                used_refs.add(rid)
                operands.append(("ref", rid))
        if not sandwich and not callee.bidirectional and not scope.in_compute:
            assert self.current is not None
            self.current.bidirectional = False
        for operand in operands:
            if operand[0] == "anc":
                _, vid, init = operand
                value = self.emit_tree(scope, init)
                name = self.fresh("a")
                scope.emit(f"{name} = anc.alloc {value} : {self.vtype[vid]}")
                scope.names[vid] = name
        scalars = [o[1] for o in operands if o[0] != "ref"]

        def emit_call(op: str) -> None:
            values = []
            for operand in operands:
                if operand[0] == "ref":
                    values.append(scope.refs[operand[1]].ssa)
                else:
                    values.append(scope.names[operand[1]])
            types = ", ".join(p.mlir_type for p in callee.params)
            out = ", ".join(self.vtype[v] for v in scalars)
            results = self.results(scope, scalars)
            scope.emit(f"{results}rev.{op} @{callee.name}({', '.join(values)}) : ({types}) -> ({out})")

        first = "uncall" if uncall else "call"
        emit_call(first)
        if not sandwich:
            return True
        # the ancillas' initial values are recomputed to free them: freeze what
        # they read
        inits = [o[2] for o in operands if o[0] == "anc"]
        read_vars = set().union(*(tree_vars(t) for t in inits))
        read_refs = set().union(*(tree_refs(t) for t in inits))
        with scope.section(freeze=set(scalars) | read_vars, lock=used_refs | read_refs):
            self.block(scope, 3)
        emit_call("call" if uncall else "uncall")
        for operand in operands:
            if operand[0] == "anc":
                _, vid, init = operand
                expected = self.emit_tree(scope, init)
                scope.emit(f"anc.free {scope.names.pop(vid)}, {expected} : {self.vtype[vid]}")
        return True

    # -- functions and modules ---------------------------------------------------------

    def function(self, name: str, refs: list[Param]) -> str:
        params: list[Param] = list(refs)
        for type in self.types():
            count = self.draw(st.integers(1 if type == I64 else 0, 3))
            params += [Param("scalar", type)] * count
        params = self.draw(st.permutations(params))
        info = FuncInfo(name, list(params))
        self.current = info
        scope = Scope.function_body()
        args: list[str] = []
        scalars: list[int] = []
        for i, param in enumerate(info.params):
            ssa = f"%arg{i}"
            args.append(f"{ssa}: {param.mlir_type}")
            if param.kind == "scalar":
                vid = self.new_var(param.elem)
                scope.names[vid] = ssa
                scope.mutable.add(vid)
                scalars.append(vid)
            else:
                rid = next(self.rids)
                scope.refs[rid] = Ref(param.kind, param.elem, ssa)
                scope.ref_write.add(rid)
                scope.ref_read.add(rid)
        if self.extensions.parallel and self.chance(50):
            self.stmt_parallel(scope)  # device code a kernel may call
        self.block(scope, 6)
        scope.emit(self.yield_line(scope, scalars, "rev.return"))
        self.functions.append(info)
        body = "\n".join("  " + line for line in scope.lines)
        return f"rev.func @{name}({', '.join(args)}) {{\n{body}\n}}"

    def kernel(self, name: str) -> tuple[str, Kernel]:
        """A function whose body is one parallel loop: each iteration takes
        ``y[i]`` of every output array, runs a block on those elements, and
        puts them back; input arrays and scalars are read only.  Arrays of
        a dynamic type have as many elements as the loop's extent (outputs),
        up to MEMREF_SIZE, whose ``memref.dim`` may be the upper bound; with
        ``out_of_bounds``, the others may be shorter or longer."""
        dynamic = self.chance(50)
        # mostly every element, so that a thread of a small grid runs several
        # (the simplest draw, False, is the common case: hypothesis draws it often)
        extent = self.draw(st.integers(1, MEMREF_SIZE)) if dynamic and self.chance(30) else MEMREF_SIZE

        def arrays(most: int, output: bool) -> list[Param]:
            sizes = st.just(MEMREF_SIZE)
            if output:
                sizes = st.just(extent)
            elif dynamic and self.extensions.out_of_bounds:
                sizes = st.integers(2, MEMREF_SIZE + 2)
            count = self.draw(st.integers(int(output), most))
            return [Param("memref", self.pick(self.array_types()), self.draw(sizes), dynamic) for _ in range(count)]

        outputs, inputs, shared = arrays(2, True), arrays(2, False), arrays(1, False)
        scalars = [Param("scalar", type) for type in self.types() for _ in range(self.draw(st.integers(0, 2)))]
        order = self.draw(st.permutations(range(len(outputs) + len(inputs) + len(shared) + len(scalars))))
        params = [[*outputs, *inputs, *shared, *scalars][i] for i in order]
        info = FuncInfo(name, params)
        self.current = info
        scope = Scope.function_body()
        written: list[int] = []
        for position, i in enumerate(order):
            ssa = f"%arg{position}"
            if params[position].kind == "scalar":
                vid = self.new_var(params[position].elem)
                scope.names[vid] = ssa
            else:
                rid = next(self.rids)
                scope.refs[rid] = Ref("memref", params[position].elem, ssa, dynamic)
                if i < len(outputs):
                    written.append(rid)
                elif i < len(outputs) + len(inputs):
                    scope.ref_read.add(rid)
                else:
                    scope.accumulate.add(rid)
        lb = int(extent > 1 and self.chance(25))
        sized = dynamic and self.chance(50)  # the loop runs over the first output array
        ub = extent if sized or not self.chance(25) else self.draw(st.integers(lb + 1, extent))
        bounds = Kernel(name, lb, ub, 2 if self.chance(25) else 1)
        for bound, value in (("plb", bounds.lb), ("pub", bounds.ub), ("pstep", bounds.step)):
            if sized and bound == "pub":
                ref = scope.refs[written[0]]
                scope.emit("%pzero = arith.constant 0 : index")
                scope.emit(f"%pub = memref.dim {ref.ssa}, %pzero : {ref.mlir_type}")
            else:
                scope.emit(f"%{bound} = arith.constant {value} : index")
        iv = self.fresh("iv")
        self.ranges[iv] = bounds.elements
        iteration = scope.child({}, set())
        iteration.ivs.append(iv)
        iteration.loop_depth += 1
        elements = []
        for rid in written:
            ref, vid, element = scope.refs[rid], self.new_var(scope.refs[rid].elem), self.fresh("el")
            iteration.emit(f"{element} = rev.take {ref.ssa}[{iv}] : {ref.mlir_type}")
            iteration.names[vid] = element
            iteration.mutable.add(vid)
            elements.append((vid, ref))
        if self.chance(40):  # a local array: a nested parallel loop or a device function may write it
            self.stmt_array(iteration)
        self.block(iteration, 6)
        for vid, _ in elements:
            if vid in iteration.mutable and not self.chance(30):  # most launches change what they return
                self.write(iteration, vid)
        if self.extensions.failing_checks and self.chance(50):
            self.element_check(iteration, [vid for vid, _ in elements if self.vtype[vid] == I64])
        for vid, ref in self.draw(st.permutations(elements)):
            iteration.emit(f"rev.put {iteration.names[vid]}, {ref.ssa}[{iv}] : {ref.mlir_type}")
        iteration.emit("rev.yield")
        reverse = "reverse " if self.chance(30) else ""
        header = f"rev.for parallel {reverse}%plb to %pub step %pstep : index () "
        self.region(header, scope, [(iv, "index")], iteration.lines)
        returned = [v for v in scope.names if v in self.vtype]
        scope.emit(self.yield_line(scope, returned, "rev.return"))
        self.functions.append(info)
        body = "\n".join("  " + line for line in scope.lines)
        arguments = ", ".join(f"%arg{i}: {p.mlir_type}" for i, p in enumerate(params))
        return f"rev.func @{name}({arguments}) {{\n{body}\n}}", bounds

    def element_check(self, scope: Scope, elements: list[int]) -> None:
        """An ancilla holding the low bit of one of an iteration's integer
        elements, freed against 0: the elements that hold an odd number
        fail and the others do not, so which one a launch reports depends
        on the order its threads run them."""
        if not elements:
            return
        bit, ancilla = self.fresh("e"), self.fresh("a")
        one = self.emit_tree(scope, ("const", I64, 1))
        scope.emit(f"{bit} = arith.andi {scope.names[self.pick(elements)]}, {one} : i64")
        scope.emit(f"{ancilla} = anc.alloc {bit} : i64")
        scope.emit(f"anc.free {ancilla}, {self.emit_tree(scope, ('const', I64, 0))} : i64")

    def module(self, count: int) -> Program:
        # every function takes the same arrays and stacks, so calls can pass
        # them; a kernel's iterations pass their own arrays, and have no stacks
        refs = [
            Param(kind, type)
            for kind in ("memref", "stack")
            if (self.stacks and not self.extensions.parallel) or kind == "memref"
            for type in self.array_types()
            if self.chance(40)
        ]
        texts = []
        for i in range(count - self.extensions.parallel):
            self.budget = self.function_budget
            texts.append(self.function(f"f{i}", refs))
        kernel = None
        if self.extensions.parallel:
            self.budget = self.function_budget
            text, kernel = self.kernel(f"f{count - 1}")
            texts.append(text)
        return Program("\n\n".join(texts) + "\n", list(self.functions), self.floats, not self.share, kernel)


@st.composite
def programs(
    draw: Callable[[st.SearchStrategy[Any]], Any],
    *,
    floats: bool | None = None,
    max_functions: int = 3,
    max_depth: int = 3,
    budget: int = 10,
    canonical: bool | None = None,
    stacks: bool = True,
    extensions: Extensions = Extensions(),
) -> Program:
    """Modules of reversible functions; the last one is the entry point.

    ``floats``/``canonical`` are drawn when not given.  Non-canonical programs
    share pure values between uses, across nested regions too (like constants
    hoisted to the top of a function)."""
    if floats is None:
        floats = draw(st.booleans())
    if canonical is None:
        canonical = draw(st.booleans())
    builder = ProgramBuilder(
        draw,
        floats=floats,
        max_depth=max_depth,
        budget=budget,
        share=not canonical,
        stacks=stacks,
        extensions=extensions,
    )
    return builder.module(draw(st.integers(1, max_functions)))


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

INTS = st.one_of(
    st.integers(-8, 8),
    st.integers(INT_MIN, INT_MAX),
    st.sampled_from([INT_MIN, INT_MAX, INT_MIN + 1, 2**32, -(2**32)]),
)
FLOATS = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)


def _scalars(elem: str) -> st.SearchStrategy[Any]:
    return {I1: st.booleans(), I64: INTS}.get(elem, FLOATS)


def arguments(func: FuncInfo) -> st.SearchStrategy[tuple[Any, ...]]:
    """Inputs for ``func``: Python scalars, numpy arrays, lists for stacks."""
    import numpy as np

    parts: list[st.SearchStrategy[Any]] = []
    for param in func.params:
        if param.kind == "scalar":
            parts.append(_scalars(param.elem))
        elif param.kind == "memref":
            dtype = np.int64 if param.elem == I64 else np.float64
            parts.append(
                st.lists(_scalars(param.elem), min_size=param.size, max_size=param.size).map(
                    lambda xs, dtype=dtype: np.array(xs, dtype=dtype)
                )
            )
        else:
            parts.append(st.lists(_scalars(param.elem), max_size=3))
    return st.tuples(*parts)
