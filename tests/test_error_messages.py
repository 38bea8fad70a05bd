"""Input errors name the cause and say what would be right: the choices of an enum, the file that
was given in the wrong place, YAML problems at their line in our words, a pack name that was
nearly right. Each is one line on stderr and exit 2 from the CLI; the API raises the same text.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from agent_invariants import ContractError, TraceError, load_contract, read_trace

from support import EXAMPLES, contract, events, jsonl

PREFIX = "agent-invariants: "
TRACE = jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "crm.lookup", "call_id": "c1"}))
CONTRACT = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
SHIPPED_PACKS = ("agent-invariants:completion-needs-evidence, agent-invariants:no-shell-or-admin, "
                 "agent-invariants:payments, agent-invariants:retry-discipline, agent-invariants:stop-and-revocation, "
                 "agent-invariants:tool-hygiene")


def refused(result) -> list[str]:
    """The lines on stderr of a run that refused its input: exit 2, nothing on stdout."""
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert all(line.startswith(PREFIX) for line in lines), lines
    return [line.removeprefix(PREFIX) for line in lines]


def problems_of(document) -> list[str]:
    with pytest.raises(ContractError) as caught:
        load_contract(document)
    return str(caught.value).splitlines()


# ----------------------------------------------------------------------------------------------
# enums list their values


ENUM_CONTRACT = """{
  "version": 1,
  "name": "enums",
  "rules": [
    {"id": "a", "kind": "deny_tool", "tool": "shell.*", "severity": "warn"},
    {"id": "b", "kind": "retry_limit", "max_attempts": 3, "group_by": "signature"},
    {"id": "c", "kind": "completion_requires_outcome", "evidence_classes": ["external"]},
    {"id": "d", "kind": "require_event", "match": {"type": "outcome.observed", "verdict": "ok"}},
    {"id": "e", "kind": "deny_tool", "tool": "x", "severity": 1},
    {"id": "f", "kind": "deny_tol", "tool": "x"}
  ]
}
"""


def test_every_enum_of_a_contract_lists_its_values_with_did_you_mean(cli, write):
    write("contract.json", ENUM_CONTRACT)
    lines = refused(cli("validate", "--contract", "contract.json"))
    assert lines[:5] == [
        "contract.json:5: $.rules[0].severity: unknown value \"warn\" (did you mean 'warning'?); "
        "expected one of: error, warning",
        "contract.json:6: $.rules[1].group_by: unknown value \"signature\" (did you mean 'call_signature'?); "
        "expected one of: tool, call_signature",
        "contract.json:7: $.rules[2].evidence_classes[0]: unknown value \"external\"; expected one of: "
        "externally_observed, configured_verifier, manual_attestation, self_attestation",
        "contract.json:8: $.rules[3].match.verdict: unknown value \"ok\"; expected one of: satisfied, violated, "
        "unknown, retracted",
        "contract.json:9: $.rules[4].severity: expected a string (one of: error, warning), got 1",
    ]
    # the rule kind says it the same way
    assert lines[5].startswith("contract.json:10: $.rules[5].kind: unknown rule kind \"deny_tol\" "
                               "(did you mean 'deny_tool'?); expected one of: deny_tool, allow_tools, ")
    assert len(lines) == 6


def test_an_enum_of_a_trace_event_lists_its_values(cli, write):
    write("contract.json", CONTRACT)
    write("trace.jsonl", TRACE + '{"seq": 9, "type": "outcome.observed", "verdict": "satisfed"}\n')
    assert refused(cli("check", "-c", "contract.json", "-t", "trace.jsonl")) == [
        "trace.jsonl:3: $.verdict: unknown value \"satisfed\" (did you mean 'satisfied'?); "
        "expected one of: satisfied, violated, unknown, retracted"]
    with pytest.raises(TraceError) as caught:
        read_trace(b'[{"seq": 1, "type": "outcome.observed", "evidence_class": "self"}]')
    assert caught.value.problem == ("item 0: $.evidence_class: unknown value \"self\"; expected one of: "
                                    "externally_observed, configured_verifier, manual_attestation, self_attestation")


# ----------------------------------------------------------------------------------------------
# types said as JSON says them, the value shown; unknown fields list what is allowed


@pytest.mark.parametrize(("document", "meant"), [
    ({"ersion": 1, "name": "x", "rules": [{"id": "a", "kind": "deny_tool", "tool": "x"}]}, "version"),
    ({"version": 1, "nme": "x", "rules": [{"id": "a", "kind": "deny_tool", "tool": "x"}]}, "name"),
    ({"version": 2, "name": "x", "rulez": [{"id": "a", "kind": "deny_tool", "tool": "x"}]}, "rules"),
    ({"version": 1, "name": "x", "rules": [{"id": "a", "kind": "deny_tool", "tol": "x"}]}, "tool"),
])
def test_a_misspelt_required_key_is_one_problem_not_also_a_missing_one(document, meant):
    """The did-you-mean says what is missing; a second line saying it again would count one typo twice."""
    [line] = problems_of(document)
    assert line.endswith(f"unknown field (did you mean '{meant}'?)"), line


def test_wrong_types_are_said_in_json_words_with_the_value():
    lines = problems_of(contract(
        {"id": "a", "kind": "deny_tool", "tool": 3},
        {"id": "b", "kind": "retry_limit", "max_attempts": 1.5},
        {"id": "c", "kind": "allow_tools", "tools": "crm.*"},
        {"id": "d", "kind": "require_event", "match": {"type": ""}},
        {"id": "e-", "kind": "deny_tool", "tool": "x", "extra": 1},
        {"id": "-f", "kind": "deny_tool", "tool": "x"},
        compare={"fail_on_new_tools": "yes", "max_tool_call_increase_percent": -1}))
    assert lines == [
        "contract: $.rules[0].tool: expected a string, got 3",
        "contract: $.rules[1].max_attempts: expected an integer, got 1.5",
        'contract: $.rules[2].tools: expected an array, got "crm.*"',
        'contract: $.rules[3].match.type: expected a non-empty string, got ""',
        "contract: $.rules[4].extra: unknown field; expected one of: id, severity, description, tool",
        "contract: $.rules[5].id: expected rule id: a letter or digit, then up to 127 of A-Z a-z 0-9 . _ -, "
        'got "-f"',
        'contract: $.compare.fail_on_new_tools: expected true or false, got "yes"',
        "contract: $.compare.max_tool_call_increase_percent: expected a number >= 0, got -1",
    ]
    assert not any("`" in line for line in lines)   # no `str`, `int`, `float`


def _with_number(text: str, written: str) -> bytes:
    """A contract's JSON text with `N` replaced by a number as written (json.dumps would write 1e20
    as 1e+20, and an integer in full)."""
    return text.replace("N", written).encode()


_BOUNDED = '{"version": 2, "name": "x", "rules": [{"id": "a", "kind": "tool_calls", "tool": "t", "max": N}]}'


@pytest.mark.parametrize("written", ["1e20", "9.3e18", "1E+20"])
def test_an_integer_past_2_to_the_63_written_with_an_exponent_is_refused_for_what_is_wrong(written):
    """JSON has one number type, and `1e20` is an integer: a bound it breaks is said as for any
    integer (not "expected an integer"); where no bound is broken, how to write it."""
    unbounded = '{"version": 2, "name": "x", "rules": [{"id": "b", "kind": "result_size", "tool": "t", ' \
        '"max_bytes": N}]}'
    v1 = '{"version": 1, "name": "x", "rules": [{"id": "c", "kind": "retry_limit", "max_attempts": N}]}'
    shown = {"1e20": "1e20", "9.3e18": "9.3e18", "1E+20": "1e20"}[written]
    assert problems_of(_with_number(_BOUNDED, written)) == [
        f"contract:1: $.rules[0].max: expected an integer <= 1000000, got {shown}"]
    assert problems_of(_with_number(unbounded, written)) == [
        f"contract:1: $.rules[0].max_bytes: expected an integer written in full, without an exponent, got {shown}"]
    assert problems_of(_with_number(v1, written)) == [
        f"contract:1: $.rules[0].max_attempts: expected an integer <= 10000, got {shown}"]
    assert problems_of(json.loads(_with_number(_BOUNDED, written))) == [   # from Python: the same
        f"contract: $.rules[0].max: expected an integer <= 1000000, got {shown}"]


@pytest.mark.parametrize(("digits", "shown"), [(301, "1e300"), (401, "Infinity")])
def test_an_integer_too_long_to_show_is_named_as_the_number_it_stands_for(digits, shown):
    """Written in full, 1e300 is 301 digits; a message names it as the double it reads as."""
    assert problems_of(_with_number(_BOUNDED, "1" + "0" * (digits - 1))) == [
        f"contract:1: $.rules[0].max: expected an integer <= 1000000, got {shown}"]
    assert problems_of(_with_number(_BOUNDED, "-1" + "0" * (digits - 1))) == [
        f"contract:1: $.rules[0].max: expected an integer >= 0, got -{shown}"]


def test_wrong_types_in_a_trace_are_said_in_json_words(cli, write):
    write("contract.json", CONTRACT)
    write("trace.jsonl", '{"seq": 1, "type": "tool.call", "tool": 5}\n')
    assert refused(cli("check", "-c", "contract.json", "-t", "trace.jsonl")) == [
        "trace.jsonl:1: $.tool: expected a string, got a number"]
    with pytest.raises(TraceError) as caught:
        read_trace(b'{"seq": 1, "type": "tool.result", "ok": "yes"}\n{"seq": 2}\n')
    assert caught.value.problem == "$.ok: expected true or false, got a string"
    with pytest.raises(TraceError) as caught:
        read_trace(b'{"seq": 1}\n')
    assert caught.value.problem == "$: missing required field `type`"


# ----------------------------------------------------------------------------------------------
# a contract and a trace given in each other's place, and events wrapped in an object


@pytest.mark.slow
def test_a_trace_given_as_the_contract_is_named_a_trace(cli, write):
    write("trace.jsonl", TRACE)
    write("one-event.jsonl", '{"seq": 1, "type": "run.start"}\n')
    write("array.json", json.dumps(events({"type": "run.start"})))
    write("wrapped.json", {"events": events({"type": "run.start"})})
    expected = {
        "trace.jsonl": "this looks like a trace (events with seq and type, one per line), not a contract",
        "one-event.jsonl": "this looks like a trace (events with seq and type, one per line), not a contract",
        "array.json": "this looks like a trace (a JSON array of events), not a contract",
        "wrapped.json": "this looks like a trace (an object holding an events array), not a contract",
    }
    for name, problem in expected.items():
        assert refused(cli("check", "--contract", name, "--trace", "trace.jsonl")) == [f"{name}: {problem}"]
    assert refused(cli("validate", "-c", "trace.jsonl")) == [f"trace.jsonl: {expected['trace.jsonl']}"]


def test_a_trace_given_as_a_profile_or_fixtures_file_is_named_against_that_kind(cli, write):
    """A profile and a fixtures file are read as a contract is; a trace in their place was
    "not a contract", and a byte order mark cited the Node tool's contracts."""
    write("trace.jsonl", TRACE)
    write("bom.json", "\ufeff{}")
    looks = "this looks like a trace (events with seq and type, one per line), not a "
    assert refused(cli("convert", "--profile", "trace.jsonl", "trace.jsonl")) == [f"trace.jsonl: {looks}profile"]
    record = ["record", "-c", str(EXAMPLES / "record" / "contract.json"), "--out", "t.jsonl", "--", sys.executable,
              "-c", "pass"]
    for fixtures, problem in (("trace.jsonl", f"{looks}fixtures file"), (
            "bom.json", "starts with a UTF-8 byte order mark, which these JSON files may not start with; save the "
                        "file without it")):
        assert refused(cli(*record[:3], "--fixtures", fixtures, *record[3:])) == [f"{fixtures}: {problem}"]


TWICE = "key given twice in one object: JSON readers keep the last one without a word; write it once"


def test_a_key_given_twice_is_refused_in_a_version_2_contract_and_kept_last_in_version_1(cli, write):
    """`"max": 3, ..., "max": 0` reads as 0 (JSON readers keep the last key, as the Node tool's
    `JSON.parse` did): a bound changed with no one the wiser. Version 2 refuses it at its path and
    the line of the value kept (the last), in a match tree too; version 1 still reads the last, as
    the reference does."""
    write("v2.json", '{"version": 2, "name": "d", "rules": [\n'
                     ' {"id": "calls", "kind": "tool_calls", "tool": "refund",\n'
                     '  "max": 3,\n  "max": 0}]}\n')
    assert refused(cli("validate", "-c", "v2.json")) == [f"v2.json:4: $.rules[0].max: {TWICE}"]   # (the one kept)
    write("tree.json", '{"version": 2, "name": "d", "rules": [{"id": "a", "kind": "tool_args", "tool": "t",\n'
                       ' "match": {"order": {"id": 1, "id": 2}}}]}\n')
    assert refused(cli("validate", "-c", "tree.json")) == [f"tree.json:2: $.rules[0].match.order.id: {TWICE}"]
    write("v1.json", '{"version": 1, "name": "d", "rules": [{"id": "b", "kind": "event_budget", '
                     '"max_events": 3, "max_events": 0}]}')
    result = cli("validate", "-c", "v1.json")
    assert result.returncode == 0 and json.loads(result.stdout)["contract"]["rules"][0]["max_events"] == 0


def test_a_key_given_twice_is_refused_in_a_profile_and_a_fixtures_file(cli, write):
    write("trace.jsonl", TRACE)
    write("p.json", '{"version": 1, "events": [], "events": []}')
    assert refused(cli("convert", "--profile", "p.json", "trace.jsonl")) == [f"p.json:1: $.events: {TWICE}"]
    write("fx.json", '{"version": 1, "tools": {"a": 1, "a": 2}}')
    result = cli("record", "-c", str(EXAMPLES / "record" / "contract.json"), "--fixtures", "fx.json", "--out",
                 "t.jsonl", "--", sys.executable, "-c", "pass")
    assert refused(result) == [f"fx.json:1: $.tools.a: {TWICE}"]


@pytest.mark.slow
def test_a_contract_given_as_the_trace_is_named_a_contract(cli, write):
    write("contract.json", CONTRACT)                                   # pretty-printed: a `{` line first
    write("one-line.json", "\n\n" + json.dumps(CONTRACT))             # on one line, after blank lines
    write("contract.yaml", "version: 1\nname: c\nrules:\n  - id: a\n    kind: deny_tool\n    tool: x\n")
    hint = ("this looks like a contract (an object with version and rules), not a trace; a trace holds one "
            "event per line, or a JSON array of events")
    assert refused(cli("check", "-c", "contract.json", "-t", "contract.json")) == [f"contract.json:1: {hint}"]
    assert refused(cli("check", "-c", "contract.json", "-t", "one-line.json")) == [f"one-line.json:3: {hint}"]
    assert refused(cli("summary", "-t", "contract.yaml")) == [f"contract.yaml:1: {hint}"]


def test_a_trace_wrapped_in_an_events_object_is_told_the_shape(cli, write):
    write("contract.json", CONTRACT)
    write("wrapped.json", {"events": events({"type": "run.start"}, {"type": "run.end"})})
    hint = ('this is one object holding an "events" array, not a trace: each line must be one event; '
            "a JSON array of events is also accepted")
    assert refused(cli("check", "-c", "contract.json", "-t", "wrapped.json")) == [f"wrapped.json:1: {hint}"]
    with pytest.raises(TraceError) as caught:   # on one line, as bytes
        read_trace(json.dumps({"events": events({"type": "run.start"})}).encode())
    assert (caught.value.line, caught.value.problem) == (1, hint)


@pytest.mark.parametrize(("name", "source_format"), [
    ("pydantic-ai.otlp.jsonl", "otel"), ("agents-openinference.otlp.jsonl", "openinference"),
    ("agents-sdk.agents.jsonl", "openai-agents"), ("langchain.runs.jsonl", "langsmith"),
    ("mcp-session.mcp.jsonl", "mcp-log")])
def test_a_trace_in_another_tools_format_says_which_input_format_reads_it(name, source_format):
    """Given as our own events, an OTLP export said only "$: missing required field `seq`", and
    LangSmith runs (which hold an `events` array of their own) were told to pull that array out:
    the message names the format, as `--input-format auto` tells it, and the option that reads it."""
    path = Path(__file__).resolve().parent.parent / "examples" / "imports" / name
    for source in (path, path.read_bytes()):
        with pytest.raises(TraceError) as caught:
            read_trace(source)
        assert (caught.value.line, caught.value.problem) == (1, (
            f"this looks like a trace in another tool's format ({source_format}), not our own events: read it "
            f"with --input-format {source_format} (or auto)"))


def test_a_trace_failing_later_or_for_another_reason_gets_no_hint():
    with pytest.raises(TraceError) as caught:   # an events object on line 2 is a bad event, not a wrapped trace
        read_trace(b'{"seq": 1, "type": "run.start"}\n{"events": []}\n')
    assert (caught.value.line, caught.value.problem) == (2, "$: missing required field `seq`")
    with pytest.raises(TraceError) as caught:
        read_trace(b"{\n")
    assert caught.value.problem.startswith("invalid JSON: the JSON ends before the value is complete")
    with pytest.raises(ContractError) as caught:   # a broken contract stays a broken contract
        load_contract(b'{"version": 1, "name": "x", "rules": [}')
    assert caught.value.problem.startswith("invalid JSON at line 1, column 39")


# ----------------------------------------------------------------------------------------------
# YAML in our words, at its line; NaN and the infinities are no JSON numbers


@pytest.mark.slow
def test_yaml_syntax_errors_name_the_file_line_and_construct(cli, write):
    pytest.importorskip("yaml")
    cases = {
        "flow.yaml": ("version: 1\nname: x\nrules:\n  - id: a\n    kind: deny_tool\n    tool: [shell\n",
                      "invalid YAML at line 7, column 1: the file ends before the value is complete "
                      "(in the [ ] list that starts at line 6, column 11)"),
        "indent.yaml": ("version: 1\nname: x\n  rules: 3\n",
                        "invalid YAML at line 3, column 8: a `key: value` where none may be (check the "
                        "indentation, or quote a value holding ': ')"),
        "tag.yaml": ("version: 1\nname: !!python/object:os.system x\n",
                     "invalid YAML at line 2, column 7: the tag !!python/object:os.system is not allowed: the "
                     "file may hold only plain values (strings, numbers, true or false, null, lists and mappings)"),
        "alias.yaml": ("version: 1\nname: *nope\n",
                       "invalid YAML at line 2, column 7: the alias *nope names no anchor (&) defined before it"),
        "two.yaml": ("version: 1\n---\nname: x\n",
                     "invalid YAML at line 2, column 1: a second YAML document starts here; the file must "
                     "hold one"),
        "tab.yaml": ("version: 1\nname: x\nrules:\n\t- id: a\n",
                     "invalid YAML at line 4, column 1: a tab, which YAML does not allow for indentation "
                     "(use spaces)"),
    }
    for name, (text, problem) in cases.items():
        write(name, text)
        lines = refused(cli("validate", "--contract", name))
        assert lines == [f"{name}: {problem}"]
        assert "<byte string>" not in lines[0]


def test_yaml_nan_and_infinities_are_named_not_called_null(cli, write):
    pytest.importorskip("yaml")
    write("nan.yaml", "version: 1\nname: x\nrules:\n  - id: a\n    kind: confidence_requires_outcome\n"
                      "    threshold: .nan\n")
    assert refused(cli("validate", "-c", "nan.yaml")) == [
        "nan.yaml:6: $.rules[0].threshold: NaN is not a number JSON allows"]
    for value, shown in ((".inf", "Infinity"), ("-.inf", "-Infinity"), (".NaN", "NaN")):
        path = write("c.yaml", f"version: 1\nname: x\nrules:\n  - id: a\n    kind: deny_tool\n    tool: x\n"
                               f"compare:\n  max_tool_call_increase_percent: {value}\n")
        with pytest.raises(ContractError) as caught:
            load_contract(path)
        assert str(caught.value) == f"{path}:8: $.compare.max_tool_call_increase_percent: {shown} is not a " \
                                    "number JSON allows"


def test_bad_bytes_and_integers_too_long_to_read_are_named_where_they_are(write):
    """msgspec names no place for either; the error must still point at the byte, not at the end."""
    long = "9" * 5000
    with pytest.raises(ContractError) as caught:
        load_contract(b'{\n  "name": "bad\xffname",\n  "version": 1,\n  "rules": []\n}\n\n')
    assert caught.value.problem == "invalid JSON at line 2, column 15: invalid UTF-8"
    text = '{"version": 1, "name": "x",\n "rules": [{"id": "a", "kind": "retry_limit", "max_attempts": %s}]}'
    with pytest.raises(ContractError) as caught:
        load_contract((text % f"-{long}").encode())
    assert caught.value.problem == \
        "invalid JSON at line 2, column 63: an integer of 5,000 digits is too long to read (at most 4,300)"
    with pytest.raises(ContractError) as caught:   # as long, but a string: read, and refused as a string
        load_contract((text % f'"{long}"').encode())
    assert str(caught.value).startswith('contract:2: $.rules[0].max_attempts: expected an integer, got "999')
    path = write("c.yaml", f"version: 1\nname: x\nrules:\n  - {{id: a, kind: retry_limit, max_attempts: {long}}}\n")
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert str(caught.value) == f"{path}:4: an integer of 5,000 digits is too long to read (at most 4,300)"


def test_trailing_characters_are_named_at_the_first_of_them():
    """msgspec names the byte after the first character past the value: the column was one too
    far, in a contract, a trace line and a document an importer reads."""
    with pytest.raises(ContractError) as caught:
        load_contract(b'{"version": 1, "name": "x", "rules": []}\n  x\n')
    assert caught.value.problem == "invalid JSON at line 2, column 3: trailing characters"
    with pytest.raises(TraceError) as caught:
        read_trace(b'{"seq": 1, "type": "run.start"}\n{"seq": 2, "type": "run.completed"} x\n')
    assert (caught.value.line, caught.value.problem) == (2, "invalid JSON: trailing characters (column 37)")


def test_json_nan_and_infinity_are_named_where_they_are():
    text = ('{"version": 1, "name": "x",\n'
            ' "rules": [{"id": "a", "kind": "confidence_requires_outcome", "threshold": %s}]}')
    for value, problem in (("NaN", "NaN is not a number JSON allows"),
                           ("-Infinity", "-Infinity is not a number JSON allows"),
                           ("1e999", "1e999 is out of range (Infinity is not a number JSON allows)")):
        with pytest.raises(ContractError) as caught:
            load_contract((text % value).encode())
        assert caught.value.problem == f"invalid JSON at line 2, column 76: {problem}"
    from_python = contract({"id": "a", "kind": "confidence_requires_outcome", "threshold": 0.5})
    from_python["rules"][0]["threshold"] = math.nan   # a mapping may hold what no JSON text can
    assert problems_of(from_python) == ["contract: $.rules[0].threshold: NaN is not a number JSON allows"]
    with pytest.raises(TraceError) as caught:   # and so does a trace
        read_trace(b'{"seq": 1, "type": "x"}\n{"seq": 2, "type": "x", "confidence": NaN}\n')
    assert (caught.value.line, caught.value.problem) == (2, "invalid JSON: NaN is not a number JSON allows (column 39)")
    with pytest.raises(TraceError) as caught:
        read_trace(b'[{"seq": 1, "type": "x", "confidence": -Infinity}]')
    assert caught.value.problem == "item 0: invalid JSON: -Infinity is not a number JSON allows (byte 39 of the item)"


def test_a_set_in_a_contract_from_python_is_refused_where_it_is():
    """A mapping from Python may hold what JSON has no form for: a set has no order, so the list
    it would become (an allow list, and its evidence) would differ from run to run."""
    from_python = contract({"id": "a", "kind": "allow_tools", "tools": ["x"]})
    from_python["rules"][0]["tools"] = {"kb.search", "crm.lookup"}
    assert problems_of(from_python) == [
        "contract: $.rules[0].tools: a set is not a JSON value: give a list (a set has no order: the report would "
        "change from run to run)"]


# ----------------------------------------------------------------------------------------------
# rule packs: did you mean


def test_an_unknown_pack_name_gets_did_you_mean(cli, write):
    write("contract.json", contract(extends=["agent-invariants:payment"]))
    assert refused(cli("validate", "-c", "contract.json")) == [
        "contract.json:6: $.extends[0]: unknown pack 'agent-invariants:payment' (did you mean "
        f"'agent-invariants:payments'?); shipped packs: {SHIPPED_PACKS}"]
    with pytest.raises(ContractError) as caught:   # nothing close: only the list
        load_contract(contract(extends=["agent-invariants:nonexistent"]))
    assert caught.value.problem == f"unknown pack 'agent-invariants:nonexistent'; shipped packs: {SHIPPED_PACKS}"


def test_a_pack_named_like_a_path_gets_the_shipped_name(tmp_path):
    for ref in ("agent-invariants/payments", "payments", "tool-hygine.json"):
        with pytest.raises(ContractError) as caught:
            load_contract(contract(extends=[ref]), name="c.json")
        close = "tool-hygiene" if "hyg" in ref else "payments"
        assert caught.value.problem.endswith(f"(did you mean 'agent-invariants:{close}'?)"), caught.value.problem
    with pytest.raises(ContractError) as caught:   # a path into folders is not a misspelt pack
        load_contract(contract(extends=["packs/payments.json"]))
    assert "did you mean" not in caught.value.problem
    with pytest.raises(ContractError) as caught:   # nor is one named where files are not read
        load_contract(contract(extends=["../payments"]), pack_paths=False)
    assert caught.value.problem == "packs can only be named as agent-invariants:<pack> here; files are not read"
    with pytest.raises(ContractError) as caught:
        load_contract(contract(extends=["payments"]), pack_paths=False)
    assert caught.value.problem.endswith("files are not read (did you mean 'agent-invariants:payments'?)")


# ----------------------------------------------------------------------------------------------
# cousins: an empty contract file, a misspelt key of a pack


def test_an_empty_contract_file_is_called_empty(write):
    for name, text in (("empty.json", ""), ("blank.json", " \n\n"), ("empty.yaml", ""),
                       ("comments.yaml", "# to do\n\n  # later\n")):
        if name.endswith(".yaml"):
            pytest.importorskip("yaml")
        path = write(name, text)
        with pytest.raises(ContractError) as caught:
            load_contract(path)
        assert str(caught.value) == f"{path}: is empty (no {'YAML document' if 'yaml' in name else 'JSON value'})"


def test_a_misspelt_key_of_a_pack_gets_did_you_mean_and_the_allowed_keys(write):
    pack = write("pack.json", '{\n  "rulez": []\n}\n')
    with pytest.raises(ContractError) as caught:
        load_contract(write("contract.json", contract(extends=["pack.json"])))
    assert str(caught.value).splitlines() == [
        f"{pack}:2: $.rulez: unknown field in a pack (did you mean 'rules'?); expected one of: $schema, name, "
        "description, extends, rules",
        f"{pack}:1: $.rules: a pack needs a `rules` array"]


@pytest.mark.parametrize(("when", "path", "meant"), [
    ({"pth": "refunds", "non_empty": True}, "when.pth", "path"),
    ({"outcom": {"outcome_id": "o", "verdict": "violated"}}, "when.outcom", "outcome"),
    ({"any": [{"path": "a", "equals": 1}, {"path": "b", "equals": 2}]}, "when.any", "any_of"),
    ({"outcome": {"outcomeid": "o", "verdict": "violated"}}, "when.outcome.outcomeid", "outcome_id"),
])
def test_a_misspelt_condition_key_gets_did_you_mean(cli, write, when, path, meant):
    """README: "a suggestion for near-misses", for a condition's keys as for the rules' fields."""
    write("c.json", {"version": 2, "name": "n", "rules": [
        {"id": "a", "kind": "required_when", "tool": "x", "when": when}]})
    [line] = refused(cli("validate", "-c", "c.json"))
    where, said = line.split(": ", 1)
    assert where.startswith("c.json:") and said.startswith(f"$.rules[0].{path}: unknown key"), line
    assert said.endswith(f"(did you mean '{meant}'?)"), line


# Found by a reading of the authoring experience (validate, the schemas, explain): a field of
# another kind was "unknown field (did you mean 'id'?)"; a kind or field of version 2, misspelt in a
# version-1 contract, got no suggestion; an operator in capitals none; a reference's empty path was
# told to be left out, which a `$arg` cannot be; `$regex: 5` was "never a reference".

def _rule(version: int, **rule: object) -> dict[str, object]:
    return {"version": version, "name": "x", "rules": [{"id": "r", **rule}]}


@pytest.mark.parametrize(("document", "said"), [
    (_rule(2, kind="require_approval", tool="x", bind="args"),
     "$.rules[0].bind: unknown field for require_approval: bind is a field of approval_bound"),
    (_rule(1, kind="require_approval", tool="x", bind="args"),   # (a later check: version 1 said "did you mean 'id'")
     '$.rules[0].bind: unknown field for require_approval: bind is a field of approval_bound, which needs '
     '"version": 2'),
    (_rule(2, kind="event_budget", max_events=3, tool="x"),
     "$.rules[0].tool: unknown field for event_budget: tool is a field of deny_tool, require_approval, "
     "retry_limit and 9 more kinds"),
    (_rule(1, kind="tool_arg", tool="x"),
     '$.rules[0].kind: unknown rule kind "tool_arg" (did you mean \'tool_args\'? it needs "version": 2)'),
    (_rule(1, kind="stop_is_final", reason=["x"]),
     '$.rules[0].reason: unknown field (did you mean \'reasons\'? it needs "version": 2)'),
    (_rule(2, kind="tool_args", tool="t", match={"a": {"$REGEX": "x"}}),
     "$.rules[0].match.a.$REGEX: unknown operator $REGEX (did you mean \'$regex\'?)"),
    (_rule(2, kind="tool_args", tool="t", match={"a": {"$regex": 5}}),
     "$.rules[0].match.a.$regex: $regex takes a string (a pattern), got a number"),
    (_rule(2, kind="tool_args", tool="t", match={"a": {"$arg": ""}}),
     "$.rules[0].match.a.$arg: a path cannot be empty"),
    (_rule(2, kind="tool_args", tool="t", distinct=[""]), "$.rules[0].distinct[0]: a path cannot be empty"),
    (_rule(2, kind="tool_args", tool="t", match={"a": {"$from_result": {"tool": "g", "path": ""}}}),
     "$.rules[0].match.a.$from_result.path: a path cannot be empty (leave it out to mean the whole value)"),
])
def test_an_authoring_mistake_is_said_with_what_was_meant(document, said):
    [line] = problems_of(document)
    assert line.endswith(said), line


def test_a_field_of_another_kind_in_place_of_a_required_one_leaves_the_required_one_said_missing():
    """`tools` on deny_tool is allow_tools' field; deny_tool's own `tool`, which it is close to, was
    then taken as suggested and its absence never said (a later re-reading of the change)."""
    lines = problems_of(_rule(1, kind="deny_tool", tools=["shell.*"]))
    assert [line.split(": ", 1)[1] for line in lines] == [
        "$.rules[0].tools: unknown field for deny_tool: tools is a field of allow_tools",
        "$.rules[0]: missing required field `tool`"]
