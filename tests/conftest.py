"""Test-wide settings: Prefect offline in a temporary home, and a temporary clip store per test session."""

import os
import tempfile

import pytest

_SESSION_DIR = tempfile.mkdtemp(prefix="s2sbench-tests-")
# Set before anything imports prefect: analytics off (no network), a private PREFECT_HOME so result persistence and
# the ephemeral server's database never touch the user's, and a patient server start-up on this 2-core machine.
os.environ.setdefault("PREFECT_HOME", os.path.join(_SESSION_DIR, "prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
os.environ.setdefault("S2SBENCH_CLIP_STORE", os.path.join(_SESSION_DIR, "clips"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def prefect_harness():
    """A temporary Prefect API for tests that run flows (started once per session)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="session")
def real_build(tmp_path_factory):
    """A small build made by the real stages (Piper, espeak-ng, Whisper tiny.en), once per session: see
    tests/real_build.py for what it holds. Tests must not change it; copy it (and its store) to damage it."""
    from .real_build import make_real_build

    return make_real_build(tmp_path_factory.mktemp("real-build"))
