"""JUnit XML for CI test reporters (GitLab, Jenkins, GitHub test-report actions). Added in 0.1.

One `<testsuite>` per trace, one `<testcase>` per contract rule (passing rules too, so CI shows
what held). A broken error rule has one `<failure>` listing every violation with its line; a
broken warning rule passes, with its violations in `<system-out>`. `classname` is unique in the
document (GitLab drops repeated classname+name pairs): the contract, the trace's file stem and the
run id of an imported run, then `-2`, `-3`… for a name taken (two `t.jsonl` in two folders, or
`t.v2.jsonl` beside `t-v2.jsonl`); `file` and `line` point at the first offending event. A rule
that kept only its first violations (`--max-violations`) ends the list with a line saying how
many more it found. For `compare`, a "regressions" suite comes first (one testcase per
regression, named by its kind and its rule or tool), then the candidate's rule results.

    <testsuite name="refund-desk · examples/refund-desk/candidate.jsonl" tests="10" failures="5" ...>
      <testcase name="refunds-need-approval" classname="agent-invariants.refund-desk.candidate"
                file="examples/refund-desk/candidate.jsonl" line="6">
        <failure type="require_approval" message="Tool payments.refund was called ...">...</failure>

Built with junit-xml's module-level `to_xml_report_string` (not the deprecated suite methods).
It drops characters XML cannot hold, so any message still gives well-formed XML.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata

from junit_xml import TestCase, TestSuite, to_xml_report_string
from msgspec import UNSET

from agent_invariants._safe import inert, log_safe_report
from agent_invariants.mutate.report import MutateReport, false_positive_text, over_block_text
from agent_invariants.render import DEFAULTS, RenderOptions
from agent_invariants.render.shared import (
    AnyReport,
    check_failure,
    code_of,
    failures,
    inconclusive,
    output_place,
    place,
    sections,
    utf8_within,
)
from agent_invariants.report import (
    BatchFailure,
    CheckBatchReport,
    CheckReport,
    CompareBatchReport,
    CompareReport,
    RecordInfo,
    RuleResult,
    Violation,
    first_violations,
)
from agent_invariants.stability import StabilityReport, odd_one

__all__ = ("MAX_LISTED", "render")

MAX_LISTED = 1000
"""Violations a rule's test case lists (the default --max-violations): a failure's text is one XML
node, which the pretty printer rebuilds in time that grows with the square of its length (600,000
violations took 73 s), and no test reporter shows more."""

# XML 1.0 cannot hold these at all, not even escaped; junit-xml misses lone surrogates.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def render(report: AnyReport | StabilityReport | MutateReport, options: RenderOptions = DEFAULTS) -> str:
    """The report as a JUnit XML document (ends with a newline). Only what `options.sources`
    knows of a stability report's traces (the line of each final output) applies to JUnit."""
    if isinstance(report, MutateReport):
        return _document(_mutate(report))
    for most in _LISTINGS:   # the fewest listed only when a file would be too large otherwise
        if isinstance(report, StabilityReport):
            document = _document([_stability(report, options.outputs, most)])
        else:
            document = _checks(report, options, most)
        if utf8_within(document, MAX_BYTES):
            break
    return document


MAX_BYTES = 30_000_000
"""The largest file GitLab reads (30 MB; a larger one is not read at all): past it, each rule
lists fewer of its violations (`_LISTINGS`), a stability report fewer unstable paths, and says so."""

_LISTINGS = (MAX_LISTED, 100, 10, 1, 0)


def _checks(report: AnyReport, options: RenderOptions, most: int) -> str:
    """The document of a check or compare report, each rule listing at most `most` violations."""
    suites: list[TestSuite] = []
    names = _Classnames()
    for section in sections(report):
        if isinstance(section, CompareReport):
            batch = isinstance(report, CompareBatchReport)
            suites += [_regressions(section, names, batch, most),
                       _rules_suite(section.candidate, "candidate", names, most)]
        else:
            suites.append(_rules_suite(section, None, names, most))
            if section.record is not UNSET:
                suites.append(_record(section.record, section.contract.name, names))
    if failures(report):
        suites.append(_unreadable(report.contract.name, failures(report), names))
    if isinstance(report, CheckBatchReport) and report.stability is not UNSET:   # record --repeat
        suites.append(_stability(report.stability, options.outputs, most))
    return _document(suites)


def _document(suites: list[TestSuite]) -> str:
    """The XML document of the suites (ends with a newline), safe to print in a CI log."""
    xml: str = to_xml_report_string(suites, prettyprint=True, encoding="utf-8")
    return log_safe_report(xml + "\n", "xml")


def _record(run: RecordInfo, contract: str, names: _Classnames) -> TestSuite:
    """The recorded run (`record`): one testcase for its ending, failed unless the agent ended
    it, and one failed testcase per fixture or approval miss."""
    classname = names.unique(contract, "record")
    ending = TestCase("record.ended", classname=classname, file=_line(run.trace))
    cases = [ending]
    for finding in run.findings:
        case = ending if finding.code == "record.ended" else TestCase(
            _line(f"{finding.code} seq {finding.seq}"), classname=classname, file=_line(run.trace),
            line=None if finding.seq is UNSET else finding.seq)
        case.add_failure_info(message=_line(finding.message), failure_type=finding.code)
        if case is not ending:
            cases.append(case)
    return TestSuite(_line(f"{contract} · record {run.run_id}"), cases,
                     properties={"run_id": _line(run.run_id), "ended_by": _line(run.ended_by),
                                 "denied": str(run.denied)})


def _unreadable(contract: str, failures: list[BatchFailure], names: _Classnames) -> TestSuite:
    """Traces that could not be read: an <error> each (the check could not run)."""
    cases = []
    classname = names.unique(contract, "unreadable")
    for failure in failures:
        case = TestCase(_line(failure.trace), classname=classname,
                        file=_line(failure.trace), line=None if failure.line is UNSET else failure.line)
        case.add_error_info(message=_line(failure.error), error_type="input")
        cases.append(case)
    return TestSuite(_line(f"{contract} · unreadable traces"), cases)


class _Classnames:
    """The classnames given so far in one document: each new one is made unique."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def unique(self, contract: str, part: str) -> str:
        return _unique(f"agent-invariants.{_slug(contract)}.{part}", self.taken, "-")


def _unique(base: str, taken: set[str], mark: str) -> str:
    """`base`, or `base` and the mark and 2, 3… when taken already; now taken."""
    name, count = base, 1
    while name in taken:
        count += 1
        name = f"{base}{mark}{count}"
    taken.add(name)
    return name


def _rules_suite(report: CheckReport, role: str | None, names: _Classnames, most: int) -> TestSuite:
    trace = _trace(report)
    label = f"{report.contract.name} · {trace}" + ("" if report.run is UNSET else f" · run {report.run}") + (
        f" ({role})" if role else "")
    part = _slug(_stem(trace)) + ("" if report.run is UNSET else f"-{_slug(report.run)}")
    classname = names.unique(report.contract.name, part)
    cases = [_rule_case(result, classname, trace, most) for result in report.results]
    return TestSuite(_line(label), cases, file=None if report.trace is UNSET else _line(trace),
                     properties={"contract": _line(report.contract.name), "trace": _line(trace),
                                 "events": str(report.summary.events)})


def _why_fewer(most: int) -> str:
    """Why a listing holds fewer than MAX_LISTED (`_LISTINGS`), or nothing when it does not."""
    return "" if most == MAX_LISTED else f" here, not {MAX_LISTED:,}: GitLab reads no file over 30 MB"


def _rule_case(result: RuleResult, classname: str, trace: str, most: int) -> TestCase:
    # at the first violation that fails the rule (under --partial, an inconclusive one may come first)
    first = first_violations(v for v in result.violations if v.line is not UNSET).get(result.rule_id)
    case = TestCase(_line(result.rule_id), classname=classname,
                    file=_line(trace) if first is not None else None,
                    line=first.line if first is not None else None)
    listed = [inert(_violation_line(v, trace)) for v in result.violations[:most]]   # one line each
    left_out = result.violation_count - len(listed)
    if left_out and len(listed) == len(result.violations):
        listed.append(f"… and {left_out} more (raise --max-violations to see them)")
    elif left_out:
        listed.append(f"… and {left_out} more (JUnit lists {most:,} per rule{_why_fewer(most)}; --format json lists "
                      "every one kept)")
    lines = "\n".join(listed)
    if result.passed:   # its violations, if any, are inconclusive (--partial): shown, not failed
        if listed:
            case.stdout = _xml(f"inconclusive: {result.violation_count} violation(s) of {inert(result.rule_id)} "
                               f"that the rest of the run may yet settle (--partial)\n{lines}")
        return case
    if result.severity == "error":
        case.add_failure_info(message=_line(result.violations[0].message), output=_xml(lines),
                              failure_type=result.rule_kind)
    else:
        case.stdout = _xml(f"warning: {result.violation_count} violation(s) of {inert(result.rule_id)}\n{lines}")
    return case


def _regressions(report: CompareReport, names: _Classnames, batch: bool, most: int) -> TestSuite:
    """The regressions of one compare, each a test named by what it is about (a rule, a tool, or
    its kind alone: a compare has at most one `tool_call_increase` and one `outcome_regression`),
    so that a CI keeps its history whatever else regressed. In a batch, each pair's suite and
    classname name its candidate, as the rules' suites do. The new tools, of which a candidate may
    bring a million, are listed `most` at a time as a rule's violations are, the rest in one test
    that counts them (each was a test: 125,000 of them made 50 MB in 100 s)."""
    trace = _trace(report.candidate)
    part = "compare"
    if batch:
        part += "." + _slug(_stem(trace)) + ("" if report.candidate.run is UNSET else f"-{_slug(report.candidate.run)}")
    classname = names.unique(report.contract.name, part)
    cases = []
    named: set[str] = set()
    new_tools = 0
    for regression in report.regressions:
        if regression.kind == "new_tool":
            new_tools += 1
            if new_tools > most:
                continue
        key = regression.evidence.get("rule_id") or regression.evidence.get("tool")
        # (two tools whose names read alike once escaped, a line break and a literal `\n`: `#2`)
        name = _unique(_line(regression.kind if key is None else f"{regression.kind}: {key}"), named, " #")
        case = TestCase(name, classname=classname,
                        file=_line(trace) if regression.line is not UNSET else None,
                        line=regression.line if regression.line is not UNSET else None)
        where = f" ({trace}:{regression.line})" if regression.line is not UNSET else ""
        if inconclusive(regression):   # (--partial) shown, not failed, as an inconclusive rule's violations
            case.stdout = _line(f"inconclusive: {regression.message}{where}")
        else:
            case.add_failure_info(message=_line(regression.message), output=_line(regression.message + where),
                                  failure_type=regression.kind)
        cases.append(case)
    if new_tools > most:
        left_out = new_tools - most
        said = f"{left_out:,} more tool{'s' if left_out != 1 else ''} the baseline never called (JUnit lists " \
               f"{most:,}{_why_fewer(most)}; --format json lists every one)"
        case = TestCase(f"new_tool: … {left_out:,} more", classname=classname)
        case.add_failure_info(message=said, output=said, failure_type="new_tool")
        cases.append(case)
    if not cases:
        cases.append(TestCase("compatible", classname=classname))
    label = f"{report.contract.name} · compare" + (f" · {trace}" if batch else "")
    return TestSuite(_line(label), cases,
                     properties={"contract": _line(report.contract.name), "compatible": str(report.compatible).lower()})


def _violation_line(violation: Violation, trace: str) -> str:
    code = code_of(violation)
    return f"{' '.join(place(violation, trace) or ['whole trace'])}: {f'[{code}] ' if code else ''}{violation.message}"


def _trace(report: CheckReport) -> str:
    return "events" if report.trace is UNSET else report.trace


def _stem(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


def _slug(text: str) -> str:
    """A classname part: letters, digits, - and _ only (dots would split it into packages);
    accents dropped (`café` is `cafe`), and a name with no such character at all (`報告`) named
    by a short hash of itself, so that each keeps its own classname whatever else the report
    holds (all were `trace`, then `trace-2` in the order of the traces)."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", plain).strip("-")
    return slug or "h" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _xml(text: str) -> str:
    """A test's output, its lines each already escaped (`_line`, `inert`): what XML cannot hold
    replaced. (A line break that a trace put in a name would forge a line of its own in a CI log
    that prints the body: `::error ...`.)"""
    return _NOT_XML.sub("\ufffd", text)


def _line(text: str) -> str:
    """A one-line value, an attribute (a name, a file, a property, a failure's message), escaped as
    the text report escapes text from users: a line break or a bidirectional control in it shows as
    `\\n`, `\\u202e` (a test runner's page shows attributes on one line, and an override there
    would make a name read backwards)."""
    return _xml(inert(text))


def _stability(report: StabilityReport, outputs: dict[int, tuple[int, int | None]], most: int) -> TestSuite:
    """A stability report: one failing test case per unstable path and kind (at the final output
    of the run it shows best in, as the other formats place it), the first `most` of them and one
    that counts the rest; one passing case when the shape held; an errored one when nothing could
    be measured; with `--contract`, one case per trace checked, at its final output, failing when
    the trace fails the contract."""
    names = [run.trace for run in report.runs]
    cases = []
    for entry in report.unstable[:most]:
        shown = odd_one(entry)
        file, line = output_place(names[shown], shown, outputs)
        case = TestCase(_line(f"{entry.path} ({entry.kind})"), classname="agent-invariants.stability",
                        file=None if file is None else _line(file), line=line)
        def listed(indexes: list[int]) -> str:
            return ", ".join(names[index] for index in indexes) or "none"

        types = "; ".join(f"{names[index]}: {'|'.join(entry.types[index])}" for index in entry.present_in)
        case.add_failure_info(message=_line(f"{entry.path} is {entry.kind}-unstable"), output=_line(
            f"present in {listed(entry.present_in)}; absent in {listed(entry.absent_in)}; unknown in "
            f"{listed(entry.unknown_in)}") + "\n" + _line(f"types: {types}"), failure_type=entry.kind)
        cases.append(case)
    left_out = len(report.unstable) - most
    if left_out > 0:
        said = f"{left_out:,} more unstable path entr{'y' if left_out == 1 else 'ies'} (JUnit lists {most:,}" \
               f"{_why_fewer(most)}; --format json lists every one)"
        case = TestCase(f"… {left_out:,} more", classname="agent-invariants.stability")
        case.add_failure_info(message=said, output=said, failure_type="unstable")
        cases.append(case)
    if not report.measured:
        case = TestCase("output shape", classname="agent-invariants.stability")
        case.add_error_info(message="not measured: fewer than two traces report an output", error_type="not_measured")
        cases.append(case)
    elif report.stable:
        cases.append(TestCase("output shape", classname="agent-invariants.stability"))
    for index, run in enumerate(report.runs):
        if run.check:
            file, line = output_place(run.trace, index, outputs)
            case = TestCase(_line(f"check: {run.trace}"), classname="agent-invariants.stability",
                            file=None if file is None else _line(file), line=line)
            if not run.check.passed:
                case.add_failure_info(message=_line(check_failure(run)), failure_type="check")
            cases.append(case)
    return TestSuite("agent-invariants stability", cases)


def _mutate(report: MutateReport) -> list[TestSuite]:
    """A mutate report: a suite of mutants (killed passes, a survivor fails with its hint, an
    over-blocked equivalent fails, other equivalent and invalid ones are skipped with the reason)
    and a suite of the false-positive rewrites that failed (one passing case when none did)."""
    hints = {survivor.id: survivor.hint for survivor in report.survivors}
    cases = []
    for mutant in report.mutants:
        case = TestCase(_line(mutant.id), classname=f"agent-invariants.mutate.{mutant.operator}")
        if mutant.status == "survived":
            case.add_failure_info(message=_line(f"survived; would be killed by: {hints.get(mutant.id, '')}"),
                                  failure_type="survived")
        elif mutant.over_block:
            case.add_failure_info(message=_line(over_block_text(mutant)), failure_type="over_block")
        elif mutant.status in ("equivalent", "invalid"):
            case.add_skipped_info(message=mutant.status)
        cases.append(case)
    rewrites = []
    for found in report.false_positives:
        name = found.rewrite if found.file is UNSET else f"{found.rewrite} {found.file}"
        case = TestCase(_line(name), classname="agent-invariants.mutate.false_positives")
        case.add_failure_info(message=_line(false_positive_text(found)), failure_type="false_positive")
        rewrites.append(case)
    if not report.false_positives:
        rewrites.append(TestCase("rewrites that keep the behaviour pass", classname="agent-invariants.mutate"))
    return [TestSuite("agent-invariants mutate", cases), TestSuite("agent-invariants mutate false positives", rewrites)]
