"""s2sbench: build spoken benchmarks and measure how much a speech LM loses when the context is speech.

The Python API is :func:`evaluate` and :func:`build` (``s2sbench.api``); the stages live in ``s2sbench.pipeline``
and ``s2sbench.evaluation``, the Prefect flows and the command line in ``s2sbench.flows``. Importing this package is
cheap: the API functions import what they need when called.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("s2sbench")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

from s2sbench.api import build, evaluate  # noqa: E402  (after __version__, which the API records)

__all__ = ["__version__", "build", "evaluate"]
