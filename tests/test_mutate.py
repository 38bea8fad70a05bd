"""`mutate` as a user meets it: the bundled example and its README claims, every output format
(SARIF against its schema and GitHub's profile, JUnit as XML, annotations on the right lines), the
JSON report against its schema, the same report with --jobs, and bad input (one stderr line, exit
2, nothing on stdout). The spec's own cases are in test_mutate_spec.py."""
from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import msgspec
import pytest

from agent_invariants.contract import load_contract
from agent_invariants.contract_source import read_contract
from agent_invariants.errors import InputError
from agent_invariants.mutate import auto_control, mutate_files, mutate_trace, read_original
from agent_invariants.render import RenderOptions, renderer
from agent_invariants.sources import Sources

from support import github_profile_problems, sarif_validator

REPO = Path(__file__).resolve().parent.parent
CONTRACT = REPO / "examples/refund-approvals/contract.json"
TRACE = REPO / "examples/refund-approvals/pass.jsonl"
LESS = REPO / "examples/mutate/no-approval-rule.json"


@pytest.fixture(scope="module")
def example() -> tuple[object, dict[str, tuple[int, int | None]]]:
    return mutate_files(str(CONTRACT), str(TRACE))


def rendered(report: object, sites: dict[str, tuple[int, int | None]], fmt: str) -> str:
    source = read_contract(CONTRACT)
    options = RenderOptions(sources=Sources(contract=source, loaded=load_contract(source), sites=sites,
                                            root=REPO))
    return renderer(fmt).render(report, options)


# -- the bundled example ------------------------------------------------------------------------

def test_the_refund_example_scores_well_above_its_control_without_false_positives(example):
    report, _ = example
    assert report.score is not None and report.control.score is not None
    assert report.control.score <= report.score / 2
    assert report.control.too_easy is False
    assert report.false_positives == []
    assert report.invalid == 0
    assert [mutant.id for mutant in report.mutants if mutant.operator == "drop_approval"] == ["drop_approval:4"]
    (dropped,) = [mutant for mutant in report.mutants if mutant.id == "drop_approval:4"]
    assert (dropped.status, dropped.killed_by) == ("killed", ["approved-refunds"])


def test_without_the_approval_rule_the_score_drops_and_the_approval_mutants_survive(example):
    full, _ = example
    less = mutate_trace(str(LESS), str(TRACE))
    assert less.score is not None and full.score is not None and less.score < full.score
    survivors = {survivor.id: survivor.hint for survivor in less.survivors}
    assert survivors["drop_approval:4"] == "require_approval, approval_bound"
    assert survivors["rebind_approval:4:/amount"] == "require_approval, approval_bound"
    assert "drop_approval:4" not in {survivor.id for survivor in full.survivors}


def test_the_report_is_the_same_with_two_processes(example):
    report, _ = example
    assert msgspec.json.encode(mutate_trace(str(CONTRACT), str(TRACE), jobs=2)) == msgspec.json.encode(report)


# -- formats --------------------------------------------------------------------------------------

def test_json_matches_its_schema_and_holds_the_files_hashes(example):
    report, sites = example
    data = json.loads(rendered(report, sites, "json"))
    schema = json.loads((REPO / "schemas" / "mutate-report-v1.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["contract_sha256"] == hashlib.sha256(CONTRACT.read_bytes()).hexdigest()
    assert data["trace_sha256"] == hashlib.sha256(TRACE.read_bytes()).hexdigest()


def test_sarif_is_valid_and_puts_each_survivor_on_its_trace_line(example):
    report, sites = example
    log = json.loads(rendered(report, sites, "sarif"))
    sarif_validator().validate(log)
    assert github_profile_problems(log) == []
    results = log["runs"][0]["results"]
    assert len(results) == len(report.survivors)
    lines = TRACE.read_text().splitlines()
    for result, survivor in zip(results, report.survivors, strict=True):
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "examples/refund-approvals/pass.jsonl"
        seq = int(survivor.id.split(":")[1])
        line = location["region"]["startLine"]
        assert json.loads(lines[line - 1])["seq"] == seq
        assert location["region"]["endColumn"] == len(lines[line - 1]) + 1
        assert result["ruleId"] == "mutate.survived" and result["level"] == "warning"
        assert survivor.hint in result["message"]["text"]


def test_sarif_puts_false_positives_and_over_blocks_at_the_rule_in_the_contract(tmp_path):
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"version": 2, "name": "tight", "rules": [
        {"id": "short", "kind": "event_budget", "max_events": 4},
        {"id": "ticks", "kind": "require_event", "match": {"type": "telemetry.tick"}}]}, indent=2))
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(json.dumps(event) for event in [
        {"seq": 1, "type": "run.start"}, {"seq": 2, "type": "telemetry.tick"},
        {"seq": 3, "type": "tool.call", "tool": "search", "call_id": "c1"},
        {"seq": 4, "type": "run.completed"}]) + "\n")
    report, sites = mutate_files(str(contract), str(trace))
    assert [(found.rewrite, found.killed_by) for found in report.false_positives] == [("heartbeat", ["short"])]
    # dropping the telemetry event changes no behaviour, yet `ticks` counts it
    assert [(mutant.id, mutant.killed_by) for mutant in report.mutants if mutant.over_block] == \
        [("drop_event:2", ["ticks"])]
    source = read_contract(contract)
    log = json.loads(renderer("sarif").render(report, RenderOptions(sources=Sources(
        contract=source, loaded=load_contract(source), sites=sites, root=tmp_path))))
    sarif_validator().validate(log)
    results = log["runs"][0]["results"]
    (found,) = [result for result in results if result["ruleId"] == "mutate.false_positive"]
    assert found["level"] == "error"
    region = found["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "contract.json"
    assert region["region"]["startLine"] == 5   # the line of the rule `short`
    (over,) = [result for result in results if result["ruleId"] == "mutate.over_block"]
    assert over["locations"][0]["physicalLocation"]["region"]["startLine"] == 10   # the rule `ticks`


def test_junit_has_a_case_per_mutant_and_fails_the_survivors(example):
    report, sites = example
    root = ET.fromstring(rendered(report, sites, "junit"))
    mutants, rewrites = root.findall("testsuite")
    cases = mutants.findall("testcase")
    assert [case.get("name") for case in cases] == [mutant.id for mutant in report.mutants]
    failed = [case.get("name") for case in cases if case.find("failure") is not None]
    assert failed == [survivor.id for survivor in report.survivors]
    assert [case.get("name") for case in rewrites.findall("testcase")] == ["rewrites that keep the behaviour pass"]


def test_github_annotations_and_markdown_name_every_survivor(example):
    report, sites = example
    annotations = [line for line in rendered(report, sites, "github").splitlines() if line.startswith("::")]
    assert len(annotations) == len(report.survivors)
    first = report.survivors[0]
    assert annotations[0].startswith(
        f"::warning file=examples/refund-approvals/pass.jsonl,line={sites[first.id][0]},title=mutate%3A ")
    markdown = rendered(report, sites, "markdown")
    assert markdown.startswith(f"## agent-invariants mutate: score {report.score:.2f}\n")
    for survivor in report.survivors:
        assert f"`{survivor.id}`" in markdown


def test_text_names_the_score_the_control_and_each_survivor(example):
    report, sites = example
    text = rendered(report, sites, "text")
    lines = text.splitlines()
    assert lines[0] == (f"SCORE {report.score:.2f}  {report.killed} killed · {report.survived} survived · "
                        f"{report.equivalent} equivalent · {report.invalid} invalid")
    assert lines[1].startswith(f"control {report.control.score:.2f} (auto-written): ")
    for survivor in report.survivors:
        assert f"  ✗ survived {survivor.id}  would be killed by: {survivor.hint}" in lines
    assert lines[-1] == "false positives: none"


# -- the command line -------------------------------------------------------------------------------

def test_the_cli_prints_the_report_twice_alike_and_shows_a_mutant(cli):
    args = ("mutate", "--contract", str(CONTRACT), "--trace", str(TRACE), "--format", "json")
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    shown = cli("mutate", "--contract", str(CONTRACT), "--trace", str(TRACE), "--show-mutant", "flip_ok:8")
    assert shown.returncode == 0, shown.stderr
    events = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [event["seq"] for event in events] == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert events[7]["ok"] is False


def test_a_trace_with_nothing_to_mutate_says_so_on_stderr_and_fails_a_min_score(cli, tmp_path):
    """An empty trace passes every contract and gives no mutant: the report said NO SCORE, but
    a pipeline reading the JSON report exited 0 with nothing on stderr."""
    (tmp_path / "contract.json").write_text(json.dumps({"version": 2, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}))
    (tmp_path / "empty.jsonl").write_text("")
    result = cli("mutate", "--contract", "contract.json", "--trace", "empty.jsonl", "--format", "json")
    assert result.returncode == 0 and json.loads(result.stdout)["score"] is None
    assert result.stderr.splitlines() == ["agent-invariants: warning: empty.jsonl: no mutant could be scored "
                                          "(none was made: the trace gives the operators nothing to change)"]
    assert cli("mutate", "--contract", "contract.json", "--trace", "empty.jsonl", "--min-score", "0").returncode == 1
    scored = cli("mutate", "--contract", str(CONTRACT), "--trace", str(TRACE))
    assert scored.returncode == 0 and scored.stderr == ""


@pytest.mark.parametrize(("args", "says"), [
    (["--trace", "missing.jsonl"], "missing.jsonl: no such file"),
    (["--trace", "t.jsonl", "--no-rewrite", "renumbr"], "did you mean 'renumber'?"),
    (["--trace", "bad\x1b[31m.jsonl"], "bad\\x1b[31m.jsonl: no such file"),
])
def test_bad_input_is_one_escaped_line_and_exit_2(cli, tmp_path, args, says):
    (tmp_path / "contract.json").write_text(CONTRACT.read_text())
    (tmp_path / "t.jsonl").write_text(TRACE.read_text())
    result = cli("mutate", "--contract", "contract.json", *args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("agent-invariants: ") and says in line, line


@pytest.mark.parametrize(("options", "says"), [
    ({"trace": "."}, ".: is a directory, not a trace file"),
    ({"control": "missing.json"}, "missing.json: no such file"),
    ({"corpus": "t.jsonl"}, "--corpus t.jsonl: not a directory"),
])
def test_bad_files_are_input_errors_that_name_them(tmp_path, monkeypatch, options, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text(TRACE.read_text())
    options = {"trace": "t.jsonl", **options}
    with pytest.raises(InputError) as raised:
        mutate_trace(str(CONTRACT), options.pop("trace"), **options)
    assert says in str(raised.value)


def test_an_unknown_mutant_to_show_is_an_input_error_with_a_suggestion():
    from agent_invariants.mutate import mutant_text

    with pytest.raises(InputError, match="has no such mutant \\(did you mean 'flip_ok:8'\\?\\)"):
        mutant_text(str(CONTRACT), str(TRACE), "flip_ok:9")


def test_a_trace_over_the_size_limit_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    from agent_invariants.mutate import trace as trace_module

    monkeypatch.setattr(trace_module, "MAX_TRACE_BYTES", 100)
    big = tmp_path / "big.jsonl"
    big.write_text(TRACE.read_text())
    with pytest.raises(InputError, match="mutate copies the whole trace"):
        mutate_trace(str(CONTRACT), str(big))


# -- version 1 and the auto control -----------------------------------------------------------------

V1 = {"version": 1, "name": "v1", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.exec"}]}


def test_the_auto_control_reads_a_version_1_trace_as_version_1_does(tmp_path):
    """A version-1 contract does not type-check `args` or `duration_ms`: the auto control (of
    version-2 kinds) must pass the trace all the same, and judge mutants that only version 2 would
    refuse (a duration ten times 1e308 is beyond any double)."""
    contract = tmp_path / "v1.json"
    contract.write_text(json.dumps(V1))
    trace = b'{"seq": 1, "type": "tool.call", "tool": "search", "args": [1, "x"], "status": 7}\n' \
            b'{"seq": 2, "type": "run.completed", "status": 7, "duration_ms": 1e308}\n'
    report = mutate_trace(str(contract), trace)
    assert report.invalid == 0
    assert [mutant.id for mutant in report.mutants] == [
        "drop_call:1", "change_arg:1:/0", "change_arg:1:/1", "duplicate_call:1", "inflate_retries:1", "drop_event:2",
        "inflate_duration:2"]
    # the control: run status `completed` (a status that is no string is not one) and a call of search
    assert (report.control.killed, report.control.survived) == (2, 5)   # drop_call:1 and drop_event:2


def test_a_mutant_a_version_2_control_cannot_read_is_not_scored_for_it(tmp_path):
    """With a version-1 contract, `inflate_duration` on 1e308 makes a mutant that only version 2
    refuses: a `--control` of version 2 that can never fail counted it as killed (outside review,
    hunt 22), which lifted its score and said "mutants too easy" of a control that kills nothing."""
    never = {"id": "no-z", "kind": "deny_tool", "tool": "zz"}
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "m", "rules": [never]}))
    (tmp_path / "control.json").write_text(json.dumps({"version": 2, "name": "ctl", "rules": [never]}))
    (tmp_path / "t.jsonl").write_bytes(
        b'{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "c1"}\n'
        b'{"seq": 2, "type": "tool.result", "tool": "a", "call_id": "c1", "ok": true, "duration_ms": 1e308}\n'
        b'{"seq": 3, "type": "run.completed"}\n')
    report = mutate_trace(tmp_path / "c.json", tmp_path / "t.jsonl", control=tmp_path / "control.json")
    assert [(mutant.id, mutant.status) for mutant in report.mutants][-2:] == [
        ("inflate_duration:2", "survived"), ("drop_event:3", "survived")]
    assert (report.control.killed, report.control.survived, report.control.score, report.control.too_easy) == (
        0, 5, 0.0, False)


def test_inflate_duration_writes_the_tenfold_of_a_whole_number_exactly(tmp_path):
    """10^308 is a double; ten times it is not, and, written as the integer it is, makes the mutant
    invalid under version 2 (point 63), as the tenfold of 1e308 does."""
    contract = tmp_path / "c.json"
    contract.write_text(json.dumps({"version": 2, "name": "c", "rules": [
        {"id": "answered", "kind": "tool_result_required", "tool": "t"}]}))
    trace = (b'{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c"}\n'
             b'{"seq": 2, "type": "tool.result", "tool": "t", "call_id": "c", "ok": true, "duration_ms": 1'
             + b"0" * 308 + b"}\n")
    report = mutate_trace(str(contract), trace)
    (inflated,) = [mutant for mutant in report.mutants if mutant.operator == "inflate_duration"]
    assert (inflated.id, inflated.status) == ("inflate_duration:2", "invalid")


# -- the linear-time site finders against their definitions ----------------------------------------

def _naive_sites(events: list[dict]) -> set[str]:
    """The ids of swap_calls, move_approval_after, stop_earlier and stale_result mutants, found
    straight from the definitions of spec §10 points 57 and 59 (each a scan of the trace)."""
    waiting: dict[str, list[int]] = {}
    result_of: dict[int, int] = {}
    for index, event in enumerate(events):
        if event["type"] == "tool.call" and "call_id" in event:
            waiting.setdefault(event["call_id"], []).append(index)
        elif event["type"] == "tool.result" and waiting.get(event.get("call_id"), []):
            result_of[waiting[event["call_id"]].pop()] = index
    found = set()
    complete = sorted((call, result) for call, result in result_of.items() if "tool" in events[call])
    for number, (call, result) in enumerate(complete):
        later = [pair for pair in complete[number + 1:] if events[pair[0]]["tool"] != events[call]["tool"]]
        if later and result < later[0][0]:
            found.add(f"swap_calls:{events[call]['seq']}")
    for index, event in enumerate(events):
        if event["type"] == "approval.granted":
            keys = [name for name in ("tool", "call_id", "approval_id") if name in event]
            if any(later["type"] == "tool.call" and all(name in later and later[name] == event[name] for name in keys)
                   for later in events[index + 1:]):
                found.add(f"move_approval_after:{event['seq']}")
        if event["type"] == "control.stop" and any(earlier["type"] == "tool.call" for earlier in events[:index]):
            found.add(f"stop_earlier:{event['seq']}")
    call_of = {result: call for call, result in result_of.items()}
    for result in sorted(call_of):
        tool = events[call_of[result]].get("tool")
        answer = (json.dumps(events[result].get("result", "absent")), events[result].get("ok", "absent"))
        if tool is not None and any(
                events[call_of[other]].get("tool") == tool
                and (json.dumps(events[other].get("result", "absent")), events[other].get("ok", "absent")) != answer
                for other in call_of if other < result):
            found.add(f"stale_result:{events[result]['seq']}")
    return found


def test_the_sites_of_the_moving_operators_are_those_of_their_definitions():
    import random

    from agent_invariants.mutate.operators import Candidates
    from agent_invariants.mutate.trace import parse_events

    rng = random.Random(20)
    for _ in range(300):
        events: list[dict] = []
        while len(events) < rng.randint(2, 16):
            kind = rng.choice(["pair", "pair", "pair", "tool.call", "tool.result", "approval.granted",
                               "control.stop", "agent.message"])
            made: list[dict] = [{"type": "tool.call"}, {"type": "tool.result"}] if kind == "pair" else [{"type": kind}]
            for event in made:
                for name, values in (("tool", ["a", "b"]), ("call_id", ["c1", "c2"]), ("approval_id", ["g"]),
                                     ("ok", [True, False]), ("result", [1, "x"])):
                    if rng.random() < (0.8 if kind == "pair" and name in ("tool", "call_id") else 0.5):
                        event[name] = rng.choice(values)
            if kind == "pair" and "call_id" in made[0]:
                made[1]["call_id"] = made[0]["call_id"]
            events += made
        events = [{"seq": seq, **event} for seq, event in enumerate(events, 1)]
        text = "".join(json.dumps(event) + "\n" for event in events).encode()
        parsed = parse_events(text, list(range(1, len(events) + 1)), "t")
        made = {candidate.id for candidate in Candidates(parsed, [event["seq"] for event in events])
                if candidate.operator in ("swap_calls", "move_approval_after", "stop_earlier", "stale_result")}
        assert made == _naive_sites(events), events


# -- from a review --------------------------------------------------------------------------------

def test_a_version_1_contract_is_judged_alike_in_two_processes(tmp_path):
    """The auto control (of version-2 kinds) reads a version-1 trace as version 1 in the worker
    processes too (it once crashed them)."""
    contract = tmp_path / "v1.json"
    contract.write_text(json.dumps(V1))
    trace = "".join(json.dumps(event) + "\n" for event in [
        {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "c1", "args": [1]},
        {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True},
        {"seq": 3, "type": "run.completed"}]).encode()
    one, two = mutate_trace(str(contract), trace, jobs=1), mutate_trace(str(contract), trace, jobs=2)
    assert msgspec.json.encode(one) == msgspec.json.encode(two)
    assert one.control.killed == 2   # drop_call:1 and drop_event:3


def test_numbers_no_double_holds_and_deep_values_survive_mutation(tmp_path):
    contract = tmp_path / "v1.json"
    contract.write_text(json.dumps(V1))
    deep: object = 1
    for _ in range(490):
        deep = [deep]
    trace = "".join(json.dumps(event) + "\n" for event in [
        {"seq": 1, "type": "tool.call", "tool": "search", "args": {"x": 1, "y": 2}},
        {"seq": 2, "type": "run.completed", "output": {"deep": deep}}]).replace('"x": 1', '"x": 1e400').encode()
    from agent_invariants.mutate import mutant_text

    changed = mutant_text(str(contract), trace, "change_arg:1:/y").decode()
    assert '"x":1E+400' in changed   # the other argument goes back out as the number it is
    report = mutate_trace(str(contract), trace)
    assert report.false_positives == []   # reorder_keys keeps 1e400, and reverses 490 levels without recursion


def test_integers_past_64_bits_go_back_out_digit_for_digit(cli, tmp_path):
    """`check` reads integers of any size; mutate, which rewrites members, must too (a trace
    holding one used to end mutate with a traceback)."""
    (tmp_path / "c.json").write_text(json.dumps(V1))
    wide, huge = "1" + "0" * 30, "9" * 5000   # past 64 bits; past the digits Python converts
    (tmp_path / "t.jsonl").write_text(
        '{"seq":1,"type":"tool.call","tool":"crm.lookup","call_id":"c1"}\n'
        f'{{"seq":2,"type":"tool.result","tool":"crm.lookup","call_id":"c1","ok":true,'
        f'"data":{{"wide":{wide},"huge":{huge}}}}}\n'
        '{"seq":3,"type":"run.completed"}\n')
    report = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--format", "json")
    assert report.returncode == 0, report.stderr
    assert report.stderr == ""
    shown = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", "flip_ok:2")
    assert shown.returncode == 0, shown.stderr
    result = shown.stdout.splitlines()[1]
    assert f'"ok":false,"data":{{"wide":{wide},"huge":{huge}}}' in result


def test_rewrites_and_mutants_may_have_longer_lines_than_the_limit_the_trace_was_read_with(tmp_path):
    contract = tmp_path / "v1.json"
    contract.write_text(json.dumps(V1))
    line = '{"seq":1,"type":"tool.call","tool":"search","call_id":"c1"}'
    trace = (line + "\n" + '{"seq":2,"type":"run.completed"}\n').encode()
    report = mutate_trace(str(contract), trace, max_line_bytes=len(line) + 1)
    assert report.invalid == 0 and report.false_positives == []   # seq 1000 is longer than seq 1


@pytest.mark.parametrize(("events", "rules"), [
    # a status no run_status rule can name (empty; over 100 characters): no status rule
    ([b'{"seq": 1, "type": "tool.call", "tool": "t"}', b'{"seq": 2, "type": "run.completed", "status": ""}'],
     [{"id": "control.calls.1", "kind": "tool_calls", "tool": "t", "min": 1}]),
    ([b'{"seq": 1, "type": "run.failed", "status": "' + b"x" * 101 + b'"}'],
     [{"id": "control.terminal", "kind": "require_event", "match": {"type": "run.failed"}, "min": 1}]),
    # blanks at the ends of a tool's name, which a glob loses when trimmed, are `?`
    ([b'{"seq": 1, "type": "tool.call", "tool": " a\\t"}', b'{"seq": 2, "type": "tool.call", "tool": "   "}',
      b'{"seq": 3, "type": "tool.call", "tool": "b\\n"}', b'{"seq": 4, "type": "tool.call", "tool": "c d"}'],
     [{"id": "control.status", "kind": "run_status", "equals": "none"},
      {"id": "control.calls.1", "kind": "tool_calls", "tool": "?a?", "min": 1},
      {"id": "control.calls.2", "kind": "tool_calls", "tool": "???", "min": 1},
      {"id": "control.calls.3", "kind": "tool_calls", "tool": "c d", "min": 1}]),   # (b\n: no wildcard matches \n)
])
def test_the_auto_control_loads_and_passes_what_a_version_1_trace_holds(tmp_path, events, rules):
    """Point 64: the auto control "is never empty and always passes T", also when T holds what a
    version-2 contract cannot name."""
    contract = tmp_path / "v1.json"
    contract.write_text(json.dumps(V1))
    trace = b"\n".join(events) + b"\n"
    report = mutate_trace(str(contract), trace)
    assert report.control.auto is True
    loaded = load_contract(contract)
    assert json.loads(auto_control(loaded, read_original(trace, loaded).events))["rules"] == rules


def test_the_auto_control_names_the_first_tools_up_to_the_rules_a_contract_may_hold(tmp_path):
    contract = tmp_path / "v1.json"
    contract.write_text(json.dumps(V1))
    trace = b"".join(b'{"seq": %d, "type": "tool.call", "tool": "t%d"}\n' % (n, n) for n in range(1, 10_002))
    loaded = load_contract(contract)
    control = json.loads(auto_control(loaded, read_original(trace, loaded).events))
    assert len(control["rules"]) == 10_000
    assert control["rules"][-1] == {"id": "control.calls.9999", "kind": "tool_calls", "tool": "t9999", "min": 1}
    assert mutate_trace(str(contract), trace, max_mutants=5).control.auto is True


def test_text_names_the_invalid_mutants_it_leaves_out_of_the_score(cli, tmp_path):
    """§6: invalid (and equivalent) mutants are "excluded and listed": the text report names them
    too, not only their count. A call_id of 500 characters is the longest a trace may hold, so the
    mutants that lengthen it (`~m`, `~r1`) are invalid."""
    call_id = "c" * 500
    contract = tmp_path / "c.json"
    contract.write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "appr", "kind": "require_approval", "tool": "a"}]}))
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(event) + "\n" for event in [
        {"seq": 1, "type": "approval.granted", "tool": "a", "call_id": call_id},
        {"seq": 2, "type": "tool.call", "tool": "a", "call_id": call_id, "args": {"v": 1}},
        {"seq": 3, "type": "tool.result", "call_id": call_id, "ok": True}, {"seq": 4, "type": "run.completed"}]))
    result = cli("mutate", "--contract", str(contract), "--trace", str(trace))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "3 invalid" in lines[0]
    assert "invalid (not scored): rebind_approval:1:call_id, duplicate_call:2, inflate_retries:2" in lines


def test_an_array_trace_written_over_many_lines_mutates_as_its_jsonl_does(cli, tmp_path):
    """A trace may be one JSON array, pretty-printed (`json.dump(events, indent=2)`): check passes
    it. Mutate wrote each member as written, line breaks and all, into its JSON Lines rewrites
    and mutants: the renumber rewrite could not be read (exit 2), and without the rewrites every
    mutant was `invalid`. Its mutants are those of the same events in JSON Lines."""
    events = [json.loads(line) for line in TRACE.read_text(encoding="utf-8").splitlines() if line.strip()]
    (tmp_path / "pretty.json").write_text(json.dumps(events, indent=2), encoding="utf-8")
    arguments = ("mutate", "-c", str(CONTRACT), "-f", "json", "-t")
    pretty, lines = cli(*arguments, "pretty.json"), cli(*arguments, str(TRACE))
    assert (pretty.returncode, pretty.stderr) == (lines.returncode, lines.stderr) == (0, "")
    mutants = [(mutant["id"], mutant["status"]) for mutant in json.loads(pretty.stdout)["mutants"]]
    assert mutants == [(mutant["id"], mutant["status"]) for mutant in json.loads(lines.stdout)["mutants"]]
    assert len(mutants) > 5 and "invalid" not in {status for _, status in mutants}
    shown = cli("mutate", "-c", str(CONTRACT), "-t", "pretty.json", "--show-mutant", mutants[0][0])
    assert shown.returncode == 0 and all(json.loads(line) for line in shown.stdout.splitlines())
