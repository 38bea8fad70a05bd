"""A third, independent reading of spec v2 §2 (the match grammar) and §3.1 (`tool_args`), with the
binding points 10.1-10.7 and 10.9-10.17, written from the spec text alone and aimed at the corners:
numbers, unicode keys and JSON Pointer escapes, empty containers in exact mode, `$in`/`$contains`/
`$any_of` with references, `$from_result` steps and options, `distinct`, `call_index`, evidence
cutting, codes, status, placement and order."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_invariants import check_trace, load_contract
from agent_invariants.render.json import to_json

from support import refused_line, write_contract, write_trace

Json = dict[str, Any]

FROM_GET: Json = {"$from_result": {"tool": "get"}}


def call(tool: str, cid: str, args: Any = None, **extra: Any) -> Json:
    event: Json = {"type": "tool.call", "tool": tool, "call_id": cid, **extra}
    if args is not None:
        event["args"] = args
    return event


def res(cid: str, result: Any = None, ok: bool = True, **extra: Any) -> Json:
    event: Json = {"type": "tool.result", "call_id": cid, "ok": ok, **extra}
    if result is not None:
        event["result"] = result
    return event


def done(output: Any = None) -> Json:
    event: Json = {"type": "run.completed"}
    if output is not None:
        event["output"] = output
    return event


def rule(match: Any = None, tool: str = "pay", **fields: Any) -> Json:
    body: Json = {"id": "r", "kind": "tool_args", "tool": tool, **fields}
    if match is not None:
        body["match"] = match
    return body


def run(cli: Any, tmp_path: Path, rules: list[Json], trace: list[Any]) -> tuple[int, Json, str]:
    """Check `rules` against `trace`; returns the exit code, the JSON report and its raw text."""
    write_contract(tmp_path, rules)
    write_trace(tmp_path, trace)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout), result.stdout


def violations(cli: Any, tmp_path: Path, body: Json, trace: list[Any]) -> list[Json]:
    """The violations of the single rule `body`, checked against `trace` through the public library
    (`load_contract`, `check_trace`, and the JSON writer the CLI uses), which keeps the file fast;
    the exit-code and raw-text tests run the CLI itself."""
    write_contract(tmp_path, [body])
    write_trace(tmp_path, trace)
    report = json.loads(to_json(check_trace(load_contract(str(tmp_path / "c.json")), str(tmp_path / "t.jsonl"))))
    result: Json = report["results"][0]
    found: list[Json] = result["violations"]
    assert result["passed"] == (not found) == report["passed"]
    return found


def brief(found: list[Json]) -> list[tuple[Any, ...]]:
    """(code, status, event_seq, pointer) of each violation, in report order."""
    return [(v["code"], v["status"], v.get("event_seq"), v.get("pointer")) for v in found]


def codes(found: list[Json]) -> list[str]:
    return [v["code"] for v in found]


def one_arg(cli: Any, tmp_path: Path, node: Any, value: Any, **fields: Any) -> list[str]:
    """Codes for one call whose args are {"x": value}, against the match {"x": node}."""
    return codes(violations(cli, tmp_path, rule({"x": node}, **fields), [call("pay", "c1", {"x": value})]))


def refused(cli: Any, tmp_path: Path, body: Json) -> str:
    write_contract(tmp_path, [body])
    write_trace(tmp_path, [call("pay", "c1", {"x": 1})])
    return refused_line(cli)


MISMATCH = ["tool_args.mismatch"]
UNRESOLVED = ["tool_args.reference_unresolved"]


# -- §3.1 worked example, FAIL and PASS ------------------------------------------------------------

EXAMPLE: Json = rule({"order": {"$regex": "^A[0-9]+$"},
                      "amount": {"$from_result": {"tool": "get", "path": "paid",
                                                  "where": {"id": {"$arg": "order"}}}}}, tool="refund")
EXAMPLE_HEAD = [call("get", "c1", {"id": "A9"}), res("c1", {"paid": 10})]


def test_spec_example_fail_lists_both_violations(cli: Any, tmp_path: Path) -> None:
    """§3.1 example: FAIL → seq 3 mismatch at /args/amount (any of [10], got 12); seq 4
    reference_unresolved (no_candidates)."""
    trace = [*EXAMPLE_HEAD, call("refund", "c2", {"order": "A9", "amount": 12}),
             call("refund", "c3", {"order": "A7", "amount": 5})]
    found = violations(cli, tmp_path, EXAMPLE, trace)
    assert brief(found) == [("tool_args.mismatch", "fail", 3, "/args/amount"),
                            ("tool_args.reference_unresolved", "unresolved", 4, "/args/amount")]
    assert found[0]["evidence"]["mismatches"] == [
        {"pointer": "/args/amount", "expected": {"any_of": [10]}, "actual": 12}]
    assert found[1]["evidence"]["unresolved"] == [
        {"pointer": "/args/amount", "reason": "no_candidates", "reference": EXAMPLE["match"]["amount"]}]


def test_spec_example_evidence_carries_tool_call_id_index_mode(cli: Any, tmp_path: Path) -> None:
    """§3.1: evidence also carries {tool, call_id?, call_index, mode}."""
    trace = [*EXAMPLE_HEAD, call("refund", "c2", {"order": "A9", "amount": 12}),
             call("refund", "c3", {"order": "A7", "amount": 5})]
    found = violations(cli, tmp_path, EXAMPLE, trace)
    assert [(v["evidence"]["tool"], v["evidence"]["call_id"], v["evidence"]["call_index"],
             v["evidence"]["mode"]) for v in found] == [("refund", "c2", 0, "subset"), ("refund", "c3", 1, "subset")]


def test_spec_example_pass(cli: Any, tmp_path: Path) -> None:
    """§3.1 example: PASS: amount 10, and no seq 4."""
    trace = [*EXAMPLE_HEAD, call("refund", "c2", {"order": "A9", "amount": 10})]
    code, report, _ = run(cli, tmp_path, [EXAMPLE], trace)
    assert code == 0 and report["results"][0]["passed"] and report["results"][0]["checked"] == 1


def test_evidence_without_call_id_omits_it(cli: Any, tmp_path: Path) -> None:
    """§3.1: `call_id?` is optional in the evidence: a call without call_id has none."""
    found = violations(cli, tmp_path, rule({"x": 1}), [{"type": "tool.call", "tool": "pay", "args": {"x": 2}}])
    assert "call_id" not in found[0]["evidence"] and found[0]["evidence"]["call_index"] == 0


# -- §2 equality and numbers -------------------------------------------------------------------------

@pytest.mark.parametrize(("node", "value", "expected"), [
    (1, 1.0, []),                       # 1 = 1.0
    (1.0, 1, []),
    (100, 1e2, []),                     # exponent form is the same number
    (1e308, 1e308, []),
    (0.1, 0.1, []),
    (True, 1, MISMATCH),                # true ≠ 1
    (1, True, MISMATCH),
    (False, 0, MISMATCH),
    (None, 0, MISMATCH),
    ("1", 1, MISMATCH),
    (None, None, []),                   # null is a value
    ([1, 2], [2, 1], MISMATCH),         # arrays by position
    ([1], [1, 1], MISMATCH),            # arrays need the same length
    ([{"a": 1}], [{"a": 1, "b": 2}], []),  # array elements of a literal match as subsets
    ({}, {"a": 1}, []),                 # empty object literal in subset mode matches any object
    ({}, [], MISMATCH),                 # an object literal never matches an array
    ([], {}, MISMATCH),
    ([], [], []),
])
def test_literal_equality(cli: Any, tmp_path: Path, node: Any, value: Any, expected: list[str]) -> None:
    """§2: equality is JSON-type-strict and structural: true≠1, 1=1.0; arrays by position, same
    length; objects as subsets."""
    assert one_arg(cli, tmp_path, node, value) == expected


def test_negative_zero_equals_zero(cli: Any, tmp_path: Path) -> None:
    """§2 `1=1.0`: numbers compare by value; spec silent on -0, read as the number 0."""
    write_contract(tmp_path, [rule({"x": 0})])
    (tmp_path / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"pay","args":{"x":-0}}\n')
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 0, result.stdout


def test_big_integers_read_as_doubles(cli: Any, tmp_path: Path) -> None:
    """§2 `1=1.0` / §0 RFC 8785 numbers: spec silent on precision; numbers are read as IEEE doubles
    (RFC 8785 and Node do so), so 2**53+1 equals 2**53."""
    assert one_arg(cli, tmp_path, 2**53 + 1, 2**53) == []


def test_big_integer_equals_itself(cli: Any, tmp_path: Path) -> None:
    """§2: 2**53+1 equals itself."""
    assert one_arg(cli, tmp_path, 2**53 + 1, 2**53 + 1) == []


def test_evidence_numbers_use_canonical_form(cli: Any, tmp_path: Path) -> None:
    """10.7: evidence is serialised with RFC 8785 number form: 1.0 → 1, 1e2 → 100, 1e21 → 1e+21."""
    body = rule({"a": 5, "b": 5, "c": 5})
    _, _, raw = run(cli, tmp_path, [body], [call("pay", "c1", {"a": 1.0, "b": 1e2, "c": 1e21})])
    assert '"actual": 1,' in raw or '"actual": 1\n' in raw
    assert '"actual": 100' in raw and '"actual": 100.0' not in raw
    assert '"actual": 1e+21' in raw


def test_literal_expected_keeps_node_as_written(cli: Any, tmp_path: Path) -> None:
    """10.7: `expected` is the node as written (an operator object stays an operator object)."""
    found = violations(cli, tmp_path, rule({"x": {"$gt": 5}}), [call("pay", "c1", {"x": 1})])
    assert found[0]["evidence"]["mismatches"] == [{"pointer": "/args/x", "expected": {"$gt": 5}, "actual": 1}]


# -- §2 absent keys and null (10.9) ----------------------------------------------------------------

def test_absent_key_is_mismatch_without_actual(cli: Any, tmp_path: Path) -> None:
    """10.9: a node whose key is absent is a `mismatch`; 10.7: `actual` omitted when absent."""
    found = violations(cli, tmp_path, rule({"x": 1}), [call("pay", "c1", {"y": 1})])
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/x")]
    assert found[0]["evidence"]["mismatches"] == [{"pointer": "/args/x", "expected": 1}]


def test_absent_key_under_operator_is_mismatch(cli: Any, tmp_path: Path) -> None:
    """10.9: an operator node whose key is absent is a mismatch, never unresolved."""
    found = violations(cli, tmp_path, rule({"x": {"$gt": 0}}), [call("pay", "c1", {})])
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/x")]


@pytest.mark.parametrize(("node", "args", "expected"), [
    ({"$exists": False}, {}, []),
    ({"$exists": False}, {"x": None}, MISMATCH),   # null is present
    ({"$exists": True}, {"x": None}, []),
    ({"$exists": True}, {}, MISMATCH),
    ({"$any_of": [{"$exists": False}, {"$gt": 3}]}, {}, []),
    ({"$any_of": [{"$exists": False}, {"$gt": 3}]}, {"x": 5}, []),
    ({"$any_of": [{"$exists": False}, {"$gt": 3}]}, {"x": 1}, MISMATCH),
])
def test_exists(cli: Any, tmp_path: Path, node: Json, args: Json, expected: list[str]) -> None:
    """10.9: only `$exists: false` accepts absence; a null arg satisfies `$exists: true`; 10.11:
    `$exists` may sit in `$any_of` branches of a key's value."""
    assert codes(violations(cli, tmp_path, rule({"x": node}), [call("pay", "c1", args)])) == expected


def test_null_literal_matches_null_arg(cli: Any, tmp_path: Path) -> None:
    """10.9: null is present wherever it appears."""
    assert one_arg(cli, tmp_path, None, None) == []


# -- exact mode and ignore -------------------------------------------------------------------------

@pytest.mark.parametrize(("match", "args", "expected"), [
    ({}, {}, []),
    ({}, {"a": 1}, MISMATCH),
    ({"a": {}}, {"a": {}}, []),
    ({"a": {}}, {"a": {"b": 1}}, MISMATCH),                 # every level
    ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}, MISMATCH),
    ({"a": [{"b": 1}]}, {"a": [{"b": 1, "c": 2}]}, MISMATCH),  # inside arrays too
    ({"a": []}, {"a": []}, []),
    ({"a": []}, {"a": [1]}, MISMATCH),
    ({"a": 1}, {"a": 1.0}, []),
    ({"a": {"$gt": 0}}, {"a": 1, "b": 2}, MISMATCH),
])
def test_exact_mode(cli: Any, tmp_path: Path, match: Json, args: Json, expected: list[str]) -> None:
    """§2: with `mode: exact`, key sets must be equal at every level."""
    body = rule(match, mode="exact")
    assert codes(violations(cli, tmp_path, body, [call("pay", "c1", args)])) == expected


def test_exact_mode_evidence_names_mode(cli: Any, tmp_path: Path) -> None:
    """§3.1: evidence carries `mode`."""
    found = violations(cli, tmp_path, rule({}, mode="exact"), [call("pay", "c1", {"a": 1})])
    assert found[0]["evidence"]["mode"] == "exact" and found[0]["event_seq"] == 1


def test_subset_mode_is_default_and_explicit(cli: Any, tmp_path: Path) -> None:
    """§3.1 `mode`: subset or exact; subset lets other keys be there."""
    assert codes(violations(cli, tmp_path, rule({"a": 1}, mode="subset"),
                            [call("pay", "c1", {"a": 1, "b": 2})])) == []


def test_ignore_top_level_key(cli: Any, tmp_path: Path) -> None:
    """§2: exact mode except top-level `ignore`: an ignored extra top-level key is allowed."""
    body = rule({"a": 1}, mode="exact", ignore=["trace_id"])
    assert codes(violations(cli, tmp_path, body, [call("pay", "c1", {"a": 1, "trace_id": {"x": 1}})])) == []


def test_ignore_does_not_reach_nested_keys_of_same_name(cli: Any, tmp_path: Path) -> None:
    """§2: ignore is top-level only: a nested key of the same name is still an extra key."""
    body = rule({"a": {"b": 1}}, mode="exact", ignore=["t"])
    assert codes(violations(cli, tmp_path, body, [call("pay", "c1", {"a": {"b": 1, "t": 2}})])) == MISMATCH


def test_ignore_needs_exact_mode(cli: Any, tmp_path: Path) -> None:
    """§3.1: `ignore`: exact mode only (otherwise a load error)."""
    refused(cli, tmp_path, rule({"a": 1}, ignore=["b"]))


def test_unknown_mode_is_refused(cli: Any, tmp_path: Path) -> None:
    """§3.1: `mode`: subset or exact."""
    refused(cli, tmp_path, rule({"a": 1}, mode="strict"))


# -- operators -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("node", "value", "expected"), [
    ({"$regex": "[0-9]"}, "ab7cd", []),           # unanchored search
    ({"$regex": "^A"}, "BA", MISMATCH),
    ({"$regex": "1"}, 1, MISMATCH),               # 10.10 strings only
    ({"$regex": "true"}, True, MISMATCH),
    ({"$regex": "."}, None, MISMATCH),
    ({"$regex": "é+$"}, "caféé", []),
    ({"$in": [1, "a"]}, 1.0, []),
    ({"$in": [1, "a"]}, True, MISMATCH),
    ({"$in": [[1, 2]]}, [1, 2], []),
    ({"$in": [{"a": 1}]}, {"a": 1, "b": 2}, MISMATCH),   # equality, not subset
    ({"$gt": 5}, 5, MISMATCH),
    ({"$gte": 5}, 5.0, []),
    ({"$lt": 5}, 4.999, []),
    ({"$lte": 5}, 5, []),
    ({"$gt": 0}, True, MISMATCH),                 # booleans never compare
    ({"$lt": 1000}, "100", MISMATCH),             # "100" never compares
    ({"$gt": 0}, None, MISMATCH),
    ({"$gt": 1e307}, 1e308, []),
    ({"$gt": 0, "$lt": 10}, 5, []),               # ANDed
    ({"$gt": 0, "$lt": 10}, 10, MISMATCH),
    ({"$contains": 2}, [1, 2, 3], []),
    ({"$contains": 2}, [1, 3], MISMATCH),
    ({"$contains": 2}, [], MISMATCH),
    ({"$contains": {"sku": "a"}}, [{"sku": "a", "qty": 1}], []),   # element matches as subset
    ({"$contains": 1}, {"a": 1}, MISMATCH),       # an object is not an array
    ({"$contains": "a"}, "abc", MISMATCH),        # nor is a string
    ({"$contains": {"$gt": 2}}, [1, 3], []),
    ({"$literal": {"$gt": 1}}, {"$gt": 1}, []),   # no $ interpretation
    ({"$literal": {"$gt": 1}}, 2, MISMATCH),
    ({"$literal": {"a": 1}}, {"a": 1, "b": 2}, MISMATCH),   # 10.10 structural equality
    ({"$literal": {"a": 1, "b": 2}}, {"b": 2, "a": 1}, []),
    ({"$literal": [1]}, [1.0], []),
    ({"$any_of": [1, 2]}, 2, []),
    ({"$any_of": [1, 2]}, 3, MISMATCH),
    ({"$any_of": [{"$regex": "^a"}, {"$gt": 3}]}, 4, []),
])
def test_operator(cli: Any, tmp_path: Path, node: Json, value: Any, expected: list[str]) -> None:
    """§2 operator list (and 10.10): $regex, $in, $gt/$gte/$lt/$lte, $contains, $literal, $any_of."""
    assert one_arg(cli, tmp_path, node, value) == expected


def test_in_with_thousand_values_is_accepted(cli: Any, tmp_path: Path) -> None:
    """§2: `$in`: ≤ 1000 values."""
    assert one_arg(cli, tmp_path, {"$in": list(range(1000))}, 999) == []


@pytest.mark.parametrize("node", [
    {"$in": list(range(1001))},               # > 1000 values
    {"$in": 5},                                # bad operand
    {"$any_of": [1]},                          # < 2 branches
    {"$any_of": list(range(21))},              # > 20 branches
    {"$any_of": []},
    {"$gt": "5"},                              # finite numbers only
    {"$gt": True},
    {"$lte": None},
    {"$regex": 5},
    {"$regex": "a" * 501},                     # ≤ 500 chars
    {"$regex": "(a)\\1"},                      # backreference
    {"$regex": "a(?=b)"},                      # lookahead
    {"$regex": "(?<!a)b"},                     # lookbehind
    {"$regex": "(?>a)"},                       # atomic group
    {"$regex": "a++"},                         # possessive
    {"$regex": "(a"},                          # not a regex
    {"$regex": {"$arg": "y"}},                 # 10.10 operand must be a literal string
    {"$exists": 1},                            # boolean operand
    {"$bogus": 1},                             # unknown $ key
    {"$gt": 1, "a": 2},                        # mixed keys
    {"$contains": {"$exists": True}},          # 10.11 not in $contains operand
])
def test_bad_operator_is_a_load_error(cli: Any, tmp_path: Path, node: Json) -> None:
    """§2: unknown $ keys, mixed keys and bad operands are load errors (limits from the operator list,
    10.10, 10.11)."""
    refused(cli, tmp_path, rule({"x": node}))


def test_regex_of_500_chars_is_accepted(cli: Any, tmp_path: Path) -> None:
    """§2: `$regex` ≤ 500 chars."""
    assert one_arg(cli, tmp_path, {"$regex": "a" * 500}, "a" * 500) == []


def test_gt_infinite_operand_is_refused(cli: Any, tmp_path: Path) -> None:
    """§2: comparison operands are finite numbers only (1e400 reads as infinity)."""
    (tmp_path / "c.json").write_text(
        '{"version":2,"name":"spec","rules":[{"id":"r","kind":"tool_args","tool":"pay",'
        '"match":{"x":{"$gt":1e400}}}]}')
    write_trace(tmp_path, [call("pay", "c1", {"x": 1})])
    refused_line(cli)


@pytest.mark.parametrize("match", [
    {"$exists": True},                         # root
    {"x": [{"$exists": True}]},                # array element
])
def test_exists_out_of_place_is_refused(cli: Any, tmp_path: Path, match: Json) -> None:
    """10.11: `$exists` is a load error anywhere but a literal key's value (root, array element)."""
    refused(cli, tmp_path, rule(match))


# -- unicode keys, JSON Pointer escapes, long keys ---------------------------------------------------

def test_unicode_key_pointer(cli: Any, tmp_path: Path) -> None:
    """10.7: pointers are RFC 6901 into the event; a unicode key appears as itself."""
    found = violations(cli, tmp_path, rule({"ключ": {"日本": 1}}), [call("pay", "c1", {"ключ": {"日本": 2}})])
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/ключ/日本")]


def test_pointer_escapes_slash_and_tilde(cli: Any, tmp_path: Path) -> None:
    """§0 / 10.7: RFC 6901 pointers escape `~` as `~0` and `/` as `~1`."""
    found = violations(cli, tmp_path, rule({"a/b": 1, "m~n": 1}), [call("pay", "c1", {"a/b": 2, "m~n": 2})])
    pointers = sorted(m["pointer"] for m in found[0]["evidence"]["mismatches"])
    assert pointers == ["/args/a~1b", "/args/m~0n"]


def test_pointer_into_array_element(cli: Any, tmp_path: Path) -> None:
    """10.7: pointers go into the event, array positions included."""
    found = violations(cli, tmp_path, rule({"items": [{"sku": "a"}, {"sku": "b"}]}),
                       [call("pay", "c1", {"items": [{"sku": "a"}, {"sku": "c"}]})])
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/items/1/sku")]


def test_pointer_of_very_long_key_is_not_cut(cli: Any, tmp_path: Path) -> None:
    """10.7: the violation's `pointer` is an RFC 6901 pointer, not an evidence string: kept whole."""
    key = "k" * 300
    found = violations(cli, tmp_path, rule({key: 1}), [call("pay", "c1", {key: 2})])
    assert found[0]["pointer"] == "/args/" + key


@pytest.mark.parametrize(("path", "args", "value"), [
    ("/a~1b", {"a/b": 7}, 7),            # JSON Pointer escapes
    ("/m~0n", {"m~n": 7}, 7),
    ("/~01", {"~1": 7}, 7),              # ~01 is "~1", not "/"
    ("/", {"": 7}, 7),                   # 10.13 "/" is the key ""
    ("items.0.sku", {"items": [{"sku": 7}]}, 7),
    ("/items/0/sku", {"items": [{"sku": 7}]}, 7),
    ("o.0", {"o": {"0": 7}}, 7),         # 10.13 numeric segment on an object is a key
    ("ключ.ä", {"ключ": {"ä": 7}}, 7),
    ("n", {"n": None}, None),            # null is found
])
def test_arg_path_forms(cli: Any, tmp_path: Path, path: str, args: Json, value: Any) -> None:
    """§2 paths (dot and JSON Pointer) and 10.13, read through `$arg`: `x` equals the value at path."""
    body = rule({"x": {"$arg": path}})
    assert codes(violations(cli, tmp_path, body, [call("pay", "c1", {**args, "x": value})])) == []


@pytest.mark.parametrize(("path", "args"), [
    ("items.a", {"items": [1]}),         # 10.13 non-numeric segment on an array is not found
    ("items.01", {"items": [1, 2]}),     # not a canonical integer → key lookup → not found on array
    ("items.5", {"items": [1]}),
    ("a.b", {"a": 1}),
    ("/a~1b", {"a": {"b": 1}}),
    ("missing", {}),
])
def test_arg_path_not_found_is_no_candidates(cli: Any, tmp_path: Path, path: str, args: Json) -> None:
    """10.12: an absent `$arg` path gives an empty set → reference_unresolved (no_candidates)."""
    found = violations(cli, tmp_path, rule({"x": {"$arg": path}}), [call("pay", "c1", {**args, "x": 1})])
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 1, "/args/x")]
    assert found[0]["evidence"]["unresolved"][0]["reason"] == "no_candidates"


def test_empty_path_is_refused(cli: Any, tmp_path: Path) -> None:
    """10.13: `""` is not a valid path."""
    refused(cli, tmp_path, rule({"x": {"$arg": ""}}))


def test_empty_from_result_path_is_refused(cli: Any, tmp_path: Path) -> None:
    """10.13: `""` is not a valid path (omit `path` for the whole value)."""
    refused(cli, tmp_path, rule({"x": {"$from_result": {"tool": "get", "path": ""}}}))


# -- evidence strings cut at 200 code points ---------------------------------------------------------

@pytest.mark.parametrize(("value", "shown"), [
    ("a" * 200, "a" * 200),
    ("a" * 201, "a" * 200 + "…"),
    ("😀" * 250, "😀" * 200 + "…"),          # astral characters count as one code point
    ("é" * 199 + "😀😀", "é" * 199 + "😀" + "…"),
])
def test_evidence_string_cut_at_200_code_points(cli: Any, tmp_path: Path, value: str, shown: str) -> None:
    """§0 / 10.7: strings are cut to 200 Unicode code points plus `…`."""
    found = violations(cli, tmp_path, rule({"x": "z"}), [call("pay", "c1", {"x": value})])
    assert found[0]["evidence"]["mismatches"][0]["actual"] == shown


def test_evidence_expected_string_is_cut_too(cli: Any, tmp_path: Path) -> None:
    """10.7: evidence strings (the expected literal too) are cut to 200 code points plus `…`."""
    found = violations(cli, tmp_path, rule({"x": "😀" * 300}), [call("pay", "c1", {"x": 1})])
    assert found[0]["evidence"]["mismatches"][0]["expected"] == "😀" * 200 + "…"


def test_evidence_nested_string_is_cut(cli: Any, tmp_path: Path) -> None:
    """10.7: a string inside a structured evidence value is cut as well."""
    found = violations(cli, tmp_path, rule({"x": {"a": 1}}), [call("pay", "c1", {"x": ["b" * 250]})])
    assert found[0]["evidence"]["mismatches"][0]["actual"] == ["b" * 200 + "…"]


# -- limits ----------------------------------------------------------------------------------------

def nested(depth: int) -> Json:
    node: Json = {"leaf": 1}
    for _ in range(depth - 1):
        node = {"k": node}
    return node


def test_depth_far_beyond_32_is_refused(cli: Any, tmp_path: Path) -> None:
    """§2: depth ≤ 32 (a tree 40 levels deep is a load error)."""
    refused(cli, tmp_path, rule(nested(40)))


def test_shallow_tree_loads(cli: Any, tmp_path: Path) -> None:
    """§2: depth ≤ 32: a tree 20 levels deep loads."""
    write_contract(tmp_path, [rule(nested(20))])
    write_trace(tmp_path, [call("pay", "c1", {"x": 1})])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 1, result.stderr


def test_more_than_10k_nodes_is_refused(cli: Any, tmp_path: Path) -> None:
    """§2: ≤ 10k nodes."""
    refused(cli, tmp_path, rule({f"k{i}": i for i in range(10_500)}))


# -- references: candidates, ambiguous, no_candidates, $any_of ---------------------------------------

def test_equality_passes_if_any_candidate_matches(cli: Any, tmp_path: Path) -> None:
    """§2: equality passes if any candidate matches."""
    trace = [call("get", "g1", {}), res("g1", 10), call("get", "g2", {}), res("g2", 12),
             call("pay", "c1", {"x": 12})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == []


def test_equality_with_candidate_is_structural(cli: Any, tmp_path: Path) -> None:
    """10.10: equality with a reference candidate has equal key sets, not subset."""
    trace = [call("get", "g1", {}), res("g1", {"a": 1}), call("pay", "c1", {"x": {"a": 1, "b": 2}})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == MISMATCH


def test_equality_with_candidate_ignores_key_order_and_number_form(cli: Any, tmp_path: Path) -> None:
    """§2/10.10: structural equality: key order is irrelevant, 1 = 1.0."""
    trace = [call("get", "g1", {}), res("g1", {"a": 1, "b": [2.0]}), call("pay", "c1", {"x": {"b": [2], "a": 1.0}})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == []


def test_comparison_with_two_distinct_candidates_is_ambiguous(cli: Any, tmp_path: Path) -> None:
    """§2: comparisons need exactly one distinct candidate; otherwise `ambiguous`, never a mismatch."""
    trace = [call("get", "g1", {}), res("g1", 10), call("get", "g2", {}), res("g2", 12),
             call("pay", "c1", {"x": 100})]
    found = violations(cli, tmp_path, rule({"x": {"$lte": FROM_GET}}), trace)
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 5, "/args/x")]
    assert found[0]["evidence"]["unresolved"] == [
        {"pointer": "/args/x", "reference": FROM_GET, "reason": "ambiguous"}]


def test_comparison_with_equal_candidates_is_one_distinct(cli: Any, tmp_path: Path) -> None:
    """§2: exactly one *distinct* candidate: 10 and 10.0 are one (1=1.0)."""
    trace = [call("get", "g1", {}), res("g1", 10), call("get", "g2", {}), res("g2", 10.0),
             call("pay", "c1", {"x": 11})]
    found = violations(cli, tmp_path, rule({"x": {"$lte": FROM_GET}}), trace)
    assert codes(found) == MISMATCH


def test_comparison_with_non_number_candidate_mismatches(cli: Any, tmp_path: Path) -> None:
    """§2: booleans and "100" never compare (candidate side)."""
    trace = [call("get", "g1", {}), res("g1", "100"), call("pay", "c1", {"x": 5})]
    assert codes(violations(cli, tmp_path, rule({"x": {"$lte": FROM_GET}}), trace)) == MISMATCH


def test_comparison_with_no_candidates(cli: Any, tmp_path: Path) -> None:
    """§2: an empty set has the reason `no_candidates`."""
    found = violations(cli, tmp_path, rule({"x": {"$gt": FROM_GET}}), [call("pay", "c1", {"x": 5})])
    assert found[0]["evidence"]["unresolved"][0]["reason"] == "no_candidates"


def test_any_of_unresolved_and_mismatch_is_unresolved(cli: Any, tmp_path: Path) -> None:
    """§2: `$any_of` that does not match is unresolved if any branch was (never an extra mismatch)."""
    found = violations(cli, tmp_path, rule({"x": {"$any_of": [FROM_GET, 5]}}), [call("pay", "c1", {"x": 6})])
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 1, "/args/x")]


def test_any_of_match_beats_unresolved(cli: Any, tmp_path: Path) -> None:
    """§2: `$any_of` matches if any branch matches (even next to an unresolved one)."""
    assert one_arg(cli, tmp_path, {"$any_of": [FROM_GET, 5]}, 5) == []


def test_any_of_all_mismatch_is_mismatch_with_node_as_written(cli: Any, tmp_path: Path) -> None:
    """§2: otherwise a mismatch; 10.7: `expected` is the node as written."""
    node = {"$any_of": [{"$gt": 10}, 5]}
    found = violations(cli, tmp_path, rule({"x": node}), [call("pay", "c1", {"x": 6})])
    assert found[0]["evidence"]["mismatches"] == [{"pointer": "/args/x", "expected": node, "actual": 6}]


def test_any_of_with_reference_candidate_matching(cli: Any, tmp_path: Path) -> None:
    """§2: references inside `$any_of`: a matching candidate makes the branch match."""
    trace = [call("get", "g1", {}), res("g1", 7), call("pay", "c1", {"x": 7})]
    assert codes(violations(cli, tmp_path, rule({"x": {"$any_of": [FROM_GET, 5]}}), trace)) == []


def test_any_of_with_resolved_reference_mismatching(cli: Any, tmp_path: Path) -> None:
    """§2: a resolved reference branch that does not match is a plain mismatch."""
    trace = [call("get", "g1", {}), res("g1", 7), call("pay", "c1", {"x": 8})]
    assert codes(violations(cli, tmp_path, rule({"x": {"$any_of": [FROM_GET, 5]}}), trace)) == MISMATCH


def test_unresolved_and_mismatch_at_different_keys_give_two_codes(cli: Any, tmp_path: Path) -> None:
    """§3.1: each call gets at most one violation per code; 10.5: mismatch before reference_unresolved."""
    body = rule({"z": {"$arg": "nope"}, "a": 1, "b": 1})
    found = violations(cli, tmp_path, body, [call("pay", "c1", {"a": 2, "b": 2, "z": 0})])
    assert codes(found) == ["tool_args.mismatch", "tool_args.reference_unresolved"]
    assert len(found[0]["evidence"]["mismatches"]) == 2


def test_at_most_20_mismatches(cli: Any, tmp_path: Path) -> None:
    """§3.1: `mismatch`: up to 20 {pointer, expected, actual}, in one violation."""
    match = {f"k{i:02}": 1 for i in range(25)}
    found = violations(cli, tmp_path, rule(match), [call("pay", "c1", {f"k{i:02}": 2 for i in range(25)})])
    assert codes(found) == MISMATCH and len(found[0]["evidence"]["mismatches"]) == 20


# -- $in with references (10.11) --------------------------------------------------------------------

IN_ALLOWED: Json = {"$in": {"$from_result": {"tool": "get", "path": "allowed"}}}


@pytest.mark.parametrize(("allowed", "value", "expected"), [
    (["a", "b"], "a", []),           # array candidate contributes its elements
    (["a", "b"], "c", MISMATCH),
    (["a", "b"], ["a", "b"], MISMATCH),   # the array itself is not contributed
    ("a", "a", []),                  # a non-array candidate contributes itself
    ([1, [2]], [2], []),
    ([1.0], 1, []),
])
def test_in_reference(cli: Any, tmp_path: Path, allowed: Any, value: Any, expected: list[str]) -> None:
    """10.11: for `$in`, an array candidate contributes its elements and any other candidate itself."""
    trace = [call("get", "g1", {}), res("g1", {"allowed": allowed}), call("pay", "c1", {"x": value})]
    assert codes(violations(cli, tmp_path, rule({"x": IN_ALLOWED}), trace)) == expected


def test_in_reference_with_empty_array_is_no_candidates(cli: Any, tmp_path: Path) -> None:
    """10.11: nothing contributed → no_candidates."""
    trace = [call("get", "g1", {}), res("g1", {"allowed": []}), call("pay", "c1", {"x": "a"})]
    found = violations(cli, tmp_path, rule({"x": IN_ALLOWED}), trace)
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 3, "/args/x")]
    assert found[0]["evidence"]["unresolved"][0]["reason"] == "no_candidates"


def test_contains_with_reference(cli: Any, tmp_path: Path) -> None:
    """§2: `$contains` passes if any candidate matches some element."""
    trace = [call("get", "g1", {}), res("g1", 3), call("get", "g2", {}), res("g2", 4),
             call("pay", "c1", {"x": [1, 4]})]
    assert codes(violations(cli, tmp_path, rule({"x": {"$contains": FROM_GET}}), trace)) == []


# -- $from_result steps -------------------------------------------------------------------------------

def test_results_after_the_subject_are_not_candidates(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: only results strictly before the subject."""
    trace = [call("get", "g1", {}), call("pay", "c1", {"x": 1}), res("g1", 1)]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == UNRESOLVED


def test_result_of_later_call_before_subject_counts(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: a result strictly before the subject counts whatever its call."""
    trace = [call("get", "g1", {}), res("g1", 1), call("pay", "c1", {"x": 1})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == []


def test_failed_results_dropped_by_default(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: `ok_only` (default true) drops `ok:false`."""
    trace = [call("get", "g1", {}), res("g1", 1, ok=False), call("pay", "c1", {"x": 1})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == UNRESOLVED


def test_ok_only_false_keeps_failed_results(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: `ok_only: false` keeps `ok:false` results."""
    ref = {"$from_result": {"tool": "get", "ok_only": False}}
    trace = [call("get", "g1", {}), res("g1", 1, ok=False), call("pay", "c1", {"x": 1})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == []


def test_results_without_result_add_nothing(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: results without `result` add nothing."""
    trace = [call("get", "g1", {}), res("g1"), call("pay", "c1", {"x": None})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == UNRESOLVED


def test_null_result_is_a_candidate(cli: Any, tmp_path: Path) -> None:
    """10.9: null is present wherever it appears (`result: null` is a result)."""
    trace = [call("get", "g1", {}), res("g1", None) | {"result": None}, call("pay", "c1", {"x": None})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == []


def test_from_result_tool_is_a_glob(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: results whose tool matches (the tool glob)."""
    ref = {"$from_result": {"tool": "orders.*"}}
    trace = [call("orders.get", "g1", {}), res("g1", 3), call("pay", "c1", {"x": 3})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == []


def test_paired_result_uses_its_calls_tool(cli: Any, tmp_path: Path) -> None:
    """10.3: a paired result's own `tool` field is ignored by new kinds."""
    trace = [call("other", "g1", {}), res("g1", 3, tool="get"), call("pay", "c1", {"x": 3})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == UNRESOLVED


def test_orphan_result_keeps_its_own_tool(cli: Any, tmp_path: Path) -> None:
    """10.3: an orphan result keeps its own `tool` (if any) and has no args."""
    trace = [res("zz", 3, tool="get"), call("pay", "c1", {"x": 3})]
    assert codes(violations(cli, tmp_path, rule({"x": FROM_GET}), trace)) == []


def test_orphan_result_never_matches_where(cli: Any, tmp_path: Path) -> None:
    """10.3: an orphan result has no args, so `where` on its call's args cannot match it."""
    ref = {"$from_result": {"tool": "get", "where": {"id": {"$exists": False}}}}
    trace = [res("zz", 3, tool="get"), call("pay", "c1", {"x": 3})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == UNRESOLVED


def test_pairing_is_one_to_one_with_repeated_call_ids(cli: Any, tmp_path: Path) -> None:
    """10.3: a result belongs to the nearest earlier call with its call_id that has no result yet."""
    ref = {"$from_result": {"tool": "get", "where": {"id": "A"}}}
    trace = [call("get", "g", {"id": "A"}), call("get", "g", {"id": "B"}), res("g", "first"),
             res("g", "second"), call("pay", "c1", {"x": "second"})]
    # nearest earlier call without a result: the first result goes to the B call, the second to A
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == []


def test_call_index_selects_kth_call_result(cli: Any, tmp_path: Path) -> None:
    """§2 step 2: `call_index` keeps the k-th call's result (0-based)."""
    ref = {"$from_result": {"tool": "get", "call_index": 1}}
    trace = [call("get", "g1", {}), res("g1", 1), call("get", "g2", {}), res("g2", 2), call("pay", "c1", {"x": 1})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == MISMATCH


def test_call_index_counts_calls_over_whole_trace(cli: Any, tmp_path: Path) -> None:
    """10.12: call_index counts calls of `$from_result.tool` over the whole trace; its result must
    still precede the subject."""
    ref = {"$from_result": {"tool": "get", "call_index": 1}}
    trace = [call("get", "g1", {}), res("g1", 1), call("pay", "c1", {"x": 1}), call("get", "g2", {}), res("g2", 1)]
    found = violations(cli, tmp_path, rule({"x": ref}), trace)
    assert codes(found) == UNRESOLVED


def test_call_index_counts_failed_calls_too(cli: Any, tmp_path: Path) -> None:
    """10.12: call_index counts calls (a failed call keeps its index); ok_only then drops its result."""
    ref = {"$from_result": {"tool": "get", "call_index": 1}}
    trace = [call("get", "g1", {}), res("g1", 5, ok=False), call("get", "g2", {}), res("g2", 7),
             call("pay", "c1", {"x": 7})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == []


@pytest.mark.parametrize("extra", [{"where": {"id": 1}}, {"where_result": {"a": 1}}])
def test_call_index_with_where_is_refused(cli: Any, tmp_path: Path, extra: Json) -> None:
    """§2 step 2: `call_index` cannot be combined with `where` or `where_result`."""
    refused(cli, tmp_path, rule({"x": {"$from_result": {"tool": "get", "call_index": 0, **extra}}}))


def test_where_join_on_subject_args(cli: Any, tmp_path: Path) -> None:
    """§2 step 3: `where` matches the producing call's args; `$arg` inside reads the subject's args."""
    ref = {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg": "order"}}}}
    trace = [call("get", "g1", {"id": "A"}), res("g1", {"paid": 1}), call("get", "g2", {"id": "B"}),
             res("g2", {"paid": 2}), call("pay", "c1", {"order": "B", "x": 1})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == MISMATCH


def test_where_result_filters_results(cli: Any, tmp_path: Path) -> None:
    """§2 step 3: `where_result` matches the result."""
    ref = {"$from_result": {"tool": "get", "path": "paid", "where_result": {"state": "ok"}}}
    trace = [call("get", "g1", {}), res("g1", {"paid": 1, "state": "ok"}), call("get", "g2", {}),
             res("g2", {"paid": 2, "state": "bad"}), call("pay", "c1", {"x": 2})]
    body = rule({"x": {"$lte": ref}})
    assert codes(violations(cli, tmp_path, body, trace)) == MISMATCH  # only 1 is left: 2 > 1


def test_where_result_with_no_match_is_no_candidates(cli: Any, tmp_path: Path) -> None:
    """§2 step 3 + 5: nothing left → no_candidates."""
    ref = {"$from_result": {"tool": "get", "where_result": {"state": "ok"}}}
    trace = [call("get", "g1", {}), res("g1", {"state": "bad"}), call("pay", "c1", {"x": 1})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == UNRESOLVED


RESULT_ITEMS: Json = {"items": [{"sku": "a", "qty": 1, "tags": ["x"]}, {"sku": "b", "qty": 2, "tags": ["y", "z"]}]}


@pytest.mark.parametrize(("steps", "value", "expected"), [
    ({"path": "items", "find": {"sku": "b"}, "select": "qty"}, 2, []),
    ({"path": "items", "find": {"sku": "b"}, "select": "qty"}, 1, MISMATCH),
    ({"path": "items", "find": {"qty": {"$gt": 0}}, "select": "sku"}, "a", []),   # first matching element
    ({"path": "items", "length": True}, 2, []),
    ({"path": "items", "find": {"sku": "b"}, "select": "tags", "length": True}, 2, []),
    ({"path": "/items/1/sku"}, "b", []),
    ({"path": "items.1.sku"}, "b", []),
    ({"path": "items", "find": {"sku": "b"}}, {"sku": "b", "qty": 2, "tags": ["y", "z"]}, []),
])
def test_from_result_pipeline(cli: Any, tmp_path: Path, steps: Json, value: Any, expected: list[str]) -> None:
    """§2 step 4 / 10.12: path → find (first element matching a subset node) → select → length."""
    ref = {"$from_result": {"tool": "get", **steps}}
    trace = [call("get", "g1", {}), res("g1", RESULT_ITEMS), call("pay", "c1", {"x": value})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == expected


@pytest.mark.parametrize("steps", [
    {"path": "items", "find": {"sku": "q"}},        # no element
    {"path": "missing"},
    {"path": "items.0", "length": True},            # not an array
    {"path": "items.0", "find": {"sku": "a"}},      # find on a non-array
    {"path": "items", "find": {"sku": "a"}, "select": "nope"},
])
def test_from_result_failed_step_contributes_nothing(cli: Any, tmp_path: Path, steps: Json) -> None:
    """10.12: a result at which a step fails (absent, not an array, no element) contributes nothing."""
    ref = {"$from_result": {"tool": "get", **steps}}
    trace = [call("get", "g1", {}), res("g1", RESULT_ITEMS), call("pay", "c1", {"x": 1})]
    found = violations(cli, tmp_path, rule({"x": ref}), trace)
    assert [u["reason"] for u in found[0]["evidence"]["unresolved"]] == ["no_candidates"]


def test_from_result_failed_step_skips_only_that_result(cli: Any, tmp_path: Path) -> None:
    """10.12: the pipeline works per result: another result may still contribute."""
    ref = {"$from_result": {"tool": "get", "path": "paid"}}
    trace = [call("get", "g1", {}), res("g1", {"other": 1}), call("get", "g2", {}), res("g2", {"paid": 4}),
             call("pay", "c1", {"x": 5})]
    assert codes(violations(cli, tmp_path, rule({"x": {"$lte": ref}}), trace)) == MISMATCH


def test_nested_from_result_in_where(cli: Any, tmp_path: Path) -> None:
    """§2: nested hops: a `$from_result` inside `where`."""
    inner = {"$from_result": {"tool": "lookup", "path": "id"}}
    ref = {"$from_result": {"tool": "get", "path": "paid", "where": {"id": inner}}}
    trace = [call("lookup", "l1", {}), res("l1", {"id": "B"}), call("get", "g1", {"id": "A"}), res("g1", {"paid": 1}),
             call("get", "g2", {"id": "B"}), res("g2", {"paid": 2}), call("pay", "c1", {"x": 2})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == []


def test_more_than_4_nested_hops_is_refused(cli: Any, tmp_path: Path) -> None:
    """§2: at most 4 nested hops (6 nested `$from_result` is a load error)."""
    ref: Json = {"$from_result": {"tool": "t0"}}
    for i in range(1, 7):
        ref = {"$from_result": {"tool": f"t{i}", "where": {"id": ref}}}
    refused(cli, tmp_path, rule({"x": ref}))


@pytest.mark.parametrize("ref", [
    {"$from_result": {"path": "a"}},                                   # tool required
    {"$from_result": {"tool": "get", "bogus": 1}},
    {"$from_result": {"tool": "get", "find": {"a": {"$arg": "b"}}}},   # 10.12 $arg not in find
    {"$from_result": {"tool": "get", "find": {"a": {"$from_output": "b"}}}},
    {"$from_result": {"tool": "get", "length": "yes"}},
    {"$from_result": {"tool": "get", "ok_only": "no"}},
    {"$from_result": {"tool": "get", "call_index": -1}},
    {"$arg": 5},
])
def test_bad_reference_is_refused(cli: Any, tmp_path: Path, ref: Json) -> None:
    """§2 / 10.12: bad operands of references are load errors."""
    refused(cli, tmp_path, rule({"x": ref}))


# -- $from_output --------------------------------------------------------------------------------

def test_from_output_reads_final_output(cli: Any, tmp_path: Path) -> None:
    """§2: `$from_output: p` reads the final output, evaluated at trace end."""
    body = rule({"x": {"$lte": {"$from_output": "limit"}}})
    trace = [call("pay", "c1", {"x": 6}), done({"limit": 5})]
    found = violations(cli, tmp_path, body, trace)
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/x")]


def test_from_output_last_terminal_wins(cli: Any, tmp_path: Path) -> None:
    """§0: terminal is the last run.completed or run.failed; 10.16: run.failed may carry output."""
    body = rule({"x": {"$from_output": "v"}})
    trace = [call("pay", "c1", {"x": 2}), done({"v": 1}), {"type": "run.failed", "output": {"v": 2}}]
    assert codes(violations(cli, tmp_path, body, trace)) == []


@pytest.mark.parametrize("tail", [[], [done()], [done({"w": 1})]])
def test_from_output_missing_is_no_candidates(cli: Any, tmp_path: Path, tail: list[Json]) -> None:
    """10.12: `$from_output` with no terminal, no output or an absent path → no_candidates."""
    found = violations(cli, tmp_path, rule({"x": {"$from_output": "v"}}), [call("pay", "c1", {"x": 1}), *tail])
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 1, "/args/x")]
    assert found[0]["evidence"]["unresolved"][0]["reason"] == "no_candidates"


def test_from_output_inside_where(cli: Any, tmp_path: Path) -> None:
    """10.12: `$from_output` may appear anywhere in a tool_args match, including `where`."""
    ref = {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$from_output": "order"}}}}
    trace = [call("get", "g1", {"id": "A"}), res("g1", {"paid": 3}), call("pay", "c1", {"x": 3}),
             done({"order": "A"})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == []


def test_from_output_null_output_is_a_candidate(cli: Any, tmp_path: Path) -> None:
    """10.9: output: null is an output; `$from_output` of a path inside it is absent though.
    Here the rule compares a key with a path of an output object holding null."""
    body = rule({"x": {"$from_output": "v"}})
    trace = [call("pay", "c1", {"x": None}), done({"v": None})]
    assert codes(violations(cli, tmp_path, body, trace)) == []


# -- references in the wrong place ------------------------------------------------------------------

def test_reference_in_matcher_args_is_refused(cli: Any, tmp_path: Path) -> None:
    """§2: matchers accept `args`: a match tree without references."""
    body = {"id": "r", "kind": "deny_event", "match": {"type": "tool.call", "args": {"x": {"$arg": "y"}}}}
    refused(cli, tmp_path, body)


# -- tool_args fields --------------------------------------------------------------------------------

@pytest.mark.parametrize("fields", [
    {},                                            # none of match, schema, distinct
    {"match": {"a": 1}, "call_index": -1},
    {"match": {"a": 1}, "call_index": 1_000_001},
    {"match": {"a": 1}, "call_index": 1.5},
    {"distinct": []},                              # 1..20 paths
    {"distinct": [f"p{i}" for i in range(21)]},
    {"distinct": ["a"], "call_index": 0},          # cannot be combined
    {"distinct": [""]},                            # 10.13 "" is not a path
    {"match": {"a": 1}, "bogus": 1},
    {"schema": {"$ref": "https://example.com/s.json"}},   # only local $ref
    {"schema": {"type": "nonsense"}},
])
def test_bad_tool_args_rule_is_refused(cli: Any, tmp_path: Path, fields: Json) -> None:
    """§3.1 fields: call_index 0..1e6; distinct 1..20 paths and not with call_index; at least one of
    match, schema, distinct; only local $ref."""
    refused(cli, tmp_path, {"id": "r", "kind": "tool_args", "tool": "pay", **fields})


def test_call_index_upper_bound_is_accepted(cli: Any, tmp_path: Path) -> None:
    """§3.1: `call_index`: 0..1e6 (1e6 itself loads; the call is missing)."""
    found = violations(cli, tmp_path, rule({"a": 1}, call_index=1_000_000), [call("pay", "c1", {"a": 1})])
    assert codes(found) == ["tool_args.call_missing"]


def test_version_1_contract_refuses_tool_args(cli: Any, tmp_path: Path) -> None:
    """§0: a version-1 contract with a new kind exits 2."""
    write_contract(tmp_path, [rule({"a": 1})], version=1)
    write_trace(tmp_path, [call("pay", "c1", {"a": 1})])
    refused_line(cli)


def test_tool_is_a_glob(cli: Any, tmp_path: Path) -> None:
    """§3.1: `tool`: glob; every matching call is checked."""
    trace = [call("pay.card", "c1", {"a": 2}), call("pay.bank", "c2", {"a": 1}), call("other", "c3", {"a": 2})]
    code, report, _ = run(cli, tmp_path, [rule({"a": 1}, tool="pay.*")], trace)
    assert brief(report["results"][0]["violations"]) == [("tool_args.mismatch", "fail", 1, "/args/a")]
    assert report["results"][0]["checked"] == 2


def test_vacuous_without_matching_calls(cli: Any, tmp_path: Path) -> None:
    """10.4: tool_args without call_index may be vacuous: checked 0, vacuous true, passes."""
    code, report, _ = run(cli, tmp_path, [rule({"a": 1})], [call("other", "c1", {"a": 2})])
    result = report["results"][0]
    assert code == 0 and (result["passed"], result["checked"], result.get("vacuous")) == (True, 0, True)


def test_args_missing_only(cli: Any, tmp_path: Path) -> None:
    """§3.1: `args_missing` (unresolved), at the call; 10.17: a call without args gets it only."""
    body = rule({"a": 1}, distinct=["a"], schema={"type": "object", "required": ["a"]})
    found = violations(cli, tmp_path, body, [call("pay", "c1")])
    assert [(v["code"], v["status"], v["event_seq"]) for v in found] == [
        ("tool_args.args_missing", "unresolved", 1)]


def test_null_args_is_a_trace_error(cli: Any, tmp_path: Path) -> None:
    """10.16: null rejected for every field but result/output (file:line: $.args)."""
    write_contract(tmp_path, [rule({"a": 1})])
    write_trace(tmp_path, [{"type": "tool.call", "tool": "pay", "args": None}])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 2 and "t.jsonl:1" in result.stderr and "$.args" in result.stderr


def test_array_args_is_a_trace_error(cli: Any, tmp_path: Path) -> None:
    """10.16: args must be an object (file:line: $.args error)."""
    write_contract(tmp_path, [rule({"a": 1})])
    write_trace(tmp_path, [{"type": "tool.call", "tool": "pay", "args": [1]}])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 2 and "t.jsonl:1" in result.stderr and "$.args" in result.stderr


# -- call_index ------------------------------------------------------------------------------------

def test_call_index_checks_only_kth_call(cli: Any, tmp_path: Path) -> None:
    """§3.1: only the k-th (0-based) matching call is checked."""
    trace = [call("pay", "c1", {"a": 2}), call("other", "o1", {"a": 2}), call("pay", "c2", {"a": 3}),
             call("pay", "c3", {"a": 2})]
    found = violations(cli, tmp_path, rule({"a": 2}, call_index=1), trace)
    assert brief(found) == [("tool_args.mismatch", "fail", 3, "/args/a")]
    assert found[0]["evidence"]["call_index"] == 1 and found[0]["evidence"]["call_id"] == "c2"


def test_call_index_beyond_calls_seen(cli: Any, tmp_path: Path) -> None:
    """§3.1: `call_missing`: no seq; evidence {call_index, calls_seen} (plus tool, mode)."""
    trace = [call("pay", "c1", {"a": 1}), call("pay", "c2", {"a": 1})]
    found = violations(cli, tmp_path, rule({"a": 1}, call_index=2), trace)
    assert brief(found) == [("tool_args.call_missing", "fail", None, None)]
    evidence = found[0]["evidence"]
    assert (evidence["call_index"], evidence["calls_seen"], evidence["tool"]) == (2, 2, "pay")
    assert "call_id" not in evidence


def test_call_index_with_no_calls_is_not_vacuous(cli: Any, tmp_path: Path) -> None:
    """10.4: tool_args with call_index is never vacuous: no call → call_missing, calls_seen 0."""
    code, report, _ = run(cli, tmp_path, [rule({"a": 1}, call_index=0)], [done()])
    result = report["results"][0]
    assert code == 1 and not result["passed"] and not result.get("vacuous")
    assert [(v["code"], v["evidence"]["calls_seen"]) for v in result["violations"]] == [("tool_args.call_missing", 0)]


def test_call_index_passes_when_kth_call_matches(cli: Any, tmp_path: Path) -> None:
    """§3.1: the k-th call matching → pass."""
    trace = [call("pay", "c1", {"a": 2}), call("pay", "c2", {"a": 1})]
    assert codes(violations(cli, tmp_path, rule({"a": 1}, call_index=1), trace)) == []


# -- distinct (10.17) ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("first", "second", "expected"), [
    ({"q": 1}, {"q": 1.0}, ["tool_args.not_distinct"]),                      # 1 = 1.0
    ({"q": {"a": 1, "b": 2}}, {"q": {"b": 2, "a": 1}}, ["tool_args.not_distinct"]),   # key order
    ({"q": [1, 2]}, {"q": [2, 1]}, []),
    ({"q": True}, {"q": 1}, []),                                              # true ≠ 1
    ({"q": None}, {"q": None}, ["tool_args.not_distinct"]),                  # null is found
    ({"q": "x"}, {"q": "x", "other": 1}, ["tool_args.not_distinct"]),        # other keys irrelevant
])
def test_distinct_equality(cli: Any, tmp_path: Path, first: Json, second: Json, expected: list[str]) -> None:
    """10.17: the key is canonical (RFC 8785), so equal-but-differently-written values collide."""
    found = violations(cli, tmp_path, rule(distinct=["q"]), [call("pay", "c1", first), call("pay", "c2", second)])
    assert codes(found) == expected


def test_not_distinct_placement_and_related_seqs(cli: Any, tmp_path: Path) -> None:
    """10.17: every later duplicate gets `not_distinct` with related_seqs [seq of the first call]."""
    trace = [call("pay", "c1", {"q": 1}), call("pay", "c2", {"q": 2}), call("pay", "c3", {"q": 1}),
             call("pay", "c4", {"q": 1})]
    found = violations(cli, tmp_path, rule(distinct=["q"]), trace)
    assert [(v["code"], v["status"], v["event_seq"], v.get("related_seqs")) for v in found] == [
        ("tool_args.not_distinct", "fail", 3, [1]), ("tool_args.not_distinct", "fail", 4, [1])]


def test_distinct_composite_key(cli: Any, tmp_path: Path) -> None:
    """10.17: several paths form one composite key."""
    trace = [call("pay", "c1", {"a": 1, "b": 1}), call("pay", "c2", {"a": 1, "b": 2}),
             call("pay", "c3", {"a": 2, "b": 1}), call("pay", "c4", {"a": 1, "b": 2})]
    found = violations(cli, tmp_path, rule(distinct=["a", "b"]), trace)
    assert [(v["code"], v["event_seq"], v.get("related_seqs")) for v in found] == [("tool_args.not_distinct", 4, [2])]


def test_distinct_composite_key_is_a_tuple(cli: Any, tmp_path: Path) -> None:
    """10.17: a canonical tuple: values are not concatenated ("ab","c" ≠ "a","bc")."""
    trace = [call("pay", "c1", {"a": "ab", "b": "c"}), call("pay", "c2", {"a": "a", "b": "bc"})]
    assert codes(violations(cli, tmp_path, rule(distinct=["a", "b"]), trace)) == []


def test_distinct_missing_path(cli: Any, tmp_path: Path) -> None:
    """10.17: a call whose args lack any path gets `distinct_missing` (unresolved), at the call."""
    trace = [call("pay", "c1", {"a": 1}), call("pay", "c2", {"a": 1})]
    found = violations(cli, tmp_path, rule(distinct=["a", "b"]), trace)
    assert [(v["code"], v["status"], v["event_seq"]) for v in found] == [
        ("tool_args.distinct_missing", "unresolved", 1), ("tool_args.distinct_missing", "unresolved", 2)]


def test_distinct_with_pointer_and_unicode_paths(cli: Any, tmp_path: Path) -> None:
    """§2 paths in distinct: JSON Pointer with escapes and unicode dot paths."""
    trace = [call("pay", "c1", {"a/b": 1, "ключ": {"ä": 2}}), call("pay", "c2", {"a/b": 1, "ключ": {"ä": 2}})]
    found = violations(cli, tmp_path, rule(distinct=["/a~1b", "ключ.ä"]), trace)
    assert [(v["code"], v["event_seq"], v.get("related_seqs")) for v in found] == [("tool_args.not_distinct", 2, [1])]


def test_distinct_with_20_paths_loads(cli: Any, tmp_path: Path) -> None:
    """§3.1: `distinct`: 1..20 paths."""
    args = {f"p{i}": i for i in range(20)}
    found = violations(cli, tmp_path, rule(distinct=list(args)), [call("pay", "c1", args), call("pay", "c2", args)])
    assert codes(found) == ["tool_args.not_distinct"]


# -- schema ---------------------------------------------------------------------------------------

def test_schema_errors(cli: Any, tmp_path: Path) -> None:
    """§3.1 `schema` on the args; 10.7 errors: [{pointer, message}]; status fail; at the call."""
    body = rule(schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    found = violations(cli, tmp_path, body, [call("pay", "c1", {"n": "x"})])
    assert [(v["code"], v["status"], v["event_seq"]) for v in found] == [("tool_args.schema", "fail", 1)]
    errors = found[0]["evidence"]["errors"]
    assert len(errors) == 1 and set(errors[0]) == {"pointer", "message"} and errors[0]["pointer"] == "/args/n"


def test_schema_at_most_20_errors(cli: Any, tmp_path: Path) -> None:
    """§3.1: `schema`: up to 20 errors (one violation)."""
    props = {f"k{i:02}": {"type": "string"} for i in range(25)}
    body = rule(schema={"type": "object", "properties": props})
    found = violations(cli, tmp_path, body, [call("pay", "c1", {f"k{i:02}": i for i in range(25)})])
    assert codes(found) == ["tool_args.schema"] and len(found[0]["evidence"]["errors"]) == 20


def test_schema_local_ref(cli: Any, tmp_path: Path) -> None:
    """§3.1: only local `$ref` (a local one works)."""
    schema = {"$defs": {"pos": {"type": "number", "exclusiveMinimum": 0}},
              "type": "object", "properties": {"n": {"$ref": "#/$defs/pos"}}}
    found = violations(cli, tmp_path, rule(schema=schema), [call("pay", "c1", {"n": 0}), call("pay", "c2", {"n": 1})])
    assert [(v["code"], v["event_seq"]) for v in found] == [("tool_args.schema", 1)]


def test_schema_pass(cli: Any, tmp_path: Path) -> None:
    """§3.1: args that satisfy the schema pass."""
    body = rule(schema={"type": "object", "required": ["n"]})
    assert codes(violations(cli, tmp_path, body, [call("pay", "c1", {"n": 1})])) == []


# -- order of codes at one call, and across calls (10.5) ------------------------------------------

def test_code_order_at_one_call(cli: Any, tmp_path: Path) -> None:
    """10.5: ties at one event follow: args_missing, mismatch, reference_unresolved, schema,
    not_distinct, distinct_missing."""
    body = rule({"a": 1, "z": {"$arg": "nope"}}, schema={"type": "object", "required": ["s"]}, distinct=["a"])
    trace = [call("pay", "c1", {"a": 2, "z": 0}), call("pay", "c2", {"a": 2, "z": 0})]
    found = violations(cli, tmp_path, body, trace)
    assert [(v["code"], v["event_seq"]) for v in found] == [
        ("tool_args.mismatch", 1), ("tool_args.reference_unresolved", 1), ("tool_args.schema", 1),
        ("tool_args.mismatch", 2), ("tool_args.reference_unresolved", 2), ("tool_args.schema", 2),
        ("tool_args.not_distinct", 2)]


def test_schema_before_distinct_missing(cli: Any, tmp_path: Path) -> None:
    """10.5: schema before distinct_missing at one call."""
    body = rule(schema={"type": "object", "required": ["s"]}, distinct=["d"])
    found = violations(cli, tmp_path, body, [call("pay", "c1", {"a": 1})])
    assert codes(found) == ["tool_args.schema", "tool_args.distinct_missing"]


def test_violations_in_event_order_with_from_output(cli: Any, tmp_path: Path) -> None:
    """10.5: ascending event_index even when the rule is judged at trace end."""
    body = rule({"x": {"$from_output": "v"}})
    trace = [call("pay", "c1", {"x": 2}), call("pay", "c2", {"x": 1}), call("pay", "c3", {"x": 3}), done({"v": 1})]
    found = violations(cli, tmp_path, body, trace)
    assert [(v["event_seq"], v["event_index"]) for v in found] == [(1, 0), (3, 2)]


def test_top_level_violations_in_contract_order(cli: Any, tmp_path: Path) -> None:
    """10.5: top-level `violations` is the concatenation of results in contract order."""
    first = {**rule({"a": 1}), "id": "first"}
    second = {**rule({"a": 3}), "id": "second"}
    trace = [call("pay", "c1", {"a": 2}), call("pay", "c2", {"a": 2})]
    _, report, _ = run(cli, tmp_path, [second, first], trace)
    assert [(v["rule_id"], v["event_seq"]) for v in report["violations"]] == [
        ("second", 1), ("second", 2), ("first", 1), ("first", 2)]


# -- severity and counts (10.6) -------------------------------------------------------------------

def test_unresolved_warning_counts_and_fails_rule(cli: Any, tmp_path: Path) -> None:
    """10.6: every violation has its rule's severity, counts in warning_count and fails the rule,
    whatever its status (a warning alone keeps exit 0)."""
    body = rule({"x": FROM_GET}, severity="warning")
    code, report, _ = run(cli, tmp_path, [body], [call("pay", "c1", {"x": 1})])
    result = report["results"][0]
    assert (report["error_count"], report["warning_count"], result["passed"]) == (0, 1, False)
    assert result["violations"][0]["severity"] == "warning" and code == 0


def test_unresolved_error_counts_as_error(cli: Any, tmp_path: Path) -> None:
    """10.6: an unresolved violation of an error rule counts in error_count and exits 1."""
    code, report, _ = run(cli, tmp_path, [rule({"x": FROM_GET})], [call("pay", "c1", {"x": 1})])
    assert (code, report["error_count"], report["passed"]) == (1, 1, False)


# -- further corners -------------------------------------------------------------------------------

NO_RE2 = "raise ImportError('re2 hidden for this test')\n"


@pytest.mark.parametrize(("pattern", "value"), [("\\pL", "é"), ("\\x{41}", "A"), ("[\\d-z]", "-")])
def test_regex_acceptance_does_not_depend_on_re2(cli: Any, tmp_path: Path, pattern: str, value: str) -> None:
    """10.10: "RE2 subset; uses google-re2 if installed" made acceptance depend on the machine;
    resolution: the loader enforces RE2 syntax with or without google-re2."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": [
        rule({"x": {"$regex": pattern}})]}), encoding="utf-8")
    write_trace(tmp_path, [call("pay", "c1", {"x": value})])
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "re2.py").write_text(NO_RE2)
    args = ("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    with_re2 = cli(*args).returncode
    without_re2 = cli(*args, env={"PYTHONPATH": str(hide)}).returncode
    assert (with_re2, without_re2) == (0, 0)


@pytest.mark.parametrize(("pattern", "value", "expected"), [
    ("a$", "a\n", MISMATCH),          # RE2 `$` is the end of the text, not before a final newline
    ("^\\d$", "٣", MISMATCH),          # RE2 \d is ASCII
    ("^\\w$", "é", MISMATCH),          # RE2 \w is ASCII
    ("^[[:digit:]]+$", "123", []),     # POSIX classes are RE2 syntax
    ("a\\z", "a", []),
])
def test_regex_has_re2_meanings(cli: Any, tmp_path: Path, pattern: str, value: str, expected: list[str]) -> None:
    """§2 / 10.10: `$regex` is RE2 (its meanings, not Python's)."""
    assert one_arg(cli, tmp_path, {"$regex": pattern}, value) == expected


@pytest.mark.parametrize("pattern", ["a\\Z", "(?#c)a", "a{1001}", "(?P<n>a)(?P=n)"])
def test_non_re2_regex_is_refused(cli: Any, tmp_path: Path, pattern: str) -> None:
    """10.10: the loader enforces RE2 syntax (no \\Z, comments, repetition over 1000, backreference)."""
    refused(cli, tmp_path, rule({"x": {"$regex": pattern}}))


def infinite_call(tmp_path: Path, node: Json, raw: str) -> None:
    write_contract(tmp_path, [rule({"x": node})])
    line = '{"seq":1,"type":"tool.call","tool":"pay","args":{"x":RAW}}\n'.replace("RAW", raw)
    (tmp_path / "t.jsonl").write_text(line)


@pytest.mark.parametrize(("node", "raw"), [({"$gt": 5}, "1e400"), ({"$lt": 5}, "-1e400")])
def test_infinite_arg_never_compares(cli: Any, tmp_path: Path, node: Json, raw: str) -> None:
    """§2: `$gt` `$gte` `$lt` `$lte`: finite numbers only; a value that is not a finite number never
    compares (like booleans and "100")."""
    infinite_call(tmp_path, node, raw)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 1, result.stdout


def test_absent_key_with_resolved_reference_is_mismatch(cli: Any, tmp_path: Path) -> None:
    """10.9: an absent key is a mismatch; 10.7: `actual` omitted, `expected` any_of the candidates."""
    trace = [call("get", "g1", {}), res("g1", 1), call("pay", "c1", {"y": 1})]
    found = violations(cli, tmp_path, rule({"x": FROM_GET}), trace)
    assert found[0]["evidence"]["mismatches"] == [{"pointer": "/args/x", "expected": {"any_of": [1]}}]


def test_absent_key_with_empty_reference_is_unresolved(cli: Any, tmp_path: Path) -> None:
    """§2: an empty candidate set is `no_candidates` → reference_unresolved, never an extra mismatch
    (spec silent on which wins when the key is absent too; the reference reason is reported)."""
    found = violations(cli, tmp_path, rule({"x": FROM_GET}), [call("pay", "c1", {"y": 1})])
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 1, "/args/x")]


def test_expected_any_of_holds_at_most_20_candidates(cli: Any, tmp_path: Path) -> None:
    """10.7: `expected` for a reference is {"any_of": [candidates ≤ 20]}."""
    trace: list[Any] = []
    for i in range(25):
        trace += [call("get", f"g{i}", {}), res(f"g{i}", i)]
    found = violations(cli, tmp_path, rule({"x": FROM_GET}), [*trace, call("pay", "c1", {"x": 99})])
    assert found[0]["evidence"]["mismatches"][0]["expected"] == {"any_of": list(range(20))}


def test_two_unresolved_references_in_one_violation(cli: Any, tmp_path: Path) -> None:
    """§3.1: at most one violation per code per call; 10.7 `unresolved: [{pointer, reference, reason}]`."""
    found = violations(cli, tmp_path, rule({"x": {"$arg": "q"}, "y": {"$from_output": "v"}}),
                       [call("pay", "c1", {"x": 1, "y": 1})])
    assert codes(found) == UNRESOLVED
    assert found[0]["evidence"]["unresolved"] == [
        {"pointer": "/args/x", "reason": "no_candidates", "reference": {"$arg": "q"}},
        {"pointer": "/args/y", "reason": "no_candidates", "reference": {"$from_output": "v"}}]


def test_node_limit_boundary(cli: Any, tmp_path: Path) -> None:
    """§2: ≤ 10k nodes: an object with 9,999 values is 10,000 nodes and loads."""
    found = violations(cli, tmp_path, rule({f"k{i}": 1 for i in range(9_999)}), [call("pay", "c1", {})])
    assert codes(found) == MISMATCH and len(found[0]["evidence"]["mismatches"]) == 20


def test_node_limit_exceeded_by_one(cli: Any, tmp_path: Path) -> None:
    """§2: ≤ 10k nodes: 10,001 nodes is a load error."""
    refused(cli, tmp_path, rule({f"k{i}": 1 for i in range(10_000)}))


def test_ignore_does_not_reach_a_nested_path(cli: Any, tmp_path: Path) -> None:
    """§2 "except top-level `ignore`": only top-level keys are exempt; spec silent on a dotted entry,
    which (read as top-level only) does not exempt the nested key `a.d`."""
    body = rule({"a": {"c": 1}}, mode="exact", ignore=["a.d"])
    found = violations(cli, tmp_path, body, [call("pay", "c1", {"a": {"c": 1, "d": 1}})])
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/a/d")]


def test_exact_mode_extra_key_pointer(cli: Any, tmp_path: Path) -> None:
    """§2 exact mode: each extra key is a mismatch at its own pointer (spec silent on `expected`)."""
    found = violations(cli, tmp_path, rule({"a": {}}, mode="exact"), [call("pay", "c1", {"a": {"b": 1}, "z": 2})])
    assert [m["pointer"] for m in found[0]["evidence"]["mismatches"]] == ["/args/a/b", "/args/z"]
    assert [m["actual"] for m in found[0]["evidence"]["mismatches"]] == [1, 2]


def test_evidence_pointer_of_long_key_is_cut(cli: Any, tmp_path: Path) -> None:
    """10.7: evidence strings are cut to 200 code points plus `…` (a pointer in the evidence too);
    the violation's own `pointer` stays whole."""
    key = "k" * 300
    found = violations(cli, tmp_path, rule({key: 1}), [call("pay", "c1", {key: 2})])
    assert found[0]["evidence"]["mismatches"][0]["pointer"] == ("/args/" + key)[:200] + "…"


def test_schema_pointer_escapes(cli: Any, tmp_path: Path) -> None:
    """10.7: schema errors carry RFC 6901 pointers into the event (`~1`, `~0`)."""
    schema = {"properties": {"a/b": {"type": "string"}, "m~n": {"type": "string"}}}
    found = violations(cli, tmp_path, rule(schema=schema), [call("pay", "c1", {"a/b": 1, "m~n": 2})])
    assert sorted(e["pointer"] for e in found[0]["evidence"]["errors"]) == ["/args/a~1b", "/args/m~0n"]


@pytest.mark.parametrize("ref", [{"$from_output": "v"}, {"$arg": "v"}])
def test_reference_in_output_rule_is_refused(cli: Any, tmp_path: Path, ref: Json) -> None:
    """§2: `$from_output` in output rules is a load error; 10.12: both it and `$arg` are load errors
    in output rules."""
    refused(cli, tmp_path, {"id": "o", "kind": "output_match", "match": {"a": ref}})


def test_results_after_subject_excluded_when_judged_at_trace_end(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: results strictly before the subject, even when `$from_output` delays the verdict
    to the trace's end."""
    body = rule({"x": FROM_GET, "y": {"$from_output": "v"}})
    trace = [call("pay", "c1", {"x": 1, "y": 1}), call("get", "g1", {}), res("g1", 1), done({"v": 1})]
    found = violations(cli, tmp_path, body, trace)
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 1, "/args/x")]
    assert [u["pointer"] for u in found[0]["evidence"]["unresolved"]] == ["/args/x"]


def test_exact_mode_accepts_absent_key_named_with_exists_false(cli: Any, tmp_path: Path) -> None:
    """§2 exact mode + 10.9: a key named in the pattern with `$exists: false` may be absent."""
    body = rule({"a": 1, "b": {"$exists": False}}, mode="exact")
    assert codes(violations(cli, tmp_path, body, [call("pay", "c1", {"a": 1})])) == []


def test_call_index_counts_calls_without_args(cli: Any, tmp_path: Path) -> None:
    """§0 call index k: the k-th tool.call matching the glob (a call without args counts too)."""
    found = violations(cli, tmp_path, rule({"a": 1}, call_index=1), [call("pay", "c0"), call("pay", "c1", {"a": 2})])
    assert [(v["code"], v["event_seq"], v["evidence"]["call_index"]) for v in found] == [("tool_args.mismatch", 2, 1)]


def test_call_index_kth_call_without_args(cli: Any, tmp_path: Path) -> None:
    """§3.1: the k-th call without args gets `args_missing` (unresolved), not `call_missing`."""
    found = violations(cli, tmp_path, rule({"a": 1}, call_index=0), [call("pay", "c0")])
    assert brief(found) == [("tool_args.args_missing", "unresolved", 1, "/args")]


def test_where_never_matches_a_call_without_args(cli: Any, tmp_path: Path) -> None:
    """§2 (matchers): an event with no args never matches `args`; `where` matches the producing
    call's args, so an args-less call contributes nothing (even to `$exists: false`)."""
    ref = {"$from_result": {"tool": "get", "where": {"id": {"$exists": False}}}}
    trace = [call("get", "g1"), res("g1", 1), call("pay", "c1", {"x": 1})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == UNRESOLVED


def test_unicode_keys_are_not_normalised(cli: Any, tmp_path: Path) -> None:
    """§2 equal key sets: keys compare as written (spec silent on normalisation; NFC "é" is not
    NFD "é")."""
    found = violations(cli, tmp_path, rule({"\u00e9": 1}), [call("pay", "c1", {"e\u0301": 1})])
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/\u00e9")]


def test_partial_marks_only_liveness_parts_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.1 heading: safety; liveness with `$from_output` or `call_index`; §0: `check --partial`
    reports liveness parts as `inconclusive`."""
    rules = [{**rule({"a": 1}, call_index=3), "id": "k"}, {**rule({"a": {"$from_output": "v"}}), "id": "o"},
             {**rule({"a": 1}), "id": "s"}]
    write_contract(tmp_path, rules)
    write_trace(tmp_path, [call("pay", "c1", {"a": 2})])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--partial")
    report = json.loads(result.stdout)
    assert [(r["rule_id"], [(v["code"], v["status"]) for v in r["violations"]]) for r in report["results"]] == [
        ("k", [("tool_args.call_missing", "inconclusive")]),
        ("o", [("tool_args.reference_unresolved", "inconclusive")]),
        ("s", [("tool_args.mismatch", "fail")])]
    assert result.returncode == 1


def test_reference_in_array_element_has_its_pointer(cli: Any, tmp_path: Path) -> None:
    """§2 arrays match by position; 10.7 pointers into the event: each code at its element."""
    found = violations(cli, tmp_path, rule({"x": [FROM_GET, 2]}), [call("pay", "c1", {"x": [1, 3]})])
    assert brief(found) == [("tool_args.mismatch", "fail", 1, "/args/x/1"),
                            ("tool_args.reference_unresolved", "unresolved", 1, "/args/x/0")]


def test_unresolved_operand_hides_mismatch_of_its_node(cli: Any, tmp_path: Path) -> None:
    """§2: an unresolved reference gives reference_unresolved for that node, never an extra mismatch
    (even when another operand of the same operator object fails)."""
    found = violations(cli, tmp_path, rule({"x": {"$gt": 0, "$lte": FROM_GET}}), [call("pay", "c1", {"x": -5})])
    assert brief(found) == [("tool_args.reference_unresolved", "unresolved", 1, "/args/x")]


def test_nested_any_of_propagates_unresolved(cli: Any, tmp_path: Path) -> None:
    """§2: `$any_of` is unresolved if any branch was (a nested `$any_of` branch included)."""
    node = {"$any_of": [{"$any_of": [FROM_GET, 1]}, 2]}
    assert one_arg(cli, tmp_path, node, 3) == UNRESOLVED


def test_contains_reference_without_candidates(cli: Any, tmp_path: Path) -> None:
    """§2: `$contains` with an empty reference → no_candidates (reference_unresolved)."""
    assert one_arg(cli, tmp_path, {"$contains": FROM_GET}, [1]) == UNRESOLVED


def test_literal_keeps_reference_shapes_literal(cli: Any, tmp_path: Path) -> None:
    """§2 `$literal`: no `$` interpretation: a reference-shaped object is compared as data."""
    assert one_arg(cli, tmp_path, {"$literal": {"$arg": "x"}}, {"$arg": "x"}) == []


def test_checked_counts_every_matching_call(cli: Any, tmp_path: Path) -> None:
    """10.4: `checked` = subjects examined = matching calls (an args-less one too)."""
    trace = [call("pay", "c1"), call("pay", "c2", {"a": 1}), call("pay", "c3", {"a": 2}), call("x", "c4", {})]
    _, report, _ = run(cli, tmp_path, [rule({"a": 1})], trace)
    result = report["results"][0]
    assert result["checked"] == 3 and codes(result["violations"]) == ["tool_args.args_missing", "tool_args.mismatch"]


def test_find_node_may_hold_exists(cli: Any, tmp_path: Path) -> None:
    """10.11 / 10.12: `find` is a subset node, where `$exists` as a key's value is allowed."""
    ref = {"$from_result": {"tool": "get", "path": "items", "find": {"tags": {"$exists": True}}, "select": "sku"}}
    trace = [call("get", "g1", {}), res("g1", {"items": [{"sku": "a"}, {"sku": "b", "tags": []}]}),
             call("pay", "c1", {"x": "b"})]
    assert codes(violations(cli, tmp_path, rule({"x": ref}), trace)) == []


def test_exists_in_condition_matches_root_is_refused(cli: Any, tmp_path: Path) -> None:
    """10.11: `$exists` is a load error in a condition's `matches` (not a key's value)."""
    refused(cli, tmp_path, {"id": "w", "kind": "forbidden_when", "tool": "pay",
                            "when": {"path": "a", "matches": {"$exists": True}}})


def test_evidence_keys_in_rfc8785_order(cli: Any, tmp_path: Path) -> None:
    """10.7: evidence is serialised with RFC 8785 key order, which sorts by UTF-16 code units
    ("😀" U+1F600 is a surrogate pair D83D… and sorts before "ﬀ" U+FB00)."""
    actual = {"\ufb00": 1, "\U0001f600": 2, "a": 3, "B": 4}
    _, _, raw = run(cli, tmp_path, [rule({"x": 1})], [call("pay", "c1", {"x": actual})])
    start = raw.index('"actual"')
    block = raw[start:raw.index("}", start)]
    assert [block.index(k) for k in ('"B"', '"a"', '"\U0001f600"', '"\ufb00"')] == sorted(
        block.index(k) for k in ('"B"', '"a"', '"\U0001f600"', '"\ufb00"'))


@pytest.mark.parametrize("written", ["1.0", "1e0", "1E0"])
def test_call_index_written_as_float_is_the_integer(cli: Any, tmp_path: Path, written: str) -> None:
    """§2 `1=1.0`: a call_index written 1.0 / 1e0 is call 1 (spec silent; JSON numbers by value);
    10.7: the evidence shows it in canonical form (1)."""
    text = json.dumps({"version": 2, "name": "spec", "rules": [rule({"a": 1}, call_index=999)]})
    (tmp_path / "c.json").write_text(text.replace("999", written), encoding="utf-8")
    write_trace(tmp_path, [call("pay", "c1", {"a": 1})])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    violation = json.loads(result.stdout)["results"][0]["violations"][0]
    seen = (result.returncode, violation["code"], violation["evidence"]["call_index"])
    assert seen == (1, "tool_args.call_missing", 1)
    assert '"call_index": 1,' in result.stdout or '"call_index": 1\n' in result.stdout


def test_any_of_with_20_branches_loads(cli: Any, tmp_path: Path) -> None:
    """§2: `$any_of`: 2..20 branches (20 is accepted)."""
    assert one_arg(cli, tmp_path, {"$any_of": list(range(20))}, 19) == []


def test_a_schema_multiple_of_meets_an_integer_past_any_double(cli: Any, tmp_path: Path) -> None:
    """`multipleOf: 0.5` against 10**400: the validator divided it as a double (OverflowError, a
    traceback and exit 1). It is judged exactly: every integer is a multiple of 0.5, and none of
    0.3 (as the double 0.3 is, exactly)."""
    big = 10 ** 400
    for divisor, passed in ((0.5, True), (0.3, False)):
        schema = {"type": "object", "properties": {"x": {"multipleOf": divisor}}}
        code, report, _ = run(cli, tmp_path, [rule(tool="t", schema=schema)], [call("t", "c1", {"x": big})])
        assert (code, report["passed"]) == (0 if passed else 1, passed), divisor
    assert [(v["code"], v["pointer"]) for v in report["violations"]] == [("tool_args.schema", "/args/x")]
    assert "an integer of 401 digits is not a multiple of 0.3" in report["violations"][0]["message"]


def test_a_schema_multiple_of_meets_a_number_read_as_infinity_or_a_divisor_past_any_double(
        cli: Any, tmp_path: Path) -> None:
    """A trace's `1e400` reads as infinity (as `$lt` says of it): under a fractional `multipleOf` it
    was a traceback and exit 1 (OverflowError); it is a multiple of nothing. A divisor of 10**400
    was judged, but said of 0.5 that "an integer past any double" is no multiple of it."""
    schema = {"type": "object", "properties": {"x": {"multipleOf": 0.5}, "y": {"multipleOf": 10 ** 400},
                                               "z": {"multipleOf": 3}}}
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": [
        rule(tool="t", schema=schema)]}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"t","call_id":"c1",'
                                      f'"args":{{"x":1e400,"y":0.5,"z":{10 ** 400 + 1}}}}}\n', encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stderr) == (1, "")
    errors = json.loads(result.stdout)["results"][0]["violations"][0]["evidence"]["errors"]
    assert errors == [
        {"pointer": "/args/x", "message": "a number past any double (read as infinity) is not a multiple of 0.5"},
        {"pointer": "/args/y", "message": "0.5 is not a multiple of an integer of 401 digits"},
        {"pointer": "/args/z", "message": "an integer of 401 digits is not a multiple of 3"}]
