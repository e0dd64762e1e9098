"""Small fixtures for the source tests: task files and source tables written into a temporary folder."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from s2sbench.pipeline.tasks import TaskConfig, load_task

SPRING_HEADER = ["InputStoryid", "InputSentence1", "InputSentence2", "InputSentence3", "InputSentence4",
                 "RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2", "AnswerRightEnding"]
NAMES = ["Maya", "Owen", "Priya", "Tom", "Lena", "Sam"]


def story_row(index: int, label: int = 1) -> list[str]:
    name = NAMES[index % len(NAMES)]
    return [
        f"story-{index}",
        f"{name} found a box number {index} in the attic.",
        "It was covered in dust.",
        f"{name} opened it carefully.",
        "Inside was an old photograph.",
        f"{name} smiled at the picture of box {index}.",
        f"{name} threw box {index} into the sea.",
        str(label),
    ]


def write_csv(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",", encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding=encoding) as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


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
