"""The original S2SBench layout: export a build, read it back, and load it the way the original code does."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ..real_build import CHOICE_TASK, STORY_TASK
from .conftest import read_jsonl

from s2sbench.pipeline.builddir import BuildDir
from s2sbench.pipeline.dataset import iter_rows, undecoded
from s2sbench.pipeline.publish.hub import stage_repo
from s2sbench.pipeline.publish.original import OriginalLayoutError, export_original, find_sets, import_original
from s2sbench.pipeline.records import UnsafeNameError

PIPER = f"{STORY_TASK}--piper-en-joe"
PIPER_SLOW = f"{STORY_TASK}--piper-en-joe-slow"


def _build_rows(build_dir) -> dict:
    """Row id -> typed dataset row (audio as bytes), read through BuildDir."""
    splits = BuildDir(build_dir).load_dataset()
    return {row.id: row for name, split in splits.items() for _, row in iter_rows(undecoded(split), name)}


@pytest.fixture(scope="module")
def exported(build_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("original")
    return out, export_original(build_dir, out)


def test_stories_load_and_pair_as_in_the_original_code(exported, build_dir):
    """The original loader: json per line, audio at join(audio_dir, str(uttid) + '.wav'), sort by the integer before
    the first '_', pair (0,1), (2,3)... with consecutive ids, lower id = plausible ending."""
    out, _ = exported
    rows_by_id = _build_rows(build_dir)
    config = PIPER
    rows = [json.loads(line) for line in (out / f"{config}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(set(row) == {"uttid", "first", "last"} for row in rows)
    assert all(os.path.exists(os.path.join(out / config, str(row["uttid"]) + ".wav")) for row in rows)
    rows.sort(key=lambda row: int(row["uttid"].split("_")[0]))
    for even, odd in zip(rows[0::2], rows[1::2]):
        assert int(even["uttid"].split("_")[0]) == int(odd["uttid"].split("_")[0]) - 1
        build_row = rows_by_id[even["uttid"].split("_", 1)[1] + "@piper-en-joe"]
        assert even["first"] == odd["first"] == build_row.context
        assert even["last"] == build_row.candidates[build_row.label]
        assert odd["last"] == build_row.candidates[1 - build_row.label]
        wavs = [(out / config / f"{row['uttid']}.wav").read_bytes() for row in (even, odd)]
        assert wavs[0] == wavs[1] == build_row.context_audio.wav


def test_choice_rows_have_a_to_d_and_answer(exported):
    out, sets = exported
    rows = read_jsonl(out / f"{CHOICE_TASK}.jsonl")
    assert [row["answer"] for row in rows] == ["A", "C"]
    assert rows[1] == {"uttid": "1_choice-2", "first": "一年有", "A": "十个月。", "B": "十一个月。", "C": "十二个月。",
                       "D": "十三个月。", "answer": "C"}
    assert {s.config: (s.format, s.rows) for s in sets} == {CHOICE_TASK: ("choice", 2), PIPER: ("story", 4), PIPER_SLOW: ("story", 4)}


def test_export_then_import_round_trips_items_labels_and_audio(exported, build_dir, tmp_path):
    out, _ = exported
    counts = import_original(find_sets(out), tmp_path / "imported")
    assert counts == {CHOICE_TASK: 2, STORY_TASK: 4}
    original, imported = BuildDir(build_dir), BuildDir(tmp_path / "imported")
    kept = {row.item.id for row in original.read_manifest()}  # story 3 was dropped in both voices: not exported
    for task in (STORY_TASK, CHOICE_TASK):
        before = {i.id: (i.context, i.candidates, i.right) for i in original.read_items(task) if i.id in kept}
        assert {i.id: (i.context, i.candidates, i.right) for i in imported.read_items(task)} == before
    before, after = _build_rows(build_dir), _build_rows(tmp_path / "imported")
    assert set(after) == set(before)
    for row_id, row in before.items():
        assert (after[row_id].candidates, after[row_id].label) == (row.candidates, row.label)
        assert after[row_id].context_audio.wav == row.context_audio.wav
        assert after[row_id].verification_status == "unverified"


def test_an_import_is_a_build_folder_every_reader_takes(exported, tmp_path):
    """Items, manifests, an all-unverified audit, the dataset, a typed report and the WAVs in its own clip store:
    the card and the Hub staging read it like any build."""
    out, _ = exported
    import_original(find_sets(out), tmp_path / "imported")
    build = BuildDir(tmp_path / "imported")
    report = build.read_report()
    assert report.origin == "import-original" and report.tasks[STORY_TASK].kept == 4
    assert {check.status for check in build.read_verification()} == {"unverified"}
    assert report.clip_store == str(build.root / "clips")
    assert all((build.root / "clips" / clip.path).is_file() for clip in build.read_clips())
    staged = stage_repo(build, tmp_path / "staged", "org/imported")
    assert {config.name for config in staged.configs} == {CHOICE_TASK, PIPER, PIPER_SLOW}
    assert "not verified by s2sbench" in (staged.folder / "README.md").read_text(encoding="utf-8")
    import_original(find_sets(out), build.root)  # an import is replaced by a new import of the same sets
    (tmp_path / "a-build" / "items").mkdir(parents=True)  # a folder a build writes is never replaced
    with pytest.raises(ValueError, match="holds a build; import into a new folder"):
        import_original(find_sets(out), tmp_path / "a-build")


def test_names_from_the_layout_cannot_leave_the_output_folder(exported, tmp_path):
    out, _ = exported
    evil = tmp_path / "evil"
    shutil.copytree(out, evil)
    sidecar = json.loads((evil / "s2sbench_export.json").read_text(encoding="utf-8"))
    sidecar["sets"][CHOICE_TASK]["task"] = "../../escaped"
    (evil / "s2sbench_export.json").write_text(json.dumps(sidecar), encoding="utf-8")
    with pytest.raises(UnsafeNameError, match=r"field 'task': '../../escaped' cannot name a file or folder"):
        find_sets(evil)
    assert not (tmp_path / "escaped.jsonl").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"uttid": "0_../../x", "first": "c", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"}\n')
    with pytest.raises(UnsafeNameError, match="field 'uttid'"):
        import_original(find_sets(bad, audio_dir=tmp_path, language="zh"), tmp_path / "out")


def test_import_of_published_files_without_the_sidecar(exported, tmp_path):
    """The published S2SBench data has no s2sbench sidecar: ids come from uttids, the right ending stays right."""
    out, _ = exported
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    (bare / "s2sbench_export.json").unlink()
    sets = find_sets(bare / f"{PIPER}.jsonl", audio_dir=bare / PIPER, task="sstorycloze", language="en")
    import_original(sets, tmp_path / "imported")
    items = BuildDir(tmp_path / "imported").read_items("sstorycloze")
    rows = read_jsonl(bare / f"{PIPER}.jsonl")
    right_endings = {row["first"]: row["last"] for row in rows[0::2]}
    assert [item.id for item in items] == ["story-1", "story-2"]
    assert all(item.candidates[item.right] == right_endings[item.context] for item in items)
    # from the folder's eval_s2t.yaml, as the original code would be configured
    assert {s.task for s in find_sets(bare)} == {CHOICE_TASK, PIPER, PIPER_SLOW}


def test_broken_pairs_and_answers_name_file_and_line(tmp_path):
    (tmp_path / "audio").mkdir()
    bad_pair = tmp_path / "stories.jsonl"
    bad_pair.write_text('{"uttid": "0_a", "first": "x", "last": "r"}\n{"uttid": "2_a", "first": "x", "last": "w"}\n')
    with pytest.raises(OriginalLayoutError, match=r"stories.jsonl:1: rows 0_a and 2_a \(line 2\) are not a pair"):
        import_original(find_sets(bad_pair, audio_dir=tmp_path / "audio", language="en"), tmp_path / "out")
    bad_answer = tmp_path / "choice.jsonl"
    bad_answer.write_text('{"uttid": "0_q", "first": "x", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "E"}\n')
    with pytest.raises(OriginalLayoutError, match=r"choice.jsonl:1: field 'answer'"):
        import_original(find_sets(bad_answer, audio_dir=tmp_path / "audio", language="zh"), tmp_path / "out")
    with pytest.raises(OriginalLayoutError, match="--audio-dir"):
        find_sets(bad_answer)
