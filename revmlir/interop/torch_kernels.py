"""``rv.to_torch(f)`` on CUDA tensors: ``f``'s GPU kernel forward, its
adjoint's kernel backward.

A call whose array tensors are on a GPU launches ``rv.cuda.kernel(f)`` on
them in place (``f`` is a reversible function whose body is one
``rv.prange`` loop, docs/gpu.md), and its ``backward`` launches
``rv.cuda.kernel(rv.adjoint(f))`` on ``f``'s outputs and the output
cotangents; both are queued on PyTorch's current stream.  Autograd keeps
the tensors it saved and the caller keeps its arguments, so each kernel
runs on clones of the arrays it writes, and reads the others where they
are.

``KernelRoute`` makes those decisions (which kernel, on which arguments,
which of them cloned, what comes back) for any tensors; what launches a
kernel is given to it (``Launch``).  ``cuda_launch`` is the GPU's; a
launch that runs the same function natively on CPU tensors (the loop in
order, as a kernel's grid may) takes the same route, which is how the
routing is tested without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from revmlir.frontend.base.derived import AdjointFunction, adjoint
from revmlir.frontend.reversible_code.functions import ReversibleFunction
from revmlir.gpu.api import kernel
from revmlir.interop.program import Signature

Launch = Callable[[ReversibleFunction | AdjointFunction, list[Any]], None]
"""Runs a function (``f`` or ``rv.adjoint(f)``) on arguments it updates in
place: arrays as tensors, scalars as Python numbers."""


def cuda_launch(function: ReversibleFunction | AdjointFunction, arguments: list[Any]) -> None:
    """``function``'s kernel, queued on PyTorch's current stream (a failed
    check raises at ``rv.cuda.synchronize()``)."""
    kernel(function)(*arguments, stream=torch.cuda.current_stream())


@dataclass(frozen=True)
class KernelRoute:
    """How ``rv.to_torch(f)`` runs ``f`` and its adjoint as kernels for
    one signature."""

    signature: Signature
    function: ReversibleFunction
    launch: Launch

    @staticmethod
    def of(signature: Signature, launch: Launch) -> KernelRoute:
        function = signature.program.function
        if not isinstance(function, ReversibleFunction):
            raise TypeError(
                f"{signature.program.api}({signature.name}): CUDA tensors run f's GPU kernel "
                "(rv.cuda.kernel), which an @rv.ordinary function has not; pass CPU tensors"
            )
        return KernelRoute(signature, function, launch)

    def written(self, function: ReversibleFunction | AdjointFunction, arguments: Sequence[Any]) -> frozenset[int]:
        """The arguments ``function``'s kernel writes; compiling it (once)
        reports, located in ``f``, why ``f`` cannot be a kernel."""
        return kernel(function).specialise(*arguments).written

    def forward(self, tensors: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """``f``'s outputs: every argument after the kernel, a tensor of its
        own.  The kernel runs on a clone of each array it writes and reads
        the others in place (their outputs are clones after it); a scalar
        goes in as a number and comes back unchanged, as a kernel leaves
        it."""
        written = self.written(self.function, self.signature.examples)
        arguments = [t.detach().clone() if i in written else _argument(t) for i, t in enumerate(tensors)]
        self.launch(self.function, arguments)
        return tuple(
            a if i in written else t.detach().clone() for i, (a, t) in enumerate(zip(arguments, tensors, strict=True))
        )

    def backward(self, outputs: Sequence[torch.Tensor], cotangents: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The cotangents of the float arguments: ``rv.adjoint(f)``'s kernel
        on ``f``'s outputs (clones of those it writes back to the inputs)
        and one gradient array per float argument, which starts as a clone
        of its output's cotangent and ends as its input's."""
        signature = self.signature
        carried = signature.differentiable_inputs
        for i in carried:
            if not signature.inputs[i].shape:
                name = signature.program.function.parameters[i]
                raise NotImplementedError(
                    f"{signature.program.api}({signature.name}): the gradient of scalar argument '{name}' "
                    "is not a kernel yet (an adjoint kernel returns nothing, docs/gpu.md); pass CPU tensors"
                )
        gradient = adjoint(self.function)
        examples = signature.examples
        written = self.written(gradient, [*examples, *(examples[i] for i in carried)])
        state = [o.detach().clone() if i in written else _argument(o) for i, o in enumerate(outputs)]
        gradients = [cotangents[i].detach().clone(memory_format=torch.contiguous_format) for i in carried]
        self.launch(gradient, [*state, *gradients])
        return gradients


def _argument(tensor: torch.Tensor) -> Any:
    """A kernel's argument for a tensor it only reads: the array itself
    (detached: a tensor that requires grad shows no memory), a scalar's
    number."""
    return tensor.detach() if tensor.dim() else tensor.item()


class KernelCall(torch.autograd.Function):
    """A call of ``f`` through its ``KernelRoute``: ``backward`` runs the
    route's adjoint on the outputs it saved."""

    @staticmethod
    def forward(ctx: Any, route: KernelRoute, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outputs = route.forward(tensors)
        ctx.route = route
        ctx.save_for_backward(*outputs)
        ctx.mark_non_differentiable(
            *[o for o, v in zip(outputs, route.signature.outputs, strict=True) if not v.differentiable]
        )
        return outputs

    @staticmethod
    def backward(ctx: Any, *cotangents: torch.Tensor) -> tuple[Any, ...]:
        route: KernelRoute = ctx.route
        found = iter(route.backward(ctx.saved_tensors, cotangents))
        carried = set(route.signature.differentiable_inputs)
        return (None, *[next(found) if i in carried else None for i in range(len(route.signature.inputs))])

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> Any:
        signature: Signature = ctx.route.signature
        raise NotImplementedError(
            f"{signature.program.api}({signature.name}): forward mode on CUDA tensors needs the tangent "
            "program as a kernel, which rv.cuda does not make; use reverse mode or CPU tensors"
        )
