import pytest

from tests.items.source_fixtures import SPRING_HEADER, story_row, write_csv
from s2sbench.pipeline.core.manifest import ManifestError
from s2sbench.pipeline.items.load import load_items, load_task_items

WINTER_HEADER = SPRING_HEADER[1:]


def test_spring_2016_csv_keeps_story_ids_and_right_endings(make_task, spring_csv):
    task = make_task(source={"loader": "storycloze", "path": str(spring_csv)})
    items = load_items(task)
    assert [item.id for item in items] == [f"t-story-{i}" for i in range(6)]
    for index, item in enumerate(items):
        label = 1 + index % 2
        assert item.right == label - 1
        assert item.candidates == story_row(index)[5:7]
        assert item.context.startswith(story_row(index)[1] + " It was covered")
        assert item.source.row == index + 2  # the header is line 1
        assert item.meta["story_id"] == f"story-{index}"


def test_winter_2018_csv_without_story_id_uses_line_numbers(make_task, tmp_path):
    path = write_csv(tmp_path / "winter.csv", WINTER_HEADER, [story_row(i)[1:] for i in range(3)])
    items = load_items(make_task(source={"loader": "storycloze", "path": str(path)}))
    assert [item.id for item in items] == ["t-L2", "t-L3", "t-L4"]


def test_limit_and_multiline_field(make_task, tmp_path):
    rows = [story_row(i) for i in range(4)]
    rows[0][2] = "It was covered\nin dust."  # a quoted field spanning two lines
    path = write_csv(tmp_path / "multi.csv", SPRING_HEADER, rows)
    items = load_items(make_task(source={"loader": "storycloze", "path": str(path)}), limit=3)
    assert len(items) == 3
    assert items[1].source.row == 4  # row 0 takes lines 2-3


def test_hub_dataset_columns_through_datasets(make_task, tmp_path):
    """The hub's ``story_cloze`` snake_case layout, read through ``datasets.load_dataset`` from a local folder."""
    header = ["story_id", "input_sentence_1", "input_sentence_2", "input_sentence_3", "input_sentence_4",
              "sentence_quiz1", "sentence_quiz2", "answer_right_ending"]
    write_csv(tmp_path / "hub" / "test.csv", header, [story_row(i, 2) for i in range(3)])
    task = make_task(source={"loader": "storycloze", "hub_id": str(tmp_path / "hub"), "split": "test"})
    items = load_items(task)
    assert [item.right for item in items] == [1, 1, 1]
    assert items[2].id == "t-story-2"
    assert items[0].source.file.startswith("hf://")


BAD_INPUTS = [
    # (what, change to the rows, field named in the error)
    ("label out of range", lambda rows: rows[1].__setitem__(7, "3"), "AnswerRightEnding"),
    ("empty sentence", lambda rows: rows[1].__setitem__(3, "  "), "InputSentence3"),
    ("duplicate id", lambda rows: rows[1].__setitem__(0, "story-0"), "InputStoryid"),
]


@pytest.mark.parametrize("what,change,field", BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_bad_row_is_an_error_naming_file_line_field(make_task, tmp_path, what, change, field):
    rows = [story_row(i) for i in range(3)]
    change(rows)
    path = write_csv(tmp_path / "bad.csv", SPRING_HEADER, rows)
    with pytest.raises(ManifestError) as caught:
        load_items(make_task(source={"loader": "storycloze", "path": str(path)}))
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 3, field)
    assert str(path) in str(caught.value) and ":3:" in str(caught.value)


@pytest.mark.parametrize("what,change,field", BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_bad_row_is_dropped_and_counted_when_configured(make_task, tmp_path, what, change, field):
    rows = [story_row(i) for i in range(3)]
    change(rows)
    path = write_csv(tmp_path / "bad.csv", SPRING_HEADER, rows)
    task = make_task(source={"loader": "storycloze", "path": str(path), "on_bad_row": "drop"})
    result = load_task_items(task)
    assert [item.source.row for item in result.items] == [2, 4]
    assert len(result.drops) == 1 and result.drops[0].stage == "load"
    assert f"field '{field}'" in result.drops[0].reason.detail and f"{path}:3" in result.drops[0].reason.detail
    report = result.report()
    assert (report["rows_in"], report["kept"], report["dropped"]) == (3, 2, 1)


def test_missing_column_is_always_an_error(make_task, tmp_path):
    header = [name for name in SPRING_HEADER if name != "RandomFifthSentenceQuiz2"]
    rows = [[cell for cell, name in zip(story_row(0), SPRING_HEADER) if name != "RandomFifthSentenceQuiz2"]]
    path = write_csv(tmp_path / "cols.csv", header, rows)
    task = make_task(source={"loader": "storycloze", "path": str(path), "on_bad_row": "drop"})
    with pytest.raises(ManifestError, match="field 'RandomFifthSentenceQuiz2': missing column"):
        load_items(task)


def test_wrong_encoding_names_the_line(make_task, tmp_path):
    rows = [story_row(i) for i in range(3)]
    rows[2][1] = "Zoë went to the café."
    path = write_csv(tmp_path / "latin1.csv", SPRING_HEADER, rows, encoding="latin-1")
    with pytest.raises(ManifestError, match=r"latin1.csv:4: field '<row>': not utf-8-sig .*source.options.encoding"):
        load_items(make_task(source={"loader": "storycloze", "path": str(path)}))
    fixed = make_task(source={"loader": "storycloze", "path": str(path), "options": {"encoding": "latin-1"}})
    assert load_items(fixed)[2].context.startswith("Zoë went to the café.")


def test_missing_source_file_says_how_to_point_at_it(make_task, tmp_path):
    from s2sbench.pipeline.items.task_config import TaskConfigError

    task = make_task(source={"loader": "storycloze", "path": str(tmp_path / "absent.csv")})
    with pytest.raises(TaskConfigError, match="key 'source.path'.*does not exist.*--source-path"):
        load_items(task)


def test_random_other_never_draws_from_the_same_story_and_is_seeded(make_task, spring_csv):
    fields = {"source": {"loader": "storycloze", "path": str(spring_csv)},
              "candidates": {"construction": "random_other", "options": {"seed": 7}}}
    result = load_task_items(make_task(**fields))
    right_by_id = {f"t-story-{i}": story_row(i)[5 + i % 2] for i in range(6)}
    for item in result.items:
        wrong = item.candidates[1 - item.right]
        assert item.candidates[item.right] == right_by_id[item.id]
        assert item.meta["wrong_from"][0] != item.id
        assert wrong == right_by_id[item.meta["wrong_from"][0]]
    assert result.report()["handled"] == {"random_other": 6}
    again = load_items(make_task(**fields), limit=2)
    assert again == result.items[:2]  # the same draw, whatever the limit
    other_seed = load_items(make_task(**{**fields, "candidates": {"construction": "random_other", "options": {"seed": 8}}}))
    assert [i.meta["wrong_from"] for i in other_seed] != [i.meta["wrong_from"] for i in result.items]


def test_random_other_with_one_story_drops_it_with_a_reason(make_task, tmp_path):
    path = write_csv(tmp_path / "one.csv", SPRING_HEADER, [story_row(0)])
    result = load_task_items(make_task(source={"loader": "storycloze", "path": str(path)},
                                       candidates={"construction": "random_other"}))
    assert result.items == [] and "no other story" in result.drops[0].reason.code


def test_a_folder_of_csvs_is_one_set(make_task, tmp_path):
    write_csv(tmp_path / "set" / "a_val.csv", SPRING_HEADER, [story_row(i) for i in range(3)])
    write_csv(tmp_path / "set" / "b_test.csv", SPRING_HEADER, [story_row(i) for i in range(3, 5)])
    items = load_items(make_task(source={"loader": "storycloze", "path": str(tmp_path / "set")}))
    assert [item.id for item in items] == [f"t-story-{i}" for i in range(5)]
    assert items[3].source.file.endswith("b_test.csv") and items[3].source.row == 2
