"""The HTML report: self-contained, with the tables, plots, trajectories and a bounded sample of real clips."""

from __future__ import annotations

import base64
import io
import json
import re
import wave
from html.parser import HTMLParser

import shutil
from collections import Counter

from s2sbench.evaluation.report.audit import SampleOptions, load_build
from s2sbench.evaluation.report.html import ReportOptions, render_html, write_report
from s2sbench.evaluation.results.summary import load_inputs
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.buildfolder.builddir import BuildDir


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each table cell."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def all(self, tag: str) -> list[dict]:
        return [attrs for name, attrs in self.tags if name == tag]


def _wav_duration_s(uri: str) -> float:
    data = base64.b64decode(uri.split(",", 1)[1])
    with wave.open(io.BytesIO(data)) as handle:
        return handle.getnframes() / handle.getframerate()


def test_report_has_tables_plots_trajectories_and_clips(eval_dir, sweep_dir, build_dir, clip_store, tmp_path):
    out = write_report([eval_dir, sweep_dir], tmp_path / "r.html", build_dir,
                       ReportOptions(samples=SampleOptions(clips_per_status=3), store_root=clip_store))  # fmt: skip
    page = Elements(out.read_text(encoding="utf-8"))
    plots = [img["data-plot"] for img in page.all("img")]
    assert plots == ["accuracy", "degradation", "voices", "trajectory-fixture-choice-zh", "trajectory-fixture-stories-en",
                     "error-rates", "drop-reasons"]  # fmt: skip
    assert all(img["src"].startswith("data:image/png;base64,") for img in page.all("img"))
    assert {"toy", "toy step 200"} <= set(page.cells)
    assert "下面是一段语音和文本交错的内容：<audio>{continuation}" in page.cells  # the template, escaped and shown
    audios = page.all("audio")
    assert len(audios) == 6  # 3 kept + 3 of the 4 rejected attempts
    assert all(_wav_duration_s(a["src"]) > 0.5 for a in audios)  # real speech
    html = out.read_text(encoding="utf-8")
    assert html.count('class="clip rejected"') == 3
    assert re.search(r"error_rate: wer \d\.\d{3} &gt; 0\.25", html)
    assert "22 clip attempts" in html and "14 kept clips hash-checked before embedding." in html
    # where the build's time went: synthesis per voice, the gate, retries (story 3 failed its first attempts), assembly
    costs = Elements(re.search(r'<table id="cost-table">.*?</table>', html, re.S).group(0)).cells
    stages = [(costs[start], costs[start + 1]) for start in range(7, len(costs), 7)]
    assert stages == [("synthesis", "piper-en-joe"), ("synthesis", "piper-en-joe-slow"), ("synthesis", "espeak-zh-pinyin"),
                      ("gate", "faster-whisper:tiny.en (offline package):int8"), ("retries", "piper-en-joe"),
                      ("retries", "piper-en-joe-slow"), ("retries", "espeak-zh-pinyin"), ("assembly", "all")]
    # self-contained: nothing is fetched at view time
    assert not page.all("link") and not [s for s in page.all("script") if "src" in s]
    assert not re.search(r"""(src|href)=["'](https?:)?//""", html)


def test_build_audit_counts_by_reason_code_and_the_sample_is_bounded(build_dir, clip_store):
    audit = load_build(build_dir, clip_store, SampleOptions(clips_per_status=2))
    checks = BuildDir(build_dir).read_verification()
    assert len(audit.checks) == len(checks) == 22  # 14 kept clips + story 3 in 2 voices (3 clips, 1 retry) each
    assert (audit.n_kept_clips, audit.n_rejected_attempts) == (14, 4)
    codes = Counter(reason.code for check in checks if check.status == "rejected" for reason in check.reasons)
    assert audit.drop_counts["rejected clip attempts"] == dict(codes) and codes["error_rate"] == 4
    assert audit.drop_counts["dropped items (by stage)"] == {"speak: error_rate": 2}
    statuses = [s.status for s in audit.samples]
    assert statuses.count("rejected") == 2 and len(statuses) == 4
    kept_groups = {(s.task, s.voice) for s in audit.samples if s.status != "rejected"}
    assert len(kept_groups) == 2  # round-robin over (task, voice) before repeating one
    assert all(s.audio_wav and s.text for s in audit.samples)
    again = load_build(build_dir, clip_store, SampleOptions(clips_per_status=2))
    assert [s.audio_wav for s in again.samples] == [s.audio_wav for s in audit.samples]  # deterministic


def test_audio_budget_and_missing_store(build_dir, clip_store, tmp_path):
    first = load_build(build_dir, clip_store, SampleOptions(clips_per_status=3)).samples[0]
    tight = load_build(build_dir, clip_store, SampleOptions(clips_per_status=3, max_audio_bytes=len(first.audio_wav) + 1))
    assert sum(1 for s in tight.samples if s.audio_wav) == 1
    assert any("audio budget is spent" in s.missing for s in tight.samples)
    elsewhere = load_build(build_dir, tmp_path / "empty-store", SampleOptions(clips_per_status=1))
    assert all(s.audio_wav is None and "not in the clip store" in s.missing for s in elsewhere.samples)
    html = render_html(load_inputs([]), elsewhere)
    assert "<audio" not in html and "not in the clip store" in html


def _check_of(sample, checks):
    return next(c for c in checks if (c.item_id, c.voice, c.role, c.attempt) == (sample.item_id, sample.voice, sample.role, sample.attempt))


def test_the_report_embeds_only_whole_clips_of_the_builds_own_store(build_dir, clip_store, tmp_path):
    """Audio that no longer hashes to its name, or a key file of the store naming another file, is never embedded
    (the report read whatever file a key's `path` named, damaged or not, before)."""
    store_copy = tmp_path / "store"
    shutil.copytree(clip_store, store_copy)
    before = load_build(build_dir, store_copy, SampleOptions(clips_per_status=2)).samples
    checks = BuildDir(build_dir).read_verification()
    damaged, redirected = (_check_of(sample, checks) for sample in before[:2])
    (store_copy / ClipStore(store_copy).lookup(damaged.clip_key).path).write_bytes(b"\0" * 64)  # zeroed
    secret = tmp_path / "secret.wav"
    secret.write_bytes(b"RIFF not for the report")
    key_file = store_copy / "keys" / redirected.clip_key[:2] / f"{redirected.clip_key}.json"
    key_file.write_text(json.dumps({**json.loads(key_file.read_text(encoding="utf-8")), "path": str(secret)}), encoding="utf-8")
    after = load_build(build_dir, store_copy, SampleOptions(clips_per_status=2)).samples
    assert after[0].audio_wav is None and "not in the clip store" in after[0].missing
    assert after[1].audio_wav == before[1].audio_wav  # the key's path is ignored: the audio is found by its hash
    assert all(b"not for the report" not in (sample.audio_wav or b"") for sample in after)
