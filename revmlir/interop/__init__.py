"""revmlir functions inside array frameworks: ``rv.to_jax`` and
``rv.to_torch`` (docs/python.md, "Inside JAX and PyTorch").  Each binding
imports its framework when it is first used, so revmlir runs without them."""

from typing import Any, Unpack

from revmlir.frontend.base.checkpoint_policy import CheckpointOptions


def to_jax(function: Any, lowering: str = "auto", **checkpointing: Unpack[CheckpointOptions]) -> Any:
    """See ``revmlir.interop.jax.to_jax``."""
    from revmlir.interop.jax import to_jax

    return to_jax(function, lowering, **checkpointing)


def to_torch(function: Any, **checkpointing: Unpack[CheckpointOptions]) -> Any:
    """See ``revmlir.interop.torch.to_torch``."""
    from revmlir.interop.torch import to_torch

    return to_torch(function, **checkpointing)
