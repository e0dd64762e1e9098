"""Candidate construction: how a loaded item's candidates become the benchmark's, chosen by
``candidates.construction`` in the task file.

- ``source``: keep the loader's candidates (sStoryCloze: the original wrong ending).
- ``random_other``: replace each wrong candidate by the right ending of another story, drawn with a fixed seed
  (tStoryCloze); never the item's own story, never a text already among its candidates.
- ``scmmlu_rewrite``: rewrite the question and its options into statements sharing one first half (the context),
  trying the rewriters of ``options.rewriters`` in order (``rules``, ``llm``); a question none can rewrite is
  dropped with every rewriter's reason; ``handled_by_rule`` counts the rule rewriter's rules.
- ``translate``: English stories into Chinese (zh-sStoryCloze), from an XStoryCloze zh file where it has the
  story, else through the LLM client, with English names replaced by Chinese names.

A builder sees the whole pool first (:meth:`prepare`), then turns each item into a kept item or a drop with a
reason; ``handled`` counts who produced each kept item.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import AfterValidator

from s2sbench.pipeline.core.manifest import stable_hash
from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.core.registry import Registry
from s2sbench.pipeline.items.rewrite.base import REWRITERS, Question, RewriteRejected, check_statements, get_rewriter
from s2sbench.pipeline.items.rewrite.llm import LLMSettings
from s2sbench.pipeline.core.schema import StrictSection, validate
from s2sbench.pipeline.items.sources.rows import DroppedRow, join_sentences, read_table
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError


class CandidateBuilder:
    name = "source"

    class Options(StrictSection):
        """``candidates.options`` of this construction (``source`` takes none)."""

    def __init__(self, task: TaskConfig):
        self.task = task
        self.options: dict[str, Any] = task.candidates.options
        self.settings = validate(self.Options, self.options, str(task.path), TaskConfigError, prefix="candidates.options")
        self.handled: Counter[str] = Counter()
        self.rejections: dict[str, Counter[str]] = {}

    def prepare(self, items: Sequence[Item]) -> None:
        """See the whole pool before building (``random_other`` draws from it)."""

    def build(self, item: Item) -> Item | DroppedRow:
        self.handled[self.name] += 1
        return item

    def reject(self, item: Item, stage: str, reasons: dict[str, str], field: str) -> DroppedRow:
        # the kind of reason without its specifics (a quoted word or formula, a list of question words, a number), so
        # that the drop's code and the report group alike drops: CMMLU's test split has 1,013 distinct reasons, 19 kinds
        kinds = {who: re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\([^)]*[\u4e00-\u9fff][^)]*\)|\d+", "…", reason)
                 for who, reason in reasons.items()}
        for who, kind in kinds.items():
            self.rejections.setdefault(who, Counter())[kind] += 1
        text = "; ".join(f"{who}: {reason}" for who, reason in reasons.items())
        code = "; ".join(f"{who}: {kind}" for who, kind in kinds.items())
        return DroppedRow(item.source.file, item.source.row, field, text, stage, item.id, code=code)

    def report(self) -> dict[str, Any]:
        return {
            "construction": self.name,
            "handled": dict(self.handled),
            "rejected": {who: dict(kinds) for who, kinds in self.rejections.items()},
        }


def _with(item: Item, **update: Any) -> Item:
    return Item.model_validate({**item.model_dump(), **update})


class RandomOther(CandidateBuilder):
    name = "random_other"

    class Options(StrictSection):
        seed: int = 0

    def prepare(self, items: Sequence[Item]) -> None:
        self.pool = [(item.id, item.candidates[item.right]) for item in items]

    def build(self, item: Item) -> Item | DroppedRow:
        # one generator per item, so an item's draw does not depend on the limit or on the other items' order
        rng = random.Random(stable_hash([self.options.get("seed", 0), item.id]))
        candidates, drawn_from = list(item.candidates), []
        for index in range(len(candidates)):
            if index == item.right:
                continue
            drawn = self._draw(rng, item.id, candidates)
            if drawn is None:
                return self.reject(item, "rewrite", {self.name: "no other story's ending to draw"}, "candidates")
            other, candidates[index] = drawn
            drawn_from.append(other)
        self.handled[self.name] += 1
        return _with(item, candidates=candidates, meta={**item.meta, "wrong_from": drawn_from})

    def _draw(self, rng: random.Random, item_id: str, candidates: list[str]) -> tuple[str, str] | None:
        # a few blind draws nearly always succeed; scanning the pool is the fallback that proves none is left
        for _ in range(32):
            other, text = self.pool[rng.randrange(len(self.pool))]
            if other != item_id and text not in candidates:
                return other, text
        eligible = [(other, text) for other, text in self.pool if other != item_id and text not in candidates]
        return rng.choice(eligible) if eligible else None


class ScmmluRewrite(CandidateBuilder):
    name = "scmmlu_rewrite"

    class Options(StrictSection):
        rewriters: list[Annotated[str, AfterValidator(REWRITERS.check)]] = ["rules"]  # tried in this order
        llm: LLMSettings | None = None  # the chat model of the ``llm`` rewriter

    def __init__(self, task: TaskConfig):
        from s2sbench.pipeline.items.rewrite.llm import LLMSettingsError

        super().__init__(task)
        try:
            self.rewriters = [
                get_rewriter(name, self.options.get("llm", {}) if name == "llm" else {})
                for name in self.options.get("rewriters", ["rules"])
            ]
        except LLMSettingsError as error:  # the shipped scmmlu.yaml asks for an LLM; a user may have none
            raise LLMSettingsError(f"{task.path}: key 'candidates.options.llm': {error}; without an LLM, "
                                   "'candidates.options.rewriters: [rules]' builds every question the rules take") from None
        self.by_rule: Counter[str] = Counter()

    def build(self, item: Item) -> Item | DroppedRow:
        question = Question(item.meta.get("question", item.context), tuple(item.candidates), item.right)
        reasons = {}
        for rewriter in self.rewriters:
            try:
                statements = rewriter.rewrite(question)
                check_statements(question, statements)
            except RewriteRejected as rejected:
                reasons[rewriter.name] = str(rejected)
                continue
            self.handled[rewriter.name] += 1
            meta = {**item.meta, "question": question.text, "options": list(question.options)}
            meta["rewriter"] = rewriter.name
            if statements.rule:
                meta["rule"] = statements.rule
                self.by_rule[statements.rule] += 1
            return _with(item, context=statements.first_half, candidates=list(statements.second_halves), meta=meta)
        return self.reject(item, "rewrite", reasons, "Question")

    def report(self) -> dict[str, Any]:
        return {**super().report(), "handled_by_rule": dict(self.by_rule)}


class Translate(CandidateBuilder):
    name = "translate"

    class Options(StrictSection):
        llm: LLMSettings | None = None  # the chat model that translates stories XStoryCloze does not have
        xstorycloze_zh: str | None = None  # the XStoryCloze zh release (a folder or one TSV file)

    def __init__(self, task: TaskConfig):
        super().__init__(task)
        self.professional: dict[str, list[str]] = {}
        if "xstorycloze_zh" in self.options:
            self.professional = _xstorycloze_texts(task, self.options["xstorycloze_zh"])
        self._translator = None

    def translator(self):
        if self._translator is None:
            from s2sbench.pipeline.items.rewrite.llm import make_chat
            from s2sbench.pipeline.items.rewrite.translate import StoryTranslator

            settings = self.options.get("llm", {})
            chat = make_chat(settings, f"{self.task.path}: key 'candidates.options.llm'")
            self._translator = StoryTranslator(chat, int(settings.get("max_tokens", 512)))
        return self._translator

    def build(self, item: Item) -> Item | DroppedRow:
        story_id = item.meta.get("story_id")
        sentences = item.meta.get("sentences")
        if not sentences:
            raise TaskConfigError(f"{self.task.path}: key 'candidates.construction': 'translate' needs story items")
        english = {"context": join_sentences(sentences, "en"), "candidates": item.candidates}
        if story_id in self.professional:
            lines, names, how = self.professional[story_id], {}, "xstorycloze"
        else:
            try:
                translation = self.translator().translate([*sentences, *item.candidates], story_id or item.id)
            except RewriteRejected as rejected:
                return self.reject(item, "rewrite", {"llm": str(rejected)}, "context")
            lines, names, how = list(translation.lines), translation.names, "llm"
        self.handled[how] += 1
        context = join_sentences(lines[: len(sentences)], self.task.language)
        meta = {"story_id": story_id, "translation": how, "names": names, "english": english}
        return _with(item, language=self.task.language, context=context, candidates=lines[len(sentences) :], meta=meta)


def _xstorycloze_texts(task: TaskConfig, location: str) -> dict[str, list[str]]:
    """story id -> the professional zh sentences and endings of XStoryCloze (names as its translators wrote them)."""
    from s2sbench.pipeline.items.sources.storycloze import HUB, ORIGINAL
    from s2sbench.pipeline.items.sources.xstorycloze import release_file_name

    path = task.resolve(location)
    texts = {}
    for split in ("train", "eval"):
        file = path / release_file_name("zh", split) if path.is_dir() else path
        if not file.exists():
            continue
        for row in read_table(file, {"delimiter": "\t"}):
            columns = HUB if HUB["right"] in row.values else ORIGINAL
            story_id = str(row.values.get(columns["id"], "")).strip()
            if story_id:
                texts[story_id] = [str(row.values[c]).strip() for c in columns["sentences"] + columns["endings"]]
        if not path.is_dir():
            break
    if not texts:
        raise TaskConfigError(f"{task.path}: key 'candidates.options.xstorycloze_zh': no zh stories in {path}")
    return texts


#: ``candidates.construction`` -> builder class (packages add theirs under ``s2sbench.candidates``)
BUILDERS: Registry[type[CandidateBuilder]] = Registry("candidate construction", {
    builder.name: builder for builder in (CandidateBuilder, RandomOther, ScmmluRewrite, Translate)
}, group="s2sbench.candidates")


def get_builder(task: TaskConfig) -> CandidateBuilder:
    return BUILDERS.get(task.candidates.construction, f"{task.path}: key 'candidates.construction'")(task)
