"""Checkpoint sweeps: evaluate each saved checkpoint of a training run and follow the numbers against the step.

This is the use the S2SBench paper made of the benchmark: accuracy per mode (with its interval) and the mean loss
of the right and the wrong candidates, plotted against the training step. Every checkpoint is evaluated by
:func:`~s2sbench.evaluation.runner.run.evaluate` into ``<out>/checkpoints/<name>/`` with its score cache there, keyed by
the checkpoint's revision (its path and a fingerprint of its files), so a rerun scores nothing new.
"""

from __future__ import annotations

import csv
import glob
import io
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from s2sbench.evaluation.models.base import ModelAdapter
from s2sbench.evaluation.results.folder import ResultsDir, ResultsFile
from s2sbench.evaluation.runner.run import EvalOptions, Results, evaluate
from s2sbench.evaluation.data.sources import EvalDataset, open_dataset
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import atomic_write_text, stable_hash
from s2sbench.pipeline.publish.original_format import RESULT_FILE, SUMMARY_FILE

#: the last run of digits in a checkpoint's name: ckpt_1200 -> 1200, step-300.bin -> 300
DEFAULT_STEP_PATTERN = r"(\d+)(?!.*\d)"
TRAJECTORY_COLUMNS = (
    "step", "checkpoint", "task", "mode", "normalization", "rule", "accuracy", "ci_low", "ci_high", "n_units",
    "chance", "mean_right_loss", "mean_wrong_loss",
)  # fmt: skip


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    step: int


@dataclass(frozen=True)
class Trajectory:
    checkpoints: tuple[Checkpoint, ...]
    rows: tuple[dict, ...]  # one per checkpoint, task, mode, normalization and rule (TRAJECTORY_COLUMNS)
    table: Path
    plots: tuple[Path, ...]
    n_scored: int
    n_cached: int


def find_checkpoints(pattern: str, step_pattern: str = DEFAULT_STEP_PATTERN) -> list[Checkpoint]:
    """The paths matching the glob ``pattern``, with the step read from each name, sorted by step."""
    try:
        regex = re.compile(step_pattern)
    except re.error as error:
        raise ConfigError(f"step pattern {step_pattern!r} is not a valid regular expression: {error}") from None
    paths = sorted(Path(p) for p in glob.glob(str(Path(pattern).expanduser())))
    if not paths:
        raise ConfigError(f"--model-glob: no checkpoint matches '{pattern}'")
    by_step: dict[int, Path] = {}
    for path in paths:
        match = regex.search(path.name)
        text = match.group(1 if regex.groups else 0) if match else ""
        if not text.isdigit():
            raise ConfigError(f"cannot read a step from '{path.name}' with step pattern {step_pattern!r}")
        step = int(text)
        if step in by_step:
            raise ConfigError(f"'{by_step[step].name}' and '{path.name}' both read as step {step}")
        by_step[step] = path
    return [Checkpoint(path, step) for step, path in sorted(by_step.items())]


def checkpoint_revision(path: Path) -> str:
    """The checkpoint's path and a fingerprint of its files (names, sizes, modification times): a checkpoint
    rewritten in place gets a new revision, so its old scores are never reused."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    stats = [(str(p.relative_to(path.parent)), p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    return f"{path.resolve()}@{stable_hash(stats)[:12]}"


def _trajectory_rows(checkpoint: Checkpoint, results: ResultsFile) -> list[dict]:
    rows = []
    for task, entry in results.tasks.items():
        for mode, by_norm in entry.modes.items():
            for normalization, summary in by_norm.items():
                for rule in entry.rules:
                    accuracy = summary.rule(rule)
                    rows.append({
                        "step": checkpoint.step, "checkpoint": checkpoint.path.name, "task": task, "mode": mode,
                        "normalization": normalization, "rule": rule, "accuracy": accuracy.value,
                        "ci_low": accuracy.ci_low, "ci_high": accuracy.ci_high, "n_units": accuracy.n_units,
                        "chance": accuracy.chance,
                        "mean_right_loss": summary.mean_right_loss, "mean_wrong_loss": summary.mean_wrong_loss,
                    })  # fmt: skip
    return rows


def _write_table(path: Path, rows: Sequence[dict]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TRAJECTORY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(path, buffer.getvalue())


def _merge_original(out: ResultsDir, checkpoints: Sequence[ResultsDir]) -> None:
    """The original code's results of the whole sweep: per mode and set, every checkpoint's folder
    (``ckpt_<n>_<step>_<name>/result.jsonl``) and one ``results_summary.txt`` with a line per checkpoint by step,
    as its summary readers write it from the same folders."""
    lines: dict[Path, list[str]] = defaultdict(list)
    for folder in checkpoints:
        for summary in sorted(folder.original_dir.rglob(SUMMARY_FILE)):
            relative = summary.parent.relative_to(folder.original_dir)
            lines[relative].extend(summary.read_text(encoding="utf-8").splitlines())
            for result in summary.parent.glob(f"*/{RESULT_FILE}"):
                target = out.original_dir / relative / result.parent.name / RESULT_FILE
                atomic_write_text(target, result.read_text(encoding="utf-8"))
    for relative, body in lines.items():
        ordered = sorted(body, key=lambda line: int(line.split(",", 1)[0]))
        atomic_write_text(out.original_dir / relative / SUMMARY_FILE, "\n".join(ordered) + "\n")


def plot_trajectory(rows: Sequence[dict], plots_dir: Path, normalization: str = "token") -> list[Path]:
    """One PNG per task: accuracy per mode with its interval band (top), mean right and wrong loss (bottom)."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    written = []
    for task in sorted({row["task"] for row in rows}):
        task_rows = [r for r in rows if r["task"] == task and r["normalization"] == normalization]
        rule = task_rows[0]["rule"]  # the task's own rule comes first
        figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
        for mode in sorted({r["mode"] for r in task_rows}):
            series = sorted((r for r in task_rows if r["mode"] == mode and r["rule"] == rule), key=lambda r: r["step"])
            steps = [r["step"] for r in series]
            line = top.plot(steps, [r["accuracy"] for r in series], marker="o", label=mode)[0]
            top.fill_between(steps, [r["ci_low"] for r in series], [r["ci_high"] for r in series],
                             color=line.get_color(), alpha=0.2)  # fmt: skip
            bottom.plot(steps, [r["mean_right_loss"] for r in series], marker="o", color=line.get_color(),
                        label=f"{mode} right")  # fmt: skip
            bottom.plot(steps, [r["mean_wrong_loss"] for r in series], marker="x", linestyle="--",
                        color=line.get_color(), label=f"{mode} wrong")  # fmt: skip
        chance = task_rows[0].get("chance")  # rows read back from a CSV carry it as text, older tables not at all
        if chance not in (None, ""):
            top.axhline(float(chance), color="grey", linestyle=":", label="chance")
        top.set_ylabel(f"accuracy ({rule}, 95% CI)")
        top.set_title(f"{task}: {normalization}-normalized")
        top.legend()
        bottom.set_ylabel(f"mean loss per {normalization}" if normalization != "sum" else "mean summed loss")
        bottom.set_xlabel("step")
        bottom.legend(fontsize="small")
        path = plots_dir / f"{task}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=100)
        plt.close(figure)
        written.append(path)
    return written


def evaluate_checkpoint(
    data: EvalDataset,
    index: int,
    checkpoint: Checkpoint,
    adapter: ModelAdapter,
    modes: Sequence[str] | None,
    out: ResultsDir,
    options: EvalOptions = EvalOptions(),
) -> Results:
    """Evaluate the ``index``-th checkpoint of a sweep on ``data`` into ``<out>/checkpoints/<name>/``."""
    # one cache per checkpoint (unless the caller names a shared one): a long sweep never reloads every
    # checkpoint's scores, and the key's revision keeps a rewritten checkpoint from reusing old ones
    run_options = replace(options, revision=checkpoint_revision(checkpoint.path), step=checkpoint.step,
                          checkpoint_index=index, checkpoint_label=checkpoint.path.name)  # fmt: skip
    return evaluate(data, adapter, modes, out.checkpoint(checkpoint.path.name).root, run_options)


def write_trajectory(out: ResultsDir, checkpoints: Sequence[Checkpoint], results: Sequence[Results]) -> Trajectory:
    """``trajectory.csv``, the merged original summaries and the plots of the evaluated ``checkpoints``."""
    rows = [row for checkpoint, result in zip(checkpoints, results) for row in _trajectory_rows(checkpoint, result.file)]
    _write_table(out.trajectory_path, rows)
    _merge_original(out, [out.checkpoint(checkpoint.path.name) for checkpoint in checkpoints])
    plots = plot_trajectory(rows, out.plots_dir) if rows else []
    return Trajectory(tuple(checkpoints), tuple(rows), out.trajectory_path, tuple(plots), sum(r.n_scored for r in results),
                      sum(r.n_cached for r in results))  # fmt: skip


def sweep(
    dataset: object,
    checkpoints: Sequence[Checkpoint],
    make_adapter: Callable[[Path], ModelAdapter],
    modes: Sequence[str] | None,
    out_dir: str | Path,
    options: EvalOptions = EvalOptions(),
) -> Trajectory:
    """Evaluate every checkpoint (``make_adapter(path)`` loads one) on ``dataset`` (anything
    :func:`~s2sbench.evaluation.runner.run.evaluate` takes, opened once) and write ``trajectory.csv`` and the plots."""
    out = ResultsDir(out_dir)
    with out.lock():
        data = open_dataset(dataset, split=options.split, tasks=options.select_tasks, voices=options.voices)
        results = [evaluate_checkpoint(data, index, checkpoint, make_adapter(checkpoint.path), modes, out, options)
                   for index, checkpoint in enumerate(checkpoints)]  # fmt: skip
        return write_trajectory(out, checkpoints, results)
