"""Evaluate one model on a build: score every candidate in every mode it supports, then report.

:func:`evaluate` reads the build's dataset (``<build>/dataset``), asks the adapter which modes it can score per
task (a mode it cannot is recorded with the reason, never silently dropped), scores the candidates it has not
scored before, and writes ``results.json``, ``samples.jsonl`` and the reference's ``original/`` files.

Scores are cached one candidate a line in a resumable JSONL keyed by (model name and revision, task, task version,
mode, template, item, voice, candidate, its texts and the SHA-256 of the audio each mode hears): a killed run
resumes where it stopped, a rerun scores nothing, a checkpoint sweep shares one cache, and another build (other
audio, other text) evaluated into the same folder is scored afresh. Audio is decoded only for candidates that
still need scoring. The build is read through :class:`~s2sbench.pipeline.builddir.BuildDir` (typed, validated
rows); the outputs through :class:`~s2sbench.evaluation.results_dir.ResultsDir`.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from s2sbench.evaluation.models.base import Audio, ModelAdapter
from s2sbench.evaluation.protocol import (
    MODES,
    EvalItem,
    build_requests,
    check_mode,
    context_is_speech,
    continuation_is_speech,
    template_for,
)
from s2sbench.evaluation.results import sample_lines, summarize_task, write_jsonl, write_original
from s2sbench.evaluation.results_dir import RESULTS_FILE, ResultsDir, ResultsFile
from s2sbench.evaluation.scoring import NORMALIZATIONS, Score, rules_for
from s2sbench.evaluation.stats import BootstrapOptions
from s2sbench.pipeline.build_report import BuildReport
from s2sbench.pipeline.builddir import BuildDir
from s2sbench.pipeline.dataset import AudioValue, DatasetError, DatasetRow, iter_rows
from s2sbench.pipeline.manifest import ResumableJsonlWriter, iter_records, sha256_file, stable_hash
from s2sbench.pipeline.tasks import TaskConfig, TaskConfigError, load_task

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
NORMALIZATION_NOTES = {
    "token": "mean negative log-likelihood per continuation token (the reference's score)",
    "char": "negative log-likelihood per character of the candidate text",
    "byte": "negative log-likelihood per UTF-8 byte of the candidate text",
    "sum": "summed negative log-likelihood of the continuation",
}


@dataclass(frozen=True)
class EvalOptions:
    normalizations: tuple[str, ...] = NORMALIZATIONS
    bootstrap: BootstrapOptions = field(default_factory=BootstrapOptions)
    requests_per_call: int = 64  # requests handed to the adapter at once (it batches inside); the cache is
    # written after each call, so this is also what a killed run can lose
    chunk_rows: int = 64  # dataset rows read (and audio decoded) at a time
    cache_path: Path | None = None  # default: <out_dir>/score_cache.jsonl
    revision: str | None = None  # default: the adapter's model_id
    step: int = 0  # written in the original summary line
    tasks: Mapping[str, TaskConfig] | None = None  # task configs by name; default: the task registry
    select_tasks: tuple[str, ...] = ()  # evaluate only these tasks of the build (empty: all)
    results_file: str = RESULTS_FILE


@dataclass(frozen=True)
class Skipped:
    task: str
    mode: str
    reason: str


@dataclass(frozen=True)
class Results:
    file: ResultsFile  # what results.json holds
    out_dir: Path
    n_scored: int  # candidates scored by the model in this run
    n_cached: int  # candidates taken from the cache
    skipped: tuple[Skipped, ...]

    @property
    def data(self) -> dict:
        """results.json as written (plain JSON values)."""
        return self.file.as_json()

    def accuracy(self, task: str, mode: str, normalization: str = "token", rule: str | None = None) -> float:
        return self.file.tasks[task].accuracy(mode, normalization, rule).value


class ScoreCache:
    """Scores already computed, read from a resumable JSONL, and the writer that appends new ones."""

    def __init__(self, path: Path):
        self.path = path
        self._writer = ResumableJsonlWriter(path, Score)  # opened first: it cuts a line torn by a crash
        self.scores: dict[str, Score] = {score.id: score for score in iter_records(path, Score)}

    def add(self, scores: list[Score]) -> None:
        """Append a batch of scores (one fsync for the batch)."""
        self._writer.write_many(scores)
        self.scores.update((score.id, score) for score in scores)

    def close(self) -> None:
        self._writer.close()


def _decode(value: AudioValue | None, where: str) -> Audio:
    import soundfile

    if value is None or not (value.wav or value.path):
        raise DatasetError(f"{where}: no audio")
    source = io.BytesIO(value.wav) if value.wav else value.path
    samples, rate = soundfile.read(source, dtype="float32", always_2d=True)
    return Audio(samples=np.ascontiguousarray(samples.mean(axis=1)), sample_rate_hz=int(rate))


def audio_sha256(value: AudioValue | None) -> str:
    """The hash of a clip as the model hears it ("" when there is none), for the score cache key."""
    if value is None:
        return ""
    if value.wav:
        return hashlib.sha256(value.wav).hexdigest()
    return sha256_file(value.path) if value.path else ""


class _AudioHashes:
    """The audio hashes of one row, each computed once when a mode's cache key first needs it."""

    def __init__(self, row: DatasetRow):
        self.row = row
        self._known: dict[int | None, str] = {}

    def of(self, candidate: int | None) -> str:
        """The context clip's hash (``candidate`` None), else that candidate clip's."""
        if candidate not in self._known:
            value = self.row.context_audio if candidate is None else self.row.candidate_audio[candidate]
            self._known[candidate] = audio_sha256(value)
        return self._known[candidate]


@dataclass
class _TaskRun:
    config: TaskConfig
    language: str
    modes: tuple[str, ...]
    scores: dict[str, dict[str, Score]] = field(default_factory=dict)  # mode -> key -> score


class _Evaluation:
    def __init__(
        self, adapter: ModelAdapter, modes: tuple[str, ...], cache: ScoreCache, options: EvalOptions,
        report: BuildReport | None,
    ):  # fmt: skip
        self.adapter, self.modes, self.cache, self.options = adapter, modes, cache, options
        self.report = report
        self.revision = options.revision or adapter.model_id
        self.tasks: dict[str, _TaskRun] = {}
        self.skipped: list[Skipped] = []
        self.n_scored = self.n_cached = 0
        self.rows_seen: dict[tuple[str, str, str], str] = {}  # (task, item, voice) -> where it was read

    def _task(self, name: str, language: str, has_candidate_audio: bool) -> _TaskRun:
        """The run of a task, set up from its first row: which of the modes asked for it can score."""
        if name not in self.tasks:
            config = self._config(name)
            active = []
            for mode in self.modes:
                ok, reason = self.adapter.supports(mode, language)
                if ok and continuation_is_speech(mode) and not has_candidate_audio:
                    ok, reason = False, "the build has no candidate audio (task `speak` lacks 'candidates')"
                if ok:
                    active.append(mode)
                else:
                    self.skipped.append(Skipped(name, mode, reason))
            self.tasks[name] = _TaskRun(config, language, tuple(active), {mode: {} for mode in active})
        return self.tasks[name]

    def _config(self, name: str) -> TaskConfig:
        """The task's config: given by the caller, else recorded in the build report, else the registry's."""
        if name in (self.options.tasks or {}):
            return self.options.tasks[name]
        recorded = self.report.task_config(name) if self.report is not None else None
        if recorded is not None:
            return recorded
        try:
            return load_task(name)
        except TaskConfigError as error:
            raise TaskConfigError(f"{error} (a task outside the registry: pass its YAML with --task-file)") from None

    def _key(self, run: _TaskRun, mode: str, row: DatasetRow, voice: str, candidate: int, audio: _AudioHashes) -> str:
        return stable_hash(
            {
                "model": self.adapter.name,
                "revision": self.revision,
                "task": run.config.name,
                "version": run.config.version,
                "mode": mode,
                "template": template_for(run.config.templates, mode),
                "item": row.item_id,
                "voice": voice,
                "candidate": candidate,
                "context": row.context,
                "text": row.candidates[candidate],
                "context_audio": audio.of(None) if context_is_speech(mode) else "",
                "candidate_audio": audio.of(candidate) if continuation_is_speech(mode) else "",
            }
        )

    def _item(self, row: DatasetRow, mode: str, where: str) -> EvalItem:
        context_audio = candidate_audio = None
        if context_is_speech(mode):
            context_audio = _decode(row.context_audio, f"{where}: field 'context_audio'")
        if continuation_is_speech(mode):
            candidate_audio = tuple(_decode(c, f"{where}: field 'candidate_audio[{k}]'") for k, c in enumerate(row.candidate_audio))
        return EvalItem(
            item_id=row.item_id, task=row.task, language=row.language, voice=row.voice, context=row.context,
            candidates=tuple(row.candidates), right=row.label, context_audio=context_audio, candidate_audio=candidate_audio,
        )  # fmt: skip

    def run_chunk(self, rows: Sequence[DatasetRow], where_of: Sequence[str]) -> None:
        pending: dict[str, list[tuple[_TaskRun, DatasetRow, str, list[str], str]]] = {}
        queued: set[str] = set()
        for row, where in zip(rows, where_of):
            if self.options.select_tasks and row.task not in self.options.select_tasks:
                continue
            first = self.rows_seen.setdefault((row.task, row.item_id, row.voice), where)
            if first != where:
                raise DatasetError(f"{where}: item '{row.item_id}' with voice '{row.voice}' repeats {first}")
            run = self._task(row.task, row.language, bool(row.candidate_audio))
            audio = _AudioHashes(row)
            for mode in run.modes:
                voice = row.voice if (context_is_speech(mode) or continuation_is_speech(mode)) else ""
                keys = [self._key(run, mode, row, voice, k, audio) for k in range(len(row.candidates))]
                if keys[0] in run.scores[mode] or keys[0] in queued:
                    continue  # a text-only mode is scored once per item, not once per voice
                if all(key in self.cache.scores for key in keys):
                    for key in keys:
                        run.scores[mode][key] = self.cache.scores[key]
                    self.n_cached += len(keys)
                else:
                    pending.setdefault(mode, []).append((run, row, voice, keys, where))
                    queued.add(keys[0])
        for mode, entries in pending.items():
            self._score(mode, entries)

    def _score(self, mode: str, entries: list[tuple[_TaskRun, DatasetRow, str, list[str], str]]) -> None:
        requests, owners = [], []
        for run, row, voice, keys, where in entries:
            item_requests = build_requests(self._item(row, mode, where), run.config.templates, mode)
            requests.extend(item_requests)
            owners.extend((run, row, voice, keys[k], k) for k in range(len(item_requests)))
        size = max(1, self.options.requests_per_call)
        for start in range(0, len(requests), size):
            results = self.adapter.loglikelihood(requests[start : start + size])
            batch = []
            for (run, row, voice, key, k), result in zip(owners[start : start + size], results):
                text = row.candidates[k]
                score = Score(
                    id=key,
                    model=self.adapter.name,
                    revision=self.revision,
                    task=run.config.name,
                    task_version=run.config.version,
                    template=template_for(run.config.templates, mode),
                    mode=mode,
                    item_id=row.item_id,
                    voice=voice,
                    candidate=k,
                    n_candidates=len(row.candidates),
                    right=k == row.label,
                    sum_logprob=result.sum_logprob,
                    n_tokens=result.n_tokens,
                    n_chars=len(text),
                    n_bytes=len(text.encode("utf-8")),
                )
                batch.append(score)
                run.scores[mode][key] = score
            self.cache.add(batch)
            self.n_scored += len(batch)


def evaluate(
    build_dir: str | Path | BuildDir,
    adapter: ModelAdapter,
    modes: Sequence[str] | None,
    out_dir: str | Path,
    options: EvalOptions = EvalOptions(),
) -> Results:
    """Score ``adapter`` on the build in ``build_dir`` in each of ``modes`` (None: every mode the adapter declares);
    write results.json, samples.jsonl and original/ into ``out_dir``."""
    if modes is None:
        modes = [mode for mode in MODES if mode in adapter.modes]
    modes = tuple(dict.fromkeys(check_mode(mode) for mode in modes))
    if not modes:
        raise ValueError(f"no modes to evaluate (choose among {', '.join(MODES)})")
    for normalization in options.normalizations:
        if normalization not in NORMALIZATIONS:
            raise ValueError(f"unknown normalization '{normalization}' (known: {', '.join(NORMALIZATIONS)})")
    build, out = BuildDir.of(build_dir), ResultsDir(out_dir, options.results_file)
    report = build.read_report() if build.report_path.exists() else None
    with out.lock():
        cache = ScoreCache(Path(options.cache_path or out.score_cache_path))
        evaluation = _Evaluation(adapter, modes, cache, options, report)
        try:
            for split_name, split in build.load_dataset().items():
                where = f"{build.dataset_dir} split '{split_name}'"
                progress = tqdm(total=len(split), desc=f"score {split_name}", unit="row", disable=None, leave=False)
                for start in range(0, len(split), options.chunk_rows):
                    chunk = list(iter_rows(split, where, start, start + options.chunk_rows, options.chunk_rows))
                    evaluation.run_chunk([row for _, row in chunk], [f"{where} row {number}" for number, _ in chunk])
                    progress.update(len(chunk))
                progress.close()
        finally:
            cache.close()
        missing = [name for name in options.select_tasks if name not in evaluation.tasks]
        if missing:
            raise DatasetError(f"{build.root}: no rows of the selected task(s) {', '.join(missing)}")
        return _report(build, out, adapter, evaluation, options)


def _report(build: BuildDir, out: ResultsDir, adapter: ModelAdapter, evaluation: _Evaluation, options: EvalOptions) -> Results:
    tasks: dict[str, dict] = {}
    samples: list[dict] = []
    for name, run in sorted(evaluation.tasks.items()):
        by_mode = {mode: list(scores.values()) for mode, scores in run.scores.items() if scores}
        if not by_mode:
            continue
        n_candidates = max(s.n_candidates for scores in by_mode.values() for s in scores)
        rules = rules_for(run.config.scoring, run.config.also_report, n_candidates)
        tasks[name] = {
            "version": run.config.version,
            "language": run.language,
            "rules": list(rules),
            "templates": {mode: template_for(run.config.templates, mode) for mode in by_mode},
            **summarize_task(by_mode, rules, options.normalizations, options.bootstrap),
        }
        for mode, scores in by_mode.items():
            samples.extend(sample_lines(scores, rules[0], options.normalizations))
            write_original(out, mode, scores, rules[0], options.step)
    report_sha = sha256_file(build.report_path) if build.report_path.exists() else None
    file = ResultsFile.model_validate({
        "protocol_version": PROTOCOL_VERSION,
        "model": {"name": adapter.name, "kind": adapter.kind, "model_id": adapter.model_id, "revision": evaluation.revision,
                  "licence": adapter.licence},
        "dataset": {"build_dir": str(build.root), "build_report_sha256": report_sha},
        "normalizations": {n: NORMALIZATION_NOTES[n] for n in options.normalizations},
        "bootstrap": asdict(options.bootstrap) | {"unit": "item"},
        "skipped": [asdict(skip) for skip in evaluation.skipped],
        "tasks": tasks,
    })  # fmt: skip
    out.write_results(file)
    write_jsonl(out.samples_path, samples)
    logger.info("scored %d candidates, %d from the cache", evaluation.n_scored, evaluation.n_cached)
    return Results(file, out.root, evaluation.n_scored, evaluation.n_cached, tuple(evaluation.skipped))

