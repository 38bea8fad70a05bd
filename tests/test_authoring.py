"""Writing contracts: every problem at once with line and suggestion, explain, YAML contracts."""
from __future__ import annotations

import json
import sys

import pytest

from agent_invariants import load_contract
from agent_invariants.explain import explain_kind
from agent_invariants.rules import RULE_KINDS

from support import EXAMPLES

THREE_MISTAKES = """{
  "version": 1,
  "name": "three-mistakes",
  "rules": [
    {"id": "retries", "kind": "retry_limit", "max_attempt": 3},
    {"id": "no-shell", "kind": "deny_tol", "tool": "shell.*"},
    {"id": "calibrated", "kind": "confidence_requires_outcome", "threshold": 1.5}
  ]
}
"""


VERSION_1_KINDS = [kind for kind, rule in RULE_KINDS.items() if getattr(rule.config_type, "since_version", 1) == 1]
"""The kinds a version-1 contract may name, which its errors list."""


@pytest.mark.slow
def test_three_mistakes_give_three_precise_lines(cli, write):
    write("contract.json", THREE_MISTAKES)
    result = cli("check", "--contract", "contract.json", "--trace", "-", stdin="")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "agent-invariants: contract.json:5: $.rules[0].max_attempt: unknown field (did you mean 'max_attempts'?)",
        "agent-invariants: contract.json:6: $.rules[1].kind: unknown rule kind \"deny_tol\" (did you mean "
        "'deny_tool'?); expected one of: " + ", ".join(VERSION_1_KINDS),
        "agent-invariants: contract.json:7: $.rules[2].threshold: expected a number <= 1, got 1.5",
    ]


def test_problems_in_nested_matchers_and_compare_are_all_listed(cli, write):
    write("contract.json", """{
  "version": 1,
  "name": "  ",
  "rules": [
    {"id": "order", "kind": "require_order",
     "before": {"typ": "policy.checked"},
     "after": {"type": "tool.call", "ok": "yes"}}
  ],
  "compare": {"max_tool_call_increase_percent": -1, "fail_on_new_tool": true}
}
""")
    result = cli("validate", "--contract", "contract.json")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert "agent-invariants: contract.json:6: $.rules[0].before.typ: unknown field (did you mean 'type'?)" in lines
    assert "agent-invariants: contract.json:7: $.rules[0].after.ok: expected true or false, got \"yes\"" in lines
    assert any(line.startswith("agent-invariants: contract.json:9: $.compare.max_tool_call_increase_percent:")
               for line in lines)
    assert ("agent-invariants: contract.json:9: $.compare.fail_on_new_tool: unknown field "
            "(did you mean 'fail_on_new_tools'?)") in lines


@pytest.mark.slow
def test_explain_lists_kinds_and_prints_a_manual(cli):
    listing = cli("explain")
    assert listing.returncode == 0
    assert [line.split()[0] for line in listing.stdout.splitlines()[:len(RULE_KINDS)]] == list(RULE_KINDS)
    manual = cli("explain", "require_approval")
    assert manual.returncode == 0
    for section in ("## What it checks", "## Why it matters", "## Failing trace", "## Passing trace", "## Options",
                    "## Known limits", "## Fields"):
        assert section in manual.stdout
    assert "- `within_events` (integer 1..100000):" in manual.stdout
    unknown = cli("explain", "deny_tol")
    assert unknown.returncode == 2 and "did you mean 'deny_tool'" in unknown.stderr


def test_explain_says_a_bound_a_number_must_be_over():
    """A field that must be over its least value (`percentile`: 0 < p <= 100) lists that bound;
    it read `number ..100`, as if any number up to 100 would do."""
    manual = explain_kind("latency_budget")
    assert "- `percentile` (number > 0, <= 100): " in manual
    assert "- `max_ms` (number > 0, required): " in manual.split("## Fields")[1]
    assert "- `max_ms` (number > 0, required): " in explain_kind("run_duration").split("## Fields")[1]


def test_yaml_contract_loads_like_the_json_one(tmp_path):
    import yaml

    document = json.loads((EXAMPLES / "refund-desk/contract.json").read_text())
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    assert load_contract(path) == load_contract(EXAMPLES / "refund-desk/contract.json")


@pytest.mark.slow
def test_yaml_problems_name_path_and_line(cli, write):
    write("contract.yml", """version: 1
name: yaml-contract
rules:
  - id: retries
    kind: retry_limit
    max_attempts: 0
  - id: no-shell
    kind: deny_tool
    tool: "  "
""")
    result = cli("validate", "--contract", "contract.yml")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "agent-invariants: contract.yml:6: $.rules[0].max_attempts: expected an integer >= 1, got 0",
        "agent-invariants: contract.yml:9: $.rules[1].tool: must not be empty or only whitespace",
    ]
    broken = write("broken.yaml", "version: 1\nrules: [\n")
    result = cli("validate", "--contract", str(broken))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"agent-invariants: {broken}: invalid YAML at line 3, column 1: the file ends before the value is complete"]


@pytest.mark.slow
def test_yaml_without_the_extra_says_how_to_install_it(tmp_path):
    import subprocess

    path = tmp_path / "c.yaml"
    path.write_text("version: 1\nname: x\nrules: []\n")
    code = ("import sys; sys.modules['yaml'] = None\n"
            "from agent_invariants.cli import main\n"
            f"main(['validate', '--contract', {str(path)!r}])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"agent-invariants: {path}: YAML files need the yaml extra: "
                                     "pip install 'agent-invariants[yaml]'")


@pytest.mark.parametrize("name", ["contract.json", "contract.yaml"])
def test_a_key_with_a_dot_is_written_in_brackets_and_found_on_its_line(cli, write, name):
    rule = {"id": "ids", "kind": "tool_args", "tool": "crm.lookup",
            "match": {"customer": {"id": 1}, "customer.id": {"$regx": "x"}}}
    document = {"version": 2, "name": "dots", "rules": [rule]}
    if name.endswith(".json"):
        text = json.dumps(document, indent=2)
    else:
        yaml = pytest.importorskip("yaml")
        text = yaml.safe_dump(document, sort_keys=False)
    write(name, text)
    line = next(number for number, content in enumerate(text.splitlines(), 1) if "$regx" in content)
    result = cli("validate", "--contract", name)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f'agent-invariants: {name}:{line}: $.rules[0].match["customer.id"].$regx: unknown '
                             "operator $regx (did you mean '$regex'?)\n")


@pytest.mark.parametrize("schema", [
    {"$defs": {"a": {"$anchor": "A", "type": "string"},
               "n": {"$id": "http://example.com/n", "$defs": {"q": {"type": "integer"}},
                     "properties": {"y": {"$ref": "#/$defs/q"}}}},
     "properties": {"x": {"$ref": "#A"}, "w": {"$ref": "#/$defs/n"}}},
    {"const": {"$ref": "#/not/a/reference"}, "enum": [{"$ref": "#/nor/this"}]},   # values, not subschemas
    # a tree through a dynamic anchor, under the draft's own `$schema` (with and without its `#`)
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$dynamicAnchor": "node",
     "properties": {"kids": {"items": {"$dynamicRef": "#node"}}}},
    {"$schema": "https://json-schema.org/draft/2020-12/schema#", "type": "object"},
    # recursion through a part of the value (a tree) is no circle
    {"$defs": {"node": {"type": "object", "properties": {"children": {"type": "array",
                                                                      "items": {"$ref": "#/$defs/node"}}},
                        "allOf": [{"$ref": "#/$defs/named"}]},
               "named": {"required": ["name"]}}, "$ref": "#/$defs/node"},
])
def test_references_that_resolve_where_they_stand_load(cli, write, schema):
    write("contract.json", json.dumps({"version": 2, "name": "refs",
                                       "rules": [{"id": "shape", "kind": "output_schema", "schema": schema}]}))
    result = cli("validate", "--contract", "contract.json")
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize(("key", "path"), [("1", "$.1"), ("true", "$.true"), ("null", "$.null"), ("1.5", '$["1.5"]')])
def test_a_yaml_key_that_is_no_string_is_named_as_json_writes_it_on_its_line(cli, write, key, path):
    write("contract.yaml", f"version: 2\nname: x\n{key}: 2\nrules:\n  - {{id: a, kind: deny_tool, tool: x}}\n")
    result = cli("validate", "--contract", "contract.yaml")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"agent-invariants: contract.yaml:3: {path}: unknown field; expected one of: ")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(("schema", "at", "problem"), [
    ({"$ref": "#/$defs/missing"}, ".$ref",
     'a reference cannot be resolved: the schema has nothing at "#/$defs/missing"'),
    ({"$ref": "#nosuch"}, ".$ref", 'a reference cannot be resolved: the schema has no anchor "nosuch"'),
    # a `$dynamicRef` starts where a `$ref` would go: leading nowhere, it fails every value it meets
    ({"properties": {"x": {"$dynamicRef": "#nosuch"}}}, ".properties.x.$dynamicRef",
     'a reference cannot be resolved: the schema has no anchor "nosuch"'),
    ({"items": {"$dynamicRef": "#/$defs/missing"}}, ".items.$dynamicRef",
     'a reference cannot be resolved: the schema has nothing at "#/$defs/missing"'),
    ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "",
     "its references go round in a circle"),
    # reached by no sample value: in a property, in a `not`, in a definition nothing uses
    ({"properties": {"x": {"$ref": "#/$defs/missing"}}}, ".properties.x.$ref",
     'a reference cannot be resolved: the schema has nothing at "#/$defs/missing"'),
    ({"$defs": {"unused": {"not": {"$ref": "#/$defs/zz"}}}}, ".$defs.unused.not.$ref",
     'a reference cannot be resolved: the schema has nothing at "#/$defs/zz"'),
    # no circle, but twelve levels of two references each to the next: 8,190 references for one value
    ({"$defs": {**{f"d{level}": {"allOf": [{"$ref": f"#/$defs/d{level + 1}"}, {"$ref": f"#/$defs/d{level + 1}"}]}
                   for level in range(12)}, "d12": {"type": "object"}}, "$ref": "#/$defs/d0"}, "",
     "its references were followed more than 1,100 times for one value, the most allowed (1,000, and 100 for each "
     "node of the value)"),
    # circles that only a value with the key, or with items, reaches: found all the same
    ({"$defs": {"a": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}, "",
     "its references go round in a circle"),
    ({"$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/b"}]}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
      "items": {"$ref": "#/$defs/a"}}, "", "its references go round in a circle"),
    # under a nested `$id`, `#` is that subschema, which has no `definitions`
    ({"definitions": {"a": {}}, "properties": {"x": {"$id": "file:///tmp/elsewhere.json", "$ref": "#/definitions/a"}}},
     ".properties.x.$ref", 'a reference cannot be resolved: the schema has nothing at "#/definitions/a"'),
])
@pytest.mark.parametrize("kind", ["output_schema", "tool_args"])
def test_a_schema_whose_references_lead_nowhere_is_refused_in_our_words(cli, write, schema, at, problem, kind):
    """A reference that leads nowhere is named at its own path (`…schema.properties.x.$ref`); a
    circle or a schema too costly to apply, at the schema."""
    rule = {"id": "shape", "kind": kind, "schema": schema, **({"tool": "t"} if kind == "tool_args" else {})}
    write("contract.json", json.dumps({"version": 2, "name": "refs", "rules": [rule]}))
    result = cli("validate", "--contract", "contract.json")
    assert (result.returncode, result.stdout) == (2, "")
    where = "agent-invariants: contract.json:1: $.rules[0].schema" + at
    assert result.stderr == f"{where}: the schema cannot be used: {problem}\n"


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-07/schema#",
                                   "https://json-schema.org/draft/2019-09/schema", "2020-12"])
@pytest.mark.parametrize("kind", ["output_schema", "tool_args"])
def test_a_schema_for_another_draft_is_refused_not_read_as_2020_12(cli, write, draft, kind):
    """The spec reads `schema` as JSON Schema 2020-12: draft 7's `items: [...]` or `dependencies`
    mean other things there, so a `$schema` naming any other draft is refused at its path."""
    for schema, at in (({"$schema": draft, "type": "object"}, ""),
                       # a resource of its own inside (an `$id`), which the validator would partly read as its draft
                       ({"$defs": {"x": {"$id": "urn:x", "$schema": draft, "items": [{"type": "string"}]}},
                         "properties": {"a": {"$ref": "urn:x"}}}, ".$defs.x")):
        rule = {"id": "shape", "kind": kind, "schema": schema, **({"tool": "t"} if kind == "tool_args" else {})}
        write("contract.json", json.dumps({"version": 2, "name": "drafts", "rules": [rule]}))
        result = cli("validate", "--contract", "contract.json")
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == (f"agent-invariants: contract.json:1: $.rules[0].schema{at}.$schema: only JSON Schema "
                                 f'2020-12 is read ("https://json-schema.org/draft/2020-12/schema"), got "{draft}"\n')
    # in a keyword's value that is data (an extension, a const), a `$schema` key is data too
    rule["schema"] = {"x-meta": {"$schema": draft}, "const": {"$schema": draft}, "properties": {"$schema": {}}}
    write("contract.json", json.dumps({"version": 2, "name": "drafts", "rules": [rule]}))
    assert cli("validate", "--contract", "contract.json").returncode == 0


def test_a_key_holding_a_lone_surrogate_is_named_with_its_json_escape():
    """A contract given as a Python mapping may hold a key no UTF-8 text can: its JSON path spells
    the key as JSON escapes it (found by the hostile-contract property test)."""
    from agent_invariants import load_contract
    from agent_invariants.errors import ContractError

    with pytest.raises(ContractError) as error:
        load_contract({"version": 1, "name": {"\ud800": float("inf")},
                       "rules": [{"id": "r0", "kind": "allow_tools", "tools": ["a.x"]}]})
    assert str(error.value) == 'contract: $.name["\\ud800"]: Infinity is not a number JSON allows'
