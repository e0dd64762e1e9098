"""SIGINT and SIGTERM stop any command within seconds, with its folders consistent.

Both signals raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, so ``finally`` blocks run: the
build lock is released, a started Prefect server is stopped, temporary files are removed. That alone is not enough:
Python runs a signal handler only between bytecodes of the main thread, so a main thread inside a long C call (a
model's forward pass, an ONNX run) hears the signal late, and worker threads still busy with a shard keep the
process alive after the main thread is done. So a command run from the shell (``hard_exit``) also arms a watchdog
the moment the signal arrives (a thread woken by :func:`signal.set_wakeup_fd`, which the kernel-level handler
writes to even while the main thread is busy): if the command has not ended :data:`GRACE_S` seconds later, the
process ends with exit code 130. A second signal ends it at once. Ending it hard is safe because every writer is:
whole files are written atomically, JSONL manifests lose at most a torn last line (cut on the next open), a lock
dies with its process, and a private Prefect server dies with its parent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator

from s2sbench.pipeline.errors import INTERRUPTED_EXIT_CODE

GRACE_S = 3.0  # after the first signal, how long the command has to end by itself
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop (SIGINT or SIGTERM)."""


def _raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted(signal.Signals(signum).name)


def _end_now(reason: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        os.write(2, f"interrupted ({reason})\n".encode())
    os._exit(INTERRUPTED_EXIT_CODE)


def _watch(reader: socket.socket) -> None:
    """Wait for signals on the wake-up socket: the first arms the grace timer, the second ends the process."""
    timer = None
    while True:
        try:
            data = reader.recv(16)
        except OSError:
            return
        if not data:
            return
        # each byte is the number of a signal Python caught: only ours count (a library may handle others)
        for number in data:
            if number not in SIGNALS:
                continue
            if timer is not None:
                _end_now("second signal")
            timer = threading.Timer(GRACE_S, _end_now, args=(f"still running {GRACE_S:g} s after the signal",))
            timer.daemon = True
            timer.start()


@contextlib.contextmanager
def interrupt_handling(hard_exit: bool) -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` inside the block; with ``hard_exit`` the watchdog also runs
    (see the module docstring). Outside the main thread signals cannot be handled, so nothing changes there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in SIGNALS}
    reader = writer = None
    previous_wakeup = None
    try:
        for number in SIGNALS:
            signal.signal(number, _raise_interrupted)
        if hard_exit:
            reader, writer = socket.socketpair()
            writer.setblocking(False)
            previous_wakeup = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            threading.Thread(target=_watch, args=(reader,), name="s2sbench-interrupt-watchdog", daemon=True).start()
        yield
    finally:
        if writer is not None:
            signal.set_wakeup_fd(previous_wakeup if previous_wakeup is not None else -1)
        for number, handler in previous.items():
            signal.signal(number, handler)
        # the sockets stay open: the watchdog thread may still be timing a grace period while the process exits
