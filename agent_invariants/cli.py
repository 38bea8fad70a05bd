"""The `agent-invariants` command: parse options, call the library, render, pick the exit code.

Exit codes: 0 the trace passed (warnings allowed) or the candidate is compatible; 1 an
error-severity violation or a regression; 2 bad input or usage, with one line on stderr and
nothing on stdout or in the `--output` file; 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
No rule logic lives here.

Standard output that cannot be written (a full disk, a closed pipe, started without one) is
exit 2 too, never 1: CI reads 1 as "violations found". Text from users in messages is escaped
(`_safe.inert`), so one problem is one line on stderr.
"""
from __future__ import annotations

import errno
import io
import os
import stat
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, NamedTuple, NoReturn, Optional

import typer

from agent_invariants import __version__, _signals
from agent_invariants._safe import LINE_LIMIT, TEXT_LIMIT, inert

__all__ = ("app", "main")

PROG = "agent-invariants"
DEFAULT_MAX_LINE_BYTES = 1 << 20
DEFAULT_MAX_VIOLATIONS = 1000   # rules.base.DEFAULT_MAX_VIOLATIONS, not imported: --help stays fast


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
    "--output", "-o", help="Write the report to this file instead of stdout (a regular file is replaced "
    "atomically, a device or FIFO written in place; an input file is refused).",
    show_default=False)]
MaxLineOpt = Annotated[int, typer.Option(
    "--max-line-bytes", min=1, help="Longest JSONL line accepted, in bytes.")]
MaxViolationsOpt = Annotated[int, typer.Option(
    "--max-violations", min=0, help="Violations kept and shown per rule (the first ones); the counts "
    "and the exit code include every one. 0: no limit (memory then grows with the violations).")]
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
        _write(f"{__version__}\n", None)
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
    max_violations: MaxViolationsOpt = DEFAULT_MAX_VIOLATIONS,
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

    source, loaded = _load(contract)
    sarif = _SarifOptions(source, loaded, sarif_root, sarif_anchor, category)
    lengths = format is Format.sarif   # regions end at the end of the line: learn its length while reading
    if batch.is_single(trace):
        batch.check_file_name(trace[0])
        _refuse_input_as_output(output, contract, trace[0])
        report = _check_one(loaded, trace[0], max_line_bytes, max_violations, quiet, lengths)
        _emit(report, format, output, sarif)
        raise typer.Exit(0 if report.passed else 1)
    paths = batch.expand_traces(trace, exclude=[str(contract)])
    _refuse_input_as_output(output, contract, *paths)
    report = _with_progress(len(paths), "checking traces", quiet, lambda advance: batch.check_many(
        loaded, paths, jobs=jobs or os.cpu_count() or 1, max_line_bytes=max_line_bytes,
        max_violations=max_violations, progress=advance, line_lengths=lengths))
    _finish_batch(report, report.passed, format, output, sarif)


def _load(path: Path):
    """The contract, read once: its `ContractSource` (for SARIF's pointers into it) and the loaded contract."""
    from agent_invariants.contract import load_contract, read_contract

    source = read_contract(path)
    return source, load_contract(source)


def _check_one(contract, trace: str, max_line_bytes: int, max_violations: int, quiet: bool, line_lengths: bool):
    from agent_invariants.engine import check_trace
    from agent_invariants.events import TraceFile

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
    _trace: _unused("--trace") = None,
) -> None:
    """Compare candidate traces with baseline traces under one contract."""
    from agent_invariants import batch
    from agent_invariants.compare import compare_traces

    source, loaded = _load(contract)
    sarif = _SarifOptions(source, loaded, sarif_root, sarif_anchor, category)
    lengths = format is Format.sarif
    if batch.is_single(baseline) and batch.is_single(candidate):
        batch.check_file_name(baseline[0])
        batch.check_file_name(candidate[0])
        _refuse_input_as_output(output, contract, baseline[0], candidate[0])
        report = compare_traces(loaded, baseline[0], candidate[0], max_line_bytes=max_line_bytes,
                                max_violations=max_violations, jobs=jobs or os.cpu_count() or 1, line_lengths=lengths)
        _emit(report, format, output, sarif)
        raise typer.Exit(0 if report.compatible else 1)
    exclude = [str(contract)]
    pairs = batch.pair_traces(batch.named_traces(baseline, exclude=exclude),
                              batch.named_traces(candidate, exclude=exclude))
    _refuse_input_as_output(output, contract, *[path for pair in pairs for path in pair])
    report = _with_progress(len(pairs), "comparing traces", quiet, lambda advance: batch.compare_many(
        loaded, pairs, jobs=jobs or os.cpu_count() or 1, max_line_bytes=max_line_bytes,
        max_violations=max_violations, progress=advance, line_lengths=lengths))
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
        _say(failure.error)
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

    _refuse_input_as_output(output, contract)
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

    _refuse_input_as_output(output, trace)
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
    _write(f"{__version__}\n", None)


@app.command("help", hidden=True)
def help_command(ctx: typer.Context) -> None:
    """Show the usage."""
    _write((ctx.parent.get_help() if ctx.parent else ctx.get_help()) + "\n", None)


@app.command()
def init(directory: Annotated[Path, typer.Argument(help="Where to write the files.")] = Path(".")) -> None:
    """Write a sample contract (agent-invariants.json) and a passing trace (agent-trace.jsonl)."""
    from importlib.resources import files

    samples = files("agent_invariants") / "samples"
    targets = [(directory / "agent-invariants.json", samples / "agent-invariants.json"),
               (directory / "agent-trace.jsonl", samples / "agent-trace.jsonl")]
    for target, _ in targets:
        if os.path.lexists(target):   # a dangling symlink too: never write through it
            _fail(f"{_shown(target)}: already exists; refusing to overwrite it")
    created: list[Path] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for target, sample in targets:
            with open(target, "x", encoding="utf-8", newline="\n") as handle:
                created.append(target)
                handle.write(sample.read_text(encoding="utf-8"))
    except OSError as exc:
        for target in created:   # both files or neither: a second init would refuse a half one
            target.unlink(missing_ok=True)
        _fail(f"{_shown(exc.filename or directory)}: cannot write: {exc.strerror or exc}")
    contract, trace = (_shown(target) for target, _ in targets)
    _write(f"Created {contract}\nCreated {trace}\nTry: {PROG} check --contract {contract} --trace {trace}\n", None)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def serve() -> None:
    """Run the MCP server on standard input and output (needs: pip install 'agent-invariants[mcp]')."""
    from agent_invariants import mcp_server

    if not mcp_server.sdk_available():
        _fail("the MCP server needs the mcp extra: pip install 'agent-invariants[mcp]'")
    if sys.__stdin__ is None or sys.__stdout__ is None:
        _fail("the MCP server needs standard input and output; one of them is closed")
    sys.stdin, sys.stdout = sys.__stdin__, sys.__stdout__   # the transport claims the real descriptors
    mcp_server.serve()


class _SarifOptions(NamedTuple):
    source: object     # the contract's ContractSource: its bytes, read once
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

        sources = Sources.gather(report, sarif.source, loaded=sarif.contract, root=sarif.root)
        text = module.render(report, sources=sources, anchor=sarif.anchor.value, category=sarif.category)
    else:
        text = module.render(report)
    _write(text, output)


def _stdout_is_colour_terminal() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _write(text: str, output: Path | None) -> None:
    """Write the finished text (a report, a listing) to stdout or to `output`. Lone surrogates
    (undecodable bytes of a file name) are written as `\\udcff` escapes rather than failing."""
    data = text.encode("utf-8", "backslashreplace")
    if output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        _write_file(output, data)


def _write_file(output: Path, data: bytes) -> None:
    """Write `data` to `output` as a shell redirection would, but never half a report.

    Our own stdout or stderr (`-o /dev/stdout`), whatever it is, is written through its
    descriptor, at its offset, as the shell would. A regular file (or a symlink to one: the link
    stays, its target is replaced) is replaced atomically by a complete one from a temporary
    file in the same folder; it keeps its mode (and owner, where allowed), and a new file gets
    the mode the umask gives. Another device, FIFO or socket (`-o /dev/null`) is written in
    place; a folder is refused. A missing folder is not created: a typo there should not
    scatter reports."""
    try:
        info = os.stat(output)
    except FileNotFoundError:
        info = None   # a new file, or a dangling symlink: its target will be created
    except OSError as exc:
        _fail(f"{_shown(output)}: cannot write: {exc.strerror or exc}")
    standard = _standard_descriptor(info)
    if standard is not None:
        sys.stdout.flush()
        _write_all(standard, data, output)
    elif info is None or stat.S_ISREG(info.st_mode):
        _replace_file(output, data, info)
    elif stat.S_ISDIR(info.st_mode):
        _fail(f"{_shown(output)}: is a directory")
    else:
        _write_in_place(output, data)


def _replace_file(output: Path, data: bytes, info: os.stat_result | None) -> None:
    target = os.path.realpath(output)
    folder, name = os.path.split(target)
    with _signals.held():   # from the temporary file's creation to its rename or removal
        try:
            handle, temporary = tempfile.mkstemp(prefix=f".{name[:40]}.", suffix=".tmp", dir=folder)
        except FileNotFoundError:
            _fail(f"{_shown(output)}: cannot write: no such folder")
        except OSError as exc:
            _fail(f"{_shown(output)}: cannot write: {exc.strerror or exc}")
        try:
            with os.fdopen(handle, "wb") as stream:
                _keep_mode(stream.fileno(), info)
                stream.write(data)
            os.replace(temporary, target)
        except OSError as exc:
            os.unlink(temporary)
            _fail(f"{_shown(output)}: cannot write: {exc.strerror or exc}")


def _keep_mode(handle: int, info: os.stat_result | None) -> None:
    """Give the temporary file the mode (and owner) of the file it replaces, or else the mode
    a new file would get (mkstemp makes it 0600). Best effort: only root may give a file away,
    and some file systems have no modes; the report matters more."""
    if not hasattr(os, "fchmod"):
        return
    if info is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    else:
        mode = stat.S_IMODE(info.st_mode)
        if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            _ignoring_errors(os.fchown, handle, info.st_uid, info.st_gid)
    _ignoring_errors(os.fchmod, handle, mode)


def _ignoring_errors(change, *arguments) -> None:
    try:
        change(*arguments)
    except OSError:
        pass


def _standard_descriptor(info: os.stat_result | None) -> int | None:
    """1 or 2 when `info` is the file our stdout or stderr is, else None."""
    for descriptor in (1, 2):
        try:
            if info is not None and os.path.samestat(info, os.fstat(descriptor)):
                return descriptor
        except OSError:
            continue
    return None


def _write_in_place(output: Path, data: bytes) -> None:
    """A device, FIFO or socket: open it for writing (no truncation, no creation) and write."""
    try:
        handle = os.open(output, os.O_WRONLY)
    except OSError as exc:
        _fail(f"{_shown(output)}: cannot write: {exc.strerror or exc}")
    try:
        _write_all(handle, data, output)
    finally:
        os.close(handle)


def _write_all(handle: int, data: bytes, output: Path) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(handle, view):]
    except OSError as exc:
        _fail(f"{_shown(output)}: cannot write: {exc.strerror or exc}")


def _refuse_input_as_output(output: Path | None, *inputs: str | Path) -> None:
    """Refuse an `--output` that is one of the input files, before reading anything: writing
    the report there would destroy the trace or contract (`-o` typed for `-t`, say)."""
    if output is None:
        return
    try:
        written = os.stat(output)
    except OSError:
        return
    if not stat.S_ISREG(written.st_mode):
        return   # /dev/stdout may well be the terminal /dev/stdin is
    for path in inputs:
        try:
            same = path != "-" and os.path.samestat(written, os.stat(path))
        except OSError:
            continue
        if same:
            _fail(f"{_shown(output)}: is also an input ({_shown(path)}); refusing to overwrite it")


def _shown(name: str | os.PathLike[str]) -> str:
    """A file name as messages show it (escaped, cut when very long)."""
    return inert(os.fspath(name), TEXT_LIMIT)


def _fail(message: str) -> NoReturn:
    raise _Fatal(message)


class _Fatal(Exception):
    """A usage or input problem found by the CLI itself."""


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the console script."""
    from agent_invariants.errors import InputError

    _signals.raise_on_terminate()
    _adopt_standard_streams()
    try:
        code = app(args=argv, prog_name=PROG, standalone_mode=False)   # Ctrl-C inside: typer returns 130
        sys.stdout.flush()
    except (InputError, _Fatal) as exc:
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
    try:
        sys.stdout.flush()
    except _Fatal:
        pass
    os._exit(code)


def _adopt_standard_streams() -> None:
    """Standard streams that fail in one clear way (exit 2, one line) instead of three obscure ones.

    A descriptor the tool was started without (`<&-`, `>&-`, `2>&-`) is held open on the null
    device, so no file opened later takes its number (a report written to fd 2 by accident);
    standard input and output still say they are closed when used. Standard output becomes a
    `_StandardOutput`, for every command and for click's own help output alike."""
    for descriptor, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        if stream is None:
            _hold(descriptor)
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_ClosedInput()), encoding="utf-8")
    try:
        descriptor = None if sys.stdout is None else sys.stdout.fileno()
    except (OSError, ValueError):
        return   # not a real descriptor (the caller redirected sys.stdout): leave it alone
    raw = _StandardOutput(descriptor)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=raw.isatty())


def _hold(descriptor: int) -> None:
    try:
        os.fstat(descriptor)
        return   # something already holds the number
    except OSError:
        pass
    spare = os.open(os.devnull, os.O_RDWR)
    if spare != descriptor:
        os.dup2(spare, descriptor)
        os.close(spare)


class _StandardOutput(io.RawIOBase):
    """Standard output as the commands see it.

    A write that fails (the reader closed the pipe, the disk is full, there is no stdout) raises
    `_Fatal`: one line, exit 2. Left an OSError, typer would make a broken pipe exit 1, which CI
    reads as "violations found", and anything else a traceback. A reader that went away
    (`... | head -c 10`) is reported like any other failure; with stderr gone too, the exit 2
    is all that remains. Once a write has failed the rest are dropped, so the flush at exit
    cannot fail again and change the exit code."""

    def __init__(self, descriptor: int | None) -> None:
        super().__init__()
        self._descriptor = descriptor
        self._failed = False

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._descriptor is not None and os.isatty(self._descriptor)

    def fileno(self) -> int:
        if self._descriptor is None:
            raise io.UnsupportedOperation("standard output is closed")
        return self._descriptor

    def write(self, data) -> int:
        if self._failed:
            return len(data)
        if self._descriptor is None:
            self._give_up("standard output is closed")
        try:
            return os.write(self._descriptor, data)
        except OSError as exc:
            self._give_up(f"standard output: cannot write: {exc.strerror or exc}")

    def _give_up(self, message: str) -> NoReturn:
        self._failed = True
        raise _Fatal(message)


class _ClosedInput(io.RawIOBase):
    """Standard input when the tool was started without one: reading it is an error (an empty
    trace would pass)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        raise OSError(errno.EBADF, "standard input is closed")


def _usage_error(exc: Exception) -> NoReturn:
    """Report a command-line usage problem raised by typer/click on one line, or re-raise a bug."""
    context = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:
        try:
            _write(context.get_help() + "\n", None)
        except _Fatal as failure:
            _die(str(failure))
        sys.exit(0)
    if type(exc).__name__ == "Abort":
        _die("aborted")
    if not callable(getattr(exc, "format_message", None)):
        raise exc
    hint = f" (try '{context.command_path} --help')" if context is not None else ""
    _die(inert(" ".join(exc.format_message().split()), TEXT_LIMIT) + hint)


def _die(message: str) -> NoReturn:
    """Report bad input or usage (one line per problem) and exit 2."""
    try:
        sys.stdout.flush()
    except _Fatal:
        pass   # the message below matters more
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
