"""The ``report`` flow: one self-contained HTML report of evaluation results and a build (plus the summary as
markdown and CSV, and a screenshot); artifacts: the summary table and a link to the report."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_link_artifact, create_markdown_artifact

from s2sbench.flows.stages import names, stage
from s2sbench.pipeline.core.errors import ConfigError

NORMALIZATION = "token"


def _load_run_name(parameters: dict) -> str:
    return "load " + names([str(path) for path in parameters["paths"]], "no results")


@stage("load-results", _load_run_name)
def load_results_task(paths: list[Path]):
    from s2sbench.evaluation.results.summary import load_inputs

    return load_inputs(paths)


@stage("audit-build", "audit {build_dir}")
def audit_task(build_dir: Path, store: Path | None, samples):
    from s2sbench.evaluation.report.audit import load_build

    return load_build(build_dir, store, samples)


@stage("render-html", "render {out}")
def render_task(inputs, audit, options, out: Path) -> Path:
    from s2sbench.evaluation.report.html import render_html
    from s2sbench.pipeline.core.manifest import atomic_write_text

    atomic_write_text(out, render_html(inputs, audit, options))
    return out


@stage("summary-files", "summary tables")
def summary_task(inputs, normalization: str, markdown: Path | None, csv: Path | None) -> None:
    from s2sbench.evaluation.results.summary import results_markdown, summary_frame, write_csv
    from s2sbench.pipeline.core.manifest import atomic_write_text

    if markdown:
        atomic_write_text(markdown, results_markdown(list(inputs.runs), normalization))
    if csv:
        write_csv(summary_frame(inputs.runs, normalization), csv)


@stage("screenshot", "screenshot {png}")
def screenshot_task(html: Path, png: Path) -> Path:
    from s2sbench.evaluation.report.browser import screenshot

    screenshot(html, png)
    return png


@flow(name="report", flow_run_name="report {out}", persist_result=False)
def report_flow(results: list[str], out: str = "report.html", build_dir: str | None = None, store: str | None = None,
                markdown: str | None = None, csv: str | None = None, normalization: str = NORMALIZATION,
                samples: int = 6, title: str = "s2sbench report", screenshot: str | None = None) -> str:  # fmt: skip
    """Write the HTML report of ``results`` (results.json files, eval folders, sweep folders) and of the build in
    ``build_dir`` (its clips found in ``store``, else the store its report names) to ``out``; ``markdown``, ``csv``:
    also the summary table there; ``screenshot``: a PNG of the report rendered in headless Chromium. Returns
    ``out``."""
    from s2sbench.evaluation.report.audit import SampleOptions
    from s2sbench.evaluation.report.html import ReportOptions

    if not results and build_dir is None:
        raise ConfigError("nothing to report: give results (results.json, eval or sweep folders) and/or a build folder")
    if samples < 0:
        raise ConfigError(f"samples (--samples) must be >= 0, got {samples}")
    if (markdown or csv) and not results:
        raise ConfigError("the markdown and CSV files summarize results: give results too")
    options = ReportOptions(title=title, normalization=normalization, samples=SampleOptions(clips_per_status=samples),
                            store_root=Path(store) if store else None)  # fmt: skip
    inputs = load_results_task([Path(path) for path in results])
    audit = audit_task(Path(build_dir), options.store_root, options.samples) if build_dir is not None else None
    html = render_task(inputs, audit, options, Path(out))
    if markdown or csv:
        summary_task(inputs, normalization, Path(markdown) if markdown else None, Path(csv) if csv else None)
    if inputs.runs:
        from s2sbench.evaluation.results.summary import results_markdown

        create_markdown_artifact(markdown=results_markdown(list(inputs.runs), normalization), key="report-summary",
                                 description=title)  # fmt: skip
    create_link_artifact(link=html.resolve().as_uri(), link_text=html.name, key="report", description=title)
    if screenshot:
        screenshot_task(html, Path(screenshot))
    return str(html)
