"""``rv.Stack``: a stack passed to a reversible function from Python.

A reversible function takes a stack argument as a list whose elements it
pushes and pops in place (``anc.stack`` values, docs/design.md decision 14),
but a Python list does not say what its elements are, and an empty one
cannot: ``rv.Stack(float)`` is a list that does, so that the function is
specialised to ``!anc.stack<f64>`` whatever it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class Stack(list[Any]):
    """``rv.Stack(float)`` (or ``rv.Stack(float, [1.0, 2.0])``): a list of
    ``float``, ``int``, ``complex``, ``bool`` or ``rv.ULog`` values, the top
    last.  A reversible function it is passed to updates it in place."""

    def __init__(self, dtype: Any, values: Iterable[Any] = ()):
        from revmlir.frontend.types import type_of_annotation

        if type_of_annotation(dtype) is None:
            raise TypeError(f"rv.Stack({dtype!r}): the element type must be float, int, complex, bool or rv.ULog")
        super().__init__(values)
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"rv.Stack({getattr(self.dtype, '__name__', self.dtype)}, {list.__repr__(self)})"
