"""Fixtures for the synthesis tests: a tiny random-weight Coqui VITS saved as a local model directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.speech.tts.base import Voice
from s2sbench.pipeline.speech.tts.coqui import tiny_random_vits


@pytest.fixture(scope="session")
def tiny_vits_dir(tmp_path_factory) -> Path:
    return tiny_random_vits(tmp_path_factory.mktemp("tiny-vits"))


@pytest.fixture
def coqui_voice(tiny_vits_dir) -> Voice:
    return Voice(id="coqui-tiny", engine="coqui", language="en", model=str(tiny_vits_dir), licence="test weights")


@pytest.fixture
def store(tmp_path) -> ClipStore:
    return ClipStore(tmp_path / "clips")
