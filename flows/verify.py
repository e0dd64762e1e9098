"""The ``verify`` flow: re-verify a finished build's kept clips with another ASR model (say a larger Whisper) and
write a new audit beside the build; artifact: the audit per task and voice."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from s2sbench.flows.stages import stage, table


@stage("load-asr", "load {engine}:{model}")
def load_asr_task(engine: str, model: str, options: dict):
    from s2sbench.pipeline.gate.asr import get_asr

    return get_asr(engine, model, **options)


@stage("reverify", "re-verify {build_dir} with {asr.model_id}")
def reverify_task(build_dir: Path, asr, out_dir: Path, store: Path | None):
    from s2sbench.pipeline.run.reverify import reverify_build

    return reverify_build(build_dir, asr, out_dir, clip_store=store)


def audit_markdown(report) -> str:
    rows = []
    for group in report.verification.groups:
        rates = group.error_rate
        mean = f"{rates.mean:.3f}" if rates.n else "n/a"
        rows.append([group.task, group.language, group.voice, group.status, "/".join(group.metrics), mean])
    changes = ", ".join(f"{change}: {count}" for change, count in report.status_changes.items()) or "none"
    return (table(["task", "language", "voice", "status", "metric", "mean error rate"], rows)
            + f"\n\n{report.clips} clips with {report.asr_model}; status changes: {changes}; "
            f"rows that would now be dropped: {len(report.rows_now_rejected)}")  # fmt: skip


@flow(name="verify", flow_run_name="verify {build_dir} with {engine}:{model}", persist_result=False)
def verify_flow(build_dir: str, engine: str = "faster-whisper", model: str = "tiny.en", device: str | None = None,
                compute_type: str | None = None, batch_size: int = 8, store: str | None = None,
                out_dir: str | None = None, beam_size: int = 1):  # fmt: skip
    """Transcribe every kept clip of ``build_dir`` again with ``engine``/``model``, apply each task's gate and write
    the audit to ``out_dir`` (default: ``<build>/reverify/<model>``); the build is not changed. Returns the
    :class:`~s2sbench.pipeline.run.reverify.ReverifyReport`."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.run.reverify import default_out_dir

    build = BuildDir(build_dir)
    build.read_clips()  # a folder that is not a finished build is reported before the ASR model loads
    options = ({"batch_size": batch_size} | ({"device": device} if device else {})
               | ({"beam_size": beam_size} if beam_size > 1 else {})
               | ({"compute_type": compute_type} if compute_type else {}))
    asr = load_asr_task(engine, model, options)
    out = Path(out_dir) if out_dir else default_out_dir(build, asr)
    report = reverify_task(build.root, asr, out, Path(store) if store else None)
    create_markdown_artifact(markdown=audit_markdown(report), key="reverify-audit", description=f"{build.root}: {out}")
    return report
