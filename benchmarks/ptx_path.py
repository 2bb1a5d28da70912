"""Instructions per element of the elementwise kernels' PTX, and per
observation of BA's Jacobian-blocks kernel, without a GPU.

Walks each kernel's grid-stride loop from its header back to it along the
common path, counting PTX instructions: branches to a failure report
(``revmlir_$_fail``, ``exit``) or to libdevice's slow trigonometric
reduction are not taken; libdevice's other branches are taken as for a
positive, normal, finite argument (``LIBDEVICE_PATH``), and branches that
depend on the data otherwise (which half-plane a complex number is in) are
taken.  The same walk before and after a change of the loop's own code
counts the same math, so the difference is the loop's overhead (index
arithmetic, checks, loads and stores); the GPU time it saves stays to be
measured on a GPU.  Besides the instructions, the walk counts the
conditional branches between each global load and the first use of its
value: a branch on a value loaded before waits for that load, so loads
that such branches separate are not in flight together.

    python benchmarks/ptx_path.py [--arch sm_90]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import numpy as np

import revmlir as rv

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "python"))

COLD = ("revmlir_$_fail", "__internal_trig_reduction_slowpathd", "exit;")
"""What only a failed check or an argument past 2³¹ runs."""
LIBDEVICE_PATH = {
    ("setp.gt.s32", "1048575"): True,  # the argument is normal: no rescaling
    ("setp.gt.u32", "2146435070"): False,  # log's zero, negative, infinite or NaN case
    ("setp.neu.f64", "0d7FF0000000000000"): True,  # sin/cos: the argument is finite
    ("setp.eq.f64", "0d7FF0000000000000"): False,  # the same, as NVVM may test it
    ("setp.lt.u32", "2146435071"): True,  # log's ordinary case, as NVVM may test it
}
LABEL = re.compile(r"^(\$L\w+):$")
BRANCH = re.compile(r"^(@!?(%p\d+)\s+)?bra(?:\.uni)?\s+(\$L\w+);")
REGISTER = re.compile(r"%\w+")


def entry_lines(ptx: str, entry: str) -> list[str]:
    """The instructions and labels of ``.entry entry``, one a line."""
    body = ptx.split(f".entry {entry}(")[1].split("\n}\n")[0].split("\n{\n", 1)[1]
    kept = []
    for line in body.splitlines():
        text = line.strip()
        if not text or text.startswith(("//", ".reg", ".local")) or text in ("{", "}") or "callseq" in text:
            continue
        kept.append(text)
    return kept


def loop_headers(lines: list[str]) -> list[str]:
    """The headers of the grid-stride loops, where each loop's conditional
    branch back (after its ``ub − i > stride`` test, an unsigned compare)
    goes, in the order of the text: a versioned kernel's unchecked loop
    comes first."""
    labels = {m.group(1): k for k, text in enumerate(lines) if (m := LABEL.match(text))}
    headers = []
    for k, text in enumerate(lines):
        branch = BRANCH.match(text)
        if branch and branch.group(1) and labels.get(branch.group(3), k) < k:
            headers.append(branch.group(3))
    if not headers:
        raise ValueError("no grid-stride loop found")
    return headers


class Walk:
    def __init__(self, lines: list[str]):
        self.lines = lines
        self.labels = {m.group(1): k for k, text in enumerate(lines) if (m := LABEL.match(text))}

    def cold_from(self, k: int) -> bool:
        """Whether the code from line ``k`` reaches a cold call before any
        conditional branch."""
        while k < len(self.lines):
            text = self.lines[k]
            if any(c in text for c in COLD):
                return True
            if text.startswith("@"):
                return False
            branch = BRANCH.match(text)
            k = self.labels[branch.group(3)] + 1 if branch else k + 1
        return False

    def hot(self, k: int, predicate: str) -> bool:
        """Whether the conditional branch at line ``k`` is taken on the
        common path."""
        target = BRANCH.match(self.lines[k])
        assert target is not None
        if self.cold_from(self.labels[target.group(3)] + 1):
            return False
        if self.cold_from(k + 1):
            return True
        for text in reversed(self.lines[:k]):
            opcode, *operands = text.replace(",", " ").replace(";", " ").split()
            if opcode.startswith("setp") and operands[0] == predicate:
                return LIBDEVICE_PATH.get((opcode, operands[-1]), True)
        return True

    def iteration(self, header: str) -> list[str]:
        """The instructions of one iteration on the common path."""
        path: list[str] = []
        k = self.labels[header] + 1
        while True:
            text = self.lines[k]
            if (label := LABEL.match(text)) is not None:
                if label.group(1) == header:
                    return path
                k += 1
                continue
            path.append(text)
            branch = BRANCH.match(text)
            if branch is None:
                k += 1
                continue
            target = branch.group(3)
            taken = branch.group(1) is None or target == header or self.hot(k, branch.group(2))
            if taken and target == header:
                return path
            k = self.labels[target] + 1 if taken else k + 1


def opcodes(path: list[str]) -> Counter[str]:
    """The opcodes of ``path``, counted."""
    return Counter(text.split()[1] if text.startswith("@") else text.split()[0] for text in path)


def branches_before_use(path: list[str]) -> int:
    """The conditional branches between each global load of ``path`` and
    the first use of a value it loads (a vector load, ``ld.global.v2.b64
    {%rd1, %rd2}, [%rd3]``, loads several), summed over the loads."""
    total = 0
    for k, text in enumerate(path):
        if not text.startswith("ld.global"):
            continue
        registers = REGISTER.findall(text.split("[", 1)[0])
        loaded = re.compile("(" + "|".join(map(re.escape, registers)) + r")\b")
        use = next((j for j in range(k + 1, len(path)) if loaded.search(path[j])), len(path))
        total += sum(1 for between in path[k + 1 : use] if between.startswith("@") and BRANCH.search(between))
    return total


def kernels() -> list[tuple[str, object, tuple[np.ndarray, ...]]]:
    """The elementwise kernels of ``bench_gpu.py`` and its BA kernel (with
    its checks and without), their labels and arguments of the types they
    are compiled for (BA's: one observation)."""
    from adbench_data import read_ba
    from gpu_ba import ba_jacobian_blocks
    from gpu_elementwise import complex_log, log_sin

    x = np.linspace(0.5, 4.0, 8)
    z = x * np.exp(1j * x)
    ba = read_ba("ba/ba1_n49_m7776_p31843.txt")
    observation = (np.zeros((1, 2, 15)), np.zeros(1), ba.cams, ba.X, ba.w[:1], ba.obs[:1], ba.feats[:1])
    return [
        ("y += log(x)·sin(x)", log_sin, (np.zeros(8), x)),
        ("its adjoint", rv.adjoint(log_sin), (np.zeros(8), x, np.ones(8), np.zeros(8))),
        ("complex log (routine)", complex_log, (np.zeros_like(z), z)),
        ("its adjoint", rv.adjoint(complex_log), (np.zeros_like(z), z, np.ones_like(z), np.zeros_like(z))),
        ("BA Jacobian blocks", ba_jacobian_blocks, observation),
        ("its checks off", rv.reversible(ba_jacobian_blocks.pyfunc, checks=False), observation),
    ]


def prefixed(counts: Mapping[str, float], *prefixes: str) -> float:
    """How many of ``counts``' opcodes start with one of ``prefixes``."""
    return sum(n for op, n in counts.items() if op.startswith(prefixes))


def summary(path: list[str]) -> str:
    counts = opcodes(path)

    def where(*prefixes: str) -> int:
        return int(prefixed(counts, *prefixes))

    return (
        f"{sum(counts.values()):4d} instructions: {where('ld.global.nc')} ld.global.nc, "
        f"{where('ld.global') - where('ld.global.nc')} ld.global, {where('st.global')} st.global, "
        f"{where('setp')} setp, {where('bra')} branches, "
        f"{where('add.s64', 'shl.b64', 'mul.wide', 'mad.wide', 'mul.lo.s64', 'sub.s64')} 64-bit integer, "
        f"{branches_before_use(path)} branches before a load's use"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    for label, function, arguments in kernels():
        compiled = rv.cuda.kernel(function, arch=args.arch).specialise(*arguments)
        entry = compiled.program.kernels[compiled.name].entry
        lines = entry_lines(compiled.program.ptx, entry)
        print(f"{label:24s} {summary(Walk(lines).iteration(loop_headers(lines)[0]))}")


if __name__ == "__main__":
    main()
