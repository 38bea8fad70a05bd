"""A check pauses the cyclic collector and leaves it as it found it.

While the collector is paused, whatever a check keeps piles up in its youngest generation; after
a large check the pause ends by moving it all to the oldest one unscanned (freeze, then
unfreeze). That must not
change what the caller sees: the collector's state, objects the caller froze, and garbage
cycles, which are still collected.
"""
from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from agent_invariants import _collector, check_trace

from support import contract

RULES = contract({"id": "retries", "kind": "retry_limit", "max_attempts": 1})
TRACE = [{"seq": n, "type": "tool.call", "tool": "kb.search", "call_signature": f"q{n % 7}"} for n in range(50)]


class Node:
    """Something a weak reference can watch, in a cycle with itself."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(params=["after a small check", "after a large one"])
def collector_state(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The collector's state restored after each test, which runs once as after a small check
    and once as after one that kept many objects (the threshold lowered to none)."""
    if request.param == "after a large one":
        monkeypatch.setattr(_collector, "_MANY", 0)
    enabled = gc.isenabled()
    yield
    gc.unfreeze() if gc.get_freeze_count() else None
    gc.enable() if enabled else gc.disable()


@pytest.mark.usefixtures("collector_state")
def test_a_check_leaves_the_collector_enabled_and_nothing_frozen() -> None:
    gc.enable()
    frozen = gc.get_freeze_count()
    report = check_trace(RULES, TRACE)
    assert len(report.violations) == 7
    assert gc.isenabled()
    assert gc.get_freeze_count() <= frozen   # none added (fewer when frozen objects were freed meanwhile)


@pytest.mark.usefixtures("collector_state")
def test_a_check_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    check_trace(RULES, TRACE)
    assert not gc.isenabled()


@pytest.mark.usefixtures("collector_state")
def test_a_cycle_made_before_the_check_is_still_collected_after_it() -> None:
    gc.enable()
    node = Node()
    gone = weakref.ref(node)
    del node
    check_trace(RULES, TRACE)
    gc.collect()
    assert gone() is None


@pytest.mark.usefixtures("collector_state")
def test_objects_the_caller_froze_stay_frozen() -> None:
    gc.enable()
    kept = Node()
    gc.freeze()
    assert not any(thing is kept for thing in gc.get_objects())   # in the permanent generation
    check_trace(RULES, TRACE)
    assert not any(thing is kept for thing in gc.get_objects())   # still there, not thawed
    assert gc.get_freeze_count() > 0   # (frozen objects freed meanwhile leave it: a context a
    assert kept.me is kept             # check's contextvars replace)
