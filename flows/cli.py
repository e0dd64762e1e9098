"""The ``s2sbench`` command line: a thin wrapper over the library stages and the Prefect flows."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from s2sbench import __version__
from s2sbench.flows.commands import COMMAND_MODULES


class CommandError(RuntimeError):
    """A user-facing failure: printed without a traceback (unless --debug), exit code 2."""


def user_error_types() -> tuple[type[BaseException], ...]:
    """Errors caused by input, configuration or an unavailable model: printed in one line, exit code 2.

    Anything else is a bug and keeps its traceback (exit code 1)."""
    from s2sbench.evaluation.models.base import AdapterError
    from s2sbench.flows.server import ServerError
    from s2sbench.pipeline.asr.base import TranscriptionError
    from s2sbench.pipeline.tts.base import SynthesisError

    types: list[type[BaseException]] = [CommandError, ValueError, FileNotFoundError, AdapterError, SynthesisError, TranscriptionError,
                                         ServerError]
    try:
        from s2sbench.pipeline.publish.hub import PublishError
    except ImportError:  # huggingface_hub missing: publishing is unavailable, the rest still works
        pass
    else:
        types.append(PublishError)
    return tuple(types)


EPILOG = """examples:
  s2sbench demo --out demo-out
  s2sbench build demo-stories-en --out build/
  s2sbench eval --dataset build/ --model cascade --out results/     # or --dataset ORG/NAME[@REV] from the Hub
  s2sbench report results/ --build build/ --out report.html
  s2sbench publish build/ --repo-id my-org/my-set --dry-run
  s2sbench tasks; s2sbench voices; s2sbench models

exit codes: 0 success, 2 bad input or configuration (one-line error; --debug shows the traceback), 1 a bug, 130 interrupted
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2sbench",
        description="Build spoken benchmarks and measure how much speech LLMs lose when the context is speech.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument("--version", action="version", version=f"s2sbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"s2sbench.flows.commands.{name}").register(subparsers)
    return parser


def _not_a_run_failure(record: logging.LogRecord) -> bool:
    return not (record.levelno >= logging.ERROR and record.name.startswith(("prefect.flow_runs", "prefect.task_runs")))


def leave_run_failures_to_the_cli() -> None:
    """Prefect logs a failed flow or task run with its traceback; on the console that is left to this CLI (one line
    for a user error, the traceback for a bug), while the Prefect API, and so the UI, still gets the full record."""
    from prefect.logging.handlers import PrefectConsoleHandler

    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler):
            handler.addFilter(_not_a_run_failure)


def run_handler(args: argparse.Namespace) -> int:
    """Run the sub-command; one that runs flows (``runs_flow`` set by its parser) gets a Prefect API first."""
    if not getattr(args, "runs_flow", False):
        return int(args.handler(args) or 0)
    from s2sbench.flows.server import prefect_api

    if not args.debug:
        leave_run_failures_to_the_cli()
    with prefect_api():
        return int(args.handler(args) or 0)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return run_handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # re-raised unless it is an error the user can act on
        if args.debug or not isinstance(error, user_error_types()):
            raise
        print(f"s2sbench {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
