"""The time and size budgets (`latency_budget`, `result_size`, `run_duration`) against a reference
model written from the spec text only (spec v2 §0, §1 `duration_ms`/`time`, §3.6 and §10 points 1-7,
16, 22 and 23; v1 §2.7 globs and §3.3 times). A property test generates one-rule contracts (every
option §3.6 gives: `tool`, `max_ms`, `percentile`, `on_missing`, `max_bytes`) and short traces (calls
of a few tools with reused, missing and unanswered call_ids, results with and without `duration_ms`,
`time` stamps absent, in several zones, with sub-microsecond fractions or offsets of 24 h and more,
results of various canonical sizes or none, run.start / run.completed / run.failed with and without
`time` and `duration_ms`), checked whole or (`partial`) as cut short, and compares the public API's
verdict, error/warning counts, `checked`, `vacuous` and the violations (seq, code, status, evidence,
pointer, order) with the model.

What the model takes from the spec:
- a call's result is paired one-to-one in trace order: a result belongs to the nearest earlier call
  with its call_id that has no result yet; an orphan result keeps its own tool; a paired result's
  tool is its call's (§0, point 3);
- latency_budget: the calls whose own tool matches `tool` (default `*`; a glob never matches a
  missing tool) are the subjects; a call's duration is its result's `duration_ms`, else result.time
  − call.time; a result-less call, a missing time, a negative difference or an offset ≥ 24 h is
  unresolved (§3.6, point 23);
- without `percentile`: `exceeded` at the result when strictly over `max_ms` (point 23), and
  `duration_unresolved` at the call unless `on_missing: skip` (§3.6, points 2, 22);
- with `percentile`: the 1-based nearest rank `sorted[max(1, ⌈p·n/100⌉) − 1]` over the measured
  calls, one no-seq `exceeded` iff value > max_ms with `{percentile, value, max_ms, samples,
  unmeasured}`, one no-seq `duration_unresolved` when some call is unmeasured under `on_missing:
  fail`, and exactly one when calls exist but none is measured, whatever `on_missing` (point 22);
- result_size: every `tool.result` whose tool (its call's, or its own when orphan) matches `tool`
  (default `*`) is a subject; its size is the UTF-8 length of the RFC 8785 form of `result` (null is
  4 bytes, `100.0` is `100`); `exceeded` when strictly over `max_bytes`, `result_missing` at the
  result when it has no `result`, unless `on_missing: skip` (§3.6, points 7, 9, 22, 23);
- run_duration: the terminal is the last run.completed or run.failed; its `duration_ms` wins, else
  its time minus the time of the first run.start, or of the first event when there is none, with no
  further fallback; times are truncated to µs; a missing time, a negative difference or an offset
  ≥ 24 h is `duration_unresolved` at the terminal; no terminal is one no-seq `duration_unresolved`
  (§3.6, point 23);
- codes `<kind>.<reason>` from the rule's own kind, `status: unresolved` for duration_unresolved and
  result_missing (points 1, 6); `checked` = matching calls (latency_budget) or matching results
  (result_size), `vacuous` iff 0; run_duration always checks 1 and is never vacuous (point 4);
- violations in ascending event order, then those without a seq; ties follow the code order of point
  1's table (point 5);
- every violation counts under the rule's severity (point 6); under `partial` the liveness parts (the
  percentile variant, run_duration) are `inconclusive` and left out of the counts and the verdict,
  the safety parts (latency_budget without percentile, even an unanswered call; result_size) are
  unchanged (§0, §3.6's labels, point 82).

Where the spec is silent the model follows the implementation (listed in `AMBIGUOUS` below).
"""
from __future__ import annotations

import calendar
import json
import math
import re
import time
from fractions import Fraction
from typing import Any, NamedTuple

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import check_trace
from tests.models import ABSENT, glob, located_at_their_events, picked, same_violations
from tests.support import integral

from support import examples

# Points where the spec is silent and the model follows the implementation:
AMBIGUOUS = (
    # §3.6 names the keys of latency_budget's per-result evidence but not what `tool` holds: it is the
    # call's own tool (not the rule's glob); `source` is "duration_ms" or "time"
    "latency_budget.exceeded evidence: tool is the call's tool; source values",
    # the evidence of latency_budget.duration_unresolved is unnamed: {tool, call_id} at the call
    # (call_id left out when the call has none), {samples, unmeasured} for the no-seq one
    "latency_budget.duration_unresolved evidence",
    # result_size evidence `tool` is the result's tool (its call's, or its own when orphan) and
    # `call_id` the result's own (left out when absent); result_missing has {tool, call_id}
    "result_size evidence tool/call_id, and result_missing evidence",
    # run_duration: start_seq is the start event's seq even when the terminal's duration_ms wins;
    # duration_unresolved has {start_seq, end_seq, max_ms} at the terminal, {max_ms} without one
    "run_duration evidence start_seq with source duration_ms; duration_unresolved evidence",
    # pointers are defined only for args/output/result reads (point 7): result_size violations carry
    # "/result", latency_budget and run_duration violations none
    "pointers",
    # the v1 grammar does not range-check an offset's minutes; §3.6 and point 23 make only an offset
    # of 24 h or more unresolved, so `+05:75` is its hours and minutes added up, 6 h 15 min
    "offset minutes >= 60 add up",
    # both percentile violations carry no seq; when both occur, `exceeded` comes first (the order of
    # point 1's table, as point 5 orders ties at one event)
    "order of the two no-seq percentile violations",
)

TERMINALS = ("run.completed", "run.failed")
CODE_ORDER = ("exceeded", "duration_unresolved", "result_missing")
TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|([+-])(\d{2}):?(\d{2}))")
MS = 1000   # µs per ms


# -- the reference model --------------------------------------------------------------------------

class Found(NamedTuple):
    """One model violation: position (None: no seq), reason, status, evidence, pointer."""
    position: int | None
    reason: str
    status: str
    evidence: dict[str, Any]
    pointer: str | None = None


def status_of(reason: str) -> str:
    """Point 6: duration_unresolved and result_missing are unresolved, the rest fail."""
    return "unresolved" if reason in ("duration_unresolved", "result_missing") else "fail"


def found(position: int | None, reason: str, evidence: dict[str, Any], pointer: str | None = None) -> Found:
    """A violation whose status follows from its reason, so no model function can pick a wrong one."""
    return Found(position, reason, status_of(reason), evidence, pointer)


def instant_us(text: Any) -> int | None:
    """v1 §3.3 and §3.6: microseconds since the epoch (fraction truncated to µs); None for a missing
    time or an offset that names no instant (≥ 24 h; minutes ≥ 60 add up: AMBIGUOUS)."""
    if not isinstance(text, str):
        return None
    match = TIME.fullmatch(text)
    assert match is not None, text   # the generated pool only holds valid v1 times
    year, month, day, hour, minute = (int(match.group(i)) for i in range(1, 6))
    second = int(match.group(6) or 0)
    micros = int((match.group(7) or "").ljust(6, "0")[:6])
    offset = 0
    if match.group(8) != "Z":
        hours, minutes = int(match.group(10)), int(match.group(11))
        if hours * 60 + minutes >= 24 * 60:
            return None
        offset = (hours * 60 + minutes) * (-1 if match.group(9) == "-" else 1)
    seconds = calendar.timegm((year, month, day, hour, minute, second)) - offset * 60
    return seconds * 1_000_000 + micros


def elapsed_ms(start: Any, end: Any) -> float | None:
    """end − start in ms from two `time` values; None when either is unresolved or it is negative."""
    a, b = instant_us(start), instant_us(end)
    if a is None or b is None or b < a:
        return None
    return (b - a) / MS


def over(value: float, limit: float) -> bool:
    """Point 23: a budget fails only when strictly over its maximum (compared exactly)."""
    return Fraction(value) > Fraction(limit)


def pair(events: list[dict[str, Any]]) -> tuple[dict[int, int], dict[int, int]]:
    """Point 3: (call position -> its result's position, result position -> its call's position)."""
    waiting: dict[str, list[int]] = {}
    result_of: dict[int, int] = {}
    for i, event in enumerate(events):
        if event["type"] == "tool.call" and "call_id" in event:
            waiting.setdefault(event["call_id"], []).append(i)
        elif event["type"] == "tool.result" and waiting.get(event.get("call_id", "")):
            result_of[waiting[event["call_id"]].pop()] = i
    return result_of, {r: c for c, r in result_of.items()}


def with_call_id(event: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Evidence `fields` plus the event's call_id when it has one."""
    return {**fields, **({"call_id": event["call_id"]} if "call_id" in event else {})}


# latency_budget

def call_duration(events: list[dict[str, Any]], call: int, result: int | None) -> tuple[float, str] | None:
    """§3.6: (duration, source) of a call — its result's duration_ms, else result.time − call.time."""
    if result is None:
        return None
    if "duration_ms" in events[result]:
        return events[result]["duration_ms"], "duration_ms"
    duration = elapsed_ms(events[call].get("time"), events[result].get("time"))
    return None if duration is None else (duration, "time")


def nearest_rank(samples: list[float], percentile: float) -> float:
    """Point 22: the 1-based nearest rank, sorted[max(1, ⌈p·n/100⌉) − 1], with p read as written."""
    rank = math.ceil(Fraction(repr(percentile)) * len(samples) / 100)
    return sorted(samples)[max(1, rank) - 1]


def latency(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Found]]:
    """(checked, violations) of a latency_budget rule."""
    tool, max_ms, skip = rule.get("tool", "*"), rule["max_ms"], rule.get("on_missing", "fail") == "skip"
    result_of, _ = pair(events)
    calls = [i for i, e in enumerate(events) if e["type"] == "tool.call" and glob(tool, e.get("tool"))]
    measured = {i: call_duration(events, i, result_of.get(i)) for i in calls}
    if "percentile" in rule:
        return len(calls), percentile_check(rule, [m[0] for m in measured.values() if m is not None], len(calls))
    violations = []
    for call, measure in measured.items():
        if measure is None:
            if not skip:
                evidence = with_call_id(events[call], tool=events[call]["tool"])
                violations.append(found(call, "duration_unresolved", evidence))
        elif over(measure[0], max_ms):
            evidence = {"tool": events[call]["tool"], "call_id": events[call]["call_id"], "duration_ms": measure[0],
                        "max_ms": max_ms, "source": measure[1]}
            violations.append(found(result_of[call], "exceeded", evidence))
    return len(calls), violations


def percentile_check(rule: dict[str, Any], samples: list[float], calls: int) -> list[Found]:
    """Point 22: the no-seq percentile check over the measured calls."""
    unmeasured = calls - len(samples)
    counts = {"samples": len(samples), "unmeasured": unmeasured}
    if calls == 0:
        return []
    if not samples:
        return [found(None, "duration_unresolved", counts)]
    violations = []
    value = nearest_rank(samples, rule["percentile"])
    if over(value, rule["max_ms"]):
        violations.append(found(None, "exceeded", {"percentile": rule["percentile"], "value": value,
                                                   "max_ms": rule["max_ms"], **counts}))
    if unmeasured and rule.get("on_missing", "fail") == "fail":
        violations.append(found(None, "duration_unresolved", counts))
    return violations


# result_size

def canonical(value: Any) -> str:
    """RFC 8785 for the generated values: sorted keys, no whitespace, integral floats as integers."""
    return json.dumps(integral(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def size(value: Any) -> int:
    """§3.6, point 7: the UTF-8 length of the canonical JSON."""
    return len(canonical(value).encode("utf-8"))


def result_size(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Found]]:
    """(checked, violations) of a result_size rule."""
    tool, skip = rule.get("tool", "*"), rule.get("on_missing", "fail") == "skip"
    _, call_of = pair(events)
    checked, violations = 0, []
    for i, event in enumerate(events):
        if event["type"] != "tool.result":
            continue
        own = events[call_of[i]].get("tool") if i in call_of else event.get("tool")
        if not glob(tool, own):
            continue
        checked += 1
        if "result" not in event:
            if not skip:
                violations.append(found(i, "result_missing", with_call_id(event, tool=own), "/result"))
        elif size(event["result"]) > rule["max_bytes"]:
            evidence = with_call_id(event, tool=own, bytes=size(event["result"]), max_bytes=rule["max_bytes"])
            violations.append(found(i, "exceeded", evidence, "/result"))
    return checked, violations


# run_duration

def run_duration(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Found]]:
    """(1, violations) of a run_duration rule."""
    max_ms = rule["max_ms"]
    terminal = max((i for i, e in enumerate(events) if e["type"] in TERMINALS), default=None)
    if terminal is None:
        return 1, [found(None, "duration_unresolved", {"max_ms": max_ms})]
    start = next((i for i, e in enumerate(events) if e["type"] == "run.start"), 0)
    seqs = {"start_seq": events[start]["seq"], "end_seq": events[terminal]["seq"], "max_ms": max_ms}
    if "duration_ms" in events[terminal]:
        duration, source = events[terminal]["duration_ms"], "duration_ms"
    else:
        duration, source = elapsed_ms(events[start].get("time"), events[terminal].get("time")), "time"
    if duration is None:
        return 1, [found(terminal, "duration_unresolved", seqs)]
    if over(duration, max_ms):
        return 1, [found(terminal, "exceeded", {**seqs, "duration_ms": duration, "source": source})]
    return 1, []


MODELS = {"latency_budget": latency, "result_size": result_size, "run_duration": run_duration}


def liveness(rule: dict[str, Any]) -> bool:
    """§3.6: latency_budget and result_size are safety, the percentile variant and run_duration liveness."""
    return rule["kind"] == "run_duration" or "percentile" in rule


def reference(rule: dict[str, Any], events: list[dict[str, Any]],
              partial: bool = False) -> tuple[int, list[tuple[Any, ...]]]:
    """(checked, [(seq or None, code, status, evidence, pointer)] in report order, point 5); with
    `partial`, a liveness rule's violations are `inconclusive` (§0, point 82)."""
    checked, violations = MODELS[rule["kind"]](rule, events)
    violations.sort(key=lambda v: (v.position is None, v.position or 0, CODE_ORDER.index(v.reason)))
    cut = partial and liveness(rule)
    return checked, [(None if v.position is None else events[v.position]["seq"], f"{rule['kind']}.{v.reason}",
                      "inconclusive" if cut else v.status, v.evidence, v.pointer) for v in violations]


# -- strategies -----------------------------------------------------------------------------------

A = ABSENT
TIMES = [A, A, A, A,
         "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z", "2026-01-01T10:00Z", "2026-01-01T10:00:00.1Z",
         "2026-01-01T10:00:00.0995Z", "2026-01-01T10:00:00.1000009Z", "2026-01-01T10:00:00.0000019Z",
         "2026-01-01T10:00:01Z", "2026-01-01T10:02:00Z", "2026-01-01T09:59:59.9Z", "2026-01-01T10:00:30Z",
         "2026-01-01T11:00:00+01:00", "2026-01-01T05:00:00.5-0500", "2026-01-02T00:00:00+14:00",
         "2026-01-01T10:00:00-23:59", "2025-12-31T23:59:59.999Z", "2024-02-29T10:00:00Z",
         "2026-01-01T10:00:00+24:00", "2026-01-01T10:00:00-2430", "2026-01-01T15:30:00+05:75"]
DURATIONS = [A, A, A, A, A, 0, 1, 99.5, 100, 100.5, 2000, 3500]
RUN_DURATIONS = [A, A, A, 0, 1000, 60000, 120000.5]
VALUES = [A, A, A, None, 0, 7, -3, 1.5, 100.0, True, "", "abc", 'say "hi"', "é", "line\nbreak", [], [1, 2],
          {"hits": ["a", "b"]}, {"b": 1, "a": [True, None]}, {"nested": {"k": [1, {"z": "y"}]}},
          {"Z": 1, "a": 2, "_": 3}, {"hits": ["a", "b", "c", "d", "e", "f", "g", "h"], "total": 8}]
IDS = ["c1", "c1", "c2", "c2", "c3", A]

CALL = {"type": ["tool.call"], "tool": ["search", "search", "fetch", "sea", A], "time": TIMES,
        "duration_ms": [A, A, A, A, 7], "args": [A, {"q": "x"}]}
calls = picked(**CALL, call_id=IDS)
results = picked(type=["tool.result"], call_id=IDS, tool=[A, A, A, "search", "fetch"], ok=[A, True, False],
                 duration_ms=DURATIONS, time=TIMES, result=VALUES)
starts = picked(type=["run.start"], time=TIMES)
terminals = picked(type=list(TERMINALS), time=TIMES, duration_ms=RUN_DURATIONS,
                   status=[A, A, "awaiting_approval"], output=[A, {"x": 1}])
others = picked(type=["agent.message", "telemetry.tick"], time=TIMES)
exchanges = st.tuples(picked(**CALL, call_id=["c1", "c2", "c3"]), results).map(
    lambda pair: [pair[0], {**pair[1], "call_id": pair[0]["call_id"]}])
KINDS = [kind.map(lambda event: [event]) for kind in [calls] * 3 + [results] * 3 + [starts, terminals, others]]
KINDS += [exchanges] * 5


ZONES = [0, 0, 60, -300, 840, -1439]          # offsets in minutes
STEPS_US = [0, 500, 99_500, 100_000, 100_500, 1_000_000, 2_000_001, 30_000_000, 60_000_000, 120_000_000]
BASE_US = calendar.timegm((2026, 1, 1, 10, 0, 0)) * 1_000_000


def stamp(instant: int, zone: int, extra: str) -> str:
    """A v1 time for `instant` (µs since the epoch) written in `zone`, with `extra` digits after the
    microseconds (which the spec's truncation drops)."""
    local = instant + zone * 60_000_000
    seconds, micros = divmod(local, 1_000_000)
    year, month, day, hour, minute, second = time.gmtime(seconds)[:6]
    fraction = f".{micros:06d}{extra}" if micros or extra else ""
    sign, offset = ("-" if zone < 0 else "+"), abs(zone)
    suffix = "Z" if zone == 0 else f"{sign}{offset // 60:02d}:{offset % 60:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{fraction}{suffix}"


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """≤ 12 events with increasing seqs that may skip (so seq and position differ); results mostly
    answer an earlier call's id (often right away); half the traces run on a clock that only moves
    forward."""
    size = draw(st.sampled_from([*range(13), *range(6, 13), *range(9, 13)]))
    events = [event for _ in range(size) for event in draw(st.sampled_from(KINDS).flatmap(lambda kind: kind))]
    events = events[:size]
    if size and draw(st.integers(0, 2)):
        events[-1] = draw(terminals)
    ids: list[str] = []
    for event in events:
        if event["type"] == "tool.result" and event.get("call_id") not in ids and ids and draw(st.integers(0, 3)):
            event["call_id"] = draw(st.sampled_from(ids))
        elif event["type"] == "tool.call" and "call_id" in event:
            ids.append(event["call_id"])
    if draw(st.booleans()):
        clock = BASE_US
        for event in events:
            clock += draw(st.sampled_from(STEPS_US))
            if "time" in event and draw(st.integers(0, 5)):
                event["time"] = stamp(clock, draw(st.sampled_from(ZONES)), draw(st.sampled_from(["", "", "9", "999"])))
    seq = draw(st.integers(0, 2))
    numbered = []
    for event in events:
        numbered.append({"seq": seq, **event})
        seq += draw(st.integers(1, 3))
    return numbered


TOOLS = [A, A, "*", "search", "search", "se*", "se*", "s?a", "fetch", "zzz"]
MAX_MS = [0.5, 1, 99.5, 100, 1000, 2000, 60000]
latency_rules = picked(id=["r"], kind=["latency_budget"], tool=TOOLS, max_ms=MAX_MS,
                       percentile=[A, A, A, A, A, A, A, A, A, A, A, A, 0.5, 1, 12.5, 25, 33.3, 50, 66.7, 90, 99.9, 100],
                       on_missing=[A, "fail", "skip"], severity=[A, A, "warning"])
size_rules = picked(id=["r"], kind=["result_size"], tool=TOOLS, max_bytes=[0, 1, 3, 4, 5, 7, 18, 30, 64],
                    on_missing=[A, "fail", "skip"], severity=[A, A, "warning"])
duration_rules = picked(id=["r"], kind=["run_duration"], max_ms=[1, 1000, 30000, 60000, 120000, 86_400_000],
                        severity=[A, A, "warning"])
rules = st.sampled_from([latency_rules] * 5 + [size_rules] * 3 + [duration_rules] * 2).flatmap(lambda kind: kind)


def report_of(rule: dict[str, Any], events: list[dict[str, Any]], partial: bool) -> dict[str, Any]:
    """The whole report of `rule` alone in a version-2 contract (the public API, as plain dicts)."""
    contract = {"version": 2, "name": "model", "rules": [rule]}
    return msgspec.to_builtins(check_trace(contract, events, partial=partial))  # type: ignore[no-any-return]


def same_counts(report: dict[str, Any], rule: dict[str, Any], expected: list[tuple[Any, ...]]) -> None:
    """Point 6 (amended by point 82): every violation but an inconclusive one counts under the rule's
    severity, and the report passes iff no error counts."""
    counted = sum(e[2] != "inconclusive" for e in expected)
    warning = rule.get("severity") == "warning"
    assert (report["error_count"], report["warning_count"]) == ((0, counted) if warning else (counted, 0))
    assert report["passed"] is (report["error_count"] == 0)
    assert report["results"][0]["passed"] is (counted == 0)


def agrees(rule: dict[str, Any], events: list[dict[str, Any]], partial: bool = False) -> None:
    """The public API gives the model's violations, pointers, counts, `checked` and `vacuous`."""
    report = report_of(rule, events, partial)
    result = report["results"][0]
    checked, expected = reference(rule, events, partial)
    if partial:
        actual = [(v.get("event_seq"), v["code"], v["status"], v["evidence"]) for v in result["violations"]]
        assert actual == [e[:4] for e in expected]
    else:
        same_violations(result, [e[:4] for e in expected])   # seq, code, status, evidence, point 5's order
    same_counts(report, rule, expected)
    assert [v.get("pointer") for v in result["violations"]] == [e[4] for e in expected]
    assert result["checked"] == checked
    per_event = rule["kind"] != "run_duration"
    assert result.get("vacuous", False) is (per_event and checked == 0)
    located_at_their_events(result, events)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules, events=traces(), partial=st.sampled_from([False, False, False, True]))
def test_the_public_api_agrees_with_a_reference_model(rule: dict[str, Any], events: list[dict[str, Any]],
                                                      partial: bool) -> None:
    agrees(rule, events, partial)


# -- the model itself, on the spec's own example ----------------------------------------------------

EXAMPLE_RULES = [{"id": "fast", "kind": "latency_budget", "tool": "search", "max_ms": 2000},
                 {"id": "small", "kind": "result_size", "tool": "search", "max_bytes": 64},
                 {"id": "quick", "kind": "run_duration", "max_ms": 60000}]
EXAMPLE_TRACE = [
    {"seq": 1, "type": "run.start", "time": "2026-01-01T10:00:00Z"},
    {"seq": 2, "type": "tool.call", "tool": "search", "call_id": "s1", "args": {"q": "x"}},
    {"seq": 3, "type": "tool.result", "call_id": "s1", "ok": True, "duration_ms": 3500,
     "result": {"hits": ["a", "b"]}},
    {"seq": 4, "type": "run.completed", "time": "2026-01-01T10:02:00Z"}]


def test_the_model_reproduces_the_spec_example() -> None:
    """§3.6: FAIL → fast at seq 3 (3500 > 2000), quick at seq 4 (120000 > 60000), small passes (18
    bytes); PASS with a duration of 120 and completion at 10:00:30."""
    fast, small, quick = EXAMPLE_RULES
    assert size({"hits": ["a", "b"]}) == 18
    assert [v[:3] for v in reference(fast, EXAMPLE_TRACE)[1]] == [(3, "latency_budget.exceeded", "fail")]
    assert reference(fast, EXAMPLE_TRACE)[1][0][3]["duration_ms"] == 3500
    assert reference(small, EXAMPLE_TRACE) == (1, [])
    assert [v[:3] for v in reference(quick, EXAMPLE_TRACE)[1]] == [(4, "run_duration.exceeded", "fail")]
    assert reference(quick, EXAMPLE_TRACE)[1][0][3]["duration_ms"] == 120000
    passing = [*EXAMPLE_TRACE[:2], {**EXAMPLE_TRACE[2], "duration_ms": 120},
               {**EXAMPLE_TRACE[3], "time": "2026-01-01T10:00:30Z"}]
    for rule in EXAMPLE_RULES:
        assert reference(rule, passing) == (1, [])
        agrees(rule, EXAMPLE_TRACE)
        agrees(rule, passing)


def test_the_model_keeps_safety_parts_of_a_cut_trace() -> None:
    """§0 and §3.6: under `partial`, `fast` (safety) still fails, `quick` (liveness) is inconclusive."""
    fast, _, quick = EXAMPLE_RULES
    assert [v[2] for v in reference(fast, EXAMPLE_TRACE, partial=True)[1]] == ["fail"]
    assert [v[2] for v in reference(quick, EXAMPLE_TRACE, partial=True)[1]] == ["inconclusive"]
    agrees(fast, EXAMPLE_TRACE, partial=True)
    agrees(quick, EXAMPLE_TRACE, partial=True)


def test_the_model_takes_the_nearest_rank_one_based() -> None:
    """Point 22: p = 100 is the largest sample (not out of range), a small p the smallest, p = 50 of
    four samples the second."""
    samples = [40.0, 10.0, 30.0, 20.0]
    assert nearest_rank(samples, 100) == 40
    assert nearest_rank(samples, 0.5) == 10
    assert nearest_rank(samples, 50) == 20
    assert nearest_rank(samples, 50.1) == 30
