"""What a C program passes to an object of ``rev-translate``: the entry
points refuse, before they run, an error slot too short for them, a
descriptor whose fields would take the code past its array (a negative
or too large size, another static shape, a null pointer, upstream's
offset and strides), an inconsistent stack header and a tropical or log
number that is not finite; they bound a recursion by the calling thread's
stack, export nothing but themselves, and the header is ISO C.  The
programs are built by the system C compiler (or zig's, ``test_aot``)."""

import math
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.lowering.std_to_llvm import RUNTIME_LIBRARY, ConvertStdToLLVMPass
from revmlir.parsing import make_context, parse_module
from revmlir.runtime.native import NativeModule, lower_to_llvm_ir
from revmlir.runtime_checks import (
    ARRAY_TOO_LARGE,
    BAD_STACK,
    CHECKS_ATTR,
    ERROR_WORDS,
    NEGATIVE_OFFSET,
    NEGATIVE_SIZE,
    NULL_DATA,
    OUT_OF_DOMAIN,
    SHAPE_MISMATCH,
    SHORT_ERROR_SLOT,
    STRIDE_MISMATCH,
)
from revmlir.tools.rev_translate import main as rev_translate
from test_aot import c_compiler

EXAMPLES = Path(__file__).parent.parent / "examples"


def build(folder: Path, source: str, program: str, *flags: str) -> list[str]:
    """``source`` (rev IR) as ``m.o`` and ``m.h`` in ``folder``, and the C
    ``program`` (which includes ``m.h``) linked with it; the lines the
    program prints."""
    (folder / "m.mlir").write_text(source)
    for emit, out in (("obj", "m.o"), ("header", "m.h")):
        assert rev_translate([str(folder / "m.mlir"), f"--emit={emit}", "-o", str(folder / out)]) == 0
    (folder / "main.c").write_text(program)
    exe = folder / "main"
    command = [*c_compiler(), "-O1", str(folder / "main.c"), str(folder / "m.o"), "-o", str(exe), *flags, "-lm"]
    built = subprocess.run(command, capture_output=True, text=True, cwd=folder)
    assert built.returncode == 0, built.stdout + built.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.splitlines()


SHORT_SLOT = r"""
#include <stdio.h>
#include "m.h"
typedef struct { int64_t *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref1;
typedef struct { int64_t out, n; } rrfib_results;
void _mlir_ciface_rrfib(rrfib_results *results, int64_t out, int64_t n, memref1 *err);
int main(void) {
    for (int64_t words = 0; words <= REVMLIR_ERROR_WORDS; words++) {
        /* the slot, then memory a read or write past it would reach */
        struct { int64_t slot[REVMLIR_ERROR_WORDS]; int64_t after[4]; } m = {{0}, {7, 7, 7, 7}};
        for (int64_t i = words; i < REVMLIR_ERROR_WORDS; i++) m.slot[i] = 7;
        memref1 err = {m.slot, m.slot, 0, {words}, {1}};
        rrfib_results r = {-1, -1};
        _mlir_ciface_rrfib(&r, 0, 20, &err);
        int64_t out = 0, n = 20;
        revmlir_memref1 own = {m.slot, {words}};
        void *args[] = {&out, &n, &own};
        m.slot[0] = words ? 0 : 7;
        rrfib_ciface(args);
        int64_t moved = 0; /* words of the slot the refusal does not write */
        for (int64_t i = words ? words : 1; i < REVMLIR_ERROR_WORDS; i++) moved += m.slot[i] != 7;
        printf("%lld %lld %lld %lld %lld %lld\n", (long long)words, (long long)r.out, (long long)out,
               (long long)m.slot[0], (long long)(m.after[0] + m.after[1] + m.after[2] + m.after[3]), (long long)moved);
    }
    return 0;
}
"""


def test_an_error_slot_too_short_is_refused_before_the_run(tmp_path: Path):
    """The guard reads and writes the slot's last word: a slot of fewer
    words (the docs said four) had it read past its end and crashed.  Both
    entry points now return without running, ``SHORT_ERROR_SLOT`` in word
    0 where there is one, nothing else in the slot or past it touched."""
    lines = build(tmp_path, (EXAMPLES / "fibonacci.mlir").read_text(), SHORT_SLOT)
    expected = ["0 -1 0 7 28 0"]
    expected += [f"{words} -1 0 {SHORT_ERROR_SLOT} 28 0" for words in range(1, ERROR_WORDS)]
    expected.append(f"{ERROR_WORDS} 10946 10946 0 28 0")
    assert lines == expected


STATIC = """
rev.func @s(%y: f64, %x: memref<3xf64>) {
  %c2 = arith.constant 2 : index
  %v = memref.load %x[%c2] : memref<3xf64>
  %y1 = rev.add %y, %v : f64
  rev.return %y1 : f64
}
"""
STATIC_PROGRAM = r"""
#include <stdio.h>
#include "m.h"
typedef struct { double *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref1;
double _mlir_ciface_s(double y, memref1 *x, memref1 *err);
int main(void) {
    struct { double x[2]; double beyond; } buffer = {{1, 2}, 99};
    for (int64_t size = 2; size <= 3; size++) {
        int64_t e[REVMLIR_ERROR_WORDS] = {0};
        revmlir_memref1 err = {e, {REVMLIR_ERROR_WORDS}}, x = {buffer.x, {size}};
        double y = 0.5;
        void *args[] = {&y, &x, &err};
        s_ciface(args);
        printf("%g %lld %lld %lld %lld %lld\n", y, (long long)e[0], (long long)e[1], (long long)e[2],
               (long long)e[3], (long long)e[4]);
        e[0] = 0;
        memref1 upstream = {buffer.x, buffer.x, 0, {size}, {1}}, slot = {(double *)e, (double *)e, 0, {6}, {1}};
        double result = _mlir_ciface_s(0.5, &upstream, &slot);
        printf("%g %lld\n", result, (long long)e[0]);
    }
    return 0;
}
"""


def test_an_array_of_another_static_shape_is_refused_before_the_run(tmp_path: Path):
    """A static shape's code trusts its sizes: a two-element array passed
    for ``memref<3xf64>`` had element [2] read past its end (99, the
    memory after it).  As Python's calls refuse it, C's entry points do,
    with the argument, the dimension and both sizes."""
    lines = build(tmp_path, STATIC, STATIC_PROGRAM)
    assert lines == [f"0.5 {SHAPE_MISMATCH} 1 0 3 2", f"0 {SHAPE_MISMATCH}", "99.5 0 0 0 0 0", "99.5 0"]
    assert "// s(y: double, x: revmlir_memref1 /* of double, [3] */)" in (tmp_path / "m.h").read_text()
    with pytest.raises(TypeError, match=r"argument #1 of @s must be an array of float64 with shape \[3\]"):
        NativeModule.compile(parse_module(STATIC)).call("s", 0.5, np.array([1.0, 2.0]))


RECURSION = """
rev.func @rec(%x: f64, %n: i64) {
  %x1 = rev.if (%x) : f64 pre {
  ^bb0(%a: f64):
    %zero = arith.constant 0 : i64
    %more = arith.cmpi sgt, %n, %zero : i64
    rev.cond %more
  } then {
  ^bb0(%a: f64):
    %one = arith.constant 1.0 : f64
    %b = rev.add %a, %one : f64
    %c1 = arith.constant 1 : i64
    %m = arith.subi %n, %c1 : i64
    %k = anc.alloc %m : i64
    %c, %k1 = rev.call @rec(%b, %k) : (f64, i64) -> (f64, i64)
    %m1 = arith.subi %n, %c1 : i64
    anc.free %k1, %m1 : i64
    rev.yield %c : f64
  } else {
  ^bb0(%a: f64):
    rev.yield %a : f64
  }
  rev.return %x1, %n : f64, i64
}
"""
THREADS = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "m.h"
static int64_t depth;
static size_t used;
static const char *const checks[] = REVMLIR_M_MLIR_CHECKS;
static void *run(void *unused) {
    volatile char taken[used + 1]; /* the stack the caller's own code uses */
    taken[0] = taken[used] = 0;
    double x = 0; int64_t n = depth, e[REVMLIR_ERROR_WORDS] = {0};
    revmlir_memref1 err = {e, {REVMLIR_ERROR_WORDS}};
    void *args[] = {&x, &n, &err};
    rec_ciface(args);
    printf("%g %lld %s\n", x, (long long)e[0], checks[e[0]]);
    return unused;
}
int main(void) {
    int64_t depths[] = {9000, 100, 9000, 9000, 9000};
    size_t stacks[] = {256 << 10, 256 << 10, 4 << 20, 32 << 10, 1 << 20};
    size_t uses[] = {0, 0, 0, 0, (1 << 20) - (40 << 10)};
    for (int i = 0; i < 5; i++) {
        /* a stack of its own: the C library's may reuse a larger one */
        void *stack = aligned_alloc(1 << 12, stacks[i]);
        pthread_attr_t a; pthread_t t;
        pthread_attr_init(&a); pthread_attr_setstack(&a, stack, stacks[i]);
        depth = depths[i]; used = uses[i];
        pthread_create(&t, &a, run, NULL); pthread_join(t, NULL);
        pthread_attr_destroy(&a); free(stack);
    }
    return 0;
}
"""


def test_a_recursion_deeper_than_a_small_threads_stack_stops_with_the_check(tmp_path: Path):
    """The limit of a C caller's run was 1 MiB below its entry point
    whatever the thread's stack: 9000 nested calls in a 256 KiB thread
    overflowed it.  The limit is now also above the thread's stack (looked
    up at the thread's first call, before the run), so the run stops with
    the recursion's check, in a 32 KiB thread too and in a 1 MiB one whose
    caller left 40 KiB of it (where a first limit 32 KiB below the entry
    point, before the look-up, ran off the stack); the same depth in a
    4 MiB thread, and a shallow one in the small thread, run.  The
    header's table names the check by the id the object reports."""
    lines = build(tmp_path, RECURSION, THREADS, "-pthread")
    table = lower_to_llvm_ir(parse_module(RECURSION, str(tmp_path / "m.mlir"))).check_table.attributes[CHECKS_ATTR]
    too_deep = f"ExecutionError|rev.call|{tmp_path}/m.mlir:15:5|rec||calls nest too deeply: the recursion would exhaust the stack"
    assert table.data[int(lines[0].split()[1]) - 1].data == too_deep
    stopped = f"0 {lines[0].split()[1]} {too_deep}"
    assert lines == [stopped, "100 0 ", "9000 0 ", stopped, stopped]


TABLE = r"""
#include <stdio.h>
#include "m.h"
static const char *const checks[] = CHECKS;
int main(void) {
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) printf("%s\n", checks[i]);
    return 0;
}
"""


def test_the_headers_check_table_is_the_objects(tmp_path: Path):
    """The ids a C caller gets index the table the object was compiled
    with; the header spells each entry as a C string whatever it holds (a
    file name's quote, backslash, ``?`` and letters outside ASCII)."""
    folder = tmp_path / 'odd "?\\ü'
    folder.mkdir()
    source = (EXAMPLES / "fibonacci.mlir").read_text()
    guard = "REVMLIR_M_MLIR_CHECKS"
    lines = build(folder, source, TABLE.replace("CHECKS", guard))
    table = lower_to_llvm_ir(parse_module(source, str(folder / "m.mlir"))).check_table.attributes[CHECKS_ATTR]
    assert lines == ["", *(entry.data for entry in table.data)]
    assert len(lines) > 10 and str(folder) in lines[1]


NAMED = """
rev.func @strlen(%y: f64, %a: f64) {
  %y1 = rev.add %y, %a : f64
  rev.return %y1, %a : f64, f64
}
rev.func @main(%y: f64, %a: f64) {
  %y1 = rev.sub %y, %a : f64
  rev.return %y1, %a : f64, f64
}
"""
NAMED_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "m.h"
int main(int argc, char **argv) {
    double y = 1, a = 2; int64_t e[REVMLIR_ERROR_WORDS] = {0};
    revmlir_memref1 err = {e, {REVMLIR_ERROR_WORDS}};
    void *args[] = {&y, &a, &err};
    strlen_ciface(args);
    main_ciface(args);
    printf("%zu %g %lld\n", strlen(argv[0]), y, (long long)e[0]); /* run-time data: no folding */
    return 0;
}
"""


def test_an_object_exports_its_entry_points_only(tmp_path: Path):
    """Every function was exported under its own name, so a ``@strlen``
    replaced the C library's in the program, and a ``@main`` the
    program's own: the functions are now internal, their entry points the
    object's only symbols."""
    assert build(tmp_path, NAMED, NAMED_PROGRAM) == [f"{len(str(tmp_path / 'main'))} 1 0"]


MATH_NAMED = """
rev.func @sincos(%y: f64, %a: f64) {
  %y1 = rev.add %y, %a : f64
  rev.return %y1, %a : f64, f64
}
rev.func @user(%y: f64, %a: f64) {
  %s = math.sin %a : f64
  %c = math.cos %a : f64
  %v = arith.mulf %s, %c : f64
  %y1 = rev.add %y, %v : f64
  %y2, %a2 = rev.call @sincos(%y1, %a) : (f64, f64) -> (f64, f64)
  rev.return %y2, %a2 : f64, f64
}
"""
MATH_NAMED_PROGRAM = r"""
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include "m.h"
int main(int argc, char **argv) {
    double y = 1, a = 0.5 + argc - 1, s, c; int64_t e[REVMLIR_ERROR_WORDS] = {0};
    revmlir_memref1 err = {e, {REVMLIR_ERROR_WORDS}};
    void *args[] = {&y, &a, &err};
    user_ciface(args);
    sincos(a, &s, &c);
    printf("%.12f %.12f %lld\n", y, s * c, (long long)e[0]);
    return 0;
}
"""


def test_an_object_with_a_function_named_like_the_math_llvm_makes_runs(tmp_path: Path):
    """``@sincos`` beside a ``sin`` and a ``cos`` of one value was refused:
    its symbol (internal) is its own, so the object's ``sin`` and ``cos``
    and the program's ``sincos`` reach libm, and ``sincos_ciface`` the
    module's function."""
    y, product, error = build(tmp_path, MATH_NAMED, MATH_NAMED_PROGRAM)[0].split()
    expected = math.sin(0.5) * math.cos(0.5)
    assert (float(y), float(product), error) == (pytest.approx(1.5 + expected, rel=1e-12), pytest.approx(expected), "0")


def _refused_on_every_host_path(source: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``source`` (as ``named.mlir``) refused with ``said`` by a native
    compile and by ``rev-translate``'s object and header alike."""
    with pytest.raises(PassFailedException, match=said):
        NativeModule.compile(parse_module(source, "named.mlir"))
    (tmp_path / "named.mlir").write_text(source)
    for emit in ("obj", "header"):
        assert rev_translate([str(tmp_path / "named.mlir"), f"--emit={emit}", "-o", str(tmp_path / "x")]) == 1
        assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    "name",
    ["realloc", "free", "malloc", "calloc", "_setjmp", "longjmp", "memcpy", "memset", "pthread_getattr_np", "syscall"],
)
def test_a_function_named_like_the_runtimes_c_functions_is_refused(name: str, tmp_path: Path, capsys):
    """The runtime and the guards call these (LLVM makes ``memcpy`` and
    ``memset`` of copies and fills): ``@realloc`` of a module with a stack
    was llvmlite's ``DuplicatedNameError``; a located refusal instead, as
    for ``@exp``, on every host path."""
    source = (
        f"rev.func @{name}(%y: f64, %a: f64) {{\n  %y1 = rev.add %y, %a : f64\n  rev.return %y1, %a : f64, f64\n}}\n"
        "rev.func @user(%y: f64, %s: !anc.stack<f64>) {\n  anc.copy_push %s, %y : !anc.stack<f64>\n"
        "  rev.return %y : f64\n}\n"
    )
    said = f"named.mlir:1:1: @{name} is named like a C library function native code calls, whose calls would run it"
    _refused_on_every_host_path(source, said, tmp_path, capsys)


@pytest.mark.parametrize("name", ["g_ciface", "g.inv_ciface", "_mlir_ciface_g", "g_ciface.unguarded"])
def test_a_function_named_like_an_entry_point_is_refused(name: str, tmp_path: Path, capsys):
    """``@g.inv_ciface`` beside ``@g`` was an unlocated error where one
    translation made both (``rev-translate``), and a refused engine at the
    first ``uncall`` where each direction compiles apart; so was the name
    of an entry point's guarded code, ``@g_ciface.unguarded``.  The header
    of a module whose object is refused is refused too."""
    source = (
        "rev.func @g(%y: f64, %a: f64) {\n  %y1 = rev.add %y, %a : f64\n  rev.return %y1, %a : f64, f64\n}\n"
        f'rev.func @"{name}"(%y: f64, %a: f64) {{\n  %y1 = rev.add %y, %a : f64\n  rev.return %y1, %a : f64, f64\n}}\n'
    )
    said = f"named.mlir:5:1: @{name} is named like a C entry point or its guarded code"
    _refused_on_every_host_path(source, said, tmp_path, capsys)


RANKS = """
rev.func @r(%y: f64, %a: memref<f64>, %b: memref<?xf64>, %c: memref<2x?xf64>) {
  %v = memref.load %a[] : memref<f64>
  %y1 = rev.add %y, %v : f64
  rev.return %y1 : f64
}
"""


def test_the_header_is_iso_c(tmp_path: Path):
    """A rank-0 descriptor had ``int64_t sizes[0]``, which ISO C forbids."""
    (tmp_path / "r.mlir").write_text(RANKS)
    assert rev_translate([str(tmp_path / "r.mlir"), "--emit=header", "-o", str(tmp_path / "r.h")]) == 0
    header = (tmp_path / "r.h").read_text()
    assert "typedef struct { void *data; } revmlir_memref0;" in header
    assert "c: revmlir_memref2 /* of double, [2, ?] */" in header
    (tmp_path / "use.c").write_text('#include "r.h"\nint main(void) { return REVMLIR_ERROR_WORDS - 6; }\n')
    strict = [*c_compiler(), "-std=c11", "-pedantic", "-Wall", "-Werror", "-fsyntax-only", str(tmp_path / "use.c")]
    checked = subprocess.run(strict, capture_output=True, text=True, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr


def test_an_object_calls_no_c_function_newer_than_its_guards(tmp_path: Path):
    """The guard asked ``gettid`` whether a thread was the process's first:
    glibc's function is 2.30's, so an object with a recursion check linked
    with no older C library.  It makes the system call through ``syscall``;
    the functions an object declares are the runtime's (docs/tools.md lists
    them)."""
    (tmp_path / "r.mlir").write_text(RECURSION)
    assert rev_translate([str(tmp_path / "r.mlir"), "--emit=llvm", "-o", str(tmp_path / "r.ll")]) == 0
    declared = set(re.findall(r"^declare .*?@([\w.]+)\(", (tmp_path / "r.ll").read_text(), re.MULTILINE))
    c_functions = {name for name in declared if not name.startswith("llvm.")}
    assert "gettid" not in c_functions and "syscall" in c_functions
    assert c_functions <= RUNTIME_LIBRARY


DESCRIPTORS = """
rev.func @bump(%c: memref<?xf64>, %k: index) {
  %e = rev.take %c[%k] : memref<?xf64>
  %one = arith.constant 1.0 : f64
  %e1 = rev.add %e, %one : f64
  rev.put %e1, %c[%k] : memref<?xf64>
  rev.return %k : index
}
rev.func @corner(%y: f64, %m: memref<?x?xf64>, %z: memref<f64>) {
  %v = memref.load %z[] : memref<f64>
  %y1 = rev.add %y, %v : f64
  rev.return %y1 : f64
}
"""
DESCRIPTORS_PROGRAM = r"""
#include <stdio.h>
#include "m.h"
typedef struct { double *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref1;
int64_t _mlir_ciface_bump(memref1 *c, int64_t k, memref1 *err);
static int64_t e[REVMLIR_ERROR_WORDS];
static revmlir_memref1 err = {e, {REVMLIR_ERROR_WORDS}};
static struct { double buf[4]; double after[2]; } m = {{0}, {7, 7}};
static void show(const char *label) {
    printf("%s %lld %lld %lld %lld %lld %g\n", label, (long long)e[0], (long long)e[1], (long long)e[2],
           (long long)e[3], (long long)e[4], m.after[0] + m.after[1]);
    for (int i = 0; i < REVMLIR_ERROR_WORDS; i++) e[i] = 0;
}
static void bump(int64_t size, int64_t k, double *data) {
    revmlir_memref1 c = {data, {size}};
    void *args[] = {&c, &k, &err};
    bump_ciface(args);
}
static void upstream(double *allocated, double *aligned, int64_t offset, int64_t size, int64_t stride) {
    memref1 c = {allocated, aligned, offset, {size}, {stride}};
    memref1 slot = {(double *)e, (double *)e, 0, {REVMLIR_ERROR_WORDS}, {1}};
    printf("returned %lld ", (long long)_mlir_ciface_bump(&c, 1, &slot));
}
static void corner(int64_t rows, int64_t columns, double *data, double *z) {
    double y = 0.5;
    revmlir_memref2 mm = {data, {rows, columns}};
    revmlir_memref0 zz = {z};
    void *args[] = {&y, &mm, &zz, &err};
    corner_ciface(args);
    printf("y=%g ", y);
}
static void slots(void) {
    /* a slot with no data, or before it, is one of no words: not run, not written */
    int64_t k = 2;
    revmlir_memref1 c = {m.buf, {4}}, none = {NULL, {REVMLIR_ERROR_WORDS}};
    void *args[] = {&c, &k, &none};
    bump_ciface(args);
    memref1 cc = {m.buf, m.buf, 0, {4}, {1}};
    memref1 unaligned = {(double *)e, NULL, 0, {REVMLIR_ERROR_WORDS}, {1}};
    memref1 before = {(double *)e, (double *)e + 1, -1, {REVMLIR_ERROR_WORDS}, {1}};
    /* words written contiguously would not be where a strided slot's are */
    memref1 strided = {(double *)e, (double *)e, 0, {REVMLIR_ERROR_WORDS}, {2}};
    memref1 repeated = {(double *)e, (double *)e, 0, {REVMLIR_ERROR_WORDS}, {0}};
    int64_t r = _mlir_ciface_bump(&cc, 2, &unaligned) + _mlir_ciface_bump(&cc, 2, &before) +
                _mlir_ciface_bump(&cc, 2, &strided) + _mlir_ciface_bump(&cc, 2, &repeated);
    printf("slots %lld %g ", (long long)r, m.buf[2]);
}
int main(void) {
    double z = 2;
    slots(); show("no-slot");
    bump(-1, 5, m.buf); show("negative");
    bump(-1, 100000000, m.buf); show("negative-far");
    bump(INT64_MAX / 8, -1, m.buf); show("largest");
    bump(INT64_MAX / 8 + 1, 0, m.buf); show("too-large");
    bump(4, 0, NULL); show("null");
    bump(0, 0, NULL); show("empty");
    bump(4, 2, m.buf); show("whole");
    upstream(m.buf, m.buf, 0, 4, 1); show("upstream");
    upstream(m.buf, m.buf, -1, 4, 1); show("offset");
    upstream(m.buf, m.buf, 0, 4, 2); show("stride");
    upstream(NULL, m.buf, 0, 4, 1); show("allocated");
    upstream(m.buf, NULL, 0, 4, 1); show("aligned");
    upstream(m.buf, m.buf, 0, -4, 1); show("upstream-negative");
    corner(2, -3, m.buf, &z); show("negative-2d");
    corner((int64_t)1 << 40, (int64_t)1 << 40, m.buf, &z); show("too-large-2d");
    corner(0, (int64_t)1 << 59, NULL, &z); show("empty-2d");
    corner(1, 1, m.buf, NULL); show("null-0d");
    return 0;
}
"""


def test_a_descriptor_that_would_take_the_code_past_its_array_is_refused(tmp_path: Path):
    """A negative dynamic size turned the index checks off: ``bump`` of
    size -1 wrote ``buf[5]``, past its four elements, and at index 10^8
    the program died.  Both entry points now refuse, before the run,
    a negative size, sizes whose product in bytes passes ``INT64_MAX``
    (numpy's limit: an array of no elements passes), a null pointer of an
    array with elements, and upstream's negative offsets and strides
    other than row-major, each with its id, the argument's position and
    what it saw; nothing past the array is touched.  The largest array
    that passes runs, and its index check refuses -1.  An error slot with
    a null data pointer (or upstream's negative offset) was written
    through, and one of a stride other than 1 written as if it were 1:
    each is one of no words, and the call returns at once."""
    lines = build(tmp_path, DESCRIPTORS, DESCRIPTORS_PROGRAM)
    largest, big = (2**63 - 1) // 8, 2**40
    assert lines == [
        "slots 0 0 no-slot 0 0 0 0 0 14",
        f"negative {NEGATIVE_SIZE} 0 0 -1 0 14",
        f"negative-far {NEGATIVE_SIZE} 0 0 -1 0 14",
        f"largest 1 -1 {largest} 0 0 14",
        f"too-large {ARRAY_TOO_LARGE} 0 0 {largest + 1} 0 14",
        f"null {NULL_DATA} 0 0 0 0 14",
        "empty 1 0 0 0 0 14",
        "whole 0 0 0 0 0 14",
        "returned 1 upstream 0 0 0 0 0 14",
        f"returned 0 offset {NEGATIVE_OFFSET} 0 -1 0 0 14",
        f"returned 0 stride {STRIDE_MISMATCH} 0 0 1 2 14",
        f"returned 0 allocated {NULL_DATA} 0 0 0 0 14",
        f"returned 0 aligned {NULL_DATA} 0 1 0 0 14",
        f"returned 0 upstream-negative {NEGATIVE_SIZE} 0 0 -4 0 14",
        f"y=0.5 negative-2d {NEGATIVE_SIZE} 1 1 -3 0 14",
        f"y=0.5 too-large-2d {ARRAY_TOO_LARGE} 1 1 {big} 0 14",
        "y=2.5 empty-2d 0 0 0 0 0 14",
        f"y=0.5 null-0d {NULL_DATA} 2 0 0 0 14",
    ]


DOMAINS = """
rev.func @tr(%y: !rev.tropical<f64>, %a: !rev.tropical<f64>) {
  %y1 = rev.mul %y, %a : !rev.tropical<f64>
  rev.return %y1, %a : !rev.tropical<f64>, !rev.tropical<f64>
}
rev.func @lg(%y: !rev.log<f64>, %a: !rev.log<f64>) {
  %y1 = rev.mul %y, %a : !rev.log<f64>
  rev.return %y1, %a : !rev.log<f64>, !rev.log<f64>
}
rev.func @tf(%y: !rev.tropical<f32>, %a: !rev.tropical<f32>) {
  %y1 = rev.mul %y, %a : !rev.tropical<f32>
  rev.return %y1, %a : !rev.tropical<f32>, !rev.tropical<f32>
}
"""
DOMAINS_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include "m.h"
#define ROUND_TRIP(f, T, a)                                                                       \
    {                                                                                             \
        int64_t e[REVMLIR_ERROR_WORDS] = {0};                                                     \
        revmlir_memref1 err = {e, {REVMLIR_ERROR_WORDS}};                                         \
        T y = 1, x = (a);                                                                         \
        void *args[] = {&y, &x, &err};                                                            \
        f##_ciface(args);                                                                         \
        double after = y;                                                                         \
        if (!e[0]) f##_inv_ciface(args);                                                          \
        printf(#f " %lld %lld %llx %.17g %.17g\n", (long long)e[0], (long long)e[1],              \
               (unsigned long long)e[2], after, (double)y);                                       \
    }
int main(void) {
    double values[] = {-INFINITY, INFINITY, NAN, 2.5, -0.5};
    for (int i = 0; i < 5; i++) {
        ROUND_TRIP(tr, double, values[i])
        ROUND_TRIP(lg, double, values[i])
        ROUND_TRIP(tf, float, (float)values[i])
    }
    return 0;
}
"""


def test_a_scalar_outside_its_types_values_is_refused_as_pythons_calls_refuse_it(tmp_path: Path):
    """A tropical -inf (the tropical zero) passed to ``tr_ciface`` ran, and
    ``tr_inv_ciface`` then gave NaN back for 1; so did a log number's NaN
    or infinite log.  The entry points now refuse, with ``OUT_OF_DOMAIN``,
    the argument's position and the value's bits as a double, exactly the
    values Python's calls refuse (a log argument is passed as its log,
    Python's as the number, ``exp`` of it, which must be positive and
    finite); what they take comes back from ``f`` then ``~f``.  The
    header says each domain."""
    lines = build(tmp_path, DOMAINS, DOMAINS_PROGRAM)
    native = NativeModule.compile(parse_module(DOMAINS))
    values = [-math.inf, math.inf, math.nan, 2.5, -0.5]
    cases = [(v, n) for v in values for n in ("tr", "lg", "tf")]
    assert len(lines) == len(cases)
    refused = 0
    for line, (value, name) in zip(lines, cases):
        said, id, position, bits, _, back = line.split()
        given = math.exp(value) if name == "lg" else np.float32(value) if name == "tf" else value
        try:
            native.call(name, 1.0, given)
        except TypeError as error:
            assert "must be a" in str(error) and "finite" in str(error)
            wide = float(np.float32(value)) if name == "tf" else value
            assert (said, int(id), int(position)) == (name, OUT_OF_DOMAIN, 1), line
            assert int(bits, 16) == struct.unpack("<Q", struct.pack("<d", wide))[0], line
            refused += 1
        else:
            assert (said, int(id), float(back)) == (name, 0, 1.0), line
    assert refused == 9  # every infinity and NaN
    header = (tmp_path / "m.h").read_text()
    assert "// tr(y: double /* tropical: finite */, a: double /* tropical: finite */)" in header
    assert "// lg(y: double /* log of the value: finite */, a: double /* log of the value: finite */)" in header
    assert "// tf(y: float /* tropical: finite */," in header


STACK = """
rev.func @keep(%x: f64, %s: !anc.stack<f64>) {
  anc.copy_push %s, %x : !anc.stack<f64>
  rev.return %x : f64
}
"""
STACK_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "m.h"
int main(void) {
    double *buffer = malloc(4 * sizeof(double));
    struct { int64_t buffer, size, capacity; } headers[] = {
        {(int64_t)buffer, 0, 4}, {(int64_t)buffer, 5, 4}, {(int64_t)buffer, -1, 4}, {0, 0, 4},
        {(int64_t)buffer, 0, (int64_t)1 << 60}, {0, 0, 0},
    };
    for (int i = 0; i < 6; i++) {
        int64_t e[REVMLIR_ERROR_WORDS] = {0}, *h = &headers[i].buffer;
        revmlir_memref1 err = {e, {REVMLIR_ERROR_WORDS}}, s = {h, {3}};
        double x = 2.5;
        void *args[] = {&x, &s, &err};
        keep_ciface(args);
        printf("%lld %lld %lld %lld %d %lld", (long long)e[0], (long long)e[1], (long long)e[2], (long long)e[3],
               e[4] == (int64_t)buffer, (long long)h[1]);
        if (!e[0]) keep_inv_ciface(args);
        printf(" %lld %lld\n", (long long)e[0], (long long)h[1]);
        if (i == 5) free((void *)h[0]);
    }
    free(buffer);
    return 0;
}
"""


def test_a_stack_header_whose_words_disagree_is_refused_before_the_run(tmp_path: Path):
    """A stack is passed as its header ``[buffer, size, capacity]``: a size
    past the capacity had a push write past the buffer, a negative one a
    pop read before it, and a null buffer of a capacity was written
    through.  The entry points refuse such a header with ``BAD_STACK``
    (the position, the size, the capacity, the buffer), and so a capacity
    whose bytes pass ``INT64_MAX``; a consistent header, the empty one of
    no buffer included, is pushed to and popped back."""
    lines = build(tmp_path, STACK, STACK_PROGRAM)
    assert lines == [
        "0 0 0 0 0 1 0 0",
        f"{BAD_STACK} 1 5 4 1 5 {BAD_STACK} 5",
        f"{BAD_STACK} 1 -1 4 1 -1 {BAD_STACK} -1",
        f"{BAD_STACK} 1 0 4 0 0 {BAD_STACK} 0",
        f"{BAD_STACK} 1 0 {1 << 60} 1 0 {BAD_STACK} 0",
        "0 0 0 0 0 1 0 0",
    ]
    assert "#define REVMLIR_BAD_STACK (-10)" in (tmp_path / "m.h").read_text()


FREE_STRIDES = """
rev.func @one(%y: f64, %m: memref<?xf64>) {
  %one = arith.constant 1.0 : f64
  %y1 = rev.add %y, %one : f64
  rev.return %y1 : f64
}
rev.func @two(%y: f64, %m: memref<?x?xf64>) {
  %one = arith.constant 1.0 : f64
  %y1 = rev.add %y, %one : f64
  rev.return %y1 : f64
}
rev.func @stat(%y: f64, %m: memref<1x3xf64>) {
  %one = arith.constant 1.0 : f64
  %y1 = rev.add %y, %one : f64
  rev.return %y1 : f64
}
"""
FREE_STRIDES_PROGRAM = r"""
#include <stdio.h>
#include "m.h"
typedef struct { double *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref1;
typedef struct { double *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } memref2;
typedef struct { int64_t *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } slot1;
double _mlir_ciface_one(double y, memref1 *m, slot1 *err);
double _mlir_ciface_two(double y, memref2 *m, slot1 *err);
double _mlir_ciface_stat(double y, memref2 *m, slot1 *err);
static int64_t e[REVMLIR_ERROR_WORDS];
static slot1 err = {e, e, 0, {REVMLIR_ERROR_WORDS}, {1}};
static double buf[12];
static void show(const char *label, double y) {
    printf("%s %g %lld %lld %lld %lld %lld\n", label, y, (long long)e[0], (long long)e[1], (long long)e[2],
           (long long)e[3], (long long)e[4]);
    for (int i = 0; i < REVMLIR_ERROR_WORDS; i++) e[i] = 0;
}
static void one(const char *label, int64_t size, int64_t stride) {
    memref1 m = {buf, buf, 0, {size}, {stride}};
    show(label, _mlir_ciface_one(0.5, &m, &err));
}
static void two(const char *label, int64_t rows, int64_t columns, int64_t outer, int64_t inner) {
    memref2 m = {buf, buf, 0, {rows, columns}, {outer, inner}};
    show(label, _mlir_ciface_two(0.5, &m, &err));
}
static void stat(const char *label, int64_t rows, int64_t columns, int64_t outer, int64_t inner) {
    memref2 m = {buf, buf, 0, {rows, columns}, {outer, inner}};
    show(label, _mlir_ciface_stat(0.5, &m, &err));
}
int main(void) {
CASES
    return 0;
}
"""


def test_a_stride_that_cannot_move_the_code_passes_as_numpys_does(tmp_path: Path):
    """The stride check refused arrays upstream MLIR's numpy helper
    (``get_ranked_memref_descriptor``) describes: it passes numpy's
    strides, 0 for an empty array and anything on a size-1 dimension,
    where no index ever moves by them.  A stride is now compared only where
    the array has elements and its dimension's size is not 1 (numpy's
    relaxed row-major rule): the descriptors of numpy's contiguous arrays
    below (sizes and strides as numpy gives them) run, and a stride that
    does move the code is still refused."""
    contiguous = {
        "zeros(0)": np.zeros(0),
        "zeros(3,0)": np.zeros((3, 0)),
        "zeros(3,1).T": np.zeros((3, 1)).T,
        "zeros(3)[None]": np.zeros(3)[None],
        "zeros(3,4)[:,:1]": np.zeros((3, 4))[:, :1].copy(),
        "zeros(1,3)": np.zeros((1, 3)),
    }
    assert all(a.flags.c_contiguous for a in contiguous.values())
    cases = [
        *(((("one", "two")[a.ndim - 1]), label, a.shape, a.strides) for label, a in contiguous.items()),
        ("stat", "static-zeros(3,1).T", (1, 3), np.zeros((3, 1)).T.strides),
        ("two", "outer", (3, 4), (40, 8)),
        ("two", "inner", (3, 4), (32, 16)),
        ("one", "stride-0", (2,), (0,)),
    ]
    calls = (
        f'    {f}("{label}", {", ".join(map(str, (*shape, *(s // 8 for s in strides))))});'
        for f, label, shape, strides in cases
    )
    lines = build(tmp_path, FREE_STRIDES, FREE_STRIDES_PROGRAM.replace("CASES", "\n".join(calls)))
    assert lines == [
        *(f"{label} 1.5 0 0 0 0 0" for label in [*contiguous, "static-zeros(3,1).T"]),
        f"outer 0 {STRIDE_MISMATCH} 1 0 4 5",
        f"inner 0 {STRIDE_MISMATCH} 1 1 1 2",
        f"stride-0 0 {STRIDE_MISMATCH} 1 0 1 0",
    ]


def test_the_header_says_which_domains_the_entry_points_check(tmp_path: Path):
    """The header wrote ``/* tropical: finite */`` inside a stack's comment
    too (a nested comment), though the entry points read a stack's header,
    never its elements, and Python's calls take a stack's -inf as well.
    Only a scalar's domain is checked, and the header now says so: an
    array's or a stack's element is marked trusted; the header names what
    else cannot be checked and the two ids only upstream's entry points
    store."""
    (tmp_path / "m.mlir").write_text(
        """
rev.func @ts(%y: !rev.tropical<f64>, %s: !anc.stack<!rev.tropical<f64>>, %l: !anc.stack<!rev.log<f32>>) {
  %e = anc.pop %s : !anc.stack<!rev.tropical<f64>>
  %y1 = rev.mul %y, %e : !rev.tropical<f64>
  anc.push %s, %e : !anc.stack<!rev.tropical<f64>>
  rev.return %y1 : !rev.tropical<f64>
}
"""
    )
    assert rev_translate([str(tmp_path / "m.mlir"), "--emit=header", "-o", str(tmp_path / "m.h")]) == 0
    header = (tmp_path / "m.h").read_text()
    (line,) = (line for line in header.splitlines() if line.startswith("// ts("))
    assert line == (
        "// ts(y: double /* tropical: finite */,"
        " s: revmlir_memref1 /* stack header int64_t[3]: malloc'd double (tropical, trusted: not checked) buffer,"
        " size, capacity */,"
        " l: revmlir_memref1 /* stack header int64_t[3]: malloc'd float (log of the value, trusted: not checked)"
        " buffer, size, capacity */)"
    )
    comment = " ".join(header.split("*/")[0].split())
    assert "the values of an array's or a stack's elements (as their comments say)" in comment
    assert "that the data pointer reaches as many elements as the sizes say" in comment
    assert "REVMLIR_NEGATIVE_OFFSET and REVMLIR_STRIDE_MISMATCH come only from _mlir_ciface_<f>" in comment
    native = NativeModule.compile(parse_module((tmp_path / "m.mlir").read_text()))
    assert native.call("ts", 1.0, [2.0, -math.inf], [1.0])[0] == -math.inf  # trusted on every engine


FORGED = """
rev.func @keep(%x: f64, %s: !anc.stack<f64>, %t: !rev.tropical<f64>, %n: i64, %c: memref<?xi64>) {
  anc.copy_push %s, %x : !anc.stack<f64>
  rev.return %x, %t, %n : f64, !rev.tropical<f64>, i64
}
"""


@pytest.mark.parametrize(
    "written, said",
    [
        ("finite_arguments = array<i64: 3>", r"rev.finite_arguments names argument 3, which is not a float argument"),
        ("finite_arguments = array<i64: 5>", r"rev.finite_arguments names argument 5, which is not a float argument"),
        ("finite_arguments = array<i64: -1>", r"rev.finite_arguments names argument -1, which is not a float"),
        ("finite_arguments = array<i32: 2>", r"rev.finite_arguments must be an array<i64: \.\.\.> of positions"),
        (
            "stack_arguments = array<i64: 0, 8, 0, 0, 8>",
            r"rev.stack_arguments gives argument 4 \(memref<\?xi64>\) 8 bytes: a stack's",
        ),
        (
            "stack_arguments = array<i64: 0, -8, 0, 0, 0>",
            r"rev.stack_arguments gives argument 1 \(memref<3xi64>\) -8 bytes",
        ),
        ("stack_arguments = array<i64: 0, 8>", r"rev.stack_arguments has 2 entries, but @keep has 5 arguments before"),
    ],
)
def test_an_entry_points_attribute_that_does_not_fit_the_signature_is_refused(written: str, said: str):
    """Std IR is printed, edited and read back; the entry points trusted
    ``rev.finite_arguments`` and ``rev.stack_arguments`` as written: a
    finite check of an ``i64`` made LLVM IR llvmlite refuses
    (``fpext i64``), and a stack entry on an array read three header words
    from an array that may have none.  An entry that does not fit the
    signature is now refused at the function; the lowering's own
    attributes pass."""
    module = parse_module(FORGED, "s.mlir")
    RevLowerToStdPass().apply(make_context(), module)
    printed = str(module)
    assert "rev.finite_arguments = array<i64: 2>" in printed
    assert "rev.stack_arguments = array<i64: 0, 8, 0, 0, 0>" in printed
    ConvertStdToLLVMPass().apply(make_context(), parse_module(printed, "std.mlir"))
    name = written.split(" = ")[0]
    forged = re.sub(rf"rev\.{name} = array<[^>]*>", f"rev.{written}", printed)
    assert forged != printed
    with pytest.raises(PassFailedException, match=rf"^'func.func' at std.mlir:\d+:\d+: {said}"):
        ConvertStdToLLVMPass().apply(make_context(), parse_module(forged, "std.mlir"))


UPSTREAM_POSITIONS = """
rev.func @mix(%m: memref<?x?xf64>, %t: !rev.tropical<f64>, %s: !anc.stack<f32>, %l: !rev.log<f32>) {
  %x = arith.constant 1.5 : f32
  anc.copy_push %s, %x : !anc.stack<f32>
  rev.return %t, %l : !rev.tropical<f64>, !rev.log<f32>
}
rev.func @wide(%y: f64, %a: memref<?xf32>, %b: memref<?xcomplex<f64>>) {
  %one = arith.constant 1.0 : f64
  %y1 = rev.add %y, %one : f64
  rev.return %y1 : f64
}
"""
UPSTREAM_POSITIONS_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "m.h"
typedef struct { double *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } memref2;
typedef struct { int64_t *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref1;
typedef struct { double t; float l; } mix_results;
void _mlir_ciface_mix(mix_results *r, memref2 *m, double t, memref1 *s, float l, memref1 *err);
static int64_t e[REVMLIR_ERROR_WORDS];
static double buf[6];
static void show(const char *label) {
    printf("%s %lld %lld %llx %lld %lld", label, (long long)e[0], (long long)e[1], (unsigned long long)e[2],
           (long long)e[3], (long long)e[4]);
    for (int i = 0; i < REVMLIR_ERROR_WORDS; i++) e[i] = 0;
}
static void mix(const char *label, double t, float l, int64_t *header, int64_t words) {
    memref2 m = {buf, buf, 0, {2, 3}, {3, 1}};
    memref1 s = {header, header, 0, {words}, {1}}, err = {e, e, 0, {REVMLIR_ERROR_WORDS}, {1}};
    mix_results r = {-7, -7};
    _mlir_ciface_mix(&r, &m, t, &s, l, &err);
    show(label);
    printf(" %g %g %lld\n", r.t, r.l, (long long)header[1]);
}
static void wide(const char *label, int64_t floats, int64_t complexes) {
    double y = 0.5;
    revmlir_memref1 a = {buf, {floats}}, b = {buf, {complexes}}, err = {e, {REVMLIR_ERROR_WORDS}};
    void *args[] = {&y, &a, &b, &err};
    wide_ciface(args);
    show(label);
    printf(" %g\n", y);
}
int main(void) {
    float *floats = malloc(4 * sizeof(float));
    int64_t fine[3] = {(int64_t)floats, 0, 4}, past[3] = {(int64_t)floats, 9, 4};
    mix("fine", 1.0, 0.5f, fine, 3);
    mix("tropical-zero", -INFINITY, 0.5f, fine, 3);
    mix("log-nan", 1.0, NAN, fine, 3);
    mix("past", 1.0, 0.5f, past, 3);
    mix("two-words", 1.0, 0.5f, fine, 2);
    free((void *)fine[0]);
    wide("largest", INT64_MAX / 4, INT64_MAX / 16);
    wide("floats", INT64_MAX / 4 + 1, 0);
    wide("complexes", 0, INT64_MAX / 16 + 1);
    return 0;
}
"""


def test_upstreams_entry_point_names_the_position_after_a_descriptors_fields(tmp_path: Path):
    """``_mlir_ciface_mix`` takes a rank-2 descriptor's fields before the
    scalars, so its refusals must count arguments, not the values passed:
    a tropical -inf (position 1), a log NaN (position 3, the f32 widened
    exactly) and a stack header past its capacity or of two words
    (position 2) are refused there as ``f_ciface`` refuses them, nothing
    run.  The size bound is per element size: an ``f32`` array passes
    ``INT64_MAX / 4`` elements and a ``complex<f64>`` one
    ``INT64_MAX / 16``, one more of either is refused."""
    lines = build(tmp_path, UPSTREAM_POSITIONS, UPSTREAM_POSITIONS_PROGRAM)
    said = lines[3].split()
    assert int(said[5]) != 0  # the buffer's address
    lines[3] = " ".join([*said[:5], "BUFFER", *said[6:]])
    nan = struct.unpack("<Q", struct.pack("<d", float(np.float32("nan"))))[0]
    assert lines == [
        "fine 0 0 0 0 0 1 0.5 1",
        f"tropical-zero {OUT_OF_DOMAIN} 1 {0xFFF0000000000000:x} 0 0 -7 -7 1",
        f"log-nan {OUT_OF_DOMAIN} 3 {nan:x} 0 0 -7 -7 1",
        f"past {BAD_STACK} 2 9 4 BUFFER -7 -7 9",
        f"two-words {SHAPE_MISMATCH} 2 0 3 2 -7 -7 1",
        "largest 0 0 0 0 0 1.5",
        f"floats {ARRAY_TOO_LARGE} 1 0 {(2**63 - 1) // 4 + 1} 0 0.5",
        f"complexes {ARRAY_TOO_LARGE} 2 0 {(2**63 - 1) // 16 + 1} 0 0.5",
    ]
