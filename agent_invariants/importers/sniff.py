"""What format a record is of, told from its shape alone. `auto` reads a file's first record so;
and a record that another format claims, inside a file read as one format, stops the import
(§7: a file is read in one format). Each reader passes over records of kinds its mapping does not
use, so a file mixing two formats would otherwise pass with the second one's records unread: a
whole MCP session appended to an export of spans, its `shell` call unchecked.

OpenInference and plain OpenTelemetry share the OTLP record: a record is OpenInference when one of
its spans has `openinference.span.kind`, and either flavour reads the other's records (each trace
is told apart by its spans: `auto` reads each in its own, see `openinference.runs_of_either`; a
flavour named refuses a trace of the other's, see `otel.GenAiTrace.convention`).
"""
from __future__ import annotations

from typing import Any

from agent_invariants.errors import TraceError

__all__ = ("OPENINFERENCE_KIND", "format_of", "is_native", "refuse_other")

OPENINFERENCE_KIND = "openinference.span.kind"


def _otlp(value: Any) -> bool:
    """Whether a record is an OTLP JSON export of spans (or of log records)."""
    return isinstance(value, dict) and (isinstance(value.get("resourceSpans"), list)
                                        or isinstance(value.get("resourceLogs"), list))


def _openinference(value: Any) -> bool:
    """Whether a record is OTLP JSON with OpenInference spans."""
    if not _otlp(value):
        return False
    for resource in _items(value, "resourceSpans"):
        for scope in _items(resource, "scopeSpans"):
            for span in _items(scope, "spans"):
                attributes = _items(span, "attributes")
                if any(isinstance(item, dict) and item.get("key") == OPENINFERENCE_KIND for item in attributes):
                    return True
    return False


def _items(value: Any, key: str) -> list[Any]:
    """The array at `key` of an object, or none when either is something else (the sniffer only
    tells formats apart: the reader of the format says what is wrong with a record)."""
    items = value.get(key) if isinstance(value, dict) else None
    return items if isinstance(items, list) else []


def _openai_agents(value: Any) -> bool:
    """Whether a record is a trace or span of the Agents SDK's export."""
    return isinstance(value, dict) and value.get("object") in ("trace", "trace.span")


def _langsmith(value: Any) -> bool:
    """Whether a record is a LangSmith run."""
    return isinstance(value, dict) and "run_type" in value and "id" in value and (
        "dotted_order" in value or "child_runs" in value or "start_time" in value)


def _mcp_log(value: Any) -> bool:
    """Whether a record is a line of an MCP log."""
    return isinstance(value, dict) and {"ts", "session", "dir", "msg"} <= value.keys()


_SNIFFERS = (("openinference", _openinference), ("otel", _otlp), ("openai-agents", _openai_agents),
             ("langsmith", _langsmith), ("mcp-log", _mcp_log))


def format_of(value: Any) -> str | None:
    """The format a record is of, or None."""
    return next((name for name, sniff in _SNIFFERS if sniff(value)), None)


def is_native(value: Any) -> bool:
    """Whether a record is one of our own events (a native trace's)."""
    return isinstance(value, dict) and "seq" in value and "type" in value


def refuse_other(value: Any, reading: str, file: str, line: int) -> None:
    """Raise a TraceError when a record of a file read as `reading`, which its reader cannot take,
    is another format's."""
    found = format_of(value)
    if found is None and is_native(value):
        raise TraceError(file, line, f"is one of our own events (a native trace), in a file read as {reading}: a "
                         "file is read in one format (split it, or name the format it is in)")
    if found is None or found == reading or {found, reading} <= {"otel", "openinference"}:
        return
    raise TraceError(file, line, f"is a record of the {found} format, in a file read as {reading}: a file is "
                     "read in one format (split it, or name the format it is in)")
