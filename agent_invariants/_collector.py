"""The cyclic garbage collector, paused while the package builds many objects that hold no cycles.

Reading a trace, running the rules, and building a report of a million violations each allocate
millions of small objects (events, tuples, violations, decoded JSON). None of them forms a cycle,
but allocating them starts the collector over and over, and each run walks every tracked object:
with the collector on, a report of a million violations took twice as long to build. Objects are
still freed by reference counting meanwhile, and any cycle is collected once the collector runs
again.
"""
from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ("paused",)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Pause the cyclic collector inside the block (nested blocks are fine)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
