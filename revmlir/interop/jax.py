"""``rv.to_jax(f)``: a revmlir function as a JAX-traceable function.

JAX allows a function either a custom JVP or a custom VJP, not both, and a
custom VJP cannot be differentiated in forward mode.  So the binding defines
three JAX primitives instead, the way JAX's own operations are defined:

* ``revmlir_call`` runs ``f``; its JVP rule runs ``f`` and
  ``revmlir_tangent``;
* ``revmlir_tangent`` runs the tangent program (``rv.jvp``) and is linear in
  the tangents; its transpose is ``revmlir_cotangent``;
* ``revmlir_cotangent`` runs the pullback (``rv.vjp``) and is linear in the
  cotangents; its transpose is ``revmlir_tangent``.

``jax.jvp`` and ``jax.jacfwd`` evaluate the tangent primitive;
``jax.grad``, ``jax.vjp`` and ``jax.jacrev`` linearize and transpose it into
the cotangent primitive, so reverse mode runs revmlir's adjoint, never the
tangent program.  Under ``jax.jit`` each primitive lowers to a custom call
of native code where it can (``revmlir.interop.jax_ffi``), else to a call
back into Python, which hands revmlir zero-copy numpy views of XLA's
buffers: on the CPU a custom call of a handler written in Python
(``revmlir.interop.python_ffi``), whose errors read as the native
handlers', elsewhere ``jax.pure_callback``.  ``jax.vmap`` gives every primitive a leading batch axis on the
operands it maps (``lead``); the callback loops over it.  A batch of a
batch multiplies into one leading axis, so each primitive stays one
primitive under any nesting of transformations, and the linear ones stay
transposable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Unpack
from weakref import WeakKeyDictionary

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from revmlir.frontend.base.checkpoint_policy import CheckpointOptions
from revmlir.interop import jax_ffi, python_ffi
from revmlir.interop.program import NumpyMap, Program, Signature

_lowerings: WeakKeyDictionary[Program, str] = WeakKeyDictionary()
"""``rv.to_jax(f, lowering=…)`` per program (``jax_ffi.LOWERINGS``)."""


def _run(host: NumpyMap, signature: Signature, lead: tuple[bool, ...], size: int, *arrays: Any) -> list[np.ndarray]:
    """Run ``host`` on numpy arrays, once per index of the leading batch
    axis when there is one."""
    arrays = tuple(np.asarray(a) for a in arrays)
    if not size:
        return host(signature, arrays)

    def row(k: int) -> list[np.ndarray]:
        return [a[k] if mapped else a for a, mapped in zip(arrays, lead)]

    n = len(signature.inputs)
    if host is Signature.cotangent and not any(lead[:n]):
        # cotangents at one point (jacrev): one run of f for all of them
        rows = signature.cotangent_rows(arrays[:n], [row(k)[n:] for k in range(size)])
    else:
        rows = [host(signature, row(k)) for k in range(size)]
    return [np.stack(column) for column in zip(*rows, strict=True)]


def _run_handled(
    host: NumpyMap,
    lead: tuple[bool, ...],
    batched: bool,
    signature: Signature,
    arguments: list[np.ndarray],
    results: list[np.ndarray],
) -> list[np.ndarray]:
    """``_run`` in a Python handler (``python_ffi``), which is registered
    once for every batch size: the size is the buffers' leading axis."""
    sized = [*results, *(a for a, mapped in zip(arguments, lead) if mapped)] if batched else []
    # with no batched buffer there is nothing to write: one run, unbatched
    size = sized[0].shape[0] if sized else 0
    return _run(host, signature, lead, size, *arguments)


def _avals(host: NumpyMap, signature: Signature, size: int) -> list[jax.core.ShapedArray]:
    batch = (size,) if size else ()
    return [jax.core.ShapedArray((*batch, *v.shape), v.dtype) for v in signature.returned(host)]


def _primitive(name: str, host: NumpyMap) -> Primitive:
    """A primitive running ``host``: eagerly on the arrays, under ``jit``
    as a custom call or a call back into Python (module docstring)."""
    primitive = Primitive(name)
    primitive.multiple_results = True

    def impl(*arrays: Any, signature: Signature, lead: tuple[bool, ...], size: int) -> list[jax.Array]:
        return [jnp.asarray(r) for r in _run(host, signature, lead, size, *arrays)]

    def abstract(*avals: Any, signature: Signature, lead: tuple[bool, ...], size: int) -> list[Any]:
        return _avals(host, signature, size)

    def lowered(*arrays: Any, signature: Signature, lead: tuple[bool, ...], size: int) -> Any:
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in _avals(host, signature, size)]
        return jax.pure_callback(partial(_run, host, signature, lead, size), shapes, *arrays, vmap_method="sequential")

    def lowered_on_cpu(*arrays: Any, signature: Signature, lead: tuple[bool, ...], size: int) -> Any:
        if (run := _native(host, signature)) is None:
            # a handler in Python, whose errors read as the native handlers'
            # (``jax.pure_callback``'s are JAX's traceback, logged to stderr too)
            shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in _avals(host, signature, size)]
            batched = size > 0
            run = partial(_run_handled, host, lead, batched)
            return python_ffi.call(signature, (name, lead, batched), run, shapes, *arrays)
        return run(arrays, lead, size)

    primitive.def_impl(impl)
    primitive.def_abstract_eval(abstract)
    mlir.register_lowering(primitive, mlir.lower_fun(lowered, multiple_results=True))
    mlir.register_lowering(primitive, mlir.lower_fun(lowered_on_cpu, multiple_results=True), platform="cpu")
    batching.primitive_batchers[primitive] = partial(_batch, primitive, host)
    return primitive


def _native(host: NumpyMap, signature: Signature) -> Callable[..., list[Any]] | None:
    """How ``host`` runs as custom calls, or None for the callback; with
    ``lowering="ffi"`` the reason it cannot is an error."""
    lowering = _lowerings.get(signature.program, "auto")
    if lowering == "callback":
        return None
    if (reason := jax_ffi.unsupported(signature)) is None:
        targets = jax_ffi.native_targets(signature)
        if host is Signature.call:
            return partial(jax_ffi.call, targets)
        if host is Signature.tangent and (tangent := targets.tangent) is not None:
            return partial(jax_ffi.tangent, tangent, len(signature.differentiable_outputs))
        if host is Signature.cotangent and (adjoint := targets.adjoint) is not None:
            return partial(jax_ffi.cotangent, targets, adjoint)
        reason = targets.underived
    if lowering == "ffi":
        raise NotImplementedError(
            f"{signature.program.api}({signature.name}, lowering='ffi'): no custom call, {reason}"
        )
    return None


def _batch(
    primitive: Primitive,
    host: NumpyMap,
    args: Sequence[Any],
    dims: Sequence[Any],
    *,
    signature: Signature,
    lead: tuple[bool, ...],
    size: int,
) -> tuple[list[Any], list[int]]:
    """``vmap`` of a primitive: the mapped axis becomes (part of) the
    leading batch axis.  Already batched operands and the newly mapped
    ones are broadcast to ``(batch, size, …)`` and merged into one axis.
    An empty batch runs nothing: merged, it would read as no batch
    (``size=0``)."""
    batch = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    if not batch:
        empty = [jnp.zeros((0, *v.shape), v.dtype) for v in _avals(host, signature, size)]
        return empty, [0] * len(empty)
    merged, mapped = [], []
    for a, d, had in zip(args, dims, lead, strict=True):
        if d is None and not had:
            merged.append(a)
            mapped.append(False)
            continue
        if d is None:
            a = jnp.broadcast_to(a, (batch, *a.shape))
        else:
            a = jnp.moveaxis(a, d, 0)
            if size and not had:
                a = jnp.broadcast_to(a[:, None], (batch, size, *a.shape[1:]))
        merged.append(a.reshape((batch * size, *a.shape[2:])) if size else a)
        mapped.append(True)
    outs = primitive.bind(*merged, signature=signature, lead=tuple(mapped), size=batch * max(size, 1))
    if size:
        outs = [o.reshape((batch, size, *o.shape[1:])) for o in outs]
    return outs, [0] * len(outs)


def _zero(value: Any) -> ad.Zero:
    """The symbolic zero tangent of ``value``."""
    return ad.Zero(jax.typeof(value).to_tangent_aval())


def _call_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    signature: Signature,
    lead: tuple[bool, ...],
    size: int,
) -> tuple[list[Any], list[Any]]:
    outs = call_p.bind(*primals, signature=signature, lead=lead, size=size)
    inputs = signature.differentiable_inputs
    zero = [_zero(o) for o in outs]
    if all(type(tangents[i]) is ad.Zero for i in inputs):
        return outs, zero
    dots = [ad.instantiate_zeros(tangents[i]) for i in inputs]
    lead_dots = (*lead, *(lead[i] for i in inputs))
    found = iter(tangent_p.bind(*primals, *dots, signature=signature, lead=lead_dots, size=size))
    for i in signature.differentiable_outputs:
        zero[i] = next(found)
    return outs, zero


def _linear_jvp(
    primitive: Primitive,
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    signature: Signature,
    lead: tuple[bool, ...],
    size: int,
) -> tuple[list[Any], list[Any]]:
    """A linear primitive's JVP along its linear operands: itself.  Along
    the point it is evaluated at it would need second derivatives."""
    n = len(signature.inputs)
    if any(type(t) is not ad.Zero for t in tangents[:n]):
        raise signature.second_derivatives()
    outs = primitive.bind(*primals, signature=signature, lead=lead, size=size)
    if all(type(t) is ad.Zero for t in tangents[n:]):
        return outs, [_zero(o) for o in outs]
    dots = [ad.instantiate_zeros(t) for t in tangents[n:]]
    return outs, primitive.bind(*primals[:n], *dots, signature=signature, lead=lead, size=size)


def _transpose(
    into: Primitive,
    cts: Sequence[Any],
    *operands: Any,
    signature: Signature,
    lead: tuple[bool, ...],
    size: int,
) -> list[Any]:
    """The transpose of a linear primitive (``tangent`` ↔ ``cotangent``):
    the point stays, the cotangents of its results go in, the cotangents of
    its linear operands come out.  A linear operand that was not batched
    gets the sum over the batch."""
    n = len(signature.inputs)
    primals = operands[:n]
    if any(ad.is_undefined_primal(p) for p in primals):
        raise signature.second_derivatives()
    cts = [ad.instantiate_zeros(c) for c in cts]
    lead_cts = (*lead[:n], *[bool(size)] * len(cts))
    found = into.bind(*primals, *cts, signature=signature, lead=lead_cts, size=size)
    summed = [jnp.sum(c, axis=0) if size and not mapped else c for c, mapped in zip(found, lead[n:], strict=True)]
    return [*[None] * n, *summed]


call_p = _primitive("revmlir_call", Signature.call)
tangent_p = _primitive("revmlir_tangent", Signature.tangent)
cotangent_p = _primitive("revmlir_cotangent", Signature.cotangent)


ad.primitive_jvps[call_p] = _call_jvp
ad.primitive_jvps[tangent_p] = partial(_linear_jvp, tangent_p)
ad.primitive_jvps[cotangent_p] = partial(_linear_jvp, cotangent_p)
ad.primitive_transposes[tangent_p] = partial(_transpose, cotangent_p)
ad.primitive_transposes[cotangent_p] = partial(_transpose, tangent_p)


def to_jax(
    function: Any, lowering: str = "auto", **checkpointing: Unpack[CheckpointOptions]
) -> Callable[..., tuple[jax.Array, ...]]:
    """``f`` (``@rv.reversible`` or ``@rv.ordinary``) as a JAX-traceable
    function of the same arguments (arrays or numbers), returning what
    ``f`` returns as a tuple of arrays: for a reversible function every
    argument updated, for an ordinary one its results and then its
    arguments.  It works under ``jax.jit``, ``jax.vmap``, and forward and
    reverse differentiation, whose derivatives come from revmlir's tangent
    and adjoint programs (docs/python.md, "Inside JAX and PyTorch").
    ``lowering`` picks how ``jit`` calls revmlir on the CPU: ``"auto"``
    (custom calls where they apply, else a callback), ``"ffi"`` (custom
    calls, or an error saying why not) or ``"callback"``.  ``checkpoint=``
    and its options (an ``@rv.ordinary`` ``f``) checkpoint the gradient
    programs as ``rv.gradient``'s; a gradient then calls back into Python."""
    if lowering not in jax_ffi.LOWERINGS:
        raise ValueError(f"rv.to_jax: lowering must be one of {', '.join(jax_ffi.LOWERINGS)}, got {lowering!r}")
    program = Program(function, "rv.to_jax", checkpointing)
    _lowerings[program] = lowering

    def traced(*args: Any, **kwargs: Any) -> tuple[jax.Array, ...]:
        arrays = [jnp.asarray(a) for a in program.positional(args, kwargs)]
        signature = program.signature([a.shape for a in arrays], [a.dtype for a in arrays])
        return tuple(call_p.bind(*arrays, signature=signature, lead=(False,) * len(arrays), size=0))

    traced.__name__ = traced.__qualname__ = function.__name__
    traced.__doc__ = function.__doc__
    return traced
