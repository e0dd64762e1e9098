"""The original S2SBench layout: export a build, read it back, and load it the way the original code does."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from .conftest import read_jsonl

from s2sbench.pipeline.manifest import read_records
from s2sbench.pipeline.publish.original import OriginalLayoutError, export_original, find_sets, import_original
from s2sbench.pipeline.records import Item


def _build_rows(build_dir) -> dict[str, dict]:
    import datasets

    rows = {}
    for split in datasets.load_from_disk(str(build_dir / "dataset")).values():
        for row in split.cast_column("context_audio", datasets.Audio(decode=False)).select_columns(
                ["id", "context", "candidates", "label", "context_audio"]):
            rows[row["id"]] = row
    return rows


@pytest.fixture(scope="module")
def exported(build_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("original")
    return out, export_original(build_dir, out)


def test_stories_load_and_pair_as_in_the_original_code(exported, build_dir):
    """The original loader: json per line, audio at join(audio_dir, str(uttid) + '.wav'), sort by the integer before
    the first '_', pair (0,1), (2,3)... with consecutive ids, lower id = plausible ending."""
    out, _ = exported
    rows_by_id = _build_rows(build_dir)
    config = "demo-stories-en--piper-en-joe"
    rows = [json.loads(line) for line in (out / f"{config}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(set(row) == {"uttid", "first", "last"} for row in rows)
    assert all(os.path.exists(os.path.join(out / config, str(row["uttid"]) + ".wav")) for row in rows)
    rows.sort(key=lambda row: int(row["uttid"].split("_")[0]))
    for even, odd in zip(rows[0::2], rows[1::2]):
        assert int(even["uttid"].split("_")[0]) == int(odd["uttid"].split("_")[0]) - 1
        build_row = rows_by_id[even["uttid"].split("_", 1)[1] + "@piper-en-joe"]
        assert even["first"] == odd["first"] == build_row["context"]
        assert even["last"] == build_row["candidates"][build_row["label"]]
        assert odd["last"] == build_row["candidates"][1 - build_row["label"]]
        wavs = [(out / config / f"{row['uttid']}.wav").read_bytes() for row in (even, odd)]
        assert wavs[0] == wavs[1] == build_row["context_audio"]["bytes"]


def test_choice_rows_have_a_to_d_and_answer(exported):
    out, sets = exported
    rows = read_jsonl(out / "demo-choice-zh.jsonl")
    assert [row["answer"] for row in rows] == ["A", "B"]
    assert rows[1] == {"uttid": "1_demo-choice-zh-002", "first": "水在标准大气压下的沸点是", "A": "五十度。", "B": "一百度。",
                       "C": "两百度。", "D": "零度。", "answer": "B"}
    assert {s.config: (s.format, s.rows) for s in sets} == {
        "demo-choice-zh": ("choice", 2), "demo-stories-en--espeak-en-us": ("story", 4), "demo-stories-en--piper-en-joe": ("story", 6)}


def test_export_then_import_round_trips_items_labels_and_audio(exported, build_dir, tmp_path):
    import datasets

    out, _ = exported
    counts = import_original(find_sets(out), tmp_path / "imported")
    assert counts == {"demo-choice-zh": 2, "demo-stories-en": 5}
    for task in ("demo-stories-en", "demo-choice-zh"):
        original = {i.id: i for i in read_records(build_dir / "items" / f"{task}.jsonl", Item)}
        imported = {i.id: i for i in read_records(tmp_path / "imported" / "items" / f"{task}.jsonl", Item)}
        assert {k: (i.context, i.candidates, i.right) for k, i in imported.items()} == {
            k: (i.context, i.candidates, i.right) for k, i in original.items()}
    before = _build_rows(build_dir)
    after = _build_rows(tmp_path / "imported")
    assert set(after) == set(before)
    for row_id, row in before.items():
        assert (after[row_id]["candidates"], after[row_id]["label"]) == (row["candidates"], row["label"])
        assert after[row_id]["context_audio"]["bytes"] == row["context_audio"]["bytes"]
    loaded = datasets.load_from_disk(str(tmp_path / "imported" / "dataset"))
    assert set(loaded) == {"demo_stories_en", "demo_choice_zh"}
    assert set(loaded["demo_stories_en"]["verification_status"]) == {"unverified"}


def test_import_of_published_files_without_the_sidecar(exported, tmp_path):
    """The published S2SBench data has no s2sbench sidecar: ids come from uttids, the right ending stays right."""
    out, _ = exported
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    (bare / "s2sbench_export.json").unlink()
    sets = find_sets(bare / "demo-stories-en--piper-en-joe.jsonl", audio_dir=bare / "demo-stories-en--piper-en-joe",
                     task="sstorycloze", language="en")
    import_original(sets, tmp_path / "imported")
    items = read_records(tmp_path / "imported" / "items" / "sstorycloze.jsonl", Item)
    rows = read_jsonl(bare / "demo-stories-en--piper-en-joe.jsonl")
    right_endings = {row["first"]: row["last"] for row in rows[0::2]}
    assert [item.id for item in items] == ["demo-stories-en-001", "demo-stories-en-002", "demo-stories-en-003"]
    assert all(item.candidates[item.right] == right_endings[item.context] for item in items)
    # from the folder's eval_s2t.yaml, as the original code would be configured
    assert {s.task for s in find_sets(bare)} == {"demo-choice-zh", "demo-stories-en--espeak-en-us", "demo-stories-en--piper-en-joe"}


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
