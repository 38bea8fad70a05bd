"""The `agent-invariants` command on real files: every command, its exit code and its output.

Exit codes: 0 pass (warnings allowed) / compatible, 1 error violation / regression, 2 bad input
or usage (one line on stderr). Bad input itself is covered in test_bad_input.py.
"""
from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import EXAMPLES, contract, events, jsonl

REFUND = EXAMPLES / "refund-desk"
RELEASE = EXAMPLES / "release-bot"
REFUND_CONTRACT = str(REFUND / "contract.json")
RELEASE_CONTRACT = str(RELEASE / "contract.json")
BASELINE = str(REFUND / "baseline.jsonl")
CANDIDATE = str(REFUND / "candidate.jsonl")
RELEASE_TRACE = str(RELEASE / "trace.jsonl")
RELEASE_FIXED = str(RELEASE / "fixed.json")

CHECK_KEYS = ["schema", "contract", "passed", "error_count", "warning_count", "summary", "results", "violations"]
RESULT_KEYS = ["rule_id", "rule_kind", "passed", "severity", "checked", "violations"]
VIOLATION_KEYS = ["rule_id", "rule_kind", "severity", "message", "event_seq", "event_index", "evidence"]
COMPARE_KEYS = ["schema", "contract", "compatible", "baseline", "candidate", "regressions"]
SUMMARY_KEYS = ["events", "tool_calls", "tool_failures", "tools", "approvals_granted", "outcomes_satisfied",
                "outcomes_violated", "completion_claims", "final_outcome"]
ANSI = re.compile(r"\x1b[\[\]()]")


# ----------------------------------------------------------------------------------------------
# helpers


def in_order(keys: list[str], reference: list[str]) -> list[str]:
    """The reference keys present in `keys`, in the order they appear (extra keys are allowed)."""
    return [key for key in keys if key in reference]


def event_lines(text: str) -> list[int]:
    """Physical line (1-based) of each event of a JSONL trace: blank and `#` lines hold none."""
    return [number for number, line in enumerate(text.split("\n"), 1)
            if line.strip() and not line.strip().startswith("#")]


def referenced_lines(text: str, trace: str) -> list[int]:
    """Every `<trace>:<line>` the text report mentions, in order."""
    return [int(found) for found in re.findall(rf"{re.escape(trace)}:(\d+)\b", text)]


def ordered(value: Any) -> Any:
    """JSON value with every object turned into a list of (key, value) pairs, so order counts."""
    if isinstance(value, dict):
        return [(key, ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [ordered(item) for item in value]
    return value


def quiet_env(**extra: str) -> dict[str, str]:
    """The environment without NO_COLOR (and without variables that force colour on)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS")}
    return {**env, **extra}


def run_without_no_color(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with NO_COLOR removed from the environment and stdout a pipe."""
    return subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=cwd, capture_output=True,
                          env=quiet_env(), timeout=60)


def run_on_terminal(cwd: Path, *args: str, env: dict[str, str]) -> tuple[int, bytes]:
    """Run the CLI with stdout on a pseudo-terminal; return the exit code and what it printed."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "agent_invariants", *args], cwd=cwd, stdout=slave,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    finally:
        os.close(slave)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    proc.stderr.read()
    proc.stderr.close()
    return proc.wait(timeout=60), b"".join(chunks)


# ----------------------------------------------------------------------------------------------
# check and compare on the bundled examples


@pytest.mark.slow
@pytest.mark.parametrize("contract_path, trace, code, name", [
    pytest.param(REFUND_CONTRACT, BASELINE, 0, "refund-desk", id="refund-baseline-passes"),
    pytest.param(REFUND_CONTRACT, CANDIDATE, 1, "refund-desk", id="refund-candidate-fails"),
    pytest.param(RELEASE_CONTRACT, RELEASE_TRACE, 1, "release-bot", id="release-trace-fails"),
    pytest.param(RELEASE_CONTRACT, RELEASE_FIXED, 0, "release-bot", id="release-fixed-array-passes"),
])
def test_check_exit_codes_on_examples(cli, contract_path, trace, code, name):
    result = cli("check", "--contract", contract_path, "--trace", trace)
    assert result.returncode == code, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines()[0] == f"{'PASS' if code == 0 else 'FAIL'}  {name}"
    assert result.stdout.endswith("\n")


@pytest.mark.slow
def test_check_json_report(cli):
    result = cli("check", "--contract", REFUND_CONTRACT, "--trace", CANDIDATE, "--format", "json")
    assert result.returncode == 1, result.stderr
    assert result.stdout.endswith("}\n")
    report = json.loads(result.stdout)
    assert in_order(list(report), CHECK_KEYS) == CHECK_KEYS
    assert report["schema"] == "agent-invariants/check/v1"
    assert report["contract"] == {"name": "refund-desk", "version": 1}
    assert list(report["contract"]) == ["name", "version"]
    assert report["passed"] is False
    assert (report["error_count"], report["warning_count"]) == (9, 1)
    rule_ids = [rule["id"] for rule in json.loads(Path(REFUND_CONTRACT).read_text())["rules"]]
    assert [result["rule_id"] for result in report["results"]] == rule_ids
    for rule_result in report["results"]:
        assert in_order(list(rule_result), RESULT_KEYS) == RESULT_KEYS
        assert rule_result["passed"] == (rule_result["violations"] == [])
    assert report["violations"] == [v for rule_result in report["results"] for v in rule_result["violations"]]
    for violation in report["violations"]:
        assert in_order(list(violation), VIOLATION_KEYS) == VIOLATION_KEYS
    # the verdicts of the reference tool on this trace (spec section 4)
    assert [(v["rule_id"], v["severity"], v["event_seq"], v["event_index"]) for v in report["violations"]] == [
        ("refunds-need-approval", "error", 6, 5), ("refunds-need-approval", "error", 8, 7),
        ("stop-means-stop", "error", 11, 10), ("stop-means-stop", "error", 12, 11),
        ("stop-means-stop", "error", 13, 12),
        ("known-tools", "error", 11, 10), ("no-shell", "error", 11, 10),
        ("refund-seen-before-done", "error", 13, 12), ("refund-seen-before-done", "error", 14, 13),
        ("confidence-is-earned", "warning", 13, 12),
    ]
    assert report["summary"]["events"] == 14 and report["summary"]["tool_calls"] == 4


@pytest.mark.slow
@pytest.mark.parametrize("candidate, code, kinds", [
    pytest.param(CANDIDATE, 1, ["new_rule_failure"] * 5 + ["new_tool", "outcome_regression"], id="regression"),
    pytest.param(BASELINE, 0, [], id="compatible"),
])
def test_compare_on_examples(cli, candidate, code, kinds):
    result = cli("compare", "--contract", REFUND_CONTRACT, "--baseline", BASELINE, "--candidate", candidate,
                 "--format", "json")
    assert result.returncode == code, result.stderr
    assert result.stderr == ""
    report = json.loads(result.stdout)
    assert in_order(list(report), COMPARE_KEYS) == COMPARE_KEYS
    assert report["schema"] == "agent-invariants/compare/v1"
    assert report["contract"] == {"name": "refund-desk", "version": 1}
    assert report["compatible"] is (code == 0)
    assert [regression["kind"] for regression in report["regressions"]] == kinds
    assert all(regression["severity"] == "error" for regression in report["regressions"])
    assert report["baseline"]["schema"] == report["candidate"]["schema"] == "agent-invariants/check/v1"
    assert report["baseline"]["passed"] is True
    assert report["candidate"]["passed"] is (code == 0)


@pytest.mark.slow
def test_compare_text_report(cli):
    result = cli("compare", "--contract", REFUND_CONTRACT, "--baseline", BASELINE, "--candidate", CANDIDATE)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0] == "REGRESSION  refund-desk"
    assert result.stderr == ""


@pytest.mark.slow
def test_pretty_is_an_alias_of_text(cli):
    text = cli("check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE, "--format", "text")
    pretty = cli("check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE, "--format", "pretty")
    assert text.returncode == pretty.returncode == 1
    assert pretty.stdout == text.stdout
    assert text.stdout.startswith("FAIL  release-bot\n")


# ----------------------------------------------------------------------------------------------
# text reports point at physical lines


@pytest.mark.slow
def test_text_names_file_and_physical_line_of_every_violation(cli):
    text = Path(RELEASE_TRACE).read_text(encoding="utf-8")
    lines = event_lines(text)
    deploy = [number for number, raw in enumerate(text.split("\n"), 1)
              if raw.startswith("{") and json.loads(raw).get("tool") == "deploy.production"
              and json.loads(raw)["type"] == "tool.call"]
    assert deploy == [13], "the release-bot example changed: its deploy call is no longer on line 13"

    report = json.loads(cli("check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE,
                            "--format", "json").stdout)
    result = cli("check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE)
    assert result.returncode == 1, result.stderr
    order = [v for v in report["violations"] if v["rule_id"] == "tests-before-deploy"]
    assert [lines[v["event_index"]] for v in order] == [13]
    expected = sorted(lines[v["event_index"]] for v in report["violations"])
    assert expected == [11, 13]  # the secret.read warning on line 11, the deploy without tests on 13
    assert sorted(referenced_lines(result.stdout, RELEASE_TRACE)) == expected
    deploy_line = next(line for line in result.stdout.splitlines() if f"{RELEASE_TRACE}:13" in line)
    assert "seq 8" in deploy_line


@pytest.mark.slow
def test_text_names_physical_line_in_a_json_array_trace(cli, write):
    original = Path(RELEASE_FIXED).read_text(encoding="utf-8").split("\n")
    kept = [raw for raw in original if '"tool": "ci.run_tests", "call_id": "t1", "ok": true' not in raw]
    assert len(kept) == len(original) - 1
    write("array.json", "\n".join(kept))
    deploy_line = next(number for number, raw in enumerate(kept, 1) if '"tool.call", "tool": "deploy.' in raw)
    result = cli("check", "--contract", RELEASE_CONTRACT, "--trace", "array.json")
    assert result.returncode == 1, result.stderr
    assert referenced_lines(result.stdout, "array.json") == [deploy_line]


# ----------------------------------------------------------------------------------------------
# --output, determinism, stdin


@pytest.mark.slow
@pytest.mark.parametrize("args, code", [
    pytest.param(("check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE), 1, id="check-text"),
    pytest.param(("check", "--contract", REFUND_CONTRACT, "--trace", CANDIDATE, "--format", "json"), 1,
                 id="check-json"),
    pytest.param(("compare", "--contract", REFUND_CONTRACT, "--baseline", BASELINE, "--candidate", BASELINE,
                  "--format", "json"), 0, id="compare-json"),
])
def test_output_file_holds_what_stdout_would(cli, tmp_path, args, code):
    report = tmp_path / "reports" / "report.out"
    report.parent.mkdir()
    report.write_text("an older, much longer report that must be replaced entirely\n" * 50)
    to_stdout = cli(*args)
    to_file = cli(*args, "--output", str(report))
    assert to_stdout.returncode == to_file.returncode == code, to_file.stderr
    assert to_file.stdout == ""
    assert to_file.stderr == ""
    assert report.read_bytes() == to_stdout.stdout.encode("utf-8")
    assert sorted(path.name for path in report.parent.iterdir()) == ["report.out"], "temporary files left behind"


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    pytest.param(("check", "--contract", REFUND_CONTRACT, "--trace", CANDIDATE, "--format", "json"),
                 id="check-json"),
    pytest.param(("compare", "--contract", REFUND_CONTRACT, "--baseline", BASELINE, "--candidate", CANDIDATE),
                 id="compare-text"),
])
def test_output_is_identical_across_runs(cli, args):
    first, second = cli(*args), cli(*args)
    assert first.returncode == second.returncode == 1
    assert first.stdout and first.stdout == second.stdout


@pytest.mark.slow
def test_check_reads_trace_from_stdin(cli):
    args = ("check", "--contract", RELEASE_CONTRACT, "--format", "json", "--trace")
    from_file = cli(*args, RELEASE_TRACE)
    from_stdin = cli(*args, "-", stdin=Path(RELEASE_TRACE).read_bytes())
    assert from_stdin.returncode == from_file.returncode == 1, from_stdin.stderr
    file_report, stdin_report = json.loads(from_file.stdout), json.loads(from_stdin.stdout)
    file_report.pop("trace", None)
    stdin_report.pop("trace", None)
    assert stdin_report == file_report


@pytest.mark.slow
def test_summary_reads_trace_from_stdin(cli):
    result = cli("summary", "--trace", "-", stdin=Path(RELEASE_TRACE).read_text(encoding="utf-8"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["events"] == 11


@pytest.mark.slow
@pytest.mark.parametrize("args, unused", [
    (["check", "--contract", REFUND_CONTRACT, "--trace", BASELINE], ["--baseline", "b.jsonl", "--candidate", "c"]),
    (["compare", "--contract", REFUND_CONTRACT, "--baseline", BASELINE, "--candidate", BASELINE], ["--trace", "t"]),
    (["validate", "--contract", REFUND_CONTRACT], ["--trace", "t", "--baseline", "b", "--candidate", "c"]),
    (["summary", "--trace", BASELINE], ["--contract", "c.json", "--baseline", "b", "--candidate", "c"]),
], ids=["check", "compare", "validate", "summary"])
def test_every_command_accepts_the_shared_option_set_and_ignores_what_it_does_not_use(cli, args, unused):
    """Scripts written for the Node tool pass its one option set to every command; the options a
    command does not use are ignored (the files they name need not even exist)."""
    plain = cli(*args, "--format", "json")
    result = cli(*args, *unused, "--format", "json")
    assert result.returncode == plain.returncode == 0, result.stderr
    assert result.stdout == plain.stdout and result.stdout.startswith("{")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["summary", "validate"])
def test_summary_and_validate_validate_format_and_honour_output(cli, command):
    first = ["--trace", BASELINE] if command == "summary" else ["--contract", REFUND_CONTRACT]
    shown = cli(command, *first)
    written = cli(command, *first, "--format", "json", "--output", "out.json")
    assert written.returncode == 0 and written.stdout == ""
    assert (cli.cwd / "out.json").read_text(encoding="utf-8") == shown.stdout
    wrong = cli(command, *first, "--format", "xml")
    assert wrong.returncode == 2 and wrong.stdout == "" and "'xml' is not one of" in wrong.stderr


def test_format_names_are_case_sensitive_as_in_the_node_tool(cli):
    result = cli("check", "--contract", REFUND_CONTRACT, "--trace", BASELINE, "--format", "JSON")
    assert result.returncode == 2 and result.stdout == ""
    assert "'JSON' is not one of" in result.stderr


# ----------------------------------------------------------------------------------------------
# validate


@pytest.mark.slow
def test_validate_prints_normalised_contract_in_schema_order(cli, write):
    write("contract.json", {
        "compare": {"require_same_outcome_or_better": False, "fail_on_new_tools": False},
        "rules": [
            {"within_events": 5, "scope": " payments.refund ", "tool": "  payments.* ", "kind": "require_approval",
             "description": "  ask first  ", "severity": "warning", "id": "pay"},
            {"after": {"claims_completion": True, "tool": " deploy.* ", "type": " tool.call"},
             "before": {"verdict": "satisfied", "outcome_id": " rel-* ", "ok": True, "type": "outcome.observed"},
             "kind": "require_order", "id": "order"},
            {"max": 2, "min": 0, "match": {"type": "x"}, "kind": "require_event", "id": "ev"},
            {"group_by": "tool", "max_attempts": 3, "tool": "\tapi.* ", "kind": "retry_limit", "id": "retry"},
            {"tool": " shell.* ", "kind": "deny_tool", "severity": "error", "id": "no-shell"},
        ],
        "description": "  desc  ",
        "name": "  my contract  ",
        "version": 1,
        "$schema": "../schemas/contract-v1.schema.json",
    })
    result = cli("validate", "--contract", "contract.json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    output = json.loads(result.stdout)
    assert list(output) == ["valid", "contract"]
    assert output["valid"] is True
    compare = output["contract"].pop("compare")
    assert compare == {"fail_on_new_tools": False, "require_same_outcome_or_better": False}
    expected = {
        "version": 1,
        "name": "my contract",
        "description": "desc",
        "rules": [
            {"id": "pay", "severity": "warning", "description": "ask first", "kind": "require_approval",
             "tool": "payments.*", "scope": "payments.refund", "within_events": 5},
            {"id": "order", "kind": "require_order",
             "before": {"type": "outcome.observed", "ok": True, "outcome_id": "rel-*", "verdict": "satisfied"},
             "after": {"type": " tool.call", "tool": "deploy.*", "claims_completion": True}},
            {"id": "ev", "kind": "require_event", "match": {"type": "x"}, "min": 0, "max": 2},
            {"id": "retry", "kind": "retry_limit", "tool": "api.*", "max_attempts": 3, "group_by": "tool"},
            {"id": "no-shell", "severity": "error", "kind": "deny_tool", "tool": "shell.*"},
        ],
    }
    assert ordered(output["contract"]) == ordered(expected)


def test_validate_trims_globs_inside_lists(cli, write):
    write("contract.json", contract(
        {"id": "known", "kind": "allow_tools", "tools": [" crm.* ", "kb.search\t"]},
        {"id": "stop", "kind": "stop_is_final", "stop_type": " control.stop ", "allowed_after": [" run.* "]},
        {"id": "done", "kind": "completion_requires_outcome", "completion_types": [" run.completed "]},
    ))
    result = cli("validate", "--contract", "contract.json")
    assert result.returncode == 0, result.stderr
    rules = json.loads(result.stdout)["contract"]["rules"]
    shown = {"tools": rules[0]["tools"], "stop_type": rules[1]["stop_type"],
             "allowed_after": rules[1]["allowed_after"], "completion_types": rules[2]["completion_types"]}
    assert shown == {"tools": ["crm.*", "kb.search"], "stop_type": "control.stop", "allowed_after": ["run.*"],
                     "completion_types": ["run.completed"]}


def test_validate_prints_integral_numbers_without_fraction(cli):
    """Contract numbers are echoed as JSON.stringify writes them: 50, not 50.0 (spec 7.2, 13)."""
    result = cli("validate", "--contract", REFUND_CONTRACT)
    assert result.returncode == 0, result.stderr
    percent = [line.strip().rstrip(",") for line in result.stdout.splitlines()
               if "max_tool_call_increase_percent" in line]
    assert percent == ['"max_tool_call_increase_percent": 50'], percent
    assert '"threshold": 0.9,' in result.stdout or '"threshold": 0.9\n' in result.stdout


# ----------------------------------------------------------------------------------------------
# summary


SUMMARY_TRACE = jsonl(events(
    {"type": "run.start"},
    {"type": "tool.call", "tool": "zeta", "call_id": "c1"},
    {"type": "tool.result", "tool": "zeta", "call_id": "c1", "ok": False},
    {"type": "tool.call", "tool": "alpha"},
    {"type": "tool.result", "tool": "result-only", "ok": True},
    {"type": "tool.call"},
    {"type": "tool.call", "tool": "Beta"},
    {"type": "approval.granted", "approved": False},
    {"type": "approval.granted"},
    {"type": "approval.granted", "approved": True},
    {"type": "outcome.observed", "outcome_id": "o1", "verdict": "satisfied", "evidence_class": "self_attestation"},
    {"type": "outcome.observed", "outcome_id": "o1", "verdict": "violated"},
    {"type": "agent.message", "claims_completion": True},
    {"type": "run.completed", "claims_completion": True},
    {"type": "run.completed"},
    {"type": "outcome.observed", "outcome_id": "o2"},
    {"type": "tool.result", "ok": False},
    {"type": "tool.call", "tool": "alpha"},
    {"type": "approval.revoked"},
))


@pytest.mark.slow
@pytest.mark.parametrize("trace, expected", [
    pytest.param(RELEASE_TRACE, [11, 3, 0, ["changelog.write", "deploy.production", "git.checkout"], 1, 1, 0, 1,
                                 "satisfied"], id="release-bot"),
    pytest.param("crafted", [19, 5, 2, ["Beta", "alpha", "zeta"], 2, 1, 1, 3, None], id="crafted"),
    pytest.param("empty", [0, 0, 0, [], 0, 0, 0, 0, None], id="empty"),
])
def test_summary_prints_trace_summary(cli, write, trace, expected):
    if trace == "crafted":
        trace = str(write("crafted.jsonl", SUMMARY_TRACE))
    elif trace == "empty":
        trace = str(write("empty.jsonl", "# nothing recorded yet\n\n"))
    result = cli("summary", "--trace", trace)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    summary = json.loads(result.stdout)
    assert list(summary) == SUMMARY_KEYS
    assert summary == dict(zip(SUMMARY_KEYS, expected, strict=True))


# ----------------------------------------------------------------------------------------------
# init


@pytest.mark.slow
def test_init_into_new_folder_then_check_passes_and_second_init_refuses(cli, tmp_path):
    result = cli("init", "new/project")
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "new" / "project"
    contract_file, trace_file = folder / "agent-invariants.json", folder / "agent-trace.jsonl"
    assert sorted(path.name for path in folder.iterdir()) == ["agent-invariants.json", "agent-trace.jsonl"]
    assert "agent-invariants.json" in result.stdout and "agent-trace.jsonl" in result.stdout
    json.loads(contract_file.read_text(encoding="utf-8"))
    assert all(json.loads(raw) for raw in trace_file.read_text(encoding="utf-8").splitlines())

    check = cli("check", "--contract", str(contract_file), "--trace", str(trace_file))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("PASS  ")

    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in (contract_file, trace_file)}
    again = cli("init", "new/project")
    assert again.returncode == 2
    assert again.stdout == ""
    assert len(again.stderr.splitlines()) == 1 and again.stderr.startswith("agent-invariants: ")
    assert "Traceback" not in again.stderr
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in before} == before
    assert sorted(path.name for path in folder.iterdir()) == ["agent-invariants.json", "agent-trace.jsonl"]


def test_init_writes_a_contract_lint_strict_passes(cli, tmp_path):
    assert cli("init").returncode == 0
    lint = cli("lint", "--strict", "--contract", "agent-invariants.json")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert lint.stdout.endswith("0 errors · 0 warnings\n")


def test_init_defaults_to_current_folder(cli, tmp_path):
    result = cli("init")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "agent-invariants.json").is_file() and (tmp_path / "agent-trace.jsonl").is_file()


def test_the_command_init_suggests_runs_as_pasted_into_a_shell(cli, tmp_path):
    """For a folder such as `it's my agent`, the printed `Try:` line was not quoted (hunt 73)."""
    result = cli("init", "it's my agent")
    assert result.returncode == 0, result.stderr
    command = result.stdout.splitlines()[-1].removeprefix("Try: ")
    assert command == ("agent-invariants check --contract 'it'\"'\"'s my agent/agent-invariants.json' --trace "
                       "'it'\"'\"'s my agent/agent-trace.jsonl'")
    as_module = command.replace("agent-invariants", f"{sys.executable} -m agent_invariants", 1)
    ran = subprocess.run(["bash", "-c", as_module], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stderr) == (0, "")


@pytest.mark.slow
def test_init_refuses_when_either_file_exists(cli, write, tmp_path):
    write("agent-trace.jsonl", "# mine\n")
    result = cli("init")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "agent-trace.jsonl" in result.stderr
    assert not (tmp_path / "agent-invariants.json").exists()
    assert (tmp_path / "agent-trace.jsonl").read_text() == "# mine\n"


@pytest.mark.parametrize("where", ["notes.txt", "/dev/null"])
def test_init_into_a_file_says_it_is_not_a_folder(cli, write, where):
    """Found by the fifth hunt: it said `notes.txt: cannot write: File exists`."""
    write("notes.txt", "mine\n")
    result = cli("init", where)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"agent-invariants: {where}: not a folder\n")


# ----------------------------------------------------------------------------------------------
# version, help, usage errors


@pytest.mark.parametrize("args", [["--version"], ["-v"], ["version"]], ids=["--version", "-v", "version"])
def test_version(cli, args):
    import agent_invariants

    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "0.1.0\n" == f"{agent_invariants.__version__}\n"
    assert result.stderr == ""


@pytest.mark.parametrize("args", [[], ["--help"], ["-h"], ["help"]], ids=["no-arguments", "--help", "-h", "help"])
def test_help_prints_usage_and_exits_0(cli, args):
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "Usage" in result.stdout
    for command in ("check", "compare", "validate", "summary", "init"):
        assert re.search(rf"^\s+{command}\b", result.stdout, re.MULTILINE), f"{command} missing from usage"


COMMANDS = ("check", "compare", "validate", "lint", "summary", "stability", "mutate", "record", "convert", "explain",
            "init", "serve")


def test_every_value_in_the_help_is_named_for_what_it_holds(cli):
    """An option's value is named (`--jobs N`, `--max-line-bytes BYTES`), not by its Python type
    (`<int range>`, `<str>`), and a list of arguments is written once as a list (`{TRACE}...`)."""
    for command in COMMANDS:
        result = cli(command, "--help")
        assert result.returncode == 0, result.stderr
        options = [line for line in map(str.lstrip, result.stdout.splitlines())
                   if line.startswith("-") and not line.startswith("-- ")]
        assert options, command
        assert not [line for line in options if re.search(r"<(int|float)\b|<str>|<list", line)], command
        assert not re.search(r"<(int|float|str|path)\b|<list", result.stdout.partition("Options:")[0]), command
        usage = result.stdout.splitlines()[0]
        assert "...}" not in usage and "...]" not in usage, usage
    assert cli("stability", "--help").stdout.startswith("Usage: agent-invariants stability [OPTIONS] {TRACE}...\n")
    assert cli("explain", "--help").stdout.startswith("Usage: agent-invariants explain [OPTIONS] [KIND]\n")
    # an argument is named by what it holds, not by typer's Python type beside it
    assert "\n  TRACE  Trace files of runs" in cli("stability", "--help").stdout
    assert "\n  DIR  Where to write the files." in cli("init", "--help").stdout


@pytest.mark.slow
@pytest.mark.parametrize("args, mention", [
    pytest.param(["frobnicate"], "frobnicate", id="unknown-command"),
    pytest.param(["check", "-c", RELEASE_CONTRACT, "-t", RELEASE_FIXED, "--frobnicate"], "--frobnicate",
                 id="unknown-option"),
    pytest.param(["check", "--contract", RELEASE_CONTRACT], "--trace", id="missing-trace"),
    pytest.param(["compare", "-c", REFUND_CONTRACT, "-b", BASELINE], "--candidate", id="missing-candidate"),
    pytest.param(["check", "-c", RELEASE_CONTRACT, "-t", RELEASE_FIXED, "--format", "xml"], "--format",
                 id="bad-format"),
    pytest.param(["check", "-c", RELEASE_CONTRACT, "-t", RELEASE_FIXED, "extra"], "extra", id="positional"),
    pytest.param(["check", "-c", RELEASE_CONTRACT, "-t", RELEASE_FIXED, "--max-line-bytes", "0"],
                 "--max-line-bytes", id="max-line-bytes-zero"),
])
def test_usage_errors_exit_2_with_one_line(cli, args, mention):
    result = cli(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("agent-invariants: ") and mention in lines[0], lines[0]


# ----------------------------------------------------------------------------------------------
# colour


@pytest.mark.slow
@pytest.mark.parametrize("args, code", [
    pytest.param(("check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE), 1, id="check"),
    pytest.param(("compare", "--contract", REFUND_CONTRACT, "--baseline", BASELINE, "--candidate", CANDIDATE), 1,
                 id="compare"),
])
def test_no_colour_when_stdout_is_not_a_terminal_even_without_no_color(tmp_path, args, code):
    result = run_without_no_color(tmp_path, *args)
    assert result.returncode == code, result.stderr
    assert result.stdout and not ANSI.search(result.stdout.decode("utf-8")), result.stdout[:200]


@pytest.mark.slow
def test_no_colour_on_a_terminal_when_no_color_is_set(tmp_path):
    code, output = run_on_terminal(tmp_path, "check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE,
                                   env=quiet_env(NO_COLOR="1", TERM="xterm-256color"))
    assert code == 1
    assert b"FAIL  release-bot" in output
    assert not ANSI.search(output.decode("utf-8")), output[:200]


@pytest.mark.slow
def test_colour_on_a_terminal_without_no_color(tmp_path):
    code, output = run_on_terminal(tmp_path, "check", "--contract", RELEASE_CONTRACT, "--trace", RELEASE_TRACE,
                                   env=quiet_env(TERM="xterm-256color"))
    assert code == 1
    assert ANSI.search(output.decode("utf-8")), output[:200]


def test_both_command_names_of_the_node_tool_are_declared_for_one_entry():
    import tomllib

    scripts = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"agent-invariants": "agent_invariants.entry:main",
                       "agent-invariants-mcp": "agent_invariants.entry:main"}


@pytest.mark.parametrize("command", ["stability", "mutate"])
def test_commands_without_timelines_list_no_html_format_and_refuse_it(cli, command):
    help_text = cli(command, "--help").stdout
    assert "<text|pretty|json|sarif|junit|markdown|github>" in help_text and "html" not in help_text
    files = ["x.jsonl", "y.jsonl"] if command == "stability" else ["--contract", "c.json", "--trace", "t.jsonl"]
    result = cli(command, "--format", "html", *files)
    assert (result.returncode, result.stdout) == (2, "")
    assert "html is for check, compare and record" in result.stderr and len(result.stderr.splitlines()) == 1


def test_record_help_leaves_out_the_options_it_refuses(cli):
    """record refuses --partial and --jobs (it chooses --partial itself and runs one agent at a time):
    its --help does not offer them; check's does."""
    record_help, check_help = cli("record", "--help").stdout, cli("check", "--help").stdout
    for option in ("--partial", "--jobs"):
        assert option not in record_help and option in check_help
    assert "--max-violations" in record_help and "--format" in record_help
    refused = cli("record", "--jobs", "2", "--out", "t.jsonl", "--", "true")
    assert refused.returncode == 2 and "--partial and --jobs do not apply" in refused.stderr
    # nor does a misspelt option's suggestion (the sixth hunt: `record --jbos` offered --jobs)
    assert cli("record", "--jbos").stderr == ("agent-invariants: No such option: --jbos (Possible options: "
                                               "--verbose) (try 'agent-invariants record --help')\n")
    assert "--jobs" in cli("check", "--jbos").stderr


def test_running_out_of_memory_is_one_line_and_exit_2(cli, tmp_path):
    """Standards: a traceback from user input is a bug; an input too large for the machine is one
    clear line (a MemoryError raised while checking stands in for a machine that runs out)."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}))
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    (tmp_path / "old.json").write_text("OLD")
    script = ("import sys, agent_invariants.api as api\n"
              "def run_check(*args, **kwargs):\n    raise MemoryError\n"
              "api.run_check = run_check\n"
              "from agent_invariants.cli import main\n"
              "main(['check', '-c', 'c.json', '-t', 't.jsonl', '--format', 'json', '-o', 'old.json'])\n")
    result = cli.python("-c", script)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("agent-invariants: out of memory: the input needs more than this machine allows (the "
                             "README's Performance section says what each check keeps; a lower --max-violations "
                             "keeps fewer violations)\n")
    assert (tmp_path / "old.json").read_text() == "OLD"


@pytest.mark.parametrize("command", ["check", "record"])
def test_safety_exit_cannot_be_the_exit_of_bad_input(cli, command):
    """Found by a spec-words reading of the report rules: `--safety-exit 2` was taken, and a
    pipeline could not tell a safety failure from bad input (every command's exit 2)."""
    result = cli(command, "--safety-exit", "2", "--contract", "missing.json", *(["--", "true"] if command == "record"
                                                                                else ["--trace", "t.jsonl"]))
    assert result.returncode == 2
    assert result.stderr == ("agent-invariants: Invalid value for '--safety-exit': 2 is the exit of bad input, which "
                             f"a pipeline could not tell apart; got 2 (try 'agent-invariants {command} --help')\n")
