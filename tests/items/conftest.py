"""Fixtures for the source tests: task files and source tables written into a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.catalog.tasks import load_task
from tests.items.source_fixtures import SPRING_HEADER, story_row, write_csv


@pytest.fixture
def spring_csv(tmp_path: Path) -> Path:
    """A spring-2016-style Story Cloze CSV with six stories, labels alternating 1 and 2."""
    return write_csv(tmp_path / "spring.csv", SPRING_HEADER, [story_row(i, 1 + i % 2) for i in range(6)])


@pytest.fixture
def make_task(tmp_path: Path):
    """Write a task YAML (defaults + overrides) into the temporary folder and load it like a user's file."""

    def make(name: str = "t", **fields) -> TaskConfig:
        raw = {"name": name, "language": "en", "voices": ["piper-en-joe"], **fields}
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
        return load_task(path)

    return make
