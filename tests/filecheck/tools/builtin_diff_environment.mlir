// lit's builtins `diff` and `cat` must leave the environment of later RUN
// lines alone: each line below records the PYTHONPATH it sees and where its
// revmlir comes from, after a `diff` at a line's start, behind `not`, in a
// pipeline and after `&&`, and after a `cat`; all must match the first.
// DEFINE: %{where} = %python -c "import os, importlib.util; print(os.environ.get('PYTHONPATH'), importlib.util.find_spec('revmlir').origin)"
// RUN: %{where} > %t.before
// RUN: diff %t.before %t.before
// RUN: %{where} > %t.diff
// RUN: not diff %t.before %s > %t.differences
// RUN: %{where} > %t.not
// RUN: echo x | diff - %t.before || true
// RUN: %{where} > %t.pipe
// RUN: true && cat %t.before > %t.copy
// RUN: %{where} > %t.cat
// RUN: diff %t.before %t.diff
// RUN: diff %t.before %t.not
// RUN: diff %t.before %t.pipe
// RUN: diff %t.before %t.cat
// RUN: diff %t.before %t.copy
