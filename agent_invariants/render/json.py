"""JSON: the `agent-invariants/check/v1` and `compare/v1` reports, as CI scripts read them.

Two-space indentation, keys in the documented order, non-ASCII characters written as they are,
absent values left out, a newline at the end. Same report, same bytes.

    {
      "schema": "agent-invariants/check/v1",
      "contract": {"name": "refund-desk", "version": 1},
      "passed": false,
      ...

A validated contract is written as `validate` prints it, `{"valid": true, "contract": ...}`, the
contract normalised (`Contract.to_dict`); a trace summary as its counts.

msgspec writes it: orjson (measured on a report of 100,000 violations) took twice as long, as a
report must first become plain data for it, and writes floats differently (`1e+16`, not `1e16`).
"""
from __future__ import annotations

from typing import Any

import msgspec

from agent_invariants._js import js_number_hook
from agent_invariants._safe import log_safe_report
from agent_invariants.contract import Contract
from agent_invariants.render import DEFAULTS, RenderOptions

__all__ = ("render", "to_json")


def render(report: Any, options: RenderOptions = DEFAULTS) -> str:
    """The report (or validated contract, or trace summary) as pretty JSON text (ends with a
    newline). No option applies to JSON."""
    if isinstance(report, Contract):
        return to_json({"valid": True, "contract": report.to_dict()})
    return to_json(report)


def to_json(value: Any) -> str:
    """Any report, summary or plain data as 2-space indented JSON with a final newline."""
    text = msgspec.json.format(msgspec.json.encode(value, enc_hook=js_number_hook), indent=2).decode("utf-8")
    return log_safe_report(text + "\n", "json")
