"""``s2sbench models``: list the model adapters with their modes, speech languages, hub ids and status."""

from __future__ import annotations

import argparse
import json

from s2sbench.flows.commands import add_command

EXAMPLES = """examples:
  s2sbench models
  s2sbench models --json
  s2sbench eval --dataset build/ --model qwen2-audio --model-arg model=Qwen/Qwen2-Audio-7B --out results/

status: verified = real weights scored offline in this project's tests; unverified = code path tested on a tiny
random-weight model built from the family's config (the real checkpoint needs a download); third-party = registered
by an installed package under the 's2sbench.models' entry-point group.
"""

COLUMNS = ("name", "modes", "speech", "status", "hub ids")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "models",
        help="list the model adapters",
        description="List every model adapter (built-in and third-party) with the modes it scores, the speech it "
        "takes, the hub ids a user passes as model=, and whether it was verified on real weights.",
        epilog=EXAMPLES,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per adapter")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from s2sbench.evaluation.models import list_adapters

    adapters = list_adapters()
    if args.json:
        for info in adapters:
            print(json.dumps(asdict(info), ensure_ascii=False))
        return 0
    rows = [(a.name, ",".join(a.modes), a.speech_languages, a.status, ", ".join(a.hub_ids)) for a in adapters]
    widths = [max(len(row[index]) for row in [COLUMNS, *rows]) for index in range(len(COLUMNS))]
    for row in [COLUMNS, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0
