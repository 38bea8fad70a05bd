"""`tool_args` against a reference model written from the spec text only (spec v2 §0, §1, §2, §3.1 and
§10 points 1-7, 9-13, 16 and 17; v1 §2.7 for globs). A property test generates one-rule contracts with
every option §3.1 gives the kind (`tool`, `match`, `mode`, `ignore`, `schema` when the `jsonschema`
extra is installed, `distinct`, `call_index`, and the combinations §3.1 forbids) and short traces
(tool.call events of a few tools and call_ids whose args are absent, an object with or without the
keys the rule reads, or not an object; results, messages and grants around them), and compares the
public API's verdict, `checked`, `vacuous` and violations (seq, code, status, order, evidence, pointer,
related_seqs) with the model.

What the model takes from the spec:
- the subjects are the `tool.call` events whose own `tool` matches the rule's glob (§3.1; a glob never
  matches a missing value, v1 §2.7); with `call_index` k only the k-th of them (0-based, §0 "Call
  index"), and `call_missing` without a seq when there is none (§3.1, point 2);
- each subject gets at most one violation per code, at the call (§3.1, point 2), ordered by event and
  then args_missing, mismatch, reference_unresolved, schema, not_distinct, distinct_missing (point 5);
- a call without args gets `args_missing` only (§0 "never vacuous", point 17); args that are not an
  object (null included) make the trace unreadable (§1, point 16);
- match trees (§2): objects match as subsets, arrays by length and position, scalars by JSON-type-strict
  equality; an operator object is the AND of its `$` keys; a key absent from the args is a mismatch
  unless its node is `$exists: false` (point 9); `$gt`-family compare finite non-boolean numbers only;
  `$regex` is an unanchored search on strings only (point 10); `$literal` is structural equality
  (point 10); with `mode: exact` key sets must be equal at every level except the top-level `ignore`;
- `mismatch` lists up to 20 `{pointer, expected, actual?}`, `expected` the node as written and
  `actual` left out when absent; a reference's `expected` is `{"any_of": candidates}`; an empty
  candidate set is `reference_unresolved` `{pointer, reference, reason: no_candidates}` (§2, points 7
  and 12) — references appear only in the spec's own example, the property test leaves them to the
  references model;
- `schema`: JSON Schema 2020-12 on the args, up to 20 `{pointer, message}` (§3.1, point 7); the
  model's validator is the `jsonschema` library itself;
- `distinct`: the paths (dot paths or JSON Pointers, §2 and point 13) form one composite key, a
  canonical tuple (equal when their RFC 8785 texts are: 2**53 + 1 is the double 2**53); a call
  lacking any path gets `distinct_missing`, a call whose key equals an earlier call's gets
  `not_distinct` with `related_seqs` = the first call with that key (point 17);
- statuses (point 6): unresolved for args_missing, reference_unresolved and distinct_missing, fail
  otherwise; every violation fails the rule;
- evidence carries `{tool, call_id?, call_index, mode}` (§3.1) and is canonical (§0, point 7): keys in
  RFC 8785 order (UTF-16 code units), numbers as ECMAScript writes the double (`2.0` → `2`, `1e21` →
  `1e+21`), strings cut to 200 code points plus `…`;
- `checked`: the subjects examined; vacuous when 0 without call_index; with call_index never vacuous
  (point 4); load errors (§3.1 fields): `ignore` without `mode: exact`, `distinct` with `call_index`,
  none of match/schema/distinct;
- every violation has the rule's severity and fails it (point 6); under `--partial` the liveness
  part is `inconclusive` and left out of the verdict (§0).

The report is read as JSON text (the JSON renderer's), so that RFC 8785's key order and number form
are checked as written; the property test runs 300 examples (3000 were run once, by hand).

Where the spec is silent the model follows the implementation (listed in `AMBIGUOUS` below).
"""
from __future__ import annotations

import decimal
import importlib.util
import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import ContractError, TraceError, check_trace
from agent_invariants.render.json import to_json
from tests.models import ABSENT, glob, picked, read_path, same, same_violations
from tests.support import schema_message

from support import examples

# Points where the spec is silent and the model follows the implementation:
AMBIGUOUS = (
    # §3.1 lists `tool` without saying it is required; without it every call that has a tool is checked
    "tool defaults to '*'",
    # §3.1 "evidence also carries {tool, ...}": the call's own tool for a call's violations, the rule's
    # glob for call_missing (there is no call); `mode` is "subset" when the rule gives none
    "evidence.tool and evidence.mode",
    # §2 says how nodes match, not where a mismatch is reported: the model reports at the deepest node
    # that fails (an operator object as a whole; an array of another length, or a literal against a
    # value of another type, at that node), in the pattern's key order, each object's extra keys
    # (exact mode) after its pattern keys in the args' order
    "mismatch granularity and order",
    # exact mode: an extra key is a mismatch {pointer, expected: {"$exists": false}, actual}
    "exact mode's extra keys",
    # `ignore` holds top-level key names (not paths); it excuses extra keys only, so an ignored key that
    # the pattern names is still checked
    "ignore is a list of top-level keys that may be extra",
    # not_distinct's evidence adds `key` (the composite key's values), distinct_missing's adds `missing`
    # (the absent paths as written)
    "distinct evidence",
    # the violation's `pointer`: the first listed entry's pointer (mismatch, reference_unresolved,
    # schema), /args for args_missing, the first distinct path for not_distinct, the first missing path
    # for distinct_missing, none for call_missing
    "violation pointer",
    # schema errors in the validator's order (jsonschema's iter_errors), with its messages
    "schema error order and messages",
    # with call_index, `checked` is 1 when the call exists and 0 with call_missing
    "checked with call_index",
    # a contract error is reported before a trace error
    "contract errors first",
    # §3.1 calls the kind liveness "with call_index" without naming the part: under --partial only
    # call_missing (which a longer trace could still avoid) is inconclusive; the k-th call, once
    # there, is judged as usual
    "the liveness part with call_index",
)

CODES = ("args_missing", "mismatch", "reference_unresolved", "schema", "not_distinct", "distinct_missing")
UNRESOLVED_CODES = ("args_missing", "reference_unresolved", "distinct_missing")
REFERENCE_KEYS = ("$from_result", "$arg")
LIST_CAP = 20
HAS_JSONSCHEMA = importlib.util.find_spec("jsonschema") is not None


# -- the reference model --------------------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    """One violation the model expects: at a trace position (None: no seq)."""
    position: int | None
    code: str
    evidence: dict[str, Any]
    pointer: str | None = None
    related_position: int | None = None


@dataclass(frozen=True)
class Subject:
    """What a reference in the match tree reads: the call under test and the trace before it."""
    position: int
    args: dict[str, Any]
    events: list[dict[str, Any]]


class LoadError(Exception):
    """The contract (`contract=True`) or the trace cannot be loaded."""

    def __init__(self, contract: bool) -> None:
        super().__init__("contract" if contract else "trace")
        self.contract = contract


def contract_invalid(rule: dict[str, Any]) -> bool:
    """§3.1 fields: ignore is for exact mode only, distinct excludes call_index, and one of match,
    schema or distinct is required."""
    if "ignore" in rule and rule.get("mode") != "exact":
        return True
    if "distinct" in rule and "call_index" in rule:
        return True
    return not {"match", "schema", "distinct"} & rule.keys()


def trace_invalid(events: list[dict[str, Any]]) -> bool:
    """§1 and point 16: `args`, wherever it appears, must be an object (null is not)."""
    return any("args" in event and not isinstance(event["args"], dict) for event in events)


def segments_of(path: str) -> list[str]:
    """§2: a dot path's segments, or a JSON Pointer's (unescaped)."""
    if path.startswith("/"):
        return [s.replace("~1", "/").replace("~0", "~") for s in path[1:].split("/")]
    return path.split(".")


def child(pointer: str, key: str | int) -> str:
    """RFC 6901: the pointer one level down."""
    return f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"


def args_pointer(path: str) -> str:
    """The pointer into the event of an args path."""
    pointer = "/args"
    for segment in segments_of(path):
        pointer = child(pointer, segment)
    return pointer


def utf16_order(key: str) -> bytes:
    """RFC 8785 sorts keys by their UTF-16 code units."""
    return key.encode("utf-16-be", "surrogatepass")


def shown(value: Any, cut: bool = True) -> Any:
    """§0 and point 7: an evidence value with RFC 8785 key order and numbers (IEEE doubles), and
    (with `cut`) strings cut to 200 code points plus `…`."""
    if isinstance(value, str):
        return value if len(value) <= 200 or not cut else value[:200] + "…"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2 ** 53:
        return float(value)
    if isinstance(value, list):
        return [shown(item, cut) for item in value]
    if isinstance(value, dict):
        return {key: shown(value[key], cut) for key in sorted(value, key=utf16_order)}
    return value


def es_number(value: float) -> str:
    """RFC 8785 §3.2.2.3: a number as ECMAScript's Number.prototype.toString writes the double."""
    value = float(value)
    if value == 0:
        return "0"
    if value < 0:
        return "-" + es_number(-value)
    _, digits, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    text, n = "".join(map(str, digits)), len(digits) + int(exponent)
    if len(text) <= n <= 21:
        return text + "0" * (n - len(text))
    if 0 < n <= 21:
        return f"{text[:n]}.{text[n:]}"
    if -6 < n <= 0:
        return "0." + "0" * -n + text
    mantissa = text if len(text) == 1 else f"{text[0]}.{text[1:]}"
    return f"{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"


SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def es_string(value: str) -> str:
    """RFC 8785 §3.2.2.2: a string as JSON.stringify writes it."""
    return '"' + "".join(SHORT_ESCAPES.get(c, f"\\u{ord(c):04x}" if ord(c) < 0x20 else c) for c in value) + '"'


class NumberText(str):
    """A JSON number exactly as the report wrote it."""


def json_text(value: Any) -> str:
    """Compact JSON with keys in the order given, numbers in RFC 8785 form (a NumberText as written)."""
    if isinstance(value, NumberText):
        return str(value)
    if isinstance(value, str):
        return es_string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return es_number(value)
    if isinstance(value, list):
        return "[" + ",".join(json_text(item) for item in value) + "]"
    return "{" + ",".join(f"{es_string(key)}:{json_text(item)}" for key, item in value.items()) + "}"


def number(value: Any) -> bool:
    """§2: comparisons take finite numbers only; booleans and numeric strings never compare."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value \
        and abs(value) != float("inf")


def operator_object(node: Any) -> bool:
    """§2: an operator object has only `$` keys (and at least one)."""
    return isinstance(node, dict) and bool(node) and all(key.startswith("$") for key in node)


def reference_node(node: Any) -> bool:
    """§2: a reference is an object whose one key names it (only those the example uses)."""
    return isinstance(node, dict) and len(node) == 1 and next(iter(node)) in REFERENCE_KEYS


COMPARISONS = {"$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
               "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


def operator_holds(name: str, operand: Any, actual: Any, exact: bool) -> bool:
    """One `$` key of an operator object (§2, points 9-11); only `$exists: false` accepts absence."""
    if name == "$exists":
        return (actual is not ABSENT) is operand
    if actual is ABSENT:
        return False
    if name == "$in":
        return any(same(value, actual) for value in operand)
    if name in COMPARISONS:
        return number(actual) and number(operand) and bool(COMPARISONS[name](actual, operand))
    if name == "$regex":
        return isinstance(actual, str) and re.search(operand, actual) is not None
    if name == "$literal":
        return same(operand, actual)
    if name == "$any_of":
        return any(node_holds(branch, actual, exact) for branch in operand)
    if name == "$contains":
        return isinstance(actual, list) and any(node_holds(operand, item, exact) for item in actual)
    raise AssertionError(f"the model does not generate {name}")


def node_holds(node: Any, actual: Any, exact: bool) -> bool:
    """A reference-free node matches (used inside operators)."""
    return not literal_or_operator(node, actual, "", exact, (), None)


def mismatch(pointer: str, expected: Any, actual: Any) -> tuple[str, dict[str, Any]]:
    """Point 7: `{pointer, expected, actual?}`."""
    entry = {"pointer": pointer, "expected": expected}
    if actual is not ABSENT:
        entry["actual"] = actual
    return ("mismatch", entry)


def object_entries(node: dict[str, Any], actual: dict[str, Any], pointer: str, exact: bool,
                   ignore: tuple[str, ...], subject: Subject | None) -> list[tuple[str, dict[str, Any]]]:
    """A literal object against an object: every pattern key (subset), then in exact mode every extra
    key that the top-level `ignore` does not excuse."""
    entries = []
    for key, value in node.items():
        entries += evaluate(value, actual.get(key, ABSENT), child(pointer, key), exact, (), subject)
    if exact:
        entries += [mismatch(child(pointer, key), {"$exists": False}, value)
                    for key, value in actual.items() if key not in node and key not in ignore]
    return entries


def literal_or_operator(node: Any, actual: Any, pointer: str, exact: bool, ignore: tuple[str, ...],
                        subject: Subject | None) -> list[tuple[str, dict[str, Any]]]:
    """§2's literal and operator nodes: the mismatches at and below `pointer`."""
    if operator_object(node):
        held = all(operator_holds(name, operand, actual, exact) for name, operand in node.items())
        return [] if held else [mismatch(pointer, node, actual)]
    if isinstance(node, dict):
        if not isinstance(actual, dict):
            return [mismatch(pointer, node, actual)]
        return object_entries(node, actual, pointer, exact, ignore, subject)
    if isinstance(node, list):
        if not isinstance(actual, list) or len(actual) != len(node):
            return [mismatch(pointer, node, actual)]
        entries = []
        for index, (item_node, item) in enumerate(zip(node, actual, strict=True)):
            entries += evaluate(item_node, item, child(pointer, index), exact, (), subject)
        return entries
    return [] if actual is not ABSENT and same(node, actual) else [mismatch(pointer, node, actual)]


def evaluate(node: Any, actual: Any, pointer: str, exact: bool, ignore: tuple[str, ...],
             subject: Subject | None) -> list[tuple[str, dict[str, Any]]]:
    """A match-tree node against the value at `pointer` (ABSENT: the key is missing): a list of
    ("mismatch" | "unresolved", entry) in pattern order."""
    if reference_node(node) and subject is not None:
        candidates = resolve(node, subject)
        if not candidates:
            return [("unresolved", {"pointer": pointer, "reference": node, "reason": "no_candidates"})]
        if actual is not ABSENT and any(same(candidate, actual) for candidate in candidates):
            return []
        return [mismatch(pointer, {"any_of": candidates[:LIST_CAP]}, actual)]
    return literal_or_operator(node, actual, pointer, exact, ignore, subject)


# References: only as far as the spec's own example of §3.1 needs them (`$arg`, and `$from_result`
# with tool, path and a `where` of literals and `$arg`s); the property test generates none.

def pairs(events: list[dict[str, Any]]) -> dict[int, int]:
    """Point 3: result position -> its call's position, one-to-one, the nearest unanswered call."""
    waiting: dict[str, list[int]] = {}
    call_of: dict[int, int] = {}
    for i, event in enumerate(events):
        if event["type"] == "tool.call" and "call_id" in event:
            waiting.setdefault(event["call_id"], []).append(i)
        elif event["type"] == "tool.result" and waiting.get(event.get("call_id", "")):
            call_of[i] = waiting[event["call_id"]].pop()
    return call_of


def where_holds(where: dict[str, Any], call_args: Any, subject: Subject) -> bool:
    """§2 step 3: the producing call's args match `where`; an `$arg` reads the subject's args."""
    if not isinstance(call_args, dict):
        return False
    for key, node in where.items():
        expected = read_path(subject.args, node["$arg"]) if reference_node(node) else node
        if expected is ABSENT or not same(expected, call_args.get(key, ABSENT)):
            return False
    return True


def resolve(node: dict[str, Any], subject: Subject) -> list[Any]:
    """§2 and point 12: a reference's candidate values (empty: no_candidates)."""
    if "$arg" in node:
        value = read_path(subject.args, node["$arg"])
        return [] if value is ABSENT else [value]
    spec = node["$from_result"]
    candidates = []
    for result_at, call_at in pairs(subject.events).items():
        call, result = subject.events[call_at], subject.events[result_at]
        if result_at >= subject.position or not glob(spec["tool"], call.get("tool")):
            continue
        if (spec.get("ok_only", True) and result.get("ok") is False) or "result" not in result:
            continue
        if "where" in spec and not where_holds(spec["where"], call.get("args"), subject):
            continue
        value = read_path(result["result"], spec["path"]) if "path" in spec else result["result"]
        if value is not ABSENT:
            candidates.append(value)
    return candidates


def schema_errors(schema: dict[str, Any], args: dict[str, Any]) -> list[dict[str, Any]]:
    """§3.1: JSON Schema 2020-12 on the args, up to 20 `{pointer, message}` (point 7)."""
    from jsonschema import Draft202012Validator

    errors = []
    for error in Draft202012Validator(schema).iter_errors(args):
        pointer = "/args"
        for segment in error.absolute_path:
            pointer = child(pointer, segment)
        errors.append({"pointer": pointer, "message": schema_message(error)})
    return errors[:LIST_CAP]


def distinct_key(paths: list[str], args: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """Point 17: the composite key's values and the paths the args lack."""
    values = [read_path(args, path) for path in paths]
    return values, [path for path, value in zip(paths, values, strict=True) if value is ABSENT]


def match_findings(rule: dict[str, Any], subject: Subject, base: dict[str, Any]) -> list[Finding]:
    """§3.1 `match` (with `mode`, `ignore`): one mismatch and one reference_unresolved at most."""
    exact = rule.get("mode") == "exact"
    entries = evaluate(rule["match"], subject.args, "/args", exact, tuple(rule.get("ignore", ())), subject)
    findings = []
    for kind, code, key in (("mismatch", "mismatch", "mismatches"), ("unresolved", "reference_unresolved",
                                                                      "unresolved")):
        listed = [entry for found, entry in entries if found == kind][:LIST_CAP]
        if listed:
            findings.append(Finding(subject.position, code, {**base, key: listed}, listed[0]["pointer"]))
    return findings


def call_findings(rule: dict[str, Any], position: int, index: int, events: list[dict[str, Any]],
                  keys: list[tuple[int, list[Any]]]) -> list[Finding]:
    """Every code of §3.1 for one checked call, in point 5's order; `keys` holds the earlier calls'
    distinct keys and gains this call's."""
    call = events[position]
    base = {"tool": call["tool"], "call_index": index, "mode": rule.get("mode", "subset")}
    if "call_id" in call:
        base["call_id"] = call["call_id"]
    if "args" not in call:
        return [Finding(position, "args_missing", base, "/args")]
    subject = Subject(position, call["args"], events)
    findings = match_findings(rule, subject, base) if "match" in rule else []
    if "schema" in rule:
        errors = schema_errors(rule["schema"], subject.args)
        if errors:
            findings.append(Finding(position, "schema", {**base, "errors": errors}, errors[0]["pointer"]))
    if "distinct" in rule:
        findings += distinct_findings(rule["distinct"], subject, base, keys)
    return findings


def distinct_findings(paths: list[str], subject: Subject, base: dict[str, Any],
                      keys: list[tuple[int, list[Any]]]) -> list[Finding]:
    """Point 17: not_distinct at a repeat of an earlier key, or distinct_missing."""
    values, missing = distinct_key(paths, subject.args)
    if missing:
        return [Finding(subject.position, "distinct_missing", {**base, "missing": missing},
                        args_pointer(missing[0]))]
    text = json_text(shown(values, cut=False))   # "the canonical tuple": equal RFC 8785 texts are one key
    first = next((at for at, key in keys if json_text(shown(key, cut=False)) == text), None)
    keys.append((subject.position, values))
    if first is None:
        return []
    return [Finding(subject.position, "not_distinct", {**base, "key": values}, args_pointer(paths[0]), first)]


def reference(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Finding]]:
    """(checked, findings in report order) for one tool_args rule; LoadError for what cannot load."""
    if contract_invalid(rule):
        raise LoadError(contract=True)
    if trace_invalid(events):
        raise LoadError(contract=False)
    tool = rule.get("tool", "*")
    calls = [i for i, event in enumerate(events) if event["type"] == "tool.call" and glob(tool, event.get("tool"))]
    if "call_index" in rule:
        k = rule["call_index"]
        if k >= len(calls):
            evidence = {"tool": tool, "call_index": k, "calls_seen": len(calls), "mode": rule.get("mode", "subset")}
            return 0, [Finding(None, "call_missing", evidence)]
        findings = call_findings(rule, calls[k], k, events, [])
        return 1, sorted(findings, key=lambda f: CODES.index(f.code))   # point 5
    keys: list[tuple[int, list[Any]]] = []
    findings = []
    for index, position in enumerate(calls):
        findings += call_findings(rule, position, index, events, keys)
    return len(calls), sorted(findings, key=lambda f: (f.position, CODES.index(f.code)))   # point 5


def status_of(code: str, partial: bool = False) -> str:
    """Point 6; under `--partial` the liveness part, `call_missing`, is inconclusive (§0)."""
    if partial and code == "call_missing":
        return "inconclusive"
    return "unresolved" if code in UNRESOLVED_CODES else "fail"


# -- strategies -----------------------------------------------------------------------------------

A = ABSENT
LONG_ID = "x" * 250
WIDE = [f"k{i}" for i in range(22)]

# numbers whose RFC 8785 form differs from Python's, keys whose UTF-16 order differs from code
# point order, a long string of astral characters (cut by code points), a key needing `~1`
ODD_NUMBERS = [1e21, 1e20, 1e-7, -0.0, 0, 2 ** 53, 2 ** 53 + 1, 2 ** 60, 1.152921504606847e18]
ARG_VALUES: dict[str, list[Any]] = {
    "id": ["A1", "A1", "A1", "A2", "B1", LONG_ID, "😀" * 201, 5, None, A, A],
    "n": [1, 2, 2, 2.0, 5, 0.5, True, "2", None, A, A, A, *ODD_NUMBERS],
    "tags": [[], ["a"], ["a", "b"], ["b", "a"], "a", A, A],
    "meta": [{}, {"k": 1}, {"k": 1.0, "x": 2}, {"k": 2}, {"x": 2, "k": 1}, {"\ue000": 1, "😀": 2, "k": 1}, {"0": 5},
             [1], None, A, A],
    "c/d": [A, A, A, A, 1, 2],
    "": [A, A, A, A, A, 0],
}
# a few usual args objects, so that repeats (distinct) and clean passes are frequent
USUAL_ARGS = [{"id": "A1", "n": 2, "tags": ["a"], "meta": {"k": 1}},
              {"id": "A1", "n": 2.0, "tags": ["a"], "meta": {"k": 1}},
              {"id": "A2", "n": 1, "tags": [], "meta": {}},
              {"n": 2, "id": "A1", "meta": {"k": 1}, "tags": ["a"]}]
arg_objects = st.one_of(*[picked(**ARG_VALUES)] * 6, *[st.sampled_from(USUAL_ARGS)] * 3,
                        st.just({key: 1 for key in WIDE}))
ARGS_NOT_OBJECTS = [None, [1], "x", 3]

PATTERN_VALUES: dict[str, list[Any]] = {
    "id": ["A1", {"$in": ["A1", "A2"]}, {"$regex": "^A"}, {"$exists": True}, {"$exists": False},
          "y" * 210, A, A, A],
    "n": [2, 2.0, {"$gt": 1}, {"$lte": 2}, {"$gte": 1, "$lt": 5}, {"$in": [1, "2", True]}, None,
          {"$any_of": [1, {"$gt": 4}]}, {"$lt": 1e21}, A, A, A],
    "tags": [["a"], [], ["a", {"$regex": "b"}], {"$contains": "a"}, {"$exists": True}, A, A, A],
    "meta": [{"k": 1}, {}, {"k": {"$in": [1, 2]}}, {"$literal": {"k": 1}}, {"$exists": True}, A, A, A],
}
match_trees = st.one_of(*[picked(**PATTERN_VALUES)] * 9, st.just({key: 0 for key in WIDE}))

SCHEMAS = [
    {"type": "object", "required": ["id"]},
    {"properties": {"n": {"type": "integer", "minimum": 2}}},
    {"properties": {"tags": {"items": {"type": "string"}, "maxItems": 1}}},
    {"$defs": {"s": {"type": "string"}}, "properties": {"id": {"$ref": "#/$defs/s", "maxLength": 2}}},
    {"required": ["id", "n"], "additionalProperties": False, "properties": {"id": {}, "n": {}, "tags": {}}},
]
DISTINCT = [["id"], ["id"], ["id"], ["id", "n"], ["n"], ["meta.k"], ["/meta/k"], ["tags.0"], ["/tags/1"], ["c/d"],
            ["/c~1d"], ["n", "meta"], ["meta.0"], ["tags.01"], ["/"], ["n", "/meta/0", "tags"]]


def maybe(draw: st.DrawFn, rule: dict[str, Any], key: str, choices: list[Any]) -> None:
    """Sets `rule[key]` to a drawn choice unless it is ABSENT."""
    value = draw(st.sampled_from(choices))
    if value is not ABSENT:
        rule[key] = value


@st.composite
def rules(draw: st.DrawFn) -> dict[str, Any]:
    """One tool_args rule with every §3.1 option; now and then one that §3.1 forbids."""
    rule: dict[str, Any] = {"id": "r", "kind": "tool_args"}
    maybe(draw, rule, "tool", ["refund", "refund", "ref*", "*", "re?und", "get", A])
    maybe(draw, rule, "severity", [A, A, A, "warning", "error"])
    maybe(draw, rule, "match", [A, *[draw(match_trees)] * 5])
    maybe(draw, rule, "mode", [A, A, "subset", "exact", "exact"])
    exact = rule.get("mode") == "exact"
    ignores = [A, A, ["meta"], ["n", "x"], [], ["id", "meta", "c/d"]] if exact else [A] * 15 + [["n"]]
    maybe(draw, rule, "ignore", ignores)
    if HAS_JSONSCHEMA:
        maybe(draw, rule, "schema", [A] * 6 + SCHEMAS)
    maybe(draw, rule, "distinct", [A] * 6 + DISTINCT)
    maybe(draw, rule, "call_index", [A] * 5 + [0, 1, 2, 5] if "distinct" not in rule else [A] * 15 + [0])
    return rule


@st.composite
def calls(draw: st.DrawFn) -> dict[str, Any]:
    """A tool.call: a few tools (or none) and call_ids; args mostly an object, sometimes absent, now
    and then not an object."""
    event = draw(picked(type=["tool.call"], tool=["refund", "refund", "refund", "get", "refund_all", A],
                        call_id=["c1", "c1", "c2", "c3", A]))
    shape = draw(st.integers(0, 59))
    if shape < 50:
        event["args"] = draw(arg_objects)
    elif shape == 59:
        event["args"] = draw(st.sampled_from(ARGS_NOT_OBJECTS))
    return event


results = picked(type=["tool.result"], call_id=["c1", "c2", "c3", A], ok=[True, False, A], tool=[A, A, "refund"],
                 result=[A, {"paid": 10}])
others = picked(type=["agent.message", "approval.granted", "run.completed"], tool=[A, "refund"],
                args=[*[A] * 6, {"id": "A1"}, {"id": "A1"}, {"id": "A1"}, "x"])
EVENT_KINDS = [calls()] * 7 + [results] * 2 + [others]


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """0..12 events, seq = position + 1."""
    size = draw(st.one_of(st.integers(0, 12), st.integers(5, 12)))
    events = [draw(st.sampled_from(EVENT_KINDS).flatmap(lambda kind: kind)) for _ in range(size)]
    return [{"seq": position + 1, **event} for position, event in enumerate(events)]


# -- the comparison -------------------------------------------------------------------------------

def expected_rows(events: list[dict[str, Any]], findings: list[Finding], partial: bool) -> list[tuple[Any, ...]]:
    """The model's violations as `same_violations` wants them: (seq, code, status, evidence), the
    evidence as its RFC 8785 text reads back (2**60 is written 1152921504606847000, which reads
    back as that integer)."""
    return [(None if f.position is None else events[f.position]["seq"], f"tool_args.{f.code}",
             status_of(f.code, partial), json.loads(json_text(shown(f.evidence)))) for f in findings]


def reported(rule: dict[str, Any], events: list[dict[str, Any]],
             partial: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The rule's result in the JSON report, parsed twice: plainly, and with every number kept as the
    text the report wrote (RFC 8785's number form is only visible there; `msgspec.to_builtins`
    cannot even convert the floats that JSON would write otherwise, such as 1e21)."""
    text = to_json(check_trace({"version": 2, "name": "model", "rules": [rule]}, events, partial=partial))
    plain = json.loads(text)["results"]
    raw = json.loads(text, parse_int=NumberText, parse_float=NumberText)["results"]
    return plain[0], raw[0]


def agrees(rule: dict[str, Any], events: list[dict[str, Any]], partial: bool = False) -> None:
    """The JSON report gives the model's verdict, checked, vacuous, violations, evidence (RFC 8785
    text: key order, number form, cut strings), pointers and related_seqs; with `partial`, the
    inconclusive violations are left out of the verdict (§0)."""
    try:
        checked, findings = reference(rule, events)
    except LoadError as error:
        with pytest.raises(ContractError if error.contract else TraceError):
            check_trace({"version": 2, "name": "model", "rules": [rule]}, events)
        return
    result, raw = reported(rule, events, partial)
    rows = expected_rows(events, findings, partial)
    counted = [row for row in rows if row[2] != "inconclusive"]
    same_violations({**result, "passed": not rows}, rows)   # the rows; the verdict just below
    assert result["passed"] is not counted
    assert result.get("inconclusive", 0) == len(rows) - len(counted)
    for violation, written, finding in zip(result["violations"], raw["violations"], findings, strict=True):
        assert json_text(written["evidence"]) == json_text(shown(finding.evidence)), (violation, finding)
        assert violation.get("pointer") == finding.pointer, (violation, finding)
        related = None if finding.related_position is None else [events[finding.related_position]["seq"]]
        assert violation.get("related_seqs") == related, (violation, finding)
        assert violation.get("event_index") == finding.position
        assert violation["severity"] == rule.get("severity", "error")    # point 6
    assert result["checked"] == checked
    assert bool(result.get("vacuous")) is ("call_index" not in rule and checked == 0)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules(), events=traces(), partial=st.booleans())
def test_the_public_api_agrees_with_a_reference_model(rule: dict[str, Any], events: list[dict[str, Any]],
                                                      partial: bool) -> None:
    agrees(rule, events, partial)


# -- the model itself, on the spec's example of §3.1 ------------------------------------------------

EXAMPLE_RULE: dict[str, Any] = {
    "id": "refund-args", "kind": "tool_args", "tool": "refund",
    "match": {"order": {"$regex": "^A[0-9]+$"},
              "amount": {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg": "order"}}}}}}
EXAMPLE_TRACE: list[dict[str, Any]] = [
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}},
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"paid": 10}},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}},
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c3", "args": {"order": "A7", "amount": 5}},
]


def test_the_model_reproduces_the_spec_example() -> None:
    """§3.1: FAIL → seq 3 mismatch at /args/amount (expected any of [10], got 12); seq 4
    reference_unresolved (no_candidates). PASS: amount 10, and no seq 4."""
    checked, findings = reference(EXAMPLE_RULE, EXAMPLE_TRACE)
    assert checked == 2
    assert [(EXAMPLE_TRACE[f.position or 0]["seq"], f.code, status_of(f.code)) for f in findings] == [
        (3, "mismatch", "fail"), (4, "reference_unresolved", "unresolved")]
    assert findings[0].evidence["mismatches"] == [{"pointer": "/args/amount", "expected": {"any_of": [10]},
                                                   "actual": 12}]
    assert [entry["reason"] for entry in findings[1].evidence["unresolved"]] == ["no_candidates"]
    assert findings[1].pointer == "/args/amount"
    passing = [*EXAMPLE_TRACE[:2], {**EXAMPLE_TRACE[2], "args": {"order": "A9", "amount": 10}}]
    assert reference(EXAMPLE_RULE, passing) == (1, [])
    agrees(EXAMPLE_RULE, EXAMPLE_TRACE)
    agrees(EXAMPLE_RULE, passing)


def test_the_model_applies_point_17_to_distinct() -> None:
    """Point 17: a composite key; args_missing only for a call without args; distinct_missing for a
    call lacking a path; every repeat points at the first call with its key (1 = 1.0, true ≠ 1)."""
    rule = {"id": "r", "kind": "tool_args", "tool": "refund", "distinct": ["id", "n"]}
    trace = [{"seq": 1, "type": "tool.call", "tool": "refund", "args": {"id": "A1", "n": 1}},
             {"seq": 2, "type": "tool.call", "tool": "refund", "args": {"id": "A1", "n": True}},
             {"seq": 3, "type": "tool.call", "tool": "refund"},
             {"seq": 4, "type": "tool.call", "tool": "refund", "args": {"id": "A1"}},
             {"seq": 5, "type": "tool.call", "tool": "refund", "args": {"id": "A1", "n": 1.0}},
             {"seq": 6, "type": "tool.call", "tool": "refund", "args": {"n": 1, "id": "A1"}}]
    checked, findings = reference(rule, trace)
    assert checked == 6
    assert [(f.position, f.code, f.related_position) for f in findings] == [
        (2, "args_missing", None), (3, "distinct_missing", None), (4, "not_distinct", 0), (5, "not_distinct", 0)]
    agrees(rule, trace)
