"""Lines of the values of a YAML contract, by JSON path (for error messages).

PyYAML (the yaml extra) composes the document into nodes that know where they start; this walks
them like `jsonpos.locate` walks JSON text. Best effort: an unparsable document gives no lines.
A node repeated through an alias is walked once, where it is defined, so the walk stays as small
as the text: a path through an alias gets the line where the repeated node starts.
"""
from __future__ import annotations

from collections.abc import Collection

from agent_invariants.jsonpos import Position, member

__all__ = ("locate_yaml",)


def locate_yaml(text: str, wanted: Collection[str] | None = None) -> dict[str, Position]:
    """Map each JSON path of the YAML `text` (or only those in `wanted`) to where its value starts."""
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}
    found: dict[str, Position] = {}
    walked: set[int] = set()
    pending = [] if root is None else [(root, "$")]
    while pending:
        node, path = pending.pop()
        if wanted is None or path in wanted:
            found.setdefault(path, Position((node.start_mark.line + 1, node.start_mark.column + 1)))
        if id(node) in walked:
            continue
        walked.add(id(node))
        if isinstance(node, yaml.MappingNode):
            children = [(value, member(path, str(key.value))) for key, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, f"{path}[{index}]") for index, item in enumerate(node.value)]
        else:
            children = []
        pending += reversed(children)   # document order: the first child is walked first
    return found
