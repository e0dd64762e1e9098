"""Publishing to a real HTTP server on loopback that speaks the part of the Hub API the upload and the loader use."""

from __future__ import annotations

import logging

import pytest
from tests.real_build import CHOICE_TASK, STORY_TASK
from tests.publish.conftest import FAKE_TOKEN

from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.publish.hub import PublishError, RetryPolicy, publish_build, stage_repo, upload_repo, verify_upload

FAST = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.05)
REPO = "datasets/{}"


def _staged_files(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _hub_files(hub, repo_id: str, revision: str = "main") -> dict[str, bytes]:
    files = hub.files(REPO.format(repo_id), revision)
    files.pop(".gitattributes")
    return files


def test_staging_is_deterministic_and_laid_out_per_task(build_dir, tmp_path):
    first = stage_repo(build_dir, tmp_path / "a", "org/demo")
    second = stage_repo(build_dir, tmp_path / "b", "org/demo")
    assert _staged_files(first.folder) == _staged_files(second.folder)
    names = {config.name: (config.split, config.num_rows, config.voices) for config in first.configs}
    # the English task's two voices share its config (a story dropped by the gate in both)
    assert names == {STORY_TASK: ("test", 4, ("piper-en-joe", "piper-en-joe-slow")),
                     CHOICE_TASK: ("test", 2, ("espeak-zh-pinyin",))}  # fmt: skip
    assert sorted(_staged_files(first.folder)) == sorted([
        "README.md", "build_report.json",
        f"{CHOICE_TASK}/test-00000-of-00001.parquet",
        f"{STORY_TASK}/test-00000-of-00001.parquet",
    ])


def test_staging_refuses_a_folder_in_use(build_dir, tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not empty"):
        stage_repo(build_dir, tmp_path / "used", "org/demo")


def _rows(split) -> list[dict]:
    """Every column of every row, the audio as its bytes (what a user of the data gets)."""
    from s2sbench.pipeline.buildfolder.dataset import undecoded

    rows = undecoded(split).to_list()
    for row in rows:
        row["context_audio"] = row["context_audio"]["bytes"]
        row["candidate_audio"] = [clip["bytes"] for clip in row["candidate_audio"]]
    return rows


def test_publish_of_a_real_build_loads_back_identical(build_dir, local_hub, tmp_path, caplog, capsys):
    """The done-when of issue 15: a real build publishes, and ``datasets.load_dataset`` reads back every row,
    column and audio byte of it."""
    import datasets

    caplog.set_level(logging.DEBUG)
    result = publish_build(build_dir, "org/roundtrip", policy=FAST)
    assert [check.ok for check in result.checks] == [True, True]
    assert sum(check.rows_found for check in result.checks) == 6
    local = BuildDir(build_dir).load_dataset()
    for config in result.configs:  # an independent load, as a user would do it
        loaded = datasets.load_dataset("org/roundtrip", config.name, split="test", cache_dir=str(tmp_path / "cache"))
        assert loaded.features == local[config.name]["test"].features
        assert _rows(loaded) == _rows(local[config.name]["test"])
    default = datasets.load_dataset("org/roundtrip", split="test", cache_dir=str(tmp_path / "cache"))
    assert set(default["task"]) == {STORY_TASK}  # the card's default config
    # the token went to the server and nowhere else
    assert local_hub.authorizations == {f"Bearer {FAKE_TOKEN}"}
    out = capsys.readouterr()
    assert FAKE_TOKEN not in caplog.text + out.out + out.err
    assert all(FAKE_TOKEN.encode() not in data for data in _hub_files(local_hub, "org/roundtrip").values())


def test_upload_retries_500s_and_dropped_connections_and_stores_complete_files(build_dir, local_hub, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/flaky")
    local_hub.fail("POST", r"/api/repos/create", status=503)
    local_hub.fail("POST", r"/preupload/", status=500)
    local_hub.fail("PUT", r"/_lfs/", status=None)  # connection dropped mid-upload of an LFS object
    local_hub.fail("POST", r"/commit/", times=2, status=500)
    local_hub.fail("POST", r"/commit/", status=None)
    sleeps: list[float] = []
    report = upload_repo(staged.folder, "org/flaky", policy=FAST, files_per_commit=2, sleep=sleeps.append)
    assert all(fault.times == 0 for fault in local_hub.faults), "every injected fault was hit"
    assert sleeps == [0.01, 0.01, 0.02, 0.04]  # create (1), then commit part 1 (3): exponential backoff
    assert _hub_files(local_hub, "org/flaky") == _staged_files(staged.folder)
    assert report.commits == 2 and sorted(report.uploaded) == sorted(_staged_files(staged.folder))
    assert all(count == 1 for count in local_hub.lfs_puts.values())


def test_lost_commit_answer_is_not_committed_twice(build_dir, local_hub, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/lost")
    local_hub.fail("POST", r"/commit/", status=None, after=True)  # the first commit lands; its answer is lost
    report = upload_repo(staged.folder, "org/lost", policy=FAST, files_per_commit=10, sleep=lambda s: None)
    # initial commit + data + metadata: the retry saw the data on the Hub and skipped it
    assert local_hub.commit_count(REPO.format("org/lost")) == 3
    assert report.commits == 1 and len(report.skipped) == 2
    assert _hub_files(local_hub, "org/lost") == _staged_files(staged.folder)


def test_failed_upload_resumes_without_duplicating_files(build_dir, local_hub, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/resume")
    local_hub.fail("POST", r"/commit/", skip=1, times=100)  # part 1 commits, then the Hub stays down
    with pytest.raises(PublishError, match="still failing after 4 attempts"):
        upload_repo(staged.folder, "org/resume", policy=FAST, files_per_commit=1, sleep=lambda s: None)
    first_run = _hub_files(local_hub, "org/resume")
    assert len(first_run) == 1
    local_hub.clear_faults()
    report = upload_repo(staged.folder, "org/resume", policy=FAST, files_per_commit=1, sleep=lambda s: None)
    assert _hub_files(local_hub, "org/resume") == _staged_files(staged.folder)
    assert report.skipped == sorted(first_run)
    assert not set(report.uploaded) & set(first_run)
    # part 2's object reached LFS storage in the first run; the second run found it there
    assert all(count == 1 for count in local_hub.lfs_puts.values()), "no LFS object was uploaded twice"


def test_republish_removes_files_the_build_no_longer_has(build_dir, local_hub, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/shrink")
    upload_repo(staged.folder, "org/shrink", policy=FAST, sleep=lambda s: None)
    (staged.folder / CHOICE_TASK / "test-00000-of-00001.parquet").unlink()
    report = upload_repo(staged.folder, "org/shrink", policy=FAST, sleep=lambda s: None)
    assert report.deleted == [f"{CHOICE_TASK}/test-00000-of-00001.parquet"]
    assert _hub_files(local_hub, "org/shrink") == _staged_files(staged.folder)


def test_publish_to_a_branch_and_verify_it(build_dir, local_hub, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/branchy")
    upload_repo(staged.folder, "org/branchy", revision="v2", private=True, policy=FAST, sleep=lambda s: None)
    assert local_hub.repos[REPO.format("org/branchy")].private
    assert "README.md" in local_hub.files(REPO.format("org/branchy"), "v2")
    assert "README.md" not in local_hub.files(REPO.format("org/branchy"), "main")
    assert all(check.ok for check in verify_upload(staged, "org/branchy", revision="v2", cache_dir=tmp_path / "cache"))


def test_a_client_error_stops_at_once(build_dir, local_hub, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/refused")
    local_hub.fail("POST", r"/preupload/", status=400)
    sleeps: list[float] = []
    with pytest.raises(PublishError, match=r"commit part 1/2 to org/refused@main: HTTP 400: Bad request"):
        upload_repo(staged.folder, "org/refused", policy=FAST, sleep=sleeps.append)
    assert sleeps == []


def test_large_configs_are_split_into_shards_that_load_back_whole(build_dir, local_hub, tmp_path):
    import pyarrow.parquet as pq

    whole = stage_repo(build_dir, tmp_path / "whole", "org/sharded")
    half = next(config for config in whole.configs if config.task == STORY_TASK).num_bytes // 2 + 1
    staged = stage_repo(build_dir, tmp_path / "stage", "org/sharded", max_shard_bytes=half)
    stories = next(config for config in staged.configs if config.task == STORY_TASK)
    assert stories.files == tuple(f"{STORY_TASK}/test-0000{i}-of-00002.parquet" for i in range(2))
    assert sum(pq.read_metadata(staged.folder / path).num_rows for path in stories.files) == 4
    upload_repo(staged.folder, "org/sharded", policy=FAST, sleep=lambda s: None)
    checks = verify_upload(staged, "org/sharded", cache_dir=tmp_path / "cache")
    assert [(c.config, c.rows_found, c.ok) for c in checks if c.config == stories.name] == [(stories.name, 4, True)]


def test_read_back_catches_a_hub_copy_that_differs(build_dir, local_hub, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/tampered")
    upload_repo(staged.folder, "org/tampered", policy=FAST, sleep=lambda s: None)
    repo = local_hub.repos[REPO.format("org/tampered")]
    files = repo.commits[repo.branches["main"]]["files"]
    # the questions' config now serves the stories' rows: other ids, other audio
    files[f"{CHOICE_TASK}/test-00000-of-00001.parquet"] = files[f"{STORY_TASK}/test-00000-of-00001.parquet"]
    checks = {c.config: c for c in verify_upload(staged, "org/tampered", cache_dir=tmp_path / "cache")}
    bad = checks[CHOICE_TASK]
    assert not bad.ok and (bad.rows_expected, bad.rows_found) == (2, 4) and bad.audio_mismatches == 6
    assert checks[STORY_TASK].ok
