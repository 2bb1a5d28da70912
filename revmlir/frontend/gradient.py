"""``rv.gradient``: NiLang's ``gradient(f, args; iloss)`` by reverse computing.

It runs ``f`` forward, seeds gradient 1 on output ``iloss`` and runs
``@f.adj`` (built by ``ad-adjoint``) on the outputs, which uncomputes them
back to the inputs while the gradients flow backwards.  ``@f.adj`` runs
natively when ``f``'s specialization does, otherwise on the interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from xdsl.dialects.builtin import ModuleOp

from revmlir.frontend.api import InverseFunction, ReversibleFunction, Specialization
from revmlir.runtime.backend import Backend

_adjoints: WeakKeyDictionary[Specialization, tuple[ModuleOp, Backend]] = WeakKeyDictionary()


def adjoint_backend(spec: Specialization) -> tuple[ModuleOp, Backend]:
    """The module holding ``@f.adj`` for this specialization and how it runs
    (built once per specialization)."""
    if (cached := _adjoints.get(spec)) is None:
        from revmlir.ad.adjoint import generate_adjoints

        module = spec.module.clone()
        generate_adjoints(module, [spec.name])
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
                        f"the adjoint of {spec.function.__name__} cannot run "
                        f"natively: {reason}"
                    ) from None
        cached = _adjoints[spec] = (module, backend)
    return cached


def gradient(
    f: ReversibleFunction | InverseFunction, args: Sequence[Any], iloss: int = 0
) -> tuple[Any, ...]:
    """``∂(args[iloss] after f) / ∂(each argument)``, as a tuple with one
    entry per argument (``0.0`` for arguments that carry no gradient:
    integers, booleans).  Log-number arguments get the gradient with respect
    to their real value.  Arrays of floats and complex numbers are not
    differentiable yet (``PassFailedException`` naming the op)."""
    from revmlir.ad.adjoint import gradient_type
    from revmlir.dialects.rev import LogType

    if isinstance(f, InverseFunction):
        raise TypeError("rv.gradient of an inverse is not supported yet; differentiate f")
    if not isinstance(f, ReversibleFunction):
        raise TypeError(f"rv.gradient expects a @rv.reversible function, got {f!r}")
    args = tuple(args)
    if not -len(args) <= iloss < len(args):
        raise IndexError(f"iloss={iloss} is out of range for {len(args)} argument(s)")
    iloss %= len(args)
    spec = f.specialization_for(*args)
    if gradient_type(spec.types[iloss]) is None:
        raise TypeError(
            f"rv.gradient: argument #{iloss} of {f.__name__} is not a float; "
            "only float outputs can be differentiated"
        )
    _, backend = adjoint_backend(spec)
    forward = spec.native if spec.native is not None else spec.interpreter
    outputs = forward.call(spec.name, *args)
    carrying = [i for i, t in enumerate(spec.types) if gradient_type(t) is not None]
    seeds = []
    for i in carrying:
        seed = 1.0 if i == iloss else 0.0
        if i == iloss and isinstance(spec.types[i], LogType):
            seed = float(outputs[i])  # d(value)/d(log value) = value
        seeds.append(seed)
    results = backend.call(spec.name + ".adj", *outputs, *seeds)
    inputs_gradients = dict(zip(carrying, results[len(args) :], strict=True))
    gradients: list[Any] = []
    for i, type in enumerate(spec.types):
        g = inputs_gradients.get(i, 0.0)
        if isinstance(type, LogType):
            g = g / float(results[i])  # d/d(value) = d/d(log value) / value
        gradients.append(g)
    return tuple(gradients)
