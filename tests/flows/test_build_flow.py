"""The build flow for real (Piper TTS, Whisper tiny.en gate, datasets), through Prefect, and its resume after a
SIGKILL; on the test run's build (tests/real_build.py) and the session's server."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from s2sbench.flows.cli import main
from s2sbench.pipeline.buildfolder.builddir import BuildDir

from tests.real_build import CHOICE_TASK, CHOICE_VOICE, STORY_TASK


def _fingerprint(build: Path) -> list[tuple[str, dict[str, str]]]:
    return [(row.id, {role: clip.audio_sha256 for role, clip in row.clips.items()}) for row in BuildDir(build).read_manifest()]


def test_the_session_build_ran_as_a_flow(real_build):
    """The test run's build (tests/real_build.py) was made by the build flow: its run in the Prefect API has a task
    run per task and shard, named so, and the build report as an artifact; the dataset it wrote carries 16 kHz
    audio and every clip's audit."""
    voices = "piper-en-joe, piper-en-joe-slow"
    run = real_build.flow_run
    assert run.state == "Completed" and run.name == f"build {real_build.root}"
    assert run.task_runs == (f"assemble {real_build.root}", f"speak {CHOICE_TASK} shard 00000 ({CHOICE_VOICE})",
                             f"speak {STORY_TASK} shard 00000 ({voices})", f"speak {STORY_TASK} shard 00001 ({voices})")
    # items in, item x voice, kept, dropped (story 3 in both voices), unverified (tiny.en hears no Chinese)
    report = run.artifacts["build-report"][1]
    assert f"| {STORY_TASK} | 3 | 6 | 4 | 2 | 0 |" in report and f"| {CHOICE_TASK} | 2 | 2 | 2 | 0 | 2 |" in report
    assert "| synthesis | piper-en-joe | " in report and "| assembly | all | 14 | " in report  # the cost table
    assert run.artifacts["build-progress"] == ("progress", 100.0)

    build = BuildDir(real_build.root)
    checks = build.read_verification()
    assert {check.asr_model for check in checks} == {"faster-whisper:tiny.en (offline package):int8"}
    assert len({check.id for check in checks}) == len(checks)
    split = build.load_dataset()[STORY_TASK]["test"]
    assert split.num_rows == 4
    row = split[0]
    samples = row["context_audio"].get_all_samples()
    assert samples.sample_rate == 16000 and samples.data.shape[0] == 1 and samples.data.shape[1] > 16000
    assert len(row["candidate_audio"]) == 2
    assert row["verification_status"] == "passed" and row["context_metric"] == "wer"
    # what the voice read: the context through the task language's normalization, as the clip recorded it
    context_clip = next(clip for clip in build.read_clips() if clip.item_id == row["item_id"] and clip.role == "context"
                        and clip.voice == row["voice"])
    assert row["context_spoken"] == context_clip.normalized_text != ""


def test_the_build_report_says_where_the_time_went(real_build):
    """build_report.json's cost table: wall and CPU seconds per clip for each voice's synthesis, the gate, retries
    and assembly, from the rows the shards measured (costs.jsonl beside each shard's rows), and the clip store's
    ledger of the shards for the next plan."""
    from s2sbench.pipeline.machine.costs import CostLedger

    build = BuildDir(real_build.root)
    costs = build.read_report().costs
    by_stage = {(row.stage, row.subject): row for row in costs.stages}
    rows_in = sum(entry.item_voice_pairs_in for entry in build.read_report().tasks.values())
    assert costs.rows_measured == rows_in == 8
    # stories: context + 2 endings in 2 voices for 3 stories; questions: the stem, for 2 questions
    assert costs.clips == 3 * 3 * 2 + 2 and costs.cached_clips == 0
    for voice, clips in (("piper-en-joe", 9), ("piper-en-joe-slow", 9), ("espeak-zh-pinyin", 2)):
        synthesis = by_stage[("synthesis", voice)]
        assert synthesis.clips == clips and synthesis.wall_s > 0 and synthesis.cpu_s > 0
    gate = by_stage[("gate", "faster-whisper:tiny.en (offline package):int8")]
    assert gate.clips == 20 and gate.cpu_s_per_clip > 0
    # story 3's gibberish ending fails its first attempt in both voices and is tried again
    assert costs.retried_clips >= 2 and by_stage[("retries", "piper-en-joe")].clips >= 1
    assert by_stage[("assembly", "all")].clips == 14 and costs.retry_share == round(costs.retried_clips / costs.clips, 4)
    ledger = CostLedger(real_build.store).entries()
    assert sum(entry.rows for entry in ledger if entry.kind == "shard") == rows_in
    assert [entry.assembly.clips for entry in ledger if entry.kind == "assembly"] == [14]


def _listing(folder: Path) -> dict[str, int]:
    return {str(path.relative_to(folder)): path.stat().st_size for path in folder.rglob("*")}


def test_a_dry_run_prints_the_plan_and_writes_nothing(real_build, tmp_path, capsys):
    """`build --dry-run` on the stories with a clip store that holds them: the plan counts every clip as there and
    takes its costs from the store's ledger; with an empty store it says it calibrated. Neither run writes into
    --out or the store, and neither needs a Prefect server."""
    stories, choices = real_build.task_files
    store, out = tmp_path / "store", tmp_path / "planned"
    shutil.copytree(real_build.store, store)
    before = _listing(store)
    assert main(["build", str(stories), "--out", str(out), "--store", str(store), "--dry-run", "--runner", "dask",
                 "--workers", "2"]) == 0  # fmt: skip
    plan = capsys.readouterr().out
    assert f"plan for {out} (new folder); runner dask, 2 worker(s), 2 shard(s) at once" in plan
    assert f"| {STORY_TASK} | 3 | piper-en-joe, piper-en-joe-slow | 18 (context + candidates) | 0 | 18 | 0 |" in plan
    assert "ledger: 18 clips built here before" in plan and re.search(r"projected: wall [0-9a-z ]+ \(start-up .*\), CPU .*, disk ", plan)
    assert not out.exists() and _listing(store) == before
    empty = tmp_path / "empty"
    assert main(["build", str(choices), "--out", str(out), "--store", str(empty), "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert f"| {CHOICE_TASK} | 2 | {CHOICE_VOICE} | 2 (context) | 0 | 0 | 2 |" in plan
    assert re.search(r"calibration: \d+ rows \(2 items of \d+-\d+ characters\) built here in \d+ s", plan)
    assert not out.exists() and not empty.exists()


def _count_lines(paths) -> int:
    total = 0
    for path in paths:
        try:
            total += path.read_bytes().count(b"\n")
        except FileNotFoundError:
            pass
    return total


def _run_until(command: list[str], env: dict, condition, timeout_s: float = 300) -> bool:
    """Run ``command``; SIGKILL its process group once ``condition()`` holds. Returns whether it was killed."""
    process = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout_s
    while process.poll() is None:
        if condition():
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            raise TimeoutError(f"{command} ran past {timeout_s} s")
        time.sleep(0.05)
    if process.returncode != 0:
        raise RuntimeError(f"{command} failed: {process.stderr.read().decode()[-2000:]}")
    return False


def test_killed_build_resumes_to_the_same_dataset(real_build, tmp_path):
    """`s2sbench build` SIGKILLed inside the first item, inside the second shard and after every shard is done, then
    re-run: the rows and their audio equal the session build's (made in one go, into another clip store), with no
    duplicated row or audit line."""
    stories = real_build.task_files[0]
    out = tmp_path / "killed"
    work = out / "work" / STORY_TASK
    # stories 1 and 2 (no retries: both pass the gate), a shard each
    command = [sys.executable, "-m", "s2sbench.flows.cli", "build", str(stories), "--out", str(out), "--limit", "2",
               "--shard-size", "1", "--store", str(tmp_path / "store")]  # fmt: skip
    kill_points = [
        lambda: _count_lines(work.glob("*/checks.jsonl")) >= 1,  # inside the first item
        lambda: _count_lines([work / "shard-00001" / "checks.jsonl"]) >= 1,  # inside the second shard
        lambda: len(list(work.glob("*/.done"))) >= 2,  # all shards done, before or during assembly
    ]
    # the CLI subprocesses inherit PREFECT_API_URL: they run on the session's server, none starts its own
    killed = [_run_until(command, dict(os.environ), point) for point in kill_points]
    assert killed[0], "the first kill point must interrupt the build"
    assert main(command[3:]) == 0  # the last run in this process, whose imports and models are loaded already

    expected = [entry for entry in _fingerprint(real_build.root) if entry[0].split("@")[0] in ("story-1", "story-2")]
    assert _fingerprint(out) == expected and len(expected) == 4
    build = BuildDir(out)
    checks = build.read_verification()
    assert len({check.id for check in checks}) == len(checks), "a resumed build duplicated an audit line"
    entry = build.read_report().tasks[STORY_TASK]
    assert (entry.kept, entry.dropped) == (4, 0)
