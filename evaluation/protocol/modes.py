"""The evaluation modes and the requests each mode asks a model to score.

A mode names what the context and the continuation are: ``T->T`` (text, text: the upper bound), ``S->T`` (speech
context, text continuation: the original S2SBench setting), ``S->S`` and ``T->S`` (continuation as speech, scored on
the model's speech tokens). Each mode renders the task's template for it; the scored span is the continuation only.

Text continuations follow lm-evaluation-harness's rule: the template is split at ``{continuation}`` and whitespace
that ends the context part moves into the continuation, so ``"{context} {continuation}"`` scores ``" " + ending``
after ``context`` (English), and ``"{context}{continuation}"`` scores ``ending`` (Chinese).
"""

from __future__ import annotations

from dataclasses import dataclass

from s2sbench.evaluation.models.base import Audio, Request
from s2sbench.pipeline.core.errors import ConfigError, DataError, unknown_name
from s2sbench.pipeline.items.templates import Templates, speech_context_parts, text_context_parts

TEXT_TO_TEXT = "T->T"
SPEECH_TO_TEXT = "S->T"
SPEECH_TO_SPEECH = "S->S"
TEXT_TO_SPEECH = "T->S"
MODES = (TEXT_TO_TEXT, SPEECH_TO_TEXT, SPEECH_TO_SPEECH, TEXT_TO_SPEECH)


class ProtocolError(DataError):
    """An item that cannot be rendered in a mode (no audio for it); the message names the item."""


class ModeError(ConfigError):
    """A mode asked for that the model, or the data, cannot give a score for."""


#: between a mode and an acoustic condition in a mode's name: ``S->T@babble5`` is S->T on the babble5 config's clips
CONDITION_MARK = "@"


def under_condition(mode: str, condition: str | None) -> str:
    """The name of ``mode`` scored on the clips of an acoustic condition (``mode`` itself for the clean clips)."""
    return mode if condition is None else f"{check_mode(mode)}{CONDITION_MARK}{condition}"


def split_mode(mode: str) -> tuple[str, str | None]:
    """(the protocol's mode, the acoustic condition or None) of a mode's name."""
    base, mark, condition = mode.partition(CONDITION_MARK)
    return base, (condition if mark else None)


def check_mode(mode: str) -> str:
    base, condition = split_mode(mode)
    if base not in MODES or condition == "" or (condition is not None and base[0] != "S"):
        raise ConfigError(unknown_name("mode", mode, MODES))
    return mode


def requested_modes(model: str, declared, requested) -> tuple[str, ...]:
    """The modes to score: ``requested`` (each one the model declares), or every mode it declares (None)."""
    declared = [mode for mode in MODES if mode in set(declared)]
    if requested is None:
        if not declared:
            raise ModeError(f"model '{model}' declares no modes; name them with --modes")
        return tuple(declared)
    modes = tuple(dict.fromkeys(check_mode(mode) for mode in requested))
    if not modes:
        raise ModeError(f"no modes to evaluate (choose among {', '.join(MODES)})")
    unknown = [mode for mode in modes if declared and mode not in declared]
    if unknown:
        raise ModeError(f"model '{model}' cannot score {', '.join(unknown)}: it scores {', '.join(declared)} only "
                        "(`s2sbench models` lists what each model scores)")  # fmt: skip
    return modes


def context_is_speech(mode: str) -> bool:
    return split_mode(check_mode(mode))[0][0] == "S"


def continuation_is_speech(mode: str) -> bool:
    return split_mode(check_mode(mode))[0][-1] == "S"


def mode_slug(mode: str) -> str:
    """A file-name-safe form of a mode: ``S->T`` -> ``S-T``, ``S->T@phone`` -> ``S-T@phone``."""
    return check_mode(mode).replace("->", "-")


@dataclass(frozen=True)
class EvalItem:
    """What the protocol needs of one dataset row (one item spoken by one voice)."""

    item_id: str
    task: str
    language: str
    voice: str
    context: str
    candidates: tuple[str, ...]
    right: int
    context_audio: Audio | None = None
    candidate_audio: tuple[Audio, ...] | None = None


def template_for(templates: Templates, mode: str) -> str:
    """The template a mode renders: the speech one when the context is speech, else the text one."""
    return templates.speech_context if context_is_speech(mode) else templates.text_context


def build_requests(item: EvalItem, templates: Templates, mode: str) -> list[Request]:
    """One request per candidate of ``item``, in candidate order, for ``mode``."""
    check_mode(mode)
    group = f"{item.task}/{item.item_id}@{item.voice}/{mode}"
    if context_is_speech(mode):
        if item.context_audio is None:
            raise ProtocolError(f"item '{item.item_id}' (voice '{item.voice}'): {mode} needs context audio")
        prefix, separator = speech_context_parts(templates.speech_context)
        context: str | Audio = item.context_audio
    else:
        prefix = ""
        context, separator = text_context_parts(templates.text_context, item.context)
    if continuation_is_speech(mode):
        audio = item.candidate_audio
        if audio is None or len(audio) != len(item.candidates):
            raise ProtocolError(
                f"item '{item.item_id}' (voice '{item.voice}'): {mode} needs audio for each of its "
                f"{len(item.candidates)} candidates"
            )
        continuations: list[str | Audio] = list(audio)
    else:
        continuations = [separator + text for text in item.candidates]
    return [
        Request(context=context, continuation=c, group=group, context_prefix=prefix, language=item.language)
        for c in continuations
    ]
