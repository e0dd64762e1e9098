"""The Mandarin gate's figures on a build, per subject: how many question x voice rows it kept, how many of those on
the reference, and how many of a random sample of the kept clips an independent judge hears at SER <= 0.15.

    python bench/zh_gate_check.py BUILD [--store STORE] [--sample 300] [--per-subject 20] [--threshold 0.15] [--seed 0]
                                        [--write-docs]

The independent judge is Whisper base (faster-whisper, int8) run again on the stored clips, one clip per call,
language zh, beam 5, scored with the gate's normalization (numbers and Latin letters read out in both texts) and SER,
two ways: through the project's decoding of the full 30-s window (no timestamps, no fallback: what
``s2sbench verify BUILD --model base --beam-size 5 --batch-size 1`` does), and through faster-whisper's own
``transcribe`` with its defaults (timestamps, temperature fallback), as a user checking the clips by hand would. A
third column is the gate's own verdict on the same clips (its decoding as built, e.g. a cut window): a clip kept on
the reference is one the gate itself did not hear. A clip counts as heard when its SER is at most the threshold.

A random sample of 300 holds 4 or 5 clips of each of sCMMLU's 67 subjects: too few for a subject's line to say
anything. ``--per-subject N`` tops each subject up to N clips, drawn at random from its kept clips; the subject
lines count them, the **all** line and its intervals only the random sample (the top-ups are not a random sample of
the set). Lines under 90% (the gate) or 85% (transcribe) are listed with their 95% intervals.

A build still in progress is checked on its finished shards (the rows its report does not have yet are counted from
the shards' checks). ``--write-docs`` puts the table in docs/verification.md.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import show  # noqa: E402

from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402
from s2sbench.pipeline.core.records import ClipCheck  # noqa: E402
from s2sbench.pipeline.gate.asr import get_asr  # noqa: E402
from s2sbench.pipeline.gate.attempts import KEPT_STATUSES  # noqa: E402
from s2sbench.pipeline.gate.verify import final_checks, normalize, score_normalized  # noqa: E402
from s2sbench.pipeline.speech.audio import ClipStore  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "verification.md"
SECTION = "zh-gate-check"
BEAM = 5
LINES = (("gate", "the gate", 0.90), ("library", "transcribe", 0.85))  # the lines, per subject too


def subject_of(item) -> str:  # as the build report groups them
    return str(item.meta.get("subject", item.task))


def final_build_checks(build: BuildDir) -> tuple[list[ClipCheck], bool]:
    """The last check of every (item, voice, role) and whether the build is finished; for a build in progress, those
    of its finished shards."""
    if build.verification_path.is_file():
        return final_checks(build.read_verification()), True
    checks = [check for shard in build.finished_shards() for check in shard.read_checks()]
    if not checks:
        raise SystemExit(f"{build.root}: neither a finished build nor a finished shard")
    return final_checks(checks), False


def rows_by_subject(build: BuildDir, finished: bool, subject: dict[str, str]) -> tuple[Counter, Counter]:
    """Question x voice rows that reached the voices, and those kept, per subject: from the build report, or from
    the finished shards' rows and drops."""
    tried, kept = Counter(), Counter()
    if finished:
        for entry in build.read_report().tasks.values():
            for name, loss in entry.by_subject.items():
                tried[name] += loss.rows_in
                kept[name] += loss.kept
        return tried, kept
    for shard in build.finished_shards():
        for row in shard.read_rows():
            tried[subject[row.item.id]] += 1
            kept[subject[row.item.id]] += 1
        for drop in shard.read_drops():
            tried[subject[drop.item_id]] += 1
    return tried, kept


def library_transcript(asr, audio) -> str:
    """faster-whisper's own ``transcribe`` of one clip (beam 5, its defaults otherwise), through ``asr``'s model."""
    segments, _ = asr.model.transcribe(audio, language="zh", beam_size=BEAM)
    return "".join(segment.text for segment in segments)


def heard_by_each(sample: list[ClipCheck], store: ClipStore, threshold: float) -> dict[str, list[bool]]:
    """For each decoding, whether it hears each sampled clip (SER against the gate's own reading of the text)."""
    project = get_asr("faster-whisper", "base", beam_size=BEAM, batch_size=1, num_workers=1)
    heard: dict[str, list[bool]] = {"gate": [], "project": [], "library": []}
    for check in sample:
        audio = store.load(store.lookup(check.clip_key).path, check.clip_key)
        transcripts = {"project": project.transcribe([audio], "zh")[0], "library": library_transcript(project, audio)}
        heard["gate"].append(check.error_rate is not None and check.error_rate <= threshold)
        for name, text in transcripts.items():
            heard[name].append(score_normalized(check.reference, normalize(text, "zh"), "ser").rate <= threshold)
    return heard


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "-"


def wilson(part: int, whole: int, z: float = 1.96) -> str:
    """The 95% Wilson interval of a share, in percent."""
    if not whole:
        return "-"
    share = part / whole
    centre = (share + z * z / (2 * whole)) / (1 + z * z / whole)
    half = z * math.sqrt(share * (1 - share) / whole + z * z / (4 * whole * whole)) / (1 + z * z / whole)
    return f"[{100 * (centre - half):.1f}, {100 * (centre + half):.1f}]"


def top_up(sample: list[ClipCheck], kept_clips: list[ClipCheck], subject: dict[str, str], per_subject: int,
           seed: int) -> list[ClipCheck]:
    """Kept clips beyond ``sample``, at random, so that each subject has ``per_subject`` (or all it has)."""
    chosen = {check.id for check in sample}
    have = Counter(subject[check.item_id] for check in sample)
    pools: dict[str, list[ClipCheck]] = {}
    for check in kept_clips:
        if check.id not in chosen:
            pools.setdefault(subject[check.item_id], []).append(check)
    rng = random.Random(seed + 1)
    extra: list[ClipCheck] = []
    for name in sorted(pools):
        wanted = per_subject - have[name]
        if wanted > 0:
            extra += rng.sample(pools[name], min(wanted, len(pools[name])))
    return extra


def check(build_dir: Path, store_dir: Path | None, sample_size: int, threshold: float, seed: int,
          per_subject: int = 0) -> str:  # fmt: skip
    build = BuildDir(build_dir)
    items = build.read_all_items()
    subject = {item_id: subject_of(item) for item_id, item in items.items()}
    checks, finished = final_build_checks(build)
    tried, kept = rows_by_subject(build, finished, subject)
    on_reference = Counter(subject[check.item_id] for check in checks if check.kept_on_reference)
    kept_clips = [check for check in checks if check.status in KEPT_STATUSES and check.clip_key]
    sample = random.Random(seed).sample(kept_clips, min(sample_size, len(kept_clips)))
    heard_clips = sample + top_up(sample, kept_clips, subject, per_subject, seed)
    if store_dir is None:
        store_dir = Path(build.read_report().clip_store) if build.report_path.is_file() else None
    heard = heard_by_each(heard_clips, ClipStore(store_dir), threshold)
    sampled = Counter(subject[check.item_id] for check in heard_clips)

    def picked(name: str, name_subject: str | None = None) -> list[bool]:
        """The subject's clips (random and topped up), or the random sample's for the whole."""
        clips = zip(heard_clips, heard[name]) if name_subject else zip(sample, heard[name])
        return [ok for check, ok in clips if name_subject in (None, subject[check.item_id])]

    def heard_in(name: str, name_subject: str | None = None) -> str:
        shares = picked(name, name_subject)
        return percent(sum(shares), len(shares))

    asr_models = sorted({check.asr_model for check in sample})
    topped = f", each subject topped up to {per_subject} clips ({len(heard_clips) - len(sample)} more)" if per_subject else ""
    command = f"python bench/zh_gate_check.py {build_dir} --sample {sample_size}" + (
        f" --per-subject {per_subject}" if per_subject else "")
    lines = [
        f"Build `{build_dir}`{'' if finished else ' (in progress: its finished shards)'}: {sum(tried.values())} "
        f"rows, {len(kept_clips)} kept clips, a random sample of {len(sample)} (seed {seed}) heard again by Whisper base "
        f"int8, one clip per call, beam {BEAM}{topped}. Command: `{command}`. Columns: the gate's own verdict "
        f"({', '.join(asr_models)}); the project's decoding of the full 30-s window; faster-whisper's `transcribe` "
        f"with its defaults. SER threshold {threshold:g}.",
        "",
        "| subject | rows kept | of them on the reference | sampled clips | heard: the gate | heard: 30-s window "
        "| heard: transcribe |",
        "|---|---|---|---|---|---|---|",
    ]
    for name_subject in sorted(tried):
        lines.append(f"| {name_subject} | {percent(kept[name_subject], tried[name_subject])} | "
                     f"{on_reference[name_subject]} | {sampled[name_subject]} | {heard_in('gate', name_subject)} | "
                     f"{heard_in('project', name_subject)} | {heard_in('library', name_subject)} |")
    n = len(sample)
    lines.append(f"| **all** (the random sample) | **{percent(sum(kept.values()), sum(tried.values()))}** | **{sum(on_reference.values())}** "
                 f"| **{n}** | **{heard_in('gate')}** | **{heard_in('project')}** | **{heard_in('library')}** |")
    lines += ["", "95% intervals (Wilson) of the sample's shares: "
              + "; ".join(f"{label} {wilson(sum(picked(name)), n)}" for name, label in
                          (("gate", "the gate"), ("project", "30-s window"), ("library", "transcribe")))]
    under = [f"{name_subject} ({label} {percent(sum(shares), len(shares))}, {wilson(sum(shares), len(shares))})"
             for name_subject in sorted(tried) for name, label, line in LINES
             if (shares := picked(name, name_subject)) and sum(shares) < line * len(shares)]  # fmt: skip
    lines += ["", "Subject lines under 90% (the gate) or 85% (transcribe), with their 95% intervals: "
              + ("; ".join(under) if under else "none")]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--store", type=Path, help="the clip store the build used (default: the build report's)")
    parser.add_argument("--sample", type=int, default=300, help="kept clips heard again (default 300)")
    parser.add_argument("--per-subject", type=int, default=0,
                        help="top each subject up to this many clips for its own line (default 0: the sample only)")
    parser.add_argument("--threshold", type=float, default=0.15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-docs", action="store_true", help=f"write the table into {DOCS}")
    args = parser.parse_args()
    table = check(args.build_dir, args.store, args.sample, args.threshold, args.seed, args.per_subject)
    return show(table, SECTION, DOCS, args.write_docs)


if __name__ == "__main__":
    sys.exit(main())
