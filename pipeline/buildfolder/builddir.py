"""One build folder: its layout, typed readers and writers, its lock, and the inputs it was built from.

Everything that reads or writes a build folder (build, assembly, re-verification, publishing, export and import,
evaluation, the report) goes through :class:`BuildDir`; no other code joins paths into it. The layout::

    build.json                       BuildState: schema version and the inputs the build was made from
    .lock                            held (flock) while a build writes the folder
    items/<task>.jsonl               Item            (+ <task>.drops.jsonl Drop, <task>.report.json LoadReport)
    work/<task>/shard-NNNNN/         rows.jsonl BuildRow, checks.jsonl ClipCheck, drops.jsonl Drop, costs.jsonl RowCost, .done
    work/<task>/conditions/<name>-<parameters hash>/shard-NNNNN.jsonl   ConditionedRow of each kept row of the shard
    manifest.jsonl                   BuildRow of every kept (item, voice)
    clips.jsonl  verification.jsonl  drops.jsonl      Clip, ClipCheck (every attempt), Drop
    conditions.jsonl                 ConditionedRow of every kept row under every condition of its task
    dataset/                         README.md (the config index) + <config>/, a DatasetDict (DatasetRow) each
    build_report.json                BuildReport
    reverify/<model>/                verification.jsonl + report.json of `s2sbench verify`
    hub-repo/                        where `s2sbench publish --dry-run` staged by default in earlier versions (--rebuild removes it)
    clips/                           the clip store of a folder made by `s2sbench import-original` (a build's own
                                     clips live in the shared store it names)

Resume is a property of the data: shard files are keyed by deterministic ids and ``.done`` closes a shard, so a
killed build re-run skips what is written and never duplicates a row. It is only sound for the same inputs, so
``build.json`` records them and a build with other inputs is refused (or, with ``rebuild``, starts over).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from s2sbench.pipeline.buildfolder.build_report import BuildReport
from s2sbench.pipeline.machine.costs import RowCost
from s2sbench.pipeline.core.errors import DataError, EnvironmentFault
from s2sbench.pipeline.buildfolder.fingerprint import BuildInputs
from s2sbench.pipeline.core.manifest import (
    ResumableJsonlWriter,
    SchemaVersionError,
    atomic_write_text,
    parse_document,
    parse_versioned,
    read_json,
    read_records,
    stable_hash,
    write_json,
    write_records,
)
from s2sbench.pipeline.core.records import (
    SCHEMA_VERSION, BuildRow, Clip, ClipCheck, ConditionedRow, Drop, Item, Record, safe_component)
from s2sbench.pipeline.items.sources import LoadReport, LoadResult
from s2sbench.pipeline.items.task_config import TaskConfig


class BuildDirError(DataError):
    """A build folder that cannot be used as asked; the message names the file, the field and what to do."""


class NotABuildError(BuildDirError):
    """The folder (or the file asked for) is not there: not a build, or not a finished one."""


class BuildLockedError(EnvironmentFault):
    """Another process holds the folder's lock."""


class BuildInputsChangedError(BuildDirError):
    """A resume with other inputs (sources, task settings, voices, --limit, --shard-size, --seed) than the build's."""


class BuildState(Record):
    """``build.json``: what a build in progress (or done) was made from."""

    schema_version: int = SCHEMA_VERSION
    inputs: BuildInputs

    def task_config(self, name: str) -> TaskConfig | None:
        """Task ``name``'s settings as the build loaded them (a build in progress has no report to read them from)."""
        entry = self.inputs.tasks.get(name)
        return TaskConfig.model_validate(entry.config) if entry is not None else None


@contextmanager
def exclusive_lock(path: Path, what: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if needed) or raise :class:`BuildLockedError` at once. The
    kernel releases it when the process ends, however it ends, so a killed build never leaves the folder locked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise BuildLockedError(
            f"{what} is in use by {holder}; wait for it to finish, or use another folder (two writers would corrupt it)"
        ) from None
    try:
        handle.truncate(0)
        handle.write(f"s2sbench pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        handle.flush()
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


class Shard:
    """One work shard of a task: the rows, checks and drops of its items, appended as they are made."""

    def __init__(self, folder: Path, index: int):
        self.folder, self.index = folder, index
        self.rows_path = folder / "rows.jsonl"
        self.checks_path = folder / "checks.jsonl"
        self.drops_path = folder / "drops.jsonl"
        self.costs_path = folder / "costs.jsonl"
        self._done = folder / ".done"

    @property
    def done(self) -> bool:
        return self._done.exists()

    def mark_done(self) -> None:
        atomic_write_text(self._done, "")

    @contextmanager
    def writers(self) -> Iterator[tuple[ResumableJsonlWriter, ...]]:
        """Resumable (rows, checks, drops, costs) writers: ids already written are skipped."""
        with ExitStack() as stack:
            yield tuple(stack.enter_context(ResumableJsonlWriter(path, cls)) for path, cls in
                        ((self.rows_path, BuildRow), (self.checks_path, ClipCheck), (self.drops_path, Drop),
                         (self.costs_path, RowCost)))  # fmt: skip

    def _finished(self) -> None:
        if not self.done:
            raise BuildDirError(f"{self.folder}: shard is not finished (no .done marker); run the build again to resume it")

    def read_rows(self) -> list[BuildRow]:
        self._finished()
        return read_records(self.rows_path, BuildRow)

    def read_checks(self) -> list[ClipCheck]:
        self._finished()
        return read_records(self.checks_path, ClipCheck)

    def read_drops(self) -> list[Drop]:
        self._finished()
        return read_records(self.drops_path, Drop)

    def read_costs(self) -> list[RowCost]:
        """The costs of the rows this shard measured (none for a shard made before costs were recorded)."""
        self._finished()
        return read_records(self.costs_path, RowCost) if self.costs_path.exists() else []


class BuildDir:
    """The folder of one build (see the module docstring for its layout)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.state_path = self.root / "build.json"
        self.lock_path = self.root / ".lock"
        self.items_dir = self.root / "items"
        self.work_dir = self.root / "work"
        self.manifest_path = self.root / "manifest.jsonl"
        self.clips_path = self.root / "clips.jsonl"
        self.verification_path = self.root / "verification.jsonl"
        self.drops_path = self.root / "drops.jsonl"
        self.conditions_path = self.root / "conditions.jsonl"
        self.dataset_dir = self.root / "dataset"
        self.report_path = self.root / "build_report.json"
        self.reverify_dir = self.root / "reverify"
        self.hub_repo_dir = self.root / "hub-repo"
        self.own_store_dir = self.root / "clips"

    def __repr__(self) -> str:
        return f"BuildDir({str(self.root)!r})"

    @classmethod
    def of(cls, where: "str | Path | BuildDir") -> "BuildDir":
        return where if isinstance(where, BuildDir) else cls(where)

    # --- layout -------------------------------------------------------------------------------------------------
    def items_path(self, task: str) -> Path:
        return self.items_dir / f"{safe_component(task, 'task name')}.jsonl"

    def item_drops_path(self, task: str) -> Path:
        return self.items_path(task).with_suffix(".drops.jsonl")

    def load_report_path(self, task: str) -> Path:
        return self.items_path(task).with_suffix(".report.json")

    def shard(self, task: str, index: int) -> Shard:
        return Shard(self.work_dir / safe_component(task, "task name") / f"shard-{index:05d}", index)

    def shards(self, task: str, n_items: int, shard_size: int) -> list[Shard]:
        """The shards ``n_items`` items make in shards of ``shard_size`` (at least one, for a task with no items)."""
        return [self.shard(task, index) for index in range(max(1, -(-n_items // shard_size)))]

    def finished_shards(self, task: str | None = None) -> list[Shard]:
        """The shards of ``task`` (of every task when None) that are finished, of a build finished or in progress."""
        folders = sorted(self.work_dir.glob(f"{safe_component(task, 'task name') if task else '*'}/shard-*"))
        shards = [self.shard(folder.parent.name, int(folder.name.removeprefix("shard-"))) for folder in folders]
        return [shard for shard in shards if shard.done]

    def condition_dir(self, task: str, name: str, parameters: dict) -> Path:
        """Where the rows of ``task`` under a condition are written; other parameters under one name, another folder."""
        folder = f"{safe_component(name, 'condition name')}-{stable_hash(parameters)[:12]}"
        return self.work_dir / safe_component(task, "task name") / "conditions" / folder

    def condition_writer(self, task: str, name: str, parameters: dict, shard: int) -> ResumableJsonlWriter:
        return ResumableJsonlWriter(self.condition_dir(task, name, parameters) / f"shard-{shard:05d}.jsonl", ConditionedRow)

    def read_condition_rows(self, task: str, name: str, parameters: dict) -> list[ConditionedRow]:
        return [row for path in sorted(self.condition_dir(task, name, parameters).glob("shard-*.jsonl"))
                for row in read_records(path, ConditionedRow)]  # fmt: skip

    def reverify_audit_dir(self, model_slug: str) -> Path:
        return self.reverify_dir / safe_component(model_slug, "ASR model")

    @staticmethod
    def write_reverify_audit(folder: Path, checks: list[ClipCheck], report: Record) -> None:
        """A re-verification's audit: ``verification.jsonl`` and ``report.json`` in ``folder`` (by default under
        :attr:`reverify_dir`, never over the build's own audit)."""
        write_records(Path(folder) / "verification.jsonl", checks)
        write_json(Path(folder) / "report.json", report.model_dump(mode="json"))

    # --- lock and inputs ----------------------------------------------------------------------------------------
    def lock(self):
        """Exclusive access for a writer (a build, an import, a re-verification); see :func:`exclusive_lock`."""
        return exclusive_lock(self.lock_path, f"build folder {self.root}")

    def read_state(self) -> BuildState | None:
        return parse_versioned(BuildState, read_json(self.state_path), self.state_path) if self.state_path.exists() else None

    def check_inputs(self, inputs: BuildInputs) -> None:
        """:class:`BuildInputsChangedError` if this folder holds a build of other inputs (which a resume would mix)."""
        if self.state_path.exists():
            try:
                state = self.read_state()
            except SchemaVersionError as error:
                raise BuildInputsChangedError(str(error)) from None
            changes = state.inputs.differences(inputs)
            if changes:
                raise BuildInputsChangedError(
                    f"{self.root} was built from other inputs, so it cannot be resumed:\n  " + "\n  ".join(changes)
                    + "\nrun with the same inputs to resume, or add --rebuild to build it again (the clip cache is kept)"
                )
        elif self.has_build_files():
            raise BuildInputsChangedError(
                f"{self.root} holds build files but no {self.state_path.name} (made by an older s2sbench?); add --rebuild "
                "to build it again (the clip cache is kept)"
            )

    def preflight(self, inputs: BuildInputs, rebuild: bool = False) -> None:
        """Fail early (before an orchestrator starts) if the folder is in use or, unless ``rebuild``, holds a build of
        other inputs; :meth:`start` checks again under the lock."""
        with self.lock():
            if not rebuild:
                self.check_inputs(inputs)

    def start(self, inputs: BuildInputs, rebuild: bool = False) -> None:
        """Record ``inputs`` for a build about to write this folder (hold :meth:`lock`). A folder built from other
        inputs is :class:`BuildInputsChangedError`, unless ``rebuild`` discards its work first."""
        if rebuild:
            self.discard()
        else:
            self.check_inputs(inputs)
        write_json(self.state_path, BuildState(inputs=inputs).model_dump(mode="json"))

    def _outputs(self) -> list[Path]:
        return [self.state_path, self.items_dir, self.work_dir, self.manifest_path, self.clips_path,
                self.verification_path, self.drops_path, self.conditions_path, self.dataset_dir, self.report_path, self.reverify_dir,
                self.hub_repo_dir, *self.root.glob(f".{self.dataset_dir.name}.tmp-*")]  # fmt: skip

    def has_build_files(self) -> bool:
        return any(path.exists() for path in self._outputs())

    def discard(self) -> None:
        """Remove everything a build wrote here (never the clip store, never files it does not know)."""
        for path in self._outputs():
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)

    # --- items --------------------------------------------------------------------------------------------------
    def write_items(self, result: LoadResult) -> None:
        write_records(self.items_path(result.task), result.items)
        write_records(self.item_drops_path(result.task), result.drops)
        write_json(self.load_report_path(result.task), result.report())

    def read_items(self, task: str) -> list[Item]:
        return read_records(self._existing(self.items_path(task), "run `s2sbench build` first"), Item)

    def read_item_drops(self, task: str) -> list[Drop]:
        path = self.item_drops_path(task)
        return read_records(path, Drop) if path.exists() else []

    def read_load_report(self, task: str) -> LoadReport:
        path = self._existing(self.load_report_path(task), "run `s2sbench build` again to write it")
        return parse_document(LoadReport, read_json(path), path)

    def task_names(self) -> list[str]:
        """The tasks whose items this folder holds."""
        return sorted(path.name.removesuffix(".jsonl") for path in self.items_dir.glob("*.jsonl")
                      if not path.name.endswith(".drops.jsonl"))  # fmt: skip

    def read_all_items(self) -> dict[str, Item]:
        names = self.task_names()
        if not names:
            raise NotABuildError(f"{self.items_dir}: no item manifests; is {self.root} a build directory?")
        return {item.id: item for task in names for item in self.read_items(task)}

    # --- the finished build -------------------------------------------------------------------------------------
    def _existing(self, path: Path, hint: str = "is this a finished build? `s2sbench build` makes (and resumes) one") -> Path:
        if not path.exists():
            raise NotABuildError(f"{path}: not found; {hint}")
        return path

    def write_manifests(self, rows: list[BuildRow], checks: list[ClipCheck], drops: list[Drop],
                        conditioned: list[ConditionedRow] = ()) -> None:  # fmt: skip
        write_records(self.manifest_path, rows)
        write_records(self.clips_path, [clip for row in rows for clip in row.clips.values()])
        write_records(self.verification_path, checks)
        write_records(self.drops_path, drops)
        write_records(self.conditions_path, list(conditioned))

    def read_conditioned(self) -> list[ConditionedRow]:
        """Every kept row under every condition (none for a build without conditions, or made before them)."""
        return read_records(self.conditions_path, ConditionedRow) if self.conditions_path.exists() else []

    def read_manifest(self) -> list[BuildRow]:
        return read_records(self._existing(self.manifest_path), BuildRow)

    def read_clips(self) -> list[Clip]:
        return read_records(self._existing(self.clips_path), Clip)

    def read_verification(self) -> list[ClipCheck]:
        return read_records(self._existing(self.verification_path), ClipCheck)

    def read_drops(self) -> list[Drop]:
        return read_records(self._existing(self.drops_path), Drop)

    def write_report(self, report: BuildReport) -> None:
        write_json(self.report_path, report.model_dump(mode="json"))

    def read_report(self) -> BuildReport:
        return parse_versioned(BuildReport, read_json(self._existing(self.report_path)), self.report_path)

    def save_dataset(self, configs: dict, default: str | None = None) -> None:
        """Save ``configs`` (name -> ``datasets.DatasetDict`` of its splits) as ``dataset/<config>/`` with the index
        ``dataset/README.md`` (:mod:`s2sbench.pipeline.buildfolder.configs`; ``default``: the first config unless named). The
        folder is written beside ``dataset/`` and swapped in, so a killed save never leaves half a dataset."""
        from s2sbench.pipeline.buildfolder.configs import write_folder_index

        for stale in self.root.glob(f".{self.dataset_dir.name}.tmp-*"):
            shutil.rmtree(stale)
        staging = self.root / f".{self.dataset_dir.name}.tmp-{os.getpid()}"
        staging.mkdir(parents=True)
        for name, splits in configs.items():
            splits.save_to_disk(str(staging / safe_component(name, "dataset config")))
        write_folder_index(staging, list(configs), default or next(iter(configs), None))
        if self.dataset_dir.exists():
            shutil.rmtree(self.dataset_dir)
        os.replace(staging, self.dataset_dir)

    def dataset_index(self):
        """The configs of the saved dataset (:class:`~s2sbench.pipeline.buildfolder.configs.ConfigEntry`, the default marked)."""
        from s2sbench.pipeline.buildfolder.configs import ConfigIndexError, read_card_index

        if (self.dataset_dir / "dataset_dict.json").exists():
            raise NotABuildError(
                f"{self.dataset_dir}: one split per task, the layout of an older s2sbench; build it again with --rebuild "
                "(the clip cache is kept), or evaluate the folder itself: `s2sbench eval --dataset DIR/dataset ...`"
            )
        try:
            return read_card_index(self.dataset_dir)
        except ConfigIndexError as error:
            raise NotABuildError(f"{error}; is {self.root} a finished build directory?") from None

    def load_dataset(self) -> dict:
        """The saved configs (name -> ``datasets.DatasetDict`` of its splits), each split's columns checked."""
        import datasets

        from s2sbench.pipeline.buildfolder.dataset import check_features

        configs = {}
        for entry in self.dataset_index():
            folder = self.dataset_dir / safe_component(entry.name, f"{self.dataset_dir / 'README.md'}: config")
            splits = datasets.load_from_disk(str(folder))
            for name, split in splits.items():
                check_features(split, f"{self.dataset_dir} config '{entry.name}' split '{name}'")
            configs[entry.name] = splits
        return configs
