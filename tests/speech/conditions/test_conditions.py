"""Acoustic conditions, measured on a real build: Piper speaks six short stories, Whisper tiny.en gates them, and
the build derives every kept clip under each condition type; the derived configs' audio is measured against the
clean clips, rebuilt byte for byte, extended by one condition, and scored and reported per condition."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.run.build import run_build
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.speech.conditions import ConditionMaker, room_impulse_response
from s2sbench.pipeline.core.records import Role
from s2sbench.pipeline.catalog.tasks import load_task

from tests.factories import save_tiny_gpt2

TASK = "conditions-en"
STORIES = ["Tom put the kettle on.", "It snowed all night.", "Anna lost her keys.", "The bus was late again.",
           "Maya planted seeds.", "Owen bought a guitar."]  # fmt: skip
CONDITIONS = """
  - {name: white10, type: noise, snr_db: 10}
  - {name: babble5, type: noise, snr_db: 5, noise: babble}
  - {name: hum, type: noise, snr_db: 0, noise: noises}
  - {name: room, type: reverb, rt60_s: 0.6}
  - {name: hall, type: reverb, rirs: rirs}
  - {name: phone, type: telephone}
  - {name: fast, type: rate, factor: 1.25}
  - {name: loud, type: gain, db: 6}
"""


def _write_task(folder: Path, conditions: str, file_name: str = TASK) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": f"s{n}", "context": text, "candidates": ["Yes.", "No."], "right": 0})
             for n, text in enumerate(STORIES)]  # fmt: skip
    (folder / "stories.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rate = 16000
    noises, rirs = folder / "noises", folder / "rirs"
    noises.mkdir(exist_ok=True)
    rirs.mkdir(exist_ok=True)
    seconds = np.arange(rate * 2) / rate
    soundfile.write(noises / "hum.wav", (0.1 * np.sin(2 * np.pi * 120 * seconds)).astype(np.float32), rate)
    decay = np.random.default_rng(0).standard_normal(rate) * np.exp(-seconds[:rate] * 6.9 / 0.8)  # RT60 0.8 s
    soundfile.write(rirs / "hall.wav", (decay / np.abs(decay).max()).astype(np.float32), rate)
    path = folder / f"{file_name}.yaml"
    path.write_text(f"name: {TASK}\nlanguage: en\nsource: {{loader: jsonl, path: stories.jsonl}}\nvoices: [piper-en-joe]\n"
                    "gate: {max_error_rate: 0.5, asr: {engine: faster-whisper, model: tiny.en}}\n"
                    f"conditions:\n{conditions}", encoding="utf-8")  # fmt: skip
    return path


@pytest.fixture(scope="module")
def condition_build(tmp_path_factory):
    """The build flow's build (the condition stage runs as its Prefect tasks)."""
    from s2sbench.flows.build import build_flow

    root = tmp_path_factory.mktemp("conditions")
    path = _write_task(root / "task", CONDITIONS)
    build_flow(tasks=[str(path)], out_dir=str(root / "build"), store_root=str(root / "clips"), shard_size=8)
    return root, load_task(str(path)), BuildDir(root / "build").read_report()


def _audio(value: dict) -> np.ndarray:
    samples, _ = soundfile.read(io.BytesIO(value["bytes"]), dtype="float64")
    return samples


def _pairs(root: Path, condition: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(clean, under the condition) context clips of every row, from the build's dataset."""
    configs = BuildDir(root / "build").load_dataset()
    clean = configs[TASK]["test"].cast_column("context_audio", _undecoded())
    other = configs[f"{TASK}-{condition}"]["test"].cast_column("context_audio", _undecoded())
    assert clean["id"] == other["id"]
    return [(_audio(a), _audio(b)) for a, b in zip(clean["context_audio"], other["context_audio"])]


def _undecoded():
    import datasets

    return datasets.Audio(decode=False)


def test_every_condition_is_a_config_of_every_kept_row(condition_build):
    root, task, report = condition_build
    configs = BuildDir(root / "build").load_dataset()
    kept = report.tasks[TASK].kept
    assert kept >= len(STORIES) - 1  # babble mixes 4 other rows' clips
    assert sorted(configs) == sorted([TASK] + [f"{TASK}-{c.name}" for c in task.conditions])
    for condition in task.conditions:
        summary = report.tasks[TASK].conditions[condition.name]
        assert summary.rows == kept and summary.parameters == condition.parameters()
        assert summary.error_rate is not None and summary.asr_model.startswith("faster-whisper:tiny.en")
        split = configs[f"{TASK}-{condition.name}"]["test"]
        assert split["verification_status"] == ["passed"] * kept  # the gate passed the clean clips


@pytest.mark.parametrize("condition, snr_db", [("white10", 10.0), ("babble5", 5.0), ("hum", 0.0)])
def test_noise_is_mixed_at_the_asked_snr(condition_build, condition, snr_db):
    for clean, noisy in _pairs(condition_build[0], condition):
        assert noisy.size == clean.size
        measured = 10 * np.log10(np.mean(clean**2) / np.mean((noisy - clean) ** 2))
        assert abs(measured - snr_db) < 1.0, (condition, measured)


def test_telephone_has_no_energy_above_4_khz(condition_build):
    for clean, phone in _pairs(condition_build[0], "phone"):
        power = np.abs(np.fft.rfft(phone)) ** 2
        frequency = np.fft.rfftfreq(phone.size, 1 / 16000)
        above = 10 * np.log10(power[frequency > 4000].sum() / power[frequency <= 4000].sum())
        assert above < -40.0, above
        assert abs(phone.size - clean.size) <= 2


def test_rate_changes_duration_by_the_factor(condition_build):
    for clean, fast in _pairs(condition_build[0], "fast"):
        assert abs((clean.size / fast.size) / 1.25 - 1) < 0.03


def _decay_s(samples: np.ndarray) -> float:
    """How long the end of a clip takes to fall from 20 dB to 50 dB below its loudest 10 ms frame, in seconds."""
    frames = samples[: samples.size // 160 * 160].reshape(-1, 160)
    level = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-20)
    last_above = [np.flatnonzero(level > level.max() - drop)[-1] for drop in (20, 50)]
    return (last_above[1] - last_above[0]) / 100


@pytest.mark.parametrize("condition", ["room", "hall"])
def test_reverb_lengthens_the_decay(condition_build, condition):
    longer = []
    for clean, wet in _pairs(condition_build[0], condition):
        assert wet.size > clean.size + 0.3 * 16000  # the room's tail follows the speech
        longer.append(_decay_s(wet) - _decay_s(clean))
    assert min(longer) > 0.05 and np.mean(longer) > 0.15, longer


def test_simulated_room_has_the_asked_rt60():
    import pyroomacoustics as pra

    measured = pra.experimental.measure_rt60(room_impulse_response(0.6, 16000), fs=16000)
    assert abs(measured - 0.6) < 0.15, measured


def test_gain_keeps_its_level(condition_build):
    for clean, loud in _pairs(condition_build[0], "loud"):
        unclipped = np.abs(loud) < 0.999
        ratio = 20 * np.log10(np.sqrt(np.mean(loud[unclipped] ** 2) / np.mean(clean[unclipped] ** 2)))
        assert abs(ratio - 6.0) < 0.1, ratio  # not loudness-normalized again


def test_a_rebuild_gives_the_same_bytes(condition_build, tmp_path):
    """The condition clips made again from the same clean clips in an empty store are the same files."""
    root, task, _ = condition_build
    build = BuildDir(root / "build")
    conditioned = build.read_conditioned()
    fresh = ClipStore(tmp_path / "store")
    old = ClipStore(root / "clips")
    rows = build.read_manifest()
    for row in rows:
        for clip in row.clips.values():
            fresh.put_wav(clip.key, old.read_bytes(clip.path), {"copied": True})
    maker = ConditionMaker(task, fresh, [row.clips[Role.context()].audio_sha256 for row in rows])
    by_id = {row.id: row for row in rows}
    for entry in conditioned:
        condition = next(c for c in task.conditions if c.name == entry.condition)
        again = maker.derive(by_id[entry.id].clips[Role.context()], condition)
        assert again.audio_sha256 == entry.clips[Role.context()].audio_sha256, entry.condition
    assert maker.made == len(conditioned)


@pytest.mark.slow
def test_adding_a_condition_makes_only_its_clips(condition_build, tmp_path):
    """The same build resumed with one more condition derives that condition's clips only."""
    root, task, _ = condition_build
    out = tmp_path / "build"
    shutil.copytree(root / "build", out)
    store = ClipStore(root / "clips")
    before = set(store.root.glob("audio/*/*.wav"))
    more = load_task(str(_write_task(root / "task", CONDITIONS + "  - {name: soft, type: gain, db: -12}\n", "more")))
    report = run_build([more], out, store_root=store.root, shard_size=8)
    made = set(store.root.glob("audio/*/*.wav")) - before
    kept = report.tasks[TASK].kept
    assert len(made) == kept  # one context clip per row, under the new condition only
    assert report.tasks[TASK].conditions["soft"].rows == kept
    assert f"{TASK}-soft" in BuildDir(out).load_dataset()


def test_eval_and_report_show_each_condition(condition_build, tmp_path):
    """A real cascade (tiny.en's transcripts, a random-weight GPT2) scores S->T on every condition's config; the
    results, the markdown and the HTML report give accuracy and the degradation against T->T and against clean S->T,
    with intervals, and the ASR's error rate per condition (the library calls behind `s2sbench eval` and `report`)."""
    import s2sbench
    from s2sbench.evaluation.report.html import write_report
    from s2sbench.evaluation.results.summary import results_markdown

    root, task, _ = condition_build
    lm = save_tiny_gpt2(tmp_path / "gpt2", 1)
    results = s2sbench.evaluate(model="cascade", model_args={"lm": str(lm)}, dataset=str(root / "build"),
                                modes=["T->T", "S->T"], out=str(tmp_path / "eval"), bootstrap=200)  # fmt: skip
    entry = results.file.tasks[TASK]
    for condition in task.conditions:
        mode = f"S->T@{condition.name}"
        accuracy = entry.accuracy(mode)
        assert accuracy.ci_low <= accuracy.value <= accuracy.ci_high
        assert {d.reference_mode for d in entry.degradation if d.mode == mode} == {"T->T", "S->T"}
        assert entry.conditions[condition.name].parameters == condition.parameters()
        assert entry.conditions[condition.name].asr_error_rate is not None
    markdown = results_markdown(results.file)
    assert "### Acoustic conditions" in markdown and "| babble5 | type=noise, snr_db=5.0, noise=babble | S->T |" in markdown
    report = write_report([tmp_path / "eval"], tmp_path / "report.html", root / "build")
    page = report.read_text(encoding="utf-8")
    assert "Acoustic conditions" in page and 'alt="accuracy per acoustic condition"' in page
    # in Chromium at 1,300 px the chart loads and is shown at the size it was drawn: its labels, kept apart on the
    # figure itself (test_report_plots, up to 12 conditions), are not shrunk together by the page
    from s2sbench.evaluation.report.browser import BrowserOptions, dump_dom

    dom = dump_dom(report, BrowserOptions(window=(1300, 1000)))
    chart = re.search(r'<img\b[^>]*?data-plot="conditions"[^>]*>', dom).group(0)
    assert 'data-state="loaded"' in chart and float(re.search(r'data-scale="([\d.]+)"', chart).group(1)) == 1.0, chart


def test_the_condition_stage_reports_its_progress_from_the_folder(condition_build):
    from s2sbench.pipeline.run.progress import ConditionProgress

    root, task, report = condition_build
    kept = report.tasks[TASK].kept
    progress = ConditionProgress("conditions", BuildDir(root / "build"), [task], {TASK: kept})
    snapshot = progress.snapshot()
    assert snapshot.parts == {f"{TASK}-{c.name}": (kept, kept) for c in task.conditions}
    assert snapshot.done_this_run == 0  # a finished stage read back: nothing to do, no rate to promise


def test_each_row_keeps_what_the_asr_heard_of_its_own_clips(condition_build):
    """One item in two voices in one batch: each row's checks are of its own clips (they were once keyed by item)."""
    from s2sbench.pipeline.gate.asr import get_asr
    from s2sbench.pipeline.gate.verify import Verifier

    root, task, _ = condition_build
    row = BuildDir(root / "build").read_manifest()[0]
    other_clip = row.clips[Role.context()].model_copy(update={"voice": "piper-en-joe-slow"})
    other = row.model_copy(update={"id": f"{row.item.id}@piper-en-joe-slow", "voice": "piper-en-joe-slow",
                                   "clips": {Role.context(): other_clip}})  # fmt: skip
    verifier = Verifier(get_asr("faster-whisper", "tiny.en"), task.gate, task.language)
    maker = ConditionMaker(task, ClipStore(root / "clips"), [row.clips[Role.context()].audio_sha256], verifier)
    phone = next(c for c in task.conditions if c.name == "phone")
    for entry in maker.condition_rows([row, other], phone):
        check = entry.checks[Role.context()]
        assert (check.clip_key, check.voice) == (entry.clips[Role.context()].key, entry.voice)
    for entry in BuildDir(root / "build").read_conditioned():
        assert all(entry.checks[role].clip_key == clip.key for role, clip in entry.clips.items())


def test_assembly_derives_a_lost_condition_clip_again(condition_build, tmp_path):
    """A condition clip gone from the store is derived again, byte for byte, when the build is resumed."""
    root, task, _ = condition_build
    out, store = tmp_path / "build", tmp_path / "clips"
    shutil.copytree(root / "build", out)
    shutil.copytree(root / "clips", store)
    lost = BuildDir(out).read_conditioned()[0]
    ClipStore(store).abspath(lost.clips[Role.context()].path).unlink()
    report = run_build([task], out, store_root=store, shard_size=8)
    assert any(lost.id in line and lost.condition in line for line in report.integrity.clips_remade)
    assert ClipStore(store).intact(lost.clips[Role.context()].audio_sha256)
