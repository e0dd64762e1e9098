"""Benchmark: what running the stages as a Prefect flow costs, per stage, against a Prefect server that is already up.

The same small real build (generated English stories, espeak-ng en-us, Whisper tiny.en gate, context and candidates
spoken, warm clip store so every run does the same work: load items, transcribe and check every clip, assemble the
dataset) runs alternately as plain library calls and through its flow, in one process, after one warm-up run that
loads the models. In the flow every task run is timed twice by wrapping Prefect's task engine: the whole task run
(creating it, its state changes, cache lookups, result handling) and the stage function inside it. Per stage:

  plain s        the stage's library call outside Prefect
  in flow s      the same function inside its task run
  task run s     the whole task run
  overhead       (task run - in flow) / in flow: what orchestration adds to the stage, as a fraction of its time
  CPU overhead   CPU seconds of this process during the task run against those of the plain call: what the flow
                 costs in the process, Prefect's background threads included, and less moved by other jobs on the
                 machine than wall time

and for the whole run, the flow's wall and CPU time against the plain run's. Medians over ``--rounds`` (plain, flow) pairs.
The server start-up a command pays when none is running (a private server, to its first answer) is timed apart.

A case is a plain function (stages timed with ``clock.stage(name)``, names as the flow's task names) and the flow
call; add one to ``CASES`` for any other flow.

Usage:  python bench/bench_flow_overhead.py [--items 4] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_orchestration import write_task  # noqa: E402  (the same generated stories)

SHARD_SIZE = 2


class StageClock:
    """Seconds per stage of one run: plain stages by ``stage()``, task runs by wrapping Prefect's sync task engine."""

    def __init__(self):
        self.body: dict[str, float] = defaultdict(float)
        self.body_cpu: dict[str, float] = defaultdict(float)
        self.task_run: dict[str, float] = defaultdict(float)
        self.task_run_cpu: dict[str, float] = defaultdict(float)
        self.task_runs: dict[str, int] = defaultdict(int)
        self._current = threading.local()

    @contextlib.contextmanager
    def stage(self, name: str):
        started, cpu = time.perf_counter(), time.process_time()
        yield
        self.body[name] += time.perf_counter() - started
        self.body_cpu[name] += time.process_time() - cpu

    @contextlib.contextmanager
    def watching_task_runs(self):
        import prefect.task_engine as engine

        run_task_sync, call_with_parameters = engine.run_task_sync, engine.call_with_parameters

        def timed_run(task, *args, **kwargs):
            self._current.name = task.name
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return run_task_sync(task, *args, **kwargs)
            finally:
                self.task_run[task.name] += time.perf_counter() - started
                self.task_run_cpu[task.name] += time.process_time() - cpu
                self.task_runs[task.name] += 1
                self._current.name = None

        def timed_call(fn, parameters, *args, **kwargs):
            name = getattr(self._current, "name", None)
            if name is None:
                return call_with_parameters(fn, parameters, *args, **kwargs)
            with self.stage(name):
                return call_with_parameters(fn, parameters, *args, **kwargs)

        engine.run_task_sync, engine.call_with_parameters = timed_run, timed_call
        try:
            yield self
        finally:
            engine.run_task_sync, engine.call_with_parameters = run_task_sync, call_with_parameters


@dataclass(frozen=True)
class Case:
    name: str
    plain: Callable[[StageClock, Path], None]  # runs the stages into a fresh folder
    flow: Callable[[Path], None]


def build_case(task: Path, store: Path) -> Case:
    def plain(clock: StageClock, out: Path) -> None:
        # the stages of pipeline.build.run_build, each timed
        from s2sbench.pipeline.assemble import assemble_build
        from s2sbench.pipeline.build import build_session, prepare_items, shard_items, speak_shard
        from s2sbench.pipeline.tasks import load_task

        config = load_task(str(task))
        with build_session(out, [config], None, SHARD_SIZE, 0) as build:
            items = prepare_items(config, build)  # in the flow's own body too: not a task
            for index, shard in enumerate(shard_items(items, SHARD_SIZE)):
                with clock.stage("speak-shard"):
                    speak_shard(config, shard, index, build, store)
            with clock.stage("assemble"):
                assemble_build(build, [config], SHARD_SIZE, store)

    def flow(out: Path) -> None:
        from s2sbench.flows.build import build_flow
        from s2sbench.flows.runners import make_task_runner

        # one worker, as `s2sbench build` runs by default and as the plain loop does
        build_flow.with_options(task_runner=make_task_runner("threads", 1))(
            tasks=[str(task)], out_dir=str(out), shard_size=SHARD_SIZE, store_root=str(store)
        )

    return Case("build", plain, flow)


def measure(case: Case, scratch: Path, rounds: int) -> dict:
    warm = StageClock()
    case.plain(warm, scratch / "warm-up-plain")  # loads the models, fills the clip store
    case.flow(scratch / "warm-up-flow")  # imports and first-run set-up of the flow
    runs: dict[str, list] = {"plain": [], "flow": []}
    for round_number in range(rounds):
        for mode in ("plain", "flow"):
            clock, out = StageClock(), scratch / f"{mode}-{round_number}"
            started, cpu = time.perf_counter(), time.process_time()
            if mode == "plain":
                case.plain(clock, out)
            else:
                with clock.watching_task_runs():
                    case.flow(out)
            runs[mode].append((time.perf_counter() - started, time.process_time() - cpu, clock))
    plain_clocks = [clock for _, _, clock in runs["plain"]]
    flow_clocks = [clock for _, _, clock in runs["flow"]]
    stages = {}
    for name in warm.body:
        plain_cpu = statistics.median(clock.body_cpu[name] for clock in plain_clocks)
        stages[name] = {
            "plain_s": round(statistics.median(clock.body[name] for clock in plain_clocks), 3),
            "in_flow_s": round(statistics.median(clock.body[name] for clock in flow_clocks), 3),
            "task_run_s": round(statistics.median(clock.task_run[name] for clock in flow_clocks), 3),
            "per_task_run_ms": round(1000 * statistics.median(
                (clock.task_run[name] - clock.body[name]) / clock.task_runs[name] for clock in flow_clocks), 1),
            "overhead": round(statistics.median(
                (clock.task_run[name] - clock.body[name]) / clock.body[name] for clock in flow_clocks), 4),
            "cpu_overhead": round(statistics.median(clock.task_run_cpu[name] for clock in flow_clocks) / plain_cpu - 1, 4),
        }
    plain_s, flow_s = (statistics.median(wall for wall, _, _ in runs[mode]) for mode in ("plain", "flow"))
    plain_cpu_s, flow_cpu_s = (statistics.median(cpu for _, cpu, _ in runs[mode]) for mode in ("plain", "flow"))
    return {"case": case.name, "rounds": rounds, "stages": stages,
            "plain_run_s": round(plain_s, 2), "flow_run_s": round(flow_s, 2), "flow_over_plain": round(flow_s / plain_s, 3),
            "plain_run_cpu_s": round(plain_cpu_s, 2), "flow_run_cpu_s": round(flow_cpu_s, 2),
            "flow_over_plain_cpu": round(flow_cpu_s / plain_cpu_s, 3)}


def private_server_start_s() -> float:
    """Seconds from starting a command's private server to its first answer."""
    from s2sbench.flows.server import is_healthy, private_server

    started = time.perf_counter()
    with private_server() as api_url:
        while not is_healthy(api_url, timeout_s=60):
            time.sleep(0.1)
        return time.perf_counter() - started


def readme_section(figures: dict) -> str:
    lines = [
        f"The {figures['case']} of {figures['items']} generated stories (espeak-ng en-us, Whisper tiny.en gate, context "
        f"and candidates spoken, shard size {SHARD_SIZE}, warm clip store, 1 worker), {figures['rounds']} alternating "
        "(plain, flow) rounds in one process, medians; the flow runs against a Prefect server that is already up. "
        "Overhead is (task run - stage function inside it) / stage function.", "",
        "| stage | plain call | in the flow | whole task run | per task run | overhead | CPU overhead |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, stage in figures["stages"].items():
        lines.append(f"| {name} | {stage['plain_s']} s | {stage['in_flow_s']} s | {stage['task_run_s']} s "
                     f"| {stage['per_task_run_ms']} ms | **{stage['overhead']:.1%}** | {stage['cpu_overhead']:+.1%} |")
    lines += [
        f"| whole run | {figures['plain_run_s']} s | | {figures['flow_run_s']} s | | "
        f"{figures['flow_over_plain'] - 1:+.1%} (wall) | {figures['flow_over_plain_cpu'] - 1:+.1%} |", "",
        f"Without a running server a command first starts its own: {figures['private_server_start_s']} s to its "
        "first answer, paid once by `s2sbench server start` instead.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=4, help="stories in the build (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="(plain, flow) pairs; medians are reported")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="s2sbench-overhead-") as folder:
        scratch = Path(folder)
        os.environ["PREFECT_HOME"] = str(scratch / "prefect")  # its own database: never the user's
        from s2sbench.flows.server import prefect_api

        with prefect_api():  # a server up before the first run, as after `s2sbench server start`
            figures = measure(build_case(write_task(scratch, args.items), scratch / "store"), scratch, args.rounds)
        server_start_s = private_server_start_s()  # its database made by now, as for any command after the first
    figures["items"] = args.items
    figures["private_server_start_s"] = round(server_start_s, 1)
    print(json.dumps(figures, indent=2))
    worst = max(stage["overhead"] for stage in figures["stages"].values())
    print(f"worst stage overhead {worst:.1%} (target at most 5%); whole run: wall x{figures['flow_over_plain']}, "
          f"CPU x{figures['flow_over_plain_cpu']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
