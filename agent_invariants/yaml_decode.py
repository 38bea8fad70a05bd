"""YAML files (contracts, profiles, fixtures), decoded with bounded work.

YAML can name a node (`&a`) and repeat it (`*a`). PyYAML shares the repeated node, but everything
after it (the checks, msgspec, a report) walks the document as a tree, where every repeat is a full
copy: nine aliases of nine aliases of ..., nine levels deep, make a 500-byte file of a billion
nodes ("billion laughs"). So before building anything, `decode_yaml` reads PyYAML's event stream
once and counts the nodes as the tree would hold them, an alias counting as every node it repeats.
A document is refused at the line where it passes `MAX_YAML_NODES`, where an alias repeats a node
that contains it (a tree without end), or where it nests deeper than JSON contracts may.

A document PyYAML cannot read is refused in our words, at its line and column, and the place
where the broken construct started when PyYAML names one (`_yaml_problem`):

    invalid YAML at line 7, column 1: did not find expected ',' or ']' (in the [ ] list that
    starts at line 6, column 11)

PyYAML is the optional `yaml` extra, imported when a YAML contract is read; its C parser is used
when it has one.
"""
from __future__ import annotations

import re
from typing import Any

from agent_invariants.errors import ContractError
from agent_invariants.jsontext import MAX_DIGITS, MAX_NESTING, TOO_DEEP

__all__ = ("MAX_YAML_NODES", "decode_yaml")

MAX_YAML_NODES = 1_000_000
"""The most nodes (mappings, sequences, scalars, keys included) a YAML contract may hold, counting
each alias as the nodes it repeats. 10,000 rules of three fields each are 70,000 nodes."""


def decode_yaml(data: bytes, label: str) -> Any:
    """The YAML document in `data` as plain data (dicts, lists, strings, numbers...)."""
    try:
        import yaml
    except ImportError:
        raise ContractError(label, None, "YAML files need the yaml extra: pip install 'agent-invariants[yaml]'") \
            from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _count_nodes(yaml, yaml.parse(data, Loader=loader), label)
        return yaml.load(data, Loader=loader)
    except yaml.YAMLError as exc:
        raise ContractError(label, None, _yaml_problem(exc, data)) from None
    except (ValueError, LookupError, AttributeError) as exc:   # a tagged value PyYAML cannot build
        raise ContractError(label, None, f"invalid YAML: a value cannot be read ({' '.join(str(exc).split())})") \
            from None


def _yaml_problem(error: Any, data: bytes) -> str:
    """What PyYAML refused, at which line and column, in our words (its marks name the input
    `"<byte string>"`, which says nothing to whoever wrote the file)."""
    mark = getattr(error, "problem_mark", None)
    if mark is None and getattr(error, "position", None) is not None:   # a ReaderError: bad bytes
        line, column = _line_and_column(data, error.position)
        character = error.character
        if isinstance(character, int) and str(error.reason or "").startswith("control characters"):
            reason = f"control character U+{character:04X}, which YAML does not allow"
        else:
            reason = "invalid UTF-8"
        return f"invalid YAML at line {line}, column {column}: {reason}"
    problem = str(getattr(error, "problem", None) or "cannot be read")
    if mark is not None and problem.startswith("did not find expected") and _at_end(data, mark):
        problem = "the file ends before the value is complete"
    problem = _our_words(problem, mark, data)
    context = getattr(error, "context", None)
    context_mark = getattr(error, "context_mark", None)
    if context and context.startswith("while ") and context_mark is not None and (
            mark is None or (context_mark.line, context_mark.column) != (mark.line, mark.column)):
        thing = context.split(" ", 2)[-1]   # "while parsing a flow sequence" -> "a flow sequence"
        thing = _THINGS.get(thing, thing.removeprefix("a ").removeprefix("an "))
        problem += f" (in the {thing} that starts at {_place(context_mark)})"
    return f"invalid YAML at {_place(mark)}: {problem}" if mark is not None else f"invalid YAML: {problem}"


def _at_end(data: bytes, mark: Any) -> bool:
    """Whether only whitespace follows `mark` (PyYAML counts characters, not bytes)."""
    return not data.decode("utf-8", "replace")[mark.index:].strip()


def _place(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _line_and_column(data: bytes, position: int) -> tuple[int, int]:
    """The 1-based line and column of `position`, a character of `data` where it decodes (a
    byte where it does not: PyYAML counts bytes until a decoding error)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data.count(b"\n", 0, position) + 1, position - (data.rfind(b"\n", 0, position) + 1) + 1
    return text.count("\n", 0, position) + 1, position - (text.rfind("\n", 0, position) + 1) + 1


_THINGS = {"a flow sequence": "[ ] list", "a flow mapping": "{ } mapping", "a quoted scalar": "quoted string",
           "a plain scalar": "value", "a block mapping": "mapping", "a block collection": "list or mapping",
           "a block scalar": "block of text", "a simple key": "key", "a mapping": "mapping"}
_TAG = re.compile(r"could not determine a constructor for the tag '(?:tag:yaml\.org,2002:)?([^']*)'")
_ALIAS = re.compile(r"\*([^\s,\[\]{}]+)")


def _our_words(problem: str, mark: Any, data: bytes) -> str:
    """PyYAML's usual problems said the way a file's author needs to hear them."""
    tag = _TAG.match(problem)
    if tag is not None:
        shown = tag.group(1) if tag.group(1).startswith("!") else f"!!{tag.group(1)}"
        return (f"the tag {shown} is not allowed: the file may hold only plain values (strings, numbers, "
                "true or false, null, lists and mappings)")
    if problem == "found undefined alias":
        found = _ALIAS.match(_line_from(data, mark))
        alias = f" *{found.group(1)}" if found else ""
        return f"the alias{alias} names no anchor (&) defined before it"
    if problem == "found character that cannot start any token" and _line_from(data, mark)[:1] == "\t":
        return "a tab, which YAML does not allow for indentation (use spaces)"
    return _WORDS.get(problem, problem)


_WORDS = {
    "but found another document": "a second YAML document starts here; the file must hold one",
    "found unexpected end of stream": "the file ends before the value is complete",
    "did not find expected node content": "a value is missing here",
    "found a tab character that violates indentation": "a tab in the indentation, which YAML does not allow "
                                                       "(use spaces)",
    "found unhashable key": "a key that is a list or a mapping; keys must be plain values",
    "mapping values are not allowed in this context": "a `key: value` where none may be (check the indentation, "
                                                      "or quote a value holding ': ')",
}


def _line_from(data: bytes, mark: Any) -> str:
    """The text of `data` from `mark` to the end of its line."""
    if mark is None:
        return ""
    lines = data.decode("utf-8", "replace").split("\n")
    return lines[mark.line][mark.column:] if mark.line < len(lines) else ""


def _refuse_long_integer(event: Any, label: str, line: int) -> None:
    """A plain integer of more digits than Python converts (4,300) is refused here, at its line:
    PyYAML would stop building the document with a message about Python's settings."""
    if event.style or event.tag is not None or len(event.value) <= MAX_DIGITS:
        return   # quoted, tagged or short: not the integer meant here
    digits = event.value.lstrip("+-").replace("_", "")
    if digits.isascii() and digits.isdigit() and len(digits) > MAX_DIGITS:
        raise ContractError(label, None, f"an integer of {len(digits):,} digits is too long to read "
                                         f"(at most {MAX_DIGITS:,})", line)


def _count_nodes(yaml: Any, events: Any, label: str) -> None:
    """Refuse a document that would grow too big or too deep as a tree (see the module doc)."""
    sizes: dict[str, int] = {}   # anchor -> nodes in the finished node it names
    open_nodes: list[list[Any]] = []   # [anchor, nodes so far] of each mapping or sequence being read
    total = 0
    for event in events:
        line = event.start_mark.line + 1
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = size
            if open_nodes:
                open_nodes[-1][1] += size
            continue
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            sizes.pop(event.anchor, None)   # an alias inside is one to this node, not to an older one
            open_nodes.append([event.anchor, 1])
            if len(open_nodes) > MAX_NESTING:
                raise ContractError(label, None, TOO_DEEP, line)
            size = 1
        elif isinstance(event, yaml.ScalarEvent):
            _refuse_long_integer(event, label, line)
            if event.anchor is not None:
                sizes[event.anchor] = 1
            size = 1
            if open_nodes:
                open_nodes[-1][1] += 1
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                _refuse_recursion(event.anchor, open_nodes, label, line)
                return   # an undefined alias: PyYAML stops there with its own error
            size = sizes[event.anchor]
            if open_nodes:
                open_nodes[-1][1] += size
        else:   # start and end of the stream and of documents
            continue
        total += size
        if total > MAX_YAML_NODES:
            what = "YAML aliases expand" if isinstance(event, yaml.AliasEvent) else "the YAML document grows"
            raise ContractError(label, None, f"{what} past the limit of {MAX_YAML_NODES:,} nodes", line)


def _refuse_recursion(anchor: str, open_nodes: list[list[Any]], label: str, line: int) -> None:
    if any(frame[0] == anchor for frame in open_nodes):
        raise ContractError(label, None, f"the YAML alias *{anchor} repeats a node that contains it", line)
