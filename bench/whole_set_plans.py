"""What a whole zh-sStoryCloze and a whole sCMMLU would cost to revoice here, from ``s2sbench build --dry-run``.

The published S2SBench release is not on this machine, so this writes a stand-in in its layout at its full size
(``S2S/StoryCloze/zh_story.jsonl``: 3,742 stories; ``S2S/cmmlu/cmmlu_rewrite_4.jsonl``: 4,743 statements), from the
texts bench_projections.py uses (the 13 demo Chinese stories, numbered; CMMLU dev stems rewritten by the offline
rules, numbered), and runs the release tasks' dry run on it, as a user would before revoicing the release: the plan
calibrates the default Mandarin voices and gate on a few items in temporary folders (or reads the clip store's
ledger of earlier builds here), and projects wall time, CPU time and disk for the whole set.

    python bench/whole_set_plans.py [--workers 2] [--data ../shared/data] [--out DIR (default: the temporary folder's whole-set-plans)]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_projections import BY_NAME, default_data_dir, seed_items  # noqa: E402

from s2sbench.pipeline.catalog.tasks import load_task  # noqa: E402

RELEASE_TASKS = {"zh-sStoryCloze": ("zh-sstorycloze-release", "S2S/StoryCloze/zh_story.jsonl"),
                 "sCMMLU": ("scmmlu-release", "S2S/cmmlu/cmmlu_rewrite_4.jsonl")}


def release_rows(name: str, items: list) -> list[dict]:
    """``items`` as the release's rows: two a story (the right ending on the lower uttid), one a statement."""
    rows = []
    for number, item in enumerate(items):
        if name == "zh-sStoryCloze":
            wrong = item.candidates[1 - item.right]
            rows += [{"uttid": f"{2 * number}_zh{number}", "first": item.context, "last": item.candidates[item.right]},
                     {"uttid": f"{2 * number + 1}_zh{number}", "first": item.context, "last": wrong}]
        else:
            rows.append({"uttid": f"{number}_q{number}", "first": f"第{number + 1}题。{item.context}",
                         **dict(zip("ABCD", item.candidates)), "answer": "ABCD"[item.right]})
    return rows


def write_release(root: Path, data: Path | None) -> None:
    for name, (task_name, file) in RELEASE_TASKS.items():
        seed_set = BY_NAME[name]
        if name == "sCMMLU":  # 294 dev stems are kept by the rules: repeat them, numbered, to the set's size
            kept = seed_items(seed_set, load_task("scmmlu"), 250, data)
            items = [kept[number % len(kept)] for number in range(seed_set.full_items)]
        else:
            items = seed_items(seed_set, load_task("zh-sstorycloze"), seed_set.full_items, data)
        path = root / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in release_rows(name, items)),
                        encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "whole-set-plans")
    args = parser.parse_args()
    release = args.out / "release"
    write_release(release, args.data)
    env = dict(os.environ, S2SBENCH_RELEASE=str(release))
    for name, (task_name, _) in RELEASE_TASKS.items():
        command = [sys.executable, "-m", "s2sbench.flows.cli", "build", task_name, "--out", str(args.out / task_name),
                   "--store", str(args.out / "store"), "--runner", "dask", "--workers", str(args.workers), "--dry-run"]
        print(f"## {name}: {' '.join(command[2:])}", flush=True)
        subprocess.run(command, env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
