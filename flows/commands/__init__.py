"""One module per ``s2sbench`` sub-command; each has ``register(subparsers)`` that adds its parser and sets
``handler``. Modules listed here are imported when the CLI starts, so keep their top-level imports light."""

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
]
