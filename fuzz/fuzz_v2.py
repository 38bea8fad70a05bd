#!/usr/bin/env python3
"""Fuzz target: a version-2 contract and a trace, as one input.

The input is cut at its first line `===`: the contract before it, the trace after it (without
the line, the contract is checked against a fixed trace that carries every version-2 event field:
args, results, durations, statuses, an output, approvers and reasons). Every input goes through:
  1. `load_contract`, then `lint_contract` (text, JSON and SARIF of the findings);
  2. `check_trace` of the trace, and again with `partial=True`, each rendered as JSON, text,
     JUnit, Markdown, SARIF and GitHub annotations;
  3. `compare_traces` of the trace with itself, rendered.

Allowed outcomes: a report, or `agent_invariants.InputError`. Anything else is a finding.

Oracles:
  * in-memory events: the events read, re-encoded one by one and checked as an in-memory list,
    give the same results and violations as the file (only `line` and `trace` may differ);
  * self-compare: a trace compared with itself has no regression but rules it breaks "still";
  * partial: `--partial` only turns liveness violations into `inconclusive` ones, so every
    violation of the partial check that is not inconclusive is one of the full check's;
  * counts: error and warning counts add up to the violations that are not inconclusive;
  * round trip: the normalised contract (`to_dict()`) loads again to the same `to_dict()`.

Run:  python fuzz/fuzz_v2.py fuzz/work/v2 fuzz/corpus/v2 -dict=fuzz/v2.dict -max_total_time=1800 -rss_limit_mb=2048
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fuzzcommon  # noqa: E402  (not instrumented: it is the harness, not the target)

with atheris.instrument_imports():
    import msgspec

    from agent_invariants import InputError, check_trace, compare_traces, load_contract
    from agent_invariants.lint import lint_contract
    from agent_invariants.reader import TraceFile
    from agent_invariants.render import github as render_github
    from agent_invariants.render import json as render_json
    from agent_invariants.render import junit as render_junit
    from agent_invariants.render import markdown as render_markdown
    from agent_invariants.render import sarif as render_sarif
    from agent_invariants.render import text as render_text

SEPARATOR = b"\n===\n"

# Every version-2 field on the events that carry it; lookups joined by order, a failed call, an
# approval bound to a call and revoked, a denied call, a stop with a reason, an output.
TRACE = b"""\
{"seq":1,"type":"run.start","run_id":"r1","time":"2026-01-01T00:00:00Z"}
{"seq":2,"type":"tool.call","tool":"crm.lookup","call_id":"c1","args":{"order":"A1","fields":["paid","currency"]}}
{"seq":3,"type":"tool.result","tool":"crm.lookup","call_id":"c1","ok":true,"duration_ms":12,"result":{"paid":30,"currency":"EUR","items":[{"sku":"x","qty":2}]}}
{"seq":4,"type":"tool.call","tool":"kb.search","call_id":"c2","args":{"query":"refund 30","limit":5}}
{"seq":5,"type":"tool.result","tool":"kb.search","call_id":"c2","ok":false,"duration_ms":7000,"result":null}
{"seq":6,"type":"tool.call","tool":"kb.search","call_id":"c3","args":{"query":"refund 30","limit":5}}
{"seq":7,"type":"tool.result","tool":"kb.search","call_id":"c3","ok":true,"duration_ms":40,"result":["a","b"]}
{"seq":8,"type":"approval.granted","approval_id":"ap-1","approval_scope":"payments.refund","tool":"payments.refund","approver":"lead","args":{"order":"A1","amount":30}}
{"seq":9,"type":"tool.call","tool":"payments.refund","call_id":"c4","approval_id":"ap-1","args":{"order":"A1","amount":30,"currency":"EUR"}}
{"seq":10,"type":"tool.result","tool":"payments.refund","call_id":"c4","ok":true,"duration_ms":300,"result":{"refund_id":"R9"}}
{"seq":11,"type":"approval.revoked","approval_id":"ap-1","reason":"policy change"}
{"seq":12,"type":"tool.call","tool":"payments.refund","call_id":"c5","approval_id":"ap-1","args":{"order":"A1","amount":31,"currency":"USD"}}
{"seq":13,"type":"tool.denied","tool":"payments.refund","call_id":"c5","reason":"approval revoked"}
{"seq":14,"type":"outcome.observed","outcome_id":"case-1","verdict":"satisfied","evidence_class":"externally_observed"}
{"seq":15,"type":"control.stop","reason":"user cancel"}
{"seq":16,"type":"tool.call","tool":"mail.send","call_id":"c6","args":{"to":"a@b.c"}}
{"seq":17,"type":"run.completed","status":"done","duration_ms":5000,"claims_completion":true,"output":{"refunded":30,"items":["x"],"ok":true}}
"""


def _violation_key(violation) -> tuple:
    return (violation.rule_id, violation.rule_kind, violation.severity, violation.message, violation.event_seq,
            violation.event_index, violation.code, violation.status, violation.pointer, violation.related_seqs,
            render_json.to_json(violation.evidence))


def _result_key(result) -> tuple:
    return (result.rule_id, result.passed, result.severity, result.checked,
            tuple(_violation_key(v) for v in result.violations))


def _rendered(report) -> None:
    for render in (render_json.render, render_text.render, render_junit.render, render_markdown.render,
                   render_sarif.render, render_github.render):
        render(report)


def _check(contract, trace: bytes, partial: bool):
    """check_trace, rendered the CLI's ways, its counts checked; None when the trace is bad input."""
    try:
        report = check_trace(contract, trace, partial=partial, count_safety=True)
    except InputError:
        return None
    _rendered(report)
    counted = [v for r in report.results for v in r.violations if v.status != "inconclusive"]
    whole = report.violations_total is msgspec.UNSET or report.violations_total == len(report.violations)
    if whole and report.error_count + report.warning_count != len(counted):
        raise _fuzzcommon.OracleMismatch("counts", "error_count + warning_count is not the violations counted")
    if report.passed != (report.error_count == 0):
        raise _fuzzcommon.OracleMismatch("counts", "passed disagrees with error_count")
    return report


def _oracles(contract, trace: bytes, full) -> None:
    events = [msgspec.json.encode(event) for batch in TraceFile(trace).batches() for event in batch]
    from_list = check_trace(contract, events)
    if [_result_key(r) for r in full.results] != [_result_key(r) for r in from_list.results]:
        raise _fuzzcommon.OracleMismatch("in-memory", "file and in-memory verdicts differ")

    itself = compare_traces(contract, trace, trace)
    _rendered(itself)
    for regression in itself.regressions:   # a rule the baseline breaks too is "still" broken, never new
        if regression.kind != "contract_violation" or regression.evidence.get("baseline_also_failed") is not True:
            raise _fuzzcommon.OracleMismatch("self-compare", f"a regression against itself: {regression.message}")

    partial = _check(contract, trace, True)
    if partial is None:
        raise _fuzzcommon.OracleMismatch("partial", "the trace is bad input only under --partial")
    everything = {_violation_key(v)[:6] for r in full.results for v in r.violations}
    for result in partial.results:
        for violation in result.violations:
            if violation.status != "inconclusive" and _violation_key(violation)[:6] not in everything:
                raise _fuzzcommon.OracleMismatch(
                    "partial", f"{violation.rule_id} at {violation.event_seq} only under --partial")


def TestOneInput(data: bytes) -> None:
    contract_part, found, trace = data.partition(SEPARATOR)
    trace = trace if found else TRACE
    try:
        try:
            contract = load_contract(contract_part)
        except InputError:
            return
        lint = lint_contract(contract)
        for render in (render_text.render, render_json.render, render_sarif.render):
            render(lint)
        _fuzzcommon.round_trip(contract, load_contract, InputError)
        full = _check(contract, trace, False)
        if full is not None:
            _oracles(contract, trace, full)
    except Exception as exc:  # noqa: BLE001 - everything but InputError is a finding
        _fuzzcommon.finding(exc, data, "v2")


# Structure-aware mutation: most byte mutations make a contract that does not load, so half the
# time an input that parses is changed as JSON (a value replaced, a key added or dropped, an item
# repeated), with words of the format; the rest, and anything that does not parse, as bytes.
_WORDS: list = []


def _words() -> list:
    if not _WORDS:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "v2.dict"), encoding="utf-8") as handle:
            for line in handle:
                with contextlib.suppress(ValueError):
                    word = json.loads(line)
                    _WORDS.append(json.loads(word) if word[:1] in '"{[-0123456789tfn' else word)
        _WORDS.extend([0, 1, -1, 2, 3, 0.5, 1e300, 10**20, None, True, False, "", "*", [], {}])
    return _WORDS


def _nodes(value, found: list) -> list:
    found.append(value)
    if isinstance(value, dict):
        for item in value.values():
            _nodes(item, found)
    elif isinstance(value, list):
        for item in value:
            _nodes(item, found)
    return found


def _mutated_json(value, rng: random.Random):
    containers = [node for node in _nodes(value, []) if isinstance(node, dict | list) and len(str(node)) < 20000]
    if not containers:
        return rng.choice(_words())
    node = rng.choice(containers)
    words = _words()
    word = rng.choice(words)
    pick = rng.randrange(5)
    if isinstance(node, dict):
        keys = list(node)
        if pick == 0 or not keys:
            key = rng.choice([w for w in words if isinstance(w, str)] or ["x"])
            node[key] = word
        elif pick == 1:
            del node[rng.choice(keys)]
        elif pick == 2:
            node[rng.choice(keys)] = rng.choice(containers) if rng.random() < 0.3 else word
        elif pick == 3:   # a copy of another subtree
            node[rng.choice(keys)] = json.loads(json.dumps(rng.choice(containers)))
        else:
            key = rng.choice(keys)
            node[key] = {rng.choice([w for w in words if isinstance(w, str) and w.startswith("$")] or ["$in"]): word}
    else:
        if pick == 0 or not node:
            node.insert(rng.randrange(len(node) + 1), word)
        elif pick == 1:
            del node[rng.randrange(len(node))]
        elif pick == 2:
            node[rng.randrange(len(node))] = word
        else:
            node.append(json.loads(json.dumps(rng.choice(node))))
    return value


def CustomMutator(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    contract_part, found, trace = data.partition(SEPARATOR)
    if rng.random() < 0.5:
        try:
            if found and rng.random() < 0.4:   # an event of the trace
                lines = trace.split(b"\n")
                at = rng.randrange(len(lines))
                lines[at] = json.dumps(_mutated_json(json.loads(lines[at]), rng)).encode()
                if rng.random() < 0.2:
                    lines.insert(rng.randrange(len(lines) + 1), lines[at])
                out = contract_part + SEPARATOR + b"\n".join(lines)
            else:
                document = _mutated_json(json.loads(contract_part), rng)
                out = json.dumps(document).encode() + (SEPARATOR + trace if found else b"")
            if len(out) <= max_size:
                return out
        except (ValueError, RecursionError):
            pass
    return atheris.Mutate(data, max_size)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput, custom_mutator=CustomMutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
