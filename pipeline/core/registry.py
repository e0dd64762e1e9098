"""One registry type for everything s2sbench finds by name: TTS engines, ASR engines, model adapters, tasks,
rewriters, candidate builders, source loaders and text normalizers.

A registry maps names to implementations given as ``"module:attribute"`` strings (imported on first use, so listing
names costs no heavy import) or as objects, plus whatever installed packages register under its entry-point group::

    [project.entry-points."s2sbench.tts"]
    my-engine = "my_package.engine:MyEngine"

Built-in names win over entry points of the same name; :meth:`Registry.register` adds a name while the process runs
(a notebook's own engine, a test's planted fault) and wins over both. An unknown name is a :class:`UnknownNameError` (a config
error) that lists the known names and suggests the closest one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from s2sbench.pipeline.core.errors import ConfigError, unknown_name

T = TypeVar("T")

# entry points by group, read once per process (reading them scans every installed package: tens of milliseconds)
_PLUGINS: dict[str, tuple[EntryPoint, ...]] = {}


def _entry_points_of(group: str) -> tuple[EntryPoint, ...]:
    if group not in _PLUGINS:
        _PLUGINS[group] = tuple(entry_points(group=group))
    return _PLUGINS[group]


class UnknownNameError(ConfigError):
    """A name that is not in its registry; the message lists the known names and the closest one."""


def load_target(target: str) -> Any:
    """The object ``"module:attribute"`` names."""
    module_name, _, attribute = target.partition(":")
    value = importlib.import_module(module_name)
    for part in attribute.split(".") if attribute else []:
        value = getattr(value, part)
    return value


class Registry(Generic[T]):
    """Names -> implementations of one kind (``what``: "TTS engine", "loader", ...), see the module docstring.

    ``builtins`` is a mapping, or a function returning one when the names can change while the process runs (the
    task files of a folder). ``group`` is the entry-point group third-party packages register under."""

    def __init__(self, what: str, builtins: Mapping[str, str | T] | Callable[[], Mapping[str, str | T]],
                 group: str | None = None):
        self.what = what
        self.group = group
        self._builtins = builtins
        #: names added by :meth:`register` (a plain dict: tests patch it with ``monkeypatch.setitem``)
        self.added: dict[str, str | T] = {}
        self._loaded: dict[str, T] = {}  # by target (``module:attribute``), so a name registered anew is not stale

    def builtin(self) -> dict[str, str | T]:
        return dict(self._builtins() if callable(self._builtins) else self._builtins)

    def plugins(self) -> dict[str, EntryPoint]:
        """Entry points of installed packages whose names are not built in."""
        if self.group is None:
            return {}
        builtin = self.builtin()
        return {entry.name: entry for entry in _entry_points_of(self.group) if entry.name not in builtin}

    def register(self, name: str, target: str | T) -> None:
        """Add ``name`` for this process: ``target`` is ``"module:attribute"`` or the implementation itself."""
        self.added[name] = target

    def entries(self) -> dict[str, str | T | EntryPoint]:
        return {**self.plugins(), **self.builtin(), **self.added}

    def names(self) -> list[str]:
        return sorted(self.entries())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.entries()

    def target(self, name: str) -> str:
        """Where ``name`` is implemented (``module:attribute``), for listings."""
        entry = self._entry(name)
        return entry.value if isinstance(entry, EntryPoint) else entry if isinstance(entry, str) else repr(entry)

    def check(self, name: str, where: str = "", hint: str = "") -> str:
        """``name`` if it is registered, else :class:`UnknownNameError` (prefixed by ``where``, e.g. a file's key;
        ``hint`` is added at the end)."""
        self._entry(name, where, hint)
        return name

    def get(self, name: str, where: str = "", hint: str = "") -> T:
        """The implementation registered as ``name``, imported on first use (unknown: see :meth:`check`)."""
        entry = self._entry(name, where, hint)
        if not isinstance(entry, (str, EntryPoint)):
            return entry
        target = entry.value if isinstance(entry, EntryPoint) else entry
        if target not in self._loaded:
            self._loaded[target] = entry.load() if isinstance(entry, EntryPoint) else load_target(entry)
        return self._loaded[target]

    def find(self, name: str) -> T | None:
        """:meth:`get` for a name that may be missing (None then)."""
        return self.get(name) if name in self else None

    def _entry(self, name: str, where: str = "", hint: str = "") -> str | T | EntryPoint:
        entries = self.entries()
        if name not in entries:
            prefix = f"{where}: " if where else ""
            raise UnknownNameError(prefix + unknown_name(self.what, name, sorted(entries), hint))
        return entries[name]
