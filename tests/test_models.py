"""Model-based property tests: every rule kind against a naive reference model written from the spec.

The engine evaluates all rules in one streaming pass with small per-rule state. The models below
are the opposite: each one restates section 4 of the v1 semantics spec literally (rescanning
prefixes, looping stop by stop) over a plain list of event dicts. For random rules of every kind and random traces the
engine's `RuleResult` (checked, passed, violations with event_seq, event_index and evidence) must
equal the model's. Then two more properties: appending events a rule provably ignores never changes
that rule's result, and hostile events/contracts only ever raise a documented `InputError`.
"""
from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from functools import cache
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import InputError, check_trace, load_contract

from strategies import EVIDENCE, VERDICTS, drop_none, evidence_lists, optional, require_event_fields
from support import contract, examples

# --- the spec's small helpers, written out naively -----------------------------------------------

# JS String.prototype.trim: WhiteSpace + LineTerminator (includes U+FEFF; not \x1c-\x1f).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def utf16_units(text: str) -> str:
    """The string as JS sees it: one Python char per UTF-16 code unit (astral chars become pairs)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(unit) for unit in struct.unpack(f"<{len(data) // 2}H", data))


@cache
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    for char in utf16_units(pattern):
        if char == "*":
            out.append("[^\n\r\u2028\u2029]*")
        elif char == "?":
            out.append("[^\n\r\u2028\u2029]")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out))


def glob(pattern: str, value: Any) -> bool:
    """§2.7: anchored, `*`/`?` only, no newlines, UTF-16 units; never matches a missing value."""
    if not isinstance(value, str):
        return False
    return _glob_regex(pattern).fullmatch(utf16_units(value)) is not None


def etype(event: dict[str, Any]) -> str:
    """§3.1: an event's `type` is trimmed."""
    return js_trim(event["type"])


DEFAULT_EVIDENCE = ["externally_observed", "configured_verifier"]
DEFAULT_ALLOWED_AFTER = ["run.completed", "run.failed", "telemetry.*"]
MATCHER_KEYS = ["type", "tool", "ok", "outcome_id", "verdict", "claims_completion"]


def norm_matcher(matcher: dict[str, Any]) -> dict[str, Any]:
    """§2.6: schema key order; `tool`/`outcome_id` globs trimmed, `type` is not (§2.4)."""
    out = {}
    for key in MATCHER_KEYS:
        if key in matcher:
            value = matcher[key]
            out[key] = js_trim(value) if key in ("tool", "outcome_id") else value
    return out


def matches(matcher: dict[str, Any], event: dict[str, Any]) -> bool:
    """§2.4: AND over present keys; globs never match absent fields; strict equality otherwise."""
    for key, want in norm_matcher(matcher).items():
        if key == "type":
            if not glob(want, etype(event)):
                return False
        elif key in ("tool", "outcome_id"):
            if not glob(want, event.get(key)):
                return False
        else:
            if key not in event or type(event[key]) is not type(want) or event[key] != want:
                return False
    return True


Violation = tuple[Any, Any, Any]   # (event_seq | None, event_index | None, evidence | None)


def at(events: list[dict[str, Any]], index: int, evidence: dict[str, Any]) -> Violation:
    return (events[index]["seq"], index, evidence)


def is_call(event: dict[str, Any]) -> bool:
    return etype(event) == "tool.call"


# --- reference models, one per rule kind (spec §4) -----------------------------------------------

def model_deny_tool(rule, events):
    pattern = js_trim(rule["tool"])
    checked, out = 0, []
    for i, e in enumerate(events):
        if is_call(e) and glob(pattern, e.get("tool")):
            checked += 1
            out.append(at(events, i, {"tool": e["tool"]}))
    return checked, out


def model_allow_tools(rule, events):
    patterns = [js_trim(p) for p in rule["tools"]]
    checked, out = 0, []
    for i, e in enumerate(events):
        if is_call(e):
            checked += 1
            if not any(glob(p, e.get("tool")) for p in patterns):
                evidence = {"tool": e["tool"]} if "tool" in e else {}
                evidence["allowed"] = patterns
                out.append(at(events, i, evidence))
    return checked, out


def model_require_approval(rule, events):
    pattern = js_trim(rule["tool"])
    scope = js_trim(rule["scope"]) if "scope" in rule else None
    window = rule.get("within_events")
    checked, out = 0, []
    for i, call in enumerate(events):
        if not (is_call(call) and glob(pattern, call.get("tool"))):
            continue
        checked += 1
        low = 0 if window is None else max(0, i - window)
        found = False
        for j in range(i - 1, low - 1, -1):       # backwards from just before the call
            grant = events[j]
            if etype(grant) != "approval.granted" or grant.get("approved") is False:
                continue
            if "approval_id" in call and grant.get("approval_id") != call["approval_id"]:
                continue
            if scope is not None and not glob(scope, grant.get("approval_scope")):
                continue
            found = True
            break
        if not found:
            evidence = {"tool": call["tool"]}
            if "approval_id" in call:
                evidence["approval_id"] = call["approval_id"]
            if scope is not None:
                evidence["required_scope"] = scope
            if window is not None:
                evidence["within_events"] = window
            out.append(at(events, i, evidence))
    return checked, out


def model_stop_is_final(rule, events):
    stop_type = js_trim(rule.get("stop_type", "control.stop"))
    allowed = [js_trim(p) for p in rule["allowed_after"]] if "allowed_after" in rule else DEFAULT_ALLOWED_AFTER
    checked, out = 0, []
    for i, stop in enumerate(events):                # stop by stop ...
        if not glob(stop_type, etype(stop)):
            continue
        checked += 1
        for j in range(i + 1, len(events)):          # ... over every later event
            if not any(glob(p, etype(events[j])) for p in allowed):
                out.append(at(events, j, {"stop_seq": stop["seq"], "allowed_after": allowed}))
    return checked, out


def qualifying_outcome_before(events, index, classes, outcome_id=None) -> bool:
    for j in range(index):
        e = events[j]
        if etype(e) != "outcome.observed" or e.get("verdict") != "satisfied":
            continue
        if outcome_id is not None and not glob(outcome_id, e.get("outcome_id")):
            continue
        if e.get("evidence_class") in classes:
            return True
    return False


def model_completion_requires_outcome(rule, events):
    kinds = [js_trim(p) for p in rule.get("completion_types", ["run.completed"])]
    outcome_id = js_trim(rule["outcome_id"]) if "outcome_id" in rule else None
    classes = list(rule.get("evidence_classes", DEFAULT_EVIDENCE))
    checked, out = 0, []
    for i, e in enumerate(events):
        if e.get("claims_completion") is True or any(glob(p, etype(e)) for p in kinds):
            checked += 1
            if not qualifying_outcome_before(events, i, classes, outcome_id):
                evidence = {} if outcome_id is None else {"outcome_id": outcome_id}
                evidence["evidence_classes"] = classes
                out.append(at(events, i, evidence))
    return checked, out


def model_confidence_requires_outcome(rule, events):
    threshold = rule["threshold"]
    classes = list(rule.get("evidence_classes", DEFAULT_EVIDENCE))
    checked, out = 0, []
    for i, e in enumerate(events):
        confidence = e.get("confidence")
        if e.get("claims_completion") is True and isinstance(confidence, (int, float)) \
                and not isinstance(confidence, bool) and confidence >= threshold:
            checked += 1
            if not qualifying_outcome_before(events, i, classes):
                out.append(at(events, i, {"confidence": confidence, "threshold": threshold,
                                          "evidence_classes": classes}))
    return checked, out


def model_retry_limit(rule, events):
    pattern = js_trim(rule.get("tool", "*"))
    limit = rule["max_attempts"]
    by_tool = rule.get("group_by", "call_signature") == "tool"
    groups: dict[str, list[int]] = {}
    checked = 0
    for i, e in enumerate(events):
        if is_call(e) and glob(pattern, e.get("tool")):
            checked += 1
            key = e["tool"] if by_tool else e.get("call_signature", e["tool"])
            groups.setdefault(key, []).append(i)
    out = []
    for key, members in groups.items():          # insertion order = order of first appearance
        if len(members) > limit:
            out.append(at(events, members[limit], {"group": key, "attempts": len(members),
                                                   "max_attempts": limit}))
    return checked, out


def model_event_budget(rule, events):
    counts = {
        "events": len(events),
        "tool_calls": sum(1 for e in events if is_call(e)),
        "tool_failures": sum(1 for e in events if etype(e) == "tool.result" and e.get("ok") is False),
    }
    out = []
    for metric in ("events", "tool_calls", "tool_failures"):
        bound = rule.get(f"max_{metric}")
        if bound is not None and counts[metric] > bound:
            out.append((None, None, {"actual": counts[metric], "maximum": bound, "metric": metric}))
    return len(events), out


def model_require_order(rule, events):
    before, after = norm_matcher(rule["before"]), norm_matcher(rule["after"])
    checked, out = 0, []
    for i, e in enumerate(events):
        if matches(after, e):
            checked += 1
            if not any(matches(before, events[j]) for j in range(i)):
                out.append(at(events, i, {"before": before, "after": after}))
    return checked, out


def model_require_event(rule, events):
    match = norm_matcher(rule["match"])
    found = [i for i, e in enumerate(events) if matches(match, e)]
    low, high = rule.get("min", 1), rule.get("max")
    out = []
    if len(found) < low or (high is not None and len(found) > high):
        evidence = {"match": match, "found": len(found), "min": low, "max": high}
        out.append(at(events, found[0], evidence) if found else (None, None, evidence))
    return len(found), out


def model_deny_event(rule, events):
    match = norm_matcher(rule["match"])
    out = [at(events, i, {"match": match}) for i, e in enumerate(events) if matches(match, e)]
    return len(out), out


def model_tool_result_required(rule, events):
    pattern = js_trim(rule.get("tool", "*"))
    last_result: dict[str, int] = {}
    for i, e in enumerate(events):
        if etype(e) == "tool.result" and "call_id" in e:
            last_result[e["call_id"]] = i
    checked, out = 0, []
    for i, e in enumerate(events):
        if is_call(e) and glob(pattern, e.get("tool")):
            checked += 1
            call_id = e.get("call_id")
            if call_id is None or call_id not in last_result or last_result[call_id] < i:
                evidence = {"tool": e["tool"]}
                if call_id is not None:
                    evidence["call_id"] = call_id
                out.append(at(events, i, evidence))
    return checked, out


MODELS: dict[str, Callable[[dict[str, Any], list[dict[str, Any]]], tuple[int, list[Violation]]]] = {
    "deny_tool": model_deny_tool,
    "allow_tools": model_allow_tools,
    "require_approval": model_require_approval,
    "stop_is_final": model_stop_is_final,
    "completion_requires_outcome": model_completion_requires_outcome,
    "retry_limit": model_retry_limit,
    "event_budget": model_event_budget,
    "require_order": model_require_order,
    "require_event": model_require_event,
    "deny_event": model_deny_event,
    "tool_result_required": model_tool_result_required,
    "confidence_requires_outcome": model_confidence_requires_outcome,
}
KINDS = sorted(MODELS)

# Hypothesis imports libcst to write its failing-example patch, which warns about mypy_extensions;
# with warnings as errors that would turn every falsifying example into an INTERNALERROR.
pytestmark = [
    pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"),
    pytest.mark.slow,   # every test here takes long (see the README's Development)
]

# --- generators ----------------------------------------------------------------------------------

# "tool.call " is a valid type that trims to tool.call (§3.1); "my.custom" has no meaning.
TYPES = ["tool.call", "tool.result", "approval.granted", "outcome.observed", "run.completed", "control.stop",
         "run.failed", "telemetry.x", "agent.message", "my.custom", "tool.call "]
# A newline (never crossed by * or ?) and an astral char (two UTF-16 units for ?) among the tools.
TOOLS = ["a.x", "a.y", "b.x", "ab.x", "a\nx", "\U0001F600.x"]
TOOL_GLOBS = ["a.x", "a.*", "*.x", "*", "?.x", "??.x", "a?x", "b.?", " a.x ", "c.*", "*x", "a*", "a.x*"]
TYPE_GLOBS = ["tool.call", "tool.result", "approval.granted", "outcome.observed", "run.completed",
              "control.stop", "run.failed", "telemetry.*", "agent.message", "my.custom", "tool.*", "*",
              "run.*", "*.stop", "approval.?ranted", "*.*", " control.stop", "t*"]
# Matcher `type` is not trimmed, so " tool.call" can never match (event types are trimmed).
MATCHER_TYPE_GLOBS = [*TYPE_GLOBS, " tool.call", "tool.call "]
OUTCOMES = ["o1", "o2", "o10"]
OUTCOME_GLOBS = ["o1", "o2", "o*", "o?", " o1 ", "x"]
CONFIDENCES = [0, 0.3, 0.5, 0.9, 0.95, 1, 1.0]
THRESHOLDS = [0, 0.0, 0.3, 0.5, 0.9, 0.95, 1, 1.0]
SCOPES = ["s1", "s2", "s.1"]
SCOPE_GLOBS = ["s1", "s*", "s2", "s?1", "?", " s1"]


FIELD_POOLS: list[tuple[str, list[Any]]] = [
    ("tool", TOOLS),
    ("call_id", ["c1", "c2", "c3"]),
    ("call_signature", ["sig1", "sig2", "a.x"]),       # "a.x" collides with a tool name
    ("approval_id", ["p1", "p2"]),
    ("approval_scope", SCOPES),
    ("approved", [True, False]),
    ("ok", [True, False]),
    ("outcome_id", OUTCOMES),
    ("verdict", VERDICTS),
    ("evidence_class", EVIDENCE),
    ("claims_completion", [True, False]),
    ("confidence", CONFIDENCES),
    ("data", [{"k": [1, "v"]}]),
]


_DETAIL_BITS = 56
_SCRAMBLE = 0x9E3779B97F4A7D   # odd, so x -> x * _SCRAMBLE mod 2**56 is a bijection with 0 -> 0


def _scrambled(number: int) -> int:
    """Hypothesis draws small integers (and some bit patterns) more often than others; scrambling
    spreads them evenly over all field combinations, while 0 stays 0."""
    return number * _SCRAMBLE % (1 << _DETAIL_BITS)


def _event(number: int) -> tuple[dict[str, Any], int]:
    """An event body and the seq gap after it, decoded from one 56-bit integer: type, a bit mask
    of the optional fields present, each one's value, the gap 1..3. One choice per event keeps long
    traces cheap to generate; it shrinks towards 0, a bare `tool.call` followed by gap 1."""
    rest = _scrambled(number)
    rest, type_index = divmod(rest, len(TYPES))
    present, rest = rest & ((1 << len(FIELD_POOLS)) - 1), rest >> len(FIELD_POOLS)
    body: dict[str, Any] = {"type": TYPES[type_index]}
    for bit, (key, pool) in enumerate(FIELD_POOLS):
        rest, pick = divmod(rest, len(pool))
        if present >> bit & 1:
            body[key] = pool[pick]
    return body, 1 + rest % 3


EVENT_NUMBERS = st.integers(0, (1 << _DETAIL_BITS) - 1)
EVENT_BODIES = EVENT_NUMBERS.map(lambda number: _event(number)[0])


def number(bodies: list[dict[str, Any]], start: int, gaps: list[int]) -> list[dict[str, Any]]:
    out, seq = [], start
    for body, gap in zip(bodies, gaps, strict=True):
        out.append({"seq": seq, **body})
        seq += gap
    return out


@st.composite
def traces(draw, max_size: int = 60) -> list[dict[str, Any]]:
    """0..max_size events (length drawn first, so long traces are common); seq starts at 0..3 and
    grows by 1..3."""
    size = draw(st.integers(0, max_size))
    pairs = [_event(n) for n in draw(st.lists(EVENT_NUMBERS, min_size=size, max_size=size))]
    return number([body for body, _ in pairs], draw(st.integers(0, 3)), [gap for _, gap in pairs])


MATCHER_POOLS: list[tuple[str, list[Any]]] = [
    ("type", MATCHER_TYPE_GLOBS),
    ("tool", TOOL_GLOBS),
    ("ok", [True, False]),
    ("outcome_id", OUTCOME_GLOBS),
    ("verdict", VERDICTS),
    ("claims_completion", [True, False]),
]


_MATCHER_SIZES = [1, 1, 1, 2, 2, 3, 4, 6]   # few keys often, so matchers match often enough


def _matcher(size_index: int, details: int) -> dict[str, Any]:
    """A matcher from two numbers: how many keys (1..6), and a scrambled integer choosing which
    keys, their order and their values. Shrinks towards {"type": "tool.call"}."""
    rest = _scrambled(details)
    keys = list(range(len(MATCHER_POOLS)))
    chosen = []
    for _ in range(_MATCHER_SIZES[size_index]):
        rest, pick = divmod(rest, len(keys))
        chosen.append(keys.pop(pick))
    out = {}
    for index in chosen:
        key, pool = MATCHER_POOLS[index]
        rest, pick = divmod(rest, len(pool))
        out[key] = pool[pick]
    return out


MATCHERS = st.builds(_matcher, st.integers(0, len(_MATCHER_SIZES) - 1), st.integers(0, (1 << _DETAIL_BITS) - 1))

KIND_FIELDS: dict[str, st.SearchStrategy] = {
    "deny_tool": st.fixed_dictionaries({"tool": st.sampled_from(TOOL_GLOBS)}),
    "allow_tools": st.fixed_dictionaries({"tools": st.lists(st.sampled_from(TOOL_GLOBS), min_size=1, max_size=4)}),
    "require_approval": st.fixed_dictionaries({"tool": st.sampled_from(TOOL_GLOBS)}, optional={
        "scope": st.sampled_from(SCOPE_GLOBS),
        "within_events": st.sampled_from([1, 1, 2, 3, 5, 8, 100_000])}),
    "stop_is_final": st.fixed_dictionaries({}, optional={
        "stop_type": st.sampled_from(TYPE_GLOBS),
        "allowed_after": st.lists(st.sampled_from(TYPE_GLOBS), max_size=3)}),
    "completion_requires_outcome": st.fixed_dictionaries({}, optional={
        "completion_types": st.lists(st.sampled_from(TYPE_GLOBS), min_size=1, max_size=3),
        "outcome_id": st.sampled_from(OUTCOME_GLOBS),
        "evidence_classes": evidence_lists}),
    "retry_limit": st.fixed_dictionaries({"max_attempts": st.sampled_from([1, 1, 2, 3, 4, 10_000])}, optional={
        "tool": st.sampled_from(TOOL_GLOBS), "group_by": st.sampled_from(["tool", "call_signature"])}),
    "event_budget": st.fixed_dictionaries({}, optional={
        "max_events": st.integers(0, 60), "max_tool_calls": st.integers(0, 8),
        "max_tool_failures": st.integers(0, 4)}).filter(bool),
    "require_order": st.fixed_dictionaries({"before": MATCHERS, "after": MATCHERS}),
    "require_event": require_event_fields(MATCHERS),
    "deny_event": st.fixed_dictionaries({"match": MATCHERS}),
    "tool_result_required": st.fixed_dictionaries({}, optional={"tool": st.sampled_from(TOOL_GLOBS)}),
    "confidence_requires_outcome": st.fixed_dictionaries(
        {"threshold": st.sampled_from(THRESHOLDS)}, optional={"evidence_classes": evidence_lists}),
}


@st.composite
def rules_of(draw, kind: str) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": "r1", "kind": kind}
    rule.update(drop_none({
        "severity": draw(optional(st.sampled_from(["error", "warning"]))),
        "description": draw(optional(st.just("a rule"))),
    }))
    rule.update(draw(KIND_FIELDS[kind]))
    return rule


RULES = {kind: rules_of(kind) for kind in KINDS}   # built once: strategies are validated on first use
TRACES = traces()
SHORT_TRACES = traces(max_size=40)


def ordered(value: Any) -> Any:
    """Plain data with dict key order made significant (§7.2: keys in the orders given)."""
    if isinstance(value, dict):
        return ("dict", [(key, ordered(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return [ordered(item) for item in value]
    return value


def unset_to_none(value: Any) -> Any:
    return None if value is msgspec.UNSET else value


def engine_result(rule: dict[str, Any], events: list[dict[str, Any]]):
    return check_trace(contract(rule), events, max_violations=0).results[0]   # every violation kept


def engine_view(result) -> tuple[int, list[Violation]]:
    return result.checked, [(unset_to_none(v.event_seq), unset_to_none(v.event_index), unset_to_none(v.evidence))
                            for v in result.violations]


# --- 1. the engine equals the reference model, kind by kind -------------------------------------

MODEL_SETTINGS = settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kind", KINDS)
@MODEL_SETTINGS
@given(data=st.data())
def test_engine_matches_reference_model(kind, data):
    rule = data.draw(RULES[kind], label="rule")
    events = data.draw(TRACES, label="events")
    result = engine_result(rule, events)
    checked, violations = MODELS[kind](rule, events)

    assert result.rule_id == "r1" and result.rule_kind == kind
    assert result.severity == rule.get("severity", "error")
    assert all(v.rule_id == "r1" and v.rule_kind == kind and v.severity == result.severity
               for v in result.violations)
    got_checked, got = engine_view(result)
    assert got_checked == checked
    assert got == violations                       # values (1 == 1.0 as JSON numbers)
    assert ordered(got) == ordered(violations)     # and key order inside evidence
    assert result.passed is (not violations)


# --- 2. appending events a rule does not look at never changes that rule's result ---------------

def _is_matching_call(rule: dict[str, Any], event: dict[str, Any]) -> bool:
    return is_call(event) and glob(js_trim(rule.get("tool", "*")), event.get("tool"))


def _is_completion(rule: dict[str, Any], event: dict[str, Any]) -> bool:
    kinds = [js_trim(p) for p in rule.get("completion_types", ["run.completed"])]
    return event.get("claims_completion") is True or any(glob(p, etype(event)) for p in kinds)


def _ignored_by(rule: dict[str, Any], trace: list[dict[str, Any]]) -> Callable[[dict[str, Any]], bool]:
    """Events that, appended after `trace`, `rule` provably does not look at (from spec §4).

    Appended at the end, an event can only matter to a rule as something checked itself (earlier
    events never look forward) or, for tool_result_required, as a later result of an earlier call,
    for stop_is_final as an event after an earlier stop."""
    kind = rule["kind"]
    if kind in ("deny_tool", "require_approval", "retry_limit"):
        return lambda e: not _is_matching_call(rule, e)
    if kind == "allow_tools":
        return lambda e: not is_call(e)
    if kind == "stop_is_final":
        stop_type = js_trim(rule.get("stop_type", "control.stop"))
        allowed = [js_trim(p) for p in rule["allowed_after"]] if "allowed_after" in rule else DEFAULT_ALLOWED_AFTER
        stopped = any(glob(stop_type, etype(e)) for e in trace)
        return lambda e: not glob(stop_type, etype(e)) and (
            not stopped or any(glob(p, etype(e)) for p in allowed))
    if kind == "completion_requires_outcome":
        return lambda e: not _is_completion(rule, e)
    if kind == "confidence_requires_outcome":
        return lambda e: not (e.get("claims_completion") is True and "confidence" in e
                              and e["confidence"] >= rule["threshold"])
    if kind == "event_budget":
        if "max_events" in rule:
            return lambda e: False
        return lambda e: not is_call(e) and not (etype(e) == "tool.result" and e.get("ok") is False)
    if kind == "require_order":
        return lambda e: not matches(rule["after"], e)
    if kind in ("require_event", "deny_event"):
        return lambda e: not matches(rule["match"], e)
    if kind == "tool_result_required":
        call_ids = {e["call_id"] for e in trace if is_call(e) and "call_id" in e}
        return lambda e: not _is_matching_call(rule, e) and not (
            etype(e) == "tool.result" and e.get("call_id") in call_ids)
    raise AssertionError(kind)


CANDIDATES = st.lists(EVENT_BODIES, max_size=20)
APPEND_SETTINGS = settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kind", KINDS)
@APPEND_SETTINGS
@given(data=st.data())
def test_appending_ignored_events_never_changes_the_result(kind, data):
    rule = data.draw(RULES[kind], label="rule")
    events = data.draw(SHORT_TRACES, label="events")
    ignored = _ignored_by(rule, events)
    extra = [body for body in data.draw(CANDIDATES, label="candidates") if ignored(body)]
    start = events[-1]["seq"] + data.draw(st.integers(1, 3)) if events else 0
    gaps = data.draw(st.lists(st.integers(1, 3), min_size=len(extra), max_size=len(extra)), label="gaps")
    longer = events + number(extra, start, gaps)

    loaded = load_contract(contract(rule))
    before = check_trace(loaded, events).results[0]
    after = check_trace(loaded, longer).results[0]
    if kind == "event_budget":
        # checked is the number of events (§4.8), so it grows by exactly what was appended
        assert after.checked == before.checked + len(extra)
        assert engine_view(after)[1] == engine_view(before)[1]
        assert after.passed is before.passed
    elif kind == "require_approval":
        # the verdict never looks forward; the prose of a call no grant preceded names a later one
        assert _without_later_grant(after) == _without_later_grant(before)
    else:
        assert msgspec.to_builtins(after) == msgspec.to_builtins(before)


def _without_later_grant(result: Any) -> dict[str, Any]:
    data = msgspec.to_builtins(result)
    for violation in data["violations"]:
        violation["message"] = re.sub(r" \(one that would have counted came later, at seq \d+\)", "",
                                      violation["message"])
    return data


# --- 3. the checker never raises anything but our documented input errors -----------------------

EVENT_FIELDS = ["seq", "type", "time", "run_id", "actor", "tool", "call_id", "call_signature", "risk",
                "approval_id", "approval_scope", "approved", "ok", "outcome_id", "verdict", "evidence_class",
                "claims_completion", "confidence", "data"]

odd_strings = st.one_of(
    st.text(max_size=7),
    st.text(alphabet=st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF), min_size=1, max_size=5),
    st.sampled_from(["", " ", "\t", "\ufeff", "\ud800", "a\udfff", "\x00", "\u2028", "tool.call", " tool.call ",
                     "x" * 201, "x" * 501, "y" * 2001, "2024-02-30T00:00Z", "2024-01-31T08:00Z", "2024-01-31 08:00Z",
                     "satisfied", "self_attestation", "NaN"]),
)
scalars = st.one_of(
    st.none(), st.booleans(), odd_strings,
    st.integers(-3, 3), st.sampled_from([10**30, -(10**30), 2**53 + 1, 2**64, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1.5, 3.0, -0.0, 1e300, 1e-320]),
)
hostile_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_strings | st.sampled_from(EVENT_FIELDS),
                                                                inner, max_size=3),
    max_leaves=8,
)


@st.composite
def hostile_events(draw) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(hostile_values)                  # not an object at all, usually
    event: dict[str, Any] = dict(draw(EVENT_BODIES))
    event["seq"] = draw(st.integers(0, 100))
    for _ in range(draw(st.integers(0, 3))):         # break some fields
        key = draw(st.sampled_from(EVENT_FIELDS) | odd_strings)
        if draw(st.booleans()):
            event[key] = draw(hostile_values)
        else:
            event.pop(key, None)
    return event


@st.composite
def hostile_traces(draw) -> list[Any]:
    items = draw(st.lists(hostile_events(), max_size=8))
    if items and draw(st.booleans()):   # often make seq non-decreasing, so later checks get to run
        seq = 0
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("seq"), int) and not isinstance(item["seq"], bool):
                item["seq"] = seq
                seq += draw(st.integers(0, 2))
    return items


VALID_CONTRACT = contract({"id": "deny", "kind": "deny_tool", "tool": "a.*"},
                          {"id": "final", "kind": "stop_is_final"},
                          {"id": "budget", "kind": "event_budget", "max_tool_failures": 1},
                          {"id": "done", "kind": "confidence_requires_outcome", "threshold": 0.5})

EVENTS_PATH = re.compile(r"events\[(\d+)\]")
HOSTILE_SETTINGS = settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _jsonl_bytes(items: list[Any]) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in items).encode("ascii")   # json.dumps escapes non-ASCII


@HOSTILE_SETTINGS
@given(items=hostile_traces())
def test_hostile_events_raise_only_input_errors_naming_the_event(items):
    """Bad events raise `InputError` (§7.5, D4: one line naming where): `events[i]` for a list,
    `<bytes>:<line>` for the same events as JSONL bytes. Nothing else may escape."""
    try:
        check_trace(VALID_CONTRACT, items)
    except InputError as error:
        message = str(error)
        named = EVENTS_PATH.search(message)
        assert named is not None and int(named.group(1)) < len(items), message
        assert message.strip() and "\n" not in message, message

    data = _jsonl_bytes(items)
    try:
        check_trace(VALID_CONTRACT, data)
    except InputError as error:
        message = str(error)
        named = re.match(r"<bytes>:(\d+): ", message)
        assert named is not None and 1 <= int(named.group(1)) <= max(1, len(items)), message
        assert message.strip() and "\n" not in message, message


CONTRACT_KEYS = ["version", "name", "description", "rules", "compare", "$schema", "id", "kind", "severity",
                 "tool", "tools", "scope", "within_events", "stop_type", "allowed_after", "completion_types",
                 "outcome_id", "evidence_classes", "max_attempts", "group_by", "max_events", "max_tool_calls",
                 "max_tool_failures", "before", "after", "match", "min", "max", "threshold", "type", "ok",
                 "verdict", "claims_completion", "fail_on_new_tools", "fail_on_new_violations",
                 "max_tool_call_increase_percent", "require_same_outcome_or_better"]


@st.composite
def hostile_contracts(draw) -> Any:
    if draw(st.integers(0, 19)) == 0:   # any object at all (load_contract takes a str as a path)
        return draw(st.dictionaries(odd_strings | st.sampled_from(CONTRACT_KEYS), hostile_values, max_size=4))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=0, max_size=3))
    document: dict[str, Any] = contract(*[{**draw(RULES[kind]), "id": f"r{i}"} for i, kind in enumerate(kinds)])
    if draw(st.booleans()):
        document["compare"] = {"max_tool_call_increase_percent": 10}

    def mutate(node: Any) -> Any:
        if isinstance(node, dict) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node)))
            node[key] = mutate(node[key])
        elif isinstance(node, list) and node and draw(st.booleans()):
            index = draw(st.integers(0, len(node) - 1))
            node[index] = mutate(node[index])
        else:
            action = draw(st.integers(0, 2))
            if action == 0 or not isinstance(node, dict):
                return draw(hostile_values)
            if action == 1:
                node[draw(st.sampled_from(CONTRACT_KEYS) | odd_strings)] = draw(hostile_values)
            elif node:
                node.pop(draw(st.sampled_from(sorted(node))))
        return node

    for _ in range(draw(st.integers(0, 3))):
        if document:                              # mutate inside the root object, never replace it
            key = draw(st.sampled_from(sorted(document)))
            document[key] = mutate(document[key])
        if draw(st.booleans()):
            document[draw(st.sampled_from(CONTRACT_KEYS) | odd_strings)] = draw(hostile_values)
    return document


@HOSTILE_SETTINGS
@given(document=hostile_contracts(), events=traces(max_size=10))
def test_hostile_contracts_raise_only_input_errors_with_a_json_path(document, events):
    """A contract that does not validate raises `InputError` naming a JSON path `$...` (D4), both
    from load_contract and from check_trace; one that validates can be used on valid traces."""
    try:
        load_contract(document)
    except InputError as error:
        assert str(error).strip()
        assert "$" in str(error), str(error)
        with pytest.raises(InputError):
            check_trace(document, events)
        return
    # a contract that loads can be used on any valid trace, in memory or as JSONL bytes
    report = check_trace(document, events)
    assert [r.rule_id for r in report.results] == [r["id"] for r in document["rules"]]
    from_bytes = check_trace(document, _jsonl_bytes(events))
    assert [engine_view(r) for r in from_bytes.results] == [engine_view(r) for r in report.results]


@HOSTILE_SETTINGS
@given(document=hostile_contracts(), items=hostile_traces())
def test_hostile_contracts_and_events_together(document, items):
    """Both inputs hostile at once, in memory and as JSONL bytes: only `InputError` may escape."""
    for trace in (items, _jsonl_bytes(items)):
        try:
            check_trace(document, trace)
        except InputError as error:
            assert str(error).strip()
