"""The `agent-invariants` command: parse options, call the library, render, pick the exit code.

Exit codes: 0 the trace passed (warnings allowed) or the candidate is compatible; 1 an
error-severity violation or a regression; 2 bad input or usage, with one line on stderr and
nothing on stdout or in the `--output` file. No rule logic lives here.
"""
from __future__ import annotations

import os
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, NamedTuple, NoReturn, Optional

import typer

from agent_invariants import __version__

__all__ = ("app", "main")

PROG = "agent-invariants"
DEFAULT_MAX_LINE_BYTES = 1 << 20


class Format(str, Enum):
    text = "text"
    pretty = "pretty"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    markdown = "markdown"


class Anchor(str, Enum):
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
OutputOpt = Annotated[Optional[Path], typer.Option(
    "--output", "-o", help="Write the report to this file instead of stdout (replaced atomically).",
    show_default=False)]
MaxLineOpt = Annotated[int, typer.Option(
    "--max-line-bytes", min=1, help="Longest JSONL line accepted, in bytes.")]
SarifRootOpt = Annotated[Optional[Path], typer.Option(
    "--sarif-root", help="SARIF: make file URIs relative to this folder (default: the current one).",
    show_default=False)]
SarifAnchorOpt = Annotated[Anchor, typer.Option(
    "--sarif-anchor", help="SARIF: locate results in the trace file, or at the rule in the contract "
    "(for traces that are build artifacts, not committed files).")]
CategoryOpt = Annotated[Optional[str], typer.Option(
    "--category", help="SARIF: automationDetails.id, to keep several uploads apart.", show_default=False)]


def _unused(name: str):
    """An option this command accepts and ignores. The Node tool gives every command one shared
    option set (--contract, --trace, --baseline, --candidate, --format, --output), so scripts
    written for it may pass options a command does not use; they must not turn into errors."""
    return Annotated[Optional[str], typer.Option(name, hidden=True, show_default=False)]


def _version(value: bool) -> None:
    if value:
        print(__version__)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", "-v", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Check recorded AI-agent traces against a contract of operating rules.

    Exit codes: 0 pass or compatible, 1 violation or regression, 2 bad input or usage.
    """


JobsOpt = Annotated[Optional[int], typer.Option(
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
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
    sarif_anchor: SarifAnchorOpt = Anchor.trace,
    category: CategoryOpt = None,
    _baseline: _unused("--baseline") = None,
    _candidate: _unused("--candidate") = None,
) -> None:
    """Check traces against a contract (one trace: its report; several: one section each)."""
    from agent_invariants import batch
    from agent_invariants.contract import load_contract

    loaded = load_contract(contract)
    sarif = _SarifOptions(contract, loaded, sarif_root, sarif_anchor, category)
    if batch.is_single(trace):
        report = _check_one(loaded, trace[0], max_line_bytes, quiet)
        _emit(report, format, output, sarif)
        raise typer.Exit(0 if report.passed else 1)
    paths = batch.expand_traces(trace, exclude=[str(contract)])
    report = _with_progress(len(paths), "checking traces", quiet, lambda advance: batch.check_many(
        loaded, paths, jobs=jobs or os.cpu_count() or 1, max_line_bytes=max_line_bytes, progress=advance))
    _finish_batch(report, report.passed, format, output, sarif)


def _check_one(contract, trace: str, max_line_bytes: int, quiet: bool):
    from agent_invariants.engine import check_trace
    from agent_invariants.events import TraceFile

    size = os.path.getsize(trace) if trace != "-" and os.path.isfile(trace) else None
    return _with_progress(size, "reading", quiet, lambda advance: check_trace(
        contract, TraceFile(trace, max_line_bytes=max_line_bytes, on_read=advance)), unit="bytes")


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
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    sarif_root: SarifRootOpt = None,
    sarif_anchor: SarifAnchorOpt = Anchor.trace,
    category: CategoryOpt = None,
    _trace: _unused("--trace") = None,
) -> None:
    """Compare candidate traces with baseline traces under one contract."""
    from agent_invariants import batch
    from agent_invariants.compare import compare_traces
    from agent_invariants.contract import load_contract

    loaded = load_contract(contract)
    sarif = _SarifOptions(contract, loaded, sarif_root, sarif_anchor, category)
    if batch.is_single(baseline) and batch.is_single(candidate):
        report = compare_traces(loaded, baseline[0], candidate[0], max_line_bytes=max_line_bytes,
                                jobs=jobs or os.cpu_count() or 1)
        _emit(report, format, output, sarif)
        raise typer.Exit(0 if report.compatible else 1)
    exclude = [str(contract)]
    pairs = batch.pair_traces(batch.named_traces(baseline, exclude=exclude),
                              batch.named_traces(candidate, exclude=exclude))
    report = _with_progress(len(pairs), "comparing traces", quiet, lambda advance: batch.compare_many(
        loaded, pairs, jobs=jobs or os.cpu_count() or 1, max_line_bytes=max_line_bytes, progress=advance))
    _finish_batch(report, report.compatible, format, output, sarif)


def _with_progress(total, label: str, quiet: bool, run, unit: str = ""):
    """`run(advance)` with a progress display on stderr (terminal only), erased afterwards."""
    from agent_invariants.progress import Progress

    progress = Progress(total, label, unit=unit, enabled=not quiet)
    try:
        return run(progress.advance)
    finally:
        progress.close()


def _finish_batch(report, good: bool, format: Format, output: Path | None, sarif: _SarifOptions) -> NoReturn:
    """Write a batch report, name its unreadable traces on stderr, exit with the worst code."""
    _emit(report, format, output, sarif)
    for failure in report.failures:
        print(f"{PROG}: {failure.error}", file=sys.stderr)
    raise typer.Exit(2 if report.failures else 0 if good else 1)


@app.command()
def validate(
    contract: ContractOpt,
    format: FormatOpt = Format.json,
    output: OutputOpt = None,
    _trace: _unused("--trace") = None,
    _baseline: _unused("--baseline") = None,
    _candidate: _unused("--candidate") = None,
) -> None:
    """Validate a contract and print it normalised (trimmed, keys in schema order), as JSON."""
    from agent_invariants.contract import load_contract
    from agent_invariants.render.json import to_json

    loaded = load_contract(contract)
    _write(to_json({"valid": True, "contract": loaded.to_dict()}), output)


@app.command()
def summary(
    trace: Annotated[str, typer.Option("--trace", "-t", help="Trace file; - for stdin.", show_default=False)],
    format: FormatOpt = Format.json,
    output: OutputOpt = None,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
    _contract: _unused("--contract") = None,
    _baseline: _unused("--baseline") = None,
    _candidate: _unused("--candidate") = None,
) -> None:
    """Print counts for a trace, as JSON: tools, approvals, failures, outcomes, completion claims."""
    from agent_invariants.events import TraceFile
    from agent_invariants.render.json import to_json
    from agent_invariants.summary import summarize_trace

    _write(to_json(summarize_trace(TraceFile(trace, max_line_bytes=max_line_bytes))), output)


@app.command()
def explain(kind: Annotated[Optional[str], typer.Argument(help="A rule kind, e.g. require_approval.")] = None) -> None:
    """List the rule kinds, or print one kind's manual (fields, semantics, examples)."""
    from agent_invariants.explain import explain_kind, list_kinds

    if kind is None:
        _write(list_kinds(), None)
        return
    try:
        _write(explain_kind(kind), None)
    except KeyError as exc:
        _fail(exc.args[0])


@app.command("version", hidden=True)
def version_command() -> None:
    """Print the version."""
    print(__version__)


@app.command("help", hidden=True)
def help_command(ctx: typer.Context) -> None:
    """Show the usage."""
    print(ctx.parent.get_help() if ctx.parent else ctx.get_help())


@app.command()
def init(directory: Annotated[Path, typer.Argument(help="Where to write the files.")] = Path(".")) -> None:
    """Write a sample contract (agent-invariants.json) and a passing trace (agent-trace.jsonl)."""
    from importlib.resources import files

    samples = files("agent_invariants") / "samples"
    targets = [(directory / "agent-invariants.json", samples / "agent-invariants.json"),
               (directory / "agent-trace.jsonl", samples / "agent-trace.jsonl")]
    for target, _ in targets:
        if target.exists():
            _fail(f"{target}: already exists; refusing to overwrite it")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for target, sample in targets:
            with open(target, "x", encoding="utf-8", newline="\n") as handle:
                handle.write(sample.read_text(encoding="utf-8"))
    except OSError as exc:
        _fail(f"{exc.filename or directory}: cannot write: {exc.strerror or exc}")
    for target, _ in targets:
        print(f"Created {target}")
    print(f"Try: {PROG} check --contract {targets[0][0]} --trace {targets[1][0]}")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def serve() -> None:
    """Run the MCP server on standard input and output (needs: pip install 'agent-invariants[mcp]')."""
    from agent_invariants import mcp_server

    if not mcp_server.sdk_available():
        _fail("the MCP server needs the mcp extra: pip install 'agent-invariants[mcp]'")
    mcp_server.serve()


class _SarifOptions(NamedTuple):
    contract_path: Path
    contract: object
    root: Path | None
    anchor: Anchor
    category: str | None


def _emit(report, format: Format, output: Path | None, sarif: _SarifOptions) -> None:
    """Render the whole report first, then write it: an error never leaves half a report."""
    from agent_invariants.render import renderer

    module = renderer(format.value)
    if format in (Format.text, Format.pretty):
        text = module.render(report, color=output is None and _stdout_is_colour_terminal())
    elif format is Format.sarif:
        from agent_invariants.sources import Sources

        sources = Sources.gather(report, str(sarif.contract_path), contract=sarif.contract, root=sarif.root)
        text = module.render(report, sources=sources, anchor=sarif.anchor.value, category=sarif.category)
    else:
        text = module.render(report)
    _write(text, output)


def _stdout_is_colour_terminal() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _write(text: str, output: Path | None) -> None:
    """Write the finished report: to stdout, or to `output` via a temporary file and a rename."""
    data = text.encode("utf-8")
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = output.resolve()
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        _fail(f"{output}: cannot write: {exc.strerror or exc}")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, target)
    except OSError as exc:
        os.unlink(temporary)
        _fail(f"{output}: cannot write: {exc.strerror or exc}")


def _fail(message: str) -> NoReturn:
    raise _Fatal(message)


class _Fatal(Exception):
    """A usage or input problem found by the CLI itself."""


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the console script."""
    from agent_invariants.errors import InputError

    try:
        code = app(args=argv, prog_name=PROG, standalone_mode=False)
    except (InputError, _Fatal) as exc:
        _die(str(exc))
    except KeyboardInterrupt:
        _die("interrupted")
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as exc:  # typer's (click's) usage errors; their classes differ between versions
        _usage_error(exc)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: Exception) -> NoReturn:
    """Report a command-line usage problem raised by typer/click on one line, or re-raise a bug."""
    context = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:
        print(context.get_help())
        sys.exit(0)
    if type(exc).__name__ == "Abort":
        _die("aborted")
    if not callable(getattr(exc, "format_message", None)):
        raise exc
    hint = f" (try '{context.command_path} --help')" if context is not None else ""
    _die(" ".join(exc.format_message().split()) + hint)


def _die(message: str) -> NoReturn:
    """Report bad input or usage (one line per problem) and exit 2."""
    sys.stdout.flush()
    print("\n".join(f"{PROG}: {line}" for line in message.splitlines() or [""]), file=sys.stderr)
    sys.exit(2)
