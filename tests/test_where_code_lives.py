"""A compiled program does not depend on where revmlir or the user's file
lives: the same source compiled from a copy of the package elsewhere, its
user file elsewhere too, gives the same check table (the user file's path
aside, which its entries name) and the same LLVM IR and PTX.  Source
locations enter the IR only as the text of check messages, and no rule
reads them to decide what code to make.

The compile runs in this process and, at the same time, in a second one
that imports a copy of the package, each with the disk cache off, so
that both compile.  The test takes a compile's time: importing revmlir,
xDSL and LLVM and compiling a kernel for the host and the GPU, about 5 s
of CPU in each process (more on a loaded machine)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import revmlir
from revmlir.runtime import cache

PACKAGE = Path(revmlir.__file__).resolve().parent

USER_FILE = """
import math

import revmlir as rv


@rv.reversible
def log_sin(y, x):
    for i in rv.prange(len(x)):
        y[i] += math.log(x[i]) * math.sin(x[i])
"""
"""The elementwise kernel of ``examples/python/gpu_elementwise.py``."""

COMPILE = textwrap.dedent(
    '''
    import json
    import sys
    from pathlib import Path

    import numpy as np

    import revmlir
    from revmlir.gpu.program import compile_kernels
    from revmlir.runtime_checks import CHECKS_ATTR


    def compiled(user_dir: str) -> str:
        """The check table, LLVM IR and PTX of the user file's ``log_sin``,
        with its directory written ``<user>`` (in the texts, not in their
        JSON, which may escape it), and where revmlir was."""
        sys.path.insert(0, user_dir)
        try:
            from where_code_lives_kernel import log_sin
        finally:
            sys.path.remove(user_dir)
            sys.modules.pop("where_code_lives_kernel", None)
        x, y = np.ones(4), np.zeros(4)
        spec = log_sin.specialization_for(y, x)
        native = spec.native
        gpu = compile_kernels(spec.module, [spec.name])
        table = [entry.data for entry in native.check_table.attributes[CHECKS_ATTR].data]
        gpu_table = [entry.data for entry in gpu.check_table.attributes[CHECKS_ATTR].data]
        found = {"table": table, "gpu_table": gpu_table, "llvm_ir": [native.llvm_ir], "ptx": [gpu.ptx]}
        local = {name: [text.replace(user_dir, "<user>") for text in texts] for name, texts in found.items()}
        return json.dumps({"revmlir": str(Path(revmlir.__file__).parent), "compiled": local})
    '''
)


def _user_dir(where: Path) -> str:
    where.mkdir(parents=True)
    (where / "where_code_lives_kernel.py").write_text(USER_FILE)
    return str(where)


def test_the_program_is_the_same_wherever_revmlir_and_the_users_file_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    copy = tmp_path / "elsewhere" / "site"
    shutil.copytree(PACKAGE, copy / "revmlir", ignore=shutil.ignore_patterns("__pycache__"))
    path = os.pathsep.join(filter(None, (str(copy), os.environ.get("PYTHONPATH"))))
    environment = {**os.environ, "PYTHONPATH": path, cache.ENABLE_ENV: "0", "PYTHONDONTWRITEBYTECODE": "1"}
    # the other process compiles while this one does: the test's time is one compile's
    with subprocess.Popen(
        [sys.executable, "-c", f"{COMPILE}\nprint(compiled({_user_dir(tmp_path / 'b' / 'user')!r}))"],
        env=environment,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as other:
        monkeypatch.setenv(cache.ENABLE_ENV, "0")
        namespace: dict[str, object] = {}
        exec(COMPILE, namespace)
        compiled = namespace["compiled"]
        assert callable(compiled)
        here = json.loads(compiled(_user_dir(tmp_path / "a")))
        output, errors = other.communicate()
    assert other.returncode == 0, errors
    there = json.loads(output)
    assert there["revmlir"] == str(copy / "revmlir")
    assert here["revmlir"] == str(PACKAGE)
    assert here["compiled"]["table"] == there["compiled"]["table"]
    assert [entry.split("|")[2] for entry in here["compiled"]["table"]] == [
        "<user>/where_code_lives_kernel.py:10:9",
        "<user>/where_code_lives_kernel.py:10:26",
        "<user>/where_code_lives_kernel.py:10:43",
    ]
    assert here["compiled"] == there["compiled"]
