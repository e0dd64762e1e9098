"""The build folder's contract: typed records with a schema version, an exclusive lock, recorded inputs that a resume
must match (or --rebuild), and names that cannot leave the folder. Real builds of one tiny task (espeak-ng, tiny.en)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from s2sbench.pipeline.core.records import SCHEMA_VERSION
from s2sbench.flows.cli import main
from s2sbench.pipeline.run.build import run_build
from s2sbench.pipeline.buildfolder.builddir import BuildDir, BuildInputsChangedError, BuildLockedError
from s2sbench.pipeline.core.manifest import SchemaVersionError
from s2sbench.pipeline.core.records import Reason, Role, UnsafeNameError
from s2sbench.pipeline.catalog.tasks import load_task


@pytest.fixture
def tiny_task(tmp_path) -> Path:
    """One English story, spoken (context only) by espeak-ng and checked by Whisper tiny.en."""
    source = tmp_path / "story.jsonl"
    source.write_text(json.dumps({"id": "s1", "context": "The dog ran to the park.", "candidates": ["It played.", "It flew."],
                                  "right": 0}) + "\n", encoding="utf-8")  # fmt: skip
    task = tmp_path / "tiny.yaml"
    task.write_text(f"name: tiny\nlanguage: en\nsource: {{loader: jsonl, path: {source}}}\nvoices: [espeak-en-us]\n"
                    "gate: {max_error_rate: 1.0, asr: {engine: faster-whisper, model: tiny.en}}\n", encoding="utf-8")  # fmt: skip
    return task


def test_role_and_reason_are_records_not_strings_to_split():
    role = Role("candidate:2")
    assert (role.candidate, role.is_context, role) == (2, False, "candidate:2")
    assert Role.context().is_context and Role.of_candidate(0) == "candidate:0"
    for bad in ("candidate", "candidate:x", "candidate:01", "speaker"):
        with pytest.raises(ValueError, match="neither 'context' nor 'candidate:K'"):
            Role(bad)
    reason = Reason(code="error_rate", detail="wer 0.400 > 0.15")
    assert (reason.code, reason.detail, str(reason)) == ("error_rate", "wer 0.400 > 0.15", "error_rate: wer 0.400 > 0.15")


def test_a_second_writer_is_refused_and_a_killed_holder_leaves_no_lock(tmp_path):
    build = BuildDir(tmp_path / "build")
    with build.lock():
        with pytest.raises(BuildLockedError, match=r"build folder .* is in use by s2sbench pid \d+"):
            with build.lock():
                pass
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom s2sbench.pipeline.buildfolder.builddir import BuildDir\n"
                               f"with BuildDir({str(build.root)!r}).lock():\n    print('held', flush=True)\n    time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(BuildLockedError, match=f"pid {holder.pid}"):
            with build.lock():
                pass
    finally:
        holder.kill()  # SIGKILL: no cleanup runs, the kernel drops the flock
        holder.wait()
    with build.lock():
        pass


def test_two_builds_into_one_folder_the_second_is_refused_at_once(tiny_task, tmp_path, capsys):
    out = tmp_path / "build"
    with BuildDir(out).lock():  # a build in progress
        started = time.monotonic()
        assert main(["build", str(tiny_task), "--out", str(out)]) == 5  # an environment fault: wait, or elsewhere
    assert time.monotonic() - started < 60, "refused before any orchestration or synthesis"
    assert "is in use by s2sbench pid" in capsys.readouterr().err


def test_resume_with_other_inputs_is_refused_with_what_changed_and_rebuild_starts_over(tiny_task, tmp_path, capsys):
    out, store = tmp_path / "build", tmp_path / "clips"
    first = run_build([load_task(tiny_task)], out, store_root=store)
    assert first.tasks["tiny"].kept == 1 and BuildDir(out).read_state().inputs.limit is None
    assert run_build([load_task(tiny_task)], out, store_root=store).totals == first.totals  # same inputs: resumes
    with pytest.raises(BuildInputsChangedError, match=r"(?s)--limit: None -> 1.*--shard-size: 8 -> 2.*add --rebuild"):
        run_build([load_task(tiny_task)], out, store_root=store, limit=1, shard_size=2)
    source = tmp_path / "story.jsonl"
    source.write_text(source.read_text(encoding="utf-8").replace("park", "beach"), encoding="utf-8")
    # the CLI says so before Prefect starts: exit 3 (data), one message naming the source file
    assert main(["build", str(tiny_task), "--out", str(out), "--store", str(store)]) == 3
    err = capsys.readouterr().err
    assert "was built from other inputs" in err and "task tiny: source file (the file):" in err and "Traceback" not in err
    rebuilt = run_build([load_task(tiny_task)], out, store_root=store, rebuild=True)
    assert [row.item.context for row in BuildDir(out).read_manifest()] == ["The dog ran to the beach."]
    assert rebuilt.tasks["tiny"].kept == 1


def test_a_resume_whose_reading_of_the_text_changed_says_so_and_keeps_the_rows(tiny_task, tmp_path, caplog):
    """Between two starts of one build, s2sbench may read a number or a symbol another way (the whole sCMMLU was
    resumed across such a change). The resume names the items read differently, and the rows already made stay as
    they were made."""
    source = tmp_path / "story.jsonl"
    source.write_text(source.read_text(encoding="utf-8").replace("ran to", "ran 3 miles to"), encoding="utf-8")
    out, store = tmp_path / "build", tmp_path / "clips"
    run_build([load_task(tiny_task)], out, store_root=store)
    build = BuildDir(out)
    items_path = build.items_path("tiny")
    written = json.loads(items_path.read_text(encoding="utf-8"))
    assert written["spoken"] == {"context": "The dog ran three miles to the park."}
    with caplog.at_level("WARNING", logger="s2sbench.pipeline.run.build"):
        run_build([load_task(tiny_task)], out, store_root=store)
    assert not caplog.records  # the same reading: nothing to say
    # the items as an older s2sbench wrote them, which read the digit as a digit
    items_path.write_text(json.dumps({**written, "spoken": {"context": "The dog ran 3 miles to the park."}}) + "\n",
                          encoding="utf-8")
    rows_before = [row.model_dump() for row in build.read_manifest()]
    with caplog.at_level("WARNING", logger="s2sbench.pipeline.run.build"):
        report = run_build([load_task(tiny_task)], out, store_root=store)
    assert [record.getMessage() for record in caplog.records] == [
        f"{items_path}: 1 item(s) are read differently than when this build wrote them (s1): rows already made keep "
        "the clips and readings they were made with, rows made from now on read the new way; --rebuild makes every "
        "row with one reading"]
    assert report.tasks["tiny"].kept == 1 and [row.model_dump() for row in build.read_manifest()] == rows_before


def test_a_folder_of_an_older_layout_is_named_with_what_to_do(tiny_task, tmp_path):
    build = BuildDir(tmp_path / "old")
    build.items_dir.mkdir(parents=True)  # build files, no build.json
    with pytest.raises(BuildInputsChangedError, match="no build.json .* add --rebuild"):
        run_build([load_task(tiny_task)], build.root)
    build.report_path.write_text(json.dumps({"tasks": {}, "normalization": "a string"}), encoding="utf-8")
    with pytest.raises(SchemaVersionError, match=rf"build_report.json: field 'schema_version': 1, this s2sbench reads {SCHEMA_VERSION}"):
        build.read_report()
    build.report_path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "tasks": {}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"build_report.json: field 'totals': Field required"):
        build.read_report()


def test_task_names_and_voice_ids_cannot_leave_the_build_folder(tiny_task, tmp_path, monkeypatch, capsys):
    evil = tmp_path / "evil.yaml"
    evil.write_text(tiny_task.read_text(encoding="utf-8").replace("name: tiny", "name: ../../escaped"), encoding="utf-8")
    assert main(["build", str(evil), "--out", str(tmp_path / "out")]) == 2
    assert "field 'name': '../../escaped' cannot name a file or folder" in capsys.readouterr().err
    voices = tmp_path / "voices.yaml"
    voices.write_text("- {id: ../voice, engine: espeak-ng, language: en, model: en-us}\n", encoding="utf-8")
    monkeypatch.setenv("S2SBENCH_VOICES", str(voices))
    sneaky = tmp_path / "sneaky.yaml"
    sneaky.write_text(tiny_task.read_text(encoding="utf-8").replace("[espeak-en-us]", "['../voice']"), encoding="utf-8")
    assert main(["build", str(sneaky), "--out", str(tmp_path / "out")]) == 2
    assert "field 'voices': '../voice' cannot name a file or folder" in capsys.readouterr().err
    assert not list(tmp_path.rglob("escaped*"))  # nothing was written, inside or outside --out
    with pytest.raises(UnsafeNameError):
        BuildDir(tmp_path / "out").items_path("a/b")


def test_finished_shards_are_found_by_task_in_a_real_build_and_an_unfinished_one_is_left_out(real_build, tmp_path):
    """What a check of a build in progress reads (bench/zh_gate_check.py): the shards with their .done marker."""
    import shutil

    from tests.real_build import CHOICE_TASK, CHOICES, SHARD_SIZE, STORIES, STORY_TASK

    build = BuildDir(real_build.root)
    expected = {STORY_TASK: build.shards(STORY_TASK, len(STORIES), SHARD_SIZE),
                CHOICE_TASK: build.shards(CHOICE_TASK, len(CHOICES), SHARD_SIZE)}
    for task, shards in expected.items():
        assert [shard.folder for shard in build.finished_shards(task)] == [shard.folder for shard in shards]
    assert len(build.finished_shards()) == sum(map(len, expected.values()))
    copy = BuildDir(tmp_path / "copy")
    shutil.copytree(build.work_dir, copy.work_dir)
    (copy.shard(STORY_TASK, 1).folder / ".done").unlink()  # the shard a kill interrupted
    assert [shard.index for shard in copy.finished_shards(STORY_TASK)] == [0]
