"""The report's figures, each returned as PNG bytes (the HTML embeds them; nothing is written unless asked).

Inputs are the frames of :mod:`s2sbench.evaluation.results.summary` and of the build audit; values are fractions 0..1
and are drawn as percentages. matplotlib is imported lazily with the Agg backend, so no display is ever needed.
"""

from __future__ import annotations

import functools
import io
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

DPI = 100
BAR_GROUP_WIDTH = 0.8  # of the space between two x positions
MAX_WIDTH_IN = 9.4  # the report's column is 952 px wide in a 1000 px window: a wider figure would be shrunk
PANELS_PER_ROW = 3
LEGEND_LABEL_CHARS = 60  # a legend label wraps past this many characters
LEGEND_CHAR_PX, LEGEND_HANDLE_PX = 6, 48  # a character of a small legend label, and the handle with its gaps
CONDITION_WIDTH_IN = 0.85  # a condition's bars and its two-line label ("S->T" over "babble5")
HEADROOM_POINTS = 6.0  # above the highest interval end, so its cap and the frame never meet
ERROR_RATE_AXIS_MAX = 1.0  # attempts above this error rate are drawn in the last bin (a runaway transcript's rate
# reaches 20 and would squeeze every other attempt into the first bin)
REASON_LABEL_CHARS = 40  # a drop reason's label wraps past this many characters
MAX_REASON_BARS = 15  # a panel of drop reasons shows the most common, the rest as one bar (a build coded by sentences
# once had 1,013 reasons)


# matplotlib falls back glyph by glyph along this list: Latin from its own DejaVu Sans, Chinese and Japanese (drop
# reasons quote the text's words; labels name voices and subjects) from the CJK font `make setup` installs
# (fonts-wqy-microhei), or from a Noto CJK font where a user has one instead
CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK JP", "Noto Sans CJK SC")


@functools.cache
def _font_family() -> list[str]:
    """Fallback works along font.family's own list (a generic "sans-serif" resolves to its first font only); the CJK
    fonts this machine has, so matplotlib does not warn of each one missing. Read once a process."""
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    return ["DejaVu Sans", *(font for font in CJK_FONTS if font in installed)]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["font.family"] = _font_family()
    return plt


def _panels(n_panels: int, panel_width_in: float, height_in: float):
    """A constrained-layout figure of ``n_panels`` panels, at most PANELS_PER_ROW a row and no more than fit at
    ``panel_width_in`` each, no wider than MAX_WIDTH_IN."""
    columns = max(1, min(n_panels, PANELS_PER_ROW, int(MAX_WIDTH_IN // panel_width_in)))
    rows = -(-n_panels // columns)
    width = min(MAX_WIDTH_IN, max(5.0, panel_width_in * columns))
    figure, axes = _pyplot().subplots(rows, columns, figsize=(width, height_in * rows), squeeze=False,
                                      layout="constrained")
    flat = list(axes.flat)
    for unused in flat[n_panels:]:
        unused.remove()
    return figure, flat[:n_panels]


def _legend_below(figure, axes) -> None:
    """One legend for the whole figure, under the panels (never over the data); each label once."""
    entries: dict[str, object] = {}
    for axis in axes:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if "chance" in entries:  # the reference line after the runs
        entries["chance"] = entries.pop("chance")
    if entries:
        # long run labels (a cascade's "ASR -> LM" revision) wrap instead of running off the figure
        labels = [textwrap.fill(label, LEGEND_LABEL_CHARS) for label in entries]
        widest = max(len(line) for label in labels for line in label.splitlines())
        fits = int(figure.get_size_inches()[0] * DPI // (widest * LEGEND_CHAR_PX + LEGEND_HANDLE_PX))
        columns = max(1, min(len(labels), 4, fits))
        figure.legend(list(entries.values()), labels, loc="outside lower center", ncols=columns, fontsize="small",
                      frameon=False)


def _percent_top(highs: Sequence[float]) -> float:
    """The upper end of a 0-based percent axis: the highest value or interval end (fractions) plus headroom."""
    return min(100.0, max(highs, default=1.0) * 100) + HEADROOM_POINTS


def layout_problems(figure) -> list[str]:
    """What makes ``figure`` hard to read: a legend overlapping a panel or running off the figure, tick labels
    overlapping each other, data
    (bars, points, interval ends) outside the panel's axis range. Empty when the figure is fine."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    panels = [axis for axis in figure.axes if axis.get_visible()]
    legends = list(figure.legends) + [axis.get_legend() for axis in panels if axis.get_legend() is not None]
    problems = []
    page = figure.bbox
    for legend in legends:
        box = legend.get_window_extent(renderer)
        if box.x0 < page.x0 - 1 or box.x1 > page.x1 + 1 or box.y0 < page.y0 - 1 or box.y1 > page.y1 + 1:
            problems.append("a legend runs off the figure")
        for axis in panels:
            if box.overlaps(axis.get_window_extent(renderer)):
                problems.append(f"a legend overlaps the panel '{axis.get_title()}'")
    for axis in panels:
        for which, ticks in (("x", axis.get_xticklabels()), ("y", axis.get_yticklabels())):
            for first, second in overlapping_labels(ticks, renderer):
                problems.append(f"the panel '{axis.get_title()}': {which} tick labels '{first}' and '{second}' overlap")
        (x_low, x_high), (y_low, y_high) = sorted(axis.get_xlim()), sorted(axis.get_ylim())
        data = axis.dataLim
        if data.y0 < y_low - 1e-9 or data.y1 > y_high + 1e-9 or data.x0 < x_low - 1e-9 or data.x1 > x_high + 1e-9:
            problems.append(f"the panel '{axis.get_title()}' cuts its data: data x {data.x0:.3g}..{data.x1:.3g}, "
                            f"y {data.y0:.3g}..{data.y1:.3g}; axes x {x_low:.3g}..{x_high:.3g}, y {y_low:.3g}..{y_high:.3g}")
    return problems


def png(figure) -> bytes:
    """The figure as PNG bytes (the figure is closed)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    _pyplot().close(figure)
    return buffer.getvalue()


def _colors(names) -> dict[str, str]:
    """One colour per series name, the same in every panel of a figure (and for a run, in every figure)."""
    return {name: f"C{index % 10}" for index, name in enumerate(dict.fromkeys(names))}


def _grouped(
    axis, categories: Sequence[str], series: dict[str, dict[str, tuple[float, float | None, float | None]]],
    colors: dict[str, str], points: bool = False,
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
            axis.errorbar(xs, heights, yerr=errors, fmt="o", markersize=7, capsize=4, label=name, color=colors[name])
        else:
            axis.bar(xs, heights, width, yerr=errors, capsize=3, label=name, color=colors[name])
    axis.set_xticks(range(len(categories)), categories)
    if points:
        axis.set_xlim(-0.5, len(categories) - 0.5)
    return where


def readable_ticks(figure, axes) -> None:
    """Turn the x labels of each panel whose labels would overlap: 45 degrees, then upright if that is not enough
    (the constrained layout then makes room under the panel)."""
    for axis in axes:
        for rotation in (0, 45, 90):
            for label in axis.get_xticklabels():
                label.set_rotation(rotation)
                label.set_horizontalalignment("center" if rotation in (0, 90) else "right")
                label.set_rotation_mode("anchor" if rotation == 45 else "default")
            figure.canvas.draw()
            if not overlapping_labels(axis.get_xticklabels()):
                break


def overlapping_labels(labels, renderer=None) -> list[tuple[str, str]]:
    """The texts of every two of ``labels`` (drawn) that overlap."""
    boxes = [(label.get_text(), label.get_window_extent(renderer)) for label in labels if label.get_text()]
    return [(first, second) for index, (first, a) in enumerate(boxes) for second, b in boxes[index + 1:]
            if a.overlaps(b)]


def accuracy_figure(accuracies, normalization: str = "token", mode_width_in: float = 0.0):
    """One panel per task: accuracy per mode (one bar per run) with its 95% interval; chance as a dashed line.
    ``mode_width_in``: the width a mode's group of bars needs, where modes are many (conditions)."""
    frame = accuracies[accuracies["normalization"] == normalization]
    tasks = list(dict.fromkeys(frame["task"]))
    colors = _colors(frame["run"])
    most_modes = max((frame[frame["task"] == task]["mode"].nunique() for task in tasks), default=1)
    figure, axes = _panels(len(tasks), max(3.1, mode_width_in * most_modes), 3.4)
    for axis, task in zip(axes, tasks):
        rows = frame[frame["task"] == task]
        rule = rows["rule"].iloc[0]  # the task's own rule comes first in results.json
        rows = rows[rows["rule"] == rule]
        modes = list(dict.fromkeys(rows["mode"]))
        series: dict[str, dict[str, tuple[float, float | None, float | None]]] = {}
        for row in rows.itertuples():
            series.setdefault(row.run, {})[row.mode] = (row.accuracy, row.ci_low, row.ci_high)
        _grouped(axis, modes, series, colors)
        axis.axhline(rows["chance"].iloc[0] * 100, color="grey", linestyle="--", linewidth=1, label="chance")
        highs = [*rows["accuracy"], *rows["ci_high"].dropna(), rows["chance"].iloc[0]]
        axis.set_ylim(0, _percent_top(highs))
        axis.set_title(f"{task}\n({rule})", fontsize="medium")
        axis.set_ylabel("accuracy % (95% CI)")
    _legend_below(figure, axes)
    readable_ticks(figure, axes)
    return figure


def accuracy_by_mode(accuracies, normalization: str = "token") -> bytes:
    return png(accuracy_figure(accuracies, normalization))


def condition_figure(accuracies, normalization: str = "token"):
    """Per task, the accuracy of each speech mode clean and under each acoustic condition (x: the condition, its
    label on two lines under a panel as wide as the conditions need)."""
    from s2sbench.evaluation.protocol.modes import split_mode

    frame = accuracies.copy()
    split = [split_mode(mode) for mode in frame["mode"]]
    heard = [any(other[0] == base and other[1] is not None for other in split) for base, _ in split]
    frame = frame[heard]
    frame["mode"] = [f"{base}\n{condition or 'clean'}" for base, condition in (split_mode(m) for m in frame["mode"])]
    return accuracy_figure(frame, normalization, mode_width_in=CONDITION_WIDTH_IN)


def accuracy_by_condition(accuracies, normalization: str = "token") -> bytes:
    return png(condition_figure(accuracies, normalization))


def degradation_figure(gaps, normalization: str = "token"):
    """Degradation (reference - mode accuracy, points) per task and gap, one point per run, with its interval and p."""
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
    figure, (axis,) = _panels(1, min(MAX_WIDTH_IN, 2.4 * len(categories)), 3.6)
    where = _grouped(axis, categories, series, _colors(frame["run"]), points=True)
    for (run, category), x in where.items():
        axis.annotate(f"p={notes[run][category]:.2g}", (x, series[run][category][2] * 100), ha="center",
                      va="bottom", fontsize="x-small", xytext=(0, 3), textcoords="offset points")  # fmt: skip
    axis.axhline(0, color="black", linewidth=0.8)
    ends = [end * 100 for values in series.values() for triple in values.values() for end in triple if end is not None]
    low, high = min(ends, default=0.0), max(ends, default=0.0)
    pad = max(HEADROOM_POINTS, 0.12 * (high - low))  # room for the p labels above the highest interval
    axis.set_ylim(min(low, 0.0) - pad, max(high, 0.0) + pad)  # 0 (no loss) is always on the scale
    axis.set_ylabel("degradation, points (95% CI)")
    axis.set_title("accuracy lost when the context is speech")
    _legend_below(figure, [axis])
    return figure


def degradation_by_task(gaps, normalization: str = "token") -> bytes:
    return png(degradation_figure(gaps, normalization))


def voice_figure(voices, normalization: str = "token"):
    """One panel per task: accuracy per voice, one bar per run and speech mode; None when no mode has voices."""
    frame = voices[voices["normalization"] == normalization]
    if frame.empty:
        return None
    tasks = list(dict.fromkeys(frame["task"]))
    colors = _colors(f"{row.run} {row.mode}" for row in frame.itertuples())
    figure, axes = _panels(len(tasks), 3.1, 3.4)
    for axis, task in zip(axes, tasks):
        rows = frame[frame["task"] == task]
        rows = rows[rows["rule"] == rows["rule"].iloc[0]]
        series: dict[str, dict[str, tuple[float, float | None, float | None]]] = {}
        for row in rows.itertuples():
            series.setdefault(f"{row.run} {row.mode}", {})[row.voice] = (row.accuracy, None, None)
        _grouped(axis, list(dict.fromkeys(rows["voice"])), series, colors)
        axis.set_ylim(0, _percent_top(list(rows["accuracy"])))
        axis.set_title(task, fontsize="medium")
        axis.set_ylabel("accuracy %")
        axis.tick_params(axis="x", labelrotation=15)
    _legend_below(figure, axes)
    return figure


def accuracy_by_voice(voices, normalization: str = "token") -> bytes | None:
    figure = voice_figure(voices, normalization)
    return None if figure is None else png(figure)


def trajectories(rows: Sequence[dict], normalization: str = "token") -> dict[str, bytes]:
    """Per task, the sweep's own trajectory plot (accuracy with its band and the mean losses against the step)."""
    from s2sbench.evaluation.runner.sweep import plot_trajectory

    with tempfile.TemporaryDirectory(prefix="s2sbench-report-") as folder:
        paths = plot_trajectory(rows, Path(folder), normalization)
        return {path.stem: path.read_bytes() for path in paths}


def error_rate_figure(checks):
    """One panel per (language, voice): the error rate of every verified attempt, stacked by gate status."""
    frame = checks[checks["error_rate"].notna()]
    if frame.empty:
        return None
    from matplotlib.ticker import MaxNLocator

    groups = list(frame.groupby(["language", "voice", "metric"], sort=True))
    figure, axes = _panels(len(groups), 3.1, 3.0)
    highest = float(frame["error_rate"].max())
    upper = min(ERROR_RATE_AXIS_MAX, max(0.5, highest))
    bins = [upper * k / 20 for k in range(21)]
    for axis, ((language, voice, metric), rows) in zip(axes, groups):
        statuses = [s for s in ("passed", "rejected") if s in set(rows["status"])]
        axis.hist([rows[rows["status"] == s]["error_rate"].clip(upper=upper) for s in statuses], bins=bins,
                  stacked=True, label=statuses,
                  color=[{"passed": "tab:green", "rejected": "tab:red"}[s] for s in statuses])  # fmt: skip
        axis.set_title(f"{language} / {voice}", fontsize="medium")
        axis.set_xlabel(f"{metric.upper()} (fraction" + (f"; above {upper:g} in the last bin)" if highest > upper else ")"))
        axis.set_ylabel("clip attempts")
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
    _legend_below(figure, axes)
    return figure


def error_rate_histograms(checks) -> bytes | None:
    figure = error_rate_figure(checks)
    return None if figure is None else png(figure)


def _most_common(counts: dict[str, int], bars: int) -> dict[str, int]:
    """``counts`` in at most ``bars`` entries: the most common, then the others summed as one."""
    if len(counts) <= bars:
        return counts
    ordered = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    rest = ordered[bars - 1 :]
    return {**dict(ordered[: bars - 1]), f"{len(rest):,} other reasons": sum(n for _, n in rest)}


def drop_reasons_figure(reasons: dict[str, dict[str, int]]):
    """Horizontal bars per kind of count (``{"rejected attempts": {reason: n}, "dropped items": {...}}``); None when
    nothing was rejected."""
    kinds = {kind: _most_common(counts, MAX_REASON_BARS) for kind, counts in reasons.items() if counts}
    if not kinds:
        return None
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    # a long reason wraps, so the bars keep most of the width; a reason may quote a formula, and "$...$" would be
    # read as matplotlib's mathtext (and fail to parse)
    labels = {kind: {name: textwrap.fill(name, REASON_LABEL_CHARS).replace("$", r"\$") for name in counts}
              for kind, counts in kinds.items()}
    lines = sum(label.count("\n") + 1 for names in labels.values() for label in names.values())
    height = max(2.0, 0.3 * lines + 0.2 * sum(len(c) for c in kinds.values()) + 1.2 * len(kinds))
    figure, axes = plt.subplots(len(kinds), 1, figsize=(8, height), squeeze=False, layout="constrained")
    for axis, (kind, counts) in zip(axes[:, 0], kinds.items()):
        ordered = sorted(counts.items(), key=lambda pair: pair[1])
        axis.barh([labels[kind][name] for name, _ in ordered], [n for _, n in ordered], color="tab:red")
        axis.set_title(kind, fontsize="medium")
        axis.set_xlabel("count")
        axis.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    return figure


def drop_reasons(reasons: dict[str, dict[str, int]]) -> bytes | None:
    figure = drop_reasons_figure(reasons)
    return None if figure is None else png(figure)
