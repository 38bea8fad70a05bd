"""Markdown for `$GITHUB_STEP_SUMMARY` and pull-request comments. Added in 0.1.

A verdict line, a table of rules with their status and counts, the first violations with
`file:line`, and for `compare` the regressions and the per-rule change table. Text that comes from
contracts or traces is escaped, so it cannot break a table, start a heading or inject HTML.

    ## ❌ agent-invariants: refund-desk failed
    `examples/refund-desk/candidate.jsonl`: 14 events, 4 tool calls, **9 errors**, 1 warning

    | Rule | Kind | Status | Violations |
    | --- | --- | --- | --- |
    | `refunds-need-approval` | require_approval | ❌ failed | 2 |
"""
from __future__ import annotations

import re

from msgspec import UNSET

from agent_invariants._safe import inert, log_safe
from agent_invariants.mutate.report import MutateReport
from agent_invariants.render import DEFAULTS, RenderOptions
from agent_invariants.render.shared import (
    AnyReport,
    baseline_undecided,
    batch_tally,
    code_of,
    failing_traces,
    inconclusive,
    inconclusive_rule,
    passing,
    place,
    plural,
    sections,
    undecided,
    verdict,
    warned,
)
from agent_invariants.report import (
    CheckBatchReport,
    CheckReport,
    CompareBatchReport,
    CompareReport,
    RecordInfo,
    RuleChange,
    Violation,
)
from agent_invariants.stability import StabilityReport, failed_checks, reporting_said, unstable_paths

__all__ = ("MAX_BYTES", "MAX_VIOLATIONS", "escaped", "render")

MAX_VIOLATIONS = 50
MAX_BYTES = 1_000_000
"""The most bytes of Markdown written: GitHub takes at most 1 MiB in a step's summary (a larger one
is refused whole), and a batch of many thousand traces is larger. Past it the passing traces and
rules are counted, not listed; what is still larger stops after a whole line and says so."""
_CUT = ("", "*The summary stops here: GitHub shows at most 1 MiB of it. The JSON report (`--format json`) "
        "holds all of it.*")
# Escaped wherever they occur. Text never starts a line here, so list and heading markers
# (- + 1.) are harmless.
_SPECIAL = re.compile(r"([\\`*_\[\]|~!])")
_REFERENCES = str.maketrans({"@": "@&#8203;", "#": "#&#8203;", "$": "&#36;"})
"""`@` and `#` with a zero-width space after them, so that a name in a trace can neither mention
someone (`@octocat`) nor link an issue (`#12`): GitHub finds those in the rendered text, after the
Markdown's own escapes are gone, as the bots that quote release notes in pull requests know. `$`
as a character reference, which no parser takes for a delimiter: GitHub reads `$…$` as math
(`$\\Huge …$` would shout in a comment) and a backslash before it does not always stop that."""
_AUTOLINK = re.compile(r"(?<=[A-Za-z0-9])(?=://)|(?<=(?<![A-Za-z0-9])[Ww]{3})(?=\.)"
                       r"|(?<=(?<![A-Za-z0-9])[Gg][Hh])(?=-[0-9])")
"""Where GitHub would see a link without brackets (`https://…`, `www.…`, the issue `GH-12`): a
zero-width space goes before the `://`, the `.` or the `-`, which splits the text the autolink
would read."""
_STATUS = {("passed", True): "✅ passed", ("error", False): "❌ failed", ("warning", False): "⚠️ warning"}
_MARKS = {"passed": "✅", "compatible": "✅", "failed": "❌", "regression": "❌", "unstable": "❌", "incomplete": "⚠️"}
"""The mark beside each verdict (`shared.verdict`)."""
_CHANGE = {"new": "❌ newly failing", "fixed": "✅ fixed", "still_failing": "❌ still failing", "passing": "passing"}


def render(report: AnyReport | StabilityReport | MutateReport, options: RenderOptions = DEFAULTS) -> str:
    """The report as GitHub-flavoured Markdown (ends with a newline). No option applies to Markdown.
    Past MAX_BYTES, the passing traces and rules are left out (counted), so that what failed is
    shown; what still does not fit is cut."""
    lines = _lines(report, brief=False)
    text = "\n".join(lines) + "\n"
    if len(text) <= MAX_BYTES // 4 or len(text.encode()) <= MAX_BYTES:
        return text
    lines = _lines(report, brief=True)
    text = "\n".join(lines) + "\n"
    return text if len(text.encode()) <= MAX_BYTES else _cut(lines)


def _lines(report: AnyReport | StabilityReport | MutateReport, brief: bool) -> list[str]:
    """The report's lines, whole or (`brief`) without the traces and rules that passed."""
    if isinstance(report, StabilityReport):
        return _stability(report)
    if isinstance(report, MutateReport):
        return _mutate(report)
    if isinstance(report, CompareReport):
        return _compare(report)
    if isinstance(report, CheckReport):
        return _check(report, level=2, brief=brief)
    return _batch(report, brief)


def _cut(lines: list[str]) -> str:
    """The first whole lines that fit in MAX_BYTES with the note that says the rest is left out."""
    room = MAX_BYTES - len("\n".join(_CUT).encode()) - 2
    kept = []
    for line in lines:
        room -= len(line.encode()) + 1
        if room < 0:
            break
        kept.append(line)
    return "\n".join([*kept, *_CUT]) + "\n"


def _batch(report: CheckBatchReport | CompareBatchReport, brief: bool) -> list[str]:
    """An overview table of the traces (`brief`: those that did not pass, and how many did), then
    each trace's own summary one level down."""
    checking = isinstance(report, CheckBatchReport)
    word = verdict(report)
    lines = [f"## {_MARKS[word]} agent-invariants: {_text(report.contract.name)}: {word}", "",
             " · ".join(batch_tally(report, grouped=True)), ""]
    if isinstance(report, CheckBatchReport):
        checks = [section for section in report.reports if not brief or not passing(section)]
        listed = len(checks)
        lines += ["| Trace | Verdict | Errors | Warnings |", "| --- | --- | --- | --- |"]
        lines += [f"| {_code(section.trace if section.trace is not UNSET else 'events', cell=True)}"
                  f"{_run(section, cell=True)} | {_MARKS[verdict(section)]} {verdict(section)} | "
                  f"{section.error_count} | {section.warning_count} |"
                  for section in checks]
    else:
        compares = [section for section in report.reports if not brief or not passing(section)]
        listed = len(compares)
        lines += ["| Candidate | Verdict | Regressions |", "| --- | --- | --- |"]
        lines += [f"| {_code(section.candidate.trace if section.candidate.trace is not UNSET else 'events', cell=True)}"
                  f"{_run(section.candidate, cell=True)} | "
                  f"{'✅ compatible' if section.compatible else '❌ regression'} | {section.regression_count} |"
                  for section in compares]
    lines += [f"| {_code(failure.trace, cell=True)} | ⛔ unreadable | {_text(failure.error)} |"
              + (" |" if checking else "") for failure in report.failures]
    if listed < len(report.reports):
        lines += ["", _left_out(len(report.reports) - listed, "more trace")]
    for section in sections(report):
        if isinstance(section, CheckReport):
            if not section.passed or section.warning_count or (section.record is not UNSET
                                                                and section.record.findings):
                lines += [""] + _check(section, level=3, brief=brief)
        elif not section.compatible:
            lines += [""] + ["#" + line if line.startswith("#") else line for line in _compare(section)]
    if isinstance(report, CheckBatchReport) and report.stability is not UNSET:   # record --repeat
        lines += [""] + ["#" + line if line.startswith("#") else line for line in _stability(report.stability)]
    return lines


def _check(report: CheckReport, level: int, title: str | None = None, brief: bool = False) -> list[str]:
    """A trace's summary: the counts, the rules (`brief`: those that did not pass, and how many
    did), the first violations, the recorded run."""
    word = verdict(report)
    heading = title or f"{_MARKS[word]} agent-invariants: {_text(report.contract.name)} {word}"
    lines = [f"{'#' * level} {heading}", "", _counts(report), ""]
    shown = [result for result in report.results if not brief or not result.passed or result.violation_count]
    if shown:   # (a brief summary of rules that all passed has no table, only the line that counts them)
        lines += ["| Rule | Kind | Status | Checked | Violations |", "| --- | --- | --- | --- | --- |"]
    for result in shown:
        status = _STATUS[("passed", True)] if result.passed else _STATUS[(result.severity, False)]
        if inconclusive_rule(result):
            status = "❔ inconclusive"
        lines.append(f"| {_code(result.rule_id, cell=True)} | {result.rule_kind} | {status} | {result.checked} | "
                     f"{result.violation_count} |")
    if len(shown) < len(report.results):
        lines += ["", _left_out(len(report.results) - len(shown), "more rule")] if shown else \
            [_left_out(len(report.results), "rule")]
    if report.violations:
        lines += ["", f"{'#' * (level + 1)} Violations", ""] + _violations(report)
    if report.record is not UNSET:
        lines += ["", f"{'#' * (level + 1)} Recorded run", ""] + _record(report.record)
    return lines


def _left_out(count: int, noun: str) -> str:
    """The line that stands for the passing traces or rules a brief summary leaves out."""
    return (f"*{count:,} {noun}{'' if count == 1 else 's'} passed: not listed, as the summary would be over "
            "the 1 MiB GitHub shows.*")


def _record(run: RecordInfo) -> list[str]:
    """How the recorded run went (`record`), and each finding."""
    lines = [f"Run {_code(run.run_id)} ended by {_code(run.ended_by)}; {plural(run.denied, 'call')} denied."]
    if run.stderr_log is not None:
        lines[0] += f" The agent's stderr ({plural(run.stderr_bytes, 'byte')}) is in {_code(run.stderr_log)}."
    if run.findings:
        lines.append("")
    for finding in run.findings:
        where = f" at {_code(f'{run.trace}:{finding.seq}')}" if finding.seq is not UNSET else ""
        lines.append(f"- ❌ {_code(finding.code)}{where}: {_text(finding.message)}")
    return lines


def _violations(report: CheckReport, holders: str = "JSON or SARIF report") -> list[str]:
    """The first `MAX_VIOLATIONS` kept violations, then one line for the rest: those the reports
    in other formats hold (`holders`: a compare's SARIF holds its regressions, not the candidate's
    violations), and those the rules left out (`--max-violations`)."""
    shown = report.violations[:MAX_VIOLATIONS]
    lines = [_violation(v, report) for v in shown]
    kept = len(report.violations)   # (the total counts every violation, inconclusive ones too)
    total = kept if report.violations_total is UNSET else report.violations_total
    if total > kept:
        elsewhere = f"{kept - len(shown)} in the {holders}; " if kept > len(shown) else ""
        lines.append(f"- … and {total - len(shown)} more ({elsewhere}raise --max-violations to see them)")
    elif kept > len(shown):
        lines.append(f"- … and {kept - len(shown)} more (see the {holders})")
    return lines


def _run(report: CheckReport, cell: bool = False) -> str:
    """` (run X)` after the trace of an imported run (a file may hold several)."""
    return "" if report.run is UNSET else f" (run {_code(report.run, cell)})"


def _counts(report: CheckReport) -> str:
    summary = report.summary
    errors = plural(report.error_count, "error")
    where = f"{_code(report.trace)}{_run(report)}: " if report.trace is not UNSET else ""
    return (f"{where}{plural(summary.events, 'event')}, {plural(summary.tool_calls, 'tool call')}, "
            f"{f'**{errors}**' if report.error_count else errors}, {plural(report.warning_count, 'warning')}")


def _violation(violation: Violation, report: CheckReport) -> str:
    where = place(violation, report.trace if report.trace is not UNSET else None, wrap=_code) or ["whole trace"]
    mark = "❔" if inconclusive(violation) else "❌" if violation.severity == "error" else "⚠️"
    code = code_of(violation)
    shown = f" ({_code(code)})" if code else ""
    return f"- {mark} {_code(violation.rule_id)} at {', '.join(where)}{shown}: {_text(violation.message)}"


def _compare(report: CompareReport) -> list[str]:
    word = verdict(report)
    lines = [f"## {_MARKS[word]} agent-invariants: {_text(report.contract.name)}: {word}", ""]
    lines += [f"- Baseline: {_counts(report.baseline)}", f"- Candidate: {_counts(report.candidate)}", ""]
    if report.regressions:
        lines += ["### Regressions", ""]
        for regression in report.regressions:
            where = ""
            if regression.line is not UNSET and report.candidate.trace is not UNSET:
                where = f" ({_code(f'{report.candidate.trace}:{regression.line}')})"
            mark = "❔" if inconclusive(regression) else "❌"
            lines.append(f"- {mark} **{regression.kind}**: {_text(regression.message)}{where}")
    else:
        lines.append("No configured behaviour regression detected.")
    lines += ["", "### Rules", "", "| Rule | Kind | Baseline | Candidate | Change |", "| --- | --- | --- | --- | --- |"]
    for change in report.rule_changes:
        candidate = f"{change.candidate} ({change.candidate_violations})"
        said = _change(change)
        if undecided(change):   # (--partial: what only the end of the run decides)
            candidate, said = f"inconclusive ({change.candidate_inconclusive})", "❔ inconclusive"
        baseline = f"{change.baseline} ({change.baseline_violations})"
        if baseline_undecided(change):
            baseline = f"inconclusive ({change.baseline_inconclusive})"
        lines.append(f"| {_code(change.rule_id, cell=True)} | {change.rule_kind} | {baseline} | {candidate} | {said} |")
    if report.candidate.violations:
        lines += ["", "### Candidate violations", ""] + _violations(report.candidate, "JSON report")
    return lines


_CELL_BAR = "\\|"
"""A `|` inside a table cell, where a bare one starts the next cell."""


def _change(change: RuleChange) -> str:
    return "⚠️ warning" if warned(change) else _CHANGE[change.change]


def escaped(text: str) -> str:
    """Text from outside (a file name, a message) as inert Markdown, for a line of one's own."""
    return _text(text)


def _text(text: str) -> str:
    """Plain text inside Markdown: control and bidirectional characters escaped (`inert`: a line
    break shows as `\\n`, so the text stays one line and `x\\ny` never reads as `x y`),
    HTML-escaped, Markdown punctuation backslashed, no mention, issue link or bare URL."""
    text = inert(text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _AUTOLINK.sub("&#8203;", _SPECIAL.sub(r"\\\1", text).translate(_REFERENCES))


def _code(text: str, cell: bool = False) -> str:
    """`text` as an inline code span that cannot be broken out of (control and bidirectional
    characters escaped, a line break as `\\n`, `##[` as `##\\x5b`, which a CI runner printing the
    summary in its log would read as a command, as the text report shows it); in a table `cell`,
    its `|` escaped too (a code span outside a table shows a backslash as written)."""
    text = log_safe(inert(text))
    if cell:
        text = text.replace("|", _CELL_BAR)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _stability(report: StabilityReport) -> list[str]:
    """The verdict, a table of the unstable paths (which traces hold each, and their types), and
    a table of the traces."""
    reporting = sum(1 for run in report.runs if run.reporting)
    if not report.measured:
        heading = f"## ⚠️ agent-invariants stability: not measured ({reporting_said(report)}; 2 are needed)"
    elif report.stable:
        heading = f"## ✅ agent-invariants stability: stable ({reporting} traces report an output of one shape)"
    else:
        heading = f"## ❌ agent-invariants stability: {plural(unstable_paths(report), 'unstable path')}"
    failing = failed_checks(report)
    if failing:   # (--contract: the exit is 1 for these too)
        heading = heading.replace("## ✅", "## ❌", 1).replace("## ⚠️", "## ❌", 1) + \
            f"; {failing_traces(len(failing), len(report.runs))}"
    lines = [heading, ""]
    if report.unstable:
        lines += ["| Path | Kind | Present in | Absent in | Unknown in | Types |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for entry in report.unstable:
            types = "; ".join(f"{index}: {_CELL_BAR.join(entry.types[index])}" for index in entry.present_in)
            lines.append(f"| {_code(entry.path, cell=True)} | {entry.kind} | {_indexes(entry.present_in)} | "
                         f"{_indexes(entry.absent_in)} | {_indexes(entry.unknown_in)} | {types} |")
        lines.append("")
    lines += ["| # | Trace | Reports an output | Check |", "| --- | --- | --- | --- |"]
    for index, run in enumerate(report.runs):
        check = "" if not run.check else "✅ passed" if run.check.passed else \
            f"❌ failed ({plural(run.check.error_count, 'error')})"
        lines.append(f"| {index} | {_code(run.trace, cell=True)} | {'yes' if run.reporting else 'no'} | {check} |")
    return lines


def _mutate(report: MutateReport) -> list[str]:
    """The score, a table of the counts beside the control's, then the survivors with their
    hints, over-blocked equivalents and false positives."""
    def score(value: float | None) -> str:
        return "none" if value is None else f"{value:.2f}"

    if report.score is None:
        heading = "## ⚠️ agent-invariants mutate: no mutant could be scored"
    else:
        heading = f"## agent-invariants mutate: score {score(report.score)}"
    control = report.control
    lines = [heading, "", "| | Score | Killed | Survived |", "| --- | --- | --- | --- |",
             f"| Contract | {score(report.score)} | {report.killed} | {report.survived} |",
             f"| Control ({'auto-written' if control.auto else 'given'}) | {score(control.score)} | "
             f"{control.killed} | {control.survived} |", "",
             f"{plural(report.equivalent, 'equivalent mutant')} ({report.over_block} over-blocked), "
             f"{plural(report.invalid, 'invalid mutant')}, {plural(report.warned, 'survivor')} with warnings.", ""]
    if control.too_easy:
        lines += ["⚠️ Mutants too easy: the control scores at least half the contract's score.", ""]
    if report.survivors:
        lines += ["| Survivor | Would be killed by |", "| --- | --- |"]
        lines += [f"| {_code(inert(survivor.id), cell=True)} | {_text(survivor.hint)} |"
                  for survivor in report.survivors]
        lines.append("")
    over = [mutant for mutant in report.mutants if mutant.over_block]
    if over:
        lines += ["| Over-blocked equivalent | Rejected by |", "| --- | --- |"]
        lines += [f"| {_code(inert(mutant.id), cell=True)} | "
                  f"{', '.join(_code(inert(rule), cell=True) for rule in mutant.killed_by)} |" for mutant in over]
        lines.append("")
    if report.false_positives:
        lines += ["| False positive | Fails |", "| --- | --- |"]
        for found in report.false_positives:
            what = found.rewrite if found.file is UNSET else f"{found.rewrite} {_code(inert(found.file), cell=True)}"
            lines.append(f"| {what} | {', '.join(_code(inert(rule), cell=True) for rule in found.killed_by)} |")
    else:
        lines.append("No false positives: every rewrite that keeps the behaviour passes.")
    return lines


def _indexes(indexes: list[int]) -> str:
    return ", ".join(map(str, indexes)) or "–"
