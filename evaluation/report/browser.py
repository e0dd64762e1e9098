"""Open a report in headless Chromium: the DOM after its scripts ran, and a screenshot.

Used by the browser test and by ``s2sbench report --screenshot``. Chromium runs with a fresh profile in a temporary
folder and with every background network feature off, so opening a report never reaches the network; the page's
scripts get ``budget_ms`` of virtual time (media metadata and images load within it).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from s2sbench.pipeline.core.errors import EnvironmentFault

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--mute-audio",
)  # fmt: skip


class BrowserError(EnvironmentFault):
    """Chromium is missing, failed or timed out; the message says which and how to fix it."""


@dataclass(frozen=True)
class BrowserOptions:
    budget_ms: int = 5000  # virtual time the page's scripts get before the DOM is read
    timeout_s: float = 120.0  # wall-clock limit for one Chromium run
    window: tuple[int, int] = (1280, 1800)  # screenshot size, pixels
    executable: str | None = None  # default: the first of CHROMIUM_NAMES on PATH


def find_chromium(executable: str | None = None) -> str:
    for name in (executable,) if executable else CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    wanted = executable or " / ".join(CHROMIUM_NAMES)
    raise BrowserError(f"no Chromium found ({wanted}); install the Debian package `chromium`")


def _run(page: Path, extra: list[str], options: BrowserOptions) -> str:
    with tempfile.TemporaryDirectory(prefix="s2sbench-chromium-") as profile:
        command = [find_chromium(options.executable), *FLAGS, f"--user-data-dir={profile}",
                   f"--virtual-time-budget={options.budget_ms}", *extra, page.resolve().as_uri()]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=options.timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise BrowserError(f"Chromium did not finish {page} within {options.timeout_s:g} s") from None
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise BrowserError(f"Chromium exited with {done.returncode} on {page}:\n{tail}")
    return done.stdout


def dump_dom(page: str | Path, options: BrowserOptions = BrowserOptions()) -> str:
    """The page's DOM (serialized HTML) after its scripts ran, laid out in a window of ``options.window``."""
    width, height = options.window
    return _run(Path(page), ["--dump-dom", f"--window-size={width},{height}"], options)


def screenshot(page: str | Path, png: str | Path, options: BrowserOptions = BrowserOptions()) -> Path:
    """Save a PNG of the top ``options.window`` of the page."""
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    width, height = options.window
    _run(Path(page), [f"--screenshot={png}", f"--window-size={width},{height}"], options)
    if not png.is_file() or png.stat().st_size == 0:
        raise BrowserError(f"Chromium wrote no screenshot to {png}")
    return png
