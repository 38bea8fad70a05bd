"""A rule keeps at most `--max-violations` violations (default 1000), the first ones in its own
order, and counts every one (spec §14, D7): `stop_is_final` finds n²/2 violations on n stops, and
a report of all of them would take gigabytes. The counts, the verdict, the exit code and compare's
regressions use the totals; every format says how many were left out."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, target
from hypothesis import strategies as st
from msgspec import UNSET
from test_models import KINDS, RULES, TRACES, model_stop_is_final

from agent_invariants import check_trace, compare_traces

from support import contract, events, examples, jsonl

STOP_RULE = {"id": "stop", "kind": "stop_is_final"}
STOPS, CALLS = 2000, 10
# stop k (of 2000) is followed by 2000 - k later stops (each disallowed after a stop) and 10 calls
STOPS_TOTAL = STOPS * (STOPS - 1) // 2 + STOPS * CALLS
MIB = 1024 * 1024

pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")


def stops_trace() -> str:
    return jsonl(events(*[{"type": "control.stop"}] * STOPS, *[{"type": "tool.call", "tool": "x"}] * CALLS))


def run_measured(cwd: Path, *args: str) -> tuple[int, int]:
    """The CLI's exit code and peak resident memory in bytes, from a wrapper process that runs
    it as its only child."""
    wrapper = ("import resource, subprocess, sys\n"
               "code = subprocess.run([sys.executable, '-m', 'agent_invariants', *sys.argv[1:]]).returncode\n"
               "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    proc = subprocess.run([sys.executable, "-c", wrapper, *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    code, peak_kib = proc.stdout.split()
    return int(code), int(peak_kib) * 1024


# -- through the CLI ------------------------------------------------------------------------

@pytest.mark.slow
def test_two_thousand_stops_are_counted_exactly_in_bounded_memory(write, tmp_path):
    write("c.json", contract(STOP_RULE))
    write("t.jsonl", stops_trace())
    code, peak = run_measured(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "json", "-o", "r.json")
    assert code == 1
    assert peak < 200 * MIB   # all 2,019,000 violations would need gigabytes
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert (report["passed"], report["error_count"], report["warning_count"]) == (False, STOPS_TOTAL, 0)
    assert (report["truncated"], report["violations_total"], len(report["violations"])) == (True, STOPS_TOTAL, 1000)
    (result,) = report["results"]
    assert (result["truncated"], result["violations_total"], result["checked"]) == (True, STOPS_TOTAL, STOPS)
    # the first stop's violations come first: the 1,999 later stops, then the calls
    assert [v["event_seq"] for v in result["violations"]] == list(range(2, 1002))
    assert {v["evidence"]["stop_seq"] for v in result["violations"]} == {1}


@pytest.mark.slow
@pytest.mark.parametrize("rule, late", [
    (STOP_RULE, {"type": "tool.call", "tool": "x"}),                     # each call: after the stop
    ({"id": "deny", "kind": "deny_tool", "tool": "x"}, {"type": "tool.call", "tool": "x"}),
    ({"id": "results", "kind": "tool_result_required"}, {"type": "tool.call", "tool": "x"}),   # no call_id
], ids=["stop_is_final", "deny_tool", "tool_result_required"])
def test_a_violation_on_every_event_of_a_long_trace_keeps_memory_flat(write, tmp_path, rule, late):
    """A stop, then a million violating events: neither the violations nor what the rule
    remembers of them may grow with the trace."""
    count = 1_000_000
    body = json.dumps(late, separators=(",", ":"))[1:]
    lines = "".join(f'{{"seq":{seq},{body}\n' for seq in range(1, count + 1))
    write("c.json", contract(rule))
    write("t.jsonl", '{"seq":0,"type":"control.stop"}\n' + lines)
    code, peak = run_measured(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "json", "-o", "r.json")
    assert code == 1
    assert peak < 120 * MIB   # about 40 MiB; remembering every violating event takes over 200
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert (report["error_count"], report["violations_total"], len(report["violations"])) == (count, count, 1000)


@pytest.mark.slow
def test_max_violations_keeps_the_first_ones_in_the_rules_order(cli, write):
    """Stops are allowed after a stop here, so each call is reported once per earlier stop,
    stop by stop: (call 3, stop 1), (call 4, stop 1), (call 3, stop 2), (call 4, stop 2)."""
    write("c.json", contract({**STOP_RULE, "allowed_after": ["control.*"]}))
    write("t.jsonl", jsonl(events({"type": "control.stop"}, {"type": "control.stop"},
                                  {"type": "tool.call", "tool": "x"}, {"type": "tool.call", "tool": "x"})))
    proc = cli("check", "-c", "c.json", "-t", "t.jsonl", "--max-violations", "3", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert [(v["event_seq"], v["evidence"]["stop_seq"]) for v in report["violations"]] == [(3, 1), (4, 1), (3, 2)]
    assert (report["error_count"], report["violations_total"], report["truncated"]) == (4, 4, True)

    text = cli("check", "-c", "c.json", "-t", "t.jsonl", "--max-violations", "3").stdout
    assert "✗ stop  stop_is_final  4 errors\n" in text
    assert text.endswith("t.jsonl:3  seq 3  [stop_is_final.after_stop] Event tool.call x occurred after stop event "
                         "control.stop at seq 2.\n"
                         "    … and 1 more (raise --max-violations to see them)\n")


@pytest.mark.slow
def test_max_violations_zero_keeps_every_one(cli, write):
    write("c.json", contract(STOP_RULE))
    write("t.jsonl", jsonl(events(*[{"type": "control.stop"}] * 50)))   # 1,225 violations
    proc = cli("check", "-c", "c.json", "-t", "t.jsonl", "--max-violations", "0", "-f", "json")
    everything = json.loads(proc.stdout)
    assert (len(everything["violations"]), everything["error_count"]) == (1225, 1225)
    assert "truncated" not in everything and "violations_total" not in everything["results"][0]
    capped = json.loads(cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "json").stdout)
    assert capped["violations"] == everything["violations"][:1000]


@pytest.mark.slow
def test_warnings_past_the_cap_are_counted_and_still_pass(cli, write):
    write("c.json", contract({**STOP_RULE, "severity": "warning"}))
    write("t.jsonl", jsonl(events(*[{"type": "control.stop"}] * 5)))   # 10 violations
    proc = cli("check", "-c", "c.json", "-t", "t.jsonl", "--max-violations", "2", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["passed"], report["error_count"], report["warning_count"], len(report["violations"])) == \
        (True, 0, 10, 2)


def test_negative_max_violations_is_a_usage_error(cli, write):
    write("c.json", contract(STOP_RULE))
    write("t.jsonl", jsonl(events({"type": "control.stop"})))
    proc = cli("check", "-c", "c.json", "-t", "t.jsonl", "--max-violations", "-1")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("agent-invariants: ") and "--max-violations" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


@pytest.fixture
def stops(write):
    write("c.json", contract(STOP_RULE))
    write("t.jsonl", stops_trace())


def run_format(cli, fmt: str) -> str:
    proc = cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", fmt)
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_text_shows_the_total_and_how_many_were_left_out(cli, stops):
    text = run_format(cli, "text")
    assert f"{STOPS + CALLS} events · {CALLS} tool calls · {STOPS_TOTAL} errors · 0 warnings" in text
    assert f"✗ stop  stop_is_final  {STOPS_TOTAL} errors\n" in text
    assert text.count("occurred after stop event") == 1000
    assert text.endswith(f"    … and {STOPS_TOTAL - 1000} more (raise --max-violations to see them)\n")


@pytest.mark.slow
def test_markdown_counts_the_total_and_says_where_the_rest_is(cli, stops):
    text = run_format(cli, "markdown")
    assert f"| `stop` | stop_is_final | ❌ failed | {STOPS} | {STOPS_TOTAL} |" in text
    assert text.count("occurred after stop event") == 50
    assert text.endswith(f"- … and {STOPS_TOTAL - 50} more (950 in the JSON or SARIF report; "
                         "raise --max-violations to see them)\n")


@pytest.mark.slow
def test_junit_lists_the_kept_violations_and_the_count_of_the_rest(cli, stops):
    root = ET.fromstring(run_format(cli, "junit").encode("utf-8"))
    (suite,) = root.findall("testsuite")
    (case,) = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")
    lines = case.find("failure").text.splitlines()
    assert len(lines) == 1001
    assert lines[-1] == f"… and {STOPS_TOTAL - 1000} more (raise --max-violations to see them)"


@pytest.mark.slow
def test_sarif_holds_the_kept_results_and_says_how_many_were_left_out(cli, stops):
    run = json.loads(run_format(cli, "sarif"))["runs"][0]
    assert len(run["results"]) == 1000
    assert run["properties"]["truncated"] is True
    assert run["properties"]["violationsLeftOut"] == STOPS_TOTAL - 1000
    assert "resultCount" not in run["properties"]   # below SARIF's own cap of 25,000 results


@pytest.mark.slow
def test_compare_counts_every_violation(cli, write):
    write("c.json", contract(STOP_RULE))
    write("b.jsonl", jsonl(events(*[{"type": "control.stop"}] * 50)))   # 1,225 violations
    write("k.jsonl", jsonl(events(*[{"type": "control.stop"}] * 60)))   # 1,770
    proc = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--max-violations", "5", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    (change,) = report["rule_changes"]
    assert (change["baseline_violations"], change["candidate_violations"]) == (1225, 1770)
    (regression,) = report["regressions"]
    assert regression["evidence"]["violations"] == 1770
    assert len(report["candidate"]["violations"]) == 5 and report["candidate"]["violations_total"] == 1770
    sarif = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--max-violations", "5", "-f", "sarif")
    (result,) = json.loads(sarif.stdout)["runs"][0]["results"]
    assert result["baselineState"] == "updated"   # 1,225 then 1,770, though both keep 5


@pytest.mark.slow
def test_batch_check_passes_the_cap_to_every_worker(cli, write):
    write("c.json", contract(STOP_RULE))
    for name in ("a", "b"):
        write(f"runs/{name}.jsonl", jsonl(events(*[{"type": "control.stop"}] * 5)))   # 10 violations each
    proc = cli("check", "-c", "c.json", "-t", "runs", "--jobs", "2", "--max-violations", "3", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["error_count"] == 20
    assert [(len(r["violations"]), r["violations_total"]) for r in report["reports"]] == [(3, 10), (3, 10)]


# -- through the API: the cap against the uncapped result and the spec's model --------------

CAPS = [1, 2, 3, 4, 5, 1000]
STOP_TYPES = ["control.stop", "control.stop", "control.stop", "tool.call", "telemetry.x", "run.completed",
              "control.halt", "agent.message"]


@st.composite
def stop_traces(draw) -> list[dict]:
    """Many stops, some of them allowed after a stop, among events that may or may not be."""
    bodies = draw(st.lists(st.sampled_from(STOP_TYPES), max_size=80))
    return events(*[{"type": kind} for kind in bodies])


STOP_RULES = st.fixed_dictionaries({"id": st.just("stop"), "kind": st.just("stop_is_final")}, optional={
    "stop_type": st.sampled_from(["control.stop", "control.*"]),
    "allowed_after": st.sampled_from([[], ["control.*"], ["control.*"], ["control.halt", "telemetry.*"],
                                      ["*.stop"]]),
})


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=STOP_RULES, trace=stop_traces())
def test_stop_is_final_keeps_the_models_first_violations_and_counts_them_all(rule, trace):
    """The bounded state (the first `cap` stops and late events, two counters) gives exactly what
    rescanning the trace stop by stop gives, cut after `cap`."""
    _, expected = model_stop_is_final(rule, trace)
    for cap in CAPS:
        report = check_trace(contract(rule), trace, max_violations=cap)
        (result,) = report.results
        assert [(v.event_seq, v.event_index, v.evidence) for v in result.violations] == expected[:cap]
        assert result.violation_count == report.error_count == len(expected)
        assert result.truncated is (True if len(expected) > cap else UNSET)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_kind_keeps_the_first_violations_of_its_uncapped_result(kind, data):
    rule = data.draw(RULES[kind], label="rule")
    trace = data.draw(TRACES, label="trace")
    everything = check_trace(contract(rule), trace, max_violations=0)
    target(float(len(everything.violations)))   # steer towards traces with many violations
    for cap in (1, 2, 3):
        capped = check_trace(contract(rule), trace, max_violations=cap)
        assert capped.results[0].violations == everything.results[0].violations[:cap]
        assert capped.results[0].violation_count == len(everything.results[0].violations)
        assert (capped.error_count, capped.warning_count, capped.passed) == \
            (everything.error_count, everything.warning_count, everything.passed)


def test_compare_traces_and_check_trace_take_the_cap():
    document = contract(STOP_RULE)
    trace = events(*[{"type": "control.stop"}] * 4)   # 6 violations
    assert len(check_trace(document, trace, max_violations=2).violations) == 2
    report = compare_traces(document, trace, trace, max_violations=1)
    assert (len(report.candidate.violations), report.candidate.violations_total) == (1, 6)
    assert report.rule_changes[0].candidate_violations == 6
    with pytest.raises(ValueError, match="max_violations"):
        check_trace(document, trace, max_violations=-1)


def _many_rules(count: int) -> dict[str, object]:
    return contract(*[{"id": f"r{n}", "kind": "deny_tool", "tool": "*"} for n in range(count)])


def test_the_rules_of_a_large_contract_share_what_is_kept() -> None:
    """All rules together keep at most 100,000 violations (or 100 times --max-violations, when
    that is more), shared evenly: 10,000 rules broken on each of 1,000 calls kept ten million
    violations, and took over 4 GB (outside reader of hostile input). The counts stay whole."""
    calls = events(*[{"type": "tool.call", "tool": "x"}] * 1200)
    report = check_trace(_many_rules(400), calls)
    assert (report.error_count, report.violations_total, report.truncated) == (480_000, 480_000, True)
    assert {len(result.violations) for result in report.results} == {250}   # 100,000 / 400
    assert [violation.event_seq for violation in report.results[0].violations] == list(range(1, 251))
    raised = check_trace(_many_rules(400), calls, max_violations=2000)   # 200,000 in all: 500 each
    assert {len(result.violations) for result in raised.results} == {500}
    assert {len(result.violations) for result in check_trace(_many_rules(400), calls, max_violations=0).results} \
        == {1200}


def test_a_contract_of_a_hundred_rules_keeps_what_it_asks() -> None:
    calls = events(*[{"type": "tool.call", "tool": "x"}] * 1200)
    report = check_trace(_many_rules(100), calls)
    assert {len(result.violations) for result in report.results} == {1000}
    assert {len(result.violations) for result in check_trace(_many_rules(101), calls).results} == {990}
