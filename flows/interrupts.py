"""SIGINT and SIGTERM stop any command within seconds, with its folders consistent.

Both signals raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, so ``finally`` blocks run: the
build lock is released, a started Prefect server is stopped, temporary files are removed. That alone is not enough:
Python runs a signal handler only between bytecodes of the main thread, so a main thread inside a long C call (a
model's forward pass, an ONNX run) hears the signal late, and worker threads still busy with a shard keep the
process alive after the main thread is done. So a command run from the shell (``hard_exit``) also arms a watchdog
the moment the signal arrives (a thread woken by :func:`signal.set_wakeup_fd`, which the kernel-level handler
writes to even while the main thread is busy): if the command has not ended :data:`GRACE_S` seconds later, the
process ends with exit code 130. The Python handler arms it too (a library's event loop may take the wake-up fd
over). A second signal ends it at once. Ending it hard is safe because every writer is: whole files are written
atomically, JSONL manifests lose at most a torn last line (cut on the next open), a lock dies with its process,
and a private Prefect server dies with its parent (:mod:`s2sbench.flows.server`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator

from s2sbench.pipeline.core.errors import INTERRUPTED_EXIT_CODE

GRACE_S = 1.5  # after the first signal, how long the command has to end by itself (the promise is 5 s)
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop (SIGINT or SIGTERM)."""


class _Watchdog:
    """Ends the process :data:`GRACE_S` seconds after the first signal, at once on a second one. It hears a signal
    twice: from the Python handler (in the main thread, between bytecodes) and from the wake-up socket (even while
    the main thread is inside a C call, and even if a library's event loop has taken the wake-up fd over, the Python
    handler still tells it); each path counts its own signals, so one signal heard twice is not a second one."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # the handler may run again, for a second signal, inside the first
        self._heard = {"handler": 0, "wakeup": 0}
        self._timer: threading.Timer | None = None

    def signalled(self, path: str) -> None:
        with self._lock:
            self._heard[path] += 1
            if self._heard[path] > 1:
                _end_now("second signal")
            if self._timer is None:
                self._timer = threading.Timer(GRACE_S, _end_now, args=(f"still running {GRACE_S:g} s after the signal",))
                self._timer.daemon = True
                self._timer.start()

    def listen(self, reader: socket.socket) -> None:
        """Wait for signals on the wake-up socket (run in a daemon thread)."""
        while True:
            try:
                data = reader.recv(16)
            except OSError:
                return
            if not data:
                return
            # each byte is the number of a signal Python caught: only ours count (a library may handle others)
            for number in data:
                if number in SIGNALS:
                    self.signalled("wakeup")


def _end_now(reason: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        os.write(2, f"s2sbench: interrupted ({reason}); run the command again to resume\n".encode())
    os._exit(INTERRUPTED_EXIT_CODE)


@contextlib.contextmanager
def interrupt_handling(hard_exit: bool) -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` inside the block; with ``hard_exit`` the watchdog also runs
    (see the module docstring). Outside the main thread signals cannot be handled, so nothing changes there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in SIGNALS}
    watchdog = _Watchdog() if hard_exit else None

    def interrupt(signum: int, frame: object) -> None:
        if watchdog is not None:
            watchdog.signalled("handler")
        raise Interrupted(signal.Signals(signum).name)

    writer = None
    previous_wakeup = None
    try:
        for number in SIGNALS:
            signal.signal(number, interrupt)
        if watchdog is not None:
            reader, writer = socket.socketpair()
            writer.setblocking(False)
            previous_wakeup = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            threading.Thread(target=watchdog.listen, args=(reader,), name="s2sbench-interrupt-watchdog", daemon=True).start()
        yield
    finally:
        if writer is not None:
            signal.set_wakeup_fd(previous_wakeup if previous_wakeup is not None else -1)
        for number, handler in previous.items():
            signal.signal(number, handler)
        # the sockets stay open: the watchdog may still be timing a grace period while the process exits
