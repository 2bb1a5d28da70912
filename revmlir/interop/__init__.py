"""revmlir functions inside array frameworks: ``rv.to_jax`` and
``rv.to_torch`` (docs/python.md, "Inside JAX and PyTorch").  Each binding
imports its framework when it is first used, so revmlir runs without them;
without it, the binding says what to install."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Unpack

from revmlir.frontend.base.checkpoint_policy import CheckpointOptions


@contextmanager
def _needs(binding: str, framework: str, module: str, install: str) -> Iterator[None]:
    """A missing ``module`` named as the binding's requirement, not as a
    bare ``No module named ...`` from inside revmlir."""
    try:
        yield
    except ModuleNotFoundError as error:
        if error.name != module:
            raise
        raise ModuleNotFoundError(f"{binding} needs {framework}: {install}", name=module) from error


def to_jax(function: Any, lowering: str = "auto", **checkpointing: Unpack[CheckpointOptions]) -> Any:
    """See ``revmlir.interop.jax.to_jax``."""
    with _needs("rv.to_jax", "JAX", "jax", "pip install jax"):
        from revmlir.interop.jax import to_jax

    return to_jax(function, lowering, **checkpointing)


def to_torch(function: Any, **checkpointing: Unpack[CheckpointOptions]) -> Any:
    """See ``revmlir.interop.torch.to_torch``."""
    with _needs("rv.to_torch", "PyTorch", "torch", "pip install 'revmlir[torch]'"):
        from revmlir.interop.torch import to_torch

    return to_torch(function, **checkpointing)
