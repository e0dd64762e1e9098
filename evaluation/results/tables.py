"""The results where users compare them: ``results_lm_eval.json`` in lm-evaluation-harness's layout, and the summary
as ``results.md`` and ``results.csv``, written beside ``results.json`` by every evaluation.

In the lm-eval file each (task, mode) is one entry, named ``<task>@<mode>`` (``sstorycloze@S-T``); its metrics are
keyed ``<metric>,none`` as lm-eval keys them (the filter is always ``none``: nothing is generated). ``acc`` is the
task's own rule on token-normalized scores (the reference's number), ``acc_<rule>_<normalization>`` every other
accuracy; each has ``_stderr`` (the bootstrap standard error) and ``_ci_low``/``_ci_high`` (its 95% interval). A
speech mode's entry also has ``degradation_<rule>_<normalization>`` (against its text reference mode) with the same
companions and ``mcnemar_p_<rule>_<normalization>``.
"""

from __future__ import annotations

import time
from importlib import metadata

from s2sbench.evaluation.protocol.modes import mode_slug
from s2sbench.evaluation.results.folder import Accuracy, ResultsDir, ResultsFile
from s2sbench.pipeline.core.manifest import write_json

FILTER = "none"
VERSIONED = ("s2sbench", "datasets", "transformers", "torch", "huggingface_hub")


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _metric(out: dict, name: str, value: float, stderr: float, ci_low: float, ci_high: float) -> None:
    out[f"{name},{FILTER}"] = value
    out[f"{name}_stderr,{FILTER}"] = stderr
    out[f"{name}_ci_low,{FILTER}"] = ci_low
    out[f"{name}_ci_high,{FILTER}"] = ci_high


def _accuracy(out: dict, name: str, accuracy: Accuracy) -> None:
    _metric(out, name, accuracy.value, accuracy.stderr, accuracy.ci_low, accuracy.ci_high)


def lm_eval_results(file: ResultsFile) -> dict:
    """``file`` in lm-evaluation-harness's results layout (see the module docstring)."""
    results, configs, versions, samples, better, groups = {}, {}, {}, {}, {}, {}
    dataset = file.dataset
    for task, entry in file.tasks.items():
        for mode, by_norm in entry.modes.items():
            name = f"{task}@{mode_slug(mode)}"
            metrics: dict = {"alias": f"{task} {mode}"}
            _accuracy(metrics, "acc", by_norm["token"].rule(entry.rules[0]) if "token" in by_norm else
                      next(iter(by_norm.values())).rule(entry.rules[0]))  # fmt: skip
            for normalization, summary in by_norm.items():
                for rule in entry.rules:
                    _accuracy(metrics, f"acc_{rule}_{normalization}", summary.rule(rule))
            higher = {"acc": True, **{f"acc_{r}_{n}": True for n in by_norm for r in entry.rules}}
            for gap in entry.degradation:
                if gap.mode == mode:
                    key = f"{gap.rule}_{gap.normalization}"
                    absolute = gap.absolute
                    _metric(metrics, f"degradation_{key}", absolute.value, absolute.stderr, absolute.ci_low, absolute.ci_high)
                    metrics[f"mcnemar_p_{key},{FILTER}"] = gap.mcnemar.p_value
                    higher[f"degradation_{key}"] = False
            results[name] = metrics
            better[name] = higher
            versions[name] = entry.version
            samples[name] = {"original": entry.n_items, "effective": entry.n_items}
            configs[name] = {
                "task": name, "tag": ["s2sbench", task], "dataset_path": dataset.location,
                "dataset_name": list(dataset.configs), "test_split": dataset.selection.split or "test",
                "output_type": "loglikelihood", "doc_to_text": entry.templates.get(mode, ""), "num_fewshot": 0,
                "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
                "metadata": {"version": entry.version, "mode": mode, "language": entry.language, "rules": entry.rules,
                             "n_candidates": entry.n_candidates},
            }  # fmt: skip
            groups.setdefault(task, []).append(name)
    return {
        "results": results,
        "group_subtasks": groups,
        "configs": configs,
        "versions": versions,
        "n-shot": {name: 0 for name in results},
        "higher_is_better": better,
        "n-samples": samples,
        "config": {
            "model": file.model.name, "model_args": file.model.args, "model_name": file.model.model_id,
            "model_revision": file.model.revision, "limit": dataset.selection.limit,
            "bootstrap_iters": file.bootstrap.n_resamples, "random_seed": file.bootstrap.seed,
            "confidence": file.bootstrap.confidence, "dataset": dataset.model_dump(mode="json"),
        },  # fmt: skip
        "versions_of_software": {package: _version(package) for package in VERSIONED},
        "date": time.time(),
        "model_name": file.model.model_id,
        "model_source": file.model.name,
    }


def write_tables(out: ResultsDir, file: ResultsFile) -> None:
    """``results_lm_eval.json``, ``results.md`` and ``results.csv`` (one row per task, mode, normalization and rule,
    with the interval and standard error) of one run."""
    from s2sbench.evaluation.results.summary import accuracy_frame, as_runs, results_markdown, write_csv
    from s2sbench.pipeline.core.manifest import atomic_write_text

    write_json(out.lm_eval_path, lm_eval_results(file))
    atomic_write_text(out.markdown_path, results_markdown(file))
    write_csv(accuracy_frame(as_runs(file)), out.csv_path)
