"""The match grammar (spec v2 §2) against a reference model written from the spec text only (spec v2
§0, §1, §2, §3.1 and §10 points 1-7, 9-13 and 16). References (`$from_result`, `$arg`,
`$from_output`) are left to another model. The grammar is exercised through the simplest rule that
uses it, `{"kind": "tool_args", "tool": "t", "match": TREE}` (also `mode: exact`, with and without
`ignore`), on short traces of `tool.call` events whose random `args` are drawn near the tree: its
keys, its types, its bounds, its regex alphabet, numeric twins (1 / 1.0 / true / "1"), null and
absent keys, keys that need RFC 6901 escapes. A property test compares the public API's verdict,
`checked`, `vacuous` and violations (seq, code, status, evidence, pointer, in order) with the model,
given the trace as a list of events or as JSONL bytes; a second one plants one defect in a valid
tree and expects a load error. Paths proper (dot paths, JSON Pointers) are read by references,
`distinct` and conditions, which other models cover; in a match tree they surface only as the
evidence pointers (escaped keys, array indexes, a key "0" on an object), which this model checks.

What the model takes from the spec:
- a node is a literal, or an operator object (only `$` keys, ANDed); literal objects match as
  subsets, or with `mode: exact` with equal key sets at every level except the rule's top-level
  `ignore`; literal arrays need the same length and match by position; scalars must be equal (§2);
- equality is JSON-type-strict and structural: true ≠ 1, 1 = 1.0, equal key sets, arrays by
  position (§2); `$literal` and `$in` use it, never a subset match (point 10);
- `$regex` is an unanchored search on strings only, a non-string is a mismatch (§2, point 10);
  `$in` passes when the actual equals one of its values; `$gt`/`$gte`/`$lt`/`$lte` compare finite
  numbers only, booleans and strings never (§2); `$contains` needs an array with some element
  matching its operand; `$any_of` needs one branch; `$exists: true` accepts any present value, null
  included, and `$exists: false` only absence (point 9);
- a literal or operator node whose key is absent is a mismatch, never unresolved (point 9);
- unknown `$` keys, mixed keys, bad operands, `$exists` outside a key's operator object (or that
  object's `$any_of` branches), regexes beyond RE2 or over 500 characters, `$in` over 1000 values,
  `$any_of` outside 2..20 branches, trees over 32 levels or 10k nodes are load errors (§2, points
  10, 11);
- tool_args: every call whose own `tool` matches the glob is checked, `checked` counts them and the
  rule is vacuous when there is none (point 4); a call without args is `args_missing`
  (`unresolved`, point 6), otherwise at most one `mismatch` (`fail`) per call, at the call (point
  2), with evidence `{tool, call_id?, call_index, mode, mismatches: [{pointer, expected, actual?}]}`,
  at most 20 entries, `actual` left out when absent, `expected` the node as written, pointers RFC
  6901 into the event (`/args/…`) (§3.1, point 7); violations in event order (point 5);
- evidence values are RFC 8785 JSON: numbers in IEEE double form, strings cut to 200 code points
  plus `…` (§0, point 7).

Where the spec is silent the model follows the implementation (listed in `AMBIGUOUS` below).

The product keeps a float whose Python and JavaScript spellings differ (such as 1e16, or 2**53 + 2
read as a double) in evidence as its own float subclass; reports are turned into plain data with
the documented `enc_hook=float`.

A violation's own `pointer` is never cut like evidence strings (it must point into the event); the
keys generated here keep it under the 1,000 characters beyond which the product names an ancestor.
"""
from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import ContractError, check_trace
from tests.models import ABSENT, glob, picked, same, same_violations
from tests.models import one_result as api

from support import examples

# Points where the spec is silent and the model follows the implementation:
AMBIGUOUS = (
    # §2 calls an object with only `$` keys an operator object; `{}` has none, and is a literal
    # object (any object matches it in subset mode, only `{}` in exact mode)
    "an empty object is a literal",
    # a literal object (array) descends into its members when the actual is an object (an array of
    # the same length); otherwise the whole node is one mismatch. An operator object is always one
    # mismatch, whose `expected` is the whole operator object (all its ANDed operators)
    "mismatch granularity",
    # depth first, members in the tree's key order; in exact mode each object's unexpected keys
    # follow its tree keys, in the args' key order; the first 20 are kept, with no count of the rest
    "mismatch order and the cut at 20",
    # exact mode: an unexpected key is `{pointer, expected: {"$exists": false}, actual}` (there is no
    # node as written to report)
    "exact mode's unexpected key",
    # exact mode reaches literal objects inside `$any_of` branches and `$contains` operands ("every
    # level"); `ignore` holds top-level key names, not paths ("a.y" is the key "a.y", "/b" is not the
    # key "b"), exempts them from the key-set check only (a key both ignored and in the tree is still
    # matched), and applies only when the tree's root is a literal object (not to the literal objects
    # of a root `$any_of`)
    "exact mode's reach and ignore",
    # numbers compare as IEEE doubles, as RFC 8785's number form and Node do: 2**53 + 1 = 2**53
    "number precision",
    # a violation's own `pointer` is its first mismatch's pointer, `/args` for args_missing; the
    # pointers inside evidence are evidence strings, cut at 200 code points like the others
    "violation pointer, evidence pointers",
    # the root may be any node: an operator object (without `$exists`), or a scalar or array, which
    # never fits the args object (one mismatch at `/args`)
    "root node",
    # $exists in a branch of a branch's `$any_of` (the product accepts it) and the exact depth/node
    # boundaries (the product counts the root as level 1) are not generated
    "not generated: nested $any_of $exists, limit boundaries",
)

RULE_TOOL = "t"
MAX_MISMATCHES = 20
CUT = 200
SAFE_INTEGER = 2**53


# -- the reference model --------------------------------------------------------------------------

def is_operator(node: Any) -> bool:
    """§2: an object whose keys are all `$` keys (AMBIGUOUS: `{}` is a literal)."""
    return isinstance(node, dict) and bool(node) and all(key.startswith("$") for key in node)


def is_number(value: Any) -> bool:
    """A JSON number: booleans are not numbers (§2: `true≠1`)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def equal(a: Any, b: Any) -> bool:
    """§2 equality: type-strict, structural, numbers by value as IEEE doubles (AMBIGUOUS)."""
    if is_number(a) and is_number(b):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def compares(operator: str, bound: float, actual: Any) -> bool:
    """§2: `$gt`/`$gte`/`$lt`/`$lte` hold for numbers only; booleans and "100" never compare."""
    if not is_number(actual):
        return False
    x, y = float(actual), float(bound)
    return {"$gt": x > y, "$gte": x >= y, "$lt": x < y, "$lte": x <= y}[operator]


def holds(operator: str, operand: Any, actual: Any, exact: bool) -> bool:
    """One operator of an operator object on the actual value (ABSENT when the key is missing)."""
    if operator == "$exists":
        return (actual is not ABSENT) is operand          # point 9: null is present
    if operator == "$any_of":
        return any(fits(branch, actual, exact) for branch in operand)
    if actual is ABSENT:
        return False                                      # point 9: only `$exists: false` accepts absence
    if operator == "$regex":
        return isinstance(actual, str) and re.search(operand, actual) is not None   # point 10
    if operator == "$in":
        return any(equal(actual, value) for value in operand)
    if operator == "$literal":
        return equal(actual, operand)                     # point 10: structural, not a subset
    if operator == "$contains":
        return isinstance(actual, list) and any(fits(operand, element, exact) for element in actual)
    return compares(operator, operand, actual)


def fits(node: Any, actual: Any, exact: bool) -> bool:
    """Whether a node (a branch, a `$contains` operand) matches, with nothing ignored."""
    return not mismatches(node, actual, "", exact, frozenset())


def escape(key: str) -> str:
    """RFC 6901: `~` is `~0`, `/` is `~1`."""
    return key.replace("~", "~0").replace("/", "~1")


def entry(pointer: str, expected: Any, actual: Any) -> dict[str, Any]:
    """Point 7: `{pointer, expected, actual?}`, `actual` left out when absent."""
    found = {"pointer": pointer, "expected": expected}
    if actual is not ABSENT:
        found["actual"] = actual
    return found


def mismatches(node: Any, actual: Any, pointer: str, exact: bool, ignored: frozenset[str]) -> list[dict[str, Any]]:
    """Every mismatch of `node` against `actual` at `pointer`, depth first (AMBIGUOUS: granularity
    and order); `ignored` holds the top-level keys exact mode lets through."""
    if is_operator(node):
        ok = all(holds(operator, operand, actual, exact) for operator, operand in node.items())
        return [] if ok else [entry(pointer, node, actual)]
    if isinstance(node, dict) and isinstance(actual, dict):
        return object_mismatches(node, actual, pointer, exact, ignored)
    if isinstance(node, list) and isinstance(actual, list) and len(node) == len(actual):
        return [found for index, (child, value) in enumerate(zip(node, actual, strict=True))
                for found in mismatches(child, value, f"{pointer}/{index}", exact, frozenset())]
    if isinstance(node, dict | list) or actual is ABSENT or not equal(node, actual):
        return [entry(pointer, node, actual)]
    return []


def object_mismatches(node: dict[str, Any], actual: dict[str, Any], pointer: str, exact: bool,
                      ignored: frozenset[str]) -> list[dict[str, Any]]:
    """A literal object: its keys as a subset, and with `exact` no other key but the ignored ones."""
    found = [mismatch for key, child in node.items()
             for mismatch in mismatches(child, actual.get(key, ABSENT), f"{pointer}/{escape(key)}", exact,
                                        frozenset())]
    if exact:
        found += [entry(f"{pointer}/{escape(key)}", {"$exists": False}, value)
                  for key, value in actual.items() if key not in node and key not in ignored]
    return found


def canonical(value: Any) -> Any:
    """§0, point 7: evidence in RFC 8785 form — numbers as doubles, strings cut to 200 code points."""
    if isinstance(value, str):
        return value if len(value) <= CUT else value[:CUT] + "…"
    if is_number(value) and isinstance(value, int) and abs(value) > SAFE_INTEGER:
        return int(float(value))
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


Expected = tuple[Any, str, str, dict[str, Any], str]
"""(seq, code, status, evidence, pointer) of one violation."""


def check_call(rule: dict[str, Any], event: dict[str, Any], call_index: int) -> Expected | None:
    """§3.1 without references: `args_missing` or one `mismatch` at the call, or nothing."""
    mode = rule.get("mode", "subset")
    base = {"tool": rule["tool"], "call_index": call_index, "mode": mode}
    if "call_id" in event:
        base["call_id"] = event["call_id"]
    if "args" not in event:
        return (event["seq"], "tool_args.args_missing", "unresolved", base, "/args")
    found = mismatches(rule["match"], event["args"], "/args", mode == "exact", frozenset(rule.get("ignore", ())))
    if not found:
        return None
    kept = canonical(found[:MAX_MISMATCHES])     # evidence: its pointers are strings cut like any other
    return (event["seq"], "tool_args.mismatch", "fail", {**base, "mismatches": kept}, found[0]["pointer"])


def reference(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Expected]]:
    """(checked, violations in report order) for one tool_args rule without references."""
    calls = [event for event in events if event["type"] == "tool.call" and glob(rule["tool"], event.get("tool"))]
    found = (check_call(rule, event, index) for index, event in enumerate(calls))
    return len(calls), [violation for violation in found if violation is not None]


# -- strategies: trees ----------------------------------------------------------------------------

A = ABSENT
LONG_KEY = "k" * CUT
KEYS = ["a", "a", "b", "b", "id", "a/b", "m~n", "", "0", "x.y", LONG_KEY]
LONG = "y" * (CUT + 1)
STRINGS = ["", "a", "A1", "A9", "A12", "ab", "abab", "B", "b", "1", "Ab1", "xxx", "a/b", "é", LONG]
NUMBERS = [0, 1, 1.0, -1, 2, 2.5, 10, -0.0, SAFE_INTEGER, SAFE_INTEGER + 1]
SCALARS = [*NUMBERS, True, False, None, *STRINGS]
VALUES = [*SCALARS, [], [1], ["A1", 2], {}, {"a": 1}, {"a": 1.0, "b": None}, [{"a": 1}]]
OBJECTS = [{}, {"a": 1}, {"a": 1.0, "b": None}, {"b": [1]}, {"m~n": "a", "a/b": 2}]
LITERALS = [*VALUES, {"$regex": "a"}, {"$x": 1}, [{"$in": [1]}]]
TEXTS = [*STRINGS, "aa", "AB1", "ab1", "Aa", "a1b", "/", "éé", "1a", "ab/ab", "bB", "a9", "A1A1", "11"]
"""Strings aimed at `$regex` (the strategy picks those that match with Python's `re`, which the
patterns are written to agree with)."""
ATOMS = ["a", "A", "b", "1", "[0-9]", "[a-z]", "[A-Z]", ".", "(ab)", "é", "/"]
QUANTIFIERS = ["", "", "", "+", "*", "?", "{2}", "{1,3}"]
MAX_DEPTH = 3


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """Regexes that mean the same in RE2 and Python on the pools' strings (ASCII classes, no `\\d`,
    no line terminators to anchor around): alternatives of quantified atoms, maybe anchored."""
    alternatives = []
    for _ in range(draw(st.integers(1, 2))):
        body = "".join(draw(st.sampled_from(ATOMS)) + draw(st.sampled_from(QUANTIFIERS))
                       for _ in range(draw(st.integers(0, 3))))
        alternatives.append(draw(st.sampled_from(["", "^"])) + body + draw(st.sampled_from(["", "$"])))
    return draw(st.sampled_from(["", "", "(?i)"])) + "|".join(alternatives)


def node(draw: st.DrawFn, depth: int, exists_ok: bool, branch: bool = False) -> Any:
    """A valid node: `exists_ok` when it is a literal key's value or a branch of that value's
    `$any_of` (point 11)."""
    kinds = ["scalar", "operator", "operator"]
    if depth < MAX_DEPTH:
        kinds += ["object", "object", "array", "operator"]
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return draw(st.sampled_from(SCALARS))
    if kind == "object":
        return literal_object(draw, depth)
    if kind == "array":
        return [node(draw, depth + 1, False) for _ in range(draw(st.integers(0, 3)))]
    return operator_object(draw, depth, exists_ok, branch)


def literal_object(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    """0-3 keys from a small pool, so that args often carry them."""
    keys = draw(st.lists(st.sampled_from(KEYS), max_size=3, unique=True))
    return {key: node(draw, depth + 1, True) for key in keys}


def operator_object(draw: st.DrawFn, depth: int, exists_ok: bool, branch: bool) -> dict[str, Any]:
    """1-3 ANDed operators (§2), mostly one; `$exists` only where point 11 allows it."""
    names = ["$regex", "$regex", "$in", "$gt", "$gte", "$lt", "$lte", "$literal"]
    if exists_ok:
        names += ["$exists", "$exists"]
    if depth < MAX_DEPTH:
        names += ["$any_of", "$any_of", "$contains", "$contains"]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=1 if draw(st.integers(0, 2)) else 3,
                           unique=True))
    return {name: operand(draw, name, depth, exists_ok and not branch) for name in chosen}


def operand(draw: st.DrawFn, name: str, depth: int, exists_ok: bool) -> Any:
    """A valid operand of `name` (§2)."""
    if name == "$regex":
        return draw(patterns())
    if name == "$in":
        return draw(st.lists(st.sampled_from([*VALUES, {"$gt": 1}]), max_size=4))
    if name == "$exists":
        return draw(st.booleans())
    if name == "$literal":
        return draw(st.sampled_from(LITERALS))
    if name == "$any_of":
        return [node(draw, depth + 1, exists_ok, branch=True) for _ in range(draw(st.integers(2, 3)))]
    if name == "$contains":
        return node(draw, depth + 1, False)
    return draw(st.sampled_from(NUMBERS))


@st.composite
def trees(draw: st.DrawFn) -> Any:
    """A root: mostly a literal object, sometimes an operator object or (rarely) another literal."""
    kind = draw(st.sampled_from(["object"] * 8 + ["operator"] * 3 + ["scalar", "array"]))
    if kind == "object":
        return literal_object(draw, 0)
    if kind == "operator":
        return operator_object(draw, 0, False, False)
    if kind == "scalar":
        return draw(st.sampled_from(SCALARS))
    return [node(draw, 1, False) for _ in range(draw(st.integers(0, 2)))]


# -- strategies: values near a tree ---------------------------------------------------------------

def variants(value: Any) -> list[Any]:
    """Values a scalar is easily confused with: numeric twins, booleans, strings, null."""
    if isinstance(value, bool):
        return [value, not value, int(value), float(value), None]
    if is_number(value):
        return [value, value, float(value), value + 1, value - 0.5, str(value), value == 1, None]
    if isinstance(value, str):
        return [value, value, value + "x", value.upper(), "x" + value, value[:1], None, 1]
    return [value, value, 0, False, "", {}]


def near(draw: st.DrawFn, tree: Any) -> Any:
    """A value that often fits `tree`, and often misses it by one key, type or bound."""
    if draw(st.integers(0, 15)) == 0:
        return draw(st.sampled_from(VALUES))
    if is_operator(tree):
        return near_operator(draw, tree)
    if isinstance(tree, dict):
        return near_object(draw, tree)
    if isinstance(tree, list):
        return near_array(draw, tree)
    return draw(st.sampled_from(variants(tree)))


def near_object(draw: st.DrawFn, tree: dict[str, Any]) -> dict[str, Any]:
    """The tree's keys (each sometimes absent), a few other keys, in a drawn order."""
    items = [(key, near(draw, child)) for key, child in tree.items() if draw(st.integers(0, 9))]
    if draw(st.integers(0, 2)) == 0:
        items += [(key, draw(st.sampled_from(VALUES))) for key in draw(st.lists(st.sampled_from(KEYS), max_size=2))
                  if key not in tree]
    return dict(draw(st.permutations(items)))


def near_array(draw: st.DrawFn, tree: list[Any]) -> list[Any]:
    """The same length element by element, or one element fewer or more."""
    value = [near(draw, child) for child in tree]
    change = draw(st.sampled_from(["same", "same", "same", "drop", "add"]))
    if change == "drop" and value:
        return value[:-1]
    if change == "add":
        return [*value, draw(st.sampled_from(VALUES))]
    return value


def near_operator(draw: st.DrawFn, tree: dict[str, Any]) -> Any:
    """A value aimed at each operator; mostly one that fits them all when there is one (the model
    only steers the choice here: which value is drawn never decides the verdict)."""
    candidates = [aimed(draw, name, bound) for name, bound in tree.items()]
    hits = [candidate for candidate in candidates if fits(tree, candidate, False)]
    return draw(st.sampled_from(hits if bool(hits) and draw(st.integers(0, 3)) > 0 else candidates))


def aimed(draw: st.DrawFn, name: str, bound: Any) -> Any:
    """A value near the bound of one operator: on either side of it, or of another type."""
    if name == "$regex":
        hits: list[Any] = [text for text in TEXTS if re.search(bound, text)]
        return draw(st.sampled_from(hits if bool(hits) and draw(st.booleans()) else [*TEXTS, 1, None, ["a"]]))
    if name == "$in":
        return draw(st.sampled_from(variants(draw(st.sampled_from(bound))) if bound else VALUES))
    if name == "$any_of":
        return near(draw, draw(st.sampled_from(bound)))
    if name == "$contains":
        return [near(draw, bound) if draw(st.integers(0, 2)) else draw(st.sampled_from(VALUES))
                for _ in range(draw(st.integers(0, 3)))]
    if name == "$literal":
        return draw(st.sampled_from([bound, bound, *variants(bound), *literal_twins(bound)]))
    if name == "$exists":
        return draw(st.sampled_from(VALUES))
    return draw(st.sampled_from([bound + step for step in (-1, -0.5, 0, 0, 0.5, 1)] + [str(bound), True, None]))


def literal_twins(value: Any) -> list[Any]:
    """A `$literal` operand with one more key or element, which a subset match would accept."""
    if isinstance(value, dict):
        return [{**value, "z": 1}, {key: variants(item)[2] for key, item in value.items()}]
    if isinstance(value, list):
        return [[*value, 1], [variants(item)[2] for item in value]]
    return []


# -- strategies: rules and traces -----------------------------------------------------------------

IGNORABLE = [key for key in dict.fromkeys(KEYS) if key] + ["q"]


@st.composite
def rules(draw: st.DrawFn) -> dict[str, Any]:
    """A tool_args rule on `t` with a match tree; mode absent, subset or exact; ignore with exact."""
    rule: dict[str, Any] = {"id": "r", "kind": "tool_args", "tool": RULE_TOOL, "match": draw(trees())}
    mode = draw(st.sampled_from([A, "subset", "exact", "exact"]))
    if mode is not A:
        rule["mode"] = mode
    if mode == "exact" and draw(st.booleans()):
        rule["ignore"] = draw(st.lists(st.sampled_from(IGNORABLE), min_size=1, max_size=2, unique=True))
    return rule


others = picked(type=["tool.result", "agent.message"], call_id=["c1", A], ok=[True, False, A], tool=[A, "t"])


def call(draw: st.DrawFn, tree: Any) -> dict[str, Any]:
    """A tool.call: mostly of `t`, args mostly near the tree (an object, point 16), sometimes none."""
    event = {"type": "tool.call", **draw(picked(tool=["t", "t", "t", "t", "u", "tt", A], call_id=["c1", "c2", A]))}
    choice = draw(st.integers(0, 9))
    if choice < 8:
        args = near(draw, tree)
        event["args"] = args if isinstance(args, dict) else draw(st.sampled_from(OBJECTS))
    elif choice == 8:
        event["args"] = draw(st.sampled_from(OBJECTS))
    return event


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A rule and a trace of 0-12 events, seq = position + 1."""
    rule = draw(rules())
    size = draw(st.one_of(st.integers(0, 12), st.integers(1, 4)))
    events = [call(draw, rule["match"]) if draw(st.integers(0, 5)) else draw(others) for _ in range(size)]
    return rule, [{"seq": position + 1, **event} for position, event in enumerate(events)]


# -- the comparison -------------------------------------------------------------------------------

def api_from_text(rule: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """The result of `rule` on `events` written as a JSONL file's bytes (numbers and escapes then go
    through the trace reader's JSON decoding)."""
    text = "".join(json.dumps(event) + "\n" for event in events).encode()
    report = msgspec.to_builtins(check_trace({"version": 2, "name": "model", "rules": [rule]}, text), enc_hook=float)
    (result,) = report["results"]
    return result  # type: ignore[no-any-return]


def agrees(rule: dict[str, Any], events: list[dict[str, Any]], as_text: bool = False) -> None:
    """The API's result equals the model's: verdict, checked, vacuous, violations in order with
    their evidence (type-strictly: true is not 1) and pointer."""
    result = api_from_text(rule, events) if as_text else api(rule, events)
    checked, expected = reference(rule, events)
    same_violations(result, [violation[:4] for violation in expected])
    assert all(same(v["evidence"], e[3]) for v, e in zip(result["violations"], expected, strict=True)), expected
    assert [v["pointer"] for v in result["violations"]] == [e[4] for e in expected]
    assert result["checked"] == checked
    assert result.get("vacuous", False) is (checked == 0)          # point 4
    for violation in result["violations"]:
        assert events[violation["event_index"]]["seq"] == violation["event_seq"]
        assert "related_seqs" not in violation and "caused_by" not in violation


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), as_text=st.booleans())
def test_the_public_api_agrees_with_a_reference_model(case: tuple[dict[str, Any], list[dict[str, Any]]],
                                                     as_text: bool) -> None:
    rule, events = case
    agrees(rule, events, as_text)


# -- load errors: one defect planted in a valid tree ------------------------------------------------

ANYWHERE = [{"$nope": 1}, {"$gt": 1, "a": 1}, {"a": 1, "$in": [1]}, {"$gt": "100"}, {"$lt": True},
            {"$gte": None}, {"$regex": 5}, {"$regex": "(a)\\1"}, {"$regex": "(?=a)"}, {"$regex": "(?<!a)b"},
            {"$regex": "(?>a)"}, {"$regex": "a++"}, {"$regex": "(a)?(?(1)a|b)"}, {"$regex": "[a"},
            {"$regex": "x" * 501}, {"$in": 5}, {"$in": [0] * 1001}, {"$any_of": [1]}, {"$any_of": [1] * 21},
            {"$any_of": 1}, {"$exists": 1}, {"$contains": {"$exists": True}}, {"$literal": 1, "$regex": None}]
"""Nodes that are a load error wherever they stand (§2, points 10 and 11)."""
OUTSIDE_A_KEY = [{"$exists": True}, {"$exists": False, "$gt": 1}]
"""Nodes that are a load error where `$exists` may not stand: the root, an array element, a
`$contains` operand, a branch of a branch's `$any_of` is not generated (point 11)."""


def slots(tree: Any, path: tuple[Any, ...] = (), exists_ok: bool = False) -> list[tuple[tuple[Any, ...], bool]]:
    """Every node of a valid tree: (path to it, whether `$exists` may stand there), never inside a
    `$literal` or `$in` operand (values, not nodes)."""
    found = [(path, exists_ok)]
    if is_operator(tree):
        for branch_index, branch in enumerate(tree.get("$any_of", [])):
            found += slots(branch, (*path, "$any_of", branch_index), exists_ok)
        if "$contains" in tree:
            found += slots(tree["$contains"], (*path, "$contains"), False)
    elif isinstance(tree, dict):
        for key, child in tree.items():
            found += slots(child, (*path, key), True)
    elif isinstance(tree, list):
        for index, child in enumerate(tree):
            found += slots(child, (*path, index), False)
    return found


def planted(tree: Any, path: tuple[Any, ...], defect: Any) -> Any:
    """`tree` with the node at `path` replaced by `defect` (a copy, the rest shared)."""
    if not path:
        return defect
    head, rest = path[0], path[1:]
    if isinstance(tree, list):
        return [planted(child, rest, defect) if index == head else child for index, child in enumerate(tree)]
    return {key: planted(child, rest, defect) if key == head else child for key, child in tree.items()}


def deep(levels: int) -> Any:
    """A literal tree `levels` objects deep."""
    tree: Any = 1
    for _ in range(levels):
        tree = {"a": tree}
    return tree


@st.composite
def broken_trees(draw: st.DrawFn) -> Any:
    """A valid tree with one node replaced by a defect that fits where it stands."""
    tree = draw(trees())
    path, exists_ok = draw(st.sampled_from(slots(tree)))
    defects = ANYWHERE + ([] if exists_ok else OUTSIDE_A_KEY) + [deep(40), [0] * 10_001]
    return planted(tree, path, draw(st.sampled_from(defects)))


def rejected(tree: Any) -> bool:
    """Whether loading a tool_args rule with this tree fails with a contract error."""
    rule = {"id": "r", "kind": "tool_args", "tool": RULE_TOOL, "match": tree}
    try:
        check_trace({"version": 2, "name": "model", "rules": [rule]}, [])
    except ContractError:
        return True
    return False


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=broken_trees())
def test_one_defect_anywhere_in_a_tree_is_a_load_error(tree: Any) -> None:
    assert rejected(tree)


def test_the_generated_trees_and_the_limits_load() -> None:
    """The other side of the defects: the limits themselves, and `$exists` where point 11 allows it."""
    for tree in ({"a": {"$in": list(range(1000))}}, {"a": {"$regex": "x" * 500}}, {"a": {"$any_of": [1] * 20}},
                 deep(20), {"a": [0] * 5000}, {"a": {"$any_of": [{"$exists": False}, {"$gt": 1}]}},
                 {"a": [{"b": {"$exists": True}}]}, {"a": {"$contains": {"b": {"$exists": False}}}}, {}):
        assert not rejected(tree), tree


# -- the model itself, on the spec's own statements and example --------------------------------------

EXAMPLE_CALLS = [
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}},
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c3", "args": {"order": "A7", "amount": 5}}]
"""§3.1's example calls; its `order` node is pure grammar (the `amount` reference is another model's)."""
EXAMPLE_RULE = {"id": "refund-args", "kind": "tool_args", "tool": "refund", "match": {"order": {"$regex": "^A[0-9]+$"}}}

STATEMENTS: list[tuple[str, Any, dict[str, Any], str, bool]] = [
    ("§2 true≠1", {"a": True}, {"a": 1}, "subset", False),
    ("§2 1=1.0", {"a": 1}, {"a": 1.0}, "subset", True),
    ("§2 equal key sets ($literal, point 10)", {"a": {"$literal": {"x": 1}}}, {"a": {"x": 1, "y": 2}}, "subset", False),
    ("§2 arrays by position", {"a": [1, 2]}, {"a": [2, 1]}, "subset", False),
    ("§2 objects match as subsets", {"a": {"x": 1}}, {"a": {"x": 1, "y": 2}, "b": 3}, "subset", True),
    ("§2 mode exact: key sets equal at every level", {"a": {"x": 1}, "b": 3}, {"a": {"x": 1, "y": 2}, "b": 3},
     "exact", False),
    ("§2 arrays need the same length", {"a": [1]}, {"a": [1, 2]}, "subset", False),
    ("§2 $regex: unanchored search", {"a": {"$regex": "A[0-9]"}}, {"a": "xA1y"}, "subset", True),
    ("point 10: $regex on a non-string is a mismatch", {"a": {"$regex": "1"}}, {"a": 1}, "subset", False),
    ("§2 comparisons: booleans never compare", {"a": {"$gte": 1}}, {"a": True}, "subset", False),
    ("§2 comparisons: \"100\" never compares", {"a": {"$gt": 1}}, {"a": "100"}, "subset", False),
    ("§2 operators are ANDed", {"a": {"$gt": 1, "$lt": 5}}, {"a": 7}, "subset", False),
    ("point 9: a null arg satisfies $exists: true", {"a": {"$exists": True}}, {"a": None}, "subset", True),
    ("point 9: only $exists: false accepts absence", {"a": {"$exists": False}}, {}, "subset", True),
    ("point 9: an absent key is a mismatch", {"a": {"$in": [None]}}, {}, "subset", False),
    ("§2 $contains: some element matches", {"a": {"$contains": {"$gt": 2}}}, {"a": [1, 3]}, "subset", True),
    ("§2 $literal: no $ interpretation", {"a": {"$literal": {"$gt": 2}}}, {"a": {"$gt": 2}}, "subset", True),
    ("§2 $any_of: some branch matches", {"a": {"$any_of": [{"$regex": "^x"}, {"$lt": 0}]}}, {"a": -1}, "subset", True),
    ("point 11: $exists in an $any_of branch", {"a": {"$any_of": [{"$exists": False}, 1]}}, {}, "subset", True),
]


@pytest.mark.parametrize(("statement", "tree", "args", "mode", "passes"), STATEMENTS, ids=[s[0] for s in STATEMENTS])
def test_the_model_follows_the_spec_statements(statement: str, tree: Any, args: dict[str, Any], mode: str,
                                               passes: bool) -> None:
    rule = {"id": "r", "kind": "tool_args", "tool": RULE_TOOL, "match": tree, "mode": mode}
    trace = [{"seq": 1, "type": "tool.call", "tool": RULE_TOOL, "args": args}]
    checked, violations = reference(rule, trace)
    assert (checked, violations == []) == (1, passes), statement
    agrees(rule, trace)


def test_the_model_reproduces_the_spec_example() -> None:
    assert reference(EXAMPLE_RULE, EXAMPLE_CALLS) == (2, [])          # PASS: A9 and A7 fit ^A[0-9]+$
    failing = [EXAMPLE_CALLS[0], {**EXAMPLE_CALLS[1], "args": {"order": "B7", "amount": 5}}]
    evidence = {"tool": "refund", "call_id": "c3", "call_index": 1, "mode": "subset",
                "mismatches": [{"pointer": "/args/order", "expected": {"$regex": "^A[0-9]+$"}, "actual": "B7"}]}
    assert reference(EXAMPLE_RULE, failing) == (2, [(4, "tool_args.mismatch", "fail", evidence, "/args/order")])
    agrees(EXAMPLE_RULE, EXAMPLE_CALLS)
    agrees(EXAMPLE_RULE, failing)


def test_the_model_escapes_pointers_and_cuts_strings() -> None:
    """Point 7 and RFC 6901, on keys with `/`, `~` and the empty key, and a 201-character string."""
    rule = {"id": "r", "kind": "tool_args", "tool": RULE_TOOL, "match": {"a/b": 1, "m~n": {"0": LONG}, "": 2}}
    trace = [{"seq": 1, "type": "tool.call", "tool": RULE_TOOL, "args": {"m~n": {"0": "y"}}}]
    _, [(_, _, _, evidence, pointer)] = reference(rule, trace)
    assert pointer == "/args/a~1b"
    assert [m["pointer"] for m in evidence["mismatches"]] == ["/args/a~1b", "/args/m~0n/0", "/args/"]
    assert evidence["mismatches"][1]["expected"] == "y" * CUT + "…"
    agrees(rule, trace)


def test_the_model_keeps_the_first_20_mismatches() -> None:
    """§3.1: "up to 20" — in tree order, nested ones where their key stands."""
    tree = {"a": {f"k{i:02}": i for i in range(5)}, **{f"z{i:02}": {"$gt": 0} for i in range(25)}}
    rule = {"id": "r", "kind": "tool_args", "tool": RULE_TOOL, "match": tree, "mode": "exact"}
    trace = [{"seq": 1, "type": "tool.call", "tool": RULE_TOOL, "args": {"a": {"k00": 0, "x": 1}, "z00": 1}}]
    _, [(_, _, _, evidence, _)] = reference(rule, trace)
    pointers = [mismatch["pointer"] for mismatch in evidence["mismatches"]]
    nested = [f"/args/a/k{i:02}" for i in range(1, 5)]
    assert pointers == [*nested, "/args/a/x", *(f"/args/z{i:02}" for i in range(1, 16))]
    agrees(rule, trace)
    agrees(rule, trace, as_text=True)
