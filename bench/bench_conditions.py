"""Benchmark: what deriving an acoustic condition costs, as a share of synthesizing the same clips.

On the English demo stories' context clips, in this one run against a fresh clip store:

  synthesis    Piper joe speaks every context                      -> CPU seconds (the baseline)
  condition    each condition type derives every one of those clips -> CPU seconds, and its share of synthesis
               (the first call of a type, which imports its library and builds its filters or room, is timed apart)

Both are this process's CPU time (user + system): the machine's load moves both alike. The gate's ASR on the
derived clips is not part of the derivation (it costs what the gate costs per clip: bench/README.md's cost table).

Usage:  python bench/bench_conditions.py [--limit N] [--json out.json]   (`make bench` writes bench/README.md's section)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.speech.conditions import ConditionMaker
from s2sbench.pipeline.items.load import load_items
from s2sbench.pipeline.core.records import Role
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.catalog.voices import get_voice

TASK = "demo-stories-en"
VOICE = "piper-en-joe"
CONDITIONS = [
    {"name": "babble5", "type": "noise", "snr_db": 5, "noise": "babble"},
    {"name": "pink10", "type": "noise", "snr_db": 10, "noise": "pink"},
    {"name": "room", "type": "reverb", "rt60_s": 0.6},
    {"name": "phone", "type": "telephone"},
    {"name": "fast", "type": "rate", "factor": 1.25},
    {"name": "loud", "type": "gain", "db": 6},
]


def cpu_s() -> float:
    return time.process_time()


def run(limit: int | None) -> dict:
    task = TaskConfig.model_validate({**load_task(TASK).model_dump(exclude={"path"}), "conditions": CONDITIONS})
    items = load_items(task, limit=limit)
    with tempfile.TemporaryDirectory() as folder:
        store = ClipStore(Path(folder))
        synthesizer, voice = Synthesizer(store), get_voice(VOICE)
        synthesizer.make_clip("warm-up", Role.context(), "A first clip loads the voice.", voice, 0)
        started = cpu_s()
        clips = [synthesizer.make_clip(item.id, Role.context(), item.context, voice, 0) for item in items]
        synthesis = cpu_s() - started
        audio_s = sum(clip.duration_s for clip in clips)
        maker = ConditionMaker(task, store, [clip.audio_sha256 for clip in clips])
        conditions = {}
        for condition in task.conditions:
            started = cpu_s()
            maker.derive(clips[0], condition)  # imports, filters, the room's impulse response
            first = cpu_s() - started
            started = cpu_s()
            for clip in clips[1:]:
                maker.derive(clip, condition)
            spent = cpu_s() - started
            per_clip = spent / max(1, len(clips) - 1)
            conditions[condition.name] = {"type": condition.type, "first_call_cpu_s": round(first, 3),
                                          "cpu_s_per_clip": round(per_clip, 4),
                                          "share_of_synthesis": round(per_clip / (synthesis / len(clips)), 4)}  # fmt: skip
    return {"clips": len(clips), "audio_s": round(audio_s, 1), "voice": VOICE,
            "synthesis_cpu_s_per_clip": round(synthesis / len(clips), 4), "conditions": conditions}  # fmt: skip


def readme_section(result: dict) -> str:
    lines = [f"{result['clips']} context clips of the English demo stories "
             f"({result['audio_s']} s of audio), synthesized by {result['voice']} at "
             f"{result['synthesis_cpu_s_per_clip']:.3f} CPU s per clip, then derived under each condition (CPU time "
             "of this process, so the machine's load moves both alike; goal: under 5% of synthesis).", "",
             "| condition | type | CPU s per clip | share of synthesis | first call (imports, filters, room) |",
             "|---|---|---|---|---|"]  # fmt: skip
    for name, entry in result["conditions"].items():
        lines.append(f"| {name} | {entry['type']} | {entry['cpu_s_per_clip']:.4f} | {entry['share_of_synthesis']:.1%} "
                     f"| {entry['first_call_cpu_s']:.2f} s |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.limit)
    print(json.dumps(result, indent=1))
    print(readme_section(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
