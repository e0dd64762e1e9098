"""Benchmark: a first build of the demo synthesis config versus a cached rebuild, and engine real-time factors.

The config: the English demo stories under two voices (Piper joe, espeak-ng en-us) and the Chinese demo stories
under one (espeak-ng Mandarin via pinyin), context and every candidate spoken: the same loop the build stage runs.
Everything is measured in this one run, against a fresh clip store:

  first build     every clip synthesized            -> synthesis calls, wall time
  cached rebuild  same config, same store            -> synthesis calls (must be 0), wall time, ratio to the first
  one more voice  the config plus espeak-ng en-gb-rp -> calls (must be that voice's clips only)
  real-time factor per engine: engine seconds per second of audio it produced (lower is faster); Coqui is timed
  on a tiny random-weight VITS (the code path; a trained model is much slower)

Usage:  python bench/bench_synthesis.py [--limit N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.core.records import Clip, Role
from s2sbench.pipeline.items.load import load_items
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.speech.tts.base import Voice
from s2sbench.pipeline.speech.tts.coqui import tiny_random_vits
from s2sbench.pipeline.catalog.voices import get_voice

CONFIG = {"demo-stories-en": ["piper-en-joe", "espeak-en-us"], "demo-stories-zh": ["espeak-zh-pinyin"]}
EXTRA_VOICE = ("demo-stories-en", "espeak-en-gb-rp")
SEED = 0


def build(store: ClipStore, config: dict[str, list[str]], limit: int | None) -> tuple[Synthesizer, list[Clip], float]:
    synthesizer = Synthesizer(store)
    clips = []
    started = time.perf_counter()
    for task_name, voice_ids in config.items():
        items = load_items(load_task(task_name), limit=limit)
        for voice in (get_voice(voice_id) for voice_id in voice_ids):
            for item in items:
                texts = [(Role.context(), item.context)] + [(Role.of_candidate(k), text) for k, text in enumerate(item.candidates)]
                for role, text in texts:
                    clips.append(synthesizer.make_clip(item.id, role, text, voice, SEED))
    return synthesizer, clips, time.perf_counter() - started


def coqui_rtf(folder: Path, store: ClipStore) -> dict:
    voice = Voice(id="coqui-tiny-random", engine="coqui", language="en", model=str(tiny_random_vits(folder)))
    synthesizer = Synthesizer(store)
    for item in load_items(load_task("demo-stories-en"), limit=3):
        synthesizer.make_clip(item.id, Role.of_candidate(0), item.candidates[0], voice, SEED)
    return synthesizer.stats["coqui"]


def readme_section(result: dict) -> str:
    rtf = " / ".join(f"{value}" for value in result["real_time_factor"].values())
    first, again, more = result["first_build"], result["cached_rebuild"], result["add_one_voice"]
    return "\n".join([
        f"The demo config (English x 2 voices, Chinese x 1 voice, context and candidates, {result['clips']} clips) "
        "built into a fresh store, then rebuilt. Full table in [docs/synthesis.md](../docs/synthesis.md#benchmark).", "",
        "| measure | value |", "|---|---|",
        f"| cached rebuild: synthesis calls | **{again['synthesis_calls']}** (first build: {first['synthesis_calls']}) |",
        f"| cached rebuild / first build wall time | **{result['cached_rebuild_over_first_build_wall_time']}** "
        f"({again['wall_s']} s / {first['wall_s']} s) |",
        f"| adding one voice ({more['voice']}) | {more['synthesis_calls']} clips synthesized "
        f"(that voice's clips: {more['that_voice_clips']}) |",
        f"| real-time factor: {' / '.join(result['real_time_factor'])} | {rtf} |",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="items per task (default: all demo items)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="s2sbench-bench-") as tmp:
        store = ClipStore(Path(tmp) / "clips")
        first, clips, first_s = build(store, CONFIG, args.limit)
        again, clips_again, again_s = build(store, CONFIG, args.limit)
        extended = {**CONFIG, EXTRA_VOICE[0]: CONFIG[EXTRA_VOICE[0]] + [EXTRA_VOICE[1]]}
        more, clips_more, more_s = build(store, extended, args.limit)
        coqui = coqui_rtf(Path(tmp) / "tiny-vits", store)

    extra_clips = sum(clip.voice == EXTRA_VOICE[1] for clip in clips_more)
    by_voice: dict[str, int] = {}
    for clip in clips:
        by_voice[clip.voice] = by_voice.get(clip.voice, 0) + 1
    engines = {name: stats for name, stats in first.stats.items()} | {"coqui (tiny random VITS)": coqui}
    result = {
        "clips": len(clips),
        "clips_per_voice": by_voice,
        "first_build": {"synthesis_calls": first.calls, "wall_s": round(first_s, 2)},
        "cached_rebuild": {"synthesis_calls": again.calls, "wall_s": round(again_s, 3),
                           "identical_clips": clips_again == clips},
        "cached_rebuild_over_first_build_wall_time": round(again_s / first_s, 4),
        "add_one_voice": {"voice": EXTRA_VOICE[1], "synthesis_calls": more.calls, "that_voice_clips": extra_clips,
                          "wall_s": round(more_s, 2)},
        "real_time_factor": {name: round(stats.real_time_factor, 4) for name, stats in engines.items()},
        "engine_audio_s": {name: round(stats.audio_s, 1) for name, stats in engines.items()},
    }
    print(f"clips: {len(clips)} ({', '.join(f'{v}: {n}' for v, n in by_voice.items())})")
    print(f"first build:     {first.calls} synthesis calls, {first_s:.2f} s")
    print(f"cached rebuild:  {again.calls} synthesis calls, {again_s:.3f} s, identical clips: {clips_again == clips}")
    print(f"ratio cached rebuild / first build wall time: {again_s / first_s:.4f}")
    print(f"add {EXTRA_VOICE[1]}: {more.calls} synthesis calls for {extra_clips} clips of that voice, {more_s:.2f} s")
    for name, stats in engines.items():
        print(f"real-time factor {name}: {stats.real_time_factor:.4f} ({stats.calls} calls, {stats.audio_s:.1f} s audio)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
