"""Layers that read one way. Sources: task config -> loaders -> candidate builders -> items, with the task registry
on top, so a reader finds where an item is made by going down and a new loader is one more file, not one more tie.
The gate: pipeline/verify.py is the one home of how a clip is checked; re-verifying a build (pipeline/reverify.py)
uses it and is never used by it. Every import in these modules (at the top or inside a function) is checked."""

from __future__ import annotations

import ast
from pathlib import Path

import s2sbench.pipeline

PIPELINE = Path(s2sbench.pipeline.__file__).parent
# module (relative to pipeline/) -> the layer modules it must not import
BELOW = {
    "task_config.py": ("sources", "candidates", "rewrite", "items", "tasks"),
    "sources": ("candidates", "rewrite", "items", "tasks"),
    "candidates.py": ("items", "tasks"),
    "rewrite": ("candidates", "items", "tasks"),
    "items.py": ("tasks",),
    "verify.py": ("reverify",),
}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_layers_import_one_way():
    wrong = []
    for where, forbidden in BELOW.items():
        files = sorted((PIPELINE / where).rglob("*.py")) if (PIPELINE / where).is_dir() else [PIPELINE / where]
        assert files and all(file.exists() for file in files), where
        for file in files:
            for name in _imports(file):
                if any(name == f"s2sbench.pipeline.{layer}" or name.startswith(f"s2sbench.pipeline.{layer}.")
                       for layer in forbidden):  # fmt: skip
                    wrong.append(f"{file.relative_to(PIPELINE)} imports {name}")
    assert not wrong, "\n".join(wrong)
