"""The bad-input suite: each case runs one command as a new user would, and checks its exit code, its one-line
message (no traceback) and that nothing outside its --out changed.

Every case works in its own folder (:class:`World`): the inputs it writes, a clip store and the current directory
all live there, so anything a command writes where it should not shows up in the folder's snapshot. The session's
small real build is shared read-only; a case that damages a build works on a copy.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from s2sbench.flows.cli import main

STORIES = [
    {"id": "s1", "context": "Tom put the kettle on. Soon the water boiled.", "candidates": ["He made tea.", "He swam."], "right": 0},
    {"id": "s2", "context": "It snowed all night. The roads were white.", "candidates": ["Kids swam.", "Kids built a snowman."], "right": 1},
]


def snapshot(*roots: Path, skip: Path | None = None) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``roots`` (except under ``skip``) with its size and modification time. A build
    folder's ``.lock`` is left out: a command that reads a build holds its lock (and notes its pid there)."""
    found = {}
    for root in roots:
        for path in [root, *root.rglob("*")] if root.exists() else []:
            if (skip is not None and (path == skip or skip in path.parents)) or path.name == ".lock":
                continue
            stat = path.lstat()
            found[str(path)] = (stat.st_size if path.is_file() else -1, stat.st_mtime_ns if path.is_file() else 0)
    return found


@dataclass
class Outcome:
    code: int
    err: str
    out: str


class World:
    """A case's folder: its inputs, ``out`` (the only place the command may write) and a clip store."""

    def __init__(self, root: Path, build, monkeypatch):
        self.root = root
        self.monkeypatch = monkeypatch
        self.out = root / "out"
        self.store = root / "store"
        self.real_build = build
        self._task_count = 0

    def source(self, name: str = "stories.jsonl", rows: list | None = None, text: str | bytes | None = None) -> Path:
        path = self.root / name
        if text is None:
            text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in (STORIES if rows is None else rows))
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return path

    def task(self, text: str | None = None, /, **overrides) -> Path:
        """A task file: ``text`` as given, else a valid English task over :data:`STORIES` with ``overrides``
        (a value of None removes the key)."""
        self._task_count += 1
        path = self.root / f"task{self._task_count}.yaml"
        if text is None:
            source = self.root / "stories.jsonl"
            if not source.exists():
                self.source()
            config = {"name": "t", "language": "en", "source": {"loader": "jsonl", "path": str(source)},
                      "voices": ["espeak-en-us"], "gate": {"asr": {"engine": "faster-whisper", "model": "tiny.en"}}}
            config.update(overrides)
            text = json.dumps({key: value for key, value in config.items() if value is not None}, ensure_ascii=False)
        path.write_text(text, encoding="utf-8")
        return path

    def voices(self, text: str) -> Path:
        """A voice file added to the shipped ones (``$S2SBENCH_VOICES``)."""
        path = self.root / "voices.yaml"
        path.write_text(text, encoding="utf-8")
        self.monkeypatch.setenv("S2SBENCH_VOICES", str(path))
        return path

    def build_copy(self, as_out: bool = False) -> Path:
        """A copy of the session's real build (with its own clip store) that a case may damage; ``as_out`` puts it
        in ``out``, for a command that writes the build itself."""
        copy = (self.out if as_out else self.root) / "build"
        if not copy.exists():
            shutil.copytree(self.real_build.root, copy)
            shutil.copytree(self.real_build.store, self.store, dirs_exist_ok=True)
        return copy

    def untouched(self) -> dict[str, tuple[int, int]]:
        """What the command must not change: this folder outside ``out``, and the shared real build."""
        return snapshot(self.root, self.real_build.root, self.real_build.store, skip=self.out)

    def run(self, *argv: object) -> Outcome:
        """``s2sbench ARGV`` in this process; fails the case if anything outside ``out`` changed."""
        before = self.untouched()
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main([str(arg) for arg in argv])
        assert self.untouched() == before, f"s2sbench {argv[0]} changed something outside --out: {err.getvalue()[-1000:]}"
        return Outcome(code, err.getvalue(), out.getvalue())


@pytest.fixture
def world(tmp_path, real_build, monkeypatch) -> World:
    """A :class:`World` that is also the current folder and the default clip store."""
    root = tmp_path / "world"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("S2SBENCH_CLIP_STORE", str(root / "store"))
    monkeypatch.delenv("S2SBENCH_VOICES", raising=False)
    return World(root, real_build, monkeypatch)


def expect(outcome: Outcome, code: int, message: str) -> None:
    """The command failed with ``code`` and one line matching ``message``, no traceback."""
    import re

    assert outcome.code == code, f"exit {outcome.code}, expected {code}: {outcome.err[-2000:]}"
    assert re.search(message, outcome.err), f"{message!r} not in: {outcome.err[-2000:]}"
    assert "Traceback" not in outcome.err, outcome.err[-3000:]
