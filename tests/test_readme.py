"""The README's Python API example runs as written: taken from README.md and executed in a fresh folder."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example() -> str:
    """The first python block of the README's "Python API" section."""
    section = README.read_text(encoding="utf-8").split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_python_api_example_in_the_readme_runs(tmp_path, monkeypatch, capsys, shared_clip_store):
    monkeypatch.chdir(tmp_path)
    # the first demo story in the demo task's voices: the shipped tasks' build (tests/core, slow) speaks it too
    monkeypatch.setenv("S2SBENCH_CLIP_STORE", str(shared_clip_store))
    exec(compile(readme_example(), str(README), "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith("rows kept") and int(printed[0].split()[0]) >= 1
    assert 0.0 <= float(printed[1]) <= 1.0
    assert re.fullmatch(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\] from \d+ pairs", printed[2])
    assert (tmp_path / "api-results" / "results_lm_eval.json").is_file()
