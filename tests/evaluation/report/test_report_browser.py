"""Open the report in headless Chromium: the tables and plots render, every audio player loads its clip, and a
screenshot is written. A report with one corrupted clip shows that the check can fail."""

from __future__ import annotations

import re
import shutil

import pytest

from s2sbench.evaluation.report.audit import SampleOptions
from s2sbench.evaluation.report.browser import BrowserOptions, dump_dom, find_chromium, screenshot
from s2sbench.evaluation.report.html import ReportOptions, write_report

pytestmark = pytest.mark.skipif(
    not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")),
    reason="no Chromium on PATH (Debian package `chromium`, in the Makefile's DEBIAN_PACKAGES)",
)


def _states(dom: str, tag: str) -> list[str]:
    return re.findall(rf'<{tag}\b[^>]*?data-state="(\w+)"', dom)


@pytest.fixture(scope="module")
def report(eval_dir, sweep_dir, build_dir, clip_store, tmp_path_factory):
    options = ReportOptions(samples=SampleOptions(clips_per_status=2), store_root=clip_store)
    return write_report([eval_dir, sweep_dir], tmp_path_factory.mktemp("report") / "report.html", build_dir, options)


def test_report_renders_in_chromium(report, tmp_path):
    dom = dump_dom(report, BrowserOptions(window=(1000, 1400)))
    assert re.search(r'<table id="summary-table">.*?<td>fixture-stories-en</td>', dom, re.S)
    assert _states(dom, "img") == ["loaded"] * 7  # accuracy, degradation, voices, 2 trajectories, error rates, drops
    # every chart is shown at the size it was drawn (its text unshrunk) in a 1000 px window; legends and axis ranges
    # are checked on the figures themselves (test_report_plots)
    scales = dict(re.findall(r'<img\b[^>]*?data-plot="([\w-]+)"[^>]*?data-scale="([\d.]+)"', dom))
    assert len(scales) == 7 and all(float(scale) == 1.0 for scale in scales.values()), scales
    assert _states(dom, "audio") == ["loaded"] * 4  # set by the page's script on loadedmetadata
    durations = [float(d) for d in re.findall(r'class="duration">([\d.]+) s<', dom)]
    assert len(durations) == 4 and all(0.5 < d < 10.0 for d in durations)  # the build's real clips
    png = screenshot(report, tmp_path / "report.png", BrowserOptions(window=(1000, 1400)))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png.read_bytes()[16:20], "big") == 1000  # IHDR width


def test_a_run_name_takes_one_line_of_the_summary_in_a_1300_px_window(eval_dir, tmp_path):
    """The demo's two cascade runs (en, zh) with their 130-character model string: each run's name in the Summary
    is one line in a 1,300-pixel-wide window (measured by the page in Chromium), and a screenshot is taken."""
    from tests.evaluation.report.test_report_summary import demo_like_results

    page = write_report(demo_like_results(eval_dir, tmp_path / "demo"), tmp_path / "demo.html")
    dom = dump_dom(page, BrowserOptions(window=(1300, 1000)))
    lines = re.findall(r'<td data-lines="(\d+)">(cascade \(\w+\))</td>', dom)
    assert sorted(set(lines)) == [("1", "cascade (en)"), ("1", "cascade (zh)")], lines
    png = screenshot(page, tmp_path / "demo.png", BrowserOptions(window=(1300, 1000)))
    assert int.from_bytes(png.read_bytes()[16:20], "big") == 1300


def test_a_corrupted_clip_is_reported_as_an_error(report, tmp_path):
    html = report.read_text(encoding="utf-8")
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r'src="data:audio/wav;base64,[^"]+"', 'src="data:audio/wav;base64,AAAAAAAA"', html, count=1),
                      encoding="utf-8")  # fmt: skip
    assert sorted(_states(dump_dom(broken), "audio")) == ["error"] + ["loaded"] * 3


def test_missing_chromium_is_a_clear_error():
    from s2sbench.evaluation.report.browser import BrowserError

    with pytest.raises(BrowserError, match="no Chromium found .*install the Debian package"):
        find_chromium("no-such-browser-here")
