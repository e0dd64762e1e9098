"""CMMLU: one CSV per subject (``,Question,A,B,C,D,Answer``), in a ``dev`` and a ``test`` folder.

``source.path`` is the data folder holding ``dev/`` and ``test/`` with ``source.split`` choosing one, or a split
folder itself (whose name must then match ``source.split`` when one is set); ``source.options.subjects`` keeps a subset. ``source.hub_id`` reads a hub copy
(``haonan-li/cmmlu``, one config per subject; ``subjects`` is then required). Each question becomes an item with
context = the question, candidates = the options in A-D order and right = the answer's index; the rewriting into
statements is a candidate-construction step (``scmmlu_rewrite``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.items.sources.rows import (DroppedRow, ReadOptions, Row, RowPolicy, read_delimited, read_hub,
                                            require_columns, source_path, takes_options, text_cell, text_cells)
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError

LETTERS = ("A", "B", "C", "D")


class CmmluOptions(ReadOptions):
    subjects: list[str] | None = None  # only these subjects (file names without .csv; required for a hub copy)


@takes_options(CmmluOptions)
def load_cmmlu(task: TaskConfig) -> Iterator[Item | DroppedRow]:
    subjects = task.source.options.get("subjects")
    policy = RowPolicy(task)
    for subject, rows in _subject_rows(task, subjects):
        first = True
        for row in rows:
            if first:
                require_columns(row, ["Question", *LETTERS, "Answer"])
                first = False
            yield _question(task, policy, subject, row)


def _subject_rows(task: TaskConfig, subjects: list[str] | None) -> Iterator[tuple[str, Iterable[Row]]]:
    options = task.source.options
    if task.source.hub_id:
        if not subjects:
            raise TaskConfigError(f"{task.path}: key 'source.options.subjects': reading the hub needs a subject list")
        for subject in subjects:
            yield subject, read_hub(task.source.hub_id, task.source.split or "test", {**options, "config": subject})
        return
    folder = source_path(task, "cmmlu", reads="folder")
    split = task.source.split
    if split and (folder / split).is_dir():
        folder = folder / split
    elif split and folder.is_dir() and folder.name != split:
        # reading dev/ when the task asks for test would silently build the wrong split
        raise TaskConfigError(
            f"{task.path}: key 'source.split': '{split}', but {folder} has no {split}/ folder and is not named "
            f"{split}; point source.path at the {split} folder or change source.split (--split)"
        )
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else [folder]
    if not files:
        raise TaskConfigError(f"{task.path}: key 'source.path': no subject CSV files in {folder}")
    by_subject = {path.stem: path for path in files}
    for subject in subjects or sorted(by_subject):
        if subject not in by_subject:
            raise TaskConfigError(
                f"{task.path}: key 'source.options.subjects': no {subject}.csv in {folder} "
                f"(known: {', '.join(sorted(by_subject))})"
            )
        yield subject, read_delimited(by_subject[subject], ",", options.get("encoding", "utf-8-sig"))


def _question(task: TaskConfig, policy: RowPolicy, subject: str, row: Row) -> Item | DroppedRow:
    question = text_cell(row, "Question")
    if question is None:
        return policy.bad(row, "Question", "empty question")
    options = text_cells(policy, row, LETTERS, "empty option")
    if isinstance(options, DroppedRow):
        return options
    answer = text_cell(row, "Answer")
    if answer not in LETTERS:
        return policy.bad(row, "Answer", f"answer {answer!r} is not one of {', '.join(LETTERS)}")
    number = text_cell(row, "") or text_cell(row, "Unnamed: 0") or f"L{row.line}"
    return policy.item(
        row,
        "<row>",
        id=f"{task.name}-{subject}-{number}",
        context=question,
        candidates=options,
        right=LETTERS.index(answer),
        meta={"subject": subject, "question": question, "options": options, "answer": answer},
    )
