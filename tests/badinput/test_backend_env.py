"""Backends that fail (exit 4) and machines that stand in the way (exit 5): one line saying what failed and what to
do, no traceback; a model's configuration mistakes are config errors (exit 2)."""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
from pathlib import Path

from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.errors import EnvironmentFault, environment_fault

from tests.badinput.conftest import STORIES, World, expect

REPO = Path(__file__).resolve().parents[2]


def eval_args(world: World, model: str, *model_args: str) -> list:
    return ["eval", "--dataset", world.real_build.root, "--model", model, "--out", world.out,
            *[part for arg in model_args for part in ("--model-arg", arg)]]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_llm_server_that_is_down(world):
    subject = world.root / "cmmlu" / "physics.csv"
    subject.parent.mkdir()
    subject.write_text(",Question,A,B,C,D,Answer\n0,光速约为每秒多少千米？,30万,3万,300万,3000,A\n", encoding="utf-8")
    llm = {"base_url": f"http://127.0.0.1:{closed_port()}/v1", "model": "m", "timeout_s": 5,
           "cache_dir": str(world.out / "llm-cache")}
    task = world.task(language="zh", voices=["espeak-zh-pinyin"], source={"loader": "cmmlu", "path": str(subject.parent)},
                      candidates={"construction": "scmmlu_rewrite", "options": {"rewriters": ["llm"], "llm": llm}})
    expect(world.run("items", task, "--out", world.out / "items.jsonl"), 4, r"backend error: .*cannot reach the chat API")


def test_an_unknown_model_suggests_the_closest(world):
    expect(world.run(*eval_args(world, "smolm2")), 2, r"unknown model 'smolm2' .*did you mean 'smollm2'\?")


def test_an_unknown_model_argument_is_a_config_error(world):
    expect(world.run(*eval_args(world, "smollm2", "temprature=0")), 2, r"config error: model 'smollm2': .*'temprature'")


def test_a_model_argument_without_a_value(world):
    expect(world.run(*eval_args(world, "smollm2", "temprature")), 2, r"--model-arg 'temprature': expected KEY=VALUE")


def test_a_bad_model_option_value(world):
    expect(world.run(*eval_args(world, "smollm2", "batch_size=-1")), 2, r"batch_size must be a positive integer, got -1")


def test_qwen2_audio_does_not_forward_trust_remote_code(world):
    expect(world.run(*eval_args(world, "qwen2-audio", "model=Qwen/Qwen2-Audio-7B", "trust_remote_code=true")), 2,
           r"model 'qwen2-audio': unknown option 'trust_remote_code'")


def test_remote_code_needs_the_explicit_flag(world):
    expect(world.run(*eval_args(world, "remote-code", "model=org/m")), 2, r"pass trust_remote_code=True")


def test_an_asr_model_that_cannot_load(world):
    expect(world.run("verify", world.real_build.root, "--model", "tiny.enn", "--out", world.out), 4,
           r"faster-whisper cannot load ASR model 'tiny.enn'")


def test_a_bad_engine_core_share_is_a_config_error(world):
    world.monkeypatch.setenv("S2SBENCH_ENGINE_CORES", "two")
    expect(world.run("verify", world.real_build.root, "--out", world.out), 2,
           r"config error: S2SBENCH_ENGINE_CORES must be a whole number of cores >= 1, got 'two'")


def test_an_unknown_asr_engine(world):
    expect(world.run("verify", world.real_build.root, "--engine", "whisperx", "--out", world.out), 2,
           r"unknown ASR engine 'whisperx'")


# --- the machine --------------------------------------------------------------------------------------------------------
def test_a_build_folder_in_use(world):
    out = world.out / "build"
    with BuildDir(out).lock():
        expect(world.run("build", world.task(), "--out", out), 5, r"environment error: build folder .* is in use by s2sbench pid")


def test_an_output_below_a_file(world):
    (world.out).mkdir()
    (world.out / "file").write_text("mine")
    expect(world.run("items", world.task(), "--out", world.out / "file" / "items.jsonl"), 5,
           r"environment error: .*items.jsonl: (Not a directory|File exists); a (part of the path|file) is")


def test_an_output_folder_that_cannot_be_written(world):
    # /sys refuses new files to every user (root included) on any Linux: a folder the user cannot write
    expect(world.run("items", world.task(), "--out", "/sys/s2sbench-test/items.jsonl"), 5,
           r"environment error: /sys/s2sbench-test/items.jsonl: (Permission denied|Operation not permitted|Read-only file system); "
           r"choose a")


def test_a_full_disk_ends_the_write_cleanly(world):
    """A write that fails midway (here a file-size limit, as a full disk does) leaves no partial file and says so."""
    world.source(rows=[{**STORIES[0], "id": f"s{n}"} for n in range(200)])
    out = world.out / "items.jsonl"
    limit = "import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (20000, resource.RLIM_INFINITY))"
    command = [sys.executable, "-c", f"{limit}\nfrom s2sbench.flows.cli import main\nsys.exit(main(sys.argv[1:]))",
               "items", str(world.task()), "--out", str(out)]
    before = world.untouched()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 5, done.stderr[-2000:]
    assert "environment error:" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists() and not list(out.parent.glob(".*.tmp")), "no partial or temporary file is left"
    assert world.untouched() == before


def test_no_space_and_other_machine_errors_are_environment_faults():
    fault = environment_fault(OSError(errno.ENOSPC, "No space left on device", "/data/x"))
    assert isinstance(fault, EnvironmentFault) and fault.exit_code == 5
    assert str(fault) == "/data/x: No space left on device; free some space (or choose another folder) and run again; it resumes"
    assert environment_fault(OSError(errno.EROFS, "Read-only file system", "/ro")) is not None
    assert environment_fault(FileNotFoundError(errno.ENOENT, "No such file", "/x")) is None, "a missing file is a bug"


def test_a_plain_library_value_error_stays_a_bug(world, monkeypatch):
    """A ValueError from a library is not dressed up as a user error: it keeps its traceback (exit 1)."""
    import pytest

    from s2sbench.pipeline.catalog import tasks

    def broken(name_or_path):
        raise ValueError("a library's own bug")

    monkeypatch.setattr(tasks, "load_task", broken)
    with pytest.raises(ValueError, match="a library's own bug"):
        world.run("items", "demo-stories-en", "--out", world.out / "items.jsonl")
