"""The gate's verdicts on a fixed set of clips (tests/gate/fixed_clips: the demo tasks' voices and gates, passing
and failing clips, made by make_fixed_clips.py one clip per call) stay what they were when the clips were made, with
the clips checked in one batch as a build checks them; and a voice speaks a text the same for a seed, so a rebuild (or another
device's run of the same clips) is judged the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import soundfile

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.core.records import Clip
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.gate.verify import Verifier

FIXED = Path(__file__).resolve().parent / "fixed_clips"
RECORDS = [json.loads(line) for line in (FIXED / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()]
# A transcript can differ by a word or a syllable between a batch and one clip per call (the gate packs clips into
# shared windows) or between CPUs (CTranslate2's int8 kernels per instruction set): the clips' error rates are at
# least this far from the threshold, so that the verdict does not
THRESHOLD_MARGIN = 0.05


def _clips(task_name: str) -> tuple[list[dict], list[Clip], list]:
    records = [record for record in RECORDS if record["task"] == task_name]
    audios = [soundfile.read(FIXED / record["file"], dtype="float32")[0] for record in records]
    return records, [Clip(**record["clip"]) for record in records], audios


def test_the_fixed_clips_are_passing_and_failing_ones_away_from_the_threshold():
    for task_name in {record["task"] for record in RECORDS}:
        task = load_task(task_name)
        records = [record for record in RECORDS if record["task"] == task_name]
        assert {record["status"] for record in records} == {"passed", "rejected"}, task_name
        assert {record["clip"]["voice"] for record in records} == set(task.voices), task_name
        for record in records:
            assert abs(record["error_rate"] - task.gate.max_error_rate) >= THRESHOLD_MARGIN, record["file"]


@pytest.mark.parametrize("task_name", sorted({record["task"] for record in RECORDS}))
def test_the_gate_gives_the_recorded_verdicts_in_a_batch(task_name):
    """The verdicts were recorded one clip per call; a build checks a shard's clips in one batch."""
    task = load_task(task_name)
    records, clips, audios = _clips(task_name)
    verifier = Verifier(get_asr(task.gate.asr.engine, task.gate.asr.model), task.gate, task.language)
    for record, check in zip(records, verifier.check_batch(clips, audios, attempt=1)):
        assert check.status == record["status"], (record["file"], check.transcript, record["transcript"])


def test_a_voice_speaks_a_text_the_same_for_a_seed_and_differently_for_another(tmp_path):
    from s2sbench.pipeline.speech.audio import ClipStore
    from s2sbench.pipeline.speech.synthesize import Synthesizer
    from s2sbench.pipeline.catalog.voices import get_voice

    record = next(record for record in RECORDS if record["clip"]["voice"] == "piper-en-joe")
    voice, text = get_voice("piper-en-joe"), record["clip"]["text"]
    made = [Synthesizer(ClipStore(tmp_path / name)).make_clip("fixed", "context", text, voice, seed)
            for name, seed in (("a", 0), ("b", 0), ("c", 1))]  # fmt: skip
    assert made[0].audio_sha256 == made[1].audio_sha256 and made[0].key == made[1].key == record["clip"]["key"]
    assert made[2].audio_sha256 != made[0].audio_sha256
