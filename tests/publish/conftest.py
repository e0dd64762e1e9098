"""Fixtures for the publishing tests: the session's real build (tests/real_build.py) and a local Hub.

The Hub endpoint is fixed before ``huggingface_hub`` or ``datasets`` read it at import time: a free loopback port
is chosen here and the server starts on it. If either library was imported earlier (a whole-suite run), the
``local_hub`` fixture points their module constants at the server too.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


HUB_PORT = _free_port()
os.environ["HF_ENDPOINT"] = f"http://127.0.0.1:{HUB_PORT}"
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.pop("HF_DATASETS_OFFLINE", None)


from tests.publish.local_hub import LocalHub  # noqa: E402

FAKE_TOKEN = "hf_fixtureTOKEN0123456789secret"


@pytest.fixture(scope="session")
def build_dir(real_build) -> Path:
    """The session's real build (tests/real_build.py): publishing starts from what a build really writes."""
    return real_build.root


@pytest.fixture(scope="session")
def _hub_server():
    hub = LocalHub(port=HUB_PORT).start()
    yield hub
    hub.stop()


@pytest.fixture
def local_hub(_hub_server, monkeypatch, tmp_path):
    """The running local Hub, with faults cleared, the libraries pointed at it, HF_TOKEN set to a fake token and
    the Hugging Face caches in the test's folder (never the user's, never an earlier run's)."""
    import datasets.config
    import huggingface_hub.constants as hub_constants

    endpoint = _hub_server.endpoint
    monkeypatch.setattr(hub_constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(hub_constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(hub_constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(datasets.config, "HF_ENDPOINT", endpoint)
    monkeypatch.setattr(datasets.config, "HUB_DATASETS_URL", endpoint + "/datasets/{repo_id}/resolve/{revision}/{path}")
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hf-hub-cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets-cache")
    _hub_server.clear_faults()
    _hub_server.requests.clear()
    yield _hub_server
    _hub_server.clear_faults()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
