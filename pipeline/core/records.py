"""The typed records that carry data from source files to scores.

Each record serializes to one JSONL line (see :mod:`s2sbench.pipeline.core.manifest`). Units are in the names
(``duration_s``, ``sample_rate_hz``); error rates are fractions (0.12, never 12). Values that other code used to
parse back out of strings are records of their own: a clip's :class:`Role` and every :class:`Reason` (a code that
counts, and a detail that explains).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, StrictInt, field_validator, model_validator
from pydantic_core import core_schema

from s2sbench.pipeline.core.errors import ConfigError

#: bump when a record of a build folder changes shape; a folder of another version is refused with a clear message
#: (1 was the untyped layout before BuildDir: string drop reasons, no schema_version; 2 had one dataset split per task,
#: results.json a build_dir and no standard errors)
SCHEMA_VERSION = 3

_SAFE_NAME = re.compile(r"[^\W_][\w.-]*")


class UnsafeNameError(ConfigError):
    """A name or id that becomes part of a path but could leave its folder (``../x``, ``a/b``, an empty name)."""


def safe_component(value: str, what: str) -> str:
    """``value`` if it can be one path component (letters, digits, '.', '-', '_', starting with a letter or digit),
    else :class:`UnsafeNameError` naming ``what`` (for example "task file x.yaml: field 'name'")."""
    if not isinstance(value, str) or not _SAFE_NAME.fullmatch(value):
        raise UnsafeNameError(
            f"{what}: {value!r} cannot name a file or folder (use letters, digits, '.', '-' and '_', starting with a "
            "letter or digit; no '/', no '..')"
        )
    return value


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(Record):
    """Where an item came from: the file (or hub id) and the 1-based row of that file."""

    file: str
    row: int


class Item(Record):
    """One benchmark item: a context and candidate continuations, one of which is right."""

    id: str = Field(min_length=1)
    task: str = Field(min_length=1)
    language: str = Field(min_length=2)
    context: str
    candidates: list[str]
    right: StrictInt  # an index: ``true`` is not 1
    source: Source
    meta: dict[str, Any] = Field(default_factory=dict)
    # role (context, candidate:K) -> the text as a voice reads it (numbers, units, letters written out in the task's
    # language), for the roles the task speaks: what the clips say and the gate compares with
    spoken: dict[str, str] = Field(default_factory=dict)

    @field_validator("context")
    @classmethod
    def _context_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("empty context")
        return value

    @field_validator("candidates")
    @classmethod
    def _candidates_valid(cls, value: list[str]) -> list[str]:
        if len(value) < 2:
            raise ValueError(f"need at least 2 candidates, got {len(value)}")
        for index, text in enumerate(value):
            if not text.strip():
                raise ValueError(f"candidate {index} is empty")
        if len(set(value)) != len(value):
            raise ValueError("candidates are not distinct")
        return value

    @model_validator(mode="after")
    def _right_in_range(self) -> "Item":
        if not 0 <= self.right < len(self.candidates):
            raise ValueError(f"right={self.right} is out of range for {len(self.candidates)} candidates")
        return self


class Role(str):
    """The part of an item a clip speaks: ``context`` or ``candidate:K``. Parsed once when a record is read; code
    asks :attr:`candidate` and :attr:`is_context` instead of splitting the string. Serializes as its text, so
    manifests and dict keys stay readable and equal to the plain string."""

    candidate: int | None

    def __new__(cls, value: "str | Role") -> "Role":
        if isinstance(value, Role):
            return value
        text = str(value)
        if text == "context":
            candidate = None
        else:
            kind, _, index = text.partition(":")
            if kind != "candidate" or not (index.isascii() and index.isdigit()) or (len(index) > 1 and index[0] == "0"):
                raise ValueError(f"role {text!r} is neither 'context' nor 'candidate:K'")
            candidate = int(index)
        role = super().__new__(cls, text)
        role.candidate = candidate
        return role

    @classmethod
    def context(cls) -> "Role":
        return cls("context")

    @classmethod
    def of_candidate(cls, index: int) -> "Role":
        return cls(f"candidate:{index}")

    @property
    def is_context(self) -> bool:
        return self.candidate is None

    def text_of(self, item: "Item") -> str:
        """The text of ``item`` this role speaks ("" for a candidate the item does not have)."""
        if self.candidate is None:
            return item.context
        return item.candidates[self.candidate] if self.candidate < len(item.candidates) else ""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(), serialization=core_schema.plain_serializer_function_ser_schema(str)
        )


class Reason(Record):
    """Why something was rejected or dropped: a short ``code`` that reports count by (``error_rate``,
    ``synthesis_failed``, ...) and a ``detail`` for people."""

    code: str = Field(min_length=1)
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}" if self.detail else self.code


class Clip(Record):
    """A synthesized, post-processed clip of one text of one item, stored by content hash."""

    key: str  # hash of everything that determines the audio (text, engine, model, voice, seed, post-processing)
    item_id: str
    role: Role
    text: str
    normalized_text: str
    voice: str
    engine: str
    model_version: str
    seed: int
    audio_sha256: str
    path: str  # relative to the clip store root
    sample_rate_hz: int
    duration_s: float
    condition: str = ""  # the acoustic condition it was derived under ("": the clean clip the gate passed)


class ClipCheck(Record):
    """The verification of one synthesis attempt of a clip (one line of ``verification.jsonl``)."""

    item_id: str
    role: Role
    attempt: int
    clip_key: str
    voice: str
    seed: int
    rate: float = 1.0  # speaking rate of this attempt, times the voice's own (gate.retries)
    reading: Literal["usual", "alternate"] = "usual"  # the engine's usual reading of the text or its other one
    asr_model: str
    metric: Literal["wer", "cer", "ser", "ker", "none"]
    reference: str  # normalized reference text
    hypothesis: str  # normalized transcript
    transcript: str  # raw transcript
    # the reference as written (the clip's text), where the normalized one is in a script the judge does not write
    # (Japanese: kana readings); the reference margin scores it against the raw transcript
    written: str = ""
    error_rate: float | None
    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    passed: bool
    status: Literal["passed", "rejected", "unverified"]
    reasons: tuple[Reason, ...] = ()  # why it was rejected (every failed check), or why it is unverified
    # log P(reference) - log P(transcript) under the judge, in nats, for a clip that failed on its error rate alone
    # (gate.reference_margin_nats); kept_on_reference: passed on it after every attempt of the clip failed
    reference_margin: float | None = None
    kept_on_reference: bool = False

    @property
    def id(self) -> str:
        return f"{self.item_id}@{self.voice}|{self.role}|{self.attempt}"

    @property
    def reason(self) -> str:
        """The reasons as one line of text, for people."""
        return "; ".join(str(reason) for reason in self.reasons)


class BuildRow(Record):
    """One kept (item, voice) pair of a build: a line of ``manifest.jsonl`` and a row of the dataset."""

    id: str  # "<item id>@<voice>"
    item: Item
    voice: str
    clips: dict[Role, Clip]  # role -> the clip that passed (or was unverified)
    checks: dict[Role, ClipCheck]  # role -> the final check of that clip

    @staticmethod
    def make_id(item_id: str, voice: str) -> str:
        return f"{item_id}@{voice}"


class Drop(Record):
    """An item (or item x voice) that did not make it into the build, and why."""

    id: str
    task: str
    item_id: str
    voice: str = ""
    stage: Literal["load", "rewrite", "speak"]
    reason: Reason


class ConditionedRow(Record):
    """A kept row's clips under one acoustic condition, and what the gate's ASR heard of each (never a reason to drop
    the row: how hard the condition is for ASR is reported beside the model's accuracy)."""

    id: str  # the row's id, "<item id>@<voice>" (one file per task and condition)
    task: str
    condition: str
    item_id: str
    voice: str
    clips: dict[Role, Clip]
    checks: dict[Role, ClipCheck]
