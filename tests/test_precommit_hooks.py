"""The pre-commit hooks, run as pre-commit runs them: `.pre-commit-hooks.yaml` read, the files of a
commit filtered by each hook's pattern, the hook's entry run with them (in this environment, where
the package is installed as `language: python` would install it)."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
HOOKS = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
SCHEMA = "https://raw.githubusercontent.com/agent-invariants/agent-invariants/main/schemas/contract-v2.schema.json"


def run_hook(hook_id: str, folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    hook = HOOKS[hook_id]
    files = sorted(str(path.relative_to(folder)) for path in folder.rglob("*")
                   if path.is_file() and re.search(hook["files"], str(path.relative_to(folder))))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([*shlex.split(hook["entry"]), *extra, *files], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_hooks_file_has_what_pre_commit_requires():
    assert sorted(HOOKS) == ["agent-invariants-lint", "agent-invariants-validate"]
    for hook in HOOKS.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python"
        re.compile(hook["files"])


def test_validate_passes_good_contracts_and_refuses_a_bad_one_with_the_usual_line(tmp_path):
    (tmp_path / "agent-invariants.json").write_text((REPO / "examples/refund-desk/contract.json").read_text())
    (tmp_path / "package.json").write_text('{"name": "not a contract"}')
    assert run_hook("agent-invariants-validate", tmp_path).returncode == 0
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "refunds.json").write_text(json.dumps(
        {"$schema": SCHEMA, "version": 2, "name": "refunds", "rules": [{"id": "r", "kind": "deny_tool", "tool": ""}]},
        indent=2))
    result = run_hook("agent-invariants-validate", tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "agent-invariants: policy/refunds.json:9: $.rules[0].tool: expected a non-empty string, got \"\""]


def test_lint_refuses_a_contract_no_trace_can_pass_and_warnings_only_with_strict(tmp_path):
    (tmp_path / "refund.contract.json").write_text((REPO / "examples/lint/contract.json").read_text())
    result = run_hook("agent-invariants-lint", tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith(
        "refund.contract.json:8: error required_but_forbidden [no-shell, runs-the-tests]: ")
    (tmp_path / "refund.contract.json").unlink()
    (tmp_path / "agent-invariants.yaml").write_text(
        "version: 2\nname: warned\nrules:\n  - {id: a, kind: tool_calls, tool: search, max: 3}\n"
        "  - {id: b, kind: tool_calls, tool: search, max: 5}\n")
    assert run_hook("agent-invariants-lint", tmp_path).returncode == 0
    strict = run_hook("agent-invariants-lint", tmp_path, "--strict")
    assert strict.returncode == 1
    assert strict.stdout.startswith("agent-invariants.yaml:5: warning shadowed_rule [a, b]: ")


def test_a_contract_naming_the_schema_by_a_relative_path_is_checked(tmp_path):
    """As this repository's examples write `$schema`: a path to the schema file, not its URL."""
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "refunds.json").write_text(json.dumps(
        {"$schema": "../schemas/contract-v1.schema.json", "version": 1, "name": "refunds",
         "rules": [{"id": "r", "kind": "deny_tool", "tool": ""}]}, indent=2))
    (tmp_path / "policy" / "other.json").write_text(json.dumps({"$schema": "../schemas/other.schema.json"}))
    result = run_hook("agent-invariants-validate", tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "agent-invariants: policy/refunds.json:9: $.rules[0].tool: expected a non-empty string, got \"\""]


def test_a_contract_whose_schema_key_or_value_is_written_with_json_escapes_is_checked(tmp_path):
    """`"\\u0024schema"` is the key `$schema`, `https:\\/\\/` is `https://` (some JSON writers
    escape every slash) and `\\u002d` is `-`: the file is the contract its parsed `$schema` says it is."""
    (tmp_path / "policy").mkdir()
    bad = [{"id": "r", "kind": "deny_tool", "tool": ""}]
    (tmp_path / "policy" / "key.json").write_text(
        '{"\\u0024schema": "../schemas/contract-v1.schema.json", "version": 1, "name": "k", "rules": '
        + json.dumps(bad) + "}")
    (tmp_path / "policy" / "url.json").write_text(
        '{"$schema": ' + json.dumps(SCHEMA).replace("/", "\\/") + ', "version": 2, "name": "u", "rules": '
        + json.dumps(bad) + "}")
    (tmp_path / "policy" / "value.json").write_text(
        '{"$schema": "../schemas/contract\\u002dv2.schema.json", "version": 2, "name": "v", "rules": '
        + json.dumps(bad) + "}")
    (tmp_path / "policy" / "broken.json").write_text('{"$schema": "https://example.com/other.schema.json", ')
    result = run_hook("agent-invariants-validate", tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [   # (a file that is no JSON, naming another schema, is not ours)
        f"agent-invariants: policy/{name}.json:1: $.rules[0].tool: expected a non-empty string, got \"\""
        for name in ("key", "url", "value")]


def test_a_schema_with_an_empty_fragment_or_named_by_a_yaml_modeline_is_checked(tmp_path):
    """`contract-v2.schema.json#` (an empty fragment, as JSON Schema URIs are often written) names
    the schema; so does the YAML language server's `# yaml-language-server: $schema=...` comment
    of a YAML file. Another schema named either way is not ours."""
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "fragment.json").write_text(json.dumps(
        {"$schema": SCHEMA + "#", "version": 1, "name": "f", "rules": [{"id": "r", "kind": "deny_tool", "tool": ""}]}))
    (tmp_path / "policy" / "modeline.yaml").write_text(
        f"# yaml-language-server: $schema={SCHEMA}\r\nversion: 2\r\nname: m\r\nrules:\r\n"
        "  - {id: r, kind: deny_tool, tool: ''}\r\n")
    (tmp_path / "policy" / "relative.yml").write_text(
        "version: 2\nname: p\n# yaml-language-server:  $schema=../schemas/contract-v1.schema.json\n"
        "rules: [{id: r, kind: deny_tool, tool: ''}]\n")
    (tmp_path / "policy" / "other.yaml").write_text(
        "# yaml-language-server: $schema=https://json.schemastore.org/github-workflow.json\non: push\n")
    (tmp_path / "policy" / "other.json").write_text(json.dumps({"$schema": "../schemas/other.schema.json#"}))
    (tmp_path / "policy" / "docs").mkdir()   # the comment as the text of a block scalar: a workflow writing one
    (tmp_path / "policy" / "docs" / "workflow.yml").write_text(
        "on: push\njobs:\n  x:\n    steps:\n      - run: |\n          cat > c.yaml <<EOF\n"
        f"          # yaml-language-server: $schema={SCHEMA}\n          version: 2\n          EOF\n")
    (tmp_path / "policy" / "directive.yaml").write_text(
        f"%YAML 1.2\n---\n# yaml-language-server: $schema={SCHEMA}\nversion: 2\nname: d\nrules: [{{id: r}}]\n")
    # an indented comment among those that open the file, and a file with a byte order mark, name it too
    (tmp_path / "policy" / "indented.yaml").write_text(
        f"# our policy\n  # yaml-language-server: $schema={SCHEMA}\nversion: 2\nname: i\n"
        "rules: [{id: r, kind: deny_tool, tool: ''}]\n")
    (tmp_path / "policy" / "bom.yaml").write_text(
        f"\ufeff# yaml-language-server: $schema={SCHEMA}\nversion: 2\nname: b\n"
        "rules: [{id: r, kind: deny_tool, tool: ''}]\n", encoding="utf-8")
    result = run_hook("agent-invariants-validate", tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        'agent-invariants: policy/bom.yaml:4: $.rules[0].tool: expected a non-empty string, got ""',
        "agent-invariants: policy/directive.yaml:6: $.rules[0]: missing required field `kind` (one of: deny_tool, "
        "allow_tools, require_approval, stop_is_final, completion_requires_outcome, retry_limit, event_budget, "
        "require_order, require_event, deny_event, tool_result_required, confidence_requires_outcome, tool_args, "
        "tool_order, precedence, tool_calls, approval_bound, latency_budget, result_size, run_duration, output_match, "
        "output_schema, run_status, required_when, forbidden_when, failure_handled)",
        'agent-invariants: policy/fragment.json:1: $.rules[0].tool: expected a non-empty string, got ""',
        'agent-invariants: policy/indented.yaml:5: $.rules[0].tool: expected a non-empty string, got ""',
        'agent-invariants: policy/modeline.yaml:5: $.rules[0].tool: expected a non-empty string, got ""',
        'agent-invariants: policy/relative.yml:4: $.rules[0].tool: expected a non-empty string, got ""']


def test_a_misspelt_option_is_refused_not_taken_for_a_file_name(tmp_path):
    """`args: [--stirct]` must not make the hook pass what `--strict` refuses: an unknown option is
    exit 2 with the usage; `-h` and `--help` print the usage."""
    (tmp_path / "agent-invariants.yaml").write_text(
        "version: 2\nname: warned\nrules:\n  - {id: a, kind: tool_calls, tool: search, max: 3}\n"
        "  - {id: b, kind: tool_calls, tool: search, max: 5}\n")
    result = run_hook("agent-invariants-lint", tmp_path, "--stirct")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == ["agent-invariants: hooks lint: unknown option --stirct",
                                          "usage: python -m agent_invariants.hooks validate|lint [--strict] FILE..."]
    assert run_hook("agent-invariants-validate", tmp_path, "--bogus").returncode == 2
    assert run_hook("agent-invariants-validate", tmp_path, "--strict").returncode == 0
    (tmp_path / "-odd.contract.json").write_text("{}")   # a file whose name starts with `-` is a file
    assert run_hook("agent-invariants-validate", tmp_path).returncode == 1
    (tmp_path / "-odd.contract.json").unlink()
    (tmp_path / "--strict").write_text(json.dumps({"$schema": SCHEMA, "version": 1, "name": "x", "rules": []}))
    after = subprocess.run([sys.executable, "-m", "agent_invariants.hooks", "validate", "--", "--strict"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert after.returncode == 1   # after `--`, a file named like the option is a file, and this one is checked
    assert after.stderr.startswith("agent-invariants: --strict")
    helped = run_hook("agent-invariants-validate", tmp_path, "--help")
    assert (helped.returncode, helped.stdout) == (0, "usage: python -m agent_invariants.hooks validate|lint [--strict] "
                                                     "FILE...\n")


def test_a_contract_name_cannot_issue_a_ci_runner_command(tmp_path):
    """Found by the sixth hunt: the hooks printed names as they are, so a contract named
    `::error::x.contract.json` started a line of the lint output with a runner command, and one
    named `##[add-mask]...` spelt one anywhere (pre-commit runs in CI on pull requests, whose
    files anyone names). They print them as `check` does: `\\x3a:` at a line's start, `##\\x5b`."""
    (tmp_path / "::error::x.contract.json").write_text((REPO / "examples/lint/contract.json").read_text())
    (tmp_path / "##[add-mask]bad.contract.json").write_text('{"version": 1, "name": "x", "rules": [{"id": "a"}]}')
    linted = run_hook("agent-invariants-lint", tmp_path)
    assert linted.returncode == 1
    assert linted.stdout.splitlines()[0].startswith(
        "\\x3a:error::x.contract.json:8: error required_but_forbidden [no-shell, runs-the-tests]: ")
    assert linted.stderr.startswith("agent-invariants: ##\\x5badd-mask]bad.contract.json:1: ")
    assert "##[" not in linted.stdout + linted.stderr
