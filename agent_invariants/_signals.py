"""Ctrl-C and SIGTERM: stop promptly, leave no file and no process behind.

Ctrl-C raises KeyboardInterrupt in the main thread, as Python always does; the CLI exits 130. The
CLI also turns SIGTERM into `Terminated` (exit 143), so that `finally` blocks and the batch's
worker clean-up run instead of the process vanishing with its workers still busy.

Two places must not be cut short by either signal: a temporary file between its creation and
its rename or removal, and the start of worker processes (a worker interrupted before it set its
own signals would print a traceback). `held()` defers both signals across such a step; they take
effect as soon as it ends.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ("INTERRUPTED", "TERMINATED", "Terminated", "end_workers", "hangup_terminates", "held", "quiet_worker",
           "raise_on_terminate")

INTERRUPTED = 128 + signal.SIGINT    # 130, the exit code shells use for Ctrl-C
TERMINATED = 128 + signal.SIGTERM    # 143

_STOPPING = {signal.SIGINT, signal.SIGTERM}


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, like KeyboardInterrupt, so `except Exception` lets it pass."""


def raise_on_terminate() -> None:
    """From now on SIGTERM raises `Terminated` in the main thread (call it from the main thread)."""
    signal.signal(signal.SIGTERM, _terminate)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def hangup_terminates() -> Iterator[None]:
    """In the block, SIGHUP (a closed terminal) raises `Terminated` as SIGTERM does, so that
    `finally` blocks run (`record` removes its raw trace copy so); main thread only."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGHUP"):
        yield
        return
    previous = signal.signal(signal.SIGHUP, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)


@contextmanager
def held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM in this thread until the block ends (where the platform can).
    Processes started meanwhile inherit the deferral: `quiet_worker` lifts it."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def quiet_worker() -> None:
    """Initializer of worker processes: Ctrl-C at the terminal reaches the whole process group,
    but only the parent acts on it (it ends its workers), so a worker ignores SIGINT and leaves
    SIGTERM (what ends it) at its default."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)


def end_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel the tasks not started and terminate the workers. `shutdown` alone would wait for
    each running task to finish; Python 3.11 has no public way to end the workers (3.14 adds
    `terminate_workers`), hence the executor's own map of them.

    The executor's thread is not waited for: a worker ended while sending its result can leave
    that thread waiting for the rest of the message for good. The CLI exits without joining it."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=5)
        if worker.is_alive():
            worker.kill()
            worker.join()
