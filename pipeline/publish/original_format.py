"""The rules of the original S2SBench code (github undobug/S2SBench) that an export and eval's original-format
results both follow, so that its unchanged scripts run on them.

As its public source states them:

- the inference loop (``t2t_infer_ppl.py``, ``s2t_infer_ppl.py``) reads the sets named by ``--dataset_list`` from
  ``eval_s2t.yaml`` (``path``, ``audio_path``, ``lang`` joined to ``--root_dir``); it scores a set's ``A``-``D``
  options only when the set is named ``cmmlu_write_4``, and a row's ``last`` only when ``'tory'`` is in the name
  (any other name fails). So one config file holds one choice set, and a story set's name carries ``tory``;
- the audio of a row is ``<audio_path>/<uttid>.wav``;
- results go to ``<result_dir>/<set>/<checkpoint folder>/result.jsonl``; the summary readers take the checkpoint
  folders whose name split at ``_`` has more than two parts with a number second, sort them by that number and read
  the step from the third part (``ckpt_0_1000_model``);
- ``eval_story.py`` sorts a story set's rows by the integer before the first ``_`` of ``uttid`` and pairs them
  (0,1), (2,3), ...: the lower id is the right ending, correct when its loss is strictly lower;
- ``eval_cmmlu4.py`` pairs ``result.jsonl`` rows with the question file's rows by equal ``uttid`` and compares the
  answer's loss with each other key's (a tie counts right);
- both write ``results_summary.txt``, one line per checkpoint and no header, ``step,accuracy%,loss,loss``
  (``1000,62.50%,2.1234,2.5678``), which the plotting reader splits into four fields.

An export numbers the rows of a set (one task spoken by one voice) by their position in the build's dataset, and
eval numbers its results of that set the same way, so both carry the same uttids.
"""

from __future__ import annotations

import re

CHOICE_SET_NAME = "cmmlu_write_4"  # the one name the loop scores A-D under
STORY_MARK = "tory"  # a name the loop reads 'last' for
RESULT_FILE = "result.jsonl"
SUMMARY_FILE = "results_summary.txt"
LETTERS = "ABCD"
#: the pairwise rule each format's summary reader applies
RULE_OF_FORMAT = {"story": "pairwise_strict", "choice": "pairwise_ties_right"}


def set_id(task: str, voice: str) -> str:
    """The name of the set of one task spoken by one voice: its files in an export, its folder in eval's results."""
    return f"{task}--{voice}"


def format_of(n_candidates: int) -> str:
    """``story`` (two endings) or ``choice`` (four options); other items have no original layout."""
    if n_candidates == 2:
        return "story"
    if n_candidates == len(LETTERS):
        return "choice"
    raise ValueError(f"items with {n_candidates} candidates have no original layout (2: stories, 4: sCMMLU)")


def story_name(set_name: str) -> str:
    """The name a story set goes by in ``eval_s2t.yaml``: its own when it carries ``tory``, else with ``-story``."""
    return set_name if STORY_MARK in set_name else f"{set_name}-story"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text)


def story_uttids(position: int, item_id: str) -> tuple[str, str]:
    """(right ending, wrong ending) uttids of the story at ``position`` in its set: consecutive ids, the right lower."""
    return f"{2 * position}_{_safe(item_id)}", f"{2 * position + 1}_{_safe(item_id)}"


def choice_uttid(position: int, item_id: str) -> str:
    return f"{position}_{_safe(item_id)}"


def set_positions(rows) -> dict[tuple[str, str, str], int]:
    """(task, voice, item id) -> position of the row in its set, for ``rows`` of (task, voice, item id) in dataset
    order (every row of the dataset, before any selection, so a subset keeps its ids)."""
    positions: dict[tuple[str, str, str], int] = {}
    counts: dict[tuple[str, str], int] = {}
    for task, voice, item_id in rows:
        key = (task, voice)
        if (task, voice, item_id) not in positions:
            positions[(task, voice, item_id)] = counts.get(key, 0)
            counts[key] = counts.get(key, 0) + 1
    return positions


def checkpoint_folder(index: int, step: int, label: str) -> str:
    """The results folder of one checkpoint, named so the summary readers take it: ``ckpt_<index>_<step>_<label>``."""
    return f"ckpt_{index}_{step}_{_safe(label)}"


def summary_line(step: int, accuracy: float, right_loss: float, wrong_loss: float) -> str:
    """One line of ``results_summary.txt`` in the summary readers' format (accuracy a fraction)."""
    return f"{step},{accuracy:.2%},{right_loss:.4f},{wrong_loss:.4f}"
