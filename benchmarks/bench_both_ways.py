"""A program run both ways: what the first ``~f`` after ``f`` compiles.

Native code compiles a call's direction (design decision 94): ``f``
compiles the functions, the first ``~f`` the inverses, as the rest of the
first compile.  The inverses run forward functions (a routine's compute is
run again before its uncompute), which the first compile holds already.
Per case, in a fresh process each (``REVMLIR_CACHE=0``):

- the functions each compile defines (external definitions that are not C
  entry points), and how many both define;
- the first call and the first ``~f`` after it, CPU time
  (``time.process_time``) minus a warm call's: the compile each pays;
- warm calls of ``f`` and ``~f`` (medians), which the second compile's
  calls across the two modules could slow.

Cases: ADBench's GMM objective (d = 10, K = 5) and BA objective (ba1),
each through the eDSL (``examples/python``) and BA's also as a ``.mlir``
module compiled by ``NativeModule`` (as ``rev-run`` compiles), then
uncalled.

Run:  .venv/bin/python benchmarks/bench_both_ways.py [--pairs N | --quick] [--base DIR]
(``--base``: a checkout of another revision, measured alternately with
this one: its ``revmlir`` is put first on the path of its processes.)
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _harness as H

CASES = ("gmm", "ba", "ba.mlir")

os.environ.setdefault("REVMLIR_CACHE", "0")


def _defined(llvm_ir: str) -> set[str]:
    names = re.findall(r'^define (?!internal )[^@]*@"([^"]+)"\(', llvm_ir, re.M)
    return {n for n in names if not n.startswith("_mlir_ciface_") and not n.endswith("_ciface")}


def _warm(call: Callable[[], Any], rounds: int = 5) -> float:
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        call()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def _problem(case: str) -> tuple[Any, tuple[Any, ...]]:
    """The eDSL function of ``case`` and its arguments."""
    import numpy as np

    from adbench_data import read_ba, read_gmm

    if case == "gmm":
        from adbench_gmm import gmm_objective

        p = read_gmm("gmm/1k/gmm_d10_K5.txt")
        return gmm_objective, (0.0, p.alphas, p.means, p.icf, p.x, p.gamma, p.m)
    from adbench_ba import ba_objective

    b = read_ba("ba/ba1_n49_m7776_p31843.txt")
    return ba_objective, (np.zeros((len(b.w), 2)), np.zeros(len(b.w)), b.cams, b.X, b.w, b.obs, b.feats)


def _first(call: Callable[[], Any]) -> tuple[Any, float]:
    """What the first ``call`` returns, and its CPU time less a warm call's."""
    start = time.process_time()
    result = call()
    return result, time.process_time() - start - _warm(call)


def run_case(case: str) -> dict[str, Any]:
    import numpy as np

    from revmlir.parsing import parse_module
    from revmlir.runtime.native import NativeModule

    function, args = _problem(case.removesuffix(".mlir"))
    if case.endswith(".mlir"):
        name = function.pyfunc.__name__
        module = parse_module(str(function.specialization_for(*args).module), f"{name}.mlir")  # printed, re-read
        compiled = functools.cache(lambda: NativeModule.compile(module))

        def forward() -> Any:
            return compiled().call(name, *args)

        def backward() -> Any:
            return compiled().uncall(name, *out)

    else:

        def forward() -> Any:
            return function(*args)

        def backward() -> Any:
            return (~function)(*out)

    out, forward_s = _first(forward)
    back, backward_s = _first(backward)
    first = compiled() if case.endswith(".mlir") else function.specialization_for(*args).native
    rest = first.rest
    restored = all(np.allclose(a, b, atol=1e-9) for a, b in zip(args, back, strict=True))
    defined, defined_rest = _defined(first.llvm_ir), _defined(rest.llvm_ir)
    return {
        "case": case,
        "restored": restored,
        "forward_functions": len(defined),
        "backward_functions": len(defined_rest),
        "compiled_twice": len(defined & defined_rest),
        "backward_ir_lines": rest.llvm_ir.count("\n"),
        "first_call_s": forward_s,
        "first_inverse_s": backward_s,
        "warm_f_s": _warm(forward),
        "warm_inverse_s": _warm(backward),
    }


def _fresh(case: str, base: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if base is not None:
        env["PYTHONPATH"] = os.pathsep.join([base, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, __file__, "--case", case], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, help="run one case in this process (JSON)")
    parser.add_argument("--pairs", type=int, default=3, help="fresh processes per case and revision")
    parser.add_argument("--quick", action="store_true", help="one process per case and revision")
    parser.add_argument("--base", help="a checkout of the revision to compare with")
    parser.add_argument("--cases", nargs="*", choices=CASES, default=list(CASES))
    options = parser.parse_args()
    if options.case:
        print(json.dumps(run_case(options.case)))
        return
    H.print_header("A program run both ways: what the first ~f compiles", __doc__)
    revisions: list[tuple[str, str | None]] = [("this", None)]
    if options.base:
        revisions.insert(0, ("base", str(Path(options.base).resolve())))
    for case in options.cases:
        samples: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in revisions}
        for _ in range(1 if options.quick else options.pairs):
            for label, path in revisions:
                samples[label].append(_fresh(case, path))
        for label, runs in samples.items():
            last = runs[-1]
            times = {
                key: statistics.median(r[key] for r in runs)
                for key in ("first_call_s", "first_inverse_s", "warm_f_s", "warm_inverse_s")
            }
            firsts = " / ".join(f"{r['first_inverse_s']:.3f}" for r in runs)
            print(
                f"{case:8} {label:5} functions {last['forward_functions']} + {last['backward_functions']}"
                f" (twice {last['compiled_twice']}), rest {last['backward_ir_lines']} IR lines,"
                f" restored {all(r['restored'] for r in runs)}"
            )
            print(
                f"{'':14} first f {times['first_call_s']:.3f} s, first ~f {times['first_inverse_s']:.3f} s"
                f" ({firsts}), warm f {times['warm_f_s'] * 1e3:.2f} ms, warm ~f {times['warm_inverse_s'] * 1e3:.2f} ms"
            )


if __name__ == "__main__":
    main()
