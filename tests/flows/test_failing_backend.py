"""A backend that fails on some clips: the flow finishes, the failures are retried, then dropped with reasons."""

from __future__ import annotations

from s2sbench.pipeline.buildfolder.builddir import BuildDir


def test_flow_finishes_when_a_backend_fails_on_some_clips(prefect_harness, story_task, tmp_path, monkeypatch):
    from s2sbench.flows.build import build_flow
    from s2sbench.pipeline.speech import tts

    from tests.flows.flaky_engine import BoatRefusingEspeak

    monkeypatch.setitem(tts.ENGINES.added, "flaky-espeak", "tests.flows.flaky_engine:BoatRefusingEspeak")
    voices = tmp_path / "voices.yaml"
    voices.write_text("- {id: flaky-en, engine: flaky-espeak, language: en, model: en-us}\n", encoding="utf-8")
    monkeypatch.setenv("S2SBENCH_VOICES", str(voices))
    task = story_task.read_text(encoding="utf-8").replace("voices: [piper-en-joe]", "voices: [flaky-en]")
    task = task.replace("max_error_rate: 0.25", "max_error_rate: 1.0")  # this test is about the backend, not the gate
    story_task.write_text(task, encoding="utf-8")

    report = build_flow(tasks=[str(story_task)], out_dir=str(tmp_path / "build"), shard_size=2,
                        store_root=str(tmp_path / "clips"))

    entry = report["tasks"]["flow-test-stories"]
    assert (entry["kept"], entry["dropped"]) == (3, 1)
    build = BuildDir(tmp_path / "build")
    [drop] = build.read_drops()
    assert drop.item_id == "s4" and drop.reason.code == "synthesis_failed" and "planted failure" in drop.reason.detail
    assert entry["drop_reasons"] == {"synthesis_failed": 1}
    failed = [c for c in build.read_verification() if c.item_id == "s4" and not c.passed]
    assert [(c.attempt, c.seed) for c in failed] == [(1, 0), (2, 1)]  # retried with the next seed, then dropped
    assert all(c.reasons[0].code == "synthesis_failed" for c in failed)
    assert BoatRefusingEspeak.calls_refused == 2
