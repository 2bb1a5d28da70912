"""Run-time schedulers in native code: ``ad.next`` becomes a call of
``@revmlir.cursor.next``, the machine of ``revmlir.checkpoint.cursor`` in
the std dialects.

The function is written once, below, as MLIR and parsed when a module needs
it; ``rev-lower-to-std`` adds it to the module beside the stack runtime it
calls (``revmlir.lowering.stacks``: the frames are a stack of ``index``).
Each call makes the transitions that produce no entry (planning a segment,
a restore that is not needed) and stops at the first one that does, so the
caller sees exactly the interpreter's entries; the scheme is an operand
(``SCHEMES`` order), since branching on it costs nothing beside a step.

Binomial splits use the repetition number t of the segment: the least t
with beta(s, t) = C(s + t, s) >= length, found by the recurrence
beta(s, t) = beta(s, t - 1) (s + t) / t, then beta(s - 1, t) = beta(s, t) s
/ (s + t); each product is split around the exact division (``_mul_div``),
so the intermediate values stay below 2⁶³ for segments below about 2⁶¹
steps.
"""

from __future__ import annotations

from functools import cache

from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, ModuleOp

from revmlir.lowering import stacks
from revmlir.parsing import make_context, parse_module

NAME = "revmlir.cursor.next"
PUSH = stacks.runtime_name(stacks.PUSH, IndexType())
POP = stacks.runtime_name(stacks.POP, IndexType())

_SOURCE = f"""
func.func private @{PUSH}(memref<3xi64>, index)
func.func private @{POP}(memref<3xi64>) -> index

func.func private @revmlir.cursor.mul_div(%b: index, %m: index, %d: index) -> index {{
  %q = arith.divui %b, %d : index
  %r = arith.remui %b, %d : index
  %qm = arith.muli %q, %m : index
  %rm = arith.muli %r, %m : index
  %rmd = arith.divui %rm, %d : index
  %out = arith.addi %qm, %rmd : index
  func.return %out : index
}}

func.func private @revmlir.cursor.split(%scheme: index, %length: index, %s: index) -> index {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %short = arith.cmpi slt, %length, %c2 : index
  %out = scf.if %short -> (index) {{
    scf.yield %c0 : index
  }} else {{
    %all = arith.cmpi eq, %scheme, %c0 : index
    %r = scf.if %all -> (index) {{
      scf.yield %c1 : index
    }} else {{
      %halves = arith.cmpi eq, %scheme, %c1 : index
      %r2 = scf.if %halves -> (index) {{
        %half = arith.divui %length, %c2 : index
        scf.yield %half : index
      }} else {{
        %r3 = func.call @revmlir.cursor.binomial(%length, %s) : (index, index) -> index
        scf.yield %r3 : index
      }}
      scf.yield %r2 : index
    }}
    scf.yield %r : index
  }}
  func.return %out : index
}}

func.func private @revmlir.cursor.binomial(%length: index, %s: index) -> index {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %few = arith.cmpi sle, %s, %c1 : index
  %lm1 = arith.subi %length, %c1 : index
  %plenty = arith.cmpi sge, %s, %lm1 : index
  %out = scf.if %few -> (index) {{
    scf.yield %c0 : index
  }} else {{
    %r = scf.if %plenty -> (index) {{
      scf.yield %c1 : index
    }} else {{
      %t, %b, %b1, %b2 = scf.while (%t0 = %c0, %bt = %c1, %bt1 = %c0, %bt2 = %c0)
          : (index, index, index, index) -> (index, index, index, index) {{
        %more = arith.cmpi slt, %bt, %length : index
        scf.condition(%more) %t0, %bt, %bt1, %bt2 : index, index, index, index
      }} do {{
      ^bb0(%tt: index, %bb: index, %bb1: index, %bb2: index):
        %tn = arith.addi %tt, %c1 : index
        %st = arith.addi %s, %tn : index
        %bn = func.call @revmlir.cursor.mul_div(%bb, %st, %tn) : (index, index, index) -> index
        scf.yield %tn, %bn, %bb, %bb1 : index, index, index, index
      }}
      %st = arith.addi %s, %t : index
      %below = func.call @revmlir.cursor.mul_div(%b, %s, %st) : (index, index, index) -> index
      %rest = arith.subi %length, %below : index
      %j0 = arith.maxsi %rest, %b2 : index
      %j = arith.maxsi %j0, %c1 : index
      scf.yield %j : index
    }}
    scf.yield %r : index
  }}
  func.return %out : index
}}

func.func private @{NAME}(%frames: memref<3xi64>, %scheme: index, %snapshots: index,
    %steps: index, %kind0: index, %step0: index, %phase0: index, %pos0: index,
    %start0: index, %end0: index, %goal0: index, %depth0: index)
    -> (index, index, index, index, index, index, index, index) {{
  %true = arith.constant true
  %false = arith.constant false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %nowhere = arith.constant -1 : index
  %r:9 = scf.while (%more = %true, %kind = %kind0, %step = %step0, %phase = %phase0,
      %pos = %pos0, %start = %start0, %end = %end0, %goal = %goal0, %depth = %depth0)
      : (i1, index, index, index, index, index, index, index, index)
      -> (i1, index, index, index, index, index, index, index, index) {{
    scf.condition(%more) %more, %kind, %step, %phase, %pos, %start, %end, %goal, %depth
        : i1, index, index, index, index, index, index, index, index
  }} do {{
  ^bb0(%m: i1, %k: index, %st: index, %ph: index, %p: index, %a: index, %e: index,
      %g: index, %d: index):
    %is_start = arith.cmpi eq, %ph, %c0 : index
    %n:9 = scf.if %is_start -> (i1, index, index, index, index, index, index, index, index) {{
      %none = arith.cmpi sle, %steps, %c0 : index
      %o:9 = scf.if %none -> (i1, index, index, index, index, index, index, index, index) {{
        scf.yield %true, %k, %st, %c7, %p, %a, %e, %g, %d
            : i1, index, index, index, index, index, index, index, index
      }} else {{
        scf.yield %false, %c1, %c0, %c1, %c0, %c0, %steps, %g, %c0
            : i1, index, index, index, index, index, index, index, index
      }}
      scf.yield %o#0, %o#1, %o#2, %o#3, %o#4, %o#5, %o#6, %o#7, %o#8
          : i1, index, index, index, index, index, index, index, index
    }} else {{
    %is_plan = arith.cmpi eq, %ph, %c1 : index
    %n1:9 = scf.if %is_plan -> (i1, index, index, index, index, index, index, index, index) {{
      %length = arith.subi %e, %a : index
      %s = arith.subi %snapshots, %d : index
      %j = func.call @revmlir.cursor.split(%scheme, %length, %s) : (index, index, index) -> index
      %splits = arith.cmpi ne, %j, %c0 : index
      %at = arith.addi %a, %j : index
      %last = arith.subi %e, %c1 : index
      %goal = arith.select %splits, %at, %last : index
      %next = arith.select %splits, %c2, %c4 : index
      scf.yield %true, %k, %st, %next, %p, %a, %e, %goal, %d
          : i1, index, index, index, index, index, index, index, index
    }} else {{
    %is_go_split = arith.cmpi eq, %ph, %c2 : index
    %is_go_tail = arith.cmpi eq, %ph, %c4 : index
    %is_go = arith.ori %is_go_split, %is_go_tail : i1
    %n2:9 = scf.if %is_go -> (i1, index, index, index, index, index, index, index, index) {{
      %walk = arith.addi %ph, %c1 : index
      %here = arith.cmpi eq, %p, %a : index
      %kind = arith.select %here, %k, %c2 : index
      %step = arith.select %here, %st, %a : index
      scf.yield %here, %kind, %step, %walk, %a, %a, %e, %g, %d
          : i1, index, index, index, index, index, index, index, index
    }} else {{
    %is_walk_split = arith.cmpi eq, %ph, %c3 : index
    %is_walk_tail = arith.cmpi eq, %ph, %c5 : index
    %is_walk = arith.ori %is_walk_split, %is_walk_tail : i1
    %before = arith.cmpi slt, %p, %g : index
    %walking = arith.andi %is_walk, %before : i1
    %n3:9 = scf.if %walking -> (i1, index, index, index, index, index, index, index, index) {{
      %p1 = arith.addi %p, %c1 : index
      scf.yield %false, %c0, %p, %ph, %p1, %a, %e, %g, %d
          : i1, index, index, index, index, index, index, index, index
    }} else {{
    %n4:9 = scf.if %is_walk_split -> (i1, index, index, index, index, index, index, index, index) {{
      func.call @{PUSH}(%frames, %a) : (memref<3xi64>, index) -> ()
      %d1 = arith.addi %d, %c1 : index
      scf.yield %false, %c1, %g, %c1, %p, %g, %e, %g, %d1
          : i1, index, index, index, index, index, index, index, index
    }} else {{
    %n5:9 = scf.if %is_walk_tail -> (i1, index, index, index, index, index, index, index, index) {{
      %more_tail = arith.cmpi sgt, %g, %a : index
      %next = arith.select %more_tail, %c4, %c6 : index
      %g1 = arith.subi %g, %c1 : index
      %goal = arith.select %more_tail, %g1, %g : index
      scf.yield %false, %c4, %g, %next, %nowhere, %a, %e, %goal, %d
          : i1, index, index, index, index, index, index, index, index
    }} else {{
    %is_return = arith.cmpi eq, %ph, %c6 : index
    %n6:9 = scf.if %is_return -> (i1, index, index, index, index, index, index, index, index) {{
      %outer = arith.cmpi eq, %d, %c0 : index
      %o:9 = scf.if %outer -> (i1, index, index, index, index, index, index, index, index) {{
        scf.yield %false, %c3, %a, %c7, %p, %a, %e, %g, %d
            : i1, index, index, index, index, index, index, index, index
      }} else {{
        %popped = func.call @{POP}(%frames) : (memref<3xi64>) -> index
        %d1 = arith.subi %d, %c1 : index
        scf.yield %false, %c3, %a, %c1, %p, %popped, %a, %g, %d1
            : i1, index, index, index, index, index, index, index, index
      }}
      scf.yield %o#0, %o#1, %o#2, %o#3, %o#4, %o#5, %o#6, %o#7, %o#8
          : i1, index, index, index, index, index, index, index, index
    }} else {{
      scf.yield %false, %c5, %c0, %c7, %c0, %c0, %c0, %c0, %c0
          : i1, index, index, index, index, index, index, index, index
    }}
    scf.yield %n6#0, %n6#1, %n6#2, %n6#3, %n6#4, %n6#5, %n6#6, %n6#7, %n6#8
        : i1, index, index, index, index, index, index, index, index
    }}
    scf.yield %n5#0, %n5#1, %n5#2, %n5#3, %n5#4, %n5#5, %n5#6, %n5#7, %n5#8
        : i1, index, index, index, index, index, index, index, index
    }}
    scf.yield %n4#0, %n4#1, %n4#2, %n4#3, %n4#4, %n4#5, %n4#6, %n4#7, %n4#8
        : i1, index, index, index, index, index, index, index, index
    }}
    scf.yield %n3#0, %n3#1, %n3#2, %n3#3, %n3#4, %n3#5, %n3#6, %n3#7, %n3#8
        : i1, index, index, index, index, index, index, index, index
    }}
    scf.yield %n2#0, %n2#1, %n2#2, %n2#3, %n2#4, %n2#5, %n2#6, %n2#7, %n2#8
        : i1, index, index, index, index, index, index, index, index
    }}
    scf.yield %n1#0, %n1#1, %n1#2, %n1#3, %n1#4, %n1#5, %n1#6, %n1#7, %n1#8
        : i1, index, index, index, index, index, index, index, index
    }}
    scf.yield %n#0, %n#1, %n#2, %n#3, %n#4, %n#5, %n#6, %n#7, %n#8
        : i1, index, index, index, index, index, index, index, index
  }}
  func.return %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8
      : index, index, index, index, index, index, index, index
}}
"""


@cache
def _functions() -> ModuleOp:
    return parse_module(_SOURCE, "revmlir.cursor", make_context())


def definitions() -> list[func.FuncOp]:
    """Fresh copies of ``@revmlir.cursor.next`` and its helpers (the stack
    functions they call are the stack runtime's, declared by the caller)."""
    return [op.clone() for op in _functions().ops if isinstance(op, func.FuncOp) and not op.is_declaration]
