"""The inputs of a build, recorded so that a resume can tell whether it would mix two builds.

A build resumes by skipping what its folder already holds, which is only right for the same inputs: the source
files (by content hash), each task's settings, each voice's settings, ``--limit``, ``--shard-size`` and ``--seed``.
:meth:`BuildInputs.differences` says, in words, what changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from s2sbench.pipeline.core.manifest import sha256_file
from s2sbench.pipeline.core.records import Record, safe_component
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError

#: command-line names of the build options, for the messages
OPTION_NAMES = {"limit": "--limit", "shard_size": "--shard-size", "seed": "--seed"}
MAX_CHANGES_SHOWN = 8


class SourceFingerprint(Record):
    """Where a task's items come from: local files by content hash (a folder: every file in it), or a hub id."""

    location: str
    files: dict[str, str]  # path relative to ``location`` ("" for a single file) -> sha256


class TaskInputs(Record):
    config: dict[str, Any]  # the task's settings as loaded
    source: SourceFingerprint
    voices: dict[str, dict[str, Any]]  # voice id -> its settings


class BuildInputs(Record):
    tasks: dict[str, TaskInputs]
    limit: int | None
    shard_size: int
    seed: int

    def differences(self, other: "BuildInputs") -> list[str]:
        """What changed from ``self`` (the recorded inputs) to ``other``, one line each (the first few)."""
        changes: list[str] = []
        _compare(self.model_dump(mode="json"), other.model_dump(mode="json"), [], changes)
        shown = changes[:MAX_CHANGES_SHOWN]
        if len(changes) > MAX_CHANGES_SHOWN:
            shown.append(f"... and {len(changes) - MAX_CHANGES_SHOWN} more")
        return shown


def _name(path: list[str]) -> str:
    if len(path) == 1 and path[0] in OPTION_NAMES:
        return OPTION_NAMES[path[0]]
    if len(path) >= 2 and path[0] == "tasks":
        rest = path[2:]
        if rest[:1] == ["source"] and rest[1:2] == ["files"]:
            return f"task {path[1]}: source file {'/'.join(rest[2:]) or '(the file)'}"
        if rest[:1] == ["voices"]:
            return f"task {path[1]}: voice {'.'.join(rest[1:])}"
        return f"task {path[1]}: {'.'.join(rest) or 'the task'}"
    return ".".join(path)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _compare(old: object, new: object, path: list[str], changes: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys(), key=str):
            if key not in new:
                changes.append(f"{_name(path + [str(key)])}: no longer given (was {_short(old[key])})")
            elif key not in old:
                changes.append(f"{_name(path + [str(key)])}: new ({_short(new[key])})")
            else:
                _compare(old[key], new[key], path + [str(key)], changes)
    elif old != new:
        changes.append(f"{_name(path)}: {_short(old)} -> {_short(new)}")


def source_fingerprint(task: TaskConfig) -> SourceFingerprint:
    """The task's source by content: a file's hash, or every file of a folder (a hub dataset: its id and split)."""
    from s2sbench.pipeline.items.sources import get_loader
    from s2sbench.pipeline.items.sources.rows import source_path

    if task.source.path is None:
        return SourceFingerprint(location=f"hub:{task.source.hub_id}@{task.source.split or ''}", files={})
    path = source_path(task, task.source.loader)  # a missing source is reported now, before a build starts
    reads = getattr(get_loader(task.source.loader), "source_files", None)
    if reads is not None:
        return SourceFingerprint(location=str(path), files={str(file): sha256_file(file) for file in reads(task)})
    if path.is_file():
        return SourceFingerprint(location=str(path), files={"": sha256_file(path)})
    files = sorted(p for p in Path(path).rglob("*") if p.is_file()) if path.is_dir() else []
    return SourceFingerprint(location=str(path), files={p.relative_to(path).as_posix(): sha256_file(p) for p in files})


def build_inputs(tasks: list[TaskConfig], limit: int | None, shard_size: int, seed: int) -> BuildInputs:
    """The inputs of a build of ``tasks``; task names and voice ids are checked as safe folder names first."""
    from s2sbench.pipeline.catalog.voices import get_voice

    entries = {}
    for task in tasks:
        where = f"task file {task.path}" if task.path else f"task '{task.name}'"
        safe_component(task.name, f"{where}: field 'name'")
        for voice in task.voices:
            safe_component(voice, f"{where}: field 'voices'")
        if task.name in entries:
            raise TaskConfigError(f"{where}: task '{task.name}' is given twice")
        entries[task.name] = TaskInputs(
            # conditions are made from the kept clips after the rows: adding one resumes the build, it does not redo it
            config=task.model_dump(mode="json", exclude={"conditions"}), source=source_fingerprint(task),
            voices={voice: get_voice(voice, where=f"{where}: field 'voices'").model_dump(mode="json")
                    for voice in task.voices},
        )  # fmt: skip
    return BuildInputs(tasks=entries, limit=limit, shard_size=shard_size, seed=seed)
