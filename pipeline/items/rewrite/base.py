"""The rewriter interface: a multiple-choice question in, four statements sharing one first half out.

A rewriter either returns :class:`Statements` or raises :class:`RewriteRejected` with a reason; every output is
then checked by :func:`check_statements`, so a rewriter that writes something wrong is caught the same way whether
it is a rule or an LLM. Rewriters are found by name through :func:`get_rewriter`.
"""

from __future__ import annotations

import abc
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from s2sbench.pipeline.core.registry import Registry

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class Question:
    text: str
    options: tuple[str, ...]
    answer: int  # index into options


@dataclass(frozen=True)
class Statements:
    """The rewrite: ``first_half + second_halves[k]`` states option k; the first half is the spoken context."""

    first_half: str
    second_halves: tuple[str, ...]
    rule: str = ""  # which rule of the rule rewriter wrote it (empty for the LLM)


class RewriteRejected(ValueError):
    """A question this rewriter cannot (or did not) rewrite; the message is the reason recorded in the report."""


class Rewriter(abc.ABC):
    name: str = ""

    @abc.abstractmethod
    def rewrite(self, question: Question) -> Statements:
        """The statements for ``question``; raises :class:`RewriteRejected` with the reason when it cannot."""


_PUNCTUATION = re.compile(r"[\s\u3000]+")
# Simplified-form radicals that PDF extraction leaves for whole characters (油罐⻋, 向⻄): NFKC has no mapping for
# them (Unicode's EquivalentUnifiedIdeograph.txt has, but no installed library reads it).
RADICAL_CHARACTERS = str.maketrans(
    "⻄⻅⻆⻉⻋⻓⻔⻘⻙⻚⻛⻜⻝⻢⻣⻤⻥⻦⻧⻨⻩⻬⻮⻰", "西见角贝车长门青韦页风飞食马骨鬼鱼鸟卤麦黄齐齿龙"
)


def normalize(text: str) -> str:
    """NFKC (and radicals as characters), no whitespace, no punctuation: the comparison form for 'does this ending
    still say option k'."""
    text = unicodedata.normalize("NFKC", text).translate(RADICAL_CHARACTERS)
    text = "".join(char for char in text if not unicodedata.category(char).startswith("P"))
    return _PUNCTUATION.sub("", text).lower()


def check_statements(question: Question, statements: Statements) -> None:
    """Raise :class:`RewriteRejected` unless the rewrite keeps the question's meaning and answer.

    Checks: a non-empty first half; one distinct, non-empty second half per option; each second half still contains
    its own option (so the right answer stays the right one and no option is lost or swapped).
    """
    if not normalize(statements.first_half):
        raise RewriteRejected("empty first half (nothing to speak as the context)")
    halves = statements.second_halves
    if len(halves) != len(question.options):
        raise RewriteRejected(f"{len(halves)} second halves for {len(question.options)} options")
    normalized = [normalize(half) for half in halves]
    if not all(normalized):
        raise RewriteRejected("an empty second half")
    if len(set(normalized)) != len(normalized):
        raise RewriteRejected("second halves are not distinct")
    for index, (half, option) in enumerate(zip(normalized, question.options)):
        if normalize(option) not in half:
            raise RewriteRejected(f"second half {LETTERS[index]} does not contain its option {option!r}")


#: name -> rewriter class, imported on first use so the LLM client's imports stay out of rule-only runs (packages add
#: theirs under ``s2sbench.rewriters``)
REWRITERS: Registry[type[Rewriter]] = Registry("rewriter", {
    "rules": "s2sbench.pipeline.items.rewrite.rules:RuleRewriter",
    "llm": "s2sbench.pipeline.items.rewrite.llm:LLMRewriter",
}, group="s2sbench.rewriters")


def get_rewriter(name: str, options: dict[str, Any]) -> Rewriter:
    return REWRITERS.get(name)(**options)
