"""Orchestration: Prefect flows over the library stages, and the ``s2sbench`` command line that starts them."""

import os

# Prefect runs fully offline with its ephemeral server only with analytics off, and its default 20 s start-up
# timeout fails intermittently on small machines (measured 12-28 s). Users can still override both.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
# A task run's "Finished in state Completed()" line costs more than the rest of its bookkeeping (its state shows in
# the UI anyway); warnings and errors of task runs still log.
os.environ.setdefault("PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL", "WARNING")
# Prefect's client-side telemetry (a notice on a terminal, usage events) is off unless the user asks for it
os.environ.setdefault("DO_NOT_TRACK", "1")
