"""Reverse mode from Python: ``rv.gradient`` (NiLang's ``gradient(f, args;
iloss)``) and ``rv.vjp``, both by reverse computing.

They run ``f`` forward on copies of the arguments, then ``@f.adj`` (built by
``ad-adjoint``) on the outputs with the output cotangents: it uncomputes the
outputs back to the inputs while the cotangents flow backwards.  Arrays and
stacks of floats get shadow arrays (lists) of the same shape, which ``@f.adj``
updates in place.  ``@f.adj`` runs natively when ``f``'s specialization does,
otherwise on the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np
from xdsl.dialects.builtin import ComplexType, ModuleOp
from xdsl.ir import Attribute

from revmlir.frontend.api import InverseFunction, ReversibleFunction, Specialization
from revmlir.runtime.arguments import type_name
from revmlir.runtime.backend import Backend

_derived: WeakKeyDictionary[Specialization, dict[str, tuple[ModuleOp, Backend]]] = (
    WeakKeyDictionary()
)


def derived_backend(
    spec: Specialization, what: str, generate: Callable[[ModuleOp, list[str]], object]
) -> tuple[ModuleOp, Backend]:
    """A copy of the specialization's module to which ``generate`` added
    functions derived from ``f`` (``what`` names them: "adjoint", …), and how
    it runs: natively when ``f``'s specialization does, otherwise on the
    interpreter.  Built once per specialization and kind."""
    derived = _derived.setdefault(spec, {})
    if (cached := derived.get(what)) is None:
        module = spec.module.clone()
        generate(module, [spec.name])
        module.verify()
        from revmlir.interpreter import RevInterpreter

        backend: Backend = RevInterpreter(module)
        if spec.native is not None:
            from xdsl.utils.exceptions import PassFailedException

            from revmlir.frontend.api import NativeCompilationError
            from revmlir.runtime.native import NativeModule

            try:
                backend = NativeModule.compile(module)
            except PassFailedException as reason:
                # like the specialization itself: "auto" falls back
                if spec.function.backend == "native":
                    raise NativeCompilationError(
                        f"the {what} of {spec.function.__name__} cannot run "
                        f"natively: {reason}"
                    ) from None
        cached = derived[what] = (module, backend)
    return cached


def adjoint_backend(spec: Specialization) -> tuple[ModuleOp, Backend]:
    """The module holding ``@f.adj`` for this specialization and how it runs."""
    from revmlir.ad.adjoint import generate_adjoints

    return derived_backend(spec, "adjoint", generate_adjoints)


def _specialization(f: Any, args: Sequence[Any], api: str) -> Specialization:
    if isinstance(f, InverseFunction):
        raise TypeError(f"rv.{api} of an inverse is not supported yet; differentiate f")
    if not isinstance(f, ReversibleFunction):
        raise TypeError(f"rv.{api} expects a @rv.reversible function, got {f!r}")
    return f.specialization_for(*args)


def _is_log(type: Attribute) -> bool:
    from revmlir.dialects.rev import LogType

    return isinstance(type, LogType)


@dataclass(frozen=True)
class Pullback:
    """The cotangent map of one run of ``f`` (``rv.vjp``'s second result).

    Each call starts from its own copy of the outputs (``@f.adj`` restores
    them to the inputs), so it can be called any number of times.
    """

    spec: Specialization
    outputs: tuple[Any, ...]

    def __call__(self, *cotangents: Any) -> tuple[Any, ...]:
        """One cotangent per argument of ``f`` (``None`` for zero), shaped
        like the argument; returns one cotangent per argument: a float for a
        float or log-number scalar (log numbers: with respect to their real
        value), ``∂/∂Re z + i ∂/∂Im z`` for a complex ``z`` (a complex
        cotangent ``c`` weighs the output ``w`` as ``Re(conj(c)·w)``), an array
        (list) for an array (stack) of floats, ``0.0`` for other scalars and
        ``None`` for other arrays and stacks."""
        spec, outputs = self.spec, self.outputs
        name = spec.function.__name__
        if len(cotangents) != len(outputs):
            raise TypeError(
                f"the pullback of {name} takes {len(outputs)} cotangent(s), one "
                f"per argument, got {len(cotangents)}"
            )
        carrying = spec.carrying
        seeds = [
            _seed(spec.types[i], outputs[i], cotangents[i], f"cotangent #{i} of {name}")
            for i in carrying
        ]
        _, backend = adjoint_backend(spec)
        results = backend.call(spec.name + ".adj", *spec.private_copies(outputs), *seeds)
        return _input_cotangents(spec, outputs, results)


def _input_cotangents(spec: Specialization, args: Sequence[Any], results: Sequence[Any]) -> tuple[Any, ...]:
    """The per-argument gradients out of what ``@f.adj`` (or ``@f.grad``)
    returned: its inputs (``results[:len(args)]``), then the gradients of the
    arguments that carry one."""
    found = dict(zip(spec.carrying, results[len(args) :], strict=True))
    gradients: list[Any] = []
    for i, type in enumerate(spec.types):
        if i not in found:
            gradients.append(None if isinstance(args[i], np.ndarray | list) else 0.0)
        elif _is_log(type):
            gradients.append(found[i] / float(results[i]))  # d/dx = d/dlog x / x
        else:
            gradients.append(found[i])
    return tuple(gradients)


def _seed(type: Attribute, output: Any, cotangent: Any, what: str) -> Any:
    """The output gradient ``@f.adj`` takes for one argument: a float, or a
    fresh shadow array (list) for an array (stack)."""
    if isinstance(output, np.ndarray):
        shadow = np.zeros_like(output)
        if cotangent is not None:
            given = np.asarray(cotangent, dtype=output.dtype)
            if given.shape != output.shape:
                raise TypeError(
                    f"{what} must have the argument's shape {output.shape}, got {given.shape}"
                )
            shadow[...] = given
        return shadow
    if isinstance(output, list):
        if cotangent is None:
            return [0.0] * len(output)
        if len(cotangent) != len(output):
            raise TypeError(f"{what} must have {len(output)} element(s), got {len(cotangent)}")
        return [float(c) for c in cotangent]
    if cotangent is None:
        return 0.0
    if isinstance(type, ComplexType) and isinstance(cotangent, complex | np.complexfloating):
        return complex(cotangent)
    if isinstance(cotangent, np.ndarray | list | tuple | complex | np.complexfloating):
        raise TypeError(f"{what} must be a real number, got {type_name(cotangent)}")
    seed = float(cotangent)
    if _is_log(type):
        seed *= float(output)  # d/dlog x = x · d/dx
    return seed


def vjp(f: ReversibleFunction, *args: Any) -> tuple[tuple[Any, ...], Pullback]:
    """Run ``f`` on (copies of) ``args``; return its outputs (every argument,
    as a call returns them) and the pullback mapping output cotangents to
    input cotangents, like ``jax.vjp``.  The arguments are not modified."""
    spec = _specialization(f, args, "vjp")
    forward = spec.native if spec.native is not None else spec.interpreter
    outputs = tuple(forward.call(spec.name, *spec.private_copies(args)))
    return outputs, Pullback(spec, outputs)


def loss_index(spec: Specialization, args: Sequence[Any], iloss: int, api: str) -> int:
    """``iloss`` as an index of ``args``, checked to name a float scalar."""
    from revmlir.ad.adjoint import gradient_type

    if not -len(args) <= iloss < len(args):
        raise IndexError(f"iloss={iloss} is out of range for {len(args)} argument(s)")
    iloss %= len(args)
    if gradient_type(spec.types[iloss]) is None or isinstance(args[iloss], np.ndarray | list):
        raise TypeError(
            f"rv.{api}: argument #{iloss} of {spec.function.__name__} is not a "
            "float scalar; only float scalar outputs can be the loss (use rv.vjp "
            "for arrays)"
        )
    return iloss


def gradient(
    f: ReversibleFunction | InverseFunction, args: Sequence[Any], iloss: int = 0
) -> tuple[Any, ...]:
    """``∂(args[iloss] after f) / ∂(each argument)``, as a tuple with one
    entry per argument: a float per float scalar (log numbers: with respect to
    their real value), ``∂/∂Re z + i ∂/∂Im z`` per complex ``z`` (NiLang's
    convention), an array per array of floats, ``0.0`` for other scalars and
    ``None`` for integer arrays.  The loss must be a scalar (of a complex
    loss, its real part is differentiated); for array outputs use
    ``rv.vjp``.  The arguments are not modified."""
    args = tuple(args)
    spec = _specialization(f, args, "gradient")
    iloss = loss_index(spec, args, iloss, "gradient")
    if _is_log(spec.types[iloss]):
        # the seed of a log number's logarithm is its value after f
        outputs, pullback = vjp(spec.function, *args)  # type: ignore[arg-type]
        cotangents: list[Any] = [None] * len(args)
        cotangents[iloss] = 1.0
        return pullback(*cotangents)
    from revmlir.ad.adjoint import GRADIENT_SUFFIX, generate_gradients

    _, backend = derived_backend(spec, "gradient", generate_gradients)
    seeds = [_seed(spec.types[i], args[i], 1.0 if i == iloss else None, "") for i in spec.carrying]
    results = backend.call(spec.name + GRADIENT_SUFFIX, *spec.private_copies(args), *seeds)
    return _input_cotangents(spec, args, results)
