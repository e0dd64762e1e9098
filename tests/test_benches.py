"""Every bench script imports against the current library: a bench that drifts from a renamed function fails here,
not when someone next runs it (the benches themselves are too slow for the default run)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parent.parent / "bench"


def _load(script: str, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    spec = importlib.util.spec_from_file_location(f"bench_under_test_{Path(script).stem}", BENCH_DIR / script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", sorted(path.name for path in BENCH_DIR.glob("*.py")))
def test_bench_script_imports(script, monkeypatch):
    module = _load(script, monkeypatch)
    assert module.__doc__, f"bench/{script} says what it measures in its docstring"


def test_the_gpu_bench_says_plainly_that_there_is_no_gpu(monkeypatch, capsys):
    from s2sbench.pipeline.machine.device import cuda_device_count

    if cuda_device_count():
        pytest.skip("a GPU is here: bench_gpu.py measures it (minutes), outside the test run")
    module = _load("bench_gpu.py", monkeypatch)
    monkeypatch.setattr(sys, "argv", ["bench_gpu.py"])
    assert module.main() == 0
    assert capsys.readouterr().out.startswith("no GPU found: CTranslate2 sees no CUDA device on this machine")


def test_the_stage_cost_section_is_the_real_builds_table(real_build, monkeypatch):
    """bench/stage_costs.py reads the cost table a real build wrote (one row per stage and voice); it builds nothing."""
    module = _load("stage_costs.py", monkeypatch)
    body = module.section(real_build.root, "s2sbench build stories.yaml")
    assert body.startswith("## Per-stage costs of a whole build\n\nBuild: fixture-stories-en (3 items, 4 rows kept), "
                           "fixture-choice-zh (2 items, 2 rows kept).")
    assert "`s2sbench build stories.yaml`" in body
    table = [line.split(" | ")[:3] for line in body.splitlines() if line.startswith("| ")][1:]
    voices = ["piper-en-joe", "piper-en-joe-slow", "espeak-zh-pinyin"]
    assert [row[:2] for row in table] == [["| synthesis", voice] for voice in voices] + [["| gate", table[3][1]]] + [
        ["| retries", voice] for voice in voices] + [["| assembly", "all"]]
    assert table[3][1].startswith("faster-whisper:tiny.en")
    assert [int(row[2]) for row in table[:3]] == [9, 9, 2]  # 3 stories x 3 texts per voice; 2 questions' contexts


def _replay_rows(body: str) -> dict[str, list[str]]:
    """The replay table's rows by their first cell (the policy's max_attempts)."""
    rows = [line.strip("| ").split(" | ") for line in body.splitlines() if line.startswith("| ")][1:]
    return {row[0]: row for row in rows}


def test_the_retry_replay_keeps_a_real_builds_rows_and_prices_fewer_attempts(real_build, monkeypatch, tmp_path):
    """bench/retry_replay.py on a real build: its own policy comes out as built, one attempt keeps exactly the rows
    whose every clip passed its first attempt and costs less, and a third attempt the build never made is said so."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    module = _load("retry_replay.py", monkeypatch)
    body = module.table(real_build.root, real_build.store, [module.Policy(1), module.Policy(3)], None,
                        tmp_path / "margins.jsonl", "task")
    assert "Its own policy replayed (the first line) keeps every row as the build did." in body
    build = BuildDir(real_build.root)
    attempts: dict[str, list] = {}
    for check in build.read_verification():
        attempts.setdefault(f"{check.item_id}@{check.voice}", []).append(check)
    first_time = sum(all(check.attempt == 1 for check in checks) and all(check.status != "rejected" for check in checks)
                     for checks in attempts.values())
    retried = sum(any(check.attempt == 2 for check in checks) for checks in attempts.values())
    assert retried  # story 3 is heard wrong on every attempt
    rows = _replay_rows(body)
    n_rows = len(attempts)
    assert rows["2 (as built)"][3].startswith(f"{len(build.read_manifest())}/{n_rows} ")
    assert rows["2 (as built)"][-1] == "1.00x"
    assert rows["1"][3].startswith(f"{first_time}/{n_rows} ")
    assert float(rows["1"][-1].rstrip("x")) < 1.0
    assert rows["3"][6] == str(retried)  # "not recorded": the rows that would need the attempt the build never made
    assert rows["2 (as built)"][4].startswith("fixture-stories-en ")
    # the build's own policy, replayed, costs what the build metered
    recorded = module.read_build(build, real_build.store)
    rows_recorded = module.recorded_rows(recorded)
    policy, margin = module.as_built(recorded, rows_recorded)
    replayed = module.replay(rows_recorded, recorded, policy, margin, module.Margins(tmp_path / "again.jsonl"), "task")
    metered = sum(cost.synthesis.cpu_s + cost.gate.cpu_s + cost.retries.cpu_s
                  for shard in build.finished_shards() for cost in shard.read_costs())
    assert metered > 0 and replayed.cpu_s(margin_cpu_s=0.5) == pytest.approx(metered)


def test_the_retry_replay_reads_a_build_in_progress_from_its_finished_shards(real_build, monkeypatch, tmp_path):
    """The same build without its finished outputs (report, manifests): a build stopped after its last shard. Its
    shards and build.json give the same table; without --store it says which store to pass."""
    import shutil

    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    module = _load("retry_replay.py", monkeypatch)
    stopped = tmp_path / "stopped"
    shutil.copytree(real_build.root, stopped)
    build = BuildDir(stopped)
    for finished in (build.report_path, build.verification_path):
        finished.unlink()
    policies = [module.Policy(1), module.Policy(2, 1)]
    margins = tmp_path / "margins.jsonl"  # one file: the second replay reads the margins the first asked, and their CPU
    whole = module.table(real_build.root, real_build.store, policies, 10.0, margins, "voice")
    in_progress = module.table(stopped, real_build.store, policies, 10.0, margins, "voice")
    assert "(in progress: its " in in_progress.splitlines()[0]
    assert in_progress.splitlines()[1:] == whole.splitlines()[1:]
    with pytest.raises(SystemExit, match="a build in progress: pass the clip store"):
        module.table(stopped, None, policies, 10.0, tmp_path / "m3.jsonl", "voice")


def test_the_retry_replay_asks_the_builds_judge_each_margin_once(real_build, monkeypatch, tmp_path):
    """A policy that keeps clips on the reference asks the build's own judge (Whisper tiny.en) for the margins the build
    never asked, keeps them, and a second replay reads them instead of asking again."""
    module = _load("retry_replay.py", monkeypatch)
    margins = tmp_path / "margins.jsonl"
    policies = [module.Policy(2, 1)]
    body = module.table(real_build.root, real_build.store, policies, 10.0, margins, "voice")
    asked = [json.loads(line) for line in margins.read_text().splitlines()]
    assert asked and all(isinstance(entry["margin"], float) and entry["cpu_s"] > 0 for entry in asked)
    assert all("|candidate:" in entry["id"] or "|context|" in entry["id"] for entry in asked)
    row = _replay_rows(body)["2"]
    assert row[1:3] == ["1", "10.0"] and int(row[7]) == len(asked)
    before = margins.read_bytes()
    assert module.table(real_build.root, real_build.store, policies, 10.0, margins, "voice") == body
    assert margins.read_bytes() == before


@pytest.mark.parametrize("policy, margin, says", [
    ((2, 3), 10.0, "reference_keep_after (3) is past max_attempts (2)"),
    ((2, 1), None, "set reference_margin_nats too"),
    ((0, None), None, "max_attempts"),
])  # fmt: skip
def test_the_retry_replay_refuses_a_policy_no_gate_can_have(real_build, monkeypatch, tmp_path, policy, margin, says):
    module = _load("retry_replay.py", monkeypatch)
    with pytest.raises(SystemExit, match="not a gate task fixture-") as refused:
        module.table(real_build.root, real_build.store, [module.Policy(*policy)], margin, tmp_path / "m.jsonl", "task")
    assert says in str(refused.value)


@pytest.mark.slow
def test_the_whole_set_command_writes_its_section_and_resumes(tmp_path):
    """bench/whole_set.py on a slice of the demo stories, every step for real (plan, build, check, publish --dry-run,
    eval, report), then again: each step is done, so the second run only writes the section, the same."""
    import subprocess

    command = [sys.executable, str(BENCH_DIR / "whole_set.py"), "demo-stories-en", "--out", str(tmp_path / "out"),
               "--limit", "2", "--sample", "2", "--workers", "1"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    section = (tmp_path / "out" / "section.md").read_text(encoding="utf-8")
    for heading in ("**Plan beside actual.**", "**The resume.**", "**Where the time went**",
                    "**Rows kept, and why the others were dropped.**", "**Independent check.**", "**Accuracy**"):
        assert heading in section, heading
    # 2 stories x the task's 2 voices
    assert "| run 1 (finished: rows 0 -> 4)" in section and "| piper-en-joe | 2 | 2 (100.0%) |" in section
    assert section.count("| run | task | rule |") == 1  # the accuracy table, not the conditions' after it
    assert (tmp_path / "out" / "hub" / "README.md").is_file() and (tmp_path / "out" / "report.html").is_file()
    second = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and len(list((tmp_path / "out" / "segments").glob("*.json"))) == 1
    assert (tmp_path / "out" / "section.md").read_text(encoding="utf-8").split("**Disk.**")[0] == section.split("**Disk.**")[0]
