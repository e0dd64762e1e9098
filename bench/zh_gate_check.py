"""The Mandarin gate's two figures on a finished build, per subject: how many question x voice rows it kept, and how
many of the kept clips an independent judge hears at SER <= 0.15.

    python bench/zh_gate_check.py BUILD [--store STORE] [--threshold 0.15] [--write-docs]

The independent judge is the project's Whisper base run again on the stored clips, one clip per call, language zh,
beam 5 (the shipped zh gates decode with beam 5 too, several clips at a time), scored with the gate's normalization (numbers
and Latin letters read out in both texts) and SER. It is run two ways: through the project's decoding
(``s2sbench verify BUILD --model base --beam-size 5 --batch-size 1``, whose audit lands in
``BUILD/reverify/<model>``), and through faster-whisper's own ``transcribe`` with its defaults (timestamps, temperature
fallback), as a user checking the clips by hand would. ``--write-docs`` puts the table in docs/verification.md.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import show  # noqa: E402

from s2sbench.pipeline.gate.asr import get_asr  # noqa: E402
from s2sbench.pipeline.speech.audio import ClipStore  # noqa: E402
from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402
from s2sbench.pipeline.core.manifest import read_records  # noqa: E402
from s2sbench.pipeline.core.records import ClipCheck  # noqa: E402
from s2sbench.pipeline.run.reverify import ClipAudio, reverify_build  # noqa: E402
from s2sbench.pipeline.gate.verify import final_checks, normalize, score_normalized  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "verification.md"
SECTION = "zh-gate-check"
BEAM = 5


def subject_of(item) -> str:  # as the build report groups them
    return str(item.meta.get("subject", item.task))


def library_transcripts(build: BuildDir, store: ClipStore, clips) -> dict[str, str]:
    """faster-whisper's own ``transcribe`` (beam 5, its defaults otherwise) of each clip, one call per clip."""
    asr = get_asr("faster-whisper", "base")  # the loaded model; its library call below decodes its own way
    audio = ClipAudio(store, build)
    transcripts = {}
    for clip in clips:
        segments, _ = asr.model.transcribe(audio.load(clip), language="zh", beam_size=BEAM)
        transcripts[clip.key] = "".join(segment.text for segment in segments)
    return transcripts


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "-"


def check(build_dir: Path, store: Path | None, threshold: float) -> str:
    build = BuildDir(build_dir)
    report = build.read_report()
    items = build.read_all_items()
    voices = {task: entry.voices for task, entry in report.tasks.items()}
    rows_in, kept_rows = Counter(), Counter()
    for entry in report.tasks.values():
        for subject, loss in entry.by_subject.items():
            rows_in[subject] += loss.rows_in
            kept_rows[subject] += loss.kept
    clips = build.read_clips()
    store_root = store if store is not None else Path(report.clip_store)

    asr = get_asr("faster-whisper", "base", beam_size=BEAM, batch_size=1, cpu_threads=2)
    audit = reverify_build(build, asr, clip_store=store_root)
    project = {check.clip_key: check.error_rate
               for check in read_records(Path(audit.audit_dir) / "verification.jsonl", ClipCheck)}
    library = library_transcripts(build, ClipStore(store_root), clips)
    heard = Counter()
    heard_library = Counter()
    for clip in clips:
        subject = subject_of(items[clip.item_id])
        heard[subject] += (project.get(clip.key) if project.get(clip.key) is not None else 1.0) <= threshold
        score = score_normalized(normalize(clip.text, "zh"), normalize(library[clip.key], "zh"), "ser")
        heard_library[subject] += score.rate <= threshold
    clip_count = Counter(subject_of(items[clip.item_id]) for clip in clips)
    on_reference = Counter(subject_of(items[check.item_id]) for check in final_checks(build.read_verification())
                           if check.kept_on_reference)

    lines = [
        f"Build `{build_dir}` ({', '.join(sorted(voices))}; voices: "
        f"{', '.join(sorted({voice for names in voices.values() for voice in names}))}). Command: "
        f"`python bench/zh_gate_check.py {build_dir}`. Independent judge: {asr.model_id}, one clip per call; "
        f"\"library\": faster-whisper's `transcribe(beam_size={BEAM}, language='zh')`. SER threshold {threshold:g}.",
        "",
        "| subject | rows kept by the gate | of them, clips kept on the reference | kept clips heard at SER <= "
        f"{threshold:g} (project, beam {BEAM}) | same (library) |",
        "|---|---|---|---|---|",
    ]
    for subject in sorted(rows_in):
        lines.append(f"| {subject} | {percent(kept_rows[subject], rows_in[subject])} | {on_reference[subject]} | "
                     f"{percent(heard[subject], clip_count[subject])} | {percent(heard_library[subject], clip_count[subject])} |")
    lines.append(f"| **all** | **{percent(sum(kept_rows.values()), sum(rows_in.values()))}** | **{sum(on_reference.values())}** | "
                 f"**{percent(sum(heard.values()), len(clips))}** | **{percent(sum(heard_library.values()), len(clips))}** |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--store", type=Path, help="the clip store the build used (default: the build report's)")
    parser.add_argument("--threshold", type=float, default=0.15)
    parser.add_argument("--write-docs", action="store_true", help=f"write the table into {DOCS}")
    args = parser.parse_args()
    table = check(args.build_dir, args.store, args.threshold)
    return show(table, SECTION, DOCS, args.write_docs)


if __name__ == "__main__":
    sys.exit(main())
