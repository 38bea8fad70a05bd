"""`precedence` against a reference model written from the spec text only (spec v2 §0, §2 matchers and
paths, §3.3 and §10 points 1-7, 9, 13, 15 and 19). A property test generates one-rule contracts (every
option §3.3 gives the kind: `before`/`after` v2 matchers with `type`, `tool`, `ok`, `verdict`,
`claims_completion`, `outcome_id`, `reason`, `status` and `args` match trees, `scope` each/first/all,
`correlate` as dot paths, JSON Pointers or `{before, after}` pairs, `within_events`, `severity`) and
traces of 0-12 events over three tools and a palette of 1-3 values per trace (calls with and without
args, tool or call_id, args that often hold the rule's correlate paths and sometimes lack them, reused
call_ids, results with ok true/false/absent, orphan results with their own tool and args, grants,
denials, messages, outcomes, run.failed), and compares the public API's verdict, violations (seq, code,
status, evidence, pointer, related_seqs), their order, `checked` and `vacuous` with the model.

What the model takes from the spec:
- a matcher's keys all must match (v1 §2.4): `type`, `tool`, `outcome_id`, `reason`, `status` are globs
  that never match a missing field, `ok`, `verdict`, `claims_completion` strict equality, `args` a
  match tree without references that an event without args never matches (§2, point 9); on a
  `tool.result` `tool`/`args` are its paired call's, `status`/`reason` always the event's own
  (§2 last paragraph, point 15);
- pairing is one-to-one in trace order: a result belongs to the nearest earlier unanswered call with
  its call_id; an orphan keeps its own tool and has no args (point 3);
- correlate values are read from the args (a result's are its call's) at dot paths or JSON Pointers
  (§2, point 13); a list item is a path for both sides or `{before, after}`; events are grouped by the
  tuple of values under JSON equality (§3.3, point 19);
- each checked after: the nearest earlier before of its group (never itself) → pass, or
  `out_of_window` when `i − j > within_events` (positions); else the first later before → `late` with
  `related_seqs` [it]; else `missing` (point 19);
- an after lacking a correlate path is `correlate_missing` (`status: unresolved`) whatever the scope; a
  before lacking one is ignored; `first` checks only the first keyed after per group; `all` adds
  `before_after_action` at every before after its group's first after (§3.3, points 6, 19);
- seq at the after, at the before for `before_after_action` (point 2); evidence `{before, after, scope,
  key?}` (§3.3); ascending event, ties in the order §3.3 lists the codes (point 5); `checked` =
  afters examined, `vacuous: true` when 0 (point 4); evidence strings are cut to 200 code points plus
  `…` (§0, point 7).

Where the spec is silent the model follows the implementation (listed in `AMBIGUOUS` below).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.models import ABSENT, glob, picked, read_path, same, same_violations
from tests.models import one_result as api

from support import examples

# Points where the spec is silent and the model follows the implementation:
AMBIGUOUS = (
    # §3.3 gives the evidence as {before, after, scope, key?}: `key` (the event's tuple as a list) is
    # there iff the rule has `correlate`; `scope` is "each" when the rule leaves it out
    "evidence key iff correlate, scope defaults to 'each'",
    # correlate_missing has no key; its evidence adds `missing`: the side's paths that were not found,
    # as written, in correlate order
    "correlate_missing evidence.missing",
    # correlate_missing carries a pointer: "/args" when the event has no args (for a result: its call
    # has none, or it is an orphan), else the JSON Pointer under /args of the first missing path, even
    # on a result, which has no args of its own
    "correlate_missing pointer",
    # related_seqs is given by the spec for `late` only; the product also sets it for out_of_window
    # (the nearest earlier before) and before_after_action (the group's first after); missing and
    # correlate_missing have none
    "related_seqs of out_of_window and before_after_action",
    # under `first`, `checked` counts the afters examined: the first keyed after of each group plus
    # every unkeyed after (its correlate_missing is reported whatever the scope)
    "checked under scope first",
    # point 5 orders ties at one event as "the spec lists that kind's codes": §3.3 names
    # before_after_action in its Semantics, before the Codes list, while point 2 lists it last; an event
    # that is both an after and a before gets its after's code first, before_after_action last
    "tie order: before_after_action after the after's code",
)

CODE_ORDER = ("missing", "late", "out_of_window", "correlate_missing", "before_after_action")
GLOB_KEYS = ("type", "tool", "outcome_id", "reason", "status")
EXACT_KEYS = ("ok", "verdict", "claims_completion")


# -- the reference model: matching ------------------------------------------------------------------


def pair(events: list[dict[str, Any]]) -> dict[int, int]:
    """Point 3: result position -> the position of its call (the nearest earlier unanswered one)."""
    waiting: dict[str, list[int]] = {}
    call_of: dict[int, int] = {}
    for i, event in enumerate(events):
        call_id = event.get("call_id")
        if not isinstance(call_id, str):
            continue
        if event["type"] == "tool.call":
            waiting.setdefault(call_id, []).append(i)
        elif event["type"] == "tool.result" and waiting.get(call_id):
            call_of[i] = waiting[call_id].pop()
    return call_of


def seen_as(events: list[dict[str, Any]], call_of: dict[int, int], i: int) -> tuple[Any, Any]:
    """(tool, args) that new kinds see on event i: a paired result's are its call's, an orphan
    result keeps its own tool and has no args (§0, point 3); other events show their own."""
    event = events[i]
    if event["type"] != "tool.result":
        return event.get("tool", ABSENT), event.get("args", ABSENT)
    if i in call_of:
        call = events[call_of[i]]
        return call.get("tool", ABSENT), call.get("args", ABSENT)
    return event.get("tool", ABSENT), ABSENT


def is_number(value: Any) -> bool:
    """§2: comparisons take finite numbers only, never booleans or numeric strings."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def operator_holds(op: str, operand: Any, actual: Any) -> bool:
    """One `$` operator of §2 (points 9, 10): only `$exists` accepts an absent value."""
    if op == "$exists":
        return (actual is not ABSENT) is operand
    if actual is ABSENT:
        return False
    if op == "$regex":
        return isinstance(actual, str) and re.search(operand, actual) is not None
    if op == "$in":
        return any(same(candidate, actual) for candidate in operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if not is_number(actual):
            return False
        return bool({"$gt": actual > operand, "$gte": actual >= operand,
                     "$lt": actual < operand, "$lte": actual <= operand}[op])
    if op == "$any_of":
        return any(tree_matches(branch, actual) for branch in operand)
    if op == "$contains":
        return isinstance(actual, list) and any(tree_matches(operand, element) for element in actual)
    if op == "$literal":
        return same(operand, actual)
    raise AssertionError(f"the strategies use no operator {op}")


def tree_matches(node: Any, actual: Any) -> bool:
    """§2 match tree: objects as subsets, arrays by position, scalars equal; an operator object
    ANDs its operators; an absent key is a mismatch unless `$exists: false` (point 9)."""
    if isinstance(node, dict) and node and all(key.startswith("$") for key in node):
        return all(operator_holds(op, operand, actual) for op, operand in node.items())
    if actual is ABSENT:
        return False
    if isinstance(node, dict):
        return isinstance(actual, dict) and all(tree_matches(v, actual.get(k, ABSENT)) for k, v in node.items())
    if isinstance(node, list):
        return (isinstance(actual, list) and len(actual) == len(node)
                and all(tree_matches(n, a) for n, a in zip(node, actual, strict=True)))
    return same(node, actual)


def matcher_matches(matcher: dict[str, Any], event: dict[str, Any], tool: Any, args: Any) -> bool:
    """A v2 matcher (v1 §2.4, §2, point 15): every key present must hold; `tool` and `args` are the
    ones new kinds see, the other keys read the event's own fields."""
    own = {**event, "tool": tool}
    for key, expected in matcher.items():
        if key == "args":
            if args is ABSENT or not tree_matches(expected, args):
                return False
        elif key in GLOB_KEYS:
            if not glob(expected, own.get(key, ABSENT)):
                return False
        elif key in EXACT_KEYS:
            if key not in own or not same(expected, own[key]):
                return False
        else:
            raise AssertionError(f"the strategies use no matcher key {key}")
    return True


# -- the reference model: correlation and verdicts --------------------------------------------------


@dataclass
class Side:
    """What one matcher side sees of the trace: positions that match it, and each one's key (a list
    of correlate values) or the paths it lacks."""

    positions: list[int]
    keys: dict[int, list[Any]]
    lacking: dict[int, list[str]]


def side_paths(rule: dict[str, Any], side: str) -> list[str]:
    """Point 19: each correlate item is a path for both sides or a `{before, after}` pair."""
    return [item if isinstance(item, str) else item[side] for item in rule.get("correlate", [])]


def read_side(rule: dict[str, Any], events: list[dict[str, Any]], side: str) -> Side:
    """The events matching `rule[side]` with their correlate keys, read from the args they show."""
    call_of = pair(events)
    paths = side_paths(rule, side)
    found = Side([], {}, {})
    for i, event in enumerate(events):
        tool, args = seen_as(events, call_of, i)
        if not matcher_matches(rule[side], event, tool, args):
            continue
        found.positions.append(i)
        values = [ABSENT if args is ABSENT else read_path(args, path) for path in paths]
        lacking = [path for path, value in zip(paths, values, strict=True) if value is ABSENT]
        if lacking:
            found.lacking[i] = lacking
        else:
            found.keys[i] = values
    return found


def pointer_of(path: str) -> str:
    """A dot path as a JSON Pointer (a Pointer stays as it is)."""
    if path.startswith("/"):
        return path
    return "".join("/" + segment.replace("~", "~0").replace("/", "~1") for segment in path.split("."))


@dataclass
class Finding:
    """One violation of the model, before it is put in report form."""

    position: int
    code: str
    key: list[Any] | None = None
    related: int | None = None
    lacking: list[str] | None = None
    pointer: str | None = None


def check_after(i: int, key: list[Any], befores: Side, window: int | None) -> Finding | None:
    """Point 19: the nearest earlier before of the group (never i itself), else a later one."""
    group = [j for j in befores.positions if j != i and j in befores.keys and same(befores.keys[j], key)]
    earlier = [j for j in group if j < i]
    if earlier:
        nearest = max(earlier)
        if window is not None and i - nearest > window:
            return Finding(i, "out_of_window", key, nearest)
        return None
    later = [j for j in group if j > i]
    if later:
        return Finding(i, "late", key, min(later))
    return Finding(i, "missing", key)


def unkeyed(i: int, lacking: list[str], args: Any) -> Finding:
    """§3.3: an after without a correlate value is unresolved (pointer: AMBIGUOUS)."""
    pointer = "/args" if args is ABSENT else "/args" + pointer_of(lacking[0])
    return Finding(i, "correlate_missing", lacking=lacking, pointer=pointer)


def first_afters(afters: Side) -> list[int]:
    """The first keyed after of each group, in trace order."""
    firsts: list[int] = []
    for i in afters.positions:
        if i in afters.keys and not any(same(afters.keys[f], afters.keys[i]) for f in firsts):
            firsts.append(i)
    return firsts


def late_befores(afters: Side, befores: Side) -> list[Finding]:
    """`scope: all`: every keyed before after its group's first after (§3.3)."""
    firsts = first_afters(afters)
    found = []
    for j in befores.positions:
        if j not in befores.keys:
            continue
        first = next((f for f in firsts if same(afters.keys[f], befores.keys[j])), None)
        if first is not None and j > first:
            found.append(Finding(j, "before_after_action", befores.keys[j], first))
    return found


def findings(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Finding]]:
    """(checked, the model's findings in report order) for one precedence rule."""
    scope = rule.get("scope", "each")
    befores, afters = read_side(rule, events, "before"), read_side(rule, events, "after")
    call_of = pair(events)
    firsts = first_afters(afters)
    checked, found = 0, []
    for i in afters.positions:
        if i in afters.lacking:
            checked += 1
            found.append(unkeyed(i, afters.lacking[i], seen_as(events, call_of, i)[1]))
            continue
        if scope == "first" and i not in firsts:
            continue
        checked += 1
        finding = check_after(i, afters.keys[i], befores, rule.get("within_events"))
        if finding is not None:
            found.append(finding)
    if scope == "all":
        found += late_befores(afters, befores)
    found.sort(key=lambda f: (f.position, CODE_ORDER.index(f.code)))
    return checked, found


def cut(value: Any) -> Any:
    """§0, point 7: evidence strings are cut to 200 code points plus `…` (values only, not keys)."""
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:200] + "…"
    if isinstance(value, list):
        return [cut(item) for item in value]
    if isinstance(value, dict):
        return {key: cut(item) for key, item in value.items()}
    return value


def reference(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[tuple[Any, ...]]]:
    """(checked, [(seq, code, status, evidence, pointer, related_seqs)] in report order)."""
    checked, found = findings(rule, events)
    base = {"before": rule["before"], "after": rule["after"], "scope": rule.get("scope", "each")}
    report = []
    for f in found:
        evidence = dict(base)
        if f.lacking is not None:
            evidence["missing"] = f.lacking
        elif "correlate" in rule:
            evidence["key"] = cut(f.key)
        status = "unresolved" if f.code == "correlate_missing" else "fail"
        related = None if f.related is None else [events[f.related]["seq"]]
        report.append((events[f.position]["seq"], f"precedence.{f.code}", status, evidence, f.pointer, related))
    return checked, report


# -- strategies -------------------------------------------------------------------------------------

A = ABSENT
LONG = "L" * 200
VALUES = ["A1", "A1", "A1", "A1", "B2", "B2", "B2", 1, 1.0, True, None, "1", 0, -0.0, LONG, LONG + "M", LONG + "N"]
TOOLS = ["refund", "get", "refund", "get", "refund", "get", "notify", A]
CALL_IDS = ["c1", "c1", "c2", "c2", "c3", A]


def put(args: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """`args` with `value` written at a dot path or JSON Pointer, creating objects on the way."""
    if path.startswith("/"):
        segments = [s.replace("~1", "/").replace("~0", "~") for s in path[1:].split("/")]
    else:
        segments = path.split(".")
    if len(segments) == 1:
        return {**args, segments[0]: value}
    inner = args.get(segments[0])
    rest = "/" + "/".join(s.replace("~", "~0").replace("/", "~1") for s in segments[1:])
    return {**args, segments[0]: put(inner if isinstance(inner, dict) else {}, rest, value)}


def keyed_args(palette: list[Any], paths: list[str]) -> st.SearchStrategy[Any]:
    """Args holding the rule's correlate paths (for either side), each with a value of the palette."""
    def build(values: list[Any]) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for path, value in zip(paths, values, strict=True):
            args = put(args, path, value)
        return args
    return st.lists(st.sampled_from(palette), min_size=len(paths), max_size=len(paths)).map(build)


def args_objects(palette: list[Any], paths: list[str]) -> st.SearchStrategy[Any]:
    """Args with or without the correlate keys (`order`, `id`, `meta.id`, `items.0`, or the rule's own
    paths), or none, over the trace's few values."""
    keyed = [keyed_args(palette, paths)] * 2 if paths else []
    return st.one_of(generic_args(palette), *keyed)


def generic_args(palette: list[Any]) -> st.SearchStrategy[Any]:
    """A few fixed shapes of args over the palette, or none; nested objects with their keys in either
    order, so grouping must not depend on it."""
    return st.tuples(st.sampled_from(palette), st.sampled_from(palette)).flatmap(lambda v: st.sampled_from([
        A, {}, {"order": v[0]}, {"id": v[0]}, {"order": v[0], "id": v[1]}, {"order": v[0], "id": v[0]},
        {"order": v[0], "id": v[0]}, {"order": v[0], "id": v[0]}, {"meta": {"id": v[0]}, "order": v[1]},
        {"items": [v[0], v[1]], "order": v[0]}, {"order": [v[0]], "id": v[0]},
        {"order": {"id": v[0], "n": v[1]}}, {"order": {"n": v[1], "id": v[0]}}, {"": v[0], "a/b": v[1]},
        {"order": {"0": v[0]}, "id": v[0]}]))


def with_args(event: dict[str, Any], palette: list[Any], paths: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """`event`, with args drawn from the palette or none."""
    return args_objects(palette, paths).map(lambda args: event if args is A else {**event, "args": args})


def event_kinds(palette: list[Any], paths: list[str]) -> list[st.SearchStrategy[dict[str, Any]]]:
    """Calls, results (paired or orphan, some with their own tool and args) and other events, with
    weights that make matches and group collisions frequent."""
    calls = picked(type=["tool.call"], tool=TOOLS, call_id=CALL_IDS).flatmap(lambda e: with_args(e, palette, paths))
    results = picked(type=["tool.result"], call_id=["c1", "c1", "c2", "c2", "c3", A], ok=[True, True, False, A],
                     tool=[A, A, A, "get", "refund"], args=[A, A, A, {"order": "A1", "id": "A1"}])
    others = st.one_of(
        picked(type=["approval.granted"], tool=TOOLS).flatmap(lambda e: with_args(e, palette, paths)),
        picked(type=["tool.denied"], tool=TOOLS, reason=[A, "user cancel", "guardrail"]).flatmap(
            lambda e: with_args(e, palette, paths)),
        picked(type=["agent.message"], claims_completion=[A, True, False]),
        picked(type=["outcome.observed"], verdict=[A, "satisfied", "violated"], outcome_id=[A, "refund.done"]),
        picked(type=["run.failed"], status=[A, "error", "awaiting_approval"], reason=[A, "guardrail"]))
    return [calls] * 8 + [results] * 5 + [others] * 3


@st.composite
def traces(draw: st.DrawFn, paths: list[str]) -> list[dict[str, Any]]:
    """≤ 12 events over a palette of 1-3 values, seq = 2 × position + 1 (gaps, so a seq is never
    mistaken for a position); many args hold the correlate `paths`."""
    palette = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3))
    kinds = event_kinds(palette, paths)
    size = draw(st.one_of(st.integers(0, 12), st.integers(8, 12), st.integers(8, 12)))
    events = [draw(st.sampled_from(kinds).flatmap(lambda kind: kind)) for _ in range(size)]
    return [{"seq": 2 * position + 1, **event} for position, event in enumerate(events)]


ARG_TREES: list[dict[str, Any]] = [{"order": "A1"}, {"order": {"$in": ["A1", "B2"]}}, {"id": {"$exists": True}},
             {"order": {"$exists": False}}, {"order": {"$regex": "^A"}}, {"order": {"$gte": 1}},
             {"items": {"$contains": "A1"}}, {"order": {"$any_of": ["B2", {"$literal": 1}]}}, {"meta": {"id": "A1"}},
             {"order": ["A1"]}, {"order": {"id": "B2"}}, {}, {"order": {}}]
BEFORES: list[dict[str, Any]] = [{"type": "tool.call", "tool": "get"}, {"type": "tool.call", "tool": "get"},
           {"type": "tool.result", "tool": "get", "ok": True}, {"type": "tool.result", "tool": "get", "ok": True},
           {"type": "tool.result", "tool": "get"}, {"tool": "get"}, {"tool": "*"}, {"type": "tool.*"},
           {"type": "approval.granted"}, {"type": "tool.result", "ok": False}, {"verdict": "satisfied"},
           {"type": "tool.denied", "reason": "user*"}, {"claims_completion": True}]
AFTERS: list[dict[str, Any]] = [
    {"type": "tool.call", "tool": "refund"}, {"type": "tool.call", "tool": "refund"}, {"tool": "re*"}, {"tool": "re*"},
    {"type": "tool.call"}, {"type": "tool.call"}, {"type": "tool.result", "tool": "refund", "ok": True}, {"tool": "*"},
    {"type": "tool.*"}, {"type": "run.failed", "status": "err*"}, {"type": "tool.denied", "tool": "?efund"},
    {"outcome_id": "refund.*"}]


@st.composite
def matchers(draw: st.DrawFn, pool: list[dict[str, Any]]) -> dict[str, Any]:
    """A matcher of `pool`, sometimes with an `args` match tree (a matcher needs at least one key)."""
    matcher = dict(draw(st.sampled_from(pool)))
    if draw(st.integers(0, 4)) == 0:
        matcher["args"] = draw(st.sampled_from(ARG_TREES))
    return matcher


COMMON_CORRELATES = [A, ["order"], [{"before": "id", "after": "order"}], ["order", "id"], ["/order"]]
RARE_CORRELATES = [["meta.id"], [{"before": "/meta/id", "after": "order"}], ["items.0"], ["/items/1"],
                   [{"before": "id", "after": "order"}, "items.0"], ["order.id"],
                   [{"before": "order", "after": "/order/0"}], ["order.0"], ["/"], ["/a~1b"], ["a/b"], ["items.01"],
                   [{"before": "a/b", "after": "/"}]]
CORRELATES = COMMON_CORRELATES * 4 + RARE_CORRELATES


@st.composite
def rules(draw: st.DrawFn) -> dict[str, Any]:
    """A precedence rule with every option of §3.3."""
    rule = {"id": "r", "kind": "precedence", "before": draw(matchers(BEFORES)), "after": draw(matchers(AFTERS))}
    options = draw(picked(severity=[A, A, A, "warning"], scope=[A, "each", "first", "all", "all"],
                          correlate=CORRELATES, within_events=[A, A, 1, 1, 2, 2, 3, 5, 100_000]))
    return {**rule, **options}


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A rule, and a trace whose args often hold its correlate paths."""
    rule = draw(rules())
    paths = sorted(set(side_paths(rule, "before") + side_paths(rule, "after")))
    return rule, draw(traces(paths))


def agrees(rule: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """The product's result is the model's: violations with evidence (strict JSON equality too),
    pointer and related_seqs, `checked`, `vacuous`, and seq/index agreeing."""
    result = api(rule, events)
    checked, expected = reference(rule, events)
    same_violations(result, [e[:4] for e in expected])
    for violation, (*_, evidence, pointer, related) in zip(result["violations"], expected, strict=True):
        assert same(violation["evidence"], evidence), (violation, evidence)
        assert violation.get("pointer") == pointer, (violation, pointer)
        assert violation.get("related_seqs") == related, (violation, related)
        assert events[violation["event_index"]]["seq"] == violation["event_seq"]
    assert result["checked"] == checked
    assert result["severity"] == rule.get("severity", "error")
    assert result.get("vacuous", False) is (checked == 0)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_the_public_api_agrees_with_a_reference_model(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    agrees(*case)


# -- the model itself, on the spec's example ----------------------------------------------------------

EXAMPLE_RULE = {"id": "lookup-first", "kind": "precedence",
                "before": {"type": "tool.result", "tool": "get", "ok": True},
                "after": {"type": "tool.call", "tool": "refund"}, "correlate": [{"before": "id", "after": "order"}]}
EXAMPLE_TRACE = [
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A1"}},
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "B2"}},
    {"seq": 4, "type": "tool.call", "tool": "get", "call_id": "c3", "args": {"id": "B2"}},
    {"seq": 5, "type": "tool.result", "call_id": "c3", "ok": True},
]


def test_the_model_reproduces_the_spec_example() -> None:
    """§3.3: FAIL → seq 3 `late`, key ["B2"], related_seqs [5]; PASS when the refund follows seq 5."""
    evidence = {"before": EXAMPLE_RULE["before"], "after": EXAMPLE_RULE["after"], "scope": "each", "key": ["B2"]}
    assert reference(EXAMPLE_RULE, EXAMPLE_TRACE) == (1, [(3, "precedence.late", "fail", evidence, None, [5])])
    refund = {**EXAMPLE_TRACE[2], "seq": 6}
    passing = [*EXAMPLE_TRACE[:2], *EXAMPLE_TRACE[3:], refund]
    assert reference(EXAMPLE_RULE, passing) == (1, [])
    agrees(EXAMPLE_RULE, EXAMPLE_TRACE)
    agrees(EXAMPLE_RULE, passing)


def test_the_model_never_makes_an_event_its_own_predecessor() -> None:
    """§3.3: an event matching both matchers is not its own predecessor; point 19's window."""
    rule = {"id": "r", "kind": "precedence", "before": {"tool": "*"}, "after": {"tool": "*"}, "within_events": 1}
    trace = [{"seq": 1, "type": "tool.call", "tool": "get"}, {"seq": 2, "type": "agent.message"},
             {"seq": 3, "type": "tool.call", "tool": "get"}]
    evidence = {"before": rule["before"], "after": rule["after"], "scope": "each"}
    assert reference(rule, trace) == (2, [(1, "precedence.late", "fail", evidence, None, [3]),
                                          (3, "precedence.out_of_window", "fail", evidence, None, [1])])
    agrees(rule, trace)


def test_the_model_orders_an_events_two_codes_after_first() -> None:
    """§3.3 `all` with a `{before, after}` pair: an event lacking the after path but holding the before
    path is `correlate_missing` as an after and `before_after_action` as a before (AMBIGUOUS order)."""
    rule = {"id": "r", "kind": "precedence", "before": {"tool": "*"}, "after": {"tool": "*"}, "scope": "all",
            "correlate": [{"before": "id", "after": "order"}]}
    trace = [{"seq": 1, "type": "tool.call", "tool": "refund", "args": {"order": "A1"}},
             {"seq": 3, "type": "tool.call", "tool": "get", "args": {"id": "A1"}}]
    base = {"before": rule["before"], "after": rule["after"], "scope": "all"}
    assert reference(rule, trace) == (2, [
        (1, "precedence.late", "fail", {**base, "key": ["A1"]}, None, [3]),
        (3, "precedence.correlate_missing", "unresolved", {**base, "missing": ["order"]}, "/args/order", None),
        (3, "precedence.before_after_action", "fail", {**base, "key": ["A1"]}, None, [1])])
    agrees(rule, trace)
