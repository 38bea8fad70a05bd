"""The committed JSON Schemas match the structs, and every example contract validates against them
the way an editor would validate it."""
import json

import jsonschema
import pytest

from agent_invariants.schemas import SCHEMAS, generate, render

from support import EXAMPLES, REPO

SCHEMA_DIR = REPO / "schemas"


@pytest.mark.parametrize("name", SCHEMAS)
def test_committed_schema_matches_the_structs(name):
    committed = (SCHEMA_DIR / name).read_text(encoding="utf-8")
    assert committed == render(generate()[name]), \
        f"schemas/{name} is out of date: run `python -m agent_invariants.schemas`"


@pytest.mark.parametrize("name", SCHEMAS)
def test_schemas_are_valid_and_every_property_is_described(name):
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    for definition, spec in schema["$defs"].items():
        for prop, detail in spec.get("properties", {}).items():
            assert detail.get("description"), f"{name}: {definition}.{prop} has no description"


def contract_validator(version: int = 1):
    schema = json.loads((SCHEMA_DIR / f"contract-v{version}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


CONTRACTS = sorted(EXAMPLES.glob("*/contract.json")) + [REPO / "agent_invariants/samples/agent-invariants.json"]


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.parent.name)
def test_example_contracts_validate_against_the_schema(path):
    document = json.loads(path.read_text(encoding="utf-8"))
    assert "$schema" in document
    errors = [f"{list(e.path)}: {e.message}" for e in contract_validator(document["version"]).iter_errors(document)]
    assert errors == []


BASE = {"version": 1, "name": "x", "rules": [{"id": "a", "kind": "deny_tool", "tool": "shell.*"}]}
REJECTED = {
    "unknown root key": {**BASE, "rulez": []},
    "version as a string": {**BASE, "version": "1"},
    "version 3": {**BASE, "version": 3},
    "missing name": {"version": 1, "rules": BASE["rules"]},
    "unknown kind": {**BASE, "rules": [{"id": "a", "kind": "deny_tol", "tool": "x"}]},
    "misspelled field": {**BASE, "rules": [{"id": "a", "kind": "retry_limit", "max_attempt": 3}]},
    "max_attempts 0": {**BASE, "rules": [{"id": "a", "kind": "retry_limit", "max_attempts": 0}]},
    "threshold 1.5": {**BASE, "rules": [{"id": "a", "kind": "confidence_requires_outcome", "threshold": 1.5}]},
    "bad rule id": {**BASE, "rules": [{"id": "-a", "kind": "deny_tool", "tool": "x"}]},
    "id with a newline": {**BASE, "rules": [{"id": "a\n", "kind": "deny_tool", "tool": "x"}]},
    "unknown compare key": {**BASE, "compare": {"fail_on_new_tool": True}},
    "unknown matcher key": {**BASE, "rules": [{"id": "a", "kind": "deny_event", "match": {"typ": "x"}}]},
}


@pytest.mark.parametrize("case", list(REJECTED))
def test_schema_rejects_what_the_loader_rejects(case):
    from agent_invariants import load_contract
    from agent_invariants.errors import ContractError

    with pytest.raises(ContractError):
        load_contract(REJECTED[case])
    assert list(contract_validator().iter_errors(REJECTED[case]))


def test_schema_accepts_what_the_loader_accepts():
    from agent_invariants import load_contract

    accepted = [BASE, {**BASE, "$schema": "x"}, {**BASE, "version": 1.0},
                {**BASE, "rules": [{"id": "a", "kind": "retry_limit", "max_attempts": 2.0}]},
                {**BASE, "extends": ["agent-invariants:payments"]}]
    for document in accepted:
        load_contract(document)
        assert not list(contract_validator().iter_errors(document)), document


def test_batch_reports_validate_against_their_schemas(cli, tmp_path):
    """README "Many traces at once": the batch reports, good traces and unreadable ones alike."""
    (tmp_path / "c.json").write_text(json.dumps(BASE))
    for folder in ("old", "new"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "shell.x"}\n')
        (tmp_path / folder / "b.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "kb.search"}\n')
    (tmp_path / "new" / "c.jsonl").write_text("garbage\n")
    (tmp_path / "old" / "c.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    check = cli("check", "-c", "c.json", "-t", "new", "--format", "json")
    compare = cli("compare", "-c", "c.json", "-b", "old", "-k", "new", "--format", "json")
    for result, name, schema_name in ((check, "check-batch", "check-batch-report-v1.schema.json"),
                                      (compare, "compare-batch", "compare-batch-report-v1.schema.json")):
        assert result.returncode == 2, result.stderr
        report = json.loads(result.stdout)
        assert report["schema"] == f"agent-invariants/{name}/v1" and len(report["failures"]) == 1
        schema = json.loads((SCHEMA_DIR / schema_name).read_text(encoding="utf-8"))
        assert [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(report)] == []
        assert list(jsonschema.Draft202012Validator(schema).iter_errors({**report, "failures": [{"trace": 1}]}))
