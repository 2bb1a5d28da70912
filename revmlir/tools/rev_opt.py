"""``rev-opt``: the revmlir pass driver, built on xDSL's ``xdsl-opt`` main.

Differences from ``xdsl-opt``: it knows the revmlir dialects and passes,
records ``file:line:col`` locations while parsing, turns every failure into a
one-line diagnostic on stderr with a non-zero exit code, and takes mlir-opt's
spellings where users' fingers expect them: ``--pass-pipeline`` with
``builtin.module(...)``, a flag per pass (``--rev-invert``,
``--ad-adjoint=lanes=2``) applied in command-line order, ``-`` for stdin,
``--mlir-print-*`` and a ``--verify-diagnostics`` that checks the input's
``expected-*`` annotations (``revmlir.tools.verify_diagnostics``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import BytesIO, StringIO
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassOptionInfo, PassPipeline, get_pass_option_infos
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, ParseError
from xdsl.utils.lexer import Input, Span
from xdsl.xdsl_opt_main import xDSLOptMain

from revmlir.diagnostics import format_error
from revmlir.dialects import get_all_dialects
from revmlir.errors import OWN_DIAGNOSTICS, AfterPass
from revmlir.kept_answers import ir_unchanged
from revmlir.parsing import LocatingParser, verify_module
from revmlir.passes import get_all_passes
from revmlir.remarks import Remark, collect_remarks
from revmlir.tools.cli import (
    STDIN,
    TRACEBACK_ENV,
    HelpAction,
    UsageError,
    VersionAction,
    stdin_bytes,
    unexpected,
    write_stdout,
)
from revmlir.tools.verify_diagnostics import (
    AnnotationError,
    check,
    read_diagnostic,
    read_expectations,
)


@dataclass(frozen=True)
class ChunkFailure:
    """Why a chunk failed: its one-line diagnostic, and whether parsing failed
    (``--parsing-diagnostics`` prints those and goes on)."""

    diagnostic: str
    parsing: bool


@dataclass(frozen=True)
class ChunkResult:
    """What one chunk produced besides its output: the remarks its passes
    made (rendered, in order) and its failure, if it failed."""

    remarks: list[str]
    failure: ChunkFailure | None


class PipelineError(ValueError):
    """A ``--pass-pipeline`` that cannot be read."""


_DOTTED_NAME = re.compile(r"(?<![\w$.])[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)+(?![\w$.])")
"""A function name with dots (``f.inv``, ``f.adj.loss0``); numbers such as
``0.5`` start with a digit and stay as they are."""


_PIPELINE_SYNTAX_ERROR = re.compile(r"^pass-pipeline:(\d+):(\d+)$\n.*\n(.*)\n\s*(.*)\s*$", re.MULTILINE)
"""xDSL's ``ArgSpecParseError``: where, the text, the carets and why."""


@dataclass(frozen=True)
class Traced:
    """Pipeline text, each character with the offset in the user's text of
    the character it comes from.  ``rev-opt`` rewrites what the user typed
    before xDSL reads it (``builtin.module(…)`` left out, spaces after
    commas dropped, a flag ``--p=o`` made ``p{o}``, pieces joined, names
    with dots quoted); a character it adds stands where the user's
    character it replaces, or the next one, stood (a comma joining two
    arguments just after the first).  So a syntax error xDSL
    finds in the rewritten text is shown in the text typed."""

    text: str
    origins: tuple[int, ...]

    @staticmethod
    def typed(text: str, start: int = 0) -> Traced:
        """``text`` as typed, at ``start`` in the user's text."""
        return Traced(text, tuple(range(start, start + len(text))))

    @staticmethod
    def added(text: str, at: int) -> Traced:
        """``text`` that the user did not type, standing at ``at``."""
        return Traced(text, (at,) * len(text))

    def __add__(self, other: Traced) -> Traced:
        return Traced(self.text + other.text, self.origins + other.origins)

    def __getitem__(self, part: slice) -> Traced:
        return Traced(self.text[part], self.origins[part])

    def strip(self) -> Traced:
        start = len(self.text) - len(self.text.lstrip())
        return self[start : len(self.text.rstrip())]

    def origin(self, offset: int) -> int:
        """Where the character at ``offset`` comes from; past the last
        character, just after the last one's origin: the end of the
        argument it was typed in, not of the last argument (``-p 'cse{'
        -p ''`` misses its ``}`` at 1:5)."""
        if offset < len(self.origins):
            return self.origins[offset]
        return self.origins[-1] + 1 if self.origins else 0


@dataclass(frozen=True)
class PipelineArgument:
    """One pipeline argument as typed (a ``-p`` text, or a pass flag
    ``--name=options``) and its pass list, traced to that text."""

    typed: str
    passes: Traced


_EMPTY = Traced("", ())
_LINE_BREAKS_AS_SPACES = str.maketrans(dict.fromkeys("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029", " "))
"""Every character ``str.splitlines`` breaks a line at."""


@dataclass(frozen=True)
class QuotedPipeline:
    """A pipeline as xDSL's parser reads it: the user's pipeline arguments
    joined, with every bare name that has dots quoted.  xDSL's pipeline
    lexer reads a bare word without dots only, and the derived functions a
    user names (``functions=f.adj``, ``kernels=f,f.inv``) have them.  The
    user's text is the arguments as typed, one per line, so that an error
    xDSL finds is shown in the argument the user wrote, at their column."""

    user: str
    traced: Traced

    @property
    def text(self) -> str:
        return self.traced.text

    @staticmethod
    def of(arguments: Sequence[PipelineArgument]) -> QuotedPipeline:
        joined = _EMPTY
        start = 0
        for argument in arguments:
            passes = argument.passes
            if passes.text:
                # the joining comma stands just after what came before: an error
                # there is the end of the previous argument (`-p 'cse{' -p cse`)
                comma = Traced.added(",", joined.origin(len(joined.text))) if joined.text else _EMPTY
                joined += comma + Traced(passes.text, tuple(origin + start for origin in passes.origins))
            start += len(argument.typed) + 1
        # a line break typed inside an argument is shown as a space, which
        # keeps every column and line L the Lth argument
        user = "\n".join(argument.typed.translate(_LINE_BREAKS_AS_SPACES) for argument in arguments)
        quoted = _EMPTY
        at = 0  # where the piece starts in ``joined``
        for index, piece in enumerate(joined.text.split('"')):  # the even pieces lie outside quotes
            if index:
                quoted += joined[at - 1 : at]
            start = 0
            for name in _DOTTED_NAME.finditer(piece) if index % 2 == 0 else ():
                quoted += joined[at + start : at + name.start()]
                written = joined[at + name.start() : at + name.end()]
                quoted += Traced.added('"', written.origins[0]) + written
                quoted += Traced.added('"', written.origins[-1] + 1)
                start = name.end()
            quoted += joined[at + start : at + len(piece)]
            at += len(piece) + 1
        return QuotedPipeline(user, quoted)

    def syntax_error(self, error: BaseException) -> str:
        """xDSL's syntax error in ``text`` (an ``ArgSpecParseError``), at
        the place and in the text the user wrote.  The error keeps nothing
        but its message, so the place is read from that."""
        found = _PIPELINE_SYNTAX_ERROR.search(str(error))
        if found is None:
            return str(error)
        line, column, carets, reason = found.groups()
        start = sum(len(text) + 1 for text in self.text.split("\n")[: int(line) - 1]) + int(column) - 1
        end = start + max(carets.count("^"), 1)
        user_start = self.traced.origin(start)
        user_end = self.traced.origin(end - 1) + 1
        span = Span(user_start, max(user_end, user_start + 1), Input(self.user, "pass-pipeline"))
        return "Error parsing pass pipeline specification:\n" + span.print_with_context(reason)


def module_pipeline(typed: Traced) -> Traced:
    """The comma-separated pass list of ``-p``/``--pass-pipeline`` text.

    mlir-opt anchors its pipeline on the module, ``builtin.module(a, b{x=1})``;
    xDSL's parser (``xdsl.utils.arg_spec.parse_pipeline``) reads the list
    inside, without spaces after the commas. Nested pipelines
    (``func.func(...)``) have no xDSL counterpart: every pass runs on the
    module, so they are refused rather than run on more than they name.
    """
    traced = typed.strip()
    text = traced.text
    anchor = "builtin.module("
    if text.startswith(anchor):
        if not text.endswith(")"):
            raise PipelineError(f"'{anchor}' without its closing ')' in '{text}'")
        traced = traced[len(anchor) : -1]
        text = traced.text
    passes = _EMPTY
    start = 0
    depth = 0
    quoted = False
    for index, char in enumerate(text):
        if char == '"' and depth:
            quoted = not quoted
        elif not quoted and char in "{}":
            depth += 1 if char == "{" else -1
        elif not quoted and not depth and char in "()":
            name = text[start:index].strip() or text
            raise PipelineError(
                f"nested pass pipelines are not supported ('{name}(...)' in "
                f"'{text}'): every pass runs on the whole module"
            )
        elif not quoted and not depth and char == ",":
            passes += traced[start:index].strip() + traced[index : index + 1]
            start = index + 1
    last = traced[start:].strip()
    return passes + last if passes.text.strip(",") or last.text else _EMPTY


def _option_error(available: dict[str, Callable[[], type[ModulePass]]], pipeline: str, error: ValueError) -> str:
    """xDSL's refusal of a pass's options (``Incompatible types: given
    ('yes',), expected <class 'bool'>``) names neither the pass nor the
    option: the first pass whose options are refused, as written, then the
    reason, its types as Python writes them."""
    specs = list(parse_pipeline(pipeline))
    if any(spec.name not in available for spec in specs):
        return str(error)  # xDSL's, which lists the unknown passes: they are the first mistake
    for spec in specs:
        pass_type = available[spec.name]()
        try:
            pass_type.from_pass_spec(spec)
        except ValueError as refusal:
            reason = re.sub(r"<class '(\w+)'>", r"\1", str(refusal))
            if reason.endswith("expected float"):
                reason += _float_hint(pass_type, spec)
            return f"{spec}: {reason}"
    return str(error)


_NUMBER = re.compile(r"([-+]?)([0-9]*)\.?([0-9]*)([eE][-+]?[0-9]+)?")


def _float_hint(pass_type: type[ModulePass], spec: ArgSpec) -> str:
    """How to write the number given to a float option so that xDSL reads
    a float: its pipeline syntax reads ``1`` as an int and ``1e-6`` as a
    name, and a float only with a decimal point (``1.0``, ``1.0e-6``)."""
    for info in get_pass_option_infos(pass_type):
        values = spec.normalize_parameter_names().parameters.get(info.name, ())
        if _option_type(info) != "float" or len(values) != 1 or isinstance(values[0], bool | float):
            continue
        number = _NUMBER.fullmatch(str(values[0]))
        if number is not None and (number[2] or number[3]):
            sign, whole, fraction, exponent = number.groups()
            written = f"{sign}{whole or 0}.{fraction or 0}{exponent or ''}"
            return f" (write {info.name}={written}: a float in a pipeline has a decimal point)"
    return ""


def _flag_pipeline(name: str, typed: str) -> Traced:
    """A pass flag as typed, ``--name=options`` (mlir-opt's
    ``--name="a=1 b=2"``), as ``name{a=1 b=2}``."""
    equals = len(name) + 2
    options = Traced.typed(typed[equals + 1 :], equals + 1).strip()
    if options.text.startswith("{") and options.text.endswith("}"):
        options = options[1:-1]
    pass_name = Traced.typed(name, 2)
    if not options.text:
        return pass_name
    return pass_name + Traced.added("{", equals) + options + Traced.added("}", len(typed))


class _Pipeline(argparse.Action):
    """Collects ``-p`` texts and pass flags in command-line order, each as
    typed and as the pass list it gives (``PipelineArgument``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        arguments = list(getattr(namespace, self.dest) or [])
        if self.const is None:
            arguments.append(PipelineArgument(values, module_pipeline(Traced.typed(values))))
        else:
            typed = f"--{self.const}={values}"
            arguments.append(PipelineArgument(typed, _flag_pipeline(self.const, typed)))
        setattr(namespace, self.dest, arguments)


def _pass_summary(pass_type: type[ModulePass]) -> str:
    """The first paragraph of the pass's docstring on one line, its
    reStructuredText literals as Markdown's: a summary cut at the first line
    break stopped mid-sentence."""
    paragraph = (pass_type.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(paragraph.split()).replace("``", "`")


def _option_type(info: PassOptionInfo) -> str:
    """The option's type as written in the pass (a module with postponed
    annotations gives xDSL the annotation's text, which it quotes)."""
    return info.expected_type.strip("'\"")


def _pass_help() -> str:
    lines = ["revmlir passes (use with -p, options as name{opt=value ...}):"]
    for name, factory in get_all_passes().items():
        pass_type = factory()
        lines.append(f"  {name:<22} {_pass_summary(pass_type)}")
        for info in get_pass_option_infos(pass_type):
            default = f" (default: {info.default_value})" if info.default_value else ""
            lines.append(f"      {info.name}: {_option_type(info)}{default}")
    lines.append("Upstream xDSL passes such as canonicalize, cse and dce work too.")
    return "\n".join(lines)


class _Help(HelpAction):
    """``-h``/``--help`` with the pass list and each pass flag's summary.

    Both come from the pass classes, and loading every pass module (the
    interpreter's among them) takes seconds; a run that does not ask for
    help loads only the passes it runs, so they are filled in here, when
    help is printed.
    """

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        pass_flags: dict[str, argparse.Action],
        **kwargs: Any,
    ):
        super().__init__(option_strings, dest, **kwargs)
        self.pass_flags = pass_flags

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        for name, flag in self.pass_flags.items():
            flag.help = _pass_summary(get_all_passes()[name]())
        parser.epilog = _pass_help()
        super().__call__(parser, namespace, values, option_string)


_XDSL_OPT_HELP = {
    "disable_verify": "do not verify the input after parsing (the reversibility rules are part of that verification)",
}
"""Help for the flags xdsl-opt registers without one."""


class RevOptMain(xDSLOptMain):
    pipeline: PassPipeline
    """xDSLOptMain's, which ``setup_pipeline`` makes."""
    running: ModulePass | None = None
    """The pass of the pipeline running now (set between passes)."""

    def __init__(self, args: Sequence[str] | None = None):
        # ``register_all_arguments`` rewrites bare pass flags in this list
        # before argparse reads it.
        self.argv = list(sys.argv[1:] if args is None else args)
        super().__init__(description="revmlir modular optimizer driver", args=self.argv)

    def register_all_dialects(self) -> None:
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.available_passes[name] = factory  # revmlir's own take the place of xDSL's

    def register_pass(self, pass_name: str, pass_factory: Callable[[], type[ModulePass]]) -> None:
        """xDSL's, refusing a name registered already: a subclass's pass
        named like one of revmlir's or xDSL's would silently run in its
        place wherever a pipeline names it (docs/writing-a-pass.md)."""
        if pass_name in self.available_passes:
            raise ValueError(f"a pass named '{pass_name}' is registered already: give the new pass another name")
        super().register_pass(pass_name, pass_factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.prog = "rev-opt"
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.usage = "rev-opt [options] [--PASS[=OPTIONS] ...] [input_file | -]"
        # mlir-opt takes no abbreviations, and with one flag per pass a prefix
        # would silently pick a pass.
        arg_parser.allow_abbrev = False
        for action in arg_parser._actions:  # xdsl-opt's flags that come without a help text
            action.help = action.help or _XDSL_OPT_HELP.get(action.dest)
        revmlir_passes = get_all_passes()
        revmlir_flags: dict[str, argparse.Action] = {}  # filled below, read by -h
        # Options that replace xdsl-opt's of the same name.
        mlir_opt = arg_parser.add_argument_group("mlir-opt options", conflict_handler="resolve")
        mlir_opt.add_argument(
            "-p",
            "--passes",
            "--pass-pipeline",
            dest="pipeline",
            action=_Pipeline,
            metavar="PIPELINE",
            help="passes to run, comma-separated with options in braces "
            "(rev-invert{in_place=true},canonicalize), or mlir-opt's "
            "builtin.module(...) form; may be repeated and mixed with pass flags, "
            "which run in command-line order",
        )
        mlir_opt.add_argument(
            "--mlir-print-op-generic",
            dest="print_op_generic",
            action="store_true",
            help="print operations in the generic form (= --print-op-generic)",
        )
        mlir_opt.add_argument(
            "--mlir-print-debuginfo",
            dest="print_debuginfo",
            action="store_true",
            help="print the location of every operation (= --print-debuginfo)",
        )
        mlir_opt.add_argument(
            "--mlir-print-local-scope",
            action="store_true",
            help="accepted for mlir-opt compatibility: xDSL prints locations and "
            "attributes in place, never as aliases, so the output is the same",
        )
        mlir_opt.add_argument(
            "--mlir-print-ir-before-all",
            action="store_true",
            help="print the IR to stderr before each pass",
        )
        mlir_opt.add_argument(
            "--mlir-print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after each pass",
        )
        mlir_opt.add_argument(
            "-h",
            "--help",
            action=_Help,
            pass_flags=revmlir_flags,
            default=argparse.SUPPRESS,
            help="show this help message, with every revmlir pass, and exit",
        )
        # xdsl-opt's prints with print(), which drops a failed write
        mlir_opt.add_argument("-v", "--version", action=VersionAction)
        mlir_opt.add_argument(
            "--verify-diagnostics",
            action="store_true",
            help="check the diagnostics against the input's expected-error "
            "{{...}} annotations (also -warning, -note, -remark, @+N, @-N, "
            "@above, @below, @unknown, -re); exit 1 with a message for each "
            "mismatch",
        )
        flags = arg_parser.add_argument_group(
            "pass flags",
            'one per registered pass, run in command-line order: --NAME or --NAME="opt=value ..."',
        )
        for name in self.available_passes:
            flag = f"--{name}"
            try:
                action = flags.add_argument(flag, dest="pipeline", action=_Pipeline, const=name, metavar="OPTIONS")
            except argparse.ArgumentError:  # a pass named like a driver option
                continue
            if name in revmlir_passes:
                revmlir_flags[name] = action
            # argparse gives an option either no value or a required one;
            # mlir-opt's --pass[=options] is both, so a bare flag gets "".
            self.argv[:] = [f"{flag}=" if arg == flag else arg for arg in self.argv]

    def setup_pipeline(self) -> None:
        pipeline = QuotedPipeline.of(self.args.pipeline or [])
        self.args.passes = pipeline.text
        try:
            super().setup_pipeline()
        except ArgSpecParseError as error:
            raise PipelineError(pipeline.syntax_error(error)) from None
        except ValueError as error:
            raise PipelineError(_option_error(self.available_passes, self.args.passes, error)) from error
        verify_and_time = self.pipeline.callback

        def between_passes(previous: ModulePass | None, module: ModuleOp, next: ModulePass | None) -> None:
            if previous is not None and self.args.mlir_print_ir_after_all:
                self.dump_ir("After", previous, module)
            if next is not None and self.args.mlir_print_ir_before_all:
                self.dump_ir("Before", next, module)
            # Before the first pass xDSL's callback verifies the module
            # ``process_chunk`` has just verified (``verify_module``, a
            # superset): a second verification of every input, which only
            # ``--time-passes`` needs, to start the first pass's clock.  The
            # module does not change while it is verified, so the analyses
            # each function's checks ask of the module are kept for the rest
            # (``argument_writes`` was computed again for every function
            # holding a call that passes one array twice).
            if verify_and_time is not None and (previous is not None or self.args.time_passes):
                with ir_unchanged():
                    try:
                        verify_and_time(previous, module, next)
                    except Exception as error:
                        if previous is None:
                            raise
                        raise AfterPass(previous.name, error, verifying=True) from error
            self.running = next

        self.pipeline = dataclasses.replace(self.pipeline, callback=between_passes)

    def apply_passes(self, prog: ModuleOp) -> None:
        """xDSL's, where an exception a pass raises that is none of the
        diagnostics a pass reports (``OWN_DIAGNOSTICS``) names the pass
        (``AfterPass``)."""
        self.running = None
        try:
            super().apply_passes(prog)
        except OWN_DIAGNOSTICS:
            raise
        except Exception as error:
            if self.running is None:
                raise
            raise AfterPass(self.running.name, error, verifying=False) from error

    def dump_ir(self, when: str, module_pass: ModulePass, module: ModuleOp) -> None:
        """mlir-opt's ``--mlir-print-ir-*-all`` dump, on stderr."""
        header = f"{type(module_pass).__name__} ({module_pass.name})"
        text = StringIO()
        Printer(
            stream=text,
            print_generic_format=self.args.print_op_generic,
            print_properties_as_attributes=self.args.print_no_properties,
            print_debuginfo=self.args.print_debuginfo,
        ).print_op(module)
        print(f"// -----// IR Dump {when} {header} //----- //", file=sys.stderr)
        print(text.getvalue() + "\n", file=sys.stderr)

    def get_input_name(self) -> str:
        name = self.args.input_file
        return "stdin" if name in (None, STDIN) else name

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The input as MLIR text whatever its name ends with (``-f`` picks
        another frontend)."""
        name = self.args.input_file
        if name in (None, STDIN):
            try:
                return stdin_bytes(), "mlir"
            except OSError as error:
                raise OSError(error.errno, f"cannot read stdin: {error.strerror}") from None
        return open(name, "rb"), "mlir"

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        data = chunk.read()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as error:
            span = Span(error.start, error.end, Input(data, self.get_input_name()))
            raise ParseError(span, f"the input is not UTF-8 text (byte 0x{data[error.start]:02x})") from error
        parser = LocatingParser(self.ctx, data, self.get_input_name(), line_offset=start_offset)
        # Verified by ``run``, which then knows the module and can point the
        # diagnostic at the failing op.
        return parser.parse_module(not self.args.no_implicit_module)

    def process_chunk(self, chunk: IO[bytes], offset: int, output: IO[str]) -> ChunkResult:
        """Parse, verify, transform and print one chunk; the remarks its
        passes made and its failure, if it fails."""
        module: ModuleOp | None = None
        remarks: list[Remark] = []

        def result(failure: ChunkFailure | None) -> ChunkResult:
            name = self.get_input_name()
            return ChunkResult([r.render(name) for r in remarks], failure)

        try:
            module = self.parse_chunk(chunk, "mlir", offset)
            if module is not None:
                if not self.args.disable_verify:
                    verify_module(module)
                with collect_remarks() as remarks:
                    self.apply_passes(module)
                output.write(self.output_resulting_program(module))
        except Exception as error:
            if os.environ.get(TRACEBACK_ENV):
                raise
            if isinstance(error, ParseError):  # report lines of the whole file
                error.span = dataclasses.replace(error.span, line_offset=offset)
            return result(
                ChunkFailure(format_error(error, module, self.get_input_name()), isinstance(error, ParseError))
            )
        return result(None)

    def run(self) -> int:
        chunks, _ = self.prepare_input()
        try:
            output = self.prepare_output()
        except OSError:
            for chunk, _ in chunks:
                chunk.close()
            raise
        status = 0
        # One separator between each two chunks, so that the pieces of the
        # output are the input's chunks in order (a failing chunk's piece is
        # empty), as in mlir-opt. A chunk's piece and the separator before
        # it are written once the chunk has run, so the chunk that ends the
        # run (unlike mlir-opt, which goes on after a failing chunk) leaves
        # no separator after the last piece.
        try:
            for index, (chunk, offset) in enumerate(chunks):
                text = StringIO()
                with chunk:
                    if self.args.verify_diagnostics:
                        failures = self.verify_chunk(chunk.read(), offset, text)
                        for message in failures:
                            print(message, file=sys.stderr)
                        status = 1 if failures else status
                        failure = None
                    else:
                        processed = self.process_chunk(chunk, offset, text)
                        for line in processed.remarks:
                            print(line, file=sys.stderr)
                        failure = processed.failure
                if failure is not None:
                    if not (self.args.parsing_diagnostics and failure.parsing):
                        print(failure.diagnostic, file=sys.stderr)
                        return 1
                    text.write(failure.diagnostic + "\n")
                piece = ("// -----\n" if index else "") + text.getvalue()
                if output is sys.stdout:
                    write_stdout(piece)
                else:
                    output.write(piece)
                    output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        return status

    def verify_chunk(self, data: bytes, offset: int, output: IO[str]) -> list[str]:
        """``--verify-diagnostics`` on one chunk: its failure (if any) against
        its annotations; the complaints, one line each."""
        name = self.get_input_name()
        try:
            expectations = read_expectations(data.decode("utf-8", "replace"), first_line=offset + 1)
        except AnnotationError as error:
            return [f"{name}:{error.line}:{error.column}: error: {error.message}"]
        processed = self.process_chunk(BytesIO(data), offset, output)
        produced = [read_diagnostic(line, name) for line in processed.remarks]
        if processed.failure is not None:
            produced.append(read_diagnostic(processed.failure.diagnostic, name))
        return check(expectations, produced, name)


def main(argv: Sequence[str] | None = None) -> int:
    """``rev-opt``'s exit status: 1 for a mistake of its user (the pipeline,
    a file, and whatever fails in a chunk's parsing, verifying and passes,
    told at its op: a pass refuses its input with exceptions of many
    classes); 2 for any other failure, named by its class as every tool
    names one (``diagnostics.internal_error``); 130, the shell's status for
    SIGINT, for Ctrl-C, which is no failure to show a traceback of."""
    try:
        return RevOptMain(argv).run()
    except SystemExit:
        raise
    except UsageError as error:  # standard output closed or failing
        print(f"rev-opt: error: {error}", file=sys.stderr)
        return 1
    except PipelineError as error:  # bad pipeline text, unknown pass, bad option
        # kept on its lines: a syntax error shows the text and a caret
        print(f"rev-opt: error: {str(error).strip()}", file=sys.stderr)
        return 1
    except OSError as error:  # a missing input, a directory, an unwritable -o, a closed stdin
        if (error.strerror or str(error)) and not os.environ.get(TRACEBACK_ENV):
            what = f"cannot open '{error.filename}': " if error.filename else ""
            print(f"rev-opt: error: {what}{error.strerror or error}", file=sys.stderr)
            return 1
        return unexpected("rev-opt", error)
    except (KeyboardInterrupt, Exception) as error:
        return unexpected("rev-opt", error)


if __name__ == "__main__":
    sys.exit(main())
