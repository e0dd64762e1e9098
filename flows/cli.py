"""The ``s2sbench`` command line: a thin wrapper over the library stages and the Prefect flows."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys

from s2sbench import __version__
from s2sbench.flows.commands import COMMAND_MODULES
from s2sbench.pipeline.errors import INTERRUPTED_EXIT_CODE, ConfigError, S2SBenchError, environment_fault


class CommandError(ConfigError):
    """A command-line option that cannot be used: printed without a traceback (unless --debug), exit code 2."""


EPILOG = """examples:
  s2sbench demo --out demo-out
  s2sbench build demo-stories-en --out build/
  s2sbench eval --dataset build/ --model cascade --out results/     # or --dataset ORG/NAME[@REV] from the Hub
  s2sbench report results/ --build build/ --out report.html
  s2sbench publish build/ --repo-id my-org/my-set --dry-run
  s2sbench tasks; s2sbench voices; s2sbench models

exit codes: 0 success; 2 configuration (task/voice file, option), 3 data (source, build or results folder),
4 backend (a TTS, ASR or model failed), 5 environment (disk full, read-only folder, missing program, folder in use):
each a one-line error naming file, row and field (--debug shows the traceback); 1 a bug; 130 interrupted
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
    from s2sbench.pipeline.cpu import engine_cores

    engine_cores()  # a bad S2SBENCH_ENGINE_CORES fails the command here, not in whichever engine loads first
    if not args.debug:
        leave_run_failures_to_the_cli()
    with prefect_api():
        return int(args.handler(args) or 0)


def user_error(error: BaseException) -> S2SBenchError | None:
    """The :class:`S2SBenchError` ``error`` is or stands for (an OSError of a full disk, a read-only folder, ...),
    or None for a bug."""
    if isinstance(error, S2SBenchError):
        return error
    if isinstance(error, OSError):
        return environment_fault(error)
    return None


class _QuietUserErrors:
    """A log record factory that drops the traceback from records about user errors and interrupts: Prefect logs
    every failed flow and task with its traceback, which for a config error is noise (``--debug`` keeps them)."""

    def __init__(self, factory):
        self.factory = factory

    def __call__(self, *args, **kwargs):
        record = self.factory(*args, **kwargs)
        if record.exc_info and (isinstance(record.exc_info[1], KeyboardInterrupt) or user_error(record.exc_info[1])):
            record.exc_info, record.exc_text = None, None
        return record


@contextlib.contextmanager
def _quiet_user_errors(debug: bool):
    if debug:
        yield
        return
    factory = logging.getLogRecordFactory()
    logging.setLogRecordFactory(_QuietUserErrors(factory))
    try:
        yield
    finally:
        logging.setLogRecordFactory(factory)


def main(argv: list[str] | None = None, *, hard_exit: bool | None = None) -> int:
    """Run one command; returns its exit code. ``hard_exit`` (default: when run as the console script, without
    ``argv``) lets a signal end the process if the command does not end by itself (see
    :mod:`s2sbench.flows.interrupts`)."""
    from s2sbench.flows.interrupts import interrupt_handling
    from s2sbench.pipeline.cpu import keep_freed_memory

    keep_freed_memory()  # before any thread allocates: the engines' threads then share one malloc arena
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or a usage error (printed by argparse, exit code 2)
        return int(done.code or 0)
    if args.command is None:
        parser.print_help()
        return ConfigError.exit_code
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        with interrupt_handling(argv is None if hard_exit is None else hard_exit), _quiet_user_errors(args.debug):
            return run_handler(args)
    except KeyboardInterrupt as interrupt:
        print(f"s2sbench {args.command}: interrupted ({interrupt or 'SIGINT'}); run the command again to resume",
              file=sys.stderr)
        return INTERRUPTED_EXIT_CODE
    except Exception as error:  # re-raised (a bug: traceback, exit code 1) unless the user can act on it
        known = user_error(error)
        if args.debug or known is None:
            raise
        print(f"s2sbench {args.command}: {known.kind} error: {known}", file=sys.stderr)
        return known.exit_code


if __name__ == "__main__":
    sys.exit(main())
