"""Rule packs: each pack's example traces pass and fail as its doc says; extends merges,
overrides, and refuses cycles and missing packs with a clear error."""
from __future__ import annotations

import json
import re

import pytest

from agent_invariants import check_trace, load_contract
from agent_invariants.errors import ContractError
from agent_invariants.packs import available_packs

from support import REPO, events

PACKS = REPO / "rules"


def test_the_six_documented_packs_ship():
    assert available_packs() == sorted(["payments", "stop-and-revocation", "no-shell-or-admin", "retry-discipline",
                                        "completion-needs-evidence", "tool-hygiene"])


@pytest.mark.parametrize("pack", sorted(p.stem for p in PACKS.glob("*.json")))
def test_pack_examples_pass_and_fail_as_documented(pack):
    contract = load_contract({"version": 1, "name": f"uses-{pack}", "extends": [f"agent-invariants:{pack}"]})
    pack_rules = [rule["id"] for rule in json.loads((PACKS / f"{pack}.json").read_text())["rules"]]
    assert [rule.id for rule in contract.rules] == pack_rules

    passing = check_trace(contract, str(PACKS / "examples" / f"{pack}-pass.jsonl"))
    assert passing.passed and passing.violations == [], passing.violations

    failing = check_trace(contract, str(PACKS / "examples" / f"{pack}-fail.jsonl"))
    documented = (PACKS / f"{pack}.md").read_text()
    said_to_fail = re.search(r"fails (.*?)\.\n", documented, re.S).group(1)
    expected = {rule_id for rule_id in pack_rules if rule_id in said_to_fail}
    assert expected, f"{pack}.md names no failing rule"
    assert {result.rule_id for result in failing.results if not result.passed} == expected


def test_two_packs_and_an_override_give_the_effective_rules(cli, write):
    write("contract.json", {
        "version": 1, "name": "refund-desk",
        "extends": ["agent-invariants:payments", "agent-invariants:no-shell-or-admin"],
        "rules": [
            {"id": "payments.need-approval", "kind": "require_approval", "tool": "payments.*", "within_events": 5},
            {"id": "house.no-mail", "kind": "deny_tool", "tool": "mail.send"},
        ],
    })
    result = cli("validate", "--contract", "contract.json")
    assert result.returncode == 0, result.stderr
    effective = json.loads(result.stdout)["contract"]
    assert "extends" not in effective
    ids = [rule["id"] for rule in effective["rules"]]
    assert ids == ["payments.need-approval", "payments.no-repeat", "payments.result-read",
                   "no-shell.shell", "no-shell.terminal", "no-shell.exec", "no-shell.admin", "no-shell.sudo",
                   "no-shell.raw-sql", "house.no-mail"]
    assert effective["rules"][0] == {"id": "payments.need-approval", "kind": "require_approval",
                                     "tool": "payments.*", "within_events": 5}


def test_relative_pack_paths_nested_extends_and_later_packs_override_earlier(tmp_path, write):
    write("packs/base.json", {"rules": [{"id": "a", "kind": "deny_tool", "tool": "one.*"},
                                        {"id": "b", "kind": "deny_tool", "tool": "two.*"}]})
    write("packs/stricter.json", {"extends": ["base.json"],
                                  "rules": [{"id": "b", "kind": "deny_tool", "tool": "*"}]})
    path = write("team/contract.json", {"version": 1, "name": "x", "extends": ["../packs/stricter.json"],
                                        "rules": [{"id": "c", "kind": "deny_tool", "tool": "three.*"}]})
    contract = load_contract(path)
    assert [(rule.id, rule.tool) for rule in contract.rules] == [("a", "one.*"), ("b", "*"), ("c", "three.*")]
    report = check_trace(contract, events({"type": "tool.call", "tool": "zzz"}))
    assert [v.rule_id for v in report.violations] == ["b"]


def test_extends_cycle_is_an_error(write):
    write("a.json", {"extends": ["b.json"], "rules": []})
    write("b.json", {"extends": ["a.json"], "rules": []})
    path = write("contract.json", {"version": 1, "name": "x", "extends": ["a.json"]})
    with pytest.raises(ContractError, match=r"extends cycle: a\.json -> b\.json -> a\.json"):
        load_contract(path)


def test_missing_packs_name_the_extends_entry(write):
    path = write("contract.json", {"version": 1, "name": "x", "extends": ["agent-invariants:payments", "nope.json"]})
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert caught.value.path == "$.extends[1]" and "nope.json" in caught.value.problem
    with pytest.raises(ContractError, match="unknown pack 'agent-invariants:payment'.*agent-invariants:payments"):
        load_contract({"version": 1, "name": "x", "extends": ["agent-invariants:payment"]})


@pytest.mark.slow
def test_a_broken_pack_is_reported_in_its_own_file_with_the_line(write, cli):
    write("pack.json", '{\n  "rules": [\n    {"id": "x", "kind": "deny_tool", "tol": "shell.*"}\n  ]\n}\n')
    write("contract.json", {"version": 1, "name": "x", "extends": ["pack.json"]})
    result = cli("check", "--contract", "contract.json", "--trace", "-", stdin="")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "agent-invariants: pack.json:3: $.rules[0].tol: unknown field (did you mean 'tool'?)"]


def test_a_version_2_rule_in_a_pack_of_a_version_1_contract_is_reported_in_the_pack(write, cli):
    """The pack's own file, line and JSON path, not the contract's rule at the same position (a
    rule of its own that had no problem), and what to change: the contract's version."""
    write("pack.json", '{\n  "rules": [\n    {"id": "t", "kind": "tool_args", "tool": "x", "match": {"a": 1}}\n'
                       '  ]\n}\n')
    write("contract.json", '{\n  "version": 1,\n  "name": "c",\n  "extends": ["pack.json"],\n'
                           '  "rules": [\n    {"id": "own", "kind": "deny_tool", "tool": "a"}\n  ]\n}\n')
    result = cli("validate", "--contract", "contract.json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        'agent-invariants: pack.json:3: $.rules[0].kind: the rule kind tool_args needs "version": 2 in the contract '
        "that extends this pack"]
    write("contract.json", {"version": 2, "name": "c", "extends": ["pack.json"],
                            "rules": [{"id": "own", "kind": "deny_tool", "tool": "a"}]})
    assert cli("validate", "--contract", "contract.json").returncode == 0


def test_every_bad_extends_entry_is_reported_at_once_with_its_line(write, cli):
    """README: "The loader reports all problems of a contract in one run …, each on its own line
    with the file's line": each entry that names no pack, not one per run."""
    write("c.json", '{\n  "version": 1,\n  "name": "c",\n  "extends": [\n    "agent-invariants:payment",\n'
                    '    "gone.json",\n    "agent-invariants:payments"\n  ]\n}\n')
    result = cli("validate", "--contract", "c.json")
    assert (result.returncode, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert [line.split(": ", 3)[1:3] for line in lines] == [["c.json:5", "$.extends[0]"], ["c.json:6", "$.extends[1]"]]
    assert "(did you mean 'agent-invariants:payments'?)" in lines[0] and "'gone.json' not found" in lines[1]


def test_a_pack_is_named_as_the_user_would_name_it_from_the_current_folder(write, cli):
    """Relative to the current folder when inside it (no machine path in the message), and the
    whole path, without `..` steps, when outside."""
    write("packs/base.json", '{\n  "rules": [\n    {"id": "x", "kind": "deny_tool", "tol": "shell.*"}\n  ]\n}\n')
    write("contracts/c.json", {"version": 1, "name": "x", "extends": ["../packs/base.json"]})
    write("contracts/gone.json", {"version": 1, "name": "x", "extends": ["../packs/gone.json"]})
    inside = cli("validate", "--contract", "contracts/c.json")
    assert inside.stderr.splitlines() == [
        "agent-invariants: packs/base.json:3: $.rules[0].tol: unknown field (did you mean 'tool'?)"]
    missing = cli("validate", "--contract", "contracts/gone.json")
    assert missing.stderr.splitlines() == [
        "agent-invariants: contracts/gone.json:5: $.extends[0]: pack file '../packs/gone.json' not found "
        "(looked for packs/gone.json)"]
    write("elsewhere/c.json", {"version": 1, "name": "x", "extends": ["../packs/base.json"]})
    outside = type(cli)(cli.cwd / "contracts")("validate", "--contract", str(cli.cwd / "elsewhere" / "c.json"))
    assert outside.returncode == 2
    assert outside.stderr.splitlines() == [
        f"agent-invariants: {cli.cwd / 'packs' / 'base.json'}:3: $.rules[0].tol: unknown field (did you mean 'tool'?)"]


def test_extends_needs_at_least_one_rule_in_the_end(write):
    write("empty.json", {"rules": []})
    path = write("contract.json", {"version": 1, "name": "x", "extends": ["empty.json"]})
    with pytest.raises(ContractError, match="at least one rule"):
        load_contract(path)


def test_contract_without_extends_still_needs_rules():
    with pytest.raises(ContractError) as caught:
        load_contract({"version": 1, "name": "x", "rules": []})
    assert caught.value.path == "$.rules"


def test_a_pack_of_the_wrong_shape_is_reported_with_the_line(write):
    pack = write("pack.json", '{\n  "rules": [],\n  "nme": "typo"\n}\n')
    path = write("contract.json", {"version": 1, "name": "x", "extends": ["pack.json"]})
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert str(caught.value) == (f"{pack}:3: $.nme: unknown field in a pack "
                                 "(did you mean 'name'?); expected one of: $schema, name, description, extends, rules")


def test_a_pack_whose_name_starts_with_two_dots_is_inside_the_current_folder(write, cli):
    """`..base.json` is a file of this folder, not one above it: named as given, not by its whole path."""
    write("..base.json", '{\n  "rules": [\n    {"id": "x", "kind": "deny_tool", "tol": "shell.*"}\n  ]\n}\n')
    write("contract.json", {"version": 1, "name": "x", "extends": ["..base.json"]})
    result = cli("validate", "--contract", "contract.json")
    assert result.stderr.splitlines() == [
        "agent-invariants: ..base.json:3: $.rules[0].tol: unknown field (did you mean 'tool'?)"]
