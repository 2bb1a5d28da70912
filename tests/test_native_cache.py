"""The disk cache of compiled code: a second compilation of the same LLVM IR
loads the object instead of running LLVM, any change of input is a new
entry, and the cache can be turned off and cleared."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import revmlir
from revmlir.errors import LLVMRejected
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


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package of one module standing for revmlir, whose digest is taken
    afresh by ``cache.source_digest`` (and again after the test)."""
    package = tmp_path / "revmlir"
    (package / "gpu").mkdir(parents=True)
    (package / "gpu" / "program.py").write_text("A = 1\n")
    monkeypatch.setattr(cache, "own_files", lambda: package)
    cache.source_digest.cache_clear()
    yield package
    cache.source_digest.cache_clear()


def test_the_source_digest_covers_every_module_of_the_package(package: Path):
    """A changed byte, a new module or a renamed one is a new digest;
    bytecode, an editor's swap file and other files that are not code are
    not part of it."""

    def digest() -> str | None:
        cache.source_digest.cache_clear()
        return cache.source_digest()

    seen = [digest()]
    (package / "gpu" / "__pycache__").mkdir()
    (package / "gpu" / "__pycache__" / "program.cpython-311.pyc").write_bytes(b"bytecode")
    (package / "gpu" / ".program.py.swp").write_bytes(b"an editor's copy")
    (package / ".notes.swp").write_bytes(b"notes")
    (package / "notes.txt").write_text("notes")
    assert digest() == seen[0]
    (package / "gpu" / "program.py").write_text("A = 2\n")
    seen.append(digest())
    (package / "table.py").write_text("T = {}\n")
    seen.append(digest())
    (package / "table.py").rename(package / "tables.py")
    seen.append(digest())
    assert None not in seen and len(set(seen)) == 4


def test_every_file_revmlir_ships_is_part_of_its_digest():
    """``pyproject.toml`` ships no package data: every file of the package
    but bytecode is a module, so no file that can change what revmlir does
    is left out of its digest."""
    package = Path(revmlir.__file__).parent
    shipped = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith(".")
    }
    assert {relative for relative, _ in cache._code_files(package)} == shipped
    assert len(shipped) > 100


def test_a_process_with_the_cache_off_never_takes_the_digest(monkeypatch: pytest.MonkeyPatch):
    """Nor can a file of the package that cannot be read fail its
    compiles."""
    text = fibonacci().llvm_ir

    def source_digest() -> str:
        raise AssertionError("the digest was taken with the cache off")

    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    monkeypatch.setattr(cache, "source_digest", source_digest)
    assert jit.emit_object(text).startswith(b"\x7fELF")
    assert jit.jit(text).address("rrfib")


@pytest.mark.parametrize(
    "error",
    [
        PermissionError(errno.EACCES, "Permission denied", "gpu/program.py"),
        FileNotFoundError(errno.ENOENT, "No such file or directory", "gpu/program.py"),
    ],
    ids=["unreadable", "deleted once listed"],
)
def test_a_digest_that_cannot_be_taken_turns_the_cache_off(
    error: OSError, package: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """A module this user cannot read, or one an editor's save deleted
    between the listing and the reading, is reported once and the cache
    is not used: every compile runs LLVM and stores nothing."""
    text = fibonacci().llvm_ir
    read_bytes = Path.read_bytes

    def unreadable(path: Path) -> bytes:
        if path == package / "gpu" / "program.py":
            raise error
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", unreadable)
    cache.source_digest.cache_clear()  # taken by the compile of ``text``
    before = set(cache_home.glob("*.o"))
    with pytest.warns(cache.CacheWarning, match=r"gpu/program.py cannot be read") as warned:
        first = jit.emit_object(text)
        assert jit.emit_object(text) == first
    assert len(warned) == 1
    assert set(cache_home.glob("*.o")) == before


def test_a_compile_without_an_entry_to_store_makes_no_cache_directory(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """A compile that fails, or whose key cannot be taken (revmlir's files
    are gone), stores nothing and leaves no cache directory behind; the
    first one that stores makes it."""
    with pytest.raises(LLVMRejected, match="expected top-level entity"):
        jit.emit_object("this is not LLVM IR")
    assert not cache_home.exists()
    text = "define i64 @identity(i64 %x) {\n  ret i64 %x\n}\n"
    try:
        with monkeypatch.context() as patched:
            patched.setattr(cache, "own_files", lambda: cache_home.parent / "gone")
            cache.source_digest.cache_clear()
            with pytest.warns(
                cache.CacheWarning, match=r"^not caching object files, GPU programs or ptxas's resource reports: .*gone"
            ):
                jit.emit_object(text)
        assert not cache_home.exists()
        cache.source_digest.cache_clear()
        jit.emit_object(text)
    finally:
        cache.source_digest.cache_clear()
    assert len(list(cache_home.glob("*.o"))) == 1


def test_a_package_without_modules_is_no_digest(package: Path):
    """What a package read from where it is not a directory would be: its
    digest would be every version's."""
    (package / "gpu" / "program.py").unlink()
    with pytest.warns(cache.CacheWarning, match=r"no \.py file was found"):
        assert cache.source_digest() is None


def test_importing_the_cache_does_not_find_revmlirs_files():
    """They are found when the digest is taken (``cache.own_files``): under
    a zip import, finding them opens the archive, with the cache off too."""
    script = """if True:
        import importlib.resources as resources
        found = resources.files
        def files(anchor=None):
            assert anchor != "revmlir", "revmlir's files found at import"
            return found(anchor)
        resources.files = files
        import revmlir.runtime.jit, revmlir.gpu.cache
    """
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_zipped_revmlir_has_the_digest_of_its_directory(tmp_path: Path):
    """A package imported from a zip archive (``PYTHONPATH=revmlir.zip``)
    is read from the archive: the same modules, the same digest."""
    package = Path(revmlir.__file__).parent
    archive = tmp_path / "revmlir.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for relative, _ in cache._code_files(package):
            zipped.write(package / relative, f"revmlir/{relative}")
    script = "import revmlir.runtime.cache as c; print(c.__file__); print(c.source_digest())"
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(archive), os.environ.get("PYTHONPATH")))),
    }
    found = subprocess.run(
        [sys.executable, "-c", script], env=environment, cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.split()
    assert found == [str(archive / "revmlir" / "runtime" / "cache.py"), cache.source_digest()]


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


def test_the_source_digest_is_the_same_wherever_the_package_lives(tmp_path: Path):
    """Two copies of the same code (a checkout and an archive of it) share
    their entries: the digest reads paths relative to the package."""
    digests = []
    for place in ("checkout", "elsewhere/archive"):
        package = tmp_path / place / "revmlir"
        package.mkdir(parents=True)
        (package / "jit.py").write_text("A = 1\n")
        digests.append(cache.files_digest(package))
    assert digests[0] == digests[1] is not None


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
