"""The build flow on a Dask cluster (two worker processes, reached by address as an existing cluster would be)."""

from __future__ import annotations

import pytest

from s2sbench.flows.runners import make_task_runner
from s2sbench.pipeline.builddir import BuildDir


def _fingerprint(build):
    return [(row.id, {role: clip.audio_sha256 for role, clip in row.clips.items()}) for row in BuildDir(build).read_manifest()]


def test_dask_cluster_build_equals_threads_build(prefect_harness, story_task, tmp_path):
    from dask.distributed import LocalCluster

    from s2sbench.flows.build import build_flow

    store = str(tmp_path / "clips")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        runner = make_task_runner("dask", address=cluster.scheduler_address)
        on_dask = build_flow.with_options(task_runner=runner)(
            tasks=[str(story_task)], out_dir=str(tmp_path / "dask"), shard_size=2, store_root=store
        )
    assert on_dask["this_run"]["clips_synthesized"] > 0
    on_threads = build_flow.with_options(task_runner=make_task_runner("threads", workers=2))(
        tasks=[str(story_task)], out_dir=str(tmp_path / "threads"), shard_size=2, store_root=store
    )
    assert _fingerprint(tmp_path / "dask") == _fingerprint(tmp_path / "threads")
    assert on_dask["totals"] == on_threads["totals"]


def test_runner_options_are_checked():
    with pytest.raises(ValueError, match="--address needs --runner dask"):
        make_task_runner("threads", address="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="unknown runner 'slurm'"):
        make_task_runner("slurm")
