"""The errors s2sbench reports to its user, in four kinds, each with its own exit code.

Every error a user can act on is an :class:`S2SBenchError`; the command line prints it in one line without a
traceback (``--debug`` shows one) and exits with its kind's code. Anything else is a bug: it keeps its traceback and
exits 1. The kinds say whose move it is:

====================  ====  =================================================================================
kind                  exit  what is wrong, and what to do
====================  ====  =================================================================================
:class:`ConfigError`     2  a task or voice file, a model argument, a command-line option: fix what you wrote
:class:`DataError`       3  a source file, a build or results folder, a clip: fix or rebuild the data named
:class:`BackendError`    4  a TTS engine, ASR model, model adapter or LLM server failed or cannot load
:class:`EnvironmentFault` 5 the machine: disk full, read-only or missing folder, a missing program, a folder in
                            use by another process; fix the machine (or wait) and run again (it resumes)
====================  ====  =================================================================================

Exit code 1 is a bug, 130 an interrupted command (SIGINT or SIGTERM). The messages name the file, the row and the
field where there is one, and end with what to do. Library code raises the kind's subclass of its module
(``TaskConfigError`` is a ``ConfigError``); the config and data kinds are also ``ValueError`` so code that validates
values keeps working with them.
"""

from __future__ import annotations

import difflib
import errno
from collections.abc import Iterable
from pathlib import Path

INTERRUPTED_EXIT_CODE = 130
BUG_EXIT_CODE = 1


class S2SBenchError(Exception):
    """An error the user can act on: printed in one line, exit code :attr:`exit_code`."""

    kind = "error"
    exit_code = BUG_EXIT_CODE


class ConfigError(S2SBenchError, ValueError):
    """What the user wrote is wrong: a task or voice file, a model argument, a command-line option."""

    kind = "config"
    exit_code = 2


class DataError(S2SBenchError, ValueError):
    """The data the user pointed at is wrong: a source file, a build or results folder, a clip."""

    kind = "data"
    exit_code = 3


class BackendError(S2SBenchError, RuntimeError):
    """A model or service failed: a TTS engine, an ASR model, a model adapter, an LLM server."""

    kind = "backend"
    exit_code = 4


class EnvironmentFault(S2SBenchError):
    """The machine stands in the way: disk full, a read-only or missing folder, a missing program, a busy folder."""

    kind = "environment"
    exit_code = 5


# OSErrors that are the machine's state, never a bug: no space, no permission, read-only, a file in the way, ...
_ENVIRONMENT_ERRNOS = {
    errno.ENOSPC: "free some space (or choose another folder) and run again; it resumes",
    errno.EDQUOT: "free some space (or choose another folder) and run again; it resumes",
    errno.EFBIG: "the file is larger than this machine allows (ulimit -f): raise the limit or choose another folder",
    errno.EROFS: "choose a folder on a file system you can write",
    errno.EACCES: "choose a folder you can write, or fix its permissions",
    errno.EPERM: "choose a folder you can write, or fix its permissions",
    errno.ENOTDIR: "a part of the path is a file, not a folder: choose another path",
    errno.EEXIST: "a file is in the way where a folder is needed: choose another path",
    errno.EISDIR: "it is a folder where a file is needed: choose a file path",
    errno.EMFILE: "raise the limit of open files (ulimit -n) and run again",
    errno.ENAMETOOLONG: "choose a shorter path",
}


def environment_fault(error: OSError) -> EnvironmentFault | None:
    """The :class:`EnvironmentFault` an ``OSError`` stands for (disk full, read-only, no permission, ...), or None
    when it is not one of those (a missing file the code should have checked is a bug, not the machine)."""
    advice = _ENVIRONMENT_ERRNOS.get(error.errno)
    if advice is None:
        return None
    place = f"{error.filename}: " if error.filename is not None else ""
    fault = EnvironmentFault(f"{place}{error.strerror or error}; {advice}")
    fault.__cause__ = error
    return fault


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'speed_wpm'?"`` when ``name`` is close to one of ``known``, else ``""``."""
    close = difflib.get_close_matches(str(name), [str(option) for option in known], n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def unknown_name(what: str, name: str, known: Iterable[str], hint: str = "") -> str:
    """The message for a name that is not among ``known`` (listed in their order): ``unknown voice 'x' (known: a,
    b); did you mean 'a'?``."""
    known = list(dict.fromkeys(known))
    listed = ", ".join(known) if known else "none"
    return f"unknown {what} '{name}' (known: {listed}){did_you_mean(name, known)}{hint}"


def where(path: str | Path | None, row: int | None = None, field: str | None = None) -> str:
    """``file:row: field 'x'`` as far as it is known, the prefix of a message that names its place."""
    parts = []
    if path is not None:
        parts.append(f"{path}:{row}" if row is not None else str(path))
    if field:
        parts.append(f"field '{field}'")
    return ": ".join(parts)
