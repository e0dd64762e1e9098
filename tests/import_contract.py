"""The import contract (tests/importlinter.toml) checked on this checkout, and the layer diagram
drawn from the same import graph.

    python -m tests.import_contract             # lint-imports: exit 1 and both modules' names on a wrong import
    python -m tests.import_contract --diagram   # rewrite the diagram in docs/architecture.md from the graph

The installed package maps the repository's folders under one name (``s2sbench.pipeline`` is ``pipeline/``), which
import-linter cannot see: it walks the root package's own folder. So both run on a view of the checkout, a
temporary ``s2sbench/`` folder whose members link to the real files (a folder named in ``copied`` is copied
instead, so a test can plant an import in it without touching the checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "tests" / "importlinter.toml"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: the installed name of each top-level folder (pyproject.toml's package-dir)
MAPPED = {"pipeline": "pipeline", "evaluation": "evaluation", "flows": "flows", "data": "data"}
PIPELINE_LAYERS = ("publish", "run", "buildfolder", "catalog", "speech", "gate", "items", "text", "machine", "core")
EVALUATION_LAYERS = ("report", "runner", "results", "data", "protocol", "models")
DIAGRAM_START, DIAGRAM_END = "<!-- layers:start -->", "<!-- layers:end -->"


def make_view(where: Path, copied: Iterable[str] = ()) -> Path:
    """A folder holding ``s2sbench/`` as it is installed, made of links to this checkout (copies for ``copied``)."""
    package = where / "s2sbench"
    package.mkdir(parents=True)
    for file in (ROOT / "s2sbench").glob("*.py"):
        (package / file.name).symlink_to(file)
    for name, folder in MAPPED.items():
        if folder in copied:
            shutil.copytree(ROOT / folder, package / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (package / name).symlink_to(ROOT / folder, target_is_directory=True)
    return where


def lint_imports(view: Path) -> subprocess.CompletedProcess:
    """import-linter's ``lint-imports`` on ``view`` with this checkout's contract (no cache: a view is new each time)."""
    env = {**os.environ, "PYTHONPATH": str(view)}
    command = [str(Path(sys.executable).with_name("lint-imports")), "--config", str(CONTRACT), "--no-cache"]
    return subprocess.run(command, cwd=view, env=env, capture_output=True, text=True)


def module_imports(view: Path) -> dict[str, list[str]]:
    """Module -> the modules it imports directly, in ``view`` (grimp's graph, built in a process of its own: this one
    may have imported the installed s2sbench already)."""
    code = ("import grimp, json; graph = grimp.build_graph('s2sbench', cache_dir=None); "
            "print(json.dumps({m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=view, env={**os.environ, "PYTHONPATH": str(view)},
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def layer_graph(view: Path) -> dict[str, set[str]]:
    """Layer -> the layers it imports directly, for the pipeline's and evaluation's layers and the flows."""
    imports = module_imports(view)
    layers = [f"s2sbench.pipeline.{name}" for name in PIPELINE_LAYERS]
    layers += [f"s2sbench.evaluation.{name}" for name in EVALUATION_LAYERS]
    layers += ["s2sbench.flows"]

    def layer_of(module: str) -> str | None:
        return next((layer for layer in layers if module == layer or module.startswith(layer + ".")), None)

    edges: dict[str, set[str]] = {layer: set() for layer in layers}
    for module, imported_modules in imports.items():
        source = layer_of(module)
        if source is None:
            continue
        for imported in imported_modules:
            target = layer_of(imported)
            if target is not None and target != source:
                edges[source].add(target)
    return edges


def _short(layer: str) -> str:
    return layer.removeprefix("s2sbench.").replace(".", "/")


def mermaid(edges: dict[str, set[str]]) -> str:
    """The layer graph as a Mermaid flowchart, top layer first; an arrow reads 'imports'. Arrows a layer reaches
    through another are left out (a transitive reduction), so the picture stays readable."""
    reachable: dict[str, set[str]] = {}

    def reach(layer: str) -> set[str]:
        if layer not in reachable:
            reachable[layer] = set()
            for target in edges[layer]:
                reachable[layer] |= {target} | reach(target)
        return reachable[layer]

    lines = ["```mermaid", "flowchart TD"]
    for layer in edges:
        lines.append(f'  {_short(layer).replace("/", "_")}["{_short(layer)}/"]')
    for layer, targets in edges.items():
        for target in sorted(targets, key=list(edges).index):
            if not any(target in reach(other) for other in targets if other != target):
                lines.append(f"  {_short(layer).replace('/', '_')} --> {_short(target).replace('/', '_')}")
    lines.append("```")
    return "\n".join(lines)


def diagram_in_docs() -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    found = re.search(re.escape(DIAGRAM_START) + r"\n(.*?)\n" + re.escape(DIAGRAM_END), text, re.S)
    return found.group(1) if found else ""


def write_diagram(diagram: str) -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = f"{DIAGRAM_START}\n{diagram}\n{DIAGRAM_END}"
    pattern = re.escape(DIAGRAM_START) + r".*?" + re.escape(DIAGRAM_END)
    if not re.search(pattern, text, re.S):
        raise SystemExit(f"{ARCHITECTURE}: no {DIAGRAM_START} ... {DIAGRAM_END} markers to write the diagram between")
    ARCHITECTURE.write_text(re.sub(pattern, lambda _: block, text, flags=re.S), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--diagram", action="store_true", help="rewrite the layer diagram in docs/architecture.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="s2sbench-view-") as folder:
        view = make_view(Path(folder))
        if args.diagram:
            write_diagram(mermaid(layer_graph(view)))
            print(f"wrote the layer diagram into {ARCHITECTURE.relative_to(ROOT)}")
            return 0
        result = lint_imports(view)
    print(result.stdout[result.stdout.find("Contracts"):] if result.returncode == 0 else result.stdout, end="")
    print(result.stderr, end="", file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
