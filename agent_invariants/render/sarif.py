"""SARIF 2.1.0 for GitHub code scanning, built with the sarif-om object model. Added in 0.1.

One run, one rule descriptor per contract rule (its help is the rule kind's manual), one result per
violation, located at the offending event's physical line in the trace file. Violations of the
whole trace (budgets, a missing required event) point at the rule's line in the contract. With
`anchor="contract"` every result points at the contract (for traces that are build artifacts, not
committed files) and names the trace line in its message and `relatedLocations`.

Each rule keeps only its first violations (`--max-violations`, default 1000); when some were left
out, `runs[0].properties` says how many (`violationsLeftOut`). At most `MAX_RESULTS` results are
written, errors first (`resultCount` then says how many there were).

A rule of a kind tagged `security` (the rule class's `tags`) with severity error gets a
`security-severity` of 8.0 (GitHub: high); any other rule a `problem.severity`.

For `compare`, each regression is a result, located at the candidate event that caused it where
there is one, with `baselineState`: `new`, or `unchanged`/`updated` when the baseline already
broke that rule as often/a different number of times.

    {"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
     "runs": [{"tool": {"driver": {"name": "agent-invariants", "rules": [...]}}, "results": [...]}]}

Same report, same bytes: no timestamps, no absolute paths; fingerprints are hashes of the rule,
the location's file, the event's seq and the evidence, and of the scenario where the location does
not tell it: the trace of a result placed in the contract, and the number of an imported run among
the runs of its file (never its id: trace ids are new on every recording). A hash that still comes
twice in a run ends in `:2`, `:3`… as GitHub's own do.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any

import attr
import msgspec
import sarif_om as om
from msgspec import UNSET

from agent_invariants import __version__
from agent_invariants._js import js_number_hook, utf16_len
from agent_invariants._safe import TEXT_LIMIT, inert, log_safe_report
from agent_invariants.lint.report import LintReport
from agent_invariants.manual import command_manual, manual, section, summary_line
from agent_invariants.match.canonical import evidence_cut
from agent_invariants.mutate.report import MutateReport, false_positive_text, over_block_text, survivor_text
from agent_invariants.render import DEFAULTS, RenderOptions
from agent_invariants.render.shared import (
    AnyReport,
    check_failure,
    code_of,
    failures,
    inconclusive,
    sections,
    utf8_within,
)
from agent_invariants.report import (
    BatchFailure,
    CheckBatchReport,
    CheckReport,
    CompareReport,
    RecordFinding,
    Regression,
    RuleChange,
    Violation,
    first_violations,
)
from agent_invariants.rules import RULE_KINDS
from agent_invariants.sources import Sources, to_uri
from agent_invariants.stability import StabilityReport, describe, failed_checks, odd_one

__all__ = ("MAX_RESULTS", "render")

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/agent-invariants/agent-invariants"
MAX_RESULTS = 25_000
_TEXT_LIMIT = 1024

# Regressions of compare that are not about one contract rule get rules of their own.
_COMPARE_RULES = {
    "new_tool": ("compare.new-tool", "The candidate calls a tool the baseline never called."),
    "tool_call_increase": ("compare.tool-call-increase", "The candidate makes more tool calls than the policy allows."),
    "outcome_regression": ("compare.outcome-regression", "The candidate's final outcome ranks below the baseline's."),
}


def render(report: AnyReport | StabilityReport | LintReport | MutateReport, options: RenderOptions = DEFAULTS) -> str:
    """The report as a SARIF 2.1.0 log (JSON text ending in a newline). Several traces go into
    the one run, each result at its own trace. Reads `sources`, `anchor` and `category` of
    `options`; without `sources`, what the report alone knows."""
    if isinstance(report, StabilityReport):
        return _log(_stability(report, options.sources or Sources()), options.category)
    if isinstance(report, LintReport):
        return _log(_lint(report, options.sources or Sources()), options.category)
    if isinstance(report, MutateReport):
        return _log(_mutate(report, options.sources or Sources()), options.category)
    builder = _Builder(options.sources or Sources(), options.anchor)
    for part in sections(report):
        if isinstance(part, CompareReport):
            builder.compare(part)
        else:
            builder.check(part)
    run = om.Run(
        tool=om.Tool(driver=om.ToolComponent(
            name="agent-invariants", semantic_version=__version__, information_uri=INFORMATION_URI,
            rules=builder.descriptors)),
        results=builder.kept_results(),
        column_kind="utf16CodeUnits",
    )
    if failures(report):
        run.invocations = [_unreadable(failures(report))]
    run.properties = _truncation(builder)
    recorded = [msgspec.to_builtins(part.record) for part in sections(report)
                if isinstance(part, CheckReport) and part.record is not UNSET]
    if recorded:   # `record`: how each run went (its findings are results too), in every format (point 83)
        run.properties = {**(run.properties or {}), "record": recorded[0] if len(recorded) == 1 else recorded}
    if isinstance(report, CheckBatchReport) and report.stability is not UNSET:   # record --repeat
        _add_stability(run, _stability(report.stability, options.sources or Sources()))
    return _log(run, options.category)


def _add_stability(run: om.Run, stability: om.Run) -> None:
    """`record --repeat`: the results, descriptors, properties and notice of the runs' stability
    (`_stability`) added to the run of their checks."""
    offset = len(run.tool.driver.rules)
    taken = {descriptor.id for descriptor in run.tool.driver.rules}   # (a contract rule may be `stability.type`)
    for descriptor in stability.tool.driver.rules:
        descriptor.id = _own_id(descriptor.id, taken)
    run.tool.driver.rules = [*run.tool.driver.rules, *stability.tool.driver.rules]
    for result in stability.results:
        result.rule_index += offset
        result.rule_id = run.tool.driver.rules[result.rule_index].id
    run.results = [*run.results, *stability.results]
    run.properties = {**(run.properties or {}), **stability.properties}
    run.results = _first_results(run.results, run.properties, "the checks' first")   # (each part is cut alone too)
    if stability.invocations:
        run.invocations = [*(run.invocations or []), *stability.invocations]


def _own_id(code: str, taken: set[str]) -> str:
    """The rule id of one of the tool's own kinds of result (a compare regression, a `record`
    finding, an instability): its code, unless a contract rule has that id (`compare.new-tool` is
    a legal one), then the code under the tool's name, which no rule id can be: a rule's descriptor
    (its help, level and tags) must not describe results that are not its own."""
    return f"agent-invariants/{code}" if code in taken else code


def _log(run: om.Run, category: str | None) -> str:
    """The SARIF log of one run, as JSON text (with the category asked for, if any), within the
    size code scanning takes (`_within_upload_limit`)."""
    if category:
        run.automation_details = om.RunAutomationDetails(id=category if category.endswith("/") else f"{category}/")
    text = _text(run)
    return text if utf8_within(text, _COMPRESSED_LIMIT) else _within_upload_limit(run, text)


def _text(run: om.Run) -> str:
    log = _plain(om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run]))
    ordered = {"$schema": log["$schema"], "version": log["version"], "runs": log["runs"]}
    text = msgspec.json.format(msgspec.json.encode(ordered, enc_hook=js_number_hook), indent=2).decode("utf-8")
    return log_safe_report(text + "\n", "json")


def _within_upload_limit(run: om.Run, text: str) -> str:
    """The log with as many of its results as keep it within code scanning's limit (a file of
    more than 10 MB once compressed is rejected whole, and every alert of the run with it),
    errors first: 25,000 results of agent-written text that hardly compresses (random tool names of
    490 characters) made 45 MB, 11 MB compressed. Deterministic, as the compression is."""
    results = run.results or []
    total = (run.properties or {}).get("resultCount", len(results))
    ranked = sorted(range(len(results)), key=lambda i: (results[i].level != "error", i))
    size = _compressed_size(text)
    while size > _COMPRESSED_LIMIT and run.results:
        keep = min(len(run.results) - 1, int(len(run.results) * _COMPRESSED_LIMIT / size * 0.95))
        run.results = [results[i] for i in sorted(ranked[:keep])]
        properties = run.properties or {}
        notes = [f"Only the first {keep} results (errors first) are included: with more, the file would be over "
                 "code scanning's limit of 10 MB compressed."]
        if not keep:
            notes = ["No result is included: with any, the file would be over code scanning's limit of 10 MB "
                     "compressed."]
        if properties.get("violationsLeftOut"):
            notes.append(_left_out_note(properties["violationsLeftOut"]))
        run.properties = {**properties, "truncated": True, "resultCount": total, "note": " ".join(notes)}
        text = _text(run)
        size = _compressed_size(text)
    if size > _COMPRESSED_LIMIT:   # (the rules' descriptors alone, from a contract of megabytes)
        run.properties = {**(run.properties or {}), "note": "No result is included, and the file is still over code "
                          "scanning's limit of 10 MB compressed: the contract's rules alone make it so large."}
        text = _text(run)
    return text


def _compressed_size(text: str) -> int:
    """The size of `text` as gzip writes it (the compression an upload of SARIF uses)."""
    import zlib

    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    return len(packer.compress(text.encode("utf-8"))) + len(packer.flush())


_COMPRESSED_LIMIT = 10_000_000
"""Bytes of a compressed SARIF file code scanning takes (its limit is 10 MB; a little kept in hand)."""


_STABILITY_RULES = {
    "presence": ("stability.presence", "An output path is in the final output of some runs and missing from others."),
    "type": ("stability.type", "An output path holds values of different JSON types in different runs."),
    "check": ("stability.check", "A trace that --contract checked fails the contract (check it for the violations)."),
}


def _stability(report: StabilityReport, sources: Sources) -> om.Run:
    """A stability report: one result per unstable path and kind, at the terminal event (the
    line of the final output) of the run it is best shown in, the other runs as related places."""
    traces = [sources.shown(run.trace) for run in report.runs]   # (relative to the root, as the locations are)
    descriptors: list[om.ReportingDescriptor] = []
    rule_index: dict[str, int] = {}
    results = []
    for entry in report.unstable:
        rule_id, text = _STABILITY_RULES[entry.kind]
        if rule_id not in rule_index:
            rule_index[rule_id] = len(descriptors)
            help_text = command_manual("stability")
            descriptors.append(_plain_descriptor(rule_id, f"stability-{entry.kind}", text, "stability", help_text,
                                                 f"# stability\n\n{help_text}"))
        shown = odd_one(entry)
        location = _output_location(report.runs[shown].trace, sources, shown)
        others = sorted(index for index in [*entry.present_in, *entry.absent_in, *entry.unknown_in] if index != shown)
        related = [_output_location(report.runs[index].trace, sources, index, location_id=number)
                   for number, index in enumerate(others[:9], start=1)]
        results.append(om.Result(
            rule_id=rule_id, rule_index=rule_index[rule_id], level="error",
            message=_message(describe(entry, traces), TEXT_LIMIT), locations=[location],
            related_locations=related or None,
            partial_fingerprints=_fingerprints(rule_id, location, UNSET, [entry.path, entry.kind]),
            properties=msgspec.to_builtins(entry)))
    for index in failed_checks(report):   # --contract: a trace that fails it, at its final output's line
        run = report.runs[index]
        rule_id, text = _STABILITY_RULES["check"]
        if rule_id not in rule_index:
            rule_index[rule_id] = len(descriptors)
            help_text = command_manual("stability")
            descriptors.append(_plain_descriptor(rule_id, "stability-check", text, "stability", help_text,
                                                 f"# stability\n\n{help_text}"))
        location = _output_location(run.trace, sources, index)
        results.append(om.Result(
            rule_id=rule_id, rule_index=rule_index[rule_id], level="error",
            message=_message(check_failure(run), TEXT_LIMIT),
            locations=[location], partial_fingerprints=_fingerprints(rule_id, location, UNSET, [index]),
            properties=msgspec.to_builtins(run.check)))
    properties: dict[str, Any] = {"stability": {"measured": report.measured, "stable": report.stable}}
    results = _first_results(results, properties, "in path order")   # (each unstable path is one)
    run = om.Run(tool=om.Tool(driver=om.ToolComponent(
        name="agent-invariants", semantic_version=__version__, information_uri=INFORMATION_URI, rules=descriptors)),
        results=results, column_kind="utf16CodeUnits", properties=properties)
    if not report.measured:
        run.invocations = [om.Invocation(execution_successful=True, tool_execution_notifications=[om.Notification(
            message=om.Message(text="Not measured: fewer than two traces report an output."), level="warning")])]
    return run


def _lint(report: LintReport, sources: Sources) -> om.Run:
    """A lint report: one result per finding, at the contract file's line of its pointer, under a
    rule descriptor per code (whose help is lint's manual)."""
    descriptors: list[om.ReportingDescriptor] = []
    rule_index: dict[str, int] = {}
    results = []
    help_text = command_manual("lint")
    lines = sources.pointer_lines([finding.pointer for finding in report.findings])
    erring = {finding.code for finding in report.findings if finding.level == "error"}
    for finding in report.findings:
        if finding.code not in rule_index:
            rule_index[finding.code] = len(descriptors)
            text = f"lint {finding.code}: see the lint manual."
            descriptor = _plain_descriptor(finding.code, finding.code, text, "lint", help_text,
                                           f"# lint\n\n{help_text}")
            level = "error" if finding.code in erring else "warning"   # (an error code's finding resting on a
            descriptor.default_configuration = om.ReportingConfiguration(level=level)   # warning rule is one)
            descriptor.properties["problem.severity"] = level
            descriptors.append(descriptor)
        location = _contract_location(sources, lines.get(finding.pointer, 1))
        results.append(om.Result(
            rule_id=finding.code, rule_index=rule_index[finding.code], level=finding.level,
            message=_message(f"{finding.message} [{', '.join(finding.rule_ids)}]", TEXT_LIMIT),
            locations=[location],
            partial_fingerprints=_fingerprints(finding.code, location, UNSET,
                                               [finding.pointer, finding.rule_ids]),
            properties=msgspec.to_builtins(finding)))
    properties: dict[str, Any] = {}
    if report.truncated is True:
        properties.update(truncated=True, note=f"lint stopped after {len(report.findings)} findings: the contract "
                          "has more.")
    if report.interface is not UNSET:   # (`--interface`: what the JSON report lists, here too)
        properties["interface"] = msgspec.to_builtins(report.interface)
    return om.Run(tool=om.Tool(driver=om.ToolComponent(
        name="agent-invariants", semantic_version=__version__, information_uri=INFORMATION_URI, rules=descriptors)),
        results=results, column_kind="utf16CodeUnits", properties=properties or None)


_RECORD_FINDINGS = {
    "record.fixture_miss": "A tool call of the recorded run that no fixture answered (the agent got an error result).",
    "record.approval_miss": "An approval request of the recorded run that no approvals entry decided (it was denied).",
    "record.ended": "The harness ended the recorded run (a timeout, a crash, a protocol error, an output cap).",
    "record.schema_drift": "The MCP servers' tools differ from the saved tool snapshot.",
    "record.result_too_large": "An MCP server's result too large for a trace line (the agent got an error result).",
}
"""A SARIF rule's short text for each code `RecordFinding.code` names: a code added there needs one here."""


_MUTATE_RULES = {
    "survived": ("mutate.survived", "warning", "A mutant of a passing trace (one thing broken) that no error-severity "
                 "rule rejects."),
    "over_block": ("mutate.over_block", "warning", "A mutant that behaves as the original trace, yet the contract "
                   "rejects it."),
    "false_positive": ("mutate.false_positive", "error", "A rewrite of the trace that keeps its behaviour, yet fails "
                       "the contract."),
}


def _mutate(report: MutateReport, sources: Sources) -> om.Run:
    """A mutate report: each survivor at its site's line in the trace (a warning); each
    over-blocked equivalent and each false positive (an error) at the line of the first rule
    that rejects it in the contract file."""
    descriptors: list[om.ReportingDescriptor] = []
    rule_index: dict[str, int] = {}
    results = []
    help_text = command_manual("mutate")
    trace = report.trace_file or "-"

    def descriptor(kind: str) -> tuple[str, int, str]:
        rule_id, level, text = _MUTATE_RULES[kind]
        if rule_id not in rule_index:
            rule_index[rule_id] = len(descriptors)
            descriptor = _plain_descriptor(rule_id, rule_id.replace(".", "-"), text, "mutate", help_text,
                                           f"# mutate\n\n{help_text}")
            descriptor.default_configuration = om.ReportingConfiguration(level=level)
            descriptor.properties["problem.severity"] = level
            descriptors.append(descriptor)
        return rule_id, rule_index[rule_id], level

    def at_rule(rules: list[str]) -> om.Location:
        return _contract_location(sources, sources.rule_lines.get(rules[0], 1) if rules else 1)

    def add(kind: str, text: str, location: om.Location, key: list[Any], properties: dict[str, Any]) -> None:
        rule_id, index, level = descriptor(kind)
        results.append(om.Result(rule_id=rule_id, rule_index=index, level=level,
                                 message=_message(text, TEXT_LIMIT), locations=[location],
                                 partial_fingerprints=_fingerprints(rule_id, location, UNSET, key),
                                 properties=properties))

    for survivor in report.survivors:
        line, length = sources.sites.get(survivor.id, (1, None))
        location = om.Location(physical_location=om.PhysicalLocation(
            artifact_location=om.ArtifactLocation(uri=sources.uri(trace)),
            region=om.Region(start_line=line, end_line=line, start_column=1, end_column=(length or 1) + 1)))
        add("survived", survivor_text(survivor), location, [survivor.id], msgspec.to_builtins(survivor))
    for mutant in report.mutants:
        if mutant.over_block:
            add("over_block", over_block_text(mutant), at_rule(mutant.killed_by), [mutant.id],
                msgspec.to_builtins(mutant))
    for found in report.false_positives:
        add("false_positive", false_positive_text(found), at_rule(found.killed_by),
            [found.rewrite, found.file if found.file is not UNSET else ""], msgspec.to_builtins(found))
    summary = {"score": report.score, "killed": report.killed, "survived": report.survived,
               "equivalent": report.equivalent, "invalid": report.invalid,
               "control": msgspec.to_builtins(report.control)}
    return om.Run(tool=om.Tool(driver=om.ToolComponent(
        name="agent-invariants", semantic_version=__version__, information_uri=INFORMATION_URI, rules=descriptors)),
        results=results, column_kind="utf16CodeUnits", properties={"mutate": summary})


def _output_location(trace: str, sources: Sources, run: int, location_id: int | None = None) -> om.Location:
    """The line of a run's terminal event (its final output) in its trace file; line 1 when unknown."""
    line, length = sources.outputs.get(run, (1, None))
    region = om.Region(start_line=line, end_line=line, start_column=1, end_column=(length or 1) + 1)
    return om.Location(id=location_id, physical_location=om.PhysicalLocation(
        artifact_location=om.ArtifactLocation(uri=sources.uri(trace)), region=region))


class _Builder:
    def __init__(self, sources: Sources, anchor: str) -> None:
        self.sources = sources
        self.anchor = anchor
        self.descriptors: list[om.ReportingDescriptor] = []
        self.index: dict[str, int] = {}
        # the results kept so far, in the order they came, errors and others apart: at most
        # MAX_RESULTS of each, which holds every result `kept_results` may pick (errors first)
        self.errors: list[tuple[int, om.Result]] = []
        self.others: list[tuple[int, om.Result]] = []
        self.total = 0
        self.dropped = False
        self.left_out = 0   # violations the rules counted but did not keep
        self.scenario: tuple[str | None, int | None] = (None, None)   # the trace (its URI) and run number
        self.runs_seen: dict[str | None, int] = {}
        self.hashes: dict[str, int] = {}
        self.contract_ids: set[str] = set()


    # -- descriptors -----------------------------------------------------------------------

    def rule(self, rule_id: str, kind: str, severity: str) -> int:
        if rule_id not in self.index:
            self.contract_ids.add(rule_id)
            self.index[rule_id] = len(self.descriptors)
            self.descriptors.append(_descriptor(rule_id, kind, severity, self.sources.rule_descriptions.get(rule_id)))
        return self.index[rule_id]

    def compare_rule(self, kind: str) -> tuple[str, int]:
        code, text = _COMPARE_RULES[kind]
        rule_id = _own_id(code, self.contract_ids)
        if rule_id not in self.index:
            self.index[rule_id] = len(self.descriptors)
            self.descriptors.append(_plain_descriptor(rule_id, kind, text, "compare", text, text))
        return rule_id, self.index[rule_id]

    # -- results ---------------------------------------------------------------------------

    def enter(self, report: CheckReport) -> None:
        """The results to come are of this report's trace and run (see `key_scenario`)."""
        trace = None if report.trace is UNSET else report.trace
        uri = self.sources.uri(trace) if trace is not None and trace != "-" else trace
        number = None
        if report.run is not UNSET:
            number = self.runs_seen[uri] = self.runs_seen.get(uri, 0) + 1
        self.scenario = (uri, number)

    def key_scenario(self, location: om.Location) -> list[Any] | None:
        """What a fingerprint adds to tell this result from the same one of another trace or run:
        nothing when it sits in its own trace's file and that trace is not an imported run."""
        uri, number = self.scenario
        if number is None and uri == location.physical_location.artifact_location.uri:
            return None
        return [uri, number]

    def check(self, report: CheckReport) -> None:
        self.enter(report)
        for result in report.results:
            self.rule(result.rule_id, result.rule_kind, result.severity)
        for violation in report.violations:
            self.add_violation(violation, report.trace)
        if report.violations_total is not UNSET:   # (the counts would leave out --partial's inconclusive ones)
            self.left_out += report.violations_total - len(report.violations)
        if report.record is not UNSET:
            for finding in report.record.findings:
                self.add_record_finding(finding, report.record.trace)

    def add_record_finding(self, finding: RecordFinding, trace: str) -> None:
        """A finding of `record`, at its event's line in the trace (`record` writes seq n on line n)."""
        rule_id = _own_id(finding.code, self.contract_ids)
        if rule_id not in self.index:
            self.index[rule_id] = len(self.descriptors)
            text = _RECORD_FINDINGS[finding.code]
            help_text = command_manual("record")
            self.descriptors.append(_plain_descriptor(rule_id, finding.code, text, "record", help_text,
                                                      f"# record\n\n{help_text}"))
        line = finding.seq if finding.seq is not UNSET else None
        location, related = self.where(None, trace, line)
        self.append(om.Result(
            rule_id=rule_id, rule_index=self.index[rule_id], level=finding.level,
            message=_message(finding.message, TEXT_LIMIT), locations=[location],
            related_locations=related,
            partial_fingerprints=_fingerprints(rule_id, location, finding.seq, finding.message),
            properties=msgspec.to_builtins(finding)))

    def add_violation(self, violation: Violation, trace: Any, *, baseline_state: str | None = None,
                      prefix: str = "") -> None:
        index = self.rule(violation.rule_id, violation.rule_kind, violation.severity)
        trace_path = None if trace is UNSET else trace
        event_place = _event_place(violation, None if trace_path is None else self.sources.shown(trace_path))
        code = code_of(violation)
        message = (prefix + violation.message + (f" {event_place}." if event_place else "")
                   + (f" [{code}]" if code else ""))
        line = None if violation.line is UNSET else violation.line
        location, related = self.where(violation.rule_id, trace_path, line)
        level = "note" if inconclusive(violation) else violation.severity   # --partial: not failing
        properties = _properties(violation.rule_kind, violation.event_seq, violation.event_index,
                                 violation.evidence, violation)
        if trace_path is not None:
            properties["trace"] = self.sources.uri(trace_path)
        self.append(om.Result(
            rule_id=violation.rule_id, rule_index=index, level=level,
            message=_message(message), locations=[location], related_locations=related,
            partial_fingerprints=_fingerprints(violation.rule_id, location, violation.event_seq,
                                               _stable_evidence(violation), self.key_scenario(location)),
            baseline_state=baseline_state, properties=properties))

    def compare(self, report: CompareReport) -> None:
        self.enter(report.candidate)
        changes = {change.rule_id: change for change in report.rule_changes}
        for result in report.candidate.results:
            self.rule(result.rule_id, result.rule_kind, result.severity)
        first_violation = first_violations(report.candidate.violations)
        for regression in report.regressions:
            if regression.kind in ("new_rule_failure", "contract_violation"):
                violation = first_violation[regression.evidence["rule_id"]]
                self.add_violation(violation, report.candidate.trace,
                                   baseline_state=_baseline_state(regression, changes.get(violation.rule_id)),
                                   prefix=f"{regression.message} First violation: ")
            else:
                self.add_regression(regression, report.candidate.trace)

    def add_regression(self, regression: Regression, trace: Any) -> None:
        rule_id, index = self.compare_rule(regression.kind)
        trace_path = None if trace is UNSET else trace
        line = regression.line if regression.line is not UNSET else None
        message = regression.message
        if line is not None:   # (under the contract anchor, at the compare policy, as those of no event)
            location, related = self.where(None, trace_path, line, self.sources.compare_line)
        else:   # (at the contract: the message names the candidate, or those of a batch would read alike)
            location, related = self.contract_location(self.sources.compare_line), None
            if trace_path is not None:
                message += f" Candidate {self.sources.shown(trace_path)}."
        properties: dict[str, Any] = {"regression": regression.kind, "evidence": regression.evidence}
        if trace_path is not None:
            properties["trace"] = self.sources.uri(trace_path)
        self.append(om.Result(
            rule_id=rule_id, rule_index=index, level="note" if inconclusive(regression) else regression.severity,
            message=_message(message), locations=[location], related_locations=related,
            partial_fingerprints=_fingerprints(rule_id, location, UNSET, regression.evidence,
                                               self.key_scenario(location)),
            baseline_state="new", properties=properties))

    def where(self, rule_id: str | None, trace: str | None, line: int | None,
              contract_line: int | None = None) -> tuple[om.Location, list[om.Location] | None]:
        """The primary location (and related ones) for something at `line` of `trace`; in the
        contract, at the rule's line (or, for what no rule says, `contract_line`)."""
        spot = (trace, line) if trace is not None and trace != "-" and line is not None else None
        if spot is not None and self.anchor != "contract":
            return self.trace_location(*spot), None
        contract = self.contract_location(self.sources.rule_lines.get(rule_id) if rule_id else contract_line)
        related = [self.trace_location(*spot, location_id=1)] if spot is not None else None
        if related and related[0].physical_location.artifact_location.uri.startswith("../"):
            related = None   # (a trace outside the repository, a build artifact: named in the message only)
        return contract, related

    def trace_location(self, trace: str, line: int, location_id: int | None = None) -> om.Location:
        length = self.sources.line_length(trace, line)
        region = om.Region(start_line=line, end_line=line, start_column=1,
                           end_column=(length if length is not None else 0) + 1)
        return om.Location(id=location_id, physical_location=om.PhysicalLocation(
            artifact_location=om.ArtifactLocation(uri=self.sources.uri(trace)), region=region))

    def contract_location(self, line: int | None) -> om.Location:
        return _contract_location(self.sources, line or 1)

    def append(self, result: om.Result) -> None:
        self.total += 1
        line_hash = result.partial_fingerprints["primaryLocationLineHash"]
        repeats = self.hashes[line_hash] = self.hashes.get(line_hash, 0) + 1
        if repeats > 1:
            result.partial_fingerprints["primaryLocationLineHash"] = f"{line_hash[:-2]}:{repeats}"
        kept = self.errors if result.level == "error" else self.others
        if len(kept) < MAX_RESULTS:   # (a later one would never be picked)
            kept.append((self.total, result))

    def kept_results(self) -> list[om.Result]:
        """Every result, or when there are more than MAX_RESULTS, the errors first, then the
        others, each in the order they came; those kept in that order."""
        others = self.others[:max(0, MAX_RESULTS - len(self.errors))]
        self.dropped = self.total > MAX_RESULTS
        return [result for _, result in sorted([*self.errors, *others], key=_arrival)]


def _arrival(entry: tuple[int, om.Result]) -> int:
    return entry[0]


def _first_results(results: list[om.Result], properties: dict[str, Any], order: str) -> list[om.Result]:
    """The first `MAX_RESULTS` results (code scanning rejects a run of more), `properties`
    saying how many there were and which came first (`order`)."""
    if len(results) > MAX_RESULTS:
        properties.update(truncated=True, resultCount=len(results),
                          note=f"Only the first {MAX_RESULTS} results ({order}) are included.")
    return results[:MAX_RESULTS]


def _truncation(builder: _Builder) -> dict[str, Any] | None:
    """The run's properties when results are missing: violations the rules left out, results
    beyond `MAX_RESULTS`; None when nothing is missing."""
    if not (builder.dropped or builder.left_out):
        return None
    properties: dict[str, Any] = {"truncated": True}
    notes = []
    if builder.dropped:
        properties["resultCount"] = builder.total
        notes.append(f"Only the first {MAX_RESULTS} results (errors first) are included.")
    if builder.left_out:
        properties["violationsLeftOut"] = builder.left_out
        notes.append(_left_out_note(builder.left_out))
    properties["note"] = " ".join(notes)
    return properties


def _left_out_note(count: int) -> str:
    return f"{count} more violations were found but not kept (each rule keeps its first; raise --max-violations " \
        "to see them)."


def _unreadable(unreadable: list[BatchFailure]) -> om.Invocation:
    """Traces of a batch that could not be read, as tool notifications of a failed invocation."""
    return om.Invocation(execution_successful=False, tool_execution_notifications=[
        om.Notification(message=_message(failure.error), level="error",
                        locations=[om.Location(physical_location=om.PhysicalLocation(
                            artifact_location=om.ArtifactLocation(uri=to_uri(failure.trace)),
                            region=None if failure.line is UNSET else om.Region(start_line=failure.line)))])
        for failure in unreadable])


def _contract_location(sources: Sources, line: int) -> om.Location:
    """A place in the contract file: the whole of its `line` (the rule's first), as a trace line
    is placed (a region of one column marked only the indentation)."""
    length = sources.contract_line_length(line)
    return om.Location(physical_location=om.PhysicalLocation(
        artifact_location=om.ArtifactLocation(uri=sources.contract_uri or "agent-invariants.json"),
        region=om.Region(start_line=line, end_line=line, start_column=1, end_column=(length or 1) + 1)))


def _plain_descriptor(rule_id: str, name: str, text: str, tag: str, help_text: str,
                      markdown: str) -> om.ReportingDescriptor:
    """A descriptor of something other than a contract rule (a compare regression, a stability
    instability, a lint code): one text for both descriptions, error by default."""
    return om.ReportingDescriptor(
        id=rule_id, name=name, short_description=om.MultiformatMessageString(text=text),
        full_description=om.MultiformatMessageString(text=text),
        help=om.MultiformatMessageString(text=help_text, markdown=markdown),
        default_configuration=om.ReportingConfiguration(level="error"),
        properties={"tags": ["agent-invariants", tag], "precision": "very-high", "problem.severity": "error"})


def _descriptor(rule_id: str, kind: str, severity: str, description: str | None) -> om.ReportingDescriptor:
    summary = summary_line(kind)
    checks = section(kind, "What it checks") or summary
    properties: dict[str, Any] = {"tags": ["agent-invariants", *RULE_KINDS[kind].tags], "precision": "very-high"}
    if "security" in RULE_KINDS[kind].tags and severity == "error":
        properties["security-severity"] = "8.0"
    else:
        properties["problem.severity"] = "error" if severity == "error" else "warning"
    return om.ReportingDescriptor(
        id=rule_id, name=kind,
        short_description=om.MultiformatMessageString(text=_cut(inert(description or f"{kind}: {summary}"))),
        full_description=om.MultiformatMessageString(text=_cut(" ".join(checks.split()))),
        help=om.MultiformatMessageString(text=manual(kind), markdown=f"# {kind}\n\n{manual(kind)}"),
        default_configuration=om.ReportingConfiguration(level=severity),
        properties=properties)


def _cut(text: str) -> str:
    """A rule's text within GitHub's 1,024 characters, counted as UTF-16 units (as JavaScript and
    our contract limits count them: an emoji is two), the stricter reading; cut with `…`."""
    if utf16_len(text) <= _TEXT_LIMIT:
        return text
    kept, units = 0, 0
    while units + (2 if ord(text[kept]) > 0xFFFF else 1) <= _TEXT_LIMIT - 1:
        units += 2 if ord(text[kept]) > 0xFFFF else 1
        kept += 1
    return text[:kept] + "…"


def _event_place(violation: Violation, trace: str | None) -> str:
    """"Event seq 6 at runs/t.jsonl:6", "Whole trace runs/t.jsonl", or "" when nothing is known
    (a whole-trace result sits at its rule in the contract: the message names the trace, or the
    results of a batch's traces would read alike)."""
    if violation.event_seq is UNSET:
        if violation.event_index is not UNSET:
            return ""
        return "Whole trace" if trace is None else f"Whole trace {trace}"
    place = f"Event seq {violation.event_seq}"
    if violation.line is not UNSET and trace is not None:
        place += f" at {trace}:{violation.line}"
    return place


def _baseline_state(regression: Regression, change: RuleChange | None) -> str:
    """`new` when the baseline did not fail the rule; when it did, `unchanged` if it had as many
    violations as the candidate, else `updated`."""
    if regression.kind != "contract_violation" or not regression.evidence.get("baseline_also_failed"):
        return "new"
    if change is not None and change.baseline_violations != change.candidate_violations:
        return "updated"
    return "unchanged"


def _properties(kind: str, seq: Any, index: Any, evidence: Any, violation: Violation | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {"rule_kind": kind}
    if seq is not UNSET:
        properties["event_seq"] = seq
        properties["event_index"] = index
    if evidence is not UNSET:
        properties["evidence"] = evidence
    if violation is not None:
        for name in ("code", "status", "pointer", "related_seqs", "prevented", "caused_by", "span_id"):
            value = getattr(violation, name)
            if value is not UNSET:
                properties[name] = value
    return properties


def _stable_evidence(violation: Violation) -> Any:
    """The evidence a violation's fingerprint hashes: the short form that the report's evidence
    total does not change (`evidence_cut`: the order of keys is no part of a fingerprint)."""
    return violation.evidence if violation.evidence is UNSET else evidence_cut(violation.evidence)


def _message(text: str, limit: int | None = None) -> om.Message:
    """A result's message: its text made inert (escapes for control characters, cut to `limit`),
    and a `](` from trace data escaped (`\\](`), so that a tool name or a reason reading
    `[text](1)` or `[text](https://…)` is no embedded link a viewer would follow (SARIF §3.11.6;
    its successor asks producers to escape so what could be read as one); the backslashes just
    before it are doubled, so the escape is not undone."""
    return om.Message(text=_LINK_END.sub(lambda found: found.group(1) * 2 + "\\]", inert(text, limit)))


_LINK_END = re.compile(r"(\\*)\](?=\()")


def _fingerprints(rule_id: str, location: om.Location, seq: Any, evidence: Any,
                  scenario: list[Any] | None = None) -> dict[str, str]:
    """Stable across runs: rule, file (not its line: comments may move), event seq, evidence, and
    the scenario where the file does not tell it (see `_Builder.key_scenario`)."""
    uri = location.physical_location.artifact_location.uri
    parts = [rule_id, uri, None if seq is UNSET else seq, None if evidence is UNSET else evidence]
    key = msgspec.json.encode(parts if scenario is None else [*parts, scenario], order="sorted",
                              enc_hook=js_number_hook)
    digest = hashlib.sha256(key).hexdigest()
    return {"primaryLocationLineHash": f"{digest[:16]}:1", "agentInvariants/v1": digest[:32]}


def _plain(value: Any) -> Any:
    """sarif-om objects as JSON-ready data: schema property names, in the model's field order,
    leaving out what was not set (None) and what equals the SARIF default (`rank: -1`, ...).
    A dict is a property bag or the fingerprints, JSON data already: it is not walked (a
    violation's evidence may nest as deep as a trace does, past what recursion here could)."""
    if attr.has(type(value)):
        out = {}
        for field in attr.fields(type(value)):
            item = getattr(value, field.name)
            if item is None or item is UNSET or _is_default(field, item):
                continue
            out[field.metadata.get("schema_property_name", field.name)] = _plain(item)
        return out
    if isinstance(value, dict):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot put {type(value).__name__} into SARIF")


# Written even when equal to the SARIF default: every result states its level.
_ALWAYS_WRITTEN = {"level"}


def _is_default(field: attr.Attribute[Any], item: Any) -> bool:
    default: Any = field.default
    if default is attr.NOTHING or field.name in _ALWAYS_WRITTEN:
        return False
    # attr.Factory is a class at run time; attrs' stubs declare it a function, for typed callers
    if isinstance(default, attr.Factory):  # type: ignore[arg-type]
        return not default.takes_self and item == default.factory()
    return type(item) is type(default) and item == default
