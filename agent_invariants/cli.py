"""The `agent-invariants` command: parse options, call the library, render, pick the exit code.

Exit codes: 0 the trace passed (warnings allowed) or the candidate is compatible; 1 an
error-severity violation or a regression; 2 bad input or usage, with one line on stderr and
nothing on stdout or in the `--output` file; 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
No rule logic lives here.

Standard output that cannot be written (a full disk, a closed pipe, started without one) is
exit 2 too, never 1: CI reads 1 as "violations found" (see `output`, which writes reports).
Text from users in messages is escaped (`_safe.inert`), so one problem is one line on stderr.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple, NoReturn, TypeVar

import typer

from agent_invariants import __version__, _signals
from agent_invariants._paths import input_name, inside
from agent_invariants._safe import TEXT_LIMIT, inert, said
from agent_invariants.cli_options import (
    CONVERT_FORMATS,
    DEFAULT_CONTRACTS,
    DEFAULT_MAX_LINE_BYTES,
    Anchor,
    ContractOpt,
    ConvertOutputOpt,
    ConvertProfileOpt,
    ConvertRunOpt,
    Format,
    ImportOptions,
    InputFormat,
    InputFormatOpt,
    JsonFormatOpt,
    MaxLineOpt,
    OutputOpt,
    ProfileOpt,
    RecordProtocol,
    ReportOptions,
    RunOpt,
    SafetyExitOpt,
    SummaryRunOpt,
    UnusedBaseline,
    UnusedCandidate,
    UnusedContract,
    UnusedTrace,
    convert_format,
    not_bad_input,
    with_report_options,
    with_report_options_but,
)
from agent_invariants.cli_values import Command, Group
from agent_invariants.output import (
    CommandError,
    adopt_standard_streams,
    create_new,
    fail,
    refuse_closed_output,
    refuse_input_as_output,
    shown,
    wants_colour,
    write,
)

if TYPE_CHECKING:   # imported where used, so that --help stays fast
    from agent_invariants.contract import Contract, ContractSource
    from agent_invariants.importers.source import ImportedTrace
    from agent_invariants.reader import TraceSource
    from agent_invariants.render.shared import AnyReport
    from agent_invariants.report import CheckReport
    from agent_invariants.timeline import Stamp, Timelines

__all__ = ("app", "main")

PROG = "agent-invariants"
NO_HTML_FORMATS = "<text|pretty|json|sarif|junit|markdown|github>"   # stability's and mutate's: no timelines to draw
LINT_FORMATS = "<text|pretty|json|sarif>"

_Report = TypeVar("_Report")

app = typer.Typer(
    name=PROG,
    cls=Group,
    help="Check recorded AI-agent traces against a contract of operating rules.",
    add_completion=True,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        write(f"{__version__}\n", None)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", "-v", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Check recorded AI-agent traces against a contract of operating rules.

    Exit codes: 0 pass or compatible, 1 violation or regression, 2 bad input or usage.
    """


@app.command(cls=Command)
@with_report_options
def check(
    trace: Annotated[list[str], typer.Option(
        "--trace", "-t", show_default=False, metavar="PATH",
        help="Trace file (JSONL or a JSON array), - for stdin, a folder or a glob; repeat for several.")],
    contract: ContractOpt = None,
    _baseline: UnusedBaseline = None,
    _candidate: UnusedCandidate = None,
    input_format: InputFormatOpt = InputFormat.native,
    run_id: RunOpt = None,
    profile: ProfileOpt = None,
    safety_exit: SafetyExitOpt = None,
    *,
    options: ReportOptions,
) -> None:
    """Check traces against a contract (one trace: its report; several: one section each)."""
    from agent_invariants import batch

    imports = ImportOptions(input_format, run_id, profile)
    contract_path = find_contract(contract, trace)
    run = _Run.start(contract_path, options, safety_exit, imports)
    if not imports.native:
        _finish(_check_imported(run, trace, imports, contract_path), run)
    _refuse_run_option(imports)
    if batch.is_single(trace):
        batch.check_file_name(trace[0])
        refuse_input_as_output(options.output, contract_path, trace[0])
        run.inside_sarif_root(trace[0])
        _finish(_check_one(run, trace[0]), run)
    paths = batch.expand_traces(trace, exclude=[str(contract_path)])
    refuse_input_as_output(options.output, contract_path, *paths)
    run.stamp(*paths)
    run.inside_sarif_root(*paths)
    _finish(_with_progress(len(paths), "checking traces", options.quiet, lambda advance: batch.check_many(
        run.contract, paths, jobs=_processes(options.jobs), max_line_bytes=options.max_line_bytes,
        max_violations=options.max_violations, progress=advance, line_lengths=run.line_lengths,
        strict=options.strict, partial=options.partial, count_safety=run.safety_exit is not None)), run)


def _check_imported(run: _Run, traces: list[str], imports: ImportOptions, contract_path: Path) -> AnyReport:
    from agent_invariants import batch
    from agent_invariants.importers.checks import check_imported

    paths = traces if batch.is_single(traces) else batch.expand_traces(traces, exclude=[str(contract_path)])
    for path in paths:
        batch.check_file_name(path)
    refuse_input_as_output(run.options.output, contract_path, imports.profile, *paths)
    run.stamp(*paths)
    run.inside_sarif_root(*[path for path in paths if path != "-"])
    options = run.options
    return check_imported(run.contract, paths, imports.input_format.value, run=imports.run,
                          profile=_profile(imports), max_line_bytes=options.max_line_bytes,
                          max_violations=options.max_violations, strict=options.strict, partial=options.partial,
                          line_lengths=run.line_lengths, count_safety=run.safety_exit is not None)


def _profile(imports: ImportOptions) -> object:
    """The loaded `--profile`, or None."""
    if imports.profile is None:
        return None
    from agent_invariants.importers.profile import load_profile

    return load_profile(imports.profile)


def _refuse_run_option(imports: ImportOptions) -> None:
    if imports.run is not None or imports.profile is not None:
        fail("--run and --profile are for traces in other formats: add --input-format (auto, otel, openinference, "
             "openai-agents, langsmith, mcp-log)")


def _imported(path: str, imports: ImportOptions, max_line_bytes: int, line_lengths: bool = False) -> ImportedTrace:
    """The one run of `path` to read, imported."""
    from agent_invariants.importers.checks import imported_source

    return imported_source(path, imports.input_format.value, run=imports.run, profile=_profile(imports),
                           max_line_bytes=max_line_bytes, line_lengths=line_lengths)


def _check_one(run: _Run, trace: str) -> CheckReport:
    from agent_invariants.api import check_trace
    from agent_invariants.reader import TraceFile

    options = run.options

    def checking(advance: Callable[[int], None]) -> CheckReport:
        source.on_read = advance
        return check_trace(run.contract, source, max_violations=options.max_violations, strict=options.strict,
                           partial=options.partial, count_safety=run.safety_exit is not None)

    try:   # whatever stops it (a bad trace, Ctrl-C or SIGTERM while the input is copied): no page reads the copy
        spooled = run.spool(trace)
        size = os.path.getsize(trace) if trace != "-" and os.path.isfile(trace) else None
        source = TraceFile(spooled or trace, name=input_name(trace) if spooled else None,
                           max_line_bytes=options.max_line_bytes, line_lengths=run.line_lengths)
        if spooled:
            source.path = trace   # the report names the trace as the user did
        report = _with_progress(size, "reading", options.quiet, checking, unit="bytes")
    except BaseException:
        run.unspool()
        raise
    run.opened(trace, spooled or trace, source.opened)
    return report


@app.command(cls=Command)
@with_report_options
def compare(
    baseline: Annotated[list[str], typer.Option(
        "--baseline", "-b", show_default=False, metavar="PATH",
        help="Trace of the known-good run (or a folder/glob of them, paired with candidates by name).")],
    candidate: Annotated[list[str], typer.Option(
        "--candidate", "-k", show_default=False, metavar="PATH",
        help="Trace of the changed run (or a folder/glob of them); repeat for several.")],
    contract: ContractOpt = None,
    _trace: UnusedTrace = None,
    input_format: InputFormatOpt = InputFormat.native,
    run_id: RunOpt = None,
    profile: ProfileOpt = None,
    *,
    options: ReportOptions,
) -> None:
    """Compare candidate traces with baseline traces under one contract."""
    from agent_invariants import batch
    from agent_invariants.api import compare_traces

    imports = ImportOptions(input_format, run_id, profile)
    if (baseline + candidate).count("-") > 1:
        fail("standard input (-) can be read once: by the baseline or by the candidate")
    contract_path = find_contract(contract, baseline + candidate)
    run = _Run.start(contract_path, options, imports=imports)
    jobs = _processes(options.jobs)
    if not imports.native:
        if not (batch.is_single(baseline) and batch.is_single(candidate)):
            fail("compare --input-format takes one baseline and one candidate file (--run ID for one run of "
                 "each, --run all for every run, paired by run id)")
        refuse_input_as_output(options.output, contract_path, imports.profile, baseline[0], candidate[0])
        run.stamp(baseline[0], candidate[0])
        run.inside_sarif_root(*[path for path in candidate if path != "-"])
        if run_id == "all":
            from agent_invariants.importers.checks import compare_imported

            _finish(compare_imported(run.contract, baseline[0], candidate[0], imports.input_format.value,
                                     profile=_profile(imports), max_line_bytes=options.max_line_bytes,
                                     max_violations=options.max_violations, strict=options.strict,
                                     partial=options.partial, line_lengths=run.line_lengths), run)
        _finish(compare_traces(run.contract, _imported(baseline[0], imports, options.max_line_bytes),
                               _imported(candidate[0], imports, options.max_line_bytes, run.line_lengths),
                               max_violations=options.max_violations, strict=options.strict,
                               partial=options.partial), run)
    _refuse_run_option(imports)
    if batch.is_single(baseline) and batch.is_single(candidate):
        batch.check_file_name(baseline[0])
        batch.check_file_name(candidate[0])
        refuse_input_as_output(options.output, contract_path, baseline[0], candidate[0])
        run.stamp(baseline[0], candidate[0])
        run.inside_sarif_root(candidate[0])   # SARIF points into the candidate only
        _finish(compare_traces(run.contract, baseline[0], candidate[0], max_line_bytes=options.max_line_bytes,
                               max_violations=options.max_violations, jobs=jobs, line_lengths=run.line_lengths,
                               strict=options.strict, partial=options.partial), run)
    exclude = [str(contract_path)]
    baselines = batch.named_traces(baseline, exclude=exclude)
    candidates = batch.named_traces(candidate, exclude=exclude)
    # every trace the folders hold is refused as the output, paired or not: it is a file the user named
    refuse_input_as_output(options.output, contract_path, *[path for _, path in baselines + candidates])
    pairs = batch.pair_traces(baselines, candidates, one_file=batch.is_single(baseline))
    run.stamp(*[path for pair in pairs for path in pair])
    run.inside_sarif_root(*[candidate for _, candidate in pairs])
    _finish(_with_progress(len(pairs), "comparing traces", options.quiet, lambda advance: batch.compare_many(
        run.contract, pairs, jobs=jobs, max_line_bytes=options.max_line_bytes,
        max_violations=options.max_violations, progress=advance, line_lengths=run.line_lengths,
        strict=options.strict, partial=options.partial)), run)


def find_contract(contract: Path | None, traces: Sequence[str] = ()) -> Path:
    """The contract named by `--contract`, or the one `init` writes, found in the current folder.
    Standard input can be read once: by the contract or by a trace, not both."""
    if contract is not None:
        if str(contract) == "-" and "-" in traces:
            fail("the contract and a trace cannot both be read from standard input (-)")
        return contract
    for name in DEFAULT_CONTRACTS:
        if os.path.lexists(name):   # whatever it is: reading it says what is wrong with it
            return Path(name)
    fail(f"no contract: pass --contract PATH, or put {DEFAULT_CONTRACTS[0]} (or .yaml) in the current folder "
         f"(`{PROG} init` writes one)")


_SPOOL_LIMIT = 1 << 30
"""Bytes of a trace read from standard input or a pipe that the HTML page keeps a copy of."""


def load_refusing(source: ContractSource, output: Path | None) -> Contract:
    """Load a contract, refusing an `--output` that is one of the packs it extends (their files
    are known once they are read)."""
    from agent_invariants.contract import load_contract

    packs: list[str] = []
    loaded = load_contract(source, packs_read=packs)
    refuse_input_as_output(output, *(inside(path) or path for path in packs))   # named as the user would
    return loaded


class _Run(NamedTuple):
    """A check or compare run: its contract, and how its report is rendered, written and judged."""

    contract: Contract
    source: ContractSource   # the contract's bytes, read once (SARIF points into them)
    options: ReportOptions
    safety_exit: int | None = None   # check --safety-exit
    imports: ImportOptions | None = None   # how the traces are read (None: native)
    stamps: dict[str, Stamp | None] | None = None   # the traces as they were (HTML: see stamp)
    spooled: list[tuple[int, str | None]] | None = None
    """Copies of standard input (see `spool`): each one's descriptor, and its name while it has one."""

    @classmethod
    def start(cls, contract: Path, options: ReportOptions, safety_exit: int | None = None,
              imports: ImportOptions | None = None) -> _Run:
        """Read and load the contract (once); keep how the report is to be rendered and written."""
        from agent_invariants.contract import read_contract

        source = read_contract(contract)
        loaded = load_refusing(source, options.output)
        if not options.no_lint and loaded.version == 2:   # version 1 is never refused: no need to import lint
            from agent_invariants.lint import refuse_unpassable

            refuse_unpassable(loaded, source.label, source)
        return cls(loaded, source, options, safety_exit, imports, {}, [])

    @property
    def line_lengths(self) -> bool:
        """SARIF regions end at the end of the line: learn each line's length while reading."""
        return self.options.format is Format.sarif

    def stamp(self, *paths: str) -> None:
        """For the HTML page, which reads the traces again: note each file as it is before the
        check, so that a file changed in between loses its timeline instead of drawing it wrong."""
        if self.options.format is Format.html and self.stamps is not None:
            from agent_invariants.timeline import stamp

            self.stamps.update((path, stamp(path)) for path in paths if path != "-")

    def opened(self, trace: str, path: str, identity: tuple[int, int, int, int, int] | None) -> None:
        """For the HTML page: the file a check opened at `path` (the trace, or its copy), as it
        was when the check read it, which is better than any stamp taken before. (A copy is
        named as it was read: `/proc/self/fd/N` leads to a name the copy no longer has.)"""
        if self.options.format is Format.html and self.stamps is not None and identity is not None:
            self.stamps[trace] = (path if path != trace else os.path.realpath(path), *identity)

    def spool(self, trace: str) -> str | None:
        """For the HTML page, which reads the trace again: a trace that can be read only once
        (standard input, a pipe) copied to a private temporary file, which the check then reads,
        and the page after it; None for a file, or for any other format. On Linux the copy has no
        name (it is read at `/proc/self/fd/N`), so that nothing, not even SIGKILL, leaves it on
        disk; elsewhere it is listed in `spooled` as soon as it exists, and whatever stops the
        check (`_check_one`) or follows the page removes it."""
        if self.options.format is not Format.html or self.spooled is None:
            return None
        import tempfile

        from agent_invariants._paths import unnamed
        from agent_invariants.timeline import rereadable

        if rereadable(trace) is None:
            return None
        if trace != "-":
            try:
                stream = open(trace, "rb")   # noqa: SIM115 (closed below)
            except OSError:
                return None   # a folder, a missing file...: the check says what is wrong with it

        name = "standard input" if trace == "-" else shown(Path(trace))
        with _signals.held():   # a signal in between would leave the file unlisted
            handle, path = tempfile.mkstemp(prefix="agent-invariants-trace-", suffix=".jsonl")
            reread = unnamed(handle, path)
            if reread != path:
                os.unlink(path)
            self.spooled.append((handle, path if reread == path else None))
        read = (sys.stdin.buffer if trace == "-" else stream).read
        try:
            with open(handle, "wb", closefd=False) as copy:
                while chunk := read(1 << 20):
                    if copy.tell() + len(chunk) > _SPOOL_LIMIT:
                        fail(f"{name}: over {_SPOOL_LIMIT >> 20} MiB, more than the HTML page keeps a copy of: "
                             "pass the trace as a file")
                    copy.write(chunk)
        except OSError as exc:
            fail(f"{name}: cannot keep a copy for the HTML page: {exc.strerror or exc}")
        finally:
            if trace != "-":
                stream.close()
        return reread

    def unspool(self) -> None:
        for handle, name in self.spooled or ():
            with suppress(OSError):
                os.close(handle)
            if name is not None:
                with suppress(OSError):
                    os.unlink(name)
        if self.spooled:
            self.spooled.clear()   # (closed once: the number may name another file next)

    def inside_sarif_root(self, *paths: str) -> None:
        """With `--sarif-root` and SARIF output, refuse a file outside the root: its URI would
        climb out with `../`, which code scanning cannot place in the repository. With
        `--sarif-anchor contract`, results are at the contract: only it must be inside (traces
        are build artifacts then, wherever they are; SARIF names them in messages only)."""
        from agent_invariants._paths import STDIN

        root = self.options.sarif_root
        if root is None or self.options.format is not Format.sarif:
            return
        if not os.path.isdir(root):   # (a typo: every file would be "outside it")
            fail(f"--sarif-root {shown(root)}: " + ("not a folder" if os.path.exists(root) else "no such folder"))
        from agent_invariants.sources import outside

        contract = "-" if self.source.label == STDIN else self.source.label   # whole-trace results point at it
        anchored = self.options.sarif_anchor is Anchor.contract
        for path in (() if anchored else paths) + (contract,):
            if path != "-" and outside(path, root):
                fail(f"--sarif-root {shown(root)}: {shown(Path(path))} is outside it (SARIF URIs must stay "
                     "inside the repository)")


def _processes(jobs: int | None) -> int:
    return jobs or os.cpu_count() or 1


def _with_progress(total: int | None, label: str, quiet: bool, run: Callable[[Callable[[int], None]], _Report],
                   unit: str = "") -> _Report:
    """`run(advance)` with a progress display on stderr (terminal only), erased afterwards."""
    from agent_invariants.progress import Progress

    progress = Progress(total, label, unit=unit, enabled=not quiet)
    try:
        return run(progress.advance)
    finally:
        progress.close()


def _finish(report: AnyReport, run: _Run) -> NoReturn:
    """Render the whole report, then write it (an error never leaves half a report); name a
    batch's unreadable traces and what the check noticed on stderr; exit with the worst code.
    With --strict a trace that shows a problem is bad input (exit 2): a single report is then
    not written, as for any other bad trace."""
    from agent_invariants.notices import notice_lines
    from agent_invariants.render.shared import checks, failures, is_batch, ok, plural, warning_count

    options = run.options
    lines, refused = notice_lines(checks(report), options.strict, rules_fail=options.strict)
    for line in lines:
        _say(line)
    if refused and not is_batch(report):
        run.unspool()
        raise typer.Exit(2)
    try:
        _render(report, run)
    finally:
        run.unspool()
    for failure in failures(report):
        _say(failure.error)
    too_many = options.max_warnings is not None and warning_count(report) > options.max_warnings
    if too_many:
        _say(f"{plural(warning_count(report), 'warning')}, more than --max-warnings {options.max_warnings}")
    code = 2 if failures(report) or refused else 0 if ok(report) and not too_many else 1
    if code == 1 and run.safety_exit is not None and any(section.safety_error_count for section in checks(report)):
        code = run.safety_exit
    raise typer.Exit(code)



def _render(report: AnyReport, run: _Run, outputs: dict[int, tuple[int, int | None]] | None = None) -> None:
    """Render the whole report in the chosen format and write it (never half of it). `outputs`:
    `record --repeat`'s line of each run's final output."""
    from agent_invariants.render import RenderOptions, renderer
    from agent_invariants.sources import Sources

    options = run.options
    render_options = RenderOptions(
        color=wants_colour(options.color.value, to_terminal=options.output is None),
        sources=Sources(report, run.source, loaded=run.contract, root=options.sarif_root, outputs=outputs),
        anchor=options.sarif_anchor.value, category=options.category,
        detail="quiet" if options.quiet else "verbose" if options.verbose else "normal",
        timelines=_timelines(report, run) if options.format is Format.html else None)
    write(renderer(options.format.value).render(report, render_options), options.output)


def _timelines(report: AnyReport, run: _Run) -> Timelines:
    """The HTML page's timelines: each trace read again (a file; an imported run from its file)."""
    from agent_invariants.timeline import READ_ONCE, collect, reopen_file, rereadable

    options = run.options
    imports = run.imports
    if imports is None or imports.native:
        return collect(report, lambda check, path: reopen_file(check, path, options.max_line_bytes), run.stamps)
    input_format, profile = imports.input_format.value, _profile(imports)

    def reopen_imported(check: CheckReport, path: str | None) -> TraceSource | str:
        from msgspec import UNSET

        from agent_invariants.importers.checks import imported_source

        if path is None:   # an imported trace names its file, unless it came on standard input
            return READ_ONCE
        return rereadable(path) or imported_source(
            path, input_format, run=None if check.run is UNSET else check.run, profile=profile,
            max_line_bytes=options.max_line_bytes)

    return collect(report, reopen_imported, run.stamps)


@app.command(cls=Command)
def validate(
    contract: ContractOpt = None,
    output: OutputOpt = None,
    _format: JsonFormatOpt = Format.json,
    _trace: UnusedTrace = None,
    _baseline: UnusedBaseline = None,
    _candidate: UnusedCandidate = None,
) -> None:
    """Validate a contract and print it normalised (trimmed, keys in schema order), as JSON."""
    from agent_invariants.contract import read_contract
    from agent_invariants.render import json

    contract_path = find_contract(contract)
    refuse_input_as_output(output, contract_path)
    write(json.render(load_refusing(read_contract(contract_path), output)), output)


@app.command(cls=Command)
def lint(
    contract: ContractOpt = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too.")] = False,
    with_interface: Annotated[bool, typer.Option(
        "--interface", help="Also list every path of the final output the rules read, and whether an "
        "output_schema rule requires it.")] = False,
    report_format: Annotated[Format, typer.Option(
        "--format", "-f", metavar=LINT_FORMATS,
        help="Output format: text, json or sarif (results at the contract's lines).")] = Format.text,
    output: OutputOpt = None,
) -> None:
    """Find what a contract's rules imply together: rules no trace can pass, rules that never fire."""
    from agent_invariants.contract import read_contract
    from agent_invariants.lint import lint_contract
    from agent_invariants.render import RenderOptions, renderer
    from agent_invariants.sources import Sources

    if report_format.value not in ("text", "pretty", "json", "sarif"):
        fail(f"--format {report_format.value}: lint reports as text, json or sarif")
    contract_path = find_contract(contract)
    refuse_input_as_output(output, contract_path)
    source = read_contract(contract_path)
    loaded = load_refusing(source, output)
    report = lint_contract(loaded, with_interface=with_interface)
    options = RenderOptions(color=wants_colour("auto", to_terminal=output is None),
                            sources=Sources(contract=source, loaded=loaded))
    write(renderer(report_format.value).render(report, options), output)
    raise typer.Exit(1 if report.errors or (strict and report.findings) else 0)


@app.command(cls=Command)
def summary(
    trace: Annotated[str, typer.Option("--trace", "-t", help="Trace file; - for stdin.", show_default=False,
                                       metavar="PATH")],
    output: OutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
    _format: JsonFormatOpt = Format.json,
    _contract: UnusedContract = None,
    _baseline: UnusedBaseline = None,
    _candidate: UnusedCandidate = None,
    input_format: InputFormatOpt = InputFormat.native,
    run_id: SummaryRunOpt = None,
    profile: ProfileOpt = None,
) -> None:
    """Print counts for a trace, as JSON: tools, approvals, failures, outcomes, completion claims."""
    from agent_invariants.api import summarize_trace
    from agent_invariants.reader import TraceFile
    from agent_invariants.render import json

    imports = ImportOptions(input_format, run_id, profile)
    refuse_input_as_output(output, trace, profile)
    if imports.native:
        _refuse_run_option(imports)
    if run_id == "all":
        from agent_invariants.importers.checks import summarize_imported

        write(json.render(summarize_imported(trace, imports.input_format.value, profile=_profile(imports),
                                             max_line_bytes=max_line_bytes)), output)
        return
    source = TraceFile(trace, max_line_bytes=max_line_bytes) if imports.native \
        else _imported(trace, imports, max_line_bytes)
    write(json.render(summarize_trace(source)), output)


@app.command(cls=Command)
def stability(
    traces: Annotated[list[str], typer.Argument(
        metavar="TRACE", show_default=False, help="Trace files of runs of the same task (- for stdin, once).")],
    contract: Annotated[Path | None, typer.Option(
        "--contract", "-c", show_default=False, metavar="PATH",
        help="Also check each trace against this contract; the worst exit wins.")] = None,
    no_lint: Annotated[bool, typer.Option(
        "--no-lint", help="With --contract: check a version-2 contract even when lint proves that no trace can "
        "pass it.")] = False,
    ignore: Annotated[list[str] | None, typer.Option(
        "--ignore", metavar="PATH", show_default=False,
        help="Leave this output path and every path below it out (e.g. debug, items[].took_ms); repeatable.")] = None,
    maps: Annotated[list[str] | None, typer.Option(
        "--map", metavar="PATH", show_default=False,
        help="Read each object at this path as a map keyed by ids: its members merge at PATH{}; repeatable.")] = None,
    report_format: Annotated[Format, typer.Option(
        "--format", "-f", metavar=NO_HTML_FORMATS,
        help="Output format (sarif and github point at each run's final output).")] = Format.text,
    output: OutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
) -> None:
    """Compare the shape of the final output of several runs: exit 1 when a field comes and goes or
    changes type, 2 when fewer than two runs report an output."""
    from agent_invariants.render import RenderOptions, renderer
    from agent_invariants.sources import Sources
    from agent_invariants.stability import measure_files, reporting_said

    _no_html("stability", report_format)
    if traces.count("-") > 1:
        fail("- (standard input) can be read once: give it as one trace at most")
    if contract is not None and str(contract) == "-" and "-" in traces:
        fail("the contract and a trace cannot both be read from standard input (-)")
    ignored = [_output_path("--ignore", text) for text in ignore or ()]
    mapped = [_output_path("--map", text) for text in maps or ()]
    refuse_input_as_output(output, *traces, *([] if contract is None else [contract]))
    loaded = None
    if contract is not None:
        from agent_invariants.contract import read_contract
        from agent_invariants.lint import refuse_unpassable

        source = read_contract(contract)
        loaded = load_refusing(source, output)
        if not no_lint:
            refuse_unpassable(loaded, source.label, source)
    report, outputs = measure_files(traces, contract=loaded, ignore=ignored, maps=mapped,
                                    max_line_bytes=max_line_bytes)
    options = RenderOptions(color=wants_colour("auto", to_terminal=output is None), sources=Sources(outputs=outputs))
    write(renderer(report_format.value).render(report, options), output)
    if not report.measured:   # (the report says so too, but not on stderr, where a pipeline looks)
        _say(f"not measured: {reporting_said(report)}; 2 are needed")
    verdict = 2 if not report.measured else 0 if report.stable else 1
    checked = max((0 if run.check.passed else 1 for run in report.runs if run.check), default=0)
    raise typer.Exit(max(verdict, checked))


@app.command(cls=Command)
def mutate(
    trace: Annotated[str, typer.Option(
        "--trace", "-t", show_default=False, metavar="PATH", help="A trace that passes the contract (- for stdin).")],
    contract: ContractOpt = None,
    control: Annotated[Path | None, typer.Option(
        "--control", metavar="PATH", show_default=False,
        help="The negative control contract (default: one mutate writes: the run status and a call of each tool).")
    ] = None,
    corpus: Annotated[Path | None, typer.Option(
        "--corpus", metavar="DIR", show_default=False,
        help="More traces that must pass (*.jsonl, *.json): a failure is a false positive.")] = None,
    max_mutants: Annotated[int, typer.Option(
        "--max-mutants", min=1, metavar="N", help="Keep at most this many mutants, evenly spread.")] = 500,
    min_score: Annotated[float | None, typer.Option(
        "--min-score", min=0.0, max=1.0, metavar="SCORE", show_default=False,
        help="Exit 1 when the score is below this (0..1), or when nothing was scored.")] = None,
    reads: Annotated[list[str] | None, typer.Option(
        "--reads", metavar="GLOB", show_default=False,
        help="Tools that only read (their order does not matter to the fingerprint); repeatable.")] = None,
    no_rewrite: Annotated[list[str] | None, typer.Option(
        "--no-rewrite", metavar="NAME", show_default=False,
        help="Leave out a false-positive rewrite: renumber, heartbeat, comments, reorder_keys, json_array, corpus; "
        "repeatable.")] = None,
    fail_on_fp: Annotated[bool, typer.Option(
        "--fail-on-fp", help="Exit 1 when a rewrite that keeps the behaviour fails the contract.")] = False,
    show_mutant: Annotated[str | None, typer.Option(
        "--show-mutant", metavar="ID", show_default=False,
        help="Print this mutant's trace (JSONL) instead of the report, e.g. flip_ok:30.")] = None,
    no_lint: Annotated[bool, typer.Option(
        "--no-lint", help="Use a version-2 contract even when lint proves that no trace can pass it.")] = False,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, metavar="N", show_default=False,
        help="Check mutants in this many processes (default: every core when the mutants hold 200,000 events or "
        "more, else 1).")] = None,
    report_format: Annotated[Format, typer.Option(
        "--format", "-f", metavar=NO_HTML_FORMATS,
        help="Output format (sarif and github point at each survivor's event).")] = Format.text,
    output: OutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
) -> None:
    """Break a passing trace in small ways and report how many of the mutants the contract rejects."""
    _no_html("mutate", report_format)
    from agent_invariants.contract_source import read_contract
    from agent_invariants.mutate import corpus_traces, mutant_text, mutate_files
    from agent_invariants.render import RenderOptions, renderer
    from agent_invariants.sources import Sources

    contract_path = find_contract(contract, [trace])
    others = [path for path in (control, corpus) if path is not None]
    if [str(contract_path), trace, str(control)].count("-") > 1:
        fail("standard input (-) can be read once: by the contract, the trace or the control")
    refuse_input_as_output(output, contract_path, trace, *others, *([] if corpus is None else corpus_traces(corpus)))
    source = read_contract(contract_path)
    load_refusing(source, output)   # (loaded again by mutate: its packs are known once read)
    if show_mutant is not None:
        write(mutant_text(source, trace, show_mutant, lint=not no_lint, max_line_bytes=max_line_bytes).decode(
            "utf-8", "surrogateescape"), output)
        raise typer.Exit(0)
    report, sites = mutate_files(source, trace, control=control, corpus=corpus, max_mutants=max_mutants,
                                 reads=reads or (), skip=no_rewrite or (), jobs=jobs or 0, lint=not no_lint,
                                 max_line_bytes=max_line_bytes)
    options = RenderOptions(color=wants_colour("auto", to_terminal=output is None),
                            sources=Sources(contract=source, sites=sites))
    write(renderer(report_format.value).render(report, options), output)
    if report.score is None:   # (the report says so too, but not on stderr, where a pipeline looks)
        why = "all were equivalent or invalid" if report.mutants else \
            "none was made: the trace gives the operators nothing to change"
        _say(f"warning: {report.trace}: no mutant could be scored ({why})")
    low = min_score is not None and (report.score is None or report.score < min_score)
    raise typer.Exit(1 if low or (fail_on_fp and report.false_positives) else 0)


@app.command(cls=Command)
@with_report_options_but("partial", "jobs")
def record(
    command: Annotated[list[str] | None, typer.Argument(
        metavar="-- CMD", show_default=False, help="The agent's command (after --), run without a shell.")] = None,
    contract: ContractOpt = None,
    fixtures: Annotated[str | None, typer.Option(
        "--fixtures", metavar="PATH", show_default=False,
        help="What the tools answer and how approval requests are decided (see docs/record-protocol.md).")] = None,
    enforce: Annotated[bool, typer.Option(
        "--enforce", help="Deny a call (tool.denied) when an error rule of a safety kind would fail at it.")] = False,
    replay: Annotated[str | None, typer.Option(
        "--replay", metavar="TRACE", show_default=False,
        help="Answer calls as this baseline trace was answered (tool, canonical args, occurrence); the fixtures "
        "answer the rest.")] = None,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="PATH", show_default=False,
        help="The trace to write (default .agent-invariants/runs/<run_id>.jsonl); it must not exist.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace --out (and its .stderr.log) when it is an existing regular file.")] = False,
    fake_clock: Annotated[bool, typer.Option(
        "--fake-clock", help="time = 1970-01-01T00:00:00.000Z + seq ms, run_id fake-run, no measured durations: "
        "a deterministic agent gives a byte-identical trace.")] = False,
    timeout_ms: Annotated[int, typer.Option(
        "--timeout-ms", min=1, max=86_400_000, metavar="MS", help="End the run after this long.")] = 60_000,
    idle_timeout_ms: Annotated[int, typer.Option(
        "--idle-timeout-ms", min=1, max=86_400_000, metavar="MS",
        help="End the run when the agent sends nothing for this long while the harness waits.")] = 30_000,
    safety_exit: Annotated[int, typer.Option(
        "--safety-exit", min=1, max=255, metavar="N", callback=not_bad_input,
        help="Exit N (1 or 3..255) instead of 1 when an error comes from a safety part of a rule or a call was "
        "denied.")] = 1,
    run_id: Annotated[str | None, typer.Option(
        "--run-id", metavar="ID", show_default=False,
        help="The run's id (default: a random one; fake-run with --fake-clock).")
    ] = None,
    input_value: Annotated[str | None, typer.Option(
        "--input", metavar="JSON|@FILE", show_default=False,
        help="The input run.start hands the agent (default: the fixtures' input).")] = None,
    env: Annotated[list[str] | None, typer.Option(
        "--env", metavar="KEY=VALUE|KEY", show_default=False,
        help="Set a variable for the agent, or pass one of record's on after --env-clear; repeatable.")] = None,
    env_clear: Annotated[bool, typer.Option(
        "--env-clear", help="Start the agent with no variables but --env ones and the protocol's.")] = False,
    cwd: Annotated[str | None, typer.Option(
        "--cwd", metavar="DIR", show_default=False, help="The agent's working folder (default: this one).")] = None,
    redact: Annotated[list[str] | None, typer.Option(
        "--redact", metavar="KEY", show_default=False,
        help="Replace the values of this key (any case) with [redacted] in everything written: the trace, the "
        "report, the stderr log; the rules still judge the real values. Repeatable.")] = None,
    mcp: Annotated[list[str] | None, typer.Option(
        "--mcp", metavar="'CMD ARGS'", show_default=False,
        help="A stdio MCP server (one string, split as a shell would, never run by one) that answers the tools no "
        "fixture names; repeatable. Needs the mcp extra.")] = None,
    mcp_start_timeout_ms: Annotated[int, typer.Option(
        "--mcp-start-timeout-ms", min=1, max=86_400_000, metavar="MS",
        help="How long the --mcp servers have to start and list their tools.")] = 10_000,
    mcp_call_timeout_ms: Annotated[int, typer.Option(
        "--mcp-call-timeout-ms", min=1, max=86_400_000, metavar="MS",
        help="How long an --mcp server has to answer one call (then ok: false).")] = 30_000,
    tool_snapshot: Annotated[str | None, typer.Option(
        "--tool-snapshot", metavar="PATH", show_default=False,
        help="Compare the --mcp servers' tools with this snapshot; drift is a record.schema_drift finding.")] = None,
    write_tool_snapshot: Annotated[str | None, typer.Option(
        "--write-tool-snapshot", metavar="PATH", show_default=False,
        help="Save the --mcp servers' tools as a snapshot for --tool-snapshot.")] = None,
    protocol: Annotated[RecordProtocol, typer.Option(
        "--protocol", help="The agent's messages: ours (native), or those of an Agent Doctor adapter "
        "(agentdoctor), mapped both ways.")] = RecordProtocol.native,
    repeat: Annotated[int | None, typer.Option(
        "--repeat", min=1, max=1000, metavar="N", show_default=False,
        help="Run the agent N times, each trace checked, then stability over their final outputs; the worst exit "
        "wins. Needs --out-dir.")] = None,
    out_dir: Annotated[str | None, typer.Option(
        "--out-dir", metavar="DIR", show_default=False, help="With --repeat: where run-<i>.jsonl go.")] = None,
    *,
    options: ReportOptions,
) -> None:
    """Run an agent against fixtures, write its trace as it goes, and check it (POSIX only)."""
    from agent_invariants import record as recording

    if options.partial or options.jobs is not None:
        fail("record chooses --partial itself (when the harness ends the run) and runs one agent at a time: "
             "--partial and --jobs do not apply")
    if (repeat is None) != (out_dir is None):
        fail("--repeat N and --out-dir DIR go together")
    contract_path = find_contract(contract)
    refuse_input_as_output(options.output, contract_path, *(path for path in (fixtures, replay, out) if path))
    if options.output is None:
        refuse_closed_output()
    settings = recording.RecordOptions(
        fixtures=fixtures, replay=replay, out=out, force=force, enforce=enforce, fake_clock=fake_clock,
        timeout_ms=timeout_ms, idle_timeout_ms=idle_timeout_ms, run_id=run_id, input=input_value, env=env or (),
        env_clear=env_clear, cwd=cwd, redact=redact or (), mcp=mcp or (), mcp_start_timeout_ms=mcp_start_timeout_ms,
        mcp_call_timeout_ms=mcp_call_timeout_ms, tool_snapshot=tool_snapshot, write_tool_snapshot=write_tool_snapshot,
        protocol=protocol.value,
        lint=not options.no_lint, strict=options.strict,
        max_violations=options.max_violations, max_line_bytes=options.max_line_bytes,
        report=None if options.output is None else _as_text(options.output))
    if repeat is not None and out_dir is not None:
        from agent_invariants.record import repeat as repeating

        repeated = repeating.repeat(contract_path, command or [], repeat, out_dir, settings, warn=_say)
        first = repeated.runs[0]
        _say_notices(repeated.report)
        _render(repeated.report, _recorded(_Run(first.loaded, first.contract, options, stamps={}), repeated.report),
                outputs=repeated.output_lines)
        raise typer.Exit(repeating.repeat_exit_code(repeated, safety_exit))
    recorded = recording.record(contract_path, command or [], settings, warn=_say)
    _say_notices(recorded.report)
    _render(recorded.report, _recorded(_Run(recorded.loaded, recorded.contract, options, stamps={}), recorded.report))
    raise typer.Exit(recording.exit_code(recorded, safety_exit))


def _as_text(output: Path) -> str:
    """An `--output` path as text, as written when that made it name a folder (`reports/`)."""
    from agent_invariants.output import NamedFolder

    return output.written if isinstance(output, NamedFolder) else str(output)


def _say_notices(report: AnyReport) -> None:
    """What the check of a recorded run noticed (No silent passes), on stderr as `check` says it:
    `record` judges its trace with the same evaluator, and a run no rule could judge passes
    silently otherwise. (With --strict such a rule already failed the run.)"""
    from agent_invariants.notices import notice_lines
    from agent_invariants.render.shared import checks

    for line in notice_lines(checks(report), strict=False)[0]:
        _say(line)


def _recorded(run: _Run, report: AnyReport) -> _Run:
    """`run`, with the traces `record` wrote stamped as they are now, for the HTML page (which
    reads them again): a trace changed after this loses its timeline."""
    from msgspec import UNSET

    from agent_invariants.render.shared import checks

    run.stamp(*[check.trace for check in checks(report) if check.trace is not UNSET])
    return run


def _no_html(command: str, report_format: Format) -> None:
    """The HTML page draws the timelines of check and compare reports; other reports have none."""
    if report_format is Format.html:
        fail(f"--format html: {command} reports as text, pretty, json, sarif, junit, markdown or github "
             "(html is for check, compare and record)")


def _output_path(option: str, text: str) -> tuple[str | int, ...]:
    from agent_invariants.stability import parse_path

    try:
        return parse_path(text)
    except ValueError as exc:
        fail(f"{option} {shown(text)}: not an output path: {exc}")


@app.command(cls=Command)
def convert(
    inputs: Annotated[list[str], typer.Argument(metavar="IN", show_default=False,
                                                help="Files to convert (- for stdin).")],
    source_format: Annotated[str, typer.Option(
        "--from", metavar=f"<{'|'.join(CONVERT_FORMATS)}>", callback=convert_format,
        help="Their format: auto (told from the first record), otel, openinference, openai-agents, "
        "langsmith, mcp-log.")] = "auto",
    run_id: ConvertRunOpt = None,
    profile: ConvertProfileOpt = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out-dir", metavar="DIR", show_default=False,
        help="Write each run to DIR/<run id>.jsonl (needed when the input holds several runs and no --run).")] = None,
    output: ConvertOutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
) -> None:
    """Convert traces of other tools (OpenTelemetry, OpenInference, the OpenAI Agents SDK, LangSmith, MCP logs)
    to native JSONL."""
    from agent_invariants.importers.convert import convert_files

    if out_dir is not None and output is not None:
        fail("--out-dir and --output cannot be used together: the runs go to DIR, one file each")
    if inputs.count("-") > 1:
        fail("- (standard input) can be read once: give it as one input at most")
    refuse_input_as_output(output, profile, *inputs)
    text, note = convert_files(inputs, source_format, run=run_id,
                               profile=_profile(ImportOptions(InputFormat(source_format), run_id, profile)),
                               max_line_bytes=max_line_bytes, out_dir=out_dir)
    if text is not None:
        write(text, output)
    _say(note)


@app.command(cls=Command)
def explain(kind: Annotated[str | None, typer.Argument(
        metavar="KIND", help="A rule kind (e.g. require_approval), or match, lint, mutate, stability, record.")] = None,
            ) -> None:
    """List the rule kinds, or print one kind's manual (fields, semantics, examples) or the match grammar."""
    from agent_invariants.explain import explain_kind, list_kinds

    if kind is None:
        write(list_kinds(), None)
        return
    try:
        write(explain_kind(kind), None)
    except KeyError as exc:
        fail(exc.args[0])


@app.command("version", hidden=True, cls=Command)
def version_command() -> None:
    """Print the version."""
    write(f"{__version__}\n", None)


@app.command("help", hidden=True, cls=Command)
def help_command(ctx: typer.Context) -> None:
    """Show the usage."""
    write((ctx.parent.get_help() if ctx.parent else ctx.get_help()) + "\n", None)


@app.command(cls=Command)
def init(directory: Annotated[Path, typer.Argument(
        metavar="DIR", help="Where to write the files.")] = Path(".")) -> None:
    """Write a sample contract (agent-invariants.json) and a passing trace (agent-trace.jsonl)."""
    from importlib.resources import files

    samples = files("agent_invariants") / "samples"
    targets = [directory / "agent-invariants.json", directory / "agent-trace.jsonl"]
    create_new([(target, (samples / target.name).read_text(encoding="utf-8")) for target in targets], directory)
    import shlex

    contract, trace = (shown(target) for target in targets)
    command = shlex.join([PROG, "check", "--contract", contract, "--trace", trace])   # (to paste: `my agent/`)
    write(f"Created {contract}\nCreated {trace}\nTry: {command}\n", None)


@app.command(cls=Command, context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                            "help_option_names": ["-h", "--help"]})
def serve() -> None:
    """Run the MCP server on standard input and output (needs: pip install 'agent-invariants[mcp]')."""
    from agent_invariants import mcp_server

    if not mcp_server.sdk_available():
        fail("the MCP server needs the mcp extra: pip install 'agent-invariants[mcp]'")
    if sys.__stdin__ is None or sys.__stdout__ is None:
        fail("the MCP server needs standard input and output; one of them is closed")
    sys.stdin, sys.stdout = sys.__stdin__, sys.__stdout__   # the transport claims the real descriptors
    try:
        mcp_server.serve()
    except OSError as exc:   # a reply could not be written, not for a client that left (a full disk)
        fail(f"standard output: cannot write: {exc.strerror or exc}")


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the console script."""
    from agent_invariants.errors import InputError

    _signals.raise_on_terminate()
    adopt_standard_streams()
    args = sys.argv[1:] if argv is None else argv
    empty = _empty_argument(args)
    if empty is not None:
        _die(empty)
    single = _single_command(args[0]) if args else None
    try:
        if single is not None:   # the one command asked for: typer builds no other command's options
            code = single(args=args[1:], prog_name=f"{PROG} {args[0]}", standalone_mode=False)
        else:
            code = app(args=args, prog_name=PROG, standalone_mode=False)   # Ctrl-C inside: typer returns 130
        sys.stdout.flush()
    except (InputError, CommandError) as exc:
        _die(str(exc))
    except KeyboardInterrupt:
        _stop(_signals.INTERRUPTED)
    except _signals.Terminated:
        _stop(_signals.TERMINATED)
    except MemoryError:   # (nothing half-written: reports and traces are written whole, or not at all)
        _die("out of memory: the input needs more than this machine allows (the README's Performance section "
             "says what each check keeps; a lower --max-violations keeps fewer violations)")
    except Exception as exc:  # typer's (click's) usage errors; their classes differ between versions
        _usage_error(exc)
    if code == _signals.INTERRUPTED:
        _stop(code)
    sys.exit(code if isinstance(code, int) else 0)


def _empty_argument(args: Sequence[str]) -> str | None:
    """The problem of an empty argument before `--` (an unset shell variable, `-o ""`), or None.
    No option or argument of ours takes an empty value, and as a path it would read as the
    current folder (`.: is a directory`) or as no name at all (`: no such file`). After `--`,
    the arguments are the agent's (`record`)."""
    for position, arg in enumerate(args):
        if arg == "--":
            return None
        option, equals, value = arg.partition("=")
        if option[:2] == "--" and equals and not value:   # `--out=`, not `--env=A=`
            return f"{inert(option, TEXT_LIMIT)}: the value is empty"
        if arg == "":
            after = f" after {inert(args[position - 1], TEXT_LIMIT)}" if position else ""
            return f"an empty argument{after} (an unset variable?): name a file or value"
    return None


def _single_command(name: str) -> typer.Typer | None:
    """An app holding only the command `name`, or None when `name` is no command (an option, a
    typo: the whole app then answers, with its usage and suggestions). Typer builds the options of
    every command of an app before running one: `record` alone has thirty of them."""
    found = [info for info in app.registered_commands if not info.hidden and _command_name(info) == name]
    if len(found) != 1:
        return None
    single = typer.Typer(name=PROG, add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False,
                         context_settings={"help_option_names": ["-h", "--help"]})
    single.registered_commands.append(found[0])
    return single


def _command_name(info: typer.models.CommandInfo) -> str:
    return info.name or (info.callback.__name__.replace("_", "-") if info.callback else "")


def _stop(code: int) -> NoReturn:
    """Exit at once after Ctrl-C or SIGTERM. Everything that needed cleaning up was cleaned up on
    the way here (temporary files, batch workers); waiting for Python's own exit handlers could
    hang on a worker-pool thread that a terminated worker left waiting (see _signals.end_workers)."""
    with suppress(CommandError):
        sys.stdout.flush()
    os._exit(code)


def _usage_error(exc: Exception) -> NoReturn:
    """Report a command-line usage problem raised by typer/click on one line, or re-raise a bug."""
    context = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:
        try:
            write(context.get_help() + "\n", None)
        except CommandError as failure:
            _die(str(failure))
        sys.exit(0)
    if type(exc).__name__ == "Abort":
        _die("aborted")
    format_message = getattr(exc, "format_message", None)
    if not callable(format_message):
        raise exc
    hint = f" (try '{context.command_path} --help')" if context is not None else ""
    if getattr(exc, "possibilities", None) and context is not None:   # an unknown option: suggest what --help shows
        shown = {name for param in context.command.get_params(context) if not getattr(param, "hidden", False)
                 for name in (*param.opts, *param.secondary_opts)}
        exc.possibilities = [name for name in exc.possibilities if name in shown]   # type: ignore[attr-defined]
    message = " ".join(format_message().split()).replace("Value error, ", "")   # typer's validation wording
    _die(inert(message, TEXT_LIMIT) + hint)


def _die(message: str) -> NoReturn:
    """Report bad input or usage (one line per problem) and exit 2."""
    with suppress(CommandError):   # the message below matters more
        sys.stdout.flush()
    _say(message)
    sys.exit(2)


def _say(message: str) -> None:
    """Print `message` on stderr, each of its lines as one `agent-invariants: ` line, escaped
    (whoever built it should have escaped it already; this is the last line of defence).

    Written straight to the descriptor: if stderr is closed or failing there is nowhere to say
    it, and nothing must stay buffered to fail again at exit (the exit code would change)."""
    data = memoryview(said(message).encode("utf-8"))
    try:
        while data:
            data = data[os.write(2, data):]
    except OSError:
        pass
