"""``rv.to_torch(f)``: a revmlir function as a differentiable PyTorch
callable over CPU tensors (CUDA tensors take ``torch_kernels``).

It is a ``torch.autograd.Function`` whose ``forward`` runs ``f``, whose
``backward`` runs the pullback (``rv.vjp``) and whose ``jvp`` runs the
tangent program (``rv.jvp``), so ``torch.autograd.grad`` and forward-mode AD
(``torch.autograd.forward_ad``, ``torch.func.jvp``) use revmlir's own
derivative programs.  Tensors reach revmlir as numpy views of their memory
(``Tensor.numpy``) and results come back as tensors over revmlir's arrays
(``torch.from_numpy``): nothing is copied except the arrays ``f`` writes,
which a call must leave alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Unpack

import numpy as np
import torch

from revmlir.frontend.base.checkpoint_policy import CheckpointOptions
from revmlir.interop.program import NumpyMap, Program, Signature
from revmlir.interop.torch_kernels import KernelCall, KernelRoute, cuda_launch


def _tensors(arrays: Sequence[np.ndarray]) -> tuple[torch.Tensor, ...]:
    # from_numpy wants a writable buffer: revmlir's results are fresh arrays,
    # but a 0-d one may be a read-only view
    return tuple(torch.from_numpy(a if a.flags.writeable else a.copy()) for a in arrays)


def _numpy_function(name: str, host: NumpyMap) -> type[torch.autograd.Function]:
    """An autograd function running ``host`` on numpy views of its tensors,
    with no derivative of its own.  ``torch.func`` transforms see only
    ``apply``: they hand ``forward`` plain tensors, which is why derivatives
    are such functions (a ``backward`` or ``jvp`` cannot view the memory of
    the wrapped tensors it gets).  ``vmap`` loops over the batch; an empty
    one runs nothing."""

    def forward(signature: Signature, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        arrays = [t.detach().numpy() for t in tensors]
        # an argument f does not write comes back as it went in: a tensor
        # of its own, so that changing the result leaves the argument alone
        results = host(signature, arrays)
        return _tensors([np.array(r) if any(r is a for a in arrays) else r for r in results])

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.signature = inputs[0]

    def backward(ctx: Any, *grads: Any) -> Any:
        raise ctx.signature.second_derivatives()

    def jvp(ctx: Any, *tangents: Any) -> Any:
        raise ctx.signature.second_derivatives()

    def vmap(info: Any, in_dims: tuple[Any, ...], signature: Signature, *tensors: torch.Tensor) -> Any:
        if not info.batch_size:
            empty = _tensors([np.empty((0, *v.shape), v.dtype) for v in signature.returned(host)])
            return empty, (0,) * len(empty)
        rows = [
            cls.apply(signature, *[t if d is None else t.select(d, k) for t, d in zip(tensors, in_dims[1:])])
            for k in range(info.batch_size)
        ]
        return tuple(torch.stack(column) for column in zip(*rows)), (0,) * len(rows[0])

    body = {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context),
        "backward": staticmethod(backward),
        "jvp": staticmethod(jvp),
        "vmap": staticmethod(vmap),
    }
    cls: type[torch.autograd.Function] = type(name, (torch.autograd.Function,), body)
    return cls


@cache
def _function() -> type[torch.autograd.Function]:
    """The autograd function of ``f``'s calls: ``backward`` and ``jvp``
    apply the pullback and the tangent program as functions of their own."""
    Tangent = _numpy_function("RevmlirTangent", Signature.tangent)
    Cotangent = _numpy_function("RevmlirCotangent", Signature.cotangent)
    Call = _numpy_function("RevmlirCall", Signature.call)

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: tuple[torch.Tensor, ...]) -> None:
        signature, *tensors = inputs
        ctx.signature = signature
        ctx.save_for_backward(*tensors)
        ctx.save_for_forward(*tensors)
        ctx.mark_non_differentiable(
            *[o for o, v in zip(output, signature.outputs, strict=True) if not v.differentiable]
        )

    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[Any, ...]:
        signature: Signature = ctx.signature
        cts = [grads[i] for i in signature.differentiable_outputs]
        found = iter(Cotangent.apply(signature, *ctx.saved_tensors, *cts))
        inputs = set(signature.differentiable_inputs)
        return (None, *[next(found) if i in inputs else None for i in range(len(signature.inputs))])

    def jvp(ctx: Any, _: Any, *tangents: torch.Tensor | None) -> tuple[Any, ...]:
        signature: Signature = ctx.signature
        dots = [
            torch.zeros(v.shape, dtype=getattr(torch, v.dtype.name)) if tangents[i] is None else tangents[i]
            for i, v in enumerate(signature.inputs)
            if v.differentiable
        ]
        found = iter(Tangent.apply(signature, *ctx.saved_tensors, *dots))
        return tuple(next(found) if v.differentiable else None for v in signature.outputs)

    Call.setup_context = staticmethod(setup_context)
    Call.backward = staticmethod(backward)
    Call.jvp = staticmethod(jvp)
    return Call


def _tensor(value: Any, program: Program, index: int) -> torch.Tensor:
    """An argument as a tensor: numbers become 0-d CPU tensors of the
    dtype revmlir gives them (a float is an f64, not torch's default)."""
    tensor = value if isinstance(value, torch.Tensor) else torch.from_numpy(np.asarray(value))
    if tensor.device.type not in ("cpu", "cuda"):
        problem = f"is on {tensor.device}; rv.to_torch runs on CPU and CUDA tensors"
    elif tensor.dtype not in _NUMPY:
        problem = f"has dtype {tensor.dtype}; supported: {', '.join(str(d) for d in _NUMPY)}"
    else:
        return tensor
    names = program.function.parameters
    name = names[index] if index < len(names) else f"#{index}"
    raise TypeError(f"{program.api}: argument '{name}' {problem}")


_NUMPY = {
    torch.float64: np.dtype(np.float64),
    torch.float32: np.dtype(np.float32),
    torch.int64: np.dtype(np.int64),
    torch.int32: np.dtype(np.int32),
    torch.bool: np.dtype(np.bool_),
}
"""The dtypes revmlir takes, and their numpy names."""


def to_torch(function: Any, **checkpointing: Unpack[CheckpointOptions]) -> Callable[..., tuple[torch.Tensor, ...]]:
    """``f`` (``@rv.reversible`` or ``@rv.ordinary``) as a PyTorch callable
    of the same arguments (CPU tensors or numbers), returning what ``f``
    returns as a tuple of tensors: for a reversible function every argument
    updated, for an ordinary one its results and then its arguments.
    ``backward`` and forward-mode ``jvp`` come from revmlir's adjoint and
    tangent programs (docs/python.md, "Inside JAX and PyTorch").  Arrays on
    a GPU go to ``f``'s CUDA kernel and ``backward`` to its adjoint's
    (``revmlir.interop.torch_kernels``).  ``checkpoint=`` and its options
    (an ``@rv.ordinary`` ``f``) checkpoint ``backward`` as ``rv.gradient``."""
    program = Program(function, "rv.to_torch", checkpointing)
    apply = _function().apply

    def call(*args: Any, **kwargs: Any) -> tuple[torch.Tensor, ...]:
        tensors = [_tensor(a, program, i) for i, a in enumerate(program.positional(args, kwargs))]
        signature = program.signature([tuple(t.shape) for t in tensors], [_NUMPY[t.dtype] for t in tensors])
        contiguous = [t.contiguous() for t in tensors]
        if any(t.device.type == "cuda" for t in tensors):
            return tuple(KernelCall.apply(KernelRoute.of(signature, cuda_launch), *contiguous))
        return tuple(apply(signature, *contiguous))

    call.__name__ = call.__qualname__ = function.__name__
    call.__doc__ = function.__doc__
    return call
