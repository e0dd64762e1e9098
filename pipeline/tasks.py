"""The task registry: one YAML file per task in ``data/tasks/`` (or any path a user passes).

A task says where its items come from, how candidates are built, how each mode is prompted, how it is scored,
which voices speak it and how the ASR gate checks the clips. Adding a task or a language is a YAML file, not code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from s2sbench.data import DATA_DIR
from s2sbench.pipeline.manifest import load_yaml

TASKS_DIR = DATA_DIR / "tasks"

# pairwise_*: the right candidate against each wrong one (ties wrong / ties right); argmin: the right candidate must
# have the lowest score of all (4-way accuracy for sCMMLU, chance 1/n).
ScoringRule = Literal["pairwise_strict", "pairwise_ties_right", "argmin"]


class TaskConfigError(ValueError):
    """A task file that cannot be used; the message names the file and the key."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LicenceConfig(Section):
    """The licence of a source's items, as the Hub card states it: a Hub licence id (SPDX, lower case:
    ``cc-by-sa-4.0``), or ``other`` with the licence's ``name`` and a ``link`` to its text. A string is the id."""

    id: str
    name: str | None = None
    link: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_id(cls, value: Any) -> Any:
        return {"id": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _other_is_named(self) -> "LicenceConfig":
        if self.id == "other" and not (self.name and self.link):
            raise ValueError("a licence 'other' needs its 'name' and a 'link' to its text")
        return self


class SourceConfig(Section):
    loader: str  # name in the loader registry (s2sbench.pipeline.sources)
    path: str | None = None  # local file or folder; relative paths resolve against the task file's folder's data root
    hub_id: str | None = None
    split: str | None = None
    # "error": a bad row stops the load with file, line and field; "drop": it is skipped and counted in the report
    on_bad_row: Literal["error", "drop"] = "error"
    options: dict[str, Any] = Field(default_factory=dict)
    licence: LicenceConfig | None = None  # default: the loader's known licence (pipeline/publish/card.py)


class CandidatesConfig(Section):
    construction: str = "source"  # "source" keeps the loader's candidates; other builders are registered by name
    options: dict[str, Any] = Field(default_factory=dict)


class Templates(Section):
    """Prompt templates; ``{context}`` is the context text (or its transcript), ``{continuation}`` the candidate.

    The scored span is the text that ``{continuation}`` produces (with the separator before it), never the context.
    """

    text_context: str = "{context} {continuation}"
    speech_context: str = "Below is a segment of alternating speech and text content: <audio>{continuation}"


class AsrConfig(Section):
    engine: str = "faster-whisper"
    model: str = "tiny.en"
    options: dict[str, Any] = Field(default_factory=dict)


class SpeechRate(Section):
    """Bounds on how fast a clip speaks its reference text: words per second, or characters per second for
    languages scored by CER (zh, ja), measured over the voiced span of the clip."""

    min_per_s: float = Field(gt=0)
    max_per_s: float = Field(gt=0)


def _default_speech_rates() -> dict[str, SpeechRate]:
    # generous bounds around normal read speech (en about 2.5 words/s, zh about 4-5 characters/s): they catch
    # truncated, stalled or garbled clips, not a fast voice
    return {
        "en": SpeechRate(min_per_s=1.0, max_per_s=5.5),
        "zh": SpeechRate(min_per_s=1.5, max_per_s=9.0),
        "ja": SpeechRate(min_per_s=2.0, max_per_s=12.0),
        "default": SpeechRate(min_per_s=0.7, max_per_s=9.0),
    }


class GateConfig(Section):
    # languages written without spaces (zh, ja, ...) are always scored by CER, whatever this says
    metric: Literal["wer", "cer"] = "wer"
    max_error_rate: float = Field(default=0.15, ge=0.0, le=1.0)
    max_attempts: int = Field(default=2, ge=1)
    asr: AsrConfig = Field(default_factory=AsrConfig)
    speech_rate: dict[str, SpeechRate] = Field(default_factory=_default_speech_rates)  # language (or "default")
    max_internal_silence_s: float = Field(default=1.5, gt=0)  # longest pause allowed between the first and last word
    silence_threshold_db: float = Field(default=-40.0, lt=0)  # frames this far below the clip's peak count as silent
    max_ngram_repeats: int = Field(default=3, ge=1)  # an n-gram (n <= 4) repeated back to back more often: a loop
    max_length_ratio: float = Field(default=1.5, gt=1)  # transcript length over reference length, in words/chars


class TaskConfig(Section):
    name: str
    version: int = 1
    language: str
    description: str = ""
    source: SourceConfig
    candidates: CandidatesConfig = Field(default_factory=CandidatesConfig)
    templates: Templates = Field(default_factory=Templates)
    scoring: ScoringRule = "pairwise_strict"
    also_report: list[ScoringRule] = Field(default_factory=list)  # further rules reported beside ``scoring``
    voices: list[str] = Field(min_length=1)
    speak: list[Literal["context", "candidates"]] = Field(default_factory=lambda: ["context"])
    config_per_voice: bool = False  # the dataset (and its Hub repo) has a config per voice, not one for the task
    gate: GateConfig = Field(default_factory=GateConfig)
    limit: int | None = None
    path: Path | None = Field(default=None, exclude=True)  # the YAML file it was read from

    def resolve(self, relative: str) -> Path:
        """A path from the task file: absolute as given, else relative to the data folder."""
        # environment variables let one checked-in task file point at each user's copy of a licensed source
        candidate = Path(os.path.expandvars(relative)).expanduser()
        if candidate.is_absolute():
            return candidate
        for base in ([self.path.parent] if self.path else []) + [DATA_DIR]:
            if (base / candidate).exists():
                return base / candidate
        return DATA_DIR / candidate


def load_task(name_or_path: str | Path) -> TaskConfig:
    """Load a task by registry name (``demo-stories-en``) or by YAML path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = TASKS_DIR / f"{name_or_path}.yaml"
        if not path.exists():
            known = ", ".join(sorted(task_names())) or "none"
            raise TaskConfigError(f"unknown task '{name_or_path}' (known: {known}); or pass a path to a YAML file")
    raw = load_yaml(path, TaskConfigError)
    if not isinstance(raw, dict):
        raise TaskConfigError(f"{path}: expected a mapping at the top level")
    try:
        task = TaskConfig.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise TaskConfigError(f"{path}: key '{key}': {first['msg']}") from None
    return task.model_copy(update={"path": path.resolve()})


def task_names() -> list[str]:
    return sorted(path.stem for path in TASKS_DIR.glob("*.yaml"))
