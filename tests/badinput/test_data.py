"""Data mistakes: source files, build and results folders, clips. Exit code 3 and one line naming the file, the row
and the field (or the right result, where there is one)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.real_build import CHOICE_TASK, STORY_TASK
from tests.badinput.conftest import STORIES, World, expect

GOOD = STORIES[0]


def row(**change) -> str:
    return json.dumps({**GOOD, **change}, ensure_ascii=False) + "\n"


def items(world: World, task) -> list:
    return ["items", task, "--out", world.out / "items.jsonl"]


SOURCE_CASES = {
    "empty file": ("", r"stories.jsonl has no rows; point source.path at a file with items"),
    "blank lines only": ("\n\n  \n", r"stories.jsonl has no rows"),
    "bad encoding": ('{"id": "a", "context": "Caf\xe9."}\n'.encode("latin-1"),
                     r"stories.jsonl:1: field '<row>': not utf-8-sig .*set source.options.encoding"),
    "invalid JSON": (row() + '{"id": "b", \n', r"stories.jsonl:2: field '<row>': invalid JSON"),
    "not an object": ("[1, 2]\n", r"stories.jsonl:1: field '<row>': expected a JSON object, got list"),
    "true for the answer": (row(right=True), r"stories.jsonl:1: field 'right': Input should be a valid integer, got True"),
    "yes for the answer": (row(right="yes"), r"stories.jsonl:1: field 'right': Input should be a valid integer, got 'yes'"),
    "answer out of range": (row(right=5), r"stories.jsonl:1: field '<row>': .*right=5 is out of range for 2 candidates"),
    "candidates not a list": (row(candidates="He made tea."), r"stories.jsonl:1: field 'candidates': Input should be a valid list"),
    "one candidate": (row(candidates=["He made tea."]), r"stories.jsonl:1: field 'candidates': .*need at least 2 candidates, got 1"),
    "empty context": (row(context=" "), r"stories.jsonl:1: field 'context': .*empty context"),
    "missing field": (json.dumps({"id": "a", "context": "x", "right": 0}) + "\n", r"stories.jsonl:1: field 'candidates'"),
    "duplicate id": (row() + row(), r"stories.jsonl:2: field 'id': duplicate id 's1' \(first on line 1\)"),
}


@pytest.mark.parametrize("name", SOURCE_CASES)
def test_bad_source_row(world, name):
    text, message = SOURCE_CASES[name]
    world.source(text=text)
    expect(world.run(*items(world, world.task())), 3, message)


def test_a_csv_without_the_columns_says_how_to_map_them(world):
    source = world.source("stories.csv", text="id,story\n1,Tom went home.\n")
    task = world.task(source={"loader": "csv", "path": str(source)})
    expect(world.run(*items(world, task)), 3, r"stories.csv:2: field '(context|candidates)': missing column .*source.options.columns")


def test_a_folder_where_the_loader_reads_a_file(world):
    task = world.task(source={"loader": "jsonl", "path": str(world.root)})
    expect(world.run(*items(world, task)), 2, r"key 'source.path': .* is a folder; the jsonl loader reads a file")


def test_a_row_too_long_is_dropped_with_its_own_reason(world):
    world.source(rows=[STORIES[0], {**STORIES[1], "context": "word " * 20000}])
    outcome = world.run(*items(world, world.task()))
    assert outcome.code == 0, outcome.err
    drops = [json.loads(line) for line in (world.out / "items.drops.jsonl").read_text().splitlines()]
    assert [(drop["item_id"], drop["reason"]["code"]) for drop in drops] == [("s2", "text_too_long")]
    assert "100000 characters, more than max_text_chars 1000" in drops[0]["reason"]["detail"]


def test_the_text_limit_is_set_in_the_task_file_and_a_source_left_empty_is_an_error(world):
    task = world.task(max_text_chars=20)
    expect(world.run(*items(world, task)), 3,
           r"none of the 2 rows of .*stories.jsonl was kept \(text_too_long x2\); the first: text_too_long: 45 characters")


def test_bad_rows_can_be_dropped_instead(world):
    world.source(text=row() + row(id="s2", right=9))
    outcome = world.run(*items(world, world.task()), "--on-bad-row", "drop")
    assert outcome.code == 0, outcome.err
    assert "1 items" in outcome.out and "1 dropped" in outcome.out


NO_DATASET = r"dataset/README.md: not found; .*is .* a finished build directory\?"


# --- build and results folders ----------------------------------------------------------------------------------------
NOT_A_BUILD = {
    "verify": (lambda w: ["verify", w.root, "--out", w.out], r"clips.jsonl: not found; is this a finished build\?"),
    "publish": (lambda w: ["publish", w.root, "--repo-id", "o/r", "--dry-run", w.out], NO_DATASET),
    "export-original": (lambda w: ["export-original", w.root, "--out", w.out], NO_DATASET),
    "report --build": (lambda w: ["report", "--build", w.root, "--out", w.out / "r.html"], r"build_report.json: not found"),
    "report results": (lambda w: ["report", w.root / "nothing", "--out", w.out / "r.html"], r"nothing: expected a results.json"),
    "import-original": (lambda w: ["import-original", w.root, "--out", w.out],
                        r"neither a JSONL file nor a folder with s2sbench_export.json or eval_s2t.yaml"),
    "verify a missing folder": (lambda w: ["verify", w.root / "gone", "--out", w.out], r"gone/clips.jsonl: not found"),
}


@pytest.mark.parametrize("command", NOT_A_BUILD)
def test_a_folder_that_is_not_a_build(world, command):
    argv, message = NOT_A_BUILD[command]
    outcome = world.run(*argv(world))
    expect(outcome, 3, message)
    assert "Loading" not in outcome.err, "the folder is checked before a model loads"


def test_eval_of_a_folder_that_is_not_a_build_names_what_it_reads(world):
    """A --dataset argument that names nothing readable is a config error (exit 2), before any model loads."""
    outcome = world.run("eval", "--dataset", world.root, "--model", "smollm2", "--out", world.out)
    expect(outcome, 2, r"not a build folder, a dataset folder with a README.md declaring configs")
    assert "Loading" not in outcome.err


def test_a_corrupt_build_report(world):
    build = world.build_copy()
    (build / "build_report.json").write_text('{"schema_version": 2, "tasks": ', encoding="utf-8")
    expect(world.run("publish", build, "--repo-id", "o/r", "--dry-run", world.out), 3, r"build_report.json:1: not valid JSON")


def test_a_build_report_of_another_version(world):
    build = world.build_copy()
    report = json.loads((build / "build_report.json").read_text(encoding="utf-8"))
    (build / "build_report.json").write_text(json.dumps({**report, "schema_version": 99}), encoding="utf-8")
    expect(world.run("report", "--build", build, "--out", world.out / "r.html"), 3, r"build_report.json.*schema_version")


def test_corrupt_results(world):
    results = world.source("results.json", text="{not json")
    expect(world.run("report", results, "--out", world.out / "r.html"), 3, r"results.json:1: not valid JSON")


def test_a_truncated_wav_in_an_original_layout_folder(world):
    exported = world.out / "exported"
    assert world.run("export-original", world.real_build.root, "--out", exported).code == 0
    layout = world.root / "layout"
    shutil.move(exported, layout)
    wav = sorted(layout.rglob("*.wav"))[0]
    wav.write_bytes(wav.read_bytes()[:30])
    expect(world.run("import-original", layout, "--out", world.out / "imported"), 3,
           rf"{wav.name}.*not a readable (audio|WAV) file")


def test_damaged_clips_in_the_store_are_read_from_the_dataset_by_verify(world):
    """The right result: every clip in the store is damaged, and the kept ones are embedded in the dataset."""
    build = world.build_copy()
    for clip in world.store.rglob("*.wav"):
        clip.write_bytes(b"RIFF" + bytes(40))
    outcome = world.run("verify", build, "--store", world.store, "--out", world.out)
    assert outcome.code == 0, outcome.err
    assert "re-verified 14 clips" in outcome.out


def test_resume_with_another_limit_says_what_changed(world):
    stories, choices = world.real_build.task_files
    build = world.build_copy(as_out=True)
    expect(world.run("build", stories, choices, "--out", build, "--store", world.store,
                     "--limit", "1"), 3, r"(?s)was built from other inputs.*--limit.*--rebuild")


def test_resume_with_a_changed_source_names_it(world):
    build = world.build_copy(as_out=True)
    for task_file in world.real_build.task_files:  # the same tasks over copies of their sources, one changed
        shutil.copy(task_file, world.root / task_file.name)
    stories = world.root / f"{STORY_TASK}.yaml"
    source = world.source(rows=[STORIES[0]])
    stories.write_text(stories.read_text(encoding="utf-8").replace(str(task_file.parent / "stories.jsonl"),
                                                                   str(source)), encoding="utf-8")
    expect(world.run("build", stories, world.root / f"{CHOICE_TASK}.yaml", "--out", build, "--store", world.store,
                     "--shard-size", "2"), 3,
           rf"(?s)was built from other inputs.*task {STORY_TASK}: source file \(the file\): .*--rebuild")


def test_a_task_file_that_does_not_match_the_dataset(world):
    task = world.task(name=STORY_TASK, language="zh")
    expect(world.run("eval", "--dataset", world.real_build.root, "--model", "smollm2", "--task-file", task, "--out", world.out),
           2, rf"key 'language': 'zh', but the data's task '{STORY_TASK}' is in 'en'")
    other = world.task(name="not-in-the-build")
    expect(world.run("eval", "--dataset", world.real_build.root, "--model", "smollm2", "--task-file", other, "--out", world.out),
           2, rf"key 'name': task 'not-in-the-build' is not in the data \(its tasks: {CHOICE_TASK}, {STORY_TASK}\)")
