"""Story Cloze Test: the CSVs of spring 2016 (val/test, with ``InputStoryid``) and winter 2018 (without it), and the
snake_case columns of the hub's ``story_cloze`` / ``xstory_cloze`` datasets.

Each story becomes an item: context = the four sentences, candidates = the two endings in file order, right = the
``AnswerRightEnding`` (1 or 2) minus one. Ids are ``<task>-<story id>``, or ``<task>-L<line>`` without a story id.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from s2sbench.pipeline.records import Item
from s2sbench.pipeline.sources.rows import (
    DroppedRow,
    Row,
    RowPolicy,
    join_sentences,
    read_hub,
    read_table,
    require_columns,
    source_path,
    text_cell,
)
from s2sbench.pipeline.tasks import TaskConfig

# The two column dialects: the original CSV (CamelCase) and the hub datasets (snake_case).
ORIGINAL = {
    "id": "InputStoryid",
    "sentences": ["InputSentence1", "InputSentence2", "InputSentence3", "InputSentence4"],
    "endings": ["RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2"],
    "right": "AnswerRightEnding",
}
HUB = {
    "id": "story_id",
    "sentences": ["input_sentence_1", "input_sentence_2", "input_sentence_3", "input_sentence_4"],
    "endings": ["sentence_quiz1", "sentence_quiz2"],
    "right": "answer_right_ending",
}


def load_storycloze(task: TaskConfig) -> Iterator[Item | DroppedRow]:
    if task.source.hub_id:
        rows = read_hub(task.source.hub_id, task.source.split, task.source.options)
    else:
        rows = read_table(source_path(task, "storycloze"), task.source.options)
    return story_items(task, rows)


def story_items(task: TaskConfig, rows: Iterable[Row]) -> Iterator[Item | DroppedRow]:
    """Items from Story Cloze rows of either dialect (shared with the XStoryCloze loader)."""
    policy = RowPolicy(task)
    columns = None
    for row in rows:
        if columns is None:
            columns = HUB if HUB["right"] in row.values else ORIGINAL
            require_columns(row, columns["sentences"] + columns["endings"] + [columns["right"]])
        yield _story(task, policy, row, columns)


def _story(task: TaskConfig, policy: RowPolicy, row: Row, columns: dict) -> Item | DroppedRow:
    texts = {}
    for column in columns["sentences"] + columns["endings"]:
        text = text_cell(row, column)
        if text is None:
            return policy.bad(row, column, "empty sentence")
        texts[column] = text
    label = text_cell(row, columns["right"])
    if label not in {"1", "2"}:
        return policy.bad(row, columns["right"], f"answer label {label!r} is not 1 or 2")
    story_id = text_cell(row, columns["id"])
    sentences = [texts[column] for column in columns["sentences"]]
    record = {
        "id": f"{task.name}-{story_id}" if story_id else f"{task.name}-L{row.line}",
        "task": task.name,
        "language": task.language,
        "context": join_sentences(sentences, task.language),
        "candidates": [texts[column] for column in columns["endings"]],
        "right": int(label) - 1,
        "source": {"file": row.file, "row": row.line},
        "meta": {"story_id": story_id, "sentences": sentences},
    }
    return policy.item(row, record, columns["id"] if story_id else "<row>")
