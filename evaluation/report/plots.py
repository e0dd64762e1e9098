"""The report's figures, each returned as PNG bytes (the HTML embeds them; nothing is written unless asked).

Inputs are the frames of :mod:`s2sbench.evaluation.report.summary` and of the build audit; values are fractions 0..1
and are drawn as percentages. matplotlib is imported lazily with the Agg backend, so no display is ever needed.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Sequence
from pathlib import Path

DPI = 100
BAR_GROUP_WIDTH = 0.8  # of the space between two x positions


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=DPI)
    _pyplot().close(figure)
    return buffer.getvalue()


def _grouped(
    axis, categories: Sequence[str], series: dict[str, dict[str, tuple[float, float | None, float | None]]],
    points: bool = False,
) -> dict[tuple[str, str], float]:  # fmt: skip
    """Per category, one bar (or one point: a value near 0 stays visible) per series, with asymmetric error bars
    where (value, low, high) has an interval; fractions in, percent drawn. Returns each (series, category)'s x."""
    width = BAR_GROUP_WIDTH / max(1, len(series))
    where: dict[tuple[str, str], float] = {}
    for index, (name, values) in enumerate(series.items()):
        xs, heights, below, above = [], [], [], []
        for position, category in enumerate(categories):
            if category in values:
                value, low, high = values[category]
                where[(name, category)] = position - BAR_GROUP_WIDTH / 2 + width * (index + 0.5)
                xs.append(where[(name, category)])
                heights.append(value * 100)
                below.append(0.0 if low is None else max(0.0, (value - low) * 100))
                above.append(0.0 if high is None else max(0.0, (high - value) * 100))
        errors = [below, above] if any(below) or any(above) else None
        if points:
            axis.errorbar(xs, heights, yerr=errors, fmt="o", markersize=7, capsize=4, label=name)
        else:
            axis.bar(xs, heights, width, yerr=errors, capsize=3, label=name)
    axis.set_xticks(range(len(categories)), categories)
    if points:
        axis.set_xlim(-0.5, len(categories) - 0.5)
    return where


def accuracy_by_mode(accuracies, normalization: str = "token") -> bytes:
    """One panel per task: accuracy per mode (one bar per run) with its 95% interval; chance as a dashed line."""
    plt = _pyplot()
    frame = accuracies[accuracies["normalization"] == normalization]
    tasks = list(dict.fromkeys(frame["task"]))
    figure, axes = plt.subplots(1, len(tasks), figsize=(max(5, 4.2 * len(tasks)), 3.8), squeeze=False)
    for axis, task in zip(axes[0], tasks):
        rows = frame[frame["task"] == task]
        rule = rows["rule"].iloc[0]  # the task's own rule comes first in results.json
        rows = rows[rows["rule"] == rule]
        modes = list(dict.fromkeys(rows["mode"]))
        series: dict[str, dict[str, tuple[float, float | None, float | None]]] = {}
        for row in rows.itertuples():
            series.setdefault(row.run, {})[row.mode] = (row.accuracy, row.ci_low, row.ci_high)
        _grouped(axis, modes, series)
        axis.axhline(rows["chance"].iloc[0] * 100, color="grey", linestyle="--", linewidth=1, label="chance")
        axis.set_ylim(0, 100)
        axis.set_title(f"{task}\n({rule})", fontsize="medium")
        axis.set_ylabel("accuracy % (95% CI)")
        axis.legend(fontsize="small")
    return _png(figure)


def degradation_by_task(gaps, normalization: str = "token") -> bytes:
    """Degradation (reference - mode accuracy, points) per task and gap, one bar per run, with its interval and p."""
    plt = _pyplot()
    frame = gaps[gaps["normalization"] == normalization]
    firsts = frame.groupby("task", sort=False)["rule"].first()  # each task's own rule
    frame = frame[frame.apply(lambda row: row["rule"] == firsts[row["task"]], axis=1)]
    categories = list(dict.fromkeys(f"{r.task}\n{r.reference_mode} vs {r.mode}" for r in frame.itertuples()))
    series: dict[str, dict[str, tuple[float, float | None, float | None]]] = {}
    notes: dict[str, dict[str, float]] = {}
    for row in frame.itertuples():
        key = f"{row.task}\n{row.reference_mode} vs {row.mode}"
        series.setdefault(row.run, {})[key] = (row.degradation, row.ci_low, row.ci_high)
        notes.setdefault(row.run, {})[key] = row.p_value
    figure, axis = plt.subplots(figsize=(max(5, 2.6 * len(categories)), 3.8))
    where = _grouped(axis, categories, series, points=True)
    for (run, category), x in where.items():
        axis.annotate(f"p={notes[run][category]:.2g}", (x, series[run][category][2] * 100), ha="center",
                      va="bottom", fontsize="x-small", xytext=(0, 3), textcoords="offset points")  # fmt: skip
    axis.axhline(0, color="black", linewidth=0.8)
    low, high = axis.get_ylim()
    axis.set_ylim(min(low, -5.0), max(high, 5.0))  # a gap of 0 with no spread still gets a readable scale
    axis.set_ylabel("degradation, points (95% CI)")
    axis.set_title("accuracy lost when the context is speech")
    axis.legend(fontsize="small")
    return _png(figure)


def accuracy_by_voice(voices, normalization: str = "token") -> bytes | None:
    """One panel per task: accuracy per voice, one bar per run and speech mode; None when no mode has voices."""
    frame = voices[voices["normalization"] == normalization]
    if frame.empty:
        return None
    plt = _pyplot()
    tasks = list(dict.fromkeys(frame["task"]))
    figure, axes = plt.subplots(1, len(tasks), figsize=(max(5, 4.2 * len(tasks)), 3.8), squeeze=False)
    for axis, task in zip(axes[0], tasks):
        rows = frame[frame["task"] == task]
        rows = rows[rows["rule"] == rows["rule"].iloc[0]]
        series: dict[str, dict[str, tuple[float, float | None, float | None]]] = {}
        for row in rows.itertuples():
            series.setdefault(f"{row.run} {row.mode}", {})[row.voice] = (row.accuracy, None, None)
        _grouped(axis, list(dict.fromkeys(rows["voice"])), series)
        axis.set_ylim(0, 100)
        axis.set_title(task, fontsize="medium")
        axis.set_ylabel("accuracy %")
        axis.tick_params(axis="x", labelrotation=15)
        axis.legend(fontsize="small")
    return _png(figure)


def trajectories(rows: Sequence[dict], normalization: str = "token") -> dict[str, bytes]:
    """Per task, the sweep's own trajectory plot (accuracy with its band and the mean losses against the step)."""
    from s2sbench.evaluation.sweep import plot_trajectory

    with tempfile.TemporaryDirectory(prefix="s2sbench-report-") as folder:
        paths = plot_trajectory(rows, Path(folder), normalization)
        return {path.stem: path.read_bytes() for path in paths}


def error_rate_histograms(checks) -> bytes | None:
    """One panel per (language, voice): the error rate of every verified attempt, stacked by gate status."""
    frame = checks[checks["error_rate"].notna()]
    if frame.empty:
        return None
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    groups = list(frame.groupby(["language", "voice", "metric"], sort=True))
    figure, axes = plt.subplots(1, len(groups), figsize=(max(5, 4 * len(groups)), 3.4), squeeze=False)
    upper = max(0.5, float(frame["error_rate"].max()))
    bins = [upper * k / 20 for k in range(21)]
    for axis, ((language, voice, metric), rows) in zip(axes[0], groups):
        statuses = [s for s in ("passed", "rejected") if s in set(rows["status"])]
        axis.hist([rows[rows["status"] == s]["error_rate"] for s in statuses], bins=bins, stacked=True,
                  label=statuses, color=[{"passed": "tab:green", "rejected": "tab:red"}[s] for s in statuses])  # fmt: skip
        axis.set_title(f"{language} / {voice}", fontsize="medium")
        axis.set_xlabel(f"{metric.upper()} (fraction)")
        axis.set_ylabel("clip attempts")
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
        axis.legend(fontsize="small")
    return _png(figure)


def drop_reasons(reasons: dict[str, dict[str, int]]) -> bytes | None:
    """Horizontal bars per kind of count (``{"rejected attempts": {reason: n}, "dropped items": {...}}``)."""
    kinds = {kind: counts for kind, counts in reasons.items() if counts}
    if not kinds:
        return None
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    height = max(2.0, 0.45 * sum(len(c) for c in kinds.values()) + 1.2 * len(kinds))
    figure, axes = plt.subplots(len(kinds), 1, figsize=(8, height), squeeze=False)
    for axis, (kind, counts) in zip(axes[:, 0], kinds.items()):
        ordered = sorted(counts.items(), key=lambda pair: pair[1])
        axis.barh([name for name, _ in ordered], [n for _, n in ordered], color="tab:red")
        axis.set_title(kind, fontsize="medium")
        axis.set_xlabel("count")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    return _png(figure)
