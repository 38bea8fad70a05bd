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
            _promote_survivors()
            gc.enable()


_MANY = 50_000
"""Objects kept from a block past which they are moved to the oldest generation unscanned."""


def _promote_survivors() -> None:
    """Move every tracked object to the oldest generation, unscanned, when the block kept many.

    Whatever the block built and kept (a rule's kept results, a report's violations) is still in
    the youngest generation, and the first collection after the block would walk all of it, then
    the next generation's again: 35 ms for the 72,000 kept lookups of a million-event version-2
    check. Freezing and unfreezing moves the objects without looking at them. The caller's young
    objects move with them, so a garbage cycle among those waits for the next full collection:
    only done after a large block (a small one costs the collector little), and only when nothing
    else froze objects, since unfreezing thaws them all."""
    if gc.get_count()[0] > _MANY and gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
