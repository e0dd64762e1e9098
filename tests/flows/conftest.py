"""A small real task for the flow tests: four English stories spoken by Piper and checked by Whisper tiny.en."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

STORIES = [
    ("The kettle began to whistle in the kitchen. Tom poured the hot water into a cup.", "He made himself a cup of tea.", "He planted a tree on the roof."),
    ("It was snowing hard all morning. The children put on their boots and gloves.", "They went outside to build a snowman.", "They went swimming in the warm sea."),
    ("Rosa lost her keys on the way home. She searched every pocket of her coat.", "She called her brother to let her in.", "She bought a new piano for the garden."),
    ("The library was about to close. Jack still had three books to return.", "He ran to the desk and handed them in.", "He turned the books into a small boat."),
]


@pytest.fixture
def story_task(tmp_path: Path) -> Path:
    """A task file (and its items) in ``tmp_path``; returns the YAML path."""
    items = tmp_path / "stories.jsonl"
    with open(items, "w", encoding="utf-8") as handle:
        for number, (context, right, wrong) in enumerate(STORIES, start=1):
            candidates = [right, wrong] if number % 2 else [wrong, right]
            row = {"id": f"s{number}", "context": context, "candidates": candidates, "right": candidates.index(right)}
            handle.write(json.dumps(row) + "\n")
    task = tmp_path / "flow-test-stories.yaml"
    task.write_text(
        f"""name: flow-test-stories
language: en
source: {{loader: jsonl, path: {items}}}
scoring: pairwise_strict
voices: [piper-en-joe]
speak: [context, candidates]
gate: {{metric: wer, max_error_rate: 0.25, max_attempts: 2, asr: {{engine: faster-whisper, model: tiny.en}}}}
""",
        encoding="utf-8",
    )
    return task
