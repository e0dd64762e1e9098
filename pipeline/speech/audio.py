"""Audio post-processing of synthesized clips and the content-addressed clip store.

Every clip, whatever engine made it, leaves here as float32 mono at 16 kHz with its leading and trailing silence
trimmed and its loudness set to one level (ITU-R BS.1770 integrated loudness, K-weighted and gated), so that a
model sees the voices differ in voice, not in level or padding. Empty or clipped engine output is rejected with
:class:`~s2sbench.pipeline.speech.tts.base.SynthesisError`.

The store keeps each clip once, named by the SHA-256 of its WAV bytes, plus a small JSON per clip key (the hash of
everything that determined the audio) pointing at it; both are written atomically, so several builds and tasks can
share one store, and a killed build leaves no half-written clip. Every read checks the bytes against their name: a
truncated, zeroed or replaced file is never used (a lookup misses, so the clip is made again). Paths always come
from the hash, never from a key file, so nothing outside the store's ``audio/`` folder is ever read.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import wave
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.core.manifest import atomic_write_bytes, atomic_write_text, sha256_bytes, sha256_file
from s2sbench.pipeline.speech.tts.base import SynthesisError, Waveform

log = logging.getLogger(__name__)

# Part of every clip key: bump it when the post-processing code changes what it outputs.
POSTPROCESS_VERSION = 1
STORE_ENV = "S2SBENCH_CLIP_STORE"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class ClipIntegrityError(DataError):
    """A clip whose audio is missing from the store or does not hash to the SHA-256 its records hold."""


@dataclass(frozen=True)
class AudioSettings:
    sample_rate_hz: int = 16000
    trim: bool = True
    trim_top_db: float = 40.0  # frames quieter than the loudest frame by more than this are silence
    trim_pad_s: float = 0.1  # silence kept before and after the speech
    loudness_lufs: float | None = -23.0  # None keeps the engine's level
    peak_ceiling_dbfs: float = -1.0  # the loudness gain is reduced so no peak exceeds this
    max_clipped_fraction: float = 0.001  # engine output with more samples than this at full scale is rejected
    min_duration_s: float = 0.2  # shorter than this after trimming counts as empty

    def fingerprint(self) -> dict:
        return {**asdict(self), "postprocess_version": POSTPROCESS_VERSION}


def postprocess(wave_in: Waveform, settings: AudioSettings) -> np.ndarray:
    """Resample to ``settings.sample_rate_hz`` mono float32, trim silence, normalize loudness; reject bad audio."""
    samples = np.asarray(wave_in.samples, dtype=np.float32)
    if samples.ndim != 1:
        raise SynthesisError(f"expected mono samples (one dimension), got shape {samples.shape}")
    if samples.size == 0:
        raise SynthesisError("empty audio: the engine returned no samples")
    if not np.all(np.isfinite(samples)):
        raise SynthesisError("broken audio: the engine returned NaN or infinite samples")
    clipped = float(np.mean(np.abs(samples) >= 0.999))
    if clipped > settings.max_clipped_fraction:
        raise SynthesisError(f"clipped audio: {clipped:.2%} of samples at full scale (max {settings.max_clipped_fraction:.2%})")
    if wave_in.sample_rate_hz != settings.sample_rate_hz:
        samples = resample(samples, wave_in.sample_rate_hz, settings.sample_rate_hz)
    if settings.trim:
        samples = trim_silence(samples, settings.sample_rate_hz, settings.trim_top_db, settings.trim_pad_s)
    duration_s = samples.size / settings.sample_rate_hz
    if duration_s < settings.min_duration_s or float(np.sqrt(np.mean(samples**2))) < 1e-4:
        raise SynthesisError(f"empty audio: {duration_s:.2f} s of speech after trimming (min {settings.min_duration_s} s)")
    if settings.loudness_lufs is not None:
        gain_db = settings.loudness_lufs - integrated_loudness(samples, settings.sample_rate_hz)
        peak_db = 20 * np.log10(float(np.max(np.abs(samples))))
        gain_db = min(gain_db, settings.peak_ceiling_dbfs - peak_db)
        samples = samples * np.float32(10 ** (gain_db / 20))
    return samples.astype(np.float32)


def resample(samples: np.ndarray, from_hz: int, to_hz: int) -> np.ndarray:
    """soxr's high-quality resampler, sample for sample what ``librosa.resample(res_type="soxr_hq")`` returns (it calls
    soxr, then pads or cuts to ceil(n * to_hz / from_hz) samples), without importing librosa's core and its numba
    kernels: about 1 s of CPU in every process that makes a clip."""
    import soxr

    resampled = soxr.resample(samples, from_hz, to_hz, quality="soxr_hq")
    size = int(np.ceil(samples.size * float(to_hz) / from_hz))
    resampled = resampled[:size] if resampled.size >= size else np.pad(resampled, (0, size - resampled.size))
    return np.asarray(resampled, dtype=np.float32)


def _frame_rms_db(samples: np.ndarray, frame: int, hop: int) -> np.ndarray:
    padded = np.pad(samples, (0, max(0, frame - samples.size)))
    count = 1 + (padded.size - frame) // hop
    frames = np.lib.stride_tricks.as_strided(padded, (count, frame), (padded.strides[0] * hop, padded.strides[0]))
    return 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)


def trim_silence(samples: np.ndarray, sample_rate_hz: int, top_db: float, pad_s: float) -> np.ndarray:
    """Cut leading and trailing frames more than ``top_db`` below the loudest frame, keeping ``pad_s`` around."""
    frame, hop = int(0.025 * sample_rate_hz), int(0.010 * sample_rate_hz)
    levels = _frame_rms_db(samples, frame, hop)
    loud = np.flatnonzero(levels > max(levels.max() - top_db, -80.0))
    if loud.size == 0:
        return samples[:0]
    pad = int(pad_s * sample_rate_hz)
    start = max(0, loud[0] * hop - pad)
    end = min(samples.size, loud[-1] * hop + frame + pad)
    return samples[start:end]


def _biquad(kind: str, fc: float, q: float, gain_db: float, rate: float) -> tuple[np.ndarray, np.ndarray]:
    # Robert Bristow-Johnson's cookbook filters; the BS.1770 K-weighting is a high shelf then a high pass, with
    # pyloudnorm's parameters, which match the standard's 48 kHz coefficients and carry over to any rate.
    a_gain, w0 = 10 ** (gain_db / 40), 2 * np.pi * fc / rate
    alpha, cos_w0 = np.sin(w0) / (2 * q), np.cos(w0)
    if kind == "high_shelf":
        root = 2 * np.sqrt(a_gain) * alpha
        b = [a_gain * ((a_gain + 1) + (a_gain - 1) * cos_w0 + root), -2 * a_gain * ((a_gain - 1) + (a_gain + 1) * cos_w0),
             a_gain * ((a_gain + 1) + (a_gain - 1) * cos_w0 - root)]
        a = [(a_gain + 1) - (a_gain - 1) * cos_w0 + root, 2 * ((a_gain - 1) - (a_gain + 1) * cos_w0),
             (a_gain + 1) - (a_gain - 1) * cos_w0 - root]
    else:
        b = [(1 + cos_w0) / 2, -(1 + cos_w0), (1 + cos_w0) / 2]
        a = [1 + alpha, -2 * cos_w0, 1 - alpha]
    return np.array(b) / a[0], np.array(a) / a[0]


def integrated_loudness(samples: np.ndarray, sample_rate_hz: int) -> float:
    """ITU-R BS.1770-4 integrated loudness (LUFS) of a mono signal: K-weighting, 400 ms blocks, two gates."""
    from scipy.signal import lfilter

    weighted = samples.astype(np.float64)
    for kind, fc, q, gain in (("high_shelf", 1500.0, 1 / np.sqrt(2), 4.0), ("high_pass", 38.0, 0.5, 0.0)):
        b, a = _biquad(kind, fc, q, gain, sample_rate_hz)
        weighted = lfilter(b, a, weighted)
    block, hop = int(0.4 * sample_rate_hz), int(0.1 * sample_rate_hz)
    if weighted.size < block:
        powers = np.array([np.mean(weighted**2)])
    else:
        starts = range(0, weighted.size - block + 1, hop)
        powers = np.array([np.mean(weighted[s : s + block] ** 2) for s in starts])
    loudness = -0.691 + 10 * np.log10(powers + 1e-12)
    gated = powers[loudness > -70.0]
    if gated.size == 0:
        return -70.0
    relative = -0.691 + 10 * np.log10(np.mean(gated)) - 10.0
    gated = gated[-0.691 + 10 * np.log10(gated) > relative]
    return float(-0.691 + 10 * np.log10(np.mean(gated)))


def wav_bytes(samples: np.ndarray, sample_rate_hz: int) -> bytes:
    """16-bit PCM mono WAV; written with the standard library so the bytes depend on the samples only."""
    pcm = np.clip(np.round(samples * 32767.0), -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate_hz)
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def pcm16_samples(data: bytes, what: object) -> tuple[np.ndarray, int]:
    """The float32 samples and rate of a 16-bit mono WAV as the clip store writes; anything else (a truncated or
    corrupt file, another format) is a :class:`ClipIntegrityError` naming ``what``."""
    try:
        with wave.open(io.BytesIO(data), "rb") as handle:
            if handle.getsampwidth() != 2 or handle.getnchannels() != 1:
                raise ClipIntegrityError(f"{what}: expected 16-bit mono WAV as the clip store writes")
            pcm = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2")
            # over 32768, as libsndfile (soundfile, datasets, torchaudio) reads the same file: the gate hears the
            # samples a user of the dataset gets, and Whisper's beam search turns on a 1/32767 difference in gain
            return (pcm.astype(np.float32) / 32768.0), handle.getframerate()
    except (wave.Error, EOFError) as error:
        raise ClipIntegrityError(f"{what}: not a readable WAV file ({error})") from None


def decode_audio(source: bytes | str | Path, what: object) -> tuple[np.ndarray, int]:
    """float32 mono samples and rate of an audio file or its bytes (any format libsndfile reads); an unreadable one
    is a :class:`ClipIntegrityError` naming ``what``."""
    import soundfile

    try:
        samples, rate = soundfile.read(io.BytesIO(source) if isinstance(source, bytes) else source, dtype="float32",
                                       always_2d=True)
    except (RuntimeError, EOFError) as error:  # libsndfile cannot read it
        raise ClipIntegrityError(f"{what}: not a readable audio file ({error})") from None
    return np.ascontiguousarray(samples.mean(axis=1)), int(rate)


@dataclass(frozen=True)
class StoredClip:
    """What the store knows of a clip key: where its audio is and how long it is."""

    key: str
    audio_sha256: str
    path: str  # relative to the store root
    sample_rate_hz: int
    duration_s: float


class ClipStore:
    """Content-addressed clips: ``audio/<sha[:2]>/<sha>.wav`` and ``keys/<key[:2]>/<key>.json``."""

    def __init__(self, root: Path | None = None):
        default = os.environ.get(STORE_ENV) or Path.home() / ".cache" / "s2sbench" / "clips"
        # absolute: the build report records it, and a later command may run from another folder
        self.root = Path(root if root is not None else default).expanduser().absolute()
        self.damaged: list[str] = []  # audio files found not to hash to their name (by this instance)

    def abspath(self, relpath: str) -> Path:
        return self.root / relpath

    @staticmethod
    def audio_path(audio_sha256: str) -> str:
        """Where the audio with this hash lives, relative to the root (the only files the store ever reads)."""
        if not isinstance(audio_sha256, str) or not _SHA256.fullmatch(audio_sha256):
            raise ClipIntegrityError(f"{audio_sha256!r} is not a SHA-256 (64 lower-case hex digits)")
        return f"audio/{audio_sha256[:2]}/{audio_sha256}.wav"

    def intact(self, audio_sha256: str) -> bool:
        """Whether the audio with this hash is in the store, whole; a damaged file is remembered in ``damaged``."""
        path = self.abspath(self.audio_path(audio_sha256))
        if not path.is_file():
            return False
        if sha256_file(path) == audio_sha256:
            return True
        self.damaged.append(str(path))
        log.warning("clip store: %s does not hash to its name (truncated or overwritten?); it is not used", path)
        return False

    def _sha_of(self, relpath: str) -> str:
        head, _, name = str(relpath).rpartition("/")
        digest = name.removesuffix(".wav")
        if not _SHA256.fullmatch(digest) or relpath != self.audio_path(digest):
            raise ClipIntegrityError(f"{relpath!r} is not a clip of the store {self.root} (audio/<sha[:2]>/<sha>.wav)")
        return digest

    def read_bytes(self, relpath: str, what: str = "clip") -> bytes:
        """The WAV bytes at ``relpath``, checked against the hash they are named by: :class:`ClipIntegrityError`
        naming ``what`` if they are missing or damaged."""
        digest = self._sha_of(relpath)
        path = self.abspath(relpath)
        data = path.read_bytes() if path.is_file() else None
        if data is None or sha256_bytes(data) != digest:
            problem = "is missing" if data is None else "does not hash to its name (truncated or overwritten)"
            raise ClipIntegrityError(f"{what}: {path} in the clip store {problem}")
        return data

    def load(self, relpath: str, what: str = "clip") -> np.ndarray:
        """The samples of the clip at ``relpath`` (checked, see :meth:`read_bytes`)."""
        return pcm16_samples(self.read_bytes(relpath, what), what)[0]

    def _key_path(self, key: str) -> Path:
        return self.root / "keys" / key[:2] / f"{key}.json"

    def _entry(self, key: str) -> dict | None:
        path = self._key_path(key)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def lookup(self, key: str) -> StoredClip | None:
        """The clip stored under ``key``, or None (also when its audio has gone missing or is damaged)."""
        entry = self._entry(key)
        if entry is None or "rejected" in entry:
            return None
        digest = entry.get("audio_sha256", "")
        if not _SHA256.fullmatch(str(digest)) or not self.intact(digest):
            return None
        return StoredClip(key=key, audio_sha256=digest, path=self.audio_path(digest),
                          sample_rate_hz=entry["sample_rate_hz"], duration_s=entry["duration_s"])

    def rejection(self, key: str) -> str | None:
        """Why the audio made for ``key`` was rejected (empty, clipped), if it was: the same inputs give it again."""
        entry = self._entry(key)
        return entry.get("rejected") if entry is not None else None

    def put_rejection(self, key: str, reason: str, provenance: dict) -> None:
        atomic_write_text(self._key_path(key), json.dumps({"key": key, "rejected": reason, **provenance},
                                                          ensure_ascii=False, indent=1))

    def put(self, key: str, samples: np.ndarray, sample_rate_hz: int, provenance: dict) -> StoredClip:
        """Store ``samples`` (once per content; a damaged copy is replaced) and record ``key`` -> it."""
        return self._put(key, wav_bytes(samples, sample_rate_hz), sample_rate_hz, samples.size / sample_rate_hz, provenance)

    def put_wav(self, key: str, data: bytes, provenance: dict) -> StoredClip:
        """Store WAV bytes made elsewhere as they are (an import of the original layout) and record ``key`` -> them."""
        import soundfile

        try:
            info = soundfile.info(io.BytesIO(data))
        except RuntimeError as error:  # libsndfile cannot read it
            raise ClipIntegrityError(f"{provenance.get('source', key)}: not a readable WAV file ({error})") from None
        return self._put(key, data, info.samplerate, info.frames / info.samplerate, provenance)

    def _put(self, key: str, data: bytes, sample_rate_hz: int, duration_s: float, provenance: dict) -> StoredClip:
        digest = sha256_bytes(data)
        relpath = self.audio_path(digest)
        if not self.intact(digest):
            atomic_write_bytes(self.abspath(relpath), data)
        clip = StoredClip(key=key, audio_sha256=digest, path=relpath, sample_rate_hz=sample_rate_hz,
                          duration_s=round(duration_s, 4))
        atomic_write_text(self._key_path(key), json.dumps({**asdict(clip), **provenance}, ensure_ascii=False, indent=1))
        return clip
