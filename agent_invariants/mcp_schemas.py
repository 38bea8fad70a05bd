"""JSON Schemas of the MCP tools, generated from the structs the tools read and return.

A tool's input is a contract (the `Contract` struct) and arrays of events (the `Event` struct);
its output is a report struct (`CheckReport`, `CompareReport`, `TraceSummary`), with the struct
itself at the root, as MCP wants `"type": "object"` there. Definitions are described as the
committed schemas/ are (`agent_invariants.schemas`), so a client reads the same property
descriptions as a contract author.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ("definitions", "input_schema", "output_schema", "valid_contract_schema")


def input_schema(params: tuple[str, ...], descriptions: Mapping[str, str], max_events: int,
                 optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """A tool's arguments: `contract` is a contract object, any other parameter an array of at
    most `max_events` events (or, with `input_format`, records of another format), and the
    `optional` ones as `_OPTIONS` says; each described by `descriptions`."""
    from agent_invariants.contract import Contract
    from agent_invariants.events import Event

    structs = ([Contract] if "contract" in params else []) + ([Event] if params != ("contract",) else [])
    properties: dict[str, Any] = {}
    for param in params:
        if param == "contract":
            properties[param] = {"$ref": "#/$defs/Contract", "description": descriptions[param]}
        else:
            record = {"description": "With input_format: one record of that format, as a JSON value."}
            items = {"anyOf": [{"$ref": "#/$defs/Event"}, record]} if "input_format" in optional \
                else {"$ref": "#/$defs/Event"}
            properties[param] = {"type": "array", "items": items, "maxItems": max_events,
                                 "description": descriptions[param]}
    for param in optional:
        properties[param] = {**_OPTIONS[param], "description": descriptions[param]}
    return {"type": "object", "properties": properties, "required": list(params), "additionalProperties": False,
            "$defs": definitions(*structs)}


_OPTIONS: dict[str, dict[str, Any]] = {
    "strict": {"type": "boolean", "default": False},
    "partial": {"type": "boolean", "default": False},
    "no_lint": {"type": "boolean", "default": False},
    "interface": {"type": "boolean", "default": False},
    "input_format": {"type": "string", "enum": ["native", "auto", "otel", "openinference", "openai-agents",
                                                 "langsmith", "mcp-log"], "default": "native"},
    "run": {"type": "string", "minLength": 1},
}
"""The schema of each optional tool argument."""


def output_schema(struct: type) -> dict[str, Any]:
    """The struct's schema with the struct itself at the root."""
    defs = definitions(struct)
    root: dict[str, Any] = defs.pop(struct.__name__)
    if defs:
        root["$defs"] = defs
    return root


def valid_contract_schema() -> dict[str, Any]:
    """What the validate tool returns: `{"valid": true, "contract": <the normalised contract>}`."""
    from agent_invariants.contract import Contract

    return {
        "title": "ValidContract",
        "description": "A contract that validated, normalised.",
        "type": "object",
        "properties": {
            "valid": {"const": True, "description": "Always true (an invalid contract is a tool error)."},
            "contract": {"$ref": "#/$defs/Contract",
                         "description": "The contract normalised: strings trimmed, keys in schema order, "
                                        "absent optional keys left out, `$schema` dropped."},
        },
        "required": ["valid", "contract"],
        "$defs": definitions(Contract),
    }


def definitions(*roots: type) -> dict[str, Any]:
    """`$defs` for the structs, described as the committed schemas/ are (`agent_invariants.schemas`:
    every property gets its field's docstring, then its type's description); a rule's `kind` also
    gets the summary line of the kind's manual, and `\\Z` anchors become ECMA-262 ones."""
    from agent_invariants.manual import summary_line
    from agent_invariants.rules import RULE_KINDS
    from agent_invariants.schemas import add_checks, describe_fields, portable_patterns, structs_of, with_match_trees

    _, defs = msgspec.json.schema_components(roots, ref_template="#/$defs/{name}")
    structs: dict[str, type] = {}
    for root in roots:
        structs.update(structs_of(root))
    describe_fields(defs, structs)
    add_checks(defs, structs)
    if "Contract" in defs:   # a tool takes contracts of either version: version 2's match trees too
        with_match_trees(defs)
    for definition in defs.values():
        kind = definition.get("properties", {}).get("kind", {})
        tag = (kind.get("enum") or [None])[0]
        if tag in RULE_KINDS:
            summary = summary_line(tag)
            kind["description"] = f"The rule kind, `{tag}`: {summary[:1].lower()}{summary[1:]}"
    portable: dict[str, Any] = portable_patterns(defs)
    return portable
