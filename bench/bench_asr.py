"""Benchmark: batched versus one-clip-at-a-time Whisper transcription on the same clips and the same model.

The clips: the English demo stories (context and both candidates) spoken by Piper joe, the clips the ASR gate checks
in a build. For each engine, two instances of the same model decode the same clips, one with ``batch_size=1`` and
one with ``batch_size=B``; each runs once to warm up, then ``--repeats`` times, and the best time counts.
Printed per engine: clips, seconds of audio, throughput (seconds of audio per wall second) of each mode, the
throughput ratio batched / one-at-a-time, and whether both modes gave the same transcripts. The mean WER of the
transcripts against the texts is printed as a sanity check.

Usage:  python bench/bench_asr.py [--engines faster-whisper openai-whisper] [--model tiny.en] [--batch-size 8]
                                  [--limit 4] [--device cpu] [--repeats 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
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


def make_clips(limit: int) -> tuple[list[str], list[np.ndarray]]:
    store = ClipStore(tempfile.mkdtemp(prefix="bench-asr-"))
    synthesizer = Synthesizer(store)
    voice = get_voice("piper-en-joe")
    texts, audios = [], []
    for item in load_items(load_task("demo-stories-en"), limit=limit):
        for role, text in [(Role.context(), item.context)] + [(Role.of_candidate(k), c) for k, c in enumerate(item.candidates)]:
            clip = synthesizer.make_clip(item.id, role, text, voice, seed=0)
            texts.append(text)
            audios.append(store.load(clip.path))
    return texts, audios


def best_time(asr, audios: list[np.ndarray], repeats: int) -> tuple[float, list[str]]:
    transcripts = asr.transcribe(audios[:2], "en")  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        transcripts = asr.transcribe(audios, "en")
        times.append(time.perf_counter() - started)
    return min(times), transcripts


def bench_engine(engine: str, model: str, device: str, batch_size: int, texts, audios, repeats: int) -> dict:
    audio_s = sum(len(audio) for audio in audios) / 16000
    single_s, single = best_time(get_asr(engine, model, device=device, batch_size=1), audios, repeats)
    batched_asr = get_asr(engine, model, device=device, batch_size=batch_size)
    batched_s, batched = best_time(batched_asr, audios, repeats)
    return {
        "engine": engine,
        "model": batched_asr.model_id,
        "device": device,
        "clips": len(audios),
        "audio_s": round(audio_s, 1),
        "batch_size": batch_size,
        "one_at_a_time_s": round(single_s, 2),
        "batched_s": round(batched_s, 2),
        "one_at_a_time_audio_s_per_s": round(audio_s / single_s, 1),
        "batched_audio_s_per_s": round(audio_s / batched_s, 1),
        "throughput_ratio": round(single_s / batched_s, 2),
        "same_transcripts": single == batched,
        "mean_wer": round(float(np.mean([error_rate(t, h, "en").rate for t, h in zip(texts, batched)])), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", nargs="+", default=["faster-whisper", "openai-whisper"])
    parser.add_argument("--model", default="tiny.en")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--limit", type=int, default=4, help="demo stories to speak (3 clips each)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    texts, audios = make_clips(args.limit)
    results = [
        bench_engine(engine, args.model, args.device, args.batch_size, texts, audios, args.repeats)
        for engine in args.engines
    ]
    for result in results:
        print(
            f"{result['engine']:15s} {result['clips']} clips, {result['audio_s']} s audio: "
            f"one at a time {result['one_at_a_time_s']} s ({result['one_at_a_time_audio_s_per_s']} audio s/s), "
            f"batch {result['batch_size']} {result['batched_s']} s ({result['batched_audio_s_per_s']} audio s/s) "
            f"-> throughput x{result['throughput_ratio']}; same transcripts: {result['same_transcripts']}; "
            f"mean WER {result['mean_wer']}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
