"""PTX instructions per point of GMM's point kernels, without a GPU.

``ptx_path.py`` walks one iteration of a grid-stride loop with no loop
inside it; GMM's kernels (``examples/python/gpu_gmm.py``) call functions
with loops of ``d`` and ``K`` iterations.  This script runs one thread of a
kernel's PTX symbolically: integer registers, predicates and the words
stored at known addresses (the thread's frame, its arena) hold their
values, which the kernel's parameters determine (pointers, sizes, the
grid), so every loop runs its real trip count; floats are unknown.  A
branch on an unknown predicate is decided as ``ptx_path.Walk`` decides it
(cold failure paths not taken, libdevice's ordinary case), so the count
is the common path of a thread whose every check passes.  The count of a
run of ``n₂`` points less that of ``n₁`` points, over ``n₂ − n₁``, is the
instructions per point.

    python benchmarks/ptx_run.py [--d 2 10 20] [--arch sm_90]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import revmlir as rv
from revmlir.runtime_checks import GPU_ERROR_WORDS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "python"))

from ptx_path import COLD, LIBDEVICE_PATH, prefixed  # noqa: E402

MASK = (1 << 64) - 1
PRINTED = {
    "setp": ("setp",),
    "branches": ("bra",),
    "loads": ("ld",),
    "stores": ("st",),
    "shuffles": ("shfl",),
    "atomics": ("red", "atom"),
}
"""The kinds of instruction counted on each line, by opcode prefix."""
ARENA = 1 << 20
"""The bytes of per-thread arena a run gives a kernel that takes one."""
LIMIT = 10**7
"""Instructions after which a run is taken to loop on unknown values."""
ADDRESS = re.compile(r"^\[([%\w$.]+)(?:\+(-?\d+))?\]$")
CALL = re.compile(r"call(?:\.uni)?\s+(?:\(([^)]*)\),\s*)?([\w$]+),\s*\(([^)]*)\)")
ARITHMETIC = ("add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "not", "neg", "min", "max")
INTEGER_TYPES = ("s64", "u64", "b64", "s32", "u32", "b32", "s16", "u16", "b16", "u8", "s8", "b8")


@dataclass
class Function:
    name: str
    params: list[str]
    lines: list[str]
    labels: dict[str, int] = field(default_factory=dict)


def functions(ptx: str) -> dict[str, Function]:
    """Each ``.func`` and ``.entry`` with a body: its parameters and its
    statements, one a line (inline ``{ … }`` blocks flattened)."""
    found: dict[str, Function] = {}
    for match in re.finditer(r"(?:\.func|\.entry)\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(([^)]*)\)\s*\{", ptx):
        name = match.group(1)
        params = re.findall(r"([\w$]+)\s*(?:,|$)", match.group(2).strip())
        depth, k = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(ptx[k], 0)
            k += 1
        body = ptx[match.end() : k - 1]
        lines: list[str] = []
        for raw in body.splitlines():
            text = raw.split("//")[0].strip()
            text = text.removeprefix("{").removesuffix("}")  # an inline block: ``{ .reg …; mov …; }``
            for statement in text.split(";"):
                statement = statement.strip()
                if statement and not statement.startswith("."):
                    lines.append(statement)
        function = Function(name, params, lines)
        function.labels = {text[:-1]: i for i, text in enumerate(lines) if text.endswith(":")}
        found[name] = function
    return found


def _signed(value: int, bits: int = 64) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _bits(kind: str) -> int:
    return int(re.sub(r"\D", "", kind) or 64)


class Thread:
    """One thread's run of a kernel: ``count`` holds the instructions run."""

    def __init__(self, program: dict[str, Function], special: dict[str, int]):
        self.program = program
        self.special = special
        self.memory: dict[int, int | None] = {}
        self.count: Counter[str] = Counter()
        self.next_address = 1 << 40

    def fresh(self, size: int) -> int:
        address = self.next_address
        self.next_address += (size + 4095) // 4096 * 4096 + 4096
        return address

    def run(self, name: str, arguments: list[int | None]) -> dict[int, int | None]:
        """Run ``name`` on ``arguments`` (its parameters, in order); return
        its return-value words by byte offset."""
        function = self.program[name]
        regs: dict[str, int | None] = {}
        params = dict(zip(function.params, arguments, strict=False))
        returned: dict[int, int | None] = {}
        outgoing: dict[str, dict[int, int | None]] = {}
        locals_: dict[str, int] = {}
        k = 0
        lines = function.lines
        while True:
            text = lines[k]
            if text.endswith(":"):
                k += 1
                continue
            guard = None
            if text.startswith("@"):
                head, text = text.split(None, 1)
                guard = (head[1:].startswith("!"), head.lstrip("@!"))
            opcode, _, rest = text.partition(" ")
            operands = _split(rest)
            self.count[opcode] += 1
            enabled: bool | None = True
            if guard is not None:
                value = regs.get(guard[1])
                enabled = None if value is None else bool(value) != guard[0]
            if opcode.startswith("bra"):
                target = function.labels[operands[0]]
                if enabled is None:
                    enabled = self.hot(function, k, target, guard)
                if self.count.total() > LIMIT:
                    raise RuntimeError(f"more than {LIMIT} instructions: a loop on unknown values in {name}?")
                k = target + 1 if enabled else k + 1
                continue
            if opcode in ("ret", "exit"):
                if opcode == "exit":
                    raise RuntimeError(f"the thread exits in {name}")
                return returned
            if opcode.startswith("call"):
                match = CALL.search(text)
                assert match is not None, text
                callee = match.group(2)
                if any(c in callee for c in COLD) or callee not in self.program:
                    raise RuntimeError(f"{name} calls {callee} on the common path")
                args = [outgoing.get(p.strip(), {}).get(0) for p in match.group(3).split(",") if p.strip()]
                result = self.run(callee, args)
                if match.group(1):
                    outgoing[match.group(1).strip()] = result
                k += 1
                continue
            if enabled is not False:
                self.execute(opcode, operands, regs, params, outgoing, returned, locals_, enabled is None)
            k += 1

    def hot(self, function: Function, k: int, target: int, guard: tuple[bool, str] | None) -> bool:
        """``ptx_path.Walk.hot``'s decision for a branch on an unknown
        predicate."""

        def cold_from(j: int) -> bool:
            while j < len(function.lines):
                text = function.lines[j]
                if text == "exit" or any(c in text for c in COLD):
                    return True
                if text.startswith("@"):
                    return False
                if text.startswith("bra"):
                    j = function.labels[_split(text.partition(" ")[2])[0]] + 1
                    continue
                j += 1
            return False

        if cold_from(target + 1):
            return False
        if cold_from(k + 1):
            return True
        assert guard is not None
        for text in reversed(function.lines[:k]):
            opcode, _, rest = text.partition(" ")
            operands = _split(rest)
            if opcode.startswith("setp") and operands and operands[0] == guard[1]:
                key = (opcode, operands[-1])
                return LIBDEVICE_PATH[key] != guard[0] if key in LIBDEVICE_PATH else True
        return True

    def execute(
        self,
        opcode: str,
        operands: list[str],
        regs: dict[str, int | None],
        params: dict[str, int | None],
        outgoing: dict[str, dict[int, int | None]],
        returned: dict[int, int | None],
        locals_: dict[str, int],
        unknown_guard: bool,
    ) -> None:
        parts = opcode.split(".")
        base = parts[0]

        def value(operand: str) -> int | None:
            operand = operand.strip()
            if operand.startswith("%"):
                if operand in self.special:
                    return self.special[operand]
                return regs.get(operand)
            if operand in locals_:
                return locals_[operand]
            if re.fullmatch(r"-?\d+", operand):
                return int(operand) & MASK
            if re.fullmatch(r"0x[0-9a-fA-F]+", operand):
                return int(operand, 16)
            return None

        def address(operand: str) -> tuple[str, int | None, int]:
            match = ADDRESS.match(operand.strip())
            assert match is not None, operand
            root, offset = match.group(1), int(match.group(2) or 0)
            return root, value(root), offset

        def assign(register: str, result: int | None) -> None:
            if register.startswith(("{", "[")):
                return
            regs[register] = None if unknown_guard or result is None else result

        kind = parts[-1]
        if base == "ld":
            destination = operands[0]
            root, where, offset = address(operands[1])
            if "param" in parts:
                if root in params:
                    assign(destination, params[root])
                else:
                    assign(destination, outgoing.get(root, {}).get(offset))
                return
            assign(destination, None if where is None else self.memory.get(where + offset))
            return
        if base == "st":
            root, where, offset = address(operands[0])
            stored = value(operands[1]) if not operands[1].startswith("{") else None
            if "param" in parts:
                if root.startswith("func_retval"):
                    returned[offset] = stored
                else:
                    outgoing.setdefault(root, {})[offset] = stored
                return
            if where is not None:
                self.memory[where + offset] = None if unknown_guard else stored
            return
        if base == "mov":
            if operands[1].startswith("__local_depot"):
                locals_.setdefault(operands[1], self.fresh(1 << 16))
            assign(operands[0], value(operands[1]) if kind in INTEGER_TYPES or kind == "pred" else None)
            return
        if base == "alloca":
            size = value(operands[1])
            assign(operands[0], self.fresh(size or 1 << 16))
            return
        if base == "cvta":
            assign(operands[0], value(operands[1]))
            return
        if base == "cvt":
            destination, source = parts[-2], parts[-1]
            if destination in INTEGER_TYPES and source in INTEGER_TYPES:
                raw = value(operands[1])
                bits = _bits(destination)
                if raw is not None:
                    raw = _signed(raw, _bits(source)) if source.startswith("s") else raw & ((1 << _bits(source)) - 1)
                assign(operands[0], None if raw is None else raw & ((1 << bits) - 1))
            else:
                assign(operands[0], None)
            return
        if base == "setp":
            compare, kind = parts[1], parts[2]
            if kind not in INTEGER_TYPES:
                assign(operands[0], None)
                return
            a, b = value(operands[1]), value(operands[2])
            result: int | None = None
            if a is not None and b is not None:
                bits = _bits(kind)
                if kind.startswith("s"):
                    a, b = _signed(a, bits), _signed(b, bits)
                else:
                    a, b = a & ((1 << bits) - 1), b & ((1 << bits) - 1)
                result = int(
                    {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[compare]
                )
            if len(parts) > 3 and len(operands) > 3:  # setp.eq.and.u32 p, a, b, q
                other = value(operands[3])
                combine = parts[3]
                result = _logic(combine, result, other)
            assign(operands[0], result)
            return
        if kind == "pred" and base in ("and", "or", "xor", "not"):
            a = value(operands[1])
            if base == "not":
                assign(operands[0], None if a is None else 1 - a)
            else:
                assign(operands[0], _logic(base, a, value(operands[2])))
            return
        if base == "selp":
            chosen = value(operands[3])
            if kind not in INTEGER_TYPES or chosen is None:
                assign(operands[0], None)
            else:
                assign(operands[0], value(operands[1] if chosen else operands[2]))
            return
        if kind not in INTEGER_TYPES or (len(parts) > 1 and parts[1] in ("rn", "rz", "approx", "ftz")):
            if operands:
                assign(operands[0], None)
            return
        args = [value(o) for o in operands[1:]]
        if base not in ARITHMETIC or not args or any(a is None for a in args):
            assign(operands[0], None)
            return
        bits = _bits(kind)
        width = (1 << bits) - 1
        signed = kind.startswith("s")
        a = args[0]
        assert a is not None
        b = args[1] if len(args) > 1 else 0
        assert b is not None
        result = None
        if base == "add":
            result = a + b
        elif base == "sub":
            result = a - b
        elif base == "mul" and parts[1] == "wide":
            result = a * b
            width = (1 << (2 * bits)) - 1
        elif base == "mul":
            result = a * b
        elif base == "mad":
            c = args[2]
            assert c is not None
            result = a * b + c
        elif base == "shl":
            result = a << b
        elif base == "shr":
            result = (_signed(a, bits) if signed else a & width) >> b
        elif base == "and":
            result = a & b
        elif base == "or":
            result = a | b
        elif base == "xor":
            result = a ^ b
        elif base == "not":
            result = ~a
        elif base == "neg":
            result = -a
        elif base in ("min", "max"):
            x, y = (_signed(a, bits), _signed(b, bits)) if signed else (a & width, b & width)
            result = min(x, y) if base == "min" else max(x, y)
        assign(operands[0], None if result is None else result & width)


def _logic(op: str, a: int | None, b: int | None) -> int | None:
    if op == "and":
        return 0 if a == 0 or b == 0 else (None if a is None or b is None else 1)
    if op == "or":
        return 1 if a == 1 or b == 1 else (None if a is None or b is None else 0)
    return None if a is None or b is None else a ^ b


def _split(rest: str) -> list[str]:
    """Operands split at top-level commas."""
    operands, depth, current = [], 0, ""
    for char in rest:
        if char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        if char == "," and depth == 0:
            operands.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        operands.append(current.strip())
    return operands


def kernel_arguments(ptx: str, entry: str, args: Sequence[object], thread: Thread) -> list[int | None]:
    """The kernel's parameters for ``args``: a pointer and the sizes of
    each array (the descriptor the launch passes), an integer as it is, a
    float unknown; then the error slot and its size, and where the kernel
    takes one, the arena and its bytes per thread."""
    values: list[int | None] = []
    for arg in args:
        if isinstance(arg, np.ndarray):
            values.append(thread.fresh(arg.nbytes))
            values.extend(int(s) for s in arg.shape)
        else:
            values.append(arg if isinstance(arg, int) else None)
    values += [thread.fresh(8 * GPU_ERROR_WORDS), GPU_ERROR_WORDS]
    declared = len(functions(ptx)[entry].params)
    if declared == len(values) + 2:
        values += [thread.fresh(ARENA), ARENA]
    assert len(values) == declared, (len(values), declared)
    return values


def instructions(ptx: str, entry: str, args: Sequence[object]) -> Counter[str]:
    """The instructions the one thread of a one-thread grid runs over every
    element of the kernel's loop on ``args``."""
    thread = Thread(functions(ptx), {"%tid.x": 0, "%ctaid.x": 0, "%ntid.x": 1, "%nctaid.x": 1})
    thread.run(entry, kernel_arguments(ptx, entry, args, thread))
    return thread.count


def gmm_kernels(d: int, n: int, arch: str) -> list[tuple[str, str, str, list[np.ndarray]]]:
    """GMM's two point kernels for ``d`` dimensions and K = 5 on ``n``
    points: label, PTX, entry and arrays."""
    import gpu_gmm
    from adbench_data import read_gmm

    problem = read_gmm(f"gmm/10k/gmm_d{d}_K5.txt")
    k = problem.means.shape[0]
    points = problem.x[:n]
    arrays = [np.zeros(n), problem.alphas, problem.means, problem.icf, points, np.ones((k, d)), np.zeros(k)]
    gradients = [np.ones(n), *(np.zeros_like(a) for a in arrays[1:])]
    found = []
    for label, function, args in [
        ("gmm_points", gpu_gmm.gmm_points, arrays),
        ("its adjoint", rv.adjoint(gpu_gmm.gmm_points), arrays + gradients),
    ]:
        compiled = rv.cuda.kernel(function, arch=arch).specialise(*args)
        found.append((label, compiled.program.ptx, compiled.program.kernels[compiled.name].entry, args))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", type=int, nargs="+", default=[2, 10, 20])
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    from revmlir.gpu.cache import resource_usage

    few, many = 2, 6
    for d in args.d:
        for (label, ptx, entry, arrays), (_, _, _, more) in zip(
            gmm_kernels(d, few, args.arch), gmm_kernels(d, many, args.arch), strict=True
        ):
            counts = instructions(ptx, entry, more)
            counts.subtract(instructions(ptx, entry, arrays))
            per_point = {op: n / (many - few) for op, n in counts.items() if n}
            usage = resource_usage(ptx, args.arch)[entry]
            kinds = {k: prefixed(per_point, *p) for k, p in PRINTED.items()}
            print(
                f"d = {d:2d} {label:12s} {sum(per_point.values()):8.0f} instructions per point: "
                + ", ".join(f"{n:.0f} {kind}" for kind, n in kinds.items())
                + f"; {usage.registers} registers, {usage.stack_frame} bytes of stack, "
                f"{usage.spill_stores + usage.spill_loads} spill instructions"
            )


if __name__ == "__main__":
    main()
