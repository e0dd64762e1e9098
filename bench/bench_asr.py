"""Benchmark: batched versus one-clip-at-a-time Whisper transcription on the same clips and the same model.

The clips: the English demo stories (context and both candidates) spoken by Piper joe, the clips the ASR gate checks
in a build. For each engine, two instances of the same model decode the same clips, one with ``batch_size=1`` (one
clip at a time, the engine's defaults otherwise) and one with ``batch_size=B``; each warms up once, then the two
alternate for ``--repeats`` rounds, so both see the same machine load. Printed per engine: clips, seconds of audio,
the median wall time of each mode, the throughput ratio one-at-a-time / batched (median and per-round range), the
same ratio in CPU seconds of this process (less sensitive to other jobs on the machine), and whether both modes
gave the same transcripts. The mean WER of the transcripts against the texts is a sanity check.

Usage:  python bench/bench_asr.py [--engines faster-whisper openai-whisper] [--model tiny.en] [--batch-size 8]
                                  [--limit 4] [--device cpu] [--repeats 3] [--json out.json]
        python bench/bench_asr.py --model base --task demo-stories-zh --voice espeak-zh-pinyin   # Mandarin
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import numpy as np

from s2sbench.pipeline.asr import get_asr
from s2sbench.pipeline.audio import ClipStore
from s2sbench.pipeline.records import Role
from s2sbench.pipeline.sources import load_items
from s2sbench.pipeline.synthesize import Synthesizer
from s2sbench.pipeline.tasks import load_task
from s2sbench.pipeline.tts.voices import get_voice
from s2sbench.pipeline.verify import error_rate


def make_clips(task: str, voice_id: str, limit: int) -> tuple[list[str], list[np.ndarray]]:
    store = ClipStore(tempfile.mkdtemp(prefix="bench-asr-"))
    synthesizer = Synthesizer(store)
    voice = get_voice(voice_id)
    texts, audios = [], []
    for item in load_items(load_task(task), limit=limit):
        for role, text in [(Role.context(), item.context)] + [(Role.of_candidate(k), c) for k, c in enumerate(item.candidates)]:
            clip = synthesizer.make_clip(item.id, role, text, voice, seed=0)
            texts.append(text)
            audios.append(store.load(clip.path))
    return texts, audios


def timed(asr, audios: list[np.ndarray], language: str) -> tuple[float, float, list[str]]:
    """Wall seconds, CPU seconds of this process, transcripts."""
    wall, cpu = time.perf_counter(), time.process_time()
    transcripts = asr.transcribe(audios, language)
    return time.perf_counter() - wall, time.process_time() - cpu, transcripts


def bench_engine(engine: str, model: str, device: str, batch_size: int, texts, audios, language: str,
                 repeats: int) -> dict:
    audio_s = sum(len(audio) for audio in audios) / 16000
    single_asr = get_asr(engine, model, device=device, batch_size=1)
    batched_asr = get_asr(engine, model, device=device, batch_size=batch_size)
    for asr in (single_asr, batched_asr):
        asr.transcribe(audios[:2], language)  # warm-up
    rounds = []
    for _ in range(repeats):
        single_s, single_cpu, single = timed(single_asr, audios, language)
        batched_s, batched_cpu, batched = timed(batched_asr, audios, language)
        rounds.append({"single_s": single_s, "batched_s": batched_s, "ratio": single_s / batched_s,
                       "cpu_ratio": single_cpu / batched_cpu, "same": single == batched})
    ratios = [entry["ratio"] for entry in rounds]
    return {
        "engine": engine,
        "model": batched_asr.model_id,
        "language": language,
        "device": device,
        "clips": len(audios),
        "audio_s": round(audio_s, 1),
        "batch_size": batch_size,
        "replicas": getattr(batched_asr, "workers", 1),
        "one_at_a_time_s": round(statistics.median(entry["single_s"] for entry in rounds), 2),
        "batched_s": round(statistics.median(entry["batched_s"] for entry in rounds), 2),
        "throughput_ratio": round(statistics.median(ratios), 2),
        "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)],
        "cpu_ratio": round(statistics.median(entry["cpu_ratio"] for entry in rounds), 2),
        "same_transcripts": all(entry["same"] for entry in rounds),
        "mean_wer": round(float(np.mean([error_rate(t, h, language).rate for t, h in zip(texts, batched)])), 4),
    }


def readme_section(results: list[dict]) -> str:
    lines = ["| engine | clips (audio) | batch | one at a time | batched | throughput ratio (range) | CPU-time ratio "
             "| same transcripts |", "|---|---|---|---|---|---|---|---|"]
    for result in results:
        low, high = result["ratio_range"]
        lines.append(
            f"| {result['engine']} ({result['model']}, {result['device']}) | {result['clips']} "
            f"({result['audio_s']} s) | {result['batch_size']} on {result['replicas']} replica(s) "
            f"| {result['one_at_a_time_s']} s | {result['batched_s']} s | **{result['throughput_ratio']}x** "
            f"({low}-{high}x) | {result['cpu_ratio']}x | {'yes' if result['same_transcripts'] else 'NO'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", nargs="+", default=["faster-whisper", "openai-whisper"])
    parser.add_argument("--model", default="tiny.en", help="tiny.en (default), base (multilingual), or any name")
    parser.add_argument("--task", default="demo-stories-en", help="the task whose items are spoken (its language)")
    parser.add_argument("--voice", default="piper-en-joe", help="the voice that speaks them")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--limit", type=int, default=4, help="demo stories to speak (3 clips each)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    texts, audios = make_clips(args.task, args.voice, args.limit)
    language = load_task(args.task).language
    results = [
        bench_engine(engine, args.model, args.device, args.batch_size, texts, audios, language, args.repeats)
        for engine in args.engines
    ]
    for result in results:
        print(
            f"{result['engine']:15s} {result['clips']} clips, {result['audio_s']} s audio: one at a time "
            f"{result['one_at_a_time_s']} s, batch {result['batch_size']} on {result['replicas']} replica(s) "
            f"{result['batched_s']} s -> throughput x{result['throughput_ratio']} (rounds "
            f"{result['ratio_range'][0]}-{result['ratio_range'][1]}), CPU time x{result['cpu_ratio']}; "
            f"same transcripts: {result['same_transcripts']}; mean WER {result['mean_wer']}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
