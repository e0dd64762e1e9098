"""Benchmark: how well an ASR gate understands each voice, on the texts a task speaks.

For every voice (and, with ``--speaker``, every speaker of it), the task's texts are synthesized through the real
synthesis stage (normalization, post-processing, clip store) and checked by the task's gate (or ``--engine`` /
``--model``), first attempt only; the clips that fail are synthesized again with seed 1 (what the build's retry
does) to count how many a retry rescues. Printed per voice: clips, mean / median / p90 error rate, the share at or
under the gate's threshold, clips rescued by the retry, and the engine's real-time factor as a ratio to the first
voice's, measured in the same run (only for clips synthesized in this run: with ``--store``, cached clips have none).

Usage:
  python bench/bench_voice_wer.py --task demo-stories-en --voice piper-en-joe --voice kokoro-en-gongitsune
  python bench/bench_voice_wer.py --task xstorycloze-es --source-path bench/data/xstorycloze_es_sample.tsv \\
      --roles context,candidates --voice kokoro-es-gongitsune --speaker jf_gongitsune --speaker jm_kumo
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

import numpy as np

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.core.records import ClipCheck, Item
from s2sbench.pipeline.items.load import load_items
from s2sbench.pipeline.items.task_config import override_source
from s2sbench.pipeline.items.load import texts_to_speak
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.speech.tts.base import Voice
from s2sbench.pipeline.catalog.voices import get_voice
from s2sbench.pipeline.gate.verify import Verifier


def voices_to_measure(voice_ids: list[str], speakers: list[str]) -> list[Voice]:
    voices = []
    for voice_id in voice_ids:
        voice = get_voice(voice_id)
        for speaker in speakers or [voice.speaker]:
            name = voice.id if speaker == voice.speaker else f"{voice.id}@{speaker}"
            voices.append(voice.model_copy(update={"id": name, "speaker": speaker}))
    return voices


def check(synthesizer: Synthesizer, verifier: Verifier, item: Item, texts: dict[str, str], voice: Voice, seed: int):
    clips = [synthesizer.make_clip(item.id, role, text, voice, seed) for role, text in texts.items()]
    audios = [synthesizer.store.load(clip.path) for clip in clips]
    return verifier.check_batch(clips, audios, attempt=seed + 1)


def measure(task: TaskConfig, items: list[Item], voice: Voice, verifier: Verifier, store: ClipStore) -> dict:
    synthesizer = Synthesizer(store)
    first: list[ClipCheck] = []
    rescued = 0
    for item in items:
        texts = texts_to_speak(item, task)
        checks = check(synthesizer, verifier, item, texts, voice, seed=0)
        first += checks
        failed = {check.role: texts[check.role] for check in checks if not check.passed}
        if failed:
            rescued += sum(retry.passed for retry in check(synthesizer, verifier, item, failed, voice, seed=1))
    rates = [check.error_rate if check.error_rate is not None else 1.0 for check in first]
    stats = synthesizer.stats.get(voice.engine)  # none when every clip came from the --store cache
    return {
        "voice": voice.id, "clips": len(first), "mean": statistics.fmean(rates), "median": statistics.median(rates),
        "p90": float(np.percentile(rates, 90)), "passed_first": sum(check.passed for check in first),
        "rescued_by_retry": rescued, "rtf": stats.real_time_factor if stats else None,
        "failures": [f"{c.item_id} {c.role}: {c.reason} | heard {c.transcript!r}" for c in first if not c.passed],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True)
    parser.add_argument("--source-path", help="replaces the task's source.path")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--roles", help="context,candidates (default: what the task speaks)")
    parser.add_argument("--voice", action="append", required=True)
    parser.add_argument("--speaker", action="append", default=[], help="measure each voice with these speakers")
    parser.add_argument("--engine", help="ASR engine (default: the task's gate)")
    parser.add_argument("--model", help="ASR model (default: the task's gate)")
    parser.add_argument("--store", help="clip store (default: a fresh temporary one)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    task = override_source(load_task(args.task), path=args.source_path)
    if args.roles:
        task = task.model_copy(update={"speak": args.roles.split(",")})
    items = load_items(task, limit=args.limit)
    asr = get_asr(args.engine or task.gate.asr.engine, args.model or task.gate.asr.model, **task.gate.asr.options)
    verifier = Verifier(asr, task.gate, task.language)
    with tempfile.TemporaryDirectory(prefix="bench-voice-wer-") as scratch:
        store = ClipStore(Path(args.store or scratch))
        results = [measure(task, items, voice, verifier, store) for voice in voices_to_measure(args.voice, args.speaker)]
    print(f"{task.name}: {len(items)} items, roles {','.join(task.speak)}, gate {verifier.asr_model} "
          f"{verifier.metric} <= {task.gate.max_error_rate}")
    print("| voice | clips | mean | median | p90 | pass first try | rescued by retry | RTF vs first voice |")
    print("|---|---|---|---|---|---|---|---|")
    baseline = results[0]["rtf"]
    for r in results:
        speed = f"{r['rtf'] / baseline:.2f}x" if r["rtf"] and baseline else "cached"
        print(f"| {r['voice']} | {r['clips']} | {r['mean']:.3f} | {r['median']:.3f} | {r['p90']:.3f} | "
              f"{r['passed_first']}/{r['clips']} | {r['rescued_by_retry']} | {speed} |")
    for r in results:
        for failure in r["failures"]:
            print(f"  {r['voice']}: {failure}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
