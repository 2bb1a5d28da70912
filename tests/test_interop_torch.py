"""``rv.to_torch``: revmlir functions inside PyTorch programs, checked
against PyTorch's own derivatives of the same math (``torch.autograd``,
forward AD and ``torch.func``)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import revmlir as rv
from interop_programs import (
    Spring,
    affine,
    affine_reference,
    energy,
    energy_reference,
    leaky,
    log_beta_sum,
    log_beta_sum_reference,
    relax,
    relax_reference,
    spring_energy,
    stash,
)

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.torch,
    # torch.func's first use scripts a helper, which torch itself deprecates
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
]

RTOL = 1e-10

energy_torch = partial(energy_reference, torch)
affine_torch = partial(affine_reference, torch)
relax_torch = partial(relax_reference, torch)
log_beta_sum_torch = partial(log_beta_sum_reference, torch.lgamma, torch)

rng = np.random.default_rng(3)
X = torch.from_numpy(rng.normal(size=4))
W = torch.from_numpy(rng.normal(size=(3, 4)))
B = torch.from_numpy(rng.normal(size=3))
U = torch.from_numpy(rng.normal(size=5))


def close(found, expected) -> None:
    found = found if isinstance(found, tuple | list) else (found,)
    expected = expected if isinstance(expected, tuple | list) else (expected,)
    assert len(found) == len(expected)
    for f, e in zip(found, expected):
        assert tuple(f.shape) == tuple(e.shape)
        np.testing.assert_allclose(f.detach().numpy(), e.detach().numpy(), rtol=RTOL, atol=1e-13)


def loss(f):
    return lambda x, w: f(torch.tensor(0.25, dtype=torch.float64), x, w)[0]


def test_call_returns_every_argument_updated_and_leaves_inputs_alone():
    x = X.clone()
    found = rv.to_torch(energy)(0.25, x, 1.5)
    close(found, energy_torch(torch.tensor(0.25), X, torch.tensor(1.5, dtype=torch.float64)))
    found[1][0] = 100.0  # a result of its own, not a view of x
    assert torch.equal(x, X)


def test_ordinary_returns_results_then_arguments():
    u = U.clone()
    found = rv.to_torch(relax)(u, 0.5, 3)
    assert [t.dtype for t in found] == [torch.float64, torch.float64, torch.float64, torch.float64, torch.int64]
    close(found, relax_torch(U, torch.tensor(0.5, dtype=torch.float64), torch.tensor(3)))
    assert torch.equal(u, U)


def test_autograd_grad():
    x, w = X.clone().requires_grad_(), torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    found = torch.autograd.grad(loss(rv.to_torch(energy))(x, w), (x, w))
    close(found, torch.autograd.grad(loss(energy_torch)(x, w), (x, w)))


def test_backward_through_a_model_around_the_call():
    def model(f, x, w):
        e, x2, _ = f(torch.tensor(0.0, dtype=torch.float64), torch.sin(x) * w, w * w)
        return torch.log1p(e * e) + torch.sum(x2)

    grads = []
    for f in (rv.to_torch(energy), energy_torch):
        x, w = X.clone().requires_grad_(), torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
        model(f, x, w).backward()
        grads.append((x.grad, w.grad))
    close(*grads)


def test_forward_mode():
    tangents = (torch.from_numpy(rng.normal(size=4)), torch.tensor(0.3, dtype=torch.float64))
    w = torch.tensor(1.5, dtype=torch.float64)
    found = torch.func.jvp(loss(rv.to_torch(energy)), (X, w), tangents)
    close(found, torch.func.jvp(loss(energy_torch), (X, w), tangents))
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        out = rv.to_torch(energy)(0.25, fwAD.make_dual(X, tangents[0]), fwAD.make_dual(w, tangents[1]))
        close(fwAD.unpack_dual(out[0]).tangent, found[1])


def test_jacobians_of_array_outputs():
    f, y = rv.to_torch(affine), torch.zeros(3, dtype=torch.float64)
    for jacobian in (torch.func.jacfwd, torch.func.jacrev):
        found = jacobian(lambda W, x: f(y, W, B, x)[0], argnums=(0, 1))(W, X)
        close(found, jacobian(lambda W, x: affine_torch(y, W, B, x)[0], argnums=(0, 1))(W, X))


def test_vmap_and_grad():
    xs, w = torch.from_numpy(rng.normal(size=(5, 4))), torch.tensor(1.5, dtype=torch.float64)
    f = loss(rv.to_torch(energy))
    close(torch.func.vmap(f, in_dims=(0, None))(xs, w), torch.func.vmap(loss(energy_torch), in_dims=(0, None))(xs, w))
    found = torch.func.vmap(torch.func.grad(f), in_dims=(0, None))(xs, w)
    close(found, torch.func.vmap(torch.func.grad(loss(energy_torch)), in_dims=(0, None))(xs, w))


def test_vmap_of_an_empty_batch():
    """An empty batch runs nothing and gives empty results of the batched
    shapes (it was an IndexError; PyTorch's own ``sum`` cannot run on one,
    so there is no reference to compare with)."""
    xs, w = torch.zeros((0, 4), dtype=torch.float64), torch.tensor(1.5, dtype=torch.float64)
    f = loss(rv.to_torch(energy))
    for transform, shape in (
        (lambda g: g, (0,)),
        (torch.func.grad, (0, 4)),
        (partial(torch.func.grad, argnums=1), (0,)),
    ):
        found = torch.func.vmap(transform(f), in_dims=(0, None))(xs, w)
        assert found.shape == shape and found.dtype == torch.float64


def test_ordinary_reverse_mode():
    u, c = U.clone().requires_grad_(), torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    found = torch.autograd.grad(rv.to_torch(relax)(u, c, 3)[0], (u, c))
    close(found, torch.autograd.grad(relax_torch(u, c, 3)[0], (u, c)))
    found = torch.func.jacrev(lambda u: rv.to_torch(relax)(u, 0.5, 2)[2])(U)
    close(found, torch.func.jacrev(lambda u: relax_torch(u, 0.5, 2)[2])(U))


def test_a_user_primitive_in_an_ordinary_function():
    """``lgamma``'s derivatives go through its digamma rules under
    ``torch.autograd.grad``; checked against ``torch.lgamma``'s.  On the
    interpreter (its Python callable, its rules' interpreted code):
    tests/test_interop_jax.py runs the native code and forward mode, which
    the bindings share."""
    a = torch.tensor([0.5, 1.5, 2.5, 7.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor(0.75, dtype=torch.float64, requires_grad=True)
    f = rv.to_torch(rv.ordinary(log_beta_sum.pyfunc, backend="interpreter"))
    close(torch.autograd.grad(f(a, b)[0], (a, b)), torch.autograd.grad(log_beta_sum_torch(a, b)[0], (a, b)))


def test_a_checkpoint_policy_gives_the_gradient():
    """``checkpoint=`` reaches ``backward`` (a memory budget that holds no
    snapshot fails it), whose gradient is PyTorch's; on the interpreter,
    where checkpointed gradients are quick to make (tests/test_interop_jax.py
    compares one with the store-all gradient)."""
    relax_interpreted = rv.ordinary(relax.pyfunc, backend="interpreter")
    u, c = U.clone().requires_grad_(), torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    binomial = rv.to_torch(relax_interpreted, checkpoint="binomial", snapshots=1)
    close(torch.autograd.grad(binomial(u, c, 2)[0], (u, c)), torch.autograd.grad(relax_torch(u, c, 2)[0], (u, c)))
    starved = rv.to_torch(relax_interpreted, checkpoint="auto", memory=1)
    with pytest.raises(ValueError, match=r"memory=1 bytes holds no snapshot of the function's state"):
        torch.autograd.grad(starved(u, c, 2)[0], (u, c))


# -- errors ----------------------------------------------------------------------


def test_checkpoint_options_are_checked_as_for_rv_gradient():
    with pytest.raises(TypeError, match=r"rv.to_torch: checkpoint= applies to @rv.ordinary functions"):
        rv.to_torch(energy, checkpoint="bisection")
    with pytest.raises(ValueError, match=r"snapshots=k is required by checkpoint='binomial'"):
        rv.to_torch(relax, checkpoint="binomial")
    with pytest.raises(TypeError, match=r"rv.to_torch\(\) got an unexpected keyword argument 'lowering'"):
        rv.to_torch(relax, lowering="ffi")


def test_not_a_revmlir_function():
    with pytest.raises(TypeError, match=r"rv.to_torch expects a @rv.reversible or @rv.ordinary function"):
        rv.to_torch(torch.sin)


def test_wrong_dtype_and_rank():
    with pytest.raises(TypeError, match=r"rv.to_torch: argument 'x' has dtype torch.complex128"):
        rv.to_torch(energy)(0.0, X.to(torch.complex128), 1.0)
    with pytest.raises(TypeError, match=r"rv.to_torch: argument 'x' has dtype torch.float16"):
        rv.to_torch(energy)(0.0, X.to(torch.float16), 1.0)
    with pytest.raises(rv.ReversibleSyntaxError, match=r"interop_programs.py:\d+:\d+: 'W' has no dimension 1"):
        rv.to_torch(affine)(torch.zeros(3, dtype=torch.float64), B, B, X)


def test_arguments_by_name():
    close(rv.to_torch(energy)(0.25, w=1.5, x=X), energy_torch(torch.tensor(0.25), X, torch.tensor(1.5)))
    with pytest.raises(TypeError, match=r"rv.to_torch\(energy\) has no argument 'k' \(e, x, w\)"):
        rv.to_torch(energy)(0.0, X, k=1.0)


def test_a_struct_or_stack_argument_is_refused_naming_it():
    passes = r"the framework passes arrays and numbers only, and argument 's' is"
    with pytest.raises(TypeError, match=rf"rv.to_torch\(spring_energy\): {passes} a struct \(Spring\)"):
        rv.to_torch(spring_energy)(0.0, Spring(2.0, 1.0))
    with pytest.raises(TypeError, match=rf"rv.to_torch\(stash\): {passes} an rv.Stack"):
        rv.to_torch(stash)(rv.Stack(float), 1.0)


def test_tensor_neither_on_the_cpu_nor_on_a_gpu():
    with pytest.raises(
        TypeError, match=r"rv.to_torch: argument 'x' is on meta; rv.to_torch runs on CPU and CUDA tensors"
    ):
        rv.to_torch(energy)(0.0, torch.empty(4, dtype=torch.float64, device="meta"), 1.0)


def test_failed_run_time_check():
    with pytest.raises(rv.InvertibilityError, match="ancilla freed holding 2.0"):
        rv.to_torch(leaky)(0.0, torch.tensor(2.0, dtype=torch.float64, requires_grad=True))


def test_integer_arguments_carry_no_gradient():
    steps = torch.tensor(3)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        steps.requires_grad_()
    out = rv.to_torch(relax)(U, 0.5, steps)
    assert not out[4].requires_grad


def test_forward_mode_of_an_ordinary_function():
    """``torch.func.jvp`` of an ordinary function runs ``rv.jvp``."""
    _, found = torch.func.jvp(lambda u: rv.to_torch(relax)(u, 0.5, 2)[:2], (U,), (U,))
    _, expected = torch.func.jvp(lambda u: relax_torch(u, 0.5, 2)[:2], (U,), (U,))
    for value, reference in zip(found, expected, strict=True):
        np.testing.assert_allclose(value.numpy(), reference.numpy(), rtol=1e-12)


def test_second_derivatives():
    w = torch.tensor(1.5, dtype=torch.float64)
    with pytest.raises(NotImplementedError, match=r"rv.to_torch\(energy\): second derivatives are not supported"):
        torch.func.hessian(loss(rv.to_torch(energy)))(X, w)
