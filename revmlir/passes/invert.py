"""``rev-invert``: build inverse functions.

Out of place (the default) it adds ``@f.inv`` next to each selected ``@f``;
``@f.inv`` inverts back to ``@f``, so existing inverses are kept, not
duplicated.  In place it replaces each body with its inverse, so running it
twice gives the original program back.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.dialects.rev import CallOp, FuncOp, UncallOp
from revmlir.errors import InversionError
from revmlir.inversion import derive_inverse, forgetful_functions, invert_function
from revmlir.naming import DERIVED_INVERSE_ATTR, inverse_name
from revmlir.passes.selection import selected_functions
from revmlir.reachability import named_symbols, outside_functions_named
from revmlir.semantics import Function


@dataclass(frozen=True)
class RevInvertPass(ModulePass):
    """Add @f.inv for each rev.func @f (or invert bodies in place)."""

    name = "rev-invert"

    in_place: bool = False
    """Replace each function's body with its inverse instead of adding @f.inv
    (and swap rev.call/rev.uncall of those functions wherever they are called,
    so @f then means ~f and every other call site keeps its meaning)."""

    functions: tuple[str, ...] = ()
    """Only these functions (default: all)."""

    where_possible: bool = False
    """Every function the inverter can invert, leaving out only those it
    cannot, instead of every function but the forgetful ones
    (``forgetful_functions``: those that forget state and those calling
    them, whose inverses uncall them): native code compiles so, since the
    interpreter runs backwards whatever the inverter inverts, and an uncall
    of a function without an inverse fails only where a run reaches it.
    Out of place or in place alike; a function named in ``functions`` is
    still inverted or refused."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.invert(op, invert_function)

    def invert(self, op: ModuleOp, build: Callable[[FuncOp, str | None], FuncOp]) -> None:
        """The pass, each inverse made by ``build`` (``invert_function``, or
        ``derive_inverse`` for the inverses a compile adds for itself)."""
        existing = {f.sym_name.data for f in op.ops if isinstance(f, FuncOp)}
        forgetful = set() if self.functions or self.where_possible else forgetful_functions(op)
        # Every inverse is built before the module changes (inverting one
        # function reads no other's body), so a refusal leaves it as it was.
        inverses: list[tuple[FuncOp, FuncOp]] = []
        for func in list(selected_functions(op, self.functions)):
            name = func.sym_name.data
            if name in forgetful or (not self.in_place and inverse_name(name) in existing):
                continue
            try:
                inverse = build(func, name if self.in_place else None)
            except InversionError:
                if self.where_possible and name not in self.functions:
                    continue
                raise
            inverses.append((func, inverse))
            existing.add(inverse.sym_name.data)
        for func, inverse in inverses:
            if self.in_place:
                func.body.detach_block(0).erase()
                func.body.add_block(inverse.body.detach_block(0))
                # the code is the function's inverse now, which is no
                # derived inverse of a function named otherwise: its errors
                # name it as written
                func.attributes.pop(DERIVED_INVERSE_ATTR, None)
            else:
                Rewriter.insert_op(inverse, InsertPoint.after(func))
        if self.in_place and inverses:
            _flip_calls(op, {func.sym_name.data for func, _ in inverses})


def derive_inverses(ctx: Context, module: ModuleOp) -> None:
    """The inverses a compile adds for itself: every one the inverter can
    build (``where_possible``), each made by ``derive_inverse``, which marks
    it as derived, so that errors name it ``~f`` as the interpreter names
    ``@f`` run backwards.  Those the module has already are the user's,
    named as they are."""
    RevInvertPass(where_possible=True).invert(module, derive_inverse)


def _flip_calls(module: ModuleOp, names: set[str]) -> None:
    """After ``@g`` is inverted in place its name means ``~g``: swap
    ``rev.call``/``rev.uncall`` of it everywhere (in the new bodies too), so
    every call site keeps its meaning and each inverted ``@f`` computes ``~f``.
    Applying the pass twice flips them back."""
    for call in list(module.walk()):
        if not isinstance(call, CallOp | UncallOp):
            continue
        if call.callee.string_value() not in names:
            continue
        flipped = call.inverse_call()(call.callee.string_value(), list(call.args))
        flipped.attributes.update(call.attributes)
        flipped.location = call.location
        for old, new in zip(call.results, flipped.results, strict=True):
            new.name_hint = old.name_hint
        Rewriter.replace_op(call, flipped)


@dataclass(frozen=True)
class _Inverses:
    """The names of a module's functions, with the inverse of each
    ``rev.func`` that lacks one unless the inverter has refused it: what
    the module has once ``RevInvertPass(where_possible=True)`` has run, as
    far as ``invert_reached`` knows yet."""

    functions: dict[str, Function]
    refused: set[str]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or name in self.refused:
            return name in self.functions
        forward = self.functions.get(inverse_name(name))
        # the pass names the inverse of @f @f.inv, and of @f.inv @f: never @f.inv.inv
        return name in self.functions or (isinstance(forward, FuncOp) and inverse_name(forward.sym_name.data) == name)


def invert_reached(module: ModuleOp, roots: Iterable[str]) -> set[str]:
    """The names of the functions ``roots`` reach once
    ``RevInvertPass(where_possible=True)`` has run (``reached_functions``),
    the inverses among them built and each placed after its function, as
    the pass places it; the inverses nothing reaches, which a compile of
    ``roots`` alone would drop (``drop_functions_outside``), are not built
    (BA's kernel: six, and the tries of the adjoints', which the inverter
    refuses).

    An uncall names its callee's inverse where the module has it
    (``named_symbols``); here, where the callee is a ``rev.func`` whose
    inverse the inverter has not refused yet.  The inverse is built when
    the walk reaches its name; where the inverter refuses, the callee is
    reached instead from the ops that named the inverse, as in a module
    the pass left without it.  Inverting a function reads no other's body,
    so each inverse is the one the pass builds."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, Function)}
    known = _Inverses(functions, set())
    named = outside_functions_named(module, known)
    pending, reached = [*roots, *named], set[str]()
    named_set = set(named)
    while pending:
        name = pending.pop()
        if name in reached or name not in known:
            continue
        if (function := functions.get(name)) is None:
            forward = functions[inverse_name(name)]
            assert isinstance(forward, FuncOp)
            try:
                function = functions[name] = derive_inverse(forward)  # as ``derive_inverses`` marks it
            except InversionError:
                known.refused.add(name)
                if name in named_set:  # named by an uncall, which runs the callee where it has no inverse
                    pending.append(forward.sym_name.data)
                continue
            Rewriter.insert_op(function, InsertPoint.after(forward))
        reached.add(name)
        symbols = list(named_symbols(function, known))
        named_set.update(symbols)
        pending.extend(symbols)
    return reached
