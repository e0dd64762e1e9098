"""Acoustic conditions: deterministic transforms of clips that already passed the gate (noise, a room, a telephone
line, another speaking rate, another level), declared in a task file's ``conditions:`` list.

A condition costs no synthesis: the clean clip is read from the clip store, transformed with a seed drawn from the
clean clip's hash and the condition's parameters, and stored under its own content key (the clean clip, the
parameters, the noise it mixed in and the versions of the libraries that made it), so a rebuild gives the same
bytes and a killed build resumes. The output is neither trimmed nor loudness-normalized again: a condition changes
what a listener hears, and a gain condition keeps its level (samples beyond full scale clip, as a real channel does).

The signal processing is the maintained libraries' (docs/hand-written.md): audiomentations for coloured noise,
time stretching (Signalsmith Stretch), the
telephone band and gain; pyroomacoustics for simulated rooms; torchaudio for the G.711 mu-law codec; soxr for the 8 kHz line.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from functools import cache
from importlib import metadata
from pathlib import Path

import numpy as np

from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import sha256_file, stable_hash
from s2sbench.pipeline.core.records import BuildRow, Clip, ConditionedRow, Role
from s2sbench.pipeline.gate.verify import Verifier
from s2sbench.pipeline.items.condition_config import (
    ConditionSpec,
    NoiseCondition,
    RateCondition,
    ReverbCondition,
    TelephoneCondition,
)
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.speech.audio import ClipStore

#: Part of every condition clip's key: bump it when this module changes what a condition outputs.
CONDITIONS_VERSION = 1
LIBRARIES = ("audiomentations", "pyroomacoustics", "python-stretch", "soxr", "torchaudio", "numpy", "scipy")
#: other clips of the task summed into the babble of one clip: enough voices that no single word stands out
BABBLE_TALKERS = 4
TELEPHONE_RATE_HZ = 8000
TELEPHONE_BAND_HZ = (300.0, 3400.0)  # the ITU-T G.712 pass band of a telephone channel
#: the simulated room of a reverb condition (metres): a living room, the talker 1 m from the microphone
ROOM_SIZE_M = (5.0, 4.0, 2.8)
ROOM_TALKER_M = (2.0, 2.0, 1.5)
ROOM_MICROPHONE_M = (3.0, 2.0, 1.5)
AUDIO_FILES = (".wav", ".flac", ".mp3", ".ogg")


class ConditionError(ConfigError):
    """A condition that cannot be applied (a noise folder with no audio, too few clips for babble)."""


def check_conditions(task: TaskConfig, items: int) -> None:
    """Refuse, before any clip is made, a condition this build of ``items`` items could never apply: babble in a
    build that speaks fewer than two context clips (each clip's babble is other clips of the task), or a folder of
    noise or impulse responses that is missing or holds no audio. The error names the task file and the key."""
    where = str(task.path) if task.path else f"task {task.name}"
    for index, condition in enumerate(task.conditions):
        key = f"conditions[{index}] ({condition.name})"
        if getattr(condition, "noise", "") == "babble":
            clips = items * len(task.voices) if "context" in task.speak else 0
            if clips < 2:
                raise ConditionError(
                    f"{where}: key '{key}.noise': babble mixes other context clips of the task, and this build speaks "
                    f"{clips} ({items} item(s) x {len(task.voices)} voice(s)): it needs at least 2; build more items "
                    "or voices, or use noise: white or pink")  # fmt: skip
        if condition.folder is not None:
            folder = str(task.resolve(condition.folder))
            try:
                audio_files(folder)
            except ConditionError as error:
                raise ConditionError(f"{where}: key '{key}.{condition.folder_field}': {error}") from None


def library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


@cache
def audio_files(folder: str) -> tuple[tuple[str, str], ...]:
    """(path, SHA-256) of the audio files under ``folder``, sorted: the noises or rooms a condition draws from."""
    root = Path(folder)
    if not root.is_dir():
        raise ConditionError(f"{folder}: not a folder of audio files")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in AUDIO_FILES)
    if not files:
        raise ConditionError(f"{folder}: no audio files ({', '.join(AUDIO_FILES)}) in it")
    return tuple((str(path), sha256_file(path)) for path in files)


@contextmanager
def seeded(seed: int):
    """audiomentations draws from the global ``random`` and ``numpy.random``: seed both, restore them after."""
    saved_random, saved_numpy = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        random.setstate(saved_random)
        np.random.set_state(saved_numpy)


def clip_seed(clean_sha256: str, condition: ConditionSpec) -> int:
    return int(stable_hash({"clean": clean_sha256, "condition": condition.parameters()})[:15], 16)


def babble_talkers(clean_sha256: str, pool: Sequence[str], seed: int) -> list[str]:
    """The clips (hashes, from ``pool``: the task's other clean context clips) whose sum is the babble under one
    clip: ``BABBLE_TALKERS`` of them, or all there are in a smaller build."""
    others = sorted(set(pool) - {clean_sha256})
    if not others:
        raise ConditionError("babble mixes other clips of the task, and the task has no other clip; use noise: white "
                             "or pink for a one-clip build")  # fmt: skip
    return random.Random(seed).sample(others, min(BABBLE_TALKERS, len(others)))


def mix_at_snr(clean: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    from audiomentations.core.utils import calculate_desired_noise_rms, calculate_rms

    noise_rms = calculate_rms(noise)
    if noise_rms < 1e-9:
        raise ConditionError("the noise is silent")
    return (clean + noise * (calculate_desired_noise_rms(calculate_rms(clean), snr_db) / noise_rms)).astype(np.float32)


def babble(length: int, talkers: Sequence[np.ndarray], seed: int) -> np.ndarray:
    """The talkers at one level each, looped to ``length`` from a random offset, summed."""
    from audiomentations.core.utils import calculate_rms

    rng = np.random.default_rng(seed)
    total = np.zeros(length, dtype=np.float64)
    for voice in talkers:
        looped = np.tile(voice, length // voice.size + 2)
        start = int(rng.integers(voice.size))
        total += looped[start : start + length] / max(calculate_rms(voice), 1e-9)
    return total.astype(np.float32)


def _telephone(samples: np.ndarray, rate: int) -> np.ndarray:
    import torch
    import torchaudio.functional as F
    from audiomentations import HighPassFilter, LowPassFilter

    from s2sbench.pipeline.speech.audio import resample

    low, high = TELEPHONE_BAND_HZ
    narrow = resample(samples, rate, TELEPHONE_RATE_HZ)
    narrow = HighPassFilter(min_cutoff_freq=low, max_cutoff_freq=low, min_rolloff=24, max_rolloff=24, zero_phase=True,
                            p=1.0)(narrow, TELEPHONE_RATE_HZ)  # fmt: skip
    narrow = LowPassFilter(min_cutoff_freq=high, max_cutoff_freq=high, min_rolloff=24, max_rolloff=24, zero_phase=True,
                           p=1.0)(narrow, TELEPHONE_RATE_HZ)  # fmt: skip
    narrow = np.clip(narrow, -1.0, 1.0)
    codec = F.mu_law_decoding(F.mu_law_encoding(torch.from_numpy(narrow.copy()), 256), 256).numpy()
    return resample(codec.astype(np.float32), TELEPHONE_RATE_HZ, rate)


@cache
def room_impulse_response(rt60_s: float, rate: int) -> np.ndarray:
    """The impulse response of the reverb conditions' room with this RT60 (pyroomacoustics: image sources to third
    order, ray tracing for the tail; its random draws seeded from the RT60, so every run gets the same room)."""
    import pyroomacoustics as pra

    absorption, _ = pra.inverse_sabine(rt60_s, list(ROOM_SIZE_M))
    # the image-source order Sabine's formula asks for (about 90 at 0.6 s) takes minutes; rays give the tail in 0.3 s
    room = pra.ShoeBox(list(ROOM_SIZE_M), fs=rate, materials=pra.Material(absorption), max_order=3, ray_tracing=True,
                       air_absorption=True)  # fmt: skip
    room.set_ray_tracing(receiver_radius=0.5, n_rays=10000, energy_thres=1e-5)
    room.add_source(list(ROOM_TALKER_M))
    room.add_microphone(list(ROOM_MICROPHONE_M))
    pra.random.seed(int(stable_hash({"rt60_s": rt60_s, "rate": rate})[:7], 16))
    room.compute_rir()
    return np.asarray(room.rir[0][0], dtype=np.float64)


def _drawn_file(folder: str, rate: int, seed: int) -> np.ndarray:
    """One of the folder's audio files (drawn with the clip's own generator: audiomentations' folder transforms draw
    from the global ``random``, which other threads of a build also draw from), mono at ``rate``."""
    from s2sbench.pipeline.speech.audio import decode_audio, resample

    path, _ = random.Random(seed).choice(audio_files(folder))
    samples, file_rate = decode_audio(Path(path), path)
    return resample(samples, file_rate, rate) if file_rate != rate else samples


def _reverberate(samples: np.ndarray, impulse_response: np.ndarray) -> np.ndarray:
    from scipy.signal import fftconvolve

    wet = fftconvolve(samples.astype(np.float64), impulse_response)
    # the room's distance attenuation is not the condition: the reverberant clip keeps the clean clip's peak level
    return (wet * (np.max(np.abs(samples)) / max(np.max(np.abs(wet)), 1e-12))).astype(np.float32)


def apply_condition(samples: np.ndarray, rate: int, condition: ConditionSpec, seed: int,
                    talkers: Sequence[np.ndarray] = ()) -> np.ndarray:  # fmt: skip
    """``samples`` (float32 mono) under ``condition``, drawn with ``seed``; ``talkers``: the babble's clips."""
    from audiomentations import AddColorNoise, Gain, TimeStretch

    samples = np.asarray(samples, dtype=np.float32)
    with seeded(seed):
        if isinstance(condition, NoiseCondition):
            if condition.noise == "babble":
                return mix_at_snr(samples, babble(samples.size, talkers, seed), condition.snr_db)
            if condition.folder is None:
                decay = {"white": 0.0, "pink": -3.01}[condition.noise]
                return AddColorNoise(min_snr_db=condition.snr_db, max_snr_db=condition.snr_db, min_f_decay=decay,
                                     max_f_decay=decay, p_apply_a_weighting=0.0, p=1.0)(samples, rate)  # fmt: skip
            noise = _drawn_file(condition.folder, rate, seed)
            start = random.Random(seed).randrange(max(1, noise.size - samples.size))
            looped = np.tile(noise, samples.size // noise.size + 2)[start : start + samples.size]
            return mix_at_snr(samples, looped, condition.snr_db)
        if isinstance(condition, ReverbCondition):
            if condition.rt60_s is not None:
                return _reverberate(samples, room_impulse_response(condition.rt60_s, rate))
            return _reverberate(samples, _drawn_file(condition.folder, rate, seed))
        if isinstance(condition, TelephoneCondition):
            return _telephone(samples, rate)
        if isinstance(condition, RateCondition):
            return TimeStretch(min_rate=condition.factor, max_rate=condition.factor, leave_length_unchanged=False,
                               method="signalsmith_stretch", p=1.0)(samples, rate)  # fmt: skip
        return Gain(min_gain_db=condition.db, max_gain_db=condition.db, p=1.0)(samples, rate)


def condition_key(clean_sha256: str, condition: ConditionSpec, talkers: Sequence[str] = ()) -> str:
    """The clip store key of ``clean_sha256`` under ``condition``: everything that decides the derived audio."""
    folder = condition.folder
    return stable_hash({
        "clean": clean_sha256, "condition": condition.parameters(), "talkers": list(talkers),
        "files": [sha for _, sha in audio_files(folder)] if folder else [],
        "version": CONDITIONS_VERSION, "libraries": library_versions(),
    })  # fmt: skip


def context_clips(rows: Iterable[BuildRow]) -> list[str]:
    """The clean context clips (hashes) of ``rows``: what a babble condition mixes from."""
    return [row.clips[Role.context()].audio_sha256 for row in rows if Role.context() in row.clips]


class ConditionMaker:
    """Derives the kept clips of one task under its conditions into the clip store, and has the task's gate ASR
    hear each derived clip once (its verdict is reported, never a reason to drop the row)."""

    def __init__(self, task: TaskConfig, store: ClipStore, pool: Sequence[str], verifier: Verifier | None = None):
        self.task, self.store = task, store
        self.pool = sorted(set(pool))  # the clean context clips of the task's kept rows: the babble's talkers
        self.verifier = verifier
        self.made = 0  # clips derived by this maker (not found in the store)

    def _resolved(self, condition: ConditionSpec) -> ConditionSpec:
        """The condition with its folder (noise files, impulse responses) resolved like the task's own paths."""
        if condition.folder is None:
            return condition
        return condition.model_copy(update={condition.folder_field: str(self.task.resolve(condition.folder))})

    def derive(self, clip: Clip, condition: ConditionSpec) -> Clip:
        """``clip`` (a clean clip the gate passed) under ``condition``: from the store if it was made before."""
        condition = self._resolved(condition)
        seed = clip_seed(clip.audio_sha256, condition)
        talkers = babble_talkers(clip.audio_sha256, self.pool, seed) if getattr(condition, "noise", "") == "babble" else []
        key = condition_key(clip.audio_sha256, condition, talkers)
        stored = self.store.lookup(key)
        if stored is None:
            samples = self.store.load(clip.path, f"clip {clip.item_id} {clip.role}")
            voices = [self.store.load(self.store.audio_path(sha), f"babble talker {sha[:12]}") for sha in talkers]
            derived = apply_condition(samples, clip.sample_rate_hz, condition, seed, voices)
            stored = self.store.put(key, derived, clip.sample_rate_hz, {
                "condition": condition.model_dump(mode="json"), "clean_audio_sha256": clip.audio_sha256,
                "talkers": talkers, "seed": seed, "libraries": library_versions()})  # fmt: skip
            self.made += 1
        return clip.model_copy(update={"key": key, "audio_sha256": stored.audio_sha256, "path": stored.path,
                                       "duration_s": stored.duration_s, "condition": condition.name})  # fmt: skip

    def condition_rows(self, rows: Sequence[BuildRow], condition: ConditionSpec) -> list[ConditionedRow]:
        """``rows`` under ``condition``; the gate's ASR hears their clips in one batch, each check kept with its own clip."""
        derived = [{role: self.derive(clip, condition) for role, clip in row.clips.items()} for row in rows]
        clips = [clip for made in derived for clip in made.values()]
        checks = []
        if self.verifier is not None and clips:
            audios = [self.store.load(clip.path, f"clip {clip.item_id} {clip.role} ({condition.name})") for clip in clips]
            checks = self.verifier.check_batch(clips, audios, attempt=1)  # one check per clip, in order
        heard = iter(checks)
        return [ConditionedRow(id=row.id, task=self.task.name, condition=condition.name, item_id=row.item.id,
                               voice=row.voice, clips=made,
                               checks={role: next(heard) for role in made} if checks else {})
                for row, made in zip(rows, derived)]  # fmt: skip
