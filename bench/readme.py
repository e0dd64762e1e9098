"""The generated sections of bench/README.md: ``<!-- NAME:start -->`` ... ``<!-- NAME:end -->``, each rewritten from
what its benchmark last measured (``bench/run_all.py``); the text between sections is written by hand."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with section ``name`` holding ``body``; a section not there yet is appended."""
    start, end = markers(name)
    section = f"{start}\n{body.strip()}\n{end}"
    if start in text and end in text and text.index(start) < text.index(end):
        return text[: text.index(start)] + section + text[text.index(end) + len(end) :]
    return text.rstrip("\n") + "\n\n" + section + "\n"


def write_section(name: str, body: str, readme: Path = README) -> None:
    from s2sbench.pipeline.core.manifest import atomic_write_text

    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    atomic_write_text(readme, replace_section(text, name, body))


def show(body: str, name: str, readme: Path, write: bool) -> int:
    """Print a bench's section and, with ``write``, put it in ``readme``; a bench's exit status."""
    print(body)
    if write:
        write_section(name, body, readme)
    return 0
