"""A small real build for the tests of everything downstream of a build (publish, card, export/import, report, eval).

It is made once per test run by the build flow (:func:`s2sbench.flows.build.build_flow`, on the Prefect server of
the session that makes it, whose record of the flow run is kept for the flow tests): Piper speaks two English voices
(context and candidates), espeak-ng speaks Chinese (context only), Whisper tiny.en is the gate. Under pytest-xdist
the first worker to ask makes it while the others wait, then all share it, read-only.
What the tests can count on, because the inputs are chosen for it:

- ``fixture-stories-en``: 3 stories x 2 voices; story 3's wrong ending is gibberish that Whisper cannot hear back, so
  it is rejected on every attempt and story 3 is dropped in both voices (reason code ``error_rate``); 2 rows per voice.
- ``fixture-choice-zh``: 2 four-way questions, 1 voice; tiny.en is English-only, so the clips are ``unverified``.
- one config per task (the stories' two voices share one); the stories' source is ``cc-by-4.0``, the questions'
  ``other`` with a name and a link.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.prefect_runs import RecordedRun, recorded_run

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
    flow_run: RecordedRun  # the build flow's run as the Prefect API of the session that made the build recorded it


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


BUILD_TASK_RUNS = 4  # a speak task per task and shard (2 + 1), then the assembly


def make_real_build(root: Path) -> RealBuild:
    from s2sbench.flows.build import build_flow

    files = write_task_files(root / "tasks")
    store, out = root / "clips", root / "build"
    build_flow(tasks=[str(path) for path in files], out_dir=str(out), shard_size=SHARD_SIZE, store_root=str(store))
    return RealBuild(out, store, files, recorded_run("build", task_runs=BUILD_TASK_RUNS, out_dir=str(out)))


def shared_real_build(folder: Path) -> RealBuild:
    """The real build in ``folder``, made by the first session that asks (under a file lock) and read back by the
    others from its record: the sessions of one test run (pytest-xdist workers) share one build."""
    from filelock import FileLock

    record = folder / "real-build.json"
    with FileLock(folder / "real-build.lock"):
        if not record.exists():
            shutil.rmtree(folder / "real-build", ignore_errors=True)  # what a session that failed to make it left
            made = make_real_build(folder / "real-build")
            partial = record.with_suffix(".partial")
            partial.write_text(json.dumps(asdict(made), default=str), encoding="utf-8")
            partial.replace(record)
    saved = json.loads(record.read_text(encoding="utf-8"))
    run = saved["flow_run"]
    flow_run = RecordedRun(run["name"], run["state"], run["parameters"], tuple(run["task_runs"]),
                           {key: tuple(value) for key, value in run["artifacts"].items()})  # fmt: skip
    return RealBuild(Path(saved["root"]), Path(saved["store"]), tuple(map(Path, saved["task_files"])), flow_run)
