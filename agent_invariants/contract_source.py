"""Contract and pack files: read once and within a size limit, parsed, and pointed into.

A contract is small, but its path comes from the user and may name anything: a log of gigabytes,
`/dev/zero`, a FIFO. `read_contract` reads at most `MAX_CONTRACT_BYTES` + 1 bytes, in chunks, and
refuses a bigger file. The `ContractSource` it returns is the only read of the file: `load_contract`
decodes it and `contract_lines` finds the rules in it for SARIF, so a FIFO is read once.

`parse` turns the bytes into the document (JSON, or YAML with the yaml extra, see `yaml_decode`),
`mended` makes it what the reference reads, and `contract_error` turns problems into a
`ContractError` giving the line of each in the file.
"""
from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Collection, Iterable
from typing import Any, BinaryIO, NamedTuple

import msgspec

from agent_invariants._js import mend_lone_surrogates, replace_lone_surrogates
from agent_invariants._paths import STDIN, missing, name_problem
from agent_invariants.errors import ContractError
from agent_invariants.jsonpos import Position, locate, member, path_and_parents
from agent_invariants.jsontext import (
    AS_CONTRACT,
    MAX_NESTING,
    TOO_DEEP,
    nests_too_deep,
    non_finite,
    syntax_problem_in_file,
    text_shape,
    wide_unicode,
)
from agent_invariants.validation import Problem, line_of

__all__ = (
    "MAX_CONTRACT_BYTES",
    "MAX_SHOWN_PROBLEMS",
    "ContractLines",
    "ContractSource",
    "contract_error",
    "contract_lines",
    "contract_positions",
    "file_problem",
    "json_file",
    "first_problems",
    "is_yaml",
    "mended",
    "parse",
    "read_at_most",
    "read_contract",
    "read_limited",
)

MAX_CONTRACT_BYTES = 16 * 1024 * 1024
"""Contract and pack files larger than this (16 MiB) are refused. 10,000 rules of a line each
take about 1 MiB; the limit is there so that no path makes the loader read without end."""

MAX_SHOWN_PROBLEMS = 100
"""The most problems one error lists (one line each); a last line says how many more there are."""

_CHUNK = 1 << 20


class ContractSource(NamedTuple):
    """The bytes of a contract file, read once, and what loading them needs besides."""

    data: bytes
    """The file's content (at most `MAX_CONTRACT_BYTES`)."""
    label: str
    """How messages name the file: the path as given."""
    base: str
    """The folder that relative pack paths in `extends` start from."""
    yaml: bool
    """Decode as YAML (a `.yaml` or `.yml` file) rather than JSON."""
    kind: str = "contract"
    """What the file is, as messages name it ("contract", "profile", "fixtures file")."""


class ContractLines(NamedTuple):
    """Where things start in a contract file (1-based lines), for reports that point into it."""

    rules: dict[str, int]
    """Rule id -> line of the rule, for the contract's own rules (rules from packs are elsewhere)."""
    compare: int | None
    """Line of the `compare` policy, if the contract has one."""


def read_contract(path: str | os.PathLike[str], *, label: str | None = None, kind: str = "contract") -> ContractSource:
    """Read the contract file at `path` (`-`: standard input, as JSON) once, refusing it past
    `MAX_CONTRACT_BYTES`. Messages name it `label` (default: the path as given, `<stdin>`), and
    what it should be `kind` (a mapping profile is read as a contract is)."""
    path = os.fsdecode(path)   # (a path object may give bytes, as a trace's may)
    if not path:
        raise ContractError('""', None, f"an empty path names no {kind} file")
    if path == "-":   # standard input: JSON, with packs relative to the current folder
        label = STDIN if label is None else label
        return ContractSource(read_limited(0, label, f"{kind}s", kind), label, os.path.abspath(os.curdir), False,
                              kind)
    label = path if label is None else label
    return ContractSource(read_limited(path, label, f"{kind}s", kind), label, os.path.dirname(os.path.abspath(path)),
                          is_yaml(path), kind)


def read_limited(path: str | int, label: str, what: str, kind: str = "contract") -> bytes:
    """The bytes of the file at `path` (or of an open descriptor, left open), read in chunks and
    never more than one byte past the limit, so that neither a huge file nor an endless stream is
    read whole. `what` ("contracts", "packs", "fixtures files") says whose limit it is in the
    message, `kind` what the file should have been ("not a contract file")."""
    problem = name_problem(path)
    if problem is not None:
        raise ContractError(label, None, problem)
    try:
        data = read_at_most(path, MAX_CONTRACT_BYTES + 1)
    except OSError as exc:
        raise ContractError(label, None, file_problem(exc, kind)) from None
    if len(data) > MAX_CONTRACT_BYTES:
        raise _too_big(label, what)
    return data


def read_at_most(path: str | int, limit: int) -> bytes:
    """The first `limit` bytes of the file at `path` (or of an open descriptor, left open), read in
    chunks: a huge file or an endless stream is never read whole. OSError as `open` raises it."""
    with open(path, "rb", buffering=0, closefd=not isinstance(path, int)) as handle:
        return _read_at_most(handle, limit)


def json_file(path: str, limit: int, where: str, what: str) -> Any:
    """The JSON value in the file at `path`, read within `limit` bytes; InputError starting with
    `where` (an option and the file, say) when it cannot be read, is too large or is not JSON.
    `what` names such a file in messages ("JSON", "snapshot")."""
    from agent_invariants.errors import InputError

    try:
        data = read_at_most(path, limit + 1)
    except OSError as exc:
        raise InputError(f"{where}: {file_problem(exc, what)}") from None
    if len(data) > limit:
        raise InputError(f"{where}: larger than {limit:,} bytes")
    wide = wide_unicode(data)
    if wide is not None:
        raise InputError(f"{where}: {wide}")
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputError(f"{where}: {_byte_order_mark('')}")
    try:   # (a lone surrogate escape reads as U+FFFD, as everywhere)
        return msgspec.json.decode(replace_lone_surrogates(data))
    except RecursionError:
        raise InputError(f"{where}: not JSON: {TOO_DEEP}") from None
    except msgspec.DecodeError as exc:   # (also invalid UTF-8, and 1e999): where, as a contract's
        raise InputError(f"{where}: not JSON: {syntax_problem_in_file(data, exc)}") from None


def file_problem(exc: OSError, what: str) -> str:
    """What a message says of a file that could not be read (`what`: "contract", "trace")."""
    if isinstance(exc, IsADirectoryError):
        return f"is a directory, not a {what} file"
    if isinstance(exc, FileNotFoundError):
        return missing(exc.filename)
    if isinstance(exc, PermissionError):
        return "permission denied"
    return f"cannot read: {exc.strerror or exc}"


def _read_at_most(handle: BinaryIO, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = handle.read(min(_CHUNK, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _too_big(label: str, what: str) -> ContractError:
    return ContractError(label, None, f"larger than the {MAX_CONTRACT_BYTES >> 20} MiB limit for {what}")


def is_yaml(path: str) -> bool:
    return path.lower().endswith((".yaml", ".yml"))


def parse(source: ContractSource) -> Any:
    """The document in `source`, as the reference reads it (see `mended`); a key given twice in
    one object of a version-2 JSON contract, a profile or a fixtures file is refused."""
    document = _document(source)
    if not source.yaml and (source.kind != "contract" or (isinstance(document, dict)
                                                          and document.get("version") == 2)):
        twice = _key_given_twice(source.data)
        if twice is not None:   # (placed at the key's last value, which readers keep: the one to drop)
            at = locate(source.data.decode("utf-8", "replace"), (twice,), last=True).get(twice)
            raise ContractError(source.label, twice, _TWICE, None if at is None else at.line)
    return document


def _document(source: ContractSource) -> Any:
    """`parse`'s document, for readers of a file `parse` took already (the lines of its rules)."""
    if len(source.data) > MAX_CONTRACT_BYTES:   # bytes handed to load_contract, never read here
        raise _too_big(source.label, "contracts")
    if source.yaml:
        from agent_invariants.yaml_decode import decode_yaml

        document = decode_yaml(source.data, source.label)
        if document is None and all(not line.strip() or line.lstrip().startswith(b"#")
                                    for line in source.data.splitlines()):   # PyYAML reads null
            raise ContractError(source.label, None, "is empty (no YAML document)")
        return mended(document, source.label, source)
    if not source.data.strip(b" \t\r\n"):
        raise ContractError(source.label, None, "is empty (no JSON value)")
    document = _parse_json(source.data, source.label, source.kind)
    if nests_too_deep(document):
        raise ContractError(source.label, None, TOO_DEEP)
    return document


_TWICE = "key given twice in one object: JSON readers keep the last one without a word; write it once"


def _key_given_twice(data: bytes) -> str | None:
    """The JSON path of the first key that an object of the document holds twice, or None.
    JSON readers keep the last of the two (the Node tool's `JSON.parse` did, so a version-1
    contract still may); in a version-2 contract, a profile or a fixtures file, `"max": 3, ...,
    "max": 0` would change a bound with no one the wiser, so it is refused."""
    import json

    twice: dict[int, str] = {}

    def keyed(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        made = dict(pairs)
        if len(made) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    twice[id(made)] = key
                    break
                seen.add(key)
        return made

    document = json.loads(data, object_pairs_hook=keyed)
    if not twice:
        return None
    stack: list[tuple[Any, str]] = [(document, "$")]
    while stack:   # (depth first, in the order written: the first such object is named)
        value, path = stack.pop()
        if isinstance(value, dict):
            if id(value) in twice:
                return member(path, twice[id(value)])
            stack.extend((item, member(path, key)) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{index}]") for index, item in reversed(list(enumerate(value))))
    return None   # (not reached: every object the hook saw is in the document)


def _parse_json(data: bytes, label: str, kind: str) -> Any:
    wide = wide_unicode(data)
    if wide is not None:
        raise ContractError(label, None, wide, line=1)
    if data.startswith(b"\xef\xbb\xbf"):
        raise ContractError(label, None, _byte_order_mark(" (as the Node tool's contracts may not)"
                                                          if kind == "contract" else ""))
    data = replace_lone_surrogates(data)   # same length: positions in errors stay right
    try:
        return _JSON.decode(data)
    except RecursionError:   # far deeper than allowed (`nests_too_deep` checks the rest)
        raise ContractError(label, None, TOO_DEEP) from None
    except msgspec.DecodeError as exc:
        misplaced = AS_CONTRACT.get(text_shape(data) or "")   # JSON Lines: a trace given as a contract?
        raise ContractError(label, None, misplaced.format(kind=kind) if misplaced else
                            syntax_problem_in_file(data, exc)) from None


def _byte_order_mark(why: str) -> str:
    return f"starts with a UTF-8 byte order mark, which these JSON files may not start with{why}; save the file " \
        "without it"


def _json_float(text: str) -> int | float:
    """A JSON number written with a fraction or an exponent, as `mended` reads it, while the
    decoder reads the file: a walk over the decoded document afterwards took seconds for a file
    of a million values. Infinity stays the error it is without this hook."""
    value = float(text)
    if math.isinf(value):
        raise ValueError("Number out of range")
    return _number(value)


_JSON = msgspec.json.Decoder(float_hook=_json_float)
"""Decodes contract JSON; lone surrogate escapes are already U+FFFD (`replace_lone_surrogates`)."""


def mended(document: Any, label: str, source: ContractSource | None = None) -> Any:
    """The document as the reference reads it: JSON has one number type, so `3.0` is the integer
    3; and a lone surrogate in a string (a mapping from Python may hold one) is U+FFFD, as it is
    in a file (see `replace_lone_surrogates`). For documents from Python and YAML (JSON is read
    so already); one nested more than `MAX_NESTING` levels deep is refused, and so is NaN or an
    infinity (YAML's `.nan`, `.inf`), which no JSON text can hold: the error names its path (and
    its line in `source`)."""
    try:
        return _mended(document, label, 1)
    except _NotFinite:
        path, value = _first(document, _is_non_finite)
        raise contract_error(label, [Problem(path, f"{non_finite(value)} is not a number JSON allows")],
                             source) from None
    except _Unordered:   # (only a mapping from Python holds one)
        path, _ = _first(document, _is_set)
        raise contract_error(label, [Problem(path, "a set is not a JSON value: give a list (a set has no order: "
                                               "the report would change from run to run)")], source) from None


class _NotFinite(Exception):
    """NaN or an infinity in a document (see `mended`); where is found once it is refused."""


class _Unordered(Exception):
    """A Python set in a document (see `mended`); where is found once it is refused."""


def _is_non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _is_set(value: Any) -> bool:
    return isinstance(value, (set, frozenset))


def _first(document: Any, found: Callable[[Any], bool]) -> tuple[str, Any]:
    """The path of the first value of `document` that is `found` (a key counts at its mapping),
    in document order, and the value."""
    pending: list[tuple[Any, str]] = [(document, "$")]
    while pending:
        value, path = pending.pop()
        if found(value):
            return path, value
        if isinstance(value, dict):
            for key in value:
                if found(key):
                    return path, key
            pending += reversed([(item, member(path, key)) for key, item in value.items()])
        elif isinstance(value, list):
            pending += reversed([(item, f"{path}[{index}]") for index, item in enumerate(value)])
    return "$", None   # not reached: `_mended` found one


def _mended(value: Any, label: str, depth: int) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotFinite
        return _number(value)
    if isinstance(value, str):
        return mend_lone_surrogates(value)
    if isinstance(value, (set, frozenset)):
        raise _Unordered
    if not isinstance(value, (dict, list)):
        return value
    if depth > MAX_NESTING:
        raise ContractError(label, None, TOO_DEEP)
    # loops, not comprehensions: one stack frame per level
    if isinstance(value, list):
        items = []
        for item in value:
            items.append(_mended(item, label, depth + 1))
        return items
    copy = {}
    for key, item in value.items():
        copy[_mended(key, label, depth + 1)] = _mended(item, label, depth + 1)
    return copy


def _number(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def first_problems(problems: Iterable[Problem]) -> list[Problem]:
    """The problems an error will list, and one more if there are more (see `contract_error`):
    asking no further keeps a file of a million problems as quick to refuse as one of a hundred."""
    return list(itertools.islice(problems, MAX_SHOWN_PROBLEMS + 1))


def contract_error(label: str, problems: list[Problem], source: ContractSource | None = None) -> ContractError:
    """A ContractError listing `problems` (the first `MAX_SHOWN_PROBLEMS`, and a line saying there
    are more), each with its line in `source` when there is one."""
    shown = problems[:MAX_SHOWN_PROBLEMS]
    positions: dict[str, Position] = {}
    if source is not None:
        positions = contract_positions(source, {where for problem in shown for where in path_and_parents(problem.path)})
    items: list[tuple[str | None, str, int | None]] = [
        (problem.path, problem.message, line_of(problem.path, positions)) for problem in shown]
    if len(problems) > len(shown):
        items.append((None, f"more problems not listed (the first {MAX_SHOWN_PROBLEMS} are)", None))
    (path, message, line), *more = items
    return ContractError(label, path, message, line, more)


def contract_positions(source: ContractSource, wanted: Collection[str] | None = None) -> dict[str, Position]:
    """Where the value at each JSON path (or at each path in `wanted`) starts in the file; best
    effort: a file that does not decode gives no positions."""
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError:
        return {}
    if not source.yaml:
        return locate(text, wanted)
    try:
        from agent_invariants.yaml_positions import locate_yaml

        return locate_yaml(text, wanted)
    except ImportError:   # no yaml extra: the contract did not load either
        return {}


def pointer_lines(source: ContractSource, rules: list[str], pointers: list[str]) -> dict[str, int]:
    """The line in the contract file of each JSON pointer into the contract after `extends`
    (`/rules/3/tools/1`, where rule 3 is the one with id `rules[3]`), found through that rule's
    place in the file (the rule's own line when the rest cannot be followed); none for a rule
    that comes from a pack. The file is parsed and scanned once for them all."""
    try:
        document = _document(source)
    except ContractError:
        return {}
    own = document.get("rules") if isinstance(document, dict) else None
    if not isinstance(own, list):
        return {}
    at_id = {rule["id"].strip(): index for index, rule in reversed(list(enumerate(own)))
             if isinstance(rule, dict) and isinstance(rule.get("id"), str)}
    paths: dict[str, str] = {}
    for pointer in pointers:
        steps = [step.replace("~1", "/").replace("~0", "~") for step in pointer.split("/")[1:]]
        if len(steps) < 2 or steps[0] != "rules" or not steps[1].isdigit() or int(steps[1]) >= len(rules):
            continue
        at = at_id.get(rules[int(steps[1])])
        if at is None:
            continue
        path, value = f"$.rules[{at}]", own[at]
        for step in steps[2:]:
            if isinstance(value, list) and step.isdigit() and int(step) < len(value):
                path, value = f"{path}[{step}]", value[int(step)]
            elif isinstance(value, dict) and step in value:
                path, value = member(path, step), value[step]
            else:
                break
        paths[pointer] = path
    positions = contract_positions(source, {where for path in paths.values() for where in path_and_parents(path)})
    lines = {pointer: line_of(path, positions) for pointer, path in paths.items()}
    return {pointer: line for pointer, line in lines.items() if line is not None}


def contract_lines(source: ContractSource) -> ContractLines:
    """The lines of the contract's own rules (by id) and of its compare policy, for renderers
    that point into the file (SARIF). Reads nothing: `source` holds the bytes."""
    try:
        document = _document(source)
    except ContractError:
        return ContractLines({}, None)
    rules = document.get("rules") if isinstance(document, dict) else None
    rules = rules if isinstance(rules, list) else []
    positions = contract_positions(source, {"$.compare", *(f"$.rules[{index}]" for index in range(len(rules)))})
    lines: dict[str, int] = {}
    for index, rule in enumerate(rules):
        found = positions.get(f"$.rules[{index}]")
        if found is not None and isinstance(rule, dict) and isinstance(rule.get("id"), str):
            lines.setdefault(rule["id"], found.line)
    compare = positions.get("$.compare")
    return ContractLines(lines, None if compare is None else compare.line)
