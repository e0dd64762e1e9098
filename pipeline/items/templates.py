"""Prompt templates of a task, checked when the task file is read.

``text_context`` renders a text context: ``{context}`` is the context text, ``{continuation}`` the candidate, which
must end the template (text after it would be scored as if the model wrote it). ``speech_context`` renders a speech
context: ``<audio>`` stands for the context clip, then ``{continuation}``; it has no ``{context}`` (the audio is the
context). Any other ``{name}`` is an error: it would be scored as literal text.
"""

from __future__ import annotations

import re

from pydantic import field_validator

from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.schema import StrictSection

CONTEXT_SLOT = "{context}"
CONTINUATION_SLOT = "{continuation}"
AUDIO_SLOT = "<audio>"
PLACEHOLDERS = {"text_context": ("{context}", "{continuation}"), "speech_context": ("{continuation}",)}
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


class TemplateError(ConfigError):
    """A template that cannot be rendered as the protocol needs; the message names the template."""


def _split_at_continuation(template: str) -> str:
    head, slot, tail = template.partition(CONTINUATION_SLOT)
    if not slot:
        raise TemplateError(f"template {template!r} has no {CONTINUATION_SLOT}")
    if tail:
        raise TemplateError(f"template {template!r} must end with {CONTINUATION_SLOT} (found {tail!r} after it)")
    return head


def _move_trailing_space(prefix: str) -> tuple[str, str]:
    stripped = prefix.rstrip()
    return stripped, prefix[len(stripped):]


def text_context_parts(template: str, context: str) -> tuple[str, str]:
    """(rendered context, separator) of a text-context template; the separator starts every continuation."""
    head = _split_at_continuation(template)
    if CONTEXT_SLOT not in head:
        raise TemplateError(f"text template {template!r} has no {CONTEXT_SLOT} before {CONTINUATION_SLOT}")
    return _move_trailing_space(head.replace(CONTEXT_SLOT, context))


def speech_context_parts(template: str) -> tuple[str, str]:
    """(text before the audio, separator) of a speech-context template."""
    head = _split_at_continuation(template)
    prefix, slot, between = head.partition(AUDIO_SLOT)
    if not slot:
        raise TemplateError(f"speech template {template!r} has no {AUDIO_SLOT} before {CONTINUATION_SLOT}")
    if CONTEXT_SLOT in head:
        raise TemplateError(f"speech template {template!r} must not contain {CONTEXT_SLOT}: the audio is the context")
    return prefix, between


class Templates(StrictSection):
    """Prompt templates; the scored span is the text that ``{continuation}`` produces (with the separator before
    it), never the context."""

    text_context: str = "{context} {continuation}"
    speech_context: str = "Below is a segment of alternating speech and text content: <audio>{continuation}"

    @field_validator("text_context", "speech_context")
    @classmethod
    def _known_placeholders(cls, template: str, info) -> str:
        known = PLACEHOLDERS[info.field_name]
        for placeholder in _PLACEHOLDER.findall(template):
            if placeholder not in known:
                raise ValueError(f"{placeholder} is not a placeholder of {info.field_name} (known: {', '.join(known)}"
                                 + (f", and {AUDIO_SLOT} for the audio" if info.field_name == "speech_context" else "")
                                 + ")")  # fmt: skip
        try:
            if info.field_name == "text_context":
                text_context_parts(template, "")
            else:
                speech_context_parts(template)
        except TemplateError as error:
            raise ValueError(str(error)) from None
        return template
