"""The build flow for real (Piper TTS, Whisper tiny.en gate, datasets), through Prefect, and its resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from s2sbench.pipeline.builddir import BuildDir


def _fingerprint(build: Path) -> list[tuple[str, dict[str, str]]]:
    return [(row.id, {role: clip.audio_sha256 for role, clip in row.clips.items()}) for row in BuildDir(build).read_manifest()]


def test_build_flow_makes_a_dataset_and_rebuilds_for_free(prefect_harness, story_task, tmp_path):
    from s2sbench.flows.build import build_flow

    out = tmp_path / "build"
    store = tmp_path / "clips"
    report = build_flow(tasks=[str(story_task)], out_dir=str(out), shard_size=2, store_root=str(store))
    task_report = report["tasks"]["flow-test-stories"]
    assert task_report["kept"] + task_report["dropped"] == task_report["item_voice_pairs_in"] == 4
    assert task_report["kept"] >= 3  # Piper + tiny.en: these short sentences pass the gate
    checks = BuildDir(out).read_verification()
    assert {check.asr_model for check in checks} == {"faster-whisper:tiny.en (offline package):int8"}
    assert len({check.id for check in checks}) == len(checks)

    dataset = BuildDir(out).load_dataset()
    split = dataset["flow-test-stories"]["test"]
    assert split.num_rows == task_report["kept"]
    row = split[0]
    samples = row["context_audio"].get_all_samples()
    assert samples.sample_rate == 16000 and samples.data.shape[0] == 1 and samples.data.shape[1] > 16000
    assert len(row["candidate_audio"]) == 2
    assert row["verification_status"] == "passed" and row["context_metric"] == "wer"

    # the dataset carries its audio: it still decodes with the clip store gone
    for path in sorted(store.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    again = BuildDir(out).load_dataset()["flow-test-stories"]["test"][0]["context_audio"]
    assert again.get_all_samples().data.shape == samples.data.shape

    # same seed, same bytes: a build into a fresh store makes identical audio; a second build of the same config
    # into a new folder with that store synthesizes nothing
    first = _fingerprint(out)
    fresh = build_flow(tasks=[str(story_task)], out_dir=str(tmp_path / "again"), shard_size=2, store_root=str(tmp_path / "clips2"))
    cached = build_flow(tasks=[str(story_task)], out_dir=str(tmp_path / "third"), shard_size=2, store_root=str(tmp_path / "clips2"))
    assert _fingerprint(tmp_path / "again") == first == _fingerprint(tmp_path / "third")
    assert fresh["this_run"]["clips_synthesized"] > 0
    assert cached["this_run"]["clips_synthesized"] == 0


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


def test_killed_build_resumes_to_the_same_dataset(prefect_harness, story_task, tmp_path):
    from prefect.settings import PREFECT_API_URL

    from s2sbench.flows.build import build_flow

    reference = tmp_path / "reference"
    build_flow(tasks=[str(story_task)], out_dir=str(reference), shard_size=2, store_root=str(tmp_path / "store-a"))

    out = tmp_path / "killed"
    work = out / "work" / "flow-test-stories"
    command = [sys.executable, "-m", "s2sbench.flows.cli", "build", str(story_task), "--out", str(out), "--shard-size", "2",
               "--store", str(tmp_path / "store-b")]
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}  # reuse the harness server: no start-up per run
    kill_points = [
        lambda: _count_lines(work.glob("*/checks.jsonl")) >= 1,  # inside the first item
        lambda: _count_lines(work.glob("*/rows.jsonl")) >= 3,  # inside the second shard
        lambda: len(list(work.glob("*/.done"))) >= 2,  # all shards done, before or during assembly
    ]
    killed = [_run_until(command, env, point) for point in kill_points]
    assert killed[0], "the first kill point must interrupt the build"
    _run_until(command, env, lambda: False)

    assert _fingerprint(out) == _fingerprint(reference)
    build = BuildDir(out)
    checks = build.read_verification()
    assert len({check.id for check in checks}) == len(checks), "a resumed build duplicated an audit line"
    ids = [row.id for row in build.read_manifest()]
    assert len(ids) == len(set(ids))
    entry = build.read_report().tasks["flow-test-stories"]
    assert entry.kept + entry.dropped == 4
