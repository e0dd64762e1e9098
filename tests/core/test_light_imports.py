"""What a command pays before its work: checking transcripts and assembling a dataset import neither torch nor
torchcodec (6-9 s of CPU per process on these machines) where no engine needs them; making a clip imports neither
onnx nor librosa once the ONNX cache holds the voice's graph (2-3 s); and each gives what the libraries' own paths
give."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import wave

import numpy as np

from s2sbench.pipeline.buildfolder.dataset import COLUMNS, DatasetRow, dataset_features, make_split
from s2sbench.pipeline.speech.tts.onnx_cache import CACHE_ENV, derived_bytes, onnx_cache_dir

PROBE = r"""
import json, pickle, sys
from s2sbench.pipeline.buildfolder.dataset import make_split
from s2sbench.pipeline.gate.verify import _basic_normalizer, _english_normalizer, error_rate, normalize

texts = ["Mr. Smith paid $20 at 3:00pm, colour!", "It's the 1st of May; they'll be 21.", "Hola, ¿qué tal?"]
normalized = [normalize(text, "en") for text in texts[:2]] + [normalize(texts[2], "es")]
ours = [_english_normalizer()(text) for text in texts[:2]] + [_basic_normalizer()(texts[2])]
rate = error_rate("Hello, world!", "hello world", "en").rate
make_split(pickle.loads(open(sys.argv[1], "rb").read()))
heavy = sorted(name for name in ("torch", "torchcodec", "whisper") if name in sys.modules)
import whisper.normalizers as reference  # after the check: this one imports torch
theirs = [reference.EnglishTextNormalizer()(text) for text in texts[:2]] + [reference.BasicTextNormalizer()(texts[2])]
print(json.dumps({"heavy": heavy, "ours": ours, "theirs": theirs, "rate": rate, "normalized": normalized}))
"""


def _wav(path, seconds: float = 0.2) -> str:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1), out.setsampwidth(2), out.setframerate(16000)
        out.writeframes((np.sin(np.arange(int(16000 * seconds)) / 5) * 8000).astype(np.int16).tobytes())
    return str(path)


def _rows(tmp_path) -> list[DatasetRow]:
    on_disk = _wav(tmp_path / "on-disk.wav")
    embedded = {"bytes": open(_wav(tmp_path / "embedded.wav", 0.3), "rb").read(), "path": "embedded.wav"}
    base = {"item_id": "s1", "task": "t", "language": "en", "context": "Tom went out.", "candidates": ["a", "b"],
            "label": 1, "context_transcript": "tom went out", "context_error_rate": 0.0, "context_metric": "wer",
            "verification_status": "passed", "source_file": "items.jsonl", "source_row": 1}  # fmt: skip
    return [
        DatasetRow(**base, id="s1@v1", voice="v1", context_audio={"path": on_disk},
                   candidate_audio=[embedded, {"path": on_disk}]),  # fmt: skip
        DatasetRow(**{**base, "context_error_rate": None}, id="s1@v2", voice="v2", context_audio=None, candidate_audio=[]),
    ]


def test_checking_transcripts_and_making_a_split_import_no_torch(tmp_path):
    rows = tmp_path / "rows.pickle"
    rows.write_bytes(pickle.dumps(_rows(tmp_path)))
    probe = subprocess.run([sys.executable, "-c", PROBE, str(rows)], capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr[-2000:]
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    assert found["heavy"] == []
    assert found["ours"] == found["theirs"] and found["rate"] == 0.0  # whisper's own normalizers, loaded apart
    assert found["normalized"][0] == "mister smith paid $20 at 3 0 pm color"


def test_a_split_holds_what_datasets_own_encoding_makes_of_its_rows(tmp_path):
    import datasets

    rows = _rows(tmp_path)
    dumped = [row.model_dump() for row in rows]
    reference = datasets.Dataset.from_dict({name: [row[name] for row in dumped] for name in COLUMNS},
                                           features=dataset_features())  # fmt: skip
    split = make_split(rows)
    assert split.features == reference.features
    assert split.data.table.equals(reference.data.table)
    for name, made in (("ours", split), ("theirs", reference)):
        made.save_to_disk(str(tmp_path / name))  # the file on disk is embedded on save, both ways
    saved = [datasets.load_from_disk(str(tmp_path / name)).data.table for name in ("ours", "theirs")]
    assert saved[0].equals(saved[1])
    assert saved[0].column("context_audio").to_pylist()[0]["bytes"] == (tmp_path / "on-disk.wav").read_bytes()


CLIP_PROBE = r"""
import json, sys
import numpy as np
from s2sbench.pipeline.speech.audio import AudioSettings, postprocess
from s2sbench.pipeline.speech.tts.piper import PiperEngine
from s2sbench.pipeline.catalog.voices import get_voice

samples = postprocess(PiperEngine().synthesize(sys.argv[1], get_voice("piper-en-joe"), 3), AudioSettings())
heavy = sorted(name for name in ("onnx", "librosa", "numba") if name in sys.modules)
print(json.dumps({"heavy": heavy, "samples": samples.tobytes().hex()}))
"""


def test_a_clip_made_after_the_first_imports_neither_onnx_nor_librosa(tmp_path, monkeypatch):
    from s2sbench.pipeline.speech.audio import AudioSettings, postprocess
    from s2sbench.pipeline.speech.tts.piper import PiperEngine
    from s2sbench.pipeline.catalog.voices import get_voice

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "onnx"))
    text = "The kettle began to boil."
    first = postprocess(PiperEngine().synthesize(text, get_voice("piper-en-joe"), 3), AudioSettings())  # derives
    probe = subprocess.run([sys.executable, "-c", CLIP_PROBE, text], capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr[-2000:]
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    assert found["heavy"] == []
    assert found["samples"] == first.tobytes().hex()


def test_a_damaged_derivation_in_the_onnx_cache_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    made = []

    def derive() -> bytes:
        made.append(1)
        return b"graph bytes"

    assert derived_bytes("ab" * 32, "test-v1", derive) == b"graph bytes"
    assert derived_bytes("ab" * 32, "test-v1", derive) == b"graph bytes" and len(made) == 1  # kept
    (data,) = onnx_cache_dir().glob("*.bin")
    data.write_bytes(b"graph bytez")  # same size, one byte off
    assert derived_bytes("ab" * 32, "test-v1", derive) == b"graph bytes" and len(made) == 2
    assert derived_bytes("cd" * 32, "test-v1", derive) == b"graph bytes" and len(made) == 3  # another model


def test_derivations_whose_versions_differ_after_a_dot_are_kept_apart(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert derived_bytes("ab" * 32, "test-v1.1", lambda: b"one") == b"one"
    assert derived_bytes("ab" * 32, "test-v1.2", lambda: b"two") == b"two"
    assert derived_bytes("ab" * 32, "test-v1.1", lambda: b"made again") == b"one"
