"""Reading stays within bounded memory whatever the trace holds, and lines stay right.

Each test runs the real CLI on inputs large enough to show growth (blank and comment lines by
the hundred thousand, JSON arrays of tens of megabytes, endless-looking streams) and measures
the child's peak memory with `os.wait4`. Before these were fixed, a million comment lines took
over a gigabyte, 20 MB of blank lines exhausted memory, and a JSON array was read whole (about
five times its size).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from support import contract

pytestmark = pytest.mark.slow   # every test here takes long (see the README's Development)

PEAK_MIB = 90   # the interpreter, msgspec and typer take about 30; growth with the input would pass this

DENY_X = contract({"id": "no-x", "kind": "deny_event", "match": {"type": "x"}})


# Runs the command and reports the peak memory of its children. The CLI must not be a direct
# child of the test process: a child starts out sharing its parent's memory, and Linux carries
# that high-water mark over `exec`, so the test process's own size would count.
_WRAPPER = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
            "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
            "sys.exit(code)")


def measured(cwd: Path, *args: str, stdin: bytes | None = None, feed=None,
             env: dict[str, str] | None = None) -> tuple[int, str, str, int]:
    """Run the CLI; return (exit code, stdout, stderr, peak resident memory in MiB). `feed(pipe)`
    writes standard input from a thread, for inputs too large to hold."""
    peak_file = cwd / ".peak"
    process = subprocess.Popen(
        [sys.executable, "-c", _WRAPPER, str(peak_file), sys.executable, "-m", "agent_invariants", *args],
        cwd=cwd, env={**os.environ, "NO_COLOR": "1", **(env or {})},
        stdin=subprocess.PIPE if stdin is not None or feed else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    outputs: dict[str, bytes] = {}

    def drain(name: str, stream) -> None:
        outputs[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(name, stream))
               for name, stream in (("out", process.stdout), ("err", process.stderr))]
    for reader in readers:
        reader.start()
    if feed is not None:
        with suppress(BrokenPipeError):
            feed(process.stdin)
    if process.stdin is not None:
        if stdin is not None:
            process.stdin.write(stdin)
        with suppress(BrokenPipeError):
            process.stdin.close()
    process.wait()
    for reader in readers:
        reader.join()
    process.stdout.close()
    process.stderr.close()
    peak = int(peak_file.read_text()) // 1024
    peak_file.unlink()
    stderr = outputs["err"].decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    return process.returncode, outputs["out"].decode("utf-8", "replace"), stderr, peak


def check_json(tmp_path: Path, trace: str, rules=DENY_X, **kwargs) -> tuple[int, dict, str, int]:
    (tmp_path / "contract.json").write_text(json.dumps(rules))
    code, out, err, peak = measured(tmp_path, "check", "--contract", "contract.json", "--trace", trace,
                                    "--format", "json", **kwargs)
    return code, json.loads(out) if out else {}, err, peak


def test_a_million_blank_and_comment_lines_take_no_memory(tmp_path: Path) -> None:
    parts = [b"\n" * 300_000, b'{"seq": 1, "type": "run.start"}\n', b"# a comment\n\n" * 250_000,
             b'{"seq": 2, "type": "x"}\n', b"   \r\n" * 200_000, b'{"seq": 3, "type": "x"}\n']
    (tmp_path / "trace.jsonl").write_bytes(b"".join(parts))
    code, report, err, peak = check_json(tmp_path, "trace.jsonl")
    assert code == 1, err
    assert [(v["event_seq"], v["line"]) for v in report["violations"]] == [(2, 800_002), (3, 1_000_003)]
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_comments_between_every_event_keep_lines_right_past_the_memory_kept_for_them(tmp_path: Path) -> None:
    # 150,000 places where the line number jumps: more than the line map keeps in memory
    events = 150_000
    lines = []
    for seq in range(events):
        lines.append(b"# before %d\n" % seq)
        lines.append(b'{"seq": %d, "type": "%s"}\n' % (seq, b"x" if seq % 997 == 0 else b"y"))
    (tmp_path / "trace.jsonl").write_bytes(b"".join(lines))
    code, report, err, peak = check_json(tmp_path, "trace.jsonl")
    assert code == 1, err
    expected = [(seq, 2 * seq + 2) for seq in range(0, events, 997)]
    assert [(v["event_seq"], v["line"]) for v in report["results"][0]["violations"]] == expected
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_a_trace_that_starts_with_fifty_megabytes_of_blank_lines(tmp_path: Path) -> None:
    (tmp_path / "trace.jsonl").write_bytes(b"\n" * 50_000_000 + b'{"seq": 1, "type": "x"}\n')
    code, report, err, peak = check_json(tmp_path, "trace.jsonl")
    assert code == 1, err
    assert report["violations"][0]["line"] == 50_000_001
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_a_long_blank_line_before_the_first_event_is_still_over_the_limit_for_jsonl(tmp_path: Path) -> None:
    (tmp_path / "trace.jsonl").write_bytes(b"\n" + b" " * 2_000_000 + b"\n" + b'{"seq": 1, "type": "x"}\n')
    code, _, err, _ = check_json(tmp_path, "trace.jsonl")
    assert code == 2
    assert err == ("agent-invariants: trace.jsonl:2: line is 2,000,000 bytes, over the 1,048,576-byte limit "
                   "(raise it with --max-line-bytes, or max_line_bytes in the library and the pytest table)\n")
    # before a JSON array, whitespace is not a line of events
    (tmp_path / "trace.json").write_bytes(b"\n" + b" " * 2_000_000 + b"\n" + b'[{"seq": 1, "type": "x"}]\n')
    code, report, err, _ = check_json(tmp_path, "trace.json")
    assert code == 1, err
    assert report["violations"][0]["line"] == 3


def array_items(count: int, pad: int = 150) -> bytes:
    return b",\n".join(b'  {"seq": %d, "type": "%s", "data": {"pad": "%s"}}' % (
        seq, b"x" if seq == count - 1 else b"y", b"p" * pad) for seq in range(count))


def test_a_json_array_is_read_as_a_stream(tmp_path: Path) -> None:
    count = 200_000   # about 40 MB; read whole, it took five times that
    (tmp_path / "trace.json").write_bytes(b"[\n" + array_items(count) + b"\n]\n")
    code, report, err, peak = check_json(tmp_path, "trace.json")
    assert code == 1, err
    assert report["summary"]["events"] == count
    assert [(v["event_seq"], v["line"]) for v in report["violations"]] == [(count - 1, count + 1)]
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_a_one_line_json_array_on_standard_input_is_read_as_a_stream(tmp_path: Path) -> None:
    count = 300_000   # about 60 MB, never all in memory at once, all on line 1

    def feed(pipe) -> None:
        pipe.write(b"[")
        for start in range(0, count, 10_000):
            items = [b'{"seq": %d, "type": "%s", "data": {"pad": "%s"}}' % (
                seq, b"x" if seq == count - 1 else b"y", b"p" * 150) for seq in range(start, start + 10_000)]
            pipe.write((b"," if start else b"") + b",".join(items))
        pipe.write(b"]")

    code, report, err, peak = check_json(tmp_path, "-", feed=feed)
    assert code == 1, err
    assert [(v["event_seq"], v["event_index"], v.get("line")) for v in report["violations"]] == [
        (count - 1, count - 1, 1)]
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_an_array_item_over_the_line_limit_is_refused_without_reading_on(tmp_path: Path) -> None:
    def feed(pipe) -> None:
        pipe.write(b'[{"seq": 1, "type": "a"},\n {"seq": 2, "type": "b", "data": {"pad": "')
        for _ in range(200):   # 200 MB unless the reader stops at the limit
            pipe.write(b"p" * 1_000_000)

    code, _, err, peak = check_json(tmp_path, "-", feed=feed)
    assert code == 2
    assert err == ("agent-invariants: <stdin>:2: item 1 is more than 1,048,576 bytes, over the limit "
                   "(raise it with --max-line-bytes, or max_line_bytes in the library and the pytest table)\n")
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_whitespace_after_a_json_array_is_read_as_a_stream_too(tmp_path: Path) -> None:
    def feed(pipe) -> None:
        pipe.write(b'[{"seq": 1, "type": "x"}]')
        for _ in range(100):
            pipe.write(b" \n" * 500_000)
        pipe.write(b"\xc2\xa0\n")   # a no-break space is whitespace to JavaScript's trim, as in the reference

    code, report, err, peak = check_json(tmp_path, "-", feed=feed)
    assert code == 1, err
    assert report["violations"][0]["line"] == 1
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_a_problem_after_a_json_array_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "trace.json").write_bytes(b'[{"seq": 1, "type": "x"}]\n\n{"seq": 2, "type": "y"}\n')
    code, _, err, _ = check_json(tmp_path, "trace.json")
    assert code == 2
    assert err == "agent-invariants: trace.json:3: unexpected content after the JSON array\n"


def test_an_unfinished_item_at_the_end_of_an_array_is_explained_where_it_breaks(tmp_path: Path) -> None:
    text = b'[\n{"seq": 1, "type": "a"},\n{"seq": 2, "type": "b", "data": {"k": "v" "w"}},\n{"seq": 3, "type": "c"}'
    (tmp_path / "trace.json").write_bytes(text)
    code, _, err, _ = check_json(tmp_path, "trace.json")
    assert code == 2
    assert err == ("agent-invariants: trace.json:3: item 1: invalid JSON: expected ',' or '}' "
                   "(byte 43 of the item)\n")


def test_globs_with_many_stars_stay_linear_on_names_with_line_breaks(tmp_path: Path) -> None:
    rules = contract({"id": "odd", "kind": "deny_tool", "tool": "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*\n*b"})
    name = ("a" * 100 + "\n") * 4 + "a" * 80   # lines full of a's, and no b after the line break
    events = [{"seq": seq, "type": "tool.call", "tool": name, "call_id": f"c{seq}"} for seq in range(10_000)]
    events.append({"seq": 10_000, "type": "tool.call", "tool": "a" * 20 + "\na-b", "call_id": "last"})
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
    started = time.monotonic()
    code, report, err, _ = check_json(tmp_path, "trace.jsonl", rules=rules)
    assert code == 1, err
    assert [v["event_seq"] for v in report["violations"]] == [10_000]
    assert time.monotonic() - started < 20   # it took minutes when such names went through an automaton


def test_array_items_of_changing_height_keep_their_lines_past_the_memory_kept_for_them(tmp_path: Path) -> None:
    # every item starts a new run of lines (heights 1 and 3 alternate): 120,000 runs
    count = 120_000
    items, line, expected = [], 2, []
    for seq in range(count):
        kind = b"x" if seq % 1009 == 0 else b"y"
        if seq % 2:
            items.append(b'{\n"seq": %d,\n"type": "%s"}' % (seq, kind))
        else:
            items.append(b'{"seq": %d, "type": "%s"}' % (seq, kind))
        if kind == b"x":
            expected.append((seq, line))
        line += 3 if seq % 2 else 1
    (tmp_path / "trace.json").write_bytes(b"[\n" + b",\n".join(items) + b"\n]\n")
    code, report, err, peak = check_json(tmp_path, "trace.json")
    assert code == 1, err
    assert [(v["event_seq"], v["line"]) for v in report["results"][0]["violations"]] == expected
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def comment_before_each_event(tmp_path: Path, events: int = 100_000) -> None:
    """A trace whose line map must move to a temporary file (a run of lines per event)."""
    (tmp_path / "trace.jsonl").write_bytes(b"".join(
        b'# c\n{"seq": %d, "type": "y"}\n' % seq for seq in range(events)))


def run_limited(tmp_path: Path, setup: str) -> subprocess.CompletedProcess[str]:
    """Check trace.jsonl with the CLI after `setup` ran in its process (to break its temporary files)."""
    (tmp_path / "contract.json").write_text(json.dumps(DENY_X))
    code = (f"import resource, runpy, sys, tempfile; {setup}; sys.argv = sys.argv[1:]; "
            "runpy.run_module('agent_invariants', run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code, "agent-invariants", "check", "--contract", "contract.json",
                           "--trace", "trace.jsonl"], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_a_missing_temporary_folder_is_one_clear_line(tmp_path: Path) -> None:
    comment_before_each_event(tmp_path)
    result = run_limited(tmp_path, f"tempfile.tempdir = {str(tmp_path / 'gone')!r}")
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr == (f"agent-invariants: cannot use a temporary file in {tmp_path / 'gone'}: No such file "
                             "or directory (set TMPDIR to a writable folder with room)\n")


def test_a_full_disk_for_temporary_files_is_one_clear_line(tmp_path: Path) -> None:
    comment_before_each_event(tmp_path)
    # a file size limit of 64 KiB: writing more fails as a full disk does (Python ignores SIGXFSZ)
    result = run_limited(tmp_path, "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))")
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("agent-invariants: cannot use a temporary file in "), result.stderr
    assert "File too large" in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["contract.json", "trace.jsonl"]


def test_array_items_under_the_limit_pass_where_a_chunk_ends_inside_one():
    """An item cut by the end of a read chunk is only as long as itself: what the next chunk adds
    after its end belongs to the next items (it was once counted in, refusing a valid trace)."""
    from agent_invariants.api import check_trace

    events = [{"seq": seq, "type": "agent.message", "data": {"text": "x" * 880}} for seq in range(1, 301)]
    trace = ("[\n" + ",\n".join(json.dumps(event) for event in events) + "\n]\n").encode()
    contract = {"version": 1, "name": "x", "rules": [{"id": "r", "kind": "deny_tool", "tool": "z"}]}
    assert check_trace(contract, trace, max_line_bytes=1000).summary.events == 300


def test_approval_bound_with_max_age_events_keeps_only_the_grants_within_it(tmp_path: Path) -> None:
    """Grants age out as grants come, not only when a call comes: a trace of many grants and few
    calls once kept every grant (300 MiB for 500,000 of them)."""
    grants = 300_000
    lines = [json.dumps({"seq": seq, "type": "approval.granted", "approval_id": f"g{seq}", "tool": "refund",
                         "args": {"order": f"A{seq}", "amount": 10}}) for seq in range(1, grants + 1)]
    lines += [json.dumps({"seq": grants + 1, "type": "tool.call", "tool": "refund", "call_id": "c1",
                          "args": {"order": f"A{grants}", "amount": 10}}),   # its grant is the last one
              json.dumps({"seq": grants + 2, "type": "tool.call", "tool": "refund", "call_id": "c2",
                          "args": {"order": "A1", "amount": 10}})]         # its grant aged out long ago
    (tmp_path / "trace.jsonl").write_text("\n".join(lines) + "\n")
    rules = {"version": 2, "name": "x", "rules": [{"id": "bound", "kind": "approval_bound", "tool": "refund",
                                                   "bind": "args_subset", "max_age_events": 10}]}
    code, report, err, peak = check_json(tmp_path, "trace.jsonl", rules=rules)
    assert code == 1, err
    assert [(v["event_seq"], v["code"]) for v in report["violations"]] == [(grants + 2, "approval_bound.missing")]
    assert peak < PEAK_MIB, f"peak {peak} MiB"



FLOOD_AGENT = """
import sys
sys.stdin.readline()                                   # run.start
out = sys.stdout.buffer
out.write(b'{"type": "tool.call", "call_id": "c1", "tool": "%s"}\\n' % sys.argv[1].encode())
out.flush()
chunk = b'{}\\n' * 20_000
try:
    while True:                                        # short lines, while the harness waits on the tool
        out.write(chunk)                               # (or the agent on its reply, which it never reads)
except BrokenPipeError:
    pass
"""


def test_record_reads_no_further_while_lines_wait_for_a_busy_harness(tmp_path: Path) -> None:
    """While a fixture's delay holds the harness, an agent writing line after line waits on its
    pipe once 8 MiB of lines wait to be handled. Read on regardless, they took 150 bytes of memory
    for each 3-byte line: hundreds of megabytes in the 3 s this run has, gigabytes by the 64 MiB cap."""
    (tmp_path / "agent.py").write_text(FLOOD_AGENT)
    (tmp_path / "contract.json").write_text(json.dumps(
        {"version": 2, "name": "x", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    (tmp_path / "fixtures.json").write_text(json.dumps(
        {"version": 1, "tools": {"slow": {"$cases": [{"delay_ms": 10_000, "result": 1}]}}}))
    code, out, err, peak = measured(tmp_path, "record", "--contract", "contract.json", "--fixtures", "fixtures.json",
                                    "--fake-clock", "--timeout-ms", "3000", "--out", "trace.jsonl", "--",
                                    sys.executable, "agent.py", "slow")
    assert code == 2, err
    events = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [(event["type"], event.get("reason")) for event in events] == [
        ("run.start", None), ("tool.call", None), ("run.failed", "timeout:run")]
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_tool_order_keeps_each_set_of_patterns_a_tool_matches_once(tmp_path: Path) -> None:
    """any_order remembers which patterns each tool name matches; 70,000 names that match the same
    99 patterns once took a set each (560 MiB), now they share one."""
    calls = 70_000
    lines = [json.dumps({"seq": seq, "type": "tool.call", "tool": f"t{seq}", "call_id": f"c{seq}"})
             for seq in range(1, calls + 1)]
    lines.append(json.dumps({"seq": calls + 1, "type": "tool.call", "tool": "zz", "call_id": "z"}))
    (tmp_path / "trace.jsonl").write_text("\n".join(lines) + "\n")
    rules = {"version": 2, "name": "x", "rules": [{"id": "plan", "kind": "tool_order", "mode": "any_order",
                                                   "tools": ["*"] * 99 + ["zz"]}]}
    code, report, err, peak = check_json(tmp_path, "trace.jsonl", rules=rules)
    assert code == 0, err
    assert report["results"][0]["checked"] == calls + 1
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_references_written_alike_keep_the_results_they_read_once(tmp_path: Path) -> None:
    """An output_match tree that names the same $from_result a thousand times, over 5,000 results:
    each node kept every result (917 MiB); nodes written alike now share what they keep."""
    results = 5_000
    lines = []
    for number in range(results):
        lines.append(json.dumps({"seq": 2 * number + 1, "type": "tool.call", "tool": "get", "call_id": f"g{number}"}))
        lines.append(json.dumps({"seq": 2 * number + 2, "type": "tool.result", "tool": "get", "call_id": f"g{number}",
                                 "ok": True, "result": {"v": number}}))
    lines.append(json.dumps({"seq": 2 * results + 1, "type": "run.completed", "output": {"items": [3] * 1000}}))
    (tmp_path / "trace.jsonl").write_text("\n".join(lines) + "\n")
    rules = {"version": 2, "name": "x", "rules": [{"id": "items", "kind": "output_match", "match": {
        "items": [{"$from_result": {"tool": "get", "path": "v"}}] * 1000}}]}
    code, report, err, peak = check_json(tmp_path, "trace.jsonl", rules=rules)
    assert code == 0, err   # each item is 3, which some earlier result holds
    assert report["results"][0]["passed"] is True
    assert peak < PEAK_MIB, f"peak {peak} MiB"


def test_approval_bound_with_max_age_ms_keeps_no_spent_grant(tmp_path: Path) -> None:
    """Grants used at once, all at one instant: the grants ordered by time for max_age_ms once
    kept every spent one (148 MiB for 300,000)."""
    lines = []
    for number in range(300_000):
        lines.append(json.dumps({"seq": 2 * number + 1, "type": "approval.granted", "tool": "refund",
                                 "time": "2024-01-01T00:00:00Z"}))
        lines.append(json.dumps({"seq": 2 * number + 2, "type": "tool.call", "tool": "refund",
                                 "time": "2024-01-01T00:00:00Z"}))
    (tmp_path / "trace.jsonl").write_text("\n".join(lines) + "\n")
    rules = {"version": 2, "name": "x", "rules": [{"id": "bound", "kind": "approval_bound", "tool": "refund",
                                                   "max_age_ms": 5000}]}
    code, report, err, peak = check_json(tmp_path, "trace.jsonl", rules=rules)
    assert code == 0, err
    assert report["results"][0]["checked"] == 300_000
    assert peak < 60, f"peak {peak} MiB"


PIPELINING_AGENT = """
import json, sys
sys.stdin.readline()                                   # run.start
for number in range(6000):                             # 12 MB of calls before it reads a reply
    print(json.dumps({"type": "tool.call", "tool": "get", "call_id": f"c{number}", "args": {"pad": "x" * 2000}}))
sys.stdout.flush()
for _ in range(6000):
    sys.stdin.readline()
print(json.dumps({"type": "run.completed"}), flush=True)
"""


def test_record_reads_an_agent_that_writes_its_calls_before_it_reads_their_replies(tmp_path: Path) -> None:
    """Holding stdout while a reply waits for the agent would hold both sides until the idle
    timeout: the agent waits to write, the harness to send."""
    (tmp_path / "agent.py").write_text(PIPELINING_AGENT)
    (tmp_path / "contract.json").write_text(json.dumps(
        {"version": 2, "name": "x", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    (tmp_path / "fixtures.json").write_text(json.dumps({"version": 1, "tools": {"get": {"value": "y" * 300}}}))
    code, out, err, peak = measured(tmp_path, "record", "--contract", "contract.json", "--fixtures", "fixtures.json",
                                    "--fake-clock", "--idle-timeout-ms", "5000", "--out", "trace.jsonl", "--",
                                    sys.executable, "agent.py")
    assert code == 0, err
    last = json.loads((tmp_path / "trace.jsonl").read_text().splitlines()[-1])
    assert (last["seq"], last["type"]) == (12_002, "run.completed")


BIG_REPLY = {"version": 1, "tools": {"big": {"$cases": [{"result": "x" * 1_000_000}]}}}
RECORD_PEAK_MIB = 150
"""What a run may hold: up to 64 MiB of the agent's stdout (the cap) as raw bytes, 8 MiB of it as
lines, and the interpreter."""


def record_behind_a_reply(folder: Path, agent: str, *options: str) -> tuple[int, str, list[dict[str, Any]], int]:
    """`record` an agent (Python source) whose one call, to `big`, gets a 1 MB reply (more than a
    pipe holds): (exit code, stderr, the trace's events, peak memory in MiB)."""
    (folder / "agent.py").write_text(agent)
    (folder / "contract.json").write_text(json.dumps(
        {"version": 2, "name": "x", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    (folder / "fixtures.json").write_text(json.dumps(BIG_REPLY))
    split = options.index("--")   # record's options, then the agent's arguments
    code, out, err, peak = measured(folder, "record", "--contract", "contract.json", "--fixtures", "fixtures.json",
                                    "--fake-clock", "--out", "trace.jsonl", *options[:split], "--",
                                    sys.executable, "agent.py", *options[split + 1:])
    events = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    return code, err, events, peak


def test_record_holds_what_an_agent_writes_past_its_unread_reply_as_raw_bytes(tmp_path: Path) -> None:
    """An agent that floods stdout and never reads the reply it waits for (1 MB, more than the
    pipe holds) must still be read, or an agent that writes its calls before reading their replies
    would deadlock; once 8 MiB of lines wait, the rest waits as raw bytes. Split as it came, it
    took 150 bytes of memory for each 3-byte line: 288 MiB in these 3 s, 1.7 GB in 20."""
    code, err, events, peak = record_behind_a_reply(tmp_path, FLOOD_AGENT, "--timeout-ms", "5000",
                                                    "--idle-timeout-ms", "3000", "--", "big")
    assert code == 2, err
    assert [(event["type"], event.get("reason")) for event in events] == [
        ("run.start", None), ("tool.call", None), ("tool.result", None), ("run.failed", "timeout:idle")]
    assert peak < RECORD_PEAK_MIB, f"peak {peak} MiB"


BEHIND_A_REPLY_AGENT = """
import sys
sys.stdin.readline()                                   # run.start
out = sys.stdout.buffer
lines, ending = int(sys.argv[1]), sys.argv[2]
out.write(b'{"type": "tool.call", "call_id": "c1", "tool": "big"}\\n')
out.flush()
for number in range(lines):                            # all written before the reply is read
    out.write(b'{"type": "telemetry.pad", "data": {"n": %d, "pad": "%s"}}\\n' % (number, b"p" * 4000))
    if number % 1000 == 0:
        out.write(b" \\t\\n\\n")                         # blank lines between them
if ending == "long":
    out.write(b"{" + b" " * 1_100_000 + b"}\\n")        # over the line cap
if ending == "last":
    out.write(b'{"type": "run.completed"}')            # no newline: stdout closes after it
    out.close()
else:
    out.flush()
sys.stdin.readline()                                   # the reply, at last
"""


@pytest.mark.parametrize(("lines", "ending", "last"), [
    (2_600, "long", ("run.failed", "output_limit", "line")),
    (2_600, "last", ("run.completed", None, None)),
    (17_500, "none", ("run.failed", "output_limit", "total"))])
def test_lines_that_waited_as_raw_bytes_come_in_order_with_the_caps_where_they_were_crossed(
        tmp_path: Path, lines: int, ending: str, last: tuple[str, str | None, str | None]) -> None:
    """Points 78 and 80 through the raw bytes: 10 MB (or past the 64 MiB cap) written behind an
    unread reply are every line in order, then what came after them: a line over the line cap
    (the run ends there), a last line without a newline, or the total cap (the lines before the
    byte that crossed it, and no more)."""
    code, err, events, peak = record_behind_a_reply(tmp_path, BEHIND_A_REPLY_AGENT, "--timeout-ms", "60000", "--",
                                                    str(lines), ending)
    assert code == (0 if ending == "last" else 2), err
    assert [event["type"] for event in events[:3]] == ["run.start", "tool.call", "tool.result"]
    numbers = [event["data"]["n"] for event in events[3:-1]]
    # the total cap: 64 MiB hold the call line and 16,536 padded lines (4,055 to 4,059 bytes each)
    # with their blank lines, 228 bytes short of it; the byte that crosses it is in the next line
    assert numbers == list(range(lines if ending != "none" else 16_536))
    assert (events[-1]["type"], events[-1].get("reason"), events[-1].get("data", {}).get("limit")) == last
    assert peak < RECORD_PEAK_MIB, f"peak {peak} MiB"


BLANK_AT_THE_END_AGENT = """
import os, sys, time
sys.stdin.readline()                                   # run.start
out = sys.stdout.buffer
out.write(b'{"type": "tool.call", "call_id": "c1", "tool": "big"}\\n')
out.flush()
out.write(b'{"type": "telemetry.pad", "data": {"pad": "%s"}}\\n' % (b"p" * 100) * 70_000)   # 10 MB
out.write(b'{"type": "run.completed"}\\n \\t ')       # then a blank last line, without a newline
out.flush()
time.sleep(2)
os.close(1)                                            # the blank line is read now
time.sleep(2)
sys.stdin.readline()                                   # the reply, at last
"""


def test_a_blank_last_line_behind_raw_bytes_restarts_the_idle_timer_when_stdout_ends(tmp_path: Path) -> None:
    """Point 78: a complete line restarts the idle timer when it is read, blank or not, and a last
    line without a newline is complete at the end of stdout; behind the raw bytes too (it restarted
    the timer only once split, so the run ended idle, its 70,000 lines lost)."""
    code, err, events, peak = record_behind_a_reply(tmp_path, BLANK_AT_THE_END_AGENT, "--idle-timeout-ms", "3000", "--")
    assert code == 0, err
    assert len(events) == 70_004 and events[-1]["type"] == "run.completed"
