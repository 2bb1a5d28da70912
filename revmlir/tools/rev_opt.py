"""``rev-opt``: the revmlir pass driver, built on xDSL's ``xdsl-opt`` main.

Differences from ``xdsl-opt``: it knows the revmlir dialects and passes,
records ``file:line:col`` locations while parsing, and turns every failure into
a one-line diagnostic on stderr with a non-zero exit code (with
``--verify-diagnostics`` the diagnostic goes to stdout and the run goes on, so
FileCheck can match it).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from revmlir.diagnostics import format_error
from revmlir.dialects import get_all_dialects
from revmlir.parsing import LocatingParser
from revmlir.passes import get_all_passes

TRACEBACK_ENV = "REVMLIR_TRACEBACK"


def _pass_help() -> str:
    from xdsl.passes import get_pass_option_infos

    lines = ["revmlir passes (use with -p, options as name{opt=value ...}):"]
    for name, factory in get_all_passes().items():
        pass_type = factory()
        doc = (pass_type.__doc__ or "").strip().splitlines()[0]
        lines.append(f"  {name:<22} {doc}")
        for info in get_pass_option_infos(pass_type):
            default = f" (default: {info.default_value})" if info.default_value else ""
            lines.append(f"      {info.name}: {info.expected_type}{default}")
    lines.append("Upstream xDSL passes such as canonicalize, cse and dce work too.")
    return "\n".join(lines)


class RevOptMain(xDSLOptMain):
    version_format = "rev-opt (revmlir " + version("revmlir") + ") on xDSL {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="revmlir modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = _pass_help()

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        parser = LocatingParser(
            self.ctx, chunk.read(), self.get_input_name(), line_offset=start_offset
        )
        # Verified by ``run``, which then knows the module and can point the
        # diagnostic at the failing op.
        return parser.parse_module(not self.args.no_implicit_module)

    def run(self) -> int:
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        status = 0
        try:
            for index, (chunk, offset) in enumerate(chunks):
                if index > 0:
                    output.write("// -----\n")
                module: ModuleOp | None = None
                try:
                    module = self.parse_chunk(chunk, file_extension, offset)
                    if module is not None:
                        if not self.args.disable_verify:
                            module.verify()
                        self.apply_passes(module)
                        output.write(self.output_resulting_program(module))
                except Exception as error:
                    if os.environ.get(TRACEBACK_ENV):
                        raise
                    if isinstance(error, ParseError):  # report lines of the whole file
                        error.span = dataclasses.replace(error.span, line_offset=offset)
                    diagnostic = format_error(error, module, self.get_input_name())
                    expected = self.args.verify_diagnostics or (
                        self.args.parsing_diagnostics and isinstance(error, ParseError)
                    )
                    if not expected:
                        print(diagnostic, file=sys.stderr)
                        return 1
                    output.write(diagnostic + "\n")
                finally:
                    chunk.close()
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        return status


def main(argv: Sequence[str] | None = None) -> int:
    try:
        driver = RevOptMain(argv)
    except SystemExit:
        raise
    except BaseException as error:  # bad pipeline text, unknown pass, bad option
        if os.environ.get(TRACEBACK_ENV):
            raise
        message = " ".join(str(error).split())
        print(f"rev-opt: error: {message}", file=sys.stderr)
        return 1
    try:
        return driver.run()
    except OSError as error:
        print(f"rev-opt: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
