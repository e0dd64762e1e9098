"""The build stages as plain functions over a build directory; ``s2sbench.flows.build`` orchestrates them.

Layout of a build directory::

    items/<task>.jsonl                 the task's items (Item)
    work/<task>/shard-NNNNN/           per-shard outputs, appended as they are made (resumable)
        rows.jsonl  checks.jsonl  drops.jsonl  .done
    manifest.jsonl  clips.jsonl  verification.jsonl  drops.jsonl  build_report.json  dataset/

Resume is a property of the data: shard files are keyed by deterministic ids and a ``.done`` marker closes a shard,
so a killed build re-run skips what is written and never duplicates a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from s2sbench.pipeline.manifest import ResumableJsonlWriter, atomic_write_text, read_records, write_json, write_records
from s2sbench.pipeline.records import BuildRow, ClipCheck, Drop, Item
from s2sbench.pipeline.tasks import TaskConfig


@dataclass(frozen=True)
class ShardSummary:
    task: str
    shard: int
    items: int
    rows: int
    dropped: int
    checks: int
    synthesized: int


def items_path(out_dir: Path, task: TaskConfig) -> Path:
    return Path(out_dir) / "items" / f"{task.name}.jsonl"


def shard_dir(out_dir: Path, task: TaskConfig, shard: int) -> Path:
    return Path(out_dir) / "work" / task.name / f"shard-{shard:05d}"


def prepare_items(task: TaskConfig, out_dir: Path, limit: int | None = None) -> list[Item]:
    """Load the task's items (the same path as ``s2sbench items``) and write them to ``items/<task>.jsonl``."""
    from s2sbench.pipeline.sources import load_task_items

    result = load_task_items(task, limit)
    path = items_path(out_dir, task)
    write_records(path, result.items)
    write_records(path.with_suffix(".drops.jsonl"), result.drops)
    write_json(path.with_suffix(".report.json"), result.report())
    return result.items


def shard_items(items: list[Item], shard_size: int) -> list[list[Item]]:
    if shard_size < 1:
        raise ValueError(f"shard size must be >= 1, got {shard_size}")
    return [items[start : start + shard_size] for start in range(0, len(items), shard_size)]


def speak_shard(
    task: TaskConfig, items: list[Item], shard: int, out_dir: Path, store_root: Path | None = None, seed: int = 0
) -> ShardSummary:
    """Synthesize and verify one shard of items in every voice of the task; resumable and idempotent."""
    from s2sbench.pipeline.asr import get_asr
    from s2sbench.pipeline.audio import ClipStore
    from s2sbench.pipeline.speak import Speaker
    from s2sbench.pipeline.synthesize import Synthesizer
    from s2sbench.pipeline.tts.voices import get_voice
    from s2sbench.pipeline.verify import Verifier

    folder = shard_dir(out_dir, task, shard)
    done = folder / ".done"
    if done.exists():
        rows = read_records(folder / "rows.jsonl", BuildRow)
        drops = read_records(folder / "drops.jsonl", Drop)
        checks = read_records(folder / "checks.jsonl", ClipCheck)
        return ShardSummary(task.name, shard, len(items), len(rows), len(drops), len(checks), 0)
    store = ClipStore(store_root)
    synthesizer = Synthesizer(store)
    asr = get_asr(task.gate.asr.engine, task.gate.asr.model, **task.gate.asr.options)
    speaker = Speaker(task, synthesizer, Verifier(asr, task.gate, task.language), store, base_seed=seed)
    voices = [get_voice(voice_id) for voice_id in task.voices]
    with (
        ResumableJsonlWriter(folder / "rows.jsonl", BuildRow) as rows,
        ResumableJsonlWriter(folder / "drops.jsonl", Drop) as drops,
        ResumableJsonlWriter(folder / "checks.jsonl", ClipCheck) as checks,
    ):
        progress = tqdm(items, desc=f"speak {task.name} shard {shard}", unit="item", disable=None, leave=False)
        for item in progress:
            for voice in voices:
                row_id = BuildRow.make_id(item.id, voice.id)
                if row_id in rows or row_id in drops:
                    continue
                outcome = speaker.speak(item, voice)
                # the audit first: a row is never written without the checks that admitted it
                for check in outcome.checks:
                    checks.write(check)
                if outcome.row is not None:
                    rows.write(outcome.row)
                else:
                    drops.write(
                        Drop(id=row_id, task=task.name, item_id=item.id, voice=voice.id, stage="speak", reason=outcome.dropped_reason)
                    )
        summary = ShardSummary(
            task.name, shard, len(items), len(rows.seen), len(drops.seen), len(checks.seen), synthesizer.calls
        )
    atomic_write_text(done, "")
    return summary
