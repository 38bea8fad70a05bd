"""A second, independent reading of the places the tool is used from, as the README documents them:
the pytest plugin and `agent_invariants.testing` (README "pytest"), the GitHub Action (`action.yml`,
README "GitHub Actions"), the pre-commit hooks (`.pre-commit-hooks.yaml`, README "pre-commit"), the
library (README "The library") and `--format github` (README "The command line").

Written from the README, action.yml, .pre-commit-hooks.yaml, `--help` and the public docstrings only.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from agent_invariants import (
    CheckReport,
    CompareReport,
    ContractError,
    InputError,
    check_trace,
    compare_traces,
    load_contract,
    summarize_trace,
)
from agent_invariants.batch import check_many
from agent_invariants.importers import import_runs
from agent_invariants.importers.records import SourceFile
from agent_invariants.importers.source import ImportedTrace
from agent_invariants.render.json import to_json
from agent_invariants.testing import assert_compatible, assert_trace

import cli_zygote
from support import OTHER_PLUGINS

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable

CONTRACT: dict[str, Any] = {
    "version": 2,
    "name": "spec",
    "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
        {"id": "amount-ok", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$lte": 100}}},
        {"id": "warn-mail", "kind": "deny_tool", "tool": "mail.send", "severity": "warning"},
    ],
}


def call(tool: str, **extra: Any) -> list[dict[str, Any]]:
    """A call of `tool` and its successful result."""
    return [
        {"seq": 1, "type": "tool.call", "tool": tool, "call_id": "c1", **extra},
        {"seq": 2, "type": "tool.result", "tool": tool, "call_id": "c1", "ok": True},
    ]


def lines(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """agent-invariants.json; runs/good.jsonl (passes), runs/refund_bad.jsonl (breaks the error
    rule no-shell on line 1), runs/warn.jsonl (breaks only the warning rule warn-mail)."""
    put(tmp_path / "agent-invariants.json", json.dumps(CONTRACT, indent=2))
    put(tmp_path / "runs" / "good.jsonl", lines(call("crm.lookup")))
    put(tmp_path / "runs" / "refund_bad.jsonl", lines(call("shell.exec")))
    put(tmp_path / "runs" / "warn.jsonl", lines(call("mail.send")))
    return tmp_path


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without what an outer pytest or runner set, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "GITHUB_", "INPUT_", "RUNNER_", "FORCE_COLOR"))}
    return {**env, "NO_COLOR": "1", **extra}


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli_zygote.as_text(cli_zygote.run_python(list(args), cwd, None, env or clean_env()))


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, "-m", "agent_invariants", *args)


def pytest_run(cwd: Path, *args: str, autoload: bool = False) -> subprocess.CompletedProcess[str]:
    """pytest in a subprocess. Other plugins are not loaded (each costs a second) unless
    `autoload`; the plugin is then named with `-p`, as the README's entry point would load it.
    With `autoload`, the plugins of this suite's own dependencies are still left out
    (`support.OTHER_PLUGINS`)."""
    if autoload:
        return run(cwd, "-m", "pytest", "-p", "no:cacheprovider", *OTHER_PLUGINS, *args)
    env = clean_env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return run(cwd, "-m", "pytest", "-p", "no:cacheprovider", "-p", "agent_invariants.pytest_plugin", *args, env=env)


# -- the pytest plugin (README "pytest") -------------------------------------------------------------

def test_plugin_makes_one_item_per_trace_named_after_its_file(project: Path) -> None:
    """README pytest: "Every `*.jsonl` trace under the paths you give becomes a test, named after
    its file"; loaded as shipped (entry point pytest11), no -p needed."""
    result = pytest_run(project, "--agent-invariants-contract", "agent-invariants.json", "runs/",
                        "--collect-only", "-q", autoload=True)
    assert result.returncode == 0, result.stdout + result.stderr
    ids = [line for line in result.stdout.splitlines() if "::" in line]
    assert ids == ["runs/good.jsonl::good.jsonl", "runs/refund_bad.jsonl::refund_bad.jsonl",
                   "runs/warn.jsonl::warn.jsonl"]


def test_plugin_fails_a_breaking_trace_with_the_text_report(project: Path) -> None:
    """README pytest: each trace is a test "failing with the text report"; exit 1 as pytest's
    "tests failed"."""
    result = pytest_run(project, "--agent-invariants-contract", "agent-invariants.json", "runs/", "-q")
    assert result.returncode == 1
    report = cli(project, "check", "--contract", "agent-invariants.json",
                 "--trace", "runs/refund_bad.jsonl").stdout
    assert report.strip() and report.strip() in result.stdout
    assert "1 failed, 2 passed" in result.stdout


def test_plugin_passes_a_trace_with_only_warnings(project: Path) -> None:
    """Plugin docstring: "A trace that breaks an error-severity rule fails ...; warnings pass"."""
    result = pytest_run(project, "--agent-invariants-contract", "agent-invariants.json", "runs/warn.jsonl", "-q")
    assert result.returncode == 0, result.stdout
    assert "1 passed" in result.stdout


@pytest.mark.parametrize(("keyword", "code", "tally"), [
    ("refund", 1, "1 failed, 2 deselected"),
    ("good", 0, "1 passed, 2 deselected"),
])
def test_plugin_k_selects_by_file_name(project: Path, keyword: str, code: int, tally: str) -> None:
    """README pytest: "(`-k refund` selects)"."""
    result = pytest_run(project, "--agent-invariants-contract", "agent-invariants.json", "runs/",
                        "-q", "-k", keyword)
    assert result.returncode == code
    assert tally in result.stdout


def test_plugin_junitxml_has_one_case_per_trace(project: Path) -> None:
    """README pytest: "`--junitxml` then has a test case per trace"."""
    result = pytest_run(project, "--agent-invariants-contract", "agent-invariants.json", "runs/",
                        "-q", "--junitxml=out.xml")
    assert result.returncode == 1
    root = ET.parse(project / "out.xml").getroot()
    cases = {case.get("name", ""): case for case in root.iter("testcase")}
    assert sorted(cases) == ["good.jsonl", "refund_bad.jsonl", "warn.jsonl"]
    failed = [name for name, case in cases.items() if case.find("failure") is not None]
    assert failed == ["refund_bad.jsonl"]
    failure = cases["refund_bad.jsonl"].find("failure")
    assert failure is not None and "[deny_tool.denied]" in (failure.text or "")


def test_plugin_reads_the_pyproject_table(project: Path) -> None:
    """README pytest: "or, once, in `pyproject.toml` (paths relative to it)" with `contract` and
    `traces` globs: only matching traces are collected, and from a sub-folder the paths still
    resolve against pyproject.toml's folder."""
    put(project / "pyproject.toml",
        '[tool.agent-invariants]\ncontract = "agent-invariants.json"\ntraces = ["runs/**/*.jsonl"]\n')
    put(project / "runs" / "deep" / "nested.jsonl", lines(call("crm.lookup")))
    put(project / "other" / "x.jsonl", lines(call("shell.exec")))
    result = pytest_run(project / "other", "..", "--collect-only", "-q")
    ids = sorted(line for line in result.stdout.splitlines() if "::" in line)
    assert ids == ["runs/deep/nested.jsonl::nested.jsonl", "runs/good.jsonl::good.jsonl",
                   "runs/refund_bad.jsonl::refund_bad.jsonl", "runs/warn.jsonl::warn.jsonl"]


def test_plugin_without_a_contract_collects_nothing(project: Path) -> None:
    """Plugin docstring: "Without a contract (neither the option nor the table) the plugin collects
    nothing" (pytest's exit 5, no tests collected)."""
    result = pytest_run(project, "runs/", "-q")
    assert result.returncode == 5, result.stdout


def test_plugin_is_turned_off_by_p_no(project: Path) -> None:
    """Plugin docstring: "`-p no:agent_invariants` turns it off"."""
    put(project / "pyproject.toml", '[tool.agent-invariants]\ncontract = "agent-invariants.json"\n')
    result = pytest_run(project, "-p", "no:agent_invariants", "runs/", "-q", autoload=True)
    assert result.returncode == 5, result.stdout


def test_plugin_stops_on_a_contract_that_does_not_validate(project: Path) -> None:
    """Plugin docstring: "A contract that does not validate stops the session before any test runs
    (a usage error)": pytest's exit 4, the contract's problem shown."""
    put(project / "bad.json", json.dumps({"version": 2, "name": "x",
                                          "rules": [{"id": "a", "kind": "deny_tool", "tool": ""}]}))
    result = pytest_run(project, "--agent-invariants-contract", "bad.json", "runs/", "-q")
    assert result.returncode == 4
    assert "$.rules[0].tool" in result.stdout + result.stderr
    assert "passed" not in result.stdout


def test_plugin_fails_only_the_unreadable_trace_with_the_command_message(project: Path) -> None:
    """Plugin docstring: "an unreadable trace fails its own item with the one-line message the
    command prints"."""
    put(project / "runs" / "broken.jsonl", '{"seq": 1, "type": "tool.call", "tool": "x"}\nnot json\n')
    message = cli(project, "check", "--contract", "agent-invariants.json",
                  "--trace", "runs/broken.jsonl").stderr.strip().splitlines()[-1]
    result = pytest_run(project, "--agent-invariants-contract", "agent-invariants.json", "runs/", "-q")
    assert result.returncode == 1
    assert "2 failed, 2 passed" in result.stdout
    assert message in result.stdout


# -- agent_invariants.testing (README "pytest") ------------------------------------------------------

def test_assert_trace_returns_the_report_when_it_passes(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README: `assert_trace` and `assert_compatible` "fail with the same report and return it
    otherwise"."""
    monkeypatch.chdir(project)
    report = assert_trace("runs/good.jsonl", "agent-invariants.json")
    assert isinstance(report, CheckReport)
    assert report.passed and report.summary.tool_calls == 1


def test_assert_trace_fails_with_the_text_report(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README pytest: assert_trace fails "with the same report" (the text report the CLI prints)."""
    monkeypatch.chdir(project)
    expected = cli(project, "check", "--contract", "agent-invariants.json",
                   "--trace", "runs/refund_bad.jsonl").stdout
    with pytest.raises(AssertionError) as failure:
        assert_trace("runs/refund_bad.jsonl", "agent-invariants.json")
    assert str(failure.value).strip() == expected.strip()


def test_assert_trace_takes_bytes_events_and_a_mapping(project: Path) -> None:
    """README pytest: "a trace may be a path, bytes or a list of events" (testing docstring: a
    contract is a path, a parsed mapping or a loaded `Contract`)."""
    data = (project / "runs" / "good.jsonl").read_bytes()
    assert assert_trace(data, CONTRACT).passed
    assert assert_trace(call("crm.lookup"), load_contract(CONTRACT)).summary.tool_calls == 1
    with pytest.raises(AssertionError, match=r"deny_tool\.denied"):
        assert_trace(call("shell.exec"), CONTRACT)


def test_assert_trace_never_fails_on_warnings(project: Path) -> None:
    """testing docstring: "warnings never fail"."""
    report = assert_trace(project / "runs" / "warn.jsonl", CONTRACT)
    assert (report.passed, report.error_count, report.warning_count) == (True, 0, 1)


def test_assert_compatible_fails_with_the_compare_report(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README pytest: assert_compatible fails with the same report as `compare` prints."""
    monkeypatch.chdir(project)
    expected = cli(project, "compare", "--contract", "agent-invariants.json", "--baseline",
                   "runs/good.jsonl", "--candidate", "runs/refund_bad.jsonl").stdout
    with pytest.raises(AssertionError) as failure:
        assert_compatible("runs/good.jsonl", "runs/refund_bad.jsonl", "agent-invariants.json")
    assert str(failure.value).strip() == expected.strip()


def test_assert_compatible_returns_the_report_when_compatible(project: Path) -> None:
    """README pytest: returns the report otherwise."""
    report = assert_compatible(project / "runs" / "good.jsonl", call("crm.lookup"), CONTRACT)
    assert isinstance(report, CompareReport) and report.compatible


def test_assert_trace_raises_input_error_for_bad_input(project: Path) -> None:
    """testing docstring: "Bad input ... raises `InputError`, as the library does: it is not a
    verdict"."""
    with pytest.raises(InputError) as failure:
        assert_trace(project / "runs" / "missing.jsonl", CONTRACT)
    assert not isinstance(failure.value, AssertionError)


# -- the GitHub Action (action.yml, README "GitHub Actions") ---------------------------------------

def test_action_yml_declares_the_documented_inputs_and_outputs() -> None:
    """README: `fail-on` (`error`, the default; `warning`; `never`), `upload-sarif` and
    `upload-html` default "true"; outputs `verdict`, `exit-code`, `sarif`, `html`; the run step
    passes the inputs as INPUT_* variables to `python -m agent_invariants.github_action`."""
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    inputs = action["inputs"]
    assert inputs["fail-on"]["default"] == "error"
    assert inputs["upload-sarif"]["default"] == "true" and inputs["upload-html"]["default"] == "true"
    # (no contract: the command's own default, agent-invariants.json, else .yaml, else .yml)
    assert inputs["contract"]["default"] == "" and inputs["traces"]["required"]
    assert set(action["outputs"]) == {"verdict", "exit-code", "sarif", "html"}
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    assert "python -m agent_invariants.github_action" in step["run"]
    assert set(step["env"]) == {"INPUT_CONTRACT", "INPUT_TRACES", "INPUT_BASELINE", "INPUT_FORMAT", "INPUT_FAIL_ON",
                                "INPUT_CATEGORY", "INPUT_SARIF_ANCHOR", "INPUT_MAX_LINE_BYTES", "INPUT_NO_LINT"}
    upload = next(s for s in action["runs"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "${{ inputs.artifact-name }}"
    assert inputs["artifact-name"]["default"] == "agent-invariants-report"


class Action:
    """One local run of the action's script, with the runner's files in a temp folder."""

    def __init__(self, cwd: Path, **inputs: str) -> None:
        self.temp = cwd / "runner-temp"
        self.temp.mkdir(exist_ok=True)
        self.output_file = put(cwd / "gh-output.txt", "earlier=kept\n")
        self.summary_file = put(cwd / "gh-summary.md", "earlier summary\n")
        given = {"contract": "agent-invariants.json", **inputs}
        env = clean_env(GITHUB_OUTPUT=str(self.output_file), GITHUB_STEP_SUMMARY=str(self.summary_file),
                        RUNNER_TEMP=str(self.temp), GITHUB_ACTIONS="true",
                        **{f"INPUT_{k.upper()}": v for k, v in given.items()})
        self.result = run(cwd, "-m", "agent_invariants.github_action", env=env)
        self.summary = self.summary_file.read_text(encoding="utf-8")
        pairs = [line.split("=", 1) for line in self.output_file.read_text(encoding="utf-8").splitlines()]
        self.outputs = dict(pairs)


def test_action_failing_trace(project: Path) -> None:
    """README: the action "prints the report, appends the Markdown to the job summary, annotates
    the trace lines" and fails on `error`; outputs verdict fail, exit-code 1 and the files."""
    action = Action(project, traces="runs/refund_bad.jsonl", fail_on="error")
    assert action.result.returncode == 1
    out = action.outputs
    assert (out["earlier"], out["verdict"], out["exit-code"]) == ("kept", "fail", "1")
    assert Path(out["sarif"]).is_file() and Path(out["html"]).is_file()
    assert json.loads(Path(out["sarif"]).read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert "::error file=runs/refund_bad.jsonl,line=1,title=no-shell (deny_tool)::Denied tool called: shell.exec." \
        in action.result.stdout.splitlines()
    assert action.result.stdout.startswith("FAIL  spec\n")
    assert action.summary.startswith("earlier summary\n## ❌ agent-invariants: spec failed\n")


def test_action_passing_trace(project: Path) -> None:
    """README: verdict `pass`; exit-code 0 (action.yml: "0 pass or compatible")."""
    action = Action(project, traces="runs/good.jsonl")
    assert action.result.returncode == 0
    assert (action.outputs["verdict"], action.outputs["exit-code"]) == ("pass", "0")
    assert "## ✅ agent-invariants: spec passed" in action.summary
    assert not [line for line in action.result.stdout.splitlines() if line.startswith("::")]


@pytest.mark.parametrize(("trace", "fail_on", "step", "verdict", "code"), [
    ("warn.jsonl", "error", 0, "pass", "0"),
    ("warn.jsonl", "warning", 1, "fail", "0"),
    ("refund_bad.jsonl", "warning", 1, "fail", "1"),
    ("refund_bad.jsonl", "never", 0, "pass", "1"),
    ("warn.jsonl", "never", 0, "pass", "0"),
])
def test_action_fail_on(project: Path, trace: str, fail_on: str, step: int, verdict: str, code: str) -> None:
    """action.yml fail-on: "Fail the step on `error` ..., on `warning` too, or `never`"; exit-code
    stays the command's; verdict "pass or fail, as fail-on decides"."""
    action = Action(project, traces=f"runs/{trace}", fail_on=fail_on)
    assert action.result.returncode == step
    assert (action.outputs["verdict"], action.outputs["exit-code"]) == (verdict, code)


def test_action_annotates_warnings(project: Path) -> None:
    """README: the action annotates the trace lines (a warning rule as ::warning)."""
    action = Action(project, traces="runs/warn.jsonl")
    assert "::warning file=runs/warn.jsonl,line=1,title=warn-mail (deny_tool)::Denied tool called: mail.send." \
        in action.result.stdout.splitlines()


@pytest.mark.parametrize("inputs", [
    {"traces": "runs/missing.jsonl"},
    {"traces": "runs/good.jsonl", "contract": "bad.json"},
])
def test_action_bad_input_exits_2_even_with_fail_on_never(project: Path, inputs: dict[str, str]) -> None:
    """action.yml exit-code: "2 bad input"; github_action docstring: "Bad input ... always fails,
    with the command's one-line message"."""
    put(project / "bad.json", json.dumps({"version": 2, "name": "x",
                                          "rules": [{"id": "a", "kind": "deny_tool", "tool": ""}]}))
    action = Action(project, fail_on="never", **inputs)
    assert action.result.returncode == 2
    assert (action.outputs["verdict"], action.outputs["exit-code"]) == ("fail", "2")
    problems = action.result.stderr.strip().splitlines()
    assert len(problems) == 1 and problems[0].startswith("agent-invariants: ")


@pytest.mark.parametrize("inputs", [
    {"traces": "runs/good.jsonl", "fail_on": "sometimes"},
    {"traces": ""},
])
def test_action_refuses_bad_inputs_of_its_own(project: Path, inputs: dict[str, str]) -> None:
    """Spec silent on a bad `fail-on` or empty `traces` (action.yml: traces required): the product
    exits 2 with one line; a reasonable reading of "bad input"."""
    action = Action(project, **inputs)
    assert action.result.returncode == 2
    assert len(action.result.stderr.strip().splitlines()) == 1


def test_action_takes_several_traces_separated_by_spaces(project: Path) -> None:
    """action.yml traces: "Trace files, folders or globs to check, separated by spaces"."""
    action = Action(project, traces="runs/good.jsonl runs/warn.jsonl", fail_on="warning")
    assert action.result.returncode == 1
    assert (action.outputs["verdict"], action.outputs["exit-code"]) == ("fail", "0")


@pytest.mark.parametrize(("baseline", "candidate", "step"), [
    ("good.jsonl", "refund_bad.jsonl", 1),
    ("good.jsonl", "good.jsonl", 0),
])
def test_action_with_a_baseline_compares(project: Path, baseline: str, candidate: str, step: int) -> None:
    """action.yml baseline: "when given, the candidate in `traces` is compared with it"; exit-code
    "0 ... compatible, 1 ... regression"; annotations one per regression."""
    action = Action(project, traces=f"runs/{candidate}", baseline=f"runs/{baseline}")
    assert action.result.returncode == step
    assert action.outputs["exit-code"] == str(step)
    annotations = [line for line in action.result.stdout.splitlines() if line.startswith("::")]
    if step:
        assert "::error file=runs/refund_bad.jsonl,line=1,title=compatibility.new_rule_failure::" \
               "Rule newly fails in candidate: no-shell." in annotations
    else:
        assert annotations == []


def test_action_format_json_prints_the_cli_json_report(project: Path) -> None:
    """action.yml format: "The report printed in the job's log"; json is the CLI's JSON report."""
    action = Action(project, traces="runs/warn.jsonl", format="json")
    printed, _ = json.JSONDecoder().raw_decode(action.result.stdout)
    expected = json.loads(cli(project, "check", "--contract", "agent-invariants.json",
                              "--trace", "runs/warn.jsonl", "--format", "json").stdout)
    assert printed == expected


# -- the pre-commit hooks (.pre-commit-hooks.yaml, README "pre-commit") ---------------------------

BAD_RULES = ('{\n  "version": 2,\n  "name": "x",\n  "rules": [\n'
             '    {"id": "a", "kind": "deny_tool", "tool": ""}\n  ]\n}\n')
BAD_YAML = 'version: 2\nname: x\nrules:\n  - id: a\n    kind: deny_tool\n    tool: ""\n'
GOOD_RULES = '{"version": 2, "name": "x", "rules": [{"id": "a", "kind": "deny_tool", "tool": "x"}]}\n'


def hook(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A hook's entry as pre-commit runs it: the entry, then the file names."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    entry = {h["id"]: h["entry"] for h in hooks}[f"agent-invariants-{args[0]}"].split()
    assert entry[:2] == ["python", "-m"]
    return run(cwd, *entry[1:], *args[1:])


def test_hooks_file_declares_both_hooks_on_json_and_yaml() -> None:
    """.pre-commit-hooks.yaml: ids agent-invariants-validate and -lint, both on JSON and YAML."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["agent-invariants-validate", "agent-invariants-lint"]
    for h in hooks:
        pattern = re.compile(h["files"])
        assert [n for n in ("a.json", "b.yaml", "c.yml", "d.jsonl", "e.txt", "f.json.bak") if pattern.search(n)] \
            == ["a.json", "b.yaml", "c.yml"]


def test_validate_hook_passes_a_valid_contract(tmp_path: Path) -> None:
    """README pre-commit: a valid contract passes silently."""
    put(tmp_path / "agent-invariants.json", GOOD_RULES)
    result = hook(tmp_path, "validate", "agent-invariants.json")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize(("name", "text", "line"), [
    ("agent-invariants.json", BAD_RULES, 5),
    ("agent-invariants.yaml", BAD_YAML, 6),
    ("agent-invariants.yml", BAD_YAML, 6),
    ("refunds.contract.json", BAD_RULES, 5),
    ("refunds.contract.yaml", BAD_YAML, 6),
    ("policy/refunds.contract.yml", BAD_YAML, 6),
])
def test_validate_hook_takes_contracts_by_name(tmp_path: Path, name: str, text: str, line: int) -> None:
    """README pre-commit: "each JSON or YAML file named `agent-invariants.json` (`.yaml`, `.yml`) or
    `*.contract.json`" (hooks file: also .yaml, .yml), problems printed "as `check` does"."""
    put(tmp_path / name, text)
    result = hook(tmp_path, "validate", name)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f'agent-invariants: {name}:{line}: $.rules[0].tool: expected a non-empty string, got ""']


def test_validate_hook_prints_what_the_validate_command_prints(tmp_path: Path) -> None:
    """README pre-commit: problems printed as the command does."""
    put(tmp_path / "x.contract.json", BAD_RULES)
    command = cli(tmp_path, "validate", "--contract", "x.contract.json")
    assert hook(tmp_path, "validate", "x.contract.json").stderr == command.stderr


SCHEMA_URL = "https://raw.githubusercontent.com/agent-invariants/agent-invariants/main/schemas/contract-v{}.schema.json"


@pytest.mark.parametrize(("name", "version"), [("policy.json", 2), ("policy.json", 1), ("policy.yaml", 2)])
def test_validate_hook_takes_a_contract_by_its_schema(tmp_path: Path, name: str, version: int) -> None:
    """README pre-commit: "or whose `$schema` names an agent-invariants contract schema" (the URL
    README "Writing contracts" gives editors)."""
    document = {"$schema": SCHEMA_URL.format(version), **json.loads(BAD_RULES), "version": version}
    text = json.dumps(document, indent=2) if name.endswith(".json") else yaml.safe_dump(document, sort_keys=False)
    put(tmp_path / name, text)
    result = hook(tmp_path, "validate", name)
    assert result.returncode == 1
    assert result.stderr.startswith(f"agent-invariants: {name}:") and "$.rules[0].tool" in result.stderr


def test_validate_hook_passes_over_a_file_larger_than_any_contract(tmp_path: Path) -> None:
    """A fixture of 17 MiB holding contracts deeper down: no contract is that large (16 MiB), and
    the file was refused for its size as if it were one."""
    fixture = {"cases": [{"$schema": SCHEMA_URL.format(2), **json.loads(BAD_RULES)}], "blob": "x" * (17 << 20)}
    put(tmp_path / "fixture.json", json.dumps(fixture))
    result = hook(tmp_path, "validate", "fixture.json")
    assert (result.returncode, result.stderr) == (0, "")


def test_validate_hook_finds_the_schema_after_many_rules(tmp_path: Path) -> None:
    """A generated contract may write `$schema` last, past its first 64 KiB (the hook looked no
    further, and passed an invalid contract)."""
    rules = [{"id": f"r{n}", "kind": "deny_tool", "tool": f"tool.{n:04d}." + "x" * 80} for n in range(1000)]
    document = {"version": 2, "name": "late", "rules": [*rules, {"id": "broken", "kind": "deny_tool"}],
                "$schema": SCHEMA_URL.format(2)}
    put(tmp_path / "policy.json", json.dumps(document, indent=2))
    assert (tmp_path / "policy.json").stat().st_size > 128 * 1024
    result = hook(tmp_path, "validate", "policy.json")
    assert result.returncode == 1
    assert result.stderr.startswith("agent-invariants: policy.json:") and "$.rules[1000]" in result.stderr


@pytest.mark.parametrize("schema", [
    "https://example.com/schemas/contract-v99.schema.json",
    "https://example.com/schemas/contract-v1.schema.json",   # another project's contract schema
    "../schemas/contract-v2.schema.json.bak",
    "https://raw.githubusercontent.com/agent-invariants/agent-invariants/main/schemas/contract-v2-pack.schema.json",
    "https://json.schemastore.org/package.json",
    "https://raw.githubusercontent.com/agent-invariants/agent-invariants/main/schemas/check-report-v1.schema.json",
])
def test_validate_hook_passes_over_other_schemas(tmp_path: Path, schema: str) -> None:
    """README pre-commit: only a `$schema` naming a *contract* schema makes a file a contract."""
    put(tmp_path / "data.json", json.dumps({"$schema": schema, "version": 2, "rules": 5}))
    result = hook(tmp_path, "validate", "data.json")
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize(("name", "document"), [
    # an MCP request fixture that carries a contract, a wrapper, a list of contracts
    ("request.json", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {
        "contract": {"$schema": SCHEMA_URL.format(2), **json.loads(BAD_RULES)}}}}),
    ("nested.yaml", {"data": {"$schema": SCHEMA_URL.format(1)}}),
    ("list.json", [{"$schema": SCHEMA_URL.format(2), **json.loads(BAD_RULES)}]),
])
def test_validate_hook_passes_over_a_contract_schema_below_the_top(tmp_path: Path, name: str, document: Any) -> None:
    """README pre-commit: a file is a contract when its `$schema` names a contract schema: the
    file's own `$schema`, on its top-level object, not one of a contract it holds deeper down."""
    put(tmp_path / name, json.dumps(document, indent=2) if name.endswith(".json") else yaml.safe_dump(document))
    result = hook(tmp_path, "validate", name)
    assert (result.returncode, result.stderr) == (0, "")


def test_validate_hook_reports_a_file_naming_a_contract_schema_it_cannot_read(tmp_path: Path) -> None:
    put(tmp_path / "policy.json", '{"$schema": "' + SCHEMA_URL.format(2) + '", "version": 2, "rules": [\n')
    result = hook(tmp_path, "validate", "policy.json")
    assert result.returncode == 1
    assert result.stderr.startswith("agent-invariants: policy.json: invalid JSON at line 2")


def test_hooks_install_what_yaml_contracts_and_schemas_need() -> None:
    """The hooks run in an environment of their own, which has only what the hook manifest names:
    YAML contracts need PyYAML, and output_schema or tool_args schemas jsonschema."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    for h in hooks:
        names = {re.split(r"[<>=\[]", dependency)[0] for dependency in h["additional_dependencies"]}
        assert {"pyyaml", "jsonschema", "referencing"} <= names


def test_validate_hook_takes_agent_invariants_dot_anything_json(tmp_path: Path) -> None:
    """hooks docstring: "its name is `agent-invariants.json` (..., or `agent-invariants.<anything>.json`...)"."""
    put(tmp_path / "agent-invariants.prod.json", BAD_RULES)
    assert hook(tmp_path, "validate", "agent-invariants.prod.json").returncode == 1


def test_validate_hook_prints_one_line_per_problem(tmp_path: Path) -> None:
    """Hooks file: "one line per problem, with file, line and JSON path", as `validate` prints."""
    put(tmp_path / "two.contract.json", '{\n  "version": 2,\n  "name": "x",\n  "rules": [\n'
        '    {"id": "a", "kind": "deny_tool", "tool": ""},\n    {"id": "b", "kind": "deny_tool"}\n  ]\n}\n')
    result = hook(tmp_path, "validate", "two.contract.json")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        'agent-invariants: two.contract.json:5: $.rules[0].tool: expected a non-empty string, got ""',
        "agent-invariants: two.contract.json:6: $.rules[1]: missing required field `tool`",
    ]
    assert result.stderr == cli(tmp_path, "validate", "--contract", "two.contract.json").stderr


def test_validate_hook_passes_over_other_files(tmp_path: Path) -> None:
    """Hooks file: "other files are passed over", even an invalid contract under another name or a
    file that is not JSON."""
    put(tmp_path / "other.json", BAD_RULES)
    put(tmp_path / "package.json", "not json at all")
    put(tmp_path / "config.yaml", ": : :")
    result = hook(tmp_path, "validate", "other.json", "package.json", "config.yaml")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_validate_hook_reports_every_bad_contract(tmp_path: Path) -> None:
    """README pre-commit: one line per problem, each naming its file; exit 1 if any is bad."""
    put(tmp_path / "a.contract.json", BAD_RULES)
    put(tmp_path / "agent-invariants.json", GOOD_RULES)
    put(tmp_path / "b.contract.yml", BAD_YAML)
    result = hook(tmp_path, "validate", "a.contract.json", "agent-invariants.json", "b.contract.yml")
    assert result.returncode == 1
    assert [line.split(":")[1].strip() for line in result.stderr.splitlines()] == ["a.contract.json", "b.contract.yml"]


def test_validate_hook_with_no_files_passes(tmp_path: Path) -> None:
    """Spec silent on an empty file list: passing is the reasonable reading (nothing to refuse)."""
    assert hook(tmp_path, "validate").returncode == 0


LINT_ERROR = """{
  "version": 2,
  "name": "x",
  "rules": [
    {"id": "a", "kind": "deny_tool", "tool": "pay"},
    {"id": "b", "kind": "require_event", "match": {"type": "tool.call", "tool": "pay"}, "min": 1}
  ]
}
"""
LINT_WARNING = """{
  "version": 2,
  "name": "x",
  "rules": [
    {"id": "a", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "b", "kind": "deny_tool", "tool": "shell.exec"}
  ]
}
"""


def test_lint_hook_refuses_a_lint_error(tmp_path: Path) -> None:
    """Hooks file: lint refuses "contracts [that] have lint errors (rules no trace can pass)";
    hooks docstring: each finding as `file:line: error <code> [<rule ids>]: <message>`."""
    put(tmp_path / "agent-invariants.json", LINT_ERROR)
    result = hook(tmp_path, "lint", "agent-invariants.json")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "agent-invariants.json:6: error required_but_forbidden [a, b]: pay must be called (b needs 1 call), "
        "but a (deny_tool) denies it."]


@pytest.mark.parametrize(("args", "code"), [((), 0), (("--strict",), 1)])
def test_lint_hook_warnings_fail_only_with_strict(tmp_path: Path, args: tuple[str, ...], code: int) -> None:
    """Hooks file: "add args [--strict] to refuse warnings too"."""
    put(tmp_path / "x.contract.json", LINT_WARNING)
    result = hook(tmp_path, "lint", *args, "x.contract.json")
    assert result.returncode == code
    assert result.stdout.splitlines() == [
        "x.contract.json:6: warning shadowed_rule [a, b]: b is shadowed by a: every violation of b is one of a too."]


def test_lint_hook_passes_a_clean_contract_even_strict(tmp_path: Path) -> None:
    """Hooks file: a clean contract passes, with --strict too."""
    put(tmp_path / "agent-invariants.json", GOOD_RULES)
    result = hook(tmp_path, "lint", "--strict", "agent-invariants.json")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_lint_hook_refuses_an_invalid_contract(tmp_path: Path) -> None:
    """hooks docstring: "The exit is 1 when a contract does not validate"."""
    put(tmp_path / "x.contract.json", BAD_RULES)
    result = hook(tmp_path, "lint", "x.contract.json")
    assert result.returncode == 1
    assert "x.contract.json:5: $.rules[0].tool" in result.stderr


def test_lint_hook_passes_over_other_files(tmp_path: Path) -> None:
    """Hooks file: other files are passed over by lint too."""
    put(tmp_path / "rules.json", LINT_ERROR)
    assert hook(tmp_path, "lint", "--strict", "rules.json").returncode == 0


# -- --format github (README "The command line") ---------------------------------------------------

def github(cwd: Path, contract: dict[str, Any], trace: str,
           events: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    put(cwd / "c.json", json.dumps(contract))
    put(cwd / trace, lines(events))
    return cli(cwd, "check", "--contract", "c.json", "--trace", trace, "--format", "github")


ALLOW_OK = {"version": 2, "name": "spec", "rules": [{"id": "only-ok", "kind": "allow_tools", "tools": ["ok"]}]}


def test_github_format_one_command_per_violation_then_totals(project: Path) -> None:
    """README: "one per violation ..., then the totals" in the documented shape."""
    put(project / "both.jsonl", lines([
        {"seq": 1, "type": "tool.call", "tool": "shell.exec", "call_id": "a"},
        {"seq": 2, "type": "tool.result", "tool": "shell.exec", "call_id": "a", "ok": True},
        {"seq": 3, "type": "tool.call", "tool": "mail.send", "call_id": "b"},
        {"seq": 4, "type": "tool.result", "tool": "mail.send", "call_id": "b", "ok": True},
    ]))
    result = cli(project, "check", "--contract", "agent-invariants.json", "--trace", "both.jsonl", "--format", "github")
    assert result.returncode == 1
    assert result.stdout.splitlines()[:3] == [
        "::error file=both.jsonl,line=1,title=no-shell (deny_tool)::Denied tool called: shell.exec.",
        "::warning file=both.jsonl,line=3,title=warn-mail (deny_tool)::Denied tool called: mail.send.",
        "FAIL  spec",
    ]
    assert "4 events · 2 tool calls · 1 error · 1 warning" in result.stdout


def test_github_format_warnings_alone_exit_0(project: Path) -> None:
    """README exit codes: warnings never change the exit code."""
    result = cli(project, "check", "--contract", "agent-invariants.json", "--trace", "runs/warn.jsonl",
                 "--format", "github")
    assert result.returncode == 0
    assert result.stdout.startswith("::warning file=runs/warn.jsonl,line=1,")


def test_github_format_escapes_properties(tmp_path: Path) -> None:
    """README: "escaped as the runner expects (`%25`, ..., and `%3A`, `%2C` in properties)"."""
    result = github(tmp_path, ALLOW_OK, "w,e:i%rd.jsonl", call("ok2"))
    assert result.stdout.splitlines()[0] == \
        "::error file=w%2Ce%3Ai%25rd.jsonl,line=1,title=only-ok (allow_tools)::Tool is outside the allowlist: ok2."


def test_github_format_escapes_percent_but_not_colon_comma_in_the_message(tmp_path: Path) -> None:
    """README: `%25` everywhere; `%3A`, `%2C` only "in properties" (the message keeps : and ,)."""
    result = github(tmp_path, ALLOW_OK, "t.jsonl", call("a%b:c,d"))
    assert result.stdout.splitlines()[0] == \
        "::error file=t.jsonl,line=1,title=only-ok (allow_tools)::Tool is outside the allowlist: a%25b:c,d."


def test_github_format_line_breaks_cannot_end_or_start_a_command(tmp_path: Path) -> None:
    """README: "a trace cannot end an annotation early or start another command". A message shows
    line breaks from the input as `\\r\\n`, as every format does (README "Exit codes"), so no raw
    CR or LF reaches the command."""
    result = github(tmp_path, ALLOW_OK, "t.jsonl", call("x\r\n::error file=forged::forged"))
    commands = [line for line in result.stdout.split("\n") if line.startswith("::")]
    assert len(commands) == 1
    assert "\r" not in result.stdout
    message = commands[0].split("::", 2)[2]
    assert message == "Tool is outside the allowlist: x\\r\\n::error file=forged::forged."


def test_github_format_file_name_with_line_break_stays_one_command(tmp_path: Path) -> None:
    """README: properties escaped; a file name holding CR LF must not split the command, and it
    reaches the runner as `%0D%0A`, which it reads back as the file's real name."""
    result = github(tmp_path, ALLOW_OK, "n\r\nl.jsonl", call("ok2"))
    first = result.stdout.split("\n")[0]
    assert first == ("::error file=n%0D%0Al.jsonl,line=1,title=only-ok (allow_tools)::"
                     "Tool is outside the allowlist: ok2.")


def test_github_format_file_name_keeps_percent_colon_and_comma_and_shows_other_controls(tmp_path: Path) -> None:
    """The runner reads back `%25`, `%3A` and `%2C` in a property; an escape character, which it
    cannot carry, is shown as `\\x1b` as in every format."""
    result = github(tmp_path, ALLOW_OK, "a%b:c,d\x1be.jsonl", call("ok2"))
    first = result.stdout.split("\n")[0]
    assert first.startswith("::error file=a%25b%3Ac%2Cd\\x1be.jsonl,line=1,title=only-ok (allow_tools)::")


def test_github_format_compare_one_command_per_regression(project: Path) -> None:
    """README: "(or per regression for `compare`)"."""
    result = cli(project, "compare", "--contract", "agent-invariants.json", "--baseline", "runs/good.jsonl",
                 "--candidate", "runs/refund_bad.jsonl", "--format", "github")
    assert result.returncode == 1
    commands = [line for line in result.stdout.splitlines() if line.startswith("::")]
    report = json.loads(cli(project, "compare", "--contract", "agent-invariants.json", "--baseline",
                            "runs/good.jsonl", "--candidate", "runs/refund_bad.jsonl", "--format", "json").stdout)
    assert len(commands) == len(report["regressions"]) == 2
    assert all(c.startswith("::error file=runs/refund_bad.jsonl,line=1,title=compatibility.") for c in commands)


# -- the library (README "The library") ------------------------------------------------------------

V2_CONTRACT: dict[str, Any] = {
    "version": 2,
    "name": "lib",
    "rules": [
        {"id": "amount", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$lte": 100}}},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
        {"id": "one-refund", "kind": "tool_calls", "tool": "refund", "max": 1},
    ],
}
V2_EVENTS = [
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "a", "args": {"amount": 500}},
    {"seq": 2, "type": "tool.result", "tool": "refund", "call_id": "a", "ok": True},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "b", "args": {"amount": 5}},
    {"seq": 4, "type": "tool.result", "tool": "refund", "call_id": "b", "ok": True},
]


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    contract = dict(V2_CONTRACT)
    put(tmp_path / "c.json", json.dumps(contract, indent=2))
    put(tmp_path / "t.jsonl", lines(V2_EVENTS))
    put(tmp_path / "base.jsonl", lines(V2_EVENTS[2:]))
    return tmp_path


def cli_json(cwd: Path, *args: str) -> Any:
    return json.loads(cli(cwd, *args, "--format", "json").stdout)


def test_library_contract_is_valid(lib: Path) -> None:
    """Guard: the v2 contract used below validates with the CLI."""
    result = cli(lib, "validate", "--contract", "c.json")
    assert result.returncode == 0, result.stderr


def test_check_trace_equals_the_cli_json(lib: Path) -> None:
    """README The library: check_trace gives the report `check --format json` prints
    (`render.json.to_json(report)` writes it)."""
    report = check_trace(load_contract("c.json"), "t.jsonl")
    assert json.loads(to_json(report)) == cli_json(lib, "check", "--contract", "c.json", "--trace", "t.jsonl")
    assert [(v.rule_id, v.line) for v in report.violations] == [("amount", 1), ("one-refund", 3)]


def test_check_trace_takes_bytes_and_events_alike(lib: Path) -> None:
    """README: "a path, "-", bytes, or a list of event dicts"."""
    contract = load_contract("c.json")
    by_path = check_trace(contract, "t.jsonl")
    for trace in ((lib / "t.jsonl").read_bytes(), V2_EVENTS):
        other = check_trace(contract, trace)
        assert [(v.rule_id, v.code, v.event_seq) for v in other.violations] == \
            [(v.rule_id, v.code, v.event_seq) for v in by_path.violations]
        assert (other.error_count, other.warning_count) == (by_path.error_count, by_path.warning_count)


def test_check_trace_options_match_the_cli(lib: Path) -> None:
    """README: check_trace takes `max_violations` (as `--max-violations`); `line_lengths=True`
    gives each violation `line_length`."""
    report = check_trace(load_contract("c.json"), "t.jsonl", max_violations=1, line_lengths=True)
    expected = cli_json(lib, "check", "--contract", "c.json", "--trace", "t.jsonl", "--max-violations", "1")
    got = json.loads(to_json(report))
    for violation in got["violations"] + [v for r in got["results"] for v in r["violations"]]:
        violation.pop("line_length", None)
    assert got == expected
    first = (lib / "t.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert report.violations[0].line_length == len(first.encode())


def test_compare_traces_equals_the_cli_json(lib: Path) -> None:
    """README The library: compare_traces = `compare --format json`; `compat.compatible` and
    `[r.kind for r in compat.regressions]`."""
    compat = compare_traces(load_contract("c.json"), "base.jsonl", "t.jsonl")
    expected = cli_json(lib, "compare", "--contract", "c.json", "--baseline", "base.jsonl", "--candidate", "t.jsonl")
    assert json.loads(to_json(compat)) == expected
    assert compat.compatible is False
    assert [r.kind for r in compat.regressions] == [r["kind"] for r in expected["regressions"]]


def test_summarize_trace_equals_the_summary_command(lib: Path) -> None:
    """README: `summary --trace T` counts; the library's summarize_trace is the same."""
    expected = json.loads(cli(lib, "summary", "--trace", "t.jsonl").stdout)
    assert json.loads(to_json(summarize_trace("t.jsonl"))) == expected


def test_reports_are_plain_data_through_msgspec(lib: Path) -> None:
    """README: "`msgspec.to_builtins(report, enc_hook=float)` gives plain data"."""
    data = msgspec.to_builtins(check_trace(load_contract("c.json"), "t.jsonl"), enc_hook=float)
    assert json.loads(json.dumps(data))["error_count"] == 2


def test_imported_trace_equals_the_cli_json(lib: Path) -> None:
    """Importers docstring: an imported run is a TraceSource like a native one; the report equals
    `check --input-format auto --format json` on the same file."""
    source = REPO / "examples" / "imports" / "pydantic-ai.otlp.jsonl"
    contract_path = REPO / "examples" / "imports" / "contract.json"
    runs = import_runs(str(source), "auto")
    report = check_trace(load_contract(str(contract_path)), ImportedTrace(SourceFile.of(str(source)), runs[0]))
    expected = cli_json(lib, "check", "--contract", str(contract_path), "--trace", str(source),
                        "--input-format", "auto")
    assert json.loads(to_json(report)) == expected


def test_check_many_equals_the_cli_batch_json(lib: Path) -> None:
    """README: "`agent_invariants.batch.check_many(contract, paths, jobs=4)` is the library side of
    several traces"."""
    batch = check_many(load_contract("c.json"), ["t.jsonl", "base.jsonl"], jobs=1)
    expected = cli_json(lib, "check", "--contract", "c.json", "--trace", "t.jsonl", "--trace", "base.jsonl",
                        "--jobs", "1")
    assert json.loads(to_json(batch)) == expected


def test_bad_contract_raises_contract_error(lib: Path) -> None:
    """README: "Bad input raises `agent_invariants.InputError` (`ContractError`, `TraceError`)"; the
    message names the JSON path as the CLI's line does."""
    put(lib / "bad.json", json.dumps({"version": 2, "name": "x",
                                      "rules": [{"id": "a", "kind": "deny_tool", "tool": ""}]}))
    with pytest.raises(ContractError) as failure:
        load_contract("bad.json")
    assert isinstance(failure.value, InputError)
    line = cli(lib, "validate", "--contract", "bad.json").stderr.strip()
    assert line == f"agent-invariants: {failure.value}"


def test_load_contract_without_pack_paths_refuses_a_path_in_extends(lib: Path) -> None:
    """README: with `pack_paths=False`, "`extends` may then name only shipped packs, and a path is
    refused without a look at the disk"."""
    put(lib / "pack.json", json.dumps({"version": 2, "name": "p", "rules": []}))
    document = {**V2_CONTRACT, "extends": ["pack.json"]}
    with pytest.raises(ContractError):
        load_contract(document, pack_paths=False)


def test_plugin_collects_only_jsonl_traces(project: Path) -> None:
    """README pytest: "Every `*.jsonl` trace under the paths you give becomes a test" (not .json)."""
    put(project / "runs" / "x.json", lines(call("shell.exec")))
    result = pytest_run(project, "--agent-invariants-contract", "agent-invariants.json", "runs/",
                        "--collect-only", "-q")
    assert "x.json" not in result.stdout and "3 tests collected" in result.stdout


def test_action_sarif_points_at_the_trace_relative_to_the_workspace(project: Path) -> None:
    """README SARIF: one result per violation at the offending line, URIs relative (the action runs
    from the checkout)."""
    action = Action(project, traces="runs/refund_bad.jsonl")
    sarif = json.loads(Path(action.outputs["sarif"]).read_text(encoding="utf-8"))
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "runs/refund_bad.jsonl"
    assert location["region"]["startLine"] == 1


def test_github_format_batch_annotates_every_trace(project: Path) -> None:
    """README: one command per violation; "every format renders" a batch."""
    result = cli(project, "check", "--contract", "agent-invariants.json", "--trace", "runs/",
                 "--format", "github", "--jobs", "1")
    assert result.returncode == 1
    assert [line for line in result.stdout.splitlines() if line.startswith("::")] == [
        "::error file=runs/refund_bad.jsonl,line=1,title=no-shell (deny_tool)::Denied tool called: shell.exec.",
        "::warning file=runs/warn.jsonl,line=1,title=warn-mail (deny_tool)::Denied tool called: mail.send.",
    ]


def test_github_format_whole_trace_violation_has_no_line(tmp_path: Path) -> None:
    """Spec silent on where a violation of the whole trace (no event) is annotated: the product
    names the file without `line=`, a reasonable reading."""
    contract = {"version": 2, "name": "need", "rules": [
        {"id": "must-refund", "kind": "require_event", "match": {"type": "tool.call", "tool": "refund"}, "min": 1}]}
    result = github(tmp_path, contract, "t.jsonl", call("crm.lookup"))
    assert result.stdout.splitlines()[0].startswith("::error file=t.jsonl,title=must-refund (require_event)::")


def test_read_contract_and_contract_lines(tmp_path: Path) -> None:
    """README The library: "`read_contract(path)` reads a contract file once ... into a
    `ContractSource` that `load_contract` accepts, and `contract_lines(source)` gives its rules'
    lines from the same bytes"."""
    from agent_invariants.contract import contract_lines, read_contract

    put(tmp_path / "x.contract.json", LINT_WARNING)
    source = read_contract(tmp_path / "x.contract.json")
    assert contract_lines(source).rules == {"a": 5, "b": 6}
    report = check_trace(load_contract(source), call("shell.exec"))
    assert [v.rule_id for v in report.violations] == ["a", "b"]


def test_compare_traces_jobs_gives_the_same_report(lib: Path) -> None:
    """README: "`compare_traces(..., jobs=2)` checks a large baseline file in a second process";
    the report is the same either way (compare_traces docstring)."""
    contract = load_contract("c.json")
    one = compare_traces(contract, "base.jsonl", "t.jsonl")
    two = compare_traces(contract, "base.jsonl", "t.jsonl", jobs=2)
    assert to_json(one) == to_json(two)


def test_action_fail_on_warning_judges_the_candidate_of_a_compare(project: Path) -> None:
    """github_action docstring: `fail-on: warning` fails "also when any warning-severity rule
    breaks (in the candidate, for compare)", even when the compare itself is compatible."""
    action = Action(project, traces="runs/warn.jsonl", baseline="runs/warn.jsonl", fail_on="warning")
    assert action.result.returncode == 1
    assert (action.outputs["verdict"], action.outputs["exit-code"]) == ("fail", "0")


def test_action_takes_a_glob(project: Path) -> None:
    """action.yml traces: "Trace files, folders or globs"."""
    action = Action(project, traces="runs/*.jsonl")
    assert action.result.returncode == 1
    assert action.outputs["exit-code"] == "1"
    assert len([line for line in action.result.stdout.splitlines() if line.startswith("::")]) == 2
