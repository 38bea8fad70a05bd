"""A reference model of spec v2 §3.7 "Outcome checks" (output_match, output_schema, run_status),
written from the spec text with every §10 point that touches these kinds, compared with the
product on random one- and two-rule contracts and short traces, plus hand-written cases from the
spec's examples.

Spec sentences the model follows (v2-extensions.md):
- §0 "Terminal: the last run.completed or run.failed. Final output: its output. Run status: its
  status; if absent, completed or failed by type; none when there is no terminal event."
- §3.7 output_match: fields match, mode, ignore, when; "A false when is a pass with checked 0. An
  unresolved when gives condition_unresolved"; codes output_missing plus mismatch and
  reference_unresolved; "$arg and $from_output are load errors here"; "Violations sit at the
  terminal event". output_schema: field schema, codes output_missing and schema (up to 20 errors),
  caused_by. run_status: equals or in (1..20), evidence {status, expected}.
- §10.1 run_status code `mismatch`; §10.2 all three kinds sit at the terminal, no seq without one;
  §10.4 checked 1 (0 when a false when skips output_match), never vacuous; §10.5 order;
  §10.6 statuses; §10.7 evidence encoding; §10.9 absent keys / null; §10.10 $regex and $literal;
  §10.11 $in with a reference; §10.12 the $from_result pipeline; §10.13 paths; §10.14 conditions;
  §10.16 run.failed output; §10.82 --partial (liveness → inconclusive, out of the counts).
"""
from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants.api import check_trace
from agent_invariants.contract import load_contract
from agent_invariants.errors import InputError

from support import examples, schema_message

Json = Any
Violation = dict[str, Any]


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
OUTCOME_KINDS = ("output_match", "output_schema", "run_status")

# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------


def is_number(value: Json) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a: Json, b: Json) -> bool:
    """§2: "Equality is JSON-type-strict and structural: true≠1, 1=1.0, equal key sets, arrays by
    position"."""
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    return type(a) is type(b) and a == b


def cut(value: Json) -> Json:
    """§10.7: strings are cut to 200 Unicode code points plus `…`."""
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:200] + "…"
    if isinstance(value, list):
        return [cut(v) for v in value]
    if isinstance(value, dict):
        return {k: cut(v) for k, v in value.items()}
    return value


def pointer_token(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def get_path(value: Json, path: str) -> Json:
    """§2 / §10.13: dot paths (a canonical non-negative integer indexes an array, else is a key),
    or JSON Pointers when they start with `/`; found only if every segment exists."""
    if path.startswith("/"):
        segments = [s.replace("~1", "/").replace("~0", "~") for s in path[1:].split("/")]
    else:
        segments = path.split(".")
    current = value
    for segment in segments:
        if isinstance(current, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", segment) or int(segment) >= len(current):
                return ABSENT
            current = current[int(segment)]
        elif isinstance(current, dict):
            if segment not in current:
                return ABSENT
            current = current[segment]
        else:
            return ABSENT
    return current


def glob(pattern: str, name: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern)


def distinct(values: list[Json]) -> list[Json]:
    out: list[Json] = []
    for value in values:
        if not any(json_equal(value, seen) for seen in out):
            out.append(value)
    return out


class Trace:
    """What the outcome kinds read from a trace: the terminal, and the paired results (§10.3)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        terminals = [i for i, e in enumerate(events) if e["type"] in ("run.completed", "run.failed")]
        self.terminal: int | None = terminals[-1] if terminals else None
        # one row per tool.result: (index, tool, args, ok, result, call position)
        self.results: list[tuple[int, Any, Json, Json, Json, int | None]] = []
        self.calls: list[tuple[int, str]] = []  # (index, tool) of every call
        open_calls: list[tuple[int, dict[str, Any]]] = []  # (call position, event) without result
        for index, event in enumerate(events):
            if event["type"] == "tool.call":
                open_calls.append((len(self.calls), event))
                self.calls.append((index, event["tool"]))
            elif event["type"] == "tool.result":
                match = [c for c in open_calls if c[1]["call_id"] == event["call_id"]]
                if match:
                    position, call = match[-1]
                    open_calls.remove(match[-1])
                    row: tuple[int, Any, Json, Json, Json, int | None] = (
                        index, call["tool"], call.get("args", ABSENT), event.get("ok"),
                        event.get("result", ABSENT), position)
                else:
                    row = (index, event.get("tool"), ABSENT, event.get("ok"), event.get("result", ABSENT), None)
                self.results.append(row)

    @property
    def terminal_event(self) -> dict[str, Any] | None:
        return None if self.terminal is None else self.events[self.terminal]

    @property
    def output(self) -> Json:
        event = self.terminal_event
        return ABSENT if event is None else event.get("output", ABSENT)


class Outcome:
    """Result of matching one node: the mismatches and unresolved references it gives."""

    def __init__(self) -> None:
        self.mismatches: list[dict[str, Any]] = []
        self.unresolved: list[dict[str, Any]] = []

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.unresolved

    def mismatch(self, pointer: str, expected: Json, actual: Json) -> None:
        item = {"pointer": pointer, "expected": cut(expected)}
        if actual is not ABSENT:
            item["actual"] = cut(actual)
        self.mismatches.append(item)

    def extend(self, other: Outcome) -> None:
        self.mismatches += other.mismatches
        self.unresolved += other.unresolved


def is_reference(node: Json) -> bool:
    return isinstance(node, dict) and list(node) == ["$from_result"]


def is_operator(node: Json) -> bool:
    return isinstance(node, dict) and bool(node) and all(k.startswith("$") for k in node) and not is_reference(node)


class Matcher:
    """§2 match tree for the final output (references: `$from_result` only, subject = terminal)."""

    def __init__(self, trace: Trace, exact: bool = False, ignore: tuple[str, ...] = ()) -> None:
        self.trace = trace
        self.exact = exact
        self.ignore = ignore

    # -- references (§2 five steps, §10.12) --
    def candidates(self, spec: dict[str, Any]) -> list[Json]:
        trace = self.trace
        subject = trace.terminal if trace.terminal is not None else len(trace.events)
        wanted_position: int | None = None
        if "call_index" in spec:
            matching = [p for p, (_, tool) in enumerate(trace.calls) if glob(spec["tool"], tool)]
            if spec["call_index"] >= len(matching):
                return []
            wanted_position = matching[spec["call_index"]]
        plain = Matcher(trace)
        values: list[Json] = []
        for index, tool, args, ok, result, position in trace.results:
            if index >= subject or tool is None or not glob(spec["tool"], tool):
                continue
            if wanted_position is not None and position != wanted_position:
                continue
            if spec.get("ok_only", True) and ok is False:
                continue
            if result is ABSENT:
                continue
            if "where" in spec and (args is ABSENT or not plain.node(spec["where"], args, "").ok):
                continue
            if "where_result" in spec and not plain.node(spec["where_result"], result, "").ok:
                continue
            value = result if "path" not in spec else get_path(result, spec["path"])
            if value is ABSENT:
                continue
            if "find" in spec:
                if not isinstance(value, list):
                    continue
                found = [e for e in value if plain.node(spec["find"], e, "").ok]
                if not found:
                    continue
                value = found[0]
            if "select" in spec:
                value = get_path(value, spec["select"])
                if value is ABSENT:
                    continue
            if spec.get("length"):
                if not isinstance(value, list):
                    continue
                value = len(value)
            values.append(value)
        return distinct(values)

    # -- nodes --
    def node(self, node: Json, actual: Json, pointer: str, top: bool = False) -> Outcome:
        out = Outcome()
        if is_reference(node):
            found = self.candidates(node["$from_result"])
            if not found:
                out.unresolved.append({"pointer": pointer, "reference": node, "reason": "no_candidates"})
            elif actual is ABSENT or not any(json_equal(actual, c) for c in found):
                out.mismatch(pointer, {"any_of": found[:20]}, actual)
            return out
        if is_operator(node):
            if actual is ABSENT:
                # §10.9: "a literal or operator node whose key is absent from the actual object is a
                # mismatch (only $exists: false accepts absence)"; its references are not consulted
                if not all(name == "$exists" and operand is False for name, operand in node.items()):
                    out.mismatch(pointer, node, actual)
                return out
            verdicts = [self.operator(name, operand, actual, pointer) for name, operand in node.items()]
            unresolved = [u for v in verdicts if isinstance(v, list) for u in v]
            if unresolved:
                # spec silent on how many entries one node gives: every unresolved operand is listed
                out.unresolved += unresolved
            elif any(v is False for v in verdicts):
                out.mismatch(pointer, node, actual)
            return out
        if isinstance(node, dict):
            if not isinstance(actual, dict):
                out.mismatch(pointer, node, actual)
                return out
            for key, child in node.items():
                out.extend(self.node(child, actual.get(key, ABSENT), f"{pointer}/{pointer_token(key)}"))
            if self.exact:
                for key, value in actual.items():
                    if key not in node and not (top and key in self.ignore):
                        out.mismatch(f"{pointer}/{pointer_token(key)}", {"$exists": False}, value)
            return out
        if isinstance(node, list):
            if not isinstance(actual, list) or len(actual) != len(node):
                out.mismatch(pointer, node, actual)
                return out
            for i, (child, value) in enumerate(zip(node, actual, strict=True)):
                out.extend(self.node(child, value, f"{pointer}/{i}"))
            return out
        if actual is ABSENT or not json_equal(node, actual):
            out.mismatch(pointer, node, actual)
        return out

    def operator(self, name: str, operand: Json, actual: Json, pointer: str) -> bool | list[dict[str, Any]]:
        """True, False (mismatch) or the unresolved entries."""
        if name == "$exists":
            return (actual is not ABSENT) == bool(operand)
        if name == "$any_of":
            branches = [self.node(b, actual, pointer) for b in operand]
            if any(b.ok for b in branches):
                return True
            unresolved = [u for b in branches for u in b.unresolved]
            return unresolved or False
        if name == "$in":
            if is_reference(operand):
                contributed: list[Json] = []
                for c in self.candidates(operand["$from_result"]):
                    contributed += c if isinstance(c, list) else [c]
                if not contributed:
                    return [{"pointer": pointer, "reference": operand, "reason": "no_candidates"}]
                values = contributed
            else:
                values = operand
            return actual is not ABSENT and any(json_equal(actual, v) for v in values)
        if name in ("$gt", "$gte", "$lt", "$lte"):
            if is_reference(operand):
                found = self.candidates(operand["$from_result"])
                if len(found) != 1:
                    reason = "no_candidates" if not found else "ambiguous"
                    return [{"pointer": pointer, "reference": operand, "reason": reason}]
                operand = found[0]
            if not (is_number(actual) and is_number(operand)) or not math.isfinite(actual):
                return False
            return bool({"$gt": actual > operand, "$gte": actual >= operand,
                         "$lt": actual < operand, "$lte": actual <= operand}[name])
        if actual is ABSENT:
            return False
        if name == "$regex":
            return isinstance(actual, str) and re.search(operand, actual) is not None
        if name == "$contains":
            return isinstance(actual, list) and any(Matcher(self.trace).node(operand, e, "").ok for e in actual)
        if name == "$literal":
            return json_equal(operand, actual)
        raise AssertionError(f"operator {name} not modelled")


def condition(cond: dict[str, Any], trace: Trace) -> bool | None:
    """§2 Conditions with §10.14: evaluated once at trace end; three-valued (None = unresolved)."""
    if "any_of" in cond or "all_of" in cond:
        values = [condition(c, trace) for c in cond.get("any_of") or cond["all_of"]]
        decisive = "any_of" in cond
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if "outcome" in cond:
        wanted = cond["outcome"]
        seen = [e for e in trace.events
                if e["type"] == "outcome.observed" and glob(wanted["outcome_id"], e["outcome_id"])]
        return None if not seen else seen[-1].get("verdict") == wanted["verdict"]
    output = trace.output
    value = ABSENT if output is ABSENT else get_path(output, cond["path"])
    if value is ABSENT:
        return None
    if "equals" in cond:
        return json_equal(value, cond["equals"])
    if "non_empty" in cond:
        return None if not isinstance(value, list) else len(value) > 0
    return Matcher(trace).node(cond["matches"], value, "").ok


def reads_output(cond: dict[str, Any]) -> bool:
    if "any_of" in cond or "all_of" in cond:
        return any(reads_output(c) for c in cond.get("any_of") or cond["all_of"])
    return "path" in cond


def at_terminal(trace: Trace, code: str, status: str, evidence: dict[str, Any],
                pointer: str | None) -> Violation:
    """§10.2: at the terminal; no seq (and no pointer into an event) when there is none."""
    violation: Violation = {"code": code, "status": status, "evidence": evidence}
    event = trace.terminal_event
    if event is not None:
        violation["event_seq"] = event["seq"]
        violation["event_index"] = trace.terminal
        if pointer is not None:
            violation["pointer"] = pointer
    return violation


def model_rule(rule: dict[str, Any], trace: Trace) -> tuple[int, list[Violation], bool]:
    """(checked, violations, reads the output) for one rule."""
    kind = rule["kind"]
    output = trace.output
    if kind == "run_status":
        event = trace.terminal_event
        status = "none" if event is None else event.get("status", event["type"].split(".")[1])
        allowed = [rule["equals"]] if "equals" in rule else rule["in"]
        if status in allowed:
            return 1, [], False
        expected = rule["equals"] if "equals" in rule else rule["in"]
        evidence = {"status": status, "expected": expected}
        return 1, [at_terminal(trace, "run_status.mismatch", "fail", evidence, None)], False
    if kind == "output_match" and "when" in rule:
        verdict = condition(rule["when"], trace)
        if verdict is False:
            return 0, [], False
        if verdict is None:
            v = at_terminal(trace, "output_match.condition_unresolved", "unresolved", {"when": cut(rule["when"])}, None)
            return 1, [v], reads_output(rule["when"])
    if output is ABSENT:
        return 1, [at_terminal(trace, f"{kind}.output_missing", "unresolved", {}, "/output")], True
    if kind == "output_schema":
        validator = jsonschema.Draft202012Validator(rule["schema"])
        errors = [{"pointer": "/output" + "".join("/" + pointer_token(p) for p in e.absolute_path),
                   "message": cut(schema_message(e))} for e in validator.iter_errors(output)]
        if not errors:
            return 1, [], True
        errors = errors[:20]
        return 1, [at_terminal(trace, "output_schema.schema", "fail", {"errors": errors}, errors[0]["pointer"])], True
    matcher = Matcher(trace, rule.get("mode") == "exact", tuple(rule.get("ignore", ())))
    result = matcher.node(rule["match"], output, "/output", top=True)
    violations = []
    if result.mismatches:
        mismatches = result.mismatches[:20]
        violations.append(at_terminal(trace, "output_match.mismatch", "fail", {"mismatches": mismatches},
                                      mismatches[0]["pointer"]))
    if result.unresolved:
        violations.append(at_terminal(trace, "output_match.reference_unresolved", "unresolved",
                                      {"unresolved": result.unresolved}, result.unresolved[0]["pointer"]))
    return 1, violations, True


def model_report(rules: list[dict[str, Any]], events: list[dict[str, Any]], partial: bool) -> dict[str, Any]:
    trace = Trace(events)
    checked: dict[str, tuple[int, list[Violation], bool]] = {r["id"]: model_rule(r, trace) for r in rules}
    # "When it fails": under --partial every violation of the three kinds is inconclusive and left
    # out of `passed` (§10.82), so no output_schema rule fails and none is a cause
    failing_schema = None if partial else next(
        (r["id"] for r in rules if r["kind"] == "output_schema" and checked[r["id"]][1]), None)
    results = []
    errors = warnings = inconclusive_total = 0
    for rule in rules:
        count, violations, reads = checked[rule["id"]]
        for v in violations:
            if failing_schema is not None and rule["kind"] != "output_schema" and reads:
                v["caused_by"] = failing_schema
            if partial:  # §0 + §10.82: all three kinds are liveness
                v["status"] = "inconclusive"
        severity = rule.get("severity", "error")
        counted = 0 if partial else len(violations)
        inconclusive_total += len(violations) if partial else 0
        if severity == "error":
            errors += counted
        else:
            warnings += counted
        results.append({"rule_id": rule["id"], "passed": counted == 0, "checked": count,
                        "inconclusive": len(violations) if partial else 0, "violations": violations})
    return {"passed": errors == 0, "error_count": errors, "warning_count": warnings,
            "inconclusive_count": inconclusive_total, "results": results}


# ---------------------------------------------------------------------------------------------
# Running the product and comparing
# ---------------------------------------------------------------------------------------------


def numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": i + 1, **e} for i, e in enumerate(events)]


def product_report(rules: list[dict[str, Any]], events: list[dict[str, Any]], tmp: Path,
                   partial: bool = False) -> dict[str, Any]:
    contract_path = tmp / "c.json"
    contract_path.write_text(json.dumps({"version": 2, "name": "model", "rules": rules}), encoding="utf-8")
    trace_path = tmp / "t.jsonl"
    trace_path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    data: dict[str, Any] = msgspec.to_builtins(check_trace(load_contract(str(contract_path)), str(trace_path),
                                                           partial=partial))
    return data


def sort_key(item: dict[str, Any]) -> str:
    return json.dumps(item, sort_keys=True)


def simplify(violation: dict[str, Any]) -> dict[str, Any]:
    keep = ("code", "status", "event_seq", "event_index", "pointer", "caused_by", "evidence")
    out = {k: violation[k] for k in keep if k in violation}
    evidence = dict(out.get("evidence", {}))
    for key in ("mismatches", "unresolved", "errors"):
        # §10.7 names the lists but not the order inside one; compared as multisets
        if key in evidence:
            evidence[key] = sorted(evidence[key], key=sort_key)
    out["evidence"] = evidence
    return out


def compare(rules: list[dict[str, Any]], events: list[dict[str, Any]], tmp: Path, partial: bool = False) -> None:
    events = numbered(events)
    expected = model_report(rules, events, partial)
    actual = product_report(rules, events, tmp, partial)
    context = json.dumps({"rules": rules, "events": events, "partial": partial})
    assert (actual["passed"], actual["error_count"], actual["warning_count"]) == (
        expected["passed"], expected["error_count"], expected["warning_count"]), context
    assert actual.get("inconclusive_count", 0) == expected["inconclusive_count"], context
    flat: list[dict[str, Any]] = []
    for got, want in zip(actual["results"], expected["results"], strict=True):
        assert got["rule_id"] == want["rule_id"]
        assert (got["passed"], got["checked"], got.get("inconclusive", 0)) == (
            want["passed"], want["checked"], want["inconclusive"]), context
        assert not got.get("vacuous", False), context  # §10.4: trace-level kinds are never vacuous
        assert [simplify(v) for v in got["violations"]] == [simplify(v) for v in want["violations"]], context
        flat += got["violations"]
    assert actual["violations"] == flat, context  # §10.5: concatenation in contract order


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------

LONG = "x" * 205
KEYS = ("a", "b", "c", "x/y")
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([1.0, 2.5, -0.5]),
                    st.sampled_from(["", "a", "ab", "b", LONG]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)), max_leaves=6)
small_values = st.one_of(scalars, st.lists(st.integers(0, 3), max_size=3),
                         st.dictionaries(st.sampled_from(KEYS), st.integers(0, 3), max_size=2))
number = st.one_of(st.integers(-2, 3), st.sampled_from([1.0, 2.5]))
tools = st.sampled_from(["t", "u"])
call_ids = st.sampled_from(["1", "2", "3"])


@st.composite
def from_result(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"tool": draw(st.sampled_from(["t", "u", "*", "t*"]))}
    if draw(st.booleans()):
        spec["path"] = draw(st.sampled_from(["a", "b", "a.0", "/a", "/x~1y", "0"]))
    if draw(st.booleans()):
        spec["call_index"] = draw(st.integers(0, 2))
    else:
        if draw(st.integers(0, 3)) == 0:
            spec["where"] = {"a": draw(st.integers(0, 2))}
        if draw(st.integers(0, 3)) == 0:
            spec["where_result"] = {"a": draw(st.integers(0, 2))}
    if draw(st.integers(0, 3)) == 0:
        spec["find"] = {"a": draw(st.integers(0, 2))}
        if draw(st.booleans()):
            spec["select"] = draw(st.sampled_from(["b", "a"]))
    if draw(st.integers(0, 4)) == 0:
        spec["length"] = True
    if draw(st.integers(0, 3)) == 0:
        spec["ok_only"] = draw(st.booleans())
    return {"$from_result": spec}


def operators(draw: st.DrawFn, as_key_value: bool) -> dict[str, Any]:
    choice = draw(st.sampled_from(["cmp", "cmp_ref", "in", "in_ref", "regex", "exists", "any_of",
                                   "contains", "literal"]))
    if choice == "cmp":
        ops = draw(st.lists(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), min_size=1, max_size=2, unique=True))
        return {op: draw(number) for op in ops}
    if choice == "cmp_ref":
        return {draw(st.sampled_from(["$gt", "$gte", "$lt", "$lte"])): draw(from_result())}
    if choice == "in":
        return {"$in": draw(st.lists(small_values, min_size=1, max_size=3))}
    if choice == "in_ref":
        return {"$in": draw(from_result())}
    if choice == "regex":
        return {"$regex": draw(st.sampled_from(["a", "^a$", "b+", "x{3}"]))}
    if choice == "exists" and as_key_value:
        return {"$exists": draw(st.booleans())}
    if choice == "any_of":
        return {"$any_of": draw(st.lists(st.one_of(small_values, from_result()), min_size=2, max_size=3))}
    if choice == "contains":
        return {"$contains": draw(st.one_of(st.integers(0, 3), st.just({"$gt": 1})))}
    return {"$literal": draw(small_values)}


@st.composite
def match_node(draw: st.DrawFn, depth: int = 0, as_key_value: bool = False) -> Json:
    kind = draw(st.sampled_from(["scalar", "op", "ref", "object", "array"] if depth < 2 else ["scalar", "op", "ref"]))
    if kind == "scalar":
        return draw(scalars)
    if kind == "op":
        return operators(draw, as_key_value)
    if kind == "ref":
        return draw(from_result())
    if kind == "object":
        keys = draw(st.lists(st.sampled_from(KEYS), max_size=3, unique=True))
        return {k: draw(match_node(depth + 1, True)) for k in keys}
    return draw(st.lists(match_node(depth + 1), max_size=2))


@st.composite
def conditions(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    choice = draw(st.sampled_from(["equals", "non_empty", "matches", "outcome", "any_of", "all_of"]
                                  if depth == 0 else ["equals", "non_empty", "matches", "outcome"]))
    path = draw(st.sampled_from(["a", "b", "a.0", "/c"]))
    if choice == "equals":
        return {"path": path, "equals": draw(small_values)}
    if choice == "non_empty":
        return {"path": path, "non_empty": True}
    if choice == "matches":
        return {"path": path, "matches": draw(st.one_of(scalars, st.just({"$gt": 0}), st.just({"a": 1})))}
    if choice == "outcome":
        return {"outcome": {"outcome_id": draw(st.sampled_from(["o", "o*", "p"])),
                            "verdict": draw(st.sampled_from(["satisfied", "violated"]))}}
    return {choice: draw(st.lists(conditions(depth + 1), min_size=2, max_size=3))}


SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "required": ["a"]},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}},
    {"type": "array", "items": {"type": "integer"}},
    {"type": ["string", "null"]},
    {},
    {"type": "object", "properties": {"a": {"type": "array", "maxItems": 1}}, "additionalProperties": False},
    {"$defs": {"n": {"type": "number"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}},
]
STATUSES = ["completed", "failed", "awaiting_approval", "none"]


@st.composite
def outcome_rule(draw: st.DrawFn, kind: str, rule_id: str) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": rule_id, "kind": kind}
    if draw(st.integers(0, 3)) == 0:
        rule["severity"] = draw(st.sampled_from(["error", "warning"]))
    if kind == "run_status":
        if draw(st.booleans()):
            rule["equals"] = draw(st.sampled_from(STATUSES))
        else:
            rule["in"] = draw(st.lists(st.sampled_from(STATUSES), min_size=1, max_size=3, unique=True))
    elif kind == "output_schema":
        rule["schema"] = draw(st.sampled_from(SCHEMAS))
    else:
        rule["match"] = draw(match_node())
        if draw(st.booleans()):
            rule["mode"] = draw(st.sampled_from(["subset", "exact"]))
            if rule["mode"] == "exact" and draw(st.booleans()):
                rule["ignore"] = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=2, unique=True))
        if draw(st.integers(0, 3)) == 0:
            rule["when"] = draw(conditions())
    return rule


@st.composite
def event(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["run.start", "call", "result", "result", "completed", "failed", "outcome"]))
    if kind == "run.start":
        return {"type": "run.start"}
    if kind == "call":
        e: dict[str, Any] = {"type": "tool.call", "tool": draw(tools), "call_id": draw(call_ids)}
        if draw(st.integers(0, 3)):
            e["args"] = draw(st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 2), max_size=2))
        return e
    if kind == "result":
        e = {"type": "tool.result", "call_id": draw(call_ids), "ok": draw(st.booleans())}
        if draw(st.integers(0, 4)):
            e["result"] = draw(st.one_of(values, st.fixed_dictionaries({"a": st.integers(0, 2), "b": scalars})))
        if draw(st.integers(0, 3)) == 0:
            e["tool"] = draw(tools)
        return e
    if kind == "outcome":
        return {"type": "outcome.observed", "outcome_id": draw(st.sampled_from(["o", "o2", "p"])),
                "verdict": draw(st.sampled_from(["satisfied", "violated"])), "evidence_class": "configured_verifier"}
    e = {"type": f"run.{kind}"}
    if draw(st.booleans()):
        e["output"] = draw(st.one_of(values, st.dictionaries(st.sampled_from(KEYS), values, max_size=3)))
    if draw(st.booleans()):
        e["status"] = draw(st.sampled_from(STATUSES[:3]))
    return e


@st.composite
def exchange(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A call and its result, the usual shape (results may also come alone, or never)."""
    call_id = draw(call_ids)
    call: dict[str, Any] = {"type": "tool.call", "tool": draw(tools), "call_id": call_id,
                            "args": {"a": draw(st.integers(0, 2))}}
    result: dict[str, Any] = {"type": "tool.result", "call_id": call_id, "ok": draw(st.integers(0, 3)) > 0}
    if draw(st.integers(0, 5)):
        result["result"] = draw(st.one_of(st.integers(0, 3), st.fixed_dictionaries(
            {"a": st.one_of(st.integers(0, 2), st.lists(st.fixed_dictionaries({"a": st.integers(0, 2), "b": scalars}),
                                                        max_size=2)),
             "b": scalars}), values))
    return [call, result]


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """0..8 events: a body of calls, results, outcomes and starts, then usually a terminal (or two,
    or events after it)."""
    body: list[dict[str, Any]] = []
    for part in draw(st.lists(st.one_of(exchange(), event().map(lambda e: [e])), max_size=4)):
        body += part
    body = body[:6]
    ends = draw(st.sampled_from([[], ["completed"], ["failed"], ["completed"], ["failed", "completed"],
                                 ["completed", "failed"], ["completed", "completed"]]))
    for end in ends:
        terminal: dict[str, Any] = {"type": f"run.{end}"}
        if draw(st.integers(0, 5)):
            terminal["output"] = draw(st.one_of(values, st.dictionaries(st.sampled_from(KEYS), values, max_size=3)))
        if draw(st.booleans()):
            terminal["status"] = draw(st.sampled_from(STATUSES[:3]))
        body.append(terminal)
    if draw(st.integers(0, 4)) == 0:
        body.append(draw(event()))
    return body[:8]


@st.composite
def contracts(draw: st.DrawFn) -> list[dict[str, Any]]:
    kind = draw(st.sampled_from(OUTCOME_KINDS))
    rules = [draw(outcome_rule(kind, "r1"))]
    if draw(st.integers(0, 2)) == 0:  # caused_by needs an output_schema next to a reader
        other = draw(st.sampled_from(OUTCOME_KINDS))
        second = draw(outcome_rule(other, "r2"))
        rules = [second, *rules] if draw(st.booleans()) else [*rules, second]
    return rules


# ---------------------------------------------------------------------------------------------
# The property test
# ---------------------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=examples(250), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rules=contracts(), events=traces(), partial=st.booleans())
def test_model_agrees_with_product(rules: list[dict[str, Any]], events: list[dict[str, Any]], partial: bool,
                                   tmp_path: Path) -> None:
    """Verdict, counts, per-rule checked/vacuous and every violation agree with the §3.7 model."""
    compare(rules, events, tmp_path, partial)


# ---------------------------------------------------------------------------------------------
# Hand-written cases from the spec's words (each checked against the product AND the model)
# ---------------------------------------------------------------------------------------------


def call(tool: str, call_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool.call", "tool": tool, "call_id": call_id, **extra}


def result(call_id: str, value: Json = ABSENT, ok: bool = True) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.result", "call_id": call_id, "ok": ok}
    if value is not ABSENT:
        event["result"] = value
    return event


def done(output: Json = ABSENT, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "run.completed", **extra}
    if output is not ABSENT:
        event["output"] = output
    return event


def failed(output: Json = ABSENT, **extra: Any) -> dict[str, Any]:
    return {**done(output, **extra), "type": "run.failed"}


def observed(outcome_id: str, verdict: str) -> dict[str, Any]:
    return {"type": "outcome.observed", "outcome_id": outcome_id, "verdict": verdict,
            "evidence_class": "configured_verifier"}


def codes_at(rules: list[dict[str, Any]], events: list[dict[str, Any]], tmp: Path,
             partial: bool = False) -> list[tuple[str, int | None, str]]:
    """(code, seq, status) of every violation, after checking that the model agrees."""
    compare(rules, events, tmp, partial)
    report = product_report(rules, numbered(events), tmp, partial)
    return [(v["code"], v.get("event_seq"), v["status"]) for v in report["violations"]]


def only(rules: list[dict[str, Any]], events: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    """The single violation of the report (model agreement checked)."""
    compare(rules, events, tmp)
    violations = product_report(rules, numbered(events), tmp)["violations"]
    assert len(violations) == 1, violations
    found: dict[str, Any] = violations[0]
    return found


LEDGER: list[dict[str, Any]] = [call("ledger", "l1", args={}), result("l1", {"total": 40})]
TRUE_TOTAL: dict[str, Any] = {"id": "true-total", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}}
SHAPE: dict[str, Any] = {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}}
DONE: dict[str, Any] = {"id": "done", "kind": "run_status", "equals": "completed"}


def om(match: Json, **fields: Any) -> dict[str, Any]:
    return {"id": "m", "kind": "output_match", "match": match, **fields}


def rs(**fields: Any) -> dict[str, Any]:
    return {"id": "s", "kind": "run_status", **fields}


def osch(schema: Json) -> dict[str, Any]:
    return {"id": "o", "kind": "output_schema", "schema": schema}


# -- the §3.7 example --


def test_spec_example_fails_true_total_only(tmp_path: Path) -> None:
    """§3.7: "FAIL → true-total at seq 3: mismatch at /output/total (expected any of [40], got 45)"."""
    events = [*LEDGER, done({"total": 45}, status="completed")]
    assert codes_at([DONE, SHAPE, TRUE_TOTAL], events, tmp_path) == [("output_match.mismatch", 3, "fail")]
    violation = product_report([TRUE_TOTAL], numbered(events), tmp_path)["violations"][0]
    assert violation["pointer"] == "/output/total"
    assert violation["evidence"] == {"mismatches": [{"pointer": "/output/total", "expected": {"any_of": [40]},
                                                     "actual": 45}]}


def test_spec_example_passes_with_40(tmp_path: Path) -> None:
    """§3.7: "PASS: "total":40"."""
    assert codes_at([DONE, SHAPE, TRUE_TOTAL], [*LEDGER, done({"total": 40}, status="completed")], tmp_path) == []


# -- output_match --

OUTPUT_MATCH_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], list[tuple[str, int | None, str]]]] = [
    # §10.9: output null is an output: a mismatch for an object pattern, not output_missing
    ("null output is a mismatch", om({"a": 1}), [done(None)], [("output_match.mismatch", 1, "fail")]),
    # §0 / §10.6: a terminal without output → output_missing (unresolved) at the terminal
    ("no output key", om({"a": 1}), [done()], [("output_match.output_missing", 1, "unresolved")]),
    # §10.2: no terminal → no seq
    ("no terminal", om({"a": 1}), [call("t", "1")], [("output_match.output_missing", None, "unresolved")]),
    ("empty trace", om({"a": 1}), [], [("output_match.output_missing", None, "unresolved")]),
    # §0 terminal = the LAST run.completed/run.failed; §10.54 an earlier terminal's output does not count
    ("earlier output ignored", om({"a": 1}), [done({"a": 1}), failed()],
     [("output_match.output_missing", 2, "unresolved")]),
    # §10.16: run.failed may carry output, the final output when it is the terminal
    ("run.failed output", om({"a": 1}), [failed({"a": 1})], []),
    # §2 literals: objects match as subsets
    ("subset passes", om({"a": 1}), [done({"a": 1, "b": 2})], []),
    # §2: mode exact → key sets equal at every level, except top-level ignore
    ("exact extra key", om({"a": 1}, mode="exact"), [done({"a": 1, "b": 2})], [("output_match.mismatch", 1, "fail")]),
    ("exact ignore", om({"a": 1}, mode="exact", ignore=["b"]), [done({"a": 1, "b": 2})], []),
    ("exact ignore top-level only", om({"a": {"c": 1}}, mode="exact", ignore=["b"]), [done({"a": {"c": 1, "b": 2}})],
     [("output_match.mismatch", 1, "fail")]),
    # §2: arrays need the same length; scalars equal; true≠1, 1=1.0
    ("array length", om({"a": [1, 2]}), [done({"a": [1, 2, 3]})], [("output_match.mismatch", 1, "fail")]),
    ("1 equals 1.0", om({"a": 1}), [done({"a": 1.0})], []),
    ("true is not 1", om({"a": True}), [done({"a": 1})], [("output_match.mismatch", 1, "fail")]),
    # §10.9: only $exists: false accepts absence
    ("$exists false", om({"a": {"$exists": False}}), [done({"b": 1})], []),
    ("$exists true on null", om({"a": {"$exists": True}}), [done({"a": None})], []),
    # §10.10: $regex matches strings only
    ("$regex on number", om({"a": {"$regex": "1"}}), [done({"a": 1})], [("output_match.mismatch", 1, "fail")]),
    ("$regex unanchored", om({"a": {"$regex": "b+"}}), [done({"a": "abbc"})], []),
    # §2: comparisons: finite numbers only, "100" never compares
    ("$gt on string", om({"a": {"$gt": 1}}), [done({"a": "100"})], [("output_match.mismatch", 1, "fail")]),
    # §2: $contains: some element matches; $literal: no $ interpretation (§10.10 structural)
    ("$contains", om({"a": {"$contains": {"$gt": 2}}}), [done({"a": [1, 3]})], []),
    ("$literal", om({"a": {"$literal": {"$gt": 1}}}), [done({"a": {"$gt": 1}})], []),
    ("$literal exact keys", om({"a": {"$literal": {"x": 1}}}), [done({"a": {"x": 1, "y": 2}})],
     [("output_match.mismatch", 1, "fail")]),
    # §2: an empty reference set → reference_unresolved (no_candidates), never an extra mismatch
    ("no candidates", TRUE_TOTAL, [done({"total": 45})], [("output_match.reference_unresolved", 1, "unresolved")]),
    # §2 step 1: results strictly before the terminal
    ("result after terminal", TRUE_TOTAL, [call("ledger", "l1"), done({"total": 40}), result("l1", {"total": 40})],
     [("output_match.reference_unresolved", 2, "unresolved")]),
    # §2 step 1: ok_only (default true) drops ok:false
    ("ok_only default", TRUE_TOTAL, [call("ledger", "l1"), result("l1", {"total": 40}, ok=False), done({"total": 40})],
     [("output_match.reference_unresolved", 3, "unresolved")]),
    # §2: comparisons need exactly one distinct candidate, otherwise ambiguous
    ("ambiguous", om({"total": {"$lte": {"$from_result": {"tool": "ledger", "path": "total"}}}}),
     [*LEDGER, call("ledger", "l2"), result("l2", {"total": 50}), done({"total": 45})],
     [("output_match.reference_unresolved", 5, "unresolved")]),
    # §2: equality passes if ANY candidate matches
    ("any candidate", TRUE_TOTAL,
     [*LEDGER, call("ledger", "l2"), result("l2", {"total": 45}), done({"total": 45})], []),
    # §10.11: $in with an array candidate contributes its elements
    ("$in array candidate", om({"sku": {"$in": {"$from_result": {"tool": "cat", "path": "skus"}}}}),
     [call("cat", "c"), result("c", {"skus": ["A", "B"]}), done({"sku": "B"})], []),
    # §10.5: mismatch before reference_unresolved at one event
    ("code order", om({"a": 1, "b": {"$from_result": {"tool": "z"}}}), [done({"a": 2})],
     [("output_match.mismatch", 1, "fail"), ("output_match.reference_unresolved", 1, "unresolved")]),
    # §3.7: a false when is a pass with checked 0; unresolved when → condition_unresolved only (§10.14)
    ("when false", om({"a": 1}, when={"path": "k", "equals": "x"}), [done({"k": "y", "a": 2})], []),
    ("when unresolved", om({"a": 1}, when={"path": "k", "equals": "x"}), [done({"a": 2})],
     [("output_match.condition_unresolved", 1, "unresolved")]),
    ("when unresolved no terminal", om({"a": 1}, when={"path": "k", "equals": "x"}), [],
     [("output_match.condition_unresolved", None, "unresolved")]),
    # §10.14: the last matching outcome.observed decides; Kleene any_of
    ("when outcome last wins", om({"a": 1}, when={"outcome": {"outcome_id": "o*", "verdict": "violated"}}),
     [observed("o1", "violated"), observed("o2", "satisfied"), done({"a": 2})], []),
    ("when kleene any_of", om({"a": 1}, when={"any_of": [{"path": "k", "equals": 1},
                                                         {"outcome": {"outcome_id": "o", "verdict": "violated"}}]}),
     [observed("o", "violated"), done({"a": 2})], [("output_match.mismatch", 2, "fail")]),
    ("when kleene all_of", om({"a": 1}, when={"all_of": [{"path": "k", "equals": 1},
                                                         {"outcome": {"outcome_id": "o", "verdict": "violated"}}]}),
     [observed("o", "satisfied"), done({"a": 2})], []),
    ("when non_empty on non-array", om({"a": 1}, when={"path": "k", "non_empty": True}), [done({"k": "x"})],
     [("output_match.condition_unresolved", 1, "unresolved")]),
]


@pytest.mark.parametrize(("rule", "events", "expected"), [c[1:] for c in OUTPUT_MATCH_CASES],
                         ids=[c[0] for c in OUTPUT_MATCH_CASES])
def test_output_match_case(rule: dict[str, Any], events: list[dict[str, Any]],
                           expected: list[tuple[str, int | None, str]], tmp_path: Path) -> None:
    assert codes_at([rule], events, tmp_path) == expected


def test_when_false_checks_nothing_and_is_not_vacuous(tmp_path: Path) -> None:
    """§3.7 "A false when is a pass with checked 0"; §10.4: output_match is never vacuous."""
    rules = [om({"a": 1}, when={"path": "k", "equals": "x"})]
    result_ = product_report(rules, numbered([done({"k": "y"})]), tmp_path)["results"][0]
    assert (result_["passed"], result_["checked"], result_.get("vacuous", False)) == (True, 0, False)


def test_missing_key_mismatch_omits_actual(tmp_path: Path) -> None:
    """§10.7: mismatches [{pointer, expected, actual?}] (`actual` omitted when absent); §10.9."""
    violation = only([om({"a": {"b": 1}})], [done({"a": {}})], tmp_path)
    assert violation["evidence"] == {"mismatches": [{"pointer": "/output/a/b", "expected": 1}]}


def test_mismatches_capped_at_20(tmp_path: Path) -> None:
    """§3.1 (codes of tool_args, reused by §3.7): mismatch: up to 20 {pointer, expected, actual}."""
    violation = only([om({"a": [0] * 25})], [done({"a": [1] * 25})], tmp_path)
    assert len(violation["evidence"]["mismatches"]) == 20


def test_strings_cut_at_200_code_points(tmp_path: Path) -> None:
    """§0 / §10.7: strings are cut to 200 Unicode code points plus `…`."""
    violation = only([om({"a": "é" * 300})], [done({"a": "ü" * 201})], tmp_path)
    mismatch = violation["evidence"]["mismatches"][0]
    assert (mismatch["expected"], mismatch["actual"]) == ("é" * 200 + "…", "ü" * 200 + "…")


def test_pointer_escapes_keys(tmp_path: Path) -> None:
    """§0: pointer is RFC 6901 into the event (`/` → `~1`, `~` → `~0`)."""
    violation = only([om({"a/b": {"c~d": 1}})], [done({"a/b": {"c~d": 2}})], tmp_path)
    assert violation["pointer"] == "/output/a~1b/c~0d"


def test_reference_evidence(tmp_path: Path) -> None:
    """§10.7: unresolved: [{pointer, reference, reason}]."""
    violation = only([TRUE_TOTAL], [done({"total": 45})], tmp_path)
    assert violation["evidence"] == {"unresolved": [{"pointer": "/output/total", "reason": "no_candidates",
                                                     "reference": TRUE_TOTAL["match"]["total"]}]}


def test_from_result_where_find_select_length(tmp_path: Path) -> None:
    """§2 steps 3-4 / §10.12: where on the producing call's args, then path → find → select, and
    length counts an array."""
    ref = {"$from_result": {"tool": "orders", "where": {"id": 7}, "path": "lines", "find": {"sku": "B"},
                            "select": "qty"}}
    count = {"$from_result": {"tool": "orders", "where": {"id": 7}, "path": "lines", "length": True}}
    lines = [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 3}]
    events = [call("orders", "1", args={"id": 7}), result("1", {"lines": lines}),
              call("orders", "2", args={"id": 8}), result("2", {"lines": [{"sku": "B", "qty": 9}]}),
              done({"qty": 3, "n": 2})]
    assert codes_at([om({"qty": ref, "n": count})], events, tmp_path) == []


def test_from_result_call_index(tmp_path: Path) -> None:
    """§2 step 2 / §10.12: call_index keeps the k-th call's result (calls counted over the trace)."""
    ref = {"$from_result": {"tool": "ledger", "call_index": 1, "path": "total"}}
    events = [*LEDGER, call("ledger", "l2"), result("l2", {"total": 41}), done({"total": 40})]
    assert codes_at([om({"total": ref})], events, tmp_path) == [("output_match.mismatch", 5, "fail")]


def test_paired_result_uses_its_calls_tool(tmp_path: Path) -> None:
    """§0 / §10.3: a paired result's own tool field is ignored by new kinds."""
    events = [call("ledger", "l1"), {**result("l1", {"total": 40}), "tool": "other"}, done({"total": 40})]
    assert codes_at([TRUE_TOTAL], events, tmp_path) == []


@pytest.mark.parametrize("reference", [{"$arg": "x"}, {"$from_output": "x"}])
def test_arg_and_from_output_are_load_errors(reference: dict[str, Any], tmp_path: Path) -> None:
    """§3.7: "$arg and $from_output are load errors here"."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "x", "rules": [om({"a": reference})]}))
    with pytest.raises(InputError):
        load_contract(str(tmp_path / "c.json"))


@pytest.mark.parametrize("rule", [
    om({"a": 1}, ignore=["b"]),  # §3.1 ignore: exact mode only
    om({"$exists": True}),  # §10.11: $exists at the root
    om({"a": {"$regex": "(a)\\1"}}),  # §10.10: RE2 syntax, no backreferences
    om({"a": {"$any_of": [1]}}),  # §2: $any_of 2..20 branches
    om({"a": {"$gt": True}}),  # §2: bad operands are load errors
    om({"a": 1}, when={"any_of": [{"path": "a", "equals": 1}]}),  # §2 conditions: any_of 2..20
    om({"a": {"$from_result": {"tool": "t", "path": ""}}}),  # §10.13: "" is not a valid path
    om({"a": 1}, when={"path": "", "equals": 1}),
    om({"a": {"$in": list(range(1001))}}),  # §2: $in ≤ 1000 values
    om({"a": {"$regex": "a" * 501}}),  # §2: $regex ≤ 500 chars
    om(json.loads('{"a":' * 33 + "1" + "}" * 33)),  # §2: depth ≤ 32
    rs(equals="a", **{"in": ["a"]}),  # §3.7: equals OR in
    rs(),
    rs(**{"in": []}),  # in: 1..20
    rs(**{"in": [str(i) for i in range(21)]}),
    osch({"$ref": "http://example.com/s.json"}),  # local $ref only
])
def test_bad_rule_is_load_error(rule: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "x", "rules": [rule]}))
    with pytest.raises(InputError):
        load_contract(str(tmp_path / "c.json"))


# -- output_schema --

OUTPUT_SCHEMA_CASES: list[tuple[str, Json, list[dict[str, Any]], list[tuple[str, int | None, str]]]] = [
    ("explain example fails", SHAPE["schema"], [done({"sum": 45})], [("output_schema.schema", 1, "fail")]),
    ("explain example passes", SHAPE["schema"], [done({"total": 45})], []),
    ("no output", SHAPE["schema"], [done()], [("output_schema.output_missing", 1, "unresolved")]),
    ("no terminal", SHAPE["schema"], [call("t", "1")], [("output_schema.output_missing", None, "unresolved")]),
    # §10.9: output null is an output, which the schema judges
    ("null judged", {"type": "null"}, [done(None)], []),
    ("null fails object", {"type": "object"}, [done(None)], [("output_schema.schema", 1, "fail")]),
    ("run.failed output", {"type": "array"}, [failed([1])], []),
    ("last terminal only", {"type": "array"}, [done([1]), done("x")], [("output_schema.schema", 2, "fail")]),
    ("local ref", {"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}, [done([1, "x"])],
     [("output_schema.schema", 1, "fail")]),
    ("string output", {"type": "string", "maxLength": 3}, [done("abcd")], [("output_schema.schema", 1, "fail")]),
]


@pytest.mark.parametrize(("schema", "events", "expected"), [c[1:] for c in OUTPUT_SCHEMA_CASES],
                         ids=[c[0] for c in OUTPUT_SCHEMA_CASES])
def test_output_schema_case(schema: Json, events: list[dict[str, Any]],
                            expected: list[tuple[str, int | None, str]], tmp_path: Path) -> None:
    assert codes_at([osch(schema)], events, tmp_path) == expected


def test_schema_errors_capped_at_20_with_pointers(tmp_path: Path) -> None:
    """§3.7 "schema (up to 20 errors)"; §10.7 errors: [{pointer, message}], pointers into the event."""
    violation = only([osch({"type": "array", "items": {"type": "string"}})], [done(list(range(25)))], tmp_path)
    errors = violation["evidence"]["errors"]
    assert len(errors) == 20 and {e["pointer"] for e in errors} <= {f"/output/{i}" for i in range(25)}


def test_caused_by_names_failing_schema(tmp_path: Path) -> None:
    """§3.7: "When it fails, every other violation that reads the output gets caused_by: <id>.
    Nothing is suppressed." run_status does not read the output."""
    rules = [SHAPE, TRUE_TOTAL, DONE]
    events = [*LEDGER, failed({"sum": 45})]
    compare(rules, events, tmp_path)
    violations = product_report(rules, numbered(events), tmp_path)["violations"]
    assert [(v["code"], v.get("caused_by")) for v in violations] == [
        ("output_schema.schema", None), ("output_match.mismatch", "shape"), ("run_status.mismatch", None)]


def test_no_caused_by_when_schema_passes(tmp_path: Path) -> None:
    """§3.7: caused_by only when the output_schema rule fails."""
    violation = only([SHAPE, TRUE_TOTAL], [*LEDGER, done({"total": 45})], tmp_path)
    assert "caused_by" not in violation


def test_outcome_condition_does_not_read_output(tmp_path: Path) -> None:
    """§3.7 caused_by goes to violations that read the output; an outcome condition reads none."""
    rules = [SHAPE, om({"a": 1}, when={"outcome": {"outcome_id": "o", "verdict": "violated"}})]
    compare(rules, [done({"a": 2})], tmp_path)
    violations = product_report(rules, numbered([done({"a": 2})]), tmp_path)["violations"]
    assert [(v["code"], v.get("caused_by")) for v in violations] == [
        ("output_schema.schema", None), ("output_match.condition_unresolved", None)]


# -- run_status --

RUN_STATUS_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], Json]] = [
    # §0: status absent → completed or failed by type; none without a terminal
    ("derived completed", {"equals": "completed"}, [done()], None),
    ("derived failed", {"equals": "completed"}, [call("refund", "c1"), failed(reason="down")],
     {"status": "failed", "expected": "completed"}),
    ("explicit status wins", {"equals": "completed"}, [failed(status="completed")], None),
    ("awaiting_approval", {"equals": "completed"}, [done(status="awaiting_approval")],
     {"status": "awaiting_approval", "expected": "completed"}),
    ("awaiting allowed", {"in": ["completed", "awaiting_approval"]}, [done(status="awaiting_approval")], None),
    ("none", {"equals": "completed"}, [call("t", "1")], {"status": "none", "expected": "completed"}),
    ("none expected", {"equals": "none"}, [], None),
    ("in mismatch", {"in": ["a", "b"]}, [done()], {"status": "completed", "expected": ["a", "b"]}),
    ("last terminal", {"equals": "failed"}, [failed(), done()], {"status": "completed", "expected": "failed"}),
    ("exact compare", {"equals": "complete*"}, [done()], {"status": "completed", "expected": "complete*"}),
]


@pytest.mark.parametrize(("fields", "events", "evidence"), [c[1:] for c in RUN_STATUS_CASES],
                         ids=[c[0] for c in RUN_STATUS_CASES])
def test_run_status_case(fields: dict[str, Any], events: list[dict[str, Any]], evidence: Json,
                         tmp_path: Path) -> None:
    """§3.7 run_status: evidence {status, expected}; §10.1 code mismatch; §10.2 at the terminal."""
    compare([rs(**fields)], events, tmp_path)
    violations = product_report([rs(**fields)], numbered(events), tmp_path)["violations"]
    if evidence is None:
        assert violations == []
        return
    terminals = [i for i, e in enumerate(events) if e["type"] in ("run.completed", "run.failed")]
    assert [(v["code"], v["status"], v.get("event_seq"), v["evidence"]) for v in violations] == [
        ("run_status.mismatch", "fail", terminals[-1] + 1 if terminals else None, evidence)]


# -- severity, --partial, exit codes, JSON form --


def test_warning_severity_counts_as_warning(tmp_path: Path) -> None:
    """§10.6: every violation has its rule's severity and counts in error_count/warning_count."""
    rules = [{**rs(equals="failed"), "severity": "warning"}]
    report = product_report(rules, numbered([done()]), tmp_path)
    assert (report["passed"], report["error_count"], report["warning_count"]) == (True, 0, 1)


def test_partial_makes_outcome_violations_inconclusive(tmp_path: Path) -> None:
    """§0 "check --partial reports liveness parts as inconclusive" (§3.7 kinds are liveness);
    §10.82: left out of error_count and the verdict."""
    rules = [DONE, SHAPE, TRUE_TOTAL]
    compare(rules, [call("ledger", "l1")], tmp_path, partial=True)
    report = product_report(rules, numbered([call("ledger", "l1")]), tmp_path, partial=True)
    assert (report["passed"], report["error_count"], report["inconclusive_count"]) == (True, 0, 3)
    assert {v["status"] for v in report["violations"]} == {"inconclusive"}


def write_case(tmp: Path, rules: list[dict[str, Any]], events: list[dict[str, Any]], version: int = 2) -> None:
    (tmp / "c.json").write_text(json.dumps({"version": version, "name": "x", "rules": rules}), encoding="utf-8")
    (tmp / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in numbered(events)), encoding="utf-8")


def test_cli_exit_and_canonical_numbers(cli: Callable[..., Any], tmp_path: Path) -> None:
    """§10.7: evidence serialised with RFC 8785 number form (1.0 → 1); exit 1 on an error."""
    write_case(tmp_path, [om({"a": 1.0})], [done({"a": 2.0})])
    run = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert run.returncode == 1, run.stderr
    compact = run.stdout.replace(" ", "").replace("\n", "")
    assert '"mismatches":[{"actual":2,"expected":1,"pointer":"/output/a"}]' in compact


def test_cli_partial_exit_zero(cli: Callable[..., Any], tmp_path: Path) -> None:
    """§10.82: inconclusive violations are left out of the exit."""
    write_case(tmp_path, [DONE, TRUE_TOTAL], [call("ledger", "l1")])
    run = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--partial")
    assert run.returncode == 0, run.stdout + run.stderr


def test_cli_v1_contract_rejects_outcome_kinds(cli: Callable[..., Any], tmp_path: Path) -> None:
    """§0: "Any new kind, field or matcher key requires version 2 ... new kinds or keys exit 2"."""
    write_case(tmp_path, [DONE], [done()], version=1)
    run = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (run.returncode, run.stdout) == (2, "")


def test_candidates_capped_at_20(tmp_path: Path) -> None:
    """§10.7: expected is {"any_of": [candidates ≤ 20]} for a reference."""
    events: list[dict[str, Any]] = []
    for i in range(25):
        events += [call("ledger", f"l{i}"), result(f"l{i}", {"total": i})]
    violation = only([TRUE_TOTAL], [*events, done({"total": 99})], tmp_path)
    assert len(violation["evidence"]["mismatches"][0]["expected"]["any_of"]) == 20


def test_numeric_dot_segment_reads_object_key(tmp_path: Path) -> None:
    """§10.13: a numeric dot segment looks up the key of that name when the value is no array."""
    ref = {"$from_result": {"tool": "t", "path": "0.1"}}
    events = [call("t", "1"), result("1", {"0": [5, 6]}), done({"a": 6})]
    assert codes_at([om({"a": ref})], events, tmp_path) == []


def test_slash_path_is_pointer_to_empty_key(tmp_path: Path) -> None:
    """§10.13: "/" is the Pointer to the key ""."""
    events = [call("t", "1"), result("1", {"": 5}), done({"a": 5})]
    assert codes_at([om({"a": {"$from_result": {"tool": "t", "path": "/"}}})], events, tmp_path) == []


def test_cut_counts_code_points_not_utf16_units(tmp_path: Path) -> None:
    """§10.7: 200 Unicode code points (an astral character is one)."""
    violation = only([om({"a": 1})], [done({"a": "😀" * 201})], tmp_path)
    assert violation["evidence"]["mismatches"][0]["actual"] == "😀" * 200 + "…"


@pytest.mark.parametrize("status", ["", "s" * 101, 3])
def test_bad_terminal_status_is_exit_2(status: Json, cli: Callable[..., Any], tmp_path: Path) -> None:
    """§1 / §10.16: status is a string 1..100, type-checked under v2 (exit 2, file:line)."""
    write_case(tmp_path, [DONE], [done(status=status)])
    run = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (run.returncode, run.stdout) == (2, "") and "t.jsonl:1" in run.stderr, run.stderr


def test_any_of_with_reference_at_absent_key_is_mismatch(tmp_path: Path) -> None:
    """§10.9: "a literal or operator node whose key is absent from the actual object is a mismatch
    (only $exists: false accepts absence)". $any_of is an operator (§2), as $gt is (next test)."""
    rule = om({"a": {"$any_of": [1, {"$from_result": {"tool": "t"}}]}})
    report = product_report([rule], numbered([done({"b": 1})]), tmp_path)
    assert [v["code"] for v in report["violations"]] == ["output_match.mismatch"]


def test_comparison_with_reference_at_absent_key_is_mismatch(tmp_path: Path) -> None:
    """§10.9 (the same rule, which the product follows for a comparison operator)."""
    rule = om({"a": {"$gt": {"$from_result": {"tool": "t"}}}})
    assert codes_at([rule], [done({"b": 1})], tmp_path) == [("output_match.mismatch", 1, "fail")]
