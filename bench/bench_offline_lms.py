"""T->T accuracy of the offline text LMs on real text, with bootstrap intervals and a paired comparison.

    python bench/bench_offline_lms.py [--data ../shared/data] [--models smollm2,gemma3-270m] [--stories 400]

Tasks: the demo's three tasks as shipped (data/demo), sCMMLU built from the CMMLU dev questions in
``<data>/cmmlu/dev`` by the offline rule rewriter alone (what it keeps today), and sStoryCloze on the first
``--stories`` stories of ``<data>/storycloze/winter2018_val.csv``. Every model scores the same items through the
protocol's T->T requests; the table gives each task's accuracy (its own pairwise rule, and argmin for four options)
with a 95% percentile bootstrap interval over items, and the paired gap of the last model minus the first (the same
bootstrap resamples for both, exact McNemar p on the pairs). Chance is 0.5 for a pairwise rule, 0.25 for argmin.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from s2sbench.evaluation.models import ModelAdapter, get_adapter
from s2sbench.evaluation.protocol.modes import TEXT_TO_TEXT, EvalItem, build_requests, template_for
from s2sbench.evaluation.protocol.scoring import ItemOutcome, Score, chance, outcomes, rules_for
from s2sbench.evaluation.protocol.stats import Counts, bootstrap_accuracy, bootstrap_gap, mcnemar_exact
from s2sbench.flows.demo import DEMO_TASKS
from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.items.load import load_task_items
from s2sbench.pipeline.items.task_config import TaskConfig, override_source
from s2sbench.pipeline.catalog.tasks import load_task


def real_tasks(data: Path, stories: int) -> list[tuple[TaskConfig, int | None, str]]:
    """(task, item limit, what it is) of the demo tasks and the real sources under ``data``."""
    scmmlu = override_source(load_task("scmmlu"), path=str(data / "cmmlu"), split="dev")
    rules_only = scmmlu.candidates.model_copy(update={"options": {**scmmlu.candidates.options, "rewriters": ["rules"]}})
    return [
        *[(load_task(name), None, "demo, as shipped") for name in DEMO_TASKS],
        (scmmlu.model_copy(update={"candidates": rules_only}), None, "CMMLU dev (67 subjects), rule rewriter only"),
        (override_source(load_task("sstorycloze"), path=str(data / "storycloze" / "winter2018_val.csv")), stories,
         f"Story Cloze winter 2018 val, first {stories}"),
    ]


def score_items(adapter: ModelAdapter, task: TaskConfig, items: list[Item]) -> list[Score]:
    requests, owners = [], []
    for item in items:
        evaluated = EvalItem(item.id, task.name, item.language, "", item.context, tuple(item.candidates), item.right)
        item_requests = build_requests(evaluated, task.templates, TEXT_TO_TEXT)
        requests.extend(item_requests)
        owners.extend((item, k) for k in range(len(item_requests)))
    results = adapter.loglikelihood(requests)
    return [Score(id=f"{item.id}/{k}", model=adapter.name, revision=adapter.model_id, task=task.name,
                  task_version=task.version, template=template_for(task.templates, TEXT_TO_TEXT), mode=TEXT_TO_TEXT,
                  item_id=item.id, voice="", candidate=k, n_candidates=len(item.candidates), right=k == item.right,
                  sum_logprob=result.sum_logprob, n_tokens=result.n_tokens, n_chars=len(item.candidates[k]),
                  n_bytes=len(item.candidates[k].encode("utf-8")))
            for (item, k), result in zip(owners, results)]


def counts(items: list[ItemOutcome], rule: str) -> Counts:
    units = [item.units(rule) for item in items]
    return Counts(np.array([sum(u) for u in units]), np.array([len(u) for u in units]))


def fraction(estimate) -> str:
    return f"{estimate.value:.3f} [{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--models", default="smollm2,gemma3-270m", help="adapter names, comma-separated")
    parser.add_argument("--stories", type=int, default=400, help="Story Cloze stories to score")
    parser.add_argument("--tasks", help="only these tasks, comma-separated (default: all)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    names = args.models.split(",")
    tasks = [entry for entry in real_tasks(args.data, args.stories)
             if not args.tasks or entry[0].name in args.tasks.split(",")]
    loaded = {task.name: load_task_items(task, limit) for task, limit, _ in tasks}
    by_model: dict[str, dict[str, list[ItemOutcome]]] = {}
    seconds: dict[str, float] = {}
    for name in names:
        adapter = get_adapter(name)
        started = time.perf_counter()
        by_model[name] = {task.name: outcomes(score_items(adapter, task, loaded[task.name].items), "token")
                          for task, _, _ in tasks}
        seconds[name] = time.perf_counter() - started
        print(f"{name}: {adapter.model_id}; licence: {adapter.licence or 'unknown'}; scored in {seconds[name]:.0f} s",
              file=sys.stderr)
        del adapter
    first, last = names[0], names[-1]
    header = ["task", "source", "items", "rule", "chance", *names]
    if len(names) > 1:
        header += [f"{last} - {first}", "McNemar p"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for task, _, what in tasks:
        result = loaded[task.name]
        n_candidates = max(len(item.candidates) for item in result.items)
        for rule in rules_for(task.scoring, task.also_report, n_candidates):
            row = [task.name, what, f"{len(result.items)} of {result.rows_in}", rule, f"{chance(rule, n_candidates):.2f}"]
            row += [fraction(bootstrap_accuracy(counts(by_model[name][task.name], rule))) for name in names]
            if len(names) > 1:
                a, b = by_model[first][task.name], by_model[last][task.name]
                row.append(fraction(bootstrap_gap(counts(b, rule), counts(a, rule))))
                pairs_a = [unit for item in a for unit in item.units(rule)]
                pairs_b = [unit for item in b for unit in item.units(rule)]
                row.append(f"{mcnemar_exact(pairs_b, pairs_a).p_value:.3g}")
            print("| " + " | ".join(row) + " |")
    print("\nscoring time (loaded machine, noise): " + ", ".join(f"{n} {s:.0f} s" for n, s in seconds.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
