"""The typed records that carry data from source files to scores.

Each record serializes to one JSONL line (see :mod:`s2sbench.pipeline.manifest`). Units are in the names
(``duration_s``, ``sample_rate_hz``); error rates are fractions (0.12, never 12).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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
    right: int
    source: Source
    meta: dict[str, Any] = Field(default_factory=dict)

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


def clip_role(candidate: int | None) -> str:
    """The role of a clip within its item: ``context`` or ``candidate:K``."""
    return "context" if candidate is None else f"candidate:{candidate}"


class Clip(Record):
    """A synthesized, post-processed clip of one text of one item, stored by content hash."""

    key: str  # hash of everything that determines the audio (text, engine, model, voice, seed, post-processing)
    item_id: str
    role: str  # "context" | "candidate:K"
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


class ClipCheck(Record):
    """The verification of one synthesis attempt of a clip (one line of ``verification.jsonl``)."""

    item_id: str
    role: str
    attempt: int
    clip_key: str
    voice: str
    seed: int
    asr_model: str
    metric: Literal["wer", "cer", "none"]
    reference: str  # normalized reference text
    hypothesis: str  # normalized transcript
    transcript: str  # raw transcript
    error_rate: float | None
    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    passed: bool
    status: Literal["passed", "rejected", "unverified"]
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.item_id}@{self.voice}|{self.role}|{self.attempt}"


class BuildRow(Record):
    """One kept (item, voice) pair of a build: a line of ``manifest.jsonl`` and a row of the dataset."""

    id: str  # "<item id>@<voice>"
    item: Item
    voice: str
    clips: dict[str, Clip]  # role -> the clip that passed (or was unverified)
    checks: dict[str, ClipCheck]  # role -> the final check of that clip

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
    reason: str
