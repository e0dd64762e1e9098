"""What the gate cost each subject of an sCMMLU-style build, in build_report.json, the HTML report and the dataset card,
from a real build: two CMMLU subjects rewritten by the rules, spoken by espeak-ng Mandarin and judged by Whisper base.
espeak-ng Mandarin is hard to hear (SER 0.67-1.0 on these stems), so the gate here takes SER <= 0.85: it keeps some
rows and drops others, which is what is counted."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml

from s2sbench.pipeline.run.build import run_build
from s2sbench.pipeline.buildfolder.build_report import mix_distance
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.catalog.tasks import load_task

TASK = "subjects-zh"
QUESTIONS = {  # CMMLU's subject CSV layout; stems the rules rewrite
    "culture": [["0", "中秋节人们通常会吃（）。", "粽子", "月饼", "汤圆", "饺子", "B"],
                ["1", "“床前明月光”的作者是（ ）。", "杜甫", "白居易", "李白", "王维", "C"]],
    "science": [["0", "水在标准大气压下的沸点是（）摄氏度。", "50", "100", "150", "200", "B"],
                ["1", "地球绕太阳公转一周大约需要（ ）。", "一天", "一个月", "一年", "十年", "C"]],
}


@pytest.fixture(scope="module")
def subject_build(tmp_path_factory):
    import csv

    root = tmp_path_factory.mktemp("subjects")
    (root / "cmmlu" / "dev").mkdir(parents=True)
    for subject, rows in QUESTIONS.items():
        with open(root / "cmmlu" / "dev" / f"{subject}.csv", "w", newline="", encoding="utf-8") as file:
            csv.writer(file).writerows([["", "Question", "A", "B", "C", "D", "Answer"], *rows])
    task_file = root / f"{TASK}.yaml"
    task_file.write_text(yaml.safe_dump({
        "name": TASK, "language": "zh", "source": {"loader": "cmmlu", "path": str(root / "cmmlu"), "split": "dev"},
        "candidates": {"construction": "scmmlu_rewrite", "options": {"rewriters": ["rules"]}},
        "scoring": "pairwise_ties_right", "voices": ["espeak-zh-pinyin"], "speak": ["context"],
        "gate": {"metric": "ser", "max_error_rate": 0.85, "max_attempts": 1, "asr": {"engine": "faster-whisper", "model": "base"}},
    }, allow_unicode=True), encoding="utf-8")  # fmt: skip
    report = run_build([load_task(task_file)], root / "build", shard_size=4, store_root=root / "store")
    return root / "build", root / "store", report.tasks[TASK]


def test_the_build_report_counts_each_subjects_rows_from_the_records(subject_build):
    out, _, entry = subject_build
    build = BuildDir(out)
    subject_of = {item.id: item.meta["subject"] for item in build.read_items(TASK)}
    kept = Counter(subject_of[row.item.id] for row in build.read_manifest())
    dropped = Counter(subject_of[json.loads(line)["item_id"]] for line in (out / "drops.jsonl").read_text().splitlines())
    assert set(entry.by_subject) == set(QUESTIONS)
    assert 0 < entry.kept and 0 < entry.dropped, "the gate should keep some rows and drop others here"
    for subject, group in entry.by_subject.items():
        assert (group.items, group.rows_in) == (len(QUESTIONS[subject]), len(QUESTIONS[subject]))
        assert (group.kept, group.dropped) == (kept[subject], dropped[subject]), subject
        assert sum(group.drop_reasons.values()) == group.dropped and set(group.drop_reasons) <= {"error_rate"}
    assert sum(g.rows_in for g in entry.by_subject.values()) == entry.item_voice_pairs_in
    assert entry.subject_mix_distance == pytest.approx(
        mix_distance({s: len(q) for s, q in QUESTIONS.items()}, {s: kept[s] for s in QUESTIONS}))
    # read back from build_report.json, as the report and the card read it
    assert build.read_report().tasks[TASK].by_subject == entry.by_subject


def test_mix_distance():
    assert mix_distance({"a": 2, "b": 2}, {"a": 1, "b": 2}) == pytest.approx(1 / 2 - 1 / 3)
    assert mix_distance({"a": 5, "b": 5}, {"a": 1, "b": 1}) == 0.0
    assert mix_distance({"a": 1}, {"b": 3}) == 1.0


def test_the_html_report_and_the_card_show_the_loss_per_subject(subject_build, tmp_path):
    from s2sbench.evaluation.report.audit import load_build
    from s2sbench.evaluation.report.html import render_html
    from s2sbench.evaluation.results.summary import load_inputs
    from s2sbench.pipeline.publish.hub import stage_repo

    out, store, entry = subject_build
    line = entry.subject_mix_line()
    assert line.startswith(f"The spoken set's subject mix is {entry.subject_mix_distance:.1%} from the text set's")
    html = render_html(load_inputs([]), load_build(out, store))
    assert f"What the gate cost each subject of {TASK}" in html and line.replace("'", "&#x27;") in html
    card = (stage_repo(out, tmp_path / "repo", "org/subjects").folder / "README.md").read_text(encoding="utf-8")
    assert f"### What the gate cost each subject of {TASK}" in card and line in card
    for subject, group in entry.by_subject.items():
        row = f"| {subject} | {group.items} | {group.rows_in} | {group.kept} | {group.kept_share:.0%} |"
        assert row in card, card
        assert f"<td>{subject}</td>" in html
    # and which rows the gate dropped, each with every attempt's verdict
    drops = [json.loads(line) for line in (out / "drops.jsonl").read_text().splitlines()]
    assert f"Rows the gate dropped: {len(drops)}" in html
    for drop in drops:
        assert f"<td>{drop['item_id']}</td>" in html and "failed 1 attempt(s) (seed 0 at rate 1: ser " in html


def test_the_eval_scores_each_subject_alone_with_its_interval(subject_build, tmp_path):
    """The eval of the real build, per source file (a CMMLU subject is one file): each subject's accuracy is its own
    items' share of right-beats-wrong pairs (recounted here from samples.jsonl), with an interval around it and
    degradation between the modes; results.md and the HTML report show the table. The model is generated scores."""
    from s2sbench.evaluation.report.html import write_report
    from s2sbench.evaluation.runner.run import EvalOptions, evaluate
    from s2sbench.evaluation.results.summary import results_markdown

    from tests.evaluation.conftest import ToyAdapter

    out, store, _ = subject_build
    results = evaluate(out, ToyAdapter(), ("T->T", "S->T"), tmp_path / "eval", EvalOptions())
    entry = results.file.tasks[TASK]
    assert set(entry.by_source) == set(QUESTIONS)
    samples = [json.loads(line) for line in (tmp_path / "eval" / "samples.jsonl").read_text().splitlines()]
    for subject, result in entry.by_source.items():
        for mode in ("T->T", "S->T"):
            pairs = [line["correct"]["token"] for line in samples
                     if line["mode"] == mode and not line["right"] and f"-{subject}-" in line["item_id"]]
            accuracy = result.modes[mode]["token"].rule(entry.rules[0])
            assert accuracy.n_units == len(pairs) > 0 and accuracy.value == pytest.approx(sum(pairs) / len(pairs))
            assert accuracy.ci_low <= accuracy.value <= accuracy.ci_high
        assert {(d.reference_mode, d.mode) for d in result.degradation} == {("T->T", "S->T")}
    assert sum(result.n_items for result in entry.by_source.values()) == entry.n_items
    markdown = results_markdown(results.file)
    assert "### Per source file" in markdown and all(f"| {subject} |" in markdown for subject in QUESTIONS)
    table = markdown.split("### Per source file")[1].split("\n\n")[2].splitlines()
    # one column per mode and one per degradation, though a result holds one degradation per rule and normalization
    assert table[0] == ("| run | task | source | items | T->T % [95% CI] (n) | S->T % [95% CI] (n) "
                        "| T->T vs S->T: degradation pts [95% CI], McNemar p |")
    assert len(table) == 2 + len(QUESTIONS) and all(line.count(" | ") == table[0].count(" | ") for line in table[2:])
    report = tmp_path / "report.html"
    write_report([tmp_path / "eval"], report)
    html = report.read_text(encoding="utf-8")
    assert 'id="source-table"' in html and all(f"<td>{subject}</td>" in html for subject in QUESTIONS)
