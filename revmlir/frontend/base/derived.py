"""The programs derived from a specialization (``@f.adj``, ``@f.grad``,
``@f.tan``, …) and what the derivatives of Python functions share.

A derived program is built once per specialization and kind, in a copy of
the specialization's module, and runs where ``f`` does: natively when ``f``'s
specialization does, otherwise on the interpreter.  ``rv.adjoint(f)`` calls
``@f.adj`` itself; ``rv.gradient``, ``rv.vjp``, ``rv.jvp`` and the matrices
differentiate a ``ReversibleCall``, which ``@rv.ordinary`` functions build
for their reversible form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeGuard
from weakref import WeakKeyDictionary

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.collector import collector_paused
from revmlir.errors import InversionError
from revmlir.frontend.base.source import Source
from revmlir.frontend.base.specialization import (
    Invertible,
    Specialization,
    compile_natively,
    named_arguments,
    room_to_nest,
    verify_derived,
)
from revmlir.frontend.base.structs import Layout
from revmlir.interpreter import RevInterpreter
from revmlir.runtime.arguments import ArgumentProblem
from revmlir.runtime.backend import Backend
from revmlir.runtime.native import NativeModule


class Reversible(Protocol):
    """A ``@rv.reversible`` function as ``rv.adjoint`` and the compiler see
    it (``revmlir.frontend.reversible_code.functions`` defines it, above both, and compiles it
    with ``revmlir.frontend.reversible_code.compiler``): recognised by its
    ``__revmlir_reversible__`` marker."""

    __revmlir_reversible__: bool
    pyfunc: Callable[..., Any]
    source: Source
    checks: bool
    hints: dict[str, Any]

    @property
    def __name__(self) -> str: ...

    @property
    def parameters(self) -> list[str]: ...

    def annotated_types(self) -> list[Attribute | None]: ...

    def flattened(self, layout: Layout) -> Reversible:
        """The function taking the fields of its struct arguments in
        ``layout`` as parameters of their own."""
        ...

    def specialization_for(self, *args: Any) -> Specialization: ...


def is_reversible(value: object) -> TypeGuard[Reversible]:
    """Whether ``value`` is a ``@rv.reversible`` function."""
    return getattr(value, "__revmlir_reversible__", False) is True


_derived: WeakKeyDictionary[Specialization, dict[str, tuple[ModuleOp, Backend]]] = WeakKeyDictionary()


def derived_backend(
    spec: Specialization, what: str, generate: Callable[[ModuleOp, list[str]], object]
) -> tuple[ModuleOp, Backend]:
    """A copy of the specialization's module to which ``generate`` added
    functions derived from ``f`` (``what`` names them: "adjoint", …), and how
    it runs: natively when ``f``'s specialization does, otherwise on the
    interpreter.  Built once per specialization and kind.  Derived
    functions are run forward: native code compiles the inverses only if
    one is uncalled (``NativeModule.holding``)."""
    derived = _derived.setdefault(spec, {})
    if (cached := derived.get(what)) is None:
        name = spec.function.__name__
        with collector_paused(), room_to_nest(spec.function, f"the {what} of {name}"):
            module = spec.module.clone()
            generate(module, [spec.name])
            verify_derived(spec.function, what, module)
            backend: Backend = RevInterpreter(module, verified=True)
            if spec.native is not None:
                compiled = compile_natively(
                    spec.function, f"the {what} of {name}", partial(NativeModule.compile, module, verified=True)
                )
                backend = compiled or backend
        cached = derived[what] = (module, backend)
    return cached


def adjoint_backend(spec: Specialization, lanes: int = 1) -> tuple[ModuleOp, Backend]:
    """The module holding ``@f.adj`` (``@f.adjL``) for this specialization
    and how it runs."""
    if lanes == 1:
        return derived_backend(spec, "adjoint", generate_adjoints)
    return derived_backend(spec, f"adjoint, {lanes} lanes", partial(generate_adjoints, lanes=lanes))


def own_gradient(spec: Specialization) -> Backend:
    """How a specialization whose module holds its own ``@f.grad``
    (checkpointed gradients) runs it: as it runs ``f``, compiled once."""
    return spec.native if spec.native is not None else spec.interpreter


@dataclass(frozen=True)
class ReversibleCall:
    """A call of ``f`` as a run of a reversible specialization, which
    ``rv.gradient`` and ``rv.vjp`` differentiate.  A reversible function is
    its own specialization, whose arguments are ``f``'s inputs and outputs;
    an ``@rv.ordinary`` function runs its reversibilized form, which also
    takes result slots and output arrays."""

    spec: Specialization
    arguments: tuple[Any, ...]
    """The specialization's arguments for ``f``'s inputs."""
    inputs: tuple[int, ...]
    """Per input of ``f``: the argument that receives it (and its gradient)."""
    outputs: tuple[int, ...]
    """Per output of ``f``: the argument that holds it after the run."""
    recompute: bool = False
    """Whether the specialization's gradient ``@f.grad`` reruns ``f`` from
    its inputs under a checkpoint schedule: then pullbacks call it, not
    ``@f.adj`` on the state after the run."""

    def output_name(self, k: int) -> str:
        """Output ``k`` of ``f`` in a message: by its number, and by the
        name of the argument it is (a reversible function's outputs are its
        arguments; an ordinary one's follow its results)."""
        function = self.spec.function
        parameters, count = function.parameters, len(self.outputs)
        if not -count <= k < count:
            return f"output #{k} of {function.__name__}"
        k %= count
        named = f"output #{k} of {function.__name__}"
        parameter = k - (count - len(parameters))
        if parameter < 0:
            return named
        if count == len(parameters):
            return f"{named} (argument '{parameters[parameter]}')"
        return f"{named} ('{parameters[parameter]}' as the call leaves it)"

    def cotangent_labels(self) -> tuple[str, ...]:
        """Per argument of the specialization, its cotangent as a message
        names it: by the output of ``f`` it holds, or by ``f`` (a result
        slot or a tape); formatted once per specialization and outputs, as
        ``argument_labels`` are."""
        labels = _output_labels.setdefault(self.spec, {})
        if (found := labels.get(self.outputs)) is None:
            number = {position: k for k, position in enumerate(self.outputs)}
            name = self.spec.function.__name__
            found = labels[self.outputs] = tuple(
                f"the cotangent of {self.output_name(number[i]) if i in number else name}"
                for i in range(len(self.spec.types))
            )
        return found


_output_labels: WeakKeyDictionary[Specialization, dict[tuple[int, ...], tuple[str, ...]]] = WeakKeyDictionary()


def argument_name(function: Any, i: int) -> str:
    """Argument ``i`` of ``function`` in a message: by the parameter's
    name, which is how its user knows it."""
    parameters = function.parameters
    which = f"'{parameters[i]}'" if -len(parameters) <= i < len(parameters) else f"#{i}"
    return f"argument {which} of {function.__name__}"


_labels: WeakKeyDictionary[Specialization, dict[str, tuple[str, ...]]] = WeakKeyDictionary()


def argument_labels(spec: Specialization, what: str) -> tuple[str, ...]:
    """Per argument of ``spec``, ``what`` of it as a message says it
    (``the tangent of argument 'x' of f``), formatted once per
    specialization: a derivative call labels every seed it checks, and
    for small programs formatting them cost more than the derivative."""
    labels = _labels.setdefault(spec, {})
    if (found := labels.get(what)) is None:
        found = labels[what] = tuple(f"{what} of {argument_name(spec.function, i)}" for i in range(len(spec.types)))
    return found


@dataclass(frozen=True)
class AdjointFunction:
    """``rv.adjoint(f)``: the gradient program ``@f.adj`` as a function.

    It takes ``f``'s arguments holding ``f``'s outputs, then one gradient per
    argument that carries one (a float for a float or complex scalar, an
    array shaped like the argument for an array of floats), and runs ``f``
    backwards while the gradients flow from the outputs to the inputs: it
    returns ``f``'s inputs and the input gradients (arrays are updated in
    place).  Called inside a reversible function it becomes a
    ``rev.call @f.adj``, so a program can compute many gradients natively
    (a Jacobian block per observation, for instance).

    ``rv.adjoint(f, lanes=L)`` is ``@f.adjL`` (vector mode): ``L`` sets of
    gradients, lane by lane, in one backward run that uncomputes ``f`` once
    for all of them (``L`` rows of a Jacobian).
    """

    function: Reversible
    lanes: int = 1

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        return self.run(args, keywords, backward=False)

    @property
    def __name__(self) -> str:
        """As the source writes it, lanes included: ``rv.adjoint(f, lanes=2)``."""
        lanes = f", lanes={self.lanes}" if self.lanes > 1 else ""
        return f"rv.adjoint({self.function.__name__}{lanes})"

    def __repr__(self) -> str:  # as refusals show it: the dataclass's nests the function's
        return f"<{self.__name__}>"

    @property
    def inverse(self) -> InverseAdjoint:
        return InverseAdjoint(self)

    def __invert__(self) -> InverseAdjoint:
        return self.inverse

    def run(self, args: tuple[Any, ...], keywords: Mapping[str, Any], backward: bool) -> Any:
        """Run ``@f.adj`` forward, or backward for ``~rv.adjoint(f)``: both
        take ``f``'s arguments, then the gradients, and return them."""
        who = ("~" if backward else "") + self.__name__
        args = self.bound(f"{who}()", args, keywords)
        spec = self.specialization(args, who)
        _, backend = adjoint_backend(spec, self.lanes)
        try:
            results = backend.caller(adjoint_name(spec.name, self.lanes), backward)(args)
        except ArgumentProblem as error:
            raise named_arguments(self.function, error, partial(self.gradient_name, spec)) from None
        except InversionError as error:
            if not backward:
                raise
            name = self.function.__name__
            raise InversionError(
                f"{who}: the adjoint of {name} has no inverse: {error}; "
                f"to get {name}'s outputs back, call {name} on its inputs"
            ) from None
        return results[0] if len(results) == 1 else results

    def bound(self, who: str, args: tuple[Any, ...], keywords: Mapping[str, Any]) -> tuple[Any, ...]:
        """The arguments of a call (``who``) of the adjoint or its kernel,
        all by position: its gradients, which have no names, come after
        ``f``'s arguments, and Python takes no argument by position after
        one by name, so a keyword could only be misplaced."""
        if keywords:
            raise TypeError(
                f"{who} takes its arguments by position, got '{next(iter(keywords))}' by name: "
                f"{self.function.__name__}'s ({', '.join(self.function.parameters)}), then the gradients"
            )
        return args

    def specialization(self, args: Sequence[Any], who: str | None = None) -> Specialization:
        """``f``'s specialisation for the arguments of a call (``f``'s,
        then the gradients), which says how many gradients it takes: a
        ``TypeError`` where they are not as many, before any of them is
        looked at (and named: ``gradient_name`` numbers them by it), said
        of ``who`` (``~rv.adjoint(f)``; by default ``rv.adjoint(f)``)."""
        count = len(self.function.parameters)
        spec = self.function.specialization_for(*args[:count])
        if len(args) != count + self.lanes * len(spec.carrying):
            per_lane = f" per lane ({self.lanes} lanes)" if self.lanes > 1 else ""
            raise TypeError(
                f"{who or self.__name__} takes {count} argument(s) and "
                f"{len(spec.carrying)} gradient(s){per_lane}, got {len(args)} value(s)"
            )
        return spec

    def gradient_name(self, spec: Specialization, i: int) -> str:
        """Argument ``i`` of ``@f.adj`` past ``f``'s, a gradient, in a
        message: by its position and the parameter whose gradient it is."""
        count = len(self.function.parameters)
        lane, k = divmod(i - count, len(spec.carrying))
        of = spec.carrying[k]
        which = repr(self.function.parameters[of]) if of < count else f"#{of}"
        return f"#{i} (the gradient of {which}" + (f", lane {lane})" if self.lanes > 1 else ")")


@dataclass(frozen=True)
class InverseAdjoint:
    """``~rv.adjoint(f)`` (``rv.adjoint(f).inverse``): ``@f.adj`` run
    backwards.  It takes what ``rv.adjoint(f)`` returns, ``f``'s inputs and
    their gradients, and returns what it took, ``f``'s outputs and their
    gradients: ``@f.adj`` is a reversible program (it uncomputes ``f`` while
    it accumulates), so its inverse is the one rev IR's ``rev.uncall
    @f.adj`` runs, as a reversible function does when it uncalls it.  An
    adjoint that forgets (the gradient an ancilla has at its birth) has
    none, which the call says."""

    adjoint: AdjointFunction

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        return self.adjoint.run(args, keywords, backward=True)

    @property
    def __name__(self) -> str:
        return "~" + self.adjoint.__name__

    def __repr__(self) -> str:
        return f"<{self.__name__}>"

    @property
    def inverse(self) -> AdjointFunction:
        return self.adjoint

    def __invert__(self) -> AdjointFunction:
        return self.adjoint


def unsupported_adjoint(function: object) -> str | None:
    """Why ``rv.adjoint`` takes no ``function`` that is a derived form of a
    reversible function, and what to write instead, or None where it is
    none: the adjoint of an inverse or of an adjoint, which no pass builds
    (``~f`` and ``rv.adjoint(f)`` are differentiated through their
    specialisations, ``@f.inv`` and the Hessian programs)."""
    if isinstance(function, AdjointFunction | InverseAdjoint):
        name = (function.adjoint if isinstance(function, InverseAdjoint) else function).function.__name__
        return (
            f"rv.adjoint({function.__name__}): an adjoint's adjoint is not supported; "
            f"for second derivatives of {name} use rv.hvp({name}, …) or rv.hessian({name}, …)"
        )
    if isinstance(function, Invertible) and is_reversible(forward := ~function):
        return (
            f"rv.adjoint(~{forward.__name__}): the adjoint of an inverse is not supported; "
            f"differentiate ~{forward.__name__} with rv.vjp(~{forward.__name__}, …) or rv.gradient(~{forward.__name__}, …)"
        )
    return None


def adjoint(function: Reversible, lanes: int = 1) -> AdjointFunction:
    """``rv.adjoint(f)`` (``rv.adjoint(f, lanes=L)``), see ``AdjointFunction``."""
    if (problem := unsupported_adjoint(function)) is not None:
        raise TypeError(problem)
    if not is_reversible(function):
        raise TypeError(f"rv.adjoint expects a @rv.reversible function, got {function!r}")
    if type(lanes) is not int or lanes < 1:
        raise TypeError(f"rv.adjoint: lanes must be an integer ≥ 1, got {lanes!r}")
    return AdjointFunction(function, lanes)
