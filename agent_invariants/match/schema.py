"""JSON Schema (2020-12) on a call's args, through the `jsonschema` extra (spec §3.1).

The validator is the reference implementation, `jsonschema`, imported only when a contract has a
`schema`: without the extra that contract is a load error that says how to install it. Only local
references (`"$ref": "#/$defs/..."`) are allowed, so checking a trace never reads a file or the
network; a schema that is itself invalid is a load error naming its JSON path.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_invariants.match.paths import pointer
from agent_invariants.rules.fields import FieldProblem

__all__ = ("ArgsSchema",)

_REFERENCE_KEYS = ("$ref", "$dynamicRef")
_MESSAGE = 200


class ArgsSchema:
    """A checked, compiled schema; `errors(args, most)` lists how the args break it."""

    def __init__(self, schema: dict[str, Any], field: str) -> None:
        try:
            from jsonschema import Draft202012Validator, SchemaError
        except ImportError:
            raise FieldProblem(field, "a schema needs the jsonschema extra: "
                                      "pip install 'agent-invariants[jsonschema]'") from None
        for where, reference in _references(schema, field):
            if not reference.startswith("#"):
                raise FieldProblem(where, f"only local references (starting with #) are allowed, got {reference!r}")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = ".".join([field, *(str(part) for part in exc.path)])
            raise FieldProblem(where, f"not a valid JSON Schema: {_cut(exc.message)}") from None
        self._validator = Draft202012Validator(schema)

    def errors(self, args: Any, most: int) -> list[dict[str, str]]:
        """The first `most` errors, as `{pointer, message}` with pointers into the args, in the
        validator's order (which the schema's own order decides)."""
        found = []
        for error in self._validator.iter_errors(args):
            found.append({"pointer": pointer(tuple(error.absolute_path)), "message": _cut(error.message)})
            if len(found) >= most:
                break
        return found


def _references(schema: Any, path: str) -> Iterator[tuple[str, str]]:
    """(JSON path, reference) of each `$ref` and `$dynamicRef` that is a string, at any depth."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in _REFERENCE_KEYS and isinstance(value, str):
                yield f"{path}.{key}", value
            else:
                yield from _references(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for position, item in enumerate(schema):
            yield from _references(item, f"{path}[{position}]")


def _cut(text: str) -> str:
    return text if len(text) <= _MESSAGE else text[:_MESSAGE] + "…"
