"""What a failed command prints: its error once, in one line. Prefect's own records of the failed run (its ERROR
lines, "Finished in state Failed(...)") stay in the Prefect API and under --debug, and the "View at" link of a
server that stops with the command is not printed."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from s2sbench.flows import server
from s2sbench.flows.cli import _OneErrorLine


def _run(*argv: str, cwd) -> subprocess.CompletedProcess:
    # the session's server (PREFECT_API_URL is inherited): the command starts none of its own
    return subprocess.run([sys.executable, "-m", "s2sbench.flows.cli", *argv], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.mark.usefixtures("prefect_harness")
def test_a_command_that_fails_inside_its_flow_prints_its_error_once(tmp_path):
    result = _run("eval", "--dataset", str(tmp_path / "missing"), "--model", "smollm2", "--out", str(tmp_path / "o"),
                  cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.splitlines()
    assert sum("no such folder, and not a Hub dataset id" in line for line in lines) == 1, result.stderr
    assert lines[-1].startswith("s2sbench eval: config error: --dataset ")
    assert not [line for line in lines if line.startswith("ERROR") or "Finished in state Failed" in line], result.stderr


def _record(name: str, level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, None, None)


def test_the_console_leaves_out_a_dead_link_and_a_failed_runs_records(monkeypatch):
    quiet = _OneErrorLine()
    link = _record("prefect.flow_runs", logging.INFO, "View at http://127.0.0.1:4242/runs/flow-run/x")
    # none of this process's own: the session's harness records its server there when a test before this one used it
    monkeypatch.setattr(server, "_PRIVATE_SERVERS", set())
    assert quiet.filter(link)  # a server that outlives the command: its link works
    monkeypatch.setattr(server, "_PRIVATE_SERVERS", {"http://127.0.0.1:4242/api"})  # as private_server() records it
    assert server.private_server_running() and not quiet.filter(link)
    assert not quiet.filter(_record("prefect.task_runs", logging.ERROR, "Task run failed with exception: X"))
    assert not quiet.filter(_record("prefect.flow_runs", logging.INFO, "Finished in state Failed('Flow run ...')"))
    assert quiet.filter(_record("prefect.flow_runs", logging.INFO, "Finished in state Completed()"))
    assert quiet.filter(_record("s2sbench.progress", logging.INFO, "build out: 1/2 rows"))
