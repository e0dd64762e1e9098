"""Evaluation results as tables: pandas DataFrames, a CSV and markdown.

A report reads one or more result sets: a ``results.json`` written by :func:`~s2sbench.evaluation.runner.run.evaluate`, a
folder holding one, or a sweep folder (``trajectory.csv`` + ``checkpoints/<name>/results.json``), which adds its
trajectory and, to the tables, its last checkpoint. Every number keeps the unit results.json gives it (accuracies
and degradations are fractions 0..1); only the markdown prints percentages.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from s2sbench.evaluation.protocol.modes import split_mode
from s2sbench.evaluation.protocol.stats import NOT_ABOVE_CHANCE
from s2sbench.evaluation.results.folder import ResultsDir, ResultsFile
from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.core.manifest import DocumentError, atomic_write_text

#: how each accuracy rule decides a unit (the wording of evaluation/protocol/scoring.py)
RULE_NOTES = {
    "pairwise_strict": "the right candidate against each wrong one: correct iff loss(right) < loss(wrong), a tie "
    "counts wrong; accuracy = correct pairs / pairs (chance 0.5)",
    "pairwise_ties_right": "the right candidate against each wrong one: correct iff loss(right) <= loss(wrong), a tie "
    "counts right; accuracy = correct pairs / pairs, 3 pairs per 4-option question (chance 0.5)",
    "argmin": "multiple choice: correct iff the right candidate's loss is strictly the lowest; accuracy = correct "
    "questions / questions (chance 1/k)",
}
DEGRADATION_NOTE = (
    "degradation = accuracy(reference mode) - accuracy(mode) on the same items and model; its interval is a paired "
    "bootstrap over items; p is the exact two-sided McNemar test on the paired units; relative = degradation / "
    "(reference - chance), the share of above-chance skill lost, given only where the reference's 95% interval is "
    "above chance"
)


class ReportInputError(DataError):
    """A results path the report cannot read; the message names the path and what was expected there."""


@dataclass(frozen=True)
class Run:
    """One evaluation run: its results and what to call it in tables and plots."""

    label: str
    results: ResultsFile
    source: Path | None = None
    step: int | None = None  # the checkpoint's step when the run is the last checkpoint of a sweep


@dataclass(frozen=True)
class Sweep:
    """A checkpoint sweep: its trajectory rows (``sweep.TRAJECTORY_COLUMNS``, typed)."""

    source: Path
    rows: tuple[dict, ...]


@dataclass(frozen=True)
class ReportInputs:
    runs: tuple[Run, ...] = ()
    sweeps: tuple[Sweep, ...] = ()


def _read_results(path: Path) -> ResultsFile:
    try:
        return ResultsFile.read(path)
    except DocumentError as error:
        raise ReportInputError(f"{error} (expected a results.json written by `s2sbench eval`)") from None


def _typed_trajectory_row(row: dict, path: Path, line: int) -> dict:
    try:
        return {
            **row,
            "step": int(row["step"]),
            "n_units": int(row["n_units"]),
            **{name: float(row[name]) for name in ("accuracy", "ci_low", "ci_high", "mean_right_loss", "mean_wrong_loss")},
        }
    except (KeyError, TypeError, ValueError) as error:
        raise ReportInputError(f"{path}:{line}: bad trajectory row ({error})") from None


def _read_sweep(folder: ResultsDir) -> tuple[Sweep, Run]:
    table = folder.trajectory_path
    with open(table, newline="", encoding="utf-8") as handle:
        rows = tuple(_typed_trajectory_row(row, table, line) for line, row in enumerate(csv.DictReader(handle), 2))
    if not rows:
        raise ReportInputError(f"{table}: no rows")
    last = max(rows, key=lambda row: row["step"])
    checkpoint = folder.checkpoint(last["checkpoint"])
    if not checkpoint.results_path.is_file():
        raise ReportInputError(f"{table}: the last checkpoint '{last['checkpoint']}' has no {checkpoint.results_path}")
    results = _read_results(checkpoint.results_path)
    return Sweep(folder.root, rows), Run(f"{results.model.name} step {last['step']}", results, checkpoint.results_path, last["step"])


def load_inputs(paths: Sequence[str | Path]) -> ReportInputs:
    """Read results.json files, folders holding one, and sweep folders (see the module docstring)."""
    runs: list[Run] = []
    sweeps: list[Sweep] = []
    for raw in paths:
        path = Path(raw)
        folder = ResultsDir(path)
        if path.is_file():
            results = _read_results(path)
            runs.append(Run(results.model.name, results, path))
        elif folder.is_sweep():
            sweep, run = _read_sweep(folder)
            sweeps.append(sweep)
            runs.append(run)
        elif folder.results_path.is_file():
            results = _read_results(folder.results_path)
            runs.append(Run(results.model.name, results, folder.results_path))
        else:
            raise ReportInputError(
                f"{path}: expected a results.json, a folder with one, or a sweep folder with trajectory.csv "
                "(written by `s2sbench eval`)"
            )
    return ReportInputs(tuple(unique_labels(runs)), tuple(sweeps))


#: the longest label a run gets from its revision; the full model string is in the Runs table
MAX_LABEL_CHARS = 40


def short_revision(revision: str) -> str:
    """A model string in a few words: each part of a cascade (``a -> b``) without its notes in brackets, its hub
    organisation or folders, and its engine and number format (``faster-whisper:tiny.en (offline package):int8 ->
    HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF ...)`` is ``tiny.en -> SmolLM2-135M-Instruct``)."""
    parts = []
    for part in revision.split(" -> "):
        bare = re.sub(r"\s*\([^)]*\)", "", part).strip().rstrip("/")
        name = bare.rsplit("/", 1)[-1]
        fields = name.split(":")
        parts.append(fields[1] if len(fields) > 1 and fields[1] else fields[0])
    short = " -> ".join(parts)
    return short if len(short) <= MAX_LABEL_CHARS else short[: MAX_LABEL_CHARS - 1] + "…"


def unique_labels(runs: Sequence[Run]) -> list[Run]:
    """Runs whose labels collide are told apart briefly, so tables never merge two runs and a run's name stays
    short: by the folders their results are in when those differ (``cascade (en)``, ``cascade (zh)``), else by a
    short form of their revision (:func:`short_revision`), then by a number."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.label, []).append(run)
    out, seen = [], set()
    for run in runs:
        label, group = run.label, groups[run.label]
        if len(group) > 1:
            folders = [other.source.parent.name if other.source is not None else "" for other in group]
            if all(folders) and len(set(folders)) == len(folders):
                label = f"{label} ({run.source.parent.name})"
            else:
                label = f"{label} ({short_revision(run.results.model.revision)})"
        base, n = label, 2
        while label in seen:
            label, n = f"{base} #{n}", n + 1
        seen.add(label)
        out.append(Run(label, run.results, run.source, run.step))
    return out


def as_runs(results: object) -> list[Run]:
    """A :class:`~s2sbench.evaluation.runner.run.Results`, a :class:`ResultsFile` or its JSON, a :class:`Run`, or a
    sequence of them."""
    if isinstance(results, Run):
        return [results]
    if isinstance(results, Mapping):
        results = ResultsFile.model_validate(results)
    if isinstance(results, ResultsFile):
        return [Run(results.model.name, results)]
    file = getattr(results, "file", None)
    if isinstance(file, ResultsFile):
        return [Run(file.model.name, file, getattr(results, "out_dir", None))]
    if isinstance(results, Sequence) and not isinstance(results, str):
        return unique_labels([run for entry in results for run in as_runs(entry)])
    raise TypeError(f"cannot read results from {type(results).__name__}")


def accuracy_frame(runs: Sequence[Run]):
    """One row per run, task, mode, normalization and rule: the accuracy with its interval (fractions 0..1)."""
    import pandas as pd

    rows = []
    for run in runs:
        model = run.results.model
        for task, entry in run.results.tasks.items():
            for mode, by_norm in entry.modes.items():
                for normalization, summary in by_norm.items():
                    for rule in entry.rules:
                        a = summary.rule(rule)
                        rows.append({
                            "run": run.label, "model": model.name, "revision": model.revision, "task": task,
                            "language": entry.language, "mode": mode, "normalization": normalization,
                            "rule": rule, "accuracy": a.value, "ci_low": a.ci_low, "ci_high": a.ci_high,
                            "stderr": a.stderr, "n_units": a.n_units, "unit": a.unit, "chance": a.chance,
                            "mean_right_loss": summary.mean_right_loss, "mean_wrong_loss": summary.mean_wrong_loss,
                        })  # fmt: skip
    return pd.DataFrame(rows)


def degradation_frame(runs: Sequence[Run]):
    """One row per run, task, normalization, rule and (reference mode, mode): the gap with interval and p."""
    import pandas as pd

    rows = []
    for run in runs:
        for task, entry in run.results.tasks.items():
            for d in entry.degradation:
                rows.append({
                    "run": run.label, "model": run.results.model.name, "task": task,
                    "normalization": d.normalization, "rule": d.rule, "reference_mode": d.reference_mode,
                    "mode": d.mode, "reference_accuracy": d.reference_accuracy, "accuracy": d.accuracy,
                    "chance": d.chance, "degradation": d.absolute.value, "ci_low": d.absolute.ci_low,
                    "ci_high": d.absolute.ci_high, "relative": d.relative,
                    "p_value": d.mcnemar.p_value, "paired_units": d.mcnemar.n,
                    "only_reference_right": d.mcnemar.only_reference, "only_mode_right": d.mcnemar.only_other,
                })  # fmt: skip
    return pd.DataFrame(rows)


def voice_frame(runs: Sequence[Run]):
    """One row per run, task, mode, normalization, rule and voice (only modes with speech have voices)."""
    import pandas as pd

    rows = []
    for run in runs:
        for task, entry in run.results.tasks.items():
            for mode, by_norm in entry.modes.items():
                for normalization, summary in by_norm.items():
                    for rule in entry.rules:
                        for voice, value in (summary.rule(rule).per_voice or {}).items():
                            rows.append({"run": run.label, "task": task, "mode": mode, "normalization": normalization,
                                         "rule": rule, "voice": voice, "accuracy": value})  # fmt: skip
    return pd.DataFrame(rows, columns=["run", "task", "mode", "normalization", "rule", "voice", "accuracy"])


def _gap_name(reference_mode: str, mode: str) -> str:
    return f"{reference_mode} vs {mode}"


def summary_frame(runs: Sequence[Run], normalization: str = "token"):
    """The summary table: one row per run, task and rule; per mode its accuracy, interval and units; per gap
    (``T->T vs S->T``, ...) the degradation, its interval, the relative loss and the McNemar p."""
    import pandas as pd

    accuracies = accuracy_frame(runs)
    gaps = degradation_frame(runs)
    if accuracies.empty:
        return pd.DataFrame(columns=["run", "task", "language", "rule"])
    accuracies = accuracies[accuracies["normalization"] == normalization]
    if not gaps.empty:
        gaps = gaps[gaps["normalization"] == normalization]
    rows = []
    for (run, task, rule), group in accuracies.groupby(["run", "task", "rule"], sort=False):
        row = {"run": run, "task": task, "language": group["language"].iloc[0], "rule": rule}
        for entry in group.itertuples():
            row[f"accuracy[{entry.mode}]"] = entry.accuracy
            row[f"ci_low[{entry.mode}]"] = entry.ci_low
            row[f"ci_high[{entry.mode}]"] = entry.ci_high
            row[f"units[{entry.mode}]"] = entry.n_units
        if not gaps.empty:
            mine = gaps[(gaps["run"] == run) & (gaps["task"] == task) & (gaps["rule"] == rule)]
            for gap in mine.itertuples():
                name = _gap_name(gap.reference_mode, gap.mode)
                row[f"degradation[{name}]"] = gap.degradation
                row[f"degradation_ci_low[{name}]"] = gap.ci_low
                row[f"degradation_ci_high[{name}]"] = gap.ci_high
                row[f"relative[{name}]"] = gap.relative
                row[f"p_value[{name}]"] = gap.p_value
        rows.append(row)
    return pd.DataFrame(rows)


def write_csv(frame, path: str | Path) -> Path:
    """Write a frame as UTF-8 CSV, atomically."""
    path = Path(path)
    atomic_write_text(path, frame.to_csv(index=False, lineterminator="\n"))
    return path


def percent(value: float | None, signed: bool = False) -> str:
    if value is None or value != value:  # None or NaN
        return "n/a"
    return f"{value * 100:+.1f}" if signed else f"{value * 100:.1f}"


def relative_text(relative: float | None) -> str:
    """The relative degradation; None (the reference's interval is not above chance) says so."""
    text = percent(relative)
    return f"{text}%" if text != "n/a" else f"relative {NOT_ABOVE_CHANCE}"


def p_value_text(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def summary_rows(runs: Sequence[Run], normalization: str = "token") -> tuple[list[str], list[list[str]]]:
    """The summary as display text (percent, intervals in brackets): a header and rows, for markdown and HTML."""
    modes: list[str] = []
    gaps: list[str] = []
    for run in runs:
        for entry in run.results.tasks.values():
            modes += [m for m in entry.modes if m not in modes and split_mode(m)[1] is None]
            for d in entry.degradation:
                name = _gap_name(d.reference_mode, d.mode)
                if name not in gaps and split_mode(d.mode)[1] is None:  # conditions: condition_rows
                    gaps.append(name)
    header = ["run", "task", "rule", *(f"{m} % [95% CI] (n)" for m in modes)]
    header += [f"{g}: degradation pts [95% CI], relative, McNemar p" for g in gaps]
    frame = summary_frame(runs, normalization)
    rows = []
    for record in frame.to_dict("records"):
        row = [record["run"], record["task"], record["rule"]]
        for mode in modes:
            if f"accuracy[{mode}]" not in record or record[f"accuracy[{mode}]"] != record[f"accuracy[{mode}]"]:
                row.append("-")
                continue
            row.append(f"{percent(record[f'accuracy[{mode}]'])} [{percent(record[f'ci_low[{mode}]'])}, "
                       f"{percent(record[f'ci_high[{mode}]'])}] ({int(record[f'units[{mode}]'])})")  # fmt: skip
        for gap in gaps:
            value = record.get(f"degradation[{gap}]")
            if value is None or value != value:
                row.append("-")
                continue
            row.append(f"{percent(value, True)} [{percent(record[f'degradation_ci_low[{gap}]'], True)}, "
                       f"{percent(record[f'degradation_ci_high[{gap}]'], True)}], "
                       f"{relative_text(record[f'relative[{gap}]'])}, p={p_value_text(record[f'p_value[{gap}]'])}")  # fmt: skip
        rows.append(row)
    return header, rows


CONDITION_HEADER = ["run", "task", "rule", "condition", "parameters", "mode", "accuracy % [95% CI] (n)",
                    "vs text context: degradation pts [95% CI], McNemar p",
                    "vs clean speech: degradation pts [95% CI], McNemar p", "ASR error rate % clean -> condition"]


def _accuracy_text(accuracy) -> str:
    return f"{percent(accuracy.value)} [{percent(accuracy.ci_low)}, {percent(accuracy.ci_high)}] ({accuracy.n_units})"


def _gap_text(gap) -> str:
    if gap is None:
        return "-"
    return (f"{percent(gap.absolute.value, True)} [{percent(gap.absolute.ci_low, True)}, "
            f"{percent(gap.absolute.ci_high, True)}], p={p_value_text(gap.mcnemar.p_value)}")  # fmt: skip


def condition_rows(runs: Sequence[Run], normalization: str = "token") -> list[list[str]]:
    """One row per run, task, rule, acoustic condition and mode heard under it (``CONDITION_HEADER``): the accuracy
    with its interval, the degradation against the text context and against the clean speech, and what the gate's
    ASR made of the clips clean and under the condition."""
    rows = []
    for run in runs:
        for task, entry in run.results.tasks.items():
            for mode, by_norm in entry.modes.items():
                base, condition = split_mode(mode)
                if condition is None or normalization not in by_norm:
                    continue
                about = entry.conditions.get(condition)
                parameters = ", ".join(f"{k}={v}" for k, v in about.parameters.items()) if about else ""
                asr = (f"{percent(about.clean_asr_error_rate)} -> {percent(about.asr_error_rate)} ({about.asr_metric})"
                       if about and about.asr_error_rate is not None else "n/a")  # fmt: skip
                for rule in entry.rules:
                    accuracy = by_norm[normalization].rule(rule)
                    gaps = {d.reference_mode: d for d in entry.degradation
                            if d.mode == mode and d.rule == rule and d.normalization == normalization}  # fmt: skip
                    text_reference = next((ref for ref in gaps if ref[0] == "T"), None)
                    rows.append([run.label, task, rule, condition, parameters, base, _accuracy_text(accuracy),
                                 _gap_text(gaps.get(text_reference)), _gap_text(gaps.get(base)), asr])  # fmt: skip
    return rows


def source_rows(runs: Sequence[Run], normalization: str = "token") -> tuple[list[str], list[list[str]]]:
    """Per run, task (of several source files) and source file (a CMMLU subject), under the task's rule: each clean
    mode's accuracy with its interval and units, and each degradation with its interval and McNemar p."""
    results = [result for run in runs for entry in run.results.tasks.values() for result in entry.by_source.values()]
    # in order of first appearance, each once (a result has one degradation per pair, rule and normalization)
    modes = list(dict.fromkeys(mode for result in results for mode in result.modes))
    gaps = list(dict.fromkeys((d.reference_mode, d.mode) for result in results for d in result.degradation))
    header = ["run", "task", "source", "items", *(f"{mode} % [95% CI] (n)" for mode in modes),
              *(f"{_gap_name(*gap)}: degradation pts [95% CI], McNemar p" for gap in gaps)]
    rows = []
    for run in runs:
        for task, entry in run.results.tasks.items():
            rule = entry.rules[0]
            for source, result in entry.by_source.items():
                row = [run.label, task, source, str(result.n_items)]
                for mode in modes:
                    found = result.modes.get(mode, {}).get(normalization)
                    row.append(_accuracy_text(found.rule(rule)) if found else "-")
                for gap in gaps:
                    found = next((d for d in result.degradation if (d.reference_mode, d.mode) == gap
                                  and d.rule == rule and d.normalization == normalization), None)  # fmt: skip
                    row.append(_gap_text(found))
                rows.append(row)
    return header, rows


def results_markdown(results: object, normalization: str = "token") -> str:
    """The summary of one or more runs as markdown (for a Prefect artifact or a dataset card): per run and task,
    accuracy per mode with its 95% interval and units, the degradations with interval, relative loss and McNemar p,
    then what was skipped and how the numbers were computed."""
    runs = as_runs(results)
    lines = ["## s2sbench results", ""]
    for run in runs:
        model = run.results.model
        licence = f"; licence: {model.licence}" if model.licence else ""
        device = f"; on {model.device}" if model.device else ""
        lines.append(f"- **{run.label}**: `{model.model_id}`"
                     + (f" revision `{model.revision}`" if model.revision != model.model_id else "") + device + licence)
    header, rows = summary_rows(runs, normalization)
    lines += ["", f"Accuracy in % ({normalization}-normalized scores); degradation in points.", ""]
    lines += markdown_table(header, rows)
    conditions = condition_rows(runs, normalization)
    if conditions:
        lines += ["", "### Acoustic conditions", "", "The same rows' clips under each condition of the task file; "
                  "degradation against the text context and against the clean clips, on the same items.", ""]
        lines += markdown_table(CONDITION_HEADER, conditions)
    header, rows = source_rows(runs, normalization)
    if rows:
        lines += ["", "### Per source file", "", "A task whose items come from several source files (sCMMLU: a CMMLU "
                  "subject each), under its rule, on each file's items alone.", ""]
        lines += markdown_table(header, rows)
    skipped = [(run.label, s) for run in runs for s in run.results.skipped]
    if skipped:
        lines += ["", "Not scored:"]
        lines += [f"- {label}: {s.task} {s.mode}: {s.reason}" for label, s in skipped]
    rules = sorted({rule for run in runs for entry in run.results.tasks.values() for rule in entry.rules})
    how = "; ".join(f"`{rule}`: {RULE_NOTES.get(rule, rule)}" for rule in rules)
    lines += ["", f"How: {how}. {DEGRADATION_NOTE}."]
    return "\n".join(lines) + "\n"
