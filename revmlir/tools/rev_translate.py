"""``rev-translate``: compile a ``.mlir`` file of reversible functions ahead of
time: LLVM IR, assembly, an object file, or a C header for it; or for an
NVIDIA GPU: PTX, or a cubin where ptxas is installed (docs/gpu.md).

    rev-translate examples/multiplier.mlir --emit=obj -o multiplier.o
    rev-translate examples/multiplier.mlir --emit=header -o multiplier.h

Every ``rev.func @f`` becomes two C-callable symbols, ``f_ciface`` and
``f.inv_ciface`` (as ``f_inv_ciface`` in the header, through an asm label),
taking ``void **args``: one pointer per argument (see the header's comment),
plus a last one to the error slot.  Scalars are updated in place.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ComplexType,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import PassFailedException

from revmlir.diagnostics import format_error
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FixedType, FuncOp, LogType, TropicalType
from revmlir.errors import describe_op
from revmlir.gpu.toolkit import DEFAULT_ARCH
from revmlir.lowering.native_types import check_native_types
from revmlir.lowering.std_to_llvm import CIFACE_SUFFIX, RUNTIME_LIBRARY, check_symbol_names, own_symbol
from revmlir.naming import inverse_name
from revmlir.parsing import parse_module, verify_module
from revmlir.runtime.std_form import object_checks
from revmlir.runtime_checks import (
    ARRAY_TOO_LARGE,
    BAD_STACK,
    ERROR_WORDS,
    JUMP_WORD,
    NEGATIVE_OFFSET,
    NEGATIVE_SIZE,
    NULL_DATA,
    OUT_OF_DOMAIN,
    PAYLOAD_SLOTS,
    SHAPE_MISMATCH,
    SHORT_ERROR_SLOT,
    STRIDE_MISMATCH,
)
from revmlir.semantics import written_arguments
from revmlir.tools.cli import (
    TRACEBACK_ENV,
    UsageError,
    check_output,
    input_name,
    read_text,
    run_tool,
    tool_parser,
    write_output,
    write_stdout,
)

EMITS = ("llvm", "asm", "obj", "header", "ptx", "cubin")
GPU_EMITS = ("ptx", "cubin")


C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
"""The names a header can declare: a C name is the function's with its
dots made ``_``, and the asm label is the symbol itself, which C compilers
hand to the assembler unquoted (GNU as reads ``my-f`` as a subtraction)."""


def _c_type(type: Attribute, checked: bool = True) -> str:
    """``type``'s C spelling, with a comment where C's type says too little;
    ``checked``: whether the entry points refuse a tropical or log value
    that is not finite (scalars; an array's or a stack's elements are not
    read there)."""
    domain = ": finite" if checked else ", trusted: not checked"
    if isinstance(type, LogType):
        return f"{_c_type(type.element_type)} /* log of the value{domain} */"
    if isinstance(type, TropicalType):
        return f"{_c_type(type.element_type)} /* tropical{domain} */"
    if isinstance(type, FixedType):
        return f"int{type.width.data}_t /* fixed point, {type.fraction.data} fraction bits */"
    if isinstance(type, Float64Type):
        return "double"
    if isinstance(type, Float32Type):
        return "float"
    if isinstance(type, IndexType):
        return "int64_t"
    if isinstance(type, IntegerType):
        return "bool" if type.width.data == 1 else f"int{type.width.data}_t"
    if isinstance(type, ComplexType):
        return f"{_c_type(type.element_type)}[2]"
    if isinstance(type, MemRefType):
        shape = ", ".join("?" if size == DYNAMIC_INDEX else str(size) for size in type.get_shape())
        return f"revmlir_memref{type.get_num_dims()} /* of {_element(type.element_type)}, [{shape}] */"
    if isinstance(type, StackType):
        element = _element(type.element_type)
        return f"revmlir_memref1 /* stack header int64_t[3]: malloc'd {element} buffer, size, capacity */"
    raise TypeError(f"no C type for {type}")


def _element(type: Attribute) -> str:
    """The C type of an array's or a stack's element, its comment in
    parentheses: inside the container's comment, a nested ``/* */`` would
    end it."""
    return _c_type(type, checked=False).replace("/* ", "(").replace(" */", ")")


def _c_string(text: str) -> str:
    """``text`` as a C string literal: printable ASCII as it is, but for
    ``"``, ``\\`` and ``?`` (which starts a trigraph in ISO C), and every
    other byte of its UTF-8 as an octal escape."""
    return (
        '"'
        + "".join(chr(b) if 0x20 <= b < 0x7F and chr(b) not in '"\\?' else f"\\{b:03o}" for b in text.encode())
        + '"'
    )


def header(module: ModuleOp, guard: str) -> str:
    """A C header declaring the entry points of a compiled module: refused
    where its object would be, for the types its C callers pass and for a
    function named like a symbol the object needs (the libm names a
    module's code calls are the object's to refuse: finding them is its
    lowering)."""
    check_native_types(module)
    functions = [f for f in module.ops if isinstance(f, FuncOp)]
    check_symbol_names(((f, own_symbol(f.sym_name.data)) for f in functions), RUNTIME_LIBRARY, entry_points=True)
    ranks = sorted(
        {
            len(t.get_shape())
            for f in module.ops
            if isinstance(f, FuncOp)
            for t in f.function_type.inputs.data
            if isinstance(t, MemRefType)
        }
        | {1}
    )
    lines = [
        f"#ifndef {guard}",
        f"#define {guard}",
        "/* Generated by rev-translate. Each function updates its scalar",
        "   arguments in place; args[i] points to argument i, args[n] to the",
        "   error slot, a revmlir_memref1 over REVMLIR_ERROR_WORDS int64_t, all 0:",
        f"   a failing run-time check stores its (1-based) id in [0] and the values it saw in [1] to [{PAYLOAD_SLOTS}],",
        f"   and the call returns at once ([{JUMP_WORD}] is the entry point's own). The id",
        f"   names its entry in {guard}_CHECKS below. Before running, the",
        "   entry point refuses what it would read past, storing a negative id:",
        "   REVMLIR_SHORT_ERROR_SLOT in [0] of a slot of fewer words (if it has one;",
        "   a null data pointer: none); then, the argument's position in [1],",
        "   REVMLIR_NEGATIVE_SIZE for a negative size (the dimension, the size),",
        "   REVMLIR_SHAPE_MISMATCH for an array whose sizes differ from its static",
        "   shape (the dimension, the shape's size, the size given),",
        "   REVMLIR_ARRAY_TOO_LARGE where its nonzero sizes' product, in bytes, passes",
        "   INT64_MAX (the dimension, the size), REVMLIR_NULL_DATA for a null data",
        "   pointer of an array with elements (0), and REVMLIR_OUT_OF_DOMAIN for a",
        "   scalar outside its type's values, as its comment says (its bits as a",
        "   double's), REVMLIR_BAD_STACK for a stack header whose size is negative or",
        "   past its capacity, whose capacity passes INT64_MAX bytes, or whose buffer",
        "   is null with a capacity (the size, the capacity, the buffer).",
        "   REVMLIR_NEGATIVE_OFFSET and REVMLIR_STRIDE_MISMATCH come only from",
        "   _mlir_ciface_<f>, upstream's convention, for a negative offset (the",
        "   offset) and a stride other than row-major where the array has elements",
        "   and the dimension's size is not 1 (the dimension, the row-major stride,",
        "   the stride given). What cannot be checked is trusted: a descriptor's",
        "   rank (it must be the type's), that the data pointer reaches as many",
        "   elements as the sizes say, that a stack's buffer is malloc's with room",
        "   for its capacity, the values of an array's or a stack's elements (as",
        "   their comments say), and the pointers in args themselves. An array a",
        "   function writes (listed after it) must share no memory with another",
        "   of its arguments. */",
        "#include <stdbool.h>",
        "#include <stdint.h>",
        f"#define REVMLIR_ERROR_WORDS {ERROR_WORDS}",
        f"#define REVMLIR_SHORT_ERROR_SLOT ({SHORT_ERROR_SLOT})",
        f"#define REVMLIR_SHAPE_MISMATCH ({SHAPE_MISMATCH})",
        f"#define REVMLIR_NEGATIVE_SIZE ({NEGATIVE_SIZE})",
        f"#define REVMLIR_ARRAY_TOO_LARGE ({ARRAY_TOO_LARGE})",
        f"#define REVMLIR_NULL_DATA ({NULL_DATA})",
        f"#define REVMLIR_NEGATIVE_OFFSET ({NEGATIVE_OFFSET})",
        f"#define REVMLIR_STRIDE_MISMATCH ({STRIDE_MISMATCH})",
        f"#define REVMLIR_OUT_OF_DOMAIN ({OUT_OF_DOMAIN})",
        f"#define REVMLIR_BAD_STACK ({BAD_STACK})",
    ]
    for rank in ranks:
        # ISO C has no arrays of no elements: a rank-0 array is its data alone
        sizes = f" int64_t sizes[{rank}];" if rank else ""
        lines.append(f"typedef struct {{ void *data;{sizes} }} revmlir_memref{rank};")
    lines += [
        "/* The object's run-time checks by id, \"error|op|location|function|payload",
        "   kinds|message\", the message a Python format of the payload's values ({0}",
        "   is [1] as its kind says, ...); entry 0 is no check. Use it as",
        f"   static const char *const checks[] = {guard}_CHECKS; and checks[id]. */",
        f"#define {guard}_CHECKS {{ \\",
        *(f"    {_c_string(entry)}, \\" for entry in ["", *object_checks(module)]),
        "}",
    ]
    written = written_arguments(module)
    c_names: dict[str, str] = {}
    for func in module.ops:
        if not isinstance(func, FuncOp):
            continue
        name = func.sym_name.data
        names = [arg.name_hint or f"arg{i}" for i, arg in enumerate(func.body.block.args)]
        args = ", ".join(f"{n}: {_c_type(arg.type)}" for n, arg in zip(names, func.body.block.args))
        writes = [names[i] for i in sorted(written[name]) if isinstance(func.body.block.args[i].type, MemRefType)]
        note = f" writes {', '.join(writes)}" if writes else ""
        if not C_NAME.fullmatch(name):
            raise PassFailedException(
                f'{describe_op(func)}: @"{name}" has no C name: a header declares functions named '
                "[A-Za-z_][A-Za-z0-9_.]*; rename it"
            )
        for symbol in (name, inverse_name(name)):
            c_name = symbol.replace(".", "_") + CIFACE_SUFFIX
            said = f"@{symbol}" if symbol == name else f"@{symbol} (the inverse of @{name})"
            if (other := c_names.setdefault(c_name, said)) is not said:
                raise PassFailedException(
                    f"{describe_op(func)}: {other} and {said} both have the C name {c_name}: rename one"
                )
            lines.append(f"// {symbol}({args}){note}")  # the types carry /* */ notes
            lines.append(f'void {c_name}(void **args) __asm__("{symbol}{CIFACE_SUFFIX}");')
    lines.append(f"#endif /* {guard} */")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = tool_parser("rev-translate", "Compile reversible functions ahead of time.")
    parser.add_argument("input_file", help="the .mlir file (- for stdin)")
    parser.add_argument("--emit", choices=EMITS, default="llvm", help="what to produce (default: llvm)")
    parser.add_argument("-o", "--output", help="output file (default: stdout; required for obj)")
    parser.add_argument("--gpu-arch", help=f"the GPU for --emit=ptx/cubin (default: {DEFAULT_ARCH})")
    parser.add_argument(
        "-O", dest="opt_level", type=int, default=3, choices=range(4), help="LLVM optimisation level (default: 3)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    if args.emit in ("obj", "cubin") and not args.output:
        raise UsageError(f"--emit={args.emit} needs -o FILE")
    gpu: str = DEFAULT_ARCH if args.gpu_arch is None else args.gpu_arch
    if args.emit in GPU_EMITS:
        # lazy: the kernel compiler loads only for the GPU outputs
        from revmlir.gpu.program import check_architecture

        try:
            check_architecture(gpu)  # a mistyped flag, before the compile
        except ValueError as error:
            raise UsageError(f"--gpu-arch: {error}") from None
    elif args.gpu_arch is not None:  # the output would be the host's, whatever the flag said
        raise UsageError(f"--gpu-arch applies to --emit=ptx and --emit=cubin, not --emit={args.emit}")
    if args.output:
        check_output(args.output)
    text = read_text(args.input_file)
    args.input_file = input_name(args.input_file)  # diagnostics name stdin as rev-opt does
    module = None
    try:
        module = parse_module(text, args.input_file, verify=False)
        verify_module(module)
        if args.emit == "header":
            guard = "REVMLIR_" + "".join(c if c.isalnum() else "_" for c in os.path.basename(args.input_file)).upper()
            output: str | bytes = header(module, guard)
        elif args.emit in GPU_EMITS:
            # lazy: the kernel compiler loads only for the GPU outputs
            from revmlir.gpu.cache import cubin
            from revmlir.gpu.program import module_ptx

            output = module_ptx(module, gpu, args.opt_level)
            if args.emit == "cubin":
                output = cubin(output, gpu)
        else:
            # lazy: LLVM and NumPy load only for the host's outputs
            from revmlir.runtime.jit import emit_assembly, emit_object, host_target_machine, optimize
            from revmlir.runtime.native import lower_to_llvm_ir

            llvm_ir = lower_to_llvm_ir(module, for_c=True).llvm_ir
            if args.emit == "llvm":
                machine = host_target_machine(args.opt_level, reloc="pic")
                output = str(optimize(llvm_ir, machine, args.opt_level))
            elif args.emit == "asm":
                output = emit_assembly(llvm_ir, args.opt_level)
            else:
                output = emit_object(llvm_ir, args.opt_level)
    except Exception as error:
        if os.environ.get(TRACEBACK_ENV):
            raise
        print(format_error(error, module, args.input_file), file=sys.stderr)
        return 1
    if args.output:
        write_output(args.output, output)
    else:
        assert isinstance(output, str)
        write_stdout(output)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_tool("rev-translate", run, lambda: build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
