"""The original S2SBench layout: export a build, read it back, and load it the way the original code does."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.real_build import CHOICE_TASK, GATE, STORY_TASK
from tests.original_rules import dispatch, inference_inputs, read_jsonl, story_summary

from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.buildfolder.dataset import iter_rows, undecoded
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.publish.hub import stage_repo
from s2sbench.pipeline.publish.original import OriginalLayoutError, export_original, find_sets, import_original
from s2sbench.pipeline.core.records import UnsafeNameError

PIPER = f"{STORY_TASK}--piper-en-joe"
PIPER_SLOW = f"{STORY_TASK}--piper-en-joe-slow"
CHOICE = f"{CHOICE_TASK}--espeak-zh-pinyin"


def _build_rows(build_dir) -> dict:
    """Row id -> typed dataset row (audio as bytes), read through BuildDir."""
    configs = BuildDir(build_dir).load_dataset()
    return {row.id: row for name, splits in configs.items() for _, row in iter_rows(undecoded(splits["test"]), name)}


@pytest.fixture(scope="module")
def exported(build_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("original")
    return out, export_original(build_dir, out)


def test_the_original_loop_reads_every_exported_set_under_its_name(exported, build_dir):
    """The original inference loop with the exported eval_s2t.yaml, as the export's help says to run it (its rules:
    tests/original_rules.py): every set is listed under a name it dispatches, its audio is where it looks, and it
    scores the right and the wrong ending of each story (right first, consecutive ids) and the four options."""
    out, sets = exported
    assert {s.name: (s.format, s.rows, s.original_name, s.config_file) for s in sets} == {
        PIPER: ("story", 4, f"{PIPER}-story", "eval_s2t.yaml"),  # 'stories' holds no 'tory'
        PIPER_SLOW: ("story", 4, f"{PIPER_SLOW}-story", "eval_s2t.yaml"),
        CHOICE: ("choice", 2, "cmmlu_write_4", "eval_s2t.yaml"),
    }  # fmt: skip
    names = [entry.original_name for entry in sets]
    assert {name: dispatch(name) for name in names} == {f"{PIPER}-story": "story", f"{PIPER_SLOW}-story": "story",
                                                        "cmmlu_write_4": "choice"}  # fmt: skip
    inputs = inference_inputs(out / "eval_s2t.yaml", str(out), names)
    rows_by_id = _build_rows(build_dir)
    stories = read_jsonl(out / f"{PIPER}.jsonl")
    assert all(set(row) == {"uttid", "first", "last"} for row in stories)
    story_summary([{"uttid": row["uttid"], "loss": [0.0]} for row in stories])  # pairs on consecutive ids, or it stops
    for (audio, context, text), row in zip(inputs[f"{PIPER}-story"], stories):
        build_row = rows_by_id[row["uttid"].split("_", 1)[1] + "@piper-en-joe"]
        right = int(row["uttid"].split("_")[0]) % 2 == 0  # the lower id of a pair is the right ending
        assert (context, text) == (build_row.context, build_row.candidates[build_row.label if right else 1 - build_row.label])
        assert open(audio, "rb").read() == build_row.context_audio.wav
    assert [text for _, _, text in inputs["cmmlu_write_4"]][:2] == ["北京。", "十个月。"]  # key A of each question first
    assert len(inputs["cmmlu_write_4"]) == 4 * 2


def test_choice_rows_have_a_to_d_and_answer(exported):
    out, _ = exported
    rows = read_jsonl(out / f"{CHOICE}.jsonl")
    assert [row["answer"] for row in rows] == ["A", "C"]
    assert rows[1] == {"uttid": "1_choice-2", "first": "一年有", "A": "十个月。", "B": "十一个月。", "C": "十二个月。",
                       "D": "十三个月。", "answer": "C"}


def test_each_further_choice_set_gets_a_config_file_of_its_own(build_dir, tmp_path):
    """The loop scores A-D only under the name cmmlu_write_4, so one config file holds one choice set."""
    import datasets

    config = BuildDir(build_dir).load_dataset()[CHOICE_TASK]["test"]
    other = config.map(lambda row: {"voice": "other-voice", "id": row["item_id"] + "@other-voice"}, keep_in_memory=True)
    two = BuildDir(tmp_path / "two")
    two.save_dataset({CHOICE_TASK: datasets.DatasetDict({"test": datasets.concatenate_datasets([config, other])})})
    sets = export_original(two, tmp_path / "export")
    assert {(s.name, s.original_name, s.config_file) for s in sets} == {
        (CHOICE, "cmmlu_write_4", "eval_s2t.yaml"),
        (f"{CHOICE_TASK}--other-voice", "cmmlu_write_4", f"eval_s2t.{CHOICE_TASK}--other-voice.yaml"),
    }
    for entry in sets:
        inputs = inference_inputs(tmp_path / "export" / entry.config_file, str(tmp_path / "export"), ["cmmlu_write_4"])
        assert inputs["cmmlu_write_4"][0][0].startswith(str(tmp_path / "export" / entry.name))


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


def test_an_export_read_by_a_release_task_builds_the_same_items(exported, build_dir, real_build, tmp_path):
    """export -> a task reading one exported set with the `s2sbench-release` loader -> build: the items are the
    exported build's (ids, contexts, candidates in their order, answers), and in the same voice and gate the clips
    are the same audio, all found in the clip store."""
    from s2sbench.pipeline.run.build import run_build
    from s2sbench.pipeline.catalog.tasks import load_task

    out, _ = exported
    store = tmp_path / "store"
    shutil.copytree(real_build.store, store)
    task_file = tmp_path / "again.yaml"
    task_file.write_text(f"name: again\nlanguage: en\nsource: {{loader: s2sbench-release, path: {out / f'{PIPER}.jsonl'}}}\n"
                         f"voices: [piper-en-joe]\nspeak: [context, candidates]\ngate: {GATE % 'wer'}\n", encoding="utf-8")
    report = run_build([load_task(task_file)], tmp_path / "again", store_root=store)
    original, again = BuildDir(build_dir), BuildDir(tmp_path / "again")
    kept = [row.item for row in original.read_manifest() if row.voice == "piper-en-joe" and row.item.task == STORY_TASK]
    assert [(i.id, i.context, i.candidates, i.right) for i in again.read_items("again")] == \
        [(i.id, i.context, i.candidates, i.right) for i in kept]
    before = {row.item.id: {role: clip.audio_sha256 for role, clip in row.clips.items()}
              for row in original.read_manifest() if row.voice == "piper-en-joe"}  # fmt: skip
    assert {row.item.id: {role: clip.audio_sha256 for role, clip in row.clips.items()} for row in again.read_manifest()} == \
        {item.id: before[item.id] for item in kept}
    assert report.costs.cached_clips == report.costs.clips == 3 * len(kept)


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
    assert {config.name for config in staged.configs} == {CHOICE_TASK, STORY_TASK}
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
    sidecar["sets"][CHOICE]["task"] = "../../escaped"
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
    assert {s.task for s in find_sets(bare)} == {"cmmlu_write_4", f"{PIPER}-story", f"{PIPER_SLOW}-story"}


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
    with pytest.raises(ConfigError, match="--audio-dir"):
        find_sets(bad_answer)
