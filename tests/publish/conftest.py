"""Fixtures for the publishing tests: a small build directory in the exact layout a build writes, and a local Hub.

The Hub endpoint is fixed before ``huggingface_hub`` or ``datasets`` read it at import time: a free loopback port
is chosen here and the server starts on it. If either library was imported earlier (a whole-suite run), the
``local_hub`` fixture points their module constants at the server too.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


HUB_PORT = _free_port()
os.environ["HF_ENDPOINT"] = f"http://127.0.0.1:{HUB_PORT}"
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.pop("HF_DATASETS_OFFLINE", None)


from s2sbench.pipeline.assemble import dataset_features, split_name
from s2sbench.pipeline.manifest import sha256_bytes, write_json, write_records  # noqa: E402
from s2sbench.pipeline.records import BuildRow, Clip, ClipCheck, Drop, Item, Source, clip_role  # noqa: E402

from ..factories import tone_wav
from .local_hub import LocalHub  # noqa: E402

SAMPLE_RATE_HZ = 16_000
FAKE_TOKEN = "hf_fixtureTOKEN0123456789secret"

STORIES = [
    ("Maya planted seeds by the window. She watered them daily.", ["The plants grew tall.", "The plants sang opera."], 0),
    ("Owen bought a used guitar. He practiced every evening.", ["He ate the guitar.", "He learned a song."], 1),
    ("The bus was late again. Lena waited in the rain.", ["She finally got on the bus.", "She flew home on a cloud."], 0),
]
CHOICES = [
    ("中国的首都是", ["北京。", "上海。", "广州。", "深圳。"], 0),
    ("水在标准大气压下的沸点是", ["五十度。", "一百度。", "两百度。", "零度。"], 1),
]


def wav_bytes(seed: int, duration_s: float = 0.4) -> bytes:
    return tone_wav(seed, duration_s)


def _clip(item: Item, role: str, voice: str, engine: str, text: str, audio: bytes) -> Clip:
    digest = sha256_bytes(audio)
    return Clip(key=digest[:16], item_id=item.id, role=role, text=text, normalized_text=text.lower(), voice=voice,
                engine=engine, model_version=f"{engine}-1.0", seed=0, audio_sha256=digest, path=f"{digest[:2]}/{digest}.wav",
                sample_rate_hz=SAMPLE_RATE_HZ, duration_s=0.4)


def _check(item: Item, role: str, voice: str, clip: Clip, metric: str, attempt: int, error_rate: float, passed: bool) -> ClipCheck:
    return ClipCheck(item_id=item.id, role=role, attempt=attempt, clip_key=clip.key, voice=voice, seed=attempt, asr_model="faster-whisper:tiny.en",
                     metric=metric, reference=clip.normalized_text, hypothesis=clip.normalized_text, transcript=clip.text,
                     error_rate=error_rate, passed=passed, status="passed" if passed else "rejected", reason="" if passed else "error rate above 0.15")


TASKS = {
    # task -> (language, split, voices with engines, items, speak candidates?, metric)
    "demo-stories-en": ("en", "test", {"piper-en-joe": "piper", "espeak-en-us": "espeak-ng"}, STORIES, True, "wer"),
    "demo-choice-zh": ("zh", "test", {"espeak-zh-pinyin": "espeak-ng"}, CHOICES, False, "cer"),
}


def make_build(out: Path, *, drop: tuple[str, str] | None = ("demo-stories-en-002", "espeak-en-us")) -> Path:
    """Write a build directory: items, clips, verification, manifest, build report and the saved DatasetDict.

    ``drop`` is one (item, voice) pair whose context failed the gate on every attempt, so it has no manifest row.
    """
    import datasets

    out.mkdir(parents=True, exist_ok=True)
    seed = 0
    rows, clips, checks, drops, splits, voices_report = [], [], [], [], {}, {}
    for task, (language, split, voices, raw_items, speak_candidates, metric) in TASKS.items():
        items = [Item(id=f"{task}-{n:03d}", task=task, language=language, context=context, candidates=candidates, right=right,
                      source=Source(file=f"demo/{task}.jsonl", row=n), meta={}) for n, (context, candidates, right) in enumerate(raw_items, 1)]
        write_records(out / "items" / f"{task}.jsonl", items)
        table: dict[str, list] = {name: [] for name in (
            "id", "item_id", "task", "language", "context", "candidates", "label", "voice", "context_audio", "candidate_audio",
            "context_transcript", "context_error_rate", "context_metric", "verification_status", "source_file", "source_row")}
        for voice, engine in voices.items():
            voices_report[voice] = {"engine": engine, "model": f"{voice}-model", "licence": "MIT (fixture)", "language": language}
            for item in items:
                texts = {clip_role(None): item.context}
                if speak_candidates:
                    texts.update({clip_role(k): text for k, text in enumerate(item.candidates)})
                row_clips, row_checks, audio = {}, {}, {}
                for role, text in texts.items():
                    seed += 1
                    audio[role] = wav_bytes(seed)
                    clip = _clip(item, role, voice, engine, text, audio[role])
                    failed = drop == (item.id, voice) and role == "context"
                    attempts = [(1, 0.5, False), (2, 0.4, False)] if failed else [(1, 0.0, True)]
                    for attempt, error_rate, passed in attempts:
                        checks.append(_check(item, role, voice, clip, metric, attempt, error_rate, passed))
                    row_clips[role], row_checks[role] = clip, checks[-1]
                    clips.append(clip)
                if drop == (item.id, voice):
                    drops.append(Drop(id=BuildRow.make_id(item.id, voice), task=task, item_id=item.id, voice=voice, stage="speak",
                                      reason="gate: context failed 2 attempts"))
                    continue
                rows.append(BuildRow(id=BuildRow.make_id(item.id, voice), item=item, voice=voice, clips=row_clips, checks=row_checks))
                context_check = row_checks["context"]
                values = {
                    "id": BuildRow.make_id(item.id, voice), "item_id": item.id, "task": task, "language": language,
                    "context": item.context, "candidates": item.candidates, "label": item.right, "voice": voice,
                    "context_audio": {"bytes": audio["context"], "path": f"{item.id}.wav"},
                    "candidate_audio": [{"bytes": audio[clip_role(k)], "path": None} for k in range(len(item.candidates))] if speak_candidates else [],
                    "context_transcript": context_check.transcript, "context_error_rate": context_check.error_rate,
                    "context_metric": context_check.metric, "verification_status": context_check.status,
                    "source_file": item.source.file, "source_row": item.source.row,
                }
                for name, value in values.items():
                    table[name].append(value)
        features = dataset_features()
        # the build names splits after tasks with '-' made '_' (split names allow no '-')
        splits[split_name(task)] = datasets.Dataset.from_dict(table, features=features)
    write_records(out / "clips.jsonl", clips)
    write_records(out / "verification.jsonl", checks)
    write_records(out / "manifest.jsonl", rows)
    write_records(out / "drops.jsonl", drops)
    for task in TASKS:
        write_records(out / "items" / f"{task}.drops.jsonl", [])
    datasets.DatasetDict(splits).save_to_disk(str(out / "dataset"))
    # the report in the shape pipeline/assemble.py writes; "config" (the task settings) is given for the task that is
    # not in the registry, as the card falls back to the registry for the others
    write_json(out / "build_report.json", {
        "tasks": {task: {"version": 1, "language": spec[0], "voices": list(spec[2]), "items_in": len(spec[3]),
                         "kept": sum(row.item.task == task for row in rows),
                         "dropped": sum(d.task == task for d in drops),
                         **({} if task == "demo-stories-en" else {"config": {
                             "name": task, "language": spec[0], "voices": list(spec[2]),
                             "source": {"loader": "cmmlu", "path": "cmmlu/test", "split": spec[1]},
                             "speak": ["context"], "gate": {"metric": spec[5], "max_error_rate": 0.2, "max_attempts": 3,
                                                            "asr": {"engine": "faster-whisper", "model": "small"}}}})}
                  for task, spec in TASKS.items()},
        "totals": {"kept": len(rows), "dropped": len(drops), "clip_attempts": len(checks)},
        "engines": sorted({f"{clip.engine} {clip.model_version}" for clip in clips}),
        "asr_models": ["faster-whisper:tiny.en"],
        "voices": voices_report,
        "normalization": "numbers and symbols spelled out; NFKC",
        "software": {"s2sbench": "0.1.0"},
    })
    return out


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory) -> Path:
    return make_build(tmp_path_factory.mktemp("build") / "demo")


@pytest.fixture(scope="session")
def _hub_server():
    hub = LocalHub(port=HUB_PORT).start()
    yield hub
    hub.stop()


@pytest.fixture
def local_hub(_hub_server, monkeypatch, tmp_path):
    """The running local Hub, with faults cleared, the libraries pointed at it, HF_TOKEN set to a fake token and
    the Hugging Face caches in the test's folder (never the user's, never an earlier run's)."""
    import datasets.config
    import huggingface_hub.constants as hub_constants

    endpoint = _hub_server.endpoint
    monkeypatch.setattr(hub_constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(hub_constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(hub_constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(datasets.config, "HF_ENDPOINT", endpoint)
    monkeypatch.setattr(datasets.config, "HUB_DATASETS_URL", endpoint + "/datasets/{repo_id}/resolve/{revision}/{path}")
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hf-hub-cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets-cache")
    _hub_server.clear_faults()
    _hub_server.requests.clear()
    yield _hub_server
    _hub_server.clear_faults()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
