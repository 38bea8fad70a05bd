"""Conditions (`when`) and the conditional obligations `required_when` and `forbidden_when`, tested from
the spec's words (spec v2 §0, §2 "Conditions", §3.8 and §10 points 1-6, 9, 13, 14 and 24, with the
issue's decisions for what the spec leaves open) through the CLI on real files: each condition form
true, false and unresolved, Kleene logic, the §3.8 example in its FAIL and PASS variants, each field
and code of both kinds, `checked` and `vacuous`, and the load errors (each one stderr line naming the
contract file and the JSON path of the mistake, exit 2).

A condition's truth value is observed through a `forbidden_when` rule on a `probe` tool called once:
true is one `forbidden` at the call, false is a pass, unresolved is one `condition_unresolved` at
the terminal (§3.8, points 2 and 14). Many such rules share one trace, so one CLI run answers many
conditions.

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import check_trace

from support import at, examples, refused_line, under, write_contract, write_trace

ABSENT: Any = object()
TRUE, FALSE, UNRESOLVED = "true", "false", "unresolved"


# -- helpers --------------------------------------------------------------------------------------

def call(tool: str, call_id: str | None = None, args: Any = ABSENT) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.call", "tool": tool}
    if call_id is not None:
        event["call_id"] = call_id
    if args is not ABSENT:
        event["args"] = args
    return event


def res(call_id: str, ok: bool | None = True) -> dict[str, Any]:
    """A `tool.result`; `ok` left out when None."""
    event: dict[str, Any] = {"type": "tool.result", "call_id": call_id}
    if ok is not None:
        event["ok"] = ok
    return event


def done(output: Any = ABSENT, kind: str = "run.completed") -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind}
    if output is not ABSENT:
        event["output"] = output
    return event


def outcome(outcome_id: str, verdict: str | None) -> dict[str, Any]:
    """An `outcome.observed`; `verdict` left out when None."""
    event: dict[str, Any] = {"type": "outcome.observed", "outcome_id": outcome_id}
    if verdict is not None:
        event["verdict"] = verdict
    return event


def when_outcome(outcome_id: str, verdict: str) -> dict[str, Any]:
    return {"outcome": {"outcome_id": outcome_id, "verdict": verdict}}


def rw(rule_id: str, tool: str, when: Any, **fields: Any) -> dict[str, Any]:
    return {"id": rule_id, "kind": "required_when", "tool": tool, "when": when, **fields}


def fw(rule_id: str, tool: str, when: Any) -> dict[str, Any]:
    return {"id": rule_id, "kind": "forbidden_when", "tool": tool, "when": when}


@dataclass
class Run:
    exit: int
    report: dict[str, Any]

    def result(self, rule_id: str | None = None) -> dict[str, Any]:
        results = self.report["results"]
        if rule_id is None:
            assert len(results) == 1, [r["rule_id"] for r in results]
            return results[0]
        (found,) = [r for r in results if r["rule_id"] == rule_id]
        return found

    def violations(self, rule_id: str | None = None) -> list[dict[str, Any]]:
        return self.result(rule_id)["violations"]

    def brief(self, rule_id: str | None = None) -> list[tuple[Any, ...]]:
        """(code, status, event_seq) per violation, event_seq None when absent; `event_index`
        travels with `event_seq` (point 2)."""
        out = []
        for violation in self.violations(rule_id):
            seq = violation.get("event_seq")
            assert violation.get("event_index") == (None if seq is None else seq - 1), violation
            out.append((violation["code"], violation["status"], seq))
        return out

    def counted(self, rule_id: str) -> tuple[Any, ...]:
        """(passed, checked, vacuous) of a rule; vacuous False when the key is absent."""
        result = self.result(rule_id)
        return result["passed"], result["checked"], result.get("vacuous", False)


@pytest.fixture
def run(cli, tmp_path):
    """run(rule or [rules], *events, version=2) -> Run, from `check --format json`."""
    def _run(rules: Any, *events: Any, version: int = 2) -> Run:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, events)
        result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
        assert result.returncode in (0, 1), result.stderr
        return Run(result.returncode, json.loads(result.stdout))
    return _run


def truth_of(result: dict[str, Any], call_seq: int, end_seq: int | None) -> Any:
    """The truth value a probe rule's result shows; the violations themselves when they fit none."""
    got = [(v["code"], v["status"], v.get("event_seq")) for v in result["violations"]]
    if got == [("forbidden_when.forbidden", "fail", call_seq)]:
        return TRUE
    if got == [] and result["passed"]:
        return FALSE
    if got == [("forbidden_when.condition_unresolved", "unresolved", end_seq)]:
        return UNRESOLVED
    return got


@pytest.fixture
def truths(run):
    """truths({id: condition}, *events) -> {id: TRUE|FALSE|UNRESOLVED}: one forbidden_when rule on
    the tool `probe` per condition; the events must hold exactly one `probe` call."""
    def _truths(conditions: dict[str, Any], *events: Any) -> dict[str, Any]:
        out = run([fw(rule_id, "probe", when) for rule_id, when in conditions.items()], *events)
        (call_seq,) = [i + 1 for i, e in enumerate(events) if e.get("type") == "tool.call" and e.get("tool") == "probe"]
        ends = [i + 1 for i, e in enumerate(events) if e.get("type") in ("run.completed", "run.failed")]
        end_seq = ends[-1] if ends else None
        return {rule_id: truth_of(out.result(rule_id), call_seq, end_seq) for rule_id in conditions}
    return _truths


PROBE = call("probe", "p1")


@pytest.fixture
def refused(cli, tmp_path):
    """refused(rules, version=2) -> the one stderr line of a refused contract (exit 2, no stdout)."""
    def _refused(rules: Any, version: int = 2) -> str:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, (PROBE, done({"a": 1})))
        return refused_line(cli)
    return _refused



def names(line: str, field: str) -> bool:
    """The line names `field` as a word of its own (not inside `output_match` or `$.rules[0].when`)."""
    return re.search(rf"(?<![\w.$]){re.escape(field)}(?!\w)", line) is not None


# -- condition forms: {path, equals} --------------------------------------------------------------

def test_equals_is_structural_type_strict_json_equality_on_found_paths(truths):
    output = {"n": 1.0, "flag": True, "s": "1", "o": {"a": 1, "b": 2}, "arr": [1, 2], "z": None,
              "items": [{"sku": "A"}], "m": {"0": "zero"}, "a/b": 5, "t~": 6}
    got = truths({
        "int-equals-float": {"path": "n", "equals": 1},
        "true-is-not-1": {"path": "flag", "equals": 1},
        "true-is-true": {"path": "flag", "equals": True},
        "string-is-not-number": {"path": "s", "equals": 1},
        "object-key-order-free": {"path": "o", "equals": {"b": 2, "a": 1}},
        "object-subset-is-not-equal": {"path": "o", "equals": {"a": 1}},
        "object-superset-is-not-equal": {"path": "o", "equals": {"a": 1, "b": 2, "c": 3}},
        "array-by-position": {"path": "arr", "equals": [2, 1]},
        "array-equal": {"path": "arr", "equals": [1, 2]},
        "null-is-found": {"path": "z", "equals": None},
        "null-is-not-0": {"path": "z", "equals": 0},
        "missing-path": {"path": "nope", "equals": None},
        "inside-null": {"path": "z.k", "equals": 1},
        "dot-index": {"path": "items.0.sku", "equals": "A"},
        "pointer": {"path": "/items/0/sku", "equals": "A"},
        "index-beyond-the-array": {"path": "items.3.sku", "equals": "A"},
        "non-numeric-segment-on-array": {"path": "items.sku", "equals": "A"},
        "numeric-segment-on-object-is-a-key": {"path": "m.0", "equals": "zero"},
        "pointer-escapes": {"path": "/a~1b", "equals": 5},
        "pointer-escapes-tilde": {"path": "/t~0", "equals": 6},
    }, PROBE, done(output))
    assert got == {
        "int-equals-float": TRUE, "true-is-not-1": FALSE, "true-is-true": TRUE, "string-is-not-number": FALSE,
        "object-key-order-free": TRUE, "object-subset-is-not-equal": FALSE, "object-superset-is-not-equal": FALSE,
        "array-by-position": FALSE, "array-equal": TRUE, "null-is-found": TRUE, "null-is-not-0": FALSE,
        "missing-path": UNRESOLVED, "inside-null": UNRESOLVED, "dot-index": TRUE, "pointer": TRUE,
        "index-beyond-the-array": UNRESOLVED, "non-numeric-segment-on-array": UNRESOLVED,
        "numeric-segment-on-object-is-a-key": TRUE, "pointer-escapes": TRUE, "pointer-escapes-tilde": TRUE,
    }


# -- condition forms: {path, non_empty: true} -----------------------------------------------------

def test_non_empty_is_true_on_a_non_empty_array_false_on_an_empty_one_unresolved_otherwise(truths):
    output = {"one": [0], "nulls": [None], "empty": [], "s": "abc", "o": {"a": 1}, "eo": {}, "z": None, "n": 0}
    got = truths({key: {"path": key, "non_empty": True} for key in [*output, "missing"]}, PROBE, done(output))
    assert got == {"one": TRUE, "nulls": TRUE, "empty": FALSE, "s": UNRESOLVED, "o": UNRESOLVED,
                   "eo": UNRESOLVED, "z": UNRESOLVED, "n": UNRESOLVED, "missing": UNRESOLVED}


# -- condition forms: {path, matches} -------------------------------------------------------------

def test_matches_is_a_subset_match_tree_on_the_found_value(truths):
    output = {"customer": {"tier": "gold", "id": 7}, "total": 150, "tags": ["a", "vip"], "z": None}
    got = truths({
        "subset": {"path": "customer", "matches": {"tier": "gold"}},
        "subset-differs": {"path": "customer", "matches": {"tier": "silver"}},
        "absent-key-is-false-not-unresolved": {"path": "customer", "matches": {"region": "EU"}},
        "exists-false": {"path": "customer", "matches": {"vip": {"$exists": False}}},
        "exists-true": {"path": "customer", "matches": {"id": {"$exists": True}}},
        "gt": {"path": "total", "matches": {"$gt": 100}},
        "lt": {"path": "total", "matches": {"$lt": 100}},
        "contains": {"path": "tags", "matches": {"$contains": "vip"}},
        "array-by-position": {"path": "tags", "matches": ["vip", "a"]},
        "regex-on-a-number": {"path": "total", "matches": {"$regex": "1"}},
        "any-of": {"path": "total", "matches": {"$any_of": [{"$lt": 0}, {"$gt": 100}]}},
        "null-is-found": {"path": "z", "matches": {"$in": [None]}},
        "missing-path": {"path": "nope", "matches": {"$gt": 1}},
    }, PROBE, done(output))
    assert got == {
        "subset": TRUE, "subset-differs": FALSE, "absent-key-is-false-not-unresolved": FALSE,
        "exists-false": TRUE, "exists-true": TRUE, "gt": TRUE, "lt": FALSE, "contains": TRUE,
        "array-by-position": FALSE, "regex-on-a-number": FALSE, "any-of": TRUE, "null-is-found": TRUE,
        "missing-path": UNRESOLVED,
    }


# -- paths without an output ----------------------------------------------------------------------

PATH_AND_OUTCOME = {
    "equals": {"path": "a", "equals": 1},
    "non_empty": {"path": "a", "non_empty": True},
    "matches": {"path": "a", "matches": {"$gt": 0}},
    "outcome": when_outcome("x", "violated"),
    "any_of-outcome-decides": {"any_of": [{"path": "a", "equals": 1}, when_outcome("x", "violated")]},
    "all_of-needs-the-path": {"all_of": [{"path": "a", "equals": 1}, when_outcome("x", "violated")]},
    "all_of-false-outcome-decides": {"all_of": [{"path": "a", "equals": 1}, when_outcome("x", "satisfied")]},
}


@pytest.mark.parametrize("tail", [[done()], [done(None)], [done({"b": 1})], [done(kind="run.failed")], []],
                         ids=["terminal-without-output", "null-output", "path-missing", "run-failed-without-output",
                              "no-terminal"])
def test_paths_without_an_output_or_path_are_unresolved_and_outcomes_still_decide(truths, tail):
    got = truths(PATH_AND_OUTCOME, outcome("x", "violated"), PROBE, *tail)
    assert got == {"equals": UNRESOLVED, "non_empty": UNRESOLVED, "matches": UNRESOLVED, "outcome": TRUE,
                   "any_of-outcome-decides": TRUE, "all_of-needs-the-path": UNRESOLVED,
                   "all_of-false-outcome-decides": FALSE}


def test_paths_read_a_run_failed_terminals_output(truths):
    got = truths({"equals": {"path": "a", "equals": 1}}, PROBE, done({"a": 1}, kind="run.failed"))
    assert got == {"equals": TRUE}


def test_paths_read_the_last_terminals_output(truths):
    got = truths({"first": {"path": "a", "equals": 1}, "last": {"path": "a", "equals": 2}},
                 done({"a": 1}), PROBE, done({"a": 2}))
    assert got == {"first": FALSE, "last": TRUE}


# -- condition forms: {outcome} -------------------------------------------------------------------

def test_the_last_outcome_whose_id_matches_the_glob_decides(truths):
    events = [outcome("fraud", "violated"), outcome("fraud.card", "satisfied"), outcome("fraud", "satisfied"),
              outcome("checks", None), PROBE, outcome("other", "violated"), done({})]
    got = truths({
        "last-fraud-satisfied": when_outcome("fraud", "satisfied"),
        "earlier-fraud-violated": when_outcome("fraud", "violated"),
        "glob-satisfied": when_outcome("fraud.*", "satisfied"),
        "glob-violated": when_outcome("fraud.*", "violated"),
        "star-takes-the-very-last": when_outcome("*", "violated"),
        "star-satisfied": when_outcome("*", "satisfied"),
        "missing-verdict-satisfied": when_outcome("checks", "satisfied"),
        "missing-verdict-unknown": when_outcome("checks", "unknown"),
        "no-such-outcome": when_outcome("refund", "satisfied"),
        "glob-without-a-match": when_outcome("refund.*", "violated"),
        "after-the-call-counts": when_outcome("other", "violated"),
    }, *events)
    assert got == {
        "last-fraud-satisfied": TRUE, "earlier-fraud-violated": FALSE, "glob-satisfied": TRUE,
        "glob-violated": FALSE, "star-takes-the-very-last": TRUE, "star-satisfied": FALSE,
        "missing-verdict-satisfied": FALSE, "missing-verdict-unknown": FALSE, "no-such-outcome": UNRESOLVED,
        "glob-without-a-match": UNRESOLVED, "after-the-call-counts": TRUE,
    }


def test_an_outcome_is_judged_once_at_the_end_not_while_the_call_happens(truths):
    # violated before the call, satisfied after it: the last one decides, for the whole trace
    got = truths({"violated": when_outcome("fraud", "violated")},
                 outcome("fraud", "violated"), PROBE, outcome("fraud", "satisfied"), done({}))
    assert got == {"violated": FALSE}


# -- Kleene logic ---------------------------------------------------------------------------------

OPERANDS = {"T": {"path": "flag", "equals": True}, "F": {"path": "flag", "equals": False},
            "U": {"path": "nope", "equals": True}}
KLEENE_OUTPUT = {"flag": True}


def test_any_of_and_all_of_follow_kleene_logic_for_every_pair(truths):
    conditions = {f"{form}.{a}{b}": {form: [OPERANDS[a], OPERANDS[b]]}
                  for form in ("any_of", "all_of") for a in "TFU" for b in "TFU"}
    got = truths(conditions, PROBE, done(KLEENE_OUTPUT))
    assert got == {
        "any_of.TT": TRUE, "any_of.TF": TRUE, "any_of.TU": TRUE,
        "any_of.FT": TRUE, "any_of.FF": FALSE, "any_of.FU": UNRESOLVED,
        "any_of.UT": TRUE, "any_of.UF": UNRESOLVED, "any_of.UU": UNRESOLVED,
        "all_of.TT": TRUE, "all_of.TF": FALSE, "all_of.TU": UNRESOLVED,
        "all_of.FT": FALSE, "all_of.FF": FALSE, "all_of.FU": FALSE,
        "all_of.UT": UNRESOLVED, "all_of.UF": FALSE, "all_of.UU": UNRESOLVED,
    }


def test_nested_and_20_branch_combinations(truths):
    t, f, u = OPERANDS["T"], OPERANDS["F"], OPERANDS["U"]
    got = truths({
        "all_of-of-any_of": {"all_of": [{"any_of": [u, t]}, {"any_of": [f, t]}]},
        "any_of-of-all_of": {"any_of": [{"all_of": [u, f]}, {"all_of": [u, t]}]},
        "any_of-20-one-true": {"any_of": [f] * 19 + [t]},
        "any_of-20-one-unresolved": {"any_of": [u] + [f] * 19},
        "all_of-20-one-false": {"all_of": [t] * 10 + [f] + [u] * 9},
        "all_of-20-all-true": {"all_of": [t] * 20},
    }, PROBE, done(KLEENE_OUTPUT))
    assert got == {"all_of-of-any_of": TRUE, "any_of-of-all_of": UNRESOLVED, "any_of-20-one-true": TRUE,
                   "any_of-20-one-unresolved": UNRESOLVED, "all_of-20-one-false": FALSE,
                   "all_of-20-all-true": TRUE}


def kleene(tree: Any) -> str:
    """The expected truth value of a generated tree: Kleene's strong three-valued logic (point 14)."""
    if isinstance(tree, str):
        return {"T": TRUE, "F": FALSE, "U": UNRESOLVED}[tree]
    form, operands = tree
    values = [kleene(operand) for operand in operands]
    decisive, other = (TRUE, FALSE) if form == "any_of" else (FALSE, TRUE)
    if decisive in values:
        return decisive
    return UNRESOLVED if UNRESOLVED in values else other


def as_condition(tree: Any) -> dict[str, Any]:
    if isinstance(tree, str):
        return OPERANDS[tree]
    form, operands = tree
    return {form: [as_condition(operand) for operand in operands]}


trees = st.recursive(st.sampled_from("TFU"),
                     lambda children: st.tuples(st.sampled_from(["any_of", "all_of"]),
                                                st.lists(children, min_size=2, max_size=4)),
                     max_leaves=12)


@pytest.mark.slow
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree_list=st.lists(trees, min_size=1, max_size=8))
def test_nested_conditions_follow_kleene_logic(tree_list):
    document = {"version": 2, "name": "kleene",
                "rules": [fw(f"r{i}", "probe", as_condition(tree)) for i, tree in enumerate(tree_list)]}
    trace = [{"seq": 1, **PROBE}, {"seq": 2, **done(KLEENE_OUTPUT)}]
    report = msgspec.to_builtins(check_trace(document, trace))
    got = [truth_of(result, 1, 2) for result in report["results"]]
    assert got == [kleene(tree) for tree in tree_list]


# -- §3.8: the example ----------------------------------------------------------------------------

EXAMPLE_RULES = [
    {"id": "refund-iff-reported", "kind": "required_when", "tool": "refund",
     "when": {"path": "refunds", "non_empty": True}, "iff": True},
    {"id": "no-mail-on-fraud", "kind": "forbidden_when", "tool": "email",
     "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}},
]
EXAMPLE_TRACE = [
    {"type": "outcome.observed", "outcome_id": "fraud", "verdict": "violated", "evidence_class": "configured_verifier"},
    {"type": "tool.call", "tool": "email", "call_id": "m1", "args": {"to": "x@y"}},
    {"type": "run.completed", "output": {"refunds": ["A1"]}},
]


def test_example_fails_refund_iff_reported_at_seq_3_and_no_mail_on_fraud_at_seq_2(run):
    out = run(EXAMPLE_RULES, *EXAMPLE_TRACE)
    assert out.exit == 1
    assert out.brief("refund-iff-reported") == [("required_when.min", "fail", 3)]
    assert out.violations("refund-iff-reported")[0]["evidence"] == {
        "tool": "refund", "count": 0, "min": 1, "when": {"path": "refunds", "non_empty": True}}
    assert out.brief("no-mail-on-fraud") == [("forbidden_when.forbidden", "fail", 2)]
    assert [(v["rule_id"], v["rule_kind"], v["severity"], v["event_seq"]) for v in out.report["violations"]] == [
        ("refund-iff-reported", "required_when", "error", 3), ("no-mail-on-fraud", "forbidden_when", "error", 2)]
    assert [(r["rule_id"], r["passed"], r["checked"]) for r in out.report["results"]] == [
        ("refund-iff-reported", False, 1), ("no-mail-on-fraud", False, 1)]
    assert (out.report["passed"], out.report["error_count"], out.report["warning_count"]) == (False, 2, 0)


def test_example_passes_with_a_satisfied_verdict_and_a_refund_instead_of_the_email(run):
    trace = [{**EXAMPLE_TRACE[0], "verdict": "satisfied"},
             {"type": "tool.call", "tool": "refund", "call_id": "r1", "args": {"order": "A1"}}, EXAMPLE_TRACE[2]]
    out = run(EXAMPLE_RULES, *trace)
    assert (out.exit, out.report["passed"], out.report["error_count"], out.report["violations"]) == (0, True, 0, [])
    # the email rule saw no email call: it passes vacuously; the refund rule is never vacuous
    assert out.counted("refund-iff-reported") == (True, 1, False)
    assert out.counted("no-mail-on-fraud") == (True, 0, True)


# -- required_when --------------------------------------------------------------------------------

REPORTED = {"path": "refunds", "non_empty": True}


def test_required_when_counts_calls_or_successful_calls_of_the_glob_against_min(run):
    out = run([rw("default", "refund", REPORTED), rw("min-4", "refund", REPORTED, min=4),
               rw("calls-3", "refund", REPORTED, count="calls", min=3),
               rw("successful", "refund", REPORTED, count="successful", min=2),
               rw("glob-successful", "refund*", REPORTED, count="successful", min=3),
               rw("glob-calls", "refund*", REPORTED, min=4), rw("iff-true", "refund", REPORTED, iff=True)],
              call("refund", "r1"), res("r1", ok=True),
              call("refund", "r2"), res("r2", ok=False),
              call("refund", "r3"),                                   # no result: not successful
              call("refund.partial", "r4"), res("r4", ok=None),       # no ok: successful
              call("get", "g1"), res("g1"),
              done({"refunds": ["A1", "A2"]}))
    for rule_id in ("default", "calls-3", "glob-calls", "iff-true"):
        assert out.counted(rule_id) == (True, 1, False), out.brief(rule_id)
    assert out.brief("min-4") == [("required_when.min", "fail", 10)]
    assert out.violations("min-4")[0]["evidence"] == {"tool": "refund", "count": 3, "min": 4, "when": REPORTED}
    assert out.brief("successful") == [("required_when.min", "fail", 10)]
    assert out.violations("successful")[0]["evidence"] == {"tool": "refund", "count": 1, "min": 2, "when": REPORTED}
    assert out.brief("glob-successful") == [("required_when.min", "fail", 10)]
    assert out.violations("glob-successful")[0]["evidence"] == {
        "tool": "refund*", "count": 2, "min": 3, "when": REPORTED}
    assert [out.counted(rule_id) for rule_id in ("min-4", "successful", "glob-successful")] == [(False, 1, False)] * 3
    assert (out.exit, out.report["error_count"]) == (1, 3)


def test_a_false_condition_with_iff_forbids_each_matching_call_at_the_call(run):
    out = run([rw("iff", "refund", REPORTED, iff=True), rw("iff-min-3", "refund", REPORTED, iff=True, min=3),
               rw("no-iff", "refund", REPORTED, min=3), rw("iff-no-calls", "mail", REPORTED, iff=True)],
              call("refund", "c1"), call("get", "g1"), call("refund", "c2"), res("c2"), done({"refunds": []}))
    for rule_id in ("iff", "iff-min-3"):
        assert out.brief(rule_id) == [("required_when.forbidden", "fail", 1), ("required_when.forbidden", "fail", 3)]
        assert out.counted(rule_id) == (False, 1, False)
    for rule_id in ("no-iff", "iff-no-calls"):
        assert out.counted(rule_id) == (True, 1, False), out.brief(rule_id)
    assert (out.exit, out.report["error_count"]) == (1, 4)


def test_min_0_with_iff_allows_the_calls_only_when_the_condition_holds(run):
    """The spec gives `min` no range; 0 is the one way to say "only when" without also "must"."""
    only_when = [rw("only-when", "refund", REPORTED, min=0, iff=True), rw("min-0", "refund", REPORTED, min=0)]
    assert run(only_when, done({"refunds": ["A1"]})).counted("only-when") == (True, 1, False)
    assert run(only_when, call("refund", "c1"), done({"refunds": ["A1"]})).counted("only-when") == (True, 1, False)
    out = run(only_when, call("refund", "c1"), done({"refunds": []}))
    assert out.brief("only-when") == [("required_when.forbidden", "fail", 1)]
    assert out.counted("min-0") == (True, 1, False)
    unresolved = [("required_when.condition_unresolved", "unresolved", 1)]
    assert run(only_when, done({"other": 1})).brief("min-0") == unresolved


@pytest.mark.parametrize(("calls", "terminal_seq"), [(0, 1), (2, 3)])
def test_an_unresolved_condition_is_one_condition_unresolved_at_the_terminal_whatever_the_count(run, calls,
                                                                                                  terminal_seq):
    rules = [rw("min-1", "refund", REPORTED), rw("min-5-iff", "refund", REPORTED, min=5, iff=True),
             rw("other-tool", "mail", REPORTED, iff=True)]
    out = run(rules, *[call("refund", f"c{i}") for i in range(calls)], done({"other": 1}))
    for rule_id in ("min-1", "min-5-iff", "other-tool"):
        assert out.brief(rule_id) == [("required_when.condition_unresolved", "unresolved", terminal_seq)]
        assert out.counted(rule_id) == (False, 1, False)
    assert (out.exit, out.report["error_count"]) == (1, 3)


def test_an_unresolved_condition_without_a_terminal_has_no_seq(run):
    out = run(rw("r", "refund", REPORTED), call("refund", "c1"), res("c1"))
    assert out.brief() == [("required_when.condition_unresolved", "unresolved", None)]
    assert out.counted("r") == (False, 1, False)


def test_without_a_terminal_min_has_no_seq_and_iff_still_sits_at_the_calls(run):
    out = run([rw("true-min-2", "refund", when_outcome("fraud", "violated"), min=2),
               rw("false-iff", "refund", when_outcome("fraud", "satisfied"), iff=True)],
              outcome("fraud", "violated"), call("refund", "c1"))
    assert out.brief("true-min-2") == [("required_when.min", "fail", None)]
    assert out.violations("true-min-2")[0]["evidence"] == {
        "tool": "refund", "count": 1, "min": 2, "when": when_outcome("fraud", "violated")}
    assert out.brief("false-iff") == [("required_when.forbidden", "fail", 2)]


# -- forbidden_when -------------------------------------------------------------------------------

def test_forbidden_when_flags_each_matching_call_when_true_and_none_when_false(run):
    out = run([fw("true", "email*", when_outcome("fraud", "violated")),
               fw("exact-tool", "email", when_outcome("fraud", "violated")),
               fw("false", "email*", when_outcome("fraud", "satisfied")),
               fw("unresolved", "email*", {"path": "x", "equals": 1}),
               fw("unresolved-vacuous", "sms", {"path": "x", "equals": 1}),
               fw("true-vacuous", "sms", when_outcome("fraud", "violated"))],
              outcome("fraud", "violated"), call("email", "e1"), call("get", "g1"), call("email.bulk", "e2"),
              res("e2"), done({}))
    assert out.brief("true") == [("forbidden_when.forbidden", "fail", 2), ("forbidden_when.forbidden", "fail", 4)]
    assert out.counted("true") == (False, 2, False)
    assert out.brief("exact-tool") == [("forbidden_when.forbidden", "fail", 2)]
    assert out.counted("exact-tool") == (False, 1, False)
    assert out.counted("false") == (True, 2, False)
    assert out.brief("unresolved") == [("forbidden_when.condition_unresolved", "unresolved", 6)]
    assert out.counted("unresolved") == (False, 2, False)
    assert out.counted("unresolved-vacuous") == (True, 0, True)
    assert out.counted("true-vacuous") == (True, 0, True)
    assert (out.exit, out.report["error_count"]) == (1, 4)


def test_forbidden_when_unresolved_without_a_terminal_has_no_seq(run):
    out = run(fw("r", "email", {"path": "x", "non_empty": True}), call("email", "e1"), call("email", "e2"))
    assert out.brief() == [("forbidden_when.condition_unresolved", "unresolved", None)]
    assert out.counted("r") == (False, 2, False)


def test_forbidden_when_true_without_a_terminal_flags_the_calls(run):
    out = run(fw("r", "email", when_outcome("fraud", "violated")), call("email", "e1"), outcome("fraud", "violated"))
    assert out.brief() == [("forbidden_when.forbidden", "fail", 1)]


def test_a_warning_rules_unresolved_condition_counts_as_a_warning(run):
    rule = {**fw("r", "email", {"path": "x", "equals": 1}), "severity": "warning"}
    out = run(rule, call("email", "e1"), done({}))
    assert out.brief() == [("forbidden_when.condition_unresolved", "unresolved", 2)]
    assert (out.exit, out.report["error_count"], out.report["warning_count"]) == (0, 0, 1)


# -- load errors ----------------------------------------------------------------------------------

def in_rule(kind: str, when: Any) -> dict[str, Any]:
    """A rule of `kind` whose `when` is the given condition."""
    if kind == "output_match":
        return {"id": "r", "kind": kind, "match": {"a": 1}, "when": when}
    return {"id": "r", "kind": kind, "tool": "refund", "when": when}


KINDS = ["required_when", "forbidden_when", "output_match"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_when_with_an_unknown_key_is_refused(refused, kind):
    line = refused(in_rule(kind, {"path": "a", "equals": 1, "colour": "red"}))
    assert under(line, "$.rules[0].when") and "colour" in line


def test_an_unknown_key_inside_outcome_is_refused(refused):
    line = refused(fw("r", "refund", {"outcome": {"outcome_id": "x", "verdict": "violated", "bogus": 1}}))
    assert under(line, "$.rules[0].when.outcome") and "bogus" in line


@pytest.mark.parametrize("when", [{"path": "a", "equals": 1, "non_empty": True},
                                  {"path": "a", "equals": 1, "outcome": {"outcome_id": "x", "verdict": "violated"}},
                                  {"any_of": [{"path": "a", "equals": 1}] * 2, "path": "a"},
                                  {}],
                         ids=["equals-and-non_empty", "path-and-outcome", "any_of-and-path", "empty"])
def test_a_when_that_is_not_exactly_one_form_is_refused(refused, when):
    assert under(refused(fw("r", "refund", when)), "$.rules[0].when")


@pytest.mark.parametrize("form", ["any_of", "all_of"])
@pytest.mark.parametrize("count", [1, 21])
def test_any_of_and_all_of_need_2_to_20_conditions(refused, form, count):
    when = {form: [{"path": f"k{i}", "equals": i} for i in range(count)]}
    assert at(refused(fw("r", "refund", when)), f"$.rules[0].when.{form}")


def test_an_empty_path_is_refused(refused):
    assert at(refused(fw("r", "refund", {"path": "", "equals": 1})), "$.rules[0].when.path")


def test_a_bad_path_in_a_nested_condition_is_refused_at_its_json_path(refused):
    when = {"all_of": [{"path": "a", "equals": 1},
                       {"any_of": [{"path": "b", "non_empty": True}, {"path": "", "equals": 2}]}]}
    assert at(refused(rw("r", "refund", when)), "$.rules[0].when.all_of[1].any_of[1].path")


def test_exists_at_the_root_of_matches_is_refused(refused):
    line = refused(fw("r", "refund", {"path": "a", "matches": {"$exists": True}}))
    assert at(line, "$.rules[0].when.matches.$exists")


@pytest.mark.parametrize("reference", [{"$arg": "x"}, {"$from_output": "x"},
                                       {"$from_result": {"tool": "get", "where": {"id": {"$arg": "x"}}}}],
                         ids=["arg", "from_output", "arg_in_where"])
def test_arg_and_from_output_inside_matches_are_refused(refused, reference):
    """Point 12: `$arg` and `$from_output` are load errors in conditions (`where` included)."""
    line = refused(fw("r", "refund", {"path": "a", "matches": {"x": reference}}))
    assert under(line, "$.rules[0].when.matches.x") and ("$arg" in line or "$from_output" in line)


# -- $from_result in a condition's matches --------------------------------------------------------
# §2: a match tree may hold references, and "the subject is ... the terminal event in output
# rules"; point 12 refuses only `$arg` and `$from_output` in conditions. So `matches` reads the
# results before the terminal: equal to a candidate is true, to none false, no candidate unresolved.

LEDGER = {"$from_result": {"tool": "ledger", "path": "total"}}


def ledger(call_id: str, total: Any) -> list[dict[str, Any]]:
    return [call("ledger", call_id), {**res(call_id), "result": {"total": total}}]


def test_a_reference_in_matches_reads_the_results_before_the_terminal(truths):
    when = {"path": "total", "matches": LEDGER}
    assert truths({"r": when}, *ledger("l1", 5), PROBE, done({"total": 5})) == {"r": TRUE}
    assert truths({"r": when}, *ledger("l1", 4), *ledger("l2", 5), PROBE, done({"total": 5})) == {"r": TRUE}
    assert truths({"r": when}, *ledger("l1", 4), PROBE, done({"total": 5})) == {"r": FALSE}
    # no result, or only one after the terminal: nothing to compare with
    assert truths({"r": when}, PROBE, done({"total": 5})) == {"r": UNRESOLVED}
    assert truths({"r": when}, PROBE, done({"total": 5}), *ledger("l1", 5)) == {"r": UNRESOLVED}


def test_a_comparison_with_a_reference_in_matches_needs_one_candidate(truths):
    when = {"path": "total", "matches": {"$lte": LEDGER}}
    assert truths({"r": when}, *ledger("l1", 5), PROBE, done({"total": 4})) == {"r": TRUE}
    assert truths({"r": when}, *ledger("l1", 5), PROBE, done({"total": 6})) == {"r": FALSE}
    assert truths({"r": when}, *ledger("l1", 5), *ledger("l2", 7), PROBE, done({"total": 4})) == {"r": UNRESOLVED}


def test_a_mismatch_beside_an_unresolved_reference_makes_matches_false(truths):
    """Kleene's logic inside the tree too: a part that surely fails decides."""
    when = {"path": "o", "matches": {"total": LEDGER, "kind": "refund"}}
    assert truths({"r": when}, PROBE, done({"o": {"total": 5, "kind": "sale"}})) == {"r": FALSE}
    assert truths({"r": when}, PROBE, done({"o": {"total": 5, "kind": "refund"}})) == {"r": UNRESOLVED}


def test_a_reference_in_a_condition_counts_calls_with_call_index(run):
    rule = rw("r", "refund", {"path": "total", "matches": {"$from_result": {"tool": "ledger", "path": "total",
                                                                             "call_index": 1}}})
    out = run(rule, *ledger("l1", 5), *ledger("l2", 7), done({"total": 7}))
    assert out.brief() == [("required_when.min", "fail", 5)]
    out = run(rule, *ledger("l1", 7), *ledger("l2", 5), done({"total": 7}))
    assert out.brief() == []


def test_output_match_when_with_a_reference(run):
    rule = {"id": "o", "kind": "output_match", "match": {"ok": True},
            "when": {"path": "total", "matches": LEDGER}}
    assert run(rule, *ledger("l1", 5), done({"total": 5, "ok": False})).brief() == [
        ("output_match.mismatch", "fail", 3)]
    assert run(rule, *ledger("l1", 4), done({"total": 5, "ok": False})).counted("o") == (True, 0, False)


@pytest.mark.parametrize(("kind", "field"), [("required_when", "tool"), ("required_when", "when"),
                                             ("forbidden_when", "tool"), ("forbidden_when", "when")])
def test_tool_and_when_are_required(refused, kind, field):
    rule = in_rule(kind, {"path": "a", "equals": 1})
    del rule[field]
    line = refused(rule)
    assert under(line, "$.rules[0]") and names(line, field)


@pytest.mark.parametrize(("field", "value"), [("min", -1), ("min", 1.5), ("min", 1_000_001), ("count", "all"),
                                              ("iff", "yes")])
def test_required_when_field_values_outside_the_spec_are_refused(refused, field, value):
    assert at(refused(rw("r", "refund", REPORTED, **{field: value})), f"$.rules[0].{field}")


@pytest.mark.parametrize("kind", ["required_when", "forbidden_when"])
def test_each_conditional_kind_in_a_version_1_contract_needs_version_2(refused, kind):
    assert 'needs "version": 2' in refused(in_rule(kind, REPORTED), version=1)
