"""The ``demo`` flow, the main job: build the embedded demo set, evaluate it, return the table."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from s2sbench.flows.build import build_flow
from s2sbench.flows.evaluate import evaluate_flow

DEMO_TASKS = ["demo-stories-en", "demo-stories-zh", "demo-scmmlu-zh"]
# The cascade baseline scores both modes with one text LM: T->T on the text context, S->T on Whisper's transcript of
# the context speech. SmolLM2-135M and Whisper tiny.en both install from PyPI, so the demo runs offline.
DEMO_MODEL = "cascade"
DEMO_MODEL_OPTIONS = {"asr_engine": "faster-whisper", "asr_model": "tiny.en", "lm": "smollm2"}


@flow(name="demo")
def demo_flow(out_dir: str, limit: int | None = None, tasks: list[str] | None = None) -> dict:
    out = Path(out_dir)
    build_flow(tasks=tasks or DEMO_TASKS, out_dir=str(out / "build"), limit=limit)
    return evaluate_flow(
        build_dir=str(out / "build"), model=DEMO_MODEL, out_dir=str(out / "eval"), model_options=DEMO_MODEL_OPTIONS,
        modes=["T->T", "S->T"],
    )
