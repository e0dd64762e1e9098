"""The ``s2sbench`` command line: a thin wrapper over the library stages and the Prefect flows."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys

from s2sbench import __version__
from s2sbench.flows.commands import COMMAND_MODULES
from s2sbench.pipeline.core.errors import INTERRUPTED_EXIT_CODE, ConfigError, S2SBenchError, environment_fault


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


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record comes (a test's capture, a redirected stream)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def show_progress_lines() -> None:
    """Print a long run's progress lines (:mod:`s2sbench.pipeline.run.progress`) on stderr, each with its time."""
    progress = logging.getLogger("s2sbench.progress")
    progress.setLevel(logging.INFO)
    progress.propagate = False
    if not progress.handlers:
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        progress.addHandler(handler)


class _OneErrorLine(logging.Filter):
    """What the console leaves out of a run (``--debug`` keeps it, and the Prefect API, so the UI, gets it all): a
    failed flow or task run's ERROR records and its "Finished in state Failed(...)" line, since the CLI prints the
    error once, in one line (a traceback for a bug); the events worker's note that it is still sending at exit; and
    the "View at" link of a server that stops with the command, which would lead nowhere."""

    def filter(self, record: logging.LogRecord) -> bool:
        from s2sbench.flows.server import private_server_running

        if record.name.startswith(("prefect.flow_runs", "prefect.task_runs")):
            if record.levelno >= logging.ERROR:
                return False
            message = record.getMessage()
            if message.startswith("Finished in state") and ("Failed(" in message or "Crashed(" in message):
                return False
            if message.startswith("View at ") and private_server_running():
                return False
        return not (record.name == "EventsWorker" and record.getMessage().startswith("Still processing items"))


def leave_run_failures_to_the_cli() -> None:
    """Put :class:`_OneErrorLine` on every console handler: the root logger's (which Prefect's run loggers reach)
    and Prefect's own console handlers."""
    from prefect.logging.handlers import PrefectConsoleHandler

    handlers = list(logging.getLogger().handlers)
    for name in ("prefect", "prefect.flow_runs", "prefect.task_runs"):
        handlers += [h for h in logging.getLogger(name).handlers if isinstance(h, PrefectConsoleHandler)]
    for handler in handlers:
        if not any(isinstance(existing, _OneErrorLine) for existing in handler.filters):
            handler.addFilter(_OneErrorLine())


def run_handler(args: argparse.Namespace) -> int:
    """Run the sub-command; one that runs flows (``runs_flow`` set by its parser: true, or a function of the parsed
    arguments) gets a Prefect API first."""
    if getattr(args, "device", None) is not None:
        from s2sbench.pipeline.machine.device import use_device

        use_device(args.device)  # before a server, an engine or a worker starts: they read it from the environment
    runs_flow = getattr(args, "runs_flow", False)
    if not (runs_flow(args) if callable(runs_flow) else runs_flow):
        return int(args.handler(args) or 0)
    from s2sbench.flows.server import prefect_api
    from s2sbench.pipeline.machine.cpu import engine_cores

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
    from s2sbench.pipeline.machine.cpu import keep_freed_memory

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
    show_progress_lines()
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
