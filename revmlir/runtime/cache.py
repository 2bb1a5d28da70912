"""The disk cache of compiled machine code.

LLVM's optimisation and code generation are a large part of the first call
of a reversible function, and they are a pure function of the LLVM IR text,
the optimisation level, the kind of output (JIT or position-independent
object), LLVM's version and the target (triple, CPU name and features).  The
cache keys object files by a SHA-256 hash of exactly those, so a program that
has not changed, on the same machine and LLVM, is loaded in well under a
millisecond instead of being compiled again; anything else is a different key
(entries are never stale, only unused).

Entries live in ``$XDG_CACHE_HOME/revmlir`` (``~/.cache/revmlir`` when
``XDG_CACHE_HOME`` is unset), one ``<key>.o`` per compiled module, written
atomically (a temporary file, then a rename) so concurrent processes never
read half an object.  ``REVMLIR_CACHE=0`` turns the cache off.  Clear it
with ``python -m revmlir.runtime.cache --clear`` (or by deleting the
directory); ``python -m revmlir.runtime.cache`` prints where it is and its
size.

Only LLVM's work is cached: the Python passes that produce the LLVM IR run on
every first call, since their output is the key.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

ENABLE_ENV = "REVMLIR_CACHE"
FORMAT = "revmlir-object-cache-1"
"""Part of every key: bump it when what an entry holds changes."""


def directory() -> Path | None:
    """Where entries live, or None when the cache is off."""
    if os.environ.get(ENABLE_ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "revmlir"


def key(text: str, kind: str, opt_level: int, triple: str, cpu: str, features: str) -> str:
    """The entry name for compiling ``text`` for a target."""
    parts = [
        FORMAT,
        llvmlite.__version__,
        ".".join(map(str, llvm.llvm_version_info)),
        triple,
        cpu,
        features,
        kind,
        str(opt_level),
        text,
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def load(name: str) -> bytes | None:
    """The cached object called ``name``, if there is one."""
    where = directory()
    if where is None:
        return None
    try:
        return (where / f"{name}.o").read_bytes()
    except OSError:
        return None


def store(name: str, data: bytes) -> None:
    """Keep an object; a cache that cannot be written is no cache, not an
    error (read-only home, full disk)."""
    where = directory()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=where, suffix=".tmp", delete=False) as file:
            file.write(data)
        os.replace(file.name, where / f"{name}.o")
    except OSError:
        return


def entries() -> list[Path]:
    where = directory()
    return sorted(where.glob("*.o")) if where is not None and where.is_dir() else []


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
        print(f"the cache is off ({ENABLE_ENV}={os.environ[ENABLE_ENV]})")
        return 0
    if args.clear:
        print(f"removed {clear()} entries from {where}")
        return 0
    found = entries()
    size = sum(entry.stat().st_size for entry in found)
    print(f"{where}: {len(found)} entries, {size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
