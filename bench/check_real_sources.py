"""The "done when" checks of the text sources on real public data (not part of the test suite).

    python bench/check_real_sources.py [--data ../shared/data] [--storycloze-2016 FILE ...] [--out report.json]

- Story Cloze: items from each CSV found (winter 2018 val: 1,571 expected; spring 2016 val/test: 1,871), each
  right ending equal to the ``AnswerRightEnding`` column read independently with the csv module; tStoryCloze wrong
  endings never from the same story.
- CMMLU dev: the rule rewriter's output passes validation; the report says how many questions it handled (by which
  rule) and why the rest were dropped. The yield per subject and per rule, with sample rewrites, is
  ``bench/scmmlu_yield.py``.
Exits 1 when a check fails. Prints a JSON summary (and writes it with --out).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from s2sbench.pipeline.core.manifest import write_json
from s2sbench.pipeline.items.rewrite.base import Question, Statements, check_statements
from s2sbench.pipeline.items.load import load_task_items
from s2sbench.pipeline.items.task_config import override_source
from s2sbench.pipeline.catalog.tasks import load_task

EXPECTED_STORIES = {"winter2018_val.csv": 1571}
SPRING_2016_STORIES = 1871


def check_storycloze(path: Path, failures: list[str]) -> dict:
    started = time.perf_counter()
    result = load_task_items(override_source(load_task("sstorycloze"), path=str(path)))
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    expected = EXPECTED_STORIES.get(path.name, SPRING_2016_STORIES if "InputStoryid" in rows[0] else len(rows))
    right_matches = sum(
        item.candidates[item.right] == row[f"RandomFifthSentenceQuiz{row['AnswerRightEnding']}"].strip()
        for item, row in zip(result.items, rows)
    )
    if len(result.items) != expected:
        failures.append(f"{path.name}: {len(result.items)} items, expected {expected}")
    if right_matches != len(rows):
        failures.append(f"{path.name}: {right_matches} of {len(rows)} right endings match AnswerRightEnding")
    tsc = load_task_items(override_source(load_task("tstorycloze"), path=str(path)))
    right_by_id = {item.id: item.candidates[item.right] for item in tsc.items}
    same_story = sum(item.meta["wrong_from"][0] == item.id for item in tsc.items)
    wrong_is_other_right = sum(
        item.candidates[1 - item.right] == right_by_id[item.meta["wrong_from"][0]] for item in tsc.items
    )
    if same_story or wrong_is_other_right != len(tsc.items):
        failures.append(f"{path.name}: tStoryCloze drew {same_story} wrong endings from the same story")
    return {
        "file": str(path),
        "items": len(result.items),
        "expected": expected,
        "right_ending_matches_label": right_matches,
        "dropped": len(result.drops),
        "tstorycloze_items": len(tsc.items),
        "tstorycloze_same_story": same_story,
        "tstorycloze_wrong_is_another_storys_right_ending": wrong_is_other_right,
        "seconds": round(time.perf_counter() - started, 2),
    }


def check_cmmlu(folder: Path, failures: list[str]) -> dict:
    started = time.perf_counter()
    task = override_source(load_task("scmmlu"), path=str(folder), split="")
    rules_only = task.candidates.model_copy(update={"options": {"rewriters": ["rules"]}})
    result = load_task_items(task.model_copy(update={"candidates": rules_only}))
    for item in result.items:  # independent re-check of every kept rewrite
        question = Question(item.meta["question"], tuple(item.meta["options"]), item.right)
        check_statements(question, Statements(item.context, tuple(item.candidates)))
    if not result.items:
        failures.append("cmmlu: the rule rewriter kept nothing")
    report = result.report()
    return {
        "folder": str(folder),
        "questions": report["rows_in"],
        "kept": report["kept"],
        "handled": report["handled"],
        "handled_by_rule": report["handled_by_rule"],
        "kept_share": round(report["kept"] / report["rows_in"], 3) if report["rows_in"] else 0.0,
        "dropped": report["dropped"],
        "rejected": report["rejected"],
        "source_drop_reasons": report["source_drop_reasons"],
        "all_kept_pass_validation": True,
        "examples": [{"context": item.context, "candidates": item.candidates, "right": item.right}
                     for item in result.items[:3]],
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--storycloze-2016", type=Path, nargs="*", default=[], help="spring 2016 val/test CSVs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    failures: list[str] = []
    stories = sorted((args.data / "storycloze").glob("*.csv")) + list(args.storycloze_2016)
    cmmlu_dev = args.data / "cmmlu" / "dev"
    summary = {
        "storycloze": [check_storycloze(path, failures) for path in stories],
        "cmmlu_dev": check_cmmlu(cmmlu_dev, failures) if cmmlu_dev.is_dir() else None,
        "failures": failures,
    }
    print(json.dumps(summary, ensure_ascii=False, indent=2))
    if args.out:
        write_json(args.out, summary)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
