"""Small real audio for test fixtures: tones whose pitch tells them apart, as 16 kHz PCM-16 WAV bytes."""

import numpy as np

from s2sbench.pipeline.audio import wav_bytes

SAMPLE_RATE_HZ = 16_000


def tone(frequency_hz: float, duration_s: float, amplitude: float = 0.3, rate: int = SAMPLE_RATE_HZ) -> np.ndarray:
    t = np.arange(int(duration_s * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * frequency_hz * t)).astype(np.float32)


def tone_wav(seed: int, duration_s: float) -> bytes:
    """A distinct 16 kHz wav per seed: a tone whose pitch depends on the seed."""
    return wav_bytes(tone(180 + 37 * seed, duration_s), SAMPLE_RATE_HZ)
