"""The docs a reader follows hold: no path of the machine the sets were built on, and every command they name is in
the repository (the script is there and answers --help without running, the make target exists, the s2sbench
sub-command parses --help)."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from s2sbench.flows.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
BENCH_SOURCES = sorted((ROOT / "bench").glob("*.py"))
# folders of one machine: where the sets were built, a home, a temporary folder named in a command's figures
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|root|Users|mnt|tmp)/[\w.-]+")
BENCH_SCRIPT = re.compile(r"\bbench/([\w-]+\.py)\b")
MAKE_TARGET = re.compile(r"`make ([\w-]+)")
# a command in a code span or at the start of a code block's line (prose says "s2sbench reimplements ...")
SUBCOMMAND = re.compile(r"(?:^\s*|`)s2sbench ([a-z][a-z-]*[a-z])", re.MULTILINE)


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", PAGES + BENCH_SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_path_of_one_machine(path):
    found = sorted(set(MACHINE_PATH.findall(text(path))))
    assert not found, f"{path.name} names paths of one machine: {found} (take them from arguments or S2SBENCH_DATA)"


def cited_scripts() -> list[str]:
    return sorted({name for page in PAGES for name in BENCH_SCRIPT.findall(text(page))})


def test_every_cited_bench_script_is_there_and_answers_help():
    missing = [name for name in cited_scripts() if not (ROOT / "bench" / name).is_file()]
    assert not missing, f"the docs cite scripts the repository does not have: {missing}"

    def helps(name: str) -> tuple[str, int, str]:
        done = subprocess.run([sys.executable, str(ROOT / "bench" / name), "--help"], capture_output=True, text=True,
                              timeout=120, cwd=ROOT)
        return name, done.returncode, done.stderr[-500:]

    with ThreadPoolExecutor(max_workers=2) as pool:
        failed = [(name, code, err) for name, code, err in pool.map(helps, cited_scripts()) if code != 0]
    assert not failed, failed


def test_every_make_target_named_exists():
    targets = set(re.findall(r"^([\w-]+):", text(ROOT / "Makefile"), re.MULTILINE))
    named = {target for page in PAGES for target in MAKE_TARGET.findall(text(page))}
    assert named and not named - targets, f"make targets named but not in the Makefile: {sorted(named - targets)}"


def test_every_s2sbench_subcommand_named_parses_help():
    named = {word for page in PAGES for word in SUBCOMMAND.findall(text(page))}
    failed = []
    for name in sorted(named):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                code = main([name, "--help"])
            except SystemExit as stop:
                code = stop.code
        if code != 0:
            failed.append(name)
    assert not failed, f"s2sbench sub-commands named in the docs that do not parse --help: {failed}"
