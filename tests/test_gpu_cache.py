"""The disk cache of GPU compiles (``revmlir.gpu.cache``), without a GPU:
a second compile of the same module is loaded, not lowered, and is the
same program (byte for byte the same PTX, the same kernels, a check table
that raises the same located error); anything the output depends on is
part of the key; a damaged, foreign or undecodable entry is compiled
again; a compile that fails is not stored; and a cache that is off or
cannot be used is never keyed, read or written.  ptxas's cubins are
cached the same way, keyed by the PTX and by which ptxas it is; and a
cache that cannot be written (a full disk, a read-only file system) only
compiles more."""

from __future__ import annotations

import contextlib
import errno
import importlib.metadata
import json
import os
import re
import resource
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import xdsl
from xdsl.dialects.builtin import ArrayAttr, StringAttr, f64, i32
from xdsl.utils.exceptions import ParseError, PassFailedException

import revmlir as rv
from counted_calls import CountedCalls
from gpu_emulation import EmulatedKernel, reference
from revmlir.errors import LocatedError
from revmlir.gpu import cache as gpu_cache
from revmlir.gpu import program, toolkit
from revmlir.gpu.api import Kernel
from revmlir.gpu.program import GPUProgram, compile_kernels, module_ptx
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.gpu.toolkit import ToolkitError
from revmlir.gpu.trip_count import Constant, LoopBounds, Size
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime import cache
from revmlir.runtime_checks import CHECKS_ATTR, check_table_errors
from revmlir.tools.rev_translate import main as rev_translate

AXPY = Path(__file__).parent / "filecheck" / "gpu" / "versioned_loop.mlir"
"""``y[i] += a·x[i]``, whose index checks report located errors."""
EXAMPLES = Path(__file__).parents[1] / "examples"


def axpy(path: Path = AXPY):
    return parse_module(AXPY.read_text(), str(path))


@rv.reversible
def scale(y, x, a: float):
    for i in rv.prange(len(x)):
        y[i] += a * x[i]


SCALE_ARGS = (np.zeros(4), np.ones(4), 0.5)


@pytest.fixture
def lowerings(monkeypatch: pytest.MonkeyPatch) -> CountedCalls:
    """The modules the GPU compiler lowers, i.e. its cache's misses."""
    return CountedCalls(monkeypatch, program, "lower_kernels")


def entries(where: Path) -> list[Path]:
    return sorted(where.glob("*.gpu"))


def assert_same_program(loaded: GPUProgram, compiled: GPUProgram) -> None:
    assert loaded.ptx.encode() == compiled.ptx.encode()
    assert loaded.kernels == compiled.kernels and loaded.arch == compiled.arch
    assert loaded.check_table.attributes == compiled.check_table.attributes
    assert loaded.check_table.is_structurally_equivalent(compiled.check_table)


def test_a_second_compile_loads_the_same_program_whose_checks_raise_the_same_error(
    cache_home: Path, lowerings: CountedCalls
):
    """Compiled once, loaded from a module parsed again; the slot of a
    failed check, from the kernel run thread by thread on the CPU, raises
    the CPU's located error through the loaded program's check table as
    through the compiled one's."""
    compiled = compile_kernels(axpy(), ["axpy"])
    assert lowerings.count == 1 and len(entries(cache_home)) == 1
    loaded = compile_kernels(axpy(), ["axpy"])
    assert lowerings.count == 1 and len(entries(cache_home)) == 1
    assert_same_program(loaded, compiled)
    assert loaded.kernels["axpy"].entry == "axpy" and ".entry axpy(" in loaded.ptx

    module = axpy()
    y, x = np.zeros(12), np.ones(9)
    slot = EmulatedKernel(module, "axpy").launch([y.copy(), x, 0.5], 2, 3)
    with pytest.raises(LocatedError) as cpu:
        reference(module, "axpy")([y.copy(), x, 0.5])
    for table in (compiled.check_table, loaded.check_table):
        with pytest.raises(type(cpu.value)) as gpu:
            raise_gpu_error(table, slot)
        assert str(gpu.value) == f"{cpu.value} (element 9)"
        assert gpu.value.location == cpu.value.location and "versioned_loop.mlir:" in str(gpu.value.location)


def test_a_kernel_compiled_again_loads_its_program_and_its_options_are_keys(cache_home: Path, lowerings: CountedCalls):
    """``rv.cuda.kernel``: a new kernel of the same function (its
    in-memory programs are its own) runs the frontend and loads the
    program, as does a new function of the same source; another register
    bound or GPU is compiled."""
    compiled = Kernel(scale).compile(*SCALE_ARGS)
    loaded = Kernel(scale).compile(*SCALE_ARGS)
    assert lowerings.count == 1
    assert_same_program(loaded, compiled)
    bounded = Kernel(scale, max_registers=32).compile(*SCALE_ARGS)
    assert lowerings.count == 2 and ".maxnreg 32" in bounded.ptx and ".maxnreg" not in compiled.ptx
    older = Kernel(scale, arch="sm_80").compile(*SCALE_ARGS)
    assert lowerings.count == 3 and ".target sm_80" in older.ptx
    again = rv.reversible(scale.pyfunc)
    assert Kernel(again).compile(*SCALE_ARGS).ptx == compiled.ptx
    assert lowerings.count == 3  # a new function of the same source: the same module
    assert len(entries(cache_home)) == 3


def test_every_input_of_a_compile_is_part_of_its_key(monkeypatch: pytest.MonkeyPatch):
    """The module's text (a changed op, the same text from another file:
    its locations), what is compiled, each option, libdevice, revmlir's
    own source and xDSL's version (its backend, printer and parser run
    after the key is taken)."""
    options = (["axpy"], "sm_90", 3, None)
    base = gpu_cache.key(axpy(), "kernels", options)
    assert gpu_cache.key(axpy(), "kernels", options) == base
    changed_op = parse_module(AXPY.read_text().replace("arith.mulf", "arith.addf"), str(AXPY))
    keys = {
        gpu_cache.key(changed_op, "kernels", options),
        gpu_cache.key(axpy(AXPY.with_name("moved.mlir")), "kernels", options),
        gpu_cache.key(axpy(), "ptx", options),
        *(
            gpu_cache.key(axpy(), "kernels", (*options[:i], variant, *options[i + 1 :]))
            for i, variant in enumerate((["axpy", "other"], "sm_80", 2, 64))
        ),
    }
    monkeypatch.setattr(gpu_cache, "libdevice_digest", lambda: "another libdevice")
    keys.add(gpu_cache.key(axpy(), "kernels", options))
    monkeypatch.undo()
    monkeypatch.setattr(cache, "source_digest", lambda: "another revmlir")
    keys.add(gpu_cache.key(axpy(), "kernels", options))
    monkeypatch.undo()
    monkeypatch.setattr(gpu_cache, "xdsl_version", lambda: "0.74.1")
    keys.add(gpu_cache.key(axpy(), "kernels", options))
    assert len(keys) == 10 and base not in keys


def test_xdsls_version_is_its_metadatas_or_without_it_its_files_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The installed xDSL's version is the one it reports; an xDSL
    without metadata (a source checkout) is its files' digest, which an
    edit changes; without modules, it has none, and the warning says that
    GPU programs alone are not cached."""
    assert gpu_cache.xdsl_version() == str(xdsl.__version__)
    package = tmp_path / "xdsl"
    package.mkdir()
    (package / "printer.py").write_text("A = 1\n")
    monkeypatch.setattr(gpu_cache, "XDSL", package)
    version = importlib.metadata.version

    def no_xdsl_metadata(name: str) -> str:
        if name == "xdsl":
            raise importlib.metadata.PackageNotFoundError(name)
        return version(name)

    monkeypatch.setattr(importlib.metadata, "version", no_xdsl_metadata)

    def current() -> str:
        gpu_cache.xdsl_version.cache_clear()
        return gpu_cache.xdsl_version()

    try:
        before = current()
        (package / "printer.py").write_text("A = 2\n")
        after = current()
        assert before.startswith("unversioned ") and after.startswith("unversioned ") and before != after
        (package / "printer.py").unlink()
        with pytest.warns(cache.CacheWarning, match=r"^not caching GPU programs: the digest of .*xdsl cannot be taken"):
            assert current() is None
    finally:
        gpu_cache.xdsl_version.cache_clear()


def test_without_revmlirs_digest_no_gpu_program_is_keyed(
    cache_home: Path, lowerings: CountedCalls, monkeypatch: pytest.MonkeyPatch
):
    """A package whose digest cannot be taken (here one that is gone) is
    reported once, and GPU programs are compiled each time, none stored:
    an entry keyed without it could be any revmlir's."""
    monkeypatch.setattr(cache, "own_files", lambda: cache_home.parent / "gone")
    cache.source_digest.cache_clear()
    try:
        with pytest.warns(cache.CacheWarning, match=r"gone cannot be read") as warned:
            ptx = module_ptx(axpy())
            assert module_ptx(axpy()) == ptx
        assert gpu_cache.key(axpy(), "ptx", ("sm_90", 3)) is None
    finally:
        cache.source_digest.cache_clear()
    assert len(warned) == 1 and lowerings.count == 2
    assert entries(cache_home) == []


def test_a_new_revmlir_source_digest_is_a_miss(
    cache_home: Path, lowerings: CountedCalls, monkeypatch: pytest.MonkeyPatch
):
    ptx = module_ptx(axpy())
    monkeypatch.setattr(cache, "source_digest", lambda: "a changed lowering")
    assert module_ptx(axpy()) == ptx and lowerings.count == 2
    assert len(entries(cache_home)) == 2


def _garbage(entry: Path, other: Path) -> bytes:
    return os.urandom(entry.stat().st_size)


def _flipped(entry: Path, other: Path) -> bytes:
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0x01
    return bytes(data)


def _other_entry(entry: Path, other: Path) -> bytes:
    return other.read_bytes()


@pytest.mark.parametrize("damage", [_garbage, _flipped, _other_entry], ids=["garbage", "flipped-bit", "swapped"])
def test_a_damaged_or_foreign_entry_is_compiled_again(cache_home: Path, lowerings: CountedCalls, damage):
    """Garbage, one flipped bit, another compile's entry in its place: a
    miss that compiles again and stores a good entry."""
    first = module_ptx(axpy())
    (entry,) = entries(cache_home)
    module_ptx(axpy(), arch="sm_80")
    (other,) = set(entries(cache_home)) - {entry}
    good = entry.read_bytes()
    entry.write_bytes(damage(entry, other))
    again = module_ptx(axpy()), module_ptx(axpy(), arch="sm_80")
    assert lowerings.count == 3 and again[0] == first
    assert entry.read_bytes() == good


def test_an_empty_directory_where_an_entry_should_be_is_a_miss_that_is_replaced(
    cache_home: Path, lowerings: CountedCalls
):
    """No file can be renamed over a directory: every compile missed and
    stored nothing, silently.  It is removed, as an entry of another kind
    of file is replaced, and the next compile loads the entry."""
    first = module_ptx(axpy())
    (entry,) = entries(cache_home)
    entry.unlink()
    entry.mkdir()
    assert module_ptx(axpy()) == first and lowerings.count == 2
    assert entry.is_file()
    assert module_ptx(axpy()) == first and lowerings.count == 2


def test_a_directory_holding_files_where_an_entry_should_be_is_reported_once(cache_home: Path, lowerings: CountedCalls):
    """Not deleted (what it holds is not the cache's to delete), but said,
    once: its entry is compiled each time."""
    first = module_ptx(axpy())
    (entry,) = entries(cache_home)
    entry.unlink()
    entry.mkdir()
    (entry / "kept").write_text("")
    with pytest.warns(cache.CacheWarning, match=f"cannot keep an entry: {entry.name} is a directory") as record:
        assert module_ptx(axpy()) == first and module_ptx(axpy()) == first
    assert len(record) == 1 and lowerings.count == 3
    assert [path.name for path in entry.iterdir()] == ["kept"]


def test_a_directory_replaced_by_a_file_meanwhile_is_no_warning(
    cache_home: Path, lowerings: CountedCalls, monkeypatch: pytest.MonkeyPatch
):
    """Another process replaces the directory by a file (its own store of
    the entry) between this store's failed rename and its removal of the
    directory: removing it fails as "not a directory", which is no reason
    to warn; the entry is renamed over that file."""
    first = module_ptx(axpy())
    (entry,) = entries(cache_home)
    good = entry.read_bytes()
    entry.unlink()
    entry.mkdir()
    rmdir = os.rmdir

    def racing_rmdir(path: str, *, dir_fd: int) -> None:
        rmdir(path, dir_fd=dir_fd)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=dir_fd))
        rmdir(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "rmdir", racing_rmdir)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cache.CacheWarning)
        assert module_ptx(axpy()) == first and lowerings.count == 2
    assert entry.read_bytes() == good


KERNELS = (["axpy"], "sm_90", 3, None)
"""``compile_kernels(axpy(), ["axpy"])``'s options."""


CHECK = "ExecutionError|memref.load|f.mlir:3:5|axpy|i64,i64|index {0} is out of bounds for axis 0 with size {1}"


AXPY_BOUNDS = [["constant", 0, 64], ["size", 0, 0], ["constant", 1, 64]]
"""``range(0, y.shape[0], 1)``, the bounds of axpy's loop."""
AXPY_KERNEL = {
    "entry": "axpy",
    "arguments": "[memref<?xf64>, memref<?xf64>, f64]",
    "arena": False,
    "bounds": AXPY_BOUNDS,
}
"""The kernel of an entry ``decode`` reads."""


def _ptx(arch: str) -> str:
    return f".version 7.8\n.target {arch}\n.visible .entry axpy(\n"


def _program(*, kernel: dict[str, object] | None = None, **changes: object) -> bytes:
    """An entry's JSON: the program ``compile_kernels(axpy(), ["axpy"])``
    decodes, with ``changes`` to its fields (``kernel``: to its kernel's),
    a field given ``None`` left out."""
    axpy = AXPY_KERNEL | (kernel or {})
    fields = {
        "ptx": _ptx("sm_90"),
        "kernels": {"axpy": {k: v for k, v in axpy.items() if v is not None}},
        "check_table": f"{{rev.checks = [{json.dumps(CHECK)}]}}",
        "arch": "sm_90",
        **changes,
    }
    return json.dumps({k: v for k, v in fields.items() if v is not None}).encode()


def _table(*checks: str) -> str:
    return f"{{rev.checks = [{', '.join(map(json.dumps, checks))}]}}"


def test_the_entries_that_do_not_decode_differ_from_one_that_does_in_one_field_each():
    program = GPUProgram.decode(_program(), "sm_90", ["axpy"])
    assert program.kernels["axpy"].entry == "axpy" and len(program.kernels["axpy"].arguments) == 3
    assert program.kernels["axpy"].bounds == LoopBounds(Constant(0, 64), Size(0, 0), Constant(1, 64))
    unbounded = _program(kernels={"axpy": AXPY_KERNEL | {"bounds": None}})
    assert GPUProgram.decode(unbounded, "sm_90", ["axpy"]).kernels["axpy"].bounds is None
    assert program.check_table.attributes["rev.checks"] == ArrayAttr([StringAttr(CHECK)])


@pytest.mark.parametrize(
    "contents",
    [
        b'{"ptx": ".version',
        b"\xff\xfe",
        _program(kernel={"arguments": "!no.such<type"}),
        _program(kernel={"arguments": '[#llvm.linkage<"nope">]'}),
        _program(kernel={"arguments": "[memref<?xf64>, memref<?xf64>, f64] f64"}),
        _program(kernel={"arguments": "[memref<?xf64>, 1 : i64, f64]"}),
        _program(check_table="[]"),
        _program(check_table=_table(CHECK) + " {}"),
        _program(ptx=None),
        _program(kernel={"arena": None}),
        _program(kernels={"axpy": {"entry": "axpy"}}),
        _program(version=1),
        _program(kernel={"registers": 32}),
        _program(kernel={"arena": "no"}),
        _program(arch=90),
        _program(arch="sm_35"),
        _program(ptx=_ptx("sm_80")),
        _program(arch="sm_80", ptx=_ptx("sm_80")),
        _program(kernels={}),
        _program(kernels={"axpy": AXPY_KERNEL, "axpy2": AXPY_KERNEL}),
        _program(kernel={"entry": "ax"}),
        _program(check_table='{rev.checks = "a table"}'),
        _program(check_table="{rev.checks = [1 : i64]}"),
        _program(check_table=_table(CHECK.rsplit("|", 1)[0])),
        _program(check_table=_table(CHECK.replace("ExecutionError", "OSError"))),
        _program(check_table=_table(CHECK.replace("i64,i64", "i64,f32"))),
        _program(check_table=_table(CHECK.replace("i64,i64", "complex,complex,i64"))),
        _program(check_table=_table(CHECK.replace("{1}", "{2}"))),
        _program(check_table=_table(CHECK.replace("{1}", "{1"))),
        _program(kernel={"bounds": AXPY_BOUNDS[:2]}),
        _program(kernel={"bounds": [AXPY_BOUNDS[0], ["size", 3, 0], AXPY_BOUNDS[2]]}),
        _program(kernel={"bounds": [AXPY_BOUNDS[0], ["size", 0, 1], AXPY_BOUNDS[2]]}),
        _program(kernel={"bounds": [AXPY_BOUNDS[0], ["scalar", 2, 64], AXPY_BOUNDS[2]]}),
        _program(kernel={"bounds": [AXPY_BOUNDS[0], ["scalar", 0, 64], AXPY_BOUNDS[2]]}),
        _program(kernel={"bounds": [AXPY_BOUNDS[0], ["div", ["size", 0, 0], ["constant", 2, 64], 64], AXPY_BOUNDS[2]]}),
        _program(kernel={"bounds": [AXPY_BOUNDS[0], ["add", ["size", 0, 0], ["constant", 2, 32], 64], AXPY_BOUNDS[2]]}),
        _program(kernel={"bounds": [["constant", 0, 65], *AXPY_BOUNDS[1:]]}),
        _program(kernel={"bounds": [["constant", 2**63, 64], *AXPY_BOUNDS[1:]]}),
        _program(kernel={"bounds": [["constant", True, 64], *AXPY_BOUNDS[1:]]}),
        _program(kernel={"bounds": [["constant", 0, 32], *AXPY_BOUNDS[1:]]}),
        _program(kernel={"bounds": [["cast", ["constant", 0, 32], 64, 0], *AXPY_BOUNDS[1:]]}),
    ],
    ids=[
        "malformed-json",
        "not-utf8",
        "attribute-not-parsed",
        "attribute-refused",
        "text-after-the-arguments",
        "an-argument-not-a-type",
        "table-not-a-dictionary",
        "text-after-the-table",
        "field-missing",
        "kernel-field-missing",
        "kernel-fields-missing",
        "field-more",
        "kernel-field-more",
        "field-of-another-kind",
        "architecture-not-text",
        "architecture-unknown",
        "ptx-for-another-architecture",
        "a-program-for-another-architecture",
        "no-kernels",
        "other-kernels",
        "entry-not-in-the-ptx",
        "checks-not-an-array",
        "a-check-not-a-string",
        "a-check-of-five-fields",
        "a-check-of-an-unknown-error",
        "a-check-of-an-unknown-payload",
        "a-check-whose-payload-does-not-fit",
        "a-check-whose-message-reads-past-its-payload",
        "a-check-whose-message-is-not-a-template",
        "bounds-not-three",
        "bounds-reading-no-argument",
        "bounds-reading-a-dimension-past-the-rank",
        "bounds-reading-a-float-as-an-integer",
        "bounds-reading-an-array-as-a-scalar",
        "bounds-of-an-unknown-operation",
        "bounds-adding-values-of-two-widths",
        "bounds-of-an-integer-too-wide",
        "bounds-of-a-constant-that-does-not-fit",
        "bounds-of-a-boolean-as-an-integer",
        "bounds-not-of-index",
        "bounds-of-a-cast-not-saying-how-it-extends",
    ],
)
def test_a_sealed_entry_that_does_not_decode_is_compiled_again(
    cache_home: Path, lowerings: CountedCalls, contents: bytes
):
    """An entry that passes its seal but is not a program (a bug, or one
    that another revmlir wrote), or not the program asked for (another
    GPU's, other kernels), is a miss, not a parse error nor another
    program: compiled again, and replaced by a good entry."""
    name = gpu_cache.key(axpy(), "kernels", KERNELS)
    cache.store(name, contents, cache.GPU_PROGRAM)
    program = compile_kernels(axpy(), ["axpy"])
    assert lowerings.count == 1 and ".entry axpy(" in program.ptx
    assert_same_program(GPUProgram.decode(cache.load(name, cache.GPU_PROGRAM), "sm_90", ["axpy"]), program)


@pytest.mark.parametrize(
    "contents", [b"\xff PTX", b"", b".version 7.8\n.target sm_90a\n"], ids=["not-utf8", "empty", "another-gpu"]
)
def test_a_sealed_ptx_entry_that_is_not_ptx_for_its_gpu_is_compiled_again(
    cache_home: Path, lowerings: CountedCalls, contents: bytes
):
    name = gpu_cache.key(axpy(), "ptx", ("sm_90", 3))
    cache.store(name, contents, cache.GPU_PROGRAM)
    assert ".entry axpy(" in module_ptx(axpy()) and lowerings.count == 1
    assert ".target sm_90\n" in module_ptx(axpy()) and lowerings.count == 1


def test_an_attribute_read_from_an_entry_is_the_whole_of_its_text():
    """Text after the attribute is refused, not dropped: a damaged entry
    never reads as its first attribute."""
    assert gpu_cache.parse_attribute("[f64, i32]") == ArrayAttr([f64, i32])
    assert gpu_cache.parse_attribute("[f64, i32] \n// a comment\n") == ArrayAttr([f64, i32])
    for text in ("[f64] i32", "[f64] }"):
        with pytest.raises(ParseError, match="text after the attribute"):
            gpu_cache.parse_attribute(text)


def test_every_check_table_the_lowering_writes_is_one_an_entry_may_hold(cache_home: Path):
    """A table ``check_table_errors`` refused would be a miss every time:
    the tables of the examples and of the GPU tests' modules (every
    payload kind and message form they have) all pass, and so do the
    programs of the kernels whose GPU lowering adds checks of its own (an
    arena a stack or an ancilla array outgrows), which decode as they
    were compiled."""
    count = 0
    for example in sorted([*EXAMPLES.glob("*.mlir"), *AXPY.parent.glob("*.mlir")]):
        module = parse_module(example.read_text(), str(example))
        RevInvertPass().apply(make_context(), module)
        RevLowerToStdPass().apply(make_context(), module)
        check_table_errors(module)
        table = module.attributes.get(CHECKS_ATTR)
        count += len(table.data) if isinstance(table, ArrayAttr) else 0
    assert count > 100
    for file, kernel, what in [("stack.mlir", "tape", "(a stack; "), ("arena.mlir", "scratch", "anc.array_alloc|")]:
        path = AXPY.with_name(file)
        program = compile_kernels(parse_module(path.read_text(), str(path)), [kernel])
        checks = program.check_table.attributes[CHECKS_ATTR]
        assert isinstance(checks, ArrayAttr) and any(
            what in check.data and "of per-thread arena" in check.data
            for check in checks.data
            if isinstance(check, StringAttr)
        )
        assert_same_program(GPUProgram.decode(program.encode(), "sm_90", [kernel]), program)


def test_an_undecodable_entry_is_deleted_before_compiling_again(cache_home: Path):
    """The entry goes even when the compile after it fails."""
    name = gpu_cache.key(axpy(), "test", ())
    cache.store(name, b"not JSON", cache.GPU_PROGRAM)

    def failing() -> bytes:
        raise RuntimeError("the compile failed")

    with pytest.raises(RuntimeError, match="the compile failed"):
        gpu_cache.cached(axpy(), "test", (), failing, bytes, json.loads)
    assert entries(cache_home) == []


def test_a_decode_that_fails_otherwise_is_a_bug_that_propagates(cache_home: Path):
    """Only what bytes that are not a program raise is a miss: another
    error of ``decode`` is raised, and the entry is kept, not deleted and
    compiled again on every call."""
    name = gpu_cache.key(axpy(), "test", ())
    cache.store(name, b"{}", cache.GPU_PROGRAM)

    def broken(data: bytes) -> bytes:
        raise RuntimeError("decode is broken")

    with pytest.raises(RuntimeError, match="decode is broken"):
        gpu_cache.cached(axpy(), "test", (), lambda: b"compiled", bytes, broken)
    assert cache.load(name, cache.GPU_PROGRAM) == b"{}"


def _unknown_kernel() -> object:
    return compile_kernels(axpy(), ["nope"])


def _inline_assembly() -> object:
    module = parse_module(
        "func.func @f(%x: i32) -> i32 {\n"
        '  %b = llvm.inline_asm has_side_effects "mov $0, $1;", "=r,r" %x : (i32) -> i32\n'
        "  func.return %b : i32\n}\n",
        "asm.mlir",
    )
    return module_ptx(module)


@pytest.mark.parametrize(
    "failing, message",
    [
        (_unknown_kernel, "no function @nope to make a kernel of (module has: @axpy)"),
        (_inline_assembly, "'llvm.inline_asm' at asm.mlir:2:3: GPU code cannot run inline assembly"),
    ],
    ids=["unknown-kernel", "inline-assembly"],
)
def test_a_compile_that_fails_is_not_stored(cache_home: Path, lowerings: CountedCalls, failing, message: str):
    """Its error comes from compiling again, the same each time."""
    errors = []
    for _ in range(2):
        with pytest.raises(PassFailedException, match=re.escape(message)) as error:
            failing()
        errors.append(str(error.value))
    assert errors[0] == errors[1] and lowerings.count == 2
    assert entries(cache_home) == []


def test_an_object_entry_is_not_a_gpu_entry(cache_home: Path):
    """The seal covers the entry's kind: the same bytes stored as one kind
    are not loaded as the other, under its name or renamed."""
    cache.store("k", b"PTX", cache.GPU_PROGRAM)
    assert cache.load("k", cache.GPU_PROGRAM) == b"PTX"
    assert cache.load("k", cache.OBJECT) is None
    (cache_home / "k.gpu").rename(cache_home / "k.o")
    assert cache.load("k", cache.OBJECT) is None and not (cache_home / "k.o").exists()
    assert cache.load("k", cache.GPU_PROGRAM) is None


def test_the_size_bound_and_clearing_count_every_kind(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    cache.store("old", bytes(3000), cache.GPU_PROGRAM)
    cache.store("old", bytes(3000), cache.CUBIN)
    for old in ("old.gpu", "old.cubin"):
        os.utime(cache_home / old, (1000, 1000))
    cache.store("object", bytes(3000), cache.OBJECT)
    monkeypatch.setenv(cache.MAX_MB_ENV, str(7000 / 2**20))
    cache.store("new", bytes(3000), cache.GPU_PROGRAM)
    assert [p.name for p in cache.entries()] == ["new.gpu", "object.o"] and not (cache_home / "old.cubin").exists()
    assert cache.clear() == 2 and cache.entries() == []


def _no_key(*args: object) -> str:
    raise AssertionError("a key was computed for a cache that is not used")


def test_a_directory_others_can_write_is_not_used_for_gpu_compiles(
    cache_home: Path, lowerings: CountedCalls, monkeypatch: pytest.MonkeyPatch
):
    """As for objects: a warning, once, and every compile compiles, without
    the work of a key (printing the module)."""
    cache_home.mkdir(mode=0o700)
    cache_home.chmod(0o777)
    monkeypatch.setattr(gpu_cache, "key", _no_key)
    with pytest.warns(cache.CacheWarning, match=r"others can write to it \(mode 0777\)") as record:
        ptx = module_ptx(axpy())
        assert module_ptx(axpy()) == ptx and lowerings.count == 2
    assert len(record) == 1 and list(cache_home.iterdir()) == []


def test_a_cache_that_is_a_link_or_cannot_be_made_is_never_keyed(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A symbolic link (refused, with a warning) and a directory that
    cannot be made (its parent is a file, as a read-only home is for the
    cache): compiled, not keyed."""
    monkeypatch.setattr(gpu_cache, "key", _no_key)
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    cache_home.symlink_to(target)
    with pytest.warns(cache.CacheWarning, match="it is a symbolic link"):
        assert ".entry axpy(" in module_ptx(axpy())
    assert list(target.iterdir()) == []
    (tmp_path / "home").write_text("a file")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    assert ".entry axpy(" in module_ptx(axpy())


def test_the_cache_off_is_never_read_or_written(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    """``REVMLIR_CACHE=0``: no directory, and no key is even computed
    (the module is not printed)."""
    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    monkeypatch.setattr(gpu_cache, "key", _no_key)
    monkeypatch.setattr(cache.Directory, "load", _no_key)
    assert ".entry axpy(" in compile_kernels(axpy(), ["axpy"]).ptx
    assert ".entry axpy(" in module_ptx(axpy())
    assert not cache_home.exists()


def test_rev_translate_emits_the_cached_ptx(
    cache_home: Path, lowerings: CountedCalls, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """``--emit=ptx`` stores what it compiles and a second run loads it,
    printing the same PTX."""
    outputs = []
    for _ in range(2):
        assert rev_translate([str(AXPY), "--emit=ptx"]) == 0
        outputs.append(capsys.readouterr().out)
    assert lowerings.count == 1 and outputs[0] == outputs[1] and ".entry axpy(" in outputs[0]


# -- cubins ---------------------------------------------------------------------


PTXAS = toolkit.find_ptxas()
"""The toolkit's ptxas (the nvidia-cuda-nvcc wheel's in the test
environment), as found before a test replaces it."""


class Ptxas:
    """ptxas behind a script that logs each run's arguments, saying that
    its version is ``version`` where one is given (another ptxas)."""

    def __init__(self, folder: Path, version: str | None = None):
        assert PTXAS is not None
        folder.mkdir(exist_ok=True)
        self.path, self.log = folder / "ptxas", folder / "runs.log"
        answer = f'if [ "$1" = --version ]; then echo "{version}"; exit 0; fi\n' if version is not None else ""
        self.path.write_text(f'#!/bin/sh\necho "$@" >> "{self.log}"\n{answer}exec "{PTXAS}" "$@"\n')
        self.path.chmod(0o755)

    def runs(self) -> list[str]:
        """The runs so far, as their first arguments: ``--version`` where
        it was asked which it is, ``-arch=…`` where it assembled."""
        return [line.split()[0] for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture
def ptxas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Ptxas:
    """The ptxas the toolkit finds, logged; each test starts as a fresh
    process does, without the versions an earlier one asked for."""
    found = Ptxas(tmp_path / "toolkit")
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: found.path)
    gpu_cache._ptxas_version.cache_clear()
    return found


def cubins(where: Path) -> list[Path]:
    return sorted(where.glob("*.cubin"))


def test_rev_translate_loads_the_cubin_an_earlier_process_assembled(
    cache_home: Path, lowerings: CountedCalls, ptxas: Ptxas, tmp_path: Path
):
    """``--emit=cubin`` twice, the second time with nothing in memory (as
    a new process): the second asks ptxas which it is, and assembles
    nothing; the cubin is the same, byte for byte."""
    outputs = [tmp_path / "first.cubin", tmp_path / "second.cubin"]
    assert rev_translate([str(AXPY), "--emit=cubin", "-o", str(outputs[0])]) == 0
    assert ptxas.runs() == ["--version", "-arch=sm_90"]
    gpu_cache._ptxas_version.cache_clear()
    assert rev_translate([str(AXPY), "--emit=cubin", "-o", str(outputs[1])]) == 0
    assert ptxas.runs() == ["--version", "-arch=sm_90", "--version"] and lowerings.count == 1
    assert outputs[0].read_bytes() == outputs[1].read_bytes()
    assert outputs[0].read_bytes().startswith(gpu_cache.ELF_MAGIC) and len(cubins(cache_home)) == 1


def test_another_architecture_or_ptxas_assembles_again(
    cache_home: Path, ptxas: Ptxas, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The architecture is part of the key, and so is the ptxas: one that
    says it is another release assembles its own cubin; the first one's
    entry is still loaded by the first."""
    ptx = module_ptx(axpy())
    first = gpu_cache.cubin(ptx)
    assert gpu_cache.cubin(ptx) == first and ptxas.runs() == ["--version", "-arch=sm_90"]
    gpu_cache.cubin(ptx, "sm_100")
    assert ptxas.runs()[2:] == ["-arch=sm_100"]
    other = Ptxas(tmp_path / "other", version="Cuda compilation tools, release 99.9, V99.9.1")
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: other.path)
    assert gpu_cache.cubin(ptx) == first and other.runs() == ["--version", "-arch=sm_90"]
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: ptxas.path)
    assert gpu_cache.cubin(ptx) == first and ptxas.runs()[3:] == []
    assert len(cubins(cache_home)) == 3


def test_every_input_of_a_cubin_is_part_of_its_key(ptxas: Ptxas, monkeypatch: pytest.MonkeyPatch):
    """The PTX, the architecture, ptxas's options and its version."""
    ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
    base = gpu_cache.cubin_key(ptx, "sm_90")
    assert base is not None and gpu_cache.cubin_key(ptx, "sm_90") == base
    keys = {gpu_cache.cubin_key(ptx + "\n", "sm_90"), gpu_cache.cubin_key(ptx, "sm_100")}
    monkeypatch.setattr(toolkit, "CUBIN_OPTIONS", ("-O1",))
    keys.add(gpu_cache.cubin_key(ptx, "sm_90"))
    monkeypatch.setattr(toolkit, "CUBIN_OPTIONS", ())
    monkeypatch.setattr(toolkit, "ptxas_version", lambda path: "another ptxas")
    gpu_cache._ptxas_version.cache_clear()
    keys.add(gpu_cache.cubin_key(ptx, "sm_90"))
    assert len(keys) == 4 and base not in keys


def test_a_ptxas_replaced_within_a_process_is_asked_again(cache_home: Path, ptxas: Ptxas):
    """Which ptxas it is, is asked once per binary: a new file where it
    was (a toolkit upgraded while the process runs) is asked again."""
    key = gpu_cache.cubin_key("", "sm_90")
    assert gpu_cache.cubin_key("", "sm_90") == key and ptxas.runs() == ["--version"]
    ptxas.path.unlink()
    Ptxas(ptxas.path.parent, version="release 99")
    assert gpu_cache.cubin_key("", "sm_90") not in (key, None) and ptxas.runs() == ["--version", "--version"]


def test_a_usage_entry_is_keyed_by_the_code_that_reads_ptxass_report(ptxas: Ptxas, monkeypatch: pytest.MonkeyPatch):
    """A usage entry is revmlir's reading of ptxas's text: another revmlir
    reads it again; a cubin is ptxas's own bytes, kept across revmlir's
    versions."""
    ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
    usage, cubin = gpu_cache.usage_key(ptx, "sm_90"), gpu_cache.cubin_key(ptx, "sm_90")
    monkeypatch.setattr(cache, "source_digest", lambda: "a changed reading of the report")
    assert gpu_cache.usage_key(ptx, "sm_90") not in (usage, None)
    assert gpu_cache.cubin_key(ptx, "sm_90") == cubin


@pytest.mark.parametrize(
    "damage",
    [_flipped, lambda entry, other: b"", _other_entry],
    ids=["flipped-bit", "empty", "the-ptxs-entry"],
)
def test_a_damaged_cubin_entry_is_assembled_again(cache_home: Path, ptxas: Ptxas, damage):
    """One flipped bit, nothing, the PTX's own entry (of another kind) in
    its place: assembled again, and the good entry stored."""
    ptx = module_ptx(axpy())
    first = gpu_cache.cubin(ptx)
    (entry,) = cubins(cache_home)
    good = entry.read_bytes()
    entry.write_bytes(damage(entry, entries(cache_home)[0]))
    assert gpu_cache.cubin(ptx) == first and ptxas.runs().count("-arch=sm_90") == 2
    assert entry.read_bytes() == good


def test_a_sealed_cubin_entry_that_is_not_elf_is_assembled_again(cache_home: Path, ptxas: Ptxas):
    ptx = module_ptx(axpy())
    name = gpu_cache.cubin_key(ptx, "sm_90")
    assert name is not None
    cache.store(name, b"not a cubin", cache.CUBIN)
    assert gpu_cache.cubin(ptx).startswith(gpu_cache.ELF_MAGIC) and ptxas.runs().count("-arch=sm_90") == 1
    assert cache.load(name, cache.CUBIN) == gpu_cache.cubin(ptx)


def test_resource_usage_is_ptxas_run_once_per_ptx_architecture_and_ptxas(
    cache_home: Path, ptxas: Ptxas, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``ptxas -v``'s report is kept as a cubin is: a second call on the
    same PTX, even in a new process, runs no ptxas and reads the same
    usage; another architecture or another ptxas runs it again."""
    ptx = module_ptx(axpy())
    first = gpu_cache.resource_usage(ptx)
    assert first == toolkit.resource_usage(ptx) and first["axpy"].registers is not None
    assert ptxas.runs() == ["--version", "-v", "-v"]
    gpu_cache._ptxas_version.cache_clear()
    assert gpu_cache.resource_usage(ptx) == first and ptxas.runs()[3:] == ["--version"]
    gpu_cache.resource_usage(ptx, "sm_100")
    assert ptxas.runs()[4:] == ["-v"]
    other = Ptxas(tmp_path / "other", version="Cuda compilation tools, release 99.9, V99.9.1")
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: other.path)
    assert gpu_cache.resource_usage(ptx) == first and other.runs() == ["--version", "-v"]
    assert len(list(cache_home.glob("*.usage"))) == 3 and cubins(cache_home) == []


def test_a_usage_entry_is_exactly_a_usage_or_a_miss(cache_home: Path, ptxas: Ptxas):
    """A sealed entry of another shape (fields missing, a list for a
    function's record, a count of another kind, a JSON boolean where an
    integer is, which Python's ``bool`` would pass for) is run again, and
    the good entry stored."""
    ptx = module_ptx(axpy())
    name = gpu_cache.usage_key(ptx, "sm_90")
    assert name is not None
    first = gpu_cache.resource_usage(ptx)
    good = cache.load(name, cache.USAGE)
    assert good is not None
    damaged = []
    for field, value in (("spill_loads", "0"), ("spill_loads", False), ("registers", True)):
        text = json.loads(good)
        text["axpy"][field] = value
        damaged.append(json.dumps(text).encode())
    for data in (b'{"axpy": {"registers": 1}}', b'{"axpy": [1, 2, 3, 4]}', *damaged):
        cache.store(name, data, cache.USAGE)
        assert gpu_cache.resource_usage(ptx) == first
        assert cache.load(name, cache.USAGE) == good
    assert ptxas.runs().count("-v") == 6


def test_ptx_that_ptxas_rejects_is_not_stored(cache_home: Path, ptxas: Ptxas):
    """Its error comes from ptxas each time."""
    for _ in range(2):
        with pytest.raises(ToolkitError, match="ptxas rejected the PTX: .*syntax error"):
            gpu_cache.cubin(".version 8.0\n.target sm_90\n.address_size 64\nnot ptx\n")
    assert ptxas.runs() == ["--version", "-arch=sm_90", "-arch=sm_90"] and cubins(cache_home) == []


def test_a_ptxas_that_does_not_say_which_it_is_is_not_cached(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Its cubins might be any release's: each is assembled, none stored."""
    silent = Ptxas(tmp_path / "silent", version="")
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: silent.path)
    gpu_cache._ptxas_version.cache_clear()
    ptx = module_ptx(axpy())
    assert gpu_cache.cubin(ptx) == gpu_cache.cubin(ptx)
    assert silent.runs().count("-arch=sm_90") == 2 and cubins(cache_home) == []


def test_without_ptxas_a_cubin_is_its_error(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: None)
    with pytest.raises(ToolkitError, match="ptxas was not found"):
        gpu_cache.cubin(module_ptx(axpy()))
    assert cubins(cache_home) == []


def test_with_the_cache_off_ptxas_is_not_asked_which_it_is(
    cache_home: Path, ptxas: Ptxas, monkeypatch: pytest.MonkeyPatch
):
    ptx = module_ptx(axpy())
    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    assert gpu_cache.cubin(ptx) == gpu_cache.cubin(ptx)
    assert ptxas.runs() == ["-arch=sm_90", "-arch=sm_90"] and cubins(cache_home) == []


def test_a_ptxas_that_cannot_run_is_its_error(cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Not an executable (a damaged toolkit): it cannot say which it is,
    so nothing is cached, and running it is a toolkit error naming it, not
    an ``OSError`` of the tool."""
    broken = tmp_path / "ptxas"
    broken.write_bytes(b"\0 not a program")
    broken.chmod(0o755)
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: broken)
    gpu_cache._ptxas_version.cache_clear()
    with pytest.raises(ToolkitError, match=f"{re.escape(str(broken))} could not be run: Exec format error"):
        gpu_cache.cubin(module_ptx(axpy()))
    assert cubins(cache_home) == []


# -- a cache that cannot be written ---------------------------------------------


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Files this process writes cannot grow past ``limit`` bytes: a write
    fails with ``EFBIG``, as one to a full disk fails with ``ENOSPC``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def test_a_full_disk_stores_nothing_and_compiles(cache_home: Path, lowerings: CountedCalls):
    """The entry's write fails: the program is what a compile gives, no
    entry and no temporary file is left, and the next compile stores it."""
    module_ptx(axpy(), arch="sm_80")  # the directory and its secret
    made = sorted(cache_home.iterdir())
    with file_size_limit(1000):
        program = compile_kernels(axpy(), ["axpy"])
    assert sorted(cache_home.iterdir()) == made
    assert_same_program(compile_kernels(axpy(), ["axpy"]), program)
    assert lowerings.count == 3 and len(entries(cache_home)) == 2


def test_a_read_only_cache_loads_what_it_holds_and_compiles_the_rest(
    cache_home: Path, lowerings: CountedCalls, monkeypatch: pytest.MonkeyPatch
):
    """A file system mounted read-only (which a permission bit does not
    show to root): its entries load, and what it lacks or holds damaged is
    compiled each time, without an error."""
    ptx = module_ptx(axpy())
    damaged = module_ptx(axpy(), arch="sm_80")
    (cache_home / (gpu_cache.key(axpy(), "ptx", ("sm_80", 3)) + cache.GPU_PROGRAM.suffix)).write_bytes(b"damaged")
    before = {path: path.read_bytes() for path in cache_home.iterdir()}
    opened = os.open

    def read_only(path: str | Path, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system")
        return opened(path, flags, mode, dir_fd=dir_fd)

    def refused(*args: object, **options: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "open", read_only)
    for writer in ("unlink", "replace", "link", "utime", "mkdir"):
        monkeypatch.setattr(os, writer, refused)
    assert module_ptx(axpy()) == ptx and lowerings.count == 2
    assert module_ptx(axpy(), arch="sm_80") == damaged == module_ptx(axpy(), arch="sm_80") and lowerings.count == 4
    assert module_ptx(axpy(), opt_level=2) and lowerings.count == 5
    assert {path: path.read_bytes() for path in cache_home.iterdir()} == before
