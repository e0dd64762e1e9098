"""The repository passes its lint rules (pyproject.toml's ``[tool.ruff.lint]``): no unused import or variable, no
undefined name, no f-string without a field, in the library, the benches and the tests alike; and its import contract
(tests/importlinter.toml): the layers import one way, with no circle, and the diagram in docs/architecture.md is the
graph as it is."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.import_contract import diagram_in_docs, layer_graph, lint_imports, make_view, mermaid

ROOT = Path(__file__).resolve().parents[1]


def test_the_repository_passes_ruff():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_layers_keep_the_import_contract():
    with tempfile.TemporaryDirectory() as folder:
        result = lint_imports(make_view(Path(folder)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("planted_in", "line", "upward"), [
    # the bottom layer reaching for the top of the pipeline
    ("core/records.py", "from s2sbench.pipeline.run.build import run_build", "s2sbench.pipeline.run.build"),
    # the gate reaching for the stage that makes the clips it hears, inside a function (checked as well)
    ("gate/verify.py", "def _planted():\n    from s2sbench.pipeline.speech.audio import ClipStore\n    return ClipStore",
     "s2sbench.pipeline.speech.audio"),
])
def test_an_upward_import_breaks_the_contract_with_both_names(tmp_path, planted_in, line, upward):
    view = make_view(tmp_path, copied=("pipeline",))
    module = view / "s2sbench" / "pipeline" / planted_in
    module.write_text(module.read_text(encoding="utf-8") + f"\n\n{line}\n", encoding="utf-8")
    result = lint_imports(view)
    importer = "s2sbench.pipeline." + planted_in.removesuffix(".py").replace("/", ".")
    assert result.returncode == 1
    broken = result.stdout[result.stdout.index("Broken contracts"):]
    assert broken.startswith("Broken contracts\n----------------\n\nThe pipeline: the stages a row passes through")
    assert f"- {importer} -> {upward} (l." in broken, broken


def test_the_layer_diagram_in_the_docs_is_the_import_graph():
    with tempfile.TemporaryDirectory() as folder:
        drawn = mermaid(layer_graph(make_view(Path(folder))))
    assert diagram_in_docs() == drawn, "docs/architecture.md: run `python -m tests.import_contract --diagram`"


def test_a_bare_lint_imports_in_the_checkout_finds_no_contract_to_misread():
    """The contract lives where `make lint` reads it (tests/importlinter.toml, run on a view laid out as installed): a
    bare `lint-imports` in the checkout walked the folders as they are and failed ("Missing layer s2sbench.flows")."""
    result = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=ROOT,
                            capture_output=True, text=True)
    output = result.stdout + result.stderr
    assert "Could not read any configuration" in output, output
    assert "Missing layer" not in output and "BROKEN" not in output
