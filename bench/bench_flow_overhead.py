"""Benchmark: what running the stages as a Prefect flow costs, per stage, against a Prefect server that is already up.

The same small real build (generated English stories, espeak-ng en-us, Whisper tiny.en gate, context and candidates
spoken, warm clip store so every run does the same work: load items, transcribe and check every clip, assemble the
dataset) runs alternately as plain library calls and through its flow, in one process, after one warm-up run that
loads the models, at each build size of ``--items``. In the flow every task run is timed twice by wrapping Prefect's
task engine: the whole task run (creating it, its state changes and events, result handling) and the stage function
inside it. Per stage, summed over its task runs:

  plain           the stage's library calls outside Prefect
  in the flow     the whole task runs
  overhead        (in the flow - plain) / plain: what a user waits for more, the headline
  CPU overhead    the same with this process's CPU seconds (Prefect's background threads included), less moved by
                  other jobs on the machine than wall time
  per task run    (whole task run - stage function inside it) / task runs: the fixed cost of a task run
  slowdown inside (stage function inside its task run) / plain - 1: the same function running slower in the flow
                  (threads sending events and logs, the server's work on them competing for the cores)

and for the whole run, the flow's wall and CPU time against the plain run's, the server's CPU included: the server
(a child process here, as after ``s2sbench server start`` on the same machine) works on the flow's events after the
flow returns too, so each flow round waits until it is idle again and counts that CPU. Medians over ``--rounds``
(plain, flow) pairs. The server start-up a command pays when none is running (a private server, to its first answer)
is timed apart.

A case is a plain function (stages timed with ``clock.stage(name)``, names as the flow's task names) and the flow
call (``build_case``); write one like it for any other flow.

Usage:  python bench/bench_flow_overhead.py [--items 4 16] [--rounds 5] [--json out.json]
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
TARGET = 0.05  # at most this overhead per stage at the smallest size measured
SERVER_IDLE_CPU_S = 0.05  # the server is idle again when it uses less CPU than this over a second


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


def server_cpu_s() -> float | None:
    """CPU seconds used so far by this process's children (the private Prefect server); None where unknown (no
    /proc, or the server is not ours: PREFECT_API_URL set)."""
    total, found = 0.0, False
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():  # fields: state, ppid, ..., utime (12th), stime (13th)
            total, found = total + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), True
    return total if found else None


def wait_server_idle(timeout_s: float = 120) -> None:
    """Until the server has worked off what it was sent (events, logs)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = server_cpu_s()
        time.sleep(1)
        if before is None or server_cpu_s() - before < SERVER_IDLE_CPU_S:
            return


@dataclass(frozen=True)
class Case:
    name: str
    plain: Callable[[StageClock, Path], None]  # runs the stages into a fresh folder
    flow: Callable[[Path], None]


def build_case(task: Path, store: Path) -> Case:
    def plain(clock: StageClock, out: Path) -> None:
        # the stages of pipeline.build.run_build, each timed
        from s2sbench.pipeline.run.assemble import assemble_build
        from s2sbench.pipeline.run.build import build_session, prepare_items, shard_items, speak_shard
        from s2sbench.pipeline.catalog.tasks import load_task

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


@dataclass(frozen=True)
class Round:
    mode: str
    wall_s: float
    cpu_s: float
    server_cpu_s: float | None
    clock: StageClock


def run_once(case: Case, mode: str, out: Path) -> Round:
    clock, server_before = StageClock(), server_cpu_s()
    started, cpu = time.perf_counter(), time.process_time()
    if mode == "plain":
        case.plain(clock, out)
    else:
        with clock.watching_task_runs():
            case.flow(out)
    wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu
    if mode == "flow":
        wait_server_idle()  # its work on this run's events is this run's cost
    server_after = server_cpu_s()
    server_s = None if server_before is None or server_after is None else server_after - server_before
    return Round(mode, wall_s, cpu_s, server_s, clock)


def median(values) -> float:
    return statistics.median(list(values))


def stage_figures(name: str, pairs: list[tuple[Round, Round]]) -> dict:
    def ratio(flow_value: Callable[[StageClock], float], plain_value: Callable[[StageClock], float]) -> float:
        return round(median(flow_value(flow.clock) / plain_value(plain.clock) - 1 for plain, flow in pairs), 4)

    flows = [flow.clock for _, flow in pairs]
    return {
        "task_runs": flows[0].task_runs[name],
        "plain_s": round(median(plain.clock.body[name] for plain, _ in pairs), 3),
        "in_flow_s": round(median(clock.task_run[name] for clock in flows), 3),
        "overhead": ratio(lambda clock: clock.task_run[name], lambda clock: clock.body[name]),
        "cpu_overhead": ratio(lambda clock: clock.task_run_cpu[name], lambda clock: clock.body_cpu[name]),
        "per_task_run_ms": round(1000 * median((clock.task_run[name] - clock.body[name]) / clock.task_runs[name]
                                               for clock in flows), 1),
        "slowdown_inside": ratio(lambda clock: clock.body[name], lambda clock: clock.body[name]),
    }


def measure(case: Case, scratch: Path, rounds: int) -> dict:
    load_before = os.getloadavg()[0]
    warm = StageClock()
    case.plain(warm, scratch / "warm-up-plain")  # loads the models, fills the clip store
    case.flow(scratch / "warm-up-flow")  # imports and first-run set-up of the flow
    wait_server_idle()
    pairs = [(run_once(case, "plain", scratch / f"plain-{number}"), run_once(case, "flow", scratch / f"flow-{number}"))
             for number in range(rounds)]
    figures = {"case": case.name, "stages": {name: stage_figures(name, pairs) for name in warm.body}}
    for key, value in (("run_s", lambda run: run.wall_s), ("run_cpu_s", lambda run: run.cpu_s)):
        figures[f"plain_{key}"] = round(median(value(plain) for plain, _ in pairs), 2)
        figures[f"flow_{key}"] = round(median(value(flow) for _, flow in pairs), 2)
    figures["flow_over_plain"] = round(median(flow.wall_s / plain.wall_s for plain, flow in pairs), 3)
    if all(run.server_cpu_s is not None for pair in pairs for run in pair):
        figures["plain_server_cpu_s"] = round(median(plain.server_cpu_s for plain, _ in pairs), 2)
        figures["flow_server_cpu_s"] = round(median(flow.server_cpu_s for _, flow in pairs), 2)
        figures["flow_over_plain_cpu"] = round(median(
            (flow.cpu_s + flow.server_cpu_s) / (plain.cpu_s + plain.server_cpu_s) for plain, flow in pairs), 3)
    else:
        figures["flow_over_plain_cpu"] = round(median(flow.cpu_s / plain.cpu_s for plain, flow in pairs), 3)
    figures["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    return figures


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
        f"The {figures['case']} of generated stories (espeak-ng en-us, Whisper tiny.en gate, context and candidates "
        f"spoken, shard size {SHARD_SIZE}, warm clip store, 1 worker), {figures['rounds']} alternating (plain, flow) "
        "rounds in one process at each size, medians; the flow runs against a Prefect server that is already up, a "
        "child process on the same machine. **Overhead** is (whole task runs - plain calls) / plain calls: what the "
        "stage costs more in the flow. It splits into a fixed cost per task run (creating it, its state changes and "
        "events) and the stage function itself running slower inside its task run. The whole run's CPU counts the "
        "server's CPU too (in brackets: the server's CPU per flow run).", "",
        "| stories | stage | plain call | in the flow | **overhead** | CPU overhead | per task run | slowdown inside |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in figures["sizes"]:
        for name, stage in size["stages"].items():
            lines.append(f"| {size['items']} | {name} ({stage['task_runs']} task runs) | {stage['plain_s']} s "
                         f"| {stage['in_flow_s']} s | **{stage['overhead']:+.1%}** | {stage['cpu_overhead']:+.1%} "
                         f"| {stage['per_task_run_ms']} ms | {stage['slowdown_inside']:+.1%} |")  # fmt: skip
        server = f" (server {size['flow_server_cpu_s']} s)" if "flow_server_cpu_s" in size else ""
        lines.append(f"| {size['items']} | whole run | {size['plain_run_s']} s | {size['flow_run_s']} s "
                     f"| {size['flow_over_plain'] - 1:+.1%} | {size['flow_over_plain_cpu'] - 1:+.1%}{server} | | |")
    loads = ", ".join(f"{size['items']} stories {size['load_average'][0]} to {size['load_average'][1]}"
                      for size in figures["sizes"])
    lines += [
        "", f"Load average while measuring: {loads}.", "",
        f"Without a running server a command first starts its own: {figures['private_server_start_s']} s to its "
        "first answer, paid once by `s2sbench server start` instead.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, nargs="+", default=[4, 16], help="stories per build, one size after "
                        f"another (default 4 16; the target, at most {TARGET:.0%}% per stage, is for the smallest)")
    parser.add_argument("--rounds", type=int, default=5, help="(plain, flow) pairs per size (default 5); medians are "
                        "reported")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    figures: dict = {"case": "build", "rounds": args.rounds, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="s2sbench-overhead-") as folder:
        scratch = Path(folder)
        os.environ["PREFECT_HOME"] = str(scratch / "prefect")  # its own database: never the user's
        from s2sbench.flows.server import prefect_api

        with prefect_api():  # a server up before the first run, as after `s2sbench server start`
            for items in sorted(args.items):
                case = build_case(write_task(scratch, items), scratch / "store")
                size = {"items": items, **measure(case, scratch / f"{items}-stories", args.rounds)}
                figures["sizes"].append(size)
                print(json.dumps(size, indent=2), flush=True)
        figures["private_server_start_s"] = round(private_server_start_s(), 1)  # its database made by now
    smallest = figures["sizes"][0]
    worst = max(smallest["stages"], key=lambda name: smallest["stages"][name]["overhead"])
    print(f"worst stage overhead at {smallest['items']} stories: {worst} {smallest['stages'][worst]['overhead']:+.1%} "
          f"(target at most {TARGET:.0%}%)")
    for size in figures["sizes"]:
        print(f"{size['items']} stories: " + ", ".join(f"{name} {stage['overhead']:+.1%}" for name, stage in
                                                         size["stages"].items())
              + f"; whole run wall x{size['flow_over_plain']}, CPU x{size['flow_over_plain_cpu']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
