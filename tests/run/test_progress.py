"""Progress of a long run: the rate counts only this run's units, the ETA follows from it, the log gets a plain line
every interval and the listeners every tick; a build's progress is read from its folder."""

from __future__ import annotations

import logging
import re

from s2sbench.pipeline.run.progress import (
    CLIP_WEIGHT_CHARS, BuildProgress, Progress, ProgressReporter, finish_time, format_duration)

from tests.real_build import SHARD_SIZE


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_resumed_runs_rate_and_eta_count_only_its_own_rows():
    clock = Clock()
    progress = Progress("build out", {"a": 100, "b": 50}, done={"a": 40}, clips=40, clock=clock)
    assert progress.snapshot().per_minute is None and progress.snapshot().eta_s is None
    clock.now += 120
    progress.set("a", 60)
    progress.set("b", 10)
    progress.clips = 70
    snapshot = progress.snapshot()
    assert (snapshot.done, snapshot.total, snapshot.done_this_run) == (70, 150, 30)
    assert snapshot.per_minute == 15.0 and snapshot.eta_s == 80 * 60 / 15
    line = snapshot.line()
    assert line.startswith("build out: 70/150 rows (46.7%) [a 60/100, b 10/50]; 15.0 rows/min, 15.0 clips/min; 2 min 00 s")
    assert "ETA 5 min 20 s (at " in line
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", finish_time(30 * 3600))  # not today: its date too
    assert re.fullmatch(r"\d{2}:\d{2}", finish_time(0))
    progress.set("b", 99)  # never past the total
    assert progress.done["b"] == 50


def test_the_rate_is_the_last_ten_minutes():
    """A build that ran slowly for an hour (a busy machine) and fast since: its ETA follows the recent rate."""
    clock = Clock()
    progress = Progress("build out", {"a": 1000}, clock=clock)
    for minute in range(1, 61):
        clock.now += 60
        progress.set("a", minute * 2)  # 2 rows a minute
        progress.snapshot()
    for minute in range(1, 11):
        clock.now += 60
        progress.set("a", 120 + minute * 20)  # then 20 a minute
        snapshot = progress.snapshot()
    assert snapshot.per_minute == 20.0 and snapshot.eta_s == (1000 - 320) * 3
    assert snapshot.done_this_run == 320 and snapshot.elapsed_s == 70 * 60


def test_the_eta_follows_the_work_where_units_differ_in_size():
    """Fifty short rows, then fifty nine times their size (a source grouped by subject): ten minutes of short rows
    at five a minute leave 450 units of work at 5 a minute, 90 minutes, not the 10 the row count says."""
    clock = Clock()
    progress = Progress("build out", {"a": 100}, clock=clock, work_total=50 * 1 + 50 * 9)
    for minute in range(1, 11):
        clock.now += 60
        progress.set("a", minute * 5)
        progress.work_done = minute * 5.0
        snapshot = progress.snapshot()
    assert snapshot.per_minute == 5.0 and snapshot.work_left == 450
    assert snapshot.eta_s == 90 * 60
    assert "5.0 rows/min" in snapshot.line() and "ETA 1 h 30 min" in snapshot.line()


def test_the_reporter_logs_every_interval_and_tells_its_listeners_every_tick(caplog):
    clock = Clock()
    progress = Progress("score m", {"x": 10}, clock=clock)
    seen = []
    with caplog.at_level(logging.INFO, logger="s2sbench.progress"):
        reporter = ProgressReporter(progress, interval_s=30, listeners=[seen.append])
        for _ in range(5):
            clock.now += 10
            progress.advance("x", 2)
            reporter.tick()
        reporter.close()
    lines = [record.getMessage() for record in caplog.records if record.name == "s2sbench.progress"]
    # the start, after 30 s (6 rows) and the end (10 rows, not logged by a tick yet)
    assert [line.split(": ", 1)[1].split(" rows")[0] for line in lines] == ["0/10", "6/10", "10/10"]
    assert [snapshot.done for snapshot in seen] == [2, 4, 6, 8, 10, 10]
    assert format_duration(3725) == "1 h 02 min"


def test_a_builds_progress_is_read_from_its_folder(real_build):
    """The session's finished build: every (item, voice) row is kept or dropped, and every attempt was a clip."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.catalog.tasks import load_task

    build = BuildDir(real_build.root)
    shards, pairs = {}, {}
    for file in real_build.task_files:
        task = load_task(file)
        items = build.read_items(task.name)
        shards[task.name] = build.shards(task.name, len(items), SHARD_SIZE)
        pairs[task.name] = len(items) * len(task.voices)
    progress = BuildProgress("build", shards, pairs)
    assert progress.done == pairs and progress.clips == len(build.read_verification())
    progress.refresh()
    assert progress.snapshot().done_this_run == 0


def test_a_builds_work_weighs_what_its_rows_say(real_build):
    """The work of the session's build: a story row (context and two endings) weighs its characters and three
    clips; the finished build has done all of it, and a build whose shards are not there yet none."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.catalog.tasks import load_task
    from s2sbench.pipeline.run.build import shard_items, shard_work

    build = BuildDir(real_build.root)
    tasks = [load_task(file) for file in real_build.task_files]
    work = {task.name: shard_work(task, shard_items(build.read_items(task.name), SHARD_SIZE)) for task in tasks}
    stories = tasks[0]
    items = build.read_items(stories.name)
    expected = len(stories.voices) * sum(len(item.context) + sum(map(len, item.candidates)) + 3 * CLIP_WEIGHT_CHARS
                                         for item in items)  # fmt: skip
    assert sum(weight for _, weight in work[stories.name]) == expected
    pairs = {task.name: len(build.read_items(task.name)) * len(task.voices) for task in tasks}
    shards = {name: build.shards(name, pairs[name] // len(task.voices), SHARD_SIZE) for name, task in zip(pairs, tasks)}
    done = BuildProgress("build", shards, pairs, work).snapshot()
    assert done.work_left == 0
    empty = BuildDir(real_build.root.parent / "no-build-here")
    fresh = {name: empty.shards(name, pairs[name] // len(task.voices), SHARD_SIZE) for name, task in zip(pairs, tasks)}
    waiting = BuildProgress("build", fresh, pairs, work)
    assert waiting.work_done == 0 and waiting.snapshot().work_left == sum(w for task in work.values() for _, w in task)
