"""The README's demo command keeps working (it is the first thing users run)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_demo_runs_and_shows_inverse_and_gradient():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "rev.func @rotate_and_log.inv" in out
    assert "forward (native code)" in out
    assert "the inputs are restored: 0.0" in out
    assert "by reverse computing" in out
