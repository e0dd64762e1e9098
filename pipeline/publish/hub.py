"""A build on the Hugging Face Hub: stage the repo folder, upload it with retries and resume, load it back to check.

Repo layout: ``README.md`` (the card), ``build_report.json``, and one folder per config with parquet shards
``<config>/<split>-00000-of-0000N.parquet`` that embed the audio. The configs are the build's
(:mod:`s2sbench.pipeline.buildfolder.configs`): a task, or a task and voice when its task file asks for it, in the task's split. Staging is deterministic (same build, same bytes), which is what makes a re-run upload
skip every file the Hub already holds: the upload compares content hashes with the remote tree before each commit,
so a run killed half-way resumes without duplicating a file, and a commit whose answer was lost is not re-made.

The token is read by ``huggingface_hub`` from ``HF_TOKEN`` (or a stored login); this module never touches it.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.errors import BackendError, ConfigError, DataError
from s2sbench.pipeline.core.manifest import atomic_write_text, sha256_file, write_json
from s2sbench.pipeline.publish.card import HubConfig, describe_build, render_card

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"
MAX_SHARD_BYTES = 256 * 2**20
METADATA_FILES = ("README.md", "build_report.json")  # committed last, so the card appears once the data is complete
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
T = TypeVar("T")


class PublishError(BackendError):
    """Publishing failed: the message says which step, after how many attempts, and why."""


@dataclass(frozen=True)
class StagedRepo:
    folder: Path
    configs: list[HubConfig]


def _audio_columns(features) -> list[str]:
    import datasets

    def is_audio(feature) -> bool:
        return isinstance(feature, datasets.Audio) or (isinstance(feature, (datasets.List, datasets.LargeList)) and isinstance(feature.feature, datasets.Audio))

    return [name for name, feature in features.items() if is_audio(feature)]


def _write_shards(rows, out_dir: Path, name: str, split: str, max_shard_bytes: int) -> tuple[tuple[str, ...], int]:
    """Write ``rows`` as ``<name>/<split>-NNNNN-of-NNNNN.parquet`` with the audio bytes embedded; returns the paths
    and the bytes of the files (``download_size``)."""
    from datasets.table import embed_table_storage

    n_shards = max(1, math.ceil(rows.data.nbytes / max_shard_bytes))
    files, download_size = [], 0
    for shard_index in range(n_shards):
        shard = rows.shard(n_shards, shard_index, contiguous=True)
        # in memory: a cache file would land inside the build directory
        shard = shard.with_format("arrow").map(embed_table_storage, batched=True, keep_in_memory=True).with_format(None)
        relative = f"{name}/{split}-{shard_index:05d}-of-{n_shards:05d}.parquet"
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        shard.to_parquet(str(partial))
        os.replace(partial, target)
        files.append(relative)
        download_size += target.stat().st_size
    return tuple(files), download_size


def check_repo_id(repo_id: str) -> str:
    """``repo_id`` if the Hub would take it as a dataset repo (ORG/NAME, the Hub's own rules on names), else a
    :class:`ConfigError` saying why: a dry run refuses what the upload would refuse."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if repo_id.count("/") != 1:
        raise ConfigError(f"--repo-id '{repo_id}': expected ORG/NAME (one '/')")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        raise ConfigError(f"--repo-id '{repo_id}': the Hub refuses it: {error}") from None
    return repo_id


STAGED_FILES = ("README.md", "build_report.json")  # what every staged repo folder holds at its top


def _is_staged_repo(folder: Path) -> bool:
    """Whether ``folder`` is a repo folder an earlier dry run staged (its card, its report, config folders)."""
    entries = list(folder.iterdir())
    return all((folder / name).is_file() for name in STAGED_FILES) and all(
        entry.name in STAGED_FILES or entry.is_dir() for entry in entries)


def stage_repo(build_dir: str | Path | BuildDir, out_dir: str | Path, repo_id: str, *, licence: str | None = None,
               default_config: str | None = None, max_shard_bytes: int = MAX_SHARD_BYTES) -> StagedRepo:
    """Write the exact folder that would be uploaded for ``build_dir`` into ``out_dir``: the build's configs as
    parquet, the card (its header the same config index as the build's ``dataset/``) and the build report.
    ``default_config``: the config ``load_dataset(repo)`` opens (default: the build's). ``out_dir`` must be new,
    empty, or a repo folder staged before, which is replaced whole (staged beside it, then swapped in)."""
    source, out_dir = BuildDir.of(build_dir), Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()) and not _is_staged_repo(out_dir):
        raise ConfigError(f"{out_dir}: folder is not empty and not a staged repo folder; pass a new folder to stage "
                          "the Hub repo into")  # fmt: skip
    check_repo_id(repo_id)
    final, out_dir = out_dir, out_dir.parent / f".{out_dir.name}.staging-{os.getpid()}"
    if out_dir.exists():
        shutil.rmtree(out_dir)
    try:
        staged = _stage(source, out_dir, repo_id, licence, default_config, max_shard_bytes)
        if final.exists():
            shutil.rmtree(final)
        os.replace(out_dir, final)
    finally:
        if out_dir.exists():
            shutil.rmtree(out_dir)
    return replace(staged, folder=final)


def _stage(source: BuildDir, out_dir: Path, repo_id: str, licence: str | None, default_config: str | None,
           max_shard_bytes: int) -> StagedRepo:
    saved = source.load_dataset()
    index = {entry.name: entry for entry in source.dataset_index()}
    if default_config is not None and default_config not in index:
        raise ConfigError(f"--default-config '{default_config}': the build has no such config (it has: {', '.join(index)})")
    build = describe_build(source)
    configs, features = [], None
    for name, splits in saved.items():
        for split, table in splits.items():
            if len(table) == 0:
                log.warning("%s: config '%s' has no rows (every item dropped); nothing to publish for it", source.dataset_dir, name)
                continue
            tasks = sorted(set(table["task"]))
            if len(tasks) != 1:
                raise DataError(f"{source.dataset_dir}: config '{name}' holds rows of {len(tasks)} tasks ({', '.join(tasks)}); expected one")
            files, download_size = _write_shards(table, out_dir, name, split, max_shard_bytes)
            # the saved table already embeds the audio, so its Arrow bytes are what `datasets` counts for the split
            configs.append(HubConfig(name=name, task=tasks[0], voices=tuple(dict.fromkeys(table["voice"])), split=split,
                                     num_rows=len(table), num_bytes=table.data.nbytes, download_size=download_size,
                                     files=files))  # fmt: skip
            features = table.features
    if not configs:
        raise DataError(f"{source.dataset_dir}: no config has rows; nothing to publish")
    wanted = default_config or next(entry.name for entry in index.values() if entry.default)
    default = next((c for c in configs if c.name == wanted), configs[0])
    configs = [replace(c, default=c is default) for c in configs]
    atomic_write_text(out_dir / "README.md", render_card(build, configs, features, repo_id, licence))
    write_json(out_dir / "build_report.json", build.report.model_dump(mode="json"))
    return StagedRepo(out_dir, configs)


# --- retries ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    base_delay_s: float = 2.0
    max_delay_s: float = 60.0

    def delay_s(self, attempt: int) -> float:
        return min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))


def _transport_errors() -> tuple[type[BaseException], ...]:
    # huggingface_hub 2.x talks through httpx2 (older releases through httpx); both raise TransportError subclasses
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module_name in ("httpx2", "httpx"):
        try:
            errors.append(importlib.import_module(module_name).TransportError)
        except ImportError:
            continue
    return tuple(errors)


def is_transient(error: BaseException) -> bool:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(error, HfHubHTTPError):
        return error.response is not None and error.response.status_code in TRANSIENT_STATUS
    return isinstance(error, _transport_errors())


def with_retries(action: Callable[[], T], what: str, policy: RetryPolicy, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``action``; on a transient HTTP error or a dropped connection wait (exponential backoff) and retry."""
    from huggingface_hub.errors import HfHubHTTPError

    attempt = 1
    while True:
        try:
            return action()
        except (HfHubHTTPError, *_transport_errors()) as error:
            response = getattr(error, "response", None)
            detail = f"HTTP {response.status_code}: {error}" if response is not None else f"{type(error).__name__}: {error}"
            if not is_transient(error):
                raise PublishError(f"{what}: {detail}") from error
            if attempt >= policy.attempts:
                raise PublishError(f"{what}: still failing after {attempt} attempts: {detail}") from error
            delay = policy.delay_s(attempt)
            log.warning("%s: transient error (%s); retry %d/%d in %.1f s", what, type(error).__name__, attempt, policy.attempts - 1, delay)
            sleep(delay)
            attempt += 1


# --- upload -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LocalFile:
    path: str
    size: int
    sha256: str
    git_sha1: str

    @classmethod
    def of(cls, folder: Path, relative: str) -> "LocalFile":
        data_path = folder / relative
        size = data_path.stat().st_size
        git = hashlib.sha1(b"blob %d\0" % size)
        with open(data_path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                git.update(block)
        return cls(relative, size, sha256_file(data_path), git.hexdigest())

    def same_as(self, remote) -> bool:
        if remote is None:
            return False
        if remote.lfs is not None:
            return remote.lfs.sha256 == self.sha256
        return remote.blob_id == self.git_sha1


@dataclass
class UploadReport:
    repo_id: str
    revision: str
    commits: int = 0
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already on the Hub with the same content
    deleted: list[str] = field(default_factory=list)  # on the Hub but no longer in the build


def _remote_files(api, repo_id: str, revision: str) -> dict:
    from huggingface_hub.hf_api import RepoFile

    entries = api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=revision, recursive=True)
    return {entry.path: entry for entry in entries if isinstance(entry, RepoFile)}


def upload_repo(folder: str | Path, repo_id: str, *, revision: str = "main", private: bool = False,
                endpoint: str | None = None, policy: RetryPolicy = RetryPolicy(), files_per_commit: int = 50,
                sleep: Callable[[float], None] = time.sleep) -> UploadReport:
    """Upload a staged folder so the repo at ``revision`` holds exactly its files; safe to re-run after a failure."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    folder = Path(folder)
    api = HfApi(endpoint=endpoint)
    with_retries(lambda: api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True), f"create {repo_id}", policy, sleep)
    if revision != "main":
        with_retries(lambda: api.create_branch(repo_id, repo_type=REPO_TYPE, branch=revision, exist_ok=True), f"create branch {revision}", policy, sleep)
    paths = sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file())
    local = {path: LocalFile.of(folder, path) for path in paths}
    data_paths = [path for path in paths if path not in METADATA_FILES]
    batches = [data_paths[start:start + files_per_commit] for start in range(0, len(data_paths), files_per_commit)]
    batches.append([path for path in paths if path in METADATA_FILES])
    report = UploadReport(repo_id, revision)
    for number, batch in enumerate(batches, start=1):
        final = number == len(batches)

        def commit_batch() -> None:
            # listed again on every attempt: files that landed before a failure (or in a commit whose answer was
            # lost) are skipped, never committed twice
            remote = _remote_files(api, repo_id, revision)
            pending = [path for path in batch if not local[path].same_as(remote.get(path))]
            stale = sorted(path for path in remote if final and path not in local and path != ".gitattributes")
            report.skipped.extend(path for path in batch if path not in pending and path not in report.skipped)
            if not pending and not stale:
                return
            operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(folder / path)) for path in pending]
            operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
            api.create_commit(repo_id, repo_type=REPO_TYPE, revision=revision, operations=operations,
                              commit_message=f"s2sbench publish: part {number} of {len(batches)}")
            report.commits += 1
            report.uploaded.extend(pending)
            report.deleted.extend(stale)

        with_retries(commit_batch, f"commit part {number}/{len(batches)} to {repo_id}@{revision}", policy, sleep)
    return report


# --- read back ----------------------------------------------------------------------------------------------------
def _row_digests(batches, audio_columns: list[str]) -> dict[str, str]:
    """Row id -> sha256 over the sha256 of each audio value of the row (context, then candidates), from arrow batches."""
    digests = {}
    for batch in batches:
        columns = {name: batch.column(name).to_pylist() for name in ["id", *audio_columns]}
        for index, row_id in enumerate(columns["id"]):
            digest = hashlib.sha256()
            for name in audio_columns:
                value = columns[name][index]
                for audio in value if isinstance(value, list) else [value]:
                    digest.update(hashlib.sha256(audio["bytes"] if audio else b"").digest())
            digests[row_id] = digest.hexdigest()
    return digests


@dataclass(frozen=True)
class ConfigCheck:
    config: str
    rows_expected: int
    rows_found: int
    audio_mismatches: int  # rows whose audio hash differs, or that are missing on one side

    @property
    def ok(self) -> bool:
        return self.rows_expected == self.rows_found and self.audio_mismatches == 0


def verify_upload(staged: StagedRepo, repo_id: str, *, revision: str = "main", cache_dir: str | Path | None = None) -> list[ConfigCheck]:
    """Load every config back from the Hub with ``datasets.load_dataset`` and compare rows and audio hashes."""
    import datasets
    import pyarrow.parquet as pq

    checks = []
    with tempfile.TemporaryDirectory(prefix="s2sbench-verify-") as scratch:
        for config in staged.configs:
            local_batches = (batch for path in config.files for batch in pq.ParquetFile(staged.folder / path).iter_batches())
            audio_columns = _audio_columns(datasets.Features.from_arrow_schema(pq.read_schema(staged.folder / config.files[0])))
            expected = _row_digests(local_batches, audio_columns)
            # datasets' own size check would stop at the first difference; ours counts rows and compares every hash
            remote = datasets.load_dataset(repo_id, config.name, split=config.split, revision=revision, verification_mode="no_checks",
                                           cache_dir=str(cache_dir or scratch), download_mode="force_redownload")
            found = _row_digests(remote.with_format("arrow").iter(batch_size=256), audio_columns)
            mismatches = sum(expected.get(row_id) != found.get(row_id) for row_id in expected.keys() | found.keys())
            checks.append(ConfigCheck(config.name, config.num_rows, len(remote), mismatches))
    return checks


@dataclass
class PublishResult:
    configs: list[HubConfig]
    staged_dir: Path | None = None  # the dry-run folder; a real upload stages into a temporary folder
    upload: UploadReport | None = None
    checks: list[ConfigCheck] = field(default_factory=list)


def publish_build(build_dir: str | Path | BuildDir, repo_id: str, *, revision: str = "main", private: bool = False,
                  dry_run_dir: str | Path | None = None, licence: str | None = None, default_config: str | None = None,
                  policy: RetryPolicy = RetryPolicy(), verify: bool = True) -> PublishResult:
    """Stage, upload and verify a build (the Hub is ``HF_ENDPOINT``). With ``dry_run_dir`` only stage, into that folder."""
    if dry_run_dir is not None:
        staged = stage_repo(build_dir, dry_run_dir, repo_id, licence=licence, default_config=default_config)
        return PublishResult(staged.configs, staged_dir=staged.folder)
    with tempfile.TemporaryDirectory(prefix="s2sbench-publish-") as scratch:
        staged = stage_repo(build_dir, Path(scratch) / "repo", repo_id, licence=licence, default_config=default_config)
        result = PublishResult(staged.configs, upload=upload_repo(staged.folder, repo_id, revision=revision, private=private, policy=policy))
        if verify:
            result.checks = verify_upload(staged, repo_id, revision=revision)
    require_match(result.checks, repo_id, revision)
    return result


def require_match(checks: list[ConfigCheck], repo_id: str, revision: str) -> None:
    """Raise :class:`PublishError` naming every config whose loaded-back rows differ from the build's."""
    bad = [check for check in checks if not check.ok]
    if bad:
        details = "; ".join(f"{c.config}: {c.rows_found}/{c.rows_expected} rows, {c.audio_mismatches} audio mismatches" for c in bad)
        raise PublishError(f"{repo_id}@{revision}: the uploaded data does not match the build: {details}")
