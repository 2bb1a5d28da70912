"""``implicit_builder``: xDSL's ``ImplicitBuilder`` from several threads at
once, each thread's ops in its own block, and the op initialiser it swaps
for the whole process put back."""

from __future__ import annotations

import threading

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, Operation

from revmlir.implicit_builder import implicit_builder


def test_builders_of_eight_threads_place_each_op_once_in_their_own_block(switching_often):
    threads, ops = 8, 200
    start = threading.Barrier(threads)
    initialiser = Operation.__post_init__
    blocks = [Block() for _ in range(threads)]
    errors: list[Exception] = []

    def build(k: int) -> None:
        start.wait()
        try:
            for n in range(ops):
                with implicit_builder(blocks[k]), implicit_builder(Block()):  # a nested builder too
                    pass
                with implicit_builder(blocks[k]):
                    arith.ConstantOp.from_int_and_width(1000 * k + n, i64)
        except Exception as error:  # an op inserted twice: the assertion below names it
            errors.append(error)

    workers = [threading.Thread(target=build, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    for k, block in enumerate(blocks):
        values = []
        for op in block.ops:
            assert isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr)
            values.append(op.value.value.data)
        assert values == [1000 * k + n for n in range(ops)]
    assert Operation.__post_init__ is initialiser  # no thread's wrapper left behind
