"""The demo's plan: every demo task is evaluated once, by the cascade that reads its language."""

from __future__ import annotations

import pytest

from s2sbench.flows.demo import DEMO_RUNS, DEMO_TASKS, demo_runs
from s2sbench.pipeline.catalog.tasks import load_task

ASR_LANGUAGES = {"tiny.en": {"en"}, "base": {"en", "zh"}}  # the offline Whisper models, among what they read


def test_each_demo_task_is_evaluated_once_by_a_cascade_for_its_language():
    assert sorted(DEMO_TASKS) == ["demo-scmmlu-zh", "demo-stories-en", "demo-stories-zh"]
    for run in DEMO_RUNS:
        languages = {load_task(name).language for name in run.tasks}
        assert len(languages) == 1 and languages <= ASR_LANGUAGES[run.model_options["asr_model"]]
    chinese = next(run for run in DEMO_RUNS if run.name == "zh")
    assert chinese.model_options == {"asr_engine": "faster-whisper", "asr_model": "base", "lm": "gemma3-270m"}


def test_every_demo_task_speaks_in_two_voices():
    """Voice is a factor of the demo's results in each language (its report has an accuracy per voice)."""
    from s2sbench.pipeline.catalog.voices import get_voice

    for name in DEMO_TASKS:
        voices = [get_voice(voice) for voice in load_task(name).voices]
        assert len({(voice.engine, voice.model, voice.speaker) for voice in voices}) >= 2, name


def test_a_subset_plans_only_its_runs():
    assert [(run.name, names) for run, names in demo_runs(["demo-stories-zh"])] == [("zh", ["demo-stories-zh"])]
    with pytest.raises(ValueError, match="not a demo task: sstorycloze"):
        demo_runs(["sstorycloze"])
