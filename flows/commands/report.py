"""``s2sbench report``: one self-contained HTML report of evaluation results and a build, plus markdown and CSV."""

from __future__ import annotations

import argparse
from pathlib import Path

from s2sbench.flows.commands import add_command, non_negative_int

EXAMPLES = """examples:
  s2sbench report eval/ --build build/ --out report.html
  s2sbench report eval/results.json other-model/results.json --out compare.html --markdown summary.md --csv summary.csv
  s2sbench report sweep/ --build build/ --out sweep.html             # a sweep folder adds checkpoint trajectories
  s2sbench report --build build/ --out audit.html --samples 12       # a build alone: counts, error rates, clips
  s2sbench report eval/ --build build/ --out report.html --screenshot report.png

RESULTS are results.json files, folders holding one (`s2sbench eval --out DIR`), or sweep folders (with
trajectory.csv; their last checkpoint goes into the tables). The HTML embeds its plots and a sample of kept and
rejected clips (found in the clip store the build used: --store, else the one its build report names, else
$S2SBENCH_CLIP_STORE or ~/.cache/s2sbench/clips), so it opens offline. Exit codes: 0 written, 2 bad input.
"""
NORMALIZATIONS = ("token", "char", "byte", "sum")  # evaluation.scoring.NORMALIZATIONS, repeated to keep --help light


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "report",
        help="write an HTML report (tables, plots, clips to listen to) and the summary as markdown/CSV",
        description="Write one self-contained HTML file with the accuracy per mode and the degradation (with 95% "
        "intervals and McNemar p), plots, checkpoint trajectories, the build's verification audit with kept and "
        "rejected clips to listen to, and how each number was computed.",
        epilog=EXAMPLES,
    )
    parser.add_argument("results", nargs="*", type=Path, metavar="RESULTS", help="results.json, eval folder or sweep folder")
    parser.add_argument("--build", type=Path, metavar="DIR", help="build directory to audit (made by `s2sbench build`)")
    parser.add_argument("--out", type=Path, default=Path("report.html"), help="HTML file to write (default: report.html)")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write the summary as markdown")
    parser.add_argument("--csv", type=Path, metavar="FILE", help="also write the summary table as CSV")
    parser.add_argument("--normalization", choices=NORMALIZATIONS, default="token", help="score normalization shown")
    parser.add_argument("--samples", type=non_negative_int, default=6, metavar="N",
                        help="kept and rejected clips embedded, each (default 6)")  # fmt: skip
    parser.add_argument("--store", type=Path, metavar="DIR", help="clip store the build used")
    parser.add_argument("--title", default="s2sbench report", help="report title")
    parser.add_argument("--screenshot", type=Path, metavar="PNG",
                        help="also render the report in headless Chromium to a PNG")  # fmt: skip
    parser.set_defaults(handler=run, runs_flow=True)


def run(args: argparse.Namespace) -> int:
    from s2sbench.flows.report import report_flow

    def text(path: Path | None) -> str | None:
        return str(path) if path is not None else None

    report_flow(results=[str(path) for path in args.results], out=str(args.out), build_dir=text(args.build),
                store=text(args.store), markdown=text(args.markdown), csv=text(args.csv),
                normalization=args.normalization, samples=args.samples, title=args.title,
                screenshot=text(args.screenshot))  # fmt: skip
    print(f"report: {args.out}")
    for label, path in (("markdown", args.markdown), ("csv", args.csv), ("screenshot", args.screenshot)):
        if path:
            print(f"{label}: {path}")
    return 0
