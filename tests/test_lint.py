"""The repository passes its lint rules (pyproject.toml's ``[tool.ruff.lint]``): no unused import or variable, no
undefined name, no f-string without a field, in the library, the benches and the tests alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_repository_passes_ruff():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
