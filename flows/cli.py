"""The ``s2sbench`` command line: a thin wrapper over the library stages and the Prefect flows."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from s2sbench.flows.commands import COMMAND_MODULES


class CommandError(RuntimeError):
    """A user-facing failure: printed without a traceback (unless --debug), exit code 2."""


EPILOG = """examples:
  s2sbench demo --out demo-out
  s2sbench build demo-stories-en --out build/
  s2sbench eval --dataset build/ --model smollm2 --out results.json
  s2sbench tasks
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2sbench",
        description="Build spoken benchmarks and measure how much speech LLMs lose when the context is speech.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"s2sbench.flows.commands.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (CommandError, ValueError, FileNotFoundError) as error:
        if args.debug:
            raise
        print(f"s2sbench {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
