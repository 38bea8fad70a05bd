"""Compare: is a candidate run (new model, prompt, tools) still compatible with a baseline run?

Both traces are checked under the same contract, then the contract's `compare` policy decides
what counts as a regression, in this order:

1. `new_rule_failure`: an error-severity rule fails in the candidate but not in the baseline.
2. `contract_violation`: an error-severity rule fails in the candidate and also in the baseline
   (or every failing one, when `fail_on_new_violations` is false). A candidate that breaks an
   error rule is never compatible; the flag only changes the label.
3. `new_tool`: the candidate calls a tool the baseline never called (`fail_on_new_tools`).
4. `tool_call_increase`: tool calls grew by more than `max_tool_call_increase_percent`.
5. `outcome_regression`: the final outcome ranks lower (violated < retracted < unknown <
   satisfied; no outcome ranks lowest) (`require_same_outcome_or_better`).

The messages of the last three name the policy key that turns them off or sets their limit.

Beyond the reference, the report's `rule_changes` lists every rule's state in both runs.

This works on a loaded `Contract`; `api.compare_traces` loads one from a path or a mapping.
"""
from __future__ import annotations

import os
from typing import cast

from msgspec import UNSET

from agent_invariants import _signals
from agent_invariants._js import js_number, js_to_fixed1, json_number, utf16_sorted
from agent_invariants.contract import Contract
from agent_invariants.engine import Checked, Trace, run_check
from agent_invariants.errors import InputError, TraceError
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES, open_trace
from agent_invariants.report import (
    COMPARE_SCHEMA,
    CheckReport,
    CompareReport,
    ContractRef,
    Regression,
    RuleChange,
    first_violations,
)
from agent_invariants.rules import DEFAULT_MAX_VIOLATIONS

__all__ = ("SIDE_BY_SIDE_BYTES", "compare_checked", "compare_reports", "run_compare")

_OUTCOME_RANK: dict[str | None, int] = {"violated": 0, "retracted": 1, "unknown": 2, "satisfied": 3}


# Below this many bytes of baseline, a second process costs more than it saves.
SIDE_BY_SIDE_BYTES = 8 << 20


def run_compare(contract: Contract, baseline: Trace, candidate: Trace, *,
                max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, max_violations: int = DEFAULT_MAX_VIOLATIONS,
                jobs: int = 1, line_lengths: bool = False, strict: bool = False,
                partial: bool = False) -> CompareReport:
    """Check both traces under `contract` and report what the candidate made worse; the options
    are those of `api.compare_traces`. With `jobs` > 1 a large baseline file is checked in a
    second process meanwhile (`_check_side_by_side`): the two checks are independent."""
    checked = None
    paths = _side_by_side_paths(baseline, candidate) if jobs > 1 else None
    if paths is not None:
        checked = _check_side_by_side(contract, *paths, max_line_bytes, max_violations, line_lengths, strict, partial)
    if checked is None:
        before = run_check(contract, open_trace(baseline, max_line_bytes=max_line_bytes, line_lengths=line_lengths),
                           max_violations, strict=strict, partial=partial).report
        after = run_check(contract, open_trace(candidate, max_line_bytes=max_line_bytes, line_lengths=line_lengths),
                          max_violations, strict=strict, partial=partial)
    else:
        before, after = checked
    return compare_checked(contract, before, after)


def compare_checked(contract: Contract, baseline: CheckReport, candidate: Checked) -> CompareReport:
    """`compare_reports`, with new-tool and outcome regressions located at the candidate event
    behind them (which needs the candidate's pass, not only its report)."""
    report = compare_reports(contract, baseline, candidate.report)
    _locate(report.regressions, candidate)
    return report


def _side_by_side_paths(baseline: Trace, candidate: Trace) -> tuple[str, str] | None:
    """The paths of the two trace files when checking the baseline in a second process pays
    (both are files, the baseline a large one); None otherwise."""
    if not (isinstance(baseline, (str, os.PathLike)) and isinstance(candidate, (str, os.PathLike))):
        return None
    paths = os.fspath(baseline), os.fspath(candidate)
    if "-" in paths:
        return None
    try:
        pays = os.path.isfile(paths[1]) and os.path.getsize(paths[0]) >= SIDE_BY_SIDE_BYTES
    except OSError:
        return None   # let the reader say what is wrong with it
    return paths if pays else None


def _check_side_by_side(contract: Contract, baseline: str, candidate: str, max_line_bytes: int,
                        max_violations: int, line_lengths: bool, strict: bool,
                        partial: bool) -> tuple[CheckReport, Checked] | None:
    """The baseline's report, checked in a worker process, and the candidate's pass, made here
    meanwhile; None when no worker process can be started here (then the caller checks both).
    A bad baseline is reported before a bad candidate, as in one process."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        # Ctrl-C reaches the whole process group: only this process acts on it (as in a batch)
        pool = ProcessPoolExecutor(max_workers=1, initializer=_signals.quiet_worker)
    except (OSError, NotImplementedError):   # no working semaphores (a read-only /dev/shm, say)
        return None
    with pool:
        try:
            with _signals.held():   # the worker starts during the submit; see quiet_worker
                future = pool.submit(_baseline_report, contract, baseline, max_line_bytes, max_violations,
                                     line_lengths, strict, partial)
        except (OSError, AssertionError, BrokenProcessPool):   # AssertionError: a daemon process
            return None
        try:
            source = open_trace(candidate, max_line_bytes=max_line_bytes, line_lengths=line_lengths)
            after: Checked | InputError = run_check(contract, source, max_violations, strict=strict, partial=partial)
        except InputError as exc:
            after = exc
        except BaseException:
            _signals.end_workers(pool)
            raise
        try:
            before = future.result()
        except BrokenProcessPool:   # the worker died (killed for memory, say): check it here
            before = _baseline_report(contract, baseline, max_line_bytes, max_violations, line_lengths, strict,
                                      partial)
        except BaseException:   # Ctrl-C, SIGTERM: end the worker now, not when its check is done
            _signals.end_workers(pool)
            raise
    if isinstance(before, tuple):
        raise TraceError(*before)
    if isinstance(after, InputError):
        raise after
    return before, after


def _baseline_report(contract: Contract, path: str, max_line_bytes: int, max_violations: int,
                     line_lengths: bool, strict: bool, partial: bool) -> CheckReport | tuple[str, int | None, str]:
    """Runs in the worker: the report, or a trace error as (source, line, problem), which
    crosses back to the caller more reliably than the exception itself."""
    try:
        source = open_trace(path, max_line_bytes=max_line_bytes, line_lengths=line_lengths)
        return run_check(contract, source, max_violations, strict=strict, partial=partial).report
    except TraceError as exc:
        return (exc.source, exc.line, exc.problem)


def compare_reports(contract: Contract, baseline: CheckReport, candidate: CheckReport) -> CompareReport:
    """Apply the contract's compare policy to two check reports made with that contract.

    Rule regressions point at the rule's first violation; `compare_traces` also locates new
    tools and outcome regressions, which needs the candidate's pass."""
    policy = contract.policy
    regressions = _rule_regressions(baseline, candidate, policy.fail_on_new_violations is not False)
    if policy.fail_on_new_tools is not False:
        known = set(baseline.summary.tools)
        for tool in utf16_sorted(t for t in candidate.summary.tools if t not in known):
            regressions.append(Regression(
                kind="new_tool", severity="error", evidence={"tool": tool},
                message=f"Candidate introduced tool: {tool}, which the baseline never called "
                        "(policy fail_on_new_tools)."))
    if policy.max_tool_call_increase_percent is not UNSET:
        regressions += _call_growth(baseline.summary.tool_calls, candidate.summary.tool_calls,
                                    policy.max_tool_call_increase_percent)
    if policy.require_same_outcome_or_better is not False:
        regressions += _outcome_drop(baseline.summary.final_outcome, candidate.summary.final_outcome,
                                     cut_short=candidate.partial is True)
    first_violation = first_violations(candidate.violations)
    for regression in regressions:
        first = first_violation.get(regression.evidence.get("rule_id", ""))
        if first is not None and first.event_index is not UNSET:
            regression.event_seq = first.event_seq
            regression.event_index = first.event_index
            regression.line = first.line
            regression.line_length = first.line_length
    report = CompareReport(
        schema=COMPARE_SCHEMA,
        contract=ContractRef(name=contract.name, version=contract.version),
        compatible=True,
        baseline=baseline,
        candidate=candidate,
        regressions=regressions,
        rule_changes=_rule_changes(baseline, candidate),
    )
    report.compatible = report.regression_count == 0   # (every regression has severity error)
    return report


def _locate(regressions: list[Regression], candidate: Checked) -> None:
    """Point new-tool and outcome regressions at the candidate event behind them, their lines
    looked up once for all of them (each lookup reads the whole line map)."""
    placed: list[Regression] = []
    for regression in regressions:
        if regression.kind == "new_tool":
            place = candidate.counter.first_call(regression.evidence["tool"])
        elif regression.kind == "outcome_regression":
            place = candidate.counter.last_outcome
        else:
            continue
        if place is not None:
            regression.event_seq, regression.event_index = place
            placed.append(regression)
    if not placed:
        return
    indices = [cast(int, regression.event_index) for regression in placed]
    lines = candidate.source.lines_of(indices)
    lengths = candidate.source.line_lengths_of(indices) if lines else {}
    for regression, index in zip(placed, indices, strict=True):
        line = lines.get(index)
        if line is not None:
            regression.line = line
            length = lengths.get(index)
            if length is not None:
                regression.line_length = length


def _rule_regressions(baseline: CheckReport, candidate: CheckReport, label_new: bool) -> list[Regression]:
    failed_before = {result.rule_id for result in baseline.results if not result.passed}
    new, persisting = [], []
    for result in candidate.results:
        if result.passed or result.severity != "error":
            continue
        also_before = result.rule_id in failed_before
        if label_new and not also_before:
            new.append(Regression(
                kind="new_rule_failure", severity="error",
                message=f"Rule newly fails in candidate: {result.rule_id}.",
                evidence={"rule_id": result.rule_id, "rule_kind": result.rule_kind,
                          "violations": result.counted}))
        else:
            persisting.append(Regression(
                kind="contract_violation", severity="error",
                message=f"Candidate still violates contract rule: {result.rule_id}.",
                evidence={"rule_id": result.rule_id, "rule_kind": result.rule_kind,
                          "violations": result.counted, "baseline_also_failed": also_before}))
    return new + persisting


def _growth_from_nothing(after: int) -> float:
    """The percent growth from zero calls: none if there are still none, else without bound."""
    return 0.0 if after == 0 else float("inf")


def _call_growth(before: int, after: int, limit: float) -> list[Regression]:
    increase = (after - before) / before * 100 if before else _growth_from_nothing(after)
    if not increase > limit:
        return []
    shown = "∞" if increase == float("inf") else js_to_fixed1(increase)
    return [Regression(
        kind="tool_call_increase", severity="error",
        message=f"Tool calls increased by {shown}%, from {before} to {after}; "
                f"allowed {js_number(limit)}% (policy max_tool_call_increase_percent).",
        evidence={"baseline": before, "candidate": after,
                  "increase_percent": None if increase == float("inf") else json_number(increase)})]


def _outcome_drop(before: str | None, after: str | None, *, cut_short: bool) -> list[Regression]:
    """A drop of the final outcome. Of a candidate cut short (`--partial`) it is inconclusive:
    the final outcome is the last one observed, and the rest of the run may observe another."""
    if _OUTCOME_RANK.get(after, -1) >= _OUTCOME_RANK.get(before, -1):
        return []
    undecided = ", but the candidate was cut short: a later outcome would replace its last (--partial)"
    return [Regression(
        kind="outcome_regression", severity="error",
        message=f"Final outcome regressed from {before or 'none'} to {after or 'none'} "
                f"(policy require_same_outcome_or_better){undecided if cut_short else ''}.",
        evidence={"baseline": before, "candidate": after},
        status="inconclusive" if cut_short else UNSET)]


def _rule_changes(baseline: CheckReport, candidate: CheckReport) -> list[RuleChange]:
    before = {result.rule_id: result for result in baseline.results}
    changes = []
    for result in candidate.results:
        old = before[result.rule_id]
        was, now = old.passed, result.passed
        changes.append(RuleChange(
            rule_id=result.rule_id, rule_kind=result.rule_kind, severity=result.severity,
            baseline="passed" if was else "failed", candidate="passed" if now else "failed",
            change="passing" if was and now else "new" if was else "fixed" if now else "still_failing",
            baseline_violations=old.counted, candidate_violations=result.counted,
            candidate_inconclusive=result.inconclusive or UNSET, baseline_inconclusive=old.inconclusive or UNSET))
    return changes
