from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from s2sbench.evaluation.models.base import Audio
from s2sbench.evaluation.protocol.modes import EvalItem, ProtocolError, build_requests, mode_slug
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.items.templates import TemplateError, Templates, text_context_parts

EN = load_task("demo-stories-en").templates
ZH = load_task("demo-stories-zh").templates
CONTEXT = Audio(np.zeros(1600, dtype=np.float32))
ENDINGS = (Audio(np.ones(800, dtype=np.float32)), Audio(np.ones(900, dtype=np.float32)))


def item(**changes) -> EvalItem:
    base = dict(item_id="i1", task="t", language="en", voice="v", context="He sat down.",
                candidates=("He slept.", "He flew."), right=0, context_audio=CONTEXT, candidate_audio=ENDINGS)  # fmt: skip
    return EvalItem(**{**base, **changes})


def test_text_to_text_moves_the_separator_into_the_continuation():
    english = build_requests(item(), EN, "T->T")
    assert [(r.context, r.continuation) for r in english] == [("He sat down.", " He slept."), ("He sat down.", " He flew.")]
    chinese = build_requests(item(context="他坐下了。", candidates=("他睡了。", "他飞了。")), ZH, "T->T")
    assert [(r.context, r.continuation) for r in chinese] == [("他坐下了。", "他睡了。"), ("他坐下了。", "他飞了。")]
    assert len({r.group for r in english}) == 1


def test_speech_to_text_puts_the_audio_where_the_template_says():
    requests = build_requests(item(), EN, "S->T")
    assert requests[0].context is CONTEXT
    assert requests[0].context_prefix == "Below is a segment of alternating speech and text content: "
    assert [r.continuation for r in requests] == ["He slept.", "He flew."]
    zh = build_requests(item(), ZH, "S->T")
    assert zh[0].context_prefix == "下面是一段语音和文本交错的内容："


def test_speech_continuations_use_the_candidate_audio():
    s2s = build_requests(item(), EN, "S->S")
    assert s2s[0].context is CONTEXT and [r.continuation for r in s2s] == list(ENDINGS)
    t2s = build_requests(item(), EN, "T->S")
    assert t2s[0].context == "He sat down." and t2s[1].continuation is ENDINGS[1]


def test_missing_audio_and_bad_templates_are_errors():
    with pytest.raises(ProtocolError, match="item 'i1'.*S->S needs audio for each of its 2 candidates"):
        build_requests(item(candidate_audio=None), EN, "S->S")
    with pytest.raises(ProtocolError, match="item 'i1'.*needs context audio"):
        build_requests(item(context_audio=None), EN, "S->T")
    with pytest.raises(TemplateError, match="must end with"):
        text_context_parts("{context} {continuation}.", "x")
    # a template is checked when the task is read, not when the first item is scored
    with pytest.raises(ValidationError, match="no <audio>"):
        Templates(speech_context="Listen: {continuation}")
    with pytest.raises(ValidationError, match=r"\{foo\} is not a placeholder of text_context \(known: \{context\}"):
        Templates(text_context="{context} {foo} {continuation}")
    with pytest.raises(ConfigError, match=r"unknown mode 'S2T' \(known: T->T, S->T, S->S, T->S\)"):
        mode_slug("S2T")
