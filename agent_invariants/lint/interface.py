"""`lint --interface`: every path of the final output the contract reads, and whether an
output_schema rule requires it, so a team sees what its agent's report must hold.

Read are: the paths of conditions (`when` of output_match, required_when and forbidden_when,
nested `any_of`/`all_of` included) and of `tool_calls.matches_output_length`, every node of an
output_match tree (an object and each of its members; the elements of a literal array and of
`$contains` as `[]`, spec §10 point 46), and
the `$from_output` paths of tool_args trees.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from msgspec import UNSET

from agent_invariants.lint.codes import output_reads, requires
from agent_invariants.lint.facts import Facts
from agent_invariants.lint.report import Read
from agent_invariants.match.paths import parse_path
from agent_invariants.stability import ITEM, PATH_LIMIT, Path, path_text

__all__ = ("interface",)


def interface(facts: Facts) -> list[Read]:
    """The output paths the rules read, sorted by path (as text), with their readers."""
    readers: dict[Path, list[int]] = {}
    for index, rule in enumerate(facts.rules):
        paths: list[Path] = []
        for text, _ in output_reads(rule, index):
            paths += _parsed(text)
        if rule.kind == "output_match":
            paths += _tree_nodes(rule.match, ())
        if rule.kind == "tool_args" and rule.match is not UNSET:
            for text in _from_output(rule.match):
                paths += _parsed(text)
        for path in dict.fromkeys(paths):
            readers.setdefault(path, []).append(index)
    schemas = [rule.schema for rule in facts.rules if rule.kind == "output_schema"]
    entries = [Read(path=path_text(path, PATH_LIMIT), rules=[facts.rules[index].id for index in indexes],
                    required=any(requires(schema, tuple("0" if step == ITEM else str(step) for step in path))
                                 for schema in schemas))
               for path, indexes in readers.items()]
    return sorted(entries, key=lambda entry: entry.path)


def _parsed(text: str) -> list[Path]:
    try:
        return [parse_path(text)]
    except ValueError:
        return []


def _tree_nodes(tree: Any, path: Path) -> Iterator[Path]:
    """The paths of a match tree's nodes: an object and its plain members; a literal array and
    `$contains` step into the elements, `$any_of` branches stay at the node."""
    yield path
    if isinstance(tree, list):
        for item in tree:
            yield from _tree_nodes(item, (*path, ITEM))
        return
    if not isinstance(tree, dict):
        return
    for key, value in tree.items():
        if key == "$contains":
            yield from _tree_nodes(value, (*path, ITEM))
        elif key == "$any_of" and isinstance(value, list):
            for branch in value:
                yield from (node for node in _tree_nodes(branch, path) if node != path)
        elif not key.startswith("$"):
            yield from _tree_nodes(value, (*path, key))


def _from_output(tree: Any) -> Iterator[str]:
    """The paths of every `$from_output` reference in a tree."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key == "$from_output" and isinstance(value, str):
                yield value
            elif key != "$literal":
                yield from _from_output(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _from_output(item)
