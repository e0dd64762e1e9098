"""``s2sbench publish``, ``export-original`` and ``import-original`` from the command line, and a killed upload."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.prefect_runs import recorded_run
from tests.real_build import CHOICE_TASK, STORY_TASK
from tests.publish.conftest import FAKE_TOKEN

from s2sbench.flows.cli import main

# these commands run flows: on the session's Prefect server, which the CLI subprocess below reaches by PREFECT_API_URL
pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_dry_run_writes_the_folder_and_needs_no_token(build_dir, tmp_path, monkeypatch, capsys):
    """`s2sbench publish --dry-run` on a real build (it crashed on the build report's typed sections before)."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert main(["publish", str(build_dir), "--repo-id", "org/dry", "--dry-run", str(tmp_path / "staged")]) == 0
    assert (tmp_path / "staged" / "README.md").exists()
    assert (tmp_path / "staged" / CHOICE_TASK / "test-00000-of-00001.parquet").exists()
    assert f"{STORY_TASK} (default): 4 rows (test), 1 file(s)" in capsys.readouterr().out

def _listing(folder) -> dict:
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in folder.rglob("*")}


def test_a_dry_run_never_writes_into_the_build_and_runs_again(build_dir, tmp_path, monkeypatch, capsys):
    """Without OUT the repo folder goes to a new folder the command prints, never into the build (whose files stay
    as they were); the same dry run into OUT twice replaces its staging; a folder that is not one is refused."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    build_copy = tmp_path / "build"
    shutil.copytree(build_dir, build_copy)
    before = _listing(build_copy)
    for _ in range(2):
        assert main(["publish", str(build_copy), "--repo-id", "org/dry", "--dry-run"]) == 0
        staged = Path(re.search(r"dry run: the repo folder is in (\S+)", capsys.readouterr().out).group(1))
        assert (staged / "README.md").exists() and build_copy not in staged.parents
    assert _listing(build_copy) == before
    for _ in range(2):
        assert main(["publish", str(build_copy), "--repo-id", "org/dry", "--dry-run", str(tmp_path / "staged")]) == 0
    assert sorted(path.name for path in (tmp_path / "staged").iterdir()) == sorted(
        [CHOICE_TASK, STORY_TASK, "README.md", "build_report.json"])
    assert not list(tmp_path.glob(".staged.staging-*"))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["publish", str(build_copy), "--repo-id", "org/dry", "--dry-run", str(tmp_path / "mine")]) == 2
    assert "not empty and not a staged repo folder" in capsys.readouterr().err
    assert (tmp_path / "mine" / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_publish_without_a_token_is_a_user_error(build_dir, tmp_path, monkeypatch, capsys):
    import huggingface_hub.constants as hub_constants

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(hub_constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no-tokens"))
    assert main(["publish", str(build_dir), "--repo-id", "org/anon"]) == 2
    assert "set HF_TOKEN" in capsys.readouterr().err
    assert main(["publish", str(build_dir), "--repo-id", "noslash", "--dry-run", str(tmp_path / "x")]) == 2


def test_killed_upload_resumes(build_dir, local_hub, tmp_path, capsys):
    """SIGKILL a real `s2sbench publish` while it uploads LFS objects; the re-run finishes without re-sending any."""
    hold = local_hub.hold("PUT", r"/_lfs/datasets/org/killed/", skip=1)
    env = {**os.environ, "HF_ENDPOINT": local_hub.endpoint, "HF_HUB_DISABLE_XET": "1", "HF_TOKEN": FAKE_TOKEN,
           "HF_HOME": str(tmp_path / "hf-home-subprocess")}
    process = subprocess.Popen([sys.executable, "-m", "s2sbench.flows.cli", "publish", str(build_dir), "--repo-id", "org/killed"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert hold.reached.wait(timeout=90), "the upload never reached the second LFS object"
    finally:
        process.kill()
        process.wait(timeout=30)
    local_hub.clear_faults()
    assert local_hub.commit_count("datasets/org/killed") == 1  # only the repo's initial commit: nothing landed
    deadline = time.monotonic() + 10  # the first object's request was read whole; the server may still be storing it
    while not any(key[0] == "datasets/org/killed" for key in local_hub.lfs_puts) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(key[0] == "datasets/org/killed" for key in local_hub.lfs_puts), "an object reached storage before the kill"

    assert main(["publish", str(build_dir), "--repo-id", "org/killed"]) == 0
    out = capsys.readouterr().out
    assert f"loaded back {STORY_TASK}: 4/4 rows, audio hashes match" in out
    puts = {key: count for key, count in local_hub.lfs_puts.items() if key[0] == "datasets/org/killed"}
    assert len(puts) == 2 and set(puts.values()) == {1}, "every parquet object stored once, the early ones not re-sent"
    assert FAKE_TOKEN not in out
    run = recorded_run("publish", task_runs=3, repo_id="org/killed")
    assert run.state == "Completed" and run.name == f"publish {build_dir} to org/killed"
    assert run.task_runs == ("load back org/killed@main", f"stage org/killed from {build_dir}", "upload org/killed@main")
    assert run.artifacts["hub-dataset"][1] == f"[org/killed@main]({local_hub.endpoint}/datasets/org/killed)"
    assert f"| {STORY_TASK} (default) | test | 4 | 1 | 4, 0 audio mismatches |" in run.artifacts["publish-check"][1]


def test_export_and_import_original_commands(build_dir, tmp_path, capsys):
    assert main(["export-original", str(build_dir), "--out", str(tmp_path / "orig")]) == 0
    assert main(["import-original", str(tmp_path / "orig"), "--out", str(tmp_path / "back")]) == 0
    out = capsys.readouterr().out
    # 'stories' holds no 'tory': the story sets get a name the original loop reads as stories
    assert f"{STORY_TASK}--piper-en-joe: 2 items, 4 rows (story), in eval_s2t.yaml as {STORY_TASK}--piper-en-joe-story" in out
    assert f"--dataset_list {STORY_TASK}--piper-en-joe-story {STORY_TASK}--piper-en-joe-slow-story cmmlu_write_4" in out
    assert f"{STORY_TASK}: 4 rows" in out
    exported = recorded_run("export-original", task_runs=1, out_dir=str(tmp_path / "orig"))
    assert exported.task_runs == (f"export {build_dir}",)
    assert f"| {STORY_TASK}--piper-en-joe | {STORY_TASK} | piper-en-joe | story | 2 | 4 |" in exported.artifacts["export-original"][1]
    imported = recorded_run("import-original", task_runs=1, out_dir=str(tmp_path / "back"))
    assert imported.task_runs == (f"import {CHOICE_TASK}, {STORY_TASK}",)
    assert f"| {STORY_TASK} | 4 |" in imported.artifacts["import-original"][1]
    assert main(["import-original", str(tmp_path / "orig" / f"{CHOICE_TASK}--espeak-zh-pinyin.jsonl"), "--out", str(tmp_path / "x")]) == 2
    assert "--audio-dir" in capsys.readouterr().err
