"""What the tests of ``rv.to_jax`` compare with: results and derivatives
to 1e-10 relative, and the scalar loss of ``energy``."""

from __future__ import annotations

import jax
import numpy as np

RTOL = 1e-10


def close(found, expected) -> None:
    for f, e in zip(jax.tree.leaves(found), jax.tree.leaves(expected), strict=True):
        assert np.shape(f) == np.shape(e)
        np.testing.assert_allclose(np.asarray(f), np.asarray(e), rtol=RTOL, atol=1e-13)


def loss(f):
    """The scalar loss of energy: e after the call, from x and w."""
    return lambda x, w: f(0.25, x, w)[0]
