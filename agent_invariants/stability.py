"""does the agent's final output keep its shape from run to run?

    agent-invariants stability runs/*.jsonl --map refunds_by_order

A team that parses its agent's report (a JSON object the run ends with) needs that report to have
the same fields, of the same types, every time. This command reads the final output of each trace
(the `output` of its terminal event: the last `run.completed` or `run.failed`), reduces it to a
*shape*, and compares the shapes.

## Shape
A shape maps each path of the output to the set of JSON types found there (null, boolean, number,
string, array, object; `1` and `1.0` are both number). The root is `$`; a member `k` is `k` at the
root and `P.k` below it (`P["k"]`, a JSON string, when `k` is not made of letters, digits, `_` and
`-`); the elements of an array are `P[]` (`[]` at the root), and their shapes merge. `--map P`
treats each object at P as a map: its members merge at `P{}` (for objects keyed by ids).

## Present, absent and unknown
In a trace, a path is *present* when a value sits at it; *unknown* when the first step from the
root that finds nothing is `[]` (or `{}`) of an array (or map) that is empty: an empty list says
nothing about the shape of its elements; *absent here* when that first missing step is the path
itself, a member missing from an object; otherwise *absent below* (under an absent path, or under a
parent of another type in that trace).

## Instability
- *presence*: present in one trace and absent here in another (so only the topmost absent path is
  reported); `absent_in` lists both kinds of absence.
- *type*: present in two traces with different type sets (a number in one, a string or a null in
  another).
`--ignore P` silences P and every path below it. A path may have an entry of each kind.

## Example
T1 `{"refunds":[{"id":"A9","amount":10}],"total":10}`, T2 `{"refunds":[],"total":"0"}`, T3
`{"refunds":[{"id":"B2"}],"total":0}`: `refunds[].amount` is presence-unstable (present in T1,
absent in T3, unknown in T2) and `total` type-unstable; exit 1. It is stable with `"total":0` in T2
and an `amount` in T3.

## Reporting traces and the verdict
A trace reports when its terminal carries `output` (`null` included); one without a terminal, or
whose terminal has no output, is listed as not reporting and left out. With fewer than two reporting
traces nothing is measured: the report says so and the exit is 2, never a pass. Otherwise the exit
is 1 when some path is unstable, else 0. With `--contract`, each trace is also checked as `check`
would, its verdict is in the report, and the worst exit wins: a trace that fails the contract is
said in every format (the headline, a JUnit case, a SARIF result, a GitHub annotation).

## Options
- `--ignore P` (repeatable): leave P and every path below it out (a timestamp, a debug field).
- `--map P` (repeatable): read each object at P as a map keyed by ids.
- `--contract C`: also check each trace against C.
- `--format text|json|markdown|junit|sarif|github` (SARIF and GitHub annotations point at each
  run's final output), `--output F`, `--max-line-bytes N`.

Paths are written as the report writes them; a leading `$.` is accepted (`$.refunds[].amount`).
A key other than letters, digits, `_` and `-` is a JSON string (`["a b"]`), in which a character
that would not show as itself (a control, an invisible one, a space other than the space) is a
JSON escape (`["n\\u00a0"]`), so that a path copied from any report works as an option.

## Report
`--format json` prints `agent-invariants/stability/v1`: `{schema, runs: [{trace, reporting,
output_sha256, check?}], measured, stable, unstable: [{path, kind, present_in, absent_in,
unknown_in, types}]}`, indexes 0-based into `runs`, `types` one sorted list per run (`[]` where the
path is not present), entries sorted by path (code points), presence before type. `output_sha256`
is the SHA-256 of the output's RFC 8785 form (of its bytes as written, for an output holding a
number beyond any double, which has no such form): equal hashes, equal outputs.

## Known limits
Each trace is read whole, one after the other; only the final output is kept (and its shape, which
grows with the number of distinct paths: use `--map` for objects keyed by ids). Standard input can
be one of the traces, once.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any, Literal, NamedTuple

import msgspec
from msgspec import UNSET, UnsetType

from agent_invariants._safe import inert
from agent_invariants.contract import Contract
from agent_invariants.engine import run_check, run_observers
from agent_invariants.match.canonical import canonical
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES, TraceFile
from agent_invariants.rules.terminal import NO_OUTPUT, TERMINAL_TYPES, Terminal

__all__ = ("STABILITY_SCHEMA", "FinalOutput", "Measured", "RunCheck", "StabilityReport", "StabilityRun", "Unstable",
           "describe", "failed_checks", "measure", "measure_files", "odd_one", "parse_path", "reporting_said",
           "PATH_LIMIT", "path_text", "stability_of", "unstable_paths")

STABILITY_SCHEMA = "agent-invariants/stability/v1"

ITEM = 0
"""The step into the elements of an array, `[]` (member steps are strings, so never equal)."""
MAPPED = 1
"""The step into the members of an object `--map` names, `{}`."""

Path = tuple[str | int, ...]
Where = Literal["present", "unknown", "here", "below"]

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


class RunCheck(msgspec.Struct, kw_only=True):
    """With `--contract`: the trace's check, as `check` judged it."""

    passed: bool
    error_count: int
    warning_count: int


class StabilityRun(msgspec.Struct, kw_only=True):
    """One trace: whether it reports an output, and that output's SHA-256."""

    trace: str
    """The trace as given on the command line."""
    reporting: bool
    """Whether its terminal event carries an `output` (null counts)."""
    output_sha256: str | None
    """Hex SHA-256 of the output's RFC 8785 form; null when the trace does not report."""
    check: RunCheck | UnsetType = UNSET
    """With `--contract`: the trace's check."""


class Unstable(msgspec.Struct, kw_only=True):
    """A path whose presence or type differs between reporting traces."""

    path: str
    """The path, e.g. `refunds[].amount` (`$` is the root)."""
    kind: Literal["presence", "type"]
    """`presence`: present in one trace, absent in another; `type`: its types differ."""
    present_in: list[int]
    """Indexes (into `runs`) of the traces where a value sits at the path."""
    absent_in: list[int]
    """Indexes of the reporting traces where it is absent (here or below an absent path)."""
    unknown_in: list[int]
    """Indexes of the reporting traces where it lies under an empty array or map."""
    types: list[list[str]]
    """Per run, the sorted JSON types at the path (`[]` where it is not present)."""


class StabilityReport(msgspec.Struct, kw_only=True):
    """The agent-invariants/stability/v1 report (`stability --format json`)."""

    schema: str
    """Always `agent-invariants/stability/v1`."""
    runs: list[StabilityRun]
    """Every trace, in the order given."""
    measured: bool
    """False when fewer than two traces report an output: then nothing is measured (exit 2)."""
    stable: bool
    """True when measured and no path is unstable."""
    unstable: list[Unstable]
    """The unstable paths, sorted by path, presence before type."""


class FinalOutput:
    """An observer keeping a trace's terminal event, for its final output (`record --repeat`
    uses it too)."""

    def __init__(self) -> None:
        self.terminal = Terminal()

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Any:
        return self.terminal.seen if event_type in TERMINAL_TYPES else None

    def output(self) -> tuple[Any, bytes | None]:
        """The final output (NO_OUTPUT when the trace does not report) and its JSON as written."""
        event = self.terminal.event
        if event is None or event.output is UNSET:
            return NO_OUTPUT, None
        return self.terminal.output(), bytes(memoryview(event.output))


class Measured(NamedTuple):
    """A stability report, and where each reporting trace's terminal event is (by run index: its
    physical line, and that line's length when known), for the formats that point into files."""

    report: StabilityReport
    places: dict[int, tuple[int, int | None]]


def stability_of(traces: Sequence[str], *, contract: Contract | None = None, ignore: Iterable[Path] = (),
                 maps: Iterable[Path] = (), max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> StabilityReport:
    """Read the final output of each trace file (`-`: standard input) and compare their shapes;
    with a contract, check each trace in the same pass. InputError for a bad trace or contract."""
    return measure_files(traces, contract=contract, ignore=ignore, maps=maps, max_line_bytes=max_line_bytes).report


def measure_files(traces: Sequence[str], *, contract: Contract | None = None, ignore: Iterable[Path] = (),
                  maps: Iterable[Path] = (), max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Measured:
    """`stability_of`, with the place of each trace's terminal event."""
    outputs: list[Any] = []
    hashes: list[str | None] = []
    checks: list[RunCheck] = []
    places: dict[int, tuple[int, int | None]] = {}
    for number, trace in enumerate(traces):
        final = FinalOutput()
        source = TraceFile(trace, max_line_bytes=max_line_bytes, line_lengths=True)
        if contract is None:
            run_observers(source, [final])
        else:
            checked = run_check(contract, source, observers=[final]).report
            checks.append(RunCheck(passed=checked.passed, error_count=checked.error_count,
                                   warning_count=checked.warning_count))
        output, raw = final.output()
        outputs.append(output)
        hashes.append(None if raw is None else output_sha256(output, raw))
        if raw is not None:
            index = final.terminal.index
            line = source.lines_of([index]).get(index)
            if line is not None:
                places[number] = (line, source.line_lengths_of([index]).get(index))
    report = measure(outputs, traces, ignore=ignore, maps=maps, checks=checks if contract is not None else None,
                     hashes=hashes)
    return Measured(report, places)


def output_sha256(value: Any, raw: bytes) -> str:
    """SHA-256 of the output's RFC 8785 form (of `raw` when it has none: a number beyond any double)."""
    try:
        data = canonical(value).encode("utf-8")
    except ValueError:
        data = raw
    return hashlib.sha256(data).hexdigest()


def measure(outputs: Sequence[Any], traces: Sequence[str], *, ignore: Iterable[Path] = (),
            maps: Iterable[Path] = (), checks: Sequence[RunCheck] | None = None,
            hashes: Sequence[str | None] | None = None) -> StabilityReport:
    """The stability report of these final outputs (NO_OUTPUT for a trace that does not report),
    one per trace, named as `traces` says."""
    root = _Node(None, None)
    mapped = {root.at(path) for path in maps}
    ignored = {root.at(path) for path in ignore}
    runs = [StabilityRun(trace=trace, reporting=output is not NO_OUTPUT,
                         output_sha256=None if hashes is None else hashes[index],
                         check=UNSET if checks is None else checks[index])
            for index, (trace, output) in enumerate(zip(traces, outputs, strict=True))]
    shapes = {index: _shape(output, root, mapped, ignored) for index, output in enumerate(outputs)
              if output is not NO_OUTPUT}
    if len(shapes) < 2:
        return StabilityReport(schema=STABILITY_SCHEMA, runs=runs, measured=False, stable=False, unstable=[])
    nodes = {node for shape in shapes.values() for node in shape}   # (what --ignore names is in no shape)
    judged: list[tuple[_Node, list[tuple[int, Literal["presence", "type"]]], dict[int, Where], list[list[str]]]] = []
    for node in nodes:
        where = {index: _where(node, shape) for index, shape in shapes.items()}
        present = [index for index, place in where.items() if place == "present"]
        types = [sorted(shapes[index][node]) if where.get(index) == "present" else [] for index in range(len(runs))]
        kinds: list[tuple[int, Literal["presence", "type"]]] = []
        if present and "here" in where.values():
            kinds.append((0, "presence"))
        if len({tuple(types[index]) for index in present}) > 1:
            kinds.append((1, "type"))
        if kinds:
            judged.append((node, kinds, where, types))
    texts = _texts(root, {node for node, *_ in judged})   # (one text, one path: the order is the text's)
    found = sorted(((texts[node], rank, _entry(texts[node], kind, where, types))
                    for node, kinds, where, types in judged for rank, kind in kinds), key=lambda item: item[:2])
    unstable = [item[2] for item in found]
    return StabilityReport(schema=STABILITY_SCHEMA, runs=runs, measured=True, stable=not unstable,
                           unstable=unstable)


def _entry(path: str, kind: Literal["presence", "type"], where: dict[int, Where], types: list[list[str]]) -> Unstable:
    return Unstable(path=path, kind=kind, present_in=[index for index, place in where.items() if place == "present"],
                    absent_in=[index for index, place in where.items() if place in ("here", "below")],
                    unknown_in=[index for index, place in where.items() if place == "unknown"], types=types)


def describe(entry: Unstable, traces: Sequence[str]) -> str:
    """One sentence on an unstable path, naming the traces (SARIF and GitHub annotations)."""
    def named(indexes: list[int]) -> str:
        return ", ".join(traces[index] for index in indexes)

    if entry.kind == "presence":
        unknown = f"; unknown in {named(entry.unknown_in)} (under an empty array or map)" if entry.unknown_in else ""
        return (f"Output path {entry.path} is in the final output of {named(entry.present_in)} but missing from "
                f"that of {named(entry.absent_in)}{unknown}.")
    by_types: dict[str, list[int]] = {}
    for index in entry.present_in:
        by_types.setdefault("|".join(entry.types[index]), []).append(index)
    return f"Output path {entry.path} holds " + "; ".join(
        f"{types} in {named(indexes)}" for types, indexes in by_types.items()) + "."


def failed_checks(report: StabilityReport) -> list[int]:
    """The runs (by index) that `--contract` checked and that fail it: the exit is 1 for them as
    for an unstable shape, so every format says so beside the shape's verdict."""
    return [index for index, run in enumerate(report.runs) if run.check and not run.check.passed]


def reporting_said(report: StabilityReport) -> str:
    """`1 of 2 traces reports an output`: what the verdict rests on, as every surface says it."""
    reporting = sum(1 for run in report.runs if run.reporting)
    traces = f"{len(report.runs):,} trace{'' if len(report.runs) == 1 else 's'}"
    return f"{reporting:,} of {traces} {'reports' if reporting == 1 else 'report'} an output"


def unstable_paths(report: StabilityReport) -> int:
    """How many paths are unstable, as every format heads the report: a path unstable both in
    presence and in type is one path (with two entries)."""
    return len({entry.path for entry in report.unstable})


def odd_one(entry: Unstable) -> int:
    """The run an unstable path is best shown in, the one that breaks the shape: the first run of
    the fewest that agree (that have the path or lack it, for presence; that hold the same types
    there, for type). Of as few, those that disagree with the first run that has the path: the
    run where it is missing, or the first whose types differ (as two runs are shown)."""
    if entry.kind == "presence":
        groups = [entry.absent_in, entry.present_in]
    else:
        by_types: dict[tuple[str, ...], list[int]] = {}
        for index in entry.present_in:
            by_types.setdefault(tuple(entry.types[index]), []).append(index)
        first = by_types.pop(tuple(entry.types[entry.present_in[0]]))
        groups = [*sorted(by_types.values(), key=lambda runs: runs[0]), first]
    fewest = min(len(runs) for runs in groups if runs)
    return next(runs[0] for runs in groups if len(runs) == fewest)


class _Node:
    """One path of the outputs measured, made once however many traces and places hold it: its
    parent's node, its last step, and its children by step. (A tuple per path copies every step
    of its parent's: a deep output of many members held paths x depth, 550 MB for two traces of
    1 MB of output 450 levels deep, now 72.)"""

    __slots__ = ("children", "parent", "step")

    def __init__(self, parent: _Node | None, step: str | int | None) -> None:
        self.parent, self.step = parent, step
        self.children: dict[str | int, _Node] | None = None

    def child(self, step: str | int) -> _Node:
        children = self.children
        if children is None:
            children = self.children = {}
        found = children.get(step)
        if found is None:
            found = children[step] = _Node(self, step)
        return found

    def at(self, path: Path) -> _Node:
        """The node of `path` below this one."""
        node = self
        for step in path:
            node = node.child(step)
        return node


def _shape(output: Any, root: _Node, maps: Collection[_Node], ignored: Collection[_Node]) -> dict[_Node, set[str]]:
    """Each path of a decoded JSON value and the set of JSON types found there, but the paths
    `ignored` and those below them."""
    shape: dict[_Node, set[str]] = {}
    stack: list[tuple[_Node, Any]] = [] if root in ignored else [(root, output)]
    while stack:
        node, value = stack.pop()
        kind = _json_type(value)
        found = shape.get(node)
        if found is None:
            shape[node] = {kind}
        else:
            found.add(kind)
        if kind == "array" or (kind == "object" and node in maps):   # every item at one path
            child = node.child(ITEM if kind == "array" else MAPPED)
            if child not in ignored:
                stack.extend((child, item) for item in (value if kind == "array" else value.values()))
        elif kind == "object":
            for key, item in value.items():
                child = node.child(key)
                if child not in ignored:
                    stack.append((child, item))
    return shape


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _where(node: _Node, shape: dict[_Node, set[str]]) -> Where:
    """Whether the path is present in a trace of this shape, unknown there (under an empty array
    or map), absent here (a member its object lacks) or absent below (under an absent path, or
    under a parent of another type)."""
    if node in shape:
        return "present"
    missing = node   # the first step from the root that finds nothing
    while missing.parent not in shape:   # (the root is in every shape that holds a path)
        missing = missing.parent   # type: ignore[assignment]
    step, types = missing.step, shape[missing.parent]
    if step == ITEM:
        return "unknown" if "array" in types else "below"
    if step == MAPPED:
        return "unknown" if "object" in types else "below"
    return "here" if missing is node and "object" in types else "below"


def path_text(path: Path, limit: int | None = None) -> str:
    """A path as reports write it: `$`, `total`, `refunds[].amount`, `by_id{}.state`, `["a b"]`;
    with `limit`, one longer is cut to that many characters, `…`, and a hash of the whole, which
    keeps cut paths apart (its text is not built whole: a deep output of long keys has paths whose
    texts together grow with the square of its size). Two paths never have one text, cut or not:
    reports order paths by their text alone."""
    written = _NO_STEP
    for step in path:
        written = _then(written, step, limit)
    return _final(written)


class _Written(NamedTuple):
    """A path's text as far as its steps go: whole while within the limit; past it, its first
    `limit` characters and a SHA-256 of the whole (which the steps below it go on from)."""

    text: str
    length: int
    digest: Any   # (hashlib's, once past the limit)


_NO_STEP = _Written("", 0, None)


def _then(written: _Written, step: str | int, limit: int | None) -> _Written:
    """The text of a path one `step` longer."""
    part = _part(step, first=written.length == 0)   # (no step's part is empty)
    length = written.length + len(part)
    if written.digest is not None:
        digest = written.digest.copy()
        digest.update(part.encode("utf-8", "surrogatepass"))
        return _Written(written.text, length, digest)
    text = written.text + part
    if limit is None or length <= limit:
        return _Written(text, length, None)
    return _Written(text[:limit], length, hashlib.sha256(text.encode("utf-8", "surrogatepass")))


def _final(written: _Written) -> str:
    if written.length == 0:
        return "$"
    return written.text if written.digest is None else f"{written.text}…{written.digest.hexdigest()[:16]}"


def _texts(root: _Node, wanted: set[_Node]) -> dict[_Node, str]:
    """The text of each node `wanted` (cut at PATH_LIMIT), by one walk down from the root that
    makes each node's text from its parent's: the paths of a deep output share their first steps,
    so each text costs one step, not the path's depth. Only the texts of the nodes on the way down
    to the one at hand are held, with where the walk is in each one's children."""
    texts = {root: "$"} if root in wanted else {}
    stack: list[tuple[Iterator[tuple[str | int, _Node]], _Written]] = [(iter((root.children or {}).items()),
                                                                         _NO_STEP)]
    while stack and len(texts) < len(wanted):
        children, parent = stack[-1]
        found = next(children, None)
        if found is None:
            stack.pop()
            continue
        step, child = found
        written = _then(parent, step, PATH_LIMIT)
        if child in wanted:
            texts[child] = _final(written)
        if child.children:
            stack.append((iter(child.children.items()), written))
    return texts


def _part(step: str | int, *, first: bool) -> str:
    """One step of a path's text (`first`: the step at the root, which a key starts without `.`)."""
    if step == ITEM:
        return "[]"
    if step == MAPPED:
        return "{}"
    if _PLAIN_KEY.fullmatch(step):   # type: ignore[arg-type]
        return str(step) if first else f".{step}"
    return f"[{_key_text(step)}]"   # type: ignore[arg-type]


PATH_LIMIT = 1000
"""The longest path a report writes, in characters (then `…`)."""


def _key_text(key: str) -> str:
    """`key` as a JSON string in which every character a terminal or a log would not show as
    itself (those `inert` escapes: DEL, C1 controls, invisible ones; and spaces other than the
    space, unassigned code points: what Python does not call printable) is a JSON escape, `\\u007f`,
    an astral one as its surrogate pair: so a path printed is safe to show and, as written, still
    a path that `--ignore` and `--map` take (inert's `\\x7f` is no JSON escape)."""
    written = msgspec.json.encode(key).decode()   # (C0 controls escaped: the rest is printable ASCII, but DEL)
    if written.isascii() and "\x7f" not in written:
        return written
    return "".join(char if " " <= char < "\x7f" or (not char.isascii() and char.isprintable() and inert(char) == char)
                   else _escaped(ord(char)) for char in written)


def _escaped(code: int) -> str:
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def parse_path(text: str) -> Path:
    """A path written as reports write it (a leading `$.` accepted); ValueError says what is wrong."""
    if text == "$":
        return ()
    skipped = 2 if text.startswith("$.") else 1 if text[:2] in ("$[", "${") else 0
    rest = text[skipped:]
    if not rest:
        raise ValueError("empty path")
    try:
        return _steps(rest)
    except ValueError as exc:   # say where in the text as written
        raise ValueError(re.sub(r"character (\d+)", lambda found: f"character {int(found.group(1)) + skipped}",
                                str(exc))) from None


def _steps(rest: str) -> Path:
    steps: list[str | int] = []
    at = 0
    while at < len(rest):
        if rest.startswith("[]", at):
            steps.append(ITEM)
            at += 2
        elif rest.startswith("{}", at):
            steps.append(MAPPED)
            at += 2
        elif rest.startswith('["', at):
            try:
                key, end = json.JSONDecoder().raw_decode(rest, at + 1)
            except ValueError:
                raise ValueError(f'a ["key"] step at character {at + 1} is not a JSON string') from None
            if not rest.startswith("]", end):
                raise ValueError(f"expected ] at character {end + 1}")
            steps.append(key)
            at = end + 1
        else:
            if steps:
                if not rest.startswith(".", at):
                    raise ValueError(f"expected ., [] or {{}} at character {at + 1}")
                at += 1
            found = _PLAIN_KEY.match(rest, at)
            if found is None:
                raise ValueError(f"expected a key (letters, digits, _ or -) at character {at + 1}; "
                                 'write other keys as ["key"]')
            steps.append(found.group())
            at = found.end()
    return tuple(steps)
