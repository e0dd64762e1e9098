"""One module per ``s2sbench`` sub-command; each has ``register(subparsers)`` that adds its parser and sets
``handler`` (and ``runs_flow=True`` when it runs Prefect flows: the CLI then provides a Prefect API, see
``s2sbench.flows.server``). Modules listed here are imported when the CLI starts, so keep their top-level imports light."""

import argparse


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
