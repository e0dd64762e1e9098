"""A small real build for the tests of everything downstream of a build (publish, card, export/import, report, eval).

It is made once per test session by the build flow (:func:`s2sbench.flows.build.build_flow`, on the session's Prefect
server), which the flow tests then check through the Prefect API: Piper speaks two English voices (context and
candidates), espeak-ng speaks Chinese (context only), Whisper tiny.en is the gate.
What the tests can count on, because the inputs are chosen for it:

- ``fixture-stories-en``: 3 stories x 2 voices; story 3's wrong ending is gibberish that Whisper cannot hear back, so
  it is rejected on every attempt and story 3 is dropped in both voices (reason code ``error_rate``); 2 rows per voice.
- ``fixture-choice-zh``: 2 four-way questions, 1 voice; tiny.en is English-only, so the clips are ``unverified``.
- one config per task (the stories' two voices share one); the stories' source is ``cc-by-4.0``, the questions'
  ``other`` with a name and a link.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

STORIES = [
    ("Tom put the kettle on the stove. Soon the water began to boil.", ["He made a cup of tea.", "He painted the roof."], 0),
    ("It snowed all night long. In the morning the roads were white.", ["The kids went swimming.", "The kids built a snowman."], 1),
    ("Anna lost her keys on the way home. She searched every pocket.", ["She found them in her coat.", "Zorvex plinth quarmble snod."], 0),
]
CHOICES = [
    ("中国的首都是", ["北京。", "上海。", "广州。", "深圳。"], 0),
    ("一年有", ["十个月。", "十一个月。", "十二个月。", "十三个月。"], 2),
]
STORY_TASK = "fixture-stories-en"
CHOICE_TASK = "fixture-choice-zh"
STORY_VOICES = ("piper-en-joe", "piper-en-joe-slow")
CHOICE_VOICE = "espeak-zh-pinyin"
CHOICE_LICENCE = ("fixture-questions-terms", "https://example.org/fixture-questions-terms")
GATE = "{metric: %s, max_error_rate: 0.25, max_attempts: 2, asr: {engine: faster-whisper, model: tiny.en}}"


@dataclass(frozen=True)
class RealBuild:
    root: Path  # the build folder
    store: Path  # its clip store (its own: tests that damage clips work on copies)
    task_files: tuple[Path, ...]


def _jsonl(path: Path, raw: list, prefix: str) -> None:
    rows = [{"id": f"{prefix}-{n}", "context": context, "candidates": candidates, "right": right}
            for n, (context, candidates, right) in enumerate(raw, 1)]  # fmt: skip
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_task_files(folder: Path) -> tuple[Path, Path]:
    """The two task files (and their item files) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    _jsonl(folder / "stories.jsonl", STORIES, "story")
    _jsonl(folder / "choices.jsonl", CHOICES, "choice")
    stories = folder / f"{STORY_TASK}.yaml"
    stories.write_text(
        f"name: {STORY_TASK}\nlanguage: en\nsource: {{loader: jsonl, path: {folder / 'stories.jsonl'}, licence: cc-by-4.0}}\n"
        f"voices: [{', '.join(STORY_VOICES)}]\nspeak: [context, candidates]\ngate: {GATE % 'wer'}\n",
        encoding="utf-8",
    )
    choices = folder / f"{CHOICE_TASK}.yaml"
    choices.write_text(
        f"name: {CHOICE_TASK}\nlanguage: zh\nsource: {{loader: jsonl, path: {folder / 'choices.jsonl'}, split: test, "
        f"licence: {{id: other, name: {CHOICE_LICENCE[0]}, link: '{CHOICE_LICENCE[1]}'}}}}\n"
        "templates: {text_context: '{context}{continuation}', speech_context: '下面是一段语音和文本交错的内容：<audio>{continuation}'}\n"
        f"scoring: pairwise_ties_right\nalso_report: [argmin]\nvoices: [{CHOICE_VOICE}]\ngate: {GATE % 'cer'}\n",
        encoding="utf-8",
    )
    return stories, choices


SHARD_SIZE = 2  # stories 1-2 and story 3 in shards of their own


def make_real_build(root: Path) -> RealBuild:
    from s2sbench.flows.build import build_flow

    files = write_task_files(root / "tasks")
    store = root / "clips"
    build_flow(tasks=[str(path) for path in files], out_dir=str(root / "build"), shard_size=SHARD_SIZE, store_root=str(store))
    return RealBuild(root / "build", store, files)
