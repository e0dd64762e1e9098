"""Which Prefect API a command's flow talks to, and the local Prefect servers s2sbench starts and stops.

In order of preference:

1. ``PREFECT_API_URL`` (environment, Prefect profile or settings context) names a server: use it.
2. A local server started by ``s2sbench server start`` is alive: use it (its state is a JSON file in
   ``PREFECT_HOME``; it keeps running until ``s2sbench server stop``).
3. Otherwise a private server serves this command only. It is a child process that exits when the command does, on
   every path: a normal exit or an exception stops it; a SIGKILLed command takes it along (the child asks the kernel
   for SIGTERM when its parent dies, ``PR_SET_PDEATHSIG`` on Linux, and polls its parent everywhere).

Every server s2sbench starts binds 127.0.0.1 only, has Prefect's analytics off and records task runs in batches
(:data:`SERVER_DEFAULTS`); a command's flow runs send no heartbeats (:func:`flow_run_defaults`). The listening socket
is bound before the server process starts and handed to it, so the port is never raced and a command's first API
call simply waits in the socket's backlog while the server imports; the command does its own imports meanwhile.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from s2sbench.pipeline.core.errors import EnvironmentFault

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 4200  # Prefect's own default, so `prefect` commands find the UI where they expect it
STATE_FILE = "s2sbench-server.json"
LOCK_FILE = "s2sbench-server.lock"
LOG_FILE = "s2sbench-server.log"
STOP_GRACE_S = 10.0
# the environment every server s2sbench starts runs with: nothing leaves the machine
SERVER_ENVIRONMENT = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT__SERVER_FINAL": "1"}
# Defaults the user's environment overrides. Each task run sends the server three events (Pending, Running,
# Completed) from which its task-run recorder writes the run; Prefect's default writes each event in a database
# transaction of its own: ~75 ms of the server's CPU per task run on a loaded 2-core machine, where the client's own
# cost is ~12 ms, taken from the stages running beside it. In batches of up to 50, written at least every second, it
# is a third of that, and the UI shows a task run's state at most a second later. Automations (the triggers
# service) and the events feed (the event persister) stay on.
SERVER_DEFAULTS = {"PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "50",
                   "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL": "1"}
PR_SET_PDEATHSIG = 1


class ServerError(EnvironmentFault):
    """A Prefect server could not be started, reached or stopped."""


@dataclass(frozen=True)
class ServerState:
    """What ``s2sbench server start`` records about the server it started."""

    pid: int
    port: int
    prefect_home: str
    log: str
    started_at: float

    @property
    def api_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/api"

    @property
    def ui_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"


def prefect_home() -> Path:
    from prefect.settings import PREFECT_HOME

    return Path(PREFECT_HOME.value()).expanduser()


def state_path() -> Path:
    return prefect_home() / STATE_FILE


def startup_timeout_s() -> float:
    from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

    return float(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value())


# loopback only: an HTTP proxy from the environment must not see these requests
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def is_healthy(api_url: str, timeout_s: float = 2.0) -> bool:
    try:
        with _DIRECT.open(f"{api_url}/health", timeout=timeout_s) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def _listening_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as error:
        sock.close()
        raise ServerError(
            f"cannot listen on {LOOPBACK}:{port} ({error.strerror}); another server may hold it: "
            f"choose another with --port, or use that server with PREFECT_API_URL=http://{LOOPBACK}:{port}/api"
        ) from error
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def server_environment(ui: bool) -> dict[str, str]:
    """The environment of a server s2sbench starts: :data:`SERVER_DEFAULTS`, then this process's, then
    :data:`SERVER_ENVIRONMENT`."""
    env = {**SERVER_DEFAULTS, **os.environ, **SERVER_ENVIRONMENT, "PREFECT_UI_ENABLED": "1" if ui else "0"}
    env.pop("PREFECT_API_URL", None)  # a server is not its own client
    return env


def _spawn(sock: socket.socket, log, ui: bool, parent: int | None) -> subprocess.Popen:
    command = [sys.executable, "-m", "s2sbench.flows.server", "--fd", str(sock.fileno())]
    command += ["--ui"] if ui else []
    command += ["--parent", str(parent)] if parent is not None else []
    # its own session: a Ctrl-C in the terminal reaches the command, which then stops its server in order
    process = subprocess.Popen(command, env=server_environment(ui), pass_fds=[sock.fileno()], stdin=subprocess.DEVNULL,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    sock.close()  # the child holds the only copy: if it dies, clients are refused instead of left waiting
    return process


def _wait_healthy(process: subprocess.Popen, api_url: str, log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not is_healthy(api_url):
        if process.poll() is not None:
            raise ServerError(f"the Prefect server exited with code {process.returncode} while starting: {_tail(log_path)}")
        if time.monotonic() > deadline:
            _stop_process(process)
            raise ServerError(
                f"the Prefect server did not answer within {timeout_s:.0f} s (raise "
                f"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS on a busy machine): {_tail(log_path)}"
            )
        time.sleep(0.2)


def _tail(path: Path, chars: int = 1500) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "(no server log)"
    return text[-chars:] or "(the server log is empty)"


def _stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---- the server started once and reused: `s2sbench server start|status|stop` ----


def read_state() -> ServerState | None:
    try:
        return ServerState(**json.loads(state_path().read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as error:
        raise ServerError(f"{state_path()}: not a server state file ({error}); delete it and start again") from error


def _write_state(state: ServerState) -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(asdict(state), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but not ours
        return True
    return True


def _is_our_server(pid: int) -> bool:
    """Whether ``pid`` is still the server we started (a pid can be reused once that process is gone)."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            return b"s2sbench.flows.server" in cmdline.read_bytes()
        except OSError:
            return False
    return _pid_alive(pid)


def running_server() -> ServerState | None:
    """The server ``s2sbench server start`` started, if it still answers; a stale state file is removed."""
    state = read_state()
    if state is None:
        return None
    if is_healthy(state.api_url):
        return state
    if not (_pid_alive(state.pid) and _is_our_server(state.pid)):
        state_path().unlink(missing_ok=True)
        return None
    return state  # alive but not answering yet (starting, or busy): still the one to use and to stop


@contextlib.contextmanager
def _state_lock() -> Iterator[None]:
    """One ``start`` or ``stop`` at a time per Prefect home: two starts never make two servers."""
    import fcntl

    home = prefect_home()
    home.mkdir(parents=True, exist_ok=True)
    with open(home / LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def start_server(port: int = DEFAULT_PORT, ui: bool = True) -> tuple[ServerState, bool]:
    """Start the shared local server in the background; returns its state and whether it was started now."""
    with _state_lock():
        existing = running_server()
        if existing is not None:
            return existing, False
        return _start_detached(port, ui), True


def _start_detached(port: int, ui: bool) -> ServerState:
    home = prefect_home()
    log_path = home / LOG_FILE
    sock = _listening_socket(port)
    port = sock.getsockname()[1]
    with open(log_path, "ab") as log:
        process = _spawn(sock, log, ui, parent=None)
    state = ServerState(pid=process.pid, port=port, prefect_home=str(home), log=str(log_path), started_at=time.time())
    _write_state(state)  # before the wait: a start interrupted while waiting leaves a server `stop` finds
    try:
        _wait_healthy(process, state.api_url, log_path, startup_timeout_s())
    except ServerError:
        state_path().unlink(missing_ok=True)
        raise
    return state


def stop_server() -> ServerState | None:
    """Stop the shared local server; returns its state, or None when none was running."""
    with _state_lock():
        state = running_server()
        if state is not None:
            _end(state.pid)
            state_path().unlink(missing_ok=True)
        return state


def _end(pid: int) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


# ---- what a command uses ----


@contextlib.contextmanager
def _api_url_set(api_url: str, request_timeout_s: float | None = None) -> Iterator[str]:
    """Point Prefect (this process, and subprocesses such as Dask workers) at ``api_url``."""
    from prefect.settings import PREFECT_API_REQUEST_TIMEOUT, PREFECT_API_URL, temporary_settings

    updates = {PREFECT_API_URL: api_url}
    if request_timeout_s is not None:
        updates[PREFECT_API_REQUEST_TIMEOUT] = max(request_timeout_s, PREFECT_API_REQUEST_TIMEOUT.value())
    previous = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = api_url
    try:
        with temporary_settings(updates=updates):
            yield api_url
    finally:
        if previous is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = previous


@contextlib.contextmanager
def private_server() -> Iterator[str]:
    """A server for the duration of the block that goes with this process however it ends; yields its API URL."""
    sock = _listening_socket(0)
    api_url = f"http://{LOOPBACK}:{sock.getsockname()[1]}/api"
    with tempfile.NamedTemporaryFile(prefix="s2sbench-prefect-", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
        process = _spawn(sock, log, ui=False, parent=os.getpid())
    _PRIVATE_SERVERS.add(api_url)
    try:
        # the first API call waits in the backlog while the server starts: allow it the start-up time
        with _api_url_set(api_url, request_timeout_s=startup_timeout_s()):
            try:
                yield api_url
            except Exception as error:
                if process.poll() is not None and process.returncode != 0:
                    raise ServerError(
                        f"this command's Prefect server exited with code {process.returncode}: {_tail(log_path)}"
                    ) from error
                raise
    finally:
        if process.poll() is None:
            _flush_prefect_clients()
        _stop_process(process)
        log_path.unlink(missing_ok=True)
        _PRIVATE_SERVERS.discard(api_url)


_PRIVATE_SERVERS: set[str] = set()  # the API URLs of the servers this process runs for one command


def private_server_running() -> bool:
    """Whether this process's flows talk to a server that stops when the command ends (its UI links lead nowhere)."""
    return bool(_PRIVATE_SERVERS)


def _flush_prefect_clients() -> None:
    """Send the logs and events Prefect still buffers, while the server that takes them is up."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        worker.drain_all(timeout=STOP_GRACE_S)


def flow_run_defaults() -> contextlib.AbstractContextManager:
    """Prefect settings for the flow runs in the block, each only where the user has not set it.

    No flow-run heartbeats (``PREFECT_FLOWS_HEARTBEAT_FREQUENCY``, Prefect's default 180 s): Prefect's heartbeat
    thread sleeps in one-second steps and a flow run waits for it to notice the run's end, up to 1 s more for every
    flow and subflow run (an empty flow run took 1.4 s with them, 0.3 s without, on a loaded 2-core machine).
    Heartbeats serve only an automation that marks a silent run crashed, which no server s2sbench starts has; set
    the variable to have them.
    """
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    return temporary_settings(set_defaults={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})


@contextlib.contextmanager
def prefect_api() -> Iterator[str]:
    """The Prefect API for a command's flows (see the module docstring for the order), with
    :func:`flow_run_defaults`; yields its URL."""
    with flow_run_defaults(), _chosen_api() as api_url:
        yield api_url


@contextlib.contextmanager
def _chosen_api() -> Iterator[str]:
    from prefect.settings import PREFECT_API_URL

    configured = PREFECT_API_URL.value()
    if configured:
        yield configured
        return
    shared = running_server()
    if shared is not None:
        with _api_url_set(shared.api_url, request_timeout_s=startup_timeout_s()) as api_url:
            yield api_url
        return
    with private_server() as api_url:
        yield api_url


# ---- the server process itself: python -m s2sbench.flows.server --fd N [--parent PID] [--ui] ----


def _exit_with_parent(parent: int) -> None:
    """SIGTERM this process when ``parent`` dies, SIGKILL of the parent included."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)

    def watch() -> None:  # also covers other platforms, and a parent that died before prctl
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(STOP_GRACE_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def serve(fd: int, ui: bool, parent: int | None) -> None:
    if parent is not None:
        _exit_with_parent(parent)
    import uvicorn
    from prefect.server.api.server import create_app

    # a private server needs no UI and none of the background services (scheduler, late runs) of a shared one
    app = create_app(final=True, ephemeral=not ui)
    uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on")).run(sockets=[socket.socket(fileno=fd)])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Run a Prefect API server on an inherited listening socket.")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--ui", action="store_true")
    parser.add_argument("--parent", type=int)
    arguments = parser.parse_args()
    serve(arguments.fd, arguments.ui, arguments.parent)
