"""``rv.to_torch(f)``'s route for CUDA tensors (``KernelRoute``), taken by
CPU tensors with a launch that runs the kernels' functions natively: which
function runs, on which arrays (clones of those it writes), and the
derivatives ``torch.autograd`` gets from it, against PyTorch's own.
``tests/test_gpu_torch.py`` takes the route on a GPU."""

from __future__ import annotations

import math

import numpy as np
import pytest

import revmlir as rv
from revmlir.frontend.base.derived import AdjointFunction

torch = pytest.importorskip("torch")
from revmlir.interop.program import Program  # noqa: E402
from revmlir.interop.torch_kernels import KernelCall, KernelRoute  # noqa: E402

pytestmark = [
    pytest.mark.torch,
    # forward AD's first use scripts a helper, which torch itself deprecates
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
]


@rv.reversible
def log_sin(y, x, k):
    for i in rv.prange(len(x)):
        y[i] += math.log(x[i]) * math.sin(k * x[i])


def log_sin_torch(y, x, k):
    return y + torch.log(x) * torch.sin(k * x), x


@rv.reversible
def serial(y, x):
    for i in range(len(x)):
        y[i] += math.sin(x[i])


@rv.reversible
def scaled(y, x, w):
    for i in rv.prange(len(x)):
        y[i] += w * x[i]


@rv.ordinary
def total(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


def route(function, *tensors, launched=None):
    """The route of these tensors' signature, launching natively on CPU
    tensors and recording each launch."""
    signature = Program(function, "rv.to_torch", {}).signature(
        [tuple(t.shape) for t in tensors], [t.detach().numpy().dtype for t in tensors]
    )

    def launch(function, arguments):
        if launched is not None:
            launched.append((function, list(arguments)))
        function(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in arguments])

    return KernelRoute.of(signature, launch)


def test_kernels_run_on_clones_of_what_they_write():
    """Forward runs ``f`` on a clone of ``y`` and on ``x`` in place;
    backward runs ``rv.adjoint(f)`` on a clone of the saved ``y`` and on the
    saved ``x``, with gradient arrays cloned from the cotangents.  The
    caller's arrays and the saved outputs stay, so a second backward gives
    the same gradients; both agree with PyTorch's derivatives."""
    rng = np.random.default_rng(5)
    y = torch.from_numpy(rng.normal(size=6)).requires_grad_()
    x = torch.from_numpy(rng.uniform(0.5, 2.0, size=6)).requires_grad_()
    k = torch.tensor(3, dtype=torch.int64)
    before = y.detach().clone()
    launched = []
    out = KernelCall.apply(route(log_sin, y, x, k, launched=launched), y, x, k)
    expected = log_sin_torch(y, x, 3)
    for found, reference in zip(out, expected):
        torch.testing.assert_close(found, reference, rtol=1e-12, atol=0)
    assert torch.equal(out[2], k) and out[2] is not k
    torch.testing.assert_close(y.detach(), before, rtol=0, atol=0)
    ((function, arguments),) = launched
    assert function is log_sin
    assert arguments[0].data_ptr() != y.data_ptr() and arguments[1].data_ptr() == x.data_ptr() and arguments[2] == 3

    def loss(outputs):
        return torch.sum(outputs[0] * outputs[0]) + torch.sum(torch.cos(outputs[1]))

    first = torch.autograd.grad(loss(out), (y, x), retain_graph=True)
    second = torch.autograd.grad(loss(out), (y, x))
    reference = torch.autograd.grad(loss(expected), (y, x))
    for a, b, r in zip(first, second, reference):
        torch.testing.assert_close(a, r, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(b, a, rtol=0, atol=0)
    function, arguments = launched[1]
    assert isinstance(function, AdjointFunction) and function.function is log_sin
    assert len(arguments) == 5
    assert arguments[0].data_ptr() != out[0].data_ptr() and arguments[1].data_ptr() == out[1].data_ptr()


def test_what_cannot_be_a_kernel():
    """The located error of the kernel compiler, an ordinary function, the
    gradient of a scalar and forward mode are clear errors."""
    y, x = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    with pytest.raises(
        rv.ReversibleSyntaxError, match=r"test_interop_torch_kernels.py:\d+:\d+: serial is not a kernel: it has no"
    ):
        KernelCall.apply(route(serial, y, x), y, x)
    with pytest.raises(TypeError, match=r"which an @rv.ordinary function has not"):
        route(total, x)
    w = torch.tensor(2.0, dtype=torch.float64)
    with pytest.raises(NotImplementedError, match=r"the gradient of scalar argument 'w' is not a kernel yet"):
        route(scaled, y, x, w).backward([], [])
    k = torch.tensor(2, dtype=torch.int64)
    with pytest.raises(NotImplementedError, match=r"forward mode on CUDA tensors"):
        with torch.autograd.forward_ad.dual_level():
            dual = torch.autograd.forward_ad.make_dual(x, torch.ones(3, dtype=torch.float64))
            KernelCall.apply(route(log_sin, y, x, k), y, dual, k)
