"""A rev function that drives a run-time cursor (``ad.next``) to its end,
recording every entry it produces on ``%out`` (``DRIVER``, with
``SCHEDULE`` to fill in), or only moving it on (``quiet``)."""

from __future__ import annotations

DRIVER = """
rev.func @drive(%n: index, %out: !anc.stack<index>) attributes {rev.forgetful} {
  %frames = anc.stack_alloc : !anc.stack<index>
  %z = arith.constant 0 : index
  %end = arith.constant 5 : index
  %done = arith.constant 7 : index
  %w0 = anc.alloc %z : index
  %w1 = anc.alloc %z : index
  %w2 = anc.alloc %z : index
  %w3 = anc.alloc %z : index
  %w4 = anc.alloc %z : index
  %w5 = anc.alloc %z : index
  %w6 = anc.alloc %z : index
  %w7 = anc.alloc %z : index
  %count = anc.alloc %z : index
  %r:9 = rev.while (%w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7, %count) : index, index, index, index, index, index, index, index, index pre {
  ^bb0(%k: index, %a1: index, %a2: index, %a3: index, %a4: index, %a5: index, %a6: index, %a7: index, %c: index):
    %go = arith.cmpi ne, %k, %end : index
    rev.cond %go
  } post {
  ^bb0(%k: index, %a1: index, %a2: index, %a3: index, %a4: index, %a5: index, %a6: index, %a7: index, %c: index):
    %started = arith.cmpi ne, %c, %z : index
    rev.cond %started
  } do {
  ^bb0(%k: index, %a1: index, %a2: index, %a3: index, %a4: index, %a5: index, %a6: index, %a7: index, %c: index):
    %w:8 = ad.next SCHEDULE %frames, %n (%k, %a1, %a2, %a3, %a4, %a5, %a6, %a7)
    %kind = anc.alloc %w#0 : index
    anc.push %out, %kind : !anc.stack<index>
    %step = anc.alloc %w#1 : index
    anc.push %out, %step : !anc.stack<index>
    %c1 = rev.inc %c : index
    rev.yield %w#0, %w#1, %w#2, %w#3, %w#4, %w#5, %w#6, %w#7, %c1 : index, index, index, index, index, index, index, index, index
  }
  anc.free %r#0, %end : index
  anc.free %r#1, %z : index
  anc.free %r#2, %done : index
  anc.free %r#3, %z : index
  anc.free %r#4, %z : index
  anc.free %r#5, %z : index
  anc.free %r#6, %z : index
  anc.free %r#7, %z : index
  anc.free %r#8, %z {nocheck} : index
  anc.stack_free %frames : !anc.stack<index>
  rev.return %n : index
}
"""


RECORDING = """    %kind = anc.alloc %w#0 : index
    anc.push %out, %kind : !anc.stack<index>
    %step = anc.alloc %w#1 : index
    anc.push %out, %step : !anc.stack<index>
"""


def quiet(schedule: str) -> str:
    """``DRIVER`` under ``schedule`` with no ``%out``: its frames are the
    only stack that grows."""
    assert RECORDING in DRIVER
    text = DRIVER.replace(RECORDING, "").replace(", %out: !anc.stack<index>", "")
    return text.replace("SCHEDULE", schedule)
