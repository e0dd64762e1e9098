from __future__ import annotations

import json
from dataclasses import replace

import pytest
from .conftest import STORIES, ToyAdapter
from .test_scoring import reference_cmmlu_accuracy, reference_story_accuracy

from s2sbench.evaluation.models.base import AdapterError
from s2sbench.evaluation.report.summary import results_markdown
from s2sbench.evaluation.run import DatasetError, EvalOptions, evaluate
from s2sbench.evaluation.stats import BootstrapOptions

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


def test_original_files_give_the_reference_accuracy(build_dir, tmp_path, options):
    results = evaluate(build_dir, ToyAdapter(seed=5), ("T->T", "S->T"), tmp_path, options)
    stories = results.data["tasks"]["demo-stories-en"]["modes"]
    folder = tmp_path / "original" / "demo-stories-en"
    for voice in ("voice-a", "voice-b"):
        rows = read_jsonl(folder / "S-T" / voice / "result.jsonl")
        assert len(rows) == 2 * len(STORIES) and set(rows[0]) == {"uttid", "key", "loss", "ppl"}
        assert reference_story_accuracy(rows) == stories["S->T"]["token"]["pairwise_strict"]["per_voice"][voice]
    assert reference_story_accuracy(read_jsonl(folder / "T-T" / "text" / "result.jsonl")) == results.accuracy(
        "demo-stories-en", "T->T"
    )
    summary = (folder / "T-T" / "text" / "summary.csv").read_text().splitlines()
    assert summary[0] == "step,accuracy%,avg_pos_loss,avg_neg_loss" and summary[1].startswith("0,")
    rows = read_jsonl(tmp_path / "original" / "mc-zh" / "S-T" / "voice-a" / "result.jsonl")
    answers = {}
    for row in rows:
        if row["key"] == "A":
            item = row["uttid"].split("_", 1)[1]
            right = next(s["candidate"] for s in read_jsonl(tmp_path / "samples.jsonl")
                         if s["item_id"] == item and s["right"])  # fmt: skip
            answers[row["uttid"]] = "ABCD"[right]
    assert reference_cmmlu_accuracy(rows, answers) == results.accuracy("mc-zh", "S->T")


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


def test_unsupported_modes_are_recorded_with_the_adapters_reason(build_dir, tmp_path, options):
    results = evaluate(build_dir, ToyAdapter(modes=frozenset({"T->T"})), None, tmp_path, options)
    assert results.skipped == ()  # modes=None: the modes the adapter declares
    results = evaluate(build_dir, ToyAdapter(modes=frozenset({"T->T"})), ("T->T", "S->T"), tmp_path, options)
    assert {(s.task, s.mode, s.reason) for s in results.skipped} == {
        ("demo-stories-en", "S->T", "toy does not score S->T"),
        ("mc-zh", "S->T", "toy does not score S->T"),
    }
    assert set(results.data["tasks"]["demo-stories-en"]["modes"]) == {"T->T"}


def test_selected_tasks_only_and_a_missing_one_is_named(build_dir, tmp_path, options):
    adapter = ToyAdapter()
    results = evaluate(build_dir, adapter, ("T->T", "S->T"), tmp_path, replace(options, select_tasks=("mc-zh",)))
    assert set(results.data["tasks"]) == {"mc-zh"} and results.n_scored == 16 + 16
    assert {request.language for request in adapter.requests} == {"zh"}
    assert results.data["model"]["licence"] == ""
    with pytest.raises(DatasetError, match=r"no rows of the selected task\(s\) no-such-task"):
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
    from .conftest import make_build

    other = make_build(tmp_path / "other-build", tone_offset=500)
    first = evaluate(build_dir, ToyAdapter(), ("T->T", "S->T"), tmp_path / "out", options)
    second = evaluate(other, ToyAdapter(), ("T->T", "S->T"), tmp_path / "out", options)
    text_only = 6 * 2 + 4 * 4  # T->T: every candidate of every item, once
    assert (second.n_cached, second.n_scored) == (text_only, first.n_scored - text_only)
    fresh = evaluate(other, ToyAdapter(), ("T->T", "S->T"), tmp_path / "fresh", options)
    assert second.data["tasks"] == fresh.data["tasks"]


def test_bad_builds_name_the_problem(build_dir, tmp_path, options):
    import datasets

    from s2sbench.pipeline.builddir import BuildDir, NotABuildError

    with pytest.raises(NotABuildError, match="no saved DatasetDict"):
        evaluate(tmp_path, ToyAdapter(), ("T->T",), tmp_path / "out", options)
    BuildDir(tmp_path).save_dataset(datasets.DatasetDict({"x": datasets.Dataset.from_dict({"item_id": ["a"], "task": ["t"]})}))
    with pytest.raises(DatasetError, match=r"split 'x': column 'id' is missing"):
        evaluate(tmp_path, ToyAdapter(), ("T->T",), tmp_path / "out", options)
    with pytest.raises(ValueError, match="unknown mode 'S2S'"):
        evaluate(tmp_path, ToyAdapter(), ("S2S",), tmp_path / "out", options)
    dup = BuildDir(tmp_path / "dup")
    split = BuildDir(build_dir).load_dataset()["demo_stories_en"]
    dup.save_dataset(datasets.DatasetDict({"s": datasets.concatenate_datasets([split.select([0]), split.select([0])])}))
    with pytest.raises(DatasetError, match=r"split 's' row 1: item 'demo-stories-en-001' with voice 'voice-a' repeats .* row 0"):
        evaluate(dup.root, ToyAdapter(), ("T->T",), tmp_path / "out", options)
    bad_label = split.select([0]).map(lambda row: {"label": 5}, keep_in_memory=True)
    BuildDir(tmp_path / "label").save_dataset(datasets.DatasetDict({"s": bad_label}))
    with pytest.raises(DatasetError, match=r"split 's' row 0: field '<row>': .*label 5 is not an index into 2 candidates"):
        evaluate(tmp_path / "label", ToyAdapter(), ("T->T",), tmp_path / "out", options)


def test_score_cache_appends_batches_once(tmp_path):
    from .test_scoring import generated_scores

    from s2sbench.evaluation.run import ScoreCache

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

    from s2sbench.pipeline.builddir import BuildDir

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
