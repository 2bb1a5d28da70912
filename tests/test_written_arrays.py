"""Which arrays a function writes: one analysis
(``revmlir.semantics.argument_writes``), on reversible, ordinary and lowered
code alike.

It replaced two that answered the question on two forms: the value model's
on rev IR (what the backends check a call against, the frontend's outputs,
the verifier's parallel loops) and the lowering's on std IR (what native
code's overlap checks and ``noalias`` parameters rested on).  Their answers
on every module of the repository's ``.mlir`` files (the examples, the
documentation's and each chunk of the FileCheck tests that parses and
verifies), on its lowered form where it lowers, and on the rev IR of the
reversible-Python examples (and the ordinary IR of those written as ordinary
code, which ``reversibilize`` reads) are recorded in ``written_arrays.json``, each
with a digest of the module's text; the one analysis must give each of them
again, for every module whose text is still the one recorded.  The record is
of the answers before the two became one: a change of them is a change of
what programs may do (an overlap accepted or refused, a ``noalias`` more or
less).  The lowered answers of modules that still hold ``ad`` requests (the
inputs of the AD passes' FileCheck tests) were dropped from the record:
``rev-lower-to-std`` refuses such a module (decision 173), so they have no
lowered form; one of them, ``@loop`` of ``tests/filecheck/passes/ad_tangent.mlir``,
had been changed by the lowering rather than the analysis (a ``rev.for`` of
positive constant step has no step check, decision 133).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from python_examples import load_example
from revmlir.dialects import rev
from revmlir.frontend.ordinary_code.functions import OrdinarySpecialization
from revmlir.lowering.aliasing import analyse_arrays
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.semantics import argument_writes

ROOT = Path(__file__).resolve().parent.parent
RECORD = Path(__file__).with_name("written_arrays.json")
SOURCES = sorted(
    [
        *ROOT.glob("examples/*.mlir"),
        *ROOT.glob("docs/examples/*.mlir"),
        *ROOT.glob("tests/filecheck/**/*.mlir"),
    ]
)


def _python_examples() -> Iterator[tuple[str, Any, tuple[Any, ...]]]:
    """Reversible-Python examples with arguments of the types they take."""
    basics = load_example("paper_basics")
    bennett = load_example("paper_bennett")
    sparse = load_example("paper_sparse")
    rotations = load_example("rotations")
    identity = sparse.csr_arrays(scipy.sparse.csr_matrix(np.eye(3)))
    yield "paper_basics.multiplier", basics.multiplier, (0, 2, 3)
    yield "paper_basics.complex_log", basics.complex_log, (0j, 1 + 1j)
    yield "paper_basics.rrfib", basics.rrfib, (0, 5)
    yield "paper_bennett.bennett", bennett.bennett, (1.0, 0.0, 2)
    yield "paper_sparse.csr_dot", sparse.csr_dot, (0.0, *identity, *identity, np.zeros(6, dtype=bool))
    yield "paper_sparse.csr_mul", sparse.csr_mul, (np.zeros(3), *identity, np.ones(3), 2.0)
    yield "rotations.step", rotations.step, (np.ones(8),)


def modules(record: dict[str, dict[str, Any]]) -> Iterator[tuple[str, ModuleOp]]:
    """The modules of the sources (a chunk of ``--split-input-file`` each),
    named by path and chunk, and the rev IR of the Python examples, whose
    text is the one ``record`` holds for their name: the others are no
    evidence either way, so they are neither parsed nor analysed (three
    quarters of the chunks, and most of this file's time)."""

    def recorded(name: str, text: str) -> bool:
        return name in record and record[name]["digest"] == digest(text)

    for path in SOURCES:
        for chunk, text in enumerate(path.read_text().split("\n// -----\n")):
            name = f"{path.relative_to(ROOT).as_posix()}#{chunk}"
            if recorded(name, text):
                yield name, parse_module(text, str(path))
    for name, function, args in _python_examples():
        spec = function.specialization_for(*args)
        if isinstance(spec, OrdinarySpecialization):
            if recorded(ordinary := f"examples/python/{name} (ordinary)", str(spec.ordinary)):
                yield ordinary, spec.ordinary
            spec = spec.reversible
        if recorded(reversible := f"examples/python/{name}", str(spec.module)):
            yield reversible, spec.module


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def answers(module: ModuleOp) -> dict[str, Any]:
    """What the analyses say of ``module``: how each ``rev.func`` changes
    each argument; for code with no rev ops (ordinary or std IR), the
    written and ``noalias`` parameters of ``analyse_arrays``; for rev code,
    those of its lowered form (functions and inverses)."""
    reversible = {op.sym_name.data for op in module.ops if isinstance(op, rev.FuncOp)}
    found: dict[str, Any] = {
        "writes": {
            name: [how.value for how in writes]
            for name, writes in argument_writes(module).items()
            if name in reversible
        }
    }
    if any(op.dialect_name() in ("rev", "anc") for op in module.walk()):
        lowered = module.clone()
        try:
            for lowering in (RevInvertPass(), RevLowerToStdPass()):
                lowering.apply(make_context(), lowered)
        except Exception:  # what the lowering refuses has no std form
            return found
        found["lowered"] = _arrays(lowered)
    elif any(isinstance(op, func.FuncOp) and not op.is_declaration for op in module.ops):
        found["arrays"] = _arrays(module)
    return found


def _arrays(module: ModuleOp) -> dict[str, dict[str, list[int]]]:
    aliasing = analyse_arrays(module)
    return {
        "written": {name: sorted(positions) for name, positions in aliasing.written.items()},
        "noalias": {name: sorted(positions) for name, positions in aliasing.noalias.items()},
    }


@pytest.fixture(scope="module")
def found() -> dict[str, dict[str, Any]]:
    """The answers for every module whose text is the one recorded."""
    return {name: answers(module) for name, module in modules(json.loads(RECORD.read_text()))}


@pytest.mark.parametrize("kind", ["writes", "arrays", "lowered"])
def test_the_analysis_answers_as_the_two_before_it(found, kind):
    """Each recorded answer of ``kind`` again, for the modules whose text is
    the one recorded (most of them: a module changed since is no evidence
    either way)."""
    record = json.loads(RECORD.read_text())
    compared = [name for name, expected in record.items() if kind in expected and name in found]
    assert len(compared) >= len([e for e in record.values() if kind in e]) // 2, compared
    for name in compared:
        assert found[name].get(kind) == record[name][kind], name
