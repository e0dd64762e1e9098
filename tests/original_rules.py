"""The rules of the original S2SBench code (github undobug/S2SBench, files t2t/t2t_infer_ppl.py, s2t/s2t_infer_ppl.py,
t2t/eval_s2t.yaml, */eval_story.py, */eval_cmmlu4.py, */bash.sh) as its public source states them, written here
independently so the tests can hold what s2sbench writes against them (its code is not copied).

- Inference loop: ``--config`` is a YAML with ``datasets: {name: {path, audio_path, lang}}``; each name of
  ``--dataset_list`` must be a key there (else it stops), ``path`` and ``audio_path`` are joined to ``--root_dir``;
  the JSONL is read one JSON object per line; a row's audio is ``join(audio_path, str(uttid) + '.wav')``. A set named
  exactly ``cmmlu_write_4`` is scored once per key A, B, C, D (``row[key]``); any other set is scored on
  ``row['last']`` when ``'tory'`` is in its name, and fails (``row[None]``) otherwise. Results go to
  ``<result_dir>/<name>/<basename of the checkpoint>/result.jsonl`` as ``{"uttid", "key", "loss": [x], "ppl": [y]}``.
- ``eval_story.py``: rows sorted by ``int(uttid.split('_')[0])`` (or the integer uttid), taken in pairs (0,1),
  (2,3), ...; a pair whose ids are not consecutive stops in the debugger; the first of a pair is right, correct iff
  its loss is strictly lower; the losses reported are the mean of the first and of the second rows.
- ``eval_cmmlu4.py``: the question file's rows give ``uttid -> answer``; result rows give ``uttid -> key -> loss``;
  per question present in both, the answer's loss against each other key, correct iff ``<=``; accuracy over the
  comparisons; the mean answer and other losses over the comparisons.
- Both readers take the subfolders of ``--result_dir`` whose name split at ``_`` has more than two parts and a
  number as the second, sorted by that number, with the step the third part as an integer; they write
  ``results_summary.txt``: one line per checkpoint, sorted by step, ``f"{step},{acc:.2%},{a:.4f},{b:.4f}"``, no
  header; the plotting reader splits each line at ``,`` into four fields (int, percent, float, float).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml


class OriginalCodeStops(AssertionError):
    """Where the original code would raise or stop."""


def read_jsonl(path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line.strip()) for line in handle]


def dispatch(name: str) -> str:
    """What the inference loop scores in a set of this name: 'choice' (A-D), 'story' (last), or it stops."""
    if name == "cmmlu_write_4":
        return "choice"
    if "tory" in name:
        return "story"
    raise OriginalCodeStops(f"set '{name}': the loop would read row[None] (neither cmmlu_write_4 nor a name with 'tory')")


def inference_inputs(config_path, root_dir, dataset_list) -> dict[str, list[tuple[str, str, str]]]:
    """Per set of ``dataset_list``: (audio path, context, scored text) of every request the loop would make."""
    config = yaml.full_load(Path(config_path).read_text(encoding="utf8"))
    out = {}
    for name in dataset_list:
        if name not in config["datasets"]:
            raise OriginalCodeStops(f"{name}: not in {config_path} ('Not support this dataset for eval')")
        entry = config["datasets"][name]
        rows = read_jsonl(os.path.join(root_dir, entry["path"]))
        audio_dir = os.path.join(root_dir, entry["audio_path"])
        keys = ["A", "B", "C", "D"] if dispatch(name) == "choice" else [None]
        requests = []
        for key in keys:
            for row in rows:
                audio = os.path.join(audio_dir, str(row["uttid"]) + ".wav")
                if not os.path.exists(audio):
                    raise OriginalCodeStops(f"{name}: no audio {audio}")
                requests.append((audio, row["first"], row["last"] if "tory" in name else row[key]))
        out[name] = requests
    return out


def _prefix(uttid) -> int:
    return int(uttid if isinstance(uttid, int) else uttid.split("_")[0])


def story_summary(rows: list[dict]) -> tuple[float, float, float]:
    """(accuracy, mean right loss, mean wrong loss) as eval_story.py computes them."""
    ordered = sorted(rows, key=lambda row: _prefix(row["uttid"]))
    pairs = correct = 0
    right = wrong = 0.0
    for index in range(0, len(ordered) - 1, 2):
        first, second = ordered[index], ordered[index + 1]
        if _prefix(first["uttid"]) != _prefix(second["uttid"]) - 1:
            raise OriginalCodeStops(f"rows {first['uttid']} and {second['uttid']} are not consecutive (pdb)")
        right += first["loss"][0]
        wrong += second["loss"][0]
        correct += first["loss"][0] < second["loss"][0]
        pairs += 1
    return correct / pairs, right / pairs, wrong / pairs


def cmmlu4_summary(question_rows: list[dict], rows: list[dict]) -> tuple[float, float, float, int]:
    """(accuracy, mean answer loss, mean other loss, questions matched) as eval_cmmlu4.py computes them."""
    answers = {row["uttid"]: row["answer"] for row in question_rows}
    losses: dict = {}
    for row in rows:
        if row["loss"]:
            losses.setdefault(row["uttid"], {})[row["key"]] = row["loss"][0]
    correct = total = matched = 0
    answer_losses, other_losses = [], []
    for uttid, answer in answers.items():
        if uttid in losses and answer in losses[uttid]:
            matched += 1
            for key, loss in losses[uttid].items():
                if key != answer:
                    correct += losses[uttid][answer] <= loss
                    total += 1
                    answer_losses.append(losses[uttid][answer])
                    other_losses.append(loss)
    mean = lambda values: sum(values) / len(values) if values else 0  # noqa: E731
    return (correct / total if total else 0), mean(answer_losses), mean(other_losses), matched


def checkpoint_folders(result_dir) -> list[tuple[int, Path]]:
    """(step, folder) of the checkpoint folders the summary readers take, in their order."""
    names = [d for d in os.listdir(result_dir) if os.path.isdir(os.path.join(result_dir, d))
             and len(d.split("_")) > 2 and d.split("_")[1].isdigit()]  # fmt: skip
    return [(int(d.split("_")[2]), Path(result_dir) / d) for d in sorted(names, key=lambda d: int(d.split("_")[1]))]


def summary_line(step: int, accuracy: float, a: float, b: float) -> str:
    return f"{step},{accuracy:.2%},{a:.4f},{b:.4f}"


def read_summary(path) -> list[tuple[int, float, float, float]]:
    """The plotting reader: four comma-separated fields a line, the accuracy in percent."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        step, accuracy, a, b = line.strip().split(",")
        out.append((int(step), float(accuracy.rstrip("%")) / 100, float(a), float(b)))
    return out


def story_result_dir_summary(result_dir) -> list[str]:
    """The lines eval_story.py would write for ``result_dir``."""
    lines = []
    for step, folder in checkpoint_folders(result_dir):
        if (folder / "result.jsonl").exists():
            lines.append((step, summary_line(step, *story_summary(read_jsonl(folder / "result.jsonl")))))
    return [line for _, line in sorted(lines)]


def cmmlu4_result_dir_summary(result_dir, question_file) -> list[str]:
    """The lines eval_cmmlu4.py would write for ``result_dir`` with ``question_file``."""
    questions = read_jsonl(question_file)
    lines = []
    for step, folder in checkpoint_folders(result_dir):
        if (folder / "result.jsonl").exists():
            accuracy, a, b, _ = cmmlu4_summary(questions, read_jsonl(folder / "result.jsonl"))
            lines.append((step, summary_line(step, accuracy, a, b)))
    return [line for _, line in sorted(lines)]
