"""How derived functions are named, and the attribute that marks code with
no inverse.

Ops refer to derived functions by name (``rev.uncall @f`` runs ``@f.inv``;
an adjoint rule calls ``@g.adj``) and the dialects, the inverter and the
engines must agree on these names, so they live below all of them.
"""

from __future__ import annotations

import re

INVERSE_SUFFIX = ".inv"
TAPE_SUFFIX = ".tape"
"""``@f.tape``: ordinary code ``@f`` made reversible on a tape
(``rev-reversibilize``'s Bennett mode), which ``@f`` runs where it is
reversible; its errors are reported under ``@f`` (``source_name``)."""
TANGENT_SUFFIX = ".tan"
"""``@f.tan``: the tangent of a reversible function, or of ordinary code
that derived code calls (a primitive's rule, differentiated again for a
Hessian), which the tangents of calls of it name."""
ORDINARY_SUFFIX = ".ordinary"
"""``@g.ordinary``: the ordinary code of ``@g`` as written, kept for the
ordinary functions that call ``@g`` when ``make-resumable`` (or
``ad-checkpoint``) rewrites ``@g`` (``revmlir.reversibilize.ordinary_copies``)."""
ORDINARY_COPY_ATTR = "rev.ordinary_copy_of"
"""On ``@g.ordinary``, the name of the function it copies (``"g"``): what
tells a copy from a user's function of that name, and the name its
diagnostics give.  A string, not a symbol reference: a copy does not reach
``@g`` (``revmlir.reachability`` follows every symbol an op names)."""
FORGETFUL_ATTR = "rev.forgetful"
"""On a function that deliberately forgets state (a checkpointed gradient,
``@f.ckpt``), or on an op that does (an adjoint's ``anc.free`` of the
gradient an ancilla has at its birth): it has no inverse, so ``rev-invert``
leaves such functions, and those calling them, out unless they are named
(``revmlir.inversion.forgetful_functions``)."""

DERIVED_INVERSE_ATTR = "rev.derived_inverse"
"""On an inverse a compile derived for itself (the inverses native code
runs for ``rev.uncall`` and for running a function backwards, which the
user did not write), what makes errors name it ``~f`` as the interpreter
names ``@f`` run backwards (``shown_name``).  A function merely named
``@f.inv`` (written so, or printed by ``rev-invert``) is named as it is,
on every engine."""

RUNTIME_PREFIX = "revmlir."
"""Compiled code names its runtime functions (``revmlir.report``,
``revmlir.stack.push.f64``, …) with this prefix, on the host and on the
device alike: a program's own function may not, or it would clash with them
(``revmlir.lowering.rev_to_std.check_reserved_names``)."""


def inverse_name(name: str) -> str:
    """``@f`` ↔ ``@f.inv``: the inverse of an inverse has the original name."""
    if name.endswith(INVERSE_SUFFIX):
        return name[: -len(INVERSE_SUFFIX)]
    return name + INVERSE_SUFFIX


PTX_RESERVED_NAMES = re.compile(r"_|WARP_SZ|param[0-9]+")
"""Spellings of ``[A-Za-z0-9_$]`` that PTX does not take as a symbol: a
lone ``_`` (an identifier starting with ``_`` needs a second character),
``WARP_SZ``, the one predefined identifier without a ``%``, and
``param<N>``, the names LLVM's NVPTX back end gives the parameters of
every call it writes (a global symbol so named makes ptxas die of a
segmentation fault).  The others (``%tid``, …) start with ``%``, which
``identifier`` escapes, and instruction and directive names (``ret``,
``add``, ``entry``) are symbols ptxas takes.  The back end's other local
names, ``<function>_param_<N>``, depend on another function's name:
``revmlir.gpu.nvptx`` refuses them."""


def identifier(name: str, dot: str) -> str:
    """``name`` spelled as PTX takes a symbol (``[A-Za-z0-9_$]``, not
    starting with a digit): ``.`` is ``dot``, any other character outside
    ``[A-Za-z0-9_]`` (``$`` too, and a leading digit) its code point in hex
    between two ``$`` (``a-b`` is ``a$2d$b``), the empty name ``$$``, and
    a spelling PTX reserves (``PTX_RESERVED_NAMES``) has its first
    character escaped (``_`` is ``$5f$``, ``WARP_SZ`` is ``$57$ARP_SZ``,
    ``param0`` is ``$70$aram0``).
    A ``$`` in the result only ever starts or ends an escape, so names that
    differ are spelled apart, but for what ``dot`` spells (``_$_`` keeps
    them apart, ``_`` does not)."""
    if not name:
        return "$$"
    spelled = [
        c
        if c == "_" or (c.isascii() and c.isalnum() and (i or not c.isdigit()))
        else dot
        if c == "."
        else f"${ord(c):x}$"
        for i, c in enumerate(name)
    ]
    if PTX_RESERVED_NAMES.fullmatch("".join(spelled)):
        spelled[0] = f"${ord(name[0]):x}$"
    return "".join(spelled)


def shown_name(name: str, derived_inverse: bool) -> str:
    """How errors name function ``name``: by the function whose code it
    runs (``source_name``), and ``~f`` where it is the inverse of ``@f`` a
    compile derived (``DERIVED_INVERSE_ATTR``; ``@f.inv`` of ``@f``, or
    ``@f`` of a function ``@f.inv``)."""
    name = source_name(name)
    return "~" + inverse_name(name) if derived_inverse else name


ARRANGEMENT_PARTS = re.compile(r"tape|plain|ckpt|grad|step[0-9]+|loss[0-9]+")
"""The parts of a derived name that say how the user's code was arranged
to run, not what it computes: a tape function (``@f.tape``), a gradient
that runs ``f`` and then its adjoint (``@f.grad``, ``@f.grad.lossK``), a
checkpointed gradient (``@f.ckpt``), its outlined steps
(``@f.ckpt.step<j>``) and their untaped copies (``.plain``).  What is left
(``.inv``, ``.adj``, ``.tan`` and their lanes) says what the code computes
of the user's function, and stays."""


def source_name(name: str) -> str:
    """The function whose code ``name`` runs, as errors name it: the
    user's function, with what derived code computes of it (``@f.adj``,
    ``@f.tan``, ``@f.inv``) but not how it was arranged
    (``ARRANGEMENT_PARTS``): ``@f`` of ``@f.tape`` and of
    ``@f.ckpt.step0.plain``, ``@f.tan`` of ``@f.tape.tan`` and of
    ``@f.grad.loss0.tan``, ``@f.adj`` of ``@f.ckpt.step0.adj``.  Native
    code runs ordinary code as written (``@f``) where the interpreter runs
    its tape, and a derivative runs code the passes outlined and copied
    from ``f``'s: the user wrote ``f``, so every engine names it, and the
    op's location says where in it.  Only the parts after the first are
    read, so ``@tape`` and ``@grad`` stay themselves; a hand-written
    ``@x.plain`` is named ``@x`` too."""
    head, *derived = name.split(".")
    return ".".join([head, *(part for part in derived if not ARRANGEMENT_PARTS.fullmatch(part))])
