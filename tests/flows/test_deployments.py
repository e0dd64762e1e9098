"""Every deployment in prefect.yaml points at a flow that exists (a missing entrypoint is a real bug seen in the wild)."""

from pathlib import Path

import yaml
from prefect import Flow
from prefect.flows import load_flow_from_entrypoint

ROOT = Path(__file__).resolve().parents[2]


def test_every_prefect_yaml_entrypoint_resolves_to_a_flow():
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    names = set()
    for deployment in config["deployments"]:
        path, _, _ = deployment["entrypoint"].partition(":")
        assert (ROOT / path).exists(), deployment["entrypoint"]
        flow = load_flow_from_entrypoint(str(ROOT / deployment["entrypoint"]))
        assert isinstance(flow, Flow)
        assert flow.name == deployment["name"], f"deployment {deployment['name']} runs flow {flow.name}"
        parameters = set(flow.parameters.properties)
        assert set(deployment.get("parameters", {})) <= parameters, deployment["name"]
        names.add(deployment["name"])
    assert {"build", "evaluate", "publish", "benchmark"} <= names
