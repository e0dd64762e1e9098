"""The data of an evaluation, where the user has it: a build folder, a Hub dataset, a saved ``datasets`` folder or a
``datasets`` object, all read as the same parts (one config's split each) with a build's columns.

- a **build folder** (``s2sbench build --out DIR``): its ``dataset/`` configs, and its build report for the tasks'
  settings;
- a **Hub dataset** ``ORG/NAME[@REVISION]`` (at ``HF_ENDPOINT``): the configs its card declares, each loaded with
  ``datasets.load_dataset``, and its ``build_report.json`` when it has one;
- a **folder**: a build's ``dataset/`` or a Hub repo's files (a card declaring configs), a ``DatasetDict`` or a
  ``Dataset`` saved with ``save_to_disk``;
- a ``datasets.Dataset``, ``DatasetDict`` or a mapping of names to ``Dataset``.

A Hub config named ``<task>`` or ``<task>--<voice>`` (what s2sbench publishes) that the selection leaves out is
not downloaded. Each part's columns are checked against a build's before anything is scored.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from s2sbench.pipeline.buildfolder.build_report import BuildReport
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.buildfolder.configs import CARD_FILE, ConfigEntry, ConfigIndexError, read_card_index, read_index
from s2sbench.pipeline.buildfolder.dataset import check_features
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import DocumentError, parse_versioned, read_json, sha256_file

log = logging.getLogger(__name__)

HUB_ID = re.compile(r"(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:@(?P<revision>[\w.\-/]+))?")
REPORT_FILE = "build_report.json"


class DatasetSourceError(ConfigError):
    """A dataset argument (``--dataset``, ``--tasks``, ``--voices``) that names nothing s2sbench can read; the message
    says what was tried."""


@dataclass(frozen=True)
class Part:
    """One config's split of the data (or one split of a saved DatasetDict)."""

    where: str  # for messages: the folder or repo, the config and the split
    config: str
    split: str
    rows: Any  # datasets.Dataset


@dataclass(frozen=True)
class EvalDataset:
    kind: Literal["build", "hub", "folder", "object"]
    location: str  # the folder, or the Hub repo id
    revision: str | None  # the Hub commit the data was read at
    parts: tuple[Part, ...]
    report: BuildReport | None = None  # the build's report: the settings of its tasks
    report_sha256: str | None = None


def config_is_selected(name: str, tasks: Sequence[str], voices: Sequence[str]) -> bool:
    """Whether a config named the way s2sbench names them (``<task>``, ``<task>-<condition>``, either with
    ``--<voice>``) can hold selected rows."""
    head, _, voice = name.partition("--")
    task_ok = not tasks or any(head == task or head.startswith(f"{task}-") for task in tasks)
    return task_ok and (not voice or not voices or voice in voices)


def _selected(index: list[ConfigEntry], tasks: Sequence[str], voices: Sequence[str], where: str) -> list[ConfigEntry]:
    chosen = [entry for entry in index if config_is_selected(entry.name, tasks, voices)]
    if not chosen:
        wanted = ", ".join([*(f"task '{t}'" for t in tasks), *(f"voice '{v}'" for v in voices)])
        raise DatasetSourceError(f"{where}: no config holds {wanted} (its configs: {', '.join(e.name for e in index)})")
    return chosen


def _checked(where: str, config: str, split: str, rows) -> Part:
    check_features(rows, where)
    return Part(where, config, split, rows)


def _read_report(path: Path) -> BuildReport | None:
    try:
        return parse_versioned(BuildReport, read_json(path), path)
    except DocumentError as error:
        log.warning("%s; the tasks' settings come from the task registry instead", error)
        return None


def open_build(build: BuildDir, split: str | None) -> EvalDataset:
    report_path = build.report_path
    parts = []
    index = {entry.name: entry for entry in build.dataset_index()}
    for name, splits in build.load_dataset().items():
        chosen = index[name].split(split, str(build.dataset_dir)).name
        parts.append(Part(f"{build.dataset_dir} config '{name}' split '{chosen}'", name, chosen, splits[chosen]))
    if not report_path.is_file():
        return EvalDataset("build", str(build.root), None, tuple(parts))
    return EvalDataset("build", str(build.root), None, tuple(parts), build.read_report(), sha256_file(report_path))


def _open_indexed_folder(folder: Path, split: str | None) -> list[Part]:
    """A folder whose card declares configs: each saved with ``save_to_disk`` (a build's ``dataset/``) or as data
    files ``datasets`` loads (a Hub repo's files)."""
    import datasets

    parts = []
    for entry in read_card_index(folder):
        chosen = entry.split(split, str(folder / CARD_FILE)).name
        where = f"{folder} config '{entry.name}' split '{chosen}'"
        saved = folder / entry.name
        if (saved / "dataset_dict.json").is_file():
            rows = datasets.load_from_disk(str(saved))[chosen]
        else:
            rows = datasets.load_dataset(str(folder), entry.name, split=chosen)
        parts.append(_checked(where, entry.name, chosen, rows))
    return parts


def open_folder(folder: Path, split: str | None) -> EvalDataset:
    import datasets

    build = BuildDir(folder)
    if any(path.is_file() for path in (build.report_path, build.state_path, build.dataset_dir / CARD_FILE,
                                       build.dataset_dir / "dataset_dict.json")):  # fmt: skip
        return open_build(build, split)
    if (folder / CARD_FILE).is_file():
        parts = _open_indexed_folder(folder, split)
        report = _read_report(folder / REPORT_FILE) if (folder / REPORT_FILE).is_file() else None
        sha = sha256_file(folder / REPORT_FILE) if report is not None else None
        return EvalDataset("folder", str(folder), None, tuple(parts), report, sha)
    if (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file():
        return open_object(datasets.load_from_disk(str(folder)), str(folder), kind="folder")
    raise DatasetSourceError(f"{folder}: not a build folder, a dataset folder with a {CARD_FILE} declaring configs, or a "
                             "folder saved with `datasets` save_to_disk")  # fmt: skip


def open_object(dataset: Any, location: str = "<datasets object>", kind: Literal["folder", "object"] = "object") -> EvalDataset:
    """A ``Dataset`` (one part), or a ``DatasetDict`` / mapping of ``Dataset`` (a part per split)."""
    import datasets

    if isinstance(dataset, datasets.Dataset):
        named = {dataset.split and str(dataset.split) or "test": dataset}
    elif isinstance(dataset, Mapping) and all(isinstance(value, datasets.Dataset) for value in dataset.values()):
        named = dict(dataset)
    else:
        raise DatasetSourceError(f"{location}: expected a datasets.Dataset or DatasetDict, got {type(dataset).__name__}")
    parts = tuple(_checked(f"{location} split '{name}'", name, name, rows) for name, rows in named.items())
    return EvalDataset(kind, location, None, parts)


def open_hub(repo_id: str, revision: str | None, split: str | None, tasks: Sequence[str] = (),
             voices: Sequence[str] = ()) -> EvalDataset:  # fmt: skip
    """A dataset on the Hub at ``HF_ENDPOINT``, read at ``revision`` (a branch, tag or commit; default ``main``)."""
    import datasets
    from huggingface_hub import DatasetCard, HfApi, hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    where = f"{repo_id}@{revision or 'main'}"
    try:
        commit = HfApi().dataset_info(repo_id, revision=revision).sha
        card = DatasetCard.load(hf_hub_download(repo_id, CARD_FILE, repo_type="dataset", revision=commit))
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as error:
        raise DatasetSourceError(f"--dataset {where}: {type(error).__name__}: no such dataset, revision or card") from None
    except (HfHubHTTPError, OSError) as error:
        raise DatasetSourceError(f"--dataset {where}: the Hub could not be read ({type(error).__name__}: {error})") from None
    try:
        index = read_index(card.data, f"{where} {CARD_FILE}")
    except ConfigIndexError as error:
        raise DatasetSourceError(str(error)) from None
    try:
        report_path = Path(hf_hub_download(repo_id, REPORT_FILE, repo_type="dataset", revision=commit))
    except EntryNotFoundError:
        report, report_sha = None, None
    else:
        report = _read_report(report_path)
        report_sha = sha256_file(report_path) if report is not None else None
    parts = []
    for entry in _selected(index, tasks, voices, f"{where} {CARD_FILE}"):
        chosen = entry.split(split, f"{where} {CARD_FILE}").name
        rows = datasets.load_dataset(repo_id, entry.name, split=chosen, revision=commit)
        parts.append(_checked(f"{where} config '{entry.name}' split '{chosen}'", entry.name, chosen, rows))
    return EvalDataset("hub", repo_id, commit, tuple(parts), report, report_sha)


def open_dataset(dataset: Any, *, split: str | None = None, tasks: Sequence[str] = (), voices: Sequence[str] = ()) -> EvalDataset:
    """The data ``dataset`` names (see the module docstring); ``split`` chooses each config's split (default:
    ``test``, else its only one); Hub configs that cannot hold the selected ``tasks`` and ``voices`` are not
    downloaded."""
    if isinstance(dataset, EvalDataset):
        return dataset
    if isinstance(dataset, BuildDir):
        return open_build(dataset, split)
    if not isinstance(dataset, (str, Path)):
        return open_object(dataset)
    path = Path(dataset).expanduser()
    if path.exists():
        if not path.is_dir():
            raise DatasetSourceError(f"--dataset {dataset}: a file; pass a build folder, a dataset folder or a Hub id")
        return open_folder(path, split)
    match = HUB_ID.fullmatch(str(dataset))
    if match is None:
        raise DatasetSourceError(f"--dataset {dataset}: no such folder, and not a Hub dataset id ORG/NAME[@REVISION]")
    return open_hub(match["repo"], match["revision"], split, tasks, voices)
