"""would the contract notice a broken agent? Break a passing trace in small ways and count.

    agent-invariants mutate --contract agent-invariants.json --trace good-run.jsonl

A contract that passes every trace may check nothing. `mutate` takes a trace that passes the
contract, makes *mutants* of it (the same run with one thing broken: a call dropped, an approval
moved after its call, an argument changed, a failure hidden), checks each one, and reports how
many the contract *kills* (rejects with an error-severity violation):

    SCORE 0.65  17 killed · 9 survived · 0 equivalent · 0 invalid
    control 0.15 (auto-written): 4 killed · 22 survived
      ✗ survived flip_ok:8  would be killed by: failure_handled, successful counts

## Operators
Each operator, its edit, and the rules that kill its mutants (a survivor's hint):
- `drop_call`: remove a call and its result (tool_order, tool_calls, precedence, required_when);
- `drop_event`: remove any other event: run.start, agent.message, a stop, a telemetry line...
  (require_event, require_order, failure_handled);
- `swap_calls`: swap a call/result pair with the next pair of another tool (tool_order, precedence);
- `change_arg`: give an argument another value of its type seen in the trace (tool_args);
- `duplicate_call`: repeat a call and its result (tool_calls, distinct, retry_limit);
- `drop_approval`, `move_approval_after`, `rebind_approval`: remove a grant, move it after its
  call, change its args or call_id (require_approval, approval_bound);
- `stop_earlier`: move a `control.stop` before the previous call (stop_is_final);
- `flip_ok`: toggle a result's `ok` (failure_handled, successful counts);
- `drop_outcome`, `degrade_outcome`: remove an outcome, make it `violated` or
  `self_attestation` (completion rules, conditions);
- `inflate_retries`: three failed copies of a call before it (retry_limit, event_budget);
- `stale_result`: an earlier result of the same tool instead of this one ($from_result rules);
- `misreport_output`: the final output with an element dropped, a boolean flipped, 1 added or a
  string changed (output_match, output length);
- `inflate_duration`: `duration_ms` times 10 (latency and run budgets).

The report names every mutant by its operator and the seq of its site (below), so a run of
`mutate` on your trace shows where each operator applied; `--show-mutant ID` prints one mutant's
trace.
Mutants are made without randomness, site by site in trace order; a mutant's id is
`<operator>:<seq of the site in your trace>[:<detail>]`, the detail being a JSON Pointer into the
arguments or the output (`change_arg:20:/amount`; one over 1,000 characters cut, `…`, and a hash of
it), `call_id`, `verdict` or `evidence_class`. Every
mutant is numbered 10, 20, ... by position; moved events keep the times of the positions they
land on, inserted ones take the time of the event before them. Above `--max-mutants` N (default
500), N of them, evenly spread, are kept.

## Classifying mutants
- *invalid*: not a valid trace for the contract's version (listed, not scored);
- *equivalent*: it does what the original did, by its behaviour fingerprint (below); not scored,
  and flagged `over_block` when the contract still rejects it: the contract blocks a run that
  behaves as a good one;
- *killed*: at least one error-severity violation (`killed_by` lists the rules);
- *survived*: anything else (`warned` when it drew warnings).

score = killed / (killed + survived) (none when nothing was scored, which stderr says too).

The fingerprint is the final output and run status; every call's tool, arguments and result
(`ok`, `result`, `duration_ms`), whether a stop came before it, and the grants that cover it; the
outcomes and where they are relative to the first completion claim; for each call of a tool not
matched by a `--reads GLOB` (every tool counts as a write by default), the successful calls before
it (more is no worse); and every other event but `telemetry.*`, in order. Declaring read-only
tools with `--reads` lets two independent reads swap places as an equivalent mutant.

## The negative control
The mutants are also scored against a control contract that checks almost nothing: by default
one mutate writes (`<name> (control)`: `run_status` equal to the trace's status, and `tool_calls
min: 1` for each tool it calls; with a version-1 contract it reads the events as version 1 does,
so it passes every trace the contract passes: a status no rule can name, empty or over 100
characters, gets no rule, blanks at the ends of a tool's name are `?` in its glob, and a tool
past the 10,000 rules of a contract is left out), or `--control C0`. If the control scores above 0 and at least
half the contract's score, the report says "mutants too easy": the trace is too small for the
score to tell a good contract from a trivial one.

## False positives
Rewrites that keep the behaviour must still pass: `renumber` (seq 1000, 1007, ...), `heartbeat`
(a `telemetry.heartbeat` after every 3rd event), `comments` (a `#` line and an empty line before
each event), `reorder_keys` (every object's keys reversed), `json_array` (the trace as one JSON
array) and every trace of `--corpus DIR` (`*.jsonl`, `*.json`). One that fails names the rules
responsible: typically `within_events` or `max_events`, which count positions. `--no-rewrite
NAME` leaves one out.

## Exit
0 with the report; 1 when the score is below `--min-score X` (or there is no score to compare
with it: without `--min-score`, no score is exit 0), or with
`--fail-on-fp` when a rewrite fails; 2 for bad input: a contract, trace or control that cannot
be read, a trace that does not pass the contract (or the `--control`; the failing rules are
named), a version-2 contract with lint errors (unless `--no-lint`), an unknown rewrite.

## Report
`--format json` prints `agent-invariants/mutate/v1`: `{schema, contract_sha256, trace_sha256,
score, killed, survived, warned, equivalent, over_block, invalid, mutants: [{id, operator, status,
killed_by, warned?, over_block?}], survivors: [{id, hint}], control: {auto, contract_sha256,
score, killed, survived, too_easy}, false_positives: [{rewrite, file?, killed_by}], trace}`, the
hashes of the files' bytes. Text, Markdown, JUnit (a test case per mutant and per rewrite), SARIF
and GitHub annotations (survivors at their site's line in the trace, false positives at the rules'
lines in the contract) are the other formats.

## Known limits
The trace is read whole (up to 64 MiB), and each mutant is a copy of it, made, checked and
dropped one at a time (each process holds the trace and one mutant): the time grows with the
trace times the mutants, so mutate is for the runs a test suite keeps rather than for
production traces. Held as events, the trace takes 20 to 40 times its size in memory, in each
process: 218 MB for a trace of 9.8 MB (50,000 events), about 2 GB near the 64 MiB cap.
`--jobs N` checks mutants in N processes (by default every core once the mutants hold 200,000
events or more: 500 mutants of a 400-event trace).
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from agent_invariants._js import JS_WHITESPACE, js_trim
from agent_invariants._paths import input_name, listed_file
from agent_invariants._safe import TEXT_LIMIT, inert
from agent_invariants.contract import Contract, load_contract
from agent_invariants.contract_source import ContractSource, read_contract
from agent_invariants.engine import run_check
from agent_invariants.errors import InputError, TraceError, suggest, unknown_value
from agent_invariants.globs import has_line_terminator
from agent_invariants.mutate.judge import Outcome, Work, check_made, error_rules, judged
from agent_invariants.mutate.operators import HINTS, Candidate, Candidates, as_mutant
from agent_invariants.mutate.report import ControlScore, FalsePositive, MutantResult, MutateReport, Survivor
from agent_invariants.mutate.rewrites import REWRITES, rewritten
from agent_invariants.mutate.trace import Event, Original, as_jsonl, member, parsed, read_bytes
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES, TraceFile
from agent_invariants.report import CheckReport
from agent_invariants.rules.run_status import STATUS_LIMIT
from agent_invariants.rules.terminal import TERMINAL_TYPES, run_status
from agent_invariants.validation import MAX_RULES

__all__ = ("DEFAULT_MAX_MUTANTS", "Mutated", "auto_control", "corpus_traces", "mutant_text", "mutate_files",
           "mutate_trace", "read_original")

DEFAULT_MAX_MUTANTS = 500
SCHEMA = "agent-invariants/mutate/v1"


class Mutated(NamedTuple):
    """A mutate report, and the line of each mutant's site in the trace (with its length, when
    known), by mutant id, for the formats that point into files."""

    report: MutateReport
    sites: dict[str, tuple[int, int | None]]


def mutate_trace(contract: str | os.PathLike[str] | ContractSource, trace: str | os.PathLike[str] | bytes, *,
                 control: str | os.PathLike[str] | ContractSource | None = None,
                 corpus: str | os.PathLike[str] | None = None, max_mutants: int = DEFAULT_MAX_MUTANTS,
                 reads: Sequence[str] = (), skip: Iterable[str] = (), jobs: int = 1, lint: bool = True,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> MutateReport:
    """Mutate `trace` (a path, `-`, or its bytes), which must pass `contract` (a path or the
    `ContractSource` of `read_contract`), and report how many mutants the contract kills. See the
    module's manual for `control`, `corpus`, `max_mutants`, `reads` (`--reads`) and `skip`
    (`--no-rewrite`). `jobs` processes check the mutants (0: every core when the mutants hold
    200,000 events or more). With `lint`, a version-2 contract with lint errors is refused.
    Raises InputError for bad input (see "Exit")."""
    return mutate_files(contract, trace, control=control, corpus=corpus, max_mutants=max_mutants, reads=reads,
                        skip=skip, jobs=jobs, lint=lint, max_line_bytes=max_line_bytes).report


def mutate_files(contract: str | os.PathLike[str] | ContractSource, trace: str | os.PathLike[str] | bytes, *,
                 control: str | os.PathLike[str] | ContractSource | None = None,
                 corpus: str | os.PathLike[str] | None = None, max_mutants: int = DEFAULT_MAX_MUTANTS,
                 reads: Sequence[str] = (), skip: Iterable[str] = (), jobs: int = 1, lint: bool = True,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Mutated:
    """`mutate_trace`, with the line of each mutant's site in the trace."""
    skipped = set(skip)
    for name in skipped:
        if name not in REWRITES:
            raise InputError(f"--no-rewrite: {unknown_value(inert(repr(name), TEXT_LIMIT), name, REWRITES, 'rewrite')}")
    if max_mutants < 1:
        raise InputError(f"--max-mutants {max_mutants}: must be at least 1")
    source = _source(contract)
    loaded = _loaded(source, lint)
    original = read_original(trace, loaded, max_line_bytes)
    if control is None:
        control_json = auto_control(loaded, original.events)
        control_contract = load_contract(control_json, name="the auto-written control")
        control_events = loaded.version   # read the events as the contract reads them: it passes T
        control_sha = hashlib.sha256(control_json).hexdigest()
        _must_pass(control_contract, control_events, original, "the auto-written control (give one with --control)")
    else:
        control_source = _source(control)
        control_contract = _loaded(control_source, lint)
        control_events = control_contract.version
        control_sha = hashlib.sha256(control_source.data).hexdigest()
        _must_pass(control_contract, control_events, original, f"the control {control_source.label}")

    work = Work(loaded, control_contract, control_events, tuple(reads), max_mutants)
    found, outcomes = judged(original, work, jobs)
    results = [_classified(candidate, outcome) for candidate, outcome in zip(found, outcomes, strict=True)]
    survivors = [Survivor(id=result.id, hint=HINTS[result.operator]) for result in results
                 if result.status == "survived"]
    control_killed = sum(1 for outcome in outcomes if outcome.control_kills is True)
    control_survived = sum(1 for outcome in outcomes if outcome.control_kills is False)
    counts = {status: sum(1 for result in results if result.status == status)
              for status in ("killed", "survived", "equivalent", "invalid")}
    score = _score(counts["killed"], counts["survived"])
    control_score = _score(control_killed, control_survived)
    too_easy = control_score is not None and control_score > 0 and score is not None and control_score >= score / 2
    report = MutateReport(
        schema=SCHEMA, contract_sha256=hashlib.sha256(source.data).hexdigest(),
        trace_sha256=hashlib.sha256(original.data).hexdigest(), score=score, killed=counts["killed"],
        survived=counts["survived"], warned=sum(1 for result in results if result.warned is True),
        equivalent=counts["equivalent"], over_block=sum(1 for result in results if result.over_block is True),
        invalid=counts["invalid"], mutants=results, survivors=survivors,
        control=ControlScore(auto=control is None, contract_sha256=control_sha, score=control_score,
                             killed=control_killed, survived=control_survived, too_easy=too_easy),
        false_positives=_false_positives(loaded, original, corpus, skipped, max_line_bytes),
        trace=original.label)
    lines = {candidate.id: original.lines[candidate.position] for candidate in found}
    sites: dict[str, tuple[int, int | None]] = {ident: (line, original.lengths.get(line))
                                                for ident, line in lines.items() if line is not None}
    return Mutated(report, sites)


def mutant_text(contract: str | os.PathLike[str] | ContractSource, trace: str | os.PathLike[str] | bytes, ident: str,
                *, lint: bool = True, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> bytes:
    """The JSON Lines of the mutant `ident` of `trace` (to see what a survivor did);
    InputError when the trace has no such mutant."""
    original = read_original(trace, _loaded(_source(contract), lint), max_line_bytes)
    found = Candidates(original.events, original.seqs)
    for candidate in found:
        if candidate.id == ident:
            return as_jsonl(as_mutant(candidate.make()))
    known = [candidate.id for candidate in found if candidate.id.split(":", 1)[0] == ident.split(":", 1)[0]]
    shown = inert(repr(ident), TEXT_LIMIT)
    raise InputError(f"--show-mutant {shown}: {original.label} has no such mutant{suggest(ident, known)}")


def read_original(trace: str | os.PathLike[str] | bytes, contract: Contract,
                  max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Original:
    """The trace to mutate, which must pass `contract` as `check` would pass it (warnings allowed):
    otherwise InputError naming the rules it fails."""
    if isinstance(trace, (bytes, bytearray)):
        label, data = "<bytes>", bytes(trace)
    else:
        label = input_name(os.fspath(trace))
        data = read_bytes(os.fspath(trace), label)
    source = TraceFile(data, name=label, max_line_bytes=max_line_bytes, line_lengths=True)
    checked = run_check(contract, source, 1).report
    if not checked.passed:
        raise TraceError(label, None, f"fails the contract ({_named(checked)}); mutate needs a trace that passes it")
    count = checked.summary.events
    where = source.lines_of(range(count))
    lines = [where.get(index) for index in range(count)]
    lengths = source.line_lengths_of(range(count))
    by_line = {line: lengths[index] for index, line in enumerate(lines) if line is not None and index in lengths}
    return parsed(label, data, lines, by_line)


def auto_control(contract: Contract, events: list[Event]) -> bytes:
    """The JSON of the control mutate writes (spec §10 point 64): the trace's run status, and a
    call of each tool it calls, in first-call order. It must load and pass the trace, which a
    version-1 contract's trace may make hard: a status a rule cannot name (empty, or over 100
    characters) has no status rule, a tool named with blanks at an end gets `?` there (a glob is
    trimmed), one with a line break there (which no wildcard matches) or past the 10,000 rules
    of a contract has no rule, and a control left with no rule asks for the trace's terminal."""
    status = _run_status(events)
    rules: list[dict[str, Any]] = []
    if 1 <= len(status) <= STATUS_LIMIT:   # (counted as the rule's Status counts it)
        rules.append({"id": "control.status", "kind": "run_status", "equals": status})
    tools: dict[str, None] = {}
    for event in events:
        tool = member(event, "tool")
        if member(event, "type") == "tool.call" and tool.__class__ is str:
            tools.setdefault(tool)
    globs = [glob for glob in map(_glob_of, tools) if glob is not None][:MAX_RULES - len(rules)]
    for number, glob in enumerate(globs, 1):
        rules.append({"id": f"control.calls.{number}", "kind": "tool_calls", "tool": glob, "min": 1})
    if not rules:   # (a terminal whose status is not named, and no tool named)
        terminal = next(member(event, "type") for event in reversed(events) if member(event, "type") in TERMINAL_TYPES)
        rules.append({"id": "control.terminal", "kind": "require_event", "match": {"type": terminal}, "min": 1})
    name = f"{contract.name[:190]} (control)"
    return msgspec.json.encode({"version": 2, "name": name, "rules": rules})


def _glob_of(tool: str) -> str | None:
    """A glob that matches `tool`: the name, each blank at either end (which loading trims off a
    glob) written `?`; None when one of those is a line break, which no wildcard matches."""
    core = js_trim(tool)
    lead = len(tool) - len(tool.lstrip(JS_WHITESPACE)) if core else len(tool)
    ends = tool[:lead] + tool[lead + len(core):]
    if has_line_terminator(ends):
        return None
    return "?" * lead + core + "?" * (len(tool) - lead - len(core))


def _run_status(events: list[Event]) -> str:
    """The run status as the run_status kind reads it."""
    terminal = next((event for event in reversed(events) if member(event, "type") in TERMINAL_TYPES), None)
    if terminal is None:
        return run_status(None, None)
    status = member(terminal, "status")
    return run_status(member(terminal, "type"), status if status.__class__ is str else None)


def _source(contract: str | os.PathLike[str] | ContractSource) -> ContractSource:
    return contract if isinstance(contract, ContractSource) else read_contract(contract)


def _loaded(source: ContractSource, lint: bool) -> Contract:
    from agent_invariants.lint import refuse_unpassable

    loaded = load_contract(source)
    return refuse_unpassable(loaded, source.label, source) if lint else loaded


def _must_pass(control: Contract, events_version: int, original: Original, name: str) -> None:
    try:
        checked = check_made(control, original.data, original.label, events_version)
    except InputError as exc:
        raise TraceError(original.label, None, f"{name} cannot read it: {exc}") from None
    if not checked.passed:
        raise TraceError(original.label, None, f"fails {name} ({_named(checked)}); the control must pass the trace")


def _named(checked: CheckReport) -> str:
    failing = error_rules(checked)
    return ("rule " if len(failing) == 1 else "rules ") + ", ".join(inert(rule, 200) for rule in failing)


def _classified(candidate: Candidate, outcome: Outcome) -> MutantResult:
    ident, operator, errors = candidate.id, candidate.operator, outcome.errors
    if errors is None:
        return MutantResult(id=ident, operator=operator, status="invalid", killed_by=[])
    if outcome.equivalent:
        return MutantResult(id=ident, operator=operator, status="equivalent", killed_by=errors,
                            over_block=True if errors else msgspec.UNSET)
    if errors:
        return MutantResult(id=ident, operator=operator, status="killed", killed_by=errors)
    return MutantResult(id=ident, operator=operator, status="survived", killed_by=[],
                        warned=True if outcome.warned else msgspec.UNSET)


def _score(killed: int, survived: int) -> float | None:
    return killed / (killed + survived) if killed + survived else None


def _false_positives(contract: Contract, original: Original, corpus: str | os.PathLike[str] | None,
                     skipped: set[str], max_line_bytes: int) -> list[FalsePositive]:
    found: list[FalsePositive] = []
    for name, text in rewritten(original.events, skipped):
        try:
            failing = error_rules(check_made(contract, text, f"the {name} rewrite of {original.label}"))
        except InputError as exc:   # the rewrites keep every event as it is valid: a bug if it happens
            raise TraceError(original.label, None, f"its {name} rewrite cannot be read: {exc}") from None
        if failing:
            found.append(FalsePositive(rewrite=name, killed_by=failing))
    if corpus is not None and "corpus" not in skipped:
        for path in corpus_traces(corpus):
            failing = error_rules(run_check(contract, TraceFile(path, max_line_bytes=max_line_bytes), 1).report)
            if failing:
                found.append(FalsePositive(rewrite="corpus", file=path, killed_by=failing))
    return found


def corpus_traces(folder: str | os.PathLike[str]) -> list[str]:
    """The `*.jsonl` and `*.json` files of the corpus folder, sorted by name."""
    top = os.fspath(folder)
    named = inert(top, TEXT_LIMIT)
    try:
        names = sorted(os.listdir(top))
    except NotADirectoryError:
        raise InputError(f"--corpus {named}: not a directory") from None
    except FileNotFoundError:
        raise InputError(f"--corpus {named}: no such directory") from None
    except OSError as exc:
        raise InputError(f"--corpus {named}: cannot list it: {exc.strerror or exc}") from None
    return [str(Path(top) / name) for name in names   # hidden files left out, as check's folder walk does
            if name.endswith((".jsonl", ".json")) and not name.startswith(".")
            and listed_file(os.path.join(top, name))]

