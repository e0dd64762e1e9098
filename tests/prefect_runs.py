"""What a flow left in the Prefect API (the session's server): its flow run, its task runs by name, its artifacts.

Task runs reach the database through Prefect's event pipeline, a moment after the flow returns, so
:func:`recorded_run` waits until the expected number of them is there and each is in a final state."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class RecordedRun:
    name: str
    state: str
    parameters: dict
    task_runs: tuple[str, ...]  # their names, sorted
    artifacts: dict[str, object]  # key -> type and data (the markdown, the link)


def recorded_run(flow_name: str, task_runs: int, timeout_s: float = 60, **parameters) -> RecordedRun:
    """The latest run of the flow ``flow_name`` whose parameters include ``parameters``, with ``task_runs`` task
    runs recorded."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowFilter,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterId,
    )
    from prefect.client.schemas.sorting import FlowRunSort

    deadline = time.monotonic() + timeout_s
    with get_client(sync_client=True) as client:
        # newest first: the run looked for was just made, however many others the test run's server holds
        runs = client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])),
                                     sort=FlowRunSort.EXPECTED_START_TIME_DESC)
        matching = [run for run in runs if parameters.items() <= run.parameters.items()]
        assert matching, f"no run of flow '{flow_name}' with parameters {parameters}"
        run = max(matching, key=lambda candidate: candidate.created)
        by_run = FlowRunFilter(id=FlowRunFilterId(any_=[run.id]))
        while True:
            tasks = client.read_task_runs(flow_run_filter=by_run)
            if len(tasks) >= task_runs and all(task.state is not None and task.state.is_final() for task in tasks):
                break
            assert time.monotonic() < deadline, f"{flow_name}: {len(tasks)} task runs recorded, expected {task_runs}"
            time.sleep(0.2)
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run.id])))
    return RecordedRun(run.name, run.state.name, run.parameters, tuple(sorted(task.name for task in tasks)),
                       {artifact.key: (artifact.type, artifact.data) for artifact in artifacts})  # fmt: skip
