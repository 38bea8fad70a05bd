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
from collections.abc import Callable
from contextlib import suppress
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple, NoReturn, TypeVar

import typer

from agent_invariants import __version__, _signals
from agent_invariants._safe import LINE_LIMIT, TEXT_LIMIT, inert
from agent_invariants.output import (
    CommandError,
    adopt_standard_streams,
    colour_terminal,
    create_new,
    fail,
    refuse_input_as_output,
    shown,
    write,
)

if TYPE_CHECKING:   # imported where used, so that --help stays fast
    from agent_invariants.contract import Contract, ContractSource
    from agent_invariants.render.shared import AnyReport
    from agent_invariants.report import CheckReport

__all__ = ("app", "main")

PROG = "agent-invariants"
DEFAULT_MAX_LINE_BYTES = 1 << 20
DEFAULT_MAX_VIOLATIONS = 1000   # rules.base.DEFAULT_MAX_VIOLATIONS, not imported: --help stays fast

_Report = TypeVar("_Report")


# (str, Enum) rather than StrEnum: their str() differs, and typer prints and parses these.
class Format(str, Enum):  # noqa: UP042
    text = "text"
    pretty = "pretty"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    markdown = "markdown"


class Anchor(str, Enum):  # noqa: UP042   (as Format)
    trace = "trace"
    contract = "contract"


app = typer.Typer(
    name=PROG,
    help="Check recorded AI-agent traces against a contract of operating rules.",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

ContractOpt = Annotated[Path, typer.Option("--contract", "-c", help="Contract file (JSON).", show_default=False)]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="Write the report to this file instead of stdout (a regular file is replaced "
    "atomically, a device or FIFO written in place; an input file is refused).",
    show_default=False)]
MaxLineOpt = Annotated[int, typer.Option(
    "--max-line-bytes", min=1, help="Longest JSONL line accepted, in bytes.")]
MaxViolationsOpt = Annotated[int, typer.Option(
    "--max-violations", min=0, help="Violations kept and shown per rule (the first ones); the counts "
    "and the exit code include every one. 0: no limit (memory then grows with the violations).")]
SarifRootOpt = Annotated[Path | None, typer.Option(
    "--sarif-root", help="SARIF: make file URIs relative to this folder (default: the current one).",
    show_default=False)]
SarifAnchorOpt = Annotated[Anchor, typer.Option(
    "--sarif-anchor", help="SARIF: locate results in the trace file, or at the rule in the contract "
    "(for traces that are build artifacts, not committed files).")]
CategoryOpt = Annotated[str | None, typer.Option(
    "--category", help="SARIF: automationDetails.id, to keep several uploads apart.", show_default=False)]


# Options a command accepts and ignores. The Node tool gives every command one shared option set
# (--contract, --trace, --baseline, --candidate, --format, --output), so scripts written for it
# may pass options a command does not use; they must not turn into errors.
UnusedContract = Annotated[str | None, typer.Option("--contract", hidden=True, show_default=False)]
UnusedTrace = Annotated[str | None, typer.Option("--trace", hidden=True, show_default=False)]
UnusedBaseline = Annotated[str | None, typer.Option("--baseline", hidden=True, show_default=False)]
UnusedCandidate = Annotated[str | None, typer.Option("--candidate", hidden=True, show_default=False)]


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


JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, help="Processes to use: traces checked at once when there are several, or a large "
    "baseline checked beside its candidate (default: the number of CPUs).",
    show_default=False)]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display on stderr.")]


@app.command()
def check(
    contract: ContractOpt,
    trace: Annotated[list[str], typer.Option(
        "--trace", "-t", show_default=False, metavar="PATH",
        help="Trace file (JSONL or a JSON array), - for stdin, a folder or a glob; repeat for several.")],
    format: FormatOpt = Format.text,
    output: OutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
    max_violations: MaxViolationsOpt = DEFAULT_MAX_VIOLATIONS,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
    sarif_anchor: SarifAnchorOpt = Anchor.trace,
    category: CategoryOpt = None,
    _baseline: UnusedBaseline = None,
    _candidate: UnusedCandidate = None,
) -> None:
    """Check traces against a contract (one trace: its report; several: one section each)."""
    from agent_invariants import batch

    run = _Run.start(contract, format, output, sarif_root, sarif_anchor, category)
    if batch.is_single(trace):
        batch.check_file_name(trace[0])
        refuse_input_as_output(output, contract, trace[0])
        _finish(_check_one(run.contract, trace[0], max_line_bytes, max_violations, quiet, run.line_lengths), run)
    paths = batch.expand_traces(trace, exclude=[str(contract)])
    refuse_input_as_output(output, contract, *paths)
    _finish(_with_progress(len(paths), "checking traces", quiet, lambda advance: batch.check_many(
        run.contract, paths, jobs=_processes(jobs), max_line_bytes=max_line_bytes,
        max_violations=max_violations, progress=advance, line_lengths=run.line_lengths)), run)


def _check_one(contract: Contract, trace: str, max_line_bytes: int, max_violations: int, quiet: bool,
               line_lengths: bool) -> CheckReport:
    from agent_invariants.api import check_trace
    from agent_invariants.reader import TraceFile

    size = os.path.getsize(trace) if trace != "-" and os.path.isfile(trace) else None
    return _with_progress(size, "reading", quiet, lambda advance: check_trace(
        contract, TraceFile(trace, max_line_bytes=max_line_bytes, on_read=advance, line_lengths=line_lengths),
        max_violations=max_violations), unit="bytes")


@app.command()
def compare(
    contract: ContractOpt,
    baseline: Annotated[list[str], typer.Option(
        "--baseline", "-b", show_default=False, metavar="PATH",
        help="Trace of the known-good run (or a folder/glob of them, paired with candidates by name).")],
    candidate: Annotated[list[str], typer.Option(
        "--candidate", "-k", show_default=False, metavar="PATH",
        help="Trace of the changed run (or a folder/glob of them); repeat for several.")],
    format: FormatOpt = Format.text,
    output: OutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
    max_violations: MaxViolationsOpt = DEFAULT_MAX_VIOLATIONS,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
    sarif_anchor: SarifAnchorOpt = Anchor.trace,
    category: CategoryOpt = None,
    _trace: UnusedTrace = None,
) -> None:
    """Compare candidate traces with baseline traces under one contract."""
    from agent_invariants import batch
    from agent_invariants.api import compare_traces

    run = _Run.start(contract, format, output, sarif_root, sarif_anchor, category)
    if batch.is_single(baseline) and batch.is_single(candidate):
        batch.check_file_name(baseline[0])
        batch.check_file_name(candidate[0])
        refuse_input_as_output(output, contract, baseline[0], candidate[0])
        _finish(compare_traces(run.contract, baseline[0], candidate[0], max_line_bytes=max_line_bytes,
                               max_violations=max_violations, jobs=_processes(jobs), line_lengths=run.line_lengths),
                run)
    exclude = [str(contract)]
    pairs = batch.pair_traces(batch.named_traces(baseline, exclude=exclude),
                              batch.named_traces(candidate, exclude=exclude))
    refuse_input_as_output(output, contract, *[path for pair in pairs for path in pair])
    _finish(_with_progress(len(pairs), "comparing traces", quiet, lambda advance: batch.compare_many(
        run.contract, pairs, jobs=_processes(jobs), max_line_bytes=max_line_bytes,
        max_violations=max_violations, progress=advance, line_lengths=run.line_lengths)), run)


class _Run(NamedTuple):
    """A check or compare run: its contract, and how its report is rendered and written."""

    contract: Contract
    source: ContractSource   # the contract's bytes, read once (SARIF points into them)
    format: Format
    output: Path | None
    sarif_root: Path | None
    sarif_anchor: Anchor
    category: str | None

    @classmethod
    def start(cls, contract: Path, format: Format, output: Path | None, sarif_root: Path | None,
              sarif_anchor: Anchor, category: str | None) -> _Run:
        """Read and load the contract (once); keep how the report is to be rendered and written."""
        from agent_invariants.contract import load_contract, read_contract

        source = read_contract(contract)
        return cls(load_contract(source), source, format, output, sarif_root, sarif_anchor, category)

    @property
    def line_lengths(self) -> bool:
        """SARIF regions end at the end of the line: learn each line's length while reading."""
        return self.format is Format.sarif


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
    batch's unreadable traces on stderr; exit with the worst code."""
    from agent_invariants.render import RenderOptions, renderer
    from agent_invariants.render.shared import failures, ok
    from agent_invariants.sources import Sources

    options = RenderOptions(color=run.output is None and colour_terminal(),
                            sources=Sources(report, run.source, loaded=run.contract, root=run.sarif_root),
                            anchor=run.sarif_anchor.value, category=run.category)
    write(renderer(run.format.value).render(report, options), run.output)
    for failure in failures(report):
        _say(failure.error)
    raise typer.Exit(2 if failures(report) else 0 if ok(report) else 1)


@app.command()
def validate(
    contract: ContractOpt,
    format: FormatOpt = Format.json,
    output: OutputOpt = None,
    _trace: UnusedTrace = None,
    _baseline: UnusedBaseline = None,
    _candidate: UnusedCandidate = None,
) -> None:
    """Validate a contract and print it normalised (trimmed, keys in schema order), as JSON."""
    from agent_invariants.contract import load_contract
    from agent_invariants.render import json

    refuse_input_as_output(output, contract)
    write(json.render(load_contract(contract)), output)


@app.command()
def summary(
    trace: Annotated[str, typer.Option("--trace", "-t", help="Trace file; - for stdin.", show_default=False)],
    format: FormatOpt = Format.json,
    output: OutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
    _contract: UnusedContract = None,
    _baseline: UnusedBaseline = None,
    _candidate: UnusedCandidate = None,
) -> None:
    """Print counts for a trace, as JSON: tools, approvals, failures, outcomes, completion claims."""
    from agent_invariants.api import summarize_trace
    from agent_invariants.reader import TraceFile
    from agent_invariants.render import json

    refuse_input_as_output(output, trace)
    write(json.render(summarize_trace(TraceFile(trace, max_line_bytes=max_line_bytes))), output)


@app.command()
def explain(kind: Annotated[str | None, typer.Argument(help="A rule kind, e.g. require_approval.")] = None) -> None:
    """List the rule kinds, or print one kind's manual (fields, semantics, examples)."""
    from agent_invariants.explain import explain_kind, list_kinds

    if kind is None:
        write(list_kinds(), None)
        return
    try:
        write(explain_kind(kind), None)
    except KeyError as exc:
        fail(exc.args[0])


@app.command("version", hidden=True)
def version_command() -> None:
    """Print the version."""
    write(f"{__version__}\n", None)


@app.command("help", hidden=True)
def help_command(ctx: typer.Context) -> None:
    """Show the usage."""
    write((ctx.parent.get_help() if ctx.parent else ctx.get_help()) + "\n", None)


@app.command()
def init(directory: Annotated[Path, typer.Argument(help="Where to write the files.")] = Path(".")) -> None:
    """Write a sample contract (agent-invariants.json) and a passing trace (agent-trace.jsonl)."""
    from importlib.resources import files

    samples = files("agent_invariants") / "samples"
    targets = [directory / "agent-invariants.json", directory / "agent-trace.jsonl"]
    create_new([(target, (samples / target.name).read_text(encoding="utf-8")) for target in targets], directory)
    contract, trace = (shown(target) for target in targets)
    write(f"Created {contract}\nCreated {trace}\nTry: {PROG} check --contract {contract} --trace {trace}\n", None)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def serve() -> None:
    """Run the MCP server on standard input and output (needs: pip install 'agent-invariants[mcp]')."""
    from agent_invariants import mcp_server

    if not mcp_server.sdk_available():
        fail("the MCP server needs the mcp extra: pip install 'agent-invariants[mcp]'")
    if sys.__stdin__ is None or sys.__stdout__ is None:
        fail("the MCP server needs standard input and output; one of them is closed")
    sys.stdin, sys.stdout = sys.__stdin__, sys.__stdout__   # the transport claims the real descriptors
    mcp_server.serve()


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the console script."""
    from agent_invariants.errors import InputError

    _signals.raise_on_terminate()
    adopt_standard_streams()
    try:
        code = app(args=argv, prog_name=PROG, standalone_mode=False)   # Ctrl-C inside: typer returns 130
        sys.stdout.flush()
    except (InputError, CommandError) as exc:
        _die(str(exc))
    except KeyboardInterrupt:
        _stop(_signals.INTERRUPTED)
    except _signals.Terminated:
        _stop(_signals.TERMINATED)
    except Exception as exc:  # typer's (click's) usage errors; their classes differ between versions
        _usage_error(exc)
    if code == _signals.INTERRUPTED:
        _stop(code)
    sys.exit(code if isinstance(code, int) else 0)


def _stop(code: int) -> NoReturn:
    """Exit at once after Ctrl-C or SIGTERM. Everything that needed cleaning up was cleaned up on
    the way here (temporary files, batch workers); waiting for Python's own exit handlers could
    hang on a worker-pool thread that a terminated worker left waiting (see batch._end_workers)."""
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
    _die(inert(" ".join(format_message().split()), TEXT_LIMIT) + hint)


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
    lines = "".join(f"{PROG}: {inert(line, LINE_LIMIT)}\n" for line in message.split("\n"))
    data = memoryview(lines.encode("utf-8"))
    try:
        while data:
            data = data[os.write(2, data):]
    except OSError:
        pass
