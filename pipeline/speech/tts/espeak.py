"""espeak-ng (the Debian/Homebrew binary): formant synthesis, fully deterministic, English and Mandarin.

Mandarin: espeak-ng's Hanzi voice ``cmn`` misreads many characters, so a voice with ``options: {pinyin: true}``
is fed numbered pinyin (pypinyin TONE3, neutral tone as 5) and read with the ``cmn-latn-pinyin`` voice.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
from pydantic import Field

from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.speech.tts.base import SynthesisError, TTSEngine, Voice, Waveform

# Full-width punctuation -> ASCII, so espeak-ng pauses at it instead of spelling it out.
_PUNCTUATION = str.maketrans({"，": ",", "。": ".", "！": "!", "？": "?", "；": ";", "：": ":", "、": ",",
                              "“": '"', "”": '"', "‘": "'", "’": "'", "（": "(", "）": ")", "《": '"', "》": '"'})


def to_numbered_pinyin(text: str) -> str:
    """Hanzi -> space-separated numbered pinyin (``你好。`` -> ``ni3 hao3 .``); other characters pass through."""
    from pypinyin import Style, lazy_pinyin

    syllables = lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True)
    return " ".join(syllables).translate(_PUNCTUATION)


@cache
def _binary() -> str:
    path = shutil.which("espeak-ng")
    if path is None:
        raise SynthesisError("espeak-ng is not installed (Debian: apt-get install espeak-ng; `make setup` does it)")
    return path


@cache
def _version() -> str:
    result = subprocess.run([_binary(), "--version"], capture_output=True, text=True, check=True)
    return result.stdout.split("Data at")[0].strip()


@cache
def _known_voices() -> frozenset[str]:
    # espeak-ng quietly falls back to its default voice for an unknown name, so names are checked here first.
    listing = subprocess.run([_binary(), "--voices"], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in listing.splitlines()[1:]:
        columns = line.split()
        if len(columns) >= 5:
            names.update({columns[1], columns[3], columns[4], columns[4].split("/")[-1]})
    return frozenset(name.lower() for name in names)


def _check_voice_name(voice: Voice) -> str:
    name = voice.model or "en-us"
    if name.split("+")[0].lower() not in _known_voices():
        raise SynthesisError(f"voice '{voice.id}': espeak-ng has no voice '{name}' (see `espeak-ng --voices`)")
    return name


class EspeakOptions(StrictSection):
    pinyin: bool = False  # read Hanzi as numbered pinyin (with the cmn-latn-pinyin voice)
    speed_wpm: int | None = Field(default=None, ge=80, le=450)  # espeak-ng's -s (its default 175)
    pitch: int | None = Field(default=None, ge=0, le=99)


class EspeakEngine(TTSEngine):
    """``voice.model`` is an espeak-ng voice name (``en-us``, ``cmn-latn-pinyin``); options: ``pinyin`` (bool),
    ``speed_wpm`` (int), ``pitch`` (0-99). The seed has no effect: espeak-ng has no randomness."""

    name = "espeak-ng"
    Options = EspeakOptions

    def model_version(self, voice: Voice) -> str:
        return f"{_version()};voice={voice.model or 'en-us'}"

    def missing(self, voice: Voice) -> str | None:
        return None if shutil.which("espeak-ng") else "espeak-ng is not installed (apt-get install espeak-ng)"

    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        import soundfile

        spoken = to_numbered_pinyin(text) if voice.options.get("pinyin") else text
        command = [_binary(), "-v", _check_voice_name(voice)]
        if "speed_wpm" in voice.options:
            command += ["-s", str(int(voice.options["speed_wpm"]))]
        if "pitch" in voice.options:
            command += ["-p", str(int(voice.options["pitch"]))]
        with tempfile.TemporaryDirectory(prefix="s2sbench-espeak-") as folder:
            wav = Path(folder) / "out.wav"
            # The text goes through stdin so it is never parsed as an option (a text starting with "-").
            result = subprocess.run(command + ["-w", str(wav), "--stdin"], input=spoken, capture_output=True, text=True)
            if result.returncode != 0:
                raise SynthesisError(f"espeak-ng failed (exit {result.returncode}): {result.stderr.strip()[:300]}")
            if not wav.exists() or wav.stat().st_size <= 44:
                raise SynthesisError(f"empty audio: espeak-ng wrote no samples for {spoken[:60]!r}")
            samples, rate = soundfile.read(wav, dtype="float32", always_2d=True)
        return Waveform(samples=np.ascontiguousarray(samples.mean(axis=1)), sample_rate_hz=int(rate))
