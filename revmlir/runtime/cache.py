"""The disk cache of compiled code.

LLVM's optimisation and code generation are a large part of the first call
of a reversible function, and they are a pure function of the LLVM IR text,
the optimisation level, the kind of output (JIT or position-independent
object), LLVM's version and the target (triple, CPU name and features).  The
cache keys object files by a SHA-256 hash of exactly those and of revmlir's
own code (``source_digest``: revmlir chooses LLVM's pipeline and target
options, so an edited revmlir must not load what an older one compiled),
so a program that has not changed, on the same machine and LLVM, with the
same revmlir, is loaded in well under a millisecond instead of being
compiled again; anything else is a different key (entries are never stale,
only unused).  The digest is taken only once the cache is open, so a
process with the cache off never reads the package; where it cannot be
taken (a module that cannot be read), the entries keyed by it (object
files, GPU programs, ptxas's resource reports) are neither loaded nor
stored for the process, with a ``CacheWarning``; cubins, keyed by ptxas
alone, still are.

Each use of the cache is a ``Kind`` of entry, with its own format tag and
file suffix: ``OBJECT``, LLVM's object files for the host
(``revmlir.runtime.jit``), ``GPU_PROGRAM``, GPU compiles, ``CUBIN``,
ptxas's cubins of their PTX, and ``USAGE``, what ptxas reports of the
resources of their functions (all three ``revmlir.gpu.cache``).  Every kind is
listed here, not where it is used, so that the size bound, ``--clear`` and
the listing count all of them in a process that imported only this module.  ``opened`` decides once whether
the cache can be used and gives its ``Directory``, which loads and stores
entries; ``load`` and ``store`` do that for one entry.

An entry is code (or a program) this process will run, so it is loaded only
when it is provably the entry this user's revmlir stored under that key:

* The directory, ``$XDG_CACHE_HOME/revmlir`` (``~/.cache/revmlir`` when
  ``XDG_CACHE_HOME`` is unset or relative; none when the home is relative
  too), is created with mode 0700 and
  used only while it is a real directory (not a symbolic link, nor a file)
  owned by this user and not writable by group or others; otherwise the
  cache is off for the process, with a ``CacheWarning``, and everything is
  compiled as if it were disabled.  A directory that cannot be made,
  looked at or written (a read-only home, one this user cannot enter, a
  full disk) is no cache, or one that only loads: never an error.
* Every file is opened relative to that directory without following
  symbolic links, and only a regular file owned by this user is read.
* Each entry starts with its kind's format tag and an HMAC-SHA-256, under a
  random per-user secret kept in the directory (``secret``, mode 0600), of
  its file name (key and kind) and its contents.  A truncated, empty,
  corrupt, swapped or foreign entry fails the check, is deleted and compiled
  again; LLVM (or the GPU launcher) never sees it.  A secret that is not a
  private file of the right size is replaced, and one that cannot be (a
  directory) is reported with a ``CacheWarning``: nothing is stored then.
  An entry that is not a regular file (a FIFO, a link, an empty
  directory) is a miss, replaced by the store after it; a directory that
  cannot be deleted (one holding files) is reported, once, and its entry
  is compiled each time.
* Entries are written to a temporary file and renamed into place, so
  concurrent processes never read half an object; the temporary file is
  removed when the write fails.
* The directory holds at most ``REVMLIR_CACHE_MAX_MB`` megabytes (256 by
  default): after each store the least recently used entries (by
  modification time, which a hit renews) are deleted.

``REVMLIR_CACHE=0`` turns the cache off.  Clear it with ``python -m
revmlir.runtime.cache --clear`` (or by deleting the directory); ``python -m
revmlir.runtime.cache`` prints where it is and its size.

For objects, only LLVM's work is cached: the Python passes that produce the
LLVM IR run on every first call, since their output is the key.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import hmac
import importlib.resources
import os
import secrets
import stat
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

CODE_SUFFIXES = (".py",)
"""The files of a package that are its code: ``pyproject.toml`` ships no
package data, so revmlir's are its modules."""
ENABLE_ENV = "REVMLIR_CACHE"
MAX_MB_ENV = "REVMLIR_CACHE_MAX_MB"
DEFAULT_MAX_MB = 256.0


@dataclass(frozen=True)
class Kind:
    """What one use of the cache stores."""

    format: str
    """Part of every key of the kind and every entry's header: bump it when
    what an entry holds changes."""
    suffix: str
    """The entries' file names end with it."""

    @property
    def magic(self) -> bytes:
        return self.format.encode() + b"\0"

    def key(self, *parts: str) -> str:
        """The entry name for an output that is a pure function of
        ``parts`` and LLVM (llvmlite's and LLVM's versions are part of
        every key: each kind holds LLVM's output, or ptxas's of it)."""
        digest = hashlib.sha256()
        for part in (self.format, llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info)), *parts):
            data = part.encode()
            digest.update(len(data).to_bytes(8, "little") + data)  # no two lists of parts hash alike
        return digest.hexdigest()


OBJECT = Kind("revmlir-object-cache-3", ".o")
"""Object files for the host, from ``revmlir.runtime.jit``."""
GPU_PROGRAM = Kind("revmlir-gpu-program-2", ".gpu")
"""GPU compiles (PTX and what launches need), from ``revmlir.gpu.cache``."""
CUBIN = Kind("revmlir-cubin-1", ".cubin")
"""ptxas's cubins, from ``revmlir.gpu.cache``."""
USAGE = Kind("revmlir-ptxas-usage-1", ".usage")
"""What ``ptxas -v`` reports of a PTX's functions (registers, stack frame,
spills), from ``revmlir.gpu.cache.resource_usage``."""
KINDS = (OBJECT, GPU_PROGRAM, CUBIN, USAGE)
SUFFIXES = tuple(k.suffix for k in KINDS)

SECRET = "secret"
_TEMPORARY = ".tmp"
_DIGEST = hashlib.sha256().digest_size
_SECRET_BYTES = 32
_STALE_TEMPORARY_S = 3600.0
"""A temporary file this old belongs to a process that died mid-write."""

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""Never through a link, and never blocked on a FIFO planted as an entry."""
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class CacheWarning(UserWarning):
    """The cache cannot be used safely and is off for this process."""


def enabled() -> bool:
    """Whether ``REVMLIR_CACHE`` leaves the cache on."""
    return os.environ.get(ENABLE_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def directory() -> Path | None:
    """Where entries live, or None when the cache is off or has no place:
    ``XDG_CACHE_HOME`` (ignored unless absolute, as the XDG specification
    says: a relative one would put a cache in every working directory),
    else ``~/.cache``; a process without a home (``HOME`` unset, its user
    not in the password database) or whose home is a relative path (for
    the same reason) has no cache, and compiles."""
    if not enabled():
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:
            return None
    return Path(base) / "revmlir" if os.path.isabs(base) else None


def _code_files(package: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """The files of ``package`` that are its code (``CODE_SUFFIXES``), each
    with its path relative to the package, in the order of those paths;
    hidden names (an editor's swap and temporary files) and bytecode
    aside."""
    for item in sorted(package.iterdir(), key=lambda found: found.name):
        if item.name.startswith(".") or item.name == "__pycache__":
            continue
        if item.is_dir():
            yield from _code_files(item, f"{prefix}{item.name}/")
        elif item.name.endswith(CODE_SUFFIXES) and item.is_file():
            yield f"{prefix}{item.name}", item


def files_digest(package: Traversable) -> str | None:
    """A SHA-256 of the code files of a package (``_code_files``: each
    one's path relative to the package and its bytes), or None where it
    has none: revmlir's 183 modules, 2 MB, in about 7 ms of CPU.  Relative
    paths, so that the same code has the same digest wherever it lives; a
    ``Traversable``, so that a package imported from a zip archive is read
    from the archive.  A file that cannot be read (one this user may not
    read, one deleted since the package was listed) raises its
    ``OSError``."""
    digest = hashlib.sha256()
    found = False
    for relative, item in _code_files(package):
        data = item.read_bytes()
        digest.update(f"{relative}\0{len(data)}\0".encode() + data)
        found = True
    return digest.hexdigest() if found else None


def package_digest(package: Traversable, keyed: str) -> str | None:
    """``files_digest`` of ``package``; None, with a ``CacheWarning``,
    where it cannot be taken, so that the entries keyed by it (``keyed``
    names their kinds, for the warning: other kinds are still cached) are
    neither loaded nor stored: a key that does not stand for the code
    would share entries between versions (as a package without code files
    would), and a file that cannot be read must not fail a compile."""
    try:
        digest = files_digest(package)
    except OSError as error:
        why = f"{error.filename or package} cannot be read ({error.strerror or error})"
    else:
        if digest is not None:
            return digest
        why = f"no {' or '.join(CODE_SUFFIXES)} file was found in it"
    warnings.warn(
        f"not caching {keyed}: the digest of {package} cannot be taken: {why}; compiling them each time",
        CacheWarning,
        stacklevel=2,
    )
    return None


def own_files() -> Traversable:
    """revmlir's own files, whose digest is part of every key that needs
    it: a directory, or a folder of the zip archive it is imported from
    (found only when the digest is taken: under a zip import, finding
    them opens the archive)."""
    return importlib.resources.files("revmlir")


@functools.cache
def source_digest() -> str | None:
    """revmlir's own code, as ``package_digest``, taken once per process
    (and reported once where it cannot be): part of the key of every
    entry that revmlir's code makes or reads after the key is taken (None:
    no such entry is used).  Its version is not enough: a source checkout
    or an editable install keeps one version through every edit."""
    return package_digest(own_files(), "object files, GPU programs or ptxas's resource reports")


def key(text: str, kind: str, opt_level: int, triple: str, cpu: str, features: str) -> str | None:
    """The object entry name for compiling ``text`` for a target: LLVM runs
    the pipeline and target options revmlir's code chooses
    (``revmlir.runtime.jit``), so that code is part of the key; None where
    its digest cannot be taken.  Taken only for a cache that is open
    (``opened``): a process with the cache off never reads the package."""
    source = source_digest()
    return OBJECT.key(source, triple, cpu, features, kind, str(opt_level), text) if source is not None else None


def max_bytes() -> int:
    """The size bound from ``REVMLIR_CACHE_MAX_MB``; a value that is not a
    positive number is reported and the default used."""
    text = os.environ.get(MAX_MB_ENV)
    megabytes = DEFAULT_MAX_MB
    if text is not None:
        try:
            megabytes = float(text)
            if not megabytes > 0 or megabytes == float("inf"):
                raise ValueError
        except ValueError:
            warnings.warn(
                f"{MAX_MB_ENV}={text!r} is not a positive number of megabytes; using {DEFAULT_MAX_MB:g}",
                CacheWarning,
                stacklevel=2,
            )
            megabytes = DEFAULT_MAX_MB
    return int(megabytes * 1024 * 1024)


_refused: set[tuple[Path, str]] = set()
"""What was reported: each unusable directory once per process, not at
every compilation."""


def _report(where: Path, why: str, message: str) -> None:
    """Warn with ``message``, once per process for ``why`` at ``where``."""
    if (where, why) in _refused:
        return
    _refused.add((where, why))
    warnings.warn(message, CacheWarning, stacklevel=3)


def _refuse(where: Path, why: str) -> None:
    _report(where, why, f"not using the compiled-code cache {where}: {why}; compiling without it")


def _directory(where: Path, create: bool) -> int | None:
    """A descriptor of the cache directory, or None when it is missing (and
    not to be created) or not safe to use (reported once per reason)."""
    if create:
        # made where it is missing; whether it then is a directory the
        # open below decides (a read-only file system may refuse to make
        # one that exists with EROFS rather than EEXIST)
        with contextlib.suppress(OSError):
            where.parent.mkdir(parents=True, exist_ok=True)
            where.mkdir(mode=0o700)
    try:
        descriptor = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        # why, from one look whose every failure is caught: pathlib's
        # is_symlink and exists raise all but a few errors (EACCES from a
        # home this user cannot enter, ENAMETOOLONG), each then the error
        # of every compile
        try:
            mode = os.lstat(where).st_mode
        except OSError:
            return None  # a cache that cannot be made or looked at is no cache
        if stat.S_ISLNK(mode):
            _refuse(where, "it is a symbolic link")
        elif not stat.S_ISDIR(mode):
            _refuse(where, "it is not a directory")
        return None  # nor is a directory this user cannot open
    info = os.fstat(descriptor)
    if info.st_uid != os.geteuid():
        _refuse(where, f"it is owned by user {info.st_uid}, not by this user ({os.geteuid()})")
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        _refuse(where, f"others can write to it (mode {stat.S_IMODE(info.st_mode):04o})")
    else:
        return descriptor
    os.close(descriptor)
    return None


def _read(name: str, folder: int, private: bool = False) -> bytes | None:
    """The whole of a regular file of this user in the directory (that only
    this user can read, if ``private``); an I/O error reading it is raised,
    so that it is not taken for a file that is not there or not this
    user's."""
    try:
        descriptor = os.open(name, _READ, dir_fd=folder)
    except OSError:
        return None
    try:
        # looked at before it is a file object, which a directory cannot be
        # (an IsADirectoryError, and the descriptor left open)
        info = os.fstat(descriptor)
        shared = info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        if info.st_uid != os.geteuid() or not stat.S_ISREG(info.st_mode) or (private and shared):
            return None
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return file.read()
    finally:
        os.close(descriptor)


def _write(name: str, data: bytes, folder: int, replace: bool = True) -> None:
    """Put ``data`` under ``name`` atomically: a temporary file renamed into
    place (or, unless ``replace``, linked there if nothing is), removed
    whatever happens."""
    temporary = f".{name}.{secrets.token_hex(8)}{_TEMPORARY}"
    descriptor = os.open(temporary, _CREATE, 0o600, dir_fd=folder)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        if replace:
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(temporary, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)


def _exists(name: str, folder: int) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _seal(secret: bytes, file: str, data: bytes) -> bytes:
    return hmac.new(secret, file.encode() + b"\0" + data, hashlib.sha256).digest()


def _unseal(secret: bytes, kind: Kind, file: str, entry: bytes) -> bytes | None:
    """The contents of an entry, or None unless its header, length and MAC
    are exactly what storing it as ``file``, of ``kind``, produced."""
    magic = kind.magic
    header = len(magic) + _DIGEST + 8
    if len(entry) < header or not entry.startswith(magic):
        return None
    mac = entry[len(magic) : len(magic) + _DIGEST]
    length = int.from_bytes(entry[header - 8 : header], "little")
    data = entry[header:]
    if length != len(data) or not hmac.compare_digest(mac, _seal(secret, file, data)):
        return None
    return data


class Directory:
    """The cache directory, open: found usable once for a lookup and the
    store after it, so that a caller (``revmlir.gpu.cache``) does the work
    of a key only for a cache it can use."""

    def __init__(self, folder: int, where: Path):
        self.folder = folder
        self.where = where
        """The directory's path, for what is reported about it."""

    def _secret(self, create: bool) -> bytes | None:
        """This user's HMAC key, made on first use.  One that is not a
        private file of the right size is replaced when storing (the entries
        sealed with it then fail their check and are compiled again), and
        one that cannot be deleted (a directory) is reported, once: nothing
        can be stored or loaded then.  One that was missing is only made,
        never replaced: two processes that find none (the first stores in a
        new cache) both keep the first one made, rather than the second
        deleting it and every entry the first sealed with it."""
        present = create and _exists(SECRET, self.folder)  # before reading: what was missing is not replaced
        data = _read(SECRET, self.folder, private=True)
        if data is not None and len(data) == _SECRET_BYTES:
            return data
        if not create:
            return None
        if present:
            try:
                os.unlink(SECRET, dir_fd=self.folder)
            except FileNotFoundError:
                pass  # deleted by another process, which makes one: the first made is kept below
            except OSError as error:
                _refuse(
                    self.where,
                    f"its {SECRET} is not a private file of the right size and cannot be deleted ({error.strerror})",
                )
                return None
        # linked, not renamed: a secret another process made meanwhile stays
        _write(SECRET, secrets.token_bytes(_SECRET_BYTES), self.folder, replace=False)
        return self._secret(create=False)

    def load(self, name: str, kind: Kind = OBJECT) -> bytes | None:
        """The entry of ``kind`` called ``name``, if there is one that
        passes the integrity check; an entry that fails it is deleted."""
        file = name + kind.suffix
        try:
            entry = _read(file, self.folder)
            secret = self._secret(create=False) if entry is not None else None
        except OSError:
            return None  # an I/O error: a miss, and nothing deleted
        if entry is None:
            return None
        data = _unseal(secret, kind, file, entry) if secret is not None else None
        if data is None:
            self.discard(name, kind)
        else:
            with contextlib.suppress(OSError):
                os.utime(file, dir_fd=self.folder)  # recently used
        return data

    def store(self, name: str, data: bytes, kind: Kind = OBJECT) -> None:
        """Keep an entry of ``kind``, then bound the cache's size; a cache
        that cannot be written is no cache, not an error (full disk)."""
        file = name + kind.suffix
        try:
            secret = self._secret(create=True)
            if secret is None:
                return
            header = kind.magic + _seal(secret, file, data) + len(data).to_bytes(8, "little")
            try:
                _write(file, header + data, self.folder)
            except IsADirectoryError:
                if not self._remove_directory(file):
                    return
                _write(file, header + data, self.folder)
            _evict(self.folder, max_bytes(), keep=file)
        except OSError:
            return

    def _remove_directory(self, file: str) -> bool:
        """Make way for the entry ``file`` where a directory has its name
        (no file can be renamed over one): removed if empty, as any entry
        that is not one is replaced; else reported once, since that
        entry can never be kept."""
        try:
            os.rmdir(file, dir_fd=self.folder)
        except (FileNotFoundError, NotADirectoryError):
            return True  # removed, or replaced by a file, by another process meanwhile: the entry replaces that
        except OSError as error:
            why = f"{file} is a directory that cannot be deleted ({error.strerror})"
            _report(
                self.where,
                why,
                f"the compiled-code cache {self.where} cannot keep an entry: {why}; compiling it each time",
            )
            return False
        return True

    def discard(self, name: str, kind: Kind = OBJECT) -> None:
        """Delete the entry of ``kind`` called ``name``: one that fails its
        check, or whose contents its user cannot read."""
        with contextlib.suppress(OSError):
            os.unlink(name + kind.suffix, dir_fd=self.folder)


def absent() -> bool:
    """Whether the cache is on and its directory is yet to be made: a
    lookup finds nothing there, and the first store makes it, so a compile
    still takes its key (and makes the directory only when it has an entry
    to store)."""
    where = directory()
    if where is None:
        return False
    try:
        os.lstat(where)
    except FileNotFoundError:
        return True
    except OSError:
        return False  # a cache that cannot be looked at is no cache
    return False


@contextlib.contextmanager
def opened(create: bool = True) -> Iterator[Directory | None]:
    """The cache directory while in use (made first, if ``create``); None
    when the cache is off or cannot be used (reported once per reason)."""
    where = directory()
    descriptor = _directory(where, create) if where is not None else None
    if where is None or descriptor is None:
        yield None
        return
    try:
        yield Directory(descriptor, where)
    finally:
        os.close(descriptor)


def load(name: str, kind: Kind = OBJECT) -> bytes | None:
    """The cached entry of ``kind`` called ``name`` (``Directory.load``),
    or None when there is none or no usable cache."""
    with opened(create=False) as where:
        return where.load(name, kind) if where is not None else None


def store(name: str, data: bytes, kind: Kind = OBJECT) -> None:
    """Keep an entry of ``kind`` (``Directory.store``) when the cache can
    be used; a cache that cannot be made is no cache (read-only home)."""
    with opened(create=True) as where:
        if where is not None:
            where.store(name, data, kind)


def _evict(folder: int, limit: int, keep: str) -> None:
    """Delete the least recently used entries until the rest fit in
    ``limit`` bytes (the newest entry stays even if it alone is larger),
    whatever their kind, and temporary files of writers that died."""
    now = time.time()
    found: list[tuple[float, int, str]] = []
    for name in os.listdir(folder):
        with contextlib.suppress(OSError):
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if name.endswith(_TEMPORARY) and now - info.st_mtime > _STALE_TEMPORARY_S:
                os.unlink(name, dir_fd=folder)
            elif name.endswith(SUFFIXES):
                found.append((info.st_mtime, info.st_size, name))
    total = sum(size for _, size, _ in found)
    for _, size, name in sorted(found):
        if total <= limit:
            return
        if name == keep:
            continue
        try:
            os.unlink(name, dir_fd=folder)
        except FileNotFoundError:
            pass  # evicted by another process meanwhile: gone all the same
        except OSError:
            continue  # still there (a read-only file system): still counted
        total -= size


def entries() -> list[Path]:
    """Every entry, of every kind: none where there is no directory, and
    the ``OSError`` of one that cannot be read."""
    where = directory()
    if where is None:
        return []
    try:
        return sorted(p for p in where.iterdir() if p.name.endswith(SUFFIXES))
    except (FileNotFoundError, NotADirectoryError):
        return []


def clear() -> int:
    """Delete every entry; returns how many there were."""
    found = entries()
    for entry in found:
        entry.unlink(missing_ok=True)
    return len(found)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m revmlir.runtime.cache", description="revmlir's compiled-code cache"
    )
    parser.add_argument("--clear", action="store_true", help="delete every entry")
    args = parser.parse_args(argv)
    where = directory()
    if where is None:
        off = f"the cache is off ({ENABLE_ENV}={os.environ.get(ENABLE_ENV)})"
        print(
            off
            if not enabled()
            else "there is no cache: XDG_CACHE_HOME is not an absolute path and there is no home, or it is not one"
        )
        return 0
    try:
        if args.clear:
            print(f"removed {clear()} entries from {where}")
            return 0
        found = entries()
        size = 0
        for entry in found:
            with contextlib.suppress(FileNotFoundError):  # evicted by another process meanwhile
                size += entry.stat().st_size
    except OSError as error:  # one this user cannot read (in another's home), a name too long
        print(f"error: cannot read the cache {where}: {error.strerror}", file=sys.stderr)
        return 1
    print(f"{where}: {len(found)} entries, {size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
