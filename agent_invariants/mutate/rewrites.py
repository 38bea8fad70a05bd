"""The false-positive check: rewrites of the trace that keep its behaviour must still pass.

A rule that counts positions (`within_events`, `max_events`) or leans on how a trace is written
rather than on what the agent did fails some of these (spec §6, §10 point 65):

- `renumber`: seq = 1000 + 7·i (i the 0-based position);
- `heartbeat`: a `{"seq", "type": "telemetry.heartbeat"}` after the 3rd, 6th, ... event, with the
  time of the event before it; then seq 10, 20, ...;
- `comments`: a `# agent-invariants rewrite` line and an empty line before every event line;
- `reorder_keys`: every object's keys reversed, at every depth;
- `json_array`: the events as one JSON array;
- `corpus`: each `*.jsonl` / `*.json` file of `--corpus`, by name.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from typing import Any

from msgspec import Raw

from agent_invariants.mutate.operators import as_mutant
from agent_invariants.mutate.trace import Event, as_json_array, as_jsonl, fresh, raw

__all__ = ("REWRITES", "rewritten")

REWRITES = ("renumber", "heartbeat", "comments", "reorder_keys", "json_array", "corpus")
"""Every rewrite, by the name `--no-rewrite` takes."""


def rewritten(events: list[Event], skip: Collection[str] = ()) -> Iterator[tuple[str, bytes]]:
    """The trace under each rewrite but `corpus` and those in `skip`, by name, one at a time."""
    made: dict[str, Callable[[list[Event]], bytes]] = {
        "renumber": _renumbered, "heartbeat": _with_heartbeats, "comments": _with_comments,
        "reorder_keys": _reordered, "json_array": as_json_array}
    for name, make in made.items():
        if name not in skip:
            yield name, make(events)


def _renumbered(events: list[Event]) -> bytes:
    return as_jsonl({**event, "seq": Raw(b"%d" % (1000 + 7 * index))} for index, event in enumerate(events))


def _with_heartbeats(events: list[Event]) -> bytes:
    out: list[Event] = []
    for number, event in enumerate(events, 1):
        out.append(event)
        if number % 3 == 0:
            beat: Event = {"seq": Raw(b"0"), "type": raw("telemetry.heartbeat")}
            if "time" in event:
                beat["time"] = event["time"]
            out.append(beat)
    return as_jsonl(as_mutant(out))


def _with_comments(events: list[Event]) -> bytes:
    return b"".join(b"# agent-invariants rewrite\n\n" + line for line in as_jsonl(events).splitlines(keepends=True))


def _reordered(events: list[Event]) -> bytes:
    return as_jsonl({name: raw(_reversed(fresh(value))) for name, value in reversed(event.items())}
                    for event in events)


def _reversed(value: Any) -> Any:
    """`value` with every object's keys in reverse order, at every depth (a loop, not recursion:
    values nest as deep as the reader allows)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]   # (node, container of its copy, key there)
    while stack:
        node, into, key = stack.pop()
        if isinstance(node, dict):
            copy: Any = {}
            for name, item in reversed(node.items()):
                copy[name] = None
                stack.append((item, copy, name))
        elif isinstance(node, list):
            copy = [None] * len(node)
            stack.extend((item, copy, number) for number, item in enumerate(node))
        else:
            copy = node
        into[key] = copy
    return root[0]
