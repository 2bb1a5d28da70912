"""ADBench's GMM and BA input files, read and replicated as ADBench's C++
reader does (microsoft/ADBench, ``src/cpp/shared/utils.cpp``:
``read_gmm_instance`` and ``read_ba_instance``), so that the reversible
programs and the references in the tests see ADBench's exact problem sizes.

The files ship with the repository in ``data/adbench`` (MIT licence and
provenance in ``SOURCES.md`` there); ``REVMLIR_ADBENCH_DATA`` points the
loader at another folder of the same layout.

Arrays are returned with shapes rather than ADBench's flat buffers (``means``
is ``(k, d)`` where ADBench indexes ``means[ik * d + id]``); the element order
is the same, so ``means.reshape(-1)`` is ADBench's buffer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA_DIR = Path(
    os.environ.get(
        "REVMLIR_ADBENCH_DATA",
        Path(__file__).resolve().parents[2] / "data" / "adbench",
    )
)
BA_CAMERA_PARAMETERS = 11


class MissingDataError(FileNotFoundError):
    """An ADBench data file is not where the loader looks for it."""


def data_path(relative: str) -> Path:
    """The path of a data file, or an error that says where it was expected
    and where the files come from."""
    path = DATA_DIR / relative
    if not path.is_file():
        raise MissingDataError(
            f"ADBench data file not found: {path}. The repository ships the "
            "ADBench inputs in data/adbench (see SOURCES.md there for where "
            "they come from); REVMLIR_ADBENCH_DATA must name a folder holding "
            "gmm/ and ba/ in the same layout."
        )
    return path


@dataclass(frozen=True)
class GMMInstance:
    """One GMM problem: ``alphas (k,)``, ``means (k, d)``, ``icf (k, d(d+1)/2)``
    (per component: the ``d`` log-diagonal entries of Q, then its strictly
    lower triangle column by column), points ``x (n, d)`` and the Wishart
    prior's ``gamma`` and ``m`` (an integer, as ADBench's ``Wishart.m``)."""

    alphas: np.ndarray
    means: np.ndarray
    icf: np.ndarray
    x: np.ndarray
    gamma: float
    m: int

    @property
    def d(self) -> int:
        return self.means.shape[1]

    @property
    def k(self) -> int:
        return self.means.shape[0]

    @property
    def n(self) -> int:
        return self.x.shape[0]


@dataclass(frozen=True)
class BAInstance:
    """One BA problem after ADBench's replication: ``cams (n, 11)``
    (rotation 0–2, centre 3–5, focal length 6, principal point 7–8, radial
    distortion 9–10), ``X (m, 3)``, ``w (p,)``, ``obs (p, 2)`` as
    ``(camera, point)`` and ``feats (p, 2)``."""

    cams: np.ndarray
    X: np.ndarray
    w: np.ndarray
    obs: np.ndarray
    feats: np.ndarray


def _tokens(path: Path) -> list[str]:
    return path.read_text().split()


def read_gmm(relative: str) -> GMMInstance:
    """A GMM file: ``d k n``, k alphas, k mean rows, k icf rows, the points,
    then ``gamma m``.  ADBench's reader has a ``replicate_point`` mode in
    which the file holds one point standing for all n; a file holding a
    single point for ``n > 1`` is read that way, a file holding all n points
    (every file of the ADBench data set) as it is."""
    path = data_path(relative)
    tokens = _tokens(path)
    d, k, n = (int(t) for t in tokens[:3])
    icf_size = d * (d + 1) // 2
    header = k + k * d + k * icf_size
    values = np.array(tokens[3:], dtype=float)
    point_values = len(values) - header - 2
    if point_values == n * d:
        points = n
    elif point_values == d:
        points = 1
    else:
        raise ValueError(
            f"{path}: expected {n} points of dimension {d} (or one point to "
            f"replicate), found {point_values} point values"
        )
    alphas = values[:k].copy()
    means = values[k : k + k * d].reshape(k, d).copy()
    icf = values[k + k * d : header].reshape(k, icf_size).copy()
    x = np.ascontiguousarray(np.broadcast_to(values[header : header + points * d].reshape(points, d), (n, d)))
    gamma, m = values[-2], tokens[-1]
    return GMMInstance(alphas, means, icf, x, float(gamma), int(m))


def read_ba(relative: str) -> BAInstance:
    """A BA file: ``n m p``, one camera, one point, one weight, one feature;
    replicated to n cameras, m points, p weights and p features, with
    observation ``i`` seeing point ``i % m`` from camera ``i % n``."""
    path = data_path(relative)
    tokens = _tokens(path)
    n, m, p = (int(t) for t in tokens[:3])
    values = np.array(tokens[3:], dtype=float)
    expected = BA_CAMERA_PARAMETERS + 3 + 1 + 2
    if len(values) != expected:
        raise ValueError(f"{path}: expected {expected} values after the counts, found {len(values)}")
    camera, point = values[:BA_CAMERA_PARAMETERS], values[BA_CAMERA_PARAMETERS : BA_CAMERA_PARAMETERS + 3]
    weight, feature = values[BA_CAMERA_PARAMETERS + 3], values[BA_CAMERA_PARAMETERS + 4 :]
    observations = np.arange(p)
    return BAInstance(
        cams=np.tile(camera, (n, 1)),
        X=np.tile(point, (m, 1)),
        w=np.full(p, weight),
        obs=np.stack([observations % n, observations % m], axis=1),
        feats=np.tile(feature, (p, 1)),
    )
