"""The speech modes end to end through a real (tiny, random-weight) speech LLM: audio decoded from the build's dataset,
requests built per mode, scored by the moshi adapter, reported. Slow on a shared 2-core machine (about a minute)."""

from __future__ import annotations

import json

import pytest

from s2sbench.evaluation.models import get_adapter
from s2sbench.evaluation.runner.run import EvalOptions, evaluate
from s2sbench.evaluation.protocol.stats import BootstrapOptions


@pytest.mark.slow
def test_moshi_scores_text_and_speech_modes(build_dir, tiny_moshi_dir, tmp_path, eval_tasks):
    adapter = get_adapter("moshi", model=str(tiny_moshi_dir), device="cpu")
    options = EvalOptions(tasks=eval_tasks, bootstrap=BootstrapOptions(n_resamples=200))
    results = evaluate(build_dir, adapter, None, tmp_path, options)
    stories = results.data["tasks"]["demo-stories-en"]
    assert set(stories["modes"]) == {"T->T", "S->T", "S->S"}
    assert stories["modes"]["S->S"]["token"]["pairwise_strict"]["n_units"] == 12  # 6 items x 2 voices
    # Moshi takes English speech only: the Chinese task's speech modes are skipped with the adapter's reason
    assert {(s.task, s.mode) for s in results.skipped} == {("mc-zh", "S->T"), ("mc-zh", "S->S")}
    samples = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    s2s = [s for s in samples if s["mode"] == "S->S"]
    assert len(s2s) == 24 and all(s["sum_logprob"] < 0 and s["n_tokens"] > 0 for s in s2s)
    # stories: T->T once per item, S->T and S->S per voice; choices: T->T only
    assert results.n_scored == 12 + 24 + 24 + 16
    rerun = evaluate(build_dir, adapter, None, tmp_path, options)
    assert rerun.n_scored == 0 and rerun.data == results.data
