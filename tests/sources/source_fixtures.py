"""Helpers for the source tests: Story Cloze rows and CSV writing (imported by the tests and their conftest)."""

from __future__ import annotations

import csv
from pathlib import Path

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
