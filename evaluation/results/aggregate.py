"""From per-candidate scores to the numbers a run reports, and the files it writes.

``results.json`` holds, per task, mode and normalization, the accuracies (named by rule: ``pairwise_strict`` and
``pairwise_ties_right`` are the reference's, ``argmin`` the multiple-choice one) with bootstrap intervals, unit counts,
per-voice accuracies and their spread; per task, the degradations (absolute and relative, paired interval, exact
McNemar p). ``samples.jsonl`` has one line per scored candidate. ``original/`` holds the original S2SBench code's
``result.jsonl`` and ``results_summary.txt`` per set, with the uttids of an export of the same data.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from s2sbench.evaluation.protocol.modes import (
    SPEECH_TO_SPEECH, SPEECH_TO_TEXT, TEXT_TO_SPEECH, TEXT_TO_TEXT, mode_slug, split_mode)
from s2sbench.evaluation.results.folder import ResultsDir
from s2sbench.evaluation.protocol.scoring import ItemOutcome, Score, ScoringError, accuracy, chance, outcomes
from s2sbench.evaluation.protocol.stats import BootstrapOptions, Counts, bootstrap_accuracy, degradation, voice_spread
from s2sbench.pipeline.core.manifest import atomic_write_text
from s2sbench.pipeline.publish.original_format import (
    LETTERS,
    RESULT_FILE,
    RULE_OF_FORMAT,
    SUMMARY_FILE,
    checkpoint_folder,
    choice_uttid,
    format_of,
    set_id,
    story_uttids,
    summary_line,
)

#: (reference mode, degraded mode): the same continuation, the context as text vs as speech
DEGRADATION_PAIRS = ((TEXT_TO_TEXT, SPEECH_TO_TEXT), (TEXT_TO_SPEECH, SPEECH_TO_SPEECH))


def degradation_pairs(modes) -> list[tuple[str, str]]:
    """The (reference, degraded) pairs among ``modes``: text vs speech context, and for each acoustic condition its
    mode against the text context and against the clean speech (``T->T`` and ``S->T`` vs ``S->T@phone``)."""
    pairs = [(reference, mode) for reference, mode in DEGRADATION_PAIRS if reference in modes and mode in modes]
    for mode in modes:
        base, condition = split_mode(mode)
        if condition is not None:
            pairs += [(reference, mode) for reference, speech in DEGRADATION_PAIRS if speech == base and reference in modes]
            pairs += [(base, mode)] if base in modes else []
    return pairs


def _counts(items: list[ItemOutcome], item_ids: list[str], rule: str) -> Counts:
    """Per item (summed over voices): correct units and units, in ``item_ids`` order."""
    correct: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for item in items:
        units = item.units(rule)
        correct[item.item_id] += sum(units)
        total[item.item_id] += len(units)
    return Counts(np.array([correct[i] for i in item_ids]), np.array([total[i] for i in item_ids]))


def _paired(reference: list[ItemOutcome], other: list[ItemOutcome], rule: str) -> tuple[list[bool], list[bool]]:
    """Binary outcomes of the same units: each (item, voice, unit) of ``other`` against the reference's."""
    by_key = {(item.item_id, item.voice): item for item in reference}
    ref_out: list[bool] = []
    other_out: list[bool] = []
    for item in other:
        ref = by_key.get((item.item_id, item.voice)) or by_key.get((item.item_id, ""))
        if ref is None:
            raise ScoringError(f"task '{item.task}', item '{item.item_id}': scored in one mode but not the other")
        ref_out.extend(ref.units(rule))
        other_out.extend(item.units(rule))
    return ref_out, other_out


def _mode_summary(
    items: list[ItemOutcome], item_ids: list[str], rules: tuple[str, ...], n_candidates: int, boot: BootstrapOptions
) -> dict:
    summary: dict[str, object] = {}
    voices = sorted({item.voice for item in items})
    for rule in rules:
        _, n_units = accuracy(items, rule)
        entry: dict[str, object] = {
            **bootstrap_accuracy(_counts(items, item_ids, rule), boot).to_dict(),
            "n_units": n_units,
            "unit": "question" if rule == "argmin" else "pair",
            "chance": chance(rule, n_candidates),
        }
        if voices != [""]:
            per_voice = {v: accuracy([i for i in items if i.voice == v], rule)[0] for v in voices}
            entry["per_voice"] = per_voice
            if len(voices) > 1:
                entry["voice_spread"] = voice_spread(per_voice)
        summary[rule] = entry
    summary["mean_right_loss"] = float(np.mean([item.right_loss for item in items]))
    summary["mean_wrong_loss"] = float(np.mean([loss for item in items for loss in item.wrong_losses]))
    return summary


def summarize_task(
    scores_by_mode: Mapping[str, list[Score]],
    rules: tuple[str, ...],
    normalizations: tuple[str, ...],
    boot: BootstrapOptions,
) -> dict:
    """The ``modes`` and ``degradation`` entries of one task in results.json."""
    modes: dict[str, dict] = {}
    degradations: list[dict] = []
    item_sets = {mode: sorted({s.item_id for s in scores}) for mode, scores in scores_by_mode.items()}
    if len({tuple(ids) for ids in item_sets.values()}) > 1:
        sizes = {mode: len(ids) for mode, ids in item_sets.items()}
        raise ScoringError(f"modes of one task scored different items {sizes}; degradation needs the same items")
    item_ids = next(iter(item_sets.values()))
    n_candidates = max(s.n_candidates for scores in scores_by_mode.values() for s in scores)
    for normalization in normalizations:
        by_mode = {mode: outcomes(scores, normalization) for mode, scores in scores_by_mode.items()}
        for mode, items in by_mode.items():
            modes.setdefault(mode, {})[normalization] = _mode_summary(items, item_ids, rules, n_candidates, boot)
        for reference_mode, mode in degradation_pairs(by_mode):
            for rule in rules:
                found = degradation(
                    reference_mode,
                    mode,
                    _counts(by_mode[reference_mode], item_ids, rule),
                    _counts(by_mode[mode], item_ids, rule),
                    _paired(by_mode[reference_mode], by_mode[mode], rule),
                    chance(rule, n_candidates),
                    boot,
                )
                degradations.append({"normalization": normalization, "rule": rule, **found.to_dict()})
    return {"n_items": len(item_ids), "n_candidates": n_candidates, "modes": modes, "degradation": degradations}


def summarize_by_source(
    scores_by_mode: Mapping[str, list[Score]],
    sources: Mapping[str, str],
    rules: tuple[str, ...],
    normalizations: tuple[str, ...],
    boot: BootstrapOptions,
) -> dict:
    """The ``by_source`` entry of a task in results.json: :func:`summarize_task` over the items of each source file
    (``sources``: item id -> file stem), for a task whose items come from more than one (sCMMLU: a subject each)."""
    if len(set(sources.values())) < 2:
        return {}
    parts: dict[str, dict[str, list[Score]]] = defaultdict(lambda: {mode: [] for mode in scores_by_mode})
    for mode, scores in scores_by_mode.items():
        for score in scores:  # one pass over the scores, not one per source
            parts[sources[score.item_id]][mode].append(score)
    summaries = {}
    for source, part in sorted(parts.items()):
        if all(part.values()):
            summary = summarize_task(part, rules, normalizations, boot)
            summaries[source] = {key: summary[key] for key in ("n_items", "modes", "degradation")}
    return summaries


def sample_lines(scores: list[Score], rule: str, normalizations: tuple[str, ...]) -> list[dict]:
    """samples.jsonl rows of one task and mode. ``correct`` (under the task's pairwise ``rule``) of a wrong candidate:
    the right one beat it; of the right candidate: it beat every wrong one."""
    verdicts: dict[tuple[str, str], dict[str, ItemOutcome]] = defaultdict(dict)
    for normalization in normalizations:
        for item in outcomes(scores, normalization):
            verdicts[(item.item_id, item.voice)][normalization] = item
    lines = []
    for score in sorted(scores, key=lambda s: (s.item_id, s.voice, s.candidate)):
        correct = {}
        for normalization, item in verdicts[(score.item_id, score.voice)].items():
            units = item.units(rule)
            if score.right:
                correct[normalization] = all(units)
            elif len(units) == 1:
                correct[normalization] = units[0]
            else:
                correct[normalization] = units[score.candidate - (score.candidate > item.right)]
        lines.append(
            {
                "task": score.task,
                "mode": score.mode,
                "item_id": score.item_id,
                "voice": score.voice,
                "candidate": score.candidate,
                "right": score.right,
                "sum_logprob": score.sum_logprob,
                "n_tokens": score.n_tokens,
                "n_chars": score.n_chars,
                "n_bytes": score.n_bytes,
                "loss": {n: score.loss(n) for n in normalizations},
                "correct": correct,
                "rule": rule,
                "model": score.model,
                "revision": score.revision,
                "template": score.template,
            }
        )
    return lines


def write_jsonl(path: Path, rows: list[dict]) -> None:
    atomic_write_text(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def original_rows(scores: list[Score], positions: Mapping[str, int]) -> list[dict]:
    """The original code's ``result.jsonl`` rows for one set (token normalization), with the export's uttids:
    ``positions`` gives each item's place in its set. Two candidates: the right ending's row, then the wrong one's,
    on consecutive ids; four: one row per option, ``key`` A-D, on the question's id."""
    by_item: dict[str, dict[int, Score]] = defaultdict(dict)
    for score in scores:
        by_item[score.item_id][score.candidate] = score
    rows = []
    for item_id in sorted(by_item, key=positions.__getitem__):
        candidates = by_item[item_id]
        if len(candidates) == 2:
            right = next(s for s in candidates.values() if s.right)
            wrong = next(s for s in candidates.values() if not s.right)
            ordered = list(zip(story_uttids(positions[item_id], item_id), (None, None), (right, wrong)))
        else:
            uttid = choice_uttid(positions[item_id], item_id)
            ordered = [(uttid, LETTERS[k], candidates[k]) for k in sorted(candidates)]
        for uttid, key, score in ordered:
            loss = score.loss("token")
            rows.append({"uttid": uttid, "key": key, "loss": [loss], "ppl": [math.exp(min(loss, 700.0))]})
    return rows


def original_summary(scores: list[Score], rule: str, step: int) -> str:
    """A line of ``results_summary.txt``: token-normalized accuracy under ``rule`` and the mean right and wrong loss."""
    items = outcomes(scores, "token")
    value, _ = accuracy(items, rule)
    right = float(np.mean([item.right_loss for item in items]))
    wrong = float(np.mean([loss for item in items for loss in item.wrong_losses]))
    return summary_line(step, value, right, wrong)


@dataclass(frozen=True)
class OriginalSets:
    """Where one task's scores go in the original layout: its voices (one set each) and each row's position."""

    voices: tuple[str, ...]
    positions: Mapping[tuple[str, str, str], int]  # (task, voice, item id) -> position in its set


def write_original(out: ResultsDir, mode: str, scores: list[Score], sets: OriginalSets, step: int, index: int,
                   label: str) -> list[Path]:  # fmt: skip
    """``original/<mode>/<set>/<checkpoint folder>/result.jsonl`` and ``original/<mode>/<set>/results_summary.txt``
    for each set (one task spoken by one voice) of the scores: the files the original code's summary readers take
    (``eval_story.py``/``eval_cmmlu4.py --result_dir original/<mode>/<set>``), under its own rule for the format.
    Text-context scores go into every voice's set, for that set's items. Items other than stories and four-way
    choices have no original layout and are left out."""
    task = scores[0].task
    try:
        rule = RULE_OF_FORMAT[format_of(max(s.n_candidates for s in scores))]
    except ValueError:
        return []
    written, speech = [], any(s.voice for s in scores)
    for voice in sets.voices:
        voice_scores = [s for s in scores if (s.voice == voice if speech else (task, voice, s.item_id) in sets.positions)]
        if not voice_scores:
            continue
        positions = {s.item_id: sets.positions[(task, voice, s.item_id)] for s in voice_scores}
        folder = out.original_folder(mode_slug(mode), set_id(task, voice))
        write_jsonl(folder / checkpoint_folder(index, step, label) / RESULT_FILE, original_rows(voice_scores, positions))
        atomic_write_text(folder / SUMMARY_FILE, original_summary(voice_scores, rule, step) + "\n")
        written.append(folder)
    return written
