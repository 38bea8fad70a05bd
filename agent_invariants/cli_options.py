"""The command line's options: their names, help texts and defaults, declared once.

`check` and `compare` share how a report is rendered, written and judged (`ReportOptions`).
typer declares options as function parameters and has no way to share a group of them, so
`with_report_options` adds the group's parameters to a command's signature and hands the command
one `ReportOptions` instead: the group is written here once, and `--help` lists it after the
command's own options, in the order below.
"""
from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer

__all__ = (
    "DEFAULT_CONTRACTS",
    "Anchor",
    "Color",
    "ContractOpt",
    "Format",
    "JsonFormatOpt",
    "ImportOptions",
    "InputFormat",
    "InputFormatOpt",
    "MaxLineOpt",
    "OutputOpt",
    "ProfileOpt",
    "ReportOptions",
    "RecordProtocol",
    "RunOpt",
    "SafetyExitOpt",
    "UnusedBaseline",
    "UnusedCandidate",
    "UnusedContract",
    "UnusedTrace",
    "not_bad_input",
    "with_report_options",
)

DEFAULT_MAX_LINE_BYTES = 1 << 20
DEFAULT_MAX_VIOLATIONS = 1000   # rules.base.DEFAULT_MAX_VIOLATIONS, not imported: --help stays fast
DEFAULT_CONTRACTS = ("agent-invariants.json", "agent-invariants.yaml", "agent-invariants.yml")
"""Where a command looks for the contract when `--contract` is not given (`init` writes the first)."""


# (str, Enum) rather than StrEnum: their str() differs, and typer prints and parses these.
class Format(str, Enum):  # noqa: UP042
    text = "text"
    pretty = "pretty"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    markdown = "markdown"
    github = "github"
    html = "html"


class InputFormat(str, Enum):  # noqa: UP042   (as Format)
    native = "native"
    auto = "auto"
    otel = "otel"
    openinference = "openinference"
    openai_agents = "openai-agents"
    langsmith = "langsmith"
    mcp_log = "mcp-log"


CONVERT_FORMATS = tuple(each.value for each in InputFormat if each is not InputFormat.native)
"""The formats `convert --from` reads: InputFormat's, but native (there is nothing to convert)."""


def convert_format(value: str) -> str:
    """`--from`'s value, refused as a choice is when it is none of CONVERT_FORMATS."""
    if value not in CONVERT_FORMATS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(map(repr, CONVERT_FORMATS))}.")
    return value


def sarif_category(value: str | None) -> str | None:
    """`--category`'s value: GitHub keys uploads by it (all up to the last `/`), so it must be a
    name: not blank or only slashes, no blanks around it, no control or invisible character (the
    escaped value is named)."""
    problem = None if value is None else category_problem(value)
    if problem is not None:
        raise typer.BadParameter(problem)
    return value


def category_problem(value: str) -> str | None:
    """What is wrong with a SARIF category (`--category`, the action's `category`), or None."""
    from agent_invariants._safe import VALUE_LIMIT, inert

    if not value.strip(" /") or value != value.strip() or inert(value) != value:
        return (f"'{inert(value, VALUE_LIMIT)}': name the category (as agent-invariants/nightly), without blanks "
                "around it, control or invisible characters, nor only slashes.")
    return None


class ImportOptions(NamedTuple):
    """How traces in other formats are read (`--input-format`, `--run`, `--profile`)."""

    input_format: InputFormat
    run: str | None
    profile: Path | None

    @property
    def native(self) -> bool:
        return self.input_format is InputFormat.native


InputFormatOpt = Annotated[InputFormat, typer.Option(
    "--input-format", help="Format of the traces: native (our JSONL), auto (told from the first record), or "
    "the format of another tool: otel (OTLP JSON lines, GenAI conventions), openinference, openai-agents "
    "(the Agents SDK's exported spans), langsmith (runs), mcp-log.")]
def _run_option(does: str) -> Any:
    """`--run ID`: which run of an input in another format (a trace id, an MCP session)."""
    return typer.Option("--run", metavar="ID", show_default=False, help=does)


def _profile_option(reads: str) -> Any:
    return typer.Option("--profile", metavar="PATH", show_default=False, help=reads)


RunOpt = Annotated[str | None, _run_option(
    "With --input-format: the run to check when the input holds several (a trace id, an MCP session); all: every "
    "run, one section each (compare pairs them by run id).")]
SummaryRunOpt = Annotated[str | None, _run_option(
    "With --input-format: the run to count when the input holds several (a trace id, an MCP session); all: every "
    "run, an object of their counts by run id.")]
ConvertRunOpt = Annotated[str | None, _run_option(
    "The run to convert when the input holds several (a trace id, an MCP session); all: every run (with "
    "--out-dir).")]
ProfileOpt = Annotated[Path | None, _profile_option(
    "With --input-format: a mapping profile (JSON or YAML) turning records into approvals, stops, outcomes and "
    "claims.")]
ConvertProfileOpt = Annotated[Path | None, _profile_option(
    "A mapping profile (JSON or YAML) turning records into approvals, stops, outcomes and claims.")]


class Anchor(str, Enum):  # noqa: UP042   (as Format)
    trace = "trace"
    contract = "contract"


class RecordProtocol(str, Enum):  # noqa: UP042   (as Format)
    native = "native"
    agentdoctor = "agentdoctor"


class Color(str, Enum):  # noqa: UP042   (as Format)
    auto = "auto"
    always = "always"
    never = "never"


def _dash_is_stdout(output: Path | None) -> Path | None:
    """`-o -` is standard output, as `-` is standard input for the inputs (not a file named `-`)."""
    return None if output is not None and str(output) == "-" else output


ContractOpt = Annotated[Path | None, typer.Option(
    "--contract", "-c", show_default=False, metavar="PATH",
    help="Contract file (JSON, or YAML with the yaml extra); - for stdin. Default: agent-invariants.json "
    "(or .yaml, .yml) in the current folder, the file `init` writes.")]
ConvertOutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="Write the converted trace to this file instead of stdout (- for stdout; a regular "
    "file is replaced atomically; an input file is refused).", show_default=False, callback=_dash_is_stdout)]
OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="Write the report to this file instead of stdout (- for stdout; a regular file is "
    "replaced atomically, a device or FIFO written in place; an input file is refused).",
    show_default=False, callback=_dash_is_stdout)]
MaxLineOpt = Annotated[int, typer.Option(
    "--max-line-bytes", min=1, metavar="BYTES", help="Longest JSONL line accepted, in bytes.")]


def not_bad_input(code: int | None) -> int | None:
    """`--safety-exit 2` would read as bad input, the exit 2 of every command: refused."""
    if code == 2:
        raise typer.BadParameter("2 is the exit of bad input, which a pipeline could not tell apart; got 2")
    return code


SafetyExitOpt = Annotated[int | None, typer.Option(
    "--safety-exit", min=1, max=255, metavar="N", show_default=False, callback=not_bad_input,
    help="Exit N (1 or 3..255) instead of 1 when an error violation comes from a safety part of a rule (what "
    "a prefix of the run already decides: a forbidden call, a missing approval), so pipelines can tell it apart.")]
JsonFormatOpt = Annotated[Format, typer.Option(
    "--format", "-f",
    help="Accepted for scripts written for the Node tool (every value is checked); the output is always JSON.")]

# Options a command accepts and ignores. The Node tool gives every command one shared option set
# (--contract, --trace, --baseline, --candidate, --format, --output), so scripts written for it
# may pass options a command does not use; they must not turn into errors.
UnusedContract = Annotated[str | None, typer.Option("--contract", hidden=True, show_default=False)]
UnusedTrace = Annotated[str | None, typer.Option("--trace", hidden=True, show_default=False)]
UnusedBaseline = Annotated[str | None, typer.Option("--baseline", hidden=True, show_default=False)]
UnusedCandidate = Annotated[str | None, typer.Option("--candidate", hidden=True, show_default=False)]


class ReportOptions(NamedTuple):
    """How `check` and `compare` render, write and judge their report."""

    format: Format
    output: Path | None
    color: Color
    verbose: bool
    quiet: bool
    strict: bool
    partial: bool
    no_lint: bool
    max_warnings: int | None
    max_line_bytes: int
    max_violations: int
    jobs: int | None
    sarif_root: Path | None
    sarif_anchor: Anchor
    category: str | None


# The parameters typer sees for each field of ReportOptions, in order: (annotation, default).
_REPORT_PARAMETERS: dict[str, tuple[Any, Any]] = {
    "format": (Annotated[Format, typer.Option(
        "--format", "-f", help="Output format (github: workflow commands that annotate a pull request; html: one "
        "self-contained page with each trace's timeline).")],
        Format.text),
    "output": (OutputOpt, None),
    "color": (Annotated[Color, typer.Option(
        "--color", help="Colour the text report: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR forces "
        "it, unless NO_COLOR is set too), always or never.")], Color.auto),
    "verbose": (Annotated[bool, typer.Option(
        "--verbose", help="Text: show every trace and rule of a batch, passing ones too.")], False),
    "quiet": (Annotated[bool, typer.Option(
        "--quiet", "-q", help="Text: only the verdict and the totals. No progress display on stderr.")], False),
    "strict": (Annotated[bool, typer.Option(
        "--strict", help="Turn the warnings on stderr into failures: a trace with no events or with a "
        "misspelt event type or field is an error (exit 2), a rule that checked nothing fails the check "
        "(inconclusive on a trace cut short).")],
        False),
    "partial": (Annotated[bool, typer.Option(
        "--partial", help="The trace (with compare, both traces) was cut short (a crashed or still-running "
        "agent): violations of what only "
        "the end of a run can decide (a required event, a result still to come, the final output, a rule "
        "that checked nothing under --strict) are "
        "'inconclusive' and do not fail the check; what already happened is judged.")],
        False),
    "no_lint": (Annotated[bool, typer.Option(
        "--no-lint", help="Check a version-2 contract even when lint proves that no trace can pass it (it is "
        "refused otherwise, each lint error shown like a contract error; see the lint command).")], False),
    "max_warnings": (Annotated[int | None, typer.Option(
        "--max-warnings", min=0, show_default=False, metavar="N",
        help="Exit 1 when the report has more than N warning violations.")], None),
    "max_line_bytes": (MaxLineOpt, DEFAULT_MAX_LINE_BYTES),
    "max_violations": (Annotated[int, typer.Option(
        "--max-violations", min=0, metavar="N", help="Violations kept and shown per rule (the first ones; all rules "
        "together keep at most 100,000, or 100 times N); the counts and the exit code include every one. 0: no "
        "limit (memory then grows with the violations).")],
        DEFAULT_MAX_VIOLATIONS),
    "jobs": (Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, metavar="N", show_default=False,
        help="Processes to use: traces checked at once when there are several (compare: also a large baseline "
        "checked beside its candidate; default: the number of CPUs).")], None),
    "sarif_root": (Annotated[Path | None, typer.Option(
        "--sarif-root", show_default=False,
        help="SARIF: make file URIs relative to this folder, and refuse a file reported outside it (without "
        "it: relative to the current folder, where a file outside gets a URI starting with ../).")], None),
    "sarif_anchor": (Annotated[Anchor, typer.Option(
        "--sarif-anchor", help="SARIF: locate results in the trace file, or at the rule in the contract "
        "(for traces that are build artifacts, not committed files).")], Anchor.trace),
    "category": (Annotated[str | None, typer.Option(
        "--category", metavar="ID", show_default=False, callback=sarif_category,
        help="SARIF: automationDetails.id, to keep several uploads apart; a trailing / is added when missing, "
        "as GitHub's upload action does.")], None),
}
assert tuple(_REPORT_PARAMETERS) == ReportOptions._fields


def with_report_options(command: Callable[..., None]) -> Callable[..., None]:
    """`command` (which takes `options: ReportOptions`) with the report options as parameters
    of its own, for typer: they are gathered into one `ReportOptions` for the call."""
    return _WithReportOptions(command)


def with_report_options_but(*unused: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """`with_report_options`, with the options named in `unused` left out of `--help` (the
    command refuses them itself, in words that say why)."""
    return lambda command: _WithReportOptions(command, unused)


class _WithReportOptions:
    """A command with the report options as parameters of its own (`with_report_options`).

    typer reads the parameters from `__signature__`, worked out when first asked for: that means
    evaluating the command's annotations (the package writes them as strings), a millisecond per
    command, and a run builds only the command it runs."""

    def __init__(self, command: Callable[..., None], unused: tuple[str, ...] = ()) -> None:
        self._command = command
        self._unused = unused
        self._signature: inspect.Signature | None = None
        self.__name__, self.__qualname__ = command.__name__, command.__qualname__
        self.__module__, self.__doc__ = command.__module__, command.__doc__

    @property
    def __signature__(self) -> inspect.Signature:
        if self._signature is None:
            hints = typing.get_type_hints(self._command, include_extras=True)
            own = [parameter.replace(annotation=hints[name])
                   for name, parameter in inspect.signature(self._command).parameters.items() if name != "options"]
            shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=_hidden(annotation) if name in self._unused else annotation)
                      for name, (annotation, default) in _REPORT_PARAMETERS.items()]
            self._signature = inspect.Signature(own + shared)
        return self._signature

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {parameter.name: parameter.annotation for parameter in self.__signature__.parameters.values()}

    def __call__(self, **values: Any) -> None:
        options = ReportOptions(**{name: values.pop(name) for name in ReportOptions._fields})
        self._command(options=options, **values)


def _hidden(annotation: Any) -> Any:
    """An `Annotated[T, typer.Option(...)]` whose option is left out of `--help`."""
    base, option = typing.get_args(annotation)
    option = copy.copy(option)
    option.hidden = True
    return Annotated[base, option]
