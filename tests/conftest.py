"""Test-wide settings: Prefect offline in a temporary home with one server per test run, and a temporary clip store
per test session."""

import contextlib
import os
import tempfile
import time
from pathlib import Path

import pytest

_SESSION_DIR = tempfile.mkdtemp(prefix="s2sbench-tests-")
# Under pytest-xdist each worker is a session of its own, with its own Prefect home and clip store; the controller
# runs the one Prefect server they all use (see pytest_configure). The controller process imports this file first and
# its values reach the workers through the environment: a worker replaces the ones under the controller's session
# folder (and keeps any the user set).
_INHERITED_SESSION_DIR = os.environ.get("S2SBENCH_TESTS_SESSION_DIR")
os.environ["S2SBENCH_TESTS_SESSION_DIR"] = _SESSION_DIR


def _session_default(key: str, value: str) -> None:
    current = os.environ.get(key)
    if current is None or (_INHERITED_SESSION_DIR and current.startswith(_INHERITED_SESSION_DIR)):
        os.environ[key] = value


# Set before anything imports prefect: analytics off (no network), a private PREFECT_HOME so result persistence and
# the ephemeral server's database never touch the user's, and a patient server start-up on this 2-core machine.
_session_default("PREFECT_HOME", os.path.join(_SESSION_DIR, "prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
_session_default("S2SBENCH_CLIP_STORE", os.path.join(_SESSION_DIR, "clips"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# pytest-xdist workers share the machine as a local Dask cluster's workers do: each one's engines get its share of the
# cores (s2sbench.pipeline.machine.cpu), not every core each (ONNX Runtime's idle threads spin, and the workers fight over them)
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    from s2sbench.pipeline.machine.cpu import ENGINE_CORES_ENV, cores_per_worker

    os.environ.setdefault(ENGINE_CORES_ENV, str(cores_per_worker(int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))
# The workers and the commands they start run engines on threads, as a Dask worker does: they start with its allocator
# settings (s2sbench.pipeline.machine.cpu), or every Whisper pass on a thread faults its buffers in afresh. The shipped-tasks
# build measured alone: 2.3 M page faults and 9.9 s of system CPU without them, 0.67 M and 3.8 s with them.
if not os.environ.get("PYTEST_XDIST_WORKER"):  # read by glibc at a process's start: set in the controller
    from s2sbench.pipeline.machine.cpu import ENGINE_MALLOC_ENV

    for _name, _value in ENGINE_MALLOC_ENV.items():
        os.environ.setdefault(_name, _value)


# the address and the database file of the server the pytest-xdist controller runs for its workers
_RUN_SERVER_ENV = "S2SBENCH_TESTS_PREFECT_API_URL"
_RUN_SERVER_DATABASE_ENV = "S2SBENCH_TESTS_PREFECT_DATABASE"


def _server_database() -> str:
    """The SQLite file of the Prefect server this process would start."""
    from prefect.settings import get_current_settings

    url = get_current_settings().server.database.connection_url.get_secret_value()
    assert url.startswith("sqlite+aiosqlite:///"), f"the tests' Prefect servers run on SQLite, not {url}"
    return url.removeprefix("sqlite+aiosqlite:///")


def run_server_database() -> Path:
    """The database of the test run's Prefect server (the ``prefect_harness`` fixture starts or waits for it)."""
    return Path(os.environ.get(_RUN_SERVER_DATABASE_ENV) or _server_database())


def pytest_configure(config):
    """The pytest-xdist controller starts the Prefect server of the whole run before its workers start, and stops it
    at the end: the workers inherit its address (PREFECT_API_URL) instead of each starting a server of its own. Its
    first requests wait in the listening socket's backlog while it starts."""
    distributing = config.getoption("dist", "no") != "no" and config.getoption("tx", None)  # as pytest-xdist decides
    if os.environ.get("PYTEST_XDIST_WORKER") or not distributing or config.option.collectonly:
        return
    from s2sbench.flows.server import private_server

    server = contextlib.ExitStack()
    os.environ[_RUN_SERVER_ENV] = server.enter_context(private_server())
    os.environ[_RUN_SERVER_DATABASE_ENV] = _server_database()
    config.add_cleanup(server.close)


@pytest.hookimpl(trylast=True)  # after -m and -k deselected theirs
def pytest_collection_modifyitems(items):
    """The first test that uses the run's real build runs first (it makes the build) and its other users run last:
    under pytest-xdist the other workers then run other tests while the build is made, instead of waiting for it."""
    users = [item for item in items if "real_build" in item.fixturenames]
    if users:
        items[:] = [users[0], *(item for item in items if "real_build" not in item.fixturenames), *users[1:]]


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect server for the whole test run, for every test that runs a flow or a command that does work: the
    private server a command would start (loopback, analytics off), set in PREFECT_API_URL so in-process flows,
    ``main([...])`` and CLI subprocesses all use it, with the flow-run settings of a command (no heartbeats); under
    pytest-xdist the controller's (see pytest_configure), else this session's. Yields its API URL."""
    from s2sbench.flows.server import flow_run_defaults, is_healthy, private_server, startup_timeout_s

    run_server = os.environ.get(_RUN_SERVER_ENV)
    if run_server is None:
        with private_server() as api_url, flow_run_defaults():
            yield api_url
        return
    deadline = time.monotonic() + startup_timeout_s()
    while not is_healthy(run_server):
        assert time.monotonic() < deadline, f"the test run's Prefect server ({run_server}) did not answer"
        time.sleep(0.5)
    with flow_run_defaults():
        yield run_server


@pytest.fixture(scope="session")
def run_folder(tmp_path_factory) -> Path:
    """A temporary folder that every session of this test run shares (pytest-xdist gives each worker a folder of its
    own inside the run's)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def shared_clip_store(run_folder) -> Path:
    """A clip store for tests that speak the same texts in the same voices, whichever worker runs them: the first
    makes the clips, the others find them (the store is content-addressed and writes atomically)."""
    return run_folder / "shared-clips"


@pytest.fixture(scope="session")
def real_build(prefect_harness, run_folder):
    """A small build made by the build flow with the real stages (Piper, espeak-ng, Whisper tiny.en), once per test
    run: see tests/real_build.py for what it holds. Tests must not change it; copy it (and its store) to damage it."""
    from tests.real_build import shared_real_build

    return shared_real_build(run_folder)


@pytest.fixture
def fake_gpu(monkeypatch):
    """A machine with one CUDA GPU, as CTranslate2 and ONNX Runtime (onnxruntime-gpu) report it, with faster-whisper's
    model loading on this CPU what was asked for the GPU (the asks are in the returned list) and a fresh ASR cache;
    ``--device`` unset. torch still has no CUDA, as on a machine with a CPU-only torch."""
    import faster_whisper

    import s2sbench.pipeline.gate.asr
    import s2sbench.pipeline.machine.device as device

    asked: list[tuple[str, str]] = []

    class LoadedOnThisCPU(faster_whisper.WhisperModel):
        def __init__(self, location, device="auto", compute_type="default", **options):
            asked.append((device, compute_type))
            super().__init__(location, device="cpu", compute_type="int8", **options)

    monkeypatch.setattr(device, "cuda_device_count", lambda: 1)
    monkeypatch.setattr(device, "_onnx_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.setattr(faster_whisper, "WhisperModel", LoadedOnThisCPU)
    monkeypatch.setattr(s2sbench.pipeline.gate.asr, "_LOADED", {})
    monkeypatch.setenv(device.DEVICE_ENV, "")  # recorded, so a command that sets it in this process is undone
    return asked
