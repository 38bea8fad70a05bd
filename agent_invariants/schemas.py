"""JSON Schemas (draft 2020-12) of the contract, an event and the reports, made from the structs.

    python -m agent_invariants.schemas            # write schemas/*.schema.json
    python -m agent_invariants.schemas --check    # exit 1 if a committed schema is out of date

The structs are the single source: msgspec turns them into JSON Schema, and this module adds
what msgspec leaves out: each field's docstring as its `description` (every property gets one),
and an end anchor every validator reads alike: Python's `\\Z` becomes `(?![\\s\\S])`, since `$`
also matches before a final newline in Python's `re` (which Python validators use) but not in
ECMA-262 (which editors use). A contract that starts with
`"$schema": "<CONTRACT_SCHEMA_URL>"` is validated and completed by editors such as VS Code.
"""
from __future__ import annotations

import ast
import inspect
import json
import sys
import textwrap
import typing
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec

__all__ = ("CONTRACT_SCHEMA_URL", "SCHEMAS", "describe_fields", "generate", "main", "portable_patterns",
           "structs_of")

BASE_URL = "https://raw.githubusercontent.com/agent-invariants/agent-invariants/main/schemas/"
CONTRACT_SCHEMA_URL = BASE_URL + "contract-v1.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _targets() -> dict[str, tuple[Any, str]]:
    from agent_invariants.contract import Contract
    from agent_invariants.events import Event
    from agent_invariants.report import CheckReport, CompareReport

    return {
        "contract-v1.schema.json": (
            Contract, "An agent-invariants contract, version 1: the rules a trace is checked against."),
        "event-v1.schema.json": (
            Event, "One event of an agent trace (a line of a JSONL trace, or an item of a JSON array trace)."),
        "check-report-v1.schema.json": (
            CheckReport, "The agent-invariants/check/v1 report (`check --format json`)."),
        "compare-report-v1.schema.json": (
            CompareReport, "The agent-invariants/compare/v1 report (`compare --format json`)."),
    }


SCHEMAS = ("contract-v1.schema.json", "event-v1.schema.json", "check-report-v1.schema.json",
           "compare-report-v1.schema.json")


def generate() -> dict[str, dict[str, Any]]:
    """Every schema, by file name."""
    out = {}
    for name, (struct, title) in _targets().items():
        schema = msgspec.json.schema(struct)
        describe_fields(schema.get("$defs", {}), structs_of(struct))
        portable_patterns(schema)
        out[name] = {"$schema": DRAFT, "$id": BASE_URL + name, "title": title, **schema}
    return out


def structs_of(root: Any) -> dict[str, type]:
    """Every Struct class reachable from `root`, by name (as msgspec names its $defs)."""
    found: dict[str, type] = {}

    def visit(hint: Any) -> None:
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            if hint.__name__ in found:
                return
            found[hint.__name__] = hint
            for field in msgspec.structs.fields(hint):
                visit(field.type)
        for argument in typing.get_args(hint):
            visit(argument)

    visit(root)
    return found


def describe_fields(definitions: dict[str, Any], structs: dict[str, type]) -> None:
    """Give every property a description: the field's docstring, then its type's, if any."""
    for name, definition in definitions.items():
        struct = structs.get(name)
        docs = _field_docs(struct) if struct else {}
        for field, spec in definition.get("properties", {}).items():
            own = docs.get(_python_name(struct, field) if struct else field)
            if field == "kind" and "enum" in spec and not own:
                own = f"The rule kind: `{spec['enum'][0]}`."
            parts = [part for part in (own, spec.get("description")) if part]
            spec["description"] = " ".join(dict.fromkeys(parts)) or _fallback(field)


def _python_name(struct: type, encoded: str) -> str:
    for field in msgspec.structs.fields(struct):
        if field.encode_name == encoded:
            return field.name
    return encoded


def _field_docs(struct: type) -> dict[str, str]:
    """`name: type` followed by a string literal, in the class and its Struct bases."""
    docs: dict[str, str] = {}
    for cls in reversed(struct.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)) or cls is msgspec.Struct:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for statement, following in pairwise(body):
            if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def _fallback(field: str) -> str:
    return field.replace("_", " ").capitalize() + "."


def portable_patterns(node: Any) -> Any:
    """Rewrite (in place, and return) every `pattern` ending in Python's `\\Z` for any validator."""
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str) and node["pattern"].endswith("\\Z"):
            node["pattern"] = node["pattern"][:-2] + "(?![\\s\\S])"
        for value in node.values():
            portable_patterns(value)
    elif isinstance(node, list):
        for value in node:
            portable_patterns(value)
    return node


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[args.index("--out") + 1]) if "--out" in args else Path("schemas")
    stale = []
    for name, schema in generate().items():
        path = folder / name
        text = render(schema)
        if "--check" in args:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print("out of date (run python -m agent_invariants.schemas): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
