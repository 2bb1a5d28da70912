"""rev-translate: LLVM IR, assembly, and an object file that a C program links
against and calls (the system C compiler, or zig's from the test extras).

rev-translate runs as a process of its own, forked from the tests' tool
server (``served``), which has imported it once, except where a C program
links its object file: there the installed console script starts in a
fresh interpreter, so that the imports the object file's path makes on
its own (llvmlite, NumPy, the runtime) are those of a user's run."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from revmlir.tools.rev_translate import main

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent


def c_compiler() -> list[str]:
    for name in ("cc", "gcc", "clang"):
        if (path := shutil.which(name)) is not None:
            return [path]
    return [sys.executable, "-m", "ziglang", "cc"]


def shared_library(folder: Path, name: str, source: str) -> str:
    """The C ``source`` built as the shared library ``lib<name>.so`` in
    ``folder`` (linked with libm); its path."""
    (folder / f"{name}.c").write_text(source)
    library = folder / f"lib{name}.so"
    subprocess.run(
        [*c_compiler(), "-shared", "-fPIC", "-O2", "-o", str(library), str(folder / f"{name}.c"), "-lm"],
        check=True,
        capture_output=True,
    )
    return str(library)


def test_emit_llvm_ir_and_assembly(served):
    ir = served("rev-translate", str(EXAMPLES / "multiplier.mlir"), "--emit=llvm")
    assert ir.returncode == 0, ir.stderr
    assert "define void @multiplier_ciface(ptr" in ir.stdout
    assert "define void @multiplier.inv_ciface(ptr" in ir.stdout
    assert "mul i64" in ir.stdout
    asm = served("rev-translate", str(EXAMPLES / "multiplier.mlir"), "--emit=asm")
    assert asm.returncode == 0, asm.stderr
    assert "multiplier_ciface" in asm.stdout


C_PROGRAM = r"""
#include <stdio.h>
#include "fib.h"
int main(void) {
    int64_t out = 0, n = 20, err_data[REVMLIR_ERROR_WORDS] = {0};
    revmlir_memref1 err = {err_data, {REVMLIR_ERROR_WORDS}};
    void *args[] = {&out, &n, &err};
    rrfib_ciface(args);
    printf("%lld %lld %lld\n", (long long)out, (long long)n, (long long)err_data[0]);
    rrfib_inv_ciface(args);
    printf("%lld %lld\n", (long long)out, (long long)n);
    return 0;
}
"""


def test_object_file_links_into_a_c_program(tmp_path: Path):
    """The installed command, not a served one (the server has imported
    everything already): a broken lazy import fails here."""
    source = str(EXAMPLES / "fibonacci.mlir")
    obj, header = tmp_path / "fib.o", tmp_path / "fib.h"
    for emit, out in (("obj", obj), ("header", header)):
        result = subprocess.run(
            [str(BIN / "rev-translate"), source, f"--emit={emit}", "-o", str(out)], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
    (tmp_path / "main.c").write_text(C_PROGRAM)
    exe = tmp_path / "main"
    build = subprocess.run(
        [*c_compiler(), "-O2", str(tmp_path / "main.c"), str(obj), "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.stdout.splitlines() == ["10946 20 0", "0 20"]


def test_bad_input_is_a_one_line_diagnostic(served, tmp_path: Path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "rev.func @f(%x: f64) {\n  %t = arith.mulf %x, %x : f64\n  %x1 = rev.sub %x, %t : f64\n  rev.return %x1 : f64\n}\n"
    )
    result = served("rev-translate", str(bad), "--emit=obj", "-o", str(tmp_path / "o.o"))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"{bad}:3:3: error: [self-read] 'rev.sub' reads its own target %x; "
        "use an ancilla copy (x ← 0; x += y; …; x -= y; x → 0) instead"
    )
    missing = served("rev-translate", str(EXAMPLES / "multiplier.mlir"), "--emit=obj")
    assert missing.returncode == 1 and "needs -o FILE" in missing.stderr


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.mlir")))
def test_every_example_compiles_to_an_object(example: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """In this process (the tests above run the command, served or
    installed): a process per example would spend seconds on start-up
    alone."""
    status = main([str(EXAMPLES / example), "--emit=obj", "-o", str(tmp_path / "x.o")])
    assert status == 0, capsys.readouterr().err
    assert (tmp_path / "x.o").stat().st_size > 0


def test_a_header_or_a_diagnostic_loads_neither_llvm_nor_numpy():
    """Start-up: only the outputs that need them load LLVM and NumPy."""
    code = (
        "import sys\n"
        "from revmlir.tools.rev_translate import main\n"
        f"status = main([{str(EXAMPLES / 'multiplier.mlir')!r}, '--emit=header'])\n"
        f"failed = main([{__file__!r}])\n"
        "loaded = [m for m in ('llvmlite', 'numpy') if m in sys.modules]\n"
        "print(status, failed, loaded, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stderr.strip().splitlines()[-1] == "0 1 []", result.stderr
    assert "void multiplier_ciface(void **args)" in result.stdout


@pytest.mark.parametrize("name", ["my-f", "9x", 'a\\"b', ""])
def test_a_header_refuses_a_name_that_is_no_c_name(served, name: str, tmp_path: Path):
    """C compilers pass the asm label to the assembler unquoted, so a name
    outside C's and the assembler's characters has no C name to offer."""
    source = tmp_path / "odd.mlir"
    source.write_text(
        f'rev.func @"{name}"(%y: i64, %x: i64) {{\n  %y1 = rev.add %y, %x : i64\n  rev.return %y1, %x : i64, i64\n}}\n'
    )
    result = served("rev-translate", str(source), "--emit=header")
    assert result.returncode == 1 and not result.stdout
    spelled = name.replace("\\", "")
    assert result.stderr.strip() == (
        f"{source}: error: 'rev.func' at {source}:1:1: @\"{spelled}\" has no C name: a header declares functions named "
        "[A-Za-z_][A-Za-z0-9_.]*; rename it"
    )


def test_a_header_refuses_two_functions_with_one_c_name(served, tmp_path: Path):
    source = tmp_path / "clash.mlir"
    source.write_text(
        "rev.func @f(%y: f64, %x: f64) {\n  %y1 = rev.add %y, %x : f64\n  rev.return %y1, %x : f64, f64\n}\n"
        "rev.func @f_inv(%y: f64, %x: f64) {\n  %y1 = rev.sub %y, %x : f64\n  rev.return %y1, %x : f64, f64\n}\n"
    )
    result = served("rev-translate", str(source), "--emit=header")
    assert result.returncode == 1 and not result.stdout
    assert result.stderr.strip() == (
        f"{source}: error: 'rev.func' at {source}:5:1: @f.inv (the inverse of @f) and @f_inv "
        "both have the C name f_inv_ciface: rename one"
    )
