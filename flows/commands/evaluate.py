"""``s2sbench eval``: score a model (or every checkpoint of a training run) on a build, a Hub dataset or a saved
folder; write results, tables and plots. Everything is checked before the model loads."""

from __future__ import annotations

import argparse
from pathlib import Path

from s2sbench.flows.commands import add_command, add_device_argument, positive_int

EXAMPLES = """examples:
  s2sbench eval --dataset build/ --model smollm2 --out results/
  s2sbench eval --dataset my-org/sstorycloze-demo@v2 --model cascade --modes 'T->T' 'S->T' --out results/
  s2sbench eval --dataset saved/ --model smollm2 --tasks sstorycloze --limit 100 --voices piper-en-joe --out results/
  s2sbench eval --dataset build/ --model hf-causal --model-arg model=Qwen/Qwen2.5-7B --modes 'T->T' --out results.json
  s2sbench eval --dataset build/ --model qwen2-audio --modes 'T->T' 'S->T' --out results/ --bootstrap 5000
  s2sbench eval --dataset build/ --model hf-causal --model-glob 'runs/ckpt_*' --out sweep/
  s2sbench eval --dataset build/ --model hf-causal --model-glob 'runs/step-*-hf' --step-pattern 'step-(\\d+)' --out sweep/

Quote the modes: an unquoted T->T is a shell redirection.
--dataset is a build folder, a Hub dataset ORG/NAME[@REVISION] (at HF_ENDPOINT) or a folder saved with `datasets`.
--out DIR writes results.json, results_lm_eval.json, results.md, results.csv, samples.jsonl, original/ (the original
code's result.jsonl and results_summary.txt) and the score cache there; --out FILE.json names the results file inside FILE's folder. With --model-glob, each checkpoint is passed to
the adapter as --checkpoint-arg (default: model) and <out>/trajectory.csv and <out>/plots/<task>.png are written.
Scores are cached in <out>/score_cache.jsonl (a sweep: <out>/checkpoints/<name>/score_cache.jsonl): a rerun
scores nothing it has scored before.
"""
MODES = ("T->T", "S->T", "S->S", "T->S")  # evaluation.protocol.MODES, repeated so `--help` imports nothing heavy


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "eval",
        help="score a model on a build, a Hub dataset or a saved folder (accuracy per mode, degradation, sweeps)",
        description="Score a model on a build, a Hub dataset or a saved datasets folder in T->T, S->T, S->S and T->S modes; report accuracies with bootstrap "
        "intervals, the text-to-speech degradation with an exact McNemar test, and checkpoint trajectories.",
        epilog=EXAMPLES,
    )
    parser.add_argument("--dataset", "--build", dest="dataset", required=True, metavar="DIR|ORG/NAME[@REV]",
                        help="a build folder, a Hub dataset id, or a folder saved with `datasets` (--build: the same)")
    parser.add_argument("--tasks", type=_names, default=(), metavar="A,B", help="evaluate only these tasks")
    parser.add_argument("--voices", type=_names, default=(), metavar="V,W", help="only the rows of these voices")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N items of each task")
    parser.add_argument("--split", help="the split of each config (default: test, else its only split)")
    parser.add_argument("--model", required=True, help="adapter name (hf-causal, smollm2, cascade, qwen2-audio, ...)")
    parser.add_argument("--model-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="adapter option, repeatable (values parse as YAML: 8 -> int, true -> bool)")  # fmt: skip
    parser.add_argument("--modes", nargs="+", choices=MODES, help="modes to score (default: all the model declares)")
    parser.add_argument("--out", required=True, type=Path, help="output folder, or a results .json file path")
    parser.add_argument("--model-glob", metavar="PATTERN", help="evaluate every checkpoint matching this glob")
    parser.add_argument("--step-pattern", metavar="REGEX", help="regex whose first group is the step (default: the "
                        "last number in the checkpoint's name)")  # fmt: skip
    parser.add_argument("--checkpoint-arg", default="model", help="adapter option receiving each checkpoint path")
    parser.add_argument("--task-file", action="append", default=[], type=Path, metavar="YAML",
                        help="task config for a task not in the registry (repeatable)")  # fmt: skip
    parser.add_argument("--bootstrap", type=positive_int, default=2000, metavar="N", help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, help="bootstrap seed (default: fixed)")
    parser.add_argument("--requests-per-call", type=positive_int, default=64, metavar="N",
                        help="requests handed to the model at once; scores are saved after each call (default 64); "
                        "the model's own batch size is a --model-arg, e.g. batch_size=8")  # fmt: skip
    add_device_argument(parser, "the model (and a cascade's ASR)")
    parser.set_defaults(handler=run, runs_flow=True)


def _names(text: str) -> tuple[str, ...]:
    """A comma-separated list of names (``a,b``)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def parse_model_args(pairs: list[str]) -> dict[str, object]:
    import yaml
    from s2sbench.flows.commands import CommandError

    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"--model-arg '{pair}': expected KEY=VALUE")
        options[key] = yaml.safe_load(value) if value else ""
    return options


def run(args: argparse.Namespace) -> int:
    from s2sbench.evaluation.results.summary import results_markdown
    from s2sbench.evaluation.results.folder import RESULTS_FILE, ResultsDir
    from s2sbench.flows.commands import CommandError
    from s2sbench.flows.evaluate import evaluate_flow, sweep_flow
    if args.step_pattern and args.model_glob is None:
        raise CommandError("--step-pattern needs --model-glob")
    out_dir = args.out.parent if args.out.suffix == ".json" else args.out
    common = {"dataset": str(args.dataset), "model": args.model, "out_dir": str(out_dir),
              "model_options": parse_model_args(args.model_arg), "modes": args.modes,
              "tasks": list(args.tasks), "voices": list(args.voices), "limit": args.limit, "split": args.split,
              "task_files": [str(path) for path in args.task_file], "bootstrap": args.bootstrap, "seed": args.seed,
              "requests_per_call": args.requests_per_call}  # fmt: skip
    if args.model_glob is None:
        results_file = args.out.name if args.out.suffix == ".json" else RESULTS_FILE
        results = evaluate_flow(**common, results_file=results_file)
        print(results_markdown(results), end="")
        written = ResultsDir(out_dir, results_file)
        print(f"results: {written.results_path}   lm-eval: {written.lm_eval_path}   table: {written.markdown_path}, "
              f"{written.csv_path}   samples: {written.samples_path}")  # fmt: skip
        return 0
    trajectory = sweep_flow(**common, model_glob=args.model_glob, step_pattern=args.step_pattern,
                            checkpoint_arg=args.checkpoint_arg)  # fmt: skip
    steps = ", ".join(str(checkpoint.step) for checkpoint in trajectory.checkpoints)
    print(f"{len(trajectory.checkpoints)} checkpoints (steps {steps}): "
          f"{trajectory.n_scored} candidates scored, {trajectory.n_cached} from the cache")  # fmt: skip
    print(f"trajectory: {trajectory.table}")
    for plot in trajectory.plots:
        print(f"plot: {plot}")
    return 0
