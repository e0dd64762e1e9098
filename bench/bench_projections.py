"""Benchmark: how long would each full seed set take to build on this machine? Times ``--items`` items of each set
end to end (synthesis, ASR gate with its retries, assembly of the dataset) with the voices, gate and spoken parts of
the shipped task file, and projects the full set's wall time from them, for 1 worker and for N.

  sStoryCloze     sstorycloze.yaml; real stories: Story Cloze winter 2018 val (``<data>/storycloze``), 3,742 items
                  in the full set (spring 2016 val + test, 1,871 stories each)
  zh-sStoryCloze  zh-sstorycloze.yaml; the shared data holds no Chinese stories, so the 13 demo stories
                  (data/demo/stories_zh.jsonl) repeated, each with its number in front (``第27个故事。``) so that no
                  two texts are the same clip; 3,742 items in the full set
  sCMMLU          scmmlu.yaml; CMMLU dev stems (``<data>/cmmlu/dev``) rewritten by the offline rules; 4,743 stems

Items are made by the task's own loader and rewriter, then written to JSONL so that every run builds exactly the same
items (item loading, a translation or LLM rewrite, is not timed). A gate model that is neither packaged offline nor
in the local cache (the Mandarin tasks name Whisper ``small``) is replaced by ``base`` and the output says so.

Each (set, workers) pair runs as one ``bench_scaling`` configuration: its own process, a cold clip store, a warm-up
build of other items of the set first (models loaded, workers started), then the timed build of ``--items`` items
through the build flow against a Prefect server started once. 1 worker: the CLI's default (one process, engines on
every core); N workers: ``--runner dask --workers N`` (engines on cores/N each). The projection is the timed build's
seconds per item times the full set's items; the one-off start-up (cluster, model loads) is printed beside it.
GPU: measured only where one is found (none on the 2-core development machine).

Hours from one machine say as much about the machine as about the code, so the figures carry a calibration measured
by the same run: Piper en_US joe's CPU seconds per second of audio it speaks (one process, a fixed paragraph, the
model loaded first). ``--calibrate-only`` prints that figure alone: a reader scales the hours by their figure over
the one printed with them.

Usage:  python bench/bench_projections.py [--items 100] [--sets sStoryCloze sCMMLU] [--workers 2] [--data DIR]
        python bench/bench_projections.py --calibrate-only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from bench_scaling import Config, run_config  # noqa: E402

from s2sbench.pipeline.machine.cpu import cores_per_worker, usable_cores  # noqa: E402
from s2sbench.pipeline.machine.device import cuda_device_count  # noqa: E402
from s2sbench.pipeline.core.records import Item  # noqa: E402
from s2sbench.pipeline.items.task_config import TaskConfig  # noqa: E402
from s2sbench.pipeline.catalog.tasks import load_task

REPO = Path(__file__).resolve().parent.parent
FALLBACK_GATE_MODEL = "base"  # packaged offline (99 languages)
CALIBRATION_TEXT = ("The old fisherman rowed his boat across the quiet lake at dawn. My sister bought twelve green "
                    "apples at the market yesterday, and we baked a pie that evening for the neighbours.")


@dataclass(frozen=True)
class SeedSet:
    name: str
    task: str  # the shipped task file
    full_items: int
    text: str  # where the timed items' text comes from


SETS = [
    SeedSet("sStoryCloze", "sstorycloze", 3742, "Story Cloze winter 2018 val (real stories)"),
    SeedSet("zh-sStoryCloze", "zh-sstorycloze", 3742, "the 13 demo Chinese stories repeated, numbered"),
    SeedSet("sCMMLU", "scmmlu", 4743, "CMMLU dev stems, offline rule rewrites"),
]
BY_NAME = {seed_set.name: seed_set for seed_set in SETS}


def default_data_dir() -> Path | None:
    """``$S2SBENCH_DATA``, else a ``shared/data`` folder beside the checkout (or beside its worktrees' folder)."""
    if os.environ.get("S2SBENCH_DATA"):
        return Path(os.environ["S2SBENCH_DATA"])
    return next((folder for folder in (REPO.parent / "shared" / "data", REPO.parent.parent / "shared" / "data")
                 if folder.is_dir()), None)


def seed_items(seed_set: SeedSet, task: TaskConfig, count: int, data: Path | None) -> list[Item]:
    from s2sbench.pipeline.items.load import load_task_items
    from s2sbench.pipeline.items.task_config import override_source

    if seed_set.name == "zh-sStoryCloze":
        demo = load_task_items(load_task("demo-stories-zh")).items
        return [demo[number % len(demo)].model_copy(update={
            "id": f"zh-story-{number + 1}", "context": f"第{number + 1}个故事。{demo[number % len(demo)].context}"})
            for number in range(count)]
    if data is None:
        raise SystemExit(f"{seed_set.name}: no data folder (give --data or S2SBENCH_DATA: the folder holding "
                         "storycloze/ and cmmlu/)")
    if seed_set.name == "sStoryCloze":
        source = override_source(task, path=str(data / "storycloze" / "winter2018_val.csv"))
    else:
        source = override_source(task, path=str(data / "cmmlu" / "dev"), split="")
        source = source.model_copy(update={"candidates": source.candidates.model_copy(
            update={"options": {"rewriters": ["rules"]}})})
    items = load_task_items(source, count).items
    if len(items) < count:
        raise SystemExit(f"{seed_set.name}: only {len(items)} items in {data}, {count} wanted")
    return items


def gate_model_here(engine: str, model: str) -> str:
    """``model`` if it loads with no download here, else the packaged fallback."""
    from s2sbench.pipeline.gate.asr.offline import packaged_model_dir

    if engine != "faster-whisper" or Path(model).expanduser().is_dir() or packaged_model_dir(model) is not None:
        return model
    from faster_whisper.utils import download_model

    try:
        download_model(model, local_files_only=True)
    except Exception:  # huggingface_hub raises several types for "not in the cache"
        return FALLBACK_GATE_MODEL
    return model


def write_seed_task(folder: Path, task: TaskConfig, items: list[Item], name: str) -> Path:
    """The task file's voices, gate and spoken parts over ``items`` written to JSONL."""
    items_path = folder / f"{name}.jsonl"
    with open(items_path, "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps({"id": item.id, "context": item.context, "candidates": item.candidates,
                                     "right": item.right}, ensure_ascii=False) + "\n")
    config = task.model_dump(mode="json", exclude={"path", "limit"})
    config.update(name=name, source={"loader": "jsonl", "path": str(items_path)}, candidates={"construction": "source"})
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def project(seed_set: SeedSet, run: dict, items: int) -> dict:
    per_item = run["build_s"] / items
    return {"build_s": round(run["build_s"], 1), "startup_s": round(run["cold_s"], 1),
            "s_per_item": round(per_item, 2), "projected_h": round(per_item * seed_set.full_items / 3600, 2),
            "rows_kept": run["kept"], "load": [round(run["load_before"], 1), round(run["load_after"], 1)]}


def calibration(repeats: int = 5) -> float:
    """Piper en_US joe's CPU seconds (this process, all its threads) per second of audio it speaks."""
    from s2sbench.pipeline.speech.tts import get_engine
    from s2sbench.pipeline.catalog.voices import get_voice

    voice = get_voice("piper-en-joe")
    engine = get_engine(voice.engine)
    engine.synthesize(CALIBRATION_TEXT, voice, 0)  # the model loads once, outside the measure
    started, audio_s = time.process_time(), 0.0
    for seed in range(repeats):
        wave = engine.synthesize(CALIBRATION_TEXT, voice, seed)
        audio_s += wave.samples.size / wave.sample_rate_hz
    return round((time.process_time() - started) / audio_s, 4)


def readme_section(figures: dict) -> str:
    workers = figures["workers"]
    lines = [f"{figures['items']} items of each set built end to end (synthesis, gate, assembly) through the build "
             f"flow, warm workers, cold clip store; projected = seconds per item x the full set's items. "
             f"{figures['gpu']}.", "",
             f"Calibration of this machine: Piper en_US joe takes **{figures['calibration_cpu_s_per_audio_s']} CPU s "
             "per second of audio** (`python bench/bench_projections.py --calibrate-only` prints yours; scale the "
             "hours by yours over this one).", "",
             "| set | items (full) | text | voices | gate | " + " | ".join(
                 f"{n} worker{'s' if n > 1 else ''}: s/item, projected h" for n in workers) + " |",
             "|---|---|---|---|---|" + "---|" * len(workers)]
    for name, entry in figures["sets"].items():
        cells = [f"{entry['runs'][str(n)]['s_per_item']} s, **{entry['runs'][str(n)]['projected_h']} h**" for n in workers]
        lines.append(f"| {name} | {figures['items']} ({entry['full_items']:,}) | {entry['text']} | "
                     f"{', '.join(entry['voices'])} | {entry['gate']} | " + " | ".join(cells) + " |")
    lines += ["", "| set | workers | timed build s | start-up and first build s | rows kept (items x voices) | load avg |",
              "|---|---|---|---|---|---|"]
    for name, entry in figures["sets"].items():
        for n in workers:
            run = entry["runs"][str(n)]
            lines.append(f"| {name} | {n} | {run['build_s']} | {run['startup_s']} | {run['rows_kept']}/{figures['items'] * len(entry['voices'])} "
                         f"| {run['load'][0]} -> {run['load'][1]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100, help="items timed per set (default 100)")
    parser.add_argument("--sets", nargs="+", choices=list(BY_NAME), default=list(BY_NAME), metavar="SET")
    parser.add_argument("--workers", type=int, default=usable_cores(), help="N of the N-worker run (default: cores)")
    parser.add_argument("--data", type=Path, default=default_data_dir(), help="folder with storycloze/ and cmmlu/")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--calibrate-only", action="store_true", help="print this machine's calibration figure only")
    args = parser.parse_args()
    if args.calibrate_only:
        print(f"Piper en_US joe: {calibration()} CPU s per second of audio")
        return
    warm_items = 2 * args.workers
    worker_counts = sorted({1, args.workers})
    figures = {"items": args.items, "workers": worker_counts, "cores": usable_cores(),
               "gpu": "GPU: found, measured by bench_gpu.py" if cuda_device_count() else "GPU: none on this machine",
               "calibration_cpu_s_per_audio_s": calibration(), "sets": {}}
    with tempfile.TemporaryDirectory(prefix="s2sbench-bench-projections-") as scratch:
        root = Path(scratch)
        os.environ["PREFECT_HOME"] = str(root / "prefect")
        os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from s2sbench.flows.server import private_server

        with private_server() as api_url:  # the server a command starts (its settings), up for every run
            env = {**os.environ, "PREFECT_API_URL": api_url}
            for seed_set in map(BY_NAME.get, args.sets):
                task = load_task(seed_set.task)
                model = gate_model_here(task.gate.asr.engine, task.gate.asr.model)
                gate = f"{task.gate.asr.engine} {model}" + (f" (task file: {task.gate.asr.model}, not here offline)"
                                                             if model != task.gate.asr.model else "")
                task = task.model_copy(update={"gate": task.gate.model_copy(update={
                    "asr": task.gate.asr.model_copy(update={"model": model})})})
                items = seed_items(seed_set, task, args.items + warm_items, args.data)
                folder = root / seed_set.task
                folder.mkdir()
                timed = write_seed_task(folder, task, items[: args.items], f"{seed_set.task}-timed")
                warm = write_seed_task(folder, task, items[args.items :], f"{seed_set.task}-warm-up")
                entry = {"task": seed_set.task, "full_items": seed_set.full_items, "text": seed_set.text,
                         "voices": task.voices, "speak": task.speak, "gate": gate, "runs": {}}
                for workers in worker_counts:
                    runner = "threads" if workers == 1 else "dask"
                    config = Config(f"{runner}-{workers}", runner, workers, cores_per_worker(workers),
                                    f"{workers} worker(s)")
                    run = run_config(config, warm, timed, folder / config.name, env)
                    run["kept"] = len(run.pop("rows"))
                    entry["runs"][str(workers)] = project(seed_set, run, args.items)
                    print(f"{seed_set.name}, {workers} worker(s): {entry['runs'][str(workers)]}", file=sys.stderr, flush=True)
                figures["sets"][seed_set.name] = entry
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
