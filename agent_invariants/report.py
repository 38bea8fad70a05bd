"""The one data model every output format renders: check and compare reports.

Field names, their order and the omission rules are an interface (`agent-invariants/check/v1`,
`agent-invariants/compare/v1`): a key whose value is unknown is left out, never written as `null`,
except where `null` is the value (`final_outcome`, a `require_event` maximum, an infinite increase).
Additions beyond the reference tool are marked; reference fields are never renamed or re-typed.
"""
from collections.abc import Iterable
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "CHECK_BATCH_SCHEMA",
    "CHECK_SCHEMA",
    "COMPARE_BATCH_SCHEMA",
    "COMPARE_SCHEMA",
    "BatchFailure",
    "CheckBatchReport",
    "CheckReport",
    "CompareBatchReport",
    "CompareReport",
    "ContractRef",
    "Notice",
    "RecordFinding",
    "RecordInfo",
    "Regression",
    "RuleChange",
    "RuleResult",
    "Severity",
    "TraceSummary",
    "Violation",
    "first_violations",
)

CHECK_SCHEMA = "agent-invariants/check/v1"
COMPARE_SCHEMA = "agent-invariants/compare/v1"
CHECK_BATCH_SCHEMA = "agent-invariants/check-batch/v1"
COMPARE_BATCH_SCHEMA = "agent-invariants/compare-batch/v1"

Severity = Literal["error", "warning"]


class Violation(msgspec.Struct, kw_only=True):
    """One broken rule at one place. Events are named by `event_seq` (the trace's own numbering)
    and `event_index` (0-based position among the events); `line` is the physical line in the
    trace file (an addition: absent for in-memory traces). Trace-wide violations have none of them."""

    rule_id: str
    """Id of the broken rule."""
    rule_kind: str
    """Kind of the broken rule, e.g. `require_approval`."""
    severity: Severity
    """The rule's severity: `error` fails the check, `warning` does not."""
    message: str
    """What went wrong, in one sentence (wording may change between versions)."""
    event_seq: int | float | UnsetType = UNSET
    """`seq` of the offending event; absent for violations of the whole trace."""
    event_index: int | UnsetType = UNSET
    """0-based position of the offending event among the trace's events."""
    line: int | UnsetType = UNSET
    """Physical line of the offending event in the trace file (1-based); absent for in-memory traces."""
    line_length: int | UnsetType = UNSET
    """Length of that line in UTF-16 code units, where SARIF regions end; present only when the
    check was asked to learn it (`line_lengths=True`, as the CLI does for `--format sarif`)."""
    evidence: dict[str, Any] | UnsetType = UNSET
    """Facts behind the verdict; keys depend on the rule kind. Version-2 kinds give values in
    RFC 8785 form: a float JSON would write otherwise (`1e21`) is a `JSNumber`, a float that the
    JSON and SARIF renderers write as JavaScript does (`1e+21`); with msgspec, pass
    `enc_hook=agent_invariants._js.js_number_hook`, or use `render.json.to_json`."""
    code: str | UnsetType = UNSET
    """What kind of violation this is, `<rule kind>.<reason>` (e.g. `deny_tool.denied`): stable,
    for tools to match on, where the message may change (an addition of contract version 2,
    given in every report)."""
    status: Literal["fail", "unresolved", "inconclusive"] | UnsetType = UNSET
    """`fail`: the rule is broken here; `unresolved`: what the rule needed could not be found
    (version-2 kinds); `inconclusive`: a trace cut short may yet satisfy it (`--partial`). Each
    is listed as a violation; the inconclusive ones count in no verdict, error or warning count."""
    pointer: str | UnsetType = UNSET
    """(Version-2 kinds.) Where in the event the problem is, as a JSON Pointer (RFC 6901), e.g.
    `/args/amount`; never cut like evidence strings: a place whose pointer would be longer than
    1,000 characters is named by its deepest ancestor whose pointer is not (`/args`)."""
    related_seqs: list[int | float] | UnsetType = UNSET
    """(Version-2 kinds.) `seq` of other events the violation is about, e.g. the earlier call with
    the same arguments."""
    caused_by: str | UnsetType = UNSET
    """(Version-2 kinds.) The id of the output_schema rule that the final output breaks, on a
    violation of another rule that read that output: its cause may be the output's shape."""
    prevented: bool | UnsetType = UNSET
    """(Version-2 contracts, and `record`.) `true` on a violation at a call that a `tool.denied`
    answered: the attempt is reported, and it was stopped (spec §10, points 75 and 84)."""
    span_id: str | UnsetType = UNSET
    """(An addition, for traces imported from another format.) The span or run the offending
    event came from (its `data.source.span_id`), where `line` holds many (an OTLP batch)."""


class RuleResult(msgspec.Struct, kw_only=True):
    """How one contract rule fared. `passed` is false on any violation, warnings included. A rule
    keeps at most `--max-violations` violations (default 1000); `truncated` and `violations_total`
    (additions) say when it found more."""

    rule_id: str
    """Id of the rule."""
    rule_kind: str
    """Kind of the rule."""
    passed: bool
    """True when the rule has no violation at all (warnings included)."""
    severity: Severity
    """The rule's severity."""
    checked: int
    """How many things the rule looked at (events, calls or claims, per kind)."""
    violations: list[Violation]
    """The rule's violations, in the order the rule defines: the first `--max-violations` of them."""
    truncated: bool | UnsetType = UNSET
    """(An addition.) True when the rule found more violations than it keeps; absent otherwise."""
    violations_total: int | UnsetType = UNSET
    """(An addition.) How many violations the rule found, kept or not; present only with `truncated`."""
    vacuous: bool | UnsetType = UNSET
    """(Version-2 kinds.) True when the rule's subject never occurred, so it checked nothing and
    passed without a test (under `--strict`, failed with `<kind>.checked_nothing`); absent otherwise."""
    inconclusive: int | UnsetType = UNSET
    """(`--partial`.) How many of the rule's violations come from its liveness parts, which a
    trace cut short may yet satisfy: their status is `inconclusive`, and they count neither in
    `passed` nor in the report's error and warning counts. Absent when none."""

    @property
    def violation_count(self) -> int:
        """How many violations the rule found, including those left out of `violations`."""
        return len(self.violations) if self.violations_total is UNSET else self.violations_total

    @property
    def counted(self) -> int:
        """How many violations count against the rule: all but the inconclusive ones (`--partial`)."""
        return self.violation_count - (0 if self.inconclusive is UNSET else self.inconclusive)


class TraceSummary(msgspec.Struct, kw_only=True):
    """Counts over a whole trace, computed in the same pass as the check."""

    events: int
    """Number of events."""
    tool_calls: int
    """Number of `tool.call` events."""
    tool_failures: int
    """Number of `tool.result` events with `ok: false`."""
    tools: list[str]
    """Distinct tool names of `tool.call` events, sorted by UTF-16 code units."""
    approvals_granted: int
    """Number of `approval.granted` events not marked `approved: false`."""
    outcomes_satisfied: int
    """Number of `outcome.observed` events with verdict `satisfied`."""
    outcomes_violated: int
    """Number of `outcome.observed` events with verdict `violated`."""
    completion_claims: int
    """Events with `claims_completion: true` or type `run.completed`."""
    final_outcome: str | None
    """Verdict of the last `outcome.observed` event, or null (also when it has no verdict)."""


class ContractRef(msgspec.Struct):
    name: str
    """The contract's name."""
    version: int
    """The contract version (1)."""


class Notice(msgspec.Struct, kw_only=True, omit_defaults=True):
    """(An addition.) Something the check noticed that may mean the trace was not really
    checked: not a violation, and never a change of the verdict (but with `--strict`)."""

    kind: Literal["empty_trace", "misspelt_type", "misspelt_field", "unmatchable_tool", "rule_checked_nothing"]
    """What was noticed (the README's "No silent passes" says what each means)."""
    message: str
    """What was noticed, in one sentence."""
    count: int | UnsetType = UNSET
    """How many events showed it (misspelt types, and fields among the first events checked for them)."""
    event_index: int | UnsetType = UNSET
    """0-based position of the first such event."""
    line: int | UnsetType = UNSET
    """Physical line of that event in the trace file."""
    rule_id: str | UnsetType = UNSET
    """The rule that checked nothing."""


class RecordFinding(msgspec.Struct, kw_only=True):
    """(`record`.) Something about the run that is not a rule's verdict: a call no fixture
    answered, an approval request no entry decided, a run the harness ended, MCP servers whose
    tools drifted from a snapshot, a server's result too large to record."""

    code: Literal["record.fixture_miss", "record.approval_miss", "record.ended", "record.schema_drift",
                  "record.result_too_large"]
    """What happened."""
    level: Literal["error"]
    """Every finding is an error: the run did not test what its scenario was written for."""
    message: str
    """One sentence for people."""
    seq: int | UnsetType = UNSET
    """The event it is about (the call, the request, or the harness's `run.failed`)."""
    call_id: str | UnsetType = UNSET
    """For a fixture miss: the call's id."""
    tool: str | UnsetType = UNSET
    """For a fixture or approval miss: the tool."""
    call_index: int | UnsetType = UNSET
    """For a fixture miss: the call's index among the calls of its fixture's key."""


class RecordInfo(msgspec.Struct, kw_only=True):
    """(`record`.) How the recorded run went, beside the check of its trace."""

    run_id: str
    """The run's id (`fake-run` under `--fake-clock`), on every event of the trace."""
    trace: str
    """The trace file written."""
    command: list[str]
    """The agent's command, as given after `--`."""
    ended_by: str
    """`completed` or `failed` (the agent's terminal message), else the harness's reason:
    `timeout:run`, `timeout:idle`, `exit:<n>`, `signal:<NAME>`, `output_limit`, `interrupted` or
    `protocol:<detail>`."""
    exit_status: int | None
    """The agent's exit status (negative: the signal that ended it); null if it never exited."""
    stderr_log: str | None
    """The file holding the last MiB of the agent's stderr; null when it wrote nothing there."""
    stderr_bytes: int
    """How many bytes the agent wrote to stderr."""
    findings: list[RecordFinding]
    """Fixture and approval misses, and the harness's ending, in the order they happened."""
    denied: int
    """How many calls `--enforce` denied."""


class CheckReport(msgspec.Struct, kw_only=True):
    """A trace checked against a contract. `passed` is true when no error-severity rule broke;
    `violations` repeats every result's kept violations in contract order, and `error_count` and
    `warning_count` count all of them, kept or not. `trace` (an addition) is the trace as the user
    named it."""

    schema: str
    """Always `agent-invariants/check/v1`."""
    contract: ContractRef
    """Which contract the trace was checked against."""
    passed: bool
    """True when no error-severity rule was broken (warnings never fail)."""
    error_count: int
    """Number of error-severity violations, including those left out of `violations`."""
    warning_count: int
    """Number of warning-severity violations, including those left out of `violations`."""
    summary: TraceSummary
    """Counts over the whole trace."""
    results: list[RuleResult]
    """One result per contract rule, in contract order."""
    violations: list[Violation]
    """Every kept violation of every rule, in contract order."""
    truncated: bool | UnsetType = UNSET
    """(An addition.) True when some rule found more violations than it keeps; absent otherwise."""
    violations_total: int | UnsetType = UNSET
    """(An addition.) How many violations all rules found, kept or not; present only with `truncated`."""
    trace: str | UnsetType = UNSET
    """The trace file as named by the user; absent for in-memory traces."""
    run: str | UnsetType = UNSET
    """(An addition.) For a trace imported from another format, the run checked (a trace id, an
    MCP session); absent for native traces."""
    notices: list[Notice] | UnsetType = UNSET
    """(An addition.) Signs that the trace may not have been really checked: no events, misspelt
    event types or fields, rules that checked nothing; absent when there are none."""
    partial: bool | UnsetType = UNSET
    """(`--partial`.) True when the trace was checked as cut short (a crashed or running agent):
    liveness parts report `inconclusive` violations, which the counts and `passed` leave out;
    safety parts judge the events there are. Absent otherwise."""
    inconclusive_count: int | UnsetType = UNSET
    """(`--partial`.) How many violations are inconclusive; present with `partial`."""
    safety_error_count: int | UnsetType = UNSET
    """(`--safety-exit`, `record`.) How many of the error violations come from safety parts of
    rules (what a prefix of the run already decides); present only when asked for."""
    record: RecordInfo | UnsetType = UNSET
    """(`record`.) The recorded run that wrote the trace; absent for `check`."""


class Regression(msgspec.Struct, kw_only=True):
    """Something the candidate made worse than the baseline. `event_seq`, `event_index` and
    `line` (additions) name the candidate event behind it, when there is one: a rule's first
    violation, a new tool's first call, the last observed outcome."""

    kind: Literal["new_rule_failure", "contract_violation", "new_tool", "tool_call_increase", "outcome_regression"]
    """What got worse: a rule, a new tool, call growth or the final outcome."""
    severity: Severity
    """Always `error`: every regression makes the candidate incompatible."""
    message: str
    """What got worse, in one sentence."""
    evidence: dict[str, Any]
    """Facts behind the regression; keys depend on its kind."""
    event_seq: int | float | UnsetType = UNSET
    """`seq` of the candidate event behind the regression, when there is one."""
    event_index: int | UnsetType = UNSET
    """0-based position of that candidate event."""
    line: int | UnsetType = UNSET
    """Physical line of that event in the candidate trace file."""
    line_length: int | UnsetType = UNSET
    """Length of that line in UTF-16 code units; present only when asked for, as `Violation.line_length`."""
    status: Literal["inconclusive"] | UnsetType = UNSET
    """(`--partial`.) `inconclusive` when the rest of a run cut short could still undo it: a drop
    of the final outcome, which any later outcome event replaces. Such a regression is reported
    but leaves the comparison compatible, as an inconclusive violation leaves a check passed.
    Absent otherwise."""


class RuleChange(msgspec.Struct, kw_only=True):
    """(An addition.) One rule's state in baseline and candidate, so a reviewer sees what moved."""

    rule_id: str
    """Id of the rule."""
    rule_kind: str
    """Kind of the rule."""
    severity: Severity
    """The rule's severity."""
    baseline: Literal["passed", "failed"]
    """The rule's state in the baseline run."""
    candidate: Literal["passed", "failed"]
    """The rule's state in the candidate run."""
    change: Literal["new", "fixed", "still_failing", "passing"]
    """`new` (newly failing), `fixed`, `still_failing` or `passing`."""
    baseline_violations: int
    """Number of violations in the baseline run, kept or not, but for inconclusive ones (`--partial`)."""
    candidate_violations: int
    """Number of violations in the candidate run, kept or not, but for inconclusive ones (`--partial`)."""
    candidate_inconclusive: int | UnsetType = UNSET
    """(`--partial`.) Number of inconclusive violations in the candidate run, when there are any: a
    rule `passed` with some has not failed yet, and the rest of the run decides it."""
    baseline_inconclusive: int | UnsetType = UNSET
    """(`--partial`.) Number of inconclusive violations in the baseline run, when there are any."""


class CompareReport(msgspec.Struct, kw_only=True):
    """A candidate run compared with a baseline under one contract; `compatible` when nothing regressed."""

    schema: str
    """Always `agent-invariants/compare/v1`."""
    contract: ContractRef
    """Which contract both runs were checked against."""
    compatible: bool
    """True when nothing regressed (an inconclusive regression, under `--partial`, fails nothing)."""
    baseline: CheckReport
    """The baseline run's check report."""
    candidate: CheckReport
    """The candidate run's check report."""
    regressions: list[Regression]
    """What the candidate made worse, in the documented order."""
    rule_changes: list[RuleChange]
    """Every rule's state in both runs."""

    @property
    def regression_count(self) -> int:
        """How many regressions count against the candidate: all but the inconclusive ones (`--partial`)."""
        return sum(1 for regression in self.regressions if regression.status is UNSET)


class BatchFailure(msgspec.Struct, kw_only=True):
    """A trace of a batch that could not be checked, with the one-line reason."""

    trace: str
    """The trace that could not be checked."""
    error: str
    """Why, in one line (file and line or JSON path included)."""
    line: int | UnsetType = UNSET
    """The line of the trace where it went wrong, when there is one (an annotation's place)."""


class CheckBatchReport(msgspec.Struct, kw_only=True):
    """Several traces checked against one contract (`check` with several traces). `passed` only
    when every trace was read and passed; `reports` in the order the traces were named."""

    schema: str
    """Always `agent-invariants/check-batch/v1`."""
    contract: ContractRef
    """Which contract the traces were checked against."""
    passed: bool
    """True when every trace was read and passed."""
    traces: int
    """Number of traces named."""
    error_count: int
    """Error-severity violations over all traces."""
    warning_count: int
    """Warning-severity violations over all traces."""
    reports: list[CheckReport]
    """One check report per readable trace, in the order the traces were named."""
    failures: list[BatchFailure]
    """Traces that could not be read."""
    stability: Any | UnsetType = UNSET
    """(`record --repeat`.) The `agent-invariants/stability/v1` report over the runs' final
    outputs (a `stability.StabilityReport`); absent otherwise."""


class CompareBatchReport(msgspec.Struct, kw_only=True):
    """Several candidate runs compared with their baselines under one contract."""

    schema: str
    """Always `agent-invariants/compare-batch/v1`."""
    contract: ContractRef
    """Which contract the runs were checked against."""
    compatible: bool
    """True when every pair was read and nothing regressed."""
    pairs: int
    """Number of (baseline, candidate) pairs."""
    regressions: int
    """Regressions over all pairs, but for inconclusive ones (`--partial`), which fail nothing."""
    reports: list[CompareReport]
    """One compare report per readable pair."""
    failures: list[BatchFailure]
    """Pairs whose traces could not be read."""


def first_violations(violations: Iterable[Violation]) -> dict[str, Violation]:
    """Each rule's first violation that counts, by rule id (violations come in each rule's own
    order): under `--partial`, the first that is not `inconclusive`, which is what fails the rule
    (and what a regression of the rule points at); the first of all when none counts."""
    first: dict[str, Violation] = {}
    for violation in violations:
        found = first.get(violation.rule_id)
        if found is None or (found.status == "inconclusive" and violation.status != "inconclusive"):
            first[violation.rule_id] = violation
    return first
