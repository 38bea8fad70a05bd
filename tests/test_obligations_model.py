"""The outcome checks `run_status` and `output_match` (spec v2 §3.7) and the conditional obligations
`required_when` and `forbidden_when` (§3.8), compared through the public API with a small reference
model written from the spec text only: §0 (terminal, final output, run status), §1, §2 (paths,
equality, the match tree, `$from_result`, conditions) and §10 points 1-7, 9-14 and 24 (codes, where a
violation sits, order, status, `checked`, absent keys, `$in` with a reference, conditions evaluated
once at trace end with Kleene logic, one `condition_unresolved` and nothing else).

Each example is one rule with random valid options and a short trace (≤ 12 events: calls, results,
outcomes, zero, one or two terminals with or without `status` and `output`). The model computes the
rule's pass/fail, `checked`, and its violations as (event_seq or None, code, status) in report order,
plus a few evidence fields; the API must agree.

`output_schema` is left out. Expected values are derived from the spec text, not from running the
implementation, except for these details the spec leaves open, where the model follows the
implementation:
- in `mode: exact`, an extra key is a mismatch at that key with `expected: {"$exists": false}`;
- a reference's `expected` (`{"any_of": [...]}`, point 7) lists each distinct candidate once (40 and
  40.0 are one), in trace order;
- run_status's evidence `expected` is the `equals` string or the `in` list as written;
- a bare reference at an absent key is `reference_unresolved` when it finds nothing (point 9 makes
  only literal and operator nodes there a mismatch), and `$any_of` at an absent key matches only
  through a branch that accepts absence (point 11 lets `$exists` sit in them), else it is a
  mismatch, whatever its reference branches find (point 9: it is an operator node);
- `required_when.min` must be at least 1 (0 is a load error), so the strategies never use 0."""
from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import check_trace
from tests.models import ABSENT, glob, picked, same
from tests.models import read_path as read

from support import examples

TERMINALS = ("run.completed", "run.failed")


# -- the reference model --------------------------------------------------------------------------

def distinct(values: list[Any]) -> list[Any]:
    """`values` without repeats (by §2 equality), first occurrences in order."""
    kept: list[Any] = []
    for value in values:
        if not any(same(value, k) for k in kept):
            kept.append(value)
    return kept


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Trace:
    """What the kinds read from a trace: pairing (point 3), the terminal and the final output (§0)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.call_of: dict[int, int] = {}      # result index -> its call's index
        self.result_of: dict[int, int] = {}    # call index -> its result's index
        waiting: dict[str, list[int]] = {}
        for i, event in enumerate(events):
            if event["type"] == "tool.call" and "call_id" in event:
                waiting.setdefault(event["call_id"], []).append(i)
            elif event["type"] == "tool.result" and waiting.get(event.get("call_id", ""), []):
                c = waiting[event["call_id"]].pop()          # the nearest earlier call without a result
                self.call_of[i], self.result_of[c] = c, i
        ends = [i for i, e in enumerate(events) if e["type"] in TERMINALS]
        self.terminal = ends[-1] if ends else None

    @property
    def terminal_seq(self) -> int | None:
        return None if self.terminal is None else self.events[self.terminal]["seq"]

    @property
    def output(self) -> Any:
        if self.terminal is None:
            return ABSENT
        return self.events[self.terminal].get("output", ABSENT)

    def run_status(self) -> str:
        if self.terminal is None:
            return "none"
        end = self.events[self.terminal]
        return end.get("status", "completed" if end["type"] == "run.completed" else "failed")

    def result_tool(self, r: int) -> Any:
        """A result's tool: its call's (new kinds), or its own for an orphan."""
        return self.events[self.call_of[r]].get("tool") if r in self.call_of else self.events[r].get("tool")

    def calls(self, pattern: str) -> list[int]:
        return [i for i, e in enumerate(self.events) if e["type"] == "tool.call" and glob(pattern, e.get("tool"))]

    def successful(self, c: int) -> bool:
        """Point 20: the paired result exists and `ok` is not false."""
        return c in self.result_of and self.events[self.result_of[c]].get("ok") is not False

    def candidates(self, ref: dict[str, Any]) -> list[Any]:
        """`$from_result` with the terminal as subject (§2 steps 1, 2, 4, 5; point 12)."""
        if "call_index" in ref:
            producers = self.calls(ref["tool"])
            k = ref["call_index"]
            chosen = [self.result_of[producers[k]]] if k < len(producers) and producers[k] in self.result_of else []
            chosen = [r for r in chosen if r < self.terminal]
        else:
            chosen = [r for r in range(self.terminal) if self.events[r]["type"] == "tool.result"
                      and glob(ref["tool"], self.result_tool(r))]
        found = []
        for r in chosen:
            event = self.events[r]
            if ref.get("ok_only", True) and event.get("ok") is False:
                continue
            if "result" not in event:
                continue
            value = read(event["result"], ref["path"]) if "path" in ref else event["result"]
            if value is not ABSENT and "find" in ref:
                value = next((e for e in value if Matcher(None).whole(ref["find"], e) == OK), ABSENT) \
                    if isinstance(value, list) else ABSENT
            if value is not ABSENT and "select" in ref:
                value = read(value, ref["select"])
            if value is not ABSENT and ref.get("length", False):
                value = len(value) if isinstance(value, list) else ABSENT
            if value is not ABSENT:
                found.append(value)
        return found


OK, MISMATCH, UNRESOLVED = "ok", "mismatch", "unresolved"


class Matcher:
    """The match tree of §2 (points 9-11) against one value; collects the evidence entries of point 7:
    mismatches `{pointer, expected, actual?}` by pointer and unresolved `{pointer, reference, reason}`."""

    def __init__(self, trace: Trace | None, exact: bool = False, ignore: tuple[str, ...] = ()) -> None:
        self.trace, self.exact, self.ignore = trace, exact, ignore
        self.mismatches: dict[str, dict[str, Any]] = {}
        self.unresolved: list[dict[str, Any]] = []
        self.why: dict[str, Any] = {}          # the last unresolved reference and its reason
        self.shown: Any = ABSENT               # `expected` of a reference node: the candidates

    def mismatch(self, pointer: str, expected: Any, actual: Any) -> None:
        entry = {"pointer": pointer, "expected": expected}
        if actual is not ABSENT:
            entry["actual"] = actual
        self.mismatches[pointer] = entry

    def run(self, node: Any, actual: Any, pointer: str) -> None:
        self.node(node, actual, pointer, top=True)

    def node(self, node: Any, actual: Any, pointer: str, top: bool = False) -> None:
        if isinstance(node, dict) and node and all(k.startswith("$") for k in node):   # operators or a reference
            self.shown = ABSENT
            verdict = self.operators(node, actual)
            if verdict == MISMATCH:
                self.mismatch(pointer, node if self.shown is ABSENT else self.shown, actual)
            elif verdict == UNRESOLVED:
                self.unresolved.append({"pointer": pointer, **self.why})
        elif isinstance(node, dict):
            if not isinstance(actual, dict):
                self.mismatch(pointer, node, actual)
                return
            for key, child in node.items():
                self.node(child, actual.get(key, ABSENT), f"{pointer}/{key}")
            if self.exact:
                for key in actual.keys() - node.keys():
                    if not (top and key in self.ignore):
                        self.mismatch(f"{pointer}/{key}", {"$exists": False}, actual[key])
        elif isinstance(node, list):
            if not isinstance(actual, list) or len(actual) != len(node):
                self.mismatch(pointer, node, actual)
                return
            for i, (child, value) in enumerate(zip(node, actual, strict=True)):
                self.node(child, value, f"{pointer}/{i}")
        elif actual is ABSENT or not same(node, actual):
            self.mismatch(pointer, node, actual)

    def whole(self, node: Any, actual: Any) -> str:
        """Whether a subtree matches as a whole (for `$any_of` branches and `$contains` elements)."""
        inner = Matcher(self.trace, self.exact)
        inner.node(node, actual, "")
        if inner.unresolved:
            self.why = {k: v for k, v in inner.unresolved[0].items() if k != "pointer"}
            return UNRESOLVED
        return MISMATCH if inner.mismatches else OK

    def operators(self, node: dict[str, Any], actual: Any) -> str:
        verdicts = [self.operator(op, operand, actual) for op, operand in node.items()]
        if UNRESOLVED in verdicts:
            return UNRESOLVED
        return MISMATCH if MISMATCH in verdicts else OK

    def operator(self, op: str, operand: Any, actual: Any) -> str:
        present = actual is not ABSENT
        if op == "$exists":
            return OK if present == operand else MISMATCH
        if op == "$any_of":
            branches = [self.whole(branch, actual) for branch in operand]
            if OK in branches:
                return OK
            if not present:
                return MISMATCH      # point 9: only a branch that accepts absence ($exists: false) saves it
            return UNRESOLVED if UNRESOLVED in branches else MISMATCH
        if op != "$from_result" and not present:
            return MISMATCH          # point 9, even when a reference operand would find nothing
        if op == "$from_result":
            found = self.trace.candidates(operand)
            if not found:
                self.why = {"reference": {op: operand}, "reason": "no_candidates"}
                return UNRESOLVED
            self.shown = {"any_of": distinct(found)[:20]}
            return OK if present and any(same(actual, c) for c in found) else MISMATCH
        if op == "$in":
            if isinstance(operand, dict):              # a reference: point 11
                contributed = []
                for candidate in self.trace.candidates(operand["$from_result"]):
                    contributed.extend(candidate if isinstance(candidate, list) else [candidate])
                if not contributed:
                    self.why = {"reference": operand, "reason": "no_candidates"}
                    return UNRESOLVED
                operand = contributed
            return OK if any(same(actual, v) for v in operand) else MISMATCH
        if op in ("$gt", "$gte", "$lt", "$lte"):
            if isinstance(operand, dict):
                found = distinct(self.trace.candidates(operand["$from_result"]))
                if len(found) != 1:
                    self.why = {"reference": operand, "reason": "ambiguous" if found else "no_candidates"}
                    return UNRESOLVED
                operand = found[0]
            if not (is_number(actual) and is_number(operand)):
                return MISMATCH
            holds = {"$gt": actual > operand, "$gte": actual >= operand,
                     "$lt": actual < operand, "$lte": actual <= operand}[op]
            return OK if holds else MISMATCH
        if op == "$regex":
            return OK if isinstance(actual, str) and re.search(operand, actual) else MISMATCH
        if op == "$contains":
            if not isinstance(actual, list):
                return MISMATCH
            return OK if any(self.whole(operand, element) == OK for element in actual) else MISMATCH
        if op == "$literal":
            return OK if same(actual, operand) else MISMATCH
        raise AssertionError(op)


def condition(cond: dict[str, Any], trace: Trace) -> bool | None:
    """A condition's truth value at trace end (§2, point 14); None is unresolved (Kleene)."""
    if "any_of" in cond:
        values = [condition(c, trace) for c in cond["any_of"]]
        return True if True in values else (None if None in values else False)
    if "all_of" in cond:
        values = [condition(c, trace) for c in cond["all_of"]]
        return False if False in values else (None if None in values else True)
    if "outcome" in cond:
        wanted = cond["outcome"]
        seen = [e for e in trace.events
                if e["type"] == "outcome.observed" and glob(wanted["outcome_id"], e.get("outcome_id"))]
        if not seen:
            return None
        return seen[-1].get("verdict", ABSENT) == wanted["verdict"]
    output = trace.output
    value = ABSENT if output is ABSENT else read(output, cond["path"])
    if value is ABSENT:
        return None
    if "equals" in cond:
        return same(value, cond["equals"])
    if "non_empty" in cond:
        return len(value) > 0 if isinstance(value, list) else None
    matcher = Matcher(None)
    matcher.run(cond["matches"], value, "")
    return not matcher.mismatches


class Expected:
    def __init__(self, checked: int) -> None:
        self.checked = checked
        self.violations: list[tuple[int | None, str, str]] = []
        self.evidence: list[dict[str, Any]] = []      # key subsets expected, one per violation
        self.mismatches: dict[str, dict[str, Any]] | None = None   # output_match's evidence entries by pointer
        self.unresolved: list[dict[str, Any]] | None = None

    def add(self, seq: int | None, code: str, status: str = "fail", /, **evidence: Any) -> None:
        self.violations.append((seq, code, status))
        self.evidence.append(evidence)


def model(spec: dict[str, Any], events: list[dict[str, Any]]) -> Expected:
    trace = Trace(events)
    kind, end = spec["kind"], trace.terminal_seq
    if kind == "run_status":
        out = Expected(1)
        expected = [spec["equals"]] if "equals" in spec else spec["in"]
        if trace.run_status() not in expected:
            out.add(end, "run_status.mismatch", status=trace.run_status(), expected=spec.get("equals", spec.get("in")))
        return out
    if kind == "output_match":
        holds = condition(spec["when"], trace) if "when" in spec else True
        if holds is False:
            return Expected(0)
        out = Expected(1)
        if holds is None:
            out.add(end, "output_match.condition_unresolved", "unresolved")
        elif trace.output is ABSENT:
            out.add(end, "output_match.output_missing", "unresolved")
        else:
            matcher = Matcher(trace, spec.get("mode") == "exact", tuple(spec.get("ignore", ())))
            matcher.run(spec["match"], trace.output, "/output")
            if matcher.mismatches:
                out.add(end, "output_match.mismatch")
                out.mismatches = matcher.mismatches
            if matcher.unresolved:
                out.add(end, "output_match.reference_unresolved", "unresolved")
                out.unresolved = matcher.unresolved
        return out
    calls = trace.calls(spec["tool"])
    holds = condition(spec["when"], trace)
    if kind == "forbidden_when":
        out = Expected(len(calls))
        if not calls or holds is False:
            return out
        if holds is None:
            out.add(end, "forbidden_when.condition_unresolved", "unresolved")
        else:
            for c in calls:
                out.add(events[c]["seq"], "forbidden_when.forbidden")
        return out
    assert kind == "required_when"
    out = Expected(1)
    if holds is None:
        out.add(end, "required_when.condition_unresolved", "unresolved")
    elif holds:
        counted = [c for c in calls if spec.get("count", "calls") == "calls" or trace.successful(c)]
        if len(counted) < spec.get("min", 1):
            out.add(end, "required_when.min", count=len(counted), min=spec.get("min", 1), tool=spec["tool"],
                    when=spec["when"])
    elif spec.get("iff", False):
        for c in calls:
            out.add(events[c]["seq"], "required_when.forbidden")
    return out


# -- strategies -----------------------------------------------------------------------------------

def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each `weight` times as likely (st.one_of merges repeated branches)."""
    return st.sampled_from([s for weight, s in choices for _ in range(weight)]).flatmap(lambda s: s)


N = [ABSENT] * 2
OUTPUT_OBJECTS = picked(   # (Hypothesis favours the first item of a list: a key is mostly present)
    refunds=[["A1"], [], ["A1"], [], ["A1", "A2"], "A1", None, ABSENT],
    total=[40, 40, 45, 40.0, "40", True, ABSENT],
    flag=[True, False, ABSENT],
    meta=[{"kind": "x"}, {"kind": "x"}, {"kind": "y"}, {"kind": "x", "extra": 1}, {}, ABSENT],
    note=[ABSENT, ABSENT, "hi"],
    count=[2, 1, ABSENT, ABSENT],
)
OUTPUTS = weighted((12, OUTPUT_OBJECTS), (1, st.sampled_from([ABSENT, None, ["A1"], "done"])))
RESULTS = [{"total": 40}, {"total": 45}, {"totals": [40, 45]}, {"total": 40.0}, {"totals": 40}, {}, 40, [40], None,
           {"items": [{"sku": "A1", "price": 40}, {"sku": "A2", "price": 45}]}, {"items": [{"sku": "A2"}]},
           {"items": [{"sku": "A1", "price": [1, 2]}]}, {"items": "A1"}, ABSENT]

PAIR_RESULTS = [{"total": 40}, {"total": 45, "totals": [40, 45]}, {"total": 40, "totals": [45]},
                {"items": [{"sku": "A1", "price": 40}, {"sku": "A2", "price": 45}]}, {"total": 40.0}, *RESULTS]
calls = picked(type=["tool.call"], tool=["ledger", "refund", "refund", "email", "ledger", "refund_all", ABSENT],
               call_id=["c1", "c2", "c3", ABSENT], args=[{"order": "A1"}, {"order": "A2"}, ABSENT])
results = picked(type=["tool.result"], call_id=["c1", "c2", "c1", "c3", ABSENT], ok=[True, ABSENT, False],
                 result=RESULTS, tool=[ABSENT, "ledger", ABSENT, "refund"])
outcomes = picked(type=["outcome.observed"], outcome_id=["fraud", "fraud", "other", ABSENT],
                  verdict=["violated", "satisfied", ABSENT])
notes = picked(type=["agent.message", "control.stop"])


@st.composite
def terminals(draw: st.DrawFn) -> dict[str, Any]:
    event = draw(picked(type=list(TERMINALS), status=[*N, *N, "completed", "failed", "awaiting_approval"]))
    output = draw(weighted((5, OUTPUTS), (1, st.just(ABSENT))))
    if output is not ABSENT:
        event["output"] = output
    return event


@st.composite
def pairs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A call followed at once by its result (so that `$from_result` often finds something)."""
    call = draw(picked(type=["tool.call"], tool=["ledger", "refund", "ledger", "refund"], call_id=["c1", "c2", "c3"]))
    result = draw(picked(type=["tool.result"], ok=[True, False, ABSENT], result=PAIR_RESULTS))
    return [call, {**result, "call_id": call["call_id"]}]


CHUNKS = weighted(*[(weight, st.lists(kind, min_size=1, max_size=1)) for weight, kind in (
    (3, calls), (2, results), (2, outcomes), (1, notes), (1, terminals()))], (3, pairs()))


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """≤ 12 events with increasing seqs (some gaps); most end with a terminal, some have none or two."""
    body = [event for chunk in draw(st.lists(CHUNKS, min_size=1, max_size=9)) for event in chunk][:11]
    tail = draw(st.sampled_from([True, True, True, False]))
    events = [*body, draw(terminals())] if tail else body
    gaps = draw(st.lists(st.sampled_from([1, 1, 2, 7]), min_size=len(events), max_size=len(events)))
    return [{"seq": sum(gaps[:i + 1]), **event} for i, event in enumerate(events)]


BASE_CONDITIONS = [
    {"path": "refunds", "non_empty": True},
    {"path": "total", "equals": 40},
    {"path": "flag", "equals": True},
    {"path": "meta.kind", "equals": "x"},
    {"path": "/meta/kind", "equals": "x"},
    {"path": "refunds.0", "equals": "A1"},
    {"path": "0", "equals": "A1"},
    {"path": "meta", "equals": {"kind": "x"}},
    {"path": "refunds", "equals": ["A1"]},
    {"path": "total", "matches": {"$gt": 41}},
    {"path": "meta", "matches": {"kind": {"$in": ["x", "z"]}}},
    {"path": "meta", "matches": {"kind": {"$exists": False}}},
    {"path": "meta.kind", "matches": {"$regex": "^x"}},
    {"path": "refunds", "matches": {"$contains": "A2"}},
    {"path": "meta", "matches": {"kind": "x"}},
    {"outcome": {"outcome_id": "fraud", "verdict": "violated"}},
    {"outcome": {"outcome_id": "fr*", "verdict": "satisfied"}},
]
base_conditions = st.sampled_from(BASE_CONDITIONS)


def combined(operands: st.SearchStrategy[Any], most: int) -> st.SearchStrategy[dict[str, Any]]:
    """`any_of` or `all_of` over 2..most operands."""
    return st.builds(lambda op, items: {op: items}, st.sampled_from(["any_of", "all_of"]),
                     st.lists(operands, min_size=2, max_size=most))


conditions = weighted((4, base_conditions),
                      (1, combined(st.one_of(base_conditions, combined(base_conditions, 2)), 3)))

REF = {"$from_result": {"tool": "ledger", "path": "total"}}
REFS = [REF, REF, {"$from_result": {"tool": "led*", "path": "total", "ok_only": False}},
        {"$from_result": {"tool": "ledger"}}]
PRICE = {"$from_result": {"tool": "ledger", "path": "items", "find": {"sku": "A1"}, "select": "price"}}
FIRST = {"$from_result": {"tool": "ledger", "call_index": 0, "path": "total"}}
SECOND = {"$from_result": {"tool": "l*", "call_index": 1, "path": "total", "ok_only": False}}
LENGTH = {"$from_result": {"tool": "ledger", "path": "totals", "length": True}}
PRICES = {"$from_result": {"tool": "ledger", "path": "items", "find": {"sku": "A1"}, "select": "price",
                           "length": True}}
TOTALS = [40, 40, 40.0, PRICE, FIRST, SECOND, {"$lt": FIRST}, {"$gt": 41}, {"$lte": 40}, {"$in": [40, 45]},
          {"$exists": True}, {"$literal": 40}, *REFS, {"$gte": REF},
          {"$in": {"$from_result": {"tool": "ledger", "path": "totals"}}}, {"$any_of": [REF, 45]}, {"$exists": False}]
PATTERN_VALUES = {     # references only here: `$arg` and `$from_output` are load errors in output rules
    "total": TOTALS,
    "refunds": [["A1"], [], {"$contains": "A2"}, {"$contains": {"$regex": "^A"}}, {"$exists": False},
                {"$exists": True}, ["A1", {"$regex": "2"}]],
    "count": [LENGTH, {"$gte": LENGTH}, PRICES, 2, {"$in": PRICE}],
    "meta": [{"kind": "x"}, {"kind": "x"}, {"kind": {"$regex": "^x"}}, {"kind": {"$any_of": ["x", "y"]}}, {},
             {"kind": {"$exists": False}}, {"$any_of": [{"kind": "y"}, {"kind": "x", "extra": 1}]}],
}


@st.composite
def patterns(draw: st.DrawFn) -> dict[str, Any]:
    """An object pattern on one or two of the output's keys."""
    keys = draw(st.lists(st.sampled_from(sorted(PATTERN_VALUES)), min_size=1, max_size=2, unique=True))
    return {key: draw(st.sampled_from(PATTERN_VALUES[key])) for key in keys}


run_status_rules = st.one_of(
    picked(id=["r"], kind=["run_status"], equals=["completed", "completed", "failed", "awaiting_approval", "none"]),
    st.builds(lambda values: {"id": "r", "kind": "run_status", "in": values},
              st.lists(st.sampled_from(["completed", "failed", "awaiting_approval", "none", "partial"]),
                       min_size=1, max_size=3, unique=True)))


@st.composite
def output_match_rules(draw: st.DrawFn) -> dict[str, Any]:
    spec = {"id": "r", "kind": "output_match", "match": draw(patterns())}
    mode = draw(st.sampled_from([ABSENT, ABSENT, "subset", "exact"]))
    if mode is not ABSENT:
        spec["mode"] = mode
    if mode == "exact" and draw(st.booleans()):
        spec["ignore"] = draw(st.sampled_from([["note"], ["flag", "note"]]))
    if draw(st.integers(0, 2)) == 0:
        spec["when"] = draw(conditions)
    return spec


TOOLS = ["refund", "refund", "email", "ref*", "*", "refun?"]


@st.composite
def required_when_rules(draw: st.DrawFn) -> dict[str, Any]:
    spec = {"id": "r", "kind": "required_when", "tool": draw(st.sampled_from(TOOLS)), "when": draw(conditions)}
    spec.update(draw(picked(min=[ABSENT, 2, 1], count=["successful", ABSENT, "calls"], iff=[True, ABSENT, False])))
    return spec


@st.composite
def forbidden_when_rules(draw: st.DrawFn) -> dict[str, Any]:
    return {"id": "r", "kind": "forbidden_when", "tool": draw(st.sampled_from(TOOLS)), "when": draw(conditions)}


# -- comparing --------------------------------------------------------------------------------------

def agree(spec: dict[str, Any], events: list[dict[str, Any]]) -> None:
    report = msgspec.to_builtins(check_trace({"version": 2, "name": "prop", "rules": [spec]}, events))
    (result,) = report["results"]
    expected = model(spec, events)
    actual = [(v.get("event_seq"), v["code"], v["status"]) for v in result["violations"]]
    assert actual == expected.violations, (actual, expected.violations)
    for violation, evidence in zip(result["violations"], expected.evidence, strict=True):
        assert {k: violation["evidence"].get(k) for k in evidence} == evidence, violation["evidence"]
    if expected.mismatches is not None:        # point 7 (their order is not specified)
        (mismatch,) = [v for v in result["violations"] if v["code"] == "output_match.mismatch"]
        entries = {m["pointer"]: m for m in mismatch["evidence"]["mismatches"]}
        assert entries.keys() == expected.mismatches.keys(), entries
        assert all(same(entries[p], expected.mismatches[p]) for p in entries), (entries, expected.mismatches)
    if expected.unresolved is not None:
        (unresolved,) = [v for v in result["violations"] if v["code"] == "output_match.reference_unresolved"]
        assert same(sorted(unresolved["evidence"]["unresolved"], key=lambda u: u["pointer"]),
                    sorted(expected.unresolved, key=lambda u: u["pointer"])), unresolved["evidence"]
    assert result["checked"] == expected.checked
    assert result["passed"] is report["passed"] is (expected.violations == [])
    # point 6: every violation, unresolved or not, is an error of an error-severity rule
    assert (report["error_count"], report["warning_count"]) == (len(expected.violations), 0)
    assert report["violations"] == result["violations"]
    # point 4: only forbidden_when may be vacuous (checked 0); a false `when` skips output_match unvacuously
    assert result.get("vacuous", False) is (spec["kind"] == "forbidden_when" and expected.checked == 0)
    assert all(v["event_index"] == [e["seq"] for e in events].index(v["event_seq"])
               for v in result["violations"] if "event_seq" in v)
    assert all("event_index" not in v for v in result["violations"] if "event_seq" not in v)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=run_status_rules, events=traces())
def test_run_status_agrees_with_the_model(spec, events):
    agree(spec, events)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=output_match_rules(), events=traces())
def test_output_match_agrees_with_the_model(spec, events):
    agree(spec, events)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=required_when_rules(), events=traces())
def test_required_when_agrees_with_the_model(spec, events):
    agree(spec, events)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=forbidden_when_rules(), events=traces())
def test_forbidden_when_agrees_with_the_model(spec, events):
    agree(spec, events)
