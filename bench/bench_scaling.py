"""Benchmark: does a build scale with Dask worker processes? 1 -> 2 workers, and threads versus processes.

The same build of N generated English stories (the shipped sStoryCloze voice piper-en-joe and its Whisper tiny.en
gate, context and both endings spoken, shard size 2: each shard a work unit) runs in each configuration below, each
in its own subprocess, on a cold clip store, against one Prefect server started once. Each configuration first
builds other stories (two per worker, one per shard) so the timed build runs on started workers whose models are
loaded: what every build after the first sees on a running cluster. The cold time (cluster start, model loads and
that first build) is printed too.

  dask-1x1     1 Dask worker process, engines on 1 core: the per-worker setting of dask-2x1, the speed-up's baseline
  dask-2x1     2 Dask worker processes, engines on 1 core each (`--runner dask --workers 2` on 2 cores)
  dask-1x2     1 Dask worker process, engines on 2 cores
  library-2    the library's run_build in one process (no Prefect), engines on 2 cores
  threads-2    2 threads in one process (`--workers 2`), engines on 2 cores
  threads-2x1  2 threads in one process, engines on 1 core
  dask-2x2     2 Dask worker processes, engines on 2 cores each: not pinned, so their thread pools compete
  dask-2x1-dask-defaults  dask-2x1 on a plain LocalCluster: Dask's own worker settings, as on a cluster started
               without the engine environment (docs/orchestration.md), so only what the engines set when they load

"Engines on K cores" is S2SBENCH_ENGINE_CORES=K (CTranslate2 replicas, onnxruntime and torch threads; Piper runs
each call on one thread whatever K is); see s2sbench.pipeline.machine.cpu. Each configuration's dataset rows (ids and audio
hashes) are compared with the first one's. The CPU seconds per clip of the processes that run the work units (the
Dask workers, or the one process) show what running two costs on this machine whatever its load, with their page
faults per clip (buffers the allocator took fresh from the kernel: see s2sbench.pipeline.machine.cpu), and the CPU time
of the process that runs the flow (for Dask also the scheduler and the nannies), which on 2 cores is taken from the
workers. The Dask configurations run on the cluster `--runner dask --workers N` starts (``start_local_cluster``). ``--rounds R`` runs every configuration R times, round after round, and keeps each one's fastest build
(the machine's other jobs only ever slow a run down). The machine's load average is printed with every run.

Usage:  python bench/bench_scaling.py [--items 32] [--rounds 1] [--only dask-1x1 dask-2x1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_orchestration import write_task  # noqa: E402  (the same generated stories)

SHARD_SIZE = 2
VOICE, ASR_MODEL = "piper-en-joe", "tiny.en"  # sstorycloze.yaml's voice and gate


@dataclass(frozen=True)
class Config:
    name: str
    runner: str  # dask, threads or library
    workers: int
    engine_cores: int
    what: str
    dask_defaults: bool = False  # a plain LocalCluster, not the runner's start_local_cluster


CONFIGS = [  # the speed-up's pair first, back to back, so the machine's other load moves them alike
    Config("dask-1x1", "dask", 1, 1, "1 Dask worker, engines on 1 core"),
    Config("dask-2x1", "dask", 2, 1, "2 Dask workers, engines on 1 core each"),
    Config("dask-1x2", "dask", 1, 2, "1 Dask worker, engines on 2 cores"),
    Config("library-2", "library", 1, 2, "library run_build in one process, engines on 2 cores"),
    Config("threads-2", "threads", 2, 2, "2 threads in one process, engines on 2 cores"),
    Config("threads-2x1", "threads", 2, 1, "2 threads in one process, engines on 1 core"),
    Config("dask-2x2", "dask", 2, 2, "2 Dask workers, engines on 2 cores each (not pinned)"),
    Config("dask-2x1-dask-defaults", "dask", 2, 1, "dask-2x1 with Dask's own worker settings", dask_defaults=True),
]
BY_NAME = {config.name: config for config in CONFIGS}


def child(config: Config, warm_task: Path, task: Path, scratch: Path) -> dict:
    """One configuration: a warm-up build, then the timed build; runs in its own process (models, caches, env)."""
    from contextlib import ExitStack

    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    started = time.perf_counter()
    workers_usage = process_usage  # CPU seconds and page faults of the processes that run the work units
    with ExitStack() as stack:
        if config.runner == "library":
            from s2sbench.pipeline.run.build import run_build
            from s2sbench.pipeline.catalog.tasks import load_task

            def build(task_path: Path, out: Path, store: Path, shard_size: int) -> None:
                run_build([load_task(str(task_path))], out, shard_size=shard_size, store_root=store)
        else:
            from s2sbench.flows.build import build_flow
            from s2sbench.flows.runners import local_cluster_kwargs, make_task_runner, start_local_cluster
            from s2sbench.flows.server import flow_run_defaults

            stack.enter_context(flow_run_defaults())  # as a command runs its flows

            if config.runner == "dask":
                from dask.distributed import Client, LocalCluster

                start = LocalCluster if config.dask_defaults else start_local_cluster
                cluster = stack.enter_context(start(**local_cluster_kwargs(config.workers), dashboard_address=None))
                runner = make_task_runner("dask", address=cluster.scheduler_address)
                client = stack.enter_context(Client(cluster))

                def workers_usage() -> tuple[float, int]:
                    found = client.run(process_usage).values()
                    return sum(cpu for cpu, _ in found), sum(faults for _, faults in found)
            else:
                runner = make_task_runner("threads", config.workers)

            def build(task_path: Path, out: Path, store: Path, shard_size: int) -> None:
                build_flow.with_options(task_runner=runner)(tasks=[str(task_path)], out_dir=str(out),
                                                            store_root=str(store), shard_size=shard_size)

        build(warm_task, scratch / "warm", scratch / "warm-store", 1)
        cold_s = time.perf_counter() - started
        load_before = os.getloadavg()[0]
        started, cpu_started, (workers_cpu_started, faults_started) = time.perf_counter(), time.process_time(), workers_usage()
        build(task, scratch / "build", scratch / "store", SHARD_SIZE)
        build_s, driver_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
        workers_cpu_s, workers_faults = workers_usage()
        workers_cpu_s, workers_faults = workers_cpu_s - workers_cpu_started, workers_faults - faults_started
    rows = [(row.id, sorted((role, clip.audio_sha256) for role, clip in row.clips.items()))
            for row in BuildDir(scratch / "build").read_manifest()]
    return {"cold_s": cold_s, "build_s": build_s, "driver_cpu_s": driver_cpu_s, "workers_cpu_s": workers_cpu_s,
            "workers_faults": workers_faults, "load_before": load_before,
            "load_after": os.getloadavg()[0], "rows": rows}


def process_usage() -> tuple[float, int]:
    """This process's CPU seconds and minor page faults so far."""
    import resource

    return time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def run_config(config: Config, warm_task: Path, task: Path, scratch: Path, env: dict) -> dict:
    env = {**env, "S2SBENCH_ENGINE_CORES": str(config.engine_cores)}
    command = [sys.executable, __file__, "--child", json.dumps(asdict(config)), str(warm_task), str(task), str(scratch)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{config.name} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def summarize(items: int, rounds: int, runs: dict[str, list[dict]]) -> dict:
    best = {name: min(found, key=lambda run: run["build_s"]) for name, found in runs.items()}
    reference = next(iter(best.values()))["rows"]
    figures = {
        "items": items, "clips": 3 * items, "shard_size": SHARD_SIZE, "rounds": rounds, "cores": os.cpu_count(),
        "configs": {name: {"what": BY_NAME[name].what, "build_s": round(run["build_s"], 2),
                           "cold_s": round(run["cold_s"], 2), "driver_cpu_s": round(run["driver_cpu_s"], 1),
                           "cpu_s_per_clip": round(run["workers_cpu_s"] / (3 * items), 3),
                           "page_faults_per_clip": round(run["workers_faults"] / (3 * items)),
                           "load": [round(run["load_before"], 1), round(run["load_after"], 1)],
                           "same_rows": run["rows"] == reference, "rows": len(run["rows"])}
                    for name, run in best.items()},
    }

    def ratio(slow: str, fast: str) -> float | None:
        return round(best[slow]["build_s"] / best[fast]["build_s"], 2) if slow in best and fast in best else None

    one_worker = [name for name in ("dask-1x1", "dask-1x2", "library-2") if name in best]
    fastest_one = min(one_worker, key=lambda name: best[name]["build_s"]) if one_worker else None
    figures["ratios"] = {
        "dask_2_workers_over_1_same_setting": ratio("dask-1x1", "dask-2x1"),
        "best_1_worker": fastest_one,
        "dask_2_workers_over_best_1_worker": ratio(fastest_one, "dask-2x1") if fastest_one else None,
        "dask_2_workers_pinned_over_unpinned": ratio("dask-2x2", "dask-2x1"),
        "dask_2_workers_over_2_threads": ratio("threads-2", "dask-2x1"),
        "dask_2_workers_over_2_threads_1_core": ratio("threads-2x1", "dask-2x1"),
        "dask_2_workers_over_dask_defaults": ratio("dask-2x1-dask-defaults", "dask-2x1"),
        # 1.0: two workers spend on a clip the CPU one spends; below 1, running two costs CPU (shared caches, SMT)
        "cpu_per_clip_1_over_2_workers": (round(best["dask-1x1"]["workers_cpu_s"] / best["dask-2x1"]["workers_cpu_s"], 2)
                                          if "dask-1x1" in best and "dask-2x1" in best else None),
    }
    return figures


def readme_section(figures: dict) -> str:
    lines = [
        f"{figures['items']} generated English stories, {figures['clips']} clips (piper-en-joe, Whisper tiny.en gate, "
        f"context and both endings spoken, shard size {figures['shard_size']}), each configuration in its own process "
        f"on a cold clip store after a warm-up build (models loaded); fastest of {figures['rounds']} round(s). "
        "Engines on K cores: `S2SBENCH_ENGINE_CORES=K`.", "",
        "| configuration | build s | cold s (start, load, first build) | CPU s per clip (work units) | page faults per clip "
        "| CPU s of the flow's process | load avg | same rows |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, run in figures["configs"].items():
        lines.append(f"| `{name}`: {run['what']} | {run['build_s']} | {run['cold_s']} | {run['cpu_s_per_clip']} | "
                     f"{run['page_faults_per_clip']:,} | {run['driver_cpu_s']} | "
                     f"{run['load'][0]} -> {run['load'][1]} | {'yes' if run['same_rows'] else '**no**'} |")
    ratios = figures["ratios"]
    labels = {
        "dask_2_workers_over_1_same_setting": "2 Dask workers / 1 (1 engine core per worker in both)",
        "dask_2_workers_over_best_1_worker": f"2 Dask workers / the fastest 1-worker run (`{ratios['best_1_worker']}`)",
        "dask_2_workers_pinned_over_unpinned": "2 Dask workers pinned to 1 core each / not pinned",
        "dask_2_workers_over_2_threads": "2 Dask workers / 2 threads",
        "dask_2_workers_over_2_threads_1_core": "2 Dask workers / 2 threads with 1 engine core",
        "dask_2_workers_over_dask_defaults": "2 Dask workers / the same on Dask's own worker settings",
        "cpu_per_clip_1_over_2_workers": "CPU per clip of 1 Dask worker / of 2 (1.0: running two costs no CPU)",
    }
    lines += ["", "| speed-up | x |", "|---|---|"]
    lines += [f"| {label} | **{ratios[key]}{'' if key.startswith('cpu') else 'x'}** |" for key, label in labels.items()
              if ratios.get(key) is not None]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=32, help="stories in the timed build (default 32)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of every configuration; the fastest is kept")
    parser.add_argument("--only", nargs="+", choices=list(BY_NAME), metavar="CONFIG", help="run only these")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child:
        print(json.dumps(child(Config(**json.loads(args.child)), *map(Path, rest))))
        return
    chosen = [BY_NAME[name] for name in args.only] if args.only else CONFIGS
    runs: dict[str, list[dict]] = {config.name: [] for config in chosen}
    with tempfile.TemporaryDirectory(prefix="s2sbench-bench-scaling-") as scratch:
        root = Path(scratch)
        # a private Prefect home: the bench never contends with (or writes into) the user's Prefect database
        os.environ["PREFECT_HOME"] = str(root / "prefect")
        os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        task = write_task(root, args.items, VOICE, ASR_MODEL, name="timed")
        warm_task = write_task(root, 4, VOICE, ASR_MODEL, first=args.items, name="warm-up")
        from s2sbench.flows.server import private_server

        with private_server() as api_url:  # the server a command starts (its settings), up for every run
            env = {**os.environ, "PREFECT_API_URL": api_url}
            for round_number in range(args.rounds):
                for config in chosen:
                    run = run_config(config, warm_task, task, root / f"{config.name}-{round_number}", env)
                    runs[config.name].append(run)
                    print(f"round {round_number + 1} {config.name}: build {run['build_s']:.1f} s, cold {run['cold_s']:.1f} s, "
                          f"load {run['load_before']:.1f}", file=sys.stderr, flush=True)
    figures = summarize(args.items, args.rounds, runs)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
