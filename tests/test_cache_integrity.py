"""The disk cache loads only what this user's revmlir stored under a key:
swapped, truncated, empty, garbage or bit-flipped entries are misses that
are compiled again (LLVM never sees them), a directory or entry that others
could have planted is not used, the cache stays within its size bound,
and what it cannot do (no home to keep it in, an entry it cannot read,
processes making it at once) leaves a compile, not an error."""

from __future__ import annotations

import errno
import os
import pwd
import stat
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import pytest

from counted_calls import CountedCalls
from revmlir.parsing import parse_module
from revmlir.runtime import cache, jit, marshal
from revmlir.runtime.native import NativeModule

F = """
rev.func @f(%y: f64, %a: f64, %b: f64) {
  %t = arith.mulf %a, %b : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %a, %b : f64, f64, f64
}
"""
G = F.replace("arith.mulf", "arith.addf")
H = F.replace("arith.mulf", "arith.subf")


@pytest.fixture
def llvm_runs(monkeypatch: pytest.MonkeyPatch) -> CountedCalls:
    """The modules LLVM optimises, i.e. the cache's misses."""
    return CountedCalls(monkeypatch, jit, "optimize")


def f_of(text: str) -> float:
    return NativeModule.compile(parse_module(text)).call("f", 0.0, 3.0, 5.0)[0]


def entry_of(text: str, where: Path) -> Path:
    """Compile ``text`` into the cache and return its (new) entry."""
    before = set(where.glob("*.o")) if where.exists() else set()
    f_of(text)
    (entry,) = set(where.glob("*.o")) - before
    return entry


def test_swapped_entries_are_rebuilt_not_run(cache_home: Path, llvm_runs: CountedCalls):
    f_entry, g_entry = entry_of(F, cache_home), entry_of(G, cache_home)
    f_bytes, g_bytes = f_entry.read_bytes(), g_entry.read_bytes()
    f_entry.write_bytes(g_bytes)
    g_entry.write_bytes(f_bytes)
    runs = llvm_runs.count
    assert f_of(F) == 15.0 and f_of(G) == 8.0
    assert llvm_runs.count == runs + 2  # both were misses
    assert f_entry.read_bytes() == f_bytes and g_entry.read_bytes() == g_bytes


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _flip_in_object(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(data) - 100] ^= 0x10
    return bytes(flipped)


def _flip_in_header(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(cache.OBJECT.format) + 5] ^= 0x01
    return bytes(flipped)


def _bare_object(data: bytes) -> bytes:
    """What the previous cache stored: the object without its seal."""
    return data[data.index(b"\x7fELF") :]


@pytest.mark.parametrize(
    "damage",
    [
        _truncated,
        lambda data: b"",
        lambda data: os.urandom(len(data)),
        _flip_in_object,
        _flip_in_header,
        _bare_object,
        lambda data: data + b"\0",
    ],
    ids=["truncated", "empty", "garbage", "flipped-object-bit", "flipped-header-bit", "unsealed", "appended"],
)
def test_a_damaged_entry_is_a_miss_and_rebuilt(cache_home: Path, llvm_runs: CountedCalls, damage):
    entry = entry_of(F, cache_home)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    runs = llvm_runs.count
    assert f_of(F) == 15.0
    assert llvm_runs.count == runs + 1
    assert entry.read_bytes() == good
    assert f_of(F) == 15.0 and llvm_runs.count == runs + 1  # the rebuilt entry is a hit


def test_entries_of_another_secret_are_misses(cache_home: Path, llvm_runs: CountedCalls):
    entry = entry_of(F, cache_home)
    (cache_home / cache.SECRET).write_bytes(os.urandom(32))
    runs = llvm_runs.count
    assert f_of(F) == 15.0 and llvm_runs.count == runs + 1
    assert entry.exists()


def test_a_shared_secret_is_replaced(cache_home: Path, llvm_runs: CountedCalls):
    entry_of(F, cache_home)
    secret = cache_home / cache.SECRET
    old = secret.read_bytes()
    secret.chmod(0o644)
    runs = llvm_runs.count
    assert f_of(F) == 15.0 and llvm_runs.count == runs + 1
    assert secret.read_bytes() != old and stat.S_IMODE(secret.stat().st_mode) == 0o600


def test_a_secret_that_cannot_be_replaced_is_reported_once(cache_home: Path, llvm_runs: CountedCalls):
    """A directory where the secret should be cannot be deleted: nothing
    can be sealed, which is said (it was a cache silently off), once."""
    (cache_home / cache.SECRET).mkdir(parents=True)
    with pytest.warns(cache.CacheWarning, match="its secret .* cannot be deleted \\(Is a directory\\)") as record:
        assert f_of(F) == 15.0 and f_of(F) == 15.0
    assert len(record) == 1 and llvm_runs.count == 2
    assert sorted(path.name for path in cache_home.iterdir()) == [cache.SECRET]


def test_a_directory_where_an_entry_should_be_is_a_miss_that_leaves_no_descriptor_open(cache_home: Path):
    """Not a regular file, so not read: opening it as a file object raised
    ``IsADirectoryError`` and left its descriptor open, one per load."""
    cache.store("k", b"data")
    (cache_home / "k.o").unlink()
    (cache_home / "k.o").mkdir()
    descriptors = len(os.listdir("/proc/self/fd"))
    assert cache.load("k") is None and cache.load("k") is None
    assert len(os.listdir("/proc/self/fd")) == descriptors


def test_a_symlinked_entry_is_not_followed(cache_home: Path, tmp_path: Path, llvm_runs: CountedCalls):
    f_entry, g_entry = entry_of(F, cache_home), entry_of(G, cache_home)
    planted = tmp_path / "planted.o"
    planted.write_bytes(g_entry.read_bytes())
    f_entry.unlink()
    f_entry.symlink_to(planted)
    runs = llvm_runs.count
    assert f_of(F) == 15.0 and llvm_runs.count == runs + 1
    assert not f_entry.is_symlink() and planted.read_bytes() == g_entry.read_bytes()


def test_a_fifo_entry_does_not_block(cache_home: Path, llvm_runs: CountedCalls):
    entry = entry_of(F, cache_home)
    entry.unlink()
    os.mkfifo(entry)
    assert f_of(F) == 15.0
    assert stat.S_ISREG(entry.stat().st_mode)


def test_a_symlinked_directory_is_refused(cache_home: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    cache_home.symlink_to(elsewhere)
    with pytest.warns(cache.CacheWarning, match="symbolic link"):
        assert f_of(F) == 15.0
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_directory_others_can_write_is_refused(cache_home: Path, mode: int):
    cache_home.mkdir()
    cache_home.chmod(mode)
    with pytest.warns(cache.CacheWarning, match=f"others can write to it \\(mode {mode:04o}\\)") as record:
        assert f_of(F) == 15.0 and f_of(G) == 8.0
    assert len(record) == 1  # once per process, not per load and store
    assert list(cache_home.iterdir()) == []


def test_a_directory_of_another_user_is_refused(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    cache_home.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(cache_home).st_uid + 1)
    with pytest.warns(cache.CacheWarning, match="owned by user"):
        assert f_of(F) == 15.0
    assert list(cache_home.iterdir()) == []


def test_the_directory_is_private_whatever_the_umask(cache_home: Path):
    previous = os.umask(0)
    try:
        f_of(F)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(cache_home.stat().st_mode) == 0o700
    for file in cache_home.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file.name


def test_a_failed_write_leaves_no_temporary_file(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    assert f_of(F) == 15.0
    assert [path.name for path in cache_home.iterdir()] == [cache.SECRET]


def test_stale_temporary_files_are_removed(cache_home: Path):
    f_of(F)
    stale, fresh = cache_home / ".dead.tmp", cache_home / ".writing.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"half an object")
    os.utime(stale, (0, 0))
    f_of(G)
    assert not stale.exists() and fresh.exists()


def test_least_recently_used_entries_are_evicted(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, llvm_runs: CountedCalls
):
    f_entry, g_entry = entry_of(F, cache_home), entry_of(G, cache_home)
    os.utime(f_entry, (1000, 1000))
    os.utime(g_entry, (2000, 2000))
    assert f_of(F) == 15.0  # a hit makes f the most recently used
    assert f_entry.stat().st_mtime > 2000
    size = max(f_entry.stat().st_size, g_entry.stat().st_size)
    monkeypatch.setenv(cache.MAX_MB_ENV, str(2.5 * size / 2**20))
    h_entry = entry_of(H, cache_home)
    assert f_entry.exists() and h_entry.exists() and not g_entry.exists()
    total = sum(path.stat().st_size for path in cache_home.glob("*.o"))
    assert total <= 2.5 * size


def test_an_entry_another_process_evicts_meanwhile_is_not_replaced_by_another(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """Listed by this eviction, deleted by another process's before this
    one deletes it: gone all the same, so no other entry goes in its
    place (it did, the failed delete being counted as nothing freed)."""
    for name, used in (("oldest", 1000), ("older", 2000)):
        cache.store(name, bytes(3000))
        os.utime(cache_home / f"{name}.o", (used, used))
    unlink = os.unlink

    def meanwhile(path: str, *, dir_fd: int | None = None) -> None:
        if path == "oldest.o":
            unlink(path, dir_fd=dir_fd)  # the other process
        unlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", meanwhile)
    monkeypatch.setenv(cache.MAX_MB_ENV, str(7000 / 2**20))
    cache.store("new", bytes(3000))
    assert [path.name for path in cache.entries()] == ["new.o", "older.o"]


def test_an_entry_larger_than_the_bound_is_still_kept(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(cache.MAX_MB_ENV, "1e-6")
    f_entry = entry_of(F, cache_home)
    g_entry = entry_of(G, cache_home)
    assert g_entry.exists() and not f_entry.exists()


@pytest.mark.parametrize("value", ["lots", "0", "-5", "inf", "nan"])
def test_a_bad_size_bound_is_reported(monkeypatch: pytest.MonkeyPatch, value: str):
    monkeypatch.setenv(cache.MAX_MB_ENV, value)
    with pytest.warns(cache.CacheWarning, match=f"{cache.MAX_MB_ENV}='{value}' is not a positive number"):
        assert cache.max_bytes() == cache.DEFAULT_MAX_MB * 2**20


def test_the_marshaller_is_keyed_by_the_python_and_numpy_abi():
    layout = marshal.ObjectLayout.probe()
    assert layout is not None
    first_line = marshal._llvm_ir(layout).splitlines()[0]
    assert f"{sys.hexversion:#x}" in first_line
    assert sysconfig.get_config_var("SOABI") in first_line
    assert f"numpy {np.__version__}" in first_line


@pytest.mark.parametrize("home", [None, "relhome"], ids=["none", "relative"])
def test_a_process_without_an_absolute_home_compiles_without_a_cache(
    cache_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    llvm_runs: CountedCalls,
    capsys: pytest.CaptureFixture[str],
    home: str | None,
):
    """``HOME`` unset and a user the password database does not know (a
    container's arbitrary user): no cache, not an error (it was
    ``RuntimeError: Could not determine home directory`` from every
    compile), and the listing says so.  A relative ``HOME`` is no cache
    either, as a relative ``XDG_CACHE_HOME`` is not one: it would put a
    cache in whatever directory a program runs in."""

    def unknown(uid: int) -> None:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    if home is None:
        monkeypatch.delenv("HOME", raising=False)
    else:
        monkeypatch.setenv("HOME", home)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown)
    assert cache.directory() is None
    assert f_of(F) == 15.0 and f_of(F) == 15.0 and llvm_runs.count == 2
    assert cache.main([]) == 0
    assert capsys.readouterr().out == (
        "there is no cache: XDG_CACHE_HOME is not an absolute path and there is no home, or it is not one\n"
    )


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """As the XDG specification says: the cache would otherwise be in
    whatever directory a program runs in."""
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.directory() == tmp_path / ".cache" / "revmlir"


def test_a_file_where_the_directory_should_be_is_reported_and_left_alone(cache_home: Path, llvm_runs: CountedCalls):
    cache_home.write_text("a file")
    with pytest.warns(cache.CacheWarning, match="it is not a directory") as record:
        assert f_of(F) == 15.0 and f_of(F) == 15.0
    assert len(record) == 1 and llvm_runs.count == 2
    assert cache_home.read_text() == "a file"


def _denied(monkeypatch: pytest.MonkeyPatch, where: Path) -> None:
    """``where`` cannot be opened nor looked at, as for another user a
    directory in a home only its owner may enter (``HOME=/root``; root, who
    runs the tests, ignores permission bits)."""
    for name in ("open", "stat", "lstat"):
        call = getattr(os, name)

        def refusing(path: object, *args: object, call=call, **options: object) -> object:
            if not isinstance(path, int) and Path(os.fsdecode(path)) == where:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return call(path, *args, **options)

        monkeypatch.setattr(os, name, refusing)


@pytest.mark.parametrize("refusal", ["permission-denied", "name-too-long"])
def test_a_directory_that_cannot_be_looked_at_is_no_cache(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, llvm_runs: CountedCalls, refusal: str
):
    """Neither opened nor looked at: compiled, without a warning (whether
    it is a link or a file is unknown) and without an error (it was the
    ``PermissionError`` or ``ENAMETOOLONG`` of every compile, load and
    store)."""
    if refusal == "permission-denied":
        _denied(monkeypatch, cache_home)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home.parent / ("a" * 300)))
    assert f_of(F) == 15.0 and f_of(F) == 15.0 and llvm_runs.count == 2
    cache.store("k", b"data")
    assert cache.load("k") is None


@pytest.mark.parametrize("argv", [[], ["--clear"]], ids=["listing", "clearing"])
def test_a_directory_the_listing_cannot_read_is_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
):
    """Said, with the reason, and a failure: not a traceback."""
    where = tmp_path / ("a" * 300)
    monkeypatch.setenv("XDG_CACHE_HOME", str(where))
    assert cache.main(argv) == 1
    assert capsys.readouterr().err == f"error: cannot read the cache {where / 'revmlir'}: File name too long\n"


def test_a_secret_another_process_makes_meanwhile_is_kept(cache_home: Path, monkeypatch: pytest.MonkeyPatch):
    """Two processes storing their first entries in a new cache: this one
    finds no secret, and the other makes one and seals an entry with it
    before this one goes on.  Both entries load (this one deleted the
    other's secret, whose entries were then misses)."""
    read = cache._read
    raced: list[str] = []

    def racing(name: str, folder: int, private: bool = False) -> bytes | None:
        data = read(name, folder, private)
        if name == cache.SECRET and not raced:
            raced.append(name)
            cache.store("other", b"the other process's", cache.OBJECT)
        return data

    monkeypatch.setattr(cache, "_read", racing)
    cache.store("this", b"this process's", cache.OBJECT)
    monkeypatch.setattr(cache, "_read", read)
    assert raced and cache.load("other") == b"the other process's" and cache.load("this") == b"this process's"


def test_an_entry_that_cannot_be_read_is_a_miss(
    cache_home: Path, llvm_runs: CountedCalls, monkeypatch: pytest.MonkeyPatch
):
    """An I/O error reading an entry (a failing disk, a network file
    system) compiles, and is not the compile's error."""
    entry = entry_of(F, cache_home).stat()
    fstat = os.fstat

    def failing(descriptor: int) -> os.stat_result:
        info = fstat(descriptor)
        if (info.st_dev, info.st_ino) == (entry.st_dev, entry.st_ino):
            raise OSError(errno.EIO, "Input/output error")
        return info

    monkeypatch.setattr(os, "fstat", failing)
    runs = llvm_runs.count
    assert f_of(F) == 15.0 and llvm_runs.count == runs + 1


def test_the_listing_counts_an_entry_evicted_meanwhile_as_nothing(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """Another process may delete an entry between the listing's look at
    the directory and at the entry."""
    entry = entry_of(F, cache_home)
    monkeypatch.setattr(cache, "entries", lambda: [entry, cache_home / "evicted.o"])
    assert cache.main([]) == 0
    assert capsys.readouterr().out == f"{cache_home}: 2 entries, {entry.stat().st_size} bytes\n"


STORING = """
import os, sys, time
from revmlir.runtime import cache
go, index = sys.argv[1], int(sys.argv[2])
read = cache._read

def late(name, folder, private=False):
    data = read(name, folder, private)
    if name == cache.SECRET and data is None and cache._read is late:
        cache._read = read
        time.sleep(0.05 * (1 + index))
    return data

cache._read = late
open(f"{go}.{os.getpid()}", "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(20):
    cache.store(f"entry{i}", f"entry {i}".encode() * 100, cache.GPU_PROGRAM)
    cache.store(f"entry{i}.{index}", f"entry {i} of {index}".encode(), cache.GPU_PROGRAM)
"""
"""A process that says it is ready (its imports done), waits for the
word, and stores twenty entries every process stores and twenty of its
own.  Its first store finds no secret and then waits, 50 ms longer than
the process before it: each finds none before any makes one, and each
goes on to make one while those before it store."""


def test_processes_storing_at_once_in_a_new_cache_leave_each_entry_loadable(cache_home: Path, tmp_path: Path):
    """Four processes start together on a new cache and each makes its
    secret if none is there yet: every entry loads, with its contents (a
    process that deleted the secret another made meanwhile made the
    entries sealed with it misses), and no temporary file is left."""
    go = tmp_path / "go"
    processes = [subprocess.Popen([sys.executable, "-c", STORING, str(go), str(index)]) for index in range(4)]
    while len(list(tmp_path.glob("go.*"))) < len(processes):
        assert all(process.poll() is None for process in processes), "a process failed before it was ready"
        time.sleep(0.001)
    go.touch()
    assert [process.wait(timeout=60) for process in processes] == [0] * 4
    for i in range(20):
        assert cache.load(f"entry{i}", cache.GPU_PROGRAM) == f"entry {i}".encode() * 100
        for index in range(4):
            assert cache.load(f"entry{i}.{index}", cache.GPU_PROGRAM) == f"entry {i} of {index}".encode()
    assert sorted(path.name for path in cache_home.iterdir() if path.name.endswith(".tmp")) == []
