"""The JCommonsenseQA loader on a release folder written here (two splits, JGLUE's file names and columns)."""

import json

import pytest

from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.items.load import load_task_items
from s2sbench.pipeline.items.task_config import TaskConfigError

VALID = [
    {"q_id": 1, "question": "田んぼが広がる風景を何という？", "choice0": "畑", "choice1": "海", "choice2": "田園",
     "choice3": "地方", "choice4": "牧場", "label": 2},
    {"q_id": 2, "question": "この3つの中で2つの車輪を表す名称は？", "choice0": "一輪車", "choice1": "二輪車",
     "choice2": "三輪車", "choice3": "四輪車", "choice4": "五輪車", "label": 1},
]
TEST = [
    {"q_id": 3, "question": "小さい物を見るには？", "choice0": "眼間", "choice1": "目論む", "choice2": "目論",
     "choice3": "虫眼鏡", "choice4": " 眼間 ", "label": 3},  # one answer twice, as on the release's test line 919
    {"q_id": 4, "question": "水を出す時にねじるものは？", "choice0": "蛇口", "choice1": "窓", "choice2": "鍵",
     "choice3": "扉", "choice4": "紐", "label": 7},
    {"q_id": 5, "question": "雨の日に使うものは？", "choice0": "傘", "choice1": "扇風機", "choice2": "日焼け止め",
     "choice3": "浮き輪", "choice4": "サングラス", "label": 0},
]


@pytest.fixture
def release(tmp_path):
    folder = tmp_path / "jcommonsenseqa-v1.3"
    folder.mkdir()
    for name, rows in (("valid-v1.3.json", VALID), ("test-v1.3.json", TEST)):
        (folder / name).write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return folder


def jcqa(make_task, release, split, on_bad_row="drop"):
    return make_task(language="ja", voices=["kokoro-ja-alpha"],
                     source={"loader": "jcommonsenseqa", "path": str(release), "split": split, "on_bad_row": on_bad_row})


def test_both_labelled_splits_load_with_their_file_as_source(make_task, release):
    result = load_task_items(jcqa(make_task, release, "validation+test"))
    assert [item.id for item in result.items] == ["1", "2", "5"]
    assert [item.source.file.rsplit("/", 1)[-1] for item in result.items] == ["valid-v1.3.json"] * 2 + ["test-v1.3.json"]
    assert result.items[1].candidates[result.items[1].right] == "二輪車"
    assert result.items[1].spoken == {"context": "このミッツの中でフタツの車輪を表す名称は?"}
    assert result.report()["dropped"] == 2  # the repeated answer and the label out of range, each with its reason
    reasons = " | ".join(str(drop.reason) for drop in result.drops)
    assert "candidates are not distinct" in reasons and "7 is not an answer index 0-4" in reasons, reasons


def test_a_bad_row_names_its_file_line_and_field(make_task, release):
    with pytest.raises(Exception, match=r"test-v1.3.json:1: field 'candidates'"):
        load_task_items(jcqa(make_task, release, "test", on_bad_row="error"))


def test_an_unknown_split_or_a_missing_file_is_a_config_error(make_task, release):
    with pytest.raises(TaskConfigError, match="'dev' is not a JCommonsenseQA split"):
        load_task_items(jcqa(make_task, release, "dev"))
    with pytest.raises(TaskConfigError, match="no train-v1.3.json in"):
        load_task_items(jcqa(make_task, release, "train"))


def test_the_shipped_task_asks_for_both_splits_under_their_licence():
    task = load_task("jcommonsenseqa")
    assert (task.language, task.source.split, task.source.licence.id) == ("ja", "validation+test", "cc-by-sa-4.0")
    assert task.scoring == "pairwise_ties_right" and task.also_report == ["argmin"]
    assert task.voices == ["kokoro-ja-alpha", "kokoro-ja-kumo"]
