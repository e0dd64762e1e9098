"""XStoryCloze: the spring 2016 validation stories professionally translated into ten languages (plus English).

``source.path`` is the folder of the release's TSV files (``spring2016.val.<lang>.tsv.split_20_80_<split>.tsv``) or
one such file; ``source.hub_id`` a hub copy (e.g. ``juletxara/xstory_cloze``, config = language). ``source.split`` is
``eval`` (1,511 stories) or ``train`` (360); ``source.options.language`` defaults to the task's language.
"""

from __future__ import annotations

from collections.abc import Iterator

from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.items.sources.rows import DroppedRow, ReadOptions, read_hub, read_table, source_path, takes_options
from s2sbench.pipeline.items.sources.storycloze import story_items
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError

LANGUAGES = ("en", "ru", "zh", "es", "ar", "hi", "id", "te", "sw", "eu", "my")
SPLITS = ("eval", "train")


def release_file_name(language: str, split: str) -> str:
    return f"spring2016.val.{language}.tsv.split_20_80_{split}.tsv"


class XStoryClozeOptions(ReadOptions):
    language: str | None = None  # the release's language (default: the task's)


@takes_options(XStoryClozeOptions)
def load_xstorycloze(task: TaskConfig) -> Iterator[Item | DroppedRow]:
    language = task.source.options.get("language", task.language)
    split = task.source.split or "eval"
    if language not in LANGUAGES:
        raise TaskConfigError(
            f"{task.path}: key 'source.options.language': unknown XStoryCloze language '{language}' "
            f"(known: {', '.join(LANGUAGES)})"
        )
    if split not in SPLITS:
        raise TaskConfigError(f"{task.path}: key 'source.split': unknown split '{split}' (known: {', '.join(SPLITS)})")
    if task.source.hub_id:
        options = {"config": language, **task.source.options}
        options.pop("language", None)
        return story_items(task, read_hub(task.source.hub_id, split, options))
    path = source_path(task, "xstorycloze")
    if path.is_dir():
        path = path / release_file_name(language, split)
        if not path.exists():
            raise TaskConfigError(f"{task.path}: key 'source.path': no {path.name} in {path.parent}")
    return story_items(task, read_table(path, {"delimiter": "\t", **task.source.options}))
