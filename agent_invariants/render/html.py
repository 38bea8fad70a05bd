"""HTML: one self-contained page that shows the run around its findings. Added in 0.2.

The verdict and counts at the top; for each trace, a table of the rules (each a filter of the
timeline), the timeline itself, with every violation pinned to its event, and the list of
violations. A comparison also lines up the baseline's tool calls with the candidate's and marks
what changed; a batch starts with an index of its traces. Which events are drawn and which are
folded into counted rows is `timeline`'s rule, written above each timeline.

The page is safe to open from anywhere: every text from a trace or contract is escaped (and its
control, bidirectional and invisible characters shown as escapes), no link is built from that
text, and a Content-Security-Policy lets the page load nothing and run only its own inline
script, which only adds the filters. Without scripts, the timeline reads the same. The page stays
under 5 MB whatever it shows: each part has a budget in bytes (`TIMELINE_BYTES`, `LIST_BYTES`,
`RULES_BYTES`, `INDEX_BYTES`), past which a note says what was left out, and a link is written only to a place
that was drawn.

    page = render(report, RenderOptions(timelines=collect(report)))
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from html import escape

from msgspec import UNSET

from agent_invariants._safe import inert
from agent_invariants.render import DEFAULTS, RenderOptions
from agent_invariants.render.html_assets import SCRIPT, STYLE, csp
from agent_invariants.render.shared import (
    AnyReport,
    baseline_undecided,
    batch_tally,
    code_of,
    failures,
    inconclusive,
    inconclusive_rule,
    is_batch,
    passing,
    sections,
    undecided,
    verdict,
    warned,
)
from agent_invariants.report import (
    CheckBatchReport,
    CheckReport,
    CompareReport,
    Regression,
    Violation,
)
from agent_invariants.stability import StabilityReport, describe, unstable_paths
from agent_invariants.timeline import Call, Counted, Gap, Missing, Row, Timeline, Timelines, align, detailed, take_turns

__all__ = ("INDEX_BYTES", "LIST_BYTES", "MAX_INDEX", "MAX_LISTED", "RULES_BYTES", "TIMELINE_BYTES", "render")

MAX_LISTED = 200
"""Violations listed under each trace, the failing rules taking turns (the report file holds them all)."""
MAX_INDEX = 1000
"""Traces named in a batch's index: those that did not pass first, when there are more."""
TIMELINE_BYTES = 2_800_000
"""Bytes of timeline rows (and lined-up calls) a page holds, over all its traces."""
LIST_BYTES = 800_000
"""Bytes of listed violations, regressions and findings of `record` a page holds."""
INDEX_BYTES = 400_000
"""Bytes of a batch's index rows (it comes first: sections cannot crowd it out)."""
RULES_BYTES = 500_000
"""Bytes of rule-table rows a page holds (a batch's sections list only their failing rules)."""
_FINDINGS_PER_ROW = 5
_ALIGN_CONTEXT = 2   # calls shown at each end of a stretch of identical calls

# Symbols from the fonts every system has (no emoji), each with its word: colour is never the only signal.
_MARKS = {"asked": "◇ approval asked", "approval": "◆ approval", "refused": "◆ approval refused",
          "revoked": "◇ approval revoked", "stop": "■ stop", "outcome": "● outcome", "claim": "⚑ claims completion",
          "failure": "✗ failed", "denied": "⊘ prevented", "end": "▣ run end"}
_LEVEL = {"error": ("bad", "✗ error"), "warning": ("warn", "⚠ warning"), "inconclusive": ("info", "? inconclusive")}
_CHANGE = {"same": "= same", "changed": "≠ changed", "added": "+ added", "removed": "− removed"}
_RULE_CHANGE = {"new": ("bad", "✗ newly failing"), "fixed": ("good", "✓ fixed"),
                "still_failing": ("bad", "✗ still failing"), "passing": ("good", "✓ passing")}


def render(report: AnyReport, options: RenderOptions = DEFAULTS) -> str:
    """The report as one HTML page (ends with a newline). `options.timelines` (see `timeline`)
    adds each trace's timeline; without it the page has the verdict, rules and violations.
    A name from a trace cannot spell a CI runner's command when the page is printed in a job's
    log: `##[` is written `##&#91;`, which a browser shows as `##[` (the page's own script and
    style hold no `##[`, and every line starts with its markup, never with a name: `::` at a
    line's start, the runner's other command, cannot come from one)."""
    return _Page(report, options.timelines or Timelines()).html().replace("##[", "##&#91;")


class _Page:
    """One page being written: what is left of each budget, and the anchors written so far (a link
    is written only to one of them, so parts that hold anchors are made before those that link)."""

    def __init__(self, report: AnyReport, timelines: Timelines) -> None:
        self.report, self.timelines = report, timelines
        self.room = {"rows": TIMELINE_BYTES, "list": LIST_BYTES, "rules": RULES_BYTES, "index": INDEX_BYTES}
        self.anchors: set[str] = set()

    def take(self, budget: str, html: str) -> bool:
        """Whether `html` fits what is left of `budget` (it is then spent); once full, a budget stays full."""
        size = len(html.encode("utf-8"))
        if self.room[budget] < size:
            self.room[budget] = -1
            return False
        self.room[budget] -= size
        return True

    def link(self, anchor: str, html: str) -> str:
        """`html` as a link to `anchor` when that was written, else as it is."""
        return f'<a href="#{anchor}">{html}</a>' if anchor in self.anchors else html

    def html(self) -> str:
        report = self.report
        title = f"agent-invariants: {inert(report.contract.name, 200)}: {verdict(report)}"
        chosen = detailed(report)
        index = self.index(chosen) if is_batch(report) else []   # first: it has a budget of its own
        drawn: list[str] = []
        for number, section in enumerate(sections(report), 1):
            if any(section is shown for shown in chosen):
                drawn += self.pair(section, f"s{number}") if isinstance(section, CompareReport) else \
                    self.check(section, f"s{number}", heading="h2", batch=is_batch(report))
        body = [f"<header><h1>{_t(title)}</h1>",
                f"<p>{_verdict(report)} {_t(_counts(report))}</p></header>", "<main>"]
        if isinstance(report, CheckBatchReport) and report.stability is not UNSET:   # record --repeat
            body += self.stability(report.stability)
        body += index + drawn
        if is_batch(report) and len(chosen) < len(sections(report)):
            body.append(f'<p class="note">{len(sections(report)) - len(chosen):,} more sections are not drawn: a page '
                        f"shows {len(chosen)} in detail, failing ones first. The report in another format lists them "
                        "all.</p>")
        head = ['<!DOCTYPE html>', '<html lang="en">', '<head>', '<meta charset="utf-8">',
                f'<meta http-equiv="Content-Security-Policy" content="{csp()}">',
                '<meta name="referrer" content="no-referrer">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                '<meta name="color-scheme" content="light dark">',
                f"<title>{_t(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>"]
        return "\n".join([*head, *body, "</main>", f"<script>{SCRIPT}</script>", "</body>", "</html>"]) + "\n"

    def index(self, chosen: list[CheckReport | CompareReport]) -> list[str]:
        """A batch's table of contents: each trace (or pair) with its verdict, linked when drawn."""
        drawn = {id(section) for section in chosen}
        every = sections(self.report)
        numbered = list(enumerate(every, 1))
        if len(numbered) > MAX_INDEX:   # the traces that did not pass first, then the rest; shown in their order
            kept = sorted(numbered, key=lambda item: (passing(item[1]), item[0]))[:MAX_INDEX]
            numbered = sorted(kept, key=lambda item: item[0])
        rows: list[str] = []
        for number, section in numbered:
            check = section.candidate if isinstance(section, CompareReport) else section
            name = f"<code>{_t(_trace_name(check))}</code>"
            if id(section) in drawn:
                name = f'<a href="#s{number}">{name}</a>'
            rows.append(f'<tr><td>{name}</td>'
                        f'<td>{_verdict(section)}</td><td class="num">{check.error_count:,}</td>'
                        f'<td class="num">{check.warning_count:,}</td></tr>')
        rows += [f'<tr><td><code>{_t(failure.trace)}</code></td><td><span class="verdict bad">⊘ unreadable</span>'
                 f'</td><td colspan="2">{_t(failure.error, 400)}</td></tr>' for failure in failures(self.report)]
        written = self.fitting("index", rows)
        lines = ['<nav aria-labelledby="index-h"><h2 id="index-h">Traces</h2><table><thead><tr><th>Trace</th>'
                 '<th>Verdict</th><th class="num">Errors</th><th class="num">Warnings</th></tr></thead><tbody>',
                 *written, "</tbody></table>"]
        left = len(every) + len(failures(self.report)) - len(written)
        if left:
            lines.append(f'<p class="note">{left:,} more traces are not listed here: the report in another format '
                         "lists them all.</p>")
        return [*lines, "</nav>"]

    def stability(self, report: StabilityReport) -> list[str]:
        """`record --repeat`: whether the runs' final outputs kept one shape, and each path that
        did not, naming the runs on each side."""
        traces = [run.trace for run in report.runs]
        reporting = sum(1 for run in report.runs if run.reporting)
        if not report.measured:
            mark = '<span class="verdict warn">⚠ not measured</span>'
            said = f"{reporting} of {len(traces):,} runs report an output; 2 are needed"
        elif report.stable:
            mark = '<span class="verdict good">✓ stable</span>'
            said = f"{reporting} of {len(traces):,} runs report an output, all of one shape"
        else:
            mark = '<span class="verdict bad">✗ unstable</span>'
            said = f"{reporting} of {len(traces):,} runs report an output; " + \
                _count(unstable_paths(report), "unstable path")
        items = self.fitting("list", (f'<li><span class="finding bad">✗ {_t(entry.path, 300)} ({entry.kind})</span> '
                                      f"{_t(describe(entry, traces), 1000)}</li>" for entry in report.unstable))
        lines = ['<section id="stability" aria-labelledby="stability-h">',
                 f'<h2 id="stability-h">Final output stability {mark}</h2>', f"<p>{_t(said)}</p>"]
        if items:
            lines.append(f'<ul class="findings">{"".join(items)}</ul>')
        if len(items) < len(report.unstable):
            lines.append(f'<p class="note">{len(report.unstable) - len(items):,} more unstable paths are not '
                         "listed: the report in another format lists them all.</p>")
        return [*lines, "</section>"]

    def fitting(self, budget: str, rows: Iterable[str]) -> list[str]:
        """The first rows that fit the budget."""
        kept = []
        for row in rows:
            if not self.take(budget, row):
                break
            kept.append(row)
        return kept

    def check(self, check: CheckReport, sid: str, *, heading: str, batch: bool = False,
              in_pair: str = "", regressions: list[Regression] | None = None) -> list[str]:
        """One trace: verdict and counts, rule table, timeline and violations. A trace of a pair
        (`in_pair`: its label) is a part of the pair's section, which has the rule table."""
        tokens = {result.rule_id: f"r{number}" for number, result in enumerate(check.results)}
        timeline = self.timelines.of(check)
        drawing = self.timeline(check, sid, timeline, tokens, regressions or [], filtered=in_pair != "Baseline: ")
        listing = self.violations(check, sid)
        lines = [f'<div id="{sid}">' if in_pair else f'<section class="trace" id="{sid}" aria-labelledby="{sid}-h">',
                 f'<{heading} id="{sid}-h">{_t(in_pair)}<code>{_t(_trace_name(check))}</code> '
                 f"{_verdict(check)}</{heading}>"]
        if batch:
            lines.append(f"<p>{_t(_check_counts(check))}</p>")
        lines += self.notices(check) + self.record(check)
        if not in_pair:
            lines += self.rules(check, sid, tokens, failing_only=batch)
        return [*lines, *drawing, *listing, "</div>" if in_pair else "</section>"]

    def notices(self, check: CheckReport) -> list[str]:
        if check.notices is UNSET:
            return []
        items = self.fitting("list", (f'<li><span class="mark">ℹ notice</span> {_t(notice.message, 500)}</li>'
                                      for notice in check.notices))
        return [f'<ul class="findings">{"".join(items)}</ul>'] if items else []

    def record(self, check: CheckReport) -> list[str]:
        info = check.record
        if info is UNSET:
            return []
        lines = ['<dl class="facts">', f"<dt>Run</dt><dd><code>{_t(info.run_id)}</code></dd>",
                 f"<dt>Ended by</dt><dd>{_t(info.ended_by)}</dd>",
                 f"<dt>Calls prevented</dt><dd>{'⊘ ' if info.denied else ''}{info.denied:,}</dd>", "</dl>"]
        found = self.fitting("list", (f'<li><span class="finding bad">✗ {_t(finding.code)}</span> '
                                      f"{_t(finding.message, 500)}</li>" for finding in info.findings))
        if found:
            lines.append(f'<ul class="findings">{"".join(found)}</ul>')
        if len(found) < len(info.findings):
            lines.append(f'<p class="note">{len(info.findings) - len(found):,} more findings of the run are not '
                         "listed: the report in another format lists them all.</p>")
        return lines

    def rules(self, check: CheckReport, sid: str, tokens: dict[str, str], *, failing_only: bool) -> list[str]:
        """The rule table: status in words and symbols, a link to the rule's first listed violation,
        and a filter button for each failing rule."""
        first: dict[str, int] = {}
        for number, violation in enumerate(check.violations):
            if f"{sid}-v{number}" in self.anchors:
                first.setdefault(violation.rule_id, number)
        shown = [result for result in check.results if not (failing_only and result.passed)]
        rows = []
        for result in shown:
            name = f"<code>{_t(result.rule_id)}</code>"
            if result.rule_id in first:
                name = self.link(f"{sid}-v{first[result.rule_id]}", name)
            css, word = ("good", "✓ passed") if result.passed else _LEVEL[result.severity]
            if inconclusive_rule(result):
                css, word = _LEVEL["inconclusive"]
            button = "" if not result.violation_count else _filter_button(tokens[result.rule_id], result.rule_id)
            rows.append(f'<tr><td>{name}</td><td>{_t(result.rule_kind)}</td><td><span class="finding {css}">{word}'
                        f'</span></td><td class="num">{result.violation_count:,}</td><td>{button}</td></tr>')
        written = self.fitting("rules", rows)
        lines = [f'<h3 id="{sid}-rules">Rules</h3>',
                 '<table class="rules"><thead><tr><th>Rule</th><th>Kind</th><th>Status</th>'
                 '<th class="num">Violations</th><th>Timeline</th></tr></thead><tbody>', *written, "</tbody></table>"]
        passing = len(check.results) - len(shown)
        if len(written) < len(shown):
            lines.append(f'<p class="note">{len(shown) - len(written):,} more rules are not shown: the page reached '
                         "its size limit.</p>")
        if passing:
            lines.append(f'<p class="note">{passing:,} more rules passed.</p>')
        return lines

    def timeline(self, check: CheckReport, sid: str, timeline: Timeline | Missing | None, tokens: dict[str, str],
                 regressions: list[Regression], *, filtered: bool) -> list[str]:
        """The timeline's table: events and folded stretches, findings pinned to their events. Only
        a filtered one (a check's, a candidate's) gets the filter bar; a baseline's is for reading."""
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
        lines.append(f'<p class="note">{_t(timeline.rule)}</p>')
        if filtered:
            lines.append('<div class="filters" hidden><button type="button" data-rule="">Show every row</button>'
                         + ('<button type="button" data-rule="reg" aria-pressed="false">Only regressions</button>'
                            if regressions else "") + '<span class="filter-status" aria-live="polite"></span></div>')
        takes = ' data-filter="all"' if filtered else ""
        lines.append(f'<table class="timeline"{takes}><thead><tr>'
                     '<th class="num">seq</th><th class="num">line</th><th>Event</th><th>Tool</th><th>Details</th>'
                     "<th>Findings</th></tr></thead><tbody>")
        for row in timeline.rows:
            html = _gap(row) if isinstance(row, Gap) else _event(row, sid, findings.get(row.index, []), tokens)
            if not self.take("rows", html):
                start = row.first if isinstance(row, Gap) else row.index
                lines.append(f'<tr class="gap"><td colspan="6">⋯ The page reached its size limit: the rest of this '
                             f"timeline, from event {start + 1:,} of {timeline.events:,}, is not drawn.</td></tr>")
                break
            lines.append(html)
            if isinstance(row, Row):
                self.anchors.add(f"{sid}-e{row.index}")
        lines.append("</tbody></table>")
        whole = [item for item in check.violations if item.event_index is UNSET][:20]
        trace_wide = self.fitting("list", (f"<li>{_finding(item)}</li>" for item in whole))
        if trace_wide:
            lines.append(f'<p>Whole-trace findings:</p><ul class="findings">{"".join(trace_wide)}</ul>')
        if timeline.pinned_left_out:   # counted among the kept violations: past --max-violations, at least
            lines.append(f'<p class="note">{"At least " if check.truncated is True else ""}'
                         f"{timeline.pinned_left_out:,} more events with findings are not drawn: each failing rule "
                         "drew its first ones.</p>")
        return lines

    def violations(self, check: CheckReport, sid: str) -> list[str]:
        """The violations listed, each failing rule taking turns up to `MAX_LISTED`, in report order."""
        if not check.violations:
            return []
        trace = _trace_name(check)
        by_rule: dict[str, list[int]] = {}
        for number, violation in enumerate(check.violations):
            by_rule.setdefault(violation.rule_id, []).append(number)
        listed = sorted(take_turns(list(by_rule.values()), MAX_LISTED))
        rows = []
        for number in listed:
            item = check.violations[number]
            where = _place(item, trace)
            if where and item.event_index is not UNSET:
                where = self.link(f"{sid}-e{item.event_index}", where)
            rows.append(f'<li id="{sid}-v{number}">{_finding(item)}{" — " + where if where else ""}</li>')
        written = self.fitting("list", rows)
        self.anchors.update(f"{sid}-v{number}" for number in listed[:len(written)])
        lines = [f'<h3 id="{sid}-violations">Violations</h3>', '<ol class="violations">', *written, "</ol>"]
        total = check.violations_total if check.violations_total is not UNSET else len(check.violations)
        if total > len(written):
            lines.append(f'<p class="note">{total - len(written):,} more violations are not listed: the JSON report '
                         "holds every kept one.</p>")
        return lines

    def pair(self, pair: CompareReport, sid: str) -> list[str]:
        """A comparison: regressions, rule changes, the two runs' tool calls lined up, both timelines."""
        base, cand = self.timelines.of(pair.baseline), self.timelines.of(pair.candidate)
        paths = self.paths(base, cand, pair.regressions) if isinstance(base, Timeline) and \
            isinstance(cand, Timeline) else []
        candidate = self.check(pair.candidate, f"{sid}c", heading="h3", in_pair="Candidate: ",
                               regressions=pair.regressions)
        baseline = self.check(pair.baseline, f"{sid}b", heading="h3", in_pair="Baseline: ")
        lines = [f'<section class="trace pair" id="{sid}" aria-labelledby="{sid}-h">',
                 f'<h2 id="{sid}-h">{_verdict(pair)} '
                 f"<code>{_t(_trace_name(pair.candidate))}</code> against "
                 f"<code>{_t(_trace_name(pair.baseline))}</code></h2>"]
        if pair.regressions:
            rows = []
            for regression in pair.regressions:
                where = _place(regression, _trace_name(pair.candidate))
                if where and regression.event_index is not UNSET:
                    where = self.link(f"{sid}c-e{regression.event_index}", where)
                rows.append(f"<li>{_finding(regression)}{' — ' + where if where else ''}</li>")
            written = self.fitting("list", rows)
            lines += ['<h3>Regressions</h3><ol class="violations">', *written, "</ol>"]
            if len(written) < len(rows):
                lines.append(f'<p class="note">{len(rows) - len(written):,} more regressions are not listed: the '
                             "report in another format lists them all.</p>")
        lines += self.changes(pair)
        lines += paths + candidate
        lines.append(f'<details id="{sid}-baseline"><summary>Baseline run: <code>{_t(_trace_name(pair.baseline))}'
                     "</code></summary>")
        return [*lines, *baseline, "</details>", "</section>"]

    def changes(self, pair: CompareReport) -> list[str]:
        """Each rule's state in both runs, with a filter button for each rule failing in the candidate."""
        tokens = {result.rule_id: f"r{number}" for number, result in enumerate(pair.candidate.results)}
        rows = []
        for change in pair.rule_changes:
            css, word = ("warn", "⚠ warning") if warned(change) else _RULE_CHANGE[change.change]
            candidate = f"{change.candidate} ({change.candidate_violations:,})"
            if undecided(change):   # (--partial: what only the end of the run decides)
                css, word = "warn", "? inconclusive"
                candidate = f"inconclusive ({change.candidate_inconclusive:,})"
            button = _filter_button(tokens[change.rule_id], change.rule_id) \
                if (change.candidate_violations or undecided(change)) and change.rule_id in tokens else ""
            baseline = f"inconclusive ({change.baseline_inconclusive:,})" if baseline_undecided(change) else \
                f"{change.baseline} ({change.baseline_violations:,})"
            rows.append(f"<tr><td><code>{_t(change.rule_id)}</code></td><td>{_t(change.rule_kind)}</td>"
                        f"<td>{baseline}</td>"
                        f"<td>{candidate}</td>"
                        f'<td><span class="finding {css}">{word}</span></td><td>{button}</td></tr>')
        written = self.fitting("rules", rows)
        lines = ['<h3>Rules in both runs</h3><table class="rules"><thead><tr><th>Rule</th><th>Kind</th>'
                 "<th>Baseline</th><th>Candidate</th><th>Change</th><th>Timeline</th></tr></thead><tbody>",
                 *written, "</tbody></table>"]
        if len(written) < len(rows):
            lines.append(f'<p class="note">{len(rows) - len(written):,} more rules are not shown: the page reached '
                         "its size limit.</p>")
        return lines

    def paths(self, base: Timeline, cand: Timeline, regressions: list[Regression]) -> list[str]:
        """The tool calls of both runs side by side (`timeline.align`), so an added, dropped or
        changed call stands out; long stretches of identical calls are folded."""
        pinned = {regression.event_index for regression in regressions if regression.event_index is not UNSET}
        lines = ["<h3>Tool calls side by side</h3>",
                 f'<p class="note">Each run\'s first {len(base.calls):,} and {len(cand.calls):,} tool calls, lined up '
                 "where the same tools were called in the same order; long stretches of identical calls are "
                 "folded.</p>"]
        if base.calls_total > len(base.calls) or cand.calls_total > len(cand.calls):
            lines.append(f'<p class="note">The baseline made {base.calls_total:,} calls and the candidate '
                         f"{cand.calls_total:,}: only the first ones are lined up.</p>")
        lines.append('<table class="paths" data-filter="reg"><thead><tr><th class="num">Baseline seq</th>'
                     "<th>Baseline tool</th><th>Change</th><th>Candidate tool</th>"
                     '<th class="num">Candidate seq</th></tr></thead><tbody>')
        for change, left, right in _folded(align(base.calls, cand.calls), pinned):
            if isinstance(left, int):
                html = f'<tr class="gap"><td colspan="5" class="muted">⋯ {left:,} identical calls folded</td></tr>'
            else:
                regression = right is not None and right.index in pinned
                marked = ' class="regression" data-rules="reg"' if regression else f' class="{change}"'
                html = (f"<tr{marked}>"
                        f'<td class="num">{_call_seq(left)}</td><td><code>{_call_tool(left)}</code></td>'
                        f'<td class="same">{_CHANGE[change]}{" ✗ regression" if regression else ""}</td>'
                        f'<td><code>{_call_tool(right)}</code></td><td class="num">{_call_seq(right)}</td></tr>')
            if not self.take("rows", html):
                lines.append('<tr class="gap"><td colspan="5">⋯ The page reached its size limit: the other calls are '
                             "not lined up.</td></tr>")
                break
            lines.append(html)
        return [*lines, "</tbody></table>"]


def _verdict(report: AnyReport) -> str:
    """The verdict of a report, a trace's or a pair's, in a symbol and a word (`shared.verdict`)."""
    word = verdict(report)
    look, mark = _LOOK[word]
    return f'<span class="verdict {look}">{mark} {word}</span>'


_LOOK = {"passed": ("good", "✓"), "compatible": ("good", "✓"), "failed": ("bad", "✗"), "regression": ("bad", "✗"),
         "unstable": ("bad", "✗"), "incomplete": ("warn", "⚠")}


def _counts(report: AnyReport) -> str:
    if isinstance(report, CheckReport):
        return _check_counts(report)
    if isinstance(report, CompareReport):
        return f"{_count(report.regression_count, 'regression')}; candidate: {_check_counts(report.candidate)}"
    return ", ".join(batch_tally(report, grouped=True))


def _check_counts(check: CheckReport) -> str:
    summary = check.summary
    parts = [_count(summary.events, "event"), _count(summary.tool_calls, "tool call"),
             _count(check.error_count, "error"), _count(check.warning_count, "warning")]
    if check.inconclusive_count is not UNSET:
        parts.append(f"{check.inconclusive_count:,} inconclusive")
    return ", ".join(parts)


def _trace_name(check: CheckReport) -> str:
    """The trace as the page names it (in headings, the index and each place): cut to 300
    characters, as it recurs on every listed violation."""
    name = "events" if check.trace is UNSET else "stdin" if check.trace == "-" else check.trace
    name = name if check.run is UNSET else f"{name} (run {check.run})"
    return name if len(name) <= 300 else name[:300] + "…"


def _filter_button(token: str, rule_id: str) -> str:
    """A rule's filter: hidden until the script runs (without it, it would do nothing)."""
    return (f'<button type="button" data-rule="{token}" hidden aria-pressed="false" '
            f'aria-label="Show only the timeline rows of {_t(rule_id)}">Show only this rule</button>')


def _gap(gap: Gap) -> str:
    tools = f"; tools: {_named(gap.tools)}" if gap.tools.names else ""
    return (f'<tr class="gap"><td class="num">{_t(_seq(gap.first_seq))}–{_t(_seq(gap.last_seq))}</td><td></td>'
            f'<td colspan="4">⋯ {_count(gap.events, "event")} folded: {_named(gap.types)}{tools}</td></tr>')


def _named(counted: Counted) -> str:
    """`tool.call ×2,000, tool.result ×1,999, other ×12`; counts past what was counted exactly are
    bounds (`×≥1,990`, `other ×≤40`)."""
    low, high = ("≥", "≤") if counted.lowered else ("", "")
    parts = [f"{_t(name, 80)} ×{low}{count:,}" for name, count in counted.names]
    if counted.other:
        parts.append(f"other ×{high}{counted.other:,}")
    return ", ".join(parts)


def _event(row: Row, sid: str, found: list[Violation | Regression], tokens: dict[str, str]) -> str:
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
    cells = "".join(f"<li>{_finding(item)}</li>" for item in found[:_FINDINGS_PER_ROW])
    if len(found) > _FINDINGS_PER_ROW:
        cells += f"<li>and {len(found) - _FINDINGS_PER_ROW} more</li>"
    where = "" if row.line is None else str(row.line)
    return (f'<tr id="{sid}-e{row.index}"{attrs}><td class="num">{_t(_seq(row.seq))}</td><td class="num">{where}</td>'
            f'<td class="kind"><code>{kind}</code> {marks}</td>'
            f'<td class="tool"><code>{_t(row.tool or "", 120)}</code></td>'
            f'<td class="detail">{detail}</td><td class="found"><ul class="findings">{cells}</ul></td></tr>')


def _finding(item: Violation | Regression) -> str:
    if isinstance(item, Regression):
        css, word = ("info", "? inconclusive") if inconclusive(item) else ("bad", "✗ regression")
        return f'<span class="finding {css}">{word}</span> {_t(item.kind)}: {_t(item.message, 300)}'
    css, word = _LEVEL["inconclusive" if inconclusive(item) else item.severity]
    code = code_of(item)
    return (f'<span class="finding {css}">{word}</span> <code>{_t(item.rule_id, 120)}</code>'
            f'{" " + _t(code, 200) if code else ""}: {_t(item.message, 300)}')


def _place(item: Violation | Regression, trace: str) -> str:
    parts = []
    if item.line is not UNSET:
        parts.append(f"<code>{_t(trace)}:{item.line}</code>")
    if isinstance(item, Violation) and item.span_id is not UNSET:
        parts.append(f"span <code>{_t(item.span_id, 64)}</code>")
    if item.event_seq is not UNSET:
        parts.append(f"seq {_t(_seq(item.event_seq))}")
    return ", ".join(parts)


def _call_seq(call: Call | None) -> str:
    return "" if call is None else _t(_seq(call.seq))


def _call_tool(call: Call | None) -> str:
    return "" if call is None else _t(call.tool, 120)


def _folded(steps: list[tuple[str, Call | None, Call | None]],
            pinned: set[int]) -> Iterable[tuple[str, Call | int | None, Call | None]]:
    """The lined-up calls with each long stretch of identical calls folded to its ends (and its
    regressions): ("fold", count, None) stands for the calls left out."""
    run: list[tuple[str, Call | None, Call | None]] = []

    def flush() -> Iterable[tuple[str, Call | int | None, Call | None]]:
        folded = 0
        for position, step in enumerate(run):
            right = step[2]
            if position < _ALIGN_CONTEXT or position >= len(run) - _ALIGN_CONTEXT or \
                    (right is not None and right.index in pinned):
                if folded:
                    yield "fold", folded, None
                    folded = 0
                yield step
            else:
                folded += 1
        if folded:
            yield "fold", folded, None
        run.clear()

    for step in steps:
        if step[0] == "same":
            run.append(step)
        else:
            yield from flush()
            yield step
    yield from flush()


def _count(count: int, noun: str) -> str:
    """`1 event`, `1,000,000 events`."""
    return f"{count:,} {noun if count == 1 else noun + 's'}"


def _seq(value: int | float) -> str:
    return str(value)


def _t(text: str, limit: int | None = 1000) -> str:
    """Text from a report, a trace or a contract as HTML: control, bidirectional and invisible
    characters shown as escapes (`inert`), then `& < > " '` escaped, so that it can stand in an
    element or an attribute."""
    return escape(inert(text, limit), quote=True)
