"""What a Python user is told when an ``rv.prange`` body breaks the
parallel-loop rule, or an update reads the element it updates: the
verifier's rules in Python's words (the variables, the callees, the loop's
index), at the line the user wrote, one test per rule the Python can break.
``.mlir`` input keeps the IR's words (tests/filecheck/invalid_parallel.mlir)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import revmlir as rv

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()


def line_of(marker: str) -> tuple[int, int]:
    """The line that ends with ``marker``, and the column of its first statement."""
    (found,) = [(i + 1, len(text) - len(text.lstrip()) + 1) for i, text in enumerate(LINES) if text.endswith(marker)]
    return found


@rv.reversible
def add_into(acc, x):
    acc += x[0]


@rv.reversible
def scale_first(acc, x):
    rv.neg(x[0])
    acc += 1.0


@rv.reversible
def reads_neighbour(y):
    for i in rv.prange(len(y) - 1):
        y[i] += y[i + 1]  # READS_WRITTEN


@rv.reversible
def reads_accumulated(y, z, idx):
    for i in rv.prange(len(idx)):
        y[idx[i]] += 1.0
        z[i] += y[0]  # READS_ACCUMULATED


@rv.reversible
def writes_shared(y):
    for i in rv.prange(len(y)):
        rv.neg(y[0])  # WRITES_SHARED


@rv.reversible
def borrows_accumulated(y, x, idx):
    for i in rv.prange(len(idx)):
        y[idx[i]] += x[i]
        rv.neg(y[idx[i]])  # BORROWS_ACCUMULATED


@rv.reversible
def accumulates_complex(g, z, idx):
    for i in rv.prange(len(idx)):
        g[idx[i]] += z[i]  # ACCUMULATES_UNSHARABLE


@rv.reversible
def passes_written(y, x):
    for i in rv.prange(len(y)):
        x[i] += 1.0
        add_into(y[i], x)  # PASSES_WRITTEN


@rv.reversible
def writes_whole(y, x):
    for i in rv.prange(len(y)):
        scale_first(y[i], x)  # WRITES_WHOLE


@rv.reversible
def reads_neighbour_at_k(y):
    for k in rv.prange(len(y) - 1):
        y[k] += y[k + 1]  # READS_WRITTEN at k


@rv.reversible
def writes_shared_in_nested(y):
    for i in range(len(y)):
        for j in rv.prange(y.shape[1]):
            rv.neg(y[i, 0])  # WRITES_SHARED in nested


@rv.reversible
def writes_whole_of_a_second_specialisation(y, x, counts):
    scale_first(y[0], counts)
    for i in rv.prange(len(y)):
        scale_first(y[i], x)  # WRITES_WHOLE of a second specialisation


@rv.reversible
def passes_one_element_twice(y):
    add_to(y[0], y[0])  # TWICE


@rv.reversible
def add_to(a, b):
    a += b


@rv.reversible
def lends_a_shared_element(y, x, idx):
    for i in rv.prange(len(y)):
        add_to(x[idx[i]], y[i])  # LENDS


@rv.reversible
def lends_its_own_element_in_nested(y, x):
    for i in rv.prange(y.shape[0]):
        for j in rv.prange(y.shape[1]):
            add_to(y[i, j], x[i])  # LENDS in nested


@rv.reversible
def square_into(a, b):
    a += b * b


@rv.reversible
def lends_a_complex_element(y, z, idx):
    for i in rv.prange(len(y)):
        square_into(y[i], z[idx[i]])  # LENDS complex


def lends_a_read_only_element(y, x, idx):
    for i in rv.prange(len(y)):
        add_to(y[i], x[idx[i]])


@rv.reversible
def reads_its_target(y):
    y[0] += y[0]  # ALIAS


ints = np.array([0, 1, 0])
CASES = {
    "READS_WRITTEN": (
        reads_neighbour,
        (np.zeros(4),),
        "an rv.prange loop reads y[…] at an index other than the loop's i, and the loop updates y: "
        "another iteration may be updating that element",
    ),
    "READS_ACCUMULATED": (
        reads_accumulated,
        (np.zeros(3), np.zeros(3), ints),
        "an rv.prange loop reads y, which iterations accumulate into: its elements change while the loop runs",
    ),
    "WRITES_SHARED": (
        writes_shared,
        (np.ones(3),),
        "an rv.prange loop updates an element of y whose first index is not the loop's i: another iteration "
        "may update it too; update y[i, …], or only add to shared elements (+= or -=)",
    ),
    "BORROWS_ACCUMULATED": (
        borrows_accumulated,
        (np.ones(3), np.ones(3), ints),
        "an rv.prange loop updates y[…], which iterations accumulate into, otherwise than with += or -=",
    ),
    "ACCUMULATES_UNSHARABLE": (
        accumulates_complex,
        (np.zeros(3, complex), np.ones(3, complex), ints),
        "an rv.prange loop accumulates into elements of g that iterations share, and they are complex",
    ),
    "PASSES_WRITTEN": (
        passes_written,
        (np.zeros(3), np.ones(3)),
        "an rv.prange loop passes x whole to add_into while the loop updates it: the callee reading it "
        "would race with other iterations",
    ),
    "WRITES_WHOLE": (
        writes_whole,
        (np.zeros(3), np.ones(3)),
        "an rv.prange loop passes x whole to scale_first, which writes it: another iteration may write the "
        "same elements; pass the element (x[i]) instead",
    ),
    "READS_WRITTEN at k": (
        reads_neighbour_at_k,
        (np.zeros(4),),
        "an rv.prange loop reads y[…] at an index other than the loop's k, and the loop updates y",
    ),
    "WRITES_SHARED in nested": (
        writes_shared_in_nested,
        (np.ones((2, 3)),),
        "an rv.prange loop updates an element of y whose first index is not the loop's j: another iteration "
        "may update it too; update y[j, …]",
    ),
    "WRITES_WHOLE of a second specialisation": (
        writes_whole_of_a_second_specialisation,
        (np.zeros(3), np.ones(3), ints),
        "an rv.prange loop passes x whole to scale_first, which writes it",
    ),
    "TWICE": (
        passes_one_element_twice,
        (np.ones(3),),
        "uses y[…] twice at once (passed to a call, or updated, while it is passed or updated already): an "
        "element is lent once at a time; pass a copy made before it (a = rv.ancilla(y[…]), then rv.free it after)",
    ),
    "LENDS": (
        lends_a_shared_element,
        (np.zeros(3), np.ones(3), ints),
        "an rv.prange loop lends add_to an element of x whose first index is not the loop's i, and add_to may "
        "change it while another iteration uses the same element; lend it x[i, …], or add to the element in the "
        "loop itself (x[…] += …): iterations may share additions",
    ),
    "LENDS in nested": (
        lends_its_own_element_in_nested,
        (np.zeros((2, 3)), np.ones(2)),
        "an rv.prange loop lends add_to an element of y whose first index is not the loop's j, and add_to may "
        "change it while another iteration uses the same element; make the loop over j a range (an rv.prange "
        "loop owns an element by its first index alone, here the outer loop's i), or add to the element",
    ),
    "LENDS complex": (
        lends_a_complex_element,
        (np.zeros(3, complex), np.ones(3, complex), ints),
        "an rv.prange loop lends square_into an element of z whose first index is not the loop's i, and z's "
        "elements are complex: even a copy's gradient would be a shared accumulation, which needs float or "
        "integer elements; lend it z[i, …]",
    ),
    "ALIAS": (
        reads_its_target,
        (np.ones(3),),
        "reads y[…] while it updates that element of y: an update may not read its own target",
    ),
}


@pytest.mark.parametrize("rule", CASES)
def test_a_broken_rule_is_said_in_python_at_the_users_line(rule: str):
    function, args, message = CASES[rule]
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        function(*args)
    error = info.value
    text = str(error)
    assert error.filename == str(HERE)
    assert error.lineno == line_of(f"# {rule}")[0], text
    assert message in text
    assert "%" not in text and "'rev." not in text and "'memref." not in text, text


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_an_element_the_callee_only_reads_is_lent_as_a_copy(backend):
    """``add_to(y[i], x[idx[i]])``, ``add_to`` giving its second parameter
    back as it took it, passes a copy of ``x[idx[i]]`` (an ancilla each
    iteration makes and frees, as ``x[idx[i]] + 0.0`` is): a read of ``x``,
    which iterations share, whose gradient accumulates into ``x``'s.  As a
    borrow it was refused as an update of ``x``."""
    function = rv.reversible(backend=backend)(lends_a_read_only_element)
    x, idx = np.array([1.0, 2.0, 3.0]), np.array([2, 2, 0])
    y, _, _ = function(np.zeros(3), x, idx)
    np.testing.assert_array_equal(y, x[idx])
    np.testing.assert_array_equal((~function)(y, x, idx)[0], np.zeros(3))
    outputs, pullback = rv.vjp(function, np.zeros(3), x, idx)
    _, gradient_x, _ = pullback(np.ones(3), np.zeros(3), np.zeros(3))
    np.testing.assert_array_equal(gradient_x, [1.0, 0.0, 2.0])


def adds_to_a_shared_element(y, x, idx):
    for i in rv.prange(len(y)):
        x[idx[i]] += y[i]


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_what_a_refused_lend_advises_runs(backend):
    """``add_to(x[idx[i]], y[i])`` is refused (``add_to`` changes the
    element); the addition the refusal advises in its place runs, where
    a copy ``x[idx[i]] + 0.0`` it advised compiled and then failed freeing
    the copy holding the sum."""
    function = rv.reversible(backend=backend)(adds_to_a_shared_element)
    _, x, _ = function(np.ones(3), np.zeros(3), np.array([1, 1, 0]))
    np.testing.assert_array_equal(x, [1.0, 2.0, 0.0])


@rv.reversible
def adds_through(acc, v):
    square_into(acc, v)


@rv.reversible
def adds_recursively(acc, v, n: int):
    if n > 0:
        acc += v
        adds_recursively(acc, v, n - 1)


@rv.reversible
def bumps(acc, v):
    v += 1.0
    acc += v


@rv.reversible
def bumps_through(acc, v):
    bumps(acc, v)


@rv.reversible
def bumps_recursively(acc, v, n: int):
    if n > 0:
        adds_recursively(acc, v, n - 1)
    else:
        bumps(acc, v)


def lends_through(y, x, idx):
    for i in rv.prange(len(y)):
        adds_through(y[i], x[idx[i]])


def lends_recursively(y, x, idx):
    for i in rv.prange(len(y)):
        adds_recursively(y[i], x[idx[i]], 3)


@pytest.mark.parametrize("backend", ["interpreter", "native"])
@pytest.mark.parametrize(
    ("lender", "expected", "gradient"),
    [(lends_through, [9.0, 9.0, 1.0], [2.0, 0.0, 12.0]), (lends_recursively, [9.0, 9.0, 3.0], [3.0, 0.0, 6.0])],
    ids=["two levels", "recursive"],
)
def test_an_element_passed_on_to_a_callee_that_only_reads_it_is_lent_as_a_copy(backend, lender, expected, gradient):
    """The callee passes the element on, to a callee (or to itself) that
    gives it back: the analysis only saw the callee's own ``rev.return``,
    and refused the lend as a change of ``x``.  It follows the calls, so
    the element is lent as a copy, with the gradient of the closed form
    (``Σ 2·x`` and ``Σ 3`` over the iterations lending each element)."""
    function = rv.reversible(backend=backend)(lender)
    x, idx = np.array([1.0, 2.0, 3.0]), np.array([2, 2, 0])
    y, _, _ = function(np.zeros(3), x, idx)
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal((~function)(y, x, idx)[0], np.zeros(3))
    _, pullback = rv.vjp(function, np.zeros(3), x, idx)
    np.testing.assert_array_equal(pullback(np.ones(3), np.zeros(3), np.zeros(3))[1], gradient)


@rv.reversible
def changes_recursively(acc, v, n: int):
    if n > 0:
        acc += v
        changes_recursively(acc, v, n - 1)
    else:
        v += 1.0


@rv.reversible
def changes_mutually(acc, v, n: int):
    if n > 0:
        acc += v
        changed_mutually(acc, v, n - 1)


@rv.reversible
def changed_mutually(acc, v, n: int):
    if n > 0:
        changes_mutually(acc, v, n - 1)
    else:
        v += 2.0


def lends_to_a_changer(y, x, idx):
    for i in rv.prange(len(y)):
        bumps_through(y[i], x[idx[i]])  # CHANGED two levels


def lends_to_a_caller_of_a_changer(y, x, idx):
    for i in rv.prange(len(y)):
        bumps_recursively(y[i], x[idx[i]], 2)  # CHANGED calls a changer


def lends_to_a_recursive_changer(y, x, idx):
    for i in rv.prange(len(y)):
        changes_recursively(y[i], x[idx[i]], 2)  # CHANGED recursive


def lends_to_a_mutually_recursive_changer(y, x, idx):
    for i in rv.prange(len(y)):
        changes_mutually(y[i], x[idx[i]], 3)  # CHANGED mutually recursive


def uncalls_a_recursive_changer(y, x, idx):
    for i in rv.prange(len(y)):
        (~changes_recursively)(y[i], x[idx[i]], 2)  # CHANGED uncall


@pytest.mark.parametrize("backend", ["interpreter", "native"])
@pytest.mark.parametrize(
    ("lender", "callee", "marker"),
    [
        (lends_to_a_changer, "bumps_through", "# CHANGED two levels"),
        (lends_to_a_caller_of_a_changer, "bumps_recursively", "# CHANGED calls a changer"),
        (lends_to_a_recursive_changer, "changes_recursively", "# CHANGED recursive"),
        (lends_to_a_mutually_recursive_changer, "changes_mutually", "# CHANGED mutually recursive"),
        (uncalls_a_recursive_changer, "~changes_recursively", "# CHANGED uncall"),
    ],
    ids=["two levels", "calls a changer", "recursive", "mutually recursive", "uncall"],
)
def test_an_element_a_callee_of_the_callee_changes_is_not_lent(backend, lender, callee, marker):
    """An element lent to a callee that changes it anywhere down its
    calls is refused as a change of ``x``: two calls down, through a callee
    that calls a changer, and inside a recursion cycle, where the greatest
    fixpoint starts from "gives it back" for the whole cycle and must end
    at "changes it" (a self-recursive function whose base case changes the
    element, two mutually recursive ones, and an uncall of the first)."""
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.reversible(lender, backend=backend)(np.zeros(3), np.ones(3), np.array([0, 0, 1]))
    assert info.value.lineno == line_of(marker)[0]
    assert f"an rv.prange loop lends {callee} an element of x whose first index is not the loop's i" in str(info.value)
