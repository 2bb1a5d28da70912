"""The functions a module's code reaches from a few of them, and dropping
the others before an expensive compile.

A GPU kernel's module is a specialisation with everything derived for it:
inverses of every function (``rev-invert`` makes them all), adjoints and
their inverses.  Lowering, outlining and translating cost per op, and what
a kernel never calls would be built, translated and then discarded by LLVM;
BA's Jacobian-blocks kernel leaves a tenth of its lowered ops uncalled.

A function reaches every symbol its ops name, in any property or attribute
(calls, uncalls, invokes, adjoint requests), so that an op this module does
not know still keeps what it names.  ``rev.uncall @f`` runs ``@f.inv``
(``rev-lower-to-std`` makes it a call of that), which it reaches instead of
``@f`` when the module has it; code that runs backwards too (a ``rev.inv``
body, a routine's compute, which ``rev-lower-to-std`` inverts) reaches both.
A function that is not kept is made again from its forward function where
``rev-lower-to-std`` needs it, as it makes every inverse it lacks.  Every
top-level op that is not a function (a primitive's ``rev.extern``, which
names its rule functions) is kept and reaches what it names.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute, Operation

from revmlir.dialects.primitives import RULES, ExternOp
from revmlir.dialects.rev import InvOp, RoutineOp, UncallOp
from revmlir.naming import inverse_name
from revmlir.semantics import Function


def _symbols(attribute: Attribute) -> Iterator[str]:
    """The root names of the symbol references in ``attribute``."""
    if isinstance(attribute, SymbolRefAttr):
        yield attribute.root_reference.data
    elif isinstance(attribute, ArrayAttr):
        for inner in attribute.data:
            yield from _symbols(inner)
    elif isinstance(attribute, DictionaryAttr):
        for inner in attribute.data.values():
            yield from _symbols(inner)


def named_symbols(op: Operation, functions: Container[str], inverted: bool = False) -> Iterator[str]:
    """The symbols ``op`` and the ops nested in it name: an uncall names
    the callee's inverse when ``functions`` (the names of the module's
    functions) has it, and so does a call in code that also runs
    backwards (``inverted``: a ``rev.inv`` body, a routine's compute),
    which names the callee too."""
    for attribute in (*op.properties.values(), *op.attributes.values()):
        for name in _symbols(attribute):
            inverse = inverse_name(name)
            runs_inverse = inverse in functions and (inverted or isinstance(op, UncallOp))
            if runs_inverse:
                yield inverse
            if inverted or not runs_inverse:
                yield name
    for region in op.regions:
        backwards = inverted or isinstance(op, InvOp) or (isinstance(op, RoutineOp) and region is op.compute)
        for block in region.blocks:
            for inner in block.ops:
                yield from named_symbols(inner, functions, backwards)


def reached_functions(module: ModuleOp, roots: Iterable[str]) -> set[str]:
    """The names of the functions of ``module`` that ``roots`` and the
    module's top-level ops other than functions reach, directly or not."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, Function)}
    return reached_among(functions, [*roots, *outside_functions_named(module, functions)])


def outside_functions_named(module: ModuleOp, functions: Container[str]) -> list[str]:
    """The symbols the module's top-level ops other than functions name
    (``named_symbols``), which every compile of the module keeps."""
    return [name for op in module.ops if not isinstance(op, Function) for name in named_symbols(op, functions)]


def rule_functions(module: ModuleOp) -> set[str]:
    """The names of the rules of the module's primitives (``rev.extern``)
    and of the functions they reach: ordinary code the derivative passes
    call as it is."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, Function)}
    rules = [op.rule(kind) for op in module.ops if isinstance(op, ExternOp) for kind in RULES]
    return reached_among(functions, [name for name in rules if name is not None])


def reached_among(functions: Mapping[str, Function], roots: Iterable[str]) -> set[str]:
    """The names of ``functions`` that ``roots`` reach, directly or not,
    through these functions alone."""
    reached: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in reached or name not in functions:
            continue
        reached.add(name)
        pending.extend(named_symbols(functions[name], functions))
    return reached


def drop_unreached_functions(module: ModuleOp, roots: Iterable[str]) -> None:
    """Erase the functions of ``module`` that ``roots`` do not reach
    (``reached_functions``): compiles whose only entry points are ``roots``
    then lower and translate only what runs."""
    drop_functions_outside(module, reached_functions(module, roots))


def drop_functions_outside(module: ModuleOp, reached: Container[str]) -> None:
    """Erase the functions of ``module`` not named in ``reached``."""
    for op in list(module.ops):
        if isinstance(op, Function) and op.sym_name.data not in reached:
            module.body.block.erase_op(op)
