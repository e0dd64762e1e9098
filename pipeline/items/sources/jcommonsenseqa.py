"""JCommonsenseQA (JGLUE): one JSON object a line (``q_id, question, choice0..choice4, label``), a file per split.

``source.path`` is the folder of the JGLUE release (``datasets/jcommonsenseqa-v1.3``: ``train-v1.3.json``,
``valid-v1.3.json``, ``test-v1.3.json``) or one of its files; ``source.split`` picks ``train``, ``validation`` or
``test``, or several joined by ``+`` (``validation+test``, the Hub's way of naming a union of splits). Each question
becomes an item: context = the question, candidates = the five answers in order, right = ``label``. The file a
question came from is its source file, so an evaluation reports each split apart (results.json's ``by_source``).
"""

from __future__ import annotations

from collections.abc import Iterator

from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.items.sources.rows import (DroppedRow, ReadOptions, Row, RowPolicy, read_jsonl, require_columns,
                                                  source_path, takes_options, text_cell, text_cells)
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError

SPLIT_FILES = {"train": "train", "validation": "valid", "test": "test"}  # split -> the release's file stem
VERSION = "v1.3"
CHOICES = tuple(f"choice{index}" for index in range(5))


class JCommonsenseQAOptions(ReadOptions):
    version: str = VERSION  # the release's file suffix (train-v1.3.json)


@takes_options(JCommonsenseQAOptions)
def load_jcommonsenseqa(task: TaskConfig) -> Iterator[Item | DroppedRow]:
    policy = RowPolicy(task)
    for path in split_files(task):
        first = True
        for row in read_jsonl(path, task.source.options.get("encoding", "utf-8")):
            if first:
                require_columns(row, ["q_id", "question", *CHOICES, "label"])
                first = False
            yield _question(policy, row)


def split_files(task: TaskConfig) -> list:
    """The files of the task's splits, in the order asked."""
    path = source_path(task, "jcommonsenseqa")
    if path.is_file():
        return [path]
    version = task.source.options.get("version", VERSION)
    splits = (task.source.split or "validation").split("+")
    files = []
    for split in splits:
        if split not in SPLIT_FILES:
            raise TaskConfigError(f"{task.path}: key 'source.split': '{split}' is not a JCommonsenseQA split (known: "
                                  f"{', '.join(SPLIT_FILES)}; join several with +)")
        file = path / f"{SPLIT_FILES[split]}-{version}.json"
        if not file.is_file():
            raise TaskConfigError(f"{task.path}: key 'source.path': no {file.name} in {path} (the JGLUE "
                                  f"datasets/jcommonsenseqa-{version} folder)")
        files.append(file)
    return files


def _question(policy: RowPolicy, row: Row) -> Item | DroppedRow:
    question = text_cell(row, "question")
    if question is None:
        return policy.bad(row, "question", "empty question")
    choices = text_cells(policy, row, CHOICES, "empty answer")
    if isinstance(choices, DroppedRow):
        return choices
    label = row.values["label"]
    if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label < len(CHOICES):
        return policy.bad(row, "label", f"{label!r} is not an answer index 0-4")
    return policy.item(row, "q_id", id=str(row.values["q_id"]), context=question, candidates=choices, right=label)
