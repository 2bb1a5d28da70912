"""State the interpreter keeps besides SSA values: counters, live ancillas,
borrowed elements, and the inverse code it derived for ``rev.uncall``,
``rev.inv`` and ``rev.routine``."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, OpImplResult, _InterpreterFunctionImpls
from xdsl.ir import Operation, Region
from xdsl.traits import SymbolTable

from revmlir.call_graph import components
from revmlir.dialects import rev
from revmlir.errors import ExecutionError, InvertibilityError, describe_op
from revmlir.expansion import backward_region
from revmlir.interfaces import InvertibleOp, RuntimeCheckedOp
from revmlir.interpreter import complex_numbers
from revmlir.inversion import invert_function
from revmlir.lowering.checked_code import display_name
from revmlir.naming import inverse_name, shown_name, source_name
from revmlir.runtime_checks import DEFAULT_TOLERANCE
from revmlir.safety import stack_limit

_NO_SEMANTICS = "Could not find interpretation function for op"
"""How xDSL's interpreter reports an op it has no implementation for."""

_NO_BODY = "Could not find external function implementation named "
"""How xDSL's interpreter reports a call of a function only declared."""


@dataclass
class FunctionCounters:
    """What ran inside one function; ``instructions`` counts executed
    reversible instructions (not region ops or calls) in both directions."""

    calls: int = 0
    uncalls: int = 0
    instructions: int = 0

    @property
    def invocations(self) -> int:
        return self.calls + self.uncalls


@dataclass
class Frame:
    name: str
    backward: bool
    derived_inverse: bool = False
    """Whether the function is an inverse a pass or a compile derived
    (``DERIVED_INVERSE_ATTR``), run forwards."""

    def __str__(self) -> str:
        """As errors name the function: derived code by the user's function
        it runs (``source_name``), and a derived inverse of ``@f`` ``~f``
        (``shown_name``), as native code names them."""
        if self.backward:
            return "~" + source_name(self.name)
        return shown_name(self.name, self.derived_inverse)


@dataclass
class Runtime:
    tolerance: float = DEFAULT_TOLERANCE
    counters: defaultdict[str, FunctionCounters] = field(default_factory=lambda: defaultdict(FunctionCounters))
    live_ancillas: int = 0
    peak_live_ancillas: int = 0
    live_snapshots: int = 0
    peak_snapshots: int = 0
    live_snapshot_bytes: int = 0
    peak_snapshot_bytes: int = 0
    """The bytes of the records held (elements times their size), which a
    stack's live part makes vary from record to record."""
    borrowed: dict[tuple[int, tuple[int, ...]], rev.TakeOp] = field(
        default_factory=dict[tuple[int, tuple[int, ...]], rev.TakeOp]
    )
    frames: list[Frame] = field(default_factory=list[Frame])
    current_op: Operation | None = None
    stack_limit: int = field(default_factory=stack_limit)
    """``revmlir.safety.stack_limit()`` when the interpreter was made, as
    native code takes it when a module is compiled (read at every push, the
    environment cost more than the push)."""
    recursive_calls: int = 0
    """The calls that may recurse (``may_recurse``) running now."""
    _components: dict[str, int] | None = None
    _inverse_functions: dict[rev.FuncOp, rev.FuncOp] = field(default_factory=dict[rev.FuncOp, rev.FuncOp])
    _module_inverses: dict[rev.FuncOp, rev.FuncOp | None] = field(default_factory=dict[rev.FuncOp, rev.FuncOp | None])
    _inverse_regions: dict[Operation, Region] = field(default_factory=dict[Operation, Region])

    # -- errors ----------------------------------------------------------------

    def fail(self, op: Operation, message: str) -> InvertibilityError:
        function = str(self.frames[-1]) if self.frames else None
        error = InvertibilityError.at(op, message, function)
        return error

    def failed_execution(self, error: Exception, at: Operation | None = None) -> ExecutionError:
        """``error`` (an index out of bounds, a division by zero, …) at the op
        that raised it (``at``, where the op last run is not that op), in the
        function running it."""
        message = str(error)
        if message.startswith(_NO_SEMANTICS):  # xDSL's text for an unknown op
            message = "the interpreter has no semantics for this op"
        elif message.startswith(_NO_BODY):  # the interpreter links nothing in
            name = message.removeprefix(_NO_BODY)
            message = f"@{name} is only declared: the interpreter runs functions defined in the module"
        op = at or self.current_op
        if op is None:
            return ExecutionError(message, function=str(self.frames[-1]) if self.frames else None)
        return ExecutionError.at(op, message, str(self.frames[-1]) if self.frames else std_function(op))

    def checking(self, op: RuntimeCheckedOp) -> bool:
        return op.checks_enabled

    def same(self, a: Any, b: Any) -> bool:
        """Equality for run-time checks: exact for integers, within tolerance
        for floats and complex numbers, where a NaN is the value a NaN is
        (``complex_numbers.close``)."""
        if isinstance(a, bool | int) and isinstance(b, bool | int):
            return a == b
        if isinstance(a, complex) or isinstance(b, complex):
            return complex_numbers.close(complex(a), complex(b), self.tolerance)
        return math.isclose(a, b, rel_tol=self.tolerance, abs_tol=self.tolerance) or (math.isnan(a) and math.isnan(b))

    # -- ancillas ------------------------------------------------------------------

    def allocate(self) -> None:
        self.live_ancillas += 1
        self.peak_live_ancillas = max(self.peak_live_ancillas, self.live_ancillas)

    def release(self) -> None:
        self.live_ancillas -= 1

    # -- snapshots (checkpointed gradients) ---------------------------------------

    def take_snapshot(self, size: int) -> None:
        """A record of ``size`` bytes is held."""
        self.live_snapshots += 1
        self.peak_snapshots = max(self.peak_snapshots, self.live_snapshots)
        self.live_snapshot_bytes += size
        self.peak_snapshot_bytes = max(self.peak_snapshot_bytes, self.live_snapshot_bytes)

    def drop_snapshot(self, size: int) -> None:
        self.live_snapshots -= 1
        self.live_snapshot_bytes -= size

    # -- derived inverse code -------------------------------------------------------

    def may_recurse(self, module: ModuleOp, caller: str, callee: str) -> bool:
        """Whether a call of ``callee`` in ``caller`` may recurse: both in
        one cycle of the module's reversible functions, whose calls and
        uncalls, in any region, are the edges (``call_graph.components``).
        Native code's cycles are those of the lowered functions, where an
        uncall calls ``@f.inv``; a cycle of names is one of those run in
        either direction (a cycle run twice comes back to its direction), so
        both count the same calls.  An uncall of ``@f`` where the module has
        an ``@f.inv`` runs that function (``run_uncall``): its edge is to
        it.  Worked out again where a function is new to it (one a module
        gained after the first call)."""
        if self._components is None or caller not in self._components or callee not in self._components:
            functions = [op for op in module.ops if isinstance(op, rev.FuncOp)]
            names = {function.sym_name.data for function in functions}
            self._components = components(
                {
                    function.sym_name.data: [
                        _runs(call, names)
                        for call in function.walk()
                        if isinstance(call, rev.CallOp | rev.UncallOp) and call.callee.string_value() in names
                    ]
                    for function in functions
                }
            )
        component = self._components.get(caller)
        return component is not None and component == self._components.get(callee)

    def module_inverse(self, module: ModuleOp, func: rev.FuncOp) -> rev.FuncOp | None:
        """The module's own ``@f.inv`` of ``func`` (``@f``), which an uncall
        of ``@f`` runs forwards, or None (looked up once per function)."""
        if func not in self._module_inverses:
            found = SymbolTable.lookup_symbol(module, inverse_name(func.sym_name.data))
            self._module_inverses[func] = found if isinstance(found, rev.FuncOp) else None
        return self._module_inverses[func]

    def inverse_function(self, func: rev.FuncOp) -> rev.FuncOp:
        if (inverse := self._inverse_functions.get(func)) is None:
            inverse = self._inverse_functions[func] = invert_function(func)
        return inverse

    def inverse_region(self, op: rev.InvOp | rev.RoutineOp) -> Region:
        """The region ``op`` runs backwards, inverted when a run first
        reaches it (an ``InversionError`` there), as native code's check."""
        if (inverse := self._inverse_regions.get(op)) is None:
            inverse = self._inverse_regions[op] = backward_region(op)
        return inverse


class _Implementations(_InterpreterFunctionImpls):
    """xDSL's dispatch of an op to its semantics, without the note xDSL adds
    to an error: it prints the whole module into every exception that
    passes an op on its way up, so an error at the bottom of n nested calls
    cost n dumps of the module (minutes for 10 000), which the interpreter
    drops anyway: its errors name their op and location."""

    def run(self, interpreter: Interpreter, op: Operation, args: tuple[Any, ...]) -> OpImplResult:
        found = self._impl_dict.get(type(op))
        if found is None:
            return super().run(interpreter, op, args)  # xDSL's error for an op without semantics
        functions, implementation = found
        return implementation(functions, interpreter, op, args)


class RuntimeInterpreter(Interpreter):
    """xDSL's interpreter plus the revmlir runtime state."""

    runtime: Runtime

    def __init__(self, module: ModuleOp, runtime: Runtime):
        super().__init__(module, index_bitwidth=64, listeners=(_Observer(runtime),))
        self._impls = _Implementations()
        self.runtime = runtime


class _Observer(Interpreter.Listener):
    """Counts instructions per function and remembers the op being run, so
    errors can say where they happened."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        runtime = self.runtime
        runtime.current_op = op
        if (
            isinstance(op, InvertibleOp)
            and not op.regions
            and not isinstance(op, rev.CallOp | rev.UncallOp)
            and runtime.frames
        ):
            runtime.counters[runtime.frames[-1].name].instructions += 1


def _runs(call: rev.CallOp | rev.UncallOp, names: set[str]) -> str:
    """The function ``call`` runs: its callee's, or for an uncall of ``@f``
    the module's ``@f.inv`` where it has one."""
    callee = call.callee.string_value()
    if isinstance(call, rev.UncallOp) and inverse_name(callee) in names:
        return inverse_name(callee)
    return callee


def describe_current(runtime: Runtime) -> str:
    return describe_op(runtime.current_op) if runtime.current_op else "the program"


def std_function(op: Operation) -> str | None:
    """The function holding ``op`` of a lowered run (``call_lowered`` keeps
    no frames), named as native code names it."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return None if parent is None else display_name(parent)
