"""A third reading of spec v2 §7 (importers) with §10 points 26-36 and the README's "Traces from
other tools": the corners. Every input is a hand-written record; every case checks the exact events,
messages and exit codes the CLI gives (`convert`, and `check`/`compare`/`summary --input-format`)."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli

# -- OTLP JSON records ----------------------------------------------------------------------------

T1 = "0af7651916cd43dd8448eb211c80319c"
T2 = "1bf7651916cd43dd8448eb211c80319d"
T3 = "2cf7651916cd43dd8448eb211c80319e"
ROOT = "a000000000000001"
SID2 = "a000000000000002"
SID3 = "a000000000000003"


def av(value: Any) -> dict[str, Any]:
    """An OTLP AnyValue (ints as strings, as protobuf's JSON writes them)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def span(sid: str, name: str, start: int | str, end: int | str | None, attrs: dict[str, Any] | list[Any],
         parent: str | None = ROOT, trace: str = T1, **extra: Any) -> dict[str, Any]:
    attributes = attrs if isinstance(attrs, list) else [kv(k, av(v)) for k, v in attrs.items()]
    record: dict[str, Any] = {"traceId": trace, "spanId": sid, "name": name, "attributes": attributes,
                              "startTimeUnixNano": str(start) if isinstance(start, int) else start}
    if end is not None:
        record["endTimeUnixNano"] = str(end) if isinstance(end, int) else end
    if parent is not None:
        record["parentSpanId"] = parent
    record.update(extra)
    return record


def root(start: int = 1000, end: int = 9000, trace: str = T1, sid: str = ROOT, **attrs: Any) -> dict[str, Any]:
    return span(sid, "invoke_agent a", start, end, {"gen_ai.operation.name": "invoke_agent", **attrs},
                parent=None, trace=trace)


def tool(sid: str, start: int, end: int | None, name: str = "get", parent: str = ROOT, trace: str = T1,
         **attrs: Any) -> dict[str, Any]:
    return span(sid, f"execute_tool {name}", start, end,
                {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **attrs},
                parent=parent, trace=trace)


def otlp(*spans: dict[str, Any]) -> str:
    """One OTLP JSON line holding the spans."""
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]})


def lines(*records: str | dict[str, Any]) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def run_of(trace: str, prefix: str) -> str:
    """One run: a root and one `get` tool span with native id c1."""
    return otlp(root(trace=trace, sid=prefix + "000000000000001"),
                tool(prefix + "000000000000002", 2000, 3000, parent=prefix + "000000000000001", trace=trace,
                     **{"gen_ai.tool.call.id": "c1"}))


def converted(cli: Cli, fmt: str, name: str, *extra: str) -> list[dict[str, Any]]:
    result = cli("convert", "--from", fmt, name, *extra)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def kinds(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["type"], e.get("tool")) for e in events]


def source(fmt: str, file: str, line: int, span_id: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"format": fmt, "file": file, "line": line}
    if span_id is not None:
        found["span_id"] = span_id
    return found


DENY_GET = {"version": 2, "name": "spec", "rules": [{"id": "no-get", "kind": "deny_tool", "tool": "get"}]}
DENY_ZZZ = {"version": 2, "name": "spec", "rules": [{"id": "no-zzz", "kind": "deny_tool", "tool": "zzz"}]}


@pytest.fixture
def two_runs(write: Any) -> None:
    """two.jsonl: runs T1 then T2 (one per line); one.jsonl: T1; three.jsonl: T1 then T3; c.json denies get."""
    write("two.jsonl", lines(run_of(T1, "a"), run_of(T2, "b")))
    write("one.jsonl", lines(run_of(T1, "a")))
    write("three.jsonl", lines(run_of(T1, "a"), run_of(T3, "c")))
    write("c.json", DENY_GET)
    write("pass.json", DENY_ZZZ)


# -- several runs: point 34 -----------------------------------------------------------------------

def only_stderr_line(result: Any) -> str:
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    found = result.stderr.splitlines()
    assert len(found) == 1 and "Traceback" not in result.stderr, found
    return str(found[0])


@pytest.mark.usefixtures("two_runs")
def test_check_without_run_lists_run_ids_in_file_order_and_both_options(cli: Cli) -> None:
    """Point 34: without --run, an input with several runs is exit 2, and the message lists the run
    ids and both options (README: runs are listed in the order they begin in the file)."""
    line = only_stderr_line(cli("check", "-c", "c.json", "-t", "two.jsonl", "--input-format", "otel"))
    assert f"({T1}, {T2})" in line
    assert "--run ID" in line and "--run all" in line


@pytest.mark.usefixtures("two_runs")
def test_convert_without_run_or_out_dir_is_refused(cli: Cli) -> None:
    """§7: with several runs, --run or --out-dir is required; otherwise exit 2 and list the run ids."""
    line = only_stderr_line(cli("convert", "--from", "otel", "two.jsonl"))
    assert T1 in line and T2 in line and "--run" in line and "--out-dir" in line


@pytest.mark.usefixtures("two_runs")
@pytest.mark.parametrize("command", [
    ("summary", "-t", "two.jsonl"),
    ("compare", "-c", "c.json", "--baseline", "one.jsonl", "--candidate", "two.jsonl"),
])
def test_summary_and_compare_without_run_are_refused(cli: Cli, command: tuple[str, ...]) -> None:
    """Point 34: check, compare and summary with --input-format take --run; without it exit 2."""
    line = only_stderr_line(cli(*command, "--input-format", "otel"))
    assert T1 in line and T2 in line


@pytest.mark.usefixtures("two_runs")
@pytest.mark.parametrize("command", [
    ("check", "-c", "c.json", "-t", "two.jsonl", "--input-format", "otel"),
    ("summary", "-t", "two.jsonl", "--input-format", "otel"),
    ("convert", "--from", "otel", "two.jsonl"),
])
def test_run_naming_no_run_is_exit_2_listing_the_runs(cli: Cli, command: tuple[str, ...]) -> None:
    """Point 34 / §7: --run chooses a run; one that does not exist is bad input (exit 2) whose message
    names it and the runs there are (spec silent on the wording)."""
    line = only_stderr_line(cli(*command, "--run", "nope"))
    assert "'nope'" in line and T1 in line and T2 in line


@pytest.mark.usefixtures("two_runs")
def test_run_without_input_format_is_refused(cli: Cli) -> None:
    """Point 34: --run belongs to `--input-format`; on a native trace it is a usage error (exit 2)."""
    line = only_stderr_line(cli("check", "-c", "c.json", "-t", "one.jsonl", "--run", "x"))
    assert "--input-format" in line


@pytest.mark.usefixtures("two_runs")
def test_check_one_run_keeps_the_single_trace_report(cli: Cli) -> None:
    """Point 34: `--run ID` checks that run alone: a single check/v1 report naming the run."""
    result = cli("check", "-c", "c.json", "-t", "two.jsonl", "--input-format", "otel", "--run", T2, "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert (report["schema"], report["run"]) == ("agent-invariants/check/v1", T2)
    assert [(v["line"], v["span_id"], v["event_seq"]) for v in report["violations"]] == [(2, "b000000000000002", 2)]


@pytest.mark.usefixtures("two_runs")
def test_check_run_all_text_has_one_section_per_run_then_totals(cli: Cli) -> None:
    """Point 34: `--run all` checks every run as a batch, one section per run id (README: in the order
    they begin in the file); the batch text ends with the totals line; exit 1 when any fails."""
    result = cli("check", "-c", "c.json", "-t", "two.jsonl", "--input-format", "otel", "--run", "all")
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert out.index(f"trace two.jsonl (run {T1})") < out.index(f"trace two.jsonl (run {T2})")
    assert "two.jsonl:1  span a000000000000002  seq 2  [deny_tool.denied]" in out
    assert "two.jsonl:2  span b000000000000002  seq 2  [deny_tool.denied]" in out
    assert out.rstrip().splitlines()[-1] == "FAIL  spec  2 traces: 0 passed, 2 failed · 2 errors · 0 warnings"


@pytest.mark.usefixtures("two_runs")
def test_check_run_all_json_is_a_batch_in_file_order(cli: Cli) -> None:
    """Point 34 with README "Many traces at once": the batch report is check-batch/v1."""
    result = cli("check", "-c", "c.json", "-t", "two.jsonl", "--input-format", "otel", "--run", "all",
                 "--format", "json")
    assert result.returncode == 1, result.stderr
    batch = json.loads(result.stdout)
    assert (batch["schema"], batch["traces"], batch["error_count"], batch["passed"]) == \
        ("agent-invariants/check-batch/v1", 2, 2, False)
    assert [(r["trace"], r["run"]) for r in batch["reports"]] == [("two.jsonl", T1), ("two.jsonl", T2)]
    assert batch["failures"] == []


@pytest.mark.usefixtures("two_runs")
def test_check_run_all_passing_is_exit_0(cli: Cli) -> None:
    """Point 34: the batch verdict; every run passing is exit 0."""
    result = cli("check", "-c", "pass.json", "-t", "two.jsonl", "--input-format", "otel", "--run", "all", "--quiet")
    totals = "PASS  spec  2 traces: 2 passed, 0 failed · 0 errors · 0 warnings"
    assert (result.returncode, result.stdout.strip()) == (0, totals)


@pytest.mark.usefixtures("two_runs")
def test_check_run_all_on_one_run_is_a_batch_of_one(cli: Cli) -> None:
    """Point 34: `--run all` is a batch whatever the number of runs (spec silent on one run; a batch
    of one keeps the output shape stable for scripts)."""
    result = cli("check", "-c", "c.json", "-t", "one.jsonl", "--input-format", "otel", "--run", "all",
                 "--format", "json")
    batch = json.loads(result.stdout)
    assert (result.returncode, batch["schema"], batch["traces"]) == (1, "agent-invariants/check-batch/v1", 1)


@pytest.mark.usefixtures("two_runs")
def test_summary_run_all_is_an_object_by_run_id(cli: Cli) -> None:
    """README: `summary --run all` prints an object of each run's counts by run id, in file order."""
    result = cli("summary", "-t", "two.jsonl", "--input-format", "otel", "--run", "all")
    assert result.returncode == 0, result.stderr
    counts = json.loads(result.stdout)
    assert list(counts) == [T1, T2]
    assert [(c["events"], c["tool_calls"], c["tools"]) for c in counts.values()] == [(4, 1, ["get"])] * 2


@pytest.mark.usefixtures("two_runs")
def test_compare_run_all_pairs_runs_by_id(cli: Cli, write: Any) -> None:
    """Point 34 / README: `compare --run all` pairs the candidate's runs with the baseline's by run id."""
    write("rev.jsonl", lines(run_of(T3, "c"), run_of(T1, "a")))
    result = cli("compare", "-c", "c.json", "--baseline", "three.jsonl", "--candidate", "rev.jsonl",
                 "--input-format", "otel", "--run", "all", "--format", "json")
    assert result.returncode == 1, result.stderr
    batch = json.loads(result.stdout)
    assert (batch["schema"], batch["pairs"]) == ("agent-invariants/compare-batch/v1", 2)
    pairs = [(r["baseline"]["run"], r["candidate"]["run"]) for r in batch["reports"]]
    assert sorted(pairs) == [(T1, T1), (T3, T3)]


@pytest.mark.usefixtures("two_runs")
def test_compare_run_all_baseline_with_one_run_goes_with_every_candidate(cli: Cli) -> None:
    """README: a baseline holding one run goes with every candidate run."""
    result = cli("compare", "-c", "c.json", "--baseline", "one.jsonl", "--candidate", "two.jsonl",
                 "--input-format", "otel", "--run", "all", "--format", "json")
    batch = json.loads(result.stdout)
    assert result.returncode == 1, result.stderr
    assert [(r["baseline"]["run"], r["candidate"]["run"]) for r in batch["reports"]] == [(T1, T1), (T1, T2)]


@pytest.mark.usefixtures("two_runs")
def test_compare_run_all_passing_pairs_are_exit_0(cli: Cli) -> None:
    """Point 34: a compatible batch of pairs is exit 0."""
    result = cli("compare", "-c", "pass.json", "--baseline", "two.jsonl", "--candidate", "two.jsonl",
                 "--input-format", "otel", "--run", "all", "--format", "json")
    batch = json.loads(result.stdout)
    assert (result.returncode, batch["compatible"], batch["pairs"], batch["regressions"]) == (0, True, 2, 0)


@pytest.mark.usefixtures("two_runs")
def test_compare_run_all_candidate_run_without_partner_is_exit_2(cli: Cli) -> None:
    """README: a candidate run nothing pairs with is exit 2 (T2 is not among the baseline's T1, T3)."""
    line = only_stderr_line(cli("compare", "-c", "c.json", "--baseline", "three.jsonl", "--candidate", "two.jsonl",
                                "--input-format", "otel", "--run", "all"))
    assert T2 in line


@pytest.mark.usefixtures("two_runs")
def test_compare_run_id_takes_that_run_from_both_files(cli: Cli) -> None:
    """Point 34: compare takes `--run ID` too."""
    result = cli("compare", "-c", "c.json", "--baseline", "two.jsonl", "--candidate", "two.jsonl",
                 "--input-format", "otel", "--run", T2, "--format", "json")
    report = json.loads(result.stdout)
    assert (report["baseline"]["run"], report["candidate"]["run"]) == (T2, T2)


# -- --out-dir -----------------------------------------------------------------------------------

@pytest.mark.usefixtures("two_runs")
def test_out_dir_writes_each_run_as_convert_run_would(cli: Cli, tmp_path: Path) -> None:
    """§7 / help: --out-dir writes DIR/<run id>.jsonl for each run; each equals `convert --run ID`."""
    (tmp_path / "out").mkdir()
    result = cli("convert", "--from", "otel", "two.jsonl", "--out-dir", "out")
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    assert "converted 2 runs (8 events)" in result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{T1}.jsonl", f"{T2}.jsonl"]
    for run_id in (T1, T2):
        single = cli("convert", "--from", "otel", "two.jsonl", "--run", run_id)
        assert (tmp_path / "out" / f"{run_id}.jsonl").read_text(encoding="utf-8") == single.stdout


@pytest.mark.usefixtures("two_runs")
def test_out_dir_that_is_a_file_is_refused_and_untouched(cli: Cli, tmp_path: Path) -> None:
    """--out-dir must be a folder: a file there is exit 2 and stays as it was."""
    (tmp_path / "afile").write_text("keep\n", encoding="utf-8")
    only_stderr_line(cli("convert", "--from", "otel", "two.jsonl", "--out-dir", "afile"))
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "keep\n"


@pytest.mark.usefixtures("two_runs")
def test_out_dir_holding_a_run_file_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    """Spec silent on overwriting: refusing (exit 2) is reasonable, and then nothing may be half-written:
    the other run's file is not there and the existing one is unchanged."""
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{T2}.jsonl").write_text("keep\n", encoding="utf-8")
    line = only_stderr_line(cli("convert", "--from", "otel", "two.jsonl", "--out-dir", "out"))
    assert f"{T2}.jsonl" in line
    assert [p.name for p in out.iterdir()] == [f"{T2}.jsonl"]
    assert (out / f"{T2}.jsonl").read_text(encoding="utf-8") == "keep\n"


def mcp_session(session: str, start: int = 0) -> list[dict[str, Any]]:
    """An MCP session: initialize, then one `get` call and its reply."""
    def ts(i: int) -> str:
        return f"2026-03-02T09:14:{start + i:02d}.123456Z"
    return [
        {"ts": ts(0), "session": session, "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}},
        {"ts": ts(1), "session": session, "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get", "arguments": {"a": 1}}}},
        {"ts": ts(2), "session": session, "dir": "s2c",
         "msg": {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}}},
    ]


def sessions(*ids: str) -> str:
    return lines(*[r for i, s in enumerate(ids) for r in mcp_session(s, 3 * i)])


def test_out_dir_unsafe_run_ids_stay_inside_the_folder(cli: Cli, tmp_path: Path, write: Any) -> None:
    """Run id = MCP session (point 35). `../x` and `a/b` must not name paths outside DIR or in a
    sub-folder (spec silent on the file names; containment is the only safe reading)."""
    write("m.mcp.jsonl", sessions("../x", "a/b"))
    (tmp_path / "out").mkdir()
    result = cli("convert", "--from", "mcp-log", "m.mcp.jsonl", "--out-dir", "out")
    assert result.returncode == 0, result.stderr
    files = sorted((tmp_path / "out").iterdir())
    assert len(files) == 2 and all(p.is_file() for p in files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mcp.jsonl", "out"]
    run_ids = sorted(json.loads(p.read_text(encoding="utf-8").splitlines()[0])["run_id"] for p in files)
    assert run_ids == ["../x", "a/b"]


def test_out_dir_ids_differing_only_in_case_get_distinct_names(cli: Cli, tmp_path: Path, write: Any) -> None:
    """Runs `A` and `a` are two runs; their files must not collide on a case-insensitive file system
    (spec silent; the product's distinct names are the safe reading)."""
    write("m.mcp.jsonl", sessions("A", "a"))
    result = cli("convert", "--from", "mcp-log", "m.mcp.jsonl", "--out-dir", "out")
    assert result.returncode == 0, result.stderr
    names = [p.name.lower() for p in (tmp_path / "out").iterdir()]
    assert len(names) == len(set(names)) == 2


def test_out_dir_very_long_run_id_gets_a_legal_file_name(cli: Cli, tmp_path: Path, write: Any) -> None:
    """A 300-character run id cannot be a file name as is (255 bytes); the run is still written."""
    long_id = "x" * 300
    write("m.mcp.jsonl", sessions(long_id))
    result = cli("convert", "--from", "mcp-log", "m.mcp.jsonl", "--out-dir", "out")
    assert result.returncode == 0, result.stderr
    [written] = list((tmp_path / "out").iterdir())
    assert len(written.name.encode()) <= 255
    assert json.loads(written.read_text(encoding="utf-8").splitlines()[0])["run_id"] == long_id


def test_empty_session_id_is_bad_input_at_its_line(cli: Cli, write: Any) -> None:
    """Point 35: `session` is a string naming the run; an empty one cannot be a run id: exit 2 at file:line."""
    write("m.mcp.jsonl", sessions("", "b"))
    line = only_stderr_line(cli("convert", "--from", "mcp-log", "m.mcp.jsonl", "--out-dir", "out"))
    assert line.startswith("agent-invariants: m.mcp.jsonl:1: $.session")


def test_out_dir_files_are_all_checked_as_a_folder(cli: Cli, write: Any) -> None:
    """Point 34: `--run all` checks each run "as a folder of traces would be"; the folder `--out-dir`
    writes must then hold the same runs (README: a folder check skips hidden files)."""
    write("m.mcp.jsonl", sessions(".hidden", "../x", "b"))
    write("c.json", DENY_GET)
    assert cli("convert", "--from", "mcp-log", "m.mcp.jsonl", "--out-dir", "out").returncode == 0
    batch = json.loads(cli("check", "-c", "c.json", "-t", "out", "--format", "json").stdout)
    assert batch["traces"] == 3


# -- order and time: §7 common rules, point 36 ---------------------------------------------------

def test_children_before_parents_in_the_file(cli: Cli, write: Any) -> None:
    """§7: events are ordered by time, whatever the order of spans in the file."""
    write("t.jsonl", lines(otlp(tool(SID2, 2000, 3000), root())))
    events = converted(cli, "otel", "t.jsonl")
    assert [(e["seq"], e["type"]) for e in events] == [
        (1, "run.start"), (2, "tool.call"), (3, "tool.result"), (4, "run.completed")]


def test_equal_times_end_before_start(cli: Cli, write: Any) -> None:
    """§7: at equal times ends come before starts (one's end at 3000 and the next one's start at 3000)."""
    write("t.jsonl", lines(otlp(root(), tool(SID3, 3000, 4000, "two"), tool(SID2, 2000, 3000, "one"))))
    events = converted(cli, "otel", "t.jsonl")
    assert kinds(events)[1:5] == [("tool.call", "one"), ("tool.result", "one"), ("tool.call", "two"),
                                  ("tool.result", "two")]


def test_equal_times_nested_shallower_start_first_deeper_end_first(cli: Cli, write: Any) -> None:
    """§7: at equal times: deeper ends, shallower ends, shallower starts, deeper starts."""
    write("t.jsonl", lines(otlp(root(), tool(SID3, 2000, 5000, "inner", parent=SID2), tool(SID2, 2000, 5000, "outer"))))
    events = converted(cli, "otel", "t.jsonl")
    assert kinds(events)[1:5] == [("tool.call", "outer"), ("tool.call", "inner"), ("tool.result", "inner"),
                                  ("tool.result", "outer")]


def test_tool_ending_with_the_root_comes_before_run_completed(cli: Cli, write: Any) -> None:
    """§7: a deeper end before a shallower end at the same time."""
    write("t.jsonl", lines(otlp(root(end=5000), tool(SID2, 2000, 5000))))
    events = converted(cli, "otel", "t.jsonl")
    assert [e["type"] for e in events][-2:] == ["tool.result", "run.completed"]
    assert events[-1]["duration_ms"] == 0.004


def test_clock_going_backwards_keeps_call_before_result_without_duration(cli: Cli, write: Any) -> None:
    """A span ending before it starts. §7 orders by time, but a result before its call would break
    pairing (§10 point 3); spec silent: the product keeps the call first and leaves out duration_ms,
    which must be >= 0 (§1) - a reasonable reading."""
    write("t.jsonl", lines(otlp(root(), tool(SID2, 3000, 2000, **{"gen_ai.tool.call.id": "c1"}))))
    events = converted(cli, "otel", "t.jsonl")
    assert [e["type"] for e in events] == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert "duration_ms" not in events[2]


def test_span_without_end_time_has_no_result(cli: Cli, write: Any) -> None:
    """README: a call whose span never ended (exported while it ran) gets no result."""
    write("t.jsonl", lines(otlp(root(), tool(SID2, 2000, None, **{"gen_ai.tool.call.id": "c1"}))))
    events = converted(cli, "otel", "t.jsonl")
    assert [(e["type"], e.get("call_id")) for e in events] == [
        ("run.start", None), ("tool.call", "c1"), ("run.completed", None)]


def test_repeated_native_call_id_gets_suffix_and_keeps_original(cli: Cli, write: Any) -> None:
    """§7: a repeated id gets `~n`, and the original goes to data.native_call_id."""
    write("t.jsonl", lines(otlp(root(), tool(SID2, 2000, 3000, **{"gen_ai.tool.call.id": "c1"}),
                                tool(SID3, 4000, 5000, **{"gen_ai.tool.call.id": "c1"}))))
    events = converted(cli, "otel", "t.jsonl")
    assert [(e["call_id"], e["data"].get("native_call_id")) for e in events[1:5]] == [
        ("c1", None), ("c1", None), ("c1~2", "c1"), ("c1~2", "c1")]


def test_duplicate_span_ids_become_two_calls(cli: Cli, write: Any) -> None:
    """§7: without a native id the span id is the call id; a span id seen twice is a repeated id."""
    write("t.jsonl", lines(otlp(root(), tool(SID2, 2000, 3000, "x"), tool(SID2, 4000, 5000, "y"))))
    events = converted(cli, "otel", "t.jsonl")
    assert [(e["tool"], e["call_id"]) for e in events[1:5]] == [
        ("x", SID2), ("x", SID2), ("y", SID2 + "~2"), ("y", SID2 + "~2")]


def test_parent_cycle_terminates_with_every_span(cli: Cli, write: Any) -> None:
    """Spans whose parents form a cycle: spec silent; the import must end and keep both calls."""
    write("t.jsonl", lines(otlp(root(), tool(SID2, 2000, 3000, "x", parent=SID3),
                                tool(SID3, 2000, 3000, "y", parent=SID2))))
    result = cli("convert", "--from", "otel", "t.jsonl", timeout=20)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(kinds(events)[1:5]) == [("tool.call", "x"), ("tool.call", "y"), ("tool.result", "x"),
                                          ("tool.result", "y")]


def test_base64_ids_normalise_to_hex(cli: Cli, write: Any) -> None:
    """§7 table / point 30: ids as hex or base64 are normalised: both give the same events."""
    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()
    write("hex.jsonl", lines(otlp(root(), tool(SID2, 2000, 3000))))
    write("b64.jsonl", lines(otlp(root(trace=b64(T1), sid=b64(ROOT)),
                                  tool(b64(SID2), 2000, 3000, parent=b64(ROOT), trace=b64(T1)))))
    hex_events, b64_events = converted(cli, "otel", "hex.jsonl"), converted(cli, "otel", "b64.jsonl")
    for event in hex_events + b64_events:
        event["data"]["source"].pop("file")
    assert hex_events == b64_events
    assert (b64_events[0]["run_id"], b64_events[1]["call_id"]) == (T1, SID2)


def test_nanosecond_times_as_strings_or_numbers_without_float_rounding(cli: Cli, write: Any) -> None:
    """Point 30/36: times as nanosecond strings or numbers, converted without float rounding."""
    big = 1700000000123456789
    call = tool(SID2, big + 1, big + 2)
    call["startTimeUnixNano"] = big + 1  # a JSON number above 2**53
    write("t.jsonl", lines(otlp(root(start=big, end=big + 9), call)))
    events = converted(cli, "otel", "t.jsonl")
    assert [e["time"] for e in events] == ["2023-11-14T22:13:20.123456789Z", "2023-11-14T22:13:20.123456790Z",
                                           "2023-11-14T22:13:20.123456791Z", "2023-11-14T22:13:20.123456798Z"]


def test_iso_times_kept_to_the_microsecond(cli: Cli, write: Any) -> None:
    """Point 36: ISO strings (MCP logs) are kept to the microsecond."""
    write("m.mcp.jsonl", sessions("s"))
    events = converted(cli, "mcp-log", "m.mcp.jsonl")
    assert [e["time"] for e in events] == ["2026-03-02T09:14:00.123456Z", "2026-03-02T09:14:01.123456Z",
                                           "2026-03-02T09:14:02.123456Z", "2026-03-02T09:14:02.123456Z"]


# -- attributes, args and results: §7, point 26 ----------------------------------------------------

def tool_with(attr: str, value: dict[str, Any]) -> str:
    attrs = [kv("gen_ai.operation.name", av("execute_tool")), kv("gen_ai.tool.name", av("get")), kv(attr, value)]
    return lines(otlp(root(), span(SID2, "execute_tool get", 2000, 3000, attrs)))


@pytest.mark.parametrize(("value", "args", "raw"), [
    ({"stringValue": '{"q":[1,2]}'}, {"q": [1, 2]}, None),
    ({"stringValue": "[1,2]"}, None, "[1,2]"),
    ({"stringValue": "{'q': 1}"}, None, "{'q': 1}"),
    ({"stringValue": "{not json"}, None, "{not json"),
])
def test_args_text(cli: Cli, write: Any, value: dict[str, Any], args: Any, raw: Any) -> None:
    """§7: string args are parsed as JSON; a non-object or a Python repr goes to data.raw_args, never evaluated."""
    write("t.jsonl", tool_with("gen_ai.tool.call.arguments", value))
    call = converted(cli, "otel", "t.jsonl")[1]
    assert (call.get("args"), call["data"].get("raw_args")) == (args, raw)


def test_args_as_otlp_kvlist_of_every_value_type(cli: Cli, write: Any) -> None:
    """§7: args are an object; an OTLP kvlist with int-as-string, bool, double and array values becomes
    that object (ints exact). Bytes: spec silent; the product keeps them as the base64 text."""
    value = {"kvlistValue": {"values": [
        kv("q", {"intValue": "9007199254740993"}), kv("b", {"boolValue": True}), kv("d", {"doubleValue": 1.5}),
        kv("arr", {"arrayValue": {"values": [{"stringValue": "s"}, {"intValue": "2"}]}}),
        kv("by", {"bytesValue": "AAE="})]}}
    write("t.jsonl", tool_with("gen_ai.tool.call.arguments", value))
    call = converted(cli, "otel", "t.jsonl")[1]
    assert call["args"] == {"q": 9007199254740993, "b": True, "d": 1.5, "arr": ["s", 2], "by": "AAE="}


@pytest.mark.parametrize(("value", "result", "raw"), [
    ({"stringValue": "plain words"}, "plain words", None),
    ({"stringValue": '{"n":12345678901234567890}'}, {"n": 12345678901234567890}, None),
    ({"stringValue": "{'k': None}"}, "{'k': None}", "{'k': None}"),
    ({"intValue": "12345678901234567890"}, 12345678901234567890, None),
])
def test_result_text(cli: Cli, write: Any, value: dict[str, Any], result: Any, raw: Any) -> None:
    """Point 26: a result given as text is parsed as JSON when valid, else the string itself; a Python
    repr stays a string and is also copied to data.raw_result."""
    write("t.jsonl", tool_with("gen_ai.tool.call.result", value))
    event = converted(cli, "otel", "t.jsonl")[2]
    assert (event["type"], event.get("result"), event["data"].get("raw_result")) == ("tool.result", result, raw)


def test_huge_result_is_kept_whole(cli: Cli, write: Any) -> None:
    """Point 26: the result is the parsed text, whatever its size (300 kB here, under the line limit)."""
    blob = "x" * 300_000
    write("t.jsonl", tool_with("gen_ai.tool.call.result", {"stringValue": json.dumps({"blob": blob})}))
    assert converted(cli, "otel", "t.jsonl")[2]["result"] == {"blob": blob}


@pytest.mark.parametrize(("extra", "ok"), [
    ({"status": {"code": "STATUS_CODE_ERROR", "message": "boom"}}, False),
    ({"status": {"code": 2}}, False),
    ({"status": {}}, True),
    ({"status": {"code": "STATUS_CODE_OK"}}, True),
    ({"events": [{"name": "exception", "timeUnixNano": "2500",
                  "attributes": [kv("exception.message", av("bad"))]}]}, False),
])
def test_otel_tool_failure(cli: Cli, write: Any, extra: dict[str, Any], ok: bool) -> None:
    """Point 30: enums as integers or names; an empty status is UNSET; a tool failure is status ERROR
    (code 2) or an `exception` span event; error.type is optional."""
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get"}
    write("t.jsonl", lines(otlp(root(), span(SID2, "execute_tool get", 2000, 3000, attrs, **extra))))
    assert converted(cli, "otel", "t.jsonl")[2]["ok"] is ok


# -- ainv.* convention and profiles: §7 mapping profile, point 36 ------------------------------------

def convention_spans() -> list[dict[str, Any]]:
    return [
        span(SID2, "approval.granted", 1500, 1600, {"ainv.approval_scope": "refund", "ainv.approved": True,
                                                     "ainv.approver": "alice", "ainv.args": '{"amount":5}'}),
        span(SID3, "control.stop", 2000, 2100, {"ainv.reason": "user"}),
        span("a000000000000004", "outcome.observed", 2200, 2300, {
            "ainv.outcome_id": "o1", "ainv.verdict": "satisfied", "ainv.evidence_class": "externally_observed"}),
        span("a000000000000005", "agent.message", 2400, 2500, {"ainv.claims_completion": True, "ainv.confidence": 0.9}),
    ]


def test_ainv_convention_events_at_span_start(cli: Cli, write: Any) -> None:
    """§7 built-in convention / point 36: a span named after an event type becomes that event at the
    span's start, its fields from ainv.* (ainv.args as JSON text)."""
    write("t.jsonl", lines(otlp(root(), *convention_spans())))
    events = converted(cli, "otel", "t.jsonl")
    strip = [{k: v for k, v in e.items() if k not in ("run_id", "data")} for e in events[1:5]]
    assert strip == [
        {"seq": 2, "type": "approval.granted", "time": "1970-01-01T00:00:00.000001500Z", "approval_scope": "refund",
         "approved": True, "approver": "alice", "args": {"amount": 5}},
        {"seq": 3, "type": "control.stop", "time": "1970-01-01T00:00:00.000002000Z", "reason": "user"},
        {"seq": 4, "type": "outcome.observed", "time": "1970-01-01T00:00:00.000002200Z", "outcome_id": "o1",
         "verdict": "satisfied", "evidence_class": "externally_observed"},
        {"seq": 5, "type": "agent.message", "time": "1970-01-01T00:00:00.000002400Z", "claims_completion": True,
         "confidence": 0.9},
    ]


def test_ainv_value_the_event_cannot_hold_is_exit_2_at_source_line(cli: Cli, write: Any) -> None:
    """README: what the mapping cannot make valid (`ainv.approved: "yes"`) is bad input at its source line."""
    write("t.jsonl", lines(otlp(root()), otlp(root(trace=T2),
                                              span(SID2, "approval.granted", 1500, 1600, {"ainv.approved": "yes"},
                                                   trace=T2))))
    line = only_stderr_line(cli("convert", "--from", "otel", "t.jsonl", "--run", T2))
    assert line.startswith("agent-invariants: t.jsonl:2: ") and "approved" in line


def test_root_ainv_output_is_the_run_output(cli: Cli, write: Any) -> None:
    """Point 30: `output` comes from the ainv.output convention (JSON text) on the run root."""
    spans = root()
    spans["attributes"].append(kv("ainv.output", av('{"total":3}')))
    write("t.jsonl", lines(otlp(spans)))
    assert converted(cli, "otel", "t.jsonl")[-1]["output"] == {"total": 3}


def test_otel_without_output_reports_output_missing(cli: Cli, write: Any) -> None:
    """Point 30: without ainv.output or a profile the output is absent: output rules report output_missing."""
    write("t.jsonl", lines(otlp(root(), tool(SID2, 2000, 3000))))
    write("c.json", {"version": 2, "name": "spec", "rules": [
        {"id": "out", "kind": "output_match", "match": {"total": 3}}]})
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--input-format", "otel", "--format", "json")
    assert result.returncode == 1, result.stderr
    [violation] = json.loads(result.stdout)["violations"]
    assert (violation["code"], violation["status"], violation["event_seq"]) == \
        ("output_match.output_missing", "unresolved", 4)


def review_trace() -> str:
    return lines(otlp(root(), span(SID2, "human_review", 1500, 1600, {
        "decision": "approve", "scope": "refund", "user.id": "bob", "payload": '{"x":1}'})))


def test_json_profile_emits_with_attr_json_attr_and_literal(cli: Cli, write: Any) -> None:
    """§7 user profiles: `{when, emit}` with literal, $attr and $json_attr; the event keeps the record's time."""
    write("t.jsonl", review_trace())
    write("p.json", {"rules": [{"when": {"name": "human_review", "attributes": {"decision": "approve"}},
                                "emit": {"type": "approval.granted", "approval_scope": {"$attr": "scope"},
                                         "approver": {"$attr": "user.id"}, "args": {"$json_attr": "payload"},
                                         "approved": True}}]})
    grant = converted(cli, "otel", "t.jsonl", "--profile", "p.json")[1]
    assert {k: grant[k] for k in ("type", "time", "approval_scope", "approver", "args", "approved")} == {
        "type": "approval.granted", "time": "1970-01-01T00:00:00.000001500Z", "approval_scope": "refund",
        "approver": "bob", "args": {"x": 1}, "approved": True}
    assert grant["data"]["source"] == source("otel", "t.jsonl", 1, SID2)


def test_yaml_profile(cli: Cli, write: Any) -> None:
    """§7: profiles may be YAML."""
    write("t.jsonl", review_trace())
    write("p.yaml", 'rules:\n  - when: {name: "human_*"}\n'
                    '    emit: {type: approval.granted, approver: {"$attr": "user.id"}}\n')
    grant = converted(cli, "otel", "t.jsonl", "--profile", "p.yaml")[1]
    assert (grant["type"], grant["approver"]) == ("approval.granted", "bob")


def test_profile_first_match_wins(cli: Cli, write: Any) -> None:
    """§7: the first match wins."""
    write("t.jsonl", review_trace())
    write("p.json", {"rules": [{"when": {"name": "human_review"}, "emit": {"type": "approval.granted"}},
                               {"when": {"name": "human_*"}, "emit": {"type": "control.stop"}}]})
    assert [e["type"] for e in converted(cli, "otel", "t.jsonl", "--profile", "p.json")] == [
        "run.start", "approval.granted", "run.completed"]


def test_profile_without_it_nothing_is_read_from_text(cli: Cli, write: Any) -> None:
    """§7 "never from text": a human_review span without a profile is no approval."""
    write("t.jsonl", review_trace())
    assert [e["type"] for e in converted(cli, "otel", "t.jsonl")] == ["run.start", "run.completed"]


@pytest.mark.parametrize(("name", "text", "where"), [
    ("p.json", '{"rules":[{"when":{"name":"x"},"emit":{"approver":"a"}}]}', "p.json:1: $.rules[0].emit.type: "),
    ("p.json", '{"rules":[{"when":{"name":"x","colour":1},"emit":{"type":"control.stop"}}]}',
     "p.json:1: $.rules[0].when.colour: "),
    ("p.yaml", "rules:\n  - when: {name: x}\n    emit: {type: 5}\n", "p.yaml:3: $.rules[0].emit.type: "),
    ("p.json", '{"rules":[{"when":{"attributes":{"a":{"$bogus":1}}},"emit":{"type":"control.stop"}}]}',
     "$.rules[0].when.attributes.a.$bogus: "),
])
def test_profile_errors_name_the_json_path(cli: Cli, write: Any, name: str, text: str, where: str) -> None:
    """§7 profiles; §2 (unknown `$` keys are load errors): a bad profile is exit 2 naming its JSON path."""
    write("t.jsonl", review_trace())
    write(name, text)
    line = only_stderr_line(cli("convert", "--from", "otel", "t.jsonl", "--profile", name))
    assert where in line


def test_profile_json_attr_that_cannot_be_args_is_exit_2_at_source_line(cli: Cli, write: Any) -> None:
    """README: what the mapping cannot make valid is bad input at its source line (args must be an object)."""
    write("t.jsonl", review_trace())
    write("p.json", {"rules": [{"when": {"name": "human_review"},
                                "emit": {"type": "approval.granted", "args": {"$json_attr": "scope"}}}]})
    line = only_stderr_line(cli("convert", "--from", "otel", "t.jsonl", "--profile", "p.json"))
    assert line.startswith("agent-invariants: t.jsonl:1: $.args: ")


# -- the other formats ----------------------------------------------------------------------------

AGENTS_TRACE = "trace_0123456789abcdef0123456789abcdef"


def agents_records() -> list[dict[str, Any]]:
    def sp(sid: str, start: str, end: str, data: dict[str, Any], error: Any = None,
           parent: str | None = "span_agent") -> dict[str, Any]:
        return {"object": "trace.span", "id": sid, "trace_id": AGENTS_TRACE, "parent_id": parent,
                "started_at": f"2026-03-02T09:14:{start}+00:00", "ended_at": f"2026-03-02T09:14:{end}+00:00",
                "span_data": data, "error": error}
    return [
        {"object": "trace", "id": AGENTS_TRACE, "workflow_name": "wf", "group_id": None, "metadata": None},
        sp("span_agent", "00.000001", "09.000001", {"type": "agent", "name": "A", "tools": ["get"]}, parent=None),
        sp("span_f1", "01.123456", "02.000000", {"type": "function", "name": "get", "input": '{"a": 1}',
                                                 "output": "{'r': 2}"}),
        sp("span_f2", "03", "04", {"type": "function", "name": "put", "input": "not json", "output": None},
           error={"message": "boom", "data": None}),
        sp("span_h", "05", "05.5", {"type": "handoff", "from_agent": "A", "to_agent": "B"}),
        sp("span_g", "06", "07", {"type": "guardrail", "name": "no_pii", "triggered": True}),
        sp("span_c", "08", "08.1", {"type": "custom", "name": "outcome.observed", "data": {
            "outcome_id": "o", "verdict": "satisfied", "evidence_class": "externally_observed"}}),
        sp("span_x", "08.2", "08.3", {"type": "mystery_kind"}),
    ]


def test_openai_agents_mapping(cli: Cli, write: Any) -> None:
    """§7 table row openai-agents, points 26, 28, 31, 32, 33: span id is the call id; a repr result is a
    string and data.raw_result; guardrail -> control.stop at its end; handoff -> agent.handoff;
    custom span named after an event type; a tripwire fails the run with the guardrail as reason."""
    write("a.jsonl", lines(*agents_records()))
    events = converted(cli, "openai-agents", "a.jsonl")
    summary = [(e["type"], e["time"][17:], e.get("call_id"), e.get("ok"), e.get("reason")) for e in events]
    assert summary == [
        ("run.start", "00.000001Z", None, None, None),
        ("tool.call", "01.123456Z", "span_f1", None, None),
        ("tool.result", "02.000000Z", "span_f1", True, None),
        ("tool.call", "03.000000Z", "span_f2", None, None),
        ("tool.result", "04.000000Z", "span_f2", False, None),
        ("agent.handoff", "05.000000Z", None, None, None),
        ("control.stop", "07.000000Z", None, None, "guardrail:no_pii"),
        ("outcome.observed", "08.000000Z", None, None, None),
        ("run.failed", "09.000001Z", None, None, "guardrail:no_pii"),
    ]
    assert (events[1]["args"], events[2]["result"]) == ({"a": 1}, "{'r': 2}")
    assert events[2]["data"]["raw_result"] == "{'r': 2}"
    assert events[3]["data"]["raw_args"] == "not json" and "args" not in events[3]
    assert events[5]["data"]["to"] == "B"
    assert events[1]["data"]["source"] == source("openai-agents", "a.jsonl", 3, "span_f1")


def test_unknown_record_kinds_are_skipped_and_counted(cli: Cli, write: Any) -> None:
    """README: records of kinds the mapping does not use are skipped and counted (convert says how many)."""
    write("a.jsonl", lines(*agents_records()))
    result = cli("convert", "--from", "openai-agents", "a.jsonl")
    assert result.stderr.strip() == ("agent-invariants: converted 1 run (9 events); "
                                     "skipped 1 record of kinds the mapping does not use")


def test_unknown_otlp_record_kind_is_skipped_and_counted(cli: Cli, write: Any) -> None:
    """README: a metrics line in an OTLP file is a record kind the mapping does not use."""
    write("t.jsonl", lines(otlp(root()), {"resourceMetrics": []}))
    result = cli("convert", "--from", "otel", "t.jsonl")
    assert result.returncode == 0
    assert "skipped 1 record of kinds the mapping does not use" in result.stderr


def langsmith_run(rid: str, run_type: str, name: str, start: str, end: str, parent: str | None,
                  **extra: Any) -> dict[str, Any]:
    dotted = "20260302T091400000001Zr1" + ("" if parent is None else f".20260302T0914{start.replace('.', '')}Z{rid}")
    return {"id": rid, "name": name, "run_type": run_type, "start_time": f"2026-03-02T09:14:{start}",
            "end_time": f"2026-03-02T09:14:{end}", "parent_run_id": parent, "trace_id": "r1",
            "dotted_order": dotted, **extra}


def test_langsmith_root_run_ends_before_a_run_that_starts_at_that_instant(cli: Cli, write: Any) -> None:
    """§7: "At equal times: deeper ends, shallower ends, shallower starts, deeper starts": the root
    run's end is the shallowest end, so a child starting when it ends (a clock skew) comes after it,
    and a child ending when the root starts comes before run.start."""
    root_run = langsmith_run("r1", "chain", "Agent", "02", "05", None, inputs={}, outputs={"output": 1})
    late = langsmith_run("t1", "tool", "get", "05", "06", "r1", inputs={"a": 1}, outputs={"output": 2})
    early = langsmith_run("t0", "tool", "put", "01", "02", "r1", inputs={"a": 0}, outputs={"output": 0})
    root_run["child_runs"] = [early, late]
    write("r.jsonl", lines(root_run))
    events = converted(cli, "langsmith", "r.jsonl")
    assert [(e["type"], e.get("tool")) for e in events] == [
        ("tool.call", "put"), ("tool.result", "put"), ("run.start", None),
        ("run.completed", None), ("tool.call", "get"), ("tool.result", "get")]


def test_langsmith_mapping(cli: Cli, write: Any) -> None:
    """Point 27 / §7 langsmith row: child_runs flattened and ordered by dotted_order; `inputs.input` only
    when it is a string holding a JSON object; the result is a ToolMessage's content (parsed, point 26);
    call ids: ToolMessage tool_call_id, else extra.tool_call_id; a ToolMessage status error or a run error
    is ok:false; root outputs.output is the run's output."""
    root_run = langsmith_run("r1", "chain", "Agent", "00.000001", "09.000001", None, inputs={},
                             outputs={"output": {"total": 3}})
    t1 = langsmith_run("t1", "tool", "get", "03", "04", "r1", inputs={"input": '{"a": 1}'}, outputs={"output": {
        "type": "tool", "content": '{"r": 2}', "tool_call_id": "call_T", "status": "success"}})
    t2 = langsmith_run("t2", "tool", "get", "05", "06", "r1", inputs={"a": 2}, outputs={"output": {
        "type": "tool", "content": "nope", "tool_call_id": "call_U", "status": "error"}})
    t3 = langsmith_run("t3", "tool", "put", "07", "08", "r1", inputs={"input": "[1]"}, outputs=None,
                       error="ValueError('x')", extra={"tool_call_id": "call_X"})
    root_run["child_runs"] = [t3, t2, t1]
    write("r.jsonl", lines(root_run))
    events = converted(cli, "langsmith", "r.jsonl")
    assert [(e["type"], e.get("call_id"), e.get("args"), e.get("result"), e.get("ok")) for e in events] == [
        ("run.start", None, None, None, None),
        ("tool.call", "call_T", {"a": 1}, None, None),
        ("tool.result", "call_T", None, {"r": 2}, True),
        ("tool.call", "call_U", {"a": 2}, None, None),
        ("tool.result", "call_U", None, "nope", False),
        ("tool.call", "call_X", {"input": "[1]"}, None, None),
        ("tool.result", "call_X", None, None, False),
        ("run.completed", None, None, None, None),
    ]
    assert events[-1]["output"] == {"total": 3}
    assert events[2]["data"]["source"] == source("langsmith", "r.jsonl", 1, "t1")


def test_langsmith_call_id_from_earlier_llm_run(cli: Cli, write: Any) -> None:
    """Point 28: without a ToolMessage id, the call id comes from the nearest earlier LLM run under the
    same parent, by tool name and order; a run error makes run.failed with the reason (point 31)."""
    root_run = langsmith_run("r1", "chain", "Agent", "00.000001", "09.000001", None, inputs={}, error="Boom")
    llm = langsmith_run("l1", "llm", "model", "01", "02", "r1", inputs={}, outputs={"generations": [[{"message": {
        "kwargs": {"content": "", "tool_calls": [{"id": "call_A", "name": "get", "args": {"a": 1}}]}}}]]})
    tool_run = langsmith_run("t9", "tool", "get", "03", "04", "r1", inputs={"a": 1}, outputs={"output": "plain"})
    root_run["child_runs"] = [llm, tool_run]
    write("r.jsonl", lines(root_run))
    events = converted(cli, "langsmith", "r.jsonl")
    assert [(e["type"], e.get("call_id"), e.get("result")) for e in events] == [
        ("run.start", None, None), ("tool.call", "call_A", None), ("tool.result", "call_A", "plain"),
        ("run.failed", None, None)]
    assert (events[-1]["status"], events[-1]["reason"]) == ("failed", "Boom")


def oi_span(sid: str, name: str, start: int, end: int, kind: str, parent: str | None = "b000000000000001",
            **attrs: Any) -> dict[str, Any]:
    return span(sid, name, start, end, {"openinference.span.kind": kind, **attrs}, parent=parent)


def test_openinference_indexed_keys_rebuilt_numerically(cli: Cli, write: Any) -> None:
    """§7 openinference row / point 28: `llm.*_messages.<i>` keys are rebuilt numerically (index 2 before
    10), and the LLM's tool_call ids go to the later TOOL spans by name and order."""
    prefix = "llm.output_messages.0.message.tool_calls"
    write("t.jsonl", lines(otlp(
        oi_span("b000000000000001", "Agent", 1000, 9000, "AGENT", parent=None),
        oi_span("b000000000000002", "llm", 2000, 3000, "LLM", **{
            f"{prefix}.10.tool_call.function.name": "get", f"{prefix}.10.tool_call.id": "call_10",
            f"{prefix}.2.tool_call.function.name": "get", f"{prefix}.2.tool_call.id": "call_2"}),
        oi_span("b000000000000003", "get", 4000, 5000, "TOOL", **{"tool.name": "get"}),
        oi_span("b000000000000004", "get", 6000, 7000, "TOOL", **{"tool.name": "get"}))))
    events = converted(cli, "openinference", "t.jsonl")
    assert [e.get("call_id") for e in events if e["type"] == "tool.call"] == ["call_2", "call_10"]


def test_openinference_tool_handoff_and_guardrail(cli: Cli, write: Any) -> None:
    """§7 openinference row, points 26, 32, 33: input.value/output.value parsed; a TOOL span `handoff to B`
    without tool.name is agent.handoff; a tripped GUARDRAIL is control.stop at its end and fails the run."""
    write("t.jsonl", lines(otlp(
        oi_span("b000000000000003", "get", 4000, 5000, "TOOL", **{"tool.name": "get", "input.value": '{"a":1}',
                                                                   "output.value": "[1,2]"}),
        oi_span("b000000000000001", "Agent", 1000, 9000, "AGENT", parent=None),
        oi_span("b000000000000004", "handoff to B", 6000, 6100, "TOOL"),
        span("b000000000000005", "g", 7000, 7500, {"openinference.span.kind": "GUARDRAIL"},
             parent="b000000000000001", status={"code": "STATUS_CODE_ERROR", "message": "tripwire"}))))
    events = converted(cli, "openinference", "t.jsonl")
    assert [(e["type"], e["time"][-7:]) for e in events] == [
        ("run.start", "001000Z"), ("tool.call", "004000Z"), ("tool.result", "005000Z"),
        ("agent.handoff", "006000Z"), ("control.stop", "007500Z"), ("run.failed", "009000Z")]
    assert (events[1]["args"], events[2]["result"], events[3]["data"]["to"], events[4]["reason"]) == (
        {"a": 1}, [1, 2], "B", "guardrail:g")


def mcp(ts: str, direction: str, msg: dict[str, Any], session: str = "s1") -> dict[str, Any]:
    return {"ts": f"2026-03-02T09:14:{ts}Z", "session": session, "dir": direction, "msg": {"jsonrpc": "2.0", **msg}}


MCP_LOG = [
    mcp("00.000001", "c2s", {"id": 1, "method": "initialize", "params": {}}),
    mcp("00.100000", "s2c", {"id": 1, "result": {"protocolVersion": "2025-06-18"}}),
    mcp("01.000000", "c2s", {"id": 2, "method": "tools/call", "params": {"name": "refund", "arguments": {"amt": 5}}}),
    mcp("01.500000", "s2c", {"id": 1, "method": "elicitation/create", "params": {"message": "ok?"}}),
    mcp("02.000000", "c2s", {"id": 1, "result": {"action": "accept", "content": {"ok": True}}}),
    mcp("03.000000", "s2c", {"id": 2, "result": {"content": [{"type": "text", "text": "done"}],
                                                 "structuredContent": {"r": 1}}}),
    mcp("04.000000", "c2s", {"id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}),
    mcp("05.000000", "c2s", {"method": "notifications/cancelled", "params": {"requestId": 3}}),
    mcp("06.000000", "c2s", {"id": 4, "method": "tools/call", "params": {"name": "bad", "arguments": {}}}),
    mcp("07.000000", "s2c", {"id": 4, "result": {"content": [{"type": "text", "text": '{"e":1}'}], "isError": True}}),
    mcp("09.000000", "c2s", {"id": 6, "method": "tools/call", "params": {"name": "x", "arguments": {}}}),
    mcp("09.500000", "s2c", {"id": 6, "error": {"code": -32602, "message": "unknown tool"}}),
]


def test_mcp_log_mapping(cli: Cli, write: Any) -> None:
    """§7 mcp-log row / point 35: call id `<session>:<id>`; replies pair on (session, requesting side,
    id) - the server's elicitation id 1 is not the client's initialize id 1; an accepted elicitation is
    approval.granted of the pending call with args = content; structuredContent before content;
    cancelled -> tool.cancelled and no result; isError and an error reply are ok:false; end of log
    -> run.completed."""
    write("m.jsonl", lines(*MCP_LOG))
    events = converted(cli, "mcp-log", "m.jsonl")
    assert [(e["type"], e.get("tool"), e.get("call_id"), e.get("ok")) for e in events] == [
        ("run.start", None, None, None),
        ("tool.call", "refund", "s1:2", None),
        ("approval.granted", "refund", "s1:2", None),
        ("tool.result", "refund", "s1:2", True),
        ("tool.call", "slow", "s1:3", None),
        ("tool.cancelled", "slow", "s1:3", None),
        ("tool.call", "bad", "s1:4", None),
        ("tool.result", "bad", "s1:4", False),
        ("tool.call", "x", "s1:6", None),
        ("tool.result", "x", "s1:6", False),
        ("run.completed", None, None, None),
    ]
    assert (events[2]["approved"], events[2]["args"], events[3]["result"]) == (True, {"ok": True}, {"r": 1})
    assert events[2]["data"]["source"] == source("mcp-log", "m.jsonl", 5)
    assert events[-1]["time"] == "2026-03-02T09:14:09.500000Z"


def test_mcp_declined_elicitation_is_not_approved(cli: Cli, write: Any) -> None:
    """§7 mcp-log row: an elicitation not accepted gives `approved: false`."""
    log = list(MCP_LOG[:4]) + [mcp("02.000000", "c2s", {"id": 1, "result": {"action": "decline"}})]
    write("m.jsonl", lines(*log))
    grant = [e for e in converted(cli, "mcp-log", "m.jsonl") if e["type"] == "approval.granted"]
    assert [g["approved"] for g in grant] == [False]


def test_mcp_hoist_elicitation_moves_grant_before_call(cli: Cli, write: Any) -> None:
    """§7: `hoist_elicitation: true` moves the grant to just before its call and marks it data.hoisted."""
    write("m.jsonl", lines(*MCP_LOG))
    write("p.json", {"hoist_elicitation": True, "rules": []})
    events = converted(cli, "mcp-log", "m.jsonl", "--profile", "p.json")
    assert [e["type"] for e in events[:4]] == ["run.start", "approval.granted", "tool.call", "tool.result"]
    assert events[1]["data"]["hoisted"] is True


def test_mcp_string_arguments_are_parsed_as_json(cli: Cli, write: Any) -> None:
    """§7 common rules: "String args are parsed as JSON. A non-object or a Python repr goes to data.raw_args"."""
    write("m.jsonl", lines(MCP_LOG[0], mcp("01.000000", "c2s", {
        "id": 2, "method": "tools/call", "params": {"name": "get", "arguments": '{"q": 1}'}})))
    call = converted(cli, "mcp-log", "m.jsonl")[1]
    assert (call.get("args"), call["data"].get("raw_args")) == ({"q": 1}, None)


def test_mcp_text_result_not_json_stays_text(cli: Cli, write: Any) -> None:
    """Point 26: MCP text content that is not JSON is the string itself."""
    write("m.jsonl", lines(MCP_LOG[0], MCP_LOG[2], mcp("03.000000", "s2c", {
        "id": 2, "result": {"content": [{"type": "text", "text": "not json {"}]}})))
    assert converted(cli, "mcp-log", "m.jsonl")[2]["result"] == "not json {"


@pytest.mark.parametrize(("fmt", "name"), [
    ("otel", "o.jsonl"), ("openinference", "i.jsonl"), ("openai-agents", "a.jsonl"),
    ("langsmith", "r.jsonl"), ("mcp-log", "m.jsonl")])
def test_auto_tells_the_format_from_the_first_record(cli: Cli, write: Any, fmt: str, name: str) -> None:
    """§7: `auto` sniffs the first record: it gives the same events as the explicit format."""
    samples = {
        "o.jsonl": lines(otlp(root(), tool(SID2, 2000, 3000))),
        "i.jsonl": lines(otlp(oi_span("b000000000000001", "Agent", 1000, 9000, "AGENT", parent=None),
                              oi_span("b000000000000003", "get", 4000, 5000, "TOOL", **{"tool.name": "get"}))),
        "a.jsonl": lines(*agents_records()),
        "r.jsonl": lines(langsmith_run("r1", "chain", "Agent", "00.000001", "09.000001", None, inputs={},
                                       child_runs=[langsmith_run("t1", "tool", "get", "03", "04", "r1",
                                                                 inputs={"a": 1}, outputs={"output": "x"})])),
        "m.jsonl": lines(*MCP_LOG),
    }
    write(name, samples[name])
    explicit = converted(cli, fmt, name)
    assert converted(cli, "auto", name) == explicit
    assert explicit[0]["data"]["source"]["format"] == fmt


# -- provenance in reports, determinism --------------------------------------------------------------

@pytest.mark.usefixtures("two_runs")
def test_sarif_and_github_locations_point_at_source_file_and_line(cli: Cli) -> None:
    """README: a violation points at the source file, the line of the record and its span (SARIF too)."""
    args = ("check", "-c", "c.json", "-t", "two.jsonl", "--input-format", "otel", "--run", T2)
    sarif = json.loads(cli(*args, "--format", "sarif").stdout)
    [result] = sarif["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert (physical["artifactLocation"]["uri"], physical["region"]["startLine"]) == ("two.jsonl", 2)
    assert result["properties"]["span_id"] == "b000000000000002"
    github = cli(*args, "--format", "github").stdout
    assert github.startswith("::error file=two.jsonl,line=2,title=no-get (deny_tool)::Denied tool called: get.")


def test_data_source_names_format_file_line_and_span(cli: Cli, write: Any) -> None:
    """§7: `data.source` holds {format, file, line, span_id}; the line is the record's physical line."""
    write("t.jsonl", "\n" + lines(otlp(root(), tool(SID2, 2000, 3000))))
    events = converted(cli, "otel", "t.jsonl")
    assert [e["data"]["source"] for e in events] == [
        source("otel", "t.jsonl", 2, ROOT), source("otel", "t.jsonl", 2, SID2), source("otel", "t.jsonl", 2, SID2),
        source("otel", "t.jsonl", 2, ROOT)]


@pytest.mark.usefixtures("two_runs")
def test_two_runs_are_byte_identical(cli: Cli, tmp_path: Path) -> None:
    """Determinism: the same input gives the same bytes, for convert and for a batch check."""
    first = cli("convert", "--from", "otel", "two.jsonl", "--run", T2)
    second = cli("convert", "--from", "otel", "two.jsonl", "--run", T2)
    assert first.stdout == second.stdout and first.stdout
    args = ("check", "-c", "c.json", "-t", "two.jsonl", "--input-format", "otel", "--run", "all", "--format", "json")
    assert cli(*args).stdout == cli(*args).stdout
    cli("convert", "--from", "otel", "two.jsonl", "--out-dir", "d1")
    cli("convert", "--from", "otel", "two.jsonl", "--out-dir", "d2")
    assert [p.read_bytes() for p in sorted((tmp_path / "d1").iterdir())] == \
        [p.read_bytes() for p in sorted((tmp_path / "d2").iterdir())]


def test_agent_span_error_inside_the_root_fails_the_run(cli: Cli, write: Any) -> None:
    """Point 31: a run is run.failed when its root, or any agent span inside it, ends with an error; the
    failing span's error text goes to `reason`."""
    inner = span(SID3, "invoke_agent sub", 2000, 4000, {"gen_ai.operation.name": "invoke_agent"},
                 status={"code": 2, "message": "sub broke"})
    write("t.jsonl", lines(otlp(root(), inner, tool(SID2, 2500, 3000, parent=SID3))))
    last = converted(cli, "otel", "t.jsonl")[-1]
    assert (last["type"], last["status"], last["reason"]) == ("run.failed", "failed", "sub broke")


def test_otel_message_part_fallback_is_synthetic_and_leaves_ok_out(cli: Cli, write: Any) -> None:
    """Point 29: a `tool_call` part with no execute_tool span becomes a tool.call marked
    data.source.synthetic at the chat span's end, its response the result at the next chat span's start;
    §7: an unknown `ok` is omitted, never guessed."""
    asked = json.dumps([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "call_9", "name": "ghost", "arguments": {"z": 1}}]}])
    answered = json.dumps([{"role": "user", "parts": [
        {"type": "tool_call_response", "id": "call_9", "response": "no such tool"}]}])
    write("t.jsonl", lines(otlp(
        root(), span(SID2, "chat m", 2000, 3000, {"gen_ai.operation.name": "chat", "gen_ai.output.messages": asked}),
        span(SID3, "chat m", 4000, 5000, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": answered}))))
    call, result = converted(cli, "otel", "t.jsonl")[1:3]
    assert (call["type"], call["tool"], call["call_id"], call["args"], call["time"][-7:]) == (
        "tool.call", "ghost", "call_9", {"z": 1}, "003000Z")
    assert (result["type"], result["result"], result["time"][-7:], "ok" in result) == (
        "tool.result", "no such tool", "004000Z", False)
    assert call["data"]["source"]["synthetic"] is True and result["data"]["source"]["synthetic"] is True
