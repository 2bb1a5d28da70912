"""A test per error message of the Python frontend and the builder under it.

Every message a user of ``@rv.reversible`` can cause is a located
``rv.ReversibleSyntaxError`` (this file, the faulty line, a column >= 1, the
message and its hint), or the documented exception type for mistakes in how a
reversible function is decorated or called (``TypeError``, ``ValueError``,
``rv.NativeCompilationError``, ``RuntimeError`` outside a reversible
function).  The faulty line carries a ``# E:name`` marker.  Messages no
reversible Python can reach are tested through the builder API (the last
section), and say so.

Catalogue: message → test (``errors::`` = tests/test_frontend_errors.py, which
this file does not repeat).

revmlir/frontend/reversible_code/functions.py, source.py (reading the function), specialization.py (compiling it)
  TypeError "@rv.reversible decorates functions defined with def, not …"  test_decorating_a_lambda_or_an_object
  TypeError "@rv.reversible needs the source of …"                     test_function_without_source
  TypeError "@rv.reversible decorates functions" (async def)            test_decorating_an_async_function
  ValueError "unknown backend …"                                        test_unknown_backend
  "reversible functions do not support *args and **kwargs"              test_signature_restrictions
  "… keyword-only and positional-only parameters"                       test_signature_restrictions
  "… default values"                                                    test_signature_restrictions (+ errors::test_signature_restrictions_at_decoration)
  "… other decorators"                                                  test_signature_restrictions
  "unknown annotation '…' for parameter '…'"                            test_unknown_annotations_are_refused
  "'rv.Stack(float)' for parameter 's' is a stack, not a type"          test_a_stack_as_an_annotation_is_refused_at_it
  TypeError "f() takes N argument(s) (…), got M"                        errors::test_wrong_argument_types_are_type_errors
  TypeError "argument 'v' has unsupported type list (pass a numpy array)"  errors::test_wrong_argument_types_are_type_errors
  TypeError "… unsupported type ndarray (arrays of int8 are not supported)"  test_array_of_an_unsupported_dtype
  TypeError "argument 'x' is declared float, got complex"               errors::test_wrong_argument_types_are_type_errors
  TypeError "f.mlir() needs example arguments, …"                       test_mlir_without_arguments
  NativeCompilationError "f cannot run natively: …"                     test_native_backend_for_a_program_native_code_cannot_run
revmlir/frontend/base/markers.py
  RuntimeError "rv.X only has a meaning inside a @rv.reversible function"  errors::test_markers_outside_reversible_functions, test_with_block_marker_outside
revmlir/frontend/reversible_code/compiler.py — at decoration (check_structure)
  "'delete' statements are not reversible" (every _NEVER_REVERSIBLE)    errors::test_unsupported_statements_at_decoration
  "a reversible function returns all its arguments, updated" / "remove the return value"  errors::test_return_value_at_decoration
  "'y //= 2' is not reversible"                                         errors::test_unsupported_update_operator_at_decoration
  "'y = x * 2.0' overwrites y, which is not reversible"                 errors::test_plain_assignment_is_rejected_at_decoration
  "'b = x * 2.0' makes a new variable b; …" / "write b = rv.ancilla(x * 2.0) …"  test_first_assignment_at_decoration
  "'x -= x * y' reads x, the variable it updates, …"                    errors::test_target_read_in_its_own_update_at_decoration
revmlir/frontend/reversible_code/compiler.py — at first call
  _located_error: verifier ReversibilityViolation                       errors::test_shared_argument_is_a_linearity_error
  _located_error: other VerifyException ("'op': …" in full)             test_verifier_fallback_names_the_op_and_the_whole_reason
  "routine 'r' is never uncomputed"                                     errors::test_routine_without_uncompute
  "a routine needs a name"                                              test_routine_without_a_name
  "a reversible function returns all its arguments, updated" / "remove the return; …"  test_bare_return_before_the_end
  "'~x' does not close a routine opened in this block"                  test_uncompute_without_a_routine
  "'…' is not a reversible statement" / "see the statement table …"     test_expression_statement
  "loop variable 'i' cannot be updated"                                 errors::test_loop_variable_is_immutable
  "unknown variable 'z'" / "allocate it first: …" (update target)       test_update_of_an_unknown_variable
  "'x' is not an array" / "index arrays only: x[i]" (update target)     test_indexing_a_scalar_target
  "cannot update '…'"                                                   test_update_of_an_attribute
  "'y //= 2' is not reversible" (call-time copy)                        test_unsupported_update_operator_at_call_time
  "'x *= y' is not reversible on float"                                 errors::test_multiplying_a_float_in_place
  "'x /= y' is not reversible on float" / "divide log numbers instead"  errors::test_dividing_a_float_in_place
  "log numbers are updated with *= and /="                              test_adding_to_a_log_number
  "chained assignment is not reversible"                                test_chained_assignment
  "allocate into a plain name"                                          test_allocating_into_an_attribute
  "'x' already exists"                                                  test_allocating_an_existing_name
  "'x = math.sin(x)' overwrites x, …" (call-time copy)                  test_overwrite_by_a_call
  "'b = math.sin(x)' makes a new variable b; …" (call-time copy)        test_first_assignment_of_a_call
  "'i = math.sin(x)' overwrites i, …" (a loop variable)                 test_assigning_a_loop_variable_overwrites_it
  "'rv.ancilla_array' does not exist: revmlir has no …" / nearest names  test_misspelt_module_function
  "rv.stack takes the element type: rv.stack(float)"                    test_stack_without_a_type
  "'str' is not a type"                                                 test_stack_of_a_non_type
  "rv.pop takes a stack: x = rv.pop(s)"                                 test_pop_without_a_stack
  "rv.ancilla takes a value and optionally a type"                      test_ancilla_with_unknown_keyword
  "'a, b = (a, b)' is not a swap"                                       test_tuple_assignment_that_is_not_a_swap
  "'rv.swap' takes 2 argument(s)"                                       test_instruction_with_wrong_argument_count
  "print is a host side effect"                                         errors::test_print_outside_safe
  "unknown function 'f'" (statement)                                    test_call_of_an_undefined_function_statement
  "'math.sin(x)' is not a reversible statement"                         test_call_of_a_non_reversible_function_statement
  "'x + 1.0' is not a variable"                                         test_push_of_an_expression
  "rv.free takes a variable and optionally its value"                   test_free_without_arguments
  "a stack is freed without a value"                                    test_free_of_a_stack_with_a_value
  "'v' is an argument array; only ancillas, ancilla arrays (rv.zeros) and stacks can be freed"  test_free_of_an_array
  "an ancilla array is freed without a value"                           test_ancilla_array_freed_with_a_value
  "rv.zeros takes a shape …" (usage, and as the hint below)             test_zeros_errors
  "an ancilla array has at least one dimension"                         test_zeros_errors
  "ancilla arrays hold integers or floats, not complex"                test_zeros_errors
  "the size '1.5' is not an integer"                                    test_zeros_errors
  "argument 'x' was freed or pushed; it must be returned"               test_free_and_push_of_an_argument
  "g takes 2 argument(s) (a, b), got 1"                                 errors::test_call_with_wrong_argument_count
  "g takes positional arguments only"                                   test_call_with_keyword_arguments
  "'v' is passed to h twice"                                            test_same_array_passed_twice
  "'x' is passed to g twice"                                            test_same_scalar_passed_twice
  "argument 'a' of takes_float is declared float, got int64"            test_call_with_wrong_declared_type
  "rv.cond takes a precondition and a postcondition"                    test_cond_with_wrong_arguments
  "a reversible while loop needs a postcondition"                       errors::test_while_needs_a_postcondition
  "while … else is not supported"                                       test_while_else
  "a for loop needs one loop variable"                                  test_for_with_two_loop_variables
  "for … else is not supported"                                         test_for_else
  "cannot loop over '…'"                                                errors::test_loop_over_a_list
  "rv.checkpointed() marks loops of @rv.ordinary functions, …"         errors::test_a_checkpoint_mark_in_a_reversible_function
  "range() needs integers, got float"                                   test_range_of_a_float
  "range() step must not be zero"                                       test_range_step_zero
  "use `with rv.inverse():`, …"                                         test_with_two_context_managers
  "'with rv.safe(when=x)': rv.safe takes one constant, …"               test_safe_with_a_non_constant_option
  "rv.safe(when='sideways'): use 'forward', 'inverse' or 'both'"        test_safe_with_an_unknown_direction
  "'with open('f')' is not a reversible block"                          test_with_a_foreign_context_manager
  "'x' is reversible state, which rv.safe does not update: …"            test_instruction_inside_safe
revmlir/frontend/base/structs.py, views.py, safe_blocks.py, types.py (rv.Stack) — tests/test_language_ext.py
  "'p' has no field 'y'", "'p' is a struct argument, …", "g(): argument 'p' is declared Particle, got …"
  "'z.real' aliases 'z.real', which this instruction updates: …"
  "the bijection '…' of a view must be a @rv.reversible function of one argument", "rv.view(x, g) is an argument of a call"
  "'s' is an argument stack; it goes back to the caller", TypeError "rv.Stack(…): the element type must be …",
  TypeError "rv.Stack(…): numpy scalar types are not stack element types, …"
  "print(…, flush=…) is not supported inside rv.safe", "an assertion's message must be a constant string", "'c[0] *= 2' is no count"
  "only print(...), assert and counts … can run inside rv.safe", print, assert and count forms  tests/test_language_ext.py
  (specialisation names) no bogus "'rev.call' passes (…)" error         test_specialisation_names_do_not_collide
revmlir/frontend/base/expressions.py
  "'None' is not a supported expression"                                test_unsupported_expression
  "'x' is not a boolean" / "compare it explicitly"                      test_non_boolean_operand_of_and
  "unknown variable 'u'" (expression)                                   errors::test_unknown_variable
  "operator 'x @ x' is not supported"                                   test_matrix_multiplication_operator
  "'x << 1': << needs integers or booleans"                             test_shift_of_a_float
  "'z % 2': % is not defined on complex numbers"                        test_modulo_of_a_complex
  "'a ** 3': a log number (rv.ULog) has no arithmetic in an expression of a reversible function", "'-a': …"
                                                                        test_a_power_of_a_log_number, test_mixing_numbers_that_do_not_combine
  "np.remainder() takes real numbers, not complex"                      test_numpy_remainder_of_a_complex
  "np.fmod() takes real numbers, not a 1-d array of float"              test_division_of_an_array
  "'u % 2.0': % takes real numbers, not a 1-d array of float"            test_division_of_an_array
  "np.floor_divide() takes 2 arguments here, got 1"                     test_library_function_of_the_wrong_argument_count
  "'~x': ~ needs an integer"                                            test_bitwise_not_of_a_float
  "'x is y': only <, <=, >, >=, ==, != compare values"                  test_identity_comparison
  "slices are not supported"                                            test_slice
  "array index 'x' is not an integer"                                   test_float_index
  "'[1.0, 2.0]' is not an array argument" (subscript)                   test_subscript_of_a_list_literal
  "'x + 1.0' is not an array argument" (shape)                          test_shape_of_an_expression
  "x.shape[d] needs a constant d"                                       test_shape_with_a_variable_dimension
  "'v' has no dimension 1"                                              test_shape_beyond_the_rank
  "'x' is not an array" (len / shape of a scalar)                       test_len_of_a_scalar
  "'x.conjugate' is not supported in an expression"                     test_unsupported_attribute
  "keyword arguments are not supported in expressions"                  test_keyword_argument_in_an_expression
  "unknown function 'f'" (expression)                                   test_call_of_an_undefined_function_in_an_expression
  "cannot call 'sorted' in an expression"                               errors::test_unsupported_expression_call
  "'math.lgamma' has no rules in revmlir" / "@rv.primitive"             errors::test_library_function_without_rules
  "'g' is reversible; call it as a statement"                           test_reversible_function_in_an_expression
  "helper 'h' is recursive or nested too deeply"                        test_recursive_helper
  "the source of '<lambda>' is not available"                           test_helper_without_source
  "helper '<lambda>' is not defined with def"                           test_lambda_helper
  "'helper_square' takes 1 argument(s), got 2"                          test_helper_with_wrong_argument_count
  "helper 'h' is not a pure expression function"                        test_impure_helper
  (errors inside a helper point into the helper's own source)           test_error_inside_a_helper_points_into_the_helper
  calls of user primitives, and revmlir/frontend/ordinary_code/primitives.py          tests/test_user_primitives.py (test_declaration_errors_are_located, test_call_errors_are_located, test_rule_signatures_are_checked_at_the_rule), tests/test_array_primitives.py
revmlir/builder.py, reached from reversible Python
  "unknown variable 's'"                                                test_pop_from_an_unknown_stack
  "'max' is not defined on complex" (binary)                            test_binary_function_undefined_on_a_type
  "'erf' is not defined on complex" (unary)                             test_unary_function_undefined_on_a_type
  "cannot compare values of type complex with 'lt'" (and arrays)        test_ordering_complex_numbers
  "cannot convert complex to float"                                     test_float_of_a_complex
  "'x' is not an array" (load)                                          test_indexing_a_scalar_in_an_expression
  "'v' (a 1-d array of float) cannot be updated"                        test_updating_a_whole_array
  "'x' is not complex; it has no .real"                                 test_real_part_of_a_float
  "a condition must be a boolean, got int64"                            errors::test_condition_that_is_not_boolean
  "'t' allocated in the then-branch is not freed there" (every region)  errors::test_ancilla_not_freed_on_a_path, test_leaks_from_a_routine_body_and_a_loop_body
  "'t' is allocated but never freed"                                    errors::test_ancilla_never_freed, test_stack_never_freed, test_ancilla_array_never_freed
  "'x ^= 1': ^= works on integers and booleans, not float"              test_instruction_on_the_wrong_kind_of_value
  "'n += x' adds a float to 'n' (an int64); convert it: int(x), …"      test_instruction_mixing_types
  "a log number is made from a positive real, not complex"              test_log_number_of_a_complex
  "an ancilla holds a scalar, not a 1-d array of float"                 test_ancilla_holding_an_array
  "'k' (int64) cannot be freed against a float value"                   test_free_against_a_value_of_another_type
  "'s' was created outside this region; it cannot end inside it"        test_freeing_an_outer_stack_in_a_loop
  "'a' was created outside the then-branch; it cannot end inside it …"   test_freeing_an_outer_ancilla_in_a_branch
  "'x' is not a stack"                                                  test_pop_from_a_non_stack
  "stack 's' holds float, not int64"                                    test_push_of_the_wrong_type
revmlir/builder.py, builder API only (no reversible Python reaches them)
  "argument 'x' of f has type none; reversible functions take …"        test_builder_function_argument_of_an_unsupported_type
  "cannot use the float 1.5 as i64"                                     test_builder_float_constant_for_an_integer
  "no constants of type memref<?xf64>"                                  test_builder_constant_of_an_array_type
  "'x' is not an array" (element view)                                  test_builder_element_of_a_scalar
  "'x' is already a variable here"                                      test_builder_alloc_of_an_existing_name
  "finish() called inside a region"                                     test_builder_finish_inside_a_region
  "argument 'x' was freed or pushed; it must be returned" (finish)      test_builder_freed_argument
  "'v' (memref<?xf64>) is not an ancilla; it cannot be freed"           test_builder_free_of_an_array
  (every other misuse of the builder API: a case each in tests/test_builder.py)
"""

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FileLineColLoc,
    IntAttr,
    MemRefType,
    NoneType,
    StringAttr,
    f64,
    i64,
)

import revmlir as rv
import revmlir.builder
import revmlir.dialects.rev
import revmlir.frontend.base.types
import revmlir.frontend.reversible_code.functions
from revmlir.builder import BuildError, Element, ModuleBuilder

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()


def line_of(marker: str) -> int:
    """The line of this file ending with ``marker`` (a comment on the faulty line)."""
    matches = [i + 1 for i, line in enumerate(LINES) if line.rstrip().endswith(marker)]
    assert len(matches) == 1, marker
    return matches[0]


def column_of(marker: str, text: str) -> int:
    """The 1-based column where ``text`` starts on the marked line."""
    return LINES[line_of(marker) - 1].index(text) + 1


def check(error: BaseException, marker: str, message: str, hint: str | None = None, at: str | None = None) -> None:
    """``error`` is a ReversibleSyntaxError at this file and the marked line
    (at the column of ``at`` when given) with exactly this message and hint."""
    assert isinstance(error, rv.ReversibleSyntaxError), repr(error)
    assert error.filename == str(HERE)
    assert error.lineno == line_of(marker), (error.lineno, str(error))
    assert error.offset is not None and error.offset >= 1
    if at is not None:
        assert error.offset == column_of(marker, at), str(error)
    assert str(error).startswith(f"{HERE}:{error.lineno}:{error.offset}: ")
    assert error.reason == message, error.reason
    assert error.hint == hint, error.hint


def at_decoration(function, **options) -> rv.ReversibleSyntaxError:
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.reversible(function, **options)
    return info.value


def at_call(function, *args) -> rv.ReversibleSyntaxError:
    compiled = rv.reversible(function)  # decorating succeeds: the error needs types
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        compiled(*args)
    return info.value


@rv.reversible
def g(a, b):
    a += b


@rv.reversible
def h(u, w):
    u[0] += w[0]


@rv.reversible
def takes_float(a: float):
    a += 1.0


def helper_square(v):
    return v * v


def recursive_helper(v):
    return recursive_helper(v)  # E:recursive-helper


def impure_helper(v):
    if v > 0:
        return v
    return -v


def helper_reading_an_unknown_name(v):
    w = v * 2.0
    return w + not_a_number  # E:inside-helper


not_a_number = "a string"
lambda_helper = lambda v: v * v
no_source_helper = eval("lambda v: v * v")


# ---------------------------------------------------------------------------
# api.py: decorating and calling
# ---------------------------------------------------------------------------


def test_decorating_a_lambda_or_an_object():
    with pytest.raises(TypeError, match=r"^@rv.reversible decorates functions defined with def, not a lambda$"):
        rv.reversible(lambda x: x)
    with pytest.raises(
        TypeError, match=r"^@rv.reversible decorates functions defined with def, not builtin_function_or_method$"
    ):
        rv.reversible(math.sin)

    class Callable:
        def __call__(self, x):
            pass

    with pytest.raises(TypeError, match=r"defined with def, not Callable$"):
        rv.reversible(Callable())


def test_function_without_source():
    namespace: dict = {}
    exec("def no_source(x):\n    x += 1.0\n", namespace)
    with pytest.raises(TypeError, match=r"^@rv.reversible needs the source of no_source: "):
        rv.reversible(namespace["no_source"])


def test_decorating_an_async_function():
    async def coroutine(x):
        x += 1.0

    with pytest.raises(TypeError, match=r"^@rv.reversible decorates functions$"):
        rv.reversible(coroutine)


def test_unknown_backend():
    def f(x):
        x += 1.0

    with pytest.raises(ValueError, match=r"^unknown backend 'gpu'; available: auto, native, interpreter$"):
        rv.reversible(f, backend="gpu")


def deco(function):
    return function


UNKNOWN_ANNOTATION_HINT = (
    "annotate with float, int, complex, bool, rv.ULog, rv.Fixed[fraction], rv.Tropical, numpy.ndarray, "
    "numpy.typing.NDArray[dtype] or a numpy scalar type (np.float64, np.float32, np.int64, np.int32, np.bool_, "
    "np.complex128, np.complex64), or leave the parameter unannotated"
)


def test_unknown_annotations_are_refused():
    """An annotation revmlir would ignore is an error at the annotation, for
    both decorators, whether written as an object or a string."""

    def f(y: "Fixed43", x):  # E:fixed
        y += x

    check(
        at_decoration(f),
        "# E:fixed",
        "unknown annotation 'Fixed43' for parameter 'y'",
        UNKNOWN_ANNOTATION_HINT,
        at='"Fixed43"',
    )

    def f(y, x: list):  # E:list
        y += x[0]

    check(
        at_decoration(f), "# E:list", "unknown annotation 'list' for parameter 'x'", UNKNOWN_ANNOTATION_HINT, at="list"
    )

    def f(y: float, x: "Fixed43"):  # E:ordinary
        return y + x

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.ordinary(f)
    check(
        info.value,
        "# E:ordinary",
        "unknown annotation 'Fixed43' for parameter 'x'",
        UNKNOWN_ANNOTATION_HINT,
        at='"Fixed43"',
    )


def test_numpy_scalar_classes_without_a_type_are_refused():
    """numpy's scalar classes annotate their dtype's type; an abstract
    class (``np.floating``, which ``np.dtype`` refuses: it raised numpy's
    own ``TypeError``), a float width (``np.float16``) or an unsigned
    integer (``np.uint8``) revmlir has no type for is an unknown
    annotation, at the annotation, whose hint lists the classes that are
    types, in both forms."""

    def f(y, x: np.floating):  # E:floating
        y += x

    check(
        at_decoration(f),
        "# E:floating",
        "unknown annotation 'np.floating' for parameter 'x'",
        UNKNOWN_ANNOTATION_HINT,
        at="np.floating",
    )

    def f(y, x: np.float16):  # E:float16
        y += x

    check(
        at_decoration(f),
        "# E:float16",
        "unknown annotation 'np.float16' for parameter 'x'",
        UNKNOWN_ANNOTATION_HINT,
        at="np.float16",
    )

    def f(y, n: np.uint8):  # E:uint8
        return y * n

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.ordinary(f)
    check(
        info.value,
        "# E:uint8",
        "unknown annotation 'np.uint8' for parameter 'n'",
        UNKNOWN_ANNOTATION_HINT,
        at="np.uint8",
    )


class _Numpy126:
    """numpy as 1.26, the oldest supported, has it: an abstract scalar class
    is given a concrete class's dtype, with a ``DeprecationWarning``, where
    numpy 2 raises ``TypeError``."""

    _GIVEN = {np.floating: np.float64, np.inexact: np.float64, np.integer: np.int64, np.complexfloating: np.complex128}

    def __getattr__(self, name: str) -> object:
        return getattr(np, name)

    def dtype(self, obj: object) -> np.dtype:
        given = next((concrete for abstract, concrete in self._GIVEN.items() if obj is abstract), None)
        if given is None:
            return np.dtype(obj)
        warnings.warn("Converting `np.inexact` or `np.floating` to a dtype is deprecated", DeprecationWarning)
        return np.dtype(given)


@pytest.mark.parametrize("abstract", [np.floating, np.inexact, np.integer, np.complexfloating])
def test_an_abstract_numpy_class_is_refused_whichever_numpy_runs(monkeypatch, abstract):
    """An abstract class is an unknown annotation under numpy 1.26 too,
    whose ``np.dtype`` gives it float64's dtype (or int64's, complex128's)
    with a warning instead of raising: the class is taken only where its
    dtype's class is itself, and the warning does not escape (warnings are
    errors in these tests).  numpy's behaviour is that of 1.26 here, so the
    test does not depend on the numpy installed."""
    monkeypatch.setattr(revmlir.frontend.base.types, "np", _Numpy126())

    def f(y, x: abstract):  # E:abstract
        y += x

    check(
        at_decoration(f),
        "# E:abstract",
        "unknown annotation 'abstract' for parameter 'x'",
        UNKNOWN_ANNOTATION_HINT,
        at="abstract",
    )


def test_the_numpy_classes_a_hint_names_exist_in_every_supported_numpy():
    """The hint names ``np.bool_``, which numpy 1.26 and 2 both have
    (1.26 has no ``np.bool``), and each class it names is a type."""
    names = [name.removeprefix("np.") for name in revmlir.frontend.base.types.NUMPY_SCALAR_ANNOTATIONS.split(", ")]
    assert "bool_" in names and "bool" not in names
    assert all(revmlir.frontend.base.types.type_of_annotation(getattr(np, name)) is not None for name in names)


def test_a_stack_as_an_annotation_is_refused_at_it():
    """``rv.Stack(float)`` is the value a stack parameter is passed, not its
    type (it is a list, which the table of annotations cannot even look
    up): a located error naming the annotation that is meant, where it was
    an unlocated ``TypeError: unhashable type``."""

    def f(s: rv.Stack(float), x: float):  # E:stack
        rv.push(s, x)
        x = rv.pop(s)

    check(
        at_decoration(f),
        "# E:stack",
        "'rv.Stack(float)' for parameter 's' is a stack, not a type",
        "annotate 's: rv.Stack' and pass rv.Stack(float) as the argument, which gives the element type",
        at="rv.Stack(float)",
    )

    def f(s: rv.Stack(float), x: float):  # E:ordinary-stack
        return x

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.ordinary(f)
    check(
        info.value,
        "# E:ordinary-stack",
        "'rv.Stack(float)' for parameter 's' is a stack, not a type",
        "only @rv.reversible functions take stacks; " + UNKNOWN_ANNOTATION_HINT,
        at="rv.Stack(float)",
    )


def test_documenting_annotations_are_accepted():
    """numpy's array and scalar types document a parameter (its dtype comes
    from the argument); the known Python types fix it."""

    @rv.reversible
    def f(y: np.ndarray, x: np.float64, c: "complex", n: int):
        y[0] += x

    out = f(np.zeros(2), 1.5, 1j, 3)
    assert out[0].tolist() == [1.5, 0.0]


def test_signature_restrictions():
    def f(*xs):  # E:varargs
        pass

    check(at_decoration(f), "# E:varargs", "reversible functions do not support *args and **kwargs", at="def")

    def f(x, **options):  # E:kwargs
        pass

    check(at_decoration(f), "# E:kwargs", "reversible functions do not support *args and **kwargs")

    def f(x, *, y):  # E:kwonly
        pass

    check(
        at_decoration(f),
        "# E:kwonly",
        "reversible functions do not support keyword-only and positional-only parameters",
    )

    def f(x, /, y):  # E:posonly
        pass

    check(
        at_decoration(f),
        "# E:posonly",
        "reversible functions do not support keyword-only and positional-only parameters",
    )

    def f(x, y=1.0):  # E:defaults
        pass

    check(at_decoration(f), "# E:defaults", "reversible functions do not support default values")

    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        @deco
        def f(x):  # E:decorators
            x += 1.0

    check(info.value, "# E:decorators", "reversible functions do not support other decorators")


def test_array_of_an_unsupported_dtype():
    @rv.reversible
    def f(v):
        v[0] += 1

    with pytest.raises(
        TypeError, match=r"^f\(\): argument 'v' has unsupported type ndarray \(arrays of int8 are not supported\)$"
    ):
        f(np.zeros(2, dtype=np.int8))


def test_mlir_without_arguments():
    @rv.reversible
    def f(x):
        x += 1.0

    with pytest.raises(
        TypeError,
        match=r"^f.mlir\(\) needs example arguments, type annotations on every parameter, or a previous call$",
    ):
        f.mlir()


def test_native_backend_for_a_program_native_code_cannot_run():
    def prints(x):
        with rv.safe():
            print(x)  # E:native

    f = rv.reversible(prints, backend="native")
    with pytest.raises(rv.NativeCompilationError) as info:
        f(np.zeros(2))  # native code prints numbers, not arrays
    text = str(info.value)
    assert text.startswith("prints cannot run natively: 'printf.print_format' at ")
    assert f"{HERE}:{line_of('# E:native')}:" in text


def test_with_block_marker_outside():
    with pytest.raises(RuntimeError, match=r"^rv.routine only has a meaning inside a @rv.reversible function$"):
        with rv.routine():
            pass


# ---------------------------------------------------------------------------
# compiler.py: statements
# ---------------------------------------------------------------------------


def test_verifier_fallback_names_the_op_and_the_whole_reason(monkeypatch):
    # The builder's own type check normally reports this first; without it,
    # the op fails to verify and the fallback must still give the op, the
    # whole reason (not just its first line) and the user's line.
    monkeypatch.setattr(revmlir.builder, "_instruction_type_error", lambda *args: None)

    def f(n, x):
        n += x  # E:verify-fallback

    error = at_call(f, 1, 2.0)
    assert error.lineno == line_of("# E:verify-fallback") and error.filename == str(HERE)
    assert error.offset is not None and error.offset >= 1
    assert error.reason.startswith("'rev.add': operand 'value' at position 1 does not verify: ")
    assert "\n" not in error.reason and "f64" in error.reason


def test_routine_without_a_name():
    def f(x):
        with rv.routine():  # E:routine-name
            x += 1.0

    check(at_call(f, 1.0), "# E:routine-name", "a routine needs a name", "write `with rv.routine() as r:` … `~r`")


def test_bare_return_before_the_end():
    def f(x):
        return  # E:early-return
        x += 1.0

    check(
        at_call(f, 1.0),
        "# E:early-return",
        "a reversible function returns all its arguments, updated",
        "remove the return; callers receive every argument",
    )


def test_uncompute_without_a_routine():
    def f(x):
        ~x  # E:stray-uncompute

    check(at_call(f, 1), "# E:stray-uncompute", "'~x' does not close a routine opened in this block")


def test_expression_statement():
    def f(x):
        x + 1.0  # E:expr-stmt

    check(
        at_call(f, 1.0),
        "# E:expr-stmt",
        "'x + 1.0' is not a reversible statement",
        "see the statement table in docs/python.md",
    )


def test_update_of_an_unknown_variable():
    def f(x):
        z += x  # E:unknown-target  # noqa: F821

    check(
        at_call(f, 1.0),
        "# E:unknown-target  # noqa: F821",
        "unknown variable 'z'",
        "allocate it first: z = rv.ancilla(0.0)",
        at="z",
    )


def test_indexing_a_scalar_target():
    def f(x):
        x[0] += 1.0  # E:index-scalar-target

    check(at_call(f, 1.0), "# E:index-scalar-target", "'x' is not an array", "index arrays only: x[i]")


def test_update_of_an_attribute():
    def f(x):
        x.foo += 1.0  # E:attr-target

    check(
        at_call(f, 1.0),
        "# E:attr-target",
        "cannot update 'x.foo'",
        "update a variable, an array element x[i] or a complex part z.real/z.imag",
    )


def test_unsupported_update_operator_at_call_time(monkeypatch):
    # Unreachable from reversible Python: the same check at decoration
    # (errors::test_unsupported_update_operator_at_decoration) reports it
    # first, so the decoration-time check is switched off to reach this one.
    monkeypatch.setattr(revmlir.frontend.reversible_code.functions, "check_structure", lambda tree, error: None)

    def f(y):
        y //= 2  # E:floordiv-call

    check(
        at_call(f, 4),
        "# E:floordiv-call",
        "'y //= 2' is not reversible",
        "only +=, -=, ^= (and *=, /= on log numbers) update a variable",
    )


def test_adding_to_a_log_number():
    def f(x):
        ly = rv.ancilla(rv.ulog(1.0))
        ly += x  # E:log-add
        rv.free(ly)

    check(at_call(f, 1.0), "# E:log-add", "log numbers are updated with *= and /=")


def test_a_power_of_a_log_number():
    """``a ** 3`` of a log number said "'mul' is not defined on ULog" (a
    constant power is repeated multiplication), ``a ** 0.5`` "cannot
    combine ULog and float", ``-a`` "'neg' is not defined on ULog": none is
    what was written nor says what works.  Log numbers multiply by updates
    only in a reversible function; the hint says how to get the value, by
    updates of the statement's own target (``y /= a`` for a negative
    power, or where the update divides) or from the real value."""

    def cubed(y: rv.ULog, a: rv.ULog):
        y *= a**3  # E:log-power

    def divided_by_cubed(y: rv.ULog, a: rv.ULog):
        y /= a**3  # E:log-divided-power

    def inverse_square(y: rv.ULog, a: rv.ULog):
        y *= a**-2  # E:log-negative-power

    def reciprocal(y: rv.ULog, a: rv.ULog):
        y *= a**-1  # E:log-reciprocal

    def rooted(y: rv.ULog, a: rv.ULog):
        y *= a**0.5  # E:log-root

    def product(y: rv.ULog, a: rv.ULog, b: rv.ULog):
        y *= a * b  # E:log-product

    def negated(y: rv.ULog, a: rv.ULog):
        y *= -a  # E:log-negated

    said = (
        "a log number (rv.ULog) has no arithmetic in an expression of a reversible function: "
        "log numbers multiply by updates (ly *= lx, ly /= lx)"
    )
    check(
        at_call(cubed, 1.0, 2.0),
        "# E:log-power",
        f"'a ** 3': {said}",
        "update once per factor (for _ in range(3): y *= a), or convert the real value: rv.ulog(float(a) ** 3)",
        at="a**3",
    )
    check(
        at_call(divided_by_cubed, 1.0, 2.0),
        "# E:log-divided-power",
        f"'a ** 3': {said}",
        "update once per factor (for _ in range(3): y /= a), or convert the real value: rv.ulog(float(a) ** 3)",
        at="a**3",
    )
    check(
        at_call(inverse_square, 1.0, 2.0),
        "# E:log-negative-power",
        f"'a ** (-2)': {said}",
        "update once per factor (for _ in range(2): y /= a), or convert the real value: rv.ulog(float(a) ** (-2))",
        at="a**-2",
    )
    check(
        at_call(reciprocal, 1.0, 2.0),
        "# E:log-reciprocal",
        f"'a ** (-1)': {said}",
        "update once per factor (y /= a), or convert the real value: rv.ulog(float(a) ** (-1))",
        at="a**-1",
    )
    check(
        at_call(rooted, 1.0, 2.0),
        "# E:log-root",
        f"'a ** 0.5': {said}",
        "convert the real value: rv.ulog(float(a) ** 0.5)",
        at="a**0.5",
    )
    check(
        at_call(product, 1.0, 2.0, 3.0),
        "# E:log-product",
        f"'a * b': {said}",
        "convert the real value: rv.ulog(float(a) * float(b))",
        at="a * b",
    )
    check(
        at_call(negated, 1.0, 2.0),
        "# E:log-negated",
        f"'-a': {said}",
        "a log number is positive, so its negation is not one: compute with the real value, -float(a)",
        at="-a",
    )


def first_power(y: rv.ULog, a: rv.ULog):
    y *= a**1


def first_power_divided(y: rv.ULog, a: rv.ULog):
    y /= a**1


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_a_log_number_to_the_first_power_is_itself(backend):
    """``a ** 1`` is ``a``, no arithmetic: ``y *= a ** 1`` updated ``y``
    before log numbers' arithmetic was refused, and does again, both ways."""
    times = rv.reversible(first_power, backend=backend)
    assert times(1.5, 2.0) == pytest.approx((3.0, 2.0))
    assert (~times)(3.0, 2.0) == pytest.approx((1.5, 2.0))
    assert rv.reversible(first_power_divided, backend=backend)(3.0, 2.0) == pytest.approx((1.5, 2.0))


def log_arithmetic(a: rv.ULog, b: rv.ULog):
    return float(a * b), float(a**3), float(a / b), float(a + a)


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_ordinary_code_computes_with_log_numbers(backend):
    """The refusal is the reversible expression compiler's: ordinary code
    updates nothing, and computes with a log number's real value."""
    results = rv.ordinary(log_arithmetic, backend=backend)(2.0, 3.0)
    assert results == pytest.approx((6.0, 8.0, 2.0 / 3.0, 4.0))


def test_chained_assignment():
    def f(x):
        a = b = rv.ancilla(0.0)  # E:chained  # noqa: F841

    check(at_call(f, 1.0), "# E:chained  # noqa: F841", "chained assignment is not reversible")


def test_allocating_into_an_attribute():
    def f(x):
        x.real = rv.ancilla(0.0)  # E:alloc-attr

    check(at_call(f, 1.0), "# E:alloc-attr", "allocate into a plain name")


def test_allocating_an_existing_name():
    def f(x):
        x = rv.ancilla(0.0)  # E:alloc-exists

    check(
        at_call(f, 1.0),
        "# E:alloc-exists",
        "'x' already exists",
        "an ancilla needs a new name (or free the old one first)",
    )


def test_overwrite_by_a_call():
    def f(x):
        x = math.sin(x)  # E:overwrite-call

    check(
        at_call(f, 1.0),
        "# E:overwrite-call",
        "'x = math.sin(x)' overwrites x, which is not reversible",
        "accumulate instead (x += …), or allocate a new variable: x = rv.ancilla(0.0); x += …",
    )


def test_first_assignment_at_decoration():
    def f(y, x):
        b = x * 2.0  # E:first-assignment
        y += b

    check(
        at_decoration(f),
        "# E:first-assignment",
        "'b = x * 2.0' makes a new variable b; in reversible code a new variable is an ancilla",
        "write b = rv.ancilla(x * 2.0) and free it where its value is known, rv.free(b, x * 2.0) "
        "(an array of zeros: b = rv.zeros(shape))",
    )


def test_first_assignment_of_a_call():
    def f(y, x):
        b = math.sin(x)  # E:first-assignment-call
        y += b

    check(
        at_call(f, 1.0, 2.0),
        "# E:first-assignment-call",
        "'b = math.sin(x)' makes a new variable b; in reversible code a new variable is an ancilla",
        "write b = rv.ancilla(math.sin(x)) and free it where its value is known, rv.free(b, math.sin(x)) "
        "(an array of zeros: b = rv.zeros(shape))",
    )


ANCILLA = "; in reversible code a new variable is an ancilla"
KINDS_HINT = (
    "make it by its kind: b = rv.ancilla(number) for a number, b = rv.zeros(shape) filled with += for an "
    "array, b = rv.stack(type) for a stack"
)


def test_first_assignment_of_a_name_names_every_kind():
    # Was: write b = rv.ancilla(x), which is refused for an array.
    def f(y, x):
        b = x  # E:first-assignment-name
        y += b[0]

    check(at_decoration(f), "# E:first-assignment-name", "'b = x' makes a new variable b" + ANCILLA, KINDS_HINT)


def test_first_assignment_of_a_stack_names_every_kind():
    def f(y):
        b = rv.Stack(float)  # E:first-assignment-stack
        y += 1.0

    check(
        at_call(f, 1.0),
        "# E:first-assignment-stack",
        "'b = rv.Stack(float)' makes a new variable b" + ANCILLA,
        KINDS_HINT,
    )


def test_assigning_a_loop_variable_overwrites_it():
    def f(y, x):
        for i in range(3):
            i = math.sin(x)  # E:loop-variable-assignment

    check(
        at_call(f, 1.0, 2.0),
        "# E:loop-variable-assignment",
        "'i = math.sin(x)' overwrites i, which is not reversible",
        "accumulate instead (i += …), or allocate a new variable: i = rv.ancilla(0.0); i += …",
    )


def test_misspelt_module_function():
    def allocates(y, x):
        a = rv.ancilla_array(3)  # E:misspelt-allocation

    check(
        at_call(allocates, 1.0, 2.0),
        "# E:misspelt-allocation",
        "'rv.ancilla_array' does not exist: revmlir has no 'ancilla_array'",
        "its nearest name is rv.ancilla; a new variable is rv.ancilla(value), rv.zeros(shape), rv.stack(type) "
        "or rv.pop(s)",
        at="rv.ancilla_array",
    )

    def swaps(y, x):
        rv.swapp(y, x)  # E:misspelt-instruction

    check(
        at_call(swaps, 1.0, 2.0),
        "# E:misspelt-instruction",
        "'rv.swapp' does not exist: revmlir has no 'swapp'",
        "its nearest name is rv.swap",
    )


def test_stack_without_a_type():
    def f(x):
        s = rv.stack()  # E:stack-no-type
        rv.free(s)

    check(at_call(f, 1.0), "# E:stack-no-type", "rv.stack takes the element type: rv.stack(float)")


def test_stack_of_a_non_type():
    def f(x):
        s = rv.stack(str)  # E:stack-str
        rv.free(s)

    hint = (
        "use float, int, complex, bool or a numpy scalar type "
        "(np.float64, np.float32, np.int64, np.int32, np.bool_, np.complex128, np.complex64)"
    )
    check(at_call(f, 1.0), "# E:stack-str", "'str' is not a type", hint, at="str")


def test_pop_without_a_stack():
    def f(x):
        y = rv.pop()  # E:pop-no-stack
        rv.free(y)

    check(at_call(f, 1.0), "# E:pop-no-stack", "rv.pop takes a stack: x = rv.pop(s)")


def test_ancilla_with_unknown_keyword():
    # Was silently ignored: the ancilla got the type of its value.
    def f(x):
        y = rv.ancilla(0.0, typ=int)  # E:ancilla-kw
        rv.free(y)

    check(at_call(f, 1.0), "# E:ancilla-kw", "rv.ancilla takes a value and optionally a type")


def test_tuple_assignment_that_is_not_a_swap():
    def f(a, b):
        a, b = a, b  # E:not-swap

    check(
        at_call(f, 1.0, 2.0),
        "# E:not-swap",
        "'a, b = (a, b)' is not a swap",
        "exchange two places with a, b = b, a",
    )


def test_instruction_with_wrong_argument_count():
    def f(x):
        rv.swap(x)  # E:swap-args

    check(at_call(f, 1.0), "# E:swap-args", "'rv.swap' takes 2 argument(s)")


def test_call_of_an_undefined_function_statement():
    def f(x):
        undefined_function(x)  # E:undefined-stmt  # noqa: F821

    check(
        at_call(f, 1.0),
        "# E:undefined-stmt  # noqa: F821",
        "unknown function 'undefined_function'",
        "call @rv.reversible functions, or rv.* instructions",
    )


def test_call_of_a_non_reversible_function_statement():
    def f(x):
        math.sin(x)  # E:math-stmt

    check(
        at_call(f, 1.0),
        "# E:math-stmt",
        "'math.sin(x)' is not a reversible statement",
        "call @rv.reversible functions, or rv.* instructions",
    )


def test_push_of_an_expression():
    def f(x):
        s = rv.stack(float)
        rv.push(s, x + 1.0)  # E:push-expr
        rv.free(s)

    check(at_call(f, 1.0), "# E:push-expr", "'x + 1.0' is not a variable", at="x + 1.0")


def test_free_without_arguments():
    def f(x):
        rv.free()  # E:free-args

    check(at_call(f, 1.0), "# E:free-args", "rv.free takes a variable and optionally its value")


def test_free_of_a_stack_with_a_value():
    # Was silently ignored.
    def f(x):
        s = rv.stack(float)
        rv.free(s, 0.0)  # E:free-stack-value

    check(
        at_call(f, 1.0),
        "# E:free-stack-value",
        "a stack is freed without a value",
        "rv.free(s) checks that it is empty",
    )


def test_free_of_an_array():
    # Was "no constants of type memref<?xf64>".
    def f(v):
        rv.free(v)  # E:free-array

    check(
        at_call(f, np.zeros(2)),
        "# E:free-array",
        "'v' is an argument array; only ancillas, ancilla arrays (rv.zeros) and stacks can be freed",
    )


def test_ancilla_array_freed_with_a_value():
    def f(x):
        a = rv.zeros(3)
        rv.free(a, 0.0)  # E:free-zeros-value

    check(
        at_call(f, 1.0),
        "# E:free-zeros-value",
        "an ancilla array is freed without a value",
        "rv.free(a) checks that it holds zeros",
    )


def test_zeros_errors():
    usage = "rv.zeros takes a shape (a size or a tuple of sizes) and optionally dtype=float or int"

    def keyword(x):
        a = rv.zeros(3, order="C")  # E:zeros-keyword
        rv.free(a)

    def empty(x):
        a = rv.zeros(())  # E:zeros-empty
        rv.free(a)

    def complex_elements(x):
        a = rv.zeros((2, 3), dtype=complex)  # E:zeros-complex
        rv.free(a)

    def float_size(x):
        a = rv.zeros((2, 1.5))  # E:zeros-float
        rv.free(a)

    check(at_call(keyword, 1.0), "# E:zeros-keyword", usage)
    check(at_call(empty, 1.0), "# E:zeros-empty", "an ancilla array has at least one dimension", usage)
    check(
        at_call(complex_elements, 1.0),
        "# E:zeros-complex",
        "ancilla arrays hold integers or floats, not complex",
        usage,
    )
    check(at_call(float_size, 1.0), "# E:zeros-float", "the size '1.5' is not an integer", usage, at="1.5")


def test_free_and_push_of_an_argument():
    # Was reported at the `def` line, not at the statement that ended it.
    hint = "free or push only ancillas (or pop the argument back before the function ends)"

    def f(x):
        rv.free(x)  # E:free-arg

    check(at_call(f, 1.0), "# E:free-arg", "argument 'x' was freed or pushed; it must be returned", hint)

    def f(x):
        s = rv.stack(float)
        rv.push(s, x)  # E:push-arg
        rv.free(s)

    check(at_call(f, 1.0), "# E:push-arg", "argument 'x' was freed or pushed; it must be returned", hint)

    @rv.reversible
    def pushed_and_popped_back(x):
        s = rv.stack(float)
        rv.push(s, x)
        x = rv.pop(s)
        rv.free(s)

    assert pushed_and_popped_back(2.0) == 2.0


def test_call_with_keyword_arguments():
    # Was "g takes 2 argument(s) (a, b), got 1".
    def f(x, y):
        g(x, b=y)  # E:call-kw

    check(at_call(f, 1.0, 2.0), "# E:call-kw", "g takes positional arguments only", "write g(a, b)")


undo_g = ~g


def test_wrong_argument_count_through_a_name_bound_to_an_inverse():
    # Was "g takes 2 argument(s)", where the source calls undo_g.
    def f(a, b):
        undo_g(a)  # E:bound-arity

    check(at_call(f, 1.0, 2.0), "# E:bound-arity", "undo_g, which uncalls g, takes 2 argument(s) (a, b), got 1")


def test_same_array_passed_twice():
    # Was accepted: h(v, v) ran v[0] += v[0], which no inverse can undo.
    def f(v):
        h(v, v)  # E:array-twice

    check(
        at_call(f, np.ones(2)),
        "# E:array-twice",
        "'v' is passed to h twice",
        "the arguments of a call must not alias: pass a copy of one of them",
        at="v)",
    )


def test_array_passed_beside_its_own_element():
    # Was accepted: the interpreter found v[0] borrowed twice at run time,
    # and native code returned what no run of g gives.
    def f(v):
        g(v, v[0])  # E:array-beside-element

    check(
        at_call(f, np.ones(2)),
        "# E:array-beside-element",
        "v[0] is passed to g beside 'v' itself",
        "the arguments of a call must not alias: pass a copy of one of them",
        at="v[0])",
    )


def test_same_scalar_passed_twice():
    # Was "%x is consumed twice" from the verifier, naming SSA values.
    def f(x):
        g(x, x)  # E:scalar-twice

    check(
        at_call(f, 1.0),
        "# E:scalar-twice",
        "'x' is passed to g twice",
        "a call takes each scalar it is passed and gives it back updated; pass a second variable holding the same value",
        at="x)",
    )


def test_call_with_wrong_declared_type():
    def f(n):
        takes_float(n)  # E:declared

    check(at_call(f, 1), "# E:declared", "argument 'a' of takes_float is declared float, got int64", at="n)")


def test_cond_with_wrong_arguments():
    # `post` alone, and a misspelt keyword, were silently taken as (post, None)
    # and (pre, None).
    def f(x):
        if rv.cond(post=x > 0):  # E:cond-post-only
            x += 1

    check(
        at_call(f, 1),
        "# E:cond-post-only",
        "rv.cond takes a precondition and a postcondition",
        "write rv.cond(pre, post=...)",
        at="rv.cond",
    )

    def f(x):
        if rv.cond(x > 0, postcondition=x > 0):  # E:cond-typo
            x += 1

    check(
        at_call(f, 1),
        "# E:cond-typo",
        "rv.cond takes a precondition and a postcondition",
        "write rv.cond(pre, post=...)",
    )


def test_while_else():
    def f(x):
        while rv.cond(x < 10, x > 0):  # E:while-else
            x += 1
        else:
            x += 1

    check(at_call(f, 0), "# E:while-else", "while … else is not supported")


def test_for_with_two_loop_variables():
    def f(x):
        for i, j in range(3):  # E:for-tuple
            x += 1

    check(
        at_call(f, 0),
        "# E:for-tuple",
        "a for loop needs one loop variable",
        "loop over range(...) and index arrays with the loop variable: for i in range(len(x)): … x[i] …",
    )


def test_for_else():
    def f(x):
        for i in range(3):  # E:for-else
            x += i
        else:
            x += 1

    check(at_call(f, 0), "# E:for-else", "for … else is not supported")


def test_range_of_a_float():
    # Was accepted, truncating the bound.
    def f(x, y):
        for i in range(x):  # E:range-float
            y += 1.0

    check(at_call(f, 2.5, 0.0), "# E:range-float", "range() needs integers, got float", "convert it: int(...)", at="x)")

    def f(x, n):
        for i in range(0, n, x):  # E:range-step-float
            n += 0

    check(
        at_call(f, 1.0, 3), "# E:range-step-float", "range() needs integers, got float", "convert it: int(...)", at="x)"
    )


def test_range_step_zero():
    def f(x):
        for i in range(0, 3, 0):  # E:range-zero
            x += 1

    check(at_call(f, 0), "# E:range-zero", "range() step must not be zero")


def test_with_two_context_managers():
    def f(x):
        with rv.inverse(), rv.nocheck():  # E:with-two
            x += 1.0

    check(
        at_call(f, 1.0),
        "# E:with-two",
        "use `with rv.inverse():`, `with rv.safe():`, `with rv.nocheck():` or `with rv.routine() as r:`",
    )


def test_safe_with_a_non_constant_option():
    # Was silently run forward.
    def f(x):
        with rv.safe(when=x):  # E:safe-when-var
            print(x)

    check(
        at_call(f, 1.0),
        "# E:safe-when-var",
        "'with rv.safe(when=x)': rv.safe takes one constant, when='forward', 'inverse' or 'both'",
    )


def test_safe_with_an_unknown_direction():
    def f(x):
        with rv.safe(when="sideways"):  # E:safe-when
            print(x)

    check(at_call(f, 1.0), "# E:safe-when", "rv.safe(when='sideways'): use 'forward', 'inverse' or 'both'")


def test_with_a_foreign_context_manager():
    def f(x):
        with open("f"):  # E:with-open
            x += 1.0

    check(at_call(f, 1.0), "# E:with-open", "'with open('f')' is not a reversible block")


def test_instruction_inside_safe():
    def f(x):
        with rv.safe():
            x += 1.0  # E:safe-instruction

    check(
        at_call(f, 1.0),
        "# E:safe-instruction",
        "'x' is reversible state, which rv.safe does not update: running backwards could not restore it",
        "count into an element of an array argument that only rv.safe blocks use (c[0] += 1), "
        "or count reversibly outside the block",
    )


def test_specialisation_names_do_not_collide():
    # A second specialisation of f was named f_2 like the function below, and
    # the call to it failed with "'rev.call' passes (f64, f64) to @f_2, which
    # takes (f64)".
    @rv.reversible
    def f_2(a):
        a += 100.0

    @rv.reversible
    def f(x, n):
        f_2(x)
        if n > 1:
            f(x, 0.5)

    assert f(1.0, 2) == (201.0, 2)


# ---------------------------------------------------------------------------
# expressions.py
# ---------------------------------------------------------------------------


EXPRESSION_HINT = (
    "expressions may use arithmetic, comparisons, math/numpy functions, "
    "array elements, .real/.imag and pure helper functions"
)


def test_unsupported_expression():
    def f(x):
        x += None  # E:none

    check(at_call(f, 1.0), "# E:none", "'None' is not a supported expression", EXPRESSION_HINT, at="None")


def test_non_boolean_operand_of_and():
    def f(x):
        if x and x > 0:  # E:and-float
            x += 1.0

    check(at_call(f, 1.0), "# E:and-float", "'x' is not a boolean", "compare it explicitly", at="x and")


def test_matrix_multiplication_operator():
    def f(x, y):
        y += x @ x  # E:matmul

    check(at_call(f, 1.0, 0.0), "# E:matmul", "operator 'x @ x' is not supported")


def test_shift_of_a_float():
    # Was "'shl' is not defined on f64".
    def f(x, y):
        y += x << 1  # E:shift

    check(at_call(f, 1.0, 0.0), "# E:shift", "'x << 1': << needs integers or booleans", at="x <<")


def test_modulo_of_a_complex():
    # Was "'floor' is not defined on complex<f64>".
    def f(z, y):
        y += (z % 2).real  # E:mod-complex

    check(at_call(f, 1j, 0.0), "# E:mod-complex", "'z % 2': % is not defined on complex numbers")


def test_a_complex64_is_named_as_numpy_names_it():
    """A ``complex<f32>`` value is numpy's ``complex64``, as an ``f32`` is
    ``float32``; both complex types were "complex"."""

    def f(z, y):
        y += z  # E:complex64

    check(
        at_call(f, np.complex64(1j), 0.0),
        "# E:complex64",
        "'y += z' adds a complex64 to 'y' (a float)",
        "take a part: z.real, or use a complex64 variable",
    )


def test_numpy_remainder_of_a_complex():
    def f(z, y):
        y += np.remainder(z, 2.0).real  # E:remainder-complex

    check(
        at_call(f, 1j, 0.0),
        "# E:remainder-complex",
        "np.remainder() takes real numbers, not complex",
        "pass the parts: .real, .imag, or abs(z)",
        at="z, 2.0",
    )


def test_division_of_an_array():
    """Was "'np.fmod(u, y)': np.fmod needs ints or floats", at the call,
    of any operand: now at the operand, with its type."""

    def f(u, x, y):
        y += np.fmod(x, u)  # E:fmod-array

    check(
        at_call(f, np.ones(2), 1.0, 0.0),
        "# E:fmod-array",
        "np.fmod() takes real numbers, not a 1-d array of float",
        at="u)",
    )

    def g(u, y):
        y += u % 2.0  # E:mod-array

    check(
        at_call(g, np.ones(2), 0.0),
        "# E:mod-array",
        "'u % 2.0': % takes real numbers, not a 1-d array of float",
        at="u %",
    )


def test_library_function_of_the_wrong_argument_count():
    # Was "'np.floor_divide' has no rules in revmlir", as of a function
    # without rules.
    def f(x, y):
        y += np.floor_divide(x)  # E:arity

    check(at_call(f, 1.0, 0.0), "# E:arity", "np.floor_divide() takes 2 arguments here, got 1", at="np.floor")


def test_bitwise_not_of_a_float():
    # Was "'xor' is not defined on f64".
    def f(x, y):
        y += ~x  # E:invert

    check(at_call(f, 1.0, 0.0), "# E:invert", "'~x': ~ needs an integer", at="~x")


def test_identity_comparison():
    def f(x, y):
        if x is y:  # E:is
            x += 1.0

    check(at_call(f, 1.0, 2.0), "# E:is", "'x is y': only <, <=, >, >=, ==, != compare values")


def test_slice():
    def f(v, y):
        y += v[1:3]  # E:slice

    check(at_call(f, np.zeros(4), 0.0), "# E:slice", "slices are not supported", "index single elements: x[i]")


def test_float_index():
    # Was accepted, truncating the index.
    def f(v, x, y):
        y += v[x]  # E:float-index

    check(
        at_call(f, np.zeros(3), 1.0, 0.0),
        "# E:float-index",
        "array index 'x' is not an integer",
        "convert it: int(...)",
        at="x]",
    )

    def f(v, x):
        v[x] += 1.0  # E:float-index-target

    check(
        at_call(f, np.zeros(3), 1.0),
        "# E:float-index-target",
        "array index 'x' is not an integer",
        "convert it: int(...)",
        at="x]",
    )


def test_subscript_of_a_list_literal():
    def f(y):
        y += [1.0, 2.0][0]  # E:list-literal

    check(at_call(f, 0.0), "# E:list-literal", "'[1.0, 2.0]' is not an array argument")


def test_shape_of_an_expression():
    def f(x, y):
        y += (x + 1.0).shape[0]  # E:shape-expr

    check(at_call(f, 1.0, 0.0), "# E:shape-expr", "'x + 1.0' is not an array argument")


def test_shape_with_a_variable_dimension():
    def f(v, n, y):
        y += v.shape[n]  # E:shape-var

    check(at_call(f, np.zeros(2), 0, 0), "# E:shape-var", "x.shape[d] needs a constant d")


def test_shape_beyond_the_rank():
    def f(v, n):
        n += v.shape[1]  # E:shape-rank

    check(at_call(f, np.zeros(2), 0), "# E:shape-rank", "'v' has no dimension 1")


def test_len_of_a_scalar():
    # Was a bare AssertionError.
    def f(x, n):
        n += len(x)  # E:len-scalar

    check(at_call(f, 1.0, 0), "# E:len-scalar", "'x' is not an array", at="len")

    def f(x, n):
        n += x.shape[0]  # E:shape-scalar

    check(at_call(f, 1.0, 0), "# E:shape-scalar", "'x' is not an array")


def test_unsupported_attribute():
    def f(x, y):
        y += x.conjugate  # E:attribute

    check(at_call(f, 1.0, 0.0), "# E:attribute", "'x.conjugate' is not supported in an expression")


def test_keyword_argument_in_an_expression():
    def f(x, y):
        y += math.log(x, base=2.0)  # E:keyword-expr

    check(at_call(f, 1.0, 0.0), "# E:keyword-expr", "keyword arguments are not supported in expressions")


def test_call_of_an_undefined_function_in_an_expression():
    # Was "cannot call 'undefined_helper' in an expression".
    def f(x, y):
        y += undefined_helper(x)  # E:undefined-expr  # noqa: F821

    check(
        at_call(f, 1.0, 0.0),
        "# E:undefined-expr  # noqa: F821",
        "unknown function 'undefined_helper'",
        "use math/cmath/numpy functions or a pure helper function",
    )


def test_reversible_function_in_an_expression():
    # Was "cannot call 'g' in an expression": the dedicated message was unreachable.
    def f(x, y):
        y += g(x, x)  # E:reversible-expr

    check(
        at_call(f, 1.0, 0.0),
        "# E:reversible-expr",
        "'g' is reversible; call it as a statement",
        "write g(...) on its own line to update its arguments",
    )


def test_recursive_helper():
    # The location is the innermost call, in the helper's own source (it was
    # the helper's line number counted from the reversible function).
    def f(x, y):
        y += recursive_helper(x)

    check(at_call(f, 1.0, 0.0), "# E:recursive-helper", "helper 'recursive_helper' is recursive or nested too deeply")


def test_helper_without_source():
    def f(x, y):
        y += no_source_helper(x)  # E:no-source-helper

    check(at_call(f, 1.0, 0.0), "# E:no-source-helper", "the source of '<lambda>' is not available")


def test_lambda_helper():
    # Was a bare AssertionError.
    def f(x, y):
        y += lambda_helper(x)  # E:lambda-helper

    check(
        at_call(f, 1.0, 0.0),
        "# E:lambda-helper",
        "helper '<lambda>' is not defined with def",
        "write helpers as `def name(args): … return expr`",
    )


def test_helper_with_wrong_argument_count():
    def f(x, y):
        y += helper_square(x, x)  # E:helper-args

    check(at_call(f, 1.0, 0.0), "# E:helper-args", "'helper_square' takes 1 argument(s), got 2")


def test_impure_helper():
    def f(x, y):
        y += impure_helper(x)  # E:impure-helper

    check(
        at_call(f, 1.0, 0.0),
        "# E:impure-helper",
        "helper 'impure_helper' is not a pure expression function",
        "helpers may only assign local names and end with `return expr`",
    )


def test_error_inside_a_helper_points_into_the_helper():
    def f(x, y):
        y += helper_reading_an_unknown_name(x)

    check(
        at_call(f, 1.0, 0.0),
        "# E:inside-helper",
        "unknown variable 'not_a_number'",
        "variables are the function's arguments and ancillas (x = rv.ancilla(0.0)); globals must be numbers",
        at="not_a_number",
    )


# ---------------------------------------------------------------------------
# builder.py, reached from reversible Python
# ---------------------------------------------------------------------------


def test_pop_from_an_unknown_stack():
    def f(x):
        y = rv.pop(s)  # E:pop-unknown  # noqa: F821
        rv.free(y)

    check(at_call(f, 1.0), "# E:pop-unknown  # noqa: F821", "unknown variable 's'")


def test_mixing_numbers_that_do_not_combine():
    """Floats of two widths combine (the narrower widens, tests/test_float32.py);
    a log number and a float do not: a log number has no arithmetic in an
    expression."""

    def f(y):
        ly = rv.ancilla(rv.ulog(2.0))
        y += float(ly + 1.5)  # E:log-float
        rv.free(ly, rv.ulog(2.0))

    check(
        at_call(f, 0.0),
        "# E:log-float",
        "'ly + 1.5': a log number (rv.ULog) has no arithmetic in an expression of a reversible function: log numbers multiply by updates (ly *= lx, ly /= lx)",
        "convert the real value: rv.ulog(float(ly) + 1.5)",
    )


def test_binary_function_undefined_on_a_type():
    def f(z, w, y):
        y += abs(max(z, w))  # E:max-complex

    check(at_call(f, 1j, 2j, 0.0), "# E:max-complex", "'max' is not defined on complex")

    # Log numbers have no expression arithmetic; `l + l` built an addf on
    # them and failed later as "'rev.add' needs operands of one type", then
    # was "'add' is not defined on ULog", in the builder's words.
    def f(y):
        ly = rv.ancilla(rv.ulog(2.0))
        y += float(ly + ly)  # E:add-log
        rv.free(ly, rv.ulog(2.0))

    check(
        at_call(f, 0.0),
        "# E:add-log",
        "'ly + ly': a log number (rv.ULog) has no arithmetic in an expression of a reversible function: log numbers multiply by updates (ly *= lx, ly /= lx)",
        "convert the real value: rv.ulog(float(ly) + float(ly))",
    )


def test_unary_function_undefined_on_a_type():
    def f(z, y):
        y += abs(math.erf(z))  # E:erf-complex

    check(at_call(f, 1j, 0.0), "# E:erf-complex", "'erf' is not defined on complex")


def test_ordering_complex_numbers():
    def f(z, w):
        if z < w:  # E:complex-lt
            z += 1j

    check(at_call(f, 1j, 2j), "# E:complex-lt", "cannot compare values of type complex with 'lt'", at="z <")

    def f(a, b, x):
        if a == b:  # E:array-eq
            x += 1.0

    check(
        at_call(f, np.zeros(2), np.zeros(2), 0.0),
        "# E:array-eq",
        "cannot compare values of type a 1-d array of float with 'eq'",
    )


def test_float_of_a_complex():
    def f(z, y):
        y += float(z)  # E:float-complex

    check(at_call(f, 1j, 0.0), "# E:float-complex", "cannot convert complex to float")


def test_indexing_a_scalar_in_an_expression():
    def f(x, y):
        y += x[0]  # E:index-scalar

    check(at_call(f, 1.0, 0.0), "# E:index-scalar", "'x' is not an array")


def test_updating_a_whole_array():
    def f(v, x):
        v += x  # E:whole-array

    check(
        at_call(f, np.zeros(2), 1.0),
        "# E:whole-array",
        "'v' (a 1-d array of float) cannot be updated; update its elements, one at a time",
    )


def test_real_part_of_a_float():
    def f(x):
        x.real += 1.0  # E:real-of-float

    check(at_call(f, 1.0), "# E:real-of-float", "'x' is not complex; it has no .real")


def test_leaks_from_a_routine_body_and_a_loop_body():
    # The routine body's leak was a bare BuildError, a stack's an InversionError.
    def f(x):
        with rv.routine() as r:  # E:routine-leak
            a = rv.ancilla(0.0)
        t = rv.ancilla(0.0)  # noqa: F841
        ~r

    check(
        at_call(f, 1.0),
        "# E:routine-leak",
        "'t' allocated in the routine body is not freed there; free it (x → value) before the end of the routine body",
    )

    def f(x):
        for i in range(3):  # E:stack-leak-loop
            s = rv.stack(float)  # noqa: F841

    check(
        at_call(f, 1.0),
        "# E:stack-leak-loop",
        "'s' allocated in the loop body is not freed there; free it (x → value) before the end of the loop body",
    )


def test_stack_never_freed():
    # Was an InversionError from building the inverse.
    def f(x):  # E:stack-never-freed
        s = rv.stack(float)  # noqa: F841

    check(
        at_call(f, 1.0),
        "# E:stack-never-freed",
        "'s' is allocated but never freed; free it (x → value) before the function ends",
    )


def test_ancilla_array_never_freed():
    def f(x):  # E:array-never-freed
        a = rv.zeros(2)  # noqa: F841

    check(
        at_call(f, 1.0),
        "# E:array-never-freed",
        "'a' is allocated but never freed; free it (x → value) before the function ends",
    )


def test_instruction_on_the_wrong_kind_of_value():
    # Was "operand 'target' at position 0 does not verify:".
    def f(x):
        x ^= 1  # E:xor-float

    check(at_call(f, 1.0), "# E:xor-float", "'x ^= 1': ^= works on integers and booleans, not float")

    def f(x):
        rv.inc(x)  # E:inc-float

    check(at_call(f, 1.0), "# E:inc-float", "'rv.inc(x)': rv.inc works on integers and booleans, not float")

    def f(x, n):
        rv.rot(x, n, 1.0)  # E:rot-int

    check(at_call(f, 1.0, 2), "# E:rot-int", "'rv.rot(x, n, 1.0)': rv.rot works on floats, not int64")


def test_an_instructions_words_are_the_builders_alone(monkeypatch):
    """The frontend tests a type by the test the instruction's words come
    with (``builder.Operands``), not by the words: worded otherwise, ``^=``
    still says its words and still offers no float target as a fix."""
    integers = revmlir.builder.Operands("whole numbers", revmlir.builder._is_int)
    monkeypatch.setitem(revmlir.builder._OPERANDS, revmlir.dialects.rev.XorOp, integers)

    def f(n, x):
        n ^= x  # E:xor-reworded

    check(at_call(f, 1, 2.5), "# E:xor-reworded", "'n ^= x' xors a float into 'n' (an int64)", "convert it: int(x)")

    def f(x):
        x ^= 1  # E:xor-float-reworded

    check(at_call(f, 1.0), "# E:xor-float-reworded", "'x ^= 1': ^= works on whole numbers, not float")


def test_instruction_mixing_types():
    # Was "operand 'value' at position 1 does not verify:".
    def f(n, x):
        n += x  # E:int-plus-float

    check(
        at_call(f, 1, 2.0),
        "# E:int-plus-float",
        "'n += x' adds a float to 'n' (an int64)",
        "convert it: int(x), or use a float variable",
    )

    def f(x):
        ly = rv.ancilla(rv.ulog(1.0))
        ly *= 2.0  # E:log-times-float
        rv.free(ly)

    check(
        at_call(f, 1.0),
        "# E:log-times-float",
        "'ly *= 2.0' multiplies 'ly' (a ULog) by a float",
        "make it a log number: rv.ulog(2.0)",
    )

    def f(a, x):
        a[0] += x  # E:int32-element-plus-float

    check(
        at_call(f, np.zeros(2, np.int32), 1.5),
        "# E:int32-element-plus-float",
        "'a[0] += x' adds a float to an element of an int32 array",
        "convert it: int(x), or use a float array",
    )

    def f(y, z):
        y -= z * 2  # E:float-minus-complex

    check(
        at_call(f, 0.0, 1 + 2j),
        "# E:float-minus-complex",
        "'y -= z * 2' subtracts a complex from 'y' (a float)",
        "take a part: (z * 2).real, or use a complex variable",
    )

    # A target of the value's type is no fix where the instruction refuses
    # it: ^= takes no float, -= no log number.
    def f(n, x):
        n ^= x  # E:xor-by-float

    check(at_call(f, 1, 2.5), "# E:xor-by-float", "'n ^= x' xors a float into 'n' (an int64)", "convert it: int(x)")

    def f(y, x):
        y -= rv.ulog(x)  # E:float-minus-log

    check(
        at_call(f, 1.0, 2.0),
        "# E:float-minus-log",
        "'y -= rv.ulog(x)' subtracts a ULog from 'y' (a float)",
        "convert it to float",
    )

    def f(x, n):
        x, n = n, x  # E:swap-mixed

    check(
        at_call(f, 1.0, 2),
        "# E:swap-mixed",
        "'x, n = (n, x)' mixes a float and an int64",
        "its values must be of one type",
    )


def test_log_number_of_a_complex():
    # Was a bare xDSL VerifyException.
    def f(z):
        ly = rv.ancilla(rv.ulog(z))  # E:ulog-complex
        rv.free(ly)

    check(at_call(f, 1j), "# E:ulog-complex", "a log number is made from a positive real, not complex", at="rv.ulog")

    @rv.reversible
    def from_an_int(y):
        ly = rv.ancilla(rv.ulog(2))  # an int converts, like an int argument for rv.ULog
        y += float(ly)
        rv.free(ly, rv.ulog(2.0))

    assert from_an_int(0.0) == pytest.approx(2.0)


def test_ancilla_holding_an_array():
    # Was "'anc.free' updates %w, which is not a state value" at the free.
    def f(v):
        w = rv.ancilla(v)  # E:ancilla-array
        rv.free(w, v)

    check(at_call(f, np.zeros(2)), "# E:ancilla-array", "an ancilla holds a scalar, not a 1-d array of float")


def test_free_against_a_value_of_another_type():
    def f(x):
        k = rv.ancilla(0)
        rv.free(k, 1.5)  # E:free-type

    check(at_call(f, 1.0), "# E:free-type", "'k' (int64) cannot be freed against a float value")


def test_freeing_an_outer_stack_in_a_loop():
    # Was a bare KeyError.
    def f(x):
        s = rv.stack(float)
        for i in range(3):
            rv.free(s)  # E:free-outer-stack

    check(at_call(f, 1.0), "# E:free-outer-stack", "'s' was created outside this region; it cannot end inside it")


def test_freeing_an_outer_ancilla_in_a_branch():
    # Was "'a' is allocated but never freed" at the def line.
    def f(x):
        a = rv.ancilla(0.0)
        if x > 0.0:  # E:free-outer-ancilla
            rv.free(a, 0.0)

    check(
        at_call(f, 1.0),
        "# E:free-outer-ancilla",
        "'a' was created outside the then-branch; it cannot end inside it (freed, or pushed and not popped back)",
    )


def test_pop_from_a_non_stack():
    # Was a bare AssertionError (and push/copy_push an unverifiable op).
    def f(x):
        y = rv.pop(x)  # E:pop-non-stack
        rv.free(y)

    check(at_call(f, 1.0), "# E:pop-non-stack", "'x' is not a stack")

    def f(x):
        y = rv.ancilla(0.0)
        rv.copy_push(y, x)  # E:copy-push-non-stack
        rv.free(y)

    check(at_call(f, 1.0), "# E:copy-push-non-stack", "'y' is not a stack")


def test_push_of_the_wrong_type():
    def f(n):
        s = rv.stack(float)
        k = rv.ancilla(0)
        rv.push(s, k)  # E:push-type
        k = rv.pop(s)
        rv.free(k)
        rv.free(s)

    check(at_call(f, 1), "# E:push-type", "stack 's' holds float, not int64")


# ---------------------------------------------------------------------------
# builder.py through the builder API: no reversible Python reaches these (the
# frontend only passes supported types, compiles constants with their own
# type, checks names and arrays itself and finishes at top level).
# ---------------------------------------------------------------------------


LOC = FileLineColLoc(StringAttr("frontend.src"), IntAttr(7), IntAttr(3))
VECTOR = MemRefType(f64, [DYNAMIC_INDEX])


def build_error(build) -> BuildError:
    with pytest.raises(BuildError) as info:
        build()
    assert info.value.loc is LOC  # the frontend's location comes back with it
    return info.value


def test_builder_function_argument_of_an_unsupported_type():
    error = build_error(lambda: ModuleBuilder().function("f", [("x", NoneType())], LOC))
    assert error.message == "argument 'x' of f has type none; reversible functions take scalars, memrefs and stacks"


def test_builder_float_constant_for_an_integer():
    fn = ModuleBuilder().function("f", [("n", i64)])
    assert build_error(lambda: fn.add("n", 1.5, LOC)).message == "cannot use the float 1.5 as i64"


def test_builder_constant_of_an_array_type():
    fn = ModuleBuilder().function("f", [("x", f64)])
    assert build_error(lambda: fn.const(0, VECTOR, LOC)).message == "no constants of type memref<?xf64>"


def test_builder_element_of_a_scalar():
    fn = ModuleBuilder().function("f", [("x", f64)])
    assert build_error(lambda: fn.add(Element("x", (0,)), 1.0, LOC)).message == "'x' is not an array"


def test_builder_alloc_of_an_existing_name():
    fn = ModuleBuilder().function("f", [("x", f64)])
    assert build_error(lambda: fn.alloc("x", 0.0, None, LOC)).message == "'x' is already a variable here"


def test_builder_finish_inside_a_region():
    fn = ModuleBuilder().function("f", [("x", f64)])
    error = build_error(lambda: fn.if_(pre=lambda: fn["x"] > 0.0, then=lambda: fn.finish(LOC)))
    assert error.message == "finish() called inside a region"


def test_builder_freed_argument():
    fn = ModuleBuilder().function("f", [("x", f64)])
    fn.free("x", 0.0)
    assert build_error(lambda: fn.finish(LOC)).message == "argument 'x' was freed or pushed; it must be returned"


def test_builder_free_of_an_array():
    fn = ModuleBuilder().function("f", [("v", VECTOR)])
    error = build_error(lambda: fn.free("v", 0.0, LOC))
    assert error.message == "'v' (memref<?xf64>) is not an ancilla; it cannot be freed"
