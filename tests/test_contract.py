"""Contract v1 loading (spec §2): validation, bounds, trimming, normalised key order, errors."""
from __future__ import annotations

import copy
import json
import os
import re
from typing import Any

import pytest

from agent_invariants import Contract, ContractError, InputError, check_trace, load_contract

from support import REPO, contract, events

EMOJI = "\U0001F600"   # two UTF-16 code units
KINDS = ["deny_tool", "allow_tools", "require_approval", "stop_is_final", "completion_requires_outcome",
         "retry_limit", "event_budget", "require_order", "require_event", "deny_event",
         "tool_result_required", "confidence_requires_outcome"]

# The smallest valid rule of each kind.
MINIMAL = {
    "deny_tool": {"tool": "shell.*"},
    "allow_tools": {"tools": ["kb.*"]},
    "require_approval": {"tool": "pay.*"},
    "stop_is_final": {},
    "completion_requires_outcome": {},
    "retry_limit": {"max_attempts": 2},
    "event_budget": {"max_events": 10},
    "require_order": {"before": {"type": "a"}, "after": {"type": "b"}},
    "require_event": {"match": {"type": "run.start"}},
    "deny_event": {"match": {"type": "x"}},
    "tool_result_required": {},
    "confidence_requires_outcome": {"threshold": 0.8},
}

# Every field of each kind, in the order of the spec's table (§2.3).
FULL = {
    "deny_tool": {"tool": "shell.*"},
    "allow_tools": {"tools": ["kb.*", "crm.lookup"]},
    "require_approval": {"tool": "pay.*", "scope": "payments", "within_events": 20},
    "stop_is_final": {"stop_type": "control.halt", "allowed_after": ["run.completed", "audit.*"]},
    "completion_requires_outcome": {"completion_types": ["run.completed", "task.done"], "outcome_id": "resolved",
                                    "evidence_classes": ["externally_observed"]},
    "retry_limit": {"tool": "kb.*", "max_attempts": 3, "group_by": "tool"},
    "event_budget": {"max_events": 100, "max_tool_calls": 10, "max_tool_failures": 2},
    "require_order": {"before": {"type": "approval.granted"}, "after": {"type": "tool.call", "tool": "pay.*"}},
    "require_event": {"match": {"type": "run.start"}, "min": 1, "max": 1},
    "deny_event": {"match": {"type": "tool.result", "ok": False}},
    "tool_result_required": {"tool": "kb.*"},
    "confidence_requires_outcome": {"threshold": 0.9,
                                    "evidence_classes": ["configured_verifier", "manual_attestation"]},
}

MATCHER_ORDER = ["type", "tool", "ok", "outcome_id", "verdict", "claims_completion"]


def rule(kind: str, rule_id: str = "r", **fields: Any) -> dict[str, Any]:
    return {"id": rule_id, "kind": kind, **copy.deepcopy(MINIMAL[kind]), **fields}


def load(*rules: dict[str, Any], **extra: Any):
    return load_contract(contract(*rules, **extra))


def fails(document: Any) -> ContractError:
    with pytest.raises(ContractError) as caught:
        load_contract(document)
    return caught.value


def rule_fails(*rules: dict[str, Any], **extra: Any) -> ContractError:
    return fails(contract(*rules, **extra))


def reversed_dict(mapping: dict[str, Any]) -> dict[str, Any]:
    return dict(reversed(list(mapping.items())))


# --- basic shape ---------------------------------------------------------------------------------

def test_minimal_contract_of_every_kind_loads():
    loaded = load(*[rule(kind, f"r{i}") for i, kind in enumerate(KINDS)])
    assert [r["kind"] for r in loaded.to_dict()["rules"]] == KINDS


def test_load_from_path_bytes_and_dict_agree(tmp_path):
    document = contract(*[rule(kind, f"r{i}") for i, kind in enumerate(KINDS)], description="d")
    path = tmp_path / "c.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    as_dict = load_contract(document).to_dict()
    assert load_contract(path).to_dict() == as_dict
    assert load_contract(str(path)).to_dict() == as_dict
    assert load_contract(json.dumps(document).encode()).to_dict() == as_dict


def test_load_contract_does_not_modify_its_input():
    document = contract(rule("deny_tool", tool="  shell.*  "), name="  n  ")
    before = copy.deepcopy(document)
    load_contract(document)
    assert document == before


def test_contract_errors_are_input_errors():
    error = rule_fails(rule("retry_limit", max_attempts=0))
    assert isinstance(error, InputError)
    assert error.source
    assert error.path in str(error)


@pytest.mark.parametrize("content", [b"", b"{", b"not json", b'{"version": 1,}', b"[1]"])
def test_invalid_json_or_not_an_object(content):
    fails(content)


def test_missing_file_is_a_contract_error(tmp_path):
    error = fails(tmp_path / "missing.json")
    assert str(tmp_path / "missing.json") in str(error)


def test_bom_at_start_of_contract_is_an_error():
    data = json.dumps(contract(rule("deny_tool"))).encode()
    fails(b"\xef\xbb\xbf" + data)
    assert load_contract(data).name == "test-contract"


def test_nan_and_infinity_literals_are_rejected():
    fails(b'{"version": 1, "name": "n", "rules": [{"id": "r", "kind": "retry_limit", "max_attempts": NaN}]}')
    fails(b'{"version": 1, "name": "n", "rules": [{"id": "r", "kind": "confidence_requires_outcome", '
          b'"threshold": Infinity}]}')


# --- root ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 1.0])
def test_version_one(version):
    loaded = load(rule("deny_tool"), version=version)
    assert loaded.to_dict()["version"] == 1
    assert type(loaded.to_dict()["version"]) is int


@pytest.mark.parametrize("version", ["1", "2", 3, 0, 1.5, True, None, [1]])
def test_other_versions_are_rejected(version):
    assert rule_fails(rule("deny_tool"), version=version).path == "$.version"


@pytest.mark.parametrize("missing", ["version", "name", "rules"])
def test_required_root_keys(missing):
    document = contract(rule("deny_tool"))
    del document[missing]
    fails(document)


def test_schema_key_at_root_is_accepted():
    loaded = load(rule("deny_tool"), **{"$schema": "../schemas/contract-v1.schema.json"})
    assert loaded.to_dict()["rules"] == [{"id": "r", "kind": "deny_tool", "tool": "shell.*"}]


def test_schema_key_in_a_rule_is_rejected():
    assert rule_fails(rule("deny_tool", **{"$schema": "x"})).path.startswith("$.rules[0]")


def test_rules_must_not_be_empty():
    assert rule_fails().path == "$.rules"


@pytest.mark.parametrize("rules", [None, {}, "deny_tool", [None], ["r"], [[]]])
def test_rules_must_be_an_array_of_objects(rules):
    fails({"version": 1, "name": "n", "rules": rules})


def test_name_and_description_are_trimmed_the_javascript_way():
    loaded = load(rule("deny_tool"), name="\ufeff\u00a0 refund desk\t\n", description="\u3000 about \u2028")
    assert loaded.name == "refund desk"
    assert loaded.to_dict()["name"] == "refund desk"
    assert loaded.to_dict()["description"] == "about"
    assert check_trace(loaded, []).contract.name == "refund desk"


def test_name_keeps_u001c_and_nel():
    assert load(rule("deny_tool"), name="\x1cname\x1f").to_dict()["name"] == "\x1cname\x1f"
    assert load(rule("deny_tool"), name="\x85name\x85").to_dict()["name"] == "\x85name\x85"


@pytest.mark.parametrize("name", ["", "   ", "\u00a0\ufeff", "\t\n"])
def test_blank_name_is_rejected(name):
    assert rule_fails(rule("deny_tool"), name=name).path == "$.name"


def test_name_length_edges():
    assert load(rule("deny_tool"), name=" " + "n" * 200 + " ").name == "n" * 200
    assert rule_fails(rule("deny_tool"), name="n" * 201).path == "$.name"
    assert load(rule("deny_tool"), name=EMOJI * 100).name == EMOJI * 100
    assert rule_fails(rule("deny_tool"), name=EMOJI * 100 + "n").path == "$.name"


def test_root_description_length_edges():
    assert load(rule("deny_tool"), description="d" * 5000).to_dict()["description"] == "d" * 5000
    assert rule_fails(rule("deny_tool"), description="d" * 5001).path == "$.description"
    assert rule_fails(rule("deny_tool"), description="  ").path == "$.description"


@pytest.mark.parametrize("value", [None, 5, ["x"]])
def test_name_and_description_must_be_strings(value):
    assert rule_fails(rule("deny_tool"), name=value).path == "$.name"
    assert rule_fails(rule("deny_tool"), description=value).path == "$.description"


# --- to_dict: defaults not inserted, key order ---------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_defaults_are_not_inserted(kind):
    (echo,) = load(rule(kind)).to_dict()["rules"]
    assert echo == {"id": "r", "kind": kind, **MINIMAL[kind]}


def test_absent_root_keys_stay_absent():
    assert list(load(rule("deny_tool")).to_dict()) == ["version", "name", "rules"]


def test_empty_compare_block_is_echoed_empty():
    assert load(rule("deny_tool"), compare={}).to_dict()["compare"] == {}


def test_compare_block_keeps_only_given_keys():
    echo = load(rule("deny_tool"), compare={"max_tool_call_increase_percent": 25}).to_dict()["compare"]
    assert echo == {"max_tool_call_increase_percent": 25}


def test_root_key_order():
    document = {
        "compare": {"require_same_outcome_or_better": False, "max_tool_call_increase_percent": 10,
                    "fail_on_new_violations": True, "fail_on_new_tools": False},
        "rules": [rule("deny_tool")],
        "description": "d",
        "name": "n",
        "version": 1,
    }
    echo = load_contract(document).to_dict()
    assert list(echo) == ["version", "name", "description", "rules", "compare"]
    assert echo["compare"] == document["compare"]


@pytest.mark.parametrize("kind", KINDS)
def test_rule_key_order(kind):
    given = reversed_dict({"id": "r", "severity": "warning", "description": "why", "kind": kind, **FULL[kind]})
    (echo,) = load(given).to_dict()["rules"]
    assert list(echo) == ["id", "severity", "description", "kind", *FULL[kind]]
    assert echo == {"id": "r", "severity": "warning", "description": "why", "kind": kind, **FULL[kind]}


def test_rule_key_order_with_some_shared_fields_absent():
    given = {"max_attempts": 3, "kind": "retry_limit", "description": "d", "id": "r"}
    (echo,) = load(given).to_dict()["rules"]
    assert list(echo) == ["id", "description", "kind", "max_attempts"]


def test_matcher_key_order():
    matcher = {"claims_completion": True, "verdict": "satisfied", "outcome_id": "o", "ok": True,
               "tool": "t", "type": "x"}
    given = {"after": matcher, "before": dict(matcher), "kind": "require_order", "id": "r"}
    (echo,) = load(given).to_dict()["rules"]
    assert list(echo) == ["id", "kind", "before", "after"]
    assert list(echo["before"]) == MATCHER_ORDER
    assert list(echo["after"]) == MATCHER_ORDER
    (echo,) = load(rule("require_event", match=matcher, max=3, min=0)).to_dict()["rules"]
    assert list(echo) == ["id", "kind", "match", "min", "max"]
    assert list(echo["match"]) == MATCHER_ORDER


def test_matcher_keeps_only_given_keys():
    (echo,) = load(rule("deny_event", match={"ok": False})).to_dict()["rules"]
    assert echo["match"] == {"ok": False}


def test_evidence_embeds_the_normalised_matcher():
    rules = contract({"id": "o", "kind": "require_order", "after": {"tool": "  pay.* ", "type": "tool.call"},
                      "before": {"ok": True, "type": "approval.granted"}})
    report = check_trace(rules, events({"type": "tool.call", "tool": "pay.x"}))
    evidence = report.violations[0].evidence
    assert list(evidence["before"]) == ["type", "ok"]
    assert list(evidence["after"]) == ["type", "tool"]
    assert evidence["after"]["tool"] == "pay.*"


# --- trimming globs ------------------------------------------------------------------------------

# (kind, field, is_list): every glob field of a rule
GLOB_FIELDS = [
    ("deny_tool", "tool", False), ("allow_tools", "tools", True), ("require_approval", "tool", False),
    ("require_approval", "scope", False), ("stop_is_final", "stop_type", False),
    ("stop_is_final", "allowed_after", True), ("completion_requires_outcome", "completion_types", True),
    ("completion_requires_outcome", "outcome_id", False), ("retry_limit", "tool", False),
    ("tool_result_required", "tool", False),
]


def with_glob(kind: str, field: str, is_list: bool, value: str) -> dict[str, Any]:
    return rule(kind, **{field: [value] if is_list else value})


def echoed(kind: str, field: str, is_list: bool, value: str) -> str:
    (echo,) = load(with_glob(kind, field, is_list, value)).to_dict()["rules"]
    return echo[field][0] if is_list else echo[field]


@pytest.mark.parametrize("kind, field, is_list", GLOB_FIELDS)
def test_globs_are_trimmed_the_javascript_way(kind, field, is_list):
    assert echoed(kind, field, is_list, " \t\u00a0\ufeffa.b\u3000\n") == "a.b"
    assert echoed(kind, field, is_list, "\x1ca.b\x1c") == "\x1ca.b\x1c"
    assert echoed(kind, field, is_list, " \x1c ") == "\x1c"
    assert echoed(kind, field, is_list, "\x85") == "\x85"


@pytest.mark.parametrize("kind, field, is_list", GLOB_FIELDS)
def test_glob_length_is_checked_after_trimming(kind, field, is_list):
    assert echoed(kind, field, is_list, "  " + "g" * 500 + "\u00a0") == "g" * 500
    error = rule_fails(with_glob(kind, field, is_list, "  " + "g" * 501 + "  "))
    assert error.path.startswith(f"$.rules[0].{field}")
    assert echoed(kind, field, is_list, EMOJI * 250) == EMOJI * 250
    rule_fails(with_glob(kind, field, is_list, EMOJI * 250 + "g"))


@pytest.mark.parametrize("kind, field, is_list", GLOB_FIELDS)
@pytest.mark.parametrize("value", ["", "   ", "\u00a0\ufeff", "\t\r\n"])
def test_blank_glob_is_rejected(kind, field, is_list, value):
    error = rule_fails(with_glob(kind, field, is_list, value))
    assert error.path.startswith(f"$.rules[0].{field}")


def test_glob_list_items_are_each_trimmed():
    (echo,) = load(rule("allow_tools", tools=[" a ", "b\u00a0", "\ufeffc"])).to_dict()["rules"]
    assert echo["tools"] == ["a", "b", "c"]


def test_blank_glob_deep_in_a_list_names_its_index():
    error = rule_fails(rule("allow_tools", tools=["a", "b", " "]))
    assert error.path.startswith("$.rules[0].tools")
    assert "2" in error.path


def test_trimmed_glob_is_what_the_rule_matches():
    report = check_trace(contract(rule("deny_tool", tool="\u00a0 shell.exec \ufeff")),
                         events({"type": "tool.call", "tool": "shell.exec"}))
    assert not report.passed


def test_trimmed_glob_list_items_are_what_the_rules_match():
    trace = events({"type": "tool.call", "tool": "kb.search"}, {"type": "control.stop"}, {"type": "audit.log"})
    allow = check_trace(contract(rule("allow_tools", tools=[" kb.* "])), trace)
    assert allow.passed, allow.violations
    stop = check_trace(contract(rule("stop_is_final", allowed_after=["\u00a0audit.*\ufeff"])), trace)
    assert stop.passed, stop.violations


@pytest.mark.parametrize("field", ["tool", "outcome_id"])
def test_matcher_globs_are_trimmed(field):
    (echo,) = load(rule("deny_event", match={field: " \u00a0x\ufeff "})).to_dict()["rules"]
    assert echo["match"] == {field: "x"}
    assert echo["match"] == {field: "x"}
    assert rule_fails(rule("deny_event", match={field: "  "})).path.startswith("$.rules[0].match")
    assert rule_fails(rule("deny_event", match={field: "m" * 501})).path.startswith("$.rules[0].match")
    (echo,) = load(rule("deny_event", match={field: " " + "m" * 500 + " "})).to_dict()["rules"]
    assert echo["match"][field] == "m" * 500


def test_matcher_type_is_not_trimmed():
    (echo,) = load(rule("deny_event", match={"type": " tool.call "})).to_dict()["rules"]
    assert echo["match"] == {"type": " tool.call "}
    # so it never matches a (trimmed) event type
    report = check_trace(contract(rule("deny_event", match={"type": " tool.call "})),
                         events({"type": " tool.call ", "tool": "x"}))
    assert report.passed


def test_matcher_type_length_edges():
    load(rule("deny_event", match={"type": "t" * 200}))
    assert rule_fails(rule("deny_event", match={"type": "t" * 201})).path.startswith("$.rules[0].match")
    assert rule_fails(rule("deny_event", match={"type": ""})).path.startswith("$.rules[0].match")
    # not trimmed, so whitespace counts and a blank type is a legal (never matching) pattern
    assert rule_fails(rule("deny_event", match={"type": " " + "t" * 200})).path.startswith("$.rules[0].match")
    (echo,) = load(rule("deny_event", match={"type": " "})).to_dict()["rules"]
    assert echo["match"] == {"type": " "}


def test_rule_description_is_trimmed_and_bounded():
    (echo,) = load(rule("deny_tool", description="\u00a0 why \ufeff")).to_dict()["rules"]
    assert echo["description"] == "why"
    load(rule("deny_tool", description="d" * 2000))
    assert rule_fails(rule("deny_tool", description="d" * 2001)).path == "$.rules[0].description"
    assert rule_fails(rule("deny_tool", description=" ")).path == "$.rules[0].description"


# --- rule ids ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rule_id", ["a", "9", "A.b_c-D9", "no-shell", "x" * 128, "0.-_", "Z" + "-" * 127])
def test_valid_rule_ids(rule_id):
    assert load(rule("deny_tool", rule_id)).to_dict()["rules"][0]["id"] == rule_id


@pytest.mark.parametrize("rule_id", ["", "x" * 129, "-a", "_a", ".a", "a b", " a", "a ", "a\n", "\na", "a\t",
                                     "a/b", "a:b", "\u00e9t\u00e9", "a\u00a0", "r\u0661"])
def test_invalid_rule_ids(rule_id):
    assert rule_fails(rule("deny_tool", rule_id)).path == "$.rules[0].id"


@pytest.mark.parametrize("rule_id", [None, 1, ["a"]])
def test_rule_id_must_be_a_string(rule_id):
    assert rule_fails(rule("deny_tool", rule_id)).path == "$.rules[0].id"


def test_rule_id_is_not_trimmed():
    rule_fails(rule("deny_tool", " a"))


def test_id_and_kind_are_required():
    document = rule("deny_tool")
    del document["id"]
    assert rule_fails(document).path.startswith("$.rules[0]")
    document = rule("deny_tool")
    del document["kind"]
    assert rule_fails(document).path.startswith("$.rules[0]")


# --- integers and numeric bounds -----------------------------------------------------------------

@pytest.mark.parametrize("kind, field, value", [
    ("retry_limit", "max_attempts", 2.0),
    ("retry_limit", "max_attempts", 1e4),
    ("require_approval", "within_events", 5.0),
    ("event_budget", "max_events", 0.0),
    ("event_budget", "max_tool_calls", 3.0),
    ("event_budget", "max_tool_failures", 1e6),
    ("require_event", "min", 1.0),
    ("require_event", "max", 2.0),
])
def test_integral_float_is_accepted_where_an_integer_is_required(kind, field, value):
    (echo,) = load(rule(kind, **{field: value})).to_dict()["rules"]
    assert echo[field] == int(value)
    assert type(echo[field]) is int


@pytest.mark.parametrize("kind, field, value", [
    ("retry_limit", "max_attempts", 1.5),
    ("require_approval", "within_events", 2.5),
    ("event_budget", "max_events", 0.5),
    ("require_event", "min", 0.1),
    ("require_event", "max", 1.01),
])
def test_fractions_are_rejected_where_an_integer_is_required(kind, field, value):
    assert rule_fails(rule(kind, **{field: value})).path == f"$.rules[0].{field}"


@pytest.mark.parametrize("kind, field, low, high", [
    ("retry_limit", "max_attempts", 1, 10_000),
    ("require_approval", "within_events", 1, 100_000),
    ("event_budget", "max_events", 0, 1_000_000),
    ("event_budget", "max_tool_calls", 0, 1_000_000),
    ("event_budget", "max_tool_failures", 0, 1_000_000),
    ("require_event", "min", 0, 1_000_000),
])
def test_integer_bounds_at_both_edges(kind, field, low, high):
    extra = {"max": 1_000_000} if field == "min" else {}
    for ok in (low, high):
        (echo,) = load(rule(kind, **{field: ok}, **extra)).to_dict()["rules"]
        assert echo[field] == ok
    for bad in (low - 1, high + 1):
        assert rule_fails(rule(kind, **{field: bad}, **extra)).path == f"$.rules[0].{field}"


def test_require_event_max_bounds():
    load(rule("require_event", min=0, max=0))
    load(rule("require_event", max=1_000_000))
    assert rule_fails(rule("require_event", max=1_000_001)).path == "$.rules[0].max"
    assert rule_fails(rule("require_event", min=0, max=-1)).path == "$.rules[0].max"


@pytest.mark.parametrize("threshold", [0, 1, 0.0, 1.0, 0.5, 0.123456])
def test_threshold_inclusive_edges(threshold):
    (echo,) = load(rule("confidence_requires_outcome", threshold=threshold)).to_dict()["rules"]
    assert echo["threshold"] == threshold


@pytest.mark.parametrize("threshold", [-0.0001, 1.0001, 2, -1, "0.5", None, True])
def test_threshold_out_of_range_or_wrong_type(threshold):
    assert rule_fails(rule("confidence_requires_outcome", threshold=threshold)).path == "$.rules[0].threshold"


@pytest.mark.parametrize("value", ["3", None, True, [3]])
def test_numbers_must_be_numbers(value):
    assert rule_fails(rule("retry_limit", max_attempts=value)).path == "$.rules[0].max_attempts"


@pytest.mark.parametrize("percent", [0, 100_000, 12.5, 0.001])
def test_compare_percent_bounds_ok(percent):
    echo = load(rule("deny_tool"), compare={"max_tool_call_increase_percent": percent}).to_dict()["compare"]
    assert echo == {"max_tool_call_increase_percent": percent}


@pytest.mark.parametrize("percent", [-0.5, -1, 100_000.5, 100_001, "10", None])
def test_compare_percent_bounds_bad(percent):
    error = rule_fails(rule("deny_tool"), compare={"max_tool_call_increase_percent": percent})
    assert error.path == "$.compare.max_tool_call_increase_percent"


@pytest.mark.parametrize("key", ["fail_on_new_tools", "fail_on_new_violations", "require_same_outcome_or_better"])
def test_compare_flags_are_booleans(key):
    assert load(rule("deny_tool"), compare={key: False}).to_dict()["compare"] == {key: False}
    assert rule_fails(rule("deny_tool"), compare={key: "false"}).path == f"$.compare.{key}"
    assert rule_fails(rule("deny_tool"), compare={key: None}).path == f"$.compare.{key}"


@pytest.mark.parametrize("compare", [None, [], "x", 1])
def test_compare_must_be_an_object(compare):
    assert rule_fails(rule("deny_tool"), compare=compare).path == "$.compare"


# --- array lengths -------------------------------------------------------------------------------

def test_allow_tools_list_length_edges():
    load(rule("allow_tools", tools=[f"t{i}" for i in range(1000)]))
    assert rule_fails(rule("allow_tools", tools=[f"t{i}" for i in range(1001)])).path.startswith("$.rules[0].tools")
    assert rule_fails(rule("allow_tools", tools=[])).path == "$.rules[0].tools"


def test_allowed_after_list_length_edges():
    (echo,) = load(rule("stop_is_final", allowed_after=[])).to_dict()["rules"]
    assert echo["allowed_after"] == []
    load(rule("stop_is_final", allowed_after=[f"t{i}" for i in range(100)]))
    error = rule_fails(rule("stop_is_final", allowed_after=[f"t{i}" for i in range(101)]))
    assert error.path.startswith("$.rules[0].allowed_after")


def test_completion_types_list_length_edges():
    load(rule("completion_requires_outcome", completion_types=[f"t{i}" for i in range(100)]))
    error = rule_fails(rule("completion_requires_outcome", completion_types=[f"t{i}" for i in range(101)]))
    assert error.path.startswith("$.rules[0].completion_types")
    assert rule_fails(rule("completion_requires_outcome", completion_types=[])).path == \
        "$.rules[0].completion_types"


@pytest.mark.parametrize("kind", ["completion_requires_outcome", "confidence_requires_outcome"])
def test_evidence_classes_length_and_enum(kind):
    every = ["externally_observed", "configured_verifier", "manual_attestation", "self_attestation"]
    (echo,) = load(rule(kind, evidence_classes=every)).to_dict()["rules"]
    assert echo["evidence_classes"] == every
    assert rule_fails(rule(kind, evidence_classes=[])).path == "$.rules[0].evidence_classes"
    assert rule_fails(rule(kind, evidence_classes=[*every, "self_attestation"])).path.startswith(
        "$.rules[0].evidence_classes")
    assert rule_fails(rule(kind, evidence_classes=["hearsay"])).path.startswith("$.rules[0].evidence_classes")
    assert rule_fails(rule(kind, evidence_classes=[" self_attestation"])).path.startswith(
        "$.rules[0].evidence_classes")


@pytest.mark.parametrize("severity", ["error", "warning"])
def test_severity_values(severity):
    assert load(rule("deny_tool", severity=severity)).to_dict()["rules"][0]["severity"] == severity


@pytest.mark.parametrize("severity", ["info", "Error", "", None, 1])
def test_bad_severity(severity):
    assert rule_fails(rule("deny_tool", severity=severity)).path == "$.rules[0].severity"


@pytest.mark.parametrize("group_by", ["tool", "call_signature"])
def test_group_by_values(group_by):
    assert load(rule("retry_limit", group_by=group_by)).to_dict()["rules"][0]["group_by"] == group_by


@pytest.mark.parametrize("group_by", ["signature", "Tool", None])
def test_bad_group_by(group_by):
    assert rule_fails(rule("retry_limit", group_by=group_by)).path == "$.rules[0].group_by"


@pytest.mark.parametrize("field, value", [("scope", None), ("within_events", None), ("tool", None),
                                          ("description", None)])
def test_null_is_not_an_absent_value(field, value):
    assert rule_fails(rule("require_approval", **{field: value})).path == f"$.rules[0].{field}"


# --- matchers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("matcher", [{"type": "x"}, {"tool": "t"}, {"ok": False}, {"outcome_id": "o"},
                                     {"verdict": "retracted"}, {"claims_completion": False}])
def test_each_matcher_key_alone_is_enough(matcher):
    (echo,) = load(rule("deny_event", match=matcher)).to_dict()["rules"]
    assert echo["match"] == matcher


@pytest.mark.parametrize("location", ["deny_event.match", "require_event.match", "require_order.before",
                                      "require_order.after"])
def test_empty_matcher_is_rejected(location):
    kind, field = location.split(".")
    assert rule_fails(rule(kind, **{field: {}})).path.startswith(f"$.rules[0].{field}")


@pytest.mark.parametrize("matcher, field", [
    ({"ok": "true"}, "ok"), ({"verdict": "passed"}, "verdict"), ({"claims_completion": 1}, "claims_completion"),
    ({"type": 5}, "type"), ({"tool": None}, "tool"), ({"outcome_id": ""}, "outcome_id"),
])
def test_matcher_field_types(matcher, field):
    assert rule_fails(rule("deny_event", match=matcher)).path.startswith("$.rules[0].match")


@pytest.mark.parametrize("match", [None, [], "x", [{"type": "x"}]])
def test_matcher_must_be_an_object(match):
    assert rule_fails(rule("deny_event", match=match)).path.startswith("$.rules[0].match")


# --- unknown keys, unknown kinds -----------------------------------------------------------------

def test_unknown_rule_key_names_it_and_suggests_the_field():
    error = rule_fails(rule("retry_limit", max_attempt=2))
    assert error.path == "$.rules[0].max_attempt"
    assert re.search(r"max_attempts", str(error))


@pytest.mark.parametrize("kind, typo, meant", [
    ("require_approval", "within_event", "within_events"),
    ("retry_limit", "group_bye", "group_by"),
    ("stop_is_final", "allowed_afters", "allowed_after"),
    ("completion_requires_outcome", "evidence_class", "evidence_classes"),
    ("deny_tool", "tol", "tool"),
])
def test_unknown_rule_keys_suggest_close_fields(kind, typo, meant):
    error = rule_fails(rule(kind, **{typo: "x"}))
    assert typo in str(error)
    assert re.search(re.escape(meant) + r"(?![A-Za-z_])", str(error))


def test_field_of_another_kind_is_unknown():
    error = rule_fails(rule("deny_tool", tools=["a"]))
    assert error.path == "$.rules[0].tools"


def test_unknown_root_key_suggests_the_field():
    error = rule_fails(rule("deny_tool"), descripton="d")
    assert error.path == "$.descripton"
    assert "description" in str(error)


def test_unknown_compare_key_suggests_the_field():
    error = rule_fails(rule("deny_tool"), compare={"fail_on_new_tool": True})
    assert error.path == "$.compare.fail_on_new_tool"
    assert re.search(r"fail_on_new_tools", str(error))


def test_unknown_compare_key_breaks_single_trace_checks_too():
    with pytest.raises(ContractError):
        check_trace(contract(rule("deny_tool"), compare={"max_increase": 5}), [])


def test_unknown_matcher_key_suggests_the_field():
    error = rule_fails(rule("deny_event", match={"type": "x", "outcome": "o"}))
    assert error.path == "$.rules[0].match.outcome"
    assert "outcome_id" in str(error)
    error = rule_fails(rule("require_order", after={"typ": "x"}))
    assert error.path == "$.rules[0].after.typ"


@pytest.mark.parametrize("typo, meant", [
    ("retry_limt", "retry_limit"),
    ("alow_tools", "allow_tools"),
    ("require_aproval", "require_approval"),
    ("deny_evnt", "deny_event"),
    ("stop_is_finall", "stop_is_final"),
])
def test_unknown_kind_suggests_the_close_kind(typo, meant):
    error = rule_fails({"id": "r", "kind": typo})
    assert error.path.startswith("$.rules[0]")
    text = str(error)
    assert typo in text
    # the first kind name the message mentions is the suggestion (a list of all kinds may follow)
    positions = {kind: text.find(kind) for kind in KINDS if kind in text}
    assert positions, text
    assert min(positions, key=positions.get) == meant


@pytest.mark.parametrize("kind", [None, 1, "", "DENY_TOOL"])
def test_bad_kind_values(kind):
    assert rule_fails({"id": "r", "kind": kind, "tool": "x"}).path.startswith("$.rules[0]")


def test_error_in_a_later_rule_names_its_index():
    error = rule_fails(rule("deny_tool", "a"), rule("deny_tool", "b"), rule("retry_limit", "c", max_attempts=0))
    assert error.path == "$.rules[2].max_attempts"


# --- cross-field checks (§2.5) -------------------------------------------------------------------

def test_duplicate_rule_id_is_reported_on_the_second_occurrence():
    error = rule_fails(rule("deny_tool", "a"), rule("allow_tools", "a"))
    assert error.path == "$.rules[1].id"
    assert "a" in error.problem


def test_duplicate_rule_id_after_other_rules():
    error = rule_fails(rule("deny_tool", "a"), rule("deny_tool", "b"), rule("deny_tool", "c"),
                       rule("stop_is_final", "b"))
    assert error.path == "$.rules[3].id"


def test_a_contract_built_in_python_refuses_a_repeated_rule_id_in_the_words_of_a_file():
    first, second = load(rule("deny_tool", "a"), rule("allow_tools", "b")).rules
    with pytest.raises(ValueError) as built:
        Contract(version=1, name="built", rules=[first, second, first])
    from_file = rule_fails(rule("deny_tool", "a"), rule("allow_tools", "b"), rule("deny_tool", "a"))
    assert from_file.path == "$.rules[2].id"
    assert from_file.problem == "duplicate rule id 'a' (already used by rules[0])"
    assert str(built.value) == f"@rules[2].id: {from_file.problem}"


def test_rule_ids_are_case_sensitive():
    load(rule("deny_tool", "a"), rule("deny_tool", "A"))


def test_event_budget_needs_a_bound():
    error = rule_fails(rule("deny_tool", "a"), {"id": "b", "kind": "event_budget"})
    assert error.path.startswith("$.rules[1]")
    assert "budget" in str(error).lower() or "max_events" in str(error)


@pytest.mark.parametrize("bound", ["max_events", "max_tool_calls", "max_tool_failures"])
def test_event_budget_with_any_single_bound_is_fine(bound):
    (echo,) = load({"id": "b", "kind": "event_budget", bound: 0}).to_dict()["rules"]
    assert echo == {"id": "b", "kind": "event_budget", bound: 0}


@pytest.mark.parametrize("bounds", [{"max": 0}, {"min": 5, "max": 4}, {"min": 1_000_000, "max": 0},
                                    {"min": 2, "max": 1}])
def test_require_event_min_cannot_exceed_max(bounds):
    error = rule_fails(rule("deny_tool", "a"), {"id": "e", "kind": "require_event", "match": {"type": "x"}, **bounds})
    assert error.path.startswith("$.rules[1]")
    assert "min" in str(error) and "max" in str(error)


@pytest.mark.parametrize("bounds", [{"min": 0, "max": 0}, {"max": 1}, {"min": 5}, {"min": 3, "max": 3}, {"min": 0}])
def test_require_event_consistent_bounds(bounds):
    (echo,) = load({"id": "e", "kind": "require_event", "match": {"type": "x"}, **bounds}).to_dict()["rules"]
    assert echo == {"id": "e", "kind": "require_event", "match": {"type": "x"}, **bounds}


def test_lone_surrogates_in_a_contract_read_as_the_replacement_character_like_in_traces():
    """A glob holding a lone surrogate matches a tool holding the same one, as in the reference."""
    from_file = load_contract(b'{"version": 1, "name": "cut \\ud83d", "rules": '
                              b'[{"id": "d", "kind": "deny_tool", "tool": "shell.\\ud83d"}]}')
    from_mapping = load_contract({"version": 1, "name": "cut \ud83d",
                                  "rules": [{"id": "d", "kind": "deny_tool", "tool": "shell.\ud83d"}]})
    assert from_file.to_dict() == from_mapping.to_dict()
    assert (from_file.name, from_file.rules[0].tool) == ("cut \ufffd", "shell.\ufffd")
    report = check_trace(from_file, b'{"seq": 1, "type": "tool.call", "tool": "shell.\\ud83d"}\n')
    assert [violation.event_seq for violation in report.violations] == [1]


def test_a_contract_path_given_as_bytes_is_read_as_a_trace_path_is():
    """A path object whose __fspath__ gives bytes: check_trace took it for a trace, load_contract
    failed inside with 'a bytes-like object is required'."""
    class BytesPath:
        def __fspath__(self) -> bytes:
            return os.fsencode(REPO / "agent_invariants" / "samples" / "agent-invariants.json")

    assert load_contract(BytesPath()).name == "support-agent-operating-contract"


def test_a_kind_whose_module_left_sys_modules_still_loads() -> None:
    """pytest's in-process runs (pytester) put `sys.modules` back as it was afterwards: a rule kind
    first imported inside one keeps its classes, which no longer find their module by name. With
    the kind's types read there (as a contract's check does) and a rule of the kind read later,
    its Glob and Text fields must still be trimmed and checked, not fail to resolve."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from agent_invariants import load_contract\n"
        "import msgspec\n"
        "from agent_invariants.rules import kind_class\n"
        "msgspec.inspect.type_info(kind_class('tool_args').config_type)\n"
        "del sys.modules['agent_invariants.rules.tool_args']\n"
        "contract = load_contract({'name': 'c', 'version': 2, 'rules': [\n"
        "    {'id': 'r', 'kind': 'tool_args', 'tool': '  refund  ', 'match': {}}]})\n"
        "print(repr(contract.rules[0].tool))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.stderr == ""
    assert done.stdout == "'refund'\n"


def test_a_blank_name_and_description_are_reported_with_the_rules_problems(cli, write):
    """README: "The loader reports all problems of a contract in one run": a blank `name` or
    `description` beside a rule's problem, not one more run for each."""
    write("c.json", '{\n  "version": 1,\n  "name": "  ",\n  "description": "\\t",\n  "rules": [\n'
                    '    {"id": "a", "kind": "deny_tool", "tool": " "}\n  ]\n}\n')
    result = cli("validate", "--contract", "c.json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        "agent-invariants: c.json:3: $.name: must not be empty or only whitespace",
        "agent-invariants: c.json:4: $.description: must not be empty or only whitespace",
        "agent-invariants: c.json:6: $.rules[0].tool: must not be empty or only whitespace"]
