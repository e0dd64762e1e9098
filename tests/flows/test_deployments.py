"""prefect.yaml: every deployment points at a flow that exists (a missing entrypoint is a real bug seen in the wild),
and a deployment served the way Prefect runs one (a runner process, the flow run in a process of its own) runs."""

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml
from prefect import Flow
from prefect.flows import load_flow_from_entrypoint

ROOT = Path(__file__).resolve().parents[2]


def _deployments() -> dict[str, dict]:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    return {deployment["name"]: deployment for deployment in config["deployments"]}


def test_every_prefect_yaml_entrypoint_resolves_to_a_flow():
    deployments = _deployments()
    for name, deployment in deployments.items():
        path, _, _ = deployment["entrypoint"].partition(":")
        assert (ROOT / path).exists(), deployment["entrypoint"]
        flow = load_flow_from_entrypoint(str(ROOT / deployment["entrypoint"]))
        assert isinstance(flow, Flow)
        assert flow.name == name, f"deployment {name} runs flow {flow.name}"
        flow.validate_parameters(deployment.get("parameters", {}))  # the declared parameters are the flow's
    assert {"build", "evaluate", "sweep", "publish", "verify", "benchmark"} <= set(deployments)


SERVE = """
import sys
from prefect.flows import load_flow_from_entrypoint
load_flow_from_entrypoint(sys.argv[1]).serve(name=sys.argv[2])
"""


def _deployment_id(name: str, server: subprocess.Popen, timeout_s: float = 120):
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    deadline = time.monotonic() + timeout_s
    with get_client(sync_client=True) as client:
        while True:
            try:
                return client.read_deployment_by_name(name).id
            except ObjectNotFound:
                assert server.poll() is None, server.stderr.read()[-2000:]
                assert time.monotonic() < deadline, f"deployment {name} never registered"
                time.sleep(0.5)


def test_a_served_deployment_runs(prefect_harness, real_build, tmp_path):
    """prefect.yaml's publish deployment, served and run by name through the API as a dry run of the session's
    build: the flow run completes in its own process and stages the repo folder."""
    from prefect.deployments import run_deployment

    deployment = _deployments()["publish"]
    env = {**os.environ, "PREFECT_RUNNER_POLL_FREQUENCY": "1"}  # pick the run up at once (default: every 10 s)
    server = subprocess.Popen([sys.executable, "-c", SERVE, deployment["entrypoint"], "publish"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _deployment_id("publish/publish", server)
        staged = tmp_path / "staged"
        run = run_deployment("publish/publish", timeout=300, poll_interval=1, parameters={
            **deployment["parameters"], "build_dir": str(real_build.root), "dry_run_dir": str(staged)})  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert run.state.is_completed(), run.state
    assert (staged / "README.md").is_file() and run.deployment_id is not None
