"""How many CMMLU questions the offline rule rewriter turns into four statements: per subject, per rule, and on the
subjects the rules were developed on versus the others; with seeded random rewrites for a reader to judge.

    python bench/scmmlu_yield.py [--data ../shared/data/cmmlu/dev] [--samples 30] [--seed 2505] [--write-docs]

The rules were written while looking at the "develop" half of the subjects (34 of 67, drawn with
``random.Random(14)``); the "check" half shows how they do on subjects they were not written from. ``--write-docs``
replaces the yield section of docs/sources.md with what it prints. Prints Markdown.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path

from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.items.load import load_task_items
from s2sbench.pipeline.items.task_config import override_source
from s2sbench.pipeline.catalog.tasks import load_task

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "sources.md"
START, END = "<!-- scmmlu-yield:start -->", "<!-- scmmlu-yield:end -->"
SPLIT_SEED, DEVELOP_SUBJECTS = 14, 34


def develop_subjects(subjects: list[str]) -> set[str]:
    return set(random.Random(SPLIT_SEED).sample(sorted(subjects), DEVELOP_SUBJECTS))


def subject_of(item_id: str, task: str) -> str:
    return item_id.removeprefix(f"{task}-").rsplit("-", 1)[0]


def percent(kept: int, total: int) -> str:
    return f"{kept}/{total} ({100 * kept / total:.1f}%)" if total else "0/0"


def yield_report(folder: Path, samples: int, seed: int) -> str:
    task = override_source(load_task("scmmlu"), path=str(folder), split="")
    rules_only = task.candidates.model_copy(update={"options": {"rewriters": ["rules"]}})
    result = load_task_items(task.model_copy(update={"candidates": rules_only}))
    kept: dict[str, list[Item]] = {}
    for item in result.items:
        kept.setdefault(item.meta["subject"], []).append(item)
    dropped = Counter(subject_of(drop.item_id, task.name) for drop in result.drops)
    subjects = sorted(set(kept) | set(dropped))
    develop = develop_subjects(subjects)
    halves = {"all": subjects, "develop": sorted(develop), "check": sorted(set(subjects) - develop)}

    lines = [f"Offline rules only, on `{folder.name}/` of CMMLU ({len(subjects)} subjects). "
             f"Command: `python bench/scmmlu_yield.py --samples {samples} --seed {seed}`.", "",
             "| subjects | kept (four statements) |", "|---|---|"]
    for name, group in halves.items():
        n_kept = sum(len(kept.get(subject, [])) for subject in group)
        lines.append(f"| {name} ({len(group)}) | {percent(n_kept, n_kept + sum(dropped[s] for s in group))} |")

    rules = {name: Counter(item.meta["rule"] for s in group for item in kept.get(s, [])) for name, group in halves.items()}
    lines += ["", "| rule | all | develop | check |", "|---|---|---|---|"]
    for rule, count in rules["all"].most_common():
        lines.append(f"| `{rule}` | {count} | {rules['develop'][rule]} | {rules['check'][rule]} |")

    reasons = Counter(re.sub(r"'[^']*'|\([^)]*\)|\d+", "…", drop.reason.split(" (field")[0].removeprefix("rules: "))
                      for drop in result.drops)
    lines += ["", "Why the rest were refused:", "", "| reason | questions |", "|---|---|"]
    lines += [f"| {reason} | {count} |" for reason, count in reasons.most_common()]

    lines += ["", "| subject | half | kept | rules |", "|---|---|---|---|"]
    for subject in subjects:
        used = Counter(item.meta["rule"] for item in kept.get(subject, []))
        n_kept = len(kept.get(subject, []))
        lines.append(f"| {subject} | {'develop' if subject in develop else 'check'} | "
                     f"{percent(n_kept, n_kept + dropped[subject])} | "
                     f"{', '.join(f'{rule} {count}' for rule, count in used.most_common())} |")

    lines += ["", f"{samples} rewrites drawn at random (seed {seed}); the first half is spoken, the second halves are "
              "the text candidates, the right one in bold:", ""]
    for number, item in enumerate(random.Random(seed).sample(result.items, min(samples, len(result.items))), 1):
        halves_text = " / ".join(f"**{half}**" if index == item.right else half
                                 for index, half in enumerate(item.candidates))
        lines.append(f"{number}. ({item.meta['subject']}, `{item.meta['rule']}`) {item.context} ‖ {halves_text}")
    return "\n".join(lines)


def write_docs(report: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{DOCS}: no {START} ... {END} section to replace")
    head, rest = text.split(START, 1)
    DOCS.write_text(f"{head}{START}\n{report}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "cmmlu" / "dev",
                        help="a CMMLU split folder (one CSV per subject)")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2505)
    parser.add_argument("--write-docs", action="store_true", help=f"replace the yield section of {DOCS.name}")
    args = parser.parse_args()
    report = yield_report(args.data, args.samples, args.seed)
    print(report)
    if args.write_docs:
        write_docs(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
