"""The ``benchmark`` flow: build a list of tasks, then evaluate one or more models on the build."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from s2sbench.flows.build import build_flow
from s2sbench.flows.evaluate import evaluate_flow


@flow(name="benchmark", flow_run_name="benchmark {out_dir}", persist_result=False)
def benchmark_flow(
    tasks: list[str],
    out_dir: str,
    models: dict[str, dict],
    modes: list[str] | None = None,
    limit: int | None = None,
    store_root: str | None = None,
) -> dict:
    """Build ``tasks`` into ``out_dir/build`` and evaluate each model (name -> adapter options) into ``out_dir/<model>``."""
    out = Path(out_dir)
    build_flow(tasks=tasks, out_dir=str(out / "build"), limit=limit, store_root=store_root)
    return {
        name: evaluate_flow(dataset=str(out / "build"), model=name, out_dir=str(out / "eval" / name),
                            model_options=options, modes=modes)
        for name, options in models.items()
    }
