"""Inverse accumulation: ``J⁻¹·v`` and ``J⁻ᵀ·w`` of reversible programs,
building ``@f.itan`` and ``@f.iadj``.

Pearlmutter and Siskind ("Inverse Accumulation Mode") observe that when
every step of a computation overwrites one of its inputs (a *constant-width*
computation), each step's Jacobian is the identity but for one row, and so
is its inverse.  Reversible programs are constant-width by construction: an
update ``y ⊕= g(x)`` has step Jacobian ``J_k = I + e_y ∇gᵀ`` and inverse
``I − e_y ∇gᵀ``, which is exactly the step Jacobian of the inverse update
``y ⊖= g(x)``.  So the inverse modes are the derived programs of the inverse
function ``~f``, whose Jacobian at ``y = f(x)`` is ``J⁻¹``:

* ``J⁻¹ = J_1⁻¹⋯J_n⁻¹`` applies the last step's inverse first: the inverse
  tangent (their 1.2b, ``ẋ = J⁻¹ẏ``) runs *backwards*, and is the tangent
  program of ``~f`` run at ``y``;
* ``J⁻ᵀ = J_n⁻ᵀ⋯J_1⁻ᵀ`` applies the first step's first: the inverse adjoint
  (1.2a, ``ȳ = J⁻ᵀx̄``) runs *forwards* from ``x``, and is the adjoint of
  ``~f``, which by reverse computing runs ``f`` forward with the step-wise
  rules of ``~f``'s ops.

Both are built by the ordinary tangent and adjoint machinery on ``@f.inv``
(added when the module lacks it), under their own names; no matrix is ever
formed, and each costs what ``@f.tan`` (``@f.adj``) costs.  Functions they
call get their ordinary derived functions (``rev.call @g`` in ``~f`` is an
uncall of ``@g`` in ``f``: ``@g.inv.tan``, ``@g.adj``…).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.adjoint import add_adjoint
from revmlir.ad.derived import ModuleFunctions, prepare
from revmlir.ad.tangent import generate_tangents, tangent_function, tangent_name
from revmlir.dialects import rev
from revmlir.errors import InversionError, describe_op
from revmlir.naming import FORGETFUL_ATTR, inverse_name

INVERSE_TANGENT_SUFFIX = ".itan"
INVERSE_ADJOINT_SUFFIX = ".iadj"


class InverseModeError(PassFailedException):
    """A function whose inverse modes cannot be built, reported at it."""


def inverse_tangent_name(name: str) -> str:
    """``@f`` → ``@f.itan``."""
    return name + INVERSE_TANGENT_SUFFIX


def inverse_adjoint_name(name: str) -> str:
    """``@f`` → ``@f.iadj``."""
    return name + INVERSE_ADJOINT_SUFFIX


def _inverse(functions: ModuleFunctions, name: str, mode: str) -> str:
    """The name of ``@f``'s inverse, added to the module when missing;
    rejects what has no inverse to differentiate."""
    primal = functions.primal(name, None)
    if FORGETFUL_ATTR in primal.attributes:
        raise InverseModeError(
            f"{describe_op(primal)} forgets state ({FORGETFUL_ATTR}): it has no inverse, so no {mode}"
        )
    try:
        functions.primal(inverse_name(name), None)
    except InversionError as error:
        raise InverseModeError(f"the {mode} of @{name} needs its inverse: {error}") from None
    return inverse_name(name)


def _missing(where: Operation | None, message: str) -> InverseModeError:
    return InverseModeError(message if where is None else f"{describe_op(where)}: {message}")


def generate_inverse_tangents(module: ModuleOp, names: Sequence[str]) -> list[rev.FuncOp]:
    """Add ``@f.itan`` for each named ``@f`` (and ``@f.inv``, and the
    tangents of the functions it calls, when missing): the tangent program of
    ``~f`` (see ``revmlir.dialects.ad.InverseTangentOp``).  Existing ones are
    kept."""
    functions = ModuleFunctions(module, _missing)
    created: list[rev.FuncOp] = []

    def request(callee: str, call: Operation) -> str:
        created.extend(generate_tangents(module, [callee]))
        return tangent_name(callee)

    for name in names:
        target = inverse_tangent_name(name)
        if target in functions.funcs:
            continue
        inverse = _inverse(functions, name, "inverse tangent")
        derived = tangent_function(prepare(functions.funcs[inverse]), target, request)
        functions.add(inverse, derived)
        created.append(derived)
    return created


def generate_inverse_adjoints(module: ModuleOp, names: Sequence[str]) -> list[rev.FuncOp]:
    """Add ``@f.iadj`` for each named ``@f`` (and ``@f.inv``, and the
    adjoints of the functions it calls, when missing): the adjoint of ``~f``
    (see ``revmlir.dialects.ad.InverseAdjointOp``).  Existing ones are
    kept."""
    functions = ModuleFunctions(module, _missing)
    created: list[rev.FuncOp] = []
    for name in names:
        if inverse_adjoint_name(name) not in functions.funcs:
            inverse = _inverse(functions, name, "inverse adjoint")
            created += add_adjoint(module, inverse, inverse_adjoint_name(name))
    return created
