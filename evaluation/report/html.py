"""The report as one self-contained HTML file: inline CSS, plots as base64 PNG, a bounded sample of clips as base64
WAV ``data:`` URIs, so it opens offline, from an e-mail attachment or a CI artifact, with nothing to fetch.

A short inline script marks each audio player and plot once the browser has loaded it (``data-state="loaded"``, or
``"error"``) and shows each clip's duration; the browser test reads those marks.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from s2sbench.evaluation.report import plots
from s2sbench.evaluation.report.audit import BuildAudit, SampleOptions, load_build
from s2sbench.evaluation.protocol.modes import split_mode
from s2sbench.evaluation.results.summary import (
    CONDITION_HEADER,
    DEGRADATION_NOTE,
    RULE_NOTES,
    ReportInputs,
    accuracy_frame,
    condition_rows,
    degradation_frame,
    load_inputs,
    percent,
    source_rows,
    summary_rows,
    voice_frame,
)
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import atomic_write_text

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",
"WenQuanYi Micro Hei",sans-serif;margin:0 auto;max-width:1200px;padding:0 24px 48px;
color:#1d232b;line-height:1.45}
h1{border-bottom:3px solid #3b6ea5;padding-bottom:6px}h2{margin-top:40px;border-bottom:1px solid #ccd3dc}
table{border-collapse:collapse;margin:12px 0;font-size:14px}th,td{border:1px solid #ccd3dc;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#eef2f7}tr:nth-child(even) td{background:#fafbfc}
#summary-table td:first-child,#voice-table td:first-child{white-space:nowrap}
img.plot{max-width:100%;display:block;margin:12px 0;border:1px solid #e3e7ec}
.note{color:#56606b;font-size:13px}code{background:#eef2f7;padding:1px 4px;border-radius:3px}
.clips{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:12px}
.clip{border:1px solid #ccd3dc;border-radius:6px;padding:10px;font-size:13px}
.clip.rejected{border-left:5px solid #c0392b}.clip.passed{border-left:5px solid #2e8b57}
.clip.unverified{border-left:5px solid #d4a017}.clip audio{width:100%}.clip dt{font-weight:600;margin-top:4px}
.clip dd{margin:0 0 0 8px}nav a{margin-right:14px}
"""
SCRIPT = """
document.querySelectorAll('audio').forEach(function (a) {
  var out = a.parentElement.querySelector('.duration');
  function loaded() { a.dataset.state = 'loaded'; if (out) out.textContent = a.duration.toFixed(1) + ' s'; }
  function failed() { a.dataset.state = 'error'; if (out) out.textContent = 'cannot be played'; }
  if (a.error) failed(); else if (a.readyState >= 1) loaded();
  a.addEventListener('loadedmetadata', loaded); a.addEventListener('error', failed);
});
document.querySelectorAll('img.plot').forEach(function (i) {
  function mark() {
    i.dataset.state = i.naturalWidth > 0 ? 'loaded' : 'error';
    // shown width / drawn width: below 1 the browser shrank the figure, and its text with it
    if (i.naturalWidth > 0) i.dataset.scale = (i.clientWidth / i.naturalWidth).toFixed(3);
  }
  if (i.complete) mark(); else { i.addEventListener('load', mark); i.addEventListener('error', mark); }
});
// the lines each run's name takes in the summary (one, when the label is as short as it should be)
document.querySelectorAll('#summary-table tbody tr').forEach(function (row) {
  var range = document.createRange(), tops = {};
  range.selectNodeContents(row.cells[0]);
  Array.prototype.forEach.call(range.getClientRects(), function (r) { tops[Math.round(r.top)] = true; });
  row.cells[0].dataset.lines = Object.keys(tops).length;
});
"""


@dataclass(frozen=True)
class ReportOptions:
    title: str = "s2sbench report"
    normalization: str = "token"  # which score normalization the tables and plots show
    samples: SampleOptions = field(default_factory=SampleOptions)
    store_root: Path | None = None  # clip store of the build (default: the one its build report names)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], css_id: str = "") -> str:
    id_attr = f' id="{_e(css_id)}"' if css_id else ""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{id_attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _plot(png: bytes | None, name: str, alt: str) -> str:
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="plot" data-plot="{_e(name)}" alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _runs_section(inputs: ReportInputs) -> str:
    rows = []
    for run in inputs.runs:
        model, dataset = run.results.model, run.results.dataset
        revision = "(the model id)" if model.revision == model.model_id else model.revision
        where = dataset.location + (f"@{dataset.revision[:12]}" if dataset.revision else "")
        rows.append([run.label, model.kind, model.model_id, revision, model.device or "not recorded",
                     model.licence or "not recorded", where, run.source or ""])
    header = ["run", "kind", "model", "revision", "device", "licence", "dataset", "results file"]
    return "<h2 id='runs'>Runs</h2>" + _table(header, rows)


def _results_sections(inputs: ReportInputs, normalization: str) -> str:
    accuracies = accuracy_frame(inputs.runs)
    gaps = degradation_frame(inputs.runs)
    voices = voice_frame(inputs.runs)
    header, rows = summary_rows(inputs.runs, normalization)
    parts = [
        "<h2 id='summary'>Summary</h2>",
        f"<p class='note'>Accuracy in % with its 95% bootstrap interval and the number of scored units; degradation "
        f"in points. Scores are {_e(normalization)}-normalized.</p>",
        _table(header, rows, "summary-table"),
    ]
    conditions = condition_rows(inputs.runs, normalization)
    if conditions:
        parts.append("<h2 id='conditions'>Acoustic conditions</h2>")
        parts.append("<p class='note'>The same rows' clips under each acoustic condition of the task file (a noise, a "
                     "room, a telephone line, a speaking rate, a level): accuracy, the degradation against the text "
                     "context and against the clean clips with 95% intervals, and the gate ASR's error rate on the "
                     "clips clean and under the condition (how hard the condition is for ASR).</p>")
        parts.append(_table(CONDITION_HEADER, conditions, "condition-table"))
        parts.append(_plot(plots.accuracy_by_condition(accuracies, normalization), "conditions",
                           "accuracy per acoustic condition"))  # fmt: skip
    source_header, sources = source_rows(inputs.runs, normalization)
    if sources:
        parts.append("<h2 id='sources'>Per source file</h2>")
        parts.append("<p class='note'>A task whose items come from several source files (sCMMLU: a CMMLU subject "
                     "each), under its rule, on each file's items alone, with 95% intervals.</p>")
        parts.append(_table(source_header, sources, "source-table"))
    if not accuracies.empty:  # the conditions have their own plot
        clean = accuracies[[split_mode(mode)[1] is None for mode in accuracies["mode"]]]
        parts.append("<h2 id='accuracy'>Accuracy by mode</h2>")
        parts.append(_plot(plots.accuracy_by_mode(clean, normalization), "accuracy", "accuracy by mode per task"))
    if not gaps.empty:
        gaps = gaps[[split_mode(mode)[1] is None for mode in gaps["mode"]]]
        parts.append("<h2 id='degradation'>Degradation</h2>")
        parts.append(_plot(plots.degradation_by_task(gaps, normalization), "degradation", "degradation per task"))
    if not voices.empty:
        shown = voices[voices["normalization"] == normalization]
        parts.append("<h2 id='voices'>Accuracy per voice</h2>")
        parts.append(_plot(plots.accuracy_by_voice(voices, normalization), "voices", "accuracy per voice"))
        parts.append(_table(["run", "task", "mode", "rule", "voice", "accuracy %"],
                            [[r.run, r.task, r.mode, r.rule, r.voice, percent(r.accuracy)] for r in shown.itertuples()],
                            "voice-table"))  # fmt: skip
    for sweep in inputs.sweeps:
        parts.append(f"<h2 id='trajectory'>Checkpoint trajectory: {_e(sweep.source)}</h2>")
        for task, png in plots.trajectories(sweep.rows, normalization).items():
            parts.append(_plot(png, f"trajectory-{task}", f"trajectory of {task}"))
    skipped = [[run.label, s.task, s.mode, s.reason] for run in inputs.runs for s in run.results.skipped]
    if skipped:
        parts.append("<h3>Not scored</h3>" + _table(["run", "task", "mode", "reason"], skipped))
    return "".join(parts)


def _methods_section(inputs: ReportInputs, normalization: str) -> str:
    rows = []
    for run in inputs.runs:
        notes = run.results.normalizations
        for task, entry in run.results.tasks.items():
            for mode, template in entry.templates.items():
                rows.append([run.label, f"{task} v{entry.version}", mode, template, entry.rules[0],
                             notes.get(normalization, normalization)])  # fmt: skip
    rules = sorted({rule for run in inputs.runs for entry in run.results.tasks.values() for rule in entry.rules})
    boot = inputs.runs[0].results.bootstrap if inputs.runs else None
    items = "".join(f"<li><code>{_e(rule)}</code>: {_e(RULE_NOTES.get(rule, rule))}</li>" for rule in rules)
    items += f"<li>{_e(DEGRADATION_NOTE)}</li>"
    if boot:
        items += (f"<li>intervals: percentile bootstrap over {_e(boot.unit)}s, {_e(boot.n_resamples)} resamples, "
                  f"seed {_e(boot.seed)}, confidence {_e(boot.confidence)}</li>")  # fmt: skip
    return (
        "<h2 id='methods'>How each number was computed</h2>"
        + _table(["run", "task", "mode", "template", "scoring rule", "normalization"], rows, "methods-table")
        + f"<ul>{items}</ul>"
    )


def _clip_card(sample) -> str:
    if sample.error_rate is None:
        rate_field = ("error rate", "n/a (not verified)" if sample.metric == "none" else "n/a")
    else:
        rate_field = (f"{sample.metric.upper()} (fraction)", f"{sample.error_rate:.3f}")
    player = (
        f'<audio controls preload="metadata" data-state="pending" src="{sample.audio_uri}"></audio>'
        f'<span class="duration"></span>'
        if sample.audio_wav is not None
        else f"<p class='note'>{_e(sample.missing)}</p>"
    )
    fields = [("text", sample.text), ("transcript", sample.transcript or "(none)"), rate_field]
    fields += [("reason", sample.reason)] if sample.reason else []
    details = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in fields)
    title = f"{sample.task} {sample.item_id} {sample.role} · {sample.voice} · attempt {sample.attempt} · {sample.status}"
    return f'<div class="clip {_e(sample.status)}"><strong>{_e(title)}</strong>{player}<dl>{details}</dl></div>'


def _costs_table(costs) -> str:
    """Where the build's time went (build_report.json ``costs``): per stage, wall and CPU seconds per clip."""

    def per(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    rows = [[row.stage, row.subject, row.clips, f"{row.wall_s:.1f}", f"{row.cpu_s:.1f}", per(row.wall_s_per_clip),
             per(row.cpu_s_per_clip)] for row in costs.stages]  # fmt: skip
    share = "-" if costs.retry_share is None else f"{costs.retry_share:.1%}"
    return ("<h3 id='costs'>Where the time went</h3>"
            + _table(["stage", "for", "clips", "wall s", "CPU s", "wall s / clip", "CPU s / clip"], rows, "cost-table")
            + f"<p class='note'>{_e(costs.clips)} clips in {_e(costs.rows_measured)} measured rows, "
              f"{_e(costs.cached_clips)} from the clip store; {_e(costs.retried_clips)} needed a retry ({_e(share)}). "
              f"Machine: {_e(costs.machine)}. {_e(costs.note)}.</p>")  # fmt: skip


def _subject_losses(report) -> str:
    """Per task with subjects (sCMMLU): what the gate cost each subject, and how far the mix moved."""
    parts = []
    for task, entry in report.tasks.items():
        if entry.by_subject:
            parts.append(f"<h3 id='subjects-{_e(task)}'>What the gate cost each subject of {_e(task)}</h3>"
                         f"<p class='note'>{_e(entry.subject_mix_line())}</p>"
                         + _table(["subject", "items", "item x voice", "kept", "kept %", "dropped (why)"],
                                  entry.subject_loss_rows(), f"subjects-{task}"))  # fmt: skip
    return "".join(parts)


def _build_section(audit: BuildAudit) -> str:
    report = audit.report
    counts = [[task, e.language, ", ".join(e.voices), e.items_in, e.item_voice_pairs_in, e.kept, e.dropped,
               e.clips_kept, e.clips_unverified, e.clips_kept_on_reference] for task, e in report.tasks.items()]  # fmt: skip
    totals = report.totals
    remade = report.integrity.clips_remade
    parts = [
        f"<h2 id='build'>Build: {_e(audit.build_dir)}</h2>",
        _table(["task", "language", "voices", "items", "item x voice", "kept", "dropped", "clips kept",
                "clips unverified", "clips kept on the reference"], counts, "build-table"),  # fmt: skip
        f"<p class='note'>{_e(totals.clip_attempts)} clip attempts, {_e(totals.clips_rejected)} rejected by the gate; "
        f"ASR: {_e(', '.join(report.asr_models) or 'none')}; TTS: {_e(', '.join(report.engines))}; "
        f"on {_e(' and '.join(report.devices))}. "
        f"{_e(report.integrity.clips_checked)} kept clips hash-checked before embedding"
        + (f", {len(remade)} made again ({_e('; '.join(remade))})" if remade else "") + ".</p>",
    ]
    if report.costs is not None:
        parts.append(_costs_table(report.costs))
    parts.append(_plot(plots.error_rate_histograms(audit.checks), "error-rates", "error-rate histograms"))
    checks = audit.checks
    unmeasured = sorted({f"{r.language} / {r.voice}" for r in checks[checks["error_rate"].isna()].itertuples()}
                        - {f"{r.language} / {r.voice}" for r in checks[checks["error_rate"].notna()].itertuples()})
    if unmeasured:
        parts.append(f"<p class='note'>No error rates for {_e(', '.join(unmeasured))}: its clips were not transcribed "
                     "(see each clip's reason).</p>")  # fmt: skip
    reasons = plots.drop_reasons(audit.drop_counts)
    parts.append(_plot(reasons, "drop-reasons", "drop reasons") if reasons else "<p>Nothing was rejected or dropped.</p>")
    parts.append(_subject_losses(report))
    if audit.gate_drops:
        parts.append(f"<h3 id='gate-drops'>Rows the gate dropped: {len(audit.gate_drops)}</h3>"
                     + _table(["task", "item", "voice", "why"], [[drop.task, drop.item_id, drop.voice, str(drop.reason)]
                                                                 for drop in audit.gate_drops], "gate-drops"))
    for status, title, total in (("kept", "Kept clips", audit.n_kept_clips),
                                 ("rejected", "Rejected clip attempts", audit.n_rejected_attempts)):  # fmt: skip
        chosen = [s for s in audit.samples if (s.status == "rejected") == (status == "rejected")]
        parts.append(f"<h3 id='clips-{status}'>{title}: {len(chosen)} of {total}</h3>")
        cards = "".join(_clip_card(sample) for sample in chosen)
        parts.append(f"<div class='clips'>{cards}</div>" if chosen else "<p>None.</p>")
    return "".join(parts)


def render_html(inputs: ReportInputs, audit: BuildAudit | None = None, options: ReportOptions = ReportOptions()) -> str:
    """The whole report as one HTML string."""
    if not inputs.runs and audit is None:
        raise ConfigError("nothing to report: give results (results.json, an eval or sweep folder) or a build")
    nav = [("summary", "Summary"), ("methods", "Method")] if inputs.runs else []
    nav += [("build", "Build")] if audit is not None else []
    body = [f"<h1>{_e(options.title)}</h1>", "<nav>" + "".join(f"<a href='#{a}'>{_e(t)}</a>" for a, t in nav) + "</nav>"]
    if inputs.runs:
        body += [_runs_section(inputs), _results_sections(inputs, options.normalization),
                 _methods_section(inputs, options.normalization)]  # fmt: skip
    if audit is not None:
        body.append(_build_section(audit))
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(options.title)}</title><style>{STYLE}</style></head><body>"
        + "".join(body)
        + f"<script>{SCRIPT}</script></body></html>\n"
    )


def write_report(
    results: Sequence[str | Path], out: str | Path, build_dir: str | Path | None = None,
    options: ReportOptions = ReportOptions(),
) -> Path:  # fmt: skip
    """Read ``results`` (results.json files, eval folders, sweep folders) and the build in ``build_dir``; write the
    self-contained HTML report to ``out``."""
    inputs = load_inputs(results)
    audit = load_build(build_dir, options.store_root, options.samples) if build_dir is not None else None
    out = Path(out)
    atomic_write_text(out, render_html(inputs, audit, options))
    return out
