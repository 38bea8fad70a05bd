"""`--redact KEY`: keep secrets out of the files `record` writes, without changing a verdict.

The values of matching keys (case-insensitive) are replaced with `"[redacted]"` wherever they
could leak into the trace: in nested objects and arrays of every event, in JSON held inside a
string, and in text, as `key=value`, `key: value`, `"key": "value"`, `--key value` and
`--key=value`. The agent's stderr log gets the text treatment.

Rules judge the raw values: `record` checks a raw copy of the trace (a private temporary file,
removed when the run is checked) and writes the redacted one. What the check then reports may
quote a raw value (a mismatched argument, say), so every value redaction removed is also scrubbed
from the report before it is rendered: a string holding one has it replaced, and a number or
other value equal to one becomes `"[redacted]"`. Keys that name event or report fields (`tool`,
`result`, `message`, ...) are refused: redacting them would hide what the report is about.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import msgspec

from agent_invariants.errors import InputError
from agent_invariants.events import Event
from agent_invariants.report import CheckReport, RecordFinding, RecordInfo, RuleResult, TraceSummary, Violation

__all__ = ("REDACTED", "Redactor", "refused_keys")

REDACTED = "[redacted]"
_SHORTEST_SCRUBBED = 3
"""Raw values shorter than this are scrubbed from the report only where a whole string or value
equals them: replacing every `1` or `ab` inside messages would garble them."""


def refused_keys() -> frozenset[str]:
    """The field names of events and reports, which `--redact` refuses (lower case)."""
    names = set(Event.__struct_fields__)
    for struct in (CheckReport, Violation, RuleResult, TraceSummary, RecordInfo, RecordFinding):
        names.update(field.encode_name for field in msgspec.structs.fields(struct))
    return frozenset(name.lower() for name in names)


class Redactor:
    """Replaces the values of `keys` in events and text, and remembers what it removed."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = frozenset(key.lower() for key in keys)
        refused = sorted(self.keys & refused_keys())
        if refused:
            raise InputError(f"--redact {refused[0]}: names a field of events or reports; redacting it would hide "
                             "what the report is about")
        empty = [key for key in self.keys if not key.strip()]
        if empty:
            raise InputError("--redact: a key must not be empty")
        self.secrets: set[str] = set()
        alternatives = "|".join(re.escape(key) for key in sorted(self.keys, key=len, reverse=True))
        # `"key": "value"`, `key: "value"`, `key="value"` (a quoted value, escapes allowed)
        self._quoted = re.compile(rf'(?i)("?(?:{alternatives})"?\s*[:=]\s*)"((?:[^"\\]|\\.)*)"')
        # `key=value`, `key: value`, `--key=value`, `--key value` (a bare value, up to a separator)
        self._bare = re.compile(rf"(?i)((?<![\w-])(?:(?:--)?(?:{alternatives})\s*[:=]\s*|--(?:{alternatives})\s+))"
                                rf"([^\s\"',;&]+)")
        self._flag = re.compile(rf"(?i)(?<![\w-])--(?:{alternatives})$")

    @property
    def active(self) -> bool:
        return bool(self.keys)

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        """A copy of a trace event (or harness message) with secrets replaced."""
        return {key: value if key in ("seq", "type", "time", "run_id") else self.value(value)
                for key, value in event.items()}

    def value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self._secret(item) if isinstance(key, str) and key.lower() in self.keys else self.value(item)
                    for key, item in value.items()}
        if isinstance(value, list):
            return self._list(value)
        if isinstance(value, str):
            return self.text(value)
        return value

    def _list(self, items: list[Any]) -> list[Any]:
        """An array; a `--key value` pair in an argument list has its value redacted."""
        redacted = [self.value(item) for item in items]
        for at, item in enumerate(items[:-1]):
            if isinstance(item, str) and self._flag.search(item) and isinstance(items[at + 1], str):
                redacted[at + 1] = self._secret(items[at + 1])
        return redacted

    def _secret(self, value: Any) -> str:
        """Remember a removed value (as text, and each string inside it), and return the mark."""
        if isinstance(value, str):
            self.secrets.add(value)
        elif isinstance(value, (dict, list)):
            self.secrets.add(json.dumps(value, ensure_ascii=False))
            for item in (value.values() if isinstance(value, dict) else value):
                self._secret(item)
        elif value is not None and not isinstance(value, bool):
            self.secrets.add(json.dumps(value))
        return REDACTED

    def text(self, text: str) -> str:
        """A string: JSON inside it is redacted as JSON, anything else by the text patterns."""
        stripped = text.strip()
        if stripped[:1] in ("{", "[") and self.keys & set(re.findall(r"[\w.-]+", stripped.lower())):
            try:
                inner = json.loads(stripped)
            except (ValueError, RecursionError):
                pass
            else:
                return json.dumps(self.value(inner), ensure_ascii=False)
        if not any(key in text.lower() for key in self.keys):
            return text
        text = self._quoted.sub(self._quoted_value, text)
        return self._bare.sub(self._bare_value, text)

    def _quoted_value(self, found: re.Match[str]) -> str:
        self.secrets.add(found.group(2))
        return f'{found.group(1)}"{REDACTED}"'

    def _bare_value(self, found: re.Match[str]) -> str:
        if found.group(2) == REDACTED:
            return found.group(0)
        self.secrets.add(found.group(2))
        return found.group(1) + REDACTED

    def scrub(self, report: CheckReport) -> None:
        """Remove every value redaction took out of the trace from what the report quotes."""
        if not self.secrets:
            return
        for violation in report.violations:
            violation.message = self._scrubbed(violation.message)
            if violation.evidence is not msgspec.UNSET:
                violation.evidence = self._scrubbed(violation.evidence)

    def _scrubbed(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self._scrubbed(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._scrubbed(item) for item in value]
        if isinstance(value, str):
            if value in self.secrets:
                return REDACTED
            for secret in sorted(self.secrets, key=len, reverse=True):
                if len(secret) >= _SHORTEST_SCRUBBED and secret in value:
                    value = value.replace(secret, REDACTED)
            return value
        if value is not None and not isinstance(value, bool) and json.dumps(value) in self.secrets:
            return REDACTED
        return value

    def log(self, data: bytes) -> bytes:
        """The agent's stderr, with the text patterns and every known secret replaced."""
        text: str = self._scrubbed(self.text(data.decode("utf-8", "surrogateescape")))
        return text.encode("utf-8", "surrogateescape")
