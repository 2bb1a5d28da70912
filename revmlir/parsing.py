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

A value used before its definition is parsed as a forward reference, which
xDSL replaces by the value once it is defined.  Two forms of that never
become a located diagnostic in xDSL: an op's operand defined inside the
op's own regions (``rev.for %i ... { ^bb0(%i: index): ... }``) is resolved
before the op exists, so the op keeps the placeholder, which has no owner;
and a value used where its definition is out of scope (from a sibling
region) is reported at the end of the file.  ``LocatingParser`` reports the
first at the op and the second at the use.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation, VarOperandDef, VarResultDef
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from revmlir.dialects import get_all_dialects
from revmlir.ir_rules import check_ir_rules, check_symbols
from revmlir.kept_answers import ir_unchanged


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
                aliases[name] = parser.parse_optional_location()
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

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<stdin>", line_offset: int = 0):
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        text, aliases = _location_aliases(ctx, text) if "loc(" in text else (text, {})
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(LinearLexer(Input(text, name)))
        self.attribute_aliases.update(aliases)
        self.file_name = name
        self.line_offset = line_offset
        self._first_uses: dict[SSAValue, Span] = {}
        """Where each forward reference was first used."""
        self._resolved: dict[SSAValue, tuple[str, Span]] = {}
        """Forward references resolved so far: the name and its definition."""
        self._definitions: dict[str, Span] = {}
        """The last definition of each name, in any scope."""
        self._opened: list[type[Operation]] = []
        """The ops being parsed, outermost first."""
        self._starts: list[Span] = []
        """Where each op being parsed starts, outermost first."""

    def resolve_operand(self, operand: Parser.UnresolvedOperand, type: Attribute) -> SSAValue:
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._first_uses.setdefault(value, operand.span)
        return value

    def _register_ssa_definition(self, name: str, values: Sequence[SSAValue], span: Span) -> None:
        references = self.forward_ssa_references.get(name, {})
        for reference in references.values():
            self._resolved[reference] = (name, span)
        self._definitions[name] = span
        super()._register_ssa_definition(name, values, span)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """xDSL's, with a value that is never defined in scope reported at
        its first use (xDSL reports it at the end of the file), and an input
        without an operation said to be one (xDSL's "Could not parse entire
        input!" at its end named no cause)."""
        if self._current_token.kind == MLIRTokenKind.EOF:
            raise ParseError(
                self._current_token.span,
                "the input holds no operation (an empty module is written 'builtin.module {}')",
            )
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError:
            if self._current_token.kind != MLIRTokenKind.EOF or not self.forward_ssa_references:
                raise
            name, references = next(iter(self.forward_ssa_references.items()))
            uses = [self._first_uses[r] for r in references.values() if r in self._first_uses]
            if not uses:
                raise
            use = min(uses, key=lambda span: span.start)
            message = f"use of undefined value %{name}"
            if name in self._definitions:
                line = self._line(self._definitions[name])
                message += f"; %{name} is defined at line {line}, in a region that does not contain this use"
            raise ParseError(use, message) from None

    def _parse_block(self) -> Block:
        """xDSL's, with a located error for a block label defined twice
        after a branch to it (xDSL then forgets the first definition and
        fails with a ``KeyError``), and where no block can start: xDSL's
        message there is only " in block definition"."""
        token = self._current_token
        name = token.text[1:]
        if (
            token.kind == MLIRTokenKind.CARET_IDENT
            and name in self.blocks
            and name not in self.forward_block_references
        ):
            raise ParseError(token.span, f"re-declaration of block '{name}'")
        if token.kind == MLIRTokenKind.EOF:
            where = self._starts[-1].get_location() if self._starts else None
            of = f" of the op at {where.line + self.line_offset}:{where.col}" if where else ""
            raise ParseError(token.span, f"the file ends inside a region{of}: expected '}}'")
        if token.kind != MLIRTokenKind.CARET_IDENT:
            raise ParseError(token.span, f"expected an op, a block label or '}}', got '{token.text}'")
        return super()._parse_block()

    def _get_op_by_name(self, name: str) -> type[Operation]:
        op_type = super()._get_op_by_name(name)
        self._opened.append(op_type)
        return op_type

    def parse_optional_operation(self) -> Operation | None:
        start_span = self._current_token.span
        start = start_span.get_location()
        depth = len(self._opened)
        self._starts.append(start_span)
        try:
            op = super().parse_optional_operation()
        except VerifyException as error:
            # A type constraint checked while parsing the custom form: report
            # it where the op starts, like any other parse error, with how
            # the op is written (a function type where it takes one type).
            form = written_form(self._opened[depth]) if len(self._opened) > depth else None
            how = f" ({form.said()})" if form else ""
            raise ParseError(start_span, f"{error}{how}") from error
        except OverflowError as error:
            # xDSL packs a float attribute into its width as it builds it:
            # ``1.0e+308 : f32`` overflows there
            raise ParseError(start_span, f"a constant is out of range for its type ({error})") from error
        finally:
            self._starts.pop()
        del self._opened[depth:]
        if op is not None:
            self._check_own_definitions(op, start_span)
            self._check_end(op)
        if op is not None and isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(
                StringAttr(self.file_name),
                IntAttr(start.line + self.line_offset),
                IntAttr(start.col),
            )
        return op

    def _check_end(self, op: Operation) -> None:
        """A located error for text left after ``op`` that no op, block or
        region can start with: its custom form ended before what its author
        wrote (``rev.add %y, %x : ui8, ui8`` has one type).  xDSL goes on
        to read a block there and fails with an empty "in block
        definition"; the error says how the op is written."""
        token = self._current_token
        if token.kind in _AFTER_AN_OP:
            return
        form = written_form(type(op))
        how = f": {form.said()}" if form else ""
        raise ParseError(token.span, f"unexpected '{token.text}' after '{op.name}'{how}")

    def _line(self, span: Span) -> int:
        """The line of ``span`` in the file, as op locations give it."""
        return span.get_location().line + self.line_offset

    def _check_own_definitions(self, op: Operation, span: Span) -> None:
        """An operand defined inside ``op``'s own regions was resolved before
        ``op`` was built, so ``op`` holds its placeholder: report it here."""
        for operand in op.operands:
            if operand in self._resolved:
                name, definition = self._resolved[operand]
                line = self._line(definition)
                raise ParseError(
                    self._first_uses.get(operand, span),
                    f"'{op.name}' uses %{name}, which is defined inside its own region (line {line});"
                    " an op can only use values defined before it",
                )


_AFTER_AN_OP = frozenset(
    {
        MLIRTokenKind.PERCENT_IDENT,  # the next op's results
        MLIRTokenKind.BARE_IDENT,  # the next op
        MLIRTokenKind.STRING_LIT,  # the next op, generic
        MLIRTokenKind.CARET_IDENT,  # the next block
        MLIRTokenKind.R_BRACE,  # the end of the region
        MLIRTokenKind.EOF,
        MLIRTokenKind.HASH_IDENT,  # alias definitions, between top-level ops
        MLIRTokenKind.EXCLAMATION_IDENT,
        MLIRTokenKind.FILE_METADATA_BEGIN,
    }
)
"""What may follow an op."""


@dataclass(frozen=True)
class WrittenForm:
    """How an op with a declarative assembly format is written: ``text``
    with every optional part written in, and those parts, which may be left
    out (``rev.return`` alone, or ``rev.return %values : <types of
    %values>``).  Brackets around them would read as literal ones."""

    text: str
    optional: tuple[str, ...]

    def said(self) -> str:
        """What a diagnostic says of it: its type list first, which is what
        a wrong one gets wrong."""
        _, colon, types = self.text.partition(" : ")
        said = f"its type list is ': {types}', as in '{self.text}'" if colon else f"it is written '{self.text}'"
        left_out = " and ".join(f"'{part}'" for part in self.optional)
        return f"{said} ({left_out} may be left out)" if left_out else said


_OPTIONAL_GROUP = re.compile(r"\(([^()`]*(?:`[^`]*`[^()`]*)*)\)\?")
"""An optional group of a declarative format, ``($values^ `:` type($values))?``."""


def written_form(op_type: type[Operation]) -> WrittenForm | None:
    """How an op with a declarative assembly format is written, from the
    format: ``rev.add %target, %value : <type of %target>`` for
    ``$target `,` $value attr-dict `:` type($target)``.  None for an op
    that parses itself, and for xDSL's ops, whose formats use directives
    this does not spell out."""
    format = getattr(op_type, "assembly_format", None)
    if format is None or not issubclass(op_type, IRDLOperation) or not op_type.__module__.startswith("revmlir."):
        return None
    definition = op_type.get_irdl_definition()
    values = {name: isinstance(d, VarOperandDef | VarResultDef) for name, d in definition.operands + definition.results}

    def variable(found: re.Match[str]) -> str:
        """An operand or result as ``%name``; an attribute (a callee) as ``@name``."""
        return ("%" if found[1] in values else "@") + found[1]

    def types(found: re.Match[str]) -> str:
        return f"<type{'s' * values[found[1]]} of %{found[1]}>"

    text = re.sub(r"functional-type\(\$(\w+), \$(\w+)\)", r"(type(\1)) -> type(\2)", format)
    text = re.sub(r"type\(\$?(\w+)\)", types, text)
    text = re.sub(r"\$(\w+)\^?", variable, text.replace("attr-dict", ""))
    optional = tuple(_spaced(group[1]) for group in _OPTIONAL_GROUP.finditer(text))
    written = _spaced(_OPTIONAL_GROUP.sub(r"\1", text))
    return WrittenForm(f"{op_type.name} {written}", optional)


def _spaced(text: str) -> str:
    """Format text as it is written: literals unquoted, spaced where they go."""
    text = " ".join(re.sub(r"`([^`]*)`", r" \1 ", text).split())
    text = re.sub(r" ([,)\]])|([(\[]) ", r"\1\2", text)
    return re.sub(r"([%@]\w+) ([(\[])", r"\1\2", text)  # an operand list or index right after a value


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
    with ir_unchanged():
        try:
            module.verify()
        except VerifyException:
            check_symbols(module)  # the located form of xDSL's unlocated redefinition
            raise
