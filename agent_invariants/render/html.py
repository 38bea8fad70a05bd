"""HTML: one self-contained page that shows the run around its findings. Added in 0.2.

The verdict and counts at the top; for each trace, a table of the rules (each a filter of the
timeline), the timeline itself, with every violation pinned to its event, and the list of
violations. A comparison also lines up the baseline's tool calls with the candidate's and marks
what changed; a batch starts with an index of its traces. Which events are drawn and which are
folded into counted rows is `timeline`'s rule, written above each timeline.

The page is safe to open from anywhere: every text from a trace or contract is escaped (and its
control and bidirectional characters shown as escapes), no link is built from that text, and a
Content-Security-Policy lets the page load nothing and run only its own inline script, which only
adds the filters. Without scripts, the timeline reads the same.

    page = render(report, RenderOptions(timelines=collect(report, reopen)))
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from difflib import SequenceMatcher
from html import escape
from itertools import zip_longest

from msgspec import UNSET

from agent_invariants._safe import inert
from agent_invariants.render import DEFAULTS, RenderOptions
from agent_invariants.render.html_assets import SCRIPT, STYLE, csp
from agent_invariants.render.shared import AnyReport, code_of, inconclusive, is_batch, ok, sections
from agent_invariants.report import (
    CheckBatchReport,
    CheckReport,
    CompareBatchReport,
    CompareReport,
    Regression,
    Violation,
)
from agent_invariants.timeline import Call, Gap, Missing, Row, Timeline, Timelines, detailed

__all__ = ("LIST_BYTES", "MAX_INDEX", "MAX_LISTED", "TIMELINE_BYTES", "render")

MAX_LISTED = 200
"""Violations listed under each trace (the report file holds them all)."""
MAX_INDEX = 1000
"""Traces named in a batch's index."""
TIMELINE_BYTES = 3_000_000
"""Bytes of timeline rows a page holds, over all its traces; past them a note says what is left out."""
LIST_BYTES = 1_000_000
"""Bytes of listed violations a page holds, over all its traces."""
_FINDINGS_PER_ROW = 5
_ALIGN_CONTEXT = 2   # calls shown at each end of a stretch of identical calls

# Symbols from the fonts every system has (no emoji), each with its word: colour is never the only signal.
_MARKS = {"approval": "◆ approval", "stop": "■ stop", "outcome": "● outcome", "claim": "⚑ claims completion",
          "failure": "✗ failed", "denied": "⊘ prevented", "end": "▣ run end"}
_LEVEL = {"error": ("bad", "✗ error"), "warning": ("warn", "⚠ warning"), "inconclusive": ("info", "? inconclusive")}


def render(report: AnyReport, options: RenderOptions = DEFAULTS) -> str:
    """The report as one HTML page (ends with a newline). `options.timelines` (see `timeline`)
    adds each trace's timeline; without it the page has the verdict, rules and violations."""
    timelines = options.timelines or Timelines()
    budget = _Budget(TIMELINE_BYTES, LIST_BYTES)
    good = ok(report)
    verdict = _verdict_word(report)
    title = f"agent-invariants: {inert(report.contract.name, 200)}: {verdict}"
    body = [f'<header><h1>{_t(title)}</h1>',
            f'<p><span class="verdict {"good" if good else "bad"}">{"✓" if good else "✗"} {verdict}</span> '
            f'{_t(_counts(report))}</p></header>', "<main>"]
    if is_batch(report):
        body += _index(report, budget)
    chosen = detailed(report)
    for number, section in enumerate(sections(report), 1):
        if not any(section is shown for shown in chosen):
            continue
        if isinstance(section, CompareReport):
            body += _pair(section, number, timelines, budget)
        else:
            body += _check(section, f"s{number}", timelines, budget, heading="h2", counts=is_batch(report))
    if is_batch(report) and len(chosen) < len(sections(report)):
        body.append(f'<p class="note">{len(sections(report)) - len(chosen)} more sections are not drawn: a page '
                    f"shows {len(chosen)} in detail, failing ones first. The report in another format lists them "
                    "all.</p>")
    body.append("</main>")
    head = ['<!DOCTYPE html>', '<html lang="en">', '<head>', '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{csp()}">',
            '<meta name="referrer" content="no-referrer">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="color-scheme" content="light dark">',
            f"<title>{_t(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>"]
    return "\n".join([*head, *body, f"<script>{SCRIPT}</script>", "</body>", "</html>"]) + "\n"


def _verdict_word(report: AnyReport) -> str:
    if isinstance(report, (CompareReport, CompareBatchReport)):
        return "compatible" if ok(report) else "regression"
    return "passed" if ok(report) else "failed"


def _counts(report: AnyReport) -> str:
    if isinstance(report, CheckReport):
        return _check_counts(report)
    if isinstance(report, CompareReport):
        return f"{_count(len(report.regressions), 'regression')}; candidate: {_check_counts(report.candidate)}"
    if isinstance(report, CompareBatchReport):
        return f"{_count(report.pairs, 'pair')}, {_count(report.regressions, 'regression')}"
    assert isinstance(report, CheckBatchReport)
    return (f"{_count(report.traces, 'trace')}, {_count(report.error_count, 'error')}, "
            f"{_count(report.warning_count, 'warning')}")


def _check_counts(check: CheckReport) -> str:
    summary = check.summary
    parts = [_count(summary.events, "event"), _count(summary.tool_calls, "tool call"),
             _count(check.error_count, "error"), _count(check.warning_count, "warning")]
    if check.inconclusive_count is not UNSET:
        parts.append(f"{check.inconclusive_count} inconclusive")
    return ", ".join(parts)


def _index(report: AnyReport, budget: _Budget) -> list[str]:
    """A batch's table of contents: each trace (or pair) with its verdict, linked when drawn."""
    chosen = {id(section) for section in detailed(report)}
    every = sections(report)
    lines = ['<nav aria-labelledby="index-h"><h2 id="index-h">Traces</h2><table><thead><tr><th>Trace</th>'
             '<th>Verdict</th><th class="num">Errors</th><th class="num">Warnings</th></tr></thead><tbody>']
    rows: list[str] = []
    for number, section in enumerate(every[:MAX_INDEX], 1):
        check = section.candidate if isinstance(section, CompareReport) else section
        name = _t(_trace_name(check))
        link = f'<a href="#s{number}"><code>{name}</code></a>' if id(section) in chosen else f"<code>{name}</code>"
        good = section.passed if isinstance(section, CheckReport) else section.compatible
        word = ("passed" if good else "failed") if isinstance(section, CheckReport) else \
            ("compatible" if good else "regression")
        rows.append(f'<tr><td>{link}</td><td><span class="verdict {"good" if good else "bad"}">'
                    f'{"✓" if good else "✗"} {word}</span></td><td class="num">{check.error_count}</td>'
                    f'<td class="num">{check.warning_count}</td></tr>')
    for failure in getattr(report, "failures", []):
        rows.append(f'<tr><td><code>{_t(failure.trace)}</code></td><td><span class="verdict bad">⊘ unreadable'
                    f'</span></td><td colspan="2">{_t(failure.error, 400)}</td></tr>')
    listed = 0
    for row in rows:
        if not budget.take_listed(row):
            break
        lines.append(row)
        listed += 1
    lines.append("</tbody></table>")
    if listed < len(every) + len(getattr(report, "failures", [])):
        lines.append(f'<p class="note">{len(every) + len(getattr(report, "failures", [])) - listed:,} more traces '
                     "are not listed here: the report in another format lists them all.</p>")
    lines.append("</nav>")
    return lines


def _trace_name(check: CheckReport) -> str:
    name = "events" if check.trace is UNSET else "stdin" if check.trace == "-" else check.trace
    return name if check.run is UNSET else f"{name} (run {check.run})"


def _check(check: CheckReport, sid: str, timelines: Timelines, budget: _Budget, *, heading: str, label: str = "",
           counts: bool = True,
           regressions: list[Regression] | None = None, rules: bool = True) -> list[str]:
    """One trace: its verdict and counts, rule table, timeline and violations. A trace of a
    comparison (`rules=False`: the pair has one rule table) is a part of the pair's section."""
    good = check.passed
    word = "passed" if good else "failed"
    tag = "section" if rules else "div"
    lines = [f'<{tag} class="trace" id="{sid}" aria-labelledby="{sid}-h">' if rules else f'<div id="{sid}">',
             f'<{heading} id="{sid}-h">{_t(label)}<code>{_t(_trace_name(check))}</code> '
             f'<span class="verdict {"good" if good else "bad"}">{"✓" if good else "✗"} {word}</span></{heading}>',
             *([f"<p>{_t(_check_counts(check))}</p>"] if counts else [])]
    lines += _notices(check) + _record(check)
    tokens = {result.rule_id: f"r{number}" for number, result in enumerate(check.results)}
    if rules:
        lines += _rules(check, sid, tokens)
    lines += _timeline(check, sid, timelines.of(check), tokens, regressions or [], budget)
    lines += _violations(check, sid, timelines.of(check), budget)
    lines.append(f"</{tag}>")
    return lines


def _notices(check: CheckReport) -> list[str]:
    if check.notices is UNSET:
        return []
    items = "".join(f'<li><span class="mark">ℹ notice</span> {_t(notice.message, 500)}</li>'
                    for notice in check.notices)
    return [f'<ul class="findings">{items}</ul>']


def _record(check: CheckReport) -> list[str]:
    info = check.record
    if info is UNSET:
        return []
    lines = ['<dl class="facts">', f"<dt>Run</dt><dd><code>{_t(info.run_id)}</code></dd>",
             f"<dt>Ended by</dt><dd>{_t(info.ended_by)}</dd>",
             f"<dt>Calls prevented</dt><dd>{'⊘ ' if info.denied else ''}{info.denied}</dd>", "</dl>"]
    if info.findings:
        lines.append('<ul class="findings">' + "".join(
            f'<li><span class="finding bad">✗ {_t(finding.code)}</span> {_t(finding.message, 500)}</li>'
            for finding in info.findings) + "</ul>")
    return lines


def _rules(check: CheckReport, sid: str, tokens: dict[str, str]) -> list[str]:
    """The rule table: status in words and symbols, a link to the first violation, a filter button."""
    first: dict[str, int] = {}
    for number, violation in _listed(check):
        first.setdefault(violation.rule_id, number)
    lines = [f'<h3 id="{sid}-rules">Rules</h3>',
             '<table class="rules"><thead><tr><th>Rule</th><th>Kind</th><th>Status</th>'
             '<th class="num">Violations</th><th>Timeline</th></tr></thead><tbody>']
    for result in check.results:
        name = f"<code>{_t(result.rule_id)}</code>"
        if result.rule_id in first:
            name = f'<a href="#{sid}-v{first[result.rule_id]}">{name}</a>'
        status = ("good", "✓ passed") if result.passed else _LEVEL[result.severity]
        if not result.passed and result.inconclusive is not UNSET and result.violation_count == result.inconclusive:
            status = _LEVEL["inconclusive"]
        button = "" if result.passed else (f'<button type="button" data-rule="{tokens[result.rule_id]}" hidden '
                                           f'aria-pressed="false">Show only this rule</button>')
        lines.append(f'<tr><td>{name}</td><td>{_t(result.rule_kind)}</td><td><span class="finding {status[0]}">'
                     f'{status[1]}</span></td>'
                     f'<td class="num">{result.violation_count}</td><td>{button}</td></tr>')
    lines.append("</tbody></table>")
    return lines


def _timeline(check: CheckReport, sid: str, timeline: Timeline | Missing | None, tokens: dict[str, str],
              regressions: list[Regression], budget: _Budget) -> list[str]:
    if timeline is None:
        return []
    lines = [f'<h3 id="{sid}-timeline">Timeline</h3>']
    if isinstance(timeline, Missing):
        return [*lines, f'<p class="note">No timeline: {_t(timeline.reason, 500)}.</p>']
    findings: dict[int, list[Violation | Regression]] = defaultdict(list)
    items: list[Violation | Regression] = [*check.violations, *regressions]
    for item in items:
        if item.event_index is not UNSET:
            findings[item.event_index].append(item)
    lines += [f'<p class="note">{_t(timeline.rule)}</p>',
              '<div class="filters" hidden><button type="button" data-rule="">Show every row</button>'
              + ('<button type="button" data-rule="reg" aria-pressed="false">Only regressions</button>'
                 if regressions else "") + '<span class="filter-status" aria-live="polite"></span></div>',
              '<table class="timeline"><thead><tr><th class="num">seq</th><th class="num">line</th><th>Event</th>'
              '<th>Tool</th><th>Details</th><th>Findings</th></tr></thead><tbody>']
    trace = _trace_name(check)
    for row in timeline.rows:
        html = _gap(row) if isinstance(row, Gap) else _event(row, sid, trace, findings.get(row.index, []), tokens)
        if not budget.take_row(html):
            start = row.first if isinstance(row, Gap) else row.index
            lines.append(f'<tr class="gap"><td colspan="6">⋯ The page reached its size limit: the rest of this '
                         f"timeline, from event {start + 1:,} of {timeline.events:,}, is not drawn.</td></tr>")
            break
        lines.append(html)
    lines.append("</tbody></table>")
    trace_wide = [item for item in check.violations if item.event_index is UNSET]
    if trace_wide:
        lines.append(f'<p>Whole-trace findings: {", ".join(_finding_html(item) for item in trace_wide[:20])}</p>')
    if timeline.pinned_left_out:
        lines.append(f'<p class="note">{timeline.pinned_left_out} more events with findings are listed below '
                     "but not drawn.</p>")
    return lines


def _gap(gap: Gap) -> str:
    def named(counts: list[tuple[str, int]]) -> str:
        return ", ".join(f"{'other' if name == chr(0) + 'other' else inert(name, 80)} ×{count:,}"
                         for name, count in counts)
    tools = f"; tools: {named(gap.tools)}" if gap.tools else ""
    return (f'<tr class="gap"><td class="num">{_t(_seq(gap.first_seq))}–{_t(_seq(gap.last_seq))}</td><td></td>'
            f'<td colspan="4">⋯ {_count(gap.events, "event")} folded: {_t(named(gap.types) + tools)}</td></tr>')


def _event(row: Row, sid: str, trace: str, found: list[Violation | Regression], tokens: dict[str, str]) -> str:
    rules = sorted({tokens.get(item.rule_id, "") if isinstance(item, Violation) else "reg" for item in found} - {""})
    classes = ["result"] if row.type == "tool.result" else []
    if found:
        classes.append("pinned")
        if all(isinstance(item, Violation) and item.severity == "warning" for item in found):
            classes.append("warning")
    attrs = f' class="{" ".join(classes)}"' if classes else ""
    if rules:
        attrs += f' data-rules="{" ".join(rules)}"'
    marks = "".join(f'<span class="mark">{_MARKS[mark]}</span>' for mark in row.marks)
    kind = ("↳ " if row.type == "tool.result" else "") + _t(row.type, 200)
    detail = _t(row.detail, 400)
    if row.partner is not None:
        detail = f"{'result at' if row.type == 'tool.call' else 'call at'} seq {_t(_seq(row.partner))}" + \
            ("; " + detail if detail else "")
    if row.span is not None:
        detail += f'{"; " if detail else ""}span <code>{_t(row.span, 64)}</code>'
    cells = "".join(f"<li>{_finding_html(item)}</li>" for item in found[:_FINDINGS_PER_ROW])
    if len(found) > _FINDINGS_PER_ROW:
        cells += f"<li>and {len(found) - _FINDINGS_PER_ROW} more</li>"
    where = "" if row.line is None else f'<span title="{_t(trace)}:{row.line}">{row.line}</span>'
    return (f'<tr id="{sid}-e{row.index}"{attrs}><td class="num">{_t(_seq(row.seq))}</td><td class="num">{where}</td>'
            f'<td class="kind"><code>{kind}</code> {marks}</td>'
            f'<td class="tool"><code>{_t(row.tool or "", 120)}</code></td>'
            f'<td class="detail">{detail}</td><td class="found"><ul class="findings">{cells}</ul></td></tr>')


def _finding_html(item: Violation | Regression) -> str:
    if isinstance(item, Regression):
        return (f'<span class="finding bad">✗ regression</span> {_t(item.kind)}: {_t(item.message, 300)}')
    css, word = _LEVEL["inconclusive" if inconclusive(item) else item.severity]
    code = code_of(item)
    return (f'<span class="finding {css}">{word}</span> <code>{_t(item.rule_id, 120)}</code>'
            f'{" " + _t(code, 200) if code else ""}: {_t(item.message, 300)}')


def _violations(check: CheckReport, sid: str, timeline: Timeline | Missing | None, budget: _Budget) -> list[str]:
    if not check.violations:
        return []
    drawn = _drawn(timeline)
    trace = _trace_name(check)
    lines = [f'<h3 id="{sid}-violations">Violations</h3>', '<ol class="violations">']
    shown = 0
    for number, item in _listed(check):
        where = _place(item, trace)
        if where and item.event_index in drawn:
            where = f'<a href="#{sid}-e{item.event_index}">{where}</a>'
        html = f'<li id="{sid}-v{number}">{_finding_html(item)}{" — " + where if where else ""}</li>'
        if not budget.take_listed(html):
            break
        lines.append(html)
        shown += 1
    lines.append("</ol>")
    hidden = (check.violations_total if check.violations_total is not UNSET else len(check.violations)) - shown
    if hidden > 0:
        lines.append(f'<p class="note">{hidden} more violations are not listed: the JSON report holds every '
                     "kept one.</p>")
    return lines


def _listed(check: CheckReport) -> list[tuple[int, Violation]]:
    """The violations listed, with their position in the report: up to `MAX_LISTED`, shared among
    the rules (each rule's first ones), in the report's order."""
    rules = {violation.rule_id for violation in check.violations}
    share = max(1, MAX_LISTED // max(1, len(rules)))
    taken: dict[str, int] = {}
    listed = []
    for number, violation in enumerate(check.violations):
        if taken.get(violation.rule_id, 0) < share:
            taken[violation.rule_id] = taken.get(violation.rule_id, 0) + 1
            listed.append((number, violation))
    return listed


def _drawn(timeline: Timeline | Missing | None) -> set[int]:
    """The indices of the events drawn on a timeline (links go only to those)."""
    return {row.index for row in timeline.rows if isinstance(row, Row)} if isinstance(timeline, Timeline) else set()


def _place(item: Violation | Regression, trace: str) -> str:
    parts = []
    if item.line is not UNSET:
        parts.append(f"<code>{_t(trace)}:{item.line}</code>")
    if isinstance(item, Violation) and item.span_id is not UNSET:
        parts.append(f"span <code>{_t(item.span_id, 64)}</code>")
    if item.event_seq is not UNSET:
        parts.append(f"seq {_t(_seq(item.event_seq))}")
    return ", ".join(parts)


def _pair(pair: CompareReport, number: int, timelines: Timelines, budget: _Budget) -> list[str]:
    """A comparison: regressions, rule changes, the two runs' tool calls lined up, both timelines."""
    sid = f"s{number}"
    good = pair.compatible
    lines = [f'<section class="trace pair" id="{sid}" aria-labelledby="{sid}-h">',
             f'<h2 id="{sid}-h"><span class="verdict {"good" if good else "bad"}">'
             f'{"✓ compatible" if good else "✗ regression"}</span> <code>{_t(_trace_name(pair.candidate))}</code> '
             f'against <code>{_t(_trace_name(pair.baseline))}</code></h2>']
    tokens = {result.rule_id: f"r{index}" for index, result in enumerate(pair.candidate.results)}
    if pair.regressions:
        lines.append('<h3>Regressions</h3><ol class="violations">')
        drawn = _drawn(timelines.of(pair.candidate))
        for regression in pair.regressions:
            where = _place(regression, _trace_name(pair.candidate))
            if where and regression.event_index in drawn:
                where = f'<a href="#{sid}c-e{regression.event_index}">{where}</a>'
            html = f"<li>{_finding_html(regression)}{' — ' + where if where else ''}</li>"
            if not budget.take_listed(html):
                lines.append("<li>The page reached its size limit: the report in another format lists the other "
                             "regressions.</li>")
                break
            lines.append(html)
        lines.append("</ol>")
    lines += ['<h3>Rules in both runs</h3><table class="rules"><thead><tr><th>Rule</th><th>Kind</th><th>Baseline</th>'
              '<th>Candidate</th><th>Change</th><th>Timeline</th></tr></thead><tbody>']
    for change in pair.rule_changes:
        bad = change.change in ("new", "still_failing")
        word = {"new": "✗ newly failing", "fixed": "✓ fixed", "still_failing": "✗ still failing",
                "passing": "✓ passing"}[change.change]
        button = (f'<button type="button" data-rule="{tokens[change.rule_id]}" hidden aria-pressed="false">'
                  "Show only this rule</button>") if change.candidate_violations and change.rule_id in tokens else ""
        lines.append(f"<tr><td><code>{_t(change.rule_id)}</code></td><td>{_t(change.rule_kind)}</td>"
                     f"<td>{change.baseline} ({change.baseline_violations})</td>"
                     f"<td>{change.candidate} ({change.candidate_violations})</td>"
                     f'<td><span class="finding {"bad" if bad else "good"}">{word}</span></td><td>{button}</td></tr>')
    lines.append("</tbody></table>")
    base, cand = timelines.of(pair.baseline), timelines.of(pair.candidate)
    if isinstance(base, Timeline) and isinstance(cand, Timeline):
        lines += _paths(base, cand, pair.regressions, budget)
    lines += _check(pair.candidate, f"{sid}c", timelines, budget, heading="h3", label="Candidate: ", counts=False,
                    regressions=pair.regressions, rules=False)
    lines.append(f'<details id="{sid}-baseline"><summary>Baseline run: <code>{_t(_trace_name(pair.baseline))}</code>'
                 "</summary>")
    lines += _check(pair.baseline, f"{sid}b", timelines, budget, heading="h3", label="Baseline: ", rules=False)
    lines += ["</details>", "</section>"]
    return lines


def _paths(base: Timeline, cand: Timeline, regressions: list[Regression], budget: _Budget) -> list[str]:
    """The tool calls of both runs side by side, lined up where the tools are the same (a longest
    common subsequence of tool names), so an added, dropped or changed call stands out."""
    pinned = {regression.event_index for regression in regressions if regression.event_index is not UNSET}
    lines = ['<h3>Tool calls side by side</h3>',
             f'<p class="note">Each run\'s first {len(base.calls)} and {len(cand.calls)} tool calls, lined up where '
             "the same tools were called in the same order; long stretches of identical calls are folded.</p>"]
    if base.calls_total > len(base.calls) or cand.calls_total > len(cand.calls):
        lines.append(f'<p class="note">The baseline made {base.calls_total:,} calls and the candidate '
                     f"{cand.calls_total:,}: only the first ones are lined up.</p>")
    lines.append('<table class="paths"><thead><tr><th class="num">Baseline seq</th><th>Baseline tool</th>'
                 '<th>Change</th><th>Candidate tool</th><th class="num">Candidate seq</th></tr></thead><tbody>')
    for change, left, right in _aligned(base.calls, cand.calls, pinned):
        if change == "fold":
            lines.append(f'<tr class="gap"><td colspan="5" class="muted">⋯ {left:,} identical calls folded</td></tr>')
            continue
        assert not isinstance(left, int) and not isinstance(right, int)
        regression = right is not None and right.index in pinned
        css = "regression" if regression else change
        data = ' data-rules="reg"' if regression else ""
        word = {"same": "= same", "changed": "≠ changed", "added": "+ added", "removed": "− removed"}[change]
        if regression:
            word += " ✗ regression"
        html = (f'<tr class="{css}"{data}><td class="num">{_call_seq(left)}</td>'
                f'<td><code>{_call_tool(left)}</code></td><td class="same">{word}</td>'
                f'<td><code>{_call_tool(right)}</code></td><td class="num">{_call_seq(right)}</td></tr>')
        if not budget.take_row(html):
            lines.append('<tr class="gap"><td colspan="5">⋯ The page reached its size limit: the other calls are '
                         "not lined up.</td></tr>")
            break
        lines.append(html)
    lines.append("</tbody></table>")
    return lines


def _call_seq(call: Call | None) -> str:
    return "" if call is None else _t(_seq(call.seq))


def _call_tool(call: Call | None) -> str:
    return "" if call is None else _t(call.tool, 120)


def _aligned(base: list[Call], cand: list[Call],
             pinned: set[int]) -> Iterable[tuple[str, Call | int | None, Call | None]]:
    """(change, baseline call, candidate call) rows; ("fold", count, None) for folded identical calls."""
    matcher = SequenceMatcher(None, [call.tool for call in base], [call.tool for call in cand], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            yield from _fold_same(list(zip(base[i1:i2], cand[j1:j2], strict=True)), pinned)
        elif tag == "replace":
            for left, right in zip_longest(base[i1:i2], cand[j1:j2]):
                yield ("changed" if left is not None and right is not None else "removed" if right is None
                       else "added"), left, right
        elif tag == "delete":
            for left in base[i1:i2]:
                yield "removed", left, None
        else:
            for right in cand[j1:j2]:
                yield "added", None, right


def _fold_same(pairs: list[tuple[Call, Call]],
               pinned: set[int]) -> Iterable[tuple[str, Call | int | None, Call | None]]:
    folded = 0
    for position, (left, right) in enumerate(pairs):
        if position < _ALIGN_CONTEXT or position >= len(pairs) - _ALIGN_CONTEXT or right.index in pinned:
            if folded:
                yield "fold", folded, None
                folded = 0
            yield "same", left, right
        else:
            folded += 1
    if folded:
        yield "fold", folded, None


class _Budget:
    """What is left of the page's room for timeline rows and listed violations, in bytes of HTML
    (characters, which is close enough: the text that grows most when escaped is ASCII)."""

    def __init__(self, rows: int, listed: int) -> None:
        self.rows, self.listed = rows, listed

    def take_row(self, html: str) -> bool:
        self.rows -= len(html)
        return self.rows >= 0

    def take_listed(self, html: str) -> bool:
        self.listed -= len(html)
        return self.listed >= 0


def _count(count: int, noun: str) -> str:
    """`1 event`, `1,000,000 events`."""
    return f"{count:,} {noun if count == 1 else noun + 's'}"


def _seq(value: int | float) -> str:
    return str(value)


def _t(text: str, limit: int | None = 1000) -> str:
    """Text from a report, a trace or a contract as HTML: controls and bidirectional characters
    shown as escapes (`inert`), then `& < > " '` escaped, so it can stand in an element or attribute."""
    return escape(inert(text, limit), quote=True)
