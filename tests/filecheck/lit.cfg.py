# lit configuration for the FileCheck suite: `lit tests/filecheck` or pytest.
import os
import sys

import lit.formats

config.name = "revmlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "inputs"]

# Tools come from the environment that runs lit (the project's virtualenv);
# under pytest, from tests/tool_server.py's clients in REVMLIR_LIT_TOOLS.
bin_dir = os.path.dirname(sys.executable)
served = [os.environ["REVMLIR_LIT_TOOLS"]] if os.environ.get("REVMLIR_LIT_TOOLS") else []
config.environment["PATH"] = os.pathsep.join(
    [*served, bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
config.substitutions.append(("%python", sys.executable))
# A PYTHONPATH that selects a checkout's own revmlir reaches the tools too.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
# lit runs its builtins `cat` and `diff` as Python scripts and, to let them
# import lit, sets PYTHONPATH to lit's own directory in the environment that
# the test's later RUN lines share: every tool after one would import the
# installed revmlir.  Behind `env` lit gives the command its own copy of the
# environment, so a `cat` or `diff` in command position runs behind `env`: at
# a line's start (lit marks each line `%dbg(RUN: at line N)`), after `|`,
# `&&`, `||`, `;`, `!` or `not`.
config.substitutions.append((r"(?:^|(?<=[|&;!)])|(?<=\bnot))\s*(?=(?:cat|diff)\s)", " env "))
