"""The report's charts are legible: legends under the panels, never over the data; the y-axis from the data (no
fixed 0-100), with nothing cut; tick labels apart; no figure wider than the report's column. Figures are built from
the real evaluation and build fixtures; a deliberately bad figure shows that the check can fail."""

from __future__ import annotations

import pandas as pd
import pytest

from s2sbench.evaluation.report import plots
from s2sbench.evaluation.report.audit import load_build
from s2sbench.evaluation.results.summary import accuracy_frame, degradation_frame, load_inputs, voice_frame

COLUMN_PX = 952  # the report's content width in a 1000 px window (body padding 24 px each side)


@pytest.fixture(scope="module")
def runs(eval_dir, sweep_dir):
    return load_inputs([eval_dir, sweep_dir]).runs


@pytest.fixture(scope="module")
def figures(runs, build_dir, clip_store):
    audit = load_build(build_dir, clip_store)
    built = {
        "accuracy": plots.accuracy_figure(accuracy_frame(runs)),
        "degradation": plots.degradation_figure(degradation_frame(runs)),
        "voices": plots.voice_figure(voice_frame(runs)),
        "error-rates": plots.error_rate_figure(audit.checks),
    }
    yield built
    for figure in built.values():
        plots._pyplot().close(figure)


@pytest.mark.parametrize("name", ["accuracy", "degradation", "voices", "error-rates"])
def test_each_chart_is_legible_and_fits_the_column(figures, name):
    figure = figures[name]
    assert plots.layout_problems(figure) == []
    assert figure.legends, "one legend for the figure, below its panels"
    assert all(axis.get_legend() is None for axis in figure.axes)
    assert figure.get_size_inches()[0] * plots.DPI <= COLUMN_PX


def test_the_accuracy_axis_follows_the_data(runs, figures):
    frame = accuracy_frame(runs)
    for axis in figures["accuracy"].axes:
        task = axis.get_title().split("\n")[0]
        rows = frame[(frame["task"] == task) & (frame["normalization"] == "token")]
        highest = max(rows["ci_high"].max(), rows["accuracy"].max(), rows["chance"].max()) * 100
        bottom, top = axis.get_ylim()
        assert bottom == 0  # bars start at zero
        assert top == pytest.approx(min(100.0, highest) + plots.HEADROOM_POINTS)
        assert top > highest  # the highest interval's cap stays inside the frame


def test_the_error_rate_histogram_keeps_every_attempt_and_the_threshold_readable(build_dir, clip_store, figures):
    """Attempts heard far off (story 3's gibberish here; a runaway transcript reaches SER 20 on the whole sCMMLU) go
    in the last bin, so the bins stay 0.05 wide around the gate's threshold and no attempt is left out."""
    checks = load_build(build_dir, clip_store).checks
    verified = checks[checks["error_rate"].notna()]
    assert verified["error_rate"].max() > plots.ERROR_RATE_AXIS_MAX  # the fixture has such attempts
    for axis in figures["error-rates"].axes:
        if not axis.get_visible() or not axis.patches:
            continue
        language, voice = axis.get_title().split(" / ")
        heights = sum(patch.get_height() for patch in axis.patches)
        assert heights == len(verified[(verified["language"] == language) & (verified["voice"] == voice)])
        assert max(patch.get_x() + patch.get_width() for patch in axis.patches) == pytest.approx(plots.ERROR_RATE_AXIS_MAX)
        assert axis.get_xlabel().endswith(f"above {plots.ERROR_RATE_AXIS_MAX:g} in the last bin)")


def test_a_chart_whose_top_interval_reaches_100_keeps_it_visible():
    frame = pd.DataFrame([
        {"run": "a", "task": "t", "mode": "T->T", "normalization": "token", "rule": "pairwise_strict",
         "accuracy": 0.95, "ci_low": 0.85, "ci_high": 1.0, "chance": 0.5},
        {"run": "b", "task": "t", "mode": "T->T", "normalization": "token", "rule": "pairwise_strict",
         "accuracy": 0.40, "ci_low": 0.20, "ci_high": 0.60, "chance": 0.5},
    ])  # fmt: skip
    figure = plots.accuracy_figure(frame)
    assert plots.layout_problems(figure) == []
    assert figure.axes[0].get_ylim()[1] == pytest.approx(100 + plots.HEADROOM_POINTS)
    plots._pyplot().close(figure)


def test_the_check_finds_a_legend_over_the_bars_and_cut_data():
    plt = plots._pyplot()
    figure, axis = plt.subplots(figsize=(4, 3))
    axis.bar([0, 1], [95, 99], yerr=[[5, 5], [5, 5]], label="run")
    axis.set_ylim(0, 100)  # the old fixed cap: the upper interval ends at 104
    axis.legend(loc="upper left")
    axis.set_title("bad")
    problems = plots.layout_problems(figure)
    plt.close(figure)
    assert any("legend overlaps the panel 'bad'" in p for p in problems)
    assert any("cuts its data" in p for p in problems)


def test_long_run_labels_wrap_inside_the_figure():
    label = "cascade (faster-whisper:tiny.en (offline package):int8 -> HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF))"
    rows = [{"run": f"{label} #{n}", "task": task, "mode": mode, "normalization": "token", "rule": "pairwise_strict",
             "accuracy": 0.6, "ci_low": 0.4, "ci_high": 0.8, "chance": 0.5}
            for n in (1, 2) for task in ("a", "b", "c", "d") for mode in ("T->T", "S->T")]  # fmt: skip
    figure = plots.accuracy_figure(pd.DataFrame(rows))
    assert plots.layout_problems(figure) == []
    assert len(figure.axes) == 4 and figure.get_size_inches()[0] * plots.DPI <= COLUMN_PX  # two rows of panels
    plots._pyplot().close(figure)


def test_a_run_keeps_its_colour_across_panels():
    rows = [{"run": run, "task": task, "mode": "T->T", "normalization": "token", "rule": "pairwise_strict",
             "accuracy": 0.6, "ci_low": 0.4, "ci_high": 0.8, "chance": 0.5}
            for run, task in (("en-run", "stories-en"), ("zh-run", "stories-zh"), ("zh-run", "choices-zh"))]
    figure = plots.accuracy_figure(pd.DataFrame(rows))
    bar_colours = [tuple(axis.patches[0].get_facecolor()) for axis in figure.axes]
    plots._pyplot().close(figure)
    assert bar_colours[1] == bar_colours[2] != bar_colours[0]  # each panel has one bar; the zh run's match


@pytest.mark.parametrize("conditions", [1, 3, 6, 12])
def test_the_conditions_chart_keeps_its_labels_apart_at_any_number_of_conditions(conditions):
    names = ["babble5", "phone", "room", "fast", "loud", "musan0", "slow", "quiet", "echo", "white10", "pink0", "lp"]
    rows = [{"run": run, "task": task, "mode": mode, "normalization": "token", "rule": "pairwise_strict",
             "accuracy": 0.6, "ci_low": 0.5, "ci_high": 0.7, "chance": 0.5}
            for run in ("cascade (en)", "other") for task in ("demo-stories-en", "demo-stories-zh")
            for mode in ["T->T", "S->T", *(f"S->T@{name}" for name in names[:conditions])]]
    figure = plots.condition_figure(pd.DataFrame(rows))
    labels = [label.get_text() for label in figure.axes[0].get_xticklabels()]
    assert labels == ["S->T\nclean", *(f"S->T\n{name}" for name in names[:conditions])]
    assert plots.layout_problems(figure) == []
    assert figure.get_size_inches()[0] * plots.DPI <= COLUMN_PX
    plots._pyplot().close(figure)


def test_chinese_and_japanese_labels_draw_with_the_installed_cjk_font():
    """A drop reason quoting Chinese or Japanese words renders every glyph (it drew boxes with matplotlib's default
    font): matplotlib warns of each glyph it finds in no font, so no such warning may come."""
    import warnings

    reasons = {"rejected attempts": {"error_rate: 卵 heard as 暖": 3, "error_rate: 砂漠には必需品な物は": 2}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert plots.drop_reasons(reasons)[:8] == b"\x89PNG\r\n\x1a\n"
    missing = [str(warning.message) for warning in caught if "missing from font" in str(warning.message)]
    assert not missing, missing
