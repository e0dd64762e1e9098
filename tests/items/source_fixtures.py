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


def _jsonl(path: Path, rows: list[dict]) -> Path:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def release_story_rows(stories: list[tuple[str, str, str]], first_id: int = 0) -> list[dict]:
    """Rows of a story set in the published S2SBench layout: (context, right ending, wrong ending) -> two rows each,
    consecutive uttids, the lower one right. Written wrong row first, as a file need not be sorted."""
    rows = []
    for n, (context, right, wrong) in enumerate(stories):
        base = first_id + 2 * n
        rows += [{"uttid": f"{base + 1}_s{n}", "first": context, "last": wrong},
                 {"uttid": f"{base}_s{n}", "first": context, "last": right}]
    return rows


def write_release(root: Path, stories_en: list[tuple[str, str, str]], stories_zh: list[tuple[str, str, str]],
                  choices: list[tuple[str, list[str], str]]) -> Path:
    """A folder in the published S2SBench layout (root/S2S/...), its audio left out: the loader reads the JSONL."""
    _jsonl(root / "S2S" / "StoryCloze" / "sStory_s2t.jsonl", release_story_rows(stories_en))
    _jsonl(root / "S2S" / "StoryCloze" / "zh_story.jsonl", release_story_rows(stories_zh))
    _jsonl(root / "S2S" / "cmmlu" / "cmmlu_rewrite_4.jsonl",
           [{"uttid": f"{n}_q{n}", "first": first, **dict(zip("ABCD", options)), "answer": answer}
            for n, (first, options, answer) in enumerate(choices)])  # fmt: skip
    return root
