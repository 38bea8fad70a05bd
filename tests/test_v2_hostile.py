"""Version-2 contracts and traces that try to break the checker: numbers beyond any double, values
nested as deep as a trace may hold them, schemas whose references go nowhere, patterns that could
backtrack, YAML that is not JSON. Each is a clear answer (a verdict, or one line and exit 2),
never a traceback or a check that runs for minutes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agent_invariants.match.regex as regex
from agent_invariants.match.regex import RegexError, compile_search

import cli_zygote


def run(tmp_path: Path, rules: list[dict[str, Any]], lines: list[str], *extra: str,
        contract_text: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    (tmp_path / "c.json").write_text(contract_text or json.dumps({"version": 2, "name": "h", "rules": rules}))
    (tmp_path / "t.jsonl").write_text("".join(line + "\n" for line in lines))
    return cli_zygote.as_text(cli_zygote.run_python(["-m", "agent_invariants", "check", "--contract", "c.json",
                                                     "--trace", "t.jsonl", "--format", "json", *extra], tmp_path,
                                                    timeout=timeout))


def refused(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("agent-invariants: ")
    return line


def verdicts(result: subprocess.CompletedProcess[str]) -> dict[str, bool]:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1), result.stderr
    return {rule["rule_id"]: rule["passed"] for rule in json.loads(result.stdout)["results"]}


ARGS_REGEX = {"id": "r", "kind": "tool_args", "tool": "t", "match": {"a": {"$regex": "^x"}}}


@pytest.mark.parametrize("value", ["1e400", "-1e999", "1" + "0" * 4400])
def test_a_number_beyond_any_double_in_args_is_a_value_like_any_other(tmp_path, value):
    result = run(tmp_path, [ARGS_REGEX], ['{"seq":1,"type":"tool.call","tool":"t","args":{"a":' + value + '}}'])
    assert verdicts(result) == {"r": False}   # a number never matches a $regex


def test_a_number_beyond_any_double_in_a_result_can_be_referenced(tmp_path):
    rule = {"id": "r", "kind": "tool_args", "tool": "pay",
            "match": {"a": {"$from_result": {"tool": "get", "path": "v"}}}}
    lines = ['{"seq":1,"type":"tool.call","tool":"get","call_id":"c1"}',
             '{"seq":2,"type":"tool.result","call_id":"c1","result":{"v":1e400}}',
             '{"seq":3,"type":"tool.call","tool":"pay","args":{"a":1e999}}']
    assert verdicts(run(tmp_path, [rule], lines)) == {"r": True}   # both are Infinity, as JavaScript reads them


def test_an_infinite_duration_is_refused_at_its_line(tmp_path):
    line = refused(run(tmp_path, [ARGS_REGEX], ['{"seq":1,"type":"run.completed","duration_ms":1e400}']))
    assert "t.jsonl:1: $.duration_ms:" in line


def test_args_that_are_no_object_are_named_without_being_decoded(tmp_path):
    line = refused(run(tmp_path, [ARGS_REGEX], ['{"seq":1,"type":"tool.call","tool":"t","args":[1e400]}']))
    assert line.endswith("t.jsonl:1: $.args: expected an object, got an array")


def plain_calls(count: int) -> list[str]:
    """Well-typed calls and results, each result with a duration: what most batches hold."""
    lines = []
    for n in range(count):
        lines.append(json.dumps({"seq": 2 * n + 1, "type": "tool.call", "tool": "t", "call_id": f"c{n}",
                                 "args": {"a": "x", "n": n}}))
        lines.append(json.dumps({"seq": 2 * n + 2, "type": "tool.result", "call_id": f"c{n}", "ok": True,
                                 "duration_ms": n % 7 + 0.5}))
    return lines


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("args", '"x"', "$.args: expected an object, got a string"),
    ("args", "null", "$.args: expected an object, got null"),
    ("args", '[{"a": "x"}]', "$.args: expected an object, got an array"),
    ("duration_ms", "-0.5", "$.duration_ms: expected a finite number >= 0, got -0.5"),
    ("duration_ms", "true", "$.duration_ms: expected a number of milliseconds >= 0, got a boolean"),
    ("duration_ms", "1" + "0" * 400,
     "$.duration_ms: expected a finite number >= 0, got a number too large for a double"),
    ("status", '""', "$.status: must be 1..100 characters (UTF-16 units) long, got 0"),
    # (found by a spec-words reading: 100 emoji are 200 UTF-16 units, as version 1 and JavaScript count)
    ("status", json.dumps("\U0001F600" * 100), "$.status: must be 1..100 characters (UTF-16 units) long, got 200"),
    ("reason", json.dumps("\U0001F600" * 251), "$.reason: must be 1..500 characters (UTF-16 units) long, got 502"),
])
def test_one_badly_typed_field_among_thousands_of_good_ones_is_named_at_its_line(tmp_path, field, value, problem):
    lines = plain_calls(1500)
    bad = json.loads(lines[2222])
    bad.pop(field, None)
    lines[2222] = json.dumps(bad)[:-1] + f', "{field}": {value}}}'
    line = refused(run(tmp_path, [ARGS_REGEX], lines))
    assert line.endswith(f"t.jsonl:2223: {problem}")


NEAR_LARGEST_DOUBLE = "17976931348623158" + "0" * 292   # an integer that reads as the largest double


def test_an_integer_duration_that_rounds_to_the_largest_double_is_finite_alone_and_among_others(tmp_path):
    alone = ['{"seq":1,"type":"tool.result","duration_ms":' + NEAR_LARGEST_DOUBLE + "}"]
    assert verdicts(run(tmp_path, [ARGS_REGEX], alone)) == {"r": True}
    with_a_bad_one = [*alone, '{"seq":2,"type":"tool.result","duration_ms":-1}']
    assert refused(run(tmp_path, [ARGS_REGEX], with_a_bad_one)).endswith(
        "t.jsonl:2: $.duration_ms: expected a finite number >= 0, got -1")


def test_thousands_of_well_typed_args_and_durations_pass_the_type_check(tmp_path):
    assert verdicts(run(tmp_path, [ARGS_REGEX], plain_calls(1500))) == {"r": True}


def deep(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("rule", [
    {"id": "r", "kind": "tool_args", "tool": "t", "match": {"a": {"$arg": "b"}}},
    {"id": "r", "kind": "tool_args", "tool": "t", "distinct": ["a"]},
    {"id": "r", "kind": "tool_args", "tool": "t", "match": {"a": 1}},
], ids=["equality", "distinct", "evidence"])
def test_values_nested_as_deep_as_a_trace_allows_are_compared_and_shown(tmp_path, rule):
    call = {"seq": 1, "type": "tool.call", "tool": "t", "args": {"a": deep(495), "b": deep(495, 2)}}
    again = {**call, "seq": 2}
    assert verdicts(run(tmp_path, [rule], [json.dumps(call), json.dumps(again)])) == {"r": False}


@pytest.mark.parametrize(("schema", "at"), [({"$ref": "#"}, ""),
                                          ({"$defs": {"x": {"$ref": "#/$defs/x"}}, "$ref": "#/$defs/x"}, ""),
                                          ({"$ref": "#/nowhere"}, ".$ref"), ({"$ref": "#no-anchor"}, ".$ref")],
                         ids=["itself", "a-loop", "a-missing-pointer", "a-missing-anchor"])
def test_a_schema_whose_references_lead_nowhere_is_a_load_error(tmp_path, schema, at):
    rule = {"id": "r", "kind": "tool_args", "tool": "t", "schema": schema}
    line = refused(run(tmp_path, [rule], ['{"seq":1,"type":"tool.call","tool":"t","args":{}}']))
    assert f"c.json:1: $.rules[0].schema{at}: the schema cannot be used" in line


def test_a_schema_pattern_is_an_re2_pattern(tmp_path):
    rule = {"id": "r", "kind": "tool_args", "tool": "t", "schema": {"properties": {"a": {"pattern": "(?<=a)b"}}}}
    line = refused(run(tmp_path, [rule], ['{"seq":1,"type":"tool.call","tool":"t","args":{}}']))
    assert "$.rules[0].schema.properties.a.pattern: the pattern cannot hold a lookaround" in line


def test_a_schema_pattern_that_backtracks_in_python_still_answers(tmp_path):
    rule = {"id": "r", "kind": "tool_args", "tool": "t", "schema": {"properties": {"a": {"pattern": "^(a+)+$"}}}}
    line = json.dumps({"seq": 1, "type": "tool.call", "tool": "t", "args": {"a": "a" * 40 + "!"}})
    assert verdicts(run(tmp_path, [rule], [line], timeout=60)) == {"r": False}


def test_a_regex_re2_refuses_is_one_line_in_its_own_words(tmp_path):
    rule = {"id": "r", "kind": "tool_args", "tool": "t", "match": {"a": {"$regex": "a)"}}}
    line = refused(run(tmp_path, [rule], ['{"seq":1,"type":"tool.call","tool":"t","args":{}}']))
    assert "$.rules[0].match.a.$regex: $regex is not a valid pattern" in line and "b'" not in line


def test_yaml_keys_and_dates_that_are_no_json_are_load_errors(tmp_path):
    (tmp_path / "c.yaml").write_text("version: 2\nname: y\nrules:\n  - id: r\n    kind: tool_args\n    tool: t\n"
                                     "    match:\n      d: 2024-01-01\n")
    (tmp_path / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"t","args":{"d":"2024-01-01"}}\n')
    result = subprocess.run([sys.executable, "-m", "agent_invariants", "check", "--contract", "c.yaml", "--trace",
                             "t.jsonl"], cwd=tmp_path, capture_output=True, text=True)
    assert "$.rules[0].match.d: date is no JSON value" in refused(result)


def test_in_and_equality_agree_on_integers_beyond_2_to_the_53(tmp_path):
    rules = [{"id": "in", "kind": "deny_event", "match": {"type": "tool.call", "args": {"id": {"$in": [2**53]}}}},
             {"id": "eq", "kind": "deny_event", "match": {"type": "tool.call", "args": {"id": 2**53}}},
             {"id": "lte", "kind": "deny_event", "match": {"type": "tool.call", "args": {"id": {"$lte": 2**53}}}}]
    line = json.dumps({"seq": 1, "type": "tool.call", "tool": "t", "args": {"id": 2**53 + 1}})
    assert verdicts(run(tmp_path, rules, [line])) == {"in": False, "eq": False, "lte": False}


def test_many_results_and_many_calls_stay_linear_without_a_join(tmp_path):
    rule = {"id": "r", "kind": "tool_args", "tool": "pay",
            "match": {"a": {"$from_result": {"tool": "get", "path": "v"}}}}
    lines = []
    for number in range(20_000):
        lines.append(json.dumps({"seq": 3 * number + 1, "type": "tool.call", "tool": "get", "call_id": f"g{number}"}))
        lines.append(json.dumps({"seq": 3 * number + 2, "type": "tool.result", "call_id": f"g{number}",
                                 "result": {"v": number}}))
        lines.append(json.dumps({"seq": 3 * number + 3, "type": "tool.call", "tool": "pay", "args": {"a": number}}))
    assert verdicts(run(tmp_path, [rule], lines, timeout=60)) == {"r": True}


@pytest.mark.parametrize(("call_index", "passes"), [(0, True), (999_999, False)])
def test_a_reference_to_one_call_by_its_index_looks_at_no_other_result(tmp_path, call_index, passes):
    """`call_index` picks the result of one call: each later call's check looked at every earlier
    result of the tool, so 16,000 calls against 16,000 results took 19 s (38 s when the index is
    past the last call); only that call's result is kept now."""
    rule = {"id": "r", "kind": "tool_args", "tool": "pay",
            "match": {"a": {"$from_result": {"tool": "get", "path": "v", "call_index": call_index}}}}
    lines = []
    for number in range(20_000):
        lines.append(json.dumps({"seq": 2 * number + 1, "type": "tool.call", "tool": "get", "call_id": f"g{number}"}))
        lines.append(json.dumps({"seq": 2 * number + 2, "type": "tool.result", "call_id": f"g{number}",
                                 "result": {"v": 0 if number == 0 else number + 1}}))
    lines += [json.dumps({"seq": 40_001 + number, "type": "tool.call", "tool": "pay", "args": {"a": 0}})
              for number in range(20_000)]
    assert verdicts(run(tmp_path, [rule], lines, timeout=10)) == {"r": passes}


@pytest.mark.parametrize(("value", "member"), [
    ("1.0", True), ("true", False), ('"1"', False), ('{"b": [2, 1.0], "a": null}', True), ('{"a": null}', False),
    ("[1, 2]", False)])
def test_a_schema_enum_holds_json_equal_values_and_only_those(tmp_path, value, member):
    """JSON Schema `enum`: a value equal to a member (1 is 1.0, key order is no difference) is one
    of them; `true` is not 1, `"1"` not 1, a part of a member not the member."""
    rule = {"id": "r", "kind": "tool_args", "tool": "t",
            "schema": {"properties": {"v": {"enum": [1, {"a": None, "b": [2, 1]}, "x"]}}}}
    result = run(tmp_path, [rule], ['{"seq":1,"type":"tool.call","tool":"t","args":{"v":' + value + '}}'])
    assert verdicts(result) == {"r": member}


@pytest.mark.parametrize(("keyword", "listed", "holds"), [
    ("enum", [9007199254740993], False), ("enum", [12345678901234567890], False), ("enum", [9007199254740992.0], True),
    ("const", 9007199254740993, False)])
def test_a_schema_compares_integers_beyond_a_double_exactly(tmp_path, keyword, listed, holds):
    """JSON Schema is read by its validator, which compares numbers exactly: 2^53 is not 2^53 + 1
    (one double stands for both), in an `enum` as in a `const`; 2^53 is 2^53.0. The message
    writes the enum's member as it is, not as its double."""
    rule = {"id": "r", "kind": "tool_args", "tool": "t", "schema": {"properties": {"v": {keyword: listed}}}}
    result = run(tmp_path, [rule], ['{"seq":1,"type":"tool.call","tool":"t","args":{"v":9007199254740992}}'])
    assert verdicts(result) == {"r": holds}
    if keyword == "enum" and not holds:
        assert json.loads(result.stdout)["violations"][0]["message"].endswith(
            f"/args/v: 9007199254740992 is not one of [{listed[0]}].")


@pytest.mark.parametrize(("items", "unique"), [
    ("[9007199254740993, 9007199254740992]", True), ("[9007199254740992, 9007199254740992.0]", False),
    ("[1, true]", True), ('[{"a": [1]}, {"a": [1.0]}]', False)])
def test_unique_items_compares_as_the_validator_does(tmp_path, items, unique):
    """`uniqueItems`: items equal as the validator has it (1 is 1.0) repeat; 2^53 + 1 and 2^53
    (one double) and `true` and 1 do not."""
    rule = {"id": "r", "kind": "tool_args", "tool": "t", "schema": {"properties": {"v": {"uniqueItems": True}}}}
    result = run(tmp_path, [rule], ['{"seq":1,"type":"tool.call","tool":"t","args":{"v":' + items + '}}'])
    assert verdicts(result) == {"r": unique}


def test_unique_items_of_many_large_integers_are_not_compared_pairwise(tmp_path):
    """20,000 integers near 2^60, 256 to each double: keyed by their doubles, each was compared
    with every earlier one under its key (12 s); numbers are keyed as themselves."""
    rule = {"id": "r", "kind": "tool_args", "tool": "t", "schema": {"properties": {"v": {"uniqueItems": True}}}}
    line = json.dumps({"seq": 1, "type": "tool.call", "tool": "t", "args": {"v": [2**60 + k for k in range(20_000)]}})
    assert verdicts(run(tmp_path, [rule], [line], timeout=5)) == {"r": True}


def test_a_large_schema_enum_costs_each_value_one_lookup(tmp_path):
    """An enum of 100,000 objects was scanned for each value, and written out whole in the error
    of each value that is none of them: 250 calls took 17 s, 2,000 over two minutes. Its members
    are looked up by their equality keys, and the error shows its start, as it did."""
    rule = {"id": "r", "kind": "tool_args", "tool": "t",
            "schema": {"properties": {"v": {"enum": [{"k": n, "a": [n, n]} for n in range(100_000)]}}}}
    lines = [json.dumps({"seq": n + 1, "type": "tool.call", "tool": "t", "args": {"v": {"k": -1, "a": [1, 2]}}})
             for n in range(2_000)] + ['{"seq":2001,"type":"tool.call","tool":"t","args":{"v":{"a":[7,7],"k":7}}}']
    result = run(tmp_path, [rule], lines, timeout=20)
    report = json.loads(result.stdout)
    assert (report["error_count"], report["results"][0]["violations_total"]) == (2_000, 2_000)
    assert report["violations"][0]["message"].startswith(
        'Args of t at seq 1 break the schema: /args/v: {"a":[1,2],"k":-1} is not one of [{"a":[0,0],"k":0}, ')


# -- both engines: the same patterns are refused, and mean the same ----------------------------

PATTERNS = [("^(?:/home/[a-z]+)$", "/home/sam\n", False), ("^[[:digit:]]+$", "123", True), ("(?i)abc", "ABC", True),
            ("a{2,3}", "aa", True), ("(?m)^b$", "a\nb\nc", True), ("x$", "x\n", False), ("\\d", "٣", False),
            ("^a\\z", "a", True)]
REFUSED = ["(?#c)a", "a{1001}", "(?x) a", "\\u0041", "a{,3}", "(a)\\1", "(?<=a)b", "a++", "(?>a)", "a\\Z",
           "(?:a{2}){501}", "(?:a{0,1000}){2}", "(?:(?:a{10}b){10}){11}", "(?:a{2,}){501}"]


@pytest.fixture(params=["re2", "python"])
def engine(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr(regex, "_re2", lambda: None)
    return request.param


@pytest.mark.parametrize(("pattern", "text", "found"), PATTERNS)
def test_a_pattern_means_the_same_on_either_engine(engine, pattern, text, found):
    assert (compile_search(pattern)(text) is not None) is found


@pytest.mark.parametrize("pattern", REFUSED)
def test_a_pattern_re2_lacks_is_refused_on_either_engine(engine, pattern):
    with pytest.raises(RegexError, match="cannot hold"):
        compile_search(pattern)


def test_nested_repetitions_up_to_1000_in_all_are_taken_on_either_engine(engine):
    assert compile_search("(?:a{2}){500}")("a" * 1000) is not None
    assert compile_search("(?:a{10}b?){100}|(?:c{2}){500}")("c" * 1000) is not None


def test_a_pattern_too_large_for_a_set_of_re2_is_searched_alone() -> None:
    # RE2 compiles it on its own, but not into the one-pattern set the search usually runs on
    search = compile_search("(?:(?:\\d|\\pL){22}(?:[ab]{4,39}(\\pL[ab]){10})?){9,}")
    assert search("1" * 198) is not None
    assert search("1" * 197 + "!") is None


def test_a_report_keeps_its_evidence_within_a_total_and_cuts_the_rest_short(tmp_path):
    """Each violation's evidence is bounded, but every one of a thousand could repeat a large
    earlier result: 85 KB of trace made a JSON report of 116 MB, and eight such rules ran out of
    memory. Past a total, later violations keep a short evidence that says what it left out."""
    lines = [json.dumps({"seq": 1, "type": "tool.call", "tool": "get", "call_id": "g", "args": {}}),
             json.dumps({"seq": 2, "type": "tool.result", "call_id": "g", "ok": True, "result": [0] + [1] * 3000})]
    lines += [json.dumps({"seq": 3 + n, "type": "tool.call", "tool": "refund", "call_id": f"r{n}", "args": {"x": 0}})
              for n in range(1000)]
    rules = [{"id": f"ref{k}", "kind": "tool_args", "tool": "refund", "match": {"x": {"$from_result": {"tool": "get"}}}}
             for k in range(2)]
    result = run(tmp_path, rules, lines)
    assert result.returncode == 1, result.stderr
    assert len(result.stdout) < 20_000_000   # (232 MB before)
    report = json.loads(result.stdout)
    shown = [violation["evidence"]["mismatches"][0]["expected"]["any_of"][0] for violation in report["violations"]]
    assert len(shown) == 2000 and shown[0][:3] == [0, 1, 1]
    first, last = shown[0][-1], shown[-1][-1]
    assert first.startswith("… ") and last.startswith("… ") and len(shown[-1]) < 100 < len(shown[0])
    assert int(last.split()[1]) == 3001 - (len(shown[-1]) - 1)   # what it left out, counted
    assert report["results"][1]["violations"][-1]["evidence"] == report["violations"][-1]["evidence"]


@pytest.mark.parametrize("version", [1, 2])
def test_the_evidence_total_leaves_the_version_1_kinds_evidence_as_the_node_tool_writes_it(tmp_path, version):
    """The version-1 kinds write their evidence as the Node tool does (keys in its order, a list of
    patterns whole), in a contract of either version, on any report people's contracts make: 80
    violations, each listing 200 globs (770 KB), were cut from the 45th on, past the total of the
    version-2 kinds' evidence, which they have a larger one of their own beside."""
    allowed = [f"tool-{n:03d}-{'x' * 40}*" for n in range(200)]
    contract = json.dumps({"version": version, "name": "h",
                           "rules": [{"id": "a", "kind": "allow_tools", "tools": allowed}]})
    lines = [json.dumps({"seq": n + 1, "type": "tool.call", "tool": f"shell{n}", "call_id": f"c{n}"})
             for n in range(80)]
    result = run(tmp_path, [], lines, contract_text=contract)
    assert result.returncode == 1, result.stderr
    written = [json.dumps(violation["evidence"]) for violation in json.loads(result.stdout)["violations"]]
    assert written == [json.dumps({"tool": f"shell{n}", "allowed": allowed}) for n in range(80)]


def test_a_thousand_long_patterns_listed_in_a_thousand_violations_make_a_report_of_megabytes(tmp_path):
    """Past the version-1 kinds' own total (4 MB), their evidence is cut as any evidence is, its
    keys still in their order: a thousand patterns of 500 characters in each of a thousand
    violations made a JSON report of a GB."""
    allowed = [f"g{n:04d}.{'x' * 490}" for n in range(1000)]
    contract = json.dumps({"version": 1, "name": "h", "rules": [{"id": "a", "kind": "allow_tools", "tools": allowed}]})
    lines = [json.dumps({"seq": n + 1, "type": "tool.call", "tool": f"t{n}", "call_id": f"c{n}"})
             for n in range(1000)]
    result = run(tmp_path, [], lines, "--no-lint", contract_text=contract)
    assert result.returncode == 1, result.stderr
    assert len(result.stdout) < 15_000_000   # (1 GB before)
    written = [violation["evidence"] for violation in json.loads(result.stdout)["violations"]]
    whole = [n for n, evidence in enumerate(written) if evidence == {"tool": f"t{n}", "allowed": allowed}]
    assert whole == list(range(9))   # (8 of 500 KB are not yet past 4 MB)
    for n, evidence in enumerate(written[9:], 9):   # (each pattern cut to 200 characters, as strings are)
        assert list(evidence) == ["tool", "allowed"] and evidence["tool"] == f"t{n}"
        kept = evidence["allowed"][:-1]
        assert kept == [pattern[:200] + "…" for pattern in allowed[:len(kept)]]
        assert evidence["allowed"][-1] == f"… {1000 - len(kept)} more"


def test_an_objects_long_keys_are_cut_in_evidence_as_its_strings_are(tmp_path):
    """A key is text from the trace too: one of 200,000 characters, in a result each of 200
    violations names, made a report of 80 MB."""
    lines = [json.dumps({"seq": 1, "type": "tool.call", "tool": "get", "call_id": "g", "args": {}}),
             json.dumps({"seq": 2, "type": "tool.result", "call_id": "g", "ok": True,
                         "result": {"k" * 200_000: 1, "k" * 199_999 + "j": 2}})]
    lines += [json.dumps({"seq": 3 + n, "type": "tool.call", "tool": "refund", "call_id": f"r{n}", "args": {"x": 0}})
              for n in range(200)]
    rule = {"id": "r", "kind": "tool_args", "tool": "refund", "match": {"x": {"$from_result": {"tool": "get"}}}}
    result = run(tmp_path, [rule], lines)
    assert result.returncode == 1, result.stderr
    assert len(result.stdout) < 2_000_000
    shown = json.loads(result.stdout)["violations"][0]["evidence"]["mismatches"][0]["expected"]["any_of"][0]
    assert shown == {"k" * 200 + "…": 1, "k" * 200 + "……": 2}   # (two keys cut alike are told apart)
