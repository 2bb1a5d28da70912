"""The disk cache of compiled code: a second compilation of the same LLVM IR
loads the object instead of running LLVM, any change of input is a new
entry, and the cache can be turned off and cleared."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from revmlir.parsing import parse_module
from revmlir.runtime import cache, jit
from revmlir.runtime.native import NativeModule

EXAMPLES = Path(__file__).parent.parent / "examples"


def fibonacci() -> NativeModule:
    return NativeModule.compile(parse_module((EXAMPLES / "fibonacci.mlir").read_text()))


def forbid_llvm(monkeypatch: pytest.MonkeyPatch) -> None:
    def optimize(*args: object) -> None:
        raise AssertionError("LLVM ran although the object is cached")

    monkeypatch.setattr(jit, "optimize", optimize)


def test_a_second_compilation_loads_the_cached_object(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    first = fibonacci()
    entries = list(cache_home.glob("*.o"))
    assert len(entries) == 1 and b"\x7fELF" in entries[0].read_bytes()
    # The first calls compile (and cache) the argument marshallers too, so
    # that the second module's calls need LLVM for nothing, whichever tests
    # ran before in this process.
    expected = first.call("rrfib", 0, 20), first.uncall("rrfib", 10946, 20)
    entries = sorted(cache_home.glob("*.o"))
    # the uncall compiled the inverses: an entry of their own
    target = jit.HostTarget.detect()
    keys = {cache.key(m.llvm_ir, "jit", 3, target.triple, target.cpu, target.features) for m in (first, first.rest)}
    assert len(keys) == 2 and {key + ".o" for key in keys} <= {entry.name for entry in entries}
    forbid_llvm(monkeypatch)
    second = fibonacci()
    assert (second.call("rrfib", 0, 20), second.uncall("rrfib", 10946, 20)) == expected == ((10946, 20), (0, 20))
    assert sorted(cache_home.glob("*.o")) == entries


def test_object_files_are_cached_too(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    text = fibonacci().llvm_ir
    data = jit.emit_object(text)
    forbid_llvm(monkeypatch)
    assert jit.emit_object(text) == data
    assert len(list(cache_home.glob("*.o"))) == 2  # the JIT's and the object's


def test_every_input_of_llvm_is_part_of_the_key():
    base = ("ir", "jit", 3, "x86_64-unknown-linux-gnu", "znver3", "+avx2")
    changed = {
        cache.key(*base[:i], variant, *base[i + 1 :])
        for i, variant in enumerate(("ir2", "object", 2, "aarch64-unknown-linux-gnu", "skylake", "-avx2"))
    }
    assert cache.key(*base) == cache.key(*base)
    assert len(changed) == 6 and cache.key(*base) not in changed


def test_the_source_digest_covers_every_file_of_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A changed byte, a new file (a data file too) or a renamed one is a
    new digest; compiled bytecode is not part of it."""
    package = tmp_path / "revmlir"
    (package / "gpu" / "__pycache__").mkdir(parents=True)
    (package / "gpu" / "program.py").write_text("A = 1\n")
    monkeypatch.setattr(cache, "PACKAGE", package)

    def digest() -> str:
        cache.files_digest.cache_clear()
        return cache.source_digest()

    try:
        seen = [digest()]
        (package / "gpu" / "__pycache__" / "program.cpython-311.pyc").write_bytes(b"bytecode")
        assert digest() == seen[0]
        (package / "gpu" / "program.py").write_text("A = 2\n")
        seen.append(digest())
        (package / "table.json").write_text("{}")
        seen.append(digest())
        (package / "table.json").rename(package / "tables.json")
        seen.append(digest())
        assert len(set(seen)) == 4
    finally:
        cache.files_digest.cache_clear()


def test_an_edited_revmlir_loads_no_object_an_older_one_compiled(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    """LLVM runs the pipeline and target options revmlir's code chooses,
    and a source checkout keeps one version through every edit: an object
    an older revmlir compiled from the same LLVM IR is a miss."""
    text = fibonacci().llvm_ir
    jit.emit_object(text)
    before = set(cache_home.glob("*.o"))
    monkeypatch.setattr(cache, "source_digest", lambda: "an edited revmlir")
    jit.emit_object(text)
    assert len(set(cache_home.glob("*.o")) - before) == 1


def test_the_source_digest_is_the_same_wherever_the_package_lives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Two copies of the same code (a checkout and an archive of it) share
    their entries: the digest reads paths relative to the package."""
    digests = []
    for place in ("checkout", "elsewhere/archive"):
        package = tmp_path / place / "revmlir"
        package.mkdir(parents=True)
        (package / "jit.py").write_text("A = 1\n")
        monkeypatch.setattr(cache, "PACKAGE", package)
        digests.append(cache.source_digest())
    assert digests[0] == digests[1]


def test_the_cache_can_be_turned_off(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    assert cache.directory() is None
    assert fibonacci().call("rrfib", 0, 10) == (89, 10)
    assert not cache_home.exists()


def test_clearing_the_cache(cache_home: Path):
    fibonacci()
    NativeModule.compile(parse_module((EXAMPLES / "multiplier.mlir").read_text()))
    tool = [sys.executable, "-m", "revmlir.runtime.cache"]
    listing = subprocess.run(tool, capture_output=True, text=True, check=True)
    assert listing.stdout.startswith(f"{cache_home}: 2 entries, ")
    cleared = subprocess.run([*tool, "--clear"], capture_output=True, text=True, check=True)
    assert cleared.stdout.strip() == f"removed 2 entries from {cache_home}"
    assert not list(cache_home.glob("*.o"))


def test_an_unwritable_cache_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert fibonacci().call("rrfib", 0, 10) == (89, 10)
