"""Kernels with stacks, shared by the CPU tests (thread by thread on the
CPU, ``gpu_emulation``) and the GPU tests: a stack per thread, one in a
callee, two side by side, an array freed below a live stack, and the
checks a stack makes."""

from __future__ import annotations

import revmlir as rv


@rv.reversible
def stack_per_thread(y, x, m: int):
    """Each thread pushes ``m`` floats on a stack of its own and pops them,
    as ``benchmarks/bench_gpu.py``'s kernel does (weighted here, so that
    the order counts)."""
    for i in rv.prange(len(y)):
        s = rv.stack(float)
        for j in range(m):
            t = rv.ancilla(x[i])
            t += j
            rv.push(s, t)
        for k in range(m):
            t = rv.pop(s)
            y[i] += t * (k + 1)
            t -= m - 1 - k
            rv.free(t, x[i])
        rv.free(s)


@rv.reversible
def tape(y: float, x: float):
    s = rv.stack(float)
    for j in range(5):
        v = rv.ancilla(x * j)
        rv.push(s, v)
    for j in range(5):
        v = rv.pop(s)
        y += v * (j + 1)
        rv.free(v, x * (4 - j))
    rv.free(s)


@rv.reversible
def stack_in_callee(y, x):
    """The stack lives in a device function."""
    for i in rv.prange(len(y)):
        tape(y[i], x[i])


@rv.reversible
def two_stacks(y, z, x, ks, m: int):
    """Pushes on two stacks in turn, as an adjoint's tapes do, of integers
    and of complex numbers (16 bytes): each buffer that is full finds the
    other's above it, and moves."""
    for i in rv.prange(len(y)):
        s = rv.stack(int)
        c = rv.stack(complex)
        for j in range(m):
            k = rv.ancilla(ks[i])
            rv.push(s, k)
            w = rv.ancilla(z[i] * j)
            rv.push(c, w)
        for j in range(m):
            w = rv.pop(c)
            k = rv.pop(s)
            y[i] += x[i] * k
            y[i] += w.real * (j + 1)
            rv.free(k, ks[i])
            rv.free(w, z[i] * (m - 1 - j))
        rv.free(c)
        rv.free(s)


@rv.reversible
def array_below_stack(y, x, m: int):
    """An array freed while a stack allocated after it lives, then a larger
    array: it must not take the stack's bytes (a popped value other than
    the one pushed fails its ``rv.free``)."""
    for i in rv.prange(len(y)):
        a = rv.zeros(m)
        s = rv.stack(float)
        v = rv.ancilla(x[i])
        rv.push(s, v)
        rv.free(a)
        b = rv.zeros(4 * m)
        for j in range(4 * m):
            b[j] += x[i] + j
        for j in range(4 * m):
            y[i] += b[j]
        for j in range(4 * m):
            b[j] -= x[i] + j
        rv.free(b)
        v = rv.pop(s)
        y[i] += v
        rv.free(v, x[i])
        rv.free(s)


@rv.reversible
def unbalanced(y, x, pops: int):
    """One push, then ``pops`` pops: with none the stack is freed holding a
    value, the second pops an empty stack."""
    for i in rv.prange(len(y)):
        s = rv.stack(float)
        v = rv.ancilla(x[i])
        rv.push(s, v)
        for j in range(pops):
            w = rv.pop(s)
            y[i] += w
            rv.free(w, x[i])
        rv.free(s)
