from __future__ import annotations

import json
from dataclasses import replace

import pytest
from tests.original_rules import (
    checkpoint_folders,
    cmmlu4_result_dir_summary,
    cmmlu4_summary,
    read_summary,
    story_result_dir_summary,
)
from tests.evaluation.conftest import CHOICES, STORY_VOICES, ToyAdapter

from s2sbench.evaluation.models.base import AdapterError
from s2sbench.evaluation.results.summary import results_markdown
from s2sbench.evaluation.runner.run import DatasetError, EvalOptions, evaluate
from s2sbench.evaluation.protocol.stats import BootstrapOptions

ALL = ("T->T", "S->T", "S->S", "T->S")
# stories: 6 items x 2 candidates, once in T->T and per voice (2) in the three speech modes; choices: 4 x 4 in
# T->T and S->T (their candidates were not spoken)
N_CANDIDATES = 6 * 2 + 3 * (6 * 2 * 2) + 2 * (4 * 4)


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def options(eval_tasks):
    return EvalOptions(tasks=eval_tasks, bootstrap=BootstrapOptions(n_resamples=300), requests_per_call=8)


def test_all_modes_scored_reported_and_cached(build_dir, tmp_path, options):
    adapter = ToyAdapter()
    results = evaluate(build_dir, adapter, ALL, tmp_path, options)
    assert (results.n_scored, results.n_cached) == (N_CANDIDATES, 0)
    assert len(adapter.requests) == N_CANDIDATES  # text-only T->T is scored once per item, not once per voice
    assert {(s.task, s.mode) for s in results.skipped} == {("mc-zh", "S->S"), ("mc-zh", "T->S")}
    assert "no candidate audio" in results.skipped[0].reason

    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert data == results.data
    stories, choices = data["tasks"]["demo-stories-en"], data["tasks"]["mc-zh"]
    assert stories["rules"] == ["pairwise_strict"] and choices["rules"] == ["pairwise_ties_right", "argmin"]
    assert set(stories["modes"]) == set(ALL) and set(choices["modes"]) == {"T->T", "S->T"}
    assert set(stories["modes"]["S->T"]) == {"token", "char", "byte", "sum"}
    speech = stories["modes"]["S->T"]["token"]["pairwise_strict"]
    assert speech["n_units"] == 12 and speech["chance"] == 0.5
    assert set(speech["per_voice"]) == {"voice-a", "voice-b"} and "range" in speech["voice_spread"]
    assert speech["ci_low"] <= speech["value"] <= speech["ci_high"]
    assert choices["modes"]["T->T"]["byte"]["pairwise_ties_right"]["n_units"] == 12
    assert choices["modes"]["T->T"]["byte"]["argmin"] | {} and choices["modes"]["T->T"]["byte"]["argmin"]["chance"] == 0.25
    gaps = {(d["reference_mode"], d["mode"], d["normalization"], d["rule"]) for d in stories["degradation"]}
    assert ("T->T", "S->T", "token", "pairwise_strict") in gaps and ("T->S", "S->S", "char", "pairwise_strict") in gaps
    gap = next(d for d in choices["degradation"] if d["normalization"] == "token" and d["rule"] == "argmin")
    t2t, s2t = choices["modes"]["T->T"]["token"]["argmin"]["value"], choices["modes"]["S->T"]["token"]["argmin"]["value"]
    assert gap["absolute"]["value"] == pytest.approx(t2t - s2t)
    assert 0 <= gap["mcnemar"]["p_value"] <= 1 and gap["mcnemar"]["n"] == 4

    samples = read_jsonl(tmp_path / "samples.jsonl")
    assert len(samples) == N_CANDIDATES
    assert {"loss", "correct", "n_tokens", "sum_logprob", "n_bytes"} <= set(samples[0])
    assert "| demo-stories-en | pairwise_strict |" in results_markdown(results)

    again = ToyAdapter()
    rerun = evaluate(build_dir, again, ALL, tmp_path, options)
    assert (rerun.n_scored, rerun.n_cached, again.requests) == (0, N_CANDIDATES, [])
    assert rerun.data == results.data


def test_original_results_pass_the_original_readers_with_the_exports_uttids(build_dir, tmp_path, options):
    """eval's original/ folders, read by the original eval_story.py and eval_cmmlu4.py rules (tests/original_rules.py)
    with the export's question file, give eval's accuracies; result and export uttids are the same ids."""
    from s2sbench.pipeline.publish.original import export_original

    results = evaluate(build_dir, ToyAdapter(seed=5), ("T->T", "S->T"), tmp_path / "out", options)
    export_original(build_dir, tmp_path / "export")
    stories = results.data["tasks"]["demo-stories-en"]["modes"]
    original = tmp_path / "out" / "original"
    for voice in STORY_VOICES:
        name = f"demo-stories-en--{voice}"
        exported = {row["uttid"] for row in read_jsonl(tmp_path / "export" / f"{name}.jsonl")}
        for mode, expected in (("S-T", stories["S->T"]["token"]["pairwise_strict"]["per_voice"][voice]),
                               ("T-T", results.accuracy("demo-stories-en", "T->T"))):  # fmt: skip
            result_dir = original / mode / name
            [(step, folder)] = checkpoint_folders(result_dir)
            assert (step, folder.name) == (0, "ckpt_0_0_toy")
            assert {row["uttid"] for row in read_jsonl(folder / "result.jsonl")} == exported
            lines = (result_dir / "results_summary.txt").read_text(encoding="utf-8").splitlines()
            assert lines == story_result_dir_summary(result_dir)
            assert read_summary(result_dir / "results_summary.txt")[0][1] == pytest.approx(expected, abs=5e-5)
    name = "mc-zh--voice-a"
    for mode, key in (("S-T", "S->T"), ("T-T", "T->T")):
        result_dir = original / mode / name
        question_file = tmp_path / "export" / f"{name}.jsonl"
        [(_, folder)] = checkpoint_folders(result_dir)
        *_, matched = cmmlu4_summary(read_jsonl(question_file), read_jsonl(folder / "result.jsonl"))
        assert matched == len(CHOICES)  # every question of the export found its four losses
        lines = (result_dir / "results_summary.txt").read_text(encoding="utf-8").splitlines()
        assert lines == cmmlu4_result_dir_summary(result_dir, question_file)
        assert read_summary(result_dir / "results_summary.txt")[0][1] == pytest.approx(results.accuracy("mc-zh", key), abs=5e-5)


def test_a_subset_keeps_the_uttids_of_the_whole_set(build_dir, tmp_path, options):
    from s2sbench.pipeline.publish.original import export_original

    export_original(build_dir, tmp_path / "export")
    evaluate(build_dir, ToyAdapter(), ("S->T",), tmp_path / "out", replace(options, limit=2, voices=("voice-b",)))
    name = "demo-stories-en--voice-b"
    exported = [row["uttid"] for row in read_jsonl(tmp_path / "export" / f"{name}.jsonl")]
    [(_, folder)] = checkpoint_folders(tmp_path / "out" / "original" / "S-T" / name)
    assert [row["uttid"] for row in read_jsonl(folder / "result.jsonl")] == exported[:4]
    assert not (tmp_path / "out" / "original" / "S-T" / "demo-stories-en--voice-a").exists()


class FailingAdapter(ToyAdapter):
    """Dies once it has answered 16 requests, like a run killed part-way."""

    def _loglikelihood(self, requests):
        if len(self.requests) >= 16:
            raise AdapterError("out of memory")
        return super()._loglikelihood(requests)


def test_a_killed_run_resumes_from_the_cache(build_dir, tmp_path, options):
    with pytest.raises(AdapterError, match="out of memory"):
        evaluate(build_dir, FailingAdapter(), ("T->T", "S->T"), tmp_path, options)
    # batches of 8 requests: T->T of the first chunk of stories (8 + 4), then 8 of S->T, then the failure
    assert len(read_jsonl(tmp_path / "score_cache.jsonl")) == 20
    resumed = evaluate(build_dir, ToyAdapter(), ("T->T", "S->T"), tmp_path, options)
    assert resumed.n_cached == 20 and resumed.n_scored == 12 + 24 + 16 + 16 - 20
    fresh = evaluate(build_dir, ToyAdapter(), ("T->T", "S->T"), tmp_path / "fresh", options)
    assert fresh.data["tasks"] == resumed.data["tasks"]


def test_rows_read_back_from_the_cache_are_not_this_runs_rate(build_dir, tmp_path, options):
    """A resumed eval's progress counts the rows whose scores it only read back as done before it started, so its
    rate and ETA are of the scoring still to do (a whole-set eval resumed at 83% once promised the rest in 20 s)."""
    one_row_chunks = replace(options, chunk_rows=1)
    first, again = [], []
    evaluate(build_dir, ToyAdapter(), ("T->T",), tmp_path, one_row_chunks, on_progress=[first.append])
    # T->T is scored once per item: the second voice's rows of a story cost nothing either
    stories = first[-1].parts["demo-stories-en--voice-a/test"][1]
    assert first[-1].done == first[-1].total and first[-1].done_this_run == stories + len(CHOICES)
    assert first[-1].per_minute
    evaluate(build_dir, ToyAdapter(), ("T->T",), tmp_path, one_row_chunks, on_progress=[again.append])
    assert [snapshot.done for snapshot in again] == [snapshot.done for snapshot in first]
    assert {(snapshot.done_this_run, snapshot.per_minute, snapshot.eta_s) for snapshot in again} == {(0, None, None)}


def test_a_mode_the_model_cannot_score_is_an_error_and_a_language_it_cannot_hear_is_skipped(build_dir, tmp_path, options):
    from s2sbench.evaluation.protocol.modes import ModeError

    results = evaluate(build_dir, ToyAdapter(modes=frozenset({"T->T"})), None, tmp_path, options)
    assert results.skipped == ()  # modes=None: the modes the adapter declares
    with pytest.raises(ModeError, match=r"model 'toy' cannot score S->T: it scores T->T only"):
        evaluate(build_dir, ToyAdapter(modes=frozenset({"T->T"})), ("T->T", "S->T"), tmp_path, options)
    english = ToyAdapter(modes=frozenset({"T->T", "S->T"}))
    english.speech_languages = frozenset({"en"})
    results = evaluate(build_dir, english, ("T->T", "S->T"), tmp_path, options)
    assert [(s.task, s.mode, s.reason) for s in results.skipped] == [("mc-zh", "S->T", "toy cannot take zh speech (only ['en'])")]
    english.speech_languages = frozenset({"fr"})
    with pytest.raises(ModeError, match=r"no selected task can be scored in S->T \(demo-stories-en S->T: toy cannot take en"):
        evaluate(build_dir, english, ("T->T", "S->T"), tmp_path, options)
    with pytest.raises(ModeError, match="S->S score spoken candidates, and no selected task has them"):
        evaluate(build_dir, ToyAdapter(), ("S->S",), tmp_path, replace(options, select_tasks=("mc-zh",)))


def test_selected_tasks_only_and_a_missing_one_is_named(build_dir, tmp_path, options):
    adapter = ToyAdapter()
    results = evaluate(build_dir, adapter, ("T->T", "S->T"), tmp_path, replace(options, select_tasks=("mc-zh",)))
    assert set(results.data["tasks"]) == {"mc-zh"} and results.n_scored == 16 + 16
    assert {request.language for request in adapter.requests} == {"zh"}
    assert results.data["model"]["licence"] == ""
    from s2sbench.evaluation.data.sources import DatasetSourceError

    with pytest.raises(DatasetSourceError, match=r"no task 'no-such-task' \(it has: demo-stories-en, mc-zh\)"):
        evaluate(build_dir, adapter, ("T->T",), tmp_path / "b", replace(options, select_tasks=("mc-zh", "no-such-task")))


def test_changed_revision_or_template_rescored(build_dir, tmp_path, options, eval_tasks):
    evaluate(build_dir, ToyAdapter(), ("T->T",), tmp_path, options)
    other_revision = evaluate(build_dir, ToyAdapter(), ("T->T",), tmp_path, replace(options, revision="retrained"))
    assert other_revision.n_cached == 0
    task = eval_tasks["mc-zh"]
    changed = task.model_copy(update={"templates": task.templates.model_copy(update={"text_context": "问：{context}{continuation}"})})
    rescored = evaluate(build_dir, ToyAdapter(), ("T->T",), tmp_path, replace(options, tasks={"mc-zh": changed}))
    assert rescored.n_scored == 16 and rescored.n_cached == 12


def test_another_build_into_the_same_results_folder_is_scored_afresh(build_dir, tmp_path, options):
    """The cache key holds the audio hashes: the same texts with other audio reuse only the text-only scores (the
    score cache served the old build's speech scores before)."""
    from tests.evaluation.conftest import make_build

    other = make_build(tmp_path / "other-build", tone_offset=500)
    first = evaluate(build_dir, ToyAdapter(), ("T->T", "S->T"), tmp_path / "out", options)
    second = evaluate(other, ToyAdapter(), ("T->T", "S->T"), tmp_path / "out", options)
    text_only = 6 * 2 + 4 * 4  # T->T: every candidate of every item, once
    assert (second.n_cached, second.n_scored) == (text_only, first.n_scored - text_only)
    fresh = evaluate(other, ToyAdapter(), ("T->T", "S->T"), tmp_path / "fresh", options)
    assert second.data["tasks"] == fresh.data["tasks"]


def test_bad_builds_name_the_problem(build_dir, tmp_path, options):
    import datasets

    from s2sbench.evaluation.data.sources import DatasetSourceError
    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    with pytest.raises(DatasetSourceError, match="not a build folder, a dataset folder"):
        evaluate(tmp_path, ToyAdapter(), ("T->T",), tmp_path / "out", options)
    BuildDir(tmp_path).save_dataset({"x": datasets.DatasetDict({"test": datasets.Dataset.from_dict({"item_id": ["a"], "task": ["t"]})})})
    with pytest.raises(DatasetError, match=r"config 'x' split 'test': column 'id' is missing"):
        evaluate(tmp_path, ToyAdapter(), ("T->T",), tmp_path / "out", options)
    with pytest.raises(ValueError, match="unknown mode 'S2S'"):
        evaluate(tmp_path, ToyAdapter(), ("S2S",), tmp_path / "out", options)
    options = replace(options, tasks=None)  # these builds hold demo-stories-en only: the registry's task file fits
    dup = BuildDir(tmp_path / "dup")
    split = BuildDir(build_dir).load_dataset()["demo-stories-en--voice-a"]["test"]
    dup.save_dataset({"s": datasets.DatasetDict({"test": datasets.concatenate_datasets([split.select([0]), split.select([0])])})})
    with pytest.raises(DatasetError, match=r"config 's' split 'test' row 1: item 'demo-stories-en-001' with voice 'voice-a' repeats .* row 0"):
        evaluate(dup.root, ToyAdapter(), ("T->T",), tmp_path / "out", options)
    bad_label = split.select([0]).map(lambda row: {"label": 5}, keep_in_memory=True)
    BuildDir(tmp_path / "label").save_dataset({"s": datasets.DatasetDict({"test": bad_label})})
    with pytest.raises(DatasetError, match=r"config 's' split 'test' row 0: field '<row>': .*label 5 is not an index into 2 candidates"):
        evaluate(tmp_path / "label", ToyAdapter(), ("T->T",), tmp_path / "out", options)
    with pytest.raises(DatasetSourceError, match=r"no task 'nope' \(it has: demo-stories-en, mc-zh\)"):
        evaluate(build_dir, ToyAdapter(), ("T->T",), tmp_path / "out", replace(options, select_tasks=("nope",)))
    with pytest.raises(DatasetSourceError, match=r"no voice 'voice-z' \(it has: voice-a, voice-b\)"):
        evaluate(build_dir, ToyAdapter(), ("T->T",), tmp_path / "out", replace(options, voices=("voice-z",)))


def test_score_cache_appends_batches_once(tmp_path):
    from tests.evaluation.protocol.test_scoring import generated_scores

    from s2sbench.evaluation.runner.run import ScoreCache

    scores = generated_scores(3, 2, 0)
    cache = ScoreCache(tmp_path / "cache.jsonl")
    cache.add(scores[:4])
    cache.add(scores[2:])  # two already written
    cache.close()
    assert [line["id"] for line in read_jsonl(tmp_path / "cache.jsonl")] == [s.id for s in scores]
    reopened = ScoreCache(tmp_path / "cache.jsonl")
    reopened.close()
    assert reopened.scores == {s.id: s for s in scores}


def test_task_config_from_the_build_report_or_a_clear_error(build_dir, tmp_path, options, eval_tasks):
    import shutil

    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    copy = BuildDir(tmp_path / "build")
    shutil.copytree(build_dir, copy.root)
    no_tasks = replace(options, tasks=None)
    with pytest.raises(ValueError, match="unknown task 'mc-zh'.*pass its YAML with --task-file"):
        evaluate(copy.root, ToyAdapter(), ("T->T",), tmp_path / "out", no_tasks)
    report = copy.read_report()
    entry = report.tasks["mc-zh"].model_copy(update={"config": eval_tasks["mc-zh"]})
    copy.write_report(report.model_copy(update={"tasks": {**report.tasks, "mc-zh": entry}}))
    results = evaluate(copy.root, ToyAdapter(), ("T->T",), tmp_path / "out", no_tasks)
    assert results.data["tasks"]["mc-zh"]["version"] == 2
    data = json.loads(copy.report_path.read_text(encoding="utf-8"))
    data["tasks"]["mc-zh"]["config"]["scoring"] = "best_of_three"
    copy.report_path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"build_report.json: field 'tasks.mc-zh.config.scoring': Input should be"):
        evaluate(copy.root, ToyAdapter(), ("T->T",), tmp_path / "out", no_tasks)
