"""The Mandarin judge's decodings side by side on a build's own attempts: CPU per clip, verdicts, and how many of each
decoding's passes the other decodings hear.

    python bench/zh_judge_window.py BUILD --store STORE [--task scmmlu] [--clips 200] [--threshold 0.15]
                                    [--decodings NAME ...] [--baseline NAME] [--write-docs]

A random half of the sampled attempts passed the build's gate and half were rejected (the hard cases are where the
decodings differ). Each clip is decoded by Whisper base (faster-whisper, int8, one thread, one clip a call) as:

- ``30 s``: the full 30-s window, beam 5, no timestamps: the sCMMLU judge before the cut (the baseline, measured in
  this run);
- ``transcribe``: faster-whisper's own ``transcribe`` with its defaults (timestamps, temperature fallback), beam 5:
  the independent check's second decoding (bench/zh_gate_check.py);
- ``cut 4 s`` / ``cut 6 s`` / ``cut 10 s``: the window cut to the clip plus 4, 6 or 10 s (``window_pad_s``), beam 5;
- ``cut 10 s greedy``: the same window, greedy.

``--decodings`` runs some of them (``transcribe`` always runs: its column is the independent check's), ``--baseline``
names the one the others are compared with (CPU ratio, same verdict, what of their passes it hears; default ``30 s``).

Scores are SER on tonal pinyin with the gate's normalization. Works on a build in progress (finished shards only).
``--write-docs`` puts the table in docs/verification.md (section ``judge-window``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import show  # noqa: E402
from zh_gate_check import BEAM, library_transcript  # noqa: E402

from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402
from s2sbench.pipeline.gate.asr import get_asr  # noqa: E402
from s2sbench.pipeline.gate.verify import normalize, score_normalized  # noqa: E402
from s2sbench.pipeline.speech.audio import ClipStore  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "verification.md"


DECODINGS = {"30 s": {"beam_size": BEAM}, "transcribe": {"beam_size": BEAM},
             "cut 4 s": {"beam_size": BEAM, "window_pad_s": 4.0}, "cut 6 s": {"beam_size": BEAM, "window_pad_s": 6.0},
             "cut 10 s": {"beam_size": BEAM, "window_pad_s": 10.0}, "cut 10 s greedy": {"window_pad_s": 10.0}}  # fmt: skip


def decoders(names: list[str]) -> dict:
    """Name -> what turns one clip into a transcript, for ``names`` (in that order) and ``transcribe``; decodings of
    the same options share one loaded model (``30 s`` and ``transcribe``)."""
    models: dict[tuple, object] = {}

    def decoder(name: str):
        options = tuple(sorted(DECODINGS[name].items()))
        if options not in models:
            models[options] = get_asr("faster-whisper", "base", batch_size=1, num_workers=1, **DECODINGS[name])
        asr = models[options]
        if name == "transcribe":
            return lambda audio: library_transcript(asr, audio)
        return lambda audio: asr.transcribe([audio], "zh")[0]

    return {name: decoder(name) for name in dict.fromkeys([*names, "transcribe"])}


def sample_attempts(build: BuildDir, task: str, count: int, seed: int = 7) -> list:
    checks = [check for shard in build.finished_shards(task) for check in shard.read_checks()
              if check.error_rate is not None and check.clip_key]
    if not checks:
        raise SystemExit(f"{build.root}: no finished shard of {task} with checked clips")
    rng = random.Random(seed)
    # a clip kept on the reference is one the judge rejected (its status says it was kept)
    passed = [check for check in checks if check.status == "passed" and not check.kept_on_reference]
    rejected = [check for check in checks if check.status == "rejected" or check.kept_on_reference]
    half = min(count // 2, len(passed), len(rejected))
    return rng.sample(passed, half) + rng.sample(rejected, half)


def run(build_dir: Path, store_dir: Path, task: str, count: int, threshold: float, names: list[str],
        baseline: str) -> str:
    build, store = BuildDir(build_dir), ClipStore(store_dir)
    attempts = sample_attempts(build, task, count)
    decode = decoders([baseline, *names])
    rates = {name: [] for name in decode}
    cpu = dict.fromkeys(decode, 0.0)
    for check in attempts:
        audio = store.load(store.lookup(check.clip_key).path, check.clip_key)
        for name, transcribe in decode.items():
            started = time.process_time()
            text = transcribe(audio)
            cpu[name] += time.process_time() - started
            rates[name].append(score_normalized(check.reference, normalize(text, "zh"), "ser").rate)
    heard = {name: [rate <= threshold for rate in values] for name, values in rates.items()}
    n = len(attempts)
    lines = [f"{n} attempts of `{build_dir.name}` ({n // 2} the gate passed, {n // 2} it rejected), SER <= {threshold}; "
             "CPU is one thread, one clip a call.", "",
             f"| decoding | CPU s per clip | vs {baseline} | passes | same verdict as {baseline} | of its passes, "
             f"{baseline} hears | of its passes, transcribe hears |", "|---|---|---|---|---|---|---|"]
    for name in decode:
        passes = [index for index in range(n) if heard[name][index]]
        same = sum(a == b for a, b in zip(heard[name], heard[baseline]))

        def share(other: str) -> str:
            return f"{sum(heard[other][index] for index in passes)}/{len(passes)}" if passes else "-"

        lines.append(f"| {name} | {cpu[name] / n:.3f} | {cpu[name] / cpu[baseline]:.2f}x | {len(passes)} "
                     f"| {same}/{n} | {share(baseline)} | {share('transcribe')} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=Path)
    parser.add_argument("--store", type=Path, required=True, help="the build's clip store")
    parser.add_argument("--task", default="scmmlu")
    parser.add_argument("--clips", type=int, default=200)
    parser.add_argument("--threshold", type=float, default=0.15)
    parser.add_argument("--decodings", nargs="+", choices=list(DECODINGS), default=list(DECODINGS),
                        help="the decodings to run (default: all)")
    parser.add_argument("--baseline", choices=list(DECODINGS), default="30 s", help="what the others are compared with")
    parser.add_argument("--write-docs", action="store_true", help=f"write the table into {DOCS}")
    args = parser.parse_args()
    table = run(args.build, args.store, args.task, args.clips, args.threshold, args.decodings, args.baseline)
    return show(table, "judge-window", DOCS, args.write_docs)


if __name__ == "__main__":
    sys.exit(main())
