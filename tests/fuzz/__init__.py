"""Fuzzers for the tools and the engines, bounded in the test suite
(``tests/test_fuzz.py``) and open-ended for developers
(``python -m tests.fuzz --minutes 30 --seed 7``, see ``docs/tools.md``).

* ``mutation``: mutates the ``.mlir`` files of the repository and runs
  ``rev-opt`` pipelines, ``rev-translate`` and ``rev-run`` on them; every
  outcome must be a result or a clean diagnostic.
* ``differential``: random valid programs (``program_generator``) must run
  backwards to their inputs, and alike on native code and the interpreter.

Cases run in a worker process (``worker``), so a crash or a hang in native
code is reported as a finding instead of ending the run.
"""
