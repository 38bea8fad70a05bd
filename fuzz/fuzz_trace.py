#!/usr/bin/env python3
"""Fuzz target: arbitrary bytes as a trace.

Every input goes through:
  1. `check_trace(CONTRACT, data)` with a fixed contract that uses all 12 rule kinds, and again
     with a second contract that sets the non-default options of each kind;
  2. the JSON, text, JUnit and Markdown renderers on the report (what the CLI prints);
  3. `TraceFile(data, max_line_bytes=SMALL).batches()` with a small line limit.

An accepted trace is also compared (`compare_traces`) with a fixed passing baseline, rendered,
and summarised (`summarize_trace`, which must agree with the check report's summary).

Allowed outcomes: a report, or `agent_invariants.InputError`. Anything else is a finding.

Five oracles check the verdict itself, not only the absence of crashes:
  * line limit: if the small-limit read succeeds, it must yield the same events and lines as
    the default-limit read (the limit may only reject, never change what is read);
  * in-memory events: the accepted events, re-encoded one by one and checked as an in-memory
    list (`EventList`), must give the same results and violations as the file path (only the
    physical `line` and `trace` fields may differ);
  * chunks: reading the bytes in tiny chunks, as a file is read (64 KiB at a time), gives the
    same events and lines, or the same error, as reading them whole;
  * physical lines: the line the reader gives each event is recomputed independently (JSONL: the
    n-th line that is not blank or a comment; array: where `json.JSONDecoder.raw_decode` finds the
    n-th item);
  * bulk path: reading with the bulk path of plain chunks turned off (every line decoded and
    checked on its own) gives the same events and lines, or the same error.

Run:  python fuzz/fuzz_trace.py fuzz/corpus/trace -max_total_time=1800 -rss_limit_mb=2048
"""
from __future__ import annotations

import json
import os
import sys
import zlib

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fuzzcommon  # noqa: E402  (not instrumented: it is the harness, not the target)

with atheris.instrument_imports():
    import msgspec

    from agent_invariants import InputError, check_trace, compare_traces, load_contract, summarize_trace
    from agent_invariants._js import JS_WHITESPACE
    from agent_invariants.reader import TraceFile
    from agent_invariants.render import json as render_json
    from agent_invariants.render import junit as render_junit
    from agent_invariants.render import markdown as render_markdown
    from agent_invariants.render import text as render_text

SMALL_LINE_LIMIT = 96

# All twelve rule kinds, mostly with their defaults (the shape of bench/gen_trace.py).
CONTRACT_DEFAULTS = load_contract({
    "version": 1,
    "name": "fuzz-all-kinds",
    "compare": {"fail_on_new_tools": True, "max_tool_call_increase_percent": 25},
    "rules": [
        {"id": "pay-approval", "kind": "require_approval", "tool": "payments.*", "scope": "payments.*",
         "within_events": 5},
        {"id": "stop-final", "kind": "stop_is_final"},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
        {"id": "known-tools", "kind": "allow_tools", "tools": ["kb.*", "crm.*", "http.get", "payments.*", "?"]},
        {"id": "closed-calls", "kind": "tool_result_required", "tool": "*"},
        {"id": "retries", "kind": "retry_limit", "max_attempts": 2, "group_by": "call_signature"},
        {"id": "proof", "kind": "completion_requires_outcome", "outcome_id": "case-*"},
        {"id": "calibrated", "kind": "confidence_requires_outcome", "threshold": 0.9},
        {"id": "budget", "kind": "event_budget", "max_events": 20, "max_tool_calls": 5, "max_tool_failures": 1},
        {"id": "policy-first", "kind": "require_order", "before": {"type": "policy.checked"},
         "after": {"type": "tool.call", "tool": "payments.*"}},
        {"id": "one-start", "kind": "require_event", "match": {"type": "run.start"}, "min": 1, "max": 1},
        {"id": "no-secrets", "kind": "deny_event", "match": {"type": "secret.read"}, "severity": "warning"},
    ],
})

# The same kinds again, with the options the first contract leaves at their defaults: matchers
# that need event fields (ok, verdict, outcome_id, claims_completion), globs with `?` and several
# stars, an empty allowed_after, group_by tool, non-default evidence classes and completion types.
CONTRACT_OPTIONS = load_contract({
    "version": 1,
    "name": "fuzz-options",
    "rules": [
        {"id": "approval-any", "kind": "require_approval", "tool": "*"},
        {"id": "stop-nothing-after", "kind": "stop_is_final", "stop_type": "*.st?p", "allowed_after": []},
        {"id": "no-admin", "kind": "deny_tool", "tool": "*adm*n*", "severity": "warning"},
        {"id": "star-tools", "kind": "allow_tools", "tools": ["*"]},
        {"id": "results-kb", "kind": "tool_result_required", "tool": "kb.??"},
        {"id": "retries-by-tool", "kind": "retry_limit", "tool": "*.*", "max_attempts": 1, "group_by": "tool"},
        {"id": "done-proof", "kind": "completion_requires_outcome", "completion_types": ["*done*", "run.*"],
         "evidence_classes": ["manual_attestation", "self_attestation"]},
        {"id": "sure", "kind": "confidence_requires_outcome", "threshold": 0,
         "evidence_classes": ["configured_verifier"]},
        {"id": "tiny", "kind": "event_budget", "max_tool_failures": 0},
        {"id": "verified-before-done", "kind": "require_order",
         "before": {"type": "outcome.*", "verdict": "satisfied", "outcome_id": "*"},
         "after": {"claims_completion": True}},
        {"id": "no-failures", "kind": "require_event", "match": {"type": "tool.result", "ok": False},
         "min": 0, "max": 0},
        {"id": "no-failed-pay", "kind": "deny_event",
         "match": {"type": "tool.*", "tool": "pay*", "ok": False, "outcome_id": "?*", "claims_completion": False}},
    ],
})

CONTRACTS = (CONTRACT_DEFAULTS, CONTRACT_OPTIONS)

# A passing run, as the baseline the fuzzed trace is compared with.
BASELINE = (b'{"seq":1,"type":"run.start"}\n{"seq":2,"type":"policy.checked"}\n'
            b'{"seq":3,"type":"tool.call","tool":"kb.search","call_id":"c1"}\n'
            b'{"seq":4,"type":"tool.result","tool":"kb.search","call_id":"c1","ok":true}\n'
            b'{"seq":5,"type":"outcome.observed","outcome_id":"case-1","verdict":"satisfied",'
            b'"evidence_class":"externally_observed"}\n{"seq":6,"type":"run.completed"}\n')


def _violation_key(violation) -> tuple:
    return (violation.rule_id, violation.rule_kind, violation.severity, violation.message,
            violation.event_seq, violation.event_index, msgspec.json.encode(violation.evidence))


def _result_key(result) -> tuple:
    return (result.rule_id, result.passed, result.severity, result.checked,
            tuple(_violation_key(v) for v in result.violations))


def _check_one(contract, data: bytes):
    """check_trace on the bytes, rendered the CLI's ways; None when the trace is bad input."""
    try:
        report = check_trace(contract, data)
    except InputError:
        return None
    for render in (render_json.render, render_text.render, render_junit.render, render_markdown.render):
        render(report)
    total = sum(result.violation_count for result in report.results)
    if report.error_count + report.warning_count != total:
        raise _fuzzcommon.OracleMismatch("counts", "error_count + warning_count is not the number of violations")
    if total != len(report.violations) and report.violations_total != total:
        raise _fuzzcommon.OracleMismatch("counts", "violations were left out without violations_total saying so")
    if report.passed != (report.error_count == 0):
        raise _fuzzcommon.OracleMismatch("counts", "passed disagrees with error_count")
    return report


def _read_chunked(data: bytes, size: int):
    """Read `data` as a file is read (in chunks), but with tiny chunks: `TraceFile` reads a file
    64 KiB at a time, and splitting anywhere must not change what is read."""
    source = TraceFile(data)
    # The first read holds at least 2 bytes (a real read of a file or pipe fills a 64 KiB buffer
    # or reaches the end), so the gzip magic number is always seen whole, as in real reads.
    first = max(size, 2)
    chunks = iter([data[:first]] + [data[i:i + size] for i in range(first, len(data), size)])
    events = [event for batch in source._batches(chunks) for event in batch]
    return events, [source.line_of(i) for i in range(len(events))]


def _chunk_oracle(data: bytes) -> None:
    size = 1 + zlib.crc32(data) % 16
    try:
        whole = _read_events(data, None)
    except InputError as exc:
        whole = str(exc)
    try:
        chunked = _read_chunked(data, size)
    except InputError as exc:
        chunked = str(exc)
    if isinstance(whole, str) or isinstance(chunked, str):
        if whole != chunked:
            # refused both ways (only the message differs) or accepted one way only
            oracle = "chunks-message" if isinstance(whole, str) and isinstance(chunked, str) else "chunks-verdict"
            if "nested too deeply" in str(whole) + str(chunked):
                oracle += "-nesting"   # the nesting limit depends on the stack depth (reported)
            raise _fuzzcommon.OracleMismatch(
                oracle, f"whole: {str(whole)[:200]} / {size}-byte chunks: {str(chunked)[:200]}")
        return
    same_events = [msgspec.json.encode(e) for e in whole[0]] == [msgspec.json.encode(e) for e in chunked[0]]
    if not same_events or whole[1] != chunked[1]:
        raise _fuzzcommon.OracleMismatch("chunks-events", f"{size}-byte chunks read different events or lines")


def _bulk_oracle(data: bytes) -> None:
    """The bulk path for plain chunks is only a shortcut: line by line must read the same."""
    import agent_invariants.fastpath as fastpath_module

    outcomes = []
    for bulk in (True, False):
        saved = fastpath_module.plain_batch
        if not bulk:
            fastpath_module.plain_batch = lambda lines, prev, clean_types: None
        try:
            events, lines = _read_events(data, None)
            outcomes.append(([msgspec.json.encode(e) for e in events], lines))
        except InputError as exc:
            outcomes.append(str(exc))
        finally:
            fastpath_module.plain_batch = saved
    if outcomes[0] != outcomes[1]:
        raise _fuzzcommon.OracleMismatch(
            "bulk-path", f"bulk: {str(outcomes[0])[:200]} / line by line: {str(outcomes[1])[:200]}")


def _read_events(data: bytes, limit: int | None):
    source = TraceFile(data) if limit is None else TraceFile(data, max_line_bytes=limit)
    events = [event for batch in source.batches() for event in batch]
    return events, [source.line_of(i) for i in range(len(events))]


def _expected_lines(data: bytes, count: int) -> list[int]:
    """The physical line of each event, computed without the reader's line map."""
    text = data.decode("utf-8", "surrogateescape")   # msgspec skips unknown keys unchecked
    body = text.lstrip(JS_WHITESPACE)
    if body.startswith("["):
        offset = len(text) - len(body) + 1
        decoder = json.JSONDecoder()
        found = []
        for _ in range(count):
            while text[offset] in JS_WHITESPACE or text[offset] == ",":
                offset += 1
            found.append(text.count("\n", 0, offset) + 1)
            _, offset = decoder.raw_decode(text, offset)
        return found
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(JS_WHITESPACE)
        if stripped and not stripped.startswith("#"):
            found.append(number)
    return found[:count]


def _expected_lengths(data: bytes, lines: list[int]) -> list[int]:
    """The length of each event's line in UTF-16 code units, without its line end."""
    physical = data.decode("utf-8", "surrogateescape").split("\n")
    found = []
    for line in lines:
        text = physical[line - 1]
        text = text[:-1] if text.endswith("\r") else text
        found.append(len(text.encode("utf-16-le", "surrogatepass")) // 2)
    return found


def _oracles(data: bytes, reports) -> None:
    events, lines = _read_events(data, None)
    if lines != _expected_lines(data, len(events)):
        raise _fuzzcommon.OracleMismatch("lines", f"{lines} differ from {_expected_lines(data, len(events))}")
    measured = TraceFile(data, line_lengths=True)
    for _batch in measured.batches():
        pass
    lengths = measured.line_lengths_of(range(len(events)))
    if [lengths.get(index) for index in range(len(events))] != _expected_lengths(data, lines):
        raise _fuzzcommon.OracleMismatch("line-lengths", "the lengths learnt while reading differ from a count")
    if len(events) != reports[0].summary.events:
        raise _fuzzcommon.OracleMismatch(
            "event-count", f"{len(events)} events read, report says {reports[0].summary.events}")
    encoded = [msgspec.json.encode(event) for event in events]

    # the small line limit may reject the trace, but never read it differently
    try:
        small_events, small_lines = _read_events(data, SMALL_LINE_LIMIT)
    except InputError:
        pass
    else:
        if [msgspec.json.encode(e) for e in small_events] != encoded or small_lines != lines:
            raise _fuzzcommon.OracleMismatch("line-limit", "max_line_bytes changed the events read")

    # compare (against a fixed passing baseline) and summary run on the same events
    compared = compare_traces(CONTRACT_DEFAULTS, BASELINE, data)
    for render in (render_json.render, render_text.render, render_junit.render, render_markdown.render):
        render(compared)
    if msgspec.json.encode(summarize_trace(data)) != msgspec.json.encode(reports[0].summary):
        raise _fuzzcommon.OracleMismatch("summary", "summarize_trace differs from the check report's summary")

    # the same events in memory give the same verdict
    for contract, from_file in zip(CONTRACTS, reports, strict=True):
        from_list = check_trace(contract, list(encoded))
        if ([_result_key(r) for r in from_file.results] != [_result_key(r) for r in from_list.results]
                or msgspec.json.encode(from_file.summary) != msgspec.json.encode(from_list.summary)):
            raise _fuzzcommon.OracleMismatch("in-memory", f"file and in-memory verdicts differ for {contract.name}")


def TestOneInput(data: bytes) -> None:
    try:
        reports = [_check_one(contract, data) for contract in CONTRACTS]
        try:
            for _batch in TraceFile(data, max_line_bytes=SMALL_LINE_LIMIT).batches():
                pass
        except InputError:
            pass
        if None not in reports:
            _oracles(data, reports)
        if len(data) <= 4096:
            _chunk_oracle(data)
        _bulk_oracle(data)
    except Exception as exc:  # noqa: BLE001 - everything but InputError is a finding
        _fuzzcommon.finding(exc, data, "trace")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
