"""A one-line progress display on standard error, for runs that take more than a moment.

Drawn only when stderr is a terminal (and not `--quiet`), no more than ten times a second, and
only once the run has lasted half a second, so quick runs and CI logs never see it. It is erased
when the run ends. Safe to advance from a worker thread.

The line is written straight to the terminal's descriptor. If the terminal goes away mid-run
(the write fails), the display stops and the run goes on: a progress line is never worth an
error, and nothing is left in a buffer to fail again at exit.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

__all__ = ("Progress",)

_DELAY = 0.5
_INTERVAL = 0.1
_WIDTH = 24


class Progress:
    """Counts work done out of `total` (None when unknown) and shows it as `label`."""

    def __init__(self, total: float | None, label: str, *, unit: str = "", enabled: bool = True,
                 stream: TextIO | None = None) -> None:
        self.total = total
        self.label = label
        self.unit = unit
        self.done = 0.0
        stream = stream or sys.stderr
        self._enabled = enabled and stream is not None and stream.isatty()
        self._descriptor = stream.fileno() if self._enabled else -1
        self._started = time.monotonic()
        self._drawn_at = 0.0
        self._shown = False
        self._lock = threading.Lock()

    def advance(self, amount: float = 1) -> None:
        with self._lock:
            self.done += amount
            if not self._enabled:
                return
            now = time.monotonic()
            if now - self._started < _DELAY or now - self._drawn_at < _INTERVAL:
                return
            self._drawn_at = now
            self._shown = self._draw("\r" + self._line() + "\x1b[K")

    def _line(self) -> str:
        if not self.total:
            return f"  {self.label} {self._amount(self.done)}"
        share = min(1.0, self.done / self.total)
        filled = int(share * _WIDTH)
        return (f"  {self.label} [{'#' * filled}{'.' * (_WIDTH - filled)}] "
                f"{self._amount(self.done)}/{self._amount(self.total)} {share:4.0%}")

    def _amount(self, value: float) -> str:
        if self.unit == "bytes":
            return f"{value / 1e6:.1f} MB"
        return f"{value:g}"

    def close(self) -> None:
        with self._lock:
            if self._shown:
                self._draw("\r\x1b[K")
                self._shown = False

    def _draw(self, text: str) -> bool:
        """Write `text` to the terminal; on failure stop drawing. True when it was written."""
        try:
            os.write(self._descriptor, text.encode("utf-8"))
            return True
        except OSError:
            self._enabled = False
            return False
