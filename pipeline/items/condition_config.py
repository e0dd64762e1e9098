"""The acoustic conditions a task file declares (``conditions:``), as the task file's schema reads them: one
section per type (noise, reverb, telephone, rate, gain), told apart by ``type``. What each does to a clip is the
speech layer's (:mod:`s2sbench.pipeline.speech.conditions`); this module only says what a valid condition is.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from s2sbench.pipeline.core.schema import StrictSection

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.]*(-[A-Za-z0-9_.]+)*")


class ConditionSpec(StrictSection):
    name: str  # part of the config name: ``<task>-<name>``

    @field_validator("name")
    @classmethod
    def _usable_name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError(f"'{value}' is not a condition name: letters, digits, '_', '.' and single '-' inside, "
                             "as in babble5 or phone-8k")  # fmt: skip
        return value

    def parameters(self) -> dict:
        """What decides the audio (everything but the name)."""
        return self.model_dump(mode="json", exclude={"name"})

    @property
    def folder_field(self) -> str | None:
        """The key naming a folder of files this condition draws from (noise, impulse responses), if it has one."""
        return None

    @property
    def folder(self) -> str | None:
        return getattr(self, self.folder_field) if self.folder_field else None


class NoiseCondition(ConditionSpec):
    type: Literal["noise"]
    snr_db: float  # speech power over noise power, over the whole clip
    # white, pink, babble (other clips of the same task summed), or a folder of the user's noise files (MUSAN ...)
    noise: str = "white"

    @property
    def folder_field(self) -> str | None:
        return None if self.noise in ("white", "pink", "babble") else "noise"


class ReverbCondition(ConditionSpec):
    type: Literal["reverb"]
    rt60_s: float | None = Field(default=None, gt=0, le=3.0)  # a simulated room with this reverberation time
    rirs: str | None = None  # or a folder of measured room impulse responses, one drawn per clip

    @property
    def folder_field(self) -> str | None:
        return "rirs" if self.rirs is not None else None

    @model_validator(mode="after")
    def _one_room(self) -> "ReverbCondition":
        if (self.rt60_s is None) == (self.rirs is None):
            raise ValueError("a reverb condition needs exactly one of 'rt60_s' (a simulated room) and 'rirs' (a folder)")
        return self


class TelephoneCondition(ConditionSpec):
    type: Literal["telephone"]  # 300-3400 Hz at 8 kHz through G.711 mu-law, back to 16 kHz


class RateCondition(ConditionSpec):
    type: Literal["rate"]
    factor: float = Field(ge=0.5, le=2.0)  # > 1 speaks faster; the pitch is kept


class GainCondition(ConditionSpec):
    type: Literal["gain"]
    db: float = Field(ge=-60.0, le=40.0)


Condition = Annotated[NoiseCondition | ReverbCondition | TelephoneCondition | RateCondition | GainCondition,
                      Field(discriminator="type")]  # fmt: skip
