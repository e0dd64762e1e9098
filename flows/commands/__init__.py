"""One module per ``s2sbench`` sub-command; each has ``register(subparsers)`` that adds its parser and sets
``handler`` (and ``runs_flow=True`` when it runs Prefect flows: the CLI then provides a Prefect API, see
``s2sbench.flows.server``). Modules listed here are imported when the CLI starts, so keep their top-level imports light."""

import argparse

from s2sbench.flows.runners import RUNNERS
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.machine.device import DEVICE_CHOICES


class CommandError(ConfigError):
    """A command-line option that cannot be used: printed without a traceback (unless --debug), exit code 2."""


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (``--limit 0`` or ``--limit -3`` is a usage error, exit code 2)."""
    return _bounded_int(text, 1)


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    return _bounded_int(text, 0)


def positive_float(text: str) -> float:
    """An argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _bounded_int(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
    return value


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("execution")
    group.add_argument("--runner", choices=RUNNERS, help="task runner (default: threads; dask when an address is given)")
    group.add_argument("--workers", type=positive_int, default=1,
                       help="threads, or local Dask worker processes (each gets cores/N for its engines)")
    group.add_argument("--address", "--dask-scheduler", dest="address", metavar="ADDRESS",
                       help="scheduler address of an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (implies --runner dask)")


def add_device_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """``--device auto|cpu|cuda``, resolved once before the command runs (``s2sbench.flows.cli.run_handler``)."""
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto",
                        help=f"where {what} run (default auto: a CUDA GPU when there is one, else the CPU)")


def add_command(subparsers: argparse._SubParsersAction, name: str, **options) -> argparse.ArgumentParser:
    """A sub-command parser whose epilog (its examples) keeps its line breaks in ``--help``."""
    return subparsers.add_parser(name, formatter_class=argparse.RawDescriptionHelpFormatter, **options)


COMMAND_MODULES = [
    "demo",
    "build",
    "evaluate",
    "tasks",
    "items",
    "voices",
    "verify",
    "publish",
    "original",
    "report",
    "models",
    "server",
]
