"""Fixtures for the report tests: a small build made by the real item loading and assembly stages around shard files
written here (two tasks, three registry voices, kept, retried, rejected and dropped clips in a real clip store; no
synthesis: the clips are tones), one evaluation of it and a two-checkpoint sweep, both by the real
``evaluate``/``sweep`` with a deterministic toy adapter (report_helpers)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from .report_helpers import CHOICES, STORIES, ToyAdapter, eval_options

from s2sbench.evaluation.run import evaluate
from s2sbench.evaluation.sweep import Checkpoint, sweep
from s2sbench.pipeline.assemble import assemble_build
from s2sbench.pipeline.audio import ClipStore
from s2sbench.pipeline.build import prepare_items, shard_dir
from s2sbench.pipeline.manifest import stable_hash, write_records
from s2sbench.pipeline.records import BuildRow, Clip, ClipCheck, Drop, Item
from s2sbench.pipeline.tasks import SourceConfig, TaskConfig

SAMPLE_RATE_HZ = 16_000
STORY_ITEMS = [
    ("Maya planted seeds by the window. She watered them daily.", ["The plants grew tall.", "The plants sang opera."], 0),
    ("Owen bought a used guitar. He practiced every evening.", ["He ate the guitar.", "He learned a song."], 1),
    ("The bus was late again. Lena waited in the rain.", ["She got on the bus.", "She flew home on a cloud."], 0),
    ("It snowed all night. The roads were white.", ["The kids went swimming.", "The kids built a snowman."], 1),
]
CHOICE_ITEMS = [
    ("中国的首都是", ["北京。", "上海。", "广州。", "深圳。"], 0),
    ("一年有", ["十个月。", "十一个月。", "十二个月。", "十三个月。"], 2),
    ("三角形有", ["两条边。", "四条边。", "五条边。", "三条边。"], 3),
]
# (task, item index, voice) -> error rates of the attempts; the gate passes a rate at or under the task's limit
ATTEMPTS = {
    ("stories-en", 0, "piper-en-joe"): [0.4, 0.0],  # rejected once, then kept
    ("stories-en", 2, "espeak-en-us"): [0.5, 0.35],  # rejected twice: the item x voice is dropped
    ("choices-zh", 1, "espeak-zh-pinyin"): [0.6, 0.1],
}


def tone(frequency_hz: float, duration_s: float = 0.6) -> np.ndarray:
    t = np.arange(int(duration_s * SAMPLE_RATE_HZ)) / SAMPLE_RATE_HZ
    return (0.3 * np.sin(2 * np.pi * frequency_hz * t)).astype(np.float32)


def _check(item: Item, voice: str, attempt: int, key: str, rate: float, limit: float, metric: str) -> ClipCheck:
    passed = rate <= limit
    return ClipCheck(
        item_id=item.id, role="context", attempt=attempt, clip_key=key, voice=voice, seed=attempt - 1,
        asr_model="test-asr", metric=metric, reference=item.context.lower(), hypothesis=item.context.lower(),
        transcript=f"heard {item.context}" if rate else item.context, error_rate=rate, passed=passed,
        status="passed" if passed else "rejected",
        reason="" if passed else f"error_rate: {metric} {rate:.3f} > {limit:g}",
    )  # fmt: skip


def _speak_task(out: Path, store: ClipStore, task: TaskConfig, raw: list) -> None:
    source = out / "sources" / f"{task.name}.jsonl"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text("".join(json.dumps({"id": f"{task.name}-{n:03d}", "context": context, "candidates": candidates,
                                          "right": right}, ensure_ascii=False) + "\n"
                              for n, (context, candidates, right) in enumerate(raw, 1)), encoding="utf-8")  # fmt: skip
    task = task.model_copy(update={"source": SourceConfig(loader="jsonl", path=str(source))})
    items = prepare_items(task, out)
    rows, drops, checks = [], [], []
    for index, item in enumerate(items):
        for voice in task.voices:
            rates = ATTEMPTS.get((task.name, index, voice), [0.05 * (index % 2)])
            kept = None
            for attempt, rate in enumerate(rates, 1):
                key = stable_hash([item.id, voice, attempt])
                stored = store.put(key, tone(200 + 40 * index + 7 * attempt + 90 * task.voices.index(voice)),
                                   SAMPLE_RATE_HZ, {"test": True})  # fmt: skip
                check = _check(item, voice, attempt, key, rate, task.gate.max_error_rate, task.gate.metric)
                checks.append(check)
                if check.passed:
                    kept = (Clip(key=key, item_id=item.id, role="context", text=item.context,
                                 normalized_text=item.context, voice=voice, engine="test-tts", model_version="1",
                                 seed=attempt - 1, audio_sha256=stored.audio_sha256, path=stored.path,
                                 sample_rate_hz=SAMPLE_RATE_HZ, duration_s=stored.duration_s), check)  # fmt: skip
                    break
            row_id = BuildRow.make_id(item.id, voice)
            if kept is None:
                drops.append(Drop(id=row_id, task=task.name, item_id=item.id, voice=voice, stage="speak",
                                  reason=f"context failed {len(rates)} attempt(s): {checks[-1].reason}"))  # fmt: skip
            else:
                rows.append(BuildRow(id=row_id, item=item, voice=voice, clips={"context": kept[0]},
                                     checks={"context": kept[1]}))  # fmt: skip
    folder = shard_dir(out, task, 0)
    write_records(folder / "rows.jsonl", rows)
    write_records(folder / "drops.jsonl", drops)
    write_records(folder / "checks.jsonl", checks)
    (folder / ".done").write_text("")


@pytest.fixture(scope="session")
def clip_store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("clips")


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory, clip_store) -> Path:
    out = tmp_path_factory.mktemp("build")
    store = ClipStore(clip_store)
    _speak_task(out, store, STORIES, STORY_ITEMS)
    _speak_task(out, store, CHOICES, CHOICE_ITEMS)
    assemble_build(out, [STORIES, CHOICES], shard_size=100, store_root=clip_store)
    return out


@pytest.fixture(scope="session")
def eval_dir(tmp_path_factory, build_dir) -> Path:
    out = tmp_path_factory.mktemp("eval")
    evaluate(build_dir, ToyAdapter(), None, out, eval_options())
    return out


@pytest.fixture(scope="session")
def sweep_dir(tmp_path_factory, build_dir) -> Path:
    out = tmp_path_factory.mktemp("sweep")
    runs = tmp_path_factory.mktemp("runs")
    checkpoints = []
    for step in (100, 200):
        (runs / f"ckpt_{step}").mkdir()
        (runs / f"ckpt_{step}" / "weights.txt").write_text(str(step))
        checkpoints.append(Checkpoint(runs / f"ckpt_{step}", step))
    sweep(build_dir, checkpoints, lambda path: ToyAdapter(int(path.name.split("_")[1])), None, out, eval_options())
    return out
