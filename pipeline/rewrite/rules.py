"""The rule rewriter: questions with one blank (``（）``, ``（ ）``, ``____``) or a trailing colon.

``梅西叶天体M44位于（）的天区内`` with option ``巨蟹座`` becomes first half ``梅西叶天体M44位于`` and second half
``巨蟹座的天区内``; ``抽样误差是由：`` becomes ``抽样误差是由`` + the option. Anything else is rejected with the
reason, for the LLM rewriter (or the report) to take.
"""

from __future__ import annotations

import re

from s2sbench.pipeline.rewrite.base import Question, RewriteRejected, Rewriter, Statements

# One blank: full- or half-width brackets holding only spaces, or a run of two or more underscores.
BLANK = re.compile(r"[（(][ \u3000]*[）)]|_{2,}|＿{2,}")
TRAILING_COLON = re.compile(r"[:：]\s*$")
QUESTION_END = re.compile(r"[?？]\s*$")
# "句中横线处应填入" and the like: the blank sits in a quotation and the question is about it.
INSTRUCTION = re.compile(r"横线|填入|空白处|括号")
# The shortest first half worth speaking: a two-character stem says nothing a listener can hold on to.
MIN_FIRST_HALF_CHARS = 4


class RuleRewriter(Rewriter):
    name = "rules"

    def rewrite(self, question: Question) -> Statements:
        text = question.text.strip()
        blanks = list(BLANK.finditer(text))
        if len(blanks) > 1:
            raise RewriteRejected(f"{len(blanks)} blanks (the rules fill one)")
        if blanks:
            first_half, rest = text[: blanks[0].start()], text[blanks[0].end() :]
        elif TRAILING_COLON.search(text):
            first_half, rest = TRAILING_COLON.sub("", text), ""
        else:
            raise RewriteRejected("no blank and no trailing colon")
        first_half = first_half.rstrip()
        if first_half.count("$") % 2:
            raise RewriteRejected("the blank is inside a $...$ formula")
        if QUESTION_END.search(first_half):
            raise RewriteRejected("the text before the blank is a question, not the start of a statement")
        if INSTRUCTION.search(rest):
            raise RewriteRejected("the text after the blank is an instruction about the blank")
        if len(first_half) < MIN_FIRST_HALF_CHARS:
            raise RewriteRejected(f"first half {first_half!r} is shorter than {MIN_FIRST_HALF_CHARS} characters")
        return Statements(first_half, tuple(option.strip() + rest for option in question.options))
