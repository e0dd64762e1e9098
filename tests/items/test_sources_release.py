"""The published S2SBench release as a task source (`s2sbench-release`): a folder written in the release's layout,
read by the three shipped release tasks, gives items equal to its rows; what does not fit the layout is an error
naming the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.buildfolder.fingerprint import source_fingerprint
from s2sbench.pipeline.items.load import load_task_items
from s2sbench.pipeline.items.sources.release import RELEASE_SETS, OriginalLayoutError
from s2sbench.pipeline.items.task_config import TaskConfigError
from s2sbench.pipeline.catalog.tasks import load_task

from tests.items.source_fixtures import release_story_rows, write_release

STORIES_EN = [("Tom put the kettle on. The water boiled.", "He made tea.", "He painted the roof."),
              ("It snowed all night. The roads were white.", "The kids built a snowman.", "The kids went swimming.")]
STORIES_ZH = [("张伟去了北京。他参观了故宫。", "他决定下次再来。", "他再也不吃东西了。")]
CHOICES = [("中国的首都是", ["北京。", "上海。", "广州。", "深圳。"], "A"),
           ("一年有", ["十个月。", "十一个月。", "十二个月。", "十三个月。"], "C")]


@pytest.fixture
def release(tmp_path, monkeypatch) -> Path:
    root = write_release(tmp_path / "release", STORIES_EN, STORIES_ZH, CHOICES)
    (root / "S2S" / "StoryCloze" / "sStory_s2t").mkdir()  # the release's audio, which the loader never reads
    (root / "S2S" / "StoryCloze" / "sStory_s2t" / "0_s0.wav").write_bytes(b"not read")
    monkeypatch.setenv("S2SBENCH_RELEASE", str(root))
    return root


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("task_name, set_name", [("sstorycloze-release", "sStory_s2t"),
                                                 ("zh-sstorycloze-release", "zh_story")])
def test_a_story_set_gives_its_pairs_as_items(release, task_name, set_name):
    task = load_task(task_name)
    result = load_task_items(task)
    file = release / RELEASE_SETS[set_name]
    rows = {row["uttid"]: row for row in _rows(file)}
    assert result.drops == [] and len(result.items) == len(rows) // 2
    for n, item in enumerate(result.items):
        right, wrong = rows[f"{2 * n}_s{n}"], rows[f"{2 * n + 1}_s{n}"]
        assert (item.context, item.candidates, item.right) == (right["first"], [right["last"], wrong["last"]], 0)
        assert item.meta == {"uttid": f"{2 * n}_s{n}", "candidate_uttids": [f"{2 * n}_s{n}", f"{2 * n + 1}_s{n}"]}
        assert item.id == f"s{n}" and item.source.file == str(file)
    assert task.voices and task.language == ("en" if task_name.startswith("s") else "zh")


def test_the_choice_set_gives_its_rows_as_items(release):
    result = load_task_items(load_task("scmmlu-release"))
    assert [(item.id, item.context, item.candidates, item.right, item.meta) for item in result.items] == [
        (f"q{n}", first, options, "ABCD".index(answer), {"uttid": f"{n}_q{n}"})
        for n, (first, options, answer) in enumerate(CHOICES)
    ]


def test_answers_from_a_question_file_as_the_original_reads_them(tmp_path, make_task):
    rows = [{"uttid": f"{n}_q{n}", "first": first, **dict(zip("ABCD", options))} for n, (first, options, _) in enumerate(CHOICES)]
    (tmp_path / "rewrite.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps({"uttid": f"{n}_q{n}", "answer": answer}) + "\n"
                                 for n, (_, _, answer) in reversed(list(enumerate(CHOICES)))), encoding="utf-8")  # fmt: skip
    source = {"loader": "s2sbench-release", "path": str(tmp_path / "rewrite.jsonl")}
    task = make_task(language="zh", source={**source, "options": {"question_file": str(questions)}})
    assert [item.right for item in load_task_items(task).items] == [0, 2]
    with pytest.raises(OriginalLayoutError, match=r"rewrite\.jsonl:1: field 'answer': missing.*question_file"):
        load_task_items(make_task(language="zh", source=source))
    questions.write_text(json.dumps({"uttid": "0_q0", "answer": "A"}) + "\n", encoding="utf-8")
    with pytest.raises(OriginalLayoutError, match=r"rewrite\.jsonl:2: field 'answer': missing, not in the row nor in the question file"):
        load_task_items(make_task(language="zh", source={**source, "options": {"question_file": str(questions)}}))


def _task_on(make_task, path: Path, rows: list[dict], language: str = "en"):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return make_task(language=language, source={"loader": "s2sbench-release", "path": str(path)})


@pytest.mark.parametrize("rows, message", [
    (release_story_rows(STORIES_EN)[:3], r"3 rows; stories come in pairs \(line 3 has no partner\)"),
    ([{"uttid": "0_a", "first": "A day.", "last": "Good."}, {"uttid": "2_a", "first": "A day.", "last": "Bad."}],
     r"bad\.jsonl:1: rows 0_a and 2_a \(line 2\) are not a pair"),
    ([{"uttid": "0_a", "first": "A day.", "last": "Good."}, {"uttid": "1_a", "first": "Another day.", "last": "Bad."}],
     r"bad\.jsonl:1: rows 0_a and 1_a \(line 2\) are not a pair"),
    ([{"uttid": "x_a", "first": "A day.", "last": "Good."}, {"uttid": "1_a", "first": "A day.", "last": "Bad."}],
     r"bad\.jsonl:1: field 'uttid': 'x_a' does not start with an integer"),
    ([{"uttid": "0_a", "first": "A day.", "last": "Good."}, {"uttid": "0_a", "first": "A day.", "last": "Bad."}],
     r"bad\.jsonl:2: field 'uttid': '0_a' is on line 1 too"),
    ([{"uttid": "0_q", "first": "一年有", "A": "1", "B": "2", "C": "3", "D": "4", "answer": "E"}],
     r"bad\.jsonl:1: field 'answer': 'E' is not one of A-D"),
    ([{"uttid": "0_q", "first": "一年有", "A": "1", "B": "2", "C": "3", "D": "4"},
      {"uttid": "1_q", "first": "一年有", "A": "1", "B": "2", "C": "3", "D": "4", "answer": "A"}],
     r"bad\.jsonl:1: field 'answer': missing"),
    ([{"uttid": "0_q", "first": "一年有", "A": "1", "B": "2", "C": "3", "answer": "A"}], r"bad\.jsonl:1: field 'D' is missing"),
    ([{"uttid": "0_q", "first": "一年有", "A": "1", "B": "1", "C": "3", "D": "4", "answer": "A"}],
     r"bad\.jsonl:1: field 'candidates': .*not distinct"),
])
def test_rows_that_do_not_fit_the_layout_name_file_and_line(tmp_path, make_task, rows, message):
    task = _task_on(make_task, tmp_path / "bad.jsonl", rows)
    with pytest.raises(DataError, match=message):
        load_task_items(task)


def test_a_release_root_needs_a_known_set(release, make_task):
    with pytest.raises(TaskConfigError, match=r"key 'source.options.set': .* is a folder; name the set"):
        load_task_items(make_task(source={"loader": "s2sbench-release", "path": str(release)}))
    with pytest.raises(TaskConfigError, match=r"key 'source.options.set': .*'sStory_s2t', 'zh_story' or 'cmmlu_write_4'"):
        make_task(source={"loader": "s2sbench-release", "path": str(release), "options": {"set": "zh_stories"}})
    with pytest.raises(TaskConfigError, match=r"key 'source.options.sets': unknown key; did you mean 'set'"):
        make_task(source={"loader": "s2sbench-release", "path": str(release), "options": {"sets": "zh_story"}})


def test_a_build_records_the_sets_file_not_the_releases_audio(release):
    fingerprint = source_fingerprint(load_task("sstorycloze-release"))
    assert list(fingerprint.files) == [str(release / RELEASE_SETS["sStory_s2t"])]
