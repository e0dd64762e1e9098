"""The Prefect server a command uses: PREFECT_API_URL, else the started local server, else a private one that dies
with the command (SIGKILL included). Real CLI subprocesses, real servers, a one-clip espeak-ng build."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from s2sbench.flows import server

from tests.conftest import run_server_database


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory, prefect_harness) -> Path:
    """One Prefect home for this module's servers, its database a copy of the test run's server's: a server on an
    empty database first runs Prefect's migrations, 12 s of CPU on these machines, which that server has run."""
    home = tmp_path_factory.mktemp("prefect-home")
    with contextlib.closing(sqlite3.connect(run_server_database())) as source:
        with contextlib.closing(sqlite3.connect(home / "prefect.db")) as copy:
            source.backup(copy)  # consistent while that server writes, unlike a file copy
    return home


@pytest.fixture(scope="module")
def cli_env(prefect_home) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    return {**env, "PREFECT_HOME": str(prefect_home)}


@pytest.fixture(scope="module")
def one_clip_task(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("one-clip")
    items = folder / "items.jsonl"
    row = {"id": "a1", "context": "Tom went to the market.", "candidates": ["He bought bread.", "He ate a chair."], "right": 0}
    items.write_text(json.dumps(row) + "\n", encoding="utf-8")
    task = folder / "one-clip.yaml"
    task.write_text(
        f"name: one-clip\nlanguage: en\nsource: {{loader: jsonl, path: {items}}}\nvoices: [espeak-en-us]\n"
        "speak: [context]\ngate: {metric: wer, max_error_rate: 1.0, max_attempts: 1, "
        "asr: {engine: faster-whisper, model: tiny.en}}\n",
        encoding="utf-8",
    )
    return task


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "s2sbench.flows.cli", *args]


def _private_servers_of(pid: int) -> list[int]:
    """Pids of the private Prefect servers whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"s2sbench.flows.server" in argv and b"--parent" in argv and argv[argv.index(b"--parent") + 1] == str(pid).encode():
            found.append(int(entry.name))
    return found


def _gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"):
            return True  # exited, waiting for its (init) parent to reap it
        time.sleep(0.1)
    return False


def _flow_runs_into(api_url: str, out_dir: Path) -> list[str]:
    """The state names of the server's flow runs that built into ``out_dir``."""
    request = urllib.request.Request(f"{api_url}/flow_runs/filter", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        runs = json.loads(response.read())
    return [run["state_name"] for run in runs if run["parameters"].get("out_dir") == str(out_dir)]


def test_a_sigkilled_command_leaves_no_server_behind(cli_env, one_clip_task, tmp_path):
    out = tmp_path / "build"
    command = _cli("build", str(one_clip_task), "--out", str(out), "--store", str(tmp_path / "clips"))
    process = subprocess.Popen(command, env=cli_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        # items are written by the flow's first task: the private server is up and serving by then
        while not (out / "items").exists():
            assert process.poll() is None, process.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the build never started its flow"
            time.sleep(0.1)
        children = _private_servers_of(process.pid)
        assert len(children) == 1, f"expected one private server, found {children}"
    finally:
        process.kill()  # SIGKILL of the command alone: nothing of it runs any clean-up
        process.wait()
    assert _gone(children[0], timeout_s=20), "the private Prefect server outlived its SIGKILLed command"


def test_a_started_server_is_reused_and_stops_when_asked(cli_env, one_clip_task, prefect_home, tmp_path):
    started = subprocess.run(_cli("server", "start", "--port", "0"), env=cli_env, capture_output=True, text=True, timeout=400)
    assert started.returncode == 0, started.stderr
    state = server.ServerState(**json.loads((prefect_home / server.STATE_FILE).read_text()))
    try:
        again = subprocess.run(_cli("server", "start", "--port", "0"), env=cli_env, capture_output=True, text=True)
        assert "already running" in again.stdout and state.api_url in again.stdout

        out = tmp_path / "build"
        build = subprocess.Popen(_cli("build", str(one_clip_task), "--out", str(out), "--store",
                                      str(tmp_path / "clips")), env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        spawned: set[int] = set()
        while build.poll() is None:
            spawned.update(_private_servers_of(build.pid))
            time.sleep(0.2)
        stdout, stderr = build.communicate()
        assert build.returncode == 0, stderr.decode()[-2000:]
        assert not spawned, "the command started its own server instead of reusing the started one"
        assert b"Starting temporary server" not in stderr and b"telemetry" not in stderr.lower()
        assert _flow_runs_into(state.api_url, out) == ["Completed"]  # the build ran against the started server

        status = subprocess.run(_cli("server", "status"), env=cli_env, capture_output=True, text=True)
        assert status.returncode == 0 and state.api_url in status.stdout
    finally:
        stopped = subprocess.run(_cli("server", "stop"), env=cli_env, capture_output=True, text=True)
    assert stopped.returncode == 0 and f"pid {state.pid}" in stopped.stdout
    assert _gone(state.pid, timeout_s=20)
    assert not (prefect_home / server.STATE_FILE).exists()


def test_prefect_api_url_wins_and_a_stale_state_file_is_dropped(tmp_path, monkeypatch):
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings

    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        with server.prefect_api() as api_url:
            assert api_url == "http://127.0.0.1:9/api"

    with temporary_settings({PREFECT_HOME: tmp_path}):
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        stale = server.ServerState(pid=dead.pid, port=9, prefect_home=str(tmp_path), log="", started_at=0.0)
        (tmp_path / server.STATE_FILE).write_text(json.dumps(stale.__dict__))
        assert server.running_server() is None
        assert not (tmp_path / server.STATE_FILE).exists()

        (tmp_path / server.STATE_FILE).write_text("{not json")
        with pytest.raises(server.ServerError, match="not a server state file"):
            server.read_state()


def test_a_busy_port_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind((server.LOOPBACK, 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(server.ServerError, match=f"cannot listen on 127.0.0.1:{port}.*--port"):
            server.start_server(port=port)


CHILD = """
import os, time
from s2sbench.flows.server import _exit_with_parent
_exit_with_parent(os.getppid())
print("armed", flush=True)
time.sleep(600)
"""
STAND_IN_PARENT = f"""
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", {CHILD!r}])
print(child.pid, flush=True)
time.sleep(600)
"""


def test_the_server_process_exits_when_its_parent_dies():
    """The parent watch itself, in a child of a stand-in parent that is then SIGKILLed."""
    parent = subprocess.Popen([sys.executable, "-c", STAND_IN_PARENT], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert parent.stdout.readline().strip() == "armed"
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert _gone(child, timeout_s=10)


def test_flow_runs_send_no_heartbeats_unless_the_user_sets_them():
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, get_current_settings, temporary_settings

    with server.flow_run_defaults():
        assert get_current_settings().flows.heartbeat_frequency is None
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: 90}):  # as from the user's environment
        with server.flow_run_defaults():
            assert get_current_settings().flows.heartbeat_frequency == 90


def test_servers_record_task_runs_in_batches_unless_the_user_sets_otherwise(monkeypatch):
    batch = "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE"
    monkeypatch.delenv(batch, raising=False)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    environment = server.server_environment(ui=False)
    assert environment[batch] == "50" and "PREFECT_API_URL" not in environment
    monkeypatch.setenv(batch, "1")
    assert server.server_environment(ui=True)[batch] == "1"


COUNTING = """
from prefect import flow
from s2sbench.flows.server import flow_run_defaults, private_server
from s2sbench.flows.stages import stage

@stage("count", "count {number}")
def count(number):
    return number

@flow(name="counting", persist_result=False)
def counting(n):
    for number in range(n):
        count(number)

with private_server(), flow_run_defaults():  # a command's server, stopped right after its flow
    print(counting(12, return_state=True).state_details.flow_run_id)
"""


def test_task_runs_still_queued_when_a_server_stops_are_recorded(cli_env, prefect_home):
    """The server writes task runs in batches (at least every second): a command's server that stops right after its
    flow writes the rest on its way out, so the database (which a later server shows) has every one of them."""
    import sqlite3

    done = subprocess.run([sys.executable, "-c", COUNTING], env=cli_env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = done.stdout.strip().splitlines()[-1]
    with sqlite3.connect(prefect_home / "prefect.db") as database:  # Prefect's own table of task runs
        rows = database.execute("SELECT name, state_type FROM task_run WHERE flow_run_id = ?", (run_id,)).fetchall()
    assert sorted(rows) == sorted((f"count {number}", "COMPLETED") for number in range(12))
