"""Stages as lean Prefect tasks: inputs handed over in ``whole`` reach the library function and the run name
unwrapped, and Prefect never walks them (in-process flows on the session's server)."""

from __future__ import annotations

from prefect import flow

from s2sbench.flows.stages import stage, whole

from tests.prefect_runs import recorded_run


class Watched(dict):
    """A mapping that counts how often something walks it."""

    walks = 0

    def items(self):
        Watched.walks += 1
        return super().items()


@stage("echo", "echo {rows[0][id]} and {count} more")
def echo(rows: list[Watched], count: int) -> list[str]:
    return [row["id"] for row in rows]


@flow(name="whole-inputs", flow_run_name="whole inputs {label}", persist_result=False)
def whole_inputs(label: str, wrapped: bool) -> list[str]:
    rows = [Watched(id=f"r{number}") for number in range(3)]
    return echo(whole(rows) if wrapped else rows, count=2)


def test_whole_inputs_reach_the_stage_and_its_run_name_unwalked(prefect_harness):
    Watched.walks = 0
    assert whole_inputs("walked", wrapped=False) == ["r0", "r1", "r2"]
    assert Watched.walks > 0  # without whole, Prefect walks every row looking for futures

    Watched.walks = 0
    assert whole_inputs("whole", wrapped=True) == ["r0", "r1", "r2"]
    assert Watched.walks == 0
    assert recorded_run("whole-inputs", task_runs=1, label="whole").task_runs == ("echo r0 and 2 more",)
