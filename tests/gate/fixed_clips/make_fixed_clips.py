"""Writes the fixed clips that tests/gate/test_fixed_clips.py holds the gate to, with the verdicts it gave then.

The clips are the demo tasks' texts (written for s2sbench, so they may ship) in the demo tasks' voices, plus texts
made to fail (a gibberish ending; a Mandarin sentence of rare words the voice misreads), checked by each task's own
gate. Run it again only on purpose (a new gate model is a new verdict record), and say why in the commit:

    python tests/gate/fixed_clips/make_fixed_clips.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import soundfile

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.catalog.voices import get_voice
from s2sbench.pipeline.gate.verify import Verifier

HERE = Path(__file__).resolve().parent
# (task whose voices and gate are used, texts); each text is spoken by each of the task's voices
TEXTS = {
    "demo-stories-en": ["He made a cup of tea and sat by the window.", "Zorvex plinth quarmble snod vellisary.",
                        "She moved them into the garden behind the house."],
    "demo-stories-zh": ["他决定下次还要带家人一起来。", "晚上他去吃了有名的烤鸭。", "氘氚钚锕镧铈镨钕钷钐铕钆铽镝钬铒。"],
}


def main() -> int:
    records = []
    with tempfile.TemporaryDirectory() as folder:
        store = ClipStore(Path(folder))
        synthesizer = Synthesizer(store)
        for task_name, texts in TEXTS.items():
            task = load_task(task_name)
            verifier = Verifier(get_asr(task.gate.asr.engine, task.gate.asr.model), task.gate, task.language)
            for voice_id in task.voices:
                for number, text in enumerate(texts, 1):
                    clip = synthesizer.make_clip(f"fixed-{task.language}-{number}", "context", text, get_voice(voice_id), 0)
                    audio = store.load(clip.path)
                    check = verifier.check_batch([clip], [audio], attempt=1)[0]
                    file = f"{voice_id}-{number}.flac"
                    soundfile.write(HERE / file, audio, clip.sample_rate_hz, subtype="PCM_16")
                    records.append({"task": task_name, "file": file, "clip": clip.model_dump(mode="json"),
                                    "status": check.status, "error_rate": check.error_rate,
                                    "transcript": check.transcript})
                    print(file, check.status, check.error_rate, check.transcript)
    (HERE / "verdicts.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
