"""YAML contracts, decoded with bounded work.

YAML can name a node (`&a`) and repeat it (`*a`). PyYAML shares the repeated node, but everything
after it (the checks, msgspec, a report) walks the document as a tree, where every repeat is a full
copy: nine aliases of nine aliases of ..., nine levels deep, make a 500-byte file of a billion
nodes ("billion laughs"). So before building anything, `decode_yaml` reads PyYAML's event stream
once and counts the nodes as the tree would hold them, an alias counting as every node it repeats.
A document is refused at the line where it passes `MAX_YAML_NODES`, where an alias repeats a node
that contains it (a tree without end), or where it nests deeper than JSON contracts may.

PyYAML is the optional `yaml` extra, imported when a YAML contract is read; its C parser is used
when it has one.
"""
from __future__ import annotations

from typing import Any

from agent_invariants.errors import ContractError
from agent_invariants.jsontext import MAX_NESTING, TOO_DEEP

__all__ = ("MAX_YAML_NODES", "decode_yaml")

MAX_YAML_NODES = 1_000_000
"""The most nodes (mappings, sequences, scalars, keys included) a YAML contract may hold, counting
each alias as the nodes it repeats. 10,000 rules of three fields each are 70,000 nodes."""


def decode_yaml(data: bytes, label: str) -> Any:
    """The YAML document in `data` as plain data (dicts, lists, strings, numbers...)."""
    try:
        import yaml
    except ImportError:
        raise ContractError(label, None, "YAML contracts need the yaml extra: pip install 'agent-invariants[yaml]'") \
            from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _count_nodes(yaml, yaml.parse(data, Loader=loader), label)
        return yaml.load(data, Loader=loader)
    except (yaml.YAMLError, ValueError, LookupError, AttributeError) as exc:
        raise ContractError(label, None, f"invalid YAML: {' '.join(str(exc).split())}") from None


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
