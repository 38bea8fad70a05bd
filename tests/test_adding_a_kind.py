"""Adding a rule kind takes its module and one registry entry, nothing else.

The example kind of docs/architecture.md (`call_limit`) is written to a temporary folder, imported
from there and registered with one call; it is then validated, checked, compared, explained and
rendered in SARIF like the built-in kinds. The registry is put back after each test.
"""
from __future__ import annotations

import importlib
import inspect
import json
import pickle
import re
import subprocess
import sys

import pytest

from agent_invariants import Contract, ContractError, check_trace, compare_traces, load_contract
from agent_invariants.explain import explain_kind, list_kinds
from agent_invariants.render import sarif
from agent_invariants.rules import RULE_KINDS, register_kind

from rulecheck import assert_result, check
from support import REPO, contract, events, jsonl

DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
EXAMPLE = re.search(r"^````python\n(.*?)^````$", DOC, re.DOTALL | re.MULTILINE)[1]
RULE = {"id": "few-searches", "kind": "call_limit", "tool": "search.*", "max_calls": 1}
SEARCHES = [{"type": "tool.call", "tool": "search.web"}, {"type": "tool.call", "tool": "fs.read"},
            {"type": "tool.call", "tool": "search.news"}, {"type": "tool.call", "tool": "search.web"}]


@pytest.fixture
def kind_module(tmp_path, monkeypatch):
    """The example kind as a module outside the package, importable; the registry is restored after."""
    (tmp_path / "call_limit_kind.py").write_text(EXAMPLE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    saved = dict(RULE_KINDS)
    try:
        yield importlib.import_module("call_limit_kind")
    finally:
        RULE_KINDS.clear()
        RULE_KINDS.update(saved)
        sys.modules.pop("call_limit_kind", None)


@pytest.fixture
def call_limit(kind_module):
    return register_kind(kind_module.CallLimit)   # the one registry line


def test_the_loader_sees_a_kind_registered_after_it_was_imported(kind_module):
    load_contract(contract({"id": "warm", "kind": "deny_tool", "tool": "x"}))   # the loader has decoded before
    with pytest.raises(ContractError, match=r"\$\.rules\[0\]\.kind: unknown rule kind \"call_limit\""):
        load_contract(contract(RULE))
    register_kind(kind_module.CallLimit)
    loaded = load_contract(contract(RULE, {"id": "no-shell", "kind": "deny_tool", "tool": " shell.* "}))
    assert type(loaded) is Contract
    assert type(loaded.rules[0]) is kind_module.CallLimitConfig
    assert loaded.to_dict()["rules"] == [RULE, {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]
    assert pickle.loads(pickle.dumps(loaded)) == loaded   # it can go to a worker process, as compare --jobs sends it


def test_a_kind_is_registered_once(call_limit):
    with pytest.raises(RuntimeError, match="registered twice"):
        register_kind(call_limit)


def test_a_registered_kind_is_validated_like_the_others(call_limit):
    with pytest.raises(ContractError) as caught:
        load_contract(contract({"id": "a", "kind": "call_limit", "tool": "search.*", "max_calls": -1, "max_call": 2}))
    assert [(path, problem) for path, problem, _ in caught.value.problems] == [
        ("$.rules[0].max_call", "unknown field (did you mean 'max_calls'?)"),
        ("$.rules[0].max_calls", "expected an integer >= 0, got -1"),
    ]
    with pytest.raises(ContractError) as caught:
        load_contract(contract({**RULE, "tool": "  "}))
    assert caught.value.path == "$.rules[0].tool" and caught.value.problem == "must not be empty or only whitespace"
    with pytest.raises(ContractError, match="did you mean 'call_limit'"):
        load_contract(contract({**RULE, "kind": "call_limt"}))


def test_a_registered_kind_is_checked_and_compared(call_limit):
    calls = [{"tool": "search.news", "calls": 2}, {"tool": "search.web", "calls": 3}]
    assert_result(check(RULE, *SEARCHES), RULE, checked=3, violations=[(3, 2, calls[0]), (4, 3, calls[1])])
    capped = check_trace(contract(RULE), events(*SEARCHES), max_violations=1)
    assert (capped.results[0].violations_total, capped.violations[0].message) == (
        2, "Call 2 of search.* is over the limit of 1.")
    compat = compare_traces(contract(RULE), events(*SEARCHES[:2]), events(*SEARCHES[:2], SEARCHES[0]))
    assert not compat.compatible
    assert [(r.kind, r.evidence["rule_kind"], r.event_seq) for r in compat.regressions] == [
        ("new_rule_failure", "call_limit", 3)]


def test_a_registered_kind_is_explained_from_its_docstring(call_limit):
    manual = explain_kind("call_limit")
    assert manual.startswith("call_limit: Fails when matching tools are called more often than allowed.\n")
    assert inspect.cleandoc(call_limit.__doc__) in manual
    assert "- `kind` (string, required): `call_limit`\n" in manual
    assert "- `max_calls` (integer 0..1000000, required): Most calls allowed, all matching tools together.\n" in manual
    listed = [line.split(maxsplit=1) for line in list_kinds().splitlines()]
    assert ["call_limit", "Fails when matching tools are called more often than allowed."] in listed


def test_a_registered_kind_gets_a_sarif_rule_whose_help_is_its_manual(call_limit, tmp_path):
    trace = tmp_path / "run.jsonl"
    trace.write_text(jsonl(events(*SEARCHES)), encoding="utf-8")
    log = json.loads(sarif.render(check_trace(contract(RULE), trace, line_lengths=True)))
    (run,) = log["runs"]
    (descriptor,) = run["tool"]["driver"]["rules"]
    manual = inspect.cleandoc(call_limit.__doc__)
    assert (descriptor["id"], descriptor["name"]) == ("few-searches", "call_limit")
    assert descriptor["help"] == {"text": manual, "markdown": f"# call_limit\n\n{manual}"}
    assert descriptor["properties"]["tags"] == ["agent-invariants", "cost", "tools"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run["results"]] == [
        ("few-searches", 3), ("few-searches", 4)]


@pytest.mark.slow
def test_the_generated_schema_lists_a_kind_registered_before_contracts_load(tmp_path):
    """As the kinds of `_BUILT_IN` are: `python -m agent_invariants.schemas` then writes it out."""
    (tmp_path / "call_limit_kind.py").write_text(EXAMPLE, encoding="utf-8")
    code = ("import json, sys\n"
            "import call_limit_kind\n"
            "from agent_invariants.rules import register_kind\n"
            "register_kind(call_limit_kind.CallLimit)\n"
            "from agent_invariants.schemas import generate\n"
            "print(json.dumps(generate()['contract-v1.schema.json']))\n")
    run = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert run.returncode == 0, run.stderr
    schema = json.loads(run.stdout)
    config = schema["$defs"]["CallLimitConfig"]
    assert list(config["properties"]) == ["kind", "id", "severity", "description", "tool", "max_calls"]
    assert config["properties"]["max_calls"]["description"] == "Most calls allowed, all matching tools together."
    rules = schema["$defs"]["Contract"]["properties"]["rules"]["items"]
    assert rules["discriminator"]["mapping"]["call_limit"] == "#/$defs/CallLimitConfig"


@pytest.mark.parametrize("stray", [1, False, "yes"])
def test_a_handler_may_return_only_none_or_true(kind_module, stray):
    """True empties the engine's routing cache; any other value but None is a bug, said at once."""

    class Stray(kind_module.CallLimit):
        def _call(self, event, index):
            super()._call(event, index)
            return stray

    register_kind(Stray)
    with pytest.raises(TypeError, match=rf"Stray\._call returned {re.escape(repr(stray))}; a handler returns None, "
                                        r"or True when its rule's routes changed"):
        check_trace(contract(RULE), events(*SEARCHES))
