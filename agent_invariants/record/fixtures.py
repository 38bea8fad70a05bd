"""The fixtures file of `record`: what each tool answers, and how approval requests are decided.

    {"version": 1,
     "input": {"ticket": "T-7"},
     "tools": {
       "orders.get": {"id": "A9", "paid": 10},
       "refund": {"$cases": [{"args": {"amount": {"$lte": 10}}, "result": {"ok": true}},
                             {"result": {"error": "over the limit"}, "ok": false}]},
       "kb.*": {"$file": "kb-answer.json"}},
     "approvals": [{"tool": "refund", "args": {"amount": {"$lte": 10}}, "decision": "approve"}]}

The root holds `version` (1) and `tools`, and may hold `input` (what `run.start` hands the agent),
`approvals` and `redact` (keys whose values stay out of the files written, as `--redact`); an
unknown key anywhere is an error. A fixture is one of:

- a *literal*: any JSON value, answered as the result with `ok: true`;
- `{"$literal": v}`: `v` verbatim, for a result that is itself an object with one `$` key;
- `{"$file": "path"}`: the UTF-8 JSON file's content, read when the fixtures load (relative to the
  fixtures file's folder; a regular file; a file named many times is read once, and all of them
  together hold at most 64 MiB);
- `{"$cases": [...]}`: cases tried in order, each `{call_index?, args?, result?, ok?, duration_ms?,
  observe?}`. A case matches when all its selectors do: `call_index` k is the k-th call (from 0)
  whose tool the fixture's key matches, denied and unanswered calls included; `args` is a subset
  match tree (operators, no references) that never matches a call without args. A case without
  selectors is the fallback and must come last. `result` (default null) may be a `$file` or
  `$literal`; `ok` defaults to true; `duration_ms` is recorded as the result's duration (it is not
  slept); `observe: {outcome_id, verdict}` adds a harness-attested `outcome.observed` after the result.
  Tool faults: `delay_ms` answers that many milliseconds later (recorded as the duration, unless
  `duration_ms` says otherwise), and `hang: true` never answers, so that the agent's own timeout
  handling is under test (the run then ends by the idle or run timeout, unless the agent goes on).

A tool is answered by the fixture whose key equals it, else by the first key in file order that
holds `*` or `?` and matches it as a glob; only that fixture is consulted, so a case miss there is
a fixture miss. Results are at most 1,040,384 bytes in canonical JSON, so that every trace line
`record` writes is within `check`'s default line limit.

Every problem is an error naming the file and the JSON path (`fixtures.json:
$.tools.refund.$cases[2].ok: must be true or false`), found before the agent starts.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Callable
from contextlib import suppress
from typing import Any, NamedTuple

import msgspec

from agent_invariants._js import utf16_len
from agent_invariants._paths import name_problem
from agent_invariants.contract_source import (
    ContractSource,
    file_problem,
    is_yaml,
    parse,
    read_at_most,
    read_limited,
)
from agent_invariants.errors import ContractError
from agent_invariants.events import VERDICTS
from agent_invariants.globs import compile_glob
from agent_invariants.jsonpos import member
from agent_invariants.jsontext import MAX_NESTING, nests_too_deep
from agent_invariants.match.canonical import canonical, canonical_text
from agent_invariants.match.quick import quick
from agent_invariants.match.tree import MatchError, compile_tree, no_references
from agent_invariants.record.redact import refused_keys
from agent_invariants.rules.fields import GLOB_LIMIT

__all__ = ("MAX_MESSAGE_BYTES", "Answer", "Approval", "Case", "Fixture", "Fixtures", "load_fixtures",
           "too_big_for_a_line")

MAX_MESSAGE_BYTES = 1024 * 1024 - 8 * 1024
"""The longest line the agent may send, and the largest result a fixture may hold (1,040,384
bytes of canonical JSON, or as `record` writes it if longer): with the fields `record` adds,
every trace line stays under 1 MiB."""
MAX_FILES_BYTES = 64 * 1024 * 1024
"""The most all `$file` fixtures may hold together (each file counted once)."""
_MAX_FILE_BYTES = MAX_MESSAGE_BYTES * 4
"""The most one `$file` may hold: room for indentation and escapes its value will not keep on the
trace line it must fit."""
MAX_RESULT_DEPTH = MAX_NESTING - 2
"""The deepest result or input: the trace event puts it two levels down, and `check` reads 500."""

MAX_DURATION_MS = 2**53
"""The largest `duration_ms` a case may give (a double still holds it exactly)."""

_ROOT_KEYS = ("version", "input", "tools", "approvals", "redact")
_CASE_KEYS = ("call_index", "args", "result", "ok", "duration_ms", "observe", "delay_ms", "hang")
MAX_DELAY_MS = 86_400_000
"""The longest `delay_ms` of a case (a day, as the longest timeout)."""
_APPROVAL_KEYS = ("tool", "args", "decision", "approval_scope", "approver")
_FORMS = ("$file", "$cases", "$literal")


class Case(NamedTuple):
    """One case of a `$cases` fixture (its selectors, and what it answers)."""

    position: int
    call_index: int | None
    args: Callable[[Any], bool] | None
    result: Any
    ok: bool
    duration_ms: int | float | None
    observe: tuple[str, str] | None   # (outcome_id, verdict)
    delay_ms: int | float | None = None
    hang: bool = False


class Fixture(NamedTuple):
    """What one key of `tools` answers: one literal result, or cases."""

    key: str
    matches: Callable[[str], bool]
    result: Any          # the answer of a literal or `$file` fixture
    cases: tuple[Case, ...] | None


class Answer(NamedTuple):
    """How a fixture answered a call: the result, and what the trace says of where it came from."""

    ok: bool
    result: Any
    duration_ms: int | float | None
    observe: tuple[str, str] | None
    provenance: dict[str, Any]   # {key} or {key, case}
    delay_ms: int | float | None = None   # answer this much later (a slow tool)
    hang: bool = False                    # never answer (a tool that hangs)


class Approval(NamedTuple):
    """An entry of `approvals`: which requests it decides, and how."""

    matches: Callable[[str], bool]
    args: Callable[[Any], bool] | None
    approved: bool
    approval_scope: str | None
    approver: str | None


class Fixtures:
    """A loaded fixtures file."""

    def __init__(self, input_value: Any, tools: list[Fixture], approvals: list[Approval],
                 redact: list[str] | None = None, files: list[str] | None = None) -> None:
        self.input = input_value
        self.redact = redact or []
        self.files = files or []   # the `$file`s read, by real path: inputs of the run too
        self.tools = tools
        self.approvals = approvals
        self._exact = {fixture.key: fixture for fixture in tools}
        self._globs = [fixture for fixture in tools if _is_glob(fixture.key)]
        self._counts = [0] * len(tools)   # calls so far whose tool each key matches
        self._keys: dict[str, tuple[int, ...]] = {}   # tool -> the positions of the keys that match it
        self._unanswered: dict[str, int] = {}   # calls so far of each tool no key matches

    def fixture_for(self, tool: str) -> Fixture | None:
        """The fixture that answers `tool`: its exact key, else the first glob key that matches."""
        found = self._exact.get(tool)
        if found is not None:
            return found
        return next((fixture for fixture in self._globs if fixture.matches(tool)), None)

    def count(self, tool: str) -> int:
        """Count a call of `tool` (every call, however it is answered) for every key that matches
        it; the call's index among those of its own fixture's key, or, when no key answers it,
        among the calls of the tool (as for an exact key: the per-tool index)."""
        keys = self._keys.get(tool)
        if keys is None:   # (worked out once per tool name)
            keys = self._keys[tool] = tuple(position for position, each in enumerate(self.tools)
                                            if each.key == tool or (_is_glob(each.key) and each.matches(tool)))
        fixture = self.fixture_for(tool)
        if fixture is None:
            call_index = self._unanswered.get(tool, 0)
            self._unanswered[tool] = call_index + 1
        else:
            call_index = 0
        for position in keys:
            if self.tools[position] is fixture:
                call_index = self._counts[position]
            self._counts[position] += 1
        return call_index

    def answer(self, tool: str, args: Any, call_index: int) -> Answer | None:
        """The answer to a call of `tool` with `args` (`None`: the call has none) that is its
        fixture's `call_index`-th (`count`); None for a miss."""
        fixture = self.fixture_for(tool)
        if fixture is None:
            return None
        if fixture.cases is None:
            return Answer(True, fixture.result, None, None, {"key": fixture.key})
        for case in fixture.cases:
            if case.call_index is not None and case.call_index != call_index:
                continue
            if case.args is not None and (args is None or not case.args(args)):
                continue
            return Answer(case.ok, case.result, case.duration_ms, case.observe,
                          {"key": fixture.key, "case": case.position}, case.delay_ms, case.hang)
        return None

    def decide(self, tool: str | None, args: Any) -> Approval | None:
        """The first entry of `approvals` whose tool glob and args tree match the request."""
        for approval in self.approvals:
            if tool is None or not approval.matches(tool):
                continue
            if approval.args is not None and (args is None or not approval.args(args)):
                continue
            return approval
        return None


def load_fixtures(path: str | os.PathLike[str], warn: Callable[[str], None] | None = None) -> Fixtures:
    """Read and check the fixtures file at `path`; ContractError names the file and the JSON path
    of the first problem. `warn` hears of cases that can never be chosen (a stderr line)."""
    label = os.fspath(path)
    data = read_limited(label, label, "fixtures files", "fixtures")
    document = parse(ContractSource(data, label, os.path.dirname(os.path.abspath(label)), is_yaml(label),
                                    "fixtures file"))
    return _Loader(label, os.path.dirname(os.path.abspath(label)), warn).root(document)


class _Loader:
    def __init__(self, label: str, folder: str, warn: Callable[[str], None] | None) -> None:
        self.label, self.folder, self.warn = label, folder, warn
        self.files: dict[str, Any] = {}   # real path -> content: a file named many times is read once
        self.files_size = 0

    def fail(self, path: str, problem: str) -> ContractError:
        return ContractError(self.label, path, problem)

    def root(self, document: Any) -> Fixtures:
        self.keys(document, "$", _ROOT_KEYS, required=("version", "tools"))
        if document["version"] != 1 or isinstance(document["version"], bool):
            raise self.fail("$.version", f"must be 1, got {_shown(document['version'])}")
        tools = document["tools"]
        if not isinstance(tools, dict):
            raise self.fail("$.tools", "must be an object: tool name or glob -> fixture")
        fixtures = [self.fixture(key, value, member("$.tools", key)) for key, value in tools.items()]
        approvals = document.get("approvals", [])
        if not isinstance(approvals, list):
            raise self.fail("$.approvals", "must be an array of {tool, args?, decision, approval_scope?, approver?}")
        decided = [self.approval(entry, f"$.approvals[{at}]") for at, entry in enumerate(approvals)]
        redact = document.get("redact", [])
        if not isinstance(redact, list):
            raise self.fail("$.redact", "must be an array of key names (strings)")
        refused = refused_keys()
        for at, key in enumerate(redact):
            if not isinstance(key, str) or not key.strip():
                raise self.fail(f"$.redact[{at}]", "must be a key name (a string, not blank), got "
                                f"{_shown(key) if isinstance(key, str) else _kind(key)}")
            if key.strip().lower() in refused:
                raise self.fail(f"$.redact[{at}]", f"{_shown(key)} names a field of events, reports or the harness's "
                                "data; redacting it would hide what the report is about")
        return Fixtures(self.value(document.get("input"), "$.input", "the input"), fixtures, decided, redact,
                        list(self.files))

    def keys(self, value: Any, path: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> None:
        if not isinstance(value, dict):
            raise self.fail(path, f"must be an object, got {_kind(value)}")
        for key in value:
            if key not in allowed:
                raise self.fail(member(path, key), f"unknown key (allowed: {', '.join(allowed)})")
        for key in required:
            if key not in value:
                raise self.fail(path, f"needs {key!r}")

    def fixture(self, key: str, value: Any, path: str) -> Fixture:
        if not key:
            raise self.fail(path, "a tool name or glob must not be empty")
        if utf16_len(key) > GLOB_LIMIT:   # (the trace names it with the fixture's result: the line must fit)
            raise self.fail(path, f"a tool name or glob is at most {GLOB_LIMIT} characters, as a rule's tool is")
        matches = compile_glob(key) if _is_glob(key) else key.__eq__
        form = _form(value)
        if form == "$cases":
            return Fixture(key, matches, None, self.cases(value["$cases"], f"{path}.$cases"))
        return Fixture(key, matches, self.result(value, path), None)

    def result(self, value: Any, path: str) -> Any:
        """The answer a fixture or case `result` stands for: a `$file`'s content, a `$literal`'s
        value, or the value itself; at most MAX_MESSAGE_BYTES in canonical JSON."""
        form = _form(value)
        if form == "$cases":
            raise self.fail(path, "$cases is a fixture of its own, not a result")
        if form == "$file":
            value = self.file(value["$file"], f"{path}.$file")
        elif form == "$literal":
            value = value["$literal"]
        return self.value(value, path, "the result")

    def value(self, value: Any, path: str, what: str) -> Any:
        """`value` if a trace line can carry it (`too_big_for_a_line`)."""
        problem = too_big_for_a_line(value, what)
        if problem is not None:
            raise self.fail(path, problem)
        return value

    def file(self, name: Any, path: str) -> Any:
        if not isinstance(name, str) or not name:
            raise self.fail(path, "must be a file name (relative to the fixtures file's folder)")
        problem = name_problem(name)
        if problem is not None:
            raise self.fail(path, f"{name}: {problem}")
        where = os.path.realpath(os.path.join(self.folder, name))
        if where in self.files:
            return self.files[where]
        try:
            if not stat.S_ISREG(os.stat(where).st_mode):   # a FIFO would block, a device never end
                raise self.fail(path, f"{name}: not a regular file")
            data = read_at_most(where, _MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise self.fail(path, f"{name}: {file_problem(exc, 'JSON')}") from None
        if len(data) > _MAX_FILE_BYTES:   # (read no further: what it holds must fit on one trace line)
            raise self.fail(path, f"{name}: larger than {_MAX_FILE_BYTES:,} bytes, more than a trace line can carry")
        self.files_size += len(data)
        if self.files_size > MAX_FILES_BYTES:
            raise self.fail(path, f"{name}: the $file fixtures hold more than {MAX_FILES_BYTES:,} bytes together")
        try:
            value = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise self.fail(path, f"{name}: not UTF-8 JSON ({exc})") from None
        self.files[where] = value
        return value

    def cases(self, value: Any, path: str) -> tuple[Case, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(path, "must be a non-empty array of cases")
        cases = [self.case(at, item, f"{path}[{at}]") for at, item in enumerate(value)]
        seen: dict[tuple[Any, str | None], int] = {}
        for at, (case, item) in enumerate(zip(cases, value, strict=True)):
            selector = (case.call_index, canonical_text(item["args"]) if "args" in item else None)
            if case.call_index is None and case.args is None and at != len(cases) - 1:
                raise self.fail(f"{path}[{at}]", "a case without call_index or args is the fallback and must "
                                                 "come last")
            if selector in seen:
                raise self.fail(f"{path}[{at}]", f"has the same selectors as case {seen[selector]}, so it is "
                                                 "never chosen")
            seen[selector] = at
            if case.call_index is not None and case.args is not None and (case.call_index, None) in seen \
                    and self.warn is not None:
                earlier = seen[(case.call_index, None)]
                self.warn(f"warning: {self.label}: {path}[{at}]: never chosen: case {earlier} answers every call with "
                          f"call_index {case.call_index} first")
        return tuple(cases)

    def case(self, position: int, item: Any, path: str) -> Case:
        self.keys(item, path, _CASE_KEYS)
        call_index = item.get("call_index")
        if call_index is not None and (not isinstance(call_index, int) or isinstance(call_index, bool)
                                       or call_index < 0):
            raise self.fail(f"{path}.call_index", "must be an integer 0 or more")
        if "call_index" in item and call_index is None:
            raise self.fail(f"{path}.call_index", "must be an integer 0 or more, got null")
        ok = item.get("ok", True)
        if not isinstance(ok, bool):
            raise self.fail(f"{path}.ok", f"must be true or false, got {_kind(ok)}")
        duration = item.get("duration_ms")
        if "duration_ms" in item and (isinstance(duration, bool) or not isinstance(duration, int | float)
                                      or not 0 <= duration <= MAX_DURATION_MS):
            raise self.fail(f"{path}.duration_ms", f"must be a number of milliseconds, 0..{MAX_DURATION_MS:,}")
        observe = None
        if "observe" in item:
            observe = self.observe(item["observe"], f"{path}.observe")
        delay = item.get("delay_ms")
        if "delay_ms" in item and (isinstance(delay, bool) or not isinstance(delay, int | float)
                                   or not 0 <= delay <= MAX_DELAY_MS):
            raise self.fail(f"{path}.delay_ms", f"must be a number of milliseconds, 0..{MAX_DELAY_MS:,}")
        hang = item.get("hang", False)
        if not isinstance(hang, bool):
            raise self.fail(f"{path}.hang", f"must be true or false, got {_kind(hang)}")
        if hang and any(key in item for key in ("result", "ok", "duration_ms", "observe", "delay_ms")):
            raise self.fail(f"{path}.hang", "a case that hangs answers nothing: drop result, ok, duration_ms, "
                                            "observe and delay_ms")
        return Case(position, call_index, self.args(item, path),
                    self.result(item["result"], f"{path}.result") if "result" in item else None,
                    ok, duration, observe, delay, hang)

    def observe(self, value: Any, path: str) -> tuple[str, str]:
        self.keys(value, path, ("outcome_id", "verdict"), required=("outcome_id", "verdict"))
        outcome, verdict = value["outcome_id"], value["verdict"]
        if not isinstance(outcome, str) or not 1 <= utf16_len(outcome) <= 500:
            raise self.fail(f"{path}.outcome_id", "must be a string of 1..500 characters")
        if verdict not in VERDICTS:
            raise self.fail(f"{path}.verdict", f"must be one of {', '.join(VERDICTS)}")
        return outcome, verdict

    def args(self, item: dict[str, Any], path: str) -> Callable[[Any], bool] | None:
        """The `args` selector of a case or approval: a subset match tree without references."""
        if "args" not in item:
            return None
        if not isinstance(item["args"], dict):
            raise self.fail(f"{path}.args", f"must be an object (a subset match tree), got {_kind(item['args'])}")
        try:
            holds = quick(compile_tree(item["args"], f"{path}.args"))
        except MatchError as exc:
            raise self.fail(exc.path, exc.problem) from None
        return lambda args: holds(args, no_references)

    def approval(self, entry: Any, path: str) -> Approval:
        self.keys(entry, path, _APPROVAL_KEYS, required=("tool", "decision"))
        tool = entry["tool"]
        if not isinstance(tool, str) or not tool:
            raise self.fail(f"{path}.tool", "must be a tool name or glob")
        if entry["decision"] not in ("approve", "deny"):
            raise self.fail(f"{path}.decision", f"must be \"approve\" or \"deny\", got {_shown(entry['decision'])}")
        texts = {}
        for key in ("approval_scope", "approver"):
            value = entry.get(key)
            if key in entry and (not isinstance(value, str) or not 1 <= utf16_len(value) <= 500):
                raise self.fail(f"{path}.{key}", "must be a string of 1..500 characters")
            texts[key] = value
        return Approval(compile_glob(tool), self.args(entry, path), entry["decision"] == "approve",
                        texts["approval_scope"], texts["approver"])


def too_big_for_a_line(value: Any, what: str) -> str | None:
    """Why a trace line cannot carry `value` (a result or an input, `what`), or None: it must be
    small enough, written in full or canonically, and not too deep."""
    size = len(msgspec.json.encode(value))
    with suppress(ValueError):   # (a value holding an integer beyond any double has no canonical form)
        size = max(len(canonical(value).encode("utf-8", "surrogatepass")), size)
    if size > MAX_MESSAGE_BYTES:
        return f"{what} is {size:,} bytes of JSON, more than the {MAX_MESSAGE_BYTES:,} a trace line can carry"
    if nests_too_deep([[value]]):
        return f"{what} is nested more than {MAX_RESULT_DEPTH} levels deep, more than a trace line can carry"
    return None


def _form(value: Any) -> str | None:
    """`$file`, `$cases` or `$literal` for an object whose only key is that; None for a literal."""
    if isinstance(value, dict) and len(value) == 1:
        key: str = next(iter(value))
        if key in _FORMS:
            return key
    return None


def _is_glob(key: str) -> bool:
    return "*" in key or "?" in key


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _shown(value: Any) -> str:
    return msgspec.json.encode(value).decode()[:80]
