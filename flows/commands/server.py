"""``s2sbench server start|status|stop``: one local Prefect server that later commands reuse (no start-up each)."""

from __future__ import annotations

import argparse
import time

from s2sbench.flows.commands import add_command

EXAMPLES = """examples:
  s2sbench server start          # once: UI and API on http://127.0.0.1:4200, kept until stopped
  s2sbench build demo-stories-en --out build/     # runs against it: no Prefect start-up
  s2sbench server status
  s2sbench server stop

Without a started server (and without PREFECT_API_URL) each command starts a private server that stops with it.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "server",
        help="start, check or stop the local Prefect server that commands reuse",
        description=(
            "Start one local Prefect server (bound to 127.0.0.1, analytics off) in the background; every later "
            "s2sbench command uses it instead of starting its own, and its runs show in the Prefect UI. "
            "PREFECT_API_URL, when set, takes precedence."
        ),
        epilog=EXAMPLES,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start the server in the background (no-op when it runs)")
    start.add_argument("--port", type=int, default=4200, help="port on 127.0.0.1 (default: 4200; 0 for any free one)")
    start.add_argument("--no-ui", action="store_true", help="serve the API only")
    actions.add_parser("status", help="say whether the server runs, and where")
    actions.add_parser("stop", help="stop the server")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from s2sbench.flows import server

    if args.action == "start":
        started = time.monotonic()
        state, new = server.start_server(port=args.port, ui=not args.no_ui)
        how = f"started in {time.monotonic() - started:.0f} s" if new else "already running"
        print(f"Prefect server {how}: UI {state.ui_url}, API {state.api_url} (pid {state.pid}, log {state.log})")
        print("later s2sbench commands use it; other Prefect tools: export PREFECT_API_URL=" + state.api_url)
        return 0
    if args.action == "status":
        state = server.running_server()
        if state is None:
            print("no s2sbench Prefect server is running (commands start a private one each; `s2sbench server start`)")
            return 1
        health = "answering" if server.is_healthy(state.api_url) else "not answering yet"
        print(f"running, {health}: UI {state.ui_url}, API {state.api_url} (pid {state.pid}, log {state.log})")
        return 0
    state = server.stop_server()
    print(f"stopped the Prefect server (pid {state.pid})" if state else "no s2sbench Prefect server was running")
    return 0
