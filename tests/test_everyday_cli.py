"""The conveniences of everyday use: notices and --strict, --format github, --color, batch text
detail, --max-warnings, the default contract, contracts on stdin, --sarif-root, completion, help."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_invariants import check_trace

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "refund-desk"

CONTRACT = {"version": 1, "name": "desk", "rules": [
    {"id": "pay-approval", "kind": "require_approval", "tool": "payments.*"},
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "careful", "kind": "deny_tool", "tool": "kb.delete", "severity": "warning"},
]}


def lines(*events: dict) -> str:
    return "".join(json.dumps({"seq": seq, **event}) + "\n" for seq, event in enumerate(events, 1))


PAID = lines({"type": "approval.granted"}, {"type": "tool.call", "tool": "payments.refund"})


@pytest.fixture
def desk(write):
    write("agent-invariants.json", json.dumps(CONTRACT))
    write("paid.jsonl", PAID)
    return write


# -- notices and --strict ------------------------------------------------------------------------

def test_a_misspelt_event_type_is_a_warning_with_its_line_and_count(cli, desk):
    desk("t.jsonl", lines({"type": "approval.granted"}, {"type": "Tool.Call", "tool": "payments.refund"},
                          {"type": "Tool.Call", "tool": "payments.refund"}))
    result = cli("check", "-t", "t.jsonl")
    assert result.returncode == 0
    assert ('agent-invariants: warning: t.jsonl:2: event type "Tool.Call" looks like "tool.call"; rules match '
            "types exactly, so none matched it (2 events)") in result.stderr.splitlines()


@pytest.mark.parametrize(("written", "meant"), [("tool_name", "tool"), ("callId", "call_id"), ("Tool", "tool")])
def test_a_misspelt_field_is_a_warning(cli, desk, written, meant):
    desk("t.jsonl", lines({"type": "tool.call", written: "payments.refund"}))
    result = cli("check", "-t", "t.jsonl")
    assert f'agent-invariants: warning: t.jsonl:1: field "{written}" looks like "{meant}"; rules read only ' \
           f'"{meant}"' in result.stderr.splitlines()


def test_a_field_the_events_also_have_as_written_is_not_a_misspelling(cli, desk):
    desk("t.jsonl", lines({"type": "approval.granted"}, {"type": "tool.call", "tool": "payments.refund",
                                                         "tool_name": "Refunds"}))
    assert cli("check", "-t", "t.jsonl").stderr == ""


def test_an_empty_trace_and_a_rule_that_checked_nothing_are_warnings(cli, desk):
    desk("empty.jsonl", "\n# nothing yet\n")
    result = cli("check", "-t", "empty.jsonl")
    assert result.returncode == 0
    stderr = result.stderr.splitlines()
    assert "agent-invariants: warning: empty.jsonl: the trace has no events, so no rule saw anything" in stderr
    assert any('rule "pay-approval" (require_approval) checked nothing' in line for line in stderr)
    # a deny rule that matched nothing passed: that is its normal state, not a notice
    assert not any("no-shell" in line for line in stderr)


def test_a_rule_that_failed_having_checked_nothing_gets_its_violation_and_no_warning(cli, write):
    """A `require_event` that found none failed, and says so: "it may guard nothing" would
    contradict its verdict. One that passed having checked nothing (here `require_approval`,
    with no payment in the run) is still a warning."""
    write("c.json", json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "started", "kind": "require_event", "match": {"type": "policy.checked"}},
        {"id": "approved", "kind": "require_approval", "tool": "payments.*"}]}))
    write("t.jsonl", lines({"type": "run.start"}))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "json")
    assert result.returncode == 1
    assert [notice["rule_id"] for notice in json.loads(result.stdout)["notices"]] == ["approved"]
    assert result.stderr.splitlines() == [
        'agent-invariants: warning: t.jsonl: rule "approved" (require_approval) checked nothing in this trace; it '
        "may guard nothing (do its tools or types appear in the trace?)"]


def test_warnings_about_standard_input_name_it_as_its_errors_do(cli, write):
    """`-` is what the user typed; `<stdin>` is how every error about the trace read from it
    names it, and a warning about the same trace names it alike."""
    write("c.json", json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "approved", "kind": "require_approval", "tool": "payments.*"}]}))
    result = cli("check", "-c", "c.json", "-t", "-", "-f", "json", stdin=lines({"type": "run.start"}))
    assert result.returncode == 0
    assert json.loads(result.stdout)["trace"] == "-"   # the report keeps the argument as given (v1 §5)
    assert result.stderr.splitlines() == [
        'agent-invariants: warning: <stdin>: rule "approved" (require_approval) checked nothing in this trace; it '
        "may guard nothing (do its tools or types appear in the trace?)"]
    bad = cli("check", "-c", "c.json", "-t", "-", stdin=lines({"type": "run.start"}) + '{"seq": 0, "type": "x"}\n')
    assert bad.stderr.startswith("agent-invariants: <stdin>:2: "), bad.stderr


def test_a_tool_with_a_line_break_that_no_wildcard_matches_is_a_warning(cli, desk):
    """Globs never match a line break (v1 §2.7, item 17): a `shell.*` deny does not see `shell.\nexec`.
    The verdict stays the Node tool's; the check says why a denied-looking call passed."""
    desk("t.jsonl", lines({"type": "approval.granted"}, {"type": "tool.call", "tool": "payments.refund"},
                          {"type": "tool.call", "tool": "shell.\nexec"}, {"type": "tool.call", "tool": "kb\u2028"},
                          {"type": "tool.call", "tool": "shell.\nexec"}))
    result = cli("check", "-t", "t.jsonl", "-f", "json")
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        'agent-invariants: warning: t.jsonl:3: tool "shell.\\nexec" (and 1 more such tool) has a line break in its '
        "name, which no glob wildcard (* or ?) matches: a rule that reads tools through one does not see its calls"]
    (notice,) = json.loads(result.stdout)["notices"]
    assert (notice["kind"], notice["event_index"], notice["line"]) == ("unmatchable_tool", 2, 3)
    assert cli("check", "-t", "t.jsonl", "--strict").returncode == 2   # a problem of the trace itself


def test_a_tool_with_a_line_break_is_found_among_thousands_of_tools(cli, desk):
    """The tools are looked through a few thousand at a time: the one with a line break is found
    wherever it is among them, and only it."""
    calls = [{"type": "tool.call", "tool": f"kb.search-{number}"} for number in range(9000)]
    calls[8500]["tool"] = "kb.search\r8500"
    desk("t.jsonl", lines(*calls))
    notices = json.loads(cli("check", "-t", "t.jsonl", "-f", "json").stdout)["notices"]
    (notice,) = [notice for notice in notices if notice["kind"] == "unmatchable_tool"]
    assert notice["event_index"] == 8500
    assert notice["message"].startswith('tool "kb.search\\r8500" has a line break in its name')


def test_notices_are_in_the_json_report(cli, desk):
    desk("t.jsonl", lines({"type": "tool.call", "tool": "kb.search"}))
    report = json.loads(cli("check", "-t", "t.jsonl", "-f", "json").stdout)
    assert report["notices"] == [{"kind": "rule_checked_nothing", "rule_id": "pay-approval", "message":
                                  'rule "pay-approval" (require_approval) checked nothing in this trace; it may '
                                  "guard nothing (do its tools or types appear in the trace?)"}]
    assert "notices" not in json.loads(cli("check", "-t", "paid.jsonl", "-f", "json").stdout)


def test_strict_refuses_a_trace_with_a_problem_of_its_own(cli, desk):
    desk("t.jsonl", lines({"type": "tool.cal", "tool": "payments.refund"}))
    result = cli("check", "-t", "t.jsonl", "--strict")
    assert result.returncode == 2
    assert result.stdout == ""
    assert 'agent-invariants: error: t.jsonl:1: event type "tool.cal" looks like "tool.call"; rules match types ' \
           "exactly, so none matched it" in result.stderr.splitlines()


def test_strict_fails_a_rule_that_checked_nothing(cli, desk):
    desk("t.jsonl", lines({"type": "tool.call", "tool": "kb.search"}))
    assert cli("check", "-t", "t.jsonl").returncode == 0
    result = cli("check", "-t", "t.jsonl", "--strict", "-f", "json")
    assert result.returncode == 1
    (failed,) = [rule for rule in json.loads(result.stdout)["results"] if not rule["passed"]]
    assert failed["rule_id"] == "pay-approval"
    assert failed["violations"][0]["message"] == \
        "The rule checked nothing in this trace, so it may guard nothing (--strict)."
    # stderr says it as what it now is: an error (a warning without --strict, and under --partial,
    # where the rest of the run may bring what the rule checks)
    said = 'agent-invariants: {}: t.jsonl: rule "pay-approval" (require_approval) checked nothing in this trace; ' \
           "it may guard nothing (do its tools or types appear in the trace?)\n"
    assert result.stderr == said.format("error")
    assert cli("check", "-t", "t.jsonl").stderr == said.format("warning")
    assert cli("check", "-t", "t.jsonl", "--strict", "--partial").stderr == said.format("warning")
    desk("w.json", json.dumps({"version": 1, "name": "w", "rules": [
        {"id": "pay-approval", "kind": "require_approval", "tool": "payments.*", "severity": "warning"}]}))
    warned = cli("check", "-c", "w.json", "-t", "t.jsonl", "--strict")   # a warning rule fails as a warning
    assert (warned.returncode, warned.stderr) == (0, said.format("warning"))


def test_the_library_reports_notices_and_strict_fails(tmp_path):
    events = [{"seq": 1, "type": "tool.call", "tool": "kb.search"}]
    assert check_trace(CONTRACT, events).passed is True
    assert check_trace(CONTRACT, events, strict=True).passed is False


# -- --format github -----------------------------------------------------------------------------

def test_github_format_annotates_each_violation_and_escapes_messages(cli, desk):
    desk("bad.jsonl", lines({"type": "tool.call", "tool": "payments.a%b,c:d\u001b[2J"},
                            {"type": "tool.call", "tool": "kb.delete"}))
    result = cli("check", "-t", "bad.jsonl", "-f", "github")
    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert out[0].startswith("::error file=bad.jsonl,line=1,title=pay-approval (require_approval)::Tool ")
    assert "::Tool payments.a%25b,c:d\\x1b[2J was called without a matching prior approval" in out[0]
    assert out[1].startswith("::warning file=bad.jsonl,line=2,title=careful (deny_tool)::")
    assert out[2].startswith("FAIL  desk")


def test_github_format_for_compare_names_the_candidate(cli, desk):
    desk("cand.jsonl", lines({"type": "tool.call", "tool": "shell.exec"}))
    out = cli("compare", "-b", "paid.jsonl", "-k", "cand.jsonl", "-f", "github").stdout.splitlines()
    assert "::error file=cand.jsonl,line=1,title=compatibility.new_rule_failure::" in "\n".join(out)


# -- colour --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "env", "coloured"), [
    ([], {}, False),                                        # not a terminal
    (["--color", "always"], {}, True),
    (["--color", "always"], {"NO_COLOR": "1"}, True),      # asked for explicitly
    ([], {"FORCE_COLOR": "1"}, True),
    ([], {"FORCE_COLOR": "0"}, False),
    ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    (["--color", "never"], {"FORCE_COLOR": "1"}, False),
])
def test_colour_follows_the_option_then_no_color_then_force_color(cli, desk, args, env, coloured):
    environment = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    result = cli("check", "-t", "paid.jsonl", *args, env={**environment, **env, "NO_COLOR": env.get("NO_COLOR", "")})
    assert ("\x1b[" in result.stdout) is coloured


# -- batches, --quiet, --verbose, --max-warnings --------------------------------------------------

@pytest.fixture
def batch(desk):
    desk("runs/a-good.jsonl", PAID)
    desk("runs/b-bad.jsonl", lines({"type": "tool.call", "tool": "shell.exec"}))
    desk("runs/c-warn.jsonl", lines({"type": "tool.call", "tool": "kb.delete"}))
    return desk


def test_a_batch_shows_failing_traces_and_rules_then_a_total(cli, batch):
    out = cli("check", "-t", "runs").stdout
    assert "a-good.jsonl" not in out and "c-warn" not in out
    assert "runs/b-bad.jsonl" in out
    assert "✗ no-shell  deny_tool  1 error" in out
    assert "pay-approval" not in out   # passed in the failing trace: left out
    assert out.splitlines()[-1] == "FAIL  desk  3 traces: 2 passed, 1 failed · 1 error · 1 warning"


def test_verbose_shows_everything_and_quiet_only_the_total(cli, batch):
    verbose = cli("check", "-t", "runs", "--verbose").stdout
    assert "runs/a-good.jsonl" in verbose and "✓ pay-approval  require_approval" in verbose
    quiet = cli("check", "-t", "runs", "--quiet").stdout
    assert quiet == "FAIL  desk  3 traces: 2 passed, 1 failed · 1 error · 1 warning\n"


def test_max_warnings_turns_too_many_warnings_into_exit_1(cli, desk):
    desk("w.jsonl", lines({"type": "approval.granted"}, {"type": "tool.call", "tool": "payments.refund"},
                          {"type": "tool.call", "tool": "kb.delete"}))
    assert cli("check", "-t", "w.jsonl").returncode == 0
    assert cli("check", "-t", "w.jsonl", "--max-warnings", "1").returncode == 0
    result = cli("check", "-t", "w.jsonl", "--max-warnings", "0")
    assert result.returncode == 1
    assert "agent-invariants: 1 warning, more than --max-warnings 0" in result.stderr


# -- the contract: default name, stdin -----------------------------------------------------------

def test_the_contract_defaults_to_the_file_init_writes(cli, tmp_path):
    assert cli("init", ".").returncode == 0
    assert cli("check", "-t", "agent-trace.jsonl").returncode == 0
    os.remove(tmp_path / "agent-invariants.json")
    result = cli("check", "-t", "agent-trace.jsonl")
    assert result.returncode == 2
    assert result.stderr == ("agent-invariants: no contract: pass --contract PATH, or put agent-invariants.json "
                             "(or .yaml) in the current folder (`agent-invariants init` writes one)\n")


def test_validate_and_check_read_the_contract_from_stdin(cli, desk):
    text = json.dumps(CONTRACT)
    validated = cli("validate", "-c", "-", stdin=text)
    assert validated.returncode == 0 and json.loads(validated.stdout)["contract"]["name"] == "desk"
    assert cli("check", "-c", "-", "-t", "paid.jsonl", stdin=text).returncode == 0
    bad = cli("validate", "-c", "-", stdin="{")
    assert bad.returncode == 2 and bad.stderr.startswith("agent-invariants: <stdin>: invalid JSON at line 1")


# -- help, SARIF root, completion ----------------------------------------------------------------

def test_validate_and_summary_help_shows_only_the_options_they_use(cli):
    for command in ("validate", "summary"):
        text = cli(command, "--help").stdout
        assert "--sarif" not in text and "--max-violations" not in text
        # --format is accepted for the Node tool's scripts, and a bad value's error sends the user
        # to this help: it is listed, saying that the output is JSON whatever it names
        assert "--format" in text and "alwaysJSON" in "".join(text.split())
        assert cli(command, "--help", "--format", "json").returncode == 0
    help_text = "".join(cli("check", "--help").stdout.split())   # wrapped at any space or hyphen
    assert "Default:agent-invariants.json(or.yaml,.yml)inthecurrentfolder" in help_text
    assert "atrailing/isaddedwhenmissing" in help_text


def test_validate_still_refuses_a_bad_format_value(cli, desk):
    assert cli("validate", "--format", "yaml").returncode == 2


def test_a_sarif_root_that_does_not_hold_the_trace_is_an_error(cli, desk, tmp_path):
    (tmp_path / "repo").mkdir()
    result = cli("check", "-t", "paid.jsonl", "-f", "sarif", "--sarif-root", "repo")
    assert result.returncode == 2
    assert result.stderr == ("agent-invariants: --sarif-root repo: paid.jsonl is outside it (SARIF URIs must "
                             "stay inside the repository)\n")
    inside = cli("check", "-t", "paid.jsonl", "-f", "sarif", "--sarif-root", ".")
    assert inside.returncode == 0


def test_with_the_contract_anchor_a_trace_outside_the_sarif_root_is_named_in_messages_only(cli, desk, tmp_path):
    """Traces that are build artifacts (downloaded outside the checkout) are what the contract
    anchor is for: --sarif-root refused them, and their related location climbed out with ../."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "agent-invariants.json").write_text(json.dumps(CONTRACT))
    (tmp_path / "paid.jsonl").write_text(lines({"type": "tool.call", "tool": "payments.refund", "call_id": "c"}))
    sarif = ("check", "-c", "repo/agent-invariants.json", "-t", "paid.jsonl", "-f", "sarif", "--sarif-root", "repo")
    assert cli(*sarif).returncode == 2
    result = cli(*sarif, "--sarif-anchor", "contract")
    assert result.returncode == 1, result.stderr
    results = json.loads(result.stdout)["runs"][0]["results"]
    assert results and all("relatedLocations" not in found for found in results)
    assert {found["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for found in results} == {
        "agent-invariants.json"}
    assert all("../paid.jsonl:1" in found["message"]["text"] for found in results)


def test_shell_completion_is_offered(cli):
    # --show-completion detects the user's shell from the process tree, which differs here: test
    # that both options are offered, and the completion the installed script asks for
    assert {"--install-completion", "--show-completion"} <= set(cli("--help").stdout.split())
    completed = cli(env={"_AGENT_INVARIANTS_COMPLETE": "complete_bash", "COMP_WORDS": "agent-invariants che",
                         "COMP_CWORD": "1"})
    assert "check" in completed.stdout.split()


def test_notices_stay_bounded_whatever_the_trace_writes():
    from agent_invariants.notices import MAX_NAMES

    def separators(number: int) -> str:
        text = ""
        while True:
            number, digit = divmod(number, 3)
            text += "._-"[digit]
            if not number:
                return text

    types = [f"tool{separators(i)}call" for i in range(1, MAX_NAMES + 500)]   # 0 gives "tool.call" itself
    fields = {f"call{separators(i)}id": "x" for i in range(2, MAX_NAMES + 500)}   # 1 gives "call_id" itself
    assert len(set(types)) == len(types) and len(fields) == len(types) - 1
    events = [{"seq": i, "type": kind, **(fields if i == 0 else {})} for i, kind in enumerate(types)]
    notices = check_trace(CONTRACT, events).notices
    assert sum(notice.kind == "misspelt_type" for notice in notices) == MAX_NAMES
    assert sum(notice.kind == "misspelt_field" for notice in notices) == MAX_NAMES - 2   # seq and type came first
    first = notices[0]
    assert (first.kind, first.event_index) == ("misspelt_type", 0)
    assert first.message == 'event type "tool_call" looks like "tool.call"; rules match types exactly, so none ' \
                            "matched it"


# -- found by review: each of these failed before its fix ----------------------------------------

def test_a_trace_name_cannot_forge_a_line_of_the_warnings(cli, desk):
    name = "a\nagent-invariants: error: forged.jsonl"
    desk(name, lines({"type": "Tool.Call", "tool": "kb.search"}))
    stderr = cli("check", "-t", name, "-q").stderr.splitlines()
    assert stderr[0].startswith("agent-invariants: warning: a\\nagent-invariants: error: forged.jsonl:1: event type")
    assert all(line.startswith("agent-invariants: warning: a\\n") for line in stderr)


def test_the_contract_and_a_trace_cannot_both_come_from_stdin(cli, desk):
    for args in (["check", "-c", "-", "-t", "-"], ["compare", "-c", "-", "-b", "-", "-k", "paid.jsonl"]):
        result = cli(*args, stdin=json.dumps(CONTRACT))
        assert result.returncode == 2, args
        assert result.stderr == ("agent-invariants: the contract and a trace cannot both be read from standard "
                                 "input (-)\n")


def test_compare_reads_standard_input_for_one_side_only(cli, desk):
    # both sides from one stdin would compare the trace with an empty one: a false regression
    for args in (["-b", "-", "-k", "-"], ["-b", "-", "-b", "paid.jsonl", "-k", "-"]):
        result = cli("compare", *args, stdin=PAID)
        assert (result.returncode, result.stdout) == (2, ""), args
        assert result.stderr == "agent-invariants: standard input (-) can be read once: by the baseline or by " \
                                "the candidate\n"


def test_a_type_that_a_contract_glob_matches_is_no_misspelling(cli, write):
    write("glob.json", json.dumps({"version": 1, "name": "g", "rules": [
        {"id": "d", "kind": "deny_event", "match": {"type": "tool.*"}}]}))
    write("t.jsonl", lines({"type": "tool.x"}))
    result = cli("check", "-c", "glob.json", "-t", "t.jsonl", "--strict", "-q")
    assert result.returncode == 1   # the rule matched it: a violation, not a refused trace
    assert "looks like" not in result.stderr


def test_require_event_with_min_0_may_check_nothing(cli, write):
    write("never.json", json.dumps({"version": 1, "name": "n", "rules": [
        {"id": "never", "kind": "require_event", "match": {"type": "secret.read"}, "min": 0, "max": 0},
        {"id": "once", "kind": "require_event", "match": {"type": "run.end"}, "min": 0}]}))
    write("ok.jsonl", lines({"type": "run.start"}))
    result = cli("check", "-c", "never.json", "-t", "ok.jsonl", "--strict")
    assert (result.returncode, result.stderr) == (0, "")


def test_fields_no_rule_reads_are_not_misspellings(cli, desk):
    desk("t.jsonl", lines({"type": "approval.granted", "actor_id": "u1", "event_time": "x", "results": [],
                           "risk_name": "low"}, {"type": "tool.call", "tool": "payments.refund"}))
    assert cli("check", "-t", "t.jsonl", "--strict").returncode == 0


def test_the_field_sample_counts_events_as_the_reader_does(cli, desk):
    desk("bom.jsonl", b"\xef\xbb\xbf" + lines({"type": "run.start", "callId": "x"}).encode())
    assert 'bom.jsonl:1: field "callId" looks like "call_id"' in cli("check", "-t", "bom.jsonl", "-q").stderr
    desk("sur.jsonl", '{"seq": 1, "type": "a", "\\ud800": 1}\n# a comment\n\n{"seq": 2, "type": "a", "callId": "x"}\n')
    assert 'sur.jsonl:4: field "callId" looks like "call_id"' in cli("check", "-t", "sur.jsonl", "-q").stderr


def test_a_strict_batch_lists_a_refused_trace_with_the_unreadable_ones(cli, desk):
    desk("b/x.jsonl", lines({"type": "approval.granted", "callId": "x"}, {"type": "tool.call", "tool": "payments.a"}))
    desk("b/y.jsonl", PAID)
    result = cli("check", "-t", "b", "--strict", "-f", "json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["passed"] is False
    assert [failure["trace"] for failure in report["failures"]] == ["b/x.jsonl"]
    assert report["failures"][0]["error"].startswith('b/x.jsonl:1: field "callId" looks like "call_id"')


def test_long_field_names_are_not_kept(tmp_path):
    from agent_invariants.notices import FieldSample

    sample = FieldSample()
    sample.add([json.dumps({"seq": 1, "type": "a", "k" * 100_000: 1, "callId": 2}).encode()])
    assert set(sample.keys) == {"seq", "type", "callId"}


def test_github_output_spells_no_legacy_command(cli, desk):
    name = "run ##[warning]forged.jsonl"
    desk(name, lines({"type": "tool.call", "tool": "payments.refund"}))
    result = cli("check", "-t", name, "-f", "github")
    # the runner reads a `::` command before anything else on its line: only the other lines matter
    plain = [line for line in result.stdout.splitlines() if not line.startswith("::")] + result.stderr.splitlines()
    assert plain and not any("##[" in line for line in plain)
    assert "      trace run ##\\x5bwarning]forged.jsonl" in plain


def test_the_mcp_strict_error_is_escaped():
    from agent_invariants.errors import InputError
    from agent_invariants.mcp_server import CHECK, run_tool

    with pytest.raises(InputError) as refused:
        run_tool(CHECK, {"contract": CONTRACT, "events": [{"seq": 1, "type": "tool.cal\u202e"}], "strict": True})
    assert "\u202e" not in str(refused.value) and "\\u202e" in str(refused.value)


def test_sarif_root_must_hold_the_contract_and_the_candidates_only(cli, desk, tmp_path):
    (tmp_path / "repo").mkdir()
    desk("repo/paid.jsonl", PAID)
    result = cli("check", "-t", "repo/paid.jsonl", "-f", "sarif", "--sarif-root", "repo")
    assert result.returncode == 2 and "agent-invariants.json is outside it" in result.stderr
    desk("repo/agent-invariants.json", json.dumps(CONTRACT))
    compared = cli("compare", "-c", "repo/agent-invariants.json", "-b", "paid.jsonl", "-k", "repo/paid.jsonl",
                   "-f", "sarif", "--sarif-root", "repo")
    assert compared.returncode == 0, compared.stderr   # the baseline is never located in SARIF
