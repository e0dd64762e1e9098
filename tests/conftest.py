"""Test-wide settings: Prefect offline in a temporary home with one server per session, and a temporary clip store
per test session."""

import os
import tempfile

import pytest

_SESSION_DIR = tempfile.mkdtemp(prefix="s2sbench-tests-")
# Under pytest-xdist each worker is a session of its own, with its own Prefect home (server, database) and clip store.
# The controller process imports this file first and its values reach the workers through the environment: a worker
# replaces the ones under the controller's session folder (and keeps any the user set).
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


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect server for the whole session, for every test that runs a flow or a command that does work: the
    private server a command would start (loopback, analytics off, this session's PREFECT_HOME), set in
    PREFECT_API_URL so in-process flows, ``main([...])`` and CLI subprocesses all use it, with the flow-run settings
    of a command (no heartbeats). Yields its API URL."""
    from s2sbench.flows.server import flow_run_defaults, private_server

    with private_server() as api_url, flow_run_defaults():
        yield api_url


@pytest.fixture(scope="session")
def real_build(prefect_harness, tmp_path_factory):
    """A small build made by the build flow with the real stages (Piper, espeak-ng, Whisper tiny.en), once per
    session: see tests/real_build.py for what it holds. Tests must not change it; copy it (and its store) to damage
    it."""
    from .real_build import make_real_build

    return make_real_build(tmp_path_factory.mktemp("real-build"))
