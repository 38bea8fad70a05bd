"""`tool_args` rules whose `match` uses `$from_result` references, compared with a reference model
written from the spec's words only (spec v2 §0 "call index" and "a call's result", §1 `args`/`result`/
`ok`, §2 paths, equality, match tree, operators and references, §3.1, and §10 points 3, 6, 7, 9-13).

The model (`expected_violations`) pairs results with calls as point 3 says (a result answers the
nearest earlier call with its call_id that has no result yet; an orphan keeps its own `tool` and has
no args), runs `$from_result`'s steps (§2 steps 1-5 and point 12: results strictly before the subject
whose tool matches the glob, `ok_only` dropping `ok:false`, results without `result` adding nothing,
`call_index` counting matching calls over the whole trace, `where` on the producing call's args with
`$arg` reading the subject's, `where_result` on the result, then path → find → select → length, a
failing step contributing nothing), and evaluates each node with the candidate-set rules (§2, points
10 and 11: equality and `$in` pass on any candidate, comparisons need one distinct candidate, an empty
set is `no_candidates`, either reason is `reference_unresolved` and never an extra mismatch).

The property compares, per `pay` call, the (seq, code, status) of every violation, the mismatch
pointers and actual values, and the unresolved pointers, references and reasons; and the rule's
verdict and `checked`.

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
import math
from fnmatch import fnmatchcase
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import check_trace
from tests.support import integral

from support import examples

MISSING: Any = object()
COMPARISONS = {"$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
               "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


# -- the model: JSON values (§2 "Paths and equality", point 13) ----------------------------------

def json_eq(a: Any, b: Any) -> bool:
    """JSON-type-strict structural equality: true≠1, 1=1.0, equal key sets, arrays by position."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_eq(a[key], b[key]) for key in a)
    return False


def is_number(value: Any) -> bool:
    """Finite numbers only; booleans (and strings) never compare (§2 Operators)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def canonical_index(segment: str) -> bool:
    return segment.isdigit() and (segment == "0" or not segment.startswith("0"))


def at_path(value: Any, path: str | None) -> Any:
    """The value at a dot path, or MISSING (point 13: a canonical integer indexes an array and is a
    key elsewhere; a non-numeric segment on an array is not found; null is found)."""
    if path is None:
        return value
    for segment in path.split("."):
        if isinstance(value, list):
            if not canonical_index(segment) or int(segment) >= len(value):
                return MISSING
            value = value[int(segment)]
        elif isinstance(value, dict):
            if segment not in value:
                return MISSING
            value = value[segment]
        else:
            return MISSING
    return value


def distinct(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if not any(json_eq(value, seen) for seen in kept):
            kept.append(value)
    return kept


# -- the model: the trace (§0 definitions, point 3) ---------------------------------------------

class Trace:
    """Events with their call ↔ result pairing."""

    def __init__(self, events: list[dict[str, Any]]):
        self.events = events
        self.call_of: dict[int, int] = {}        # result index -> call index
        self.result_of: dict[int, int] = {}      # call index -> result index
        for i, event in enumerate(events):
            if event["type"] != "tool.result":
                continue
            waiting = [j for j in range(i) if events[j]["type"] == "tool.call"
                       and events[j].get("call_id") == event.get("call_id") and j not in self.result_of]
            if waiting and event.get("call_id") is not None:
                j = waiting[-1]                  # the nearest earlier call without a result yet
                self.call_of[i], self.result_of[j] = j, i

    def result_tool(self, i: int) -> str | None:
        """A paired result's tool is its call's; an orphan keeps its own (if any)."""
        if i in self.call_of:
            return self.events[self.call_of[i]]["tool"]
        return self.events[i].get("tool")

    def producing_args(self, i: int) -> Any:
        """The producing call's args; an orphan has none."""
        if i in self.call_of:
            return self.events[self.call_of[i]].get("args", MISSING)
        return MISSING


# -- the model: matching (§2 match tree and operators, points 9-12) -----------------------------

def is_operator(node: Any) -> bool:
    return isinstance(node, dict) and bool(node) and all(key.startswith("$") for key in node)


def literal_matches(node: Any, actual: Any, subject_args: Any) -> bool:
    """A match tree without from_result references (find, where, where_result) as a subset match;
    `$arg` (only in `where`) reads the subject's args and passes if the actual equals it."""
    if actual is MISSING:
        return False                             # point 9: an absent key is a mismatch
    if is_operator(node):
        for op, operand in node.items():
            if op == "$arg":
                wanted = at_path(subject_args, operand)
                if wanted is MISSING or not json_eq(actual, wanted):
                    return False
            elif op in COMPARISONS:
                if not (is_number(actual) and COMPARISONS[op](actual, operand)):
                    return False
            elif op == "$in":
                if not any(json_eq(actual, value) for value in operand):
                    return False
            else:
                raise AssertionError(f"the model does not know {op}")
        return True
    if isinstance(node, dict):
        return isinstance(actual, dict) and all(
            literal_matches(sub, actual.get(key, MISSING), subject_args) for key, sub in node.items())
    if isinstance(node, list):
        return isinstance(actual, list) and len(actual) == len(node) and all(
            literal_matches(sub, value, subject_args) for sub, value in zip(node, actual, strict=True))
    return json_eq(node, actual)


def candidates(ref: dict[str, Any], trace: Trace, subject: int) -> list[Any]:
    """The candidate set of a `$from_result` for the call at index `subject` (§2 steps 1-5, point 12)."""
    events = trace.events
    glob = ref["tool"]
    subject_args = events[subject].get("args", MISSING)
    if "call_index" in ref:
        calls = [i for i, event in enumerate(events)
                 if event["type"] == "tool.call" and fnmatchcase(event["tool"], glob)]
        if ref["call_index"] >= len(calls) or calls[ref["call_index"]] not in trace.result_of:
            return []
        picked = trace.result_of[calls[ref["call_index"]]]
        results = [picked] if picked < subject else []
    else:
        results = [i for i in range(subject) if events[i]["type"] == "tool.result"
                   and (tool := trace.result_tool(i)) is not None and fnmatchcase(tool, glob)]
    found = []
    for i in results:
        event = events[i]
        if ref.get("ok_only", True) and event.get("ok") is False:
            continue
        if "result" not in event:
            continue
        result = event["result"]
        if "where" in ref:
            args = trace.producing_args(i)
            if args is MISSING or not literal_matches(ref["where"], args, subject_args):
                continue
        if "where_result" in ref and not literal_matches(ref["where_result"], result, subject_args):
            continue
        value = at_path(result, ref.get("path"))
        if "find" in ref:
            if not isinstance(value, list):
                continue
            value = next((element for element in value if literal_matches(ref["find"], element, subject_args)),
                         MISSING)
        if "select" in ref and value is not MISSING:
            value = at_path(value, ref["select"])
        if ref.get("length") and value is not MISSING:
            value = len(value) if isinstance(value, list) else MISSING
        if value is not MISSING:
            found.append(value)
    return found


def evaluate(node: Any, actual: Any, trace: Trace, subject: int, pointer: str,
             mismatches: list[tuple[str, Any, Any]], unresolved: list[tuple[str, Any, str]]) -> str:
    """'pass', 'mismatch' or 'unresolved' for one key's node; records the evidence entries."""
    def unresolve(ref: Any, reason: str) -> str:
        unresolved.append((pointer, ref, reason))
        return "unresolved"

    def mismatch(expected: Any = MISSING) -> str:
        mismatches.append((pointer, actual, expected))
        return "mismatch"

    if isinstance(node, dict) and "$from_result" in node:          # equality with a reference
        found = candidates(node["$from_result"], trace, subject)
        if not found:
            return unresolve(node, "no_candidates")
        # point 7: the expected value of a reference is {"any_of": [candidates]}
        return "pass" if any(json_eq(actual, c) for c in found) else mismatch({"any_of": found})
    assert is_operator(node) and len(node) == 1, node
    ((op, operand),) = node.items()
    if op == "$any_of":
        branch_mismatches: list[tuple[str, Any, Any]] = []
        branch_unresolved: list[tuple[str, Any, str]] = []
        outcomes = [evaluate(branch, actual, trace, subject, pointer, branch_mismatches, branch_unresolved)
                    for branch in operand]
        if "pass" in outcomes:
            return "pass"
        if "unresolved" in outcomes and actual is not MISSING:   # point 9: at an absent key, a mismatch
            unresolved.extend(branch_unresolved)
            return "unresolved"
        return mismatch()
    if isinstance(operand, dict) and "$from_result" in operand:
        found = candidates(operand["$from_result"], trace, subject)
        if op == "$in":                          # point 11: an array candidate gives its elements
            contributed = [x for c in found for x in (c if isinstance(c, list) else [c])]
            if not contributed:
                return unresolve(operand, "no_candidates")
            return "pass" if any(json_eq(actual, x) for x in contributed) else mismatch()
        assert op in COMPARISONS, op
        if not found:
            return unresolve(operand, "no_candidates")
        found = distinct(found)
        if len(found) > 1:
            return unresolve(operand, "ambiguous")
        (value,) = found
        ok = is_number(actual) and is_number(value) and COMPARISONS[op](actual, value)
        return "pass" if ok else mismatch()
    ok = is_number(actual) and COMPARISONS[op](actual, operand)      # a literal comparison
    return "pass" if ok else mismatch()


def expected_violations(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """(checked, violations as {seq, code, status, mismatches, unresolved}) for one tool_args rule."""
    trace = Trace(events)
    checked, out = 0, []
    for i, event in enumerate(events):
        if event["type"] != "tool.call" or not fnmatchcase(event["tool"], rule["tool"]):
            continue
        checked += 1
        if "args" not in event:
            out.append({"seq": event["seq"], "code": "tool_args.args_missing", "status": "unresolved"})
            continue
        mismatches: list[tuple[str, Any, Any]] = []
        unresolved: list[tuple[str, Any, str]] = []
        for key, node in rule["match"].items():
            assert key in event["args"], "the generator keeps every matched key present"
            evaluate(node, event["args"][key], trace, i, f"/args/{key}", mismatches, unresolved)
        if mismatches:
            out.append({"seq": event["seq"], "code": "tool_args.mismatch", "status": "fail",
                        "mismatches": sorted(mismatches, key=lambda m: m[0])})
        if unresolved:
            out.append({"seq": event["seq"], "code": "tool_args.reference_unresolved", "status": "unresolved",
                        "unresolved": sorted(unresolved, key=canon)})
    return checked, out


# -- what the public API says, in the model's shape ----------------------------------------------

def canon(value: Any) -> str:
    """A JSON text in which 2 and 2.0 read the same (for sorting and set comparison only)."""
    return json.dumps(integral(value), sort_keys=True)


def actual_violations(rule: dict[str, Any],
                      events: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    report = msgspec.to_builtins(check_trace({"version": 2, "name": "refs", "rules": [rule]}, events))
    (result,) = report["results"]
    out = []
    for v in result["violations"]:
        entry: dict[str, Any] = {"seq": v.get("event_seq"), "code": v["code"], "status": v["status"]}
        evidence = v.get("evidence", {})
        if v["code"] == "tool_args.mismatch":
            entry["mismatches"] = sorted(((m["pointer"], m.get("actual", MISSING), m.get("expected", MISSING))
                                          for m in evidence["mismatches"]), key=lambda m: m[0])
        if v["code"] == "tool_args.reference_unresolved":
            entry["unresolved"] = sorted(((u["pointer"], u["reference"], u["reason"]) for u in evidence["unresolved"]),
                                         key=canon)
        out.append(entry)
    return result, out


def same_candidates(expected: Any, got: Any) -> bool:
    """`{"any_of": [...]}` with the same candidates as a set (their order and repeats are not specified)."""
    return (isinstance(got, dict) and list(got) == ["any_of"]
            and {canon(c) for c in expected["any_of"]} == {canon(c) for c in got["any_of"]})


def same(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> bool:
    """Equal, with JSON equality for the `actual` values of mismatches (2 = 2.0) and, for a bare
    reference, its candidates compared as a set."""
    if [(e["seq"], e["code"], e["status"]) for e in expected] != [(a["seq"], a["code"], a["status"]) for a in actual]:
        return False
    for e, a in zip(expected, actual, strict=True):
        if "unresolved" in e and e["unresolved"] != a["unresolved"]:
            return False
        if "mismatches" in e:
            if [m[0] for m in e["mismatches"]] != [m[0] for m in a["mismatches"]]:
                return False
            for (_, value, wanted), (_, got_value, got_wanted) in zip(e["mismatches"], a["mismatches"], strict=True):
                if not json_eq(value, got_value):
                    return False
                if wanted is not MISSING and not same_candidates(wanted, got_wanted):
                    return False
    return True


def check_against_model(rule: dict[str, Any], events: list[dict[str, Any]]) -> None:
    checked, expected = expected_violations(rule, events)
    result, actual = actual_violations(rule, events)
    assert [(a["seq"], a["code"]) for a in actual] == [(e["seq"], e["code"]) for e in expected]
    assert same(expected, actual), (expected, actual)
    assert result["passed"] is (expected == [])
    assert result["checked"] == checked


# -- generators ----------------------------------------------------------------------------------

AMOUNTS = [1, 2, 2.0, 3]
ODD = ["1", True, None]                          # equal by JSON value to none of AMOUNTS
ORDERS = ["A1", "A2"]


def chance(k: int, n: int) -> st.SearchStrategy[bool]:
    """True k times in n (`st.integers` would favour its bounds)."""
    return st.sampled_from([True] * k + [False] * (n - k))


amounts = st.sampled_from(AMOUNTS * 3 + ODD)
orders = st.sampled_from([*ORDERS, ORDERS[0]])   # "A1" twice as often, so that joins often hold
elements = st.fixed_dictionaries({"sku": orders, "price": amounts}, optional={"tags": st.lists(amounts, max_size=2)})


@st.composite
def results(draw) -> Any:
    """A small `result`: mostly an object with most of the keys the references read (so that their
    steps often succeed), sometimes a bare value, an array or null."""
    if draw(chance(1, 6)):
        return draw(st.one_of(amounts, orders, st.lists(amounts, max_size=3), st.none()))
    return draw(objects())


@st.composite
def objects(draw) -> dict[str, Any]:
    optional = {
        "paid": amounts, "id": orders, "status": st.sampled_from(["ok", "ok", "void"]),
        "info": st.one_of(st.fixed_dictionaries({"paid": amounts}), st.sampled_from([{}, [1], [2.0, 3]])),
        "items": st.one_of(st.lists(elements, max_size=3), st.sampled_from([None, "none", {"sku": "A1"}])),
        "allowed": st.one_of(st.lists(amounts, max_size=3), amounts),
    }
    body = {}
    for key, values in optional.items():
        if draw(chance(8 if key in ("paid", "id") else 5, 10)):
            body[key] = draw(values)
    return body


def references(node: Any) -> list[dict[str, Any]]:
    """The `$from_result` specs inside a node."""
    if isinstance(node, dict):
        if "$from_result" in node:
            return [node["$from_result"]]
        return [spec for value in node.values() for spec in references(value)]
    if isinstance(node, list):
        return [spec for value in node for spec in references(value)]
    return []


@st.composite
def satisfying(draw, node: dict[str, Any]) -> dict[str, Any]:
    """Mostly an object that a literal node of `find` or `where_result` matches (with a key that
    makes it fail now and then)."""
    out = {}
    for key, sub in node.items():
        if draw(chance(1, 5)):
            out[key] = draw(st.one_of(amounts, orders, st.just("void")))
        elif isinstance(sub, dict):                                  # {"$gt": 1}
            out[key] = draw(st.sampled_from([2, 2.0, 3]))
        else:
            out[key] = 2.0 if sub == 2 and draw(st.booleans()) else sub
    return out


@st.composite
def fitting(draw, ref: dict[str, Any], leaf: st.SearchStrategy) -> Any:
    """A result built for `ref`: its steps mostly succeed, with the leaf from `leaf` (so that
    candidates collide, differ and repeat often)."""
    value: Any = draw(st.lists(amounts, max_size=3)) if ref.get("length") else draw(leaf)
    if "find" in ref:
        wanted = {**draw(elements), **draw(satisfying(ref["find"]))}
        if "select" in ref:
            wanted[ref["select"]] = value
        value = draw(st.lists(elements, max_size=2))
        value.insert(draw(st.integers(0, len(value))), wanted)
    path = ref.get("path")
    for segment in reversed(path.split(".") if path else []):
        if canonical_index(segment) and draw(chance(2, 3)):
            value = [*draw(st.lists(amounts, min_size=int(segment), max_size=int(segment))), value,
                     *draw(st.lists(amounts, max_size=1))]
        else:
            value = {segment: value}
    if isinstance(value, dict):
        if "where_result" in ref:
            value = {**value, **draw(satisfying(ref["where_result"]))}
        if draw(chance(1, 3)):
            value = {**draw(objects()), **value}
    return value


producer_args = st.one_of(
    st.fixed_dictionaries({"id": orders}, optional={"kind": st.sampled_from(["x", "x", "y"])}),
    st.fixed_dictionaries({"id": orders}, optional={"kind": st.sampled_from(["x", "x", "y"])}),
    st.sampled_from([{}, {"kind": "x"}, {"id": 1}, None]))


@st.composite
def events_of(draw, match: dict[str, Any]) -> list[dict[str, Any]]:
    """≤ 12 tool.call / tool.result events of get, lookup and pay (seq from 1), mostly calls each
    followed by its result, with lone calls, lone (late, duplicate or orphan) results and pay calls."""
    def producer() -> dict[str, Any]:
        event = {"type": "tool.call", "tool": draw(st.sampled_from(["get", "get", "get", "lookup"])),
                 "call_id": draw(st.sampled_from(["c1", "c1", "c2", "c3", "c1", "c2", "c3", None]))}
        if event["call_id"] is None:             # a call without call_id: counted, never answered
            del event["call_id"]
        args = draw(producer_args)
        if args is not None:
            event["args"] = args
        return event

    def result(call_id: str | None) -> dict[str, Any]:
        event: dict[str, Any] = {"type": "tool.result"}
        if call_id is not None:
            event["call_id"] = call_id
        ok = draw(st.sampled_from([True, True, True, False, None]))
        if ok is not None:
            event["ok"] = ok
        if draw(chance(9, 10)):
            if draw(chance(3, 4)):
                key, ref = draw(st.sampled_from(refs))
                event["result"] = draw(fitting(ref, orders if key == "order" else amounts))
            else:
                event["result"] = draw(results())
        tool = draw(st.sampled_from([None, None, None, "get", "lookup", "pay"]))
        if tool is not None:
            event["tool"] = tool
        return event

    def pay() -> dict[str, Any]:
        # a pay call may take a c1 result away from a get call (point 3)
        event = {"type": "tool.call", "tool": "pay", "call_id": draw(st.sampled_from(["c1", "p1", "p1", "p2", "p2"]))}
        if draw(chance(15, 16)):
            event["args"] = {"order": draw(orders), **{key: draw(amounts) for key in keys if key != "order"}}
        return event

    keys = tuple(match)
    refs = [(key, found) for key, node in match.items() for found in references(node)]
    events: list[dict[str, Any]] = []
    size = draw(st.integers(1, 12))
    while len(events) < size:
        kind = draw(st.sampled_from(["pair"] * 6 + ["call", "result", "pay", "pay"]))
        if kind == "pair":
            called = producer()
            events += [called, result(called.get("call_id"))]
        elif kind == "call":
            events.append(producer())
        elif kind == "result":
            events.append(result(draw(st.sampled_from(["c1", "c2", "c3", "c9", None]))))
        else:
            events.append(pay())
    events = events[:12]
    if draw(chance(2, 3)):
        events[-1] = pay()                       # a pay call after most of the results
    return [{"seq": seq, **event} for seq, event in enumerate(events, 1)]


PATHS = ["paid", "paid", "paid", "paid", None, "info.paid", "info.0", "allowed", "allowed.1", "allowed.01",
         "items.0.price", "0", "id"]


@st.composite
def from_result(draw, for_key: str) -> dict[str, Any]:
    """A `$from_result` for the pay arg `for_key`, with steps that often find something."""
    ref: dict[str, Any] = {"tool": draw(st.sampled_from(["get", "get", "get", "g*", "lookup", "*", "?et"]))}
    steps = draw(st.sampled_from(["path"] * 4 + ["length", "find", "find_select", "find_select", "find_select_length"]))
    if steps == "path":
        path = draw(st.sampled_from(["id", "id", "id", "paid"] if for_key == "order" else PATHS))
    elif steps == "length":
        path = draw(st.sampled_from(["items", "allowed", "allowed", None, "info"]))
    else:
        path = draw(st.sampled_from(["items", "items", "items", None]))
    if path is not None:
        ref["path"] = path
    if steps.startswith("find"):
        ref["find"] = draw(st.sampled_from([{"sku": "A1"}, {"sku": "A2"}, {"price": {"$gt": 1}}, {"price": 2}]))
    if steps == "find_select":
        ref["select"] = draw(st.sampled_from(["sku", "id"] if for_key == "order" else ["price", "price", "sku"]))
    if steps == "find_select_length":
        ref["select"] = "tags"
    if steps in ("length", "find_select_length"):
        ref["length"] = True
    how = draw(st.sampled_from(["any"] * 4 + ["where"] * 2 + ["where_plus", "where_result", "both"]
                               + ["call_index"] * 2))
    if how == "call_index":
        ref["call_index"] = draw(st.integers(0, 2))
    if how in ("where", "both"):
        ref["where"] = {"id": {"$arg": "order"}}
    if how == "where_plus":
        ref["where"] = {"id": {"$arg": "order"}, "kind": "x"}
    if how in ("where_result", "both"):
        ref["where_result"] = draw(st.sampled_from([{"status": "ok"}, {"paid": {"$gt": 1}}, {"paid": 2}]))
    if draw(chance(1, 4)):
        ref["ok_only"] = draw(st.sampled_from([False, False, True]))
    return {"$from_result": ref}


@st.composite
def nodes(draw, key: str) -> Any:
    ref = draw(from_result(key))
    if key == "order":
        return ref
    form = draw(st.sampled_from(["eq", "eq", "$lte", "$lt", "$gte", "$gt", "$in", "$in", "$any_of"]))
    if form == "eq":
        return ref
    if form == "$any_of":
        return {"$any_of": [ref, {"$lt": 2}]}
    return {form: ref}


@st.composite
def cases(draw) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    keys = draw(st.sampled_from([("amount",), ("amount",), ("amount", "qty"), ("amount", "order")]))
    rule = {"id": "r", "kind": "tool_args", "tool": "pay", "match": {key: draw(nodes(key)) for key in keys}}
    return rule, draw(events_of(rule["match"]))


# -- the model against the spec's own example (§3.1) ---------------------------------------------

def call(tool: str, call_id: str, args: Any = MISSING) -> dict[str, Any]:
    event = {"type": "tool.call", "tool": tool, "call_id": call_id}
    if args is not MISSING:
        event["args"] = args
    return event


def res(call_id: str, result: Any = MISSING, **extra: Any) -> dict[str, Any]:
    event = {"type": "tool.result", "call_id": call_id, "ok": True, **extra}
    if result is not MISSING:
        event["result"] = result
    return event


def numbered(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"seq": i, **event} for i, event in enumerate(events, 1)]


EXAMPLE_REF = {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg": "order"}}}}


def test_the_model_gives_the_spec_example_its_verdict():
    # §3.1's example without its `$regex` key (which the model does not know)
    rule = {"id": "r", "kind": "tool_args", "tool": "refund", "match": {"amount": EXAMPLE_REF}}
    events = numbered(call("get", "c1", {"id": "A9"}), res("c1", {"paid": 10}),
                      call("refund", "c2", {"order": "A9", "amount": 12}),
                      call("refund", "c3", {"order": "A7", "amount": 5}))
    assert expected_violations(rule, events) == (2, [
        {"seq": 3, "code": "tool_args.mismatch", "status": "fail",
         "mismatches": [("/args/amount", 12, {"any_of": [10]})]},
        {"seq": 4, "code": "tool_args.reference_unresolved", "status": "unresolved",
         "unresolved": [("/args/amount", EXAMPLE_REF, "no_candidates")]}])
    check_against_model(rule, events)


def test_the_model_pairs_a_result_with_the_nearest_waiting_call():
    # point 3: the first c1 result answers the second c1 call (A2), the second one the first (A1)
    rule = {"id": "r", "kind": "tool_args", "tool": "pay", "match": {"amount": EXAMPLE_REF}}
    events = numbered(call("get", "c1", {"id": "A1"}), call("get", "c1", {"id": "A2"}),
                      res("c1", {"paid": 1}), res("c1", {"paid": 2}), call("pay", "p1", {"order": "A1", "amount": 1}))
    assert expected_violations(rule, events)[1] == [
        {"seq": 5, "code": "tool_args.mismatch", "status": "fail",
         "mismatches": [("/args/amount", 1, {"any_of": [2]})]}]
    check_against_model(rule, events)


# -- the property --------------------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_the_public_api_agrees_with_a_reference_model(case):
    rule, events = case
    check_against_model(rule, events)
