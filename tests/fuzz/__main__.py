"""``python -m tests.fuzz --minutes 30 --seed 7``: both fuzzers for a while,
every finding printed with its reproducer (and written to ``--out``)."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # program_generator

from program_generator import Extensions  # noqa: E402

from . import differential, mutation  # noqa: E402
from .known import is_known  # noqa: E402

EXTENSIONS = [f.name for f in fields(Extensions)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="time for both fuzzers together")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["mutation", "differential"], help="run one fuzzer")
    parser.add_argument(
        "--extensions", default="", metavar="A,B",
        help=f"generator extensions to switch on ({', '.join(EXTENSIONS)}, or all)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case before a hang")
    parser.add_argument("--out", type=Path, help="a folder for the reproducers")
    parser.add_argument(
        "--ptx-every", type=int, default=differential.PTX_EVERY, metavar="N",
        help="compile every N-th kernel to PTX for ptxas (1: every kernel)",
    )
    args = parser.parse_args(argv)
    names = EXTENSIONS if args.extensions == "all" else [n for n in args.extensions.split(",") if n]
    unknown = set(names) - set(EXTENSIONS)
    if unknown:
        parser.error(f"unknown extensions: {', '.join(sorted(unknown))}")
    fuzzers = [args.only] if args.only else ["mutation", "differential"]
    share = args.minutes * 60 / len(fuzzers)
    findings = []
    for name in fuzzers:
        end = time.monotonic() + share
        if name == "mutation":
            count, found = mutation.fuzz(args.seed, lambda n: time.monotonic() < end, timeout=args.timeout)
        else:
            extensions = Extensions(**{n: True for n in names})
            count, found = differential.fuzz(
                args.seed, lambda n: time.monotonic() < end, extensions, args.timeout, args.ptx_every
            )
        print(f"{name}: {count} cases, {len(found)} finding(s)", flush=True)
        findings += found
    for i, finding in enumerate(findings):
        known = " (known)" if is_known(finding) else ""
        print(f"\n#{i} {finding.kind}{known} in {finding.stage}: {finding.summary}")
        print(finding.reproducer)
        print(finding.detail.strip().splitlines()[-1] if finding.detail.strip() else "")
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{i}-{finding.kind}.mlir").write_text(
                f"// {finding.kind} in {finding.stage}: {finding.summary}\n{finding.reproducer}\n"
                + "".join(f"// {line}\n" for line in finding.detail.splitlines())
            )
    return 1 if any(not is_known(f) for f in findings) else 0


if __name__ == "__main__":
    sys.exit(main())
