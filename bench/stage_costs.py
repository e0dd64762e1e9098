"""The per-stage cost table of a finished build, written into bench/README.md (section ``stage-costs``).

A whole set is the honest measure of where a build's time goes (a few items are mostly start-up), so this reads the
table assembly wrote into a build's ``build_report.json`` (synthesis per voice, the gate's ASR, retries and their
share, assembly: wall and CPU seconds per clip) rather than building anything itself:

    python bench/stage_costs.py BUILD_DIR [--command "the build command, as run"] [--print-only]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import write_section  # noqa: E402

from s2sbench.pipeline.buildfolder.builddir import BuildDir  # noqa: E402


def section(build: Path, command: str | None) -> str:
    report = BuildDir(build).read_report()
    if report.costs is None:
        raise SystemExit(f"{build / 'build_report.json'}: no costs (a build of an older s2sbench, or an import)")
    tasks = ", ".join(f"{name} ({entry.items_in:,} items, {entry.kept:,} rows kept)" for name, entry in report.tasks.items())
    lines = ["## Per-stage costs of a whole build", "", f"Build: {tasks}."]
    if command:
        lines += ["", f"`{command}`"]
    lines += ["", report.costs.markdown(), "", report.costs.note + "."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=Path)
    parser.add_argument("--command", help="the build command, shown above the table")
    parser.add_argument("--print-only", action="store_true", help="print the section, leave bench/README.md alone")
    args = parser.parse_args()
    body = section(args.build, args.command)
    print(body)
    if not args.print_only:
        write_section("stage-costs", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
