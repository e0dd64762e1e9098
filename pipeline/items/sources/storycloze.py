"""Story Cloze Test: the CSVs of spring 2016 (val/test, with ``InputStoryid``) and winter 2018 (without it), and the
snake_case columns of the hub's ``story_cloze`` / ``xstory_cloze`` datasets.

Each story becomes an item: context = the four sentences, candidates = the two endings in file order, right = the
``AnswerRightEnding`` (1 or 2) minus one. Ids are ``<task>-<story id>``, or ``<task>-L<line>`` without a story id.
``source.path`` is one file, or a folder whose CSV/TSV files (in name order) form one set: the original sStoryCloze
is the spring 2016 val and test files together (3,742 stories).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.items.sources.rows import (DroppedRow, ReadOptions, Row, RowPolicy, join_sentences, read_hub,
                                            read_table, require_columns, source_path, takes_options, text_cell)
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError

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


@takes_options(ReadOptions)
def load_storycloze(task: TaskConfig) -> Iterator[Item | DroppedRow]:
    if task.source.hub_id:
        return story_items(task, read_hub(task.source.hub_id, task.source.split, task.source.options))
    path = source_path(task, "storycloze")
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in {".csv", ".tsv"}) if path.is_dir() else [path]
    if not files:
        raise TaskConfigError(f"{task.path}: key 'source.path': no .csv or .tsv files in {path}")
    return story_items(task, (row for file in files for row in read_table(file, task.source.options)))


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
    return policy.item(
        row,
        columns["id"] if story_id else "<row>",
        id=f"{task.name}-{story_id}" if story_id else f"{task.name}-L{row.line}",
        context=join_sentences(sentences, task.language),
        candidates=[texts[column] for column in columns["endings"]],
        right=int(label) - 1,
        meta={"story_id": story_id, "sentences": sentences},
    )
