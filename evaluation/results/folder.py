"""An evaluation's folder and its ``results.json`` as typed records.

Everything that reads or writes evaluation results (the run, checkpoint sweeps, the report) goes through
:class:`ResultsDir` and :class:`ResultsFile`. The layout of ``s2sbench eval --out DIR``::

    results.json                     ResultsFile (another name with --out FILE.json)
    samples.jsonl                    one line per scored candidate
    score_cache.jsonl                Score, keyed by model, mode, template, texts and audio hashes (resumable)
    results_lm_eval.json             the results in lm-evaluation-harness's layout (config, versions, metrics)
    results.md  results.csv          the summary table
    original/<mode>/<set>/           the original code's results_summary.txt and ckpt_<n>_<step>_<model>/result.jsonl
    .lock                            held while a run writes the folder
    checkpoints/<name>/              a sweep: one such folder per checkpoint,
    trajectory.csv  plots/<task>.png   and the trajectory across them
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from s2sbench.pipeline.buildfolder.builddir import exclusive_lock
from s2sbench.pipeline.core.manifest import parse_versioned, read_json, write_json
from s2sbench.pipeline.core.records import SCHEMA_VERSION, Record, safe_component

RESULTS_FILE = "results.json"


class VoiceSpread(Record):
    range: float
    std: float
    best_voice: str
    worst_voice: str


class Accuracy(Record):
    """An accuracy under one rule: the value with its bootstrap interval and standard error, the units it counts,
    per voice."""

    value: float
    ci_low: float
    ci_high: float
    stderr: float
    n_units: int
    unit: Literal["pair", "question"]
    chance: float
    per_voice: dict[str, float] | None = None  # modes with speech
    voice_spread: VoiceSpread | None = None  # more than one voice


class NormalizationSummary(Record):
    """The accuracies of a mode under one score normalization, by rule, and the mean losses."""

    pairwise_strict: Accuracy | None = None
    pairwise_ties_right: Accuracy | None = None
    argmin: Accuracy | None = None
    mean_right_loss: float
    mean_wrong_loss: float

    def rule(self, name: str) -> Accuracy:
        accuracy = getattr(self, name, None) if name in RULE_FIELDS else None
        if accuracy is None:
            raise KeyError(f"no accuracy under rule '{name}'")
        return accuracy


RULE_FIELDS = ("pairwise_strict", "pairwise_ties_right", "argmin")


class Interval(Record):
    value: float
    ci_low: float
    ci_high: float
    stderr: float


class McNemarTest(Record):
    n: int
    only_reference: int
    only_other: int
    p_value: float


class DegradationEntry(Record):
    normalization: str
    rule: str
    reference_mode: str
    mode: str
    reference_accuracy: float
    accuracy: float
    chance: float
    absolute: Interval
    relative: float | None = None  # None when the reference is not above chance (see relative_note)
    relative_note: str
    mcnemar: McNemarTest


class ConditionResult(Record):
    """An acoustic condition of a task as scored: its parameters and the gate ASR's mean error rate on the scored
    rows' context clips under it and clean (none for data without transcripts)."""

    parameters: dict
    asr_metric: str
    asr_error_rate: float | None
    clean_asr_error_rate: float | None


class SourceResults(Record):
    """A task's summary over the items of one of its source files (a CMMLU subject is one file)."""

    n_items: int
    modes: dict[str, dict[str, NormalizationSummary]]
    degradation: list[DegradationEntry]


class TaskResults(Record):
    version: int
    language: str
    rules: list[str]  # the task's rule first
    templates: dict[str, str]  # mode -> template
    n_items: int
    n_candidates: int
    modes: dict[str, dict[str, NormalizationSummary]]  # mode -> normalization -> summary ("S->T@phone": a condition)
    degradation: list[DegradationEntry]
    conditions: dict[str, ConditionResult] = {}  # acoustic condition -> its parameters and the ASR's error rates
    by_source: dict[str, SourceResults] = {}  # source file's stem -> its items' summary (tasks of several files)

    def accuracy(self, mode: str, normalization: str = "token", rule: str | None = None) -> Accuracy:
        return self.modes[mode][normalization].rule(rule or self.rules[0])


class ModelInfo(Record):
    name: str
    kind: str
    model_id: str
    revision: str
    licence: str = ""  # of the weights, as the adapter records it ("" when not known)
    args: dict[str, Any] = Field(default_factory=dict)  # the options it was built with (--model-arg), when known
    device: str = ""  # where it computed (cpu, cuda, or per part for a cascade); "" in results of older s2sbench


class SelectionInfo(Record):
    tasks: list[str] = Field(default_factory=list)  # empty: every task
    voices: list[str] = Field(default_factory=list)  # empty: every voice
    limit: int | None = None  # the first N items of each task
    split: str | None = None  # asked for (None: each config's test split, else its only one)


class DatasetInfo(Record):
    """Where the evaluated data was read: a build folder, a Hub dataset at a commit, a folder or an object."""

    kind: Literal["build", "hub", "folder", "object"]
    location: str
    revision: str | None = None  # the Hub commit
    build_report_sha256: str | None = None
    configs: list[str] = Field(default_factory=list)  # "<config>/<split>" of every part read
    selection: SelectionInfo = Field(default_factory=SelectionInfo)


class SkippedMode(Record):
    task: str
    mode: str
    reason: str


class BootstrapInfo(Record):
    n_resamples: int
    seed: int
    confidence: float
    unit: str


class ResultsFile(Record):
    """``results.json``: one model on one build, per task, mode, normalization and rule, and the degradations."""

    schema_version: int = SCHEMA_VERSION
    protocol_version: int
    model: ModelInfo
    dataset: DatasetInfo
    normalizations: dict[str, str]  # name -> what it divides by
    bootstrap: BootstrapInfo
    skipped: list[SkippedMode] = Field(default_factory=list)
    tasks: dict[str, TaskResults]

    def as_json(self) -> dict:
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def read(cls, path: str | Path) -> "ResultsFile":
        """A results file, validated; the error names the file and the field (and says when it is not one)."""
        path = Path(path)
        return parse_versioned(cls, read_json(path), path)


class ResultsDir:
    """The output folder of one evaluation (or of a sweep, whose checkpoints are folders of their own)."""

    def __init__(self, root: str | Path, results_file: str = RESULTS_FILE):
        self.root = Path(root)
        self.results_path = self.root / results_file
        self.samples_path = self.root / "samples.jsonl"
        self.lm_eval_path = self.root / "results_lm_eval.json"
        self.markdown_path = self.root / "results.md"
        self.csv_path = self.root / "results.csv"
        self.score_cache_path = self.root / "score_cache.jsonl"
        self.original_dir = self.root / "original"
        self.trajectory_path = self.root / "trajectory.csv"
        self.plots_dir = self.root / "plots"
        self.checkpoints_dir = self.root / "checkpoints"
        self.lock_path = self.root / ".lock"

    def lock(self):
        """Exclusive access for a run writing this folder (two at once would interleave the score cache)."""
        return exclusive_lock(self.lock_path, f"results folder {self.root}")

    def original_folder(self, mode_slug: str, set_name: str) -> Path:
        """``original/<mode>/<set>/``: the original code's ``--result_dir`` of one set (a task spoken by one voice)."""
        return self.original_dir / mode_slug / safe_component(set_name, "original set")

    def checkpoint(self, name: str) -> "ResultsDir":
        return ResultsDir(self.checkpoints_dir / safe_component(name, "checkpoint name"))

    def write_results(self, results: ResultsFile) -> None:
        write_json(self.results_path, results.as_json())

    def read_results(self) -> ResultsFile:
        return ResultsFile.read(self.results_path)

    def is_sweep(self) -> bool:
        return self.trajectory_path.is_file()
