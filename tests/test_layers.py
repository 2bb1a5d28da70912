"""The layers of docs/design.md ("Architecture") import downwards only.

Three checks, each of which a change can break: import-linter's layer
contract (``[tool.importlinter]`` in pyproject.toml); no import placed
inside a function without a ``# lazy:`` comment saying why, other than the
registries that exist to be lazy, in any module; and no import cycle between modules, the frontend's
included, other than the xDSL hooks the contract names.  Imports under
``if TYPE_CHECKING:`` count: a cycle of annotations is still two modules
that cannot be read apart.  The checkers are tried on planted violations
too, so a checker that finds nothing cannot pass by accident.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from importlinter import configuration
from importlinter.application.use_cases import lint_imports

import revmlir.interfaces as interfaces

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "revmlir"
PYPROJECT = ROOT / "pyproject.toml"

REGISTRIES = {
    "revmlir": "the public API loads the frontend, GPU and interop on first use",
    "revmlir.dialects": "xDSL's dialect registry takes factories",
    "revmlir.passes": "the pass registry imports each pass when it is asked for",
    "revmlir.interop": "each binding imports its framework (JAX, PyTorch) on first use",
}
"""Modules whose function-local imports are their purpose."""

JUSTIFICATION = "# lazy:"


@dataclass(frozen=True)
class Import:
    module: str
    target: str
    line: int
    local: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, str]:
    """Every module of the package and its source."""
    return {module_name(p): p.read_text() for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def package_imports() -> list[Import]:
    known = set(modules())
    return [i for module, source in modules().items() for i in imports(module, source, known)]


def imports(module: str, source: str, known: set[str]) -> Iterator[Import]:
    """Every import of a revmlir module in ``source``, resolved to the
    module (``from revmlir.dialects import rev`` imports ``revmlir.dialects.rev``)."""
    tree = ast.parse(source)
    scopes: dict[ast.AST, bool] = {}
    for node in ast.walk(tree):
        local = scopes.get(node, False) or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for child in ast.iter_child_nodes(node):
            scopes[child] = local
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            targets = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != module:
                yield Import(module, target, node.lineno, scopes.get(node, False))


def justified(lines: list[str], line: int) -> bool:
    """Whether the import at ``line`` (1-based), or the run of imports and
    comments just above it, carries a ``# lazy:`` comment."""
    index = line - 1
    while index >= 0:
        text = lines[index].strip()
        if JUSTIFICATION in text:
            return True
        if not (text.startswith(("#", "from ", "import ")) or index == line - 1):
            return False
        index -= 1
    return False


def unjustified(found: list[Import], sources: dict[str, str]) -> list[str]:
    return [
        f"{i.module}:{i.line} imports {i.target} inside a function"
        for i in found
        if i.local and i.module not in REGISTRIES and not justified(sources[i.module].splitlines(), i.line)
    ]


def ignored_imports() -> set[tuple[str, str]]:
    """The edges the layer contract ignores (the xDSL hooks, the pass
    registry): the same list serves the cycle check."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    return {
        tuple(part.strip() for part in edge.split("->"))  # type: ignore[misc]
        for contract in config["contracts"]
        for edge in contract.get("ignore_imports", ())
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_layer_contracts_hold(capsys):
    configuration.configure()  # what the lint-imports command sets up first
    kept = lint_imports(config_filename=str(PYPROJECT), cache_dir=None, no_logo=True)
    assert kept, capsys.readouterr().out


def import_graph(found: list[Import]) -> dict[str, set[str]]:
    """Module → the modules it imports, without the edges the contract
    ignores and those of the package's root, which only loads its public
    API lazily."""
    ignored = ignored_imports()
    graph: dict[str, set[str]] = {}
    for i in found:
        if "revmlir" not in (i.module, i.target) and (i.module, i.target) not in ignored:
            graph.setdefault(i.module, set()).add(i.target)
    return graph


def test_function_local_imports_are_justified():
    problems = unjustified(package_imports(), modules())
    assert not problems, "\n".join(problems)


def test_no_import_cycles():
    found = cycles(import_graph(package_imports()))
    assert not found, found


def test_a_cycle_in_the_frontend_is_found():
    """The frontend's modules below ``reversible_code.functions`` know
    ``@rv.reversible`` functions by a protocol, not by importing them:
    importing it from one of them is a cycle."""
    planted = Import(
        "revmlir.frontend.base.specialization", "revmlir.frontend.reversible_code.functions", 1, local=False
    )
    found = cycles(import_graph([*package_imports(), planted]))
    assert any(
        {"revmlir.frontend.reversible_code.functions", "revmlir.frontend.base.specialization"} <= set(c) for c in found
    ), found
    lazy = Import("revmlir.frontend.base.specialization", "revmlir.frontend.reversible_code.functions", 1, local=True)
    assert unjustified([lazy], {lazy.module: "def f():\n    import x\n"})


def test_the_checks_find_planted_violations():
    """An unjustified local import, a justified one, and a cycle."""
    known = {"revmlir.a", "revmlir.b", "revmlir.b.c"}
    source = (
        "def f():\n"
        "    from revmlir.b import c\n"
        "\n"
        "def g():\n"
        "    # lazy: loads a compiler\n"
        "    from revmlir.b import c\n"
        "    import revmlir.b\n"
    )
    planted = list(imports("revmlir.a", source, known))
    assert unjustified(planted, {"revmlir.a": source}) == ["revmlir.a:2 imports revmlir.b.c inside a function"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


PROTOCOLS = {
    "InverseBuilder": ("revmlir.inversion", "Inverter"),
    "AdjointBuilder": ("revmlir.ad.adjoint", "Adjointer"),
    "TangentBuilder": ("revmlir.ad.tangent", "Tangenter"),
}
RULE_MODULES = (
    "revmlir.dialects.rev",
    "revmlir.dialects.anc",
    "revmlir.dialects.ad",
    "revmlir.ad.derivatives",
    "revmlir.ad.tangent_rules",
)


def protocol_members(protocol: type) -> set[str]:
    return {
        name
        for cls in protocol.__mro__
        if cls.__module__ == "revmlir.interfaces"
        for name in (*vars(cls), *getattr(cls, "__annotations__", {}))
        if not name.startswith("_")
    }


def calls_outside(source: str, members: dict[str, set[str]]) -> list[str]:
    """``name.attribute`` uses, in functions taking a parameter annotated
    with a protocol, of attributes that protocol does not list."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        typed = {
            a.arg: ast.unparse(a.annotation).strip("\"'")
            for a in node.args.args
            if a.annotation is not None and ast.unparse(a.annotation).strip("\"'") in members
        }
        for use in ast.walk(node):
            if (
                isinstance(use, ast.Attribute)
                and isinstance(use.value, ast.Name)
                and use.value.id in typed
                and use.attr not in members[typed[use.value.id]]
            ):
                found.append(f"line {use.lineno}: {use.value.id}.{use.attr} ({typed[use.value.id]})")
    return found


def test_rules_call_only_their_protocol_and_the_builders_provide_it():
    members = {name: protocol_members(getattr(interfaces, name)) for name in PROTOCOLS}
    outside = {module: problems for module in RULE_MODULES if (problems := calls_outside(modules()[module], members))}
    assert not outside, outside
    missing = {
        name: sorted(m for m in members[name] if not hasattr(getattr(importlib.import_module(where), cls), m))
        for name, (where, cls) in PROTOCOLS.items()
    }
    assert not any(missing.values()), missing
    planted = "def adjoint(self, adjointer: AdjointBuilder):\n    adjointer.emit(x)\n    adjointer.root\n"
    assert calls_outside(planted, members) == ["line 3: adjointer.root (AdjointBuilder)"]
