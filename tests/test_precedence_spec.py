"""`precedence` (contract version 2), tested from the spec's words (spec v2 §0, §2, §3.3 and §10
points 1-7, 13, 15 and 19, with the decisions taken for what they leave open) through the CLI on real
files: the §3.3 example in its FAIL and PASS variants, each scope and code, the window, correlate in
both shapes and as a composite key, paths, the self-matching event, results read through their
calls, matcher keys, `checked`/`vacuous`, placement, order and evidence, and the load errors (each
one stderr line naming the contract file and the JSON path of the mistake, exit 2).

A property test (slow) compares the public API with a small reference model written from the same
text on random short traces.

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import check_trace

from support import at, examples, refused_line, under, write_contract, write_trace

ABSENT: Any = object()

GET_OK = {"type": "tool.result", "tool": "get", "ok": True}     # "a successful get" (end of §2)
REFUND = {"type": "tool.call", "tool": "refund"}
BY_ID = [{"before": "id", "after": "order"}]
CODE_ORDER = ("missing", "late", "out_of_window", "correlate_missing", "before_after_action")


# -- helpers --------------------------------------------------------------------------------------

def call(tool: str, args: Any = ABSENT, call_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """A `tool.call`; `args` left out when ABSENT, `call_id` when None."""
    event: dict[str, Any] = {"type": "tool.call", "tool": tool}
    if call_id is not None:
        event["call_id"] = call_id
    if args is not ABSENT:
        event["args"] = args
    return {**event, **extra}


def res(call_id: str, ok: bool | None = True, **extra: Any) -> dict[str, Any]:
    """A `tool.result` without a tool of its own (unless given in `extra`); `ok` left out when None."""
    event: dict[str, Any] = {"type": "tool.result", "call_id": call_id}
    if ok is not None:
        event["ok"] = ok
    return {**event, **extra}


def lookup(call_id: str, key: Any = ABSENT, ok: bool = True) -> list[dict[str, Any]]:
    """A `get` call with args {"id": key} (no args when ABSENT) and its result."""
    return [call("get", ABSENT if key is ABSENT else {"id": key}, call_id), res(call_id, ok)]


def refund(order: Any = ABSENT, call_id: str | None = None) -> dict[str, Any]:
    """A `refund` call with args {"order": order} (no args when ABSENT)."""
    return call("refund", ABSENT if order is ABSENT else {"order": order}, call_id)


def msg() -> dict[str, Any]:
    return {"type": "agent.message"}


def rule(**fields: Any) -> dict[str, Any]:
    """A precedence rule: a successful get before each refund call, unless told otherwise."""
    return {"id": "r", "kind": "precedence", "before": GET_OK, "after": REFUND, **fields}


def evidence(scope: str = "each", before: Any = GET_OK, after: Any = REFUND, **more: Any) -> dict[str, Any]:
    return {"before": before, "after": after, "scope": scope, **more}


def flat(*parts: Any) -> tuple[dict[str, Any], ...]:
    """Events and lists of events, flattened in order."""
    out: list[dict[str, Any]] = []
    for part in parts:
        out.extend(part if isinstance(part, list) else [part])
    return tuple(out)


@dataclass
class Run:
    exit: int
    stdout: str
    report: dict[str, Any]

    @property
    def result(self) -> dict[str, Any]:
        return self.report["results"][0]

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.result["violations"]

    def brief(self) -> list[tuple[Any, ...]]:
        """(code, event_seq, related_seqs) per violation; None where absent."""
        return [(v["code"], v.get("event_seq"), v.get("related_seqs")) for v in self.violations]

    def places(self) -> list[tuple[Any, Any]]:
        return [(v.get("event_seq"), v.get("event_index")) for v in self.violations]

    def statuses(self) -> list[str]:
        return [v["status"] for v in self.violations]


def P(code: str) -> str:     # noqa: N802 - reads like the code it names
    return f"precedence.{code}"


@pytest.fixture
def run(cli, tmp_path):
    """run(rule or [rules], *events (lists are flattened), version=2) -> Run, from `check --format json`."""
    def _run(rules: Any, *events: Any, version: int = 2) -> Run:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, flat(*events))
        result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
        assert result.returncode in (0, 1), result.stderr
        return Run(result.returncode, result.stdout, json.loads(result.stdout))
    return _run


@pytest.fixture
def refused(cli, tmp_path):
    """refused(rules, version=2) -> the one stderr line of a refused contract (exit 2, no stdout)."""
    def _refused(rules: Any, version: int = 2) -> str:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, flat(lookup("c1", "A1"), refund("A1", "c2")))
        return refused_line(cli)
    return _refused



def passes(out: Run) -> None:
    assert (out.exit, out.result["passed"], out.violations) == (0, True, []), out.brief()


def ordered(value: Any) -> bool:
    """Every object's keys in RFC 8785 order (the keys here are ASCII, so: sorted)."""
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(ordered(item) for item in value.values())
    if isinstance(value, list):
        return all(ordered(item) for item in value)
    return True


# -- §3.3: the example ----------------------------------------------------------------------------

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


def test_example_fails_late_at_seq_3_with_key_b2_and_related_seq_5(run):
    out = run(EXAMPLE_RULE, *EXAMPLE_TRACE)
    assert out.exit == 1
    assert out.brief() == [(P("late"), 3, [5])]
    (violation,) = out.violations
    assert (violation["event_index"], violation["status"]) == (2, "fail")
    assert (violation["rule_id"], violation["rule_kind"], violation["severity"]) == (
        "lookup-first", "precedence", "error")
    assert isinstance(violation["message"], str) and violation["message"]
    assert violation["evidence"] == {"before": EXAMPLE_RULE["before"], "after": EXAMPLE_RULE["after"],
                                     "scope": "each", "key": ["B2"]}
    assert ordered(violation["evidence"])
    assert (out.result["passed"], out.result["checked"]) == (False, 1)
    assert "vacuous" not in out.result
    assert (out.report["passed"], out.report["error_count"], out.report["warning_count"]) == (False, 1, 0)
    assert out.report["violations"] == out.violations


def test_example_passes_when_the_refund_comes_after_seq_5(run):
    trace = [*EXAMPLE_TRACE[:2], *EXAMPLE_TRACE[3:], {**EXAMPLE_TRACE[2], "seq": 6}]
    out = run(EXAMPLE_RULE, *trace)
    passes(out)
    assert out.result["checked"] == 1 and "vacuous" not in out.result
    assert (out.report["passed"], out.report["error_count"]) == (True, 0)


# -- scopes ---------------------------------------------------------------------------------------

# refund(1), get(2) + result(3), refund(4), two messages, refund(7); window 2 (positions 0..6).
SCOPE_TRACE = flat(refund(call_id="r1"), lookup("g1"), refund(call_id="r2"), msg(), msg(), refund(call_id="r3"))


@pytest.mark.parametrize(("scope", "expected", "checked"), [
    # each (the default): every after; seq 1 has only a later before, seq 4 is 1 back, seq 7 is 4 back
    (None, [(P("late"), 1, [3]), (P("out_of_window"), 7, [3])], 3),
    ("each", [(P("late"), 1, [3]), (P("out_of_window"), 7, [3])], 3),
    # first: only the first after is checked
    ("first", [(P("late"), 1, [3])], 1),
    # all: as each, and the before after the first after (seq 1) is flagged at that before
    ("all", [(P("late"), 1, [3]), (P("before_after_action"), 3, [1]), (P("out_of_window"), 7, [3])], 3),
])
def test_each_scope_checks_its_afters(run, scope, expected, checked):
    fields = {"within_events": 2} if scope is None else {"within_events": 2, "scope": scope}
    out = run(rule(**fields), *SCOPE_TRACE)
    assert out.brief() == expected
    assert out.result["checked"] == checked
    assert {json.dumps(v["evidence"], sort_keys=True) for v in out.violations} == {
        json.dumps(evidence(scope or "each"), sort_keys=True)}
    assert set(out.statuses()) == {"fail"}


# refund {} (1), refund A1 (2), get A1 (3) + result (4), refund A1 (5), refund without args (6), refund B2 (7)
UNKEYED_TRACE = flat(call("refund", {}, "r1"), refund("A1", "r2"), lookup("g1", "A1"), refund("A1", "r3"),
                     refund(call_id="r4"), refund("B2", "r5"))


@pytest.mark.parametrize(("scope", "expected", "checked"), [
    ("each", [(P("correlate_missing"), 1, None), (P("late"), 2, [4]), (P("correlate_missing"), 6, None),
              (P("missing"), 7, None)], 5),
    # first: the first after with a resolved key in each group (seq 2 for A1, seq 7 for B2), plus
    # every unkeyed after (seq 1 and 6) -- seq 1 being the trace's first after does not use up "first"
    ("first", [(P("correlate_missing"), 1, None), (P("late"), 2, [4]), (P("correlate_missing"), 6, None),
               (P("missing"), 7, None)], 4),
    ("all", [(P("correlate_missing"), 1, None), (P("late"), 2, [4]), (P("before_after_action"), 4, [2]),
             (P("correlate_missing"), 6, None), (P("missing"), 7, None)], 5),
])
def test_correlate_missing_for_every_unkeyed_after_whatever_the_scope(run, scope, expected, checked):
    out = run(rule(scope=scope, correlate=BY_ID), *UNKEYED_TRACE)
    assert out.brief() == expected
    assert out.result["checked"] == checked
    unkeyed = [v for v in out.violations if v["code"] == P("correlate_missing")]
    assert [(v["status"], v["pointer"]) for v in unkeyed] == [("unresolved", "/args/order"), ("unresolved", "/args")]
    assert [v["evidence"] for v in unkeyed] == [evidence(scope, missing=["order"])] * 2
    keyed = [v for v in out.violations if v["code"] != P("correlate_missing")]
    assert {v["status"] for v in keyed} == {"fail"}
    assert {v["code"]: v["evidence"] for v in keyed}[P("late")] == evidence(scope, key=["A1"])
    assert {v["code"]: v["evidence"] for v in keyed}[P("missing")] == evidence(scope, key=["B2"])


def test_first_checks_the_first_after_of_each_group(run):
    # A1: refunds at 1 and 2 before any lookup, B2: a lookup (3, 4) then refunds at 5 and 6.
    trace = (refund("A1", "r1"), refund("A1", "r2"), *lookup("g1", "B2"), refund("B2", "r3"), refund("B2", "r4"))
    out = run(rule(scope="first", correlate=BY_ID), *trace)
    assert out.brief() == [(P("missing"), 1, None)]
    assert out.result["checked"] == 2
    out = run(rule(scope="each", correlate=BY_ID), *trace)
    assert out.brief() == [(P("missing"), 1, None), (P("missing"), 2, None)]
    assert out.result["checked"] == 4


def test_all_flags_every_later_before_of_the_group_at_that_before(run):
    trace = flat(lookup("g1", "A1"), refund("A1", "r1"), lookup("g2", "B2"), lookup("g3", "A1"),
                 refund("B2", "r2"), lookup("g4", "A1"))
    # A1's first after is seq 3: its befores at seq 7 and 10 come after it; B2's before (5)
    # precedes B2's first after (8) and A1's first after does not concern it.
    out = run(rule(scope="all", correlate=BY_ID), *trace)
    assert out.brief() == [(P("before_after_action"), 7, [3]), (P("before_after_action"), 10, [3])]
    assert out.places() == [(7, 6), (10, 9)]
    assert [v["evidence"] for v in out.violations] == [evidence("all", key=["A1"])] * 2
    assert set(out.statuses()) == {"fail"}
    assert out.result["checked"] == 2
    passes(run(rule(scope="each", correlate=BY_ID), *trace))


# -- codes ----------------------------------------------------------------------------------------

def test_missing_when_the_group_has_no_before_at_all(run):
    # B2 is looked up; A1's lookup failed (ok false), and a get call is not a result.
    trace = flat(lookup("g1", "B2"), lookup("g2", "A1", ok=False), refund("A1", "r1"))
    out = run(rule(correlate=BY_ID), *trace)
    assert out.brief() == [(P("missing"), 5, None)]
    (violation,) = out.violations
    assert "related_seqs" not in violation
    assert (violation["status"], violation["event_index"]) == ("fail", 4)
    assert violation["evidence"] == evidence(key=["A1"])


def test_late_points_at_the_first_later_before_of_the_group(run):
    trace = flat(refund("A1", "r1"), lookup("g1", "B2"), lookup("g2", "A1"), lookup("g3", "A1"))
    out = run(rule(correlate=BY_ID), *trace)
    assert out.brief() == [(P("late"), 1, [5])]
    assert out.violations[0]["evidence"] == evidence(key=["A1"])


def test_late_does_not_look_at_the_window(run):
    out = run(rule(within_events=1), refund(call_id="r1"), msg(), msg(), *lookup("g1"))
    assert out.brief() == [(P("late"), 1, [5])]


def test_the_window_counts_positions_not_seqs(run):
    # positions 0..3; the result (seq 20, position 1) is 2 positions before the refund (seq 40, position 3)
    trace = ({"seq": 10, **call("get", call_id="g1")}, {"seq": 20, **res("g1")}, {"seq": 30, **msg()},
             {"seq": 40, **refund(call_id="r1")})
    passes(run(rule(within_events=2), *trace))
    out = run(rule(within_events=1), *trace)
    assert out.brief() == [(P("out_of_window"), 40, [20])]
    assert out.places() == [(40, 3)]
    assert out.violations[0]["status"] == "fail"
    assert out.violations[0]["evidence"] == evidence()       # no correlate: no key


def test_the_nearest_earlier_before_decides_and_the_boundary_passes(run):
    # befores at positions 1 and 3 (seq 2 and 4), the refund at position 5: 2 back from the nearest
    trace = flat(lookup("g1"), lookup("g2"), msg(), refund(call_id="r1"))
    out = run(rule(within_events=2), *trace)
    passes(out)
    assert out.result["checked"] == 1
    out = run(rule(within_events=1), *trace)
    assert out.brief() == [(P("out_of_window"), 6, [4])]


def test_an_earlier_before_out_of_the_window_is_out_of_window_even_with_a_later_one(run):
    trace = flat(lookup("g1"), msg(), msg(), refund(call_id="r1"), lookup("g2"))
    out = run(rule(within_events=2), *trace)
    assert out.brief() == [(P("out_of_window"), 5, [2])]


def test_window_bounds_1_and_100000_load(run):
    trace = flat(lookup("g1"), refund(call_id="r1"))
    passes(run(rule(within_events=1), *trace))
    passes(run(rule(within_events=100_000), lookup("g1"), *[msg() for _ in range(30)], refund(call_id="r1")))


def test_correlate_missing_lists_the_absent_after_paths_and_points_at_the_first(run):
    correlate = ["order", {"before": "id", "after": "line.no"}]
    trace = (call("refund", {"order": "A1"}, "r1"), call("refund", {"line": {"no": 1}}, "r2"),
             call("refund", {}, "r3"), refund(call_id="r4"))
    out = run(rule(correlate=correlate), *trace)
    assert out.brief() == [(P("correlate_missing"), seq, None) for seq in (1, 2, 3, 4)]
    assert out.places() == [(1, 0), (2, 1), (3, 2), (4, 3)]
    assert set(out.statuses()) == {"unresolved"}
    assert [v["pointer"] for v in out.violations] == ["/args/line/no", "/args/order", "/args/order", "/args"]
    assert [v["evidence"] for v in out.violations] == [
        evidence(missing=["line.no"]), evidence(missing=["order"]),
        evidence(missing=["order", "line.no"]), evidence(missing=["order", "line.no"])]
    assert (out.exit, out.result["passed"], out.result["checked"], out.report["error_count"]) == (1, False, 4, 4)


def test_an_unresolved_violation_of_a_warning_rule_counts_as_a_warning(run):
    out = run(rule(correlate=BY_ID, severity="warning"), refund(call_id="r1"))
    assert out.brief() == [(P("correlate_missing"), 1, None)]
    assert (out.violations[0]["severity"], out.violations[0]["status"]) == ("warning", "unresolved")
    assert (out.exit, out.result["passed"], out.report["error_count"], out.report["warning_count"]) == (0, False, 0, 1)


def test_a_before_lacking_a_correlate_path_is_ignored(run):
    # lookups without args and with args lacking `id` are no befores, before or after the refund
    trace = flat(lookup("g1"), [call("get", {"sku": "A1"}, "g2"), res("g2")], refund("A1", "r1"), lookup("g3"))
    out = run(rule(correlate=BY_ID), *trace)
    assert out.brief() == [(P("missing"), 5, None)]
    out = run(rule(correlate=BY_ID, scope="all"), *trace)
    assert out.brief() == [(P("missing"), 5, None)]
    assert out.result["checked"] == 1


# -- correlate ------------------------------------------------------------------------------------

def test_a_plain_correlate_path_reads_the_same_path_on_both_sides(run):
    trace = ([call("get", {"order": "A1"}, "g1"), res("g1")], refund("A1", "r1"), refund("B2", "r2"))
    out = run(rule(correlate=["order"]), *flat(*trace))
    assert out.brief() == [(P("missing"), 4, None)]
    assert out.violations[0]["evidence"] == evidence(key=["B2"])


def test_several_correlate_paths_form_one_composite_key(run):
    correlate = ["order", {"before": "line_no", "after": "line"}]
    trace = flat([call("get", {"order": "A1", "line_no": 1}, "g1"), res("g1")],
                 call("refund", {"order": "A1", "line": 1}, "r1"), call("refund", {"order": "A1", "line": 2}, "r2"),
                 call("refund", {"order": "B2", "line": 1}, "r3"))
    out = run(rule(correlate=correlate), *trace)
    assert out.brief() == [(P("missing"), 4, None), (P("missing"), 5, None)]
    assert [v["evidence"]["key"] for v in out.violations] == [["A1", 2], ["B2", 1]]


def test_correlate_values_group_by_canonical_json(run):
    trace = flat(lookup("g1", 1.0), lookup("g2", {"a": 1, "b": [1, 2]}),
                 refund(1, "r1"), refund("1", "r2"), refund(True, "r3"), refund({"b": [1, 2], "a": 1}, "r4"),
                 refund({"a": 1}, "r5"))
    out = run(rule(correlate=BY_ID), *trace)
    # 1 = 1.0 and key order does not matter; "1", true and a subset object are other keys
    assert out.brief() == [(P("missing"), 6, None), (P("missing"), 7, None), (P("missing"), 9, None)]
    assert [json.dumps(v["evidence"]["key"]) for v in out.violations] == ['["1"]', "[true]", '[{"a": 1}]']


def test_ten_correlate_items_load(run):
    names = [f"k{i}" for i in range(10)]
    values = {name: i for i, name in enumerate(names)}
    trace = flat([call("get", values, "g1"), res("g1")], call("refund", values, "r1"),
                 call("refund", {**values, "k9": 99}, "r2"))
    out = run(rule(correlate=names), *trace)
    assert out.brief() == [(P("missing"), 4, None)]
    assert out.violations[0]["evidence"]["key"] == [*range(9), 99]


# -- paths (§2, point 13) -------------------------------------------------------------------------

def test_dot_paths_and_json_pointers_read_the_args(run):
    correlate = [{"before": "customer.id", "after": "/customer/id"}, {"before": "items.0", "after": "/items/0"}]
    trace = flat([call("get", {"customer": {"id": "A1"}, "items": ["x"]}, "g1"), res("g1")],
                 call("refund", {"customer": {"id": "A1"}, "items": ["x", "y"]}, "r1"),    # pass
                 call("refund", {"customer": {"id": "A1"}, "items": ["z"]}, "r2"),         # other key
                 call("refund", {"customer": {"id": "A1"}}, "r3"),                         # no items
                 call("refund", {"customer": {"id": "A1"}, "items": {"0": "x"}}, "r4"),    # "0" on an object is a key
                 call("refund", {"customer": "A1", "items": ["x"]}, "r5"))                 # no /customer/id
    out = run(rule(correlate=correlate), *trace)
    assert out.brief() == [(P("missing"), 4, None), (P("correlate_missing"), 5, None),
                           (P("correlate_missing"), 7, None)]
    assert out.violations[0]["evidence"]["key"] == ["A1", "z"]
    assert [(v["pointer"], v["evidence"]["missing"]) for v in out.violations[1:]] == [
        ("/args/items/0", ["/items/0"]), ("/args/customer/id", ["/customer/id"])]


def test_pointer_escapes_and_a_dot_path_holding_a_slash(run):
    correlate = [{"before": "/a~1b", "after": "a/b"}]
    trace = flat([call("get", {"a/b": "K"}, "g1"), res("g1")], call("refund", {"a/b": "K"}, "r1"),
                 call("refund", {"a": {"b": "K"}}, "r2"))
    out = run(rule(correlate=correlate), *trace)
    assert out.brief() == [(P("correlate_missing"), 4, None)]
    assert (out.violations[0]["pointer"], out.violations[0]["evidence"]["missing"]) == ("/args/a~1b", ["a/b"])


def test_a_null_value_is_found_and_is_a_key(run):
    out = run(rule(correlate=BY_ID), *lookup("g1", None), refund(None, "r1"), refund("A1", "r2"))
    assert out.brief() == [(P("missing"), 4, None)]
    assert out.result["checked"] == 2


# -- the self-matching event ----------------------------------------------------------------------

GET_ANY = {"tool": "get"}
ANY_CALL = {"type": "tool.call"}


def test_an_event_matching_both_matchers_is_not_its_own_predecessor(run):
    out = run(rule(before=GET_ANY, after=ANY_CALL), call("get", call_id="g1"))
    assert out.brief() == [(P("missing"), 1, None)]
    assert out.violations[0]["evidence"] == evidence(before=GET_ANY, after=ANY_CALL)
    out = run(rule(before=GET_ANY, after=ANY_CALL), call("get", call_id="g1"), call("get", call_id="g2"))
    assert out.brief() == [(P("late"), 1, [2])]
    assert out.result["checked"] == 2


# -- results read through their calls (end of §2, point 3) ----------------------------------------

def test_a_paired_results_own_tool_is_ignored(run):
    # the result carries tool "refund" but answers a get: it is a successful get
    passes(run(rule(correlate=BY_ID), call("get", {"id": "A1"}, "g1"), res("g1", tool="refund"), refund("A1", "r1")))
    # the result carries tool "get" but answers another tool: it is not
    out = run(rule(correlate=BY_ID), call("find", {"id": "A1"}, "f1"), res("f1", tool="get"), refund("A1", "r1"))
    assert out.brief() == [(P("missing"), 3, None)]


def test_an_orphan_result_keeps_its_own_tool_and_has_no_args(run):
    passes(run(rule(), res("zz", tool="get"), refund(call_id="r1")))
    out = run(rule(correlate=BY_ID), res("zz", tool="get"), refund("A1", "r1"))
    assert out.brief() == [(P("missing"), 2, None)]


def test_a_result_before_its_call_is_an_orphan(run):
    out = run(rule(), res("g1"), call("get", {"id": "A1"}, "g1"), refund("A1", "r1"))
    assert out.brief() == [(P("missing"), 3, None)]


def test_results_pair_one_to_one_with_the_nearest_earlier_waiting_call(run):
    # result 3 answers the B2 call (seq 2), result 4 (failed) the A1 call (seq 1)
    trace = (call("get", {"id": "A1"}, "c1"), call("get", {"id": "B2"}, "c1"), res("c1"), res("c1", ok=False),
             refund("B2", "r1"), refund("A1", "r2"))
    out = run(rule(correlate=BY_ID), *trace)
    assert out.brief() == [(P("missing"), 6, None)]
    assert out.violations[0]["evidence"]["key"] == ["A1"]


def test_an_after_matching_results_reads_its_calls_tool_and_args(run):
    after = {"type": "tool.result", "tool": "refund"}
    trace = flat(lookup("g1", "A1"), refund("A1", "r1"), res("r1"), refund("B2", "r2"), res("r2"))
    out = run(rule(after=after, correlate=BY_ID), *trace)
    assert out.brief() == [(P("missing"), 6, None)]
    assert out.places() == [(6, 5)]
    assert out.violations[0]["evidence"] == evidence(after=after, key=["B2"])
    assert out.result["checked"] == 2


# -- matcher keys under v2 (end of §2, point 15) --------------------------------------------------

def test_matcher_args_select_events_and_read_a_results_call(run):
    before = {"type": "tool.result", "tool": "get", "args": {"id": {"$regex": "^A"}}}
    after = {"type": "tool.call", "tool": "refund", "args": {"amount": {"$gt": 100}}}
    trace = flat(lookup("g1", "B2"), call("refund", {"amount": 50}, "r1"), call("refund", {"amount": 500}, "r2"),
                 refund(call_id="r3"), lookup("g2", "A7"), call("refund", {"amount": 500}, "r4"))
    # seq 4: B2's result is no before (args), the refund of 50 and the one without args no afters;
    # A7's result (seq 7) is the only before
    out = run(rule(before=before, after=after), *trace)
    assert out.brief() == [(P("late"), 4, [7])]
    assert out.violations[0]["evidence"] == evidence(before=before, after=after)
    assert out.result["checked"] == 2


def test_matcher_reason_and_status_are_globs_on_the_events_own_fields(run):
    before = {"type": "approval.revoked", "reason": "user*"}
    after = {"type": "run.completed", "status": "complete?"}
    trace = ({"type": "approval.revoked", "reason": "budget"},
             {"type": "run.completed"},                          # no status of its own: not an after
             {"type": "run.completed", "status": "completed"},
             {"type": "approval.revoked", "reason": "user cancel"},
             {"type": "run.completed", "status": "completed"})
    # seq 3: the revocation for "budget" (seq 1) is no before; seq 5 has seq 4 before it
    out = run(rule(before=before, after=after), *trace)
    assert out.brief() == [(P("late"), 3, [4])]
    assert out.result["checked"] == 2


# -- checked and vacuous (point 4) ----------------------------------------------------------------

def test_a_rule_without_afters_passes_vacuously(run):
    out = run(rule(correlate=BY_ID, scope="all"), *lookup("g1", "A1"), *lookup("g2", "A1"), call("find", {}, "f1"))
    passes(out)
    assert (out.result["checked"], out.result["vacuous"]) == (0, True)


# -- order (point 5) ------------------------------------------------------------------------------

def test_violations_at_one_event_follow_the_code_order(run):
    # The get call (seq 2) is an after and a before: as an after it has no other before (missing);
    # as a before it comes after the first after (seq 1).
    out = run(rule(before=GET_ANY, after=ANY_CALL, scope="all"), refund(call_id="r1"), call("get", call_id="g1"))
    assert out.brief() == [(P("late"), 1, [2]), (P("missing"), 2, None), (P("before_after_action"), 2, [1])]
    assert out.places() == [(1, 0), (2, 1), (2, 1)]
    assert out.result["checked"] == 2
    # get call (1) + its result (2), refund (3), message, get call (5); window 2
    trace = (call("get", call_id="g1"), res("g1"), refund(call_id="r1"), msg(), call("get", call_id="g2"))
    out = run(rule(before=GET_ANY, after=ANY_CALL, scope="all", within_events=2), *trace)
    assert out.brief() == [(P("late"), 1, [2]), (P("before_after_action"), 2, [1]),
                           (P("out_of_window"), 5, [2]), (P("before_after_action"), 5, [1])]
    assert out.result["checked"] == 3


def test_violations_follow_event_position(run):
    trace = flat(refund("A1", "r1"), refund(call_id="r2"), lookup("g1", "A1"), msg(), refund("A1", "r3"),
                 refund("B2", "r4"))
    out = run(rule(correlate=BY_ID, within_events=1, scope="all"), *trace)
    assert out.brief() == [(P("late"), 1, [4]), (P("correlate_missing"), 2, None),
                           (P("before_after_action"), 4, [1]), (P("out_of_window"), 6, [4]), (P("missing"), 7, None)]
    assert [v["event_index"] for v in out.violations] == [0, 1, 3, 5, 6]


def test_top_level_violations_follow_contract_order(run):
    second = {**rule(before={"type": "tool.call", "tool": "get"}), "id": "r2"}
    out = run([rule(), second], refund(call_id="r1"), *lookup("g1"))
    assert [(v["rule_id"], v["code"], v["event_seq"]) for v in out.report["violations"]] == [
        ("r", P("late"), 1), ("r2", P("late"), 1)]
    assert [v.get("related_seqs") for v in out.report["violations"]] == [[3], [2]]


# -- load errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("correlate", [[], [f"k{i}" for i in range(11)]], ids=["empty", "11-items"])
def test_correlate_needs_1_to_10_items(refused, correlate):
    assert at(refused(rule(correlate=correlate)), "$.rules[0].correlate")


@pytest.mark.parametrize("item", ["", "a..b", {"before": "", "after": "order"}, {"before": "id", "after": "a..b"}],
                         ids=["empty", "empty-segment", "empty-before", "empty-segment-after"])
def test_a_correlate_path_that_is_not_a_path_is_refused(refused, item):
    assert under(refused(rule(correlate=[item])), "$.rules[0].correlate[0]")


@pytest.mark.parametrize("item", [{"before": "id"}, {"after": "order"},
                                  {"before": "id", "after": "order", "also": "x"}, 5],
                         ids=["no-after", "no-before", "extra-key", "not-a-path"])
def test_a_correlate_item_is_a_path_or_an_object_of_both_sides(refused, item):
    assert under(refused(rule(correlate=["order", item])), "$.rules[0].correlate[1]")


@pytest.mark.parametrize("value", [0, 100_001])
def test_within_events_outside_1_to_100000_is_refused(refused, value):
    assert at(refused(rule(within_events=value)), "$.rules[0].within_events")


def test_an_unknown_scope_is_refused(refused):
    assert at(refused(rule(scope="any")), "$.rules[0].scope")


@pytest.mark.parametrize("side", ["before", "after"])
def test_a_matcher_without_keys_is_refused(refused, side):
    assert at(refused(rule(**{side: {}})), f"$.rules[0].{side}")


def test_precedence_in_a_version_1_contract_needs_version_2(refused):
    line = refused(rule(), version=1)
    assert 'needs "version": 2' in line and at(line, "$.rules[0].kind")


# -- property: the API against a reference model (slow) -------------------------------------------

MATCHER_PAIRS = [
    (GET_OK, REFUND),
    (GET_ANY, ANY_CALL),                                                    # a get call matches both
    ({"type": "tool.call", "tool": "get"}, {"type": "tool.result", "tool": "refund", "ok": True}),
]
CORRELATES = [None, BY_ID, ["id"]]
VALUES = st.sampled_from(["A1", "B2"])
CALL_IDS = st.sampled_from(["c1", "c2"])


def call_args(own: str, other: str) -> st.SearchStrategy[Any]:
    """Mostly {own: X}; sometimes no args, or the other tool's key."""
    return st.one_of(VALUES.map(lambda x: {own: x}), st.just(ABSENT), VALUES.map(lambda x: {other: x}))


calls = st.one_of(st.builds(lambda args, call_id: call("get", args, call_id), call_args("id", "order"), CALL_IDS),
                  st.builds(lambda args, call_id: call("refund", args, call_id), call_args("order", "id"), CALL_IDS))
RESULT_IDS = st.sampled_from(["c1", "c2", "c1", "c2", "c9"])     # c9: an orphan
results = st.builds(lambda call_id, ok, tool: res(call_id, ok, **({} if tool is None else {"tool": tool})),
                    RESULT_IDS, st.booleans(), st.sampled_from([None, "get", "refund"]))
trace_events = st.lists(st.one_of(calls, results, calls, results, st.just(msg())), min_size=4, max_size=12)


def effective(trace: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """(tool, args) per event as new kinds read them: a result's are its call's (point 3), an
    orphan result keeps its own tool and has no args."""
    waiting: list[int] = []
    out: list[tuple[Any, Any]] = []
    for event in trace:
        if event["type"] == "tool.result":
            paired = next((k for k in reversed(waiting) if trace[k].get("call_id") == event.get("call_id")), None)
            if paired is None:
                out.append((event.get("tool", ABSENT), ABSENT))
            else:
                waiting.remove(paired)
                out.append((trace[paired].get("tool", ABSENT), trace[paired].get("args", ABSENT)))
        else:
            if event["type"] == "tool.call":
                waiting.append(len(out))
            out.append((event.get("tool", ABSENT), event.get("args", ABSENT)))
    return out


def model(before: dict[str, Any], after: dict[str, Any], scope: str, correlate: Any, within: int | None,
          trace: list[dict[str, Any]]) -> tuple[list[tuple[Any, ...]], int]:
    """§3.3 with point 19: ([(code, event_seq, related_seqs)], checked)."""
    eff = effective(trace)
    seqs = [event["seq"] for event in trace]

    def matches(matcher: dict[str, Any], i: int) -> bool:
        tool, _ = eff[i]
        return all({"type": trace[i]["type"] == value, "tool": tool is not ABSENT and tool == value,
                    "ok": trace[i].get("ok", ABSENT) is value}[key] for key, value in matcher.items())

    def key(i: int, side: str) -> tuple[Any, ...] | None:
        if correlate is None:
            return ()
        _, args = eff[i]
        values = []
        for item in correlate:
            path = item if isinstance(item, str) else item[side]
            if args is ABSENT or path not in args:
                return None
            values.append(args[path])
        return tuple(values)

    befores: dict[tuple[Any, ...], list[int]] = {}
    for j in range(len(trace)):
        if matches(before, j) and (k := key(j, "before")) is not None:
            befores.setdefault(k, []).append(j)
    found: list[tuple[int, str, Any]] = []      # (index, code, related)
    checked = 0
    first_after: dict[tuple[Any, ...], int] = {}
    for i in range(len(trace)):
        if not matches(after, i):
            continue
        k = key(i, "after")
        if k is None:
            checked += 1
            found.append((i, "correlate_missing", None))
            continue
        seen = k in first_after
        first_after.setdefault(k, i)
        if scope == "first" and seen:
            continue
        checked += 1
        group = befores.get(k, [])
        earlier = [j for j in group if j < i]
        later = [j for j in group if j > i]
        if earlier:
            if within is not None and i - earlier[-1] > within:
                found.append((i, "out_of_window", [seqs[earlier[-1]]]))
        elif later:
            found.append((i, "late", [seqs[later[0]]]))
        else:
            found.append((i, "missing", None))
    if scope == "all":
        for k, f in first_after.items():
            found.extend((j, "before_after_action", [seqs[f]]) for j in befores.get(k, []) if j > f)
    found.sort(key=lambda item: (item[0], CODE_ORDER.index(item[1])))
    return [(P(code), seqs[i], related) for i, code, related in found], checked


@pytest.mark.slow
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=trace_events, pair=st.sampled_from(MATCHER_PAIRS), scope=st.sampled_from(["each", "first", "all"]),
       correlate=st.sampled_from(CORRELATES), within=st.one_of(st.none(), st.integers(1, 4)))
def test_the_api_agrees_with_a_reference_model(trace, pair, scope, correlate, within):
    trace = [{"seq": i + 1, **event} for i, event in enumerate(trace)]
    before, after = pair
    fields: dict[str, Any] = {"before": before, "after": after, "scope": scope}
    if correlate is not None:
        fields["correlate"] = correlate
    if within is not None:
        fields["within_events"] = within
    document = {"version": 2, "name": "model", "rules": [{"id": "p", "kind": "precedence", **fields}]}
    report = msgspec.to_builtins(check_trace(document, trace))
    (result,) = report["results"]
    expected, checked = model(before, after, scope, correlate, within, trace)
    assert [(v["code"], v.get("event_seq"), v.get("related_seqs")) for v in result["violations"]] == expected
    assert result["checked"] == checked
    assert result.get("vacuous", False) is (checked == 0)
    assert result["passed"] is (not expected)


# -- past MAX_KEYS keys, the state spills to a temporary file: the same report ------------------------

@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=trace_events, pair=st.sampled_from(MATCHER_PAIRS), scope=st.sampled_from(["each", "first", "all"]),
       correlate=st.sampled_from(CORRELATES[1:]), within=st.one_of(st.none(), st.integers(1, 4)),
       max_keys=st.integers(0, 3), cap=st.integers(0, 3))
def test_a_spilled_check_reports_what_one_in_memory_does(trace, pair, scope, correlate, within, max_keys, cap):
    """The report of a check whose keys spilled (MAX_KEYS small) equals the in-memory one, to the
    byte, with any --max-violations; both agree with the reference model."""
    import agent_invariants.rules.precedence as precedence

    trace = [{"seq": i + 1, **event} for i, event in enumerate(trace)]
    before, after = pair
    fields: dict[str, Any] = {"before": before, "after": after, "scope": scope, "correlate": correlate}
    if within is not None:
        fields["within_events"] = within
    document = {"version": 2, "name": "spill", "rules": [{"id": "p", "kind": "precedence", **fields}]}
    in_memory = msgspec.json.encode(check_trace(document, trace, max_violations=cap))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(precedence, "MAX_KEYS", max_keys)
        spilled = msgspec.json.encode(check_trace(document, trace, max_violations=cap))
    assert spilled == in_memory
    expected, checked = model(before, after, scope, correlate, within, trace)
    (result,) = msgspec.json.decode(spilled)["results"]
    shown = expected if cap == 0 else expected[:cap]
    assert [(v["code"], v.get("event_seq"), v.get("related_seqs")) for v in result["violations"]] == shown
    assert result.get("violations_total", len(result["violations"])) == len(expected)
    assert result["checked"] == checked


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["first", "all"])
def test_afters_without_a_before_are_not_all_held_once_the_keys_spilled(tmp_path, scope):
    """Found by a hunt for unbounded memory: under `first` and `all`, once the keys spilled, each
    partition's afters found without a before stayed in memory with the ones judged before it
    until the end (1M such keys: 564 MiB, 10.7 s; now 47 MiB, 5.4 s). The memory a check holds
    does not grow from 20,000 such keys to 40,000 (past 16,384 records, the spill's buffer
    is written out)."""
    import tracemalloc

    import agent_invariants.rules.precedence as precedence

    document = {"version": 2, "name": "spill", "rules": [rule(correlate=BY_ID, scope=scope)]}
    peaks = []
    for count in (20_000, 40_000):
        path = tmp_path / f"{count}.jsonl"
        with path.open("w") as out:
            for number in range(count):
                out.write(json.dumps({"seq": 2 * number + 1, **refund(f"K{number}", f"r{number}")}) + "\n")
                out.write(json.dumps({"seq": 2 * number + 2, **res(f"r{number}")}) + "\n")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(precedence, "MAX_KEYS", 100)
            tracemalloc.start()
            try:
                report = check_trace(document, str(path), max_violations=10)
                peaks.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
        assert report.results[0].violation_count == count
    assert peaks[1] < peaks[0] + 1_000_000


@pytest.mark.parametrize("pairs", [[(1, 1.0), (-0.0, 0)], [(2**53, float(2**53)), (2**53 + 1, 2**53)]])
def test_numbers_equal_as_json_are_one_key_in_memory_and_once_spilled(pairs):
    """1 and 1.0 (and 0 and -0.0, 2^53 written either way) name one key, however the keys are kept."""
    import agent_invariants.rules.precedence as precedence

    trace: list[dict[str, Any]] = []
    for number, (before, after) in enumerate(pairs):
        trace += [call("get", {"id": before}, f"g{number}"), res(f"g{number}"), refund(after, f"r{number}")]
    trace = [{"seq": i + 1, **event} for i, event in enumerate(trace)]
    document = {"version": 2, "name": "numbers", "rules": [rule(correlate=BY_ID)]}
    in_memory = msgspec.json.encode(check_trace(document, trace))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(precedence, "MAX_KEYS", 0)
        spilled = msgspec.json.encode(check_trace(document, trace))
    assert spilled == in_memory
    assert msgspec.json.decode(in_memory)["passed"] is True


# -- long keys ------------------------------------------------------------------------------------

@pytest.mark.parametrize("long", ["x" * 300, {"q": "y" * 300}], ids=["string", "object"])
def test_long_correlate_values_meet_and_part_exactly_as_short_ones(run, long):
    """A key longer than 256 characters is held by its digest (1,600 keys of 500 KB held 794 MiB):
    values that differ only at their end stay apart, equal ones meet, whatever form they take."""
    rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
            "after": {"type": "tool.call", "tool": "refund"}, "correlate": ["q"]}
    other = long + "!" if isinstance(long, str) else {"q": long["q"] + "!"}
    out = run(rule, call("get", {"q": long}, "c1"), call("refund", {"q": long}, "c2"),
              call("refund", {"q": other}, "c3"), call("get", {"q": other}, "c4"),
              call("refund", {"q": json.dumps(long)}, "c5"))
    assert out.brief() == [(P("late"), 3, [4]), (P("missing"), 5, None)]
