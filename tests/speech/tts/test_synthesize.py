import pytest

from s2sbench.pipeline.speech.audio import AudioSettings, ClipStore
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.speech.tts.base import SynthesisError
from s2sbench.pipeline.catalog.voices import get_voice

TEXTS = ["Tom bought 2 apples for $3.", "The rain stopped at 5:30 pm."]


def build(store: ClipStore, voice_ids: list[str], seed: int = 0) -> tuple[Synthesizer, list]:
    synthesizer = Synthesizer(store)
    clips = [synthesizer.make_clip(f"item-{i}", "context", text, get_voice(voice_id), seed)
             for voice_id in voice_ids for i, text in enumerate(TEXTS)]
    return synthesizer, clips


def test_rebuild_synthesizes_nothing_and_a_new_voice_only_its_clips(store):
    first, clips = build(store, ["espeak-en-us", "espeak-en-gb-rp"])
    assert first.calls == 4 and first.stats["espeak-ng"].calls == 4
    assert [clip.voice for clip in clips] == ["espeak-en-us"] * 2 + ["espeak-en-gb-rp"] * 2
    assert clips[0].normalized_text == "Tom bought two apples for three dollars." and clips[0].text == TEXTS[0]
    assert all(clip.sample_rate_hz == 16000 and clip.duration_s > 0.5 for clip in clips)

    again, same = build(store, ["espeak-en-us", "espeak-en-gb-rp"])
    assert again.calls == 0 and again.cache_hits == 4 and same == clips

    more, _ = build(store, ["espeak-en-us", "espeak-en-gb-rp", "espeak-zh-pinyin"])
    assert more.calls == 2 and more.cache_hits == 4


def test_key_covers_what_shapes_the_audio_and_nothing_else(store):
    synthesizer, voice = Synthesizer(store), get_voice("espeak-en-us")
    base = synthesizer.make_clip("a", "context", "Hello.", voice, 0)
    assert synthesizer.make_clip("b", "candidate:1", "Hello.", voice, 0).key == base.key  # shared across items
    assert synthesizer.make_clip("a", "context", "Hello.", voice, 1).key != base.key
    assert synthesizer.make_clip("a", "context", "Hello!", voice, 0).key != base.key
    slower = voice.model_copy(update={"options": {"speed_wpm": 120}})
    assert synthesizer.make_clip("a", "context", "Hello.", slower, 0).key != base.key
    relabelled = voice.model_copy(update={"description": "same sound, new words", "licence": "x"})
    assert synthesizer.make_clip("a", "context", "Hello.", relabelled, 0).key == base.key
    quieter = Synthesizer(store, AudioSettings(loudness_lufs=-30.0))
    assert quieter.make_clip("a", "context", "Hello.", voice, 0).key != base.key


def test_same_seed_same_bytes_for_a_seeded_neural_engine(tmp_path, coqui_voice):
    one = Synthesizer(ClipStore(tmp_path / "one")).make_clip("i", "context", "a test of noise.", coqui_voice, 11)
    two = Synthesizer(ClipStore(tmp_path / "two")).make_clip("i", "context", "a test of noise.", coqui_voice, 11)
    assert one.audio_sha256 == two.audio_sha256 and one.key == two.key
    assert (tmp_path / "one" / one.path).read_bytes() == (tmp_path / "two" / two.path).read_bytes()


def test_unspeakable_text_raises_and_stores_nothing(store):
    synthesizer = Synthesizer(store)
    with pytest.raises(SynthesisError, match="empty audio"):
        synthesizer.make_clip("a", "context", "   ", get_voice("espeak-en-us"), 0)
    assert not list(store.root.rglob("*.json"))


def test_rejected_audio_is_remembered_so_a_rebuild_does_not_retry_it(store):
    strict = AudioSettings(min_duration_s=60.0)  # every clip is "empty" by this standard
    first = Synthesizer(store, strict)
    with pytest.raises(SynthesisError, match="empty audio"):
        first.make_clip("a", "context", "Hello.", get_voice("espeak-en-us"), 0)
    again = Synthesizer(store, strict)
    with pytest.raises(SynthesisError, match=r"empty audio.*\(cached\)"):
        again.make_clip("a", "context", "Hello.", get_voice("espeak-en-us"), 0)
    assert first.calls == 1 and again.calls == 0
    assert store.lookup(next(iter(store.root.rglob("*.json"))).stem) is None
