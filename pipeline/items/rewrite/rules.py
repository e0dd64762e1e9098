"""The rule rewriter: a CMMLU question becomes four statements when its stem is a sentence that an option completes.

The rules, tried in this order (the name is recorded as ``Statements.rule`` and in ``Item.meta.rule``):

- ``blank``: one blank (``（）``, ``( )``, ``[ ]``, ``____``) is filled: ``美学属于（）范畴`` -> ``美学属于`` + ``哲学范畴``.
- ``numeric``: numbers as options fill 多少/几 (``我国共有多少个少数民族`` -> ``我国共有`` + ``55个少数民族``) or follow
  a stem ending in ``=``.
- ``question_word``: the option stands in for 谁/什么/哪…/哪里/怎样做 (``…是谁的名句`` -> ``…是`` + ``陶渊明的名句``);
  ``which_inverted``: a question starting with 哪个/谁 is turned around (``以下哪个国家在本年度没有…计划`` ->
  ``在本年度没有…计划的国家是`` + ``以色列``).
- ``which_of_the_following``: a "下列…的是" stem loses the phrase that points at the unheard list (``下列不属于淮扬菜的是``
  -> ``不属于淮扬菜的是`` + ``炸蛎黄``; ``下列说法错误的是`` -> ``错误的说法是``), then completes as below.
- ``completion``: the stem ends in a copula, a verb that takes an object, a preposition, a conjunction or an adverb
  before a predicate (``话剧《龙须沟》的作者是`` + ``老舍``); see :data:`stems.COMPLETING_ENDINGS`.
- ``colon``: a trailing colon (``抽样误差是由:`` + ``抽样引起``).
- ``condition``: a time or condition clause takes the option as its main clause (``当边际产量为零时，`` + ``总产量最大``).

Questions a listener could not follow are refused first, each with its reason: a LaTeX formula in the stem, an
option that refers to the others (``以上都不是``), options that are codes for items listed in the stem (``bd``), a
bracketed note after the stem (``(多选)``). Whatever no rule takes is rejected with what its stem ends in, for the LLM
rewriter (or the report) to take.
"""

from __future__ import annotations

import re

from s2sbench.pipeline.items.rewrite.base import LETTERS, Question, RewriteRejected, Rewriter, Statements
from s2sbench.pipeline.items.rewrite.stems import (
    CONDITION_CLAUSE,
    NUMERIC,
    Slot,
    clean,
    completing_ending,
    count_slot,
    drop_which_phrases,
    inverted_slot,
    question_slot,
    question_words,
    readable,
    strip_end,
)

# One blank: brackets holding only spaces, or a run of two or more underscores.
BLANK = re.compile(r"[（(][ \u3000]*[）)]|\[[ \u3000]*\]|【[ \u3000]*】|_{2,}|＿{2,}")
TRAILING_COLON = re.compile(r"[:：]\s*$")
QUESTION_END = re.compile(r"[?？]\s*$")
# "句中横线处应填入" and the like: the blank sits in a quotation and the question is about it.
INSTRUCTION = re.compile(r"横线|填入|空白处|括号")
LATEX = re.compile(r"\$|\\[A-Za-z]+")
REFERS_TO_OTHERS = re.compile(
    r"^(?:以上|上述|所有以上|全部选项)|(?:都|均|皆)不?(?:是|对|正确|错误|可以|有可能|不是|不对)$|^[A-D][和与、及][A-D]"
)
ITEM_CODES = re.compile(r"^[a-eA-E①-⑩ⅠⅡⅢⅣⅤⅥ]{1,6}$")
BRACKETED_NOTE = re.compile(r"[（(][^（()）]{2,}[）)]\s*[。.]?\s*$")
# The shortest first half worth speaking: a two-character stem says nothing a listener can hold on to.
MIN_FIRST_HALF_CHARS = 4


class RuleRewriter(Rewriter):
    name = "rules"

    def rewrite(self, question: Question) -> Statements:
        stem = clean(question.text)
        options = tuple(readable(option) for option in question.options)
        refuse_unreadable(stem, options)
        if BLANK.search(stem):
            return fill_blank(stem, options)
        bare = strip_end(stem)
        if question_words(bare.rstrip("?？")):
            return fill_question(bare.rstrip("?？"), options)
        if QUESTION_END.search(bare):
            raise RewriteRejected("a question with no blank and no question word an option could stand in for")
        return complete(bare, options)


def refuse_unreadable(stem: str, options: tuple[str, ...]) -> None:
    if LATEX.search(stem):
        raise RewriteRejected("the stem holds a LaTeX formula, which a voice cannot read out")
    for letter, option in zip(LETTERS, options):
        if REFERS_TO_OTHERS.search(option):
            raise RewriteRejected(f"option {letter} ({option!r}) refers to the other options")
    if all(ITEM_CODES.match(option) for option in options) and any(len(option) > 1 for option in options):
        raise RewriteRejected("the options are codes for items listed in the stem")
    if BRACKETED_NOTE.search(stem) and not BLANK.search(stem[-4:]):
        raise RewriteRejected("the stem ends in a bracketed note, which a statement cannot keep")


def statements(first_half: str, options: tuple[str, ...], after: str, rule: str) -> Statements:
    first_half = first_half.rstrip()
    if len(first_half) < MIN_FIRST_HALF_CHARS:
        raise RewriteRejected(f"first half {first_half!r} is shorter than {MIN_FIRST_HALF_CHARS} characters")
    if question_words(first_half, few=False):
        raise RewriteRejected(f"first half {first_half!r} still asks a question")
    return Statements(first_half, tuple(option + after for option in options), rule)


def fill_blank(stem: str, options: tuple[str, ...]) -> Statements:
    blanks = list(BLANK.finditer(stem))
    if len(blanks) > 1:
        raise RewriteRejected(f"{len(blanks)} blanks (the rules fill one)")
    first_half, rest = stem[: blanks[0].start()], stem[blanks[0].end() :]
    if QUESTION_END.search(first_half):
        raise RewriteRejected("the text before the blank is a question, not the start of a statement")
    if INSTRUCTION.search(rest):
        raise RewriteRejected("the text after the blank is an instruction about the blank")
    rest = QUESTION_END.sub("。", rest)  # "佛陀于()入涅盘？" states "佛陀于拘尸那罗入涅盘。"
    if question_words(rest):
        raise RewriteRejected("the text after the blank still asks a question")
    if not first_half.strip():  # "（）是我国最大的淡水湖" -> "我国最大的淡水湖是" + option
        slot = inverted_slot("", strip_end(rest))
        if slot is None:
            raise RewriteRejected("the blank opens the stem and what follows cannot be turned around")
        return statements(slot.before, options, "", "blank")
    return statements(drop_which_phrases(first_half), options, rest, "blank")


def fill_question(stem: str, options: tuple[str, ...]) -> Statements:
    stem = drop_which_phrases(stem)
    found = question_words(stem)
    if all(m[0] == "几" for m in found) and not all(NUMERIC.match(option) for option in options):
        return complete(stem, options)  # "截取主人公一生的几个片段…的是": 几 means "a few" here, not "how many"
    if len(found) > 1:
        raise RewriteRejected(f"{len(found)} question words ({', '.join(m[0] for m in found)}); an option fills one")
    slot: Slot | None = count_slot(stem, options)
    rule = "numeric"
    if slot is None:
        slot, rule = question_slot(stem, options), "question_word"
    if slot is None:
        raise RewriteRejected(f"no option can stand in for the question word {found[0][0]!r} where it is")
    if slot.kind == "inverted":
        rule = "which_inverted"
    return statements(slot.before, options, slot.after, rule)


def complete(stem: str, options: tuple[str, ...]) -> Statements:
    if TRAILING_COLON.search(stem):
        return statements(drop_which_phrases(TRAILING_COLON.sub("", stem)), options, "", "colon")
    short = drop_which_phrases(stem)
    ending = completing_ending(short)
    if ending in ("=", "＝") and all(NUMERIC.match(option) for option in options):
        return statements(short, options, "", "numeric")
    if ending:
        return statements(short, options, "", "which_of_the_following" if short != stem else "completion")
    if CONDITION_CLAUSE.match(short):
        return statements(short + "，", options, "", "condition")
    raise RewriteRejected(f"the stem ends in {short[-4:]!r}, which no option completes (a noun phrase or a full sentence)")
