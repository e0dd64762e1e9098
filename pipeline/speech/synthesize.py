"""The synthesis stage's unit of work: one text of one item, spoken by one voice, cached by a content key.

The key of a clip hashes everything that determines its audio: the normalized text, the engine, the model and its
version (file hashes, package version), the voice's settings, the seed and the post-processing settings. It does
not contain the item id, so the same sentence in two tasks or two builds is synthesized once; a rebuild of the
same config makes no engine call, and adding a voice synthesizes only that voice's clips.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from s2sbench.pipeline.speech.audio import AudioSettings, ClipStore, StoredClip, postprocess
from s2sbench.pipeline.core.manifest import stable_hash
from s2sbench.pipeline.text.normalize import normalize_for_tts
from s2sbench.pipeline.core.records import Clip
from s2sbench.pipeline.speech.tts import get_engine
from s2sbench.pipeline.speech.tts.base import SynthesisError, Voice


@dataclass
class EngineStats:
    """Real engine calls of one engine: for the real-time factor (engine seconds per second of raw audio)."""

    calls: int = 0
    engine_s: float = 0.0
    audio_s: float = 0.0

    @property
    def real_time_factor(self) -> float | None:
        return self.engine_s / self.audio_s if self.audio_s else None


def clip_key(normalized_text: str, voice: Voice, model_version: str, seed: int, settings: AudioSettings) -> str:
    # The voice's id and description/licence are left out: they do not change the audio.
    return stable_hash({
        "text": normalized_text,
        "engine": voice.engine,
        "model": voice.model,
        "model_version": model_version,
        "speaker": voice.speaker,
        "language": voice.language,
        "options": voice.options,
        "seed": seed,
        "audio": settings.fingerprint(),
    })


class Synthesizer:
    """Makes clips through the engines named by voices, skipping every clip whose key is already in the store.

    Raises :class:`~s2sbench.pipeline.speech.tts.base.SynthesisError` for a text that cannot be spoken or whose audio is
    empty or clipped; the caller records it against the clip and goes on.
    """

    def __init__(self, store: ClipStore, settings: AudioSettings = AudioSettings()):
        self.store = store
        self.settings = settings
        self.calls = 0  # real engine calls made by this instance
        self.cache_hits = 0
        self.remade = 0  # clips whose stored audio was damaged (it failed its hash), so they were made again
        self.stats: dict[str, EngineStats] = {}
        self._versions: dict[str, str] = {}

    def model_version(self, voice: Voice) -> str:
        identity = voice.model_dump_json()  # a voice holds a dict (options), so it is not hashable itself
        if identity not in self._versions:
            self._versions[identity] = get_engine(voice.engine).model_version(voice)
        return self._versions[identity]

    def make_clip(self, item_id: str, role: str, text: str, voice: Voice, seed: int) -> Clip:
        normalized = normalize_for_tts(text, voice.language)
        version = self.model_version(voice)
        key = clip_key(normalized, voice, version, seed, self.settings)
        damaged = len(self.store.damaged)
        stored = self.store.lookup(key)
        if stored is None:
            rejected = self.store.rejection(key)
            if rejected is not None:
                self.cache_hits += 1
                raise SynthesisError(f"{rejected} (cached)")
            stored = self._synthesize(key, normalized, voice, version, seed)
            self.remade += len(self.store.damaged) > damaged
        else:
            self.cache_hits += 1
        return Clip(
            key=key, item_id=item_id, role=role, text=text, normalized_text=normalized, voice=voice.id,
            engine=voice.engine, model_version=version, seed=seed, audio_sha256=stored.audio_sha256, path=stored.path,
            sample_rate_hz=stored.sample_rate_hz, duration_s=stored.duration_s,
        )

    def _synthesize(self, key: str, normalized: str, voice: Voice, version: str, seed: int) -> StoredClip:
        engine = get_engine(voice.engine)
        started = time.perf_counter()
        wave = engine.synthesize(normalized, voice, seed)
        stats = self.stats.setdefault(voice.engine, EngineStats())
        stats.calls += 1
        stats.engine_s += time.perf_counter() - started
        stats.audio_s += wave.samples.size / wave.sample_rate_hz
        self.calls += 1
        provenance = {
            "normalized_text": normalized, "voice": voice.id, "engine": voice.engine, "model": voice.model,
            "model_version": version, "seed": seed, "audio_settings": self.settings.fingerprint(),
        }
        try:
            samples = postprocess(wave, self.settings)
        except SynthesisError as error:
            # The audio itself was bad (empty, clipped): the same inputs make it again, so a rebuild need not try.
            self.store.put_rejection(key, str(error), provenance)
            raise
        return self.store.put(key, samples, self.settings.sample_rate_hz, provenance=provenance)
