"""The one data model every output format renders: check and compare reports.

Field names, their order and the omission rules are an interface (`agent-invariants/check/v1`,
`agent-invariants/compare/v1`): a key whose value is unknown is left out, never written as `null`,
except where `null` is the value (`final_outcome`, a `require_event` maximum, an infinite increase).
Additions beyond the reference tool are marked; reference fields are never renamed or re-typed.
"""
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "BatchFailure",
    "CHECK_BATCH_SCHEMA",
    "CHECK_SCHEMA",
    "COMPARE_BATCH_SCHEMA",
    "COMPARE_SCHEMA",
    "CheckBatchReport",
    "CompareBatchReport",
    "CheckReport",
    "CompareReport",
    "ContractRef",
    "Regression",
    "RuleChange",
    "RuleResult",
    "Severity",
    "TraceSummary",
    "Violation",
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
    rule_kind: str
    severity: Severity
    message: str
    event_seq: int | float | UnsetType = UNSET
    event_index: int | UnsetType = UNSET
    line: int | UnsetType = UNSET
    evidence: dict[str, Any] | UnsetType = UNSET


class RuleResult(msgspec.Struct, kw_only=True):
    """How one contract rule fared. `passed` is false on any violation, warnings included."""

    rule_id: str
    rule_kind: str
    passed: bool
    severity: Severity
    checked: int
    violations: list[Violation]


class TraceSummary(msgspec.Struct, kw_only=True):
    """Counts over a whole trace, computed in the same pass as the check."""

    events: int
    tool_calls: int
    tool_failures: int
    tools: list[str]
    approvals_granted: int
    outcomes_satisfied: int
    outcomes_violated: int
    completion_claims: int
    final_outcome: str | None


class ContractRef(msgspec.Struct):
    name: str
    version: int


class CheckReport(msgspec.Struct, kw_only=True):
    """A trace checked against a contract. `passed` is true when no error-severity rule broke;
    `violations` repeats every result's violations in contract order. `trace` (an addition) is the
    trace as the user named it."""

    schema: str
    contract: ContractRef
    passed: bool
    error_count: int
    warning_count: int
    summary: TraceSummary
    results: list[RuleResult]
    violations: list[Violation]
    trace: str | UnsetType = UNSET


class Regression(msgspec.Struct, kw_only=True):
    """Something the candidate made worse than the baseline. `event_seq`, `event_index` and
    `line` (additions) name the candidate event behind it, when there is one: a rule's first
    violation, a new tool's first call, the last observed outcome."""

    kind: Literal["new_rule_failure", "contract_violation", "new_tool", "tool_call_increase", "outcome_regression"]
    severity: Severity
    message: str
    evidence: dict[str, Any]
    event_seq: int | float | UnsetType = UNSET
    event_index: int | UnsetType = UNSET
    line: int | UnsetType = UNSET


class RuleChange(msgspec.Struct, kw_only=True):
    """(An addition.) One rule's state in baseline and candidate, so a reviewer sees what moved."""

    rule_id: str
    rule_kind: str
    severity: Severity
    baseline: Literal["passed", "failed"]
    candidate: Literal["passed", "failed"]
    change: Literal["new", "fixed", "still_failing", "passing"]
    baseline_violations: int
    candidate_violations: int


class CompareReport(msgspec.Struct, kw_only=True):
    """A candidate run compared with a baseline under one contract; `compatible` when nothing regressed."""

    schema: str
    contract: ContractRef
    compatible: bool
    baseline: CheckReport
    candidate: CheckReport
    regressions: list[Regression]
    rule_changes: list[RuleChange]


class BatchFailure(msgspec.Struct, kw_only=True):
    """A trace of a batch that could not be checked, with the one-line reason."""

    trace: str
    error: str


class CheckBatchReport(msgspec.Struct, kw_only=True):
    """Several traces checked against one contract (`check` with several traces). `passed` only
    when every trace was read and passed; `reports` in the order the traces were named."""

    schema: str
    contract: ContractRef
    passed: bool
    traces: int
    error_count: int
    warning_count: int
    reports: list[CheckReport]
    failures: list[BatchFailure]


class CompareBatchReport(msgspec.Struct, kw_only=True):
    """Several candidate runs compared with their baselines under one contract."""

    schema: str
    contract: ContractRef
    compatible: bool
    pairs: int
    regressions: int
    reports: list[CompareReport]
    failures: list[BatchFailure]
