"""ADBench's bundle-adjustment Jacobian blocks on the GPU, one thread per
observation (``adbench_ba.py`` holds the residuals and their blocks).

``adbench_ba.ba_jacobian`` runs the observations in turn and keeps the
blocks' gradient shadows (``g_cams0``, ``g_X0``, …) as workspaces shaped
like ``cams`` and ``X`` that every observation borrows: in parallel they
would race.  Here each iteration copies its camera and point into ancilla
arrays of its own and differentiates those, so everything it writes is
private: the shadows, a ``(1, 2, 15)`` block that ``reproj_jacobian_block``
fills and that is swapped into ``J[i]``, and the weight derivative, swapped
into ``wJ[i]``.  Called directly, the function runs on the CPU.
"""

import numpy as np

import revmlir as rv
from adbench_ba import reproj_jacobian_block, weight_jacobian
from adbench_data import BAInstance


@rv.reversible
def ba_jacobian_blocks(J, wJ, cams, X, w, obs, feats):
    """``J (p, 2, 15)`` and ``wJ (p,)``, zero on entry, receive the
    per-observation blocks of ``adbench_ba.ba_jacobian``."""
    for i in rv.prange(obs.shape[0]):
        with rv.routine() as r:
            cam = rv.zeros((1, 11))
            point = rv.zeros((1, 3))
            for j in range(11):
                cam[0, j] += cams[obs[i, 0], j]
            for j in range(3):
                point[0, j] += X[obs[i, 1], j]
        g_cam0 = rv.zeros((1, 11))
        g_point0 = rv.zeros((1, 3))
        g_cam1 = rv.zeros((1, 11))
        g_point1 = rv.zeros((1, 3))
        block = rv.zeros((1, 2, 15))
        reproj_jacobian_block(
            block, 0, cam, 0, point, 0, w[i], feats[i, 0], feats[i, 1], g_cam0, g_point0, g_cam1, g_point1
        )
        for k in range(2):
            for j in range(15):
                J[i, k, j], block[0, k, j] = block[0, k, j], J[i, k, j]
        weight = rv.zeros(1)
        weight_jacobian(weight, 0, w[i])
        wJ[i], weight[0] = weight[0], wJ[i]
        rv.free(weight)
        rv.free(block)
        rv.free(g_point1)
        rv.free(g_cam1)
        rv.free(g_point0)
        rv.free(g_cam0)
        ~r


def with_observations(problem: BAInstance, p: int) -> BAInstance:
    """``problem``'s cameras and points seen by ``p`` observations,
    replicated as ``read_ba`` replicates a file's (for timing at any size)."""
    i = np.arange(p)
    obs = np.stack([i % len(problem.cams), i % len(problem.X)], axis=1)
    return BAInstance(problem.cams, problem.X, np.full(p, problem.w[0]), obs, np.tile(problem.feats[0], (p, 1)))


if __name__ == "__main__":
    from adbench_data import read_ba
    from gpu_elementwise import run

    problem = read_ba("ba/ba1_n49_m7776_p31843.txt")
    p = len(problem.w)
    J, wJ = np.zeros((p, 2, 15)), np.zeros(p)
    run(ba_jacobian_blocks, J, wJ, problem.cams, problem.X, problem.w, problem.obs, problem.feats)
    print("first block:", J[0], wJ[0])
