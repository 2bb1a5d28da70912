"""``rev-run``: run a function of a ``.mlir`` file, natively or on the reference
interpreter.

    rev-run examples/multiplier.mlir -e multiplier --args 2 3 5
    rev-run examples/multiplier.mlir -e multiplier --inverse --args 17 3 5

Arguments are Python literals matched to the function's signature: numbers for
scalars (``1+2j`` for complex), nested lists for memrefs.  Every argument is
printed back, updated, one per line as ``value : type``.
"""

from __future__ import annotations

import argparse
import ast
import math
import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.diagnostics import format_error
from revmlir.errors import ExecutionError, InversionError, InvertibilityError, LLVMRejected
from revmlir.interpreter import DEFAULT_TOLERANCE, RevInterpreter
from revmlir.ir_utils import nested_ops
from revmlir.parsing import parse_module, verify_module
from revmlir.reachability import drop_unreached_functions, reached_functions
from revmlir.runtime.arguments import out_of_range, value_range
from revmlir.runtime.jit import UnresolvedSymbolError
from revmlir.runtime.native import Direction, NativeModule, check_inverse
from revmlir.runtime.values import numpy_dtype
from revmlir.tools.cli import UsageError, input_name, read_text, run_tool, tool_parser, write_stdout

_NEGATIVE_NUMBER = re.compile(r"-([0-9.]|inf$|nan$)")
"""How a value such as ``-1e-3``, ``-2+1j`` or ``-inf`` starts; argparse takes only
plain negative numbers (``-2``, ``-0.5``) for values, and no option of
rev-run starts this way."""


def _as_values(argv: Sequence[str]) -> list[str]:
    """``argv`` with negative numbers marked as values (a leading space,
    which argparse does not take for an option and literals ignore)."""
    return [" " + arg if _NEGATIVE_NUMBER.match(arg) else arg for arg in argv]


_FLOAT_NAMES = {"nan": math.nan, "inf": math.inf}
"""The floats Python's literals have no spelling for, as the values
print them: ``--args nan "[1.0, -inf]"``."""


class _FloatNames(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = _FLOAT_NAMES.get(node.id)
        return node if value is None else ast.copy_location(ast.Constant(value), node)


def _literal(text: str) -> Any:
    """``text`` as a Python literal, where ``nan`` and ``inf`` are floats."""
    return ast.literal_eval(_FloatNames().visit(ast.parse(text, mode="eval")))


def _parse_argument(text: str, type: Attribute, index: int) -> Any:
    try:
        value = _literal(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise UsageError(f"argument #{index} ({type}): cannot read {text.strip()!r} as a literal") from None
    if isinstance(type, MemRefType):
        if not isinstance(value, list):  # numpy would make a 0-d array of a number
            raise UsageError(f"argument #{index} ({type}): an array is written as a (nested) list, got {text.strip()}")
        try:
            return np.array(value, dtype=numpy_dtype(type.element_type))
        except (TypeError, ValueError, OverflowError) as error:
            raise UsageError(f"argument #{index} ({type}): {error}") from None
    bounds = value_range(type)
    if isinstance(value, int) and not isinstance(value, bool) and bounds is not None:
        if not bounds[0] <= value <= bounds[1]:
            raise UsageError(f"argument #{index}: {out_of_range(value, str(type), bounds)}")
    return value


def _format_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return str(value.tolist())
    return repr(value)


def build_parser() -> argparse.ArgumentParser:
    parser = tool_parser("rev-run", "Run a rev.func as native code or on the reference interpreter.")
    parser.add_argument("input_file", help="the .mlir file (- for stdin)")
    parser.add_argument("-e", "--entry", required=True, help="function to run")
    parser.add_argument("--args", nargs="*", default=[], help="arguments, as Python literals")
    parser.add_argument("--inverse", action="store_true", help="run the function backwards (uncall)")
    parser.add_argument(
        "--backend",
        choices=("native", "interpreter"),
        help="run compiled native code (the default) or the reference interpreter (the default with --counters)",
    )
    parser.add_argument(
        "--counters",
        action="store_true",
        help="print calls, uncalls and instructions per function and the peak "
        "number of live ancillas (interpreter only)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        help=f"tolerance of float checks at anc.free and copy_pop (default {DEFAULT_TOLERANCE})",
    )
    return parser


def _interpreter_runs(module: ModuleOp, entry: str) -> bool:
    """Whether no function ``entry`` reaches holds an ``llvm`` op, which
    the interpreter has no semantics for: only then does a refusal of
    native code suggest the interpreter."""
    for name in reached_functions(module, [entry]):
        function = SymbolTable.lookup_symbol(module, name)
        if function is not None and any(op.name.startswith("llvm.") for op in nested_ops(function)):
            return False
    return True


def run(args: argparse.Namespace) -> int:
    if not args.tolerance >= 0:
        raise UsageError(f"--tolerance must be a number >= 0, got {args.tolerance}")
    text = read_text(args.input_file)
    args.input_file = input_name(args.input_file)  # diagnostics name stdin as rev-opt does
    module = None
    try:
        module = parse_module(text, args.input_file, verify=False)
        verify_module(module)
    except Exception as error:
        print(format_error(error, module, args.input_file), file=sys.stderr)
        return 1
    backend = args.backend or ("interpreter" if args.counters else "native")
    if args.counters and backend != "interpreter":
        raise UsageError("--counters needs --backend=interpreter")
    interpreter = RevInterpreter(module, tolerance=args.tolerance, verified=True)
    try:
        func = interpreter.function(args.entry)
    except ExecutionError as error:
        raise UsageError(str(error)) from None
    runner: RevInterpreter | NativeModule = interpreter
    if backend == "native":
        try:
            runner = _compile(module, args.entry, args.inverse, args.tolerance)
        except InversionError as error:
            print(format_error(error, module, args.input_file), file=sys.stderr)
            return 1
        except PassFailedException as error:
            # LLVM's refusal at the function it names, as rev-translate puts it
            shown = (
                format_error(error, module, args.input_file)
                if isinstance(error, LLVMRejected)
                else f"{args.input_file}: error: cannot run natively: {error}"
            )
            hint = " (use --backend=interpreter)" if _interpreter_runs(module, args.entry) else ""
            print(shown + hint, file=sys.stderr)
            return 1
        except UnresolvedSymbolError as error:
            # a rev.extern's C function that no loaded library defines
            print(f"{args.input_file}: error: cannot run natively: {error}", file=sys.stderr)
            return 1
    types = list(func.function_type.inputs.data)
    if len(args.args) != len(types):
        raise UsageError(
            f"@{args.entry} takes {len(types)} argument(s) ({', '.join(map(str, types))}), got {len(args.args)}"
        )
    values = [_parse_argument(t, ty, i) for i, (t, ty) in enumerate(zip(args.args, types))]
    run_function = runner.uncall if args.inverse else runner.call
    try:
        results = run_function(args.entry, *values)
    except (InvertibilityError, ExecutionError, InversionError) as error:
        # an InversionError: the interpreter inverts a function when it first
        # runs backwards, and one that forgets state has no inverse
        print(format_error(error, module, args.input_file), file=sys.stderr)
        return 1
    except TypeError as error:
        raise UsageError(str(error)) from None
    lines = [f"{_format_value(value)} : {type}" for value, type in zip(results, types)]
    if args.counters:
        for name, counters in sorted(interpreter.counters.items()):
            lines.append(
                f"// @{name}: calls={counters.calls} uncalls={counters.uncalls} instructions={counters.instructions}"
            )
        lines.append(f"// peak live ancillas: {interpreter.peak_live_ancillas}")
    write_stdout("".join(line + "\n" for line in lines))
    return 0


def _compile(module: ModuleOp, entry: str, inverse: bool, tolerance: float) -> NativeModule:
    """What running ``@entry`` (backwards if ``inverse``) runs, compiled:
    one direction, of the functions the entry reaches, so that a function
    the run never reaches, whose code (or inverse) native code cannot
    compile, fails natively no more than on the interpreter; the
    inverter's error first for an entry without an inverse, as the
    interpreter's."""
    if inverse:
        check_inverse(module, entry)
    reached = module.clone()
    drop_unreached_functions(reached, [entry])
    direction = Direction.BACKWARD if inverse else Direction.FORWARD
    return NativeModule.compile(reached, tolerance=tolerance, direction=direction, verified=True)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _as_values(sys.argv[1:] if argv is None else argv)
    return run_tool("rev-run", run, lambda: build_parser().parse_args(arguments))


if __name__ == "__main__":
    sys.exit(main())
