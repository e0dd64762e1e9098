"""Evaluate one model on a dataset: score every candidate in every mode asked for, then report.

:func:`evaluate` reads the data where it is (a build, a Hub dataset, a saved folder or a ``datasets`` object:
:mod:`~s2sbench.evaluation.data.sources`), keeps the selected tasks, voices and items
(:mod:`~s2sbench.evaluation.data.selection`), asks the adapter which of the modes it can score per task (a mode it
cannot score for a task's language is recorded with the reason; a mode it never scores, or that no task can be
scored in, is an error), scores the candidates it has not scored before, and writes ``results.json``,
``samples.jsonl``, the lm-eval-style results and tables, and the original code's ``original/`` files.

Scores are cached one candidate a line in a resumable JSONL keyed by (model name and revision, task, task version,
mode, template, item, voice, candidate, its texts and the SHA-256 of the audio each mode hears): a killed run
resumes where it stopped, a rerun scores nothing, a checkpoint sweep shares one cache, and another build (other
audio, other text) evaluated into the same folder is scored afresh. Audio is decoded only for candidates that
still need scoring. Rows are read typed and validated (:class:`~s2sbench.pipeline.buildfolder.dataset.DatasetRow`); the
outputs go through :class:`~s2sbench.evaluation.results.folder.ResultsDir`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path


from s2sbench.evaluation.models.base import Audio, ModelAdapter
from s2sbench.evaluation.protocol.modes import (
    EvalItem,
    ModeError,
    build_requests,
    context_is_speech,
    continuation_is_speech,
    requested_modes,
    split_mode,
    template_for,
    under_condition,
)
from s2sbench.evaluation.results.aggregate import (OriginalSets, sample_lines, summarize_by_source, summarize_task, write_jsonl,
                                                  write_original)
from s2sbench.evaluation.results.tables import write_tables
from s2sbench.evaluation.results.folder import RESULTS_FILE, ResultsDir, ResultsFile
from s2sbench.evaluation.protocol.scoring import NORMALIZATIONS, Score, rules_for
from s2sbench.evaluation.data.selection import Selection, SelectedRows, TaskRows, select_rows
from s2sbench.evaluation.data.sources import EvalDataset, open_dataset
from s2sbench.evaluation.protocol.stats import BootstrapOptions
from s2sbench.pipeline.speech.audio import decode_audio
from s2sbench.pipeline.buildfolder.dataset import AudioValue, DatasetError, DatasetRow, iter_rows
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.text.languages import base_language
from s2sbench.pipeline.core.manifest import ResumableJsonlWriter, iter_records, sha256_file, stable_hash
from s2sbench.pipeline.run.progress import DEFAULT_INTERVAL_S, Progress, ProgressReporter, ProgressSnapshot
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError
from s2sbench.pipeline.catalog.tasks import load_task

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
    step: int = 0  # the checkpoint's step, in the original results' folder name and summary line
    checkpoint_index: int = 0  # its place in a sweep, the other number in that folder name
    checkpoint_label: str | None = None  # the rest of that name (default: the adapter's name)
    model_args: Mapping[str, object] | None = None  # the options the adapter was built with, recorded in results.json
    tasks: Mapping[str, TaskConfig] | None = None  # task configs by name; default: the build's, else the registry's
    select_tasks: tuple[str, ...] = ()  # evaluate only these tasks (empty: all)
    voices: tuple[str, ...] = ()  # only the rows of these voices (empty: all)
    limit: int | None = None  # only the first N items of each task
    split: str | None = None  # each config's split to evaluate (default: test, else its only split)
    results_file: str = RESULTS_FILE
    progress_interval_s: float = DEFAULT_INTERVAL_S  # between progress lines on the s2sbench.progress log

    @property
    def selection(self) -> Selection:
        return Selection(tuple(self.select_tasks), tuple(self.voices), self.limit)


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


def _decode(value: AudioValue | None, where: str, heard: dict[str, str] | None = None) -> Audio:
    if value is None or not (value.wav or value.path):
        raise DatasetError(f"{where}: no audio")
    samples, rate = decode_audio(value.wav or value.path, where)
    return Audio(samples=samples, sample_rate_hz=rate, heard=heard or {})


Heard = dict[tuple[str, str, str, str | None], dict[str, str]]


def gate_transcripts(data: EvalDataset) -> Heard:
    """(task, item id, voice, condition) -> {ASR model id: transcript} of each context clip the build's gate passed,
    and of each one the gate's ASR heard under an acoustic condition, for an adapter that runs the same ASR model
    (the cascade); none for data that is not a build folder."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.core.records import Role

    if data.kind != "build":
        return {}
    heard: Heard = {}
    build = BuildDir(data.location)
    for row in build.read_manifest():
        check = row.checks.get(Role.context())
        if check is not None and check.status == "passed" and check.transcript:
            heard[(row.item.task, row.item.id, row.voice, None)] = {check.asr_model: check.transcript}
    for entry in build.read_conditioned():
        check = entry.checks.get(Role.context())
        if check is not None and check.error_rate is not None:  # transcribed (a silent clip may not be)
            heard[(entry.task, entry.item_id, entry.voice, entry.condition)] = {check.asr_model: check.transcript}
    return heard


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


def json_values(options: Mapping[str, object]) -> dict:
    """``options`` as JSON values (an object that is not one, such as an adapter passed in, as its text)."""
    import json

    return json.loads(json.dumps(dict(options), default=str))


def task_configs(names: Mapping[str, TaskRows], data: EvalDataset,
                 given: Mapping[str, TaskConfig] | None) -> dict[str, TaskConfig]:
    """Each selected task's config: given by the caller, else recorded in the build report, else the registry's. A
    given one (``--task-file``) must be a task of the data, in its language: one that matches nothing would
    silently not apply."""
    report = data.report
    in_data = {part.config.partition("--")[0] for part in data.parts} | set(report.tasks if report is not None else ())
    for name, config in (given or {}).items():
        where = config.path or f"task '{name}'"
        if name not in names and name not in in_data:
            raise ConfigError(f"{where}: key 'name': task '{name}' is not in the data (its tasks: "
                              f"{', '.join(sorted(in_data | set(names)))}); pass the task file the build was made from")
        if name in names and base_language(config.language) != base_language(names[name].language):
            raise ConfigError(f"{where}: key 'language': '{config.language}', but the data's task '{name}' is in "
                              f"'{names[name].language}'; pass the task file the build was made from")
    configs = {}
    for name in names:
        if name in (given or {}):
            configs[name] = given[name]
            continue
        recorded = report.task_config(name) if report is not None else None
        if recorded is not None:
            configs[name] = recorded
            continue
        try:
            configs[name] = load_task(name)
        except TaskConfigError as error:
            raise TaskConfigError(f"{error} (a task outside the registry: pass its YAML with --task-file)") from None
    return configs


def check_speech_continuations(modes: tuple[str, ...], tasks: Mapping[str, TaskRows], explicit: bool) -> None:
    """S->S and T->S score spoken candidates: asked for by name, some selected task must have them."""
    if explicit and not any(entry.candidate_audio for entry in tasks.values()):
        wanted = [mode for mode in modes if continuation_is_speech(mode)]
        if wanted:
            raise ModeError(f"{', '.join(wanted)} score spoken candidates, and no selected task has them (a task speaks "
                            "its candidates with `speak: [context, candidates]`)")  # fmt: skip


class _Evaluation:
    def __init__(self, adapter: ModelAdapter, modes: tuple[str, ...], cache: ScoreCache, options: EvalOptions,
                 configs: dict[str, TaskConfig], selected: SelectedRows,
                 heard: Heard | None = None):  # fmt: skip
        self.adapter, self.modes, self.cache, self.options = adapter, modes, cache, options
        self.heard = heard or {}  # see gate_transcripts
        # (task, condition) -> the gate ASR's error rates of the scored rows' context clips, and its metric
        self.asr_rates: dict[tuple[str, str | None], list[float]] = {}
        self.asr_metric: dict[tuple[str, str | None], str] = {}
        self.revision = options.revision or adapter.model_id
        self.skipped: list[Skipped] = []
        self.n_scored = self.n_cached = 0
        self.rows_seen: dict[tuple[str, str, str, str | None], str] = {}  # (task, item, voice, condition) -> where read
        self.tasks = {name: self._task(name, configs[name], entry) for name, entry in selected.tasks.items()}

    def _task(self, name: str, config: TaskConfig, rows: TaskRows) -> _TaskRun:
        """The run of a task: which of the modes asked for it can score."""
        active = []
        for mode in self.modes:
            ok, reason = self.adapter.supports(mode, rows.language)
            if ok and continuation_is_speech(mode) and not rows.candidate_audio:
                ok, reason = False, "the data has no candidate audio (task `speak` lacks 'candidates')"
            if ok:
                active.append(mode)
            else:
                self.skipped.append(Skipped(name, mode, reason))
        return _TaskRun(config, rows.language, tuple(active), {mode: {} for mode in active})

    def check_scorable(self, explicit: bool) -> None:
        """A mode asked for by name that no task can be scored in, or nothing to score at all, is an error."""
        reasons = "; ".join(f"{s.task} {s.mode}: {s.reason}" for s in self.skipped)
        unscored = [mode for mode in self.modes if not any(mode in run.modes for run in self.tasks.values())]
        if explicit and unscored:
            raise ModeError(f"no selected task can be scored in {', '.join(unscored)} ({reasons})")
        if not any(run.modes for run in self.tasks.values()):
            raise ModeError(f"nothing to score: {reasons}")

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
            context_audio = _decode(row.context_audio, f"{where}: field 'context_audio'",
                                    self.heard.get((row.task, row.item_id, row.voice, split_mode(mode)[1])))
        if continuation_is_speech(mode):
            candidate_audio = tuple(_decode(c, f"{where}: field 'candidate_audio[{k}]'") for k, c in enumerate(row.candidate_audio))
        return EvalItem(
            item_id=row.item_id, task=row.task, language=row.language, voice=row.voice, context=row.context,
            candidates=tuple(row.candidates), right=row.label, context_audio=context_audio, candidate_audio=candidate_audio,
        )  # fmt: skip

    def run_chunk(self, rows: Sequence[DatasetRow], where_of: Sequence[str], condition: str | None = None) -> bool:
        """Score the rows' requests that neither the cache nor this run holds; whether there were any (rows read back
        from the cache, or whose text-only scores another voice's row gave, cost nothing). Rows of an acoustic
        ``condition`` are scored in the modes that hear the context, each named for the condition (``S->T@phone``)."""
        pending: dict[str, list[tuple[_TaskRun, DatasetRow, str, list[str], str]]] = {}
        queued: set[str] = set()
        for row, where in zip(rows, where_of):
            first = self.rows_seen.setdefault((row.task, row.item_id, row.voice, condition), where)
            if first != where:
                raise DatasetError(f"{where}: item '{row.item_id}' with voice '{row.voice}' repeats {first}")
            run = self.tasks[row.task]
            if row.context_error_rate is not None:
                self.asr_rates.setdefault((row.task, condition), []).append(row.context_error_rate)
                self.asr_metric[(row.task, condition)] = row.context_metric
            audio = _AudioHashes(row)
            modes = run.modes if condition is None else [under_condition(m, condition) for m in run.modes if context_is_speech(m)]
            for mode in modes:
                run.scores.setdefault(mode, {})
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
        return bool(pending)

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
    dataset: object,
    adapter: ModelAdapter,
    modes: Sequence[str] | None,
    out_dir: str | Path,
    options: EvalOptions = EvalOptions(),
    on_progress: Sequence[Callable[[ProgressSnapshot], None]] = (),
) -> Results:
    """Score ``adapter`` on ``dataset`` (a build folder, a Hub id, a saved folder, a ``datasets`` object or an opened
    :class:`~s2sbench.evaluation.data.sources.EvalDataset`) in each of ``modes`` (None: every mode the adapter
    declares); write results.json, samples.jsonl, the tables and original/ into ``out_dir``. Progress (rows scored
    per config, rows per minute, an ETA) goes to the ``s2sbench.progress`` log every ``options.progress_interval_s``
    and to each ``on_progress`` listener after every chunk."""
    explicit = modes is not None
    modes = requested_modes(adapter.name, adapter.modes, modes)
    for normalization in options.normalizations:
        if normalization not in NORMALIZATIONS:
            raise ConfigError(f"unknown normalization '{normalization}' (known: {', '.join(NORMALIZATIONS)})")
    data = open_dataset(dataset, split=options.split, tasks=options.select_tasks, voices=options.voices)
    selected = select_rows(data, options.selection)
    check_speech_continuations(modes, selected.tasks, explicit)
    configs = task_configs(selected.tasks, data, options.tasks)
    out = ResultsDir(out_dir, options.results_file)
    with out.lock():
        cache = ScoreCache(Path(options.cache_path or out.score_cache_path))
        try:
            heard = gate_transcripts(data) if any(context_is_speech(mode) for mode in modes) else {}
            evaluation = _Evaluation(adapter, modes, cache, options, configs, selected, heard)
            evaluation.check_scorable(explicit)
            progress = Progress(f"score {options.checkpoint_label or adapter.name}", _part_sizes(selected))
            reporter = ProgressReporter(progress, options.progress_interval_s, list(on_progress))
            for chosen in selected.parts:
                rows, where = chosen.part.rows.select(chosen.indices), chosen.part.where
                for start in range(0, len(rows), options.chunk_rows):
                    chunk = list(iter_rows(rows, where, start, start + options.chunk_rows, options.chunk_rows))
                    scored = evaluation.run_chunk([row for _, row in chunk], [f"{where} row {chosen.indices[n]}" for n, _ in chunk],
                                                  chosen.condition)  # fmt: skip
                    (progress.advance if scored else progress.found_done)(_part_name(chosen), len(chunk))
                    reporter.tick()
            reporter.close()
        finally:
            cache.close()
        return _report(data, selected, out, adapter, evaluation, options)


def _part_name(chosen) -> str:
    return f"{chosen.part.config}/{chosen.part.split}"


def _part_sizes(selected: SelectedRows) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for chosen in selected.parts:
        sizes[_part_name(chosen)] = sizes.get(_part_name(chosen), 0) + len(chosen.indices)
    return sizes


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _condition_entries(evaluation: _Evaluation, task: str, config: TaskConfig, by_mode: Mapping[str, list]) -> dict:
    """Per acoustic condition scored: its parameters (from the task file) and what the gate's ASR heard of the
    scored rows' context clips under it and clean (how hard the condition is for ASR, beside the model's accuracy)."""
    declared = {condition.name: condition.parameters() for condition in config.conditions}
    scored = dict.fromkeys(split_mode(mode)[1] for mode in by_mode if split_mode(mode)[1] is not None)
    clean = _mean(evaluation.asr_rates.get((task, None), []))
    return {condition: {"parameters": declared.get(condition, {}),
                        "asr_metric": evaluation.asr_metric.get((task, condition), "none"),
                        "asr_error_rate": _mean(evaluation.asr_rates.get((task, condition), [])),
                        "clean_asr_error_rate": clean}
            for condition in scored}  # fmt: skip


def _report(data: EvalDataset, selected: SelectedRows, out: ResultsDir, adapter: ModelAdapter, evaluation: _Evaluation,
            options: EvalOptions) -> Results:  # fmt: skip
    tasks: dict[str, dict] = {}
    samples: list[dict] = []
    label = options.checkpoint_label or adapter.name
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
            "conditions": _condition_entries(evaluation, name, run.config, by_mode),
            "by_source": summarize_by_source({mode: scores for mode, scores in by_mode.items() if split_mode(mode)[1] is None},
                                             selected.tasks[name].sources, rules, options.normalizations,
                                             options.bootstrap),
        }
        sets = OriginalSets(tuple(selected.tasks[name].voices), selected.positions)
        for mode, scores in by_mode.items():
            samples.extend(sample_lines(scores, rules[0], options.normalizations))
            if split_mode(mode)[1] is None:  # the original layout has clean speech only
                write_original(out, mode, scores, sets, options.step, options.checkpoint_index, label)
    file = ResultsFile.model_validate({
        "protocol_version": PROTOCOL_VERSION,
        "model": {"name": adapter.name, "kind": adapter.kind, "model_id": adapter.model_id, "revision": evaluation.revision,
                  "licence": adapter.licence, "args": json_values(options.model_args or {}), "device": adapter.runs_on()},
        "dataset": {"kind": data.kind, "location": data.location, "revision": data.revision,
                    "build_report_sha256": data.report_sha256,
                    "configs": [f"{chosen.part.config}/{chosen.part.split}" for chosen in selected.parts],
                    "selection": {"tasks": list(options.select_tasks), "voices": list(options.voices),
                                  "limit": options.limit, "split": options.split}},
        "normalizations": {n: NORMALIZATION_NOTES[n] for n in options.normalizations},
        "bootstrap": asdict(options.bootstrap) | {"unit": "item"},
        "skipped": [asdict(skip) for skip in evaluation.skipped],
        "tasks": tasks,
    })  # fmt: skip
    out.write_results(file)
    write_jsonl(out.samples_path, samples)
    write_tables(out, file)
    logger.info("scored %d candidates, %d from the cache", evaluation.n_scored, evaluation.n_cached)
    return Results(file, out.root, evaluation.n_scored, evaluation.n_cached, tuple(evaluation.skipped))
