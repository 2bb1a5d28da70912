"""PTX instructions per point of GMM's point kernels, without a GPU.

``ptx_path.py`` walks one iteration of a grid-stride loop with no loop
inside it; GMM's kernels (``examples/python/gpu_gmm.py``) call functions
with loops of ``d`` and ``K`` iterations.  This script runs one thread of a
kernel's PTX symbolically: integer registers, predicates and the bytes
stored at known addresses (the thread's frame, its arena) hold their
values, as PTX computes them for their types, which the kernel's
parameters determine (pointers, sizes, the grid), so every loop runs its
real trip count; floats are unknown.  A branch on an unknown predicate is
decided as ``ptx_path.Walk`` decides it (cold failure paths not taken,
libdevice's ordinary case, a float compare taken), so the count is the
common path of a thread whose every check passes; a branch on an unknown
integer (a trip count loaded from memory, an instruction not modelled)
stops the run rather than guess a loop's trip count.  The count of a
run of ``n₂`` points less that of ``n₁`` points, over ``n₂ − n₁``, is the
instructions per point.

    python benchmarks/ptx_run.py [--d 2 10 20] [--arch sm_90]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
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
DEPOT = re.compile(r"\.local\s+(?:\.align\s+\d+\s+)?\.b8\s+([\w$]+)\[(\d+)\]")
INTEGER_TYPES = ("s64", "u64", "b64", "s32", "u32", "b32", "s16", "u16", "b16", "u8", "s8", "b8")


@dataclass
class Function:
    name: str
    params: list[str]
    lines: list[str]
    labels: dict[str, int] = field(default_factory=dict)
    depots: dict[str, int] = field(default_factory=dict)
    """The bytes of each ``.local`` array the function declares (its frame)."""


def functions(ptx: str) -> dict[str, Function]:
    """Each ``.func`` and ``.entry`` with a body: its parameters, its
    statements, one a line (inline ``{ … }`` blocks flattened), and its
    ``.local`` arrays' sizes."""
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
        function.depots = {m.group(1): int(m.group(2)) for m in DEPOT.finditer(body)}
        found[name] = function
    return found


def _signed(value: int, bits: int = 64) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _bits(kind: str) -> int:
    return int(re.sub(r"\D", "", kind) or 64)


def _elements(operand: str) -> list[str]:
    """The registers of a vector operand, ``{%rd1, %rd2}``, or the operand."""
    if operand.startswith("{"):
        return [e.strip() for e in operand[1:-1].split(",")]
    return [operand]


Value = int | None
"""A register's or a word's value; None where the run does not know it."""
Space = dict[int, Value]
"""Parameter space (a parameter, a call's return value) by byte offset."""


class Thread:
    """One thread's run of a kernel: ``count`` holds the instructions run.

    Memory holds bytes: a store of a value writes its bytes, a load reads
    them back, whatever widths the two use; an unknown value is unknown
    bytes, and a store to an unknown address forgets all memory, which it
    may have overwritten."""

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

    def load(self, address: int, size: int) -> Value:
        result = 0
        for k in range(size):
            byte = self.memory.get(address + k)
            if byte is None:
                return None
            result |= byte << 8 * k
        return result

    def store(self, address: int | None, value: Value, size: int) -> None:
        if address is None:
            self.memory.clear()
            return
        for k in range(size):
            self.memory[address + k] = None if value is None else value >> 8 * k & 0xFF

    def run(self, name: str, arguments: list[Space]) -> Space:
        """Run ``name`` on ``arguments`` (its parameters, in order); return
        its return value's words by byte offset."""
        function = self.program[name]
        regs: dict[str, Value] = {}
        params = dict(zip(function.params, arguments, strict=False))
        returned: Space = {}
        outgoing: dict[str, Space] = {}
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
            if opcode.startswith(("ret", "exit", "call", "brx")):
                if enabled is None:
                    raise RuntimeError(f"{name} runs {text} on an unknown predicate")
                if not enabled:
                    k += 1
                    continue
            if opcode.startswith("brx"):
                raise RuntimeError(f"{name} jumps through a table: {text}")
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
                args = [outgoing.get(p.strip(), {}) for p in match.group(3).split(",") if p.strip()]
                result = self.run(callee, args)
                if match.group(1):
                    outgoing[match.group(1).strip()] = result
                k += 1
                continue
            if enabled is not False:
                self.execute(function, opcode, operands, regs, params, outgoing, returned, locals_, enabled is None)
            k += 1

    def hot(self, function: Function, k: int, target: int, guard: tuple[bool, str] | None) -> bool:
        """``ptx_path.Walk.hot``'s decision for a branch on an unknown
        predicate: a failure path is not taken, libdevice's ordinary case
        is, and so is a branch on a float compare (the data's); a branch
        on an unknown integer, or on a predicate no ``setp`` sets, would
        decide a trip count by a guess, and stops the run."""

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
            if opcode.startswith("setp") and operands and guard[1] in operands[0].split("|"):
                key = (opcode, operands[-1])
                if key in LIBDEVICE_PATH:
                    return LIBDEVICE_PATH[key] != guard[0]
                if opcode.split(".")[-1] in INTEGER_TYPES:
                    raise RuntimeError(f"{function.name} branches on {guard[1]}, an unknown integer: {text}")
                return True
        raise RuntimeError(f"{function.name} branches on {guard[1]}, which no setp sets")

    def execute(
        self,
        function: Function,
        opcode: str,
        operands: list[str],
        regs: dict[str, Value],
        params: dict[str, Space],
        outgoing: dict[str, Space],
        returned: Space,
        locals_: dict[str, int],
        unknown_guard: bool,
    ) -> None:
        parts = opcode.split(".")
        base, kind = parts[0], parts[-1]

        def value(operand: str) -> Value:
            operand = operand.strip()
            if operand.startswith("!"):
                negated = value(operand[1:])
                return None if negated is None else 1 - negated
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

        def address(operand: str) -> tuple[str, Value, int]:
            match = ADDRESS.match(operand.strip())
            assert match is not None, operand
            root, offset = match.group(1), int(match.group(2) or 0)
            return root, value(root), offset

        def assign(destination: str, result: Value) -> None:
            """Set ``destination``; each register of a vector destination
            unknown (the instructions that fill one assign its elements)."""
            for register in _elements(destination):
                regs[register] = None if unknown_guard or result is None or register != destination else result

        size = _bits(kind) // 8
        if base == "ld":
            registers = _elements(operands[0])
            root, where, offset = address(operands[1])
            at = [offset + n * size for n in range(len(registers))]
            if "param" in parts:
                space = params[root] if root in params else outgoing.get(root, {})
                loaded = [space.get(o) for o in at]
            else:
                base_address = where if kind in INTEGER_TYPES else None
                loaded = [None if base_address is None else self.load(base_address + o, size) for o in at]
            for register, word in zip(registers, loaded, strict=True):
                assign(register, word)
            return
        if base == "st":
            root, where, offset = address(operands[0])
            registers = _elements(operands[1])
            at = [offset + n * size for n in range(len(registers))]
            stored = [None if unknown_guard or kind not in INTEGER_TYPES else value(r) for r in registers]
            if "param" in parts:
                space = returned if root.startswith("func_retval") else outgoing.setdefault(root, {})
                space.update(zip(at, stored, strict=True))
            else:
                for o, word in zip(at, stored, strict=True):
                    self.store(None if where is None else where + o, word, size)
            return
        if base in ("red", "atom"):
            _, where, offset = address(operands[0 if base == "red" else 1])
            self.store(None if where is None else where + offset, None, size)
            if base == "atom":
                assign(operands[0], None)
            return
        if base == "mov":
            if operands[1] in function.depots:
                locals_.setdefault(operands[1], self.fresh(function.depots[operands[1]]))
            sources, destinations = _elements(operands[1]), _elements(operands[0])
            if kind not in INTEGER_TYPES and kind != "pred":
                assign(operands[0], None)
            elif len(sources) > 1:  # mov.b64 %rd1, {%r1, %r2}: the halves packed
                halves = [value(s) for s in sources]
                width = _bits(kind) // len(sources)
                known = [h for h in halves if h is not None]
                packed = sum(h << width * n for n, h in enumerate(known))
                assign(operands[0], packed if len(known) == len(halves) else None)
            elif len(destinations) > 1:  # mov.b64 {%r1, %r2}, %rd1: its halves
                whole = value(operands[1])
                width = _bits(kind) // len(destinations)
                for n, register in enumerate(destinations):
                    assign(register, None if whole is None else whole >> width * n & ((1 << width) - 1))
            else:
                assign(operands[0], value(operands[1]))
            return
        if base == "alloca":
            bytes_ = value(operands[1])
            if bytes_ is None:
                raise RuntimeError(f"{function.name} allocates a frame of unknown size: {opcode} {operands}")
            assign(operands[0], self.fresh(bytes_))
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
            self.compare(parts, operands, value, assign)
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
        args = [value(o) for o in operands[1:]]
        if kind not in INTEGER_TYPES or not args or None in args:
            if operands:
                assign(operands[0], None)
            return
        assign(operands[0], _integer(parts, [a for a in args if a is not None]))

    @staticmethod
    def compare(
        parts: list[str], operands: list[str], value: Callable[[str], Value], assign: Callable[[str, Value], None]
    ) -> None:
        """``setp.cmp[.boolop][.ftz].type p[|q], a, b[, c]``: ``p`` is
        ``a cmp b``, combined with ``c`` by ``boolop``; ``q`` its negation,
        likewise combined.  Floats compare unknown."""
        compare, kind = parts[1], parts[-1]
        boolop = parts[2] if parts[2] in ("and", "or", "xor") else None
        a, b = value(operands[1]), value(operands[2])
        result: Value = None
        if kind in INTEGER_TYPES and a is not None and b is not None:
            bits = _bits(kind)
            if kind.startswith("s"):
                a, b = _signed(a, bits), _signed(b, bits)
            else:
                a, b = a & ((1 << bits) - 1), b & ((1 << bits) - 1)
            result = int({"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[compare])
        negation = None if result is None else 1 - result
        if boolop is not None:
            other = value(operands[3])
            result, negation = _logic(boolop, result, other), _logic(boolop, negation, other)
        first, _, second = operands[0].partition("|")
        assign(first, result)
        if second:
            assign(second, negation)


def _integer(parts: list[str], args: list[int]) -> Value:
    """The result of the integer instruction whose opcode is ``parts`` on
    ``args``, as PTX defines it for the type: ``.hi`` the upper half of the
    product, ``.wide`` all of it, signed operands extended; None for an
    instruction not modelled and for a division by zero."""
    base, kind = parts[0], parts[-1]
    bits = _bits(kind)
    signed = kind.startswith("s")

    def typed(a: int, width: int = bits) -> int:
        return _signed(a, width) if signed else a & ((1 << width) - 1)

    wide = "wide" in parts
    x = [typed(a) for a in args]
    result: int
    if base in ("mul", "mad"):
        result = x[0] * x[1]
        if "hi" in parts:
            result >>= bits
        if base == "mad":
            result += typed(args[2], 2 * bits) if wide else x[2]
    elif base in ("div", "rem"):
        if x[1] == 0:
            return None
        quotient = abs(x[0]) // abs(x[1]) * (-1 if (x[0] < 0) != (x[1] < 0) else 1)  # truncated, as C's
        result = quotient if base == "div" else x[0] - quotient * x[1]
    elif base in ("shl", "shr"):
        shift = min(args[1] & 0xFFFFFFFF, bits)
        result = x[0] << shift if base == "shl" else x[0] >> shift
    elif base in ("and", "or", "xor"):
        result = {"and": x[0] & x[1], "or": x[0] | x[1], "xor": x[0] ^ x[1]}[base]
    elif base in ("add", "sub", "min", "max"):
        result = {"add": x[0] + x[1], "sub": x[0] - x[1], "min": min(x[:2]), "max": max(x[:2])}[base]
    elif base in ("not", "neg", "abs"):
        result = {"not": ~x[0], "neg": -x[0], "abs": abs(x[0])}[base]
    else:
        return None
    return result & ((1 << (2 * bits if wide else bits)) - 1)


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


def kernel_arguments(ptx: str, entry: str, args: Sequence[object], thread: Thread) -> list[Space]:
    """The kernel's parameters for ``args``: a pointer and the sizes of
    each array (the descriptor the launch passes), an integer as it is, a
    float unknown; then the error slot and its size, and where the kernel
    takes one, the arena and its bytes per thread."""
    values: list[Value] = []
    for arg in args:
        if isinstance(arg, np.ndarray):
            values.append(thread.fresh(arg.nbytes))
            values.extend(int(s) for s in arg.shape)
        else:
            values.append(int(arg) & MASK if isinstance(arg, int | np.integer) else None)
    values += [thread.fresh(8 * GPU_ERROR_WORDS), GPU_ERROR_WORDS]
    declared = len(functions(ptx)[entry].params)
    if declared == len(values) + 2:
        values += [thread.fresh(ARENA), ARENA]
    assert len(values) == declared, (len(values), declared)
    return [{0: v} for v in values]


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
