"""Parsing ``.mlir`` text into a context that knows every revmlir dialect.

Ops get a ``file:line:col`` location from the text they were parsed from, so
diagnostics and run-time errors can point at the user's source even when the
text carries no ``loc(...)`` annotations.

Location aliases may be used before they are defined: ``mlir-opt
--mlir-print-debuginfo`` prints ``loc(#loc3)`` on ops and the ``#loc3 =
loc(...)`` definitions after the module, which xDSL's parser (aliases are
defined before use) does not accept.  ``LocatingParser`` reads every
location alias definition first, blanking it in the text so that line
numbers stay those of the file.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Block, Operation
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from revmlir.dialects import get_all_dialects
from revmlir.ir_rules import check_ir_rules


def make_context() -> Context:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


class LinearLexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that fails in linear time.
    xDSL's ``(?:[^"\\...]+|...)*"`` nests two repetitions over the same
    characters, so on a literal without its closing quote the regex engine
    tries every way of splitting it: 28 characters took 13 s.  Here each
    character is one step (possessive), which matches the same literals."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


_LOCATION_ALIAS = re.compile(r"^(#[A-Za-z_][\w$.-]*)[ \t]*=[ \t]*(loc\(.*\))[ \t]*$", re.MULTILINE)
"""A location alias definition, alone on its line as MLIR prints it."""


def _location_aliases(ctx: Context, text: str) -> tuple[str, dict[str, Attribute]]:
    """``text`` without the location alias definitions that can be resolved
    (each blanked to the end of its line), and their values.  A definition
    may use another one defined after it: they are resolved until none more
    can be; the rest stay in the text, for the parser to report."""
    definitions = {m.group(1): m for m in _LOCATION_ALIAS.finditer(text)}
    aliases: dict[str, Attribute] = {}
    progress = True
    while progress:
        progress = False
        for name, match in list(definitions.items()):
            parser = Parser(ctx, match.group(2), name)
            parser.attribute_aliases.update(aliases)
            try:
                aliases[name] = parser.parse_optional_location()  # type: ignore[assignment]
            except ParseError:
                continue  # uses an alias not resolved yet
            del definitions[name]
            progress = True
    resolved = [m for m in _LOCATION_ALIAS.finditer(text) if m.group(1) in aliases]
    for match in reversed(resolved):
        text = text[: match.start()] + " " * (match.end() - match.start()) + text[match.end() :]
    return text, aliases


class LocatingParser(Parser):
    """An xDSL parser that records where each op starts, and reads location
    aliases defined after their use."""

    def __init__(
        self, ctx: Context, input: str | bytes, name: str = "<stdin>", line_offset: int = 0
    ):
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        text, aliases = _location_aliases(ctx, text) if "loc(" in text else (text, {})
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(LinearLexer(Input(text, name)))
        self.attribute_aliases.update(aliases)
        self.file_name = name
        self.line_offset = line_offset

    def _parse_block(self) -> Block:
        """xDSL's, with a located error for a block label defined twice
        after a branch to it: xDSL then forgets the first definition and
        fails with a ``KeyError``."""
        token = self._current_token
        name = token.text[1:]
        if (
            token.kind == MLIRTokenKind.CARET_IDENT
            and name in self.blocks
            and name not in self.forward_block_references
        ):
            raise ParseError(token.span, f"re-declaration of block '{name}'")
        return super()._parse_block()

    def parse_optional_operation(self) -> Operation | None:
        start_span = self._current_token.span
        start = start_span.get_location()
        try:
            op = super().parse_optional_operation()
        except VerifyException as error:
            # A type constraint checked while parsing the custom form: report
            # it where the op starts, like any other parse error.
            raise ParseError(start_span, str(error)) from error
        except OverflowError as error:
            # xDSL packs a float attribute into its width as it builds it:
            # ``1.0e+308 : f32`` overflows there
            raise ParseError(start_span, f"a constant is out of range for its type ({error})") from error
        if op is not None and isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(
                StringAttr(self.file_name),
                IntAttr(start.line + self.line_offset),
                IntAttr(start.col),
            )
        return op


def parse_module(
    text: str,
    name: str = "<stdin>",
    ctx: Context | None = None,
    line_offset: int = 0,
    verify: bool = True,
) -> ModuleOp:
    """Parse (and verify) a module; raises ``ParseError`` or ``VerifyException``."""
    module = LocatingParser(ctx or make_context(), text, name, line_offset).parse_module()
    if verify:
        verify_module(module)
    return module


def verify_module(module: ModuleOp) -> None:
    """What upstream MLIR's verifier checks: the rules xDSL leaves out
    (``revmlir.ir_rules``), then every op's own rules (xDSL's ``verify``).
    Those come first because some of xDSL's op verifiers index into operands
    that a value from the wrong region breaks (``scf.while`` raised an
    ``IndexError``)."""
    check_ir_rules(module)
    module.verify()
