"""Where the gate's reference margin comes from: on a finished build, how far the judge finds each attempt's reference
below its own transcript, against the same clips scored with a reference the voice did not say.

    python bench/reference_margin.py BUILD [--store STORE] [--limit N] [--write-docs]

A build in progress (or stopped) is read from its finished shards, with its tasks' gates as the build recorded them
when it started and the clip store given by ``--store`` (``retry_replay.read_build``).

For every attempt in the build's audit whose transcript was scored, the judge (the build's gate ASR, made to read a
text: ``ASREngine.score_texts``) gives log P(reference) - log P(transcript) in nats. The control is the same clip
scored with its reference two characters (two words, for a spaced language) changed to two of another item's
reference, seeded: what a voice that said something else would score. Texts are scored as the gate scores them: the
normalized reference and transcript, or for Japanese (normalized into kana readings the judge never writes) the text
as written and the raw transcript. A margin of M nats keeps a misheard clip when
its margin is at least -M; the table gives, per M, the share of controls it would keep (the risk) and the share of
attempts that failed on their transcript it would keep (the rows it can save). ``--write-docs`` puts the table in
docs/verification.md.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import show  # noqa: E402

from retry_replay import read_build  # noqa: E402

from s2sbench.pipeline.gate.asr import get_asr  # noqa: E402
from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402
from s2sbench.pipeline.gate.verify import written_form  # noqa: E402
from s2sbench.pipeline.text.languages import base_language, is_unspaced  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "verification.md"
SECTION = "reference-margin"
MARGINS = (5, 8, 10, 12, 15, 20)


def changed(reference: str, others: list[str], unspaced: bool, rng: random.Random) -> str:
    """``reference`` with two units (characters, or words) replaced by two consecutive units of another reference."""
    split = list if unspaced else str.split
    joiner = "" if unspaced else " "
    units = split(reference)
    source = split(rng.choice([other for other in others if other != reference] or others))
    at, take = rng.randrange(max(1, len(units) - 1)), rng.randrange(max(1, len(source) - 1))
    return joiner.join(units[:at] + source[take : take + 2] + units[at + 2 :])


def text_of(item, role: str) -> str:
    """The text a clip of ``role`` says, as written (``context`` or ``candidate:K``)."""
    return item.context if role == "context" else item.candidates[int(str(role).split(":")[1])]


def margin_texts(check, item) -> tuple[str, str]:
    """(reference, transcript) as the gate's margin scores them (:meth:`Verifier.with_margin`)."""
    if check.metric == "ker":  # an audit made before ``written`` was recorded has the item's text
        return written_form(check.written or text_of(item, check.role)), written_form(check.transcript)
    return check.reference, check.hypothesis


def measure(build_dir: Path, store: Path | None, limit: int | None, seed: int = 0) -> tuple[str, list[tuple[float, float, bool, str]]]:
    build = BuildDir(build_dir)
    recorded = read_build(build, store)
    checks = [check for check in recorded.checks if check.error_rate is not None and check.clip_key][:limit]
    items = build.read_all_items()
    references = sorted({margin_texts(check, items[check.item_id])[0] for check in checks})
    rng = random.Random(seed)
    asr_cache: dict[str, object] = {}  # the gate's ASR, by the model id the audit names
    rows = []
    for check in checks:
        item = items[check.item_id]
        if check.asr_model not in asr_cache:
            gate = recorded.task_config(item.task).gate
            asr_cache[check.asr_model] = get_asr(gate.asr.engine, gate.asr.model, **gate.asr.options)
        asr = asr_cache[check.asr_model]
        language = item.language
        entry = recorded.store.lookup(check.clip_key)
        if entry is None:
            continue
        audio = recorded.store.load(entry.path)
        reference, transcript = margin_texts(check, item)
        control = changed(reference, references, is_unspaced(base_language(language)), rng)
        scores = asr.score_texts(audio, [reference, transcript, control], language)
        if scores is None:
            continue
        rows.append((scores[0] - scores[1], scores[2] - scores[1], check.status == "rejected", f"{item.id}@{check.voice}"))
    misheard = [row for row in rows if row[2]]
    lines = [f"Build `{build_dir}`: {len(rows)} scored attempts, {len(misheard)} of them failed on their transcript. "
             f"Judge: {', '.join(sorted(asr_cache))}. Command: `python bench/reference_margin.py {build_dir}`.", "",
             "| margin (nats) | controls kept (a reference two units off) | failed attempts kept | their rows |",
             "|---|---|---|---|"]
    for margin in MARGINS:
        controls = sum(row[1] >= -margin for row in rows) / len(rows) if rows else 0.0
        saved = sum(row[0] >= -margin for row in misheard) / len(misheard) if misheard else 0.0
        saved_rows = len({row[3] for row in misheard if row[0] >= -margin})
        lines.append(f"| {margin} | {100 * controls:.1f}% | {100 * saved:.1f}% | {saved_rows} of "
                     f"{len({row[3] for row in misheard})} |")
    return "\n".join(lines), rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--store", type=Path, help="the clip store the build used (default: the build report's)")
    parser.add_argument("--limit", type=int, help="score only the first N attempts of the audit")
    parser.add_argument("--write-docs", action="store_true", help=f"write the table into {DOCS}")
    args = parser.parse_args()
    table, _ = measure(args.build_dir, args.store, args.limit)
    return show(table, SECTION, DOCS, args.write_docs)


if __name__ == "__main__":
    sys.exit(main())
