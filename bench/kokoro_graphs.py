"""Kokoro-82M's int8 graph as the engine runs it on a CPU with an int8 dot product (each ConvInteger as im2col and
MatMulInteger) against the graph as shipped, on a build's own clips: CPU per second of audio, and whether every sample
is the same.

    python bench/kokoro_graphs.py BUILD [--task jcommonsenseqa] [--clips 40] [--write-readme]

The kept clips of a random sample of the build's Kokoro rows (finished shards; a build in progress will do), each
synthesized again from its text, voice and seed, both ways in this one process on one thread, the two graphs taking
turns at going first. CPU is this process's time for the clip. ``--write-readme`` puts the table in bench/README.md
between the ``kokoro-graphs`` markers.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import README, show  # noqa: E402

from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402
from s2sbench.pipeline.catalog.voices import get_voice  # noqa: E402
from s2sbench.pipeline.speech.tts import kokoro  # noqa: E402
from s2sbench.pipeline.speech.tts.int8_conv import has_int8_dot_product  # noqa: E402


def sampled_clips(build: BuildDir, task: str, count: int, seed: int = 11) -> list[tuple[str, str, int]]:
    """(voice id, text, seed) of the kept clips of ``count`` random Kokoro rows."""
    rows = [row for shard in build.finished_shards(task) for row in shard.read_rows()
            if get_voice(row.voice).engine == "kokoro"]
    if not rows:
        raise SystemExit(f"{build.root}: no finished shard of {task} with Kokoro rows")
    return [(row.voice, clip.text, clip.seed) for row in random.Random(seed).sample(rows, min(count, len(rows)))
            for clip in row.clips.values()]


def run(build_dir: Path, task: str, count: int) -> str:
    if not has_int8_dot_product():
        raise SystemExit("this CPU has no int8 dot product (VNNI, AMX): the engine runs the graph as shipped here")
    import onnxruntime
    from kokoro_onnx import Kokoro

    files = kokoro._package_files()
    model = kokoro.joined_model(files.model_sha256)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
    graphs = {"shipped": model, "rewritten": kokoro._graph(model, files.model_sha256, ["CPUExecutionProvider"])}
    synthesizers = {name: Kokoro.from_session(onnxruntime.InferenceSession(str(graph), options,
                                                                           providers=["CPUExecutionProvider"]),
                                              str(files.voices)) for name, graph in graphs.items()}
    per_voice: dict[str, dict] = defaultdict(lambda: {"clips": 0, "same": 0, "audio_s": 0.0,
                                                      "shipped": 0.0, "rewritten": 0.0})
    for index, (voice_id, text, seed) in enumerate(sampled_clips(BuildDir(build_dir), task, count)):
        said, options = kokoro.kokoro_request(text, get_voice(voice_id), seed)  # read once, outside the timing
        samples = {}
        for name in (("shipped", "rewritten") if index % 2 == 0 else ("rewritten", "shipped")):
            start = time.process_time()
            audio, rate = synthesizers[name].create(said, **options)
            per_voice[voice_id][name] += time.process_time() - start
            samples[name] = audio
        entry = per_voice[voice_id]
        entry["clips"] += 1
        entry["audio_s"] += samples["shipped"].size / rate
        entry["same"] += bool(samples["shipped"].shape == samples["rewritten"].shape
                              and (samples["shipped"] == samples["rewritten"]).all())
    lines = [f"The kept clips of {count} random rows of `{build_dir.name}` ({task}), synthesized again both ways in "
             "one process on one thread; CPU is that process's, per second of audio.", "",
             "| voice | clips | audio s per clip | same samples | CPU s per audio s, as shipped | rewritten "
             "| rewritten / shipped |", "|---|---|---|---|---|---|---|"]
    for voice_id, entry in sorted(per_voice.items()):
        shipped, rewritten = entry["shipped"] / entry["audio_s"], entry["rewritten"] / entry["audio_s"]
        lines.append(f"| {voice_id} | {entry['clips']} | {entry['audio_s'] / entry['clips']:.1f} | "
                     f"{entry['same']}/{entry['clips']} | {shipped:.3f} | {rewritten:.3f} | "
                     f"**{rewritten / shipped:.2f}** |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=Path)
    parser.add_argument("--task", default="jcommonsenseqa")
    parser.add_argument("--clips", type=int, default=40, help="rows sampled (each gives its kept clips)")
    parser.add_argument("--write-readme", action="store_true", help=f"write the table into {README}")
    args = parser.parse_args()
    return show(run(args.build, args.task, args.clips), "kokoro-graphs", README, args.write_readme)


if __name__ == "__main__":
    sys.exit(main())
