"""Per-candidate scores, their normalizations, and the reference's accuracy rules.

A :class:`Score` is one candidate of one item (spoken by one voice) scored in one mode by one model revision. The
reference's score of a candidate is its mean negative log-likelihood per token (``token`` normalization); ``char``
and ``byte`` divide by the candidate text's length instead (the same denominator in every mode, so numbers compare
across modes), and ``sum`` is the plain negative log-likelihood.

Accuracy rules (the S2SBench reference's, made explicit): the right candidate is compared with each wrong one.
``pairwise_strict`` (stories) counts a pair correct iff loss(right) < loss(wrong), a tie counts wrong;
``pairwise_ties_right`` (sCMMLU) iff loss(right) <= loss(wrong), a tie counts right; accuracy is correct pairs /
pairs, so 3 x questions for four options, chance 0.5. For more than two candidates the usual multiple-choice
``argmin`` accuracy (chance 1/k) is reported beside it: correct iff the right loss is strictly below every wrong one
(a tie for the lowest counts wrong, as no candidate was chosen). Each number is named by its rule. Pairs carry explicit item ids; a missing, duplicated or inconsistent candidate is a
:class:`ScoringError` naming the item, never a skip.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.core.records import Record

NORMALIZATIONS = ("token", "char", "byte", "sum")
PAIRWISE_RULES = ("pairwise_strict", "pairwise_ties_right")
ARGMIN = "argmin"
RULES = (*PAIRWISE_RULES, ARGMIN)


class ScoringError(DataError):
    """Scores that cannot be paired; the message names the task, item, voice and mode."""


class Score(Record):
    """One scored candidate: a line of the score cache."""

    id: str  # the cache key: hash of model revision, task, task version, mode, template, item, voice, candidate
    model: str
    revision: str
    task: str
    task_version: int
    template: str
    mode: str
    item_id: str
    voice: str  # "" when neither side is speech (T->T is scored once per item)
    candidate: int
    n_candidates: int
    right: bool
    sum_logprob: float
    n_tokens: int
    n_chars: int  # characters of the candidate text (without the template's separator)
    n_bytes: int  # UTF-8 bytes of the candidate text

    def loss(self, normalization: str) -> float:
        """Negative log-likelihood under ``normalization`` (lower is more plausible)."""
        denominator = {"token": self.n_tokens, "char": self.n_chars, "byte": self.n_bytes, "sum": 1}.get(normalization)
        if denominator is None:
            raise ScoringError(f"unknown normalization '{normalization}' (known: {', '.join(NORMALIZATIONS)})")
        return -self.sum_logprob / denominator


@dataclass(frozen=True)
class ItemOutcome:
    """The losses of the candidates of one item (and voice) under one normalization."""

    task: str
    item_id: str
    voice: str
    right: int
    losses: tuple[float, ...]

    @property
    def right_loss(self) -> float:
        return self.losses[self.right]

    @property
    def wrong_losses(self) -> tuple[float, ...]:
        return tuple(loss for index, loss in enumerate(self.losses) if index != self.right)

    def units(self, rule: str) -> tuple[bool, ...]:
        """The outcomes ``rule`` counts for this item: one per wrong candidate for a pairwise rule (in candidate
        order: the right one beat it), one for argmin (the right one beat every wrong one, ties wrong)."""
        if check_rule(rule) == ARGMIN:
            return (all(self.right_loss < loss for loss in self.wrong_losses),)
        if rule == "pairwise_strict":
            return tuple(self.right_loss < loss for loss in self.wrong_losses)
        return tuple(self.right_loss <= loss for loss in self.wrong_losses)


def _where(task: str, item_id: str, voice: str, mode: str) -> str:
    return f"task '{task}', item '{item_id}'" + (f", voice '{voice}'" if voice else "") + f", mode {mode}"


def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ScoringError(f"unknown scoring rule '{rule}' (known: {', '.join(RULES)})")
    return rule


def item_outcome(scores: list[Score], normalization: str) -> ItemOutcome:
    """The losses of one item's candidates; ``scores`` must be all of them, each once, exactly one right."""
    first = scores[0]
    where = _where(first.task, first.item_id, first.voice, first.mode)
    by_candidate: dict[int, Score] = {}
    for score in scores:
        if (score.task, score.item_id, score.voice, score.mode) != (first.task, first.item_id, first.voice, first.mode):
            raise ScoringError(f"{where}: grouped with a score of another item ({score.item_id})")
        if score.n_candidates != first.n_candidates:
            raise ScoringError(f"{where}: candidates disagree on how many candidates the item has")
        if score.candidate in by_candidate:
            raise ScoringError(f"{where}: candidate {score.candidate} is scored twice")
        by_candidate[score.candidate] = score
    missing = sorted(set(range(first.n_candidates)) - set(by_candidate))
    extra = sorted(set(by_candidate) - set(range(first.n_candidates)))
    if missing or extra:
        raise ScoringError(f"{where}: incomplete pair: missing candidates {missing}, unexpected {extra}")
    rights = [index for index, score in by_candidate.items() if score.right]
    if len(rights) != 1:
        raise ScoringError(f"{where}: expected exactly one right candidate, got {len(rights)}")
    losses = tuple(by_candidate[index].loss(normalization) for index in range(first.n_candidates))
    if not all(math.isfinite(loss) for loss in losses):
        raise ScoringError(f"{where}: non-finite loss {losses}")
    return ItemOutcome(first.task, first.item_id, first.voice, rights[0], losses)


def outcomes(scores: Iterable[Score], normalization: str) -> list[ItemOutcome]:
    """Item outcomes of the scores of one task and mode, sorted by (item id, voice)."""
    grouped: dict[tuple[str, str], list[Score]] = {}
    modes = set()
    for score in scores:
        grouped.setdefault((score.item_id, score.voice), []).append(score)
        modes.add((score.task, score.mode))
    if len(modes) > 1:
        raise ScoringError(f"scores of several tasks/modes mixed in one accuracy: {sorted(modes)}")
    return [item_outcome(grouped[key], normalization) for key in sorted(grouped)]


def accuracy(items: list[ItemOutcome], rule: str) -> tuple[float, int]:
    """(correct units / units, units) under ``rule``: pairs for a pairwise rule (the reference's accuracy,
    3 x questions for four options), questions for argmin."""
    units = [unit for item in items for unit in item.units(rule)]
    if not units:
        raise ScoringError("no items to score")
    return sum(units) / len(units), len(units)


def chance(rule: str, n_candidates: int) -> float:
    return 1.0 / n_candidates if check_rule(rule) == ARGMIN else 0.5


def rules_for(scoring: str, also_report: Iterable[str], n_candidates: int) -> tuple[str, ...]:
    """The task's rule first, then the ones it asks for, then argmin beside a pairwise rule when there are more
    than two candidates (with two, argmin is the strict pairwise accuracy again)."""
    rules = [check_rule(scoring)] + [check_rule(rule) for rule in also_report]
    if n_candidates > 2:
        rules.append(ARGMIN)
    return tuple(dict.fromkeys(rules))
