"""The plan's cost model: seconds per clip and per character fitted on measured rows, and a calibration sample
spread over the items' lengths instead of the source's first few."""

from __future__ import annotations

import pytest

from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.items.load import load_task_items
from s2sbench.pipeline.items.load import spoken_chars
from s2sbench.pipeline.run.build_plan import ClipCosts, Lengths, LengthCost, _seconds, spread_by_length

from tests.real_build import STORY_TASK


def test_a_length_cost_is_fitted_per_clip_and_per_character():
    # rows of one clip and of two, 0.5 s a clip and 0.1 s a character
    measured = [(1, 10, 1.5), (1, 20, 2.5), (1, 40, 4.5), (2, 30, 4.0)]
    fitted = LengthCost.fit(measured)
    assert fitted.per_clip == pytest.approx(0.5) and fitted.per_char == pytest.approx(0.1)
    assert fitted.of(3, 100) == pytest.approx(11.5)


def test_a_length_cost_keeps_one_term_where_lengths_cannot_tell_the_two_apart():
    assert LengthCost.fit([(1, 10, 1.0), (1, 10, 1.2), (2, 20, 2.2)]).per_char == 0.0  # one length a clip: per clip
    assert LengthCost.fit([(1, 10, 1.0), (1, 10, 1.2)]).per_clip == pytest.approx(1.1)
    # longer rows that cost less would need a negative term: the better of the two terms alone
    shorter_cost_more = LengthCost.fit([(1, 10, 0.3), (1, 100, 0.1)])
    assert shorter_cost_more.per_char == 0.0 and shorter_cost_more.per_clip == pytest.approx(0.2)
    assert LengthCost.fit([]) == LengthCost() and LengthCost.fit([(0, 0, 5.0)]) == LengthCost()


def test_a_calibration_sample_spans_the_items_lengths():
    task = load_task("demo-scmmlu-zh")
    items = load_task_items(task).items
    lengths = sorted(spoken_chars(item, task) for item in items)
    sample = spread_by_length(items, task, 4)
    picked = [spoken_chars(item, task) for item in sample]
    assert len({item.id for item in sample}) == 4 and picked == sorted(picked)
    # one item from the middle of each quarter: the shortest and longest quarters are both timed
    assert picked[0] <= lengths[len(lengths) // 4] and picked[-1] >= lengths[3 * len(lengths) // 4]
    assert [item.id for item in items[:4]] != [item.id for item in sample]
    assert spread_by_length(items[:3], task, 4) == sorted(items[:3], key=lambda item: spoken_chars(item, task))


def test_the_ledger_and_the_rows_record_what_the_clips_say(real_build):
    """Every measured row of the real build carries the characters of the texts it spoke, and the ledger sums
    them per shard and voice: what the next plan scales by."""
    from s2sbench.pipeline.machine.costs import CostLedger

    build = BuildDir(real_build.root)
    items = build.read_all_items()
    tasks = {task.name: task for task in map(load_task, map(str, real_build.task_files))}
    costs = [cost for shard in build.finished_shards() for cost in shard.read_costs()]
    assert {cost.task for cost in costs} == set(tasks)
    for cost in costs:
        assert cost.chars == spoken_chars(items[cost.id.split("@")[0]], tasks[cost.task]) > 0
    ledger = [entry for entry in CostLedger(real_build.store).entries() if entry.kind == "shard"]
    assert sum(entry.chars for entry in ledger) == sum(cost.chars for cost in costs)


def test_costs_fitted_on_a_real_build_project_its_own_rows(real_build):
    """Fitted on the real build's story rows, the costs give back what those rows measured (within the noise of
    two terms fitted on six rows), and a longer story costs more to make than a shorter one."""
    build = BuildDir(real_build.root)
    rows = [cost for shard in build.finished_shards(STORY_TASK) for cost in shard.read_costs()]
    costs = ClipCosts.of(rows, [], "test")
    for voice, fitted in costs.voices.items():
        own = [row for row in rows if row.voice == voice]
        measured = sum(row.synthesis.cpu_s + row.gate.cpu_s + row.retries.cpu_s for row in own)
        projected = sum(_seconds(fitted, "cpu_s", lengths, lengths) for lengths in _lengths_of(own))
        assert projected == pytest.approx(measured, rel=0.35)
        short, long = Lengths(1, 40), Lengths(1, 400)
        assert _seconds(fitted, "cpu_s", long, long) > _seconds(fitted, "cpu_s", short, short)


def _lengths_of(rows) -> list[Lengths]:
    return [Lengths(row.clips, row.chars) for row in rows]


def test_a_plan_puts_no_more_cpu_into_an_hour_than_the_machine_has(real_build, tmp_path):
    """Many workers on few items: the shards at once would divide the wall time past what the cores can do; the
    plan's wall time is never under its CPU time over the usable cores."""
    import shutil

    from s2sbench.pipeline.machine.cpu import usable_cores
    from s2sbench.pipeline.run.build_plan import plan_build

    store = tmp_path / "store"
    shutil.copytree(real_build.store, store)
    stories = load_task(str(real_build.task_files[0]))
    plan = plan_build([stories], tmp_path / "out", shard_size=1, store_root=store, runner="dask", workers=16)
    (task,) = plan.tasks
    assert task.costs_from.startswith("ledger") and task.shards_to_run == 3
    assert task.wall_s >= round(task.cpu_s / usable_cores(), 1) > 0


def test_a_build_killed_before_its_assembly_is_planned_from_its_shards(real_build, tmp_path):
    """A long build killed before it assembled anything has thousands of rows in the ledger and no assembly: the plan
    of its resume takes its costs from those rows (and says the assembly is not counted), not from a calibration of
    a few."""
    import json
    import shutil

    from s2sbench.pipeline.machine.costs import LEDGER_FILE
    from s2sbench.pipeline.run.build_plan import plan_build

    store = tmp_path / "store"
    shutil.copytree(real_build.store, store)
    ledger = store / LEDGER_FILE
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    shards = [line for line in lines if json.loads(line)["kind"] != "assembly"]
    assert len(shards) < len(lines)
    ledger.write_text("".join(shards), encoding="utf-8")
    (task,) = plan_build([load_task(str(real_build.task_files[0]))], tmp_path / "out", store_root=store).tasks
    assert task.costs_from.startswith("ledger") and task.costs_from.endswith("(no assembly yet: not counted)")
    assert task.cpu_s > 0
