"""``rv.to_torch(f)`` on CUDA tensors, on a GPU: ``f``'s kernel forward
and its adjoint's kernel backward, against the CPU path, PyTorch's own
derivatives of the same math and central differences
(``tests/test_interop_torch_kernels.py`` checks the route on the CPU)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import revmlir as rv

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.torch]


@rv.reversible
def log_sin(y, x, k):
    for i in rv.prange(len(x)):
        y[i] += math.log(x[i]) * math.sin(k * x[i])


def loss(outputs):
    return torch.sum(outputs[0] * outputs[0]) + torch.sum(torch.cos(outputs[1]))


@pytest.fixture(scope="module")
def cuda():
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA device")
    return torch.device("cuda")


def test_forward_and_backward_on_cuda_tensors(cuda):
    rng = np.random.default_rng(7)
    y = torch.from_numpy(rng.normal(size=1000))
    x = torch.from_numpy(rng.uniform(0.5, 2.0, size=1000))
    f = rv.to_torch(log_sin)
    yc, xc = y.to(cuda).requires_grad_(), x.to(cuda).requires_grad_()
    out = f(yc, xc, 3)
    assert all(o.device.type == "cuda" for o in out[:2])
    expected = f(y.clone().requires_grad_(), x.clone().requires_grad_(), 3)
    for found, reference in zip(out, expected):
        torch.testing.assert_close(found.cpu(), reference.detach(), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(yc.detach().cpu(), y, rtol=0, atol=0)

    gy, gx = (g.cpu() for g in torch.autograd.grad(loss(out), (yc, xc)))
    yr, xr = y.clone().requires_grad_(), x.clone().requires_grad_()
    reference = torch.autograd.grad(loss((yr + torch.log(xr) * torch.sin(3 * xr), xr)), (yr, xr))
    torch.testing.assert_close(gy, reference[0], rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(gx, reference[1], rtol=1e-12, atol=1e-14)
    rv.cuda.synchronize()

    direction = torch.from_numpy(rng.normal(size=1000))
    h = 1e-6

    def at(t):
        return float(loss(f(y.to(cuda), (x + t * direction).to(cuda), 3)))

    slope = (at(h) - at(-h)) / (2 * h)
    assert math.isclose(float(gx @ direction), slope, rel_tol=1e-6)
