"""A task's items: its loader reads the source, its candidate builder makes the benchmark's candidates, and every
row that does not become an item is kept as a drop with its reason. This is the top of the sources layer (task
config -> loaders -> candidate builders -> items); ``s2sbench items`` and the build's first stage call it.
"""

from __future__ import annotations

from s2sbench.pipeline.core.records import Drop, Item, Role
from s2sbench.pipeline.items.candidates import get_builder
from s2sbench.pipeline.items.sources import LoadResult, get_loader
from s2sbench.pipeline.items.sources.rows import DroppedRow
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.text.normalize import normalize_for_tts


def load_task_items(task: TaskConfig, limit: int | None = None) -> LoadResult:
    """The items of a task, in source order, after candidate construction, cut to ``limit`` kept items (or the
    task's ``limit``), with the dropped rows and the builder's counts (who handled how many, why the rest failed).

    An item with a text longer than the task's ``max_text_chars`` is dropped (``text_too_long``) before any builder
    or engine sees it. See :meth:`LoadResult.require_items` for a source that leaves no item to keep."""
    builder = get_builder(task)
    cap = limit if limit is not None else task.limit
    loaded = [too_long(entry, task) or entry if isinstance(entry, Item) else entry
              for entry in get_loader(task.source.loader)(task)]  # fmt: skip
    builder.prepare([entry for entry in loaded if isinstance(entry, Item)])
    items: list[Item] = []
    drops: list[Drop] = []
    rows_in = 0
    for entry in loaded:
        if cap is not None and len(items) >= cap:
            break
        rows_in += 1
        result = builder.build(entry) if isinstance(entry, Item) else entry
        if isinstance(result, Item):
            result = too_long(result, task) or result
        if isinstance(result, Item):
            items.append(with_spoken_texts(result, task))
        else:
            drops.append(result.to_drop(task.name))
    return LoadResult(task.name, items, drops, rows_in, builder.report(), task)


def too_long(item: Item, task: TaskConfig) -> DroppedRow | None:
    """The drop of an item whose context or a candidate is longer than ``task.max_text_chars``, else None."""
    texts = {"context": item.context, **{f"candidates.{index}": text for index, text in enumerate(item.candidates)}}
    for field_name, text in texts.items():
        if len(text) > task.max_text_chars:
            return DroppedRow(item.source.file, item.source.row, field_name,
                              f"{len(text)} characters, more than max_text_chars {task.max_text_chars}", "load",
                              item.id, code="text_too_long")  # fmt: skip
    return None


def load_items(task: TaskConfig, limit: int | None = None) -> list[Item]:
    """The kept items of a task (see :func:`load_task_items` for the drops and counts)."""
    return load_task_items(task, limit).items


def texts_to_speak(item: Item, task: TaskConfig) -> dict[Role, str]:
    """Role -> text for the roles the task speaks."""
    texts: dict[Role, str] = {}
    if "context" in task.speak:
        texts[Role.context()] = item.context
    if "candidates" in task.speak:
        for index, candidate in enumerate(item.candidates):
            texts[Role.of_candidate(index)] = candidate
    return texts


def spoken_chars(item: Item, task: TaskConfig) -> int:
    """The characters of the texts the task speaks for ``item``: what a row's measured cost and a build's plan scale
    by."""
    return sum(map(len, texts_to_speak(item, task).values()))


def with_spoken_texts(item: Item, task: TaskConfig) -> Item:
    """``item`` with the texts its task speaks as a voice reads them (:func:`normalize_for_tts` in the task's
    language): what ``items.jsonl`` and ``s2sbench items`` show beside the text itself."""
    spoken = {role: normalize_for_tts(text, task.language) for role, text in texts_to_speak(item, task).items()}
    return item.model_copy(update={"spoken": spoken})
