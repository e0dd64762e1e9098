"""The accuracy rules against an independent reimplementation of the S2SBench reference's evaluation code.

The reference reads one ``result.jsonl`` row per candidate (its rules: tests/original_rules.py). Stories: rows
sorted by the integer before the first ``_`` of ``uttid``, paired (0,1), (2,3), ..., the lower id is the plausible
ending, correct iff its loss is strictly lower. sCMMLU: the answer's loss against each of the three other options,
correct iff lower or equal, over 3 x questions. Losses are multiples of 1/4 divided by 1, 2 or 4 tokens (exact in binary), so ties are exact and
frequent.
"""

from __future__ import annotations

import random

import pytest

from tests.original_rules import cmmlu4_summary, story_summary

from s2sbench.evaluation.results.aggregate import original_rows
from s2sbench.evaluation.protocol.scoring import Score, ScoringError, accuracy, item_outcome, outcomes, rules_for


def positions_of(scores: list[Score]) -> dict[str, int]:
    """Each item's place in its set, in item order (as an export numbers them)."""
    return {item_id: n for n, item_id in enumerate(sorted({s.item_id for s in scores}))}


def generated_scores(n_items: int, n_candidates: int, seed: int, mode: str = "S->T") -> list[Score]:
    rng = random.Random(seed)
    scores = []
    for i in range(n_items):
        right = rng.randrange(n_candidates)
        for k in range(n_candidates):
            n_tokens = rng.choice([1, 2, 4])
            loss = rng.randint(1, 6) / 4  # six values: many ties
            scores.append(Score(
                id=f"{i}/{k}", model="m", revision="r", task="t", task_version=1, template="tpl", mode=mode,
                item_id=f"item-{i:04d}", voice="v", candidate=k, n_candidates=n_candidates, right=k == right,
                sum_logprob=-loss * n_tokens, n_tokens=n_tokens, n_chars=10 + k, n_bytes=12 + k,
            ))  # fmt: skip
    return scores


@pytest.mark.parametrize("seed", range(5))
def test_story_accuracy_equals_reference_with_ties(seed):
    scores = generated_scores(300, 2, seed)
    items = outcomes(scores, "token")
    assert sum(item.losses[0] == item.losses[1] for item in items) > 20  # ties are really exercised
    ours, n_pairs = accuracy(items, "pairwise_strict")
    assert n_pairs == 300
    assert ours == story_summary(original_rows(scores, positions_of(scores)))[0]


@pytest.mark.parametrize("seed", range(5))
def test_multiple_choice_accuracy_equals_reference_with_ties(seed):
    scores = generated_scores(200, 4, seed)
    positions = positions_of(scores)
    rows = original_rows(scores, positions)
    questions = [{"uttid": f"{positions[s.item_id]}_{s.item_id}", "answer": "ABCD"[s.candidate]} for s in scores if s.right]
    ours, n_pairs = accuracy(outcomes(scores, "token"), "pairwise_ties_right")
    assert n_pairs == 3 * 200
    reference, _, _, matched = cmmlu4_summary(questions, rows)
    assert (ours, matched) == (reference, 200)


def test_rules_on_a_hand_made_tie():
    scores = generated_scores(1, 4, 0)
    tied = [s.model_copy(update={"sum_logprob": -1.0, "n_tokens": 1}) for s in scores]
    item = item_outcome(tied, "token")
    assert item.units("pairwise_ties_right") == (True, True, True)
    assert item.units("pairwise_strict") == (False, False, False)
    assert item.units("argmin") == (False,)  # a tie for the lowest chose nothing
    assert rules_for("pairwise_ties_right", [], 4) == ("pairwise_ties_right", "argmin")
    assert rules_for("pairwise_strict", [], 2) == ("pairwise_strict",)


def test_argmin_is_multiple_choice_accuracy():
    scores = generated_scores(50, 4, 3)
    items = outcomes(scores, "token")
    # the right option is the unique lowest loss
    expected = sum(item.right_loss == min(item.losses) and item.losses.count(min(item.losses)) == 1 for item in items)
    assert 0 < expected < 50
    assert accuracy(items, "argmin") == (expected / 50, 50)


def test_normalizations_divide_by_their_unit():
    score = generated_scores(1, 2, 1)[0]
    assert score.loss("token") == -score.sum_logprob / score.n_tokens
    assert score.loss("char") == -score.sum_logprob / score.n_chars
    assert score.loss("byte") == -score.sum_logprob / score.n_bytes
    assert score.loss("sum") == -score.sum_logprob
    with pytest.raises(ScoringError, match="unknown normalization 'word'.*token"):
        score.loss("word")


def test_incomplete_pair_names_the_item():
    scores = generated_scores(3, 2, 0)
    with pytest.raises(ScoringError, match=r"item 'item-0001', voice 'v', mode S->T: incomplete pair: missing candidates \[1\]"):
        outcomes(scores[:3] + scores[4:], "token")


def test_duplicate_and_two_right_candidates_name_the_item():
    scores = generated_scores(2, 2, 0)
    with pytest.raises(ScoringError, match="item 'item-0000'.*candidate 0 is scored twice"):
        outcomes([scores[0], *scores], "token")
    both_right = [s.model_copy(update={"right": True}) if s.item_id == "item-0001" else s for s in scores]
    with pytest.raises(ScoringError, match="item 'item-0001'.*exactly one right candidate, got 2"):
        outcomes(both_right, "token")


def test_mixed_modes_are_refused():
    with pytest.raises(ScoringError, match="several tasks/modes"):
        outcomes(generated_scores(2, 2, 0, "S->T") + generated_scores(2, 2, 0, "T->T"), "token")
