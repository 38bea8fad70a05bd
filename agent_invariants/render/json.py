"""JSON: the `agent-invariants/check/v1` and `compare/v1` reports, as CI scripts read them.

Two-space indentation, keys in the documented order, non-ASCII characters written as they are,
absent values left out, a newline at the end. Same report, same bytes.

    {
      "schema": "agent-invariants/check/v1",
      "contract": {"name": "refund-desk", "version": 1},
      "passed": false,
      ...
"""
from __future__ import annotations

from typing import Any

import msgspec

__all__ = ("render", "to_json")


def render(report: Any) -> str:
    """The report as pretty JSON text (ends with a newline)."""
    return to_json(report)


def to_json(value: Any) -> str:
    """Any report, summary or plain data as 2-space indented JSON with a final newline."""
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode("utf-8") + "\n"
