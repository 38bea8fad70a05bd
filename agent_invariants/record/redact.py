"""`--redact KEY`: keep secrets out of the files `record` writes, without changing a verdict.

The values of matching keys (any case, surrounding spaces, compatibility forms and invisible
characters ignored) are replaced with `"[redacted]"` wherever they could leak into the trace: in
nested objects and arrays of every event (replayed and MCP results included), in JSON held inside
a string (escaped or not), and in text (`Redactor.text`, with the patterns of `text_forms.TextForms`):
`key=value` (up to a separator, `text_forms._BARE_VALUE`), `key: value` (to the end of the line), `"key":
"value"` or `'key': 'value'` (quoted, past a line's end if need be, in triple quotes too), a YAML
block, `--key value`, `-key value`, `"--key", "value"`, `cfg["key"] = v`, `user[key]=v`, `"key" =>
v`, `<key>v</key>`, a Markdown row, a pair and a column; colours around a key go. A key is a word
of ASCII edges. Text that is not JSON and writes a key with `\\u` escapes is replaced whole, and so
is a string or array element that still names a key where its value cannot be told apart (a line
cut inside a value, say). Every value removed is remembered, in the forms a report quotes it (as
is, JSON-escaped up to three times over and as the text's JSON wrote it, as compact or spaced
JSON, and its members), and replaced in each event written after it too, under any key, where it
is a whole word (`scrub.Forms`; a denial's reason quotes the args it judged). So are the values
`record` hands out itself (`handed`): the keys' in the agent's command line and environment, and
in the `--mcp` servers' command lines.

Rules judge the raw values: `record` checks a raw copy of the trace (a private temporary file,
removed when the run is checked, whatever ends it) and writes the redacted one. Stability over
`--repeat` runs compares the raw outputs too. The report may quote a raw value anywhere (a
mismatched argument, a tool or call id, the reason a run ended), so before it is rendered every
string in it has the remembered values replaced; a number of three digits or more equal to one
becomes `"[redacted]"`. Values shorter than three characters are replaced only where a whole string
equals them (replacing every `1` inside messages would garble them), and placeholders (`None`,
`changeme`, `_PLACEHOLDERS`) only where a key names them, so do not rely on redaction elsewhere
for such secrets. When marking would make an event's line too long for a trace,
less is written, in steps (`Redactor.event`), and `record` warns. A `tool.listing` (the tools the
MCP servers offer, with their schemas) is not redacted by key: a schema's property named like a key
describes an argument, it holds no value. Keys that name event, report or harness fields (`tool`,
`result`, `message`, `attested_by`, ...) are refused: redacting them would hide what the report is
about, or change what a later check of the file decides.
"""
from __future__ import annotations

import contextlib
import json
import re
import shlex
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from agent_invariants._js import utf16_len
from agent_invariants._safe import inert
from agent_invariants.errors import InputError
from agent_invariants.events import Event
from agent_invariants.jsontext import deep_enough, too_deep_at
from agent_invariants.record.scrub import REDACTED, SHORTEST_SCRUBBED, Forms
from agent_invariants.record.text_forms import TextForms
from agent_invariants.report import CheckReport, RecordFinding, RecordInfo, RuleResult, TraceSummary, Violation

__all__ = ("REDACTED", "Redactor", "refused_keys")

_HARNESS_KEYS = ("attested_by", "fixture", "fixture_miss", "replay_seq", "rule_ids", "rule_ids_left_out",
                 "offending", "limit", "protocol", "claimed_evidence_class", "mcp", "tools", "server", "case", "key",
                 "excerpt")
"""Keys of the `data` the harness writes: redacting them would change what a check of the file finds."""
_LIMITS = {"tool": 500, "call_id": 500, "approval_id": 500, "approval_scope": 500, "outcome_id": 500, "actor": 500,
           "approver": 500, "reason": 500, "status": 100, "call_signature": 2000, "type": 200}
"""Text fields of events and their lengths: a redaction that would make one too long replaces it whole."""
_KEPT = frozenset({"seq", "time", "run_id"})
_ALIKE_KEPT = 4_096
"""Strings whose redaction is remembered at most (`Redactor.text`), each of at most
`_ALIKE_LONGEST` characters."""
_ALIKE_LONGEST = 1_000


def refused_keys() -> frozenset[str]:
    """The field names of events, reports and the harness's `data`, which `--redact` refuses (lower case)."""
    names = set(Event.__struct_fields__) | set(_HARNESS_KEYS)
    for struct in (CheckReport, Violation, RuleResult, TraceSummary, RecordInfo, RecordFinding):
        names.update(field.encode_name for field in msgspec.structs.fields(struct))
    return frozenset(name.lower() for name in names)


class Redactor:
    """Replaces the values of `keys` in events and text, and remembers what it removed."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = frozenset(_key_name(key) for key in keys)
        if "" in self.keys:
            raise InputError("--redact: a key must not be empty")
        refused = sorted(self.keys & refused_keys())
        if refused:
            raise InputError(f"--redact {refused[0]}: names a field of events, reports or the harness's data; "
                             "redacting it would hide what the report is about")
        self.secrets: set[str] = set()
        self._remembered: set[str] = set()   # the strings `_remember` took (a value comes again and again)
        self._forms = Forms()   # the secrets as scrubbing looks for them, but for those of `_new`
        self._unnamed = Forms()   # of them, those that name no key (which text is scrubbed of first)
        self._new: list[str] = []
        self._in_text = TextForms(self.keys)
        # strings whose redaction learnt nothing, with what it gave, while nothing more is learnt:
        # an array of 100,000 alike strings (`["k=1", ...]`) is then redacted once, not 100,000 times
        self._alike: dict[tuple[str, bool], str] = {}
        self._alike_at = (0, 0)

    @property
    def active(self) -> bool:
        return bool(self.keys)

    # --- the trace ----------------------------------------------------------------------------

    @deep_enough()   # (each method so marked walks an agent's values, as deep as a trace may hold,
    #                   some five frames a level)
    def event(self, event: dict[str, Any], *, shorter: int = 0) -> dict[str, Any]:
        """A copy of a trace event with secrets replaced: the values of the keys, then every value
        removed so far wherever the event quotes it (a denial's reason quotes the args it judged,
        an agent may echo a secret under another key). Text fields that would grow past their
        length limit are replaced whole. `"[redacted]"` is longer than many values, so when the
        marked line would be too long for a trace, `shorter` asks for less: 1, the members of the
        keys are left out rather than marked (every other value stays); 2, every string that held a
        secret is also replaced whole by the mark; 3, instead left out of its object or array (a
        field that is such a string is the mark): what is left is a part of the raw event."""
        # a tool listing is the servers' own definitions: a schema's property named like a key (a
        # `card_token` of type string) holds no value of the run, and its words must not become
        # secrets that every later event would lose
        listing = event.get("type") == "tool.listing"
        leave_out = shorter >= 1
        shown_of = {key: value if key in _KEPT or listing else self.value(value, leave_out)
                    for key, value in event.items()}
        forms = self._current() if self.secrets else None
        redacted: dict[str, Any] = {}
        for key, value in event.items():
            if key in _KEPT:
                redacted[key] = value
                continue
            shown = shown_of[key] if forms is None else self._scrubbed(shown_of[key], forms)
            limit = _LIMITS.get(key)
            if limit is not None and isinstance(shown, str) and shown != value and utf16_len(shown) > limit:
                shown = REDACTED
            if shorter >= 2 and shown != value and key not in _LIMITS:
                less = _less(value, shown, leave_out=shorter >= 3)
                shown = REDACTED if less is _GONE else less
            redacted[key] = shown
        return redacted

    def value(self, value: Any, leave_out: bool = False) -> Any:
        """`value` with secrets replaced; with `leave_out`, an object's members under the keys go
        rather than get the mark."""
        if isinstance(value, msgspec.Raw):   # a replayed result, kept as JSON text
            value = msgspec.json.decode(value)
        if isinstance(value, dict):
            shown = {}
            for key, item in value.items():
                if isinstance(key, str) and _key_name(key) in self.keys:
                    mark = self._secret(item)
                    if not leave_out:
                        shown[key] = mark
                else:
                    shown[key] = self.value(item, leave_out)
            return shown
        if isinstance(value, list):
            return self._list(value, leave_out)
        if isinstance(value, str):
            return self.text(value, leave_out)
        return value

    def _list(self, items: list[Any], leave_out: bool) -> list[Any]:
        """An array; a `--key value` pair in an argument list has its value redacted."""
        redacted = [self._argument(item, leave_out) for item in items]
        for at, item in enumerate(items[:-1]):
            if isinstance(item, str) and self._in_text.flag.search(item) and isinstance(items[at + 1], str):
                redacted[at + 1] = self._secret(items[at + 1])
        return redacted

    def _argument(self, item: Any, leave_out: bool) -> Any:
        """An element of an array: `--key=value` there is the flag and the rest of the element."""
        if isinstance(item, str) and "=" in item:
            found = self._in_text.flag_value.fullmatch(item)
            if found is not None:
                self._secret(found.group(2))
                return found.group(1) + REDACTED
        return self.value(item, leave_out)

    def _secret(self, value: Any, member: bool = False) -> str:
        """Remember a removed value in the forms a report may quote it, and return the mark. The
        `member`s of an object or array removed whole are remembered but for plain words and
        numbers (`{"token": {"scope": "read", "expires_in": 3600}}`: every later `read` and `3600`
        would go); the object itself is, as compact and as spaced JSON."""
        if isinstance(value, str):   # as it is, JSON-escaped, and as messages show text (`\u2028`, `\x7f`)
            if not (member and value.isalpha()):
                self._remember(value)
        elif isinstance(value, dict | list):
            self._keep(json.dumps(value, ensure_ascii=False),
                       json.dumps(value, ensure_ascii=False, separators=(",", ":")))
            for item in value.values() if isinstance(value, dict) else value:
                self._secret(item, member=True)
        elif value is not None and not isinstance(value, bool) and not member:
            self._keep(json.dumps(value))
        return REDACTED

    def _remember(self, value: str) -> None:
        """Remember a removed string as it is, JSON-escaped up to `_ESCAPED` times (a report quotes
        a text that held it in JSON held in a string: `"{\\"token\\": \\"a\\\\\\"b\\"}"`), with
        its other characters than ASCII kept or escaped (`\\u00e4`, `\\u00E4`, as encoders write
        them), and each of those as messages show text (`\u2028`, `\x7f`)."""
        if value in self._remembered:
            return
        self._remembered.add(value)
        forms = {value}
        for level in range(_ESCAPED + 1):
            for form in forms:
                self._keep(form, inert(form))
            if level < _ESCAPED:
                escaped = {written for form in forms for written in _escaped(form)}
                if escaped == forms:   # (nothing to escape)
                    break
                forms = escaped

    def text(self, text: str, leave_out: bool = False) -> str:
        """A string: JSON inside it is redacted as JSON (`leave_out` as for `value`), anything
        else by the text patterns; one that still names a key after them, where the value cannot be
        told apart, is replaced whole."""
        # What a string gives depends only on it and on what was learnt so far, which only grows:
        # a string that taught nothing gives the same again until something new is learnt.
        learnt = (len(self.secrets), len(self._remembered))
        if learnt != self._alike_at:
            self._alike.clear()
            self._alike_at = learnt
        shown = self._alike.get((text, leave_out))
        if shown is None:
            shown = self._text(text, leave_out)
            # kept only when it taught nothing (JSON in the string is redacted by calls of this one,
            # which may have set `_alike_at` to what was learnt since the start of this string)
            if (len(self.secrets), len(self._remembered)) == learnt and len(text) <= _ALIKE_LONGEST \
                    and len(self._alike) < _ALIKE_KEPT:
                self._alike[text, leave_out] = shown
        return shown

    def _text(self, text: str, leave_out: bool) -> str:
        if "\x1b" in text:   # colours around a key (`\x1b[36mtoken\x1b[0m=v`) go
            plain = _ANSI.sub("", text)
            if plain != text and self._probe(plain) is not None:
                text = plain
        probe = self._probe(text)
        if probe is not None and self.secrets:   # known values first: a pattern below may take only a
            self._current()                      # part of one (`k=a b`); text naming no key is left to
            known = self._unnamed.scrubbed(text)   # the scrubbing every caller does after
            if known != text:
                text, probe = known, self._probe(known)
        if probe is None:
            return text
        stripped = text.strip()
        # (JSON nested deeper than a trace may hold is read as text: json's decoder recurses in C)
        if stripped[:1] in ("{", "[") and too_deep_at(stripped.encode("utf-8", "surrogatepass")) is None:
            try:
                inner = json.loads(stripped)
            except (ValueError, RecursionError):
                pass
            else:
                try:
                    shown = json.dumps(self.value(inner, leave_out), ensure_ascii=False)
                except RecursionError:   # JSON in a string in JSON in a string..., too deep to walk:
                    return REDACTED      # replaced whole (near the limit, nothing more is done)
                self._as_written(stripped)
                return shown
        if probe is not text and len(self._in_text.named.findall(probe)) > len(self._in_text.named.findall(text)):
            self._secret(text)   # a key written with escapes (`--to\u006ben v`): what its value is, the
            return REDACTED      # patterns below cannot tell
        shown = self._in_text.block.sub(self._block_value, text)
        shown = self._in_text.quoted.sub(self._quoted_value, shown)
        shown = self._in_text.bare.sub(self._bare_value, shown)
        shown = self._in_text.element.sub(self._element_value, shown)
        shown = self._in_text.pair.sub(self._pair_value, shown)
        shown = self._in_text.cell.sub(self._cell_value, shown)
        shown = self._in_text.column.sub(self._cell_value, shown)
        shown = self._in_text.line.sub(self._line_value, shown)
        if self._dangling(shown) or (probe is not text and self._dangling(_unescaped(shown))):
            self._secret(text)
            return REDACTED
        return shown

    def _probe(self, text: str) -> str | None:
        """`text` as the test for a key reads it, or None when it names no key: with its escapes read
        (`"to\u006ben"`, `"\ttoken"`), or else in NFKC, case-folded, without invisible characters."""
        named = self._in_text.named.search
        probe = _unescaped(text)
        if named(probe) or (probe is not text and named(text)):
            return probe
        if not probe.isascii():
            folded = _folded(probe)
            if named(folded):
                return folded
        return None

    def _as_written(self, text: str) -> None:
        """Remember each string of JSON `text` that was removed, as the text writes it: with
        escapes a value need not have (`"a\\u00e9\\/b"` for `aé/b`), which a report quoting the
        text shows."""
        if "\\" not in text:
            return
        for found in _JSON_STRING.finditer(text):
            written = found.group(1)
            if "\\" in written and written not in self.secrets:
                try:
                    value = json.loads(f'"{written}"')
                except ValueError:
                    continue
                if value in self.secrets:
                    self._remember(written)

    def _dangling(self, text: str) -> bool:
        """Whether a key is still followed by something that may be its value (an unterminated
        quote, a cut line). Not a comparison (`key == x`), an arrow function (`key => f(key)`), a
        path (`Key::new`), an empty value (`?key=&x=1`), or `key:` that ends a line (a title: a
        YAML block below it is gone by now)."""
        for found in self._in_text.named.finditer(text):
            rest = text[found.end():found.end() + 40].lstrip(" \t\\\"'*_`]")
            if rest[:2] in ("?=", "+="):
                rest = rest[1:]
            if rest[:1] not in (":", "=") or rest[:2] in ("==", "=~", "=>", "::"):
                continue
            after = rest[2 if rest[:2] == ":=" else 1:].lstrip(" \t\\\"'")
            prefix = _STRING_PREFIX.match(after)   # (`key = b'[redacted]'`)
            after = after[prefix.end():] if prefix else after
            if after.startswith(REDACTED) or (rest[:1] == ":" and after[:1] in ("", "\n", "\r")) \
                    or (after[:1] and after[:1] in "&;,)]}"):   # (an empty value: `?token=&state=x`)
                continue
            return True
        return self._in_text.flag_left.search(text) is not None

    def _quoted_value(self, found: re.Match[str]) -> str:
        value = found.group(3)
        if value == REDACTED:
            return found.group(0)
        self._secret(value)
        if "\\" in value:   # (and as its escapes read, when they are JSON's)
            with contextlib.suppress(ValueError):
                self._secret(json.loads(f'"{value}"'))
        return f"{found.group(1)}{found.group(2)}{REDACTED}{found.group(2)}"

    def _block_value(self, found: re.Match[str]) -> str:
        block = found.group(0)[found.end("head") - found.start():]
        block = block[block.find("\n") + 1:] if "\n" in block else ""
        self._secret(block)
        for line in block.splitlines():   # (each line too, as a report may quote one; plain words stay)
            if len(line.strip()) >= SHORTEST_SCRUBBED and not line.strip().isalpha():
                self._secret(line.strip())
        return f"{found.group('indent')}{found.group('head')}: {REDACTED}"

    def _pair_value(self, found: re.Match[str]) -> str:
        if found.group(4) == REDACTED:
            return found.group(0)
        self._secret(found.group(4))
        return f"{found.group(1)}{found.group(3)}{REDACTED}{found.group(3)}"

    def _cell_value(self, found: re.Match[str]) -> str:
        value = found.group(2).strip()
        if not value or value == REDACTED:
            return found.group(0)
        self._secret(value)
        return found.group(1) + REDACTED

    def _element_value(self, found: re.Match[str]) -> str:
        if found.group(2) == REDACTED:
            return found.group(0)
        self._secret(found.group(2))
        return found.group(1) + REDACTED + found.group(3)

    def _bare_value(self, found: re.Match[str]) -> str:
        if found.group(2) == REDACTED:
            return found.group(0)
        self._secret(found.group(2))
        return found.group(1) + REDACTED

    def _line_value(self, found: re.Match[str]) -> str:
        value = found.group(2).rstrip("\r")
        if value.startswith(REDACTED) and not value[len(REDACTED):].strip(_AFTER_A_MARK):
            return found.group(0)   # (a mark already there; anything more on the line is the value too)
        self._secret(value)
        for word in value.split():   # (a report may quote the secret without the words around it; plain
            if len(word) >= SHORTEST_SCRUBBED and not word.isalpha() and REDACTED not in word \
                    and not self._in_text.named.search(word):   # words and keys stay)
                self._keep(word)
        return found.group(1) + REDACTED

    # --- what else is written -----------------------------------------------------------------

    @deep_enough()
    def handed(self, command: Sequence[str], env: Mapping[str, str], servers: Iterable[str]) -> None:
        """Remember the secrets `record` hands out itself: in the agent's command line
        (`--token X`), its environment (`TOKEN=X`) and the `--mcp` servers' command lines. The
        agent or a server may echo them anywhere."""
        self.value(list(command))
        self.value(dict(env))
        for server in servers:
            with contextlib.suppress(ValueError):   # (a command that does not split is refused later)
                self.value(shlex.split(server))

    @deep_enough()
    def said(self, line: str) -> str:
        """A line `record` says itself (an error, a warning) that may quote a server or the agent."""
        shown: str = self.scrub(self.text(line))
        return shown

    @deep_enough()
    def scrub(self, report: Any) -> Any:
        """`report` (any msgspec struct, dict, list or scalar) with every remembered value
        replaced in its strings, in place for structs; returns it."""
        return self._scrubbed(report, self._current()) if self.secrets else report

    def _keep(self, *forms: str) -> None:
        """Remember each of `forms` as a secret, but a placeholder (`None`, `string`, `changeme`:
        replacing it wherever it comes again would garble every text that uses it) or a part of a
        key's name (`password` for `db-password`: replaced first, it would hide the key)."""
        for form in forms:
            if form not in self.secrets and form.casefold() not in _PLACEHOLDERS \
                    and not any(form.casefold() in key for key in self.keys):   # (`{"token": "Token"}`)
                self.secrets.add(form)
                self._new.append(form)

    def _current(self) -> Forms:
        """The remembered values as scrubbing looks for them, the new ones added (every event
        written asks; made again whole each time, this took 53 s for 16,000 messages of a value
        each)."""
        if self._new:
            self._forms.add(self._new)
            self._unnamed.add(form for form in self._new if not self._in_text.named.search(form))
            self._new = []
        return self._forms

    def _scrubbed(self, value: Any, forms: Forms) -> Any:
        if isinstance(value, msgspec.Struct):
            for name in value.__struct_fields__:
                setattr(value, name, self._scrubbed(getattr(value, name), forms))
            return value
        if isinstance(value, dict):   # (keys too: evidence may quote an object that held a secret)
            return {self._scrubbed(key, forms): self._scrubbed(item, forms) for key, item in value.items()}
        if isinstance(value, list):
            return [self._scrubbed(item, forms) for item in value]
        if isinstance(value, str):
            if value in self.secrets:
                return REDACTED
            shown = forms.scrubbed(value)
            return self._in_text.cut_value.sub(rf"\1{REDACTED}", shown) if "…" in shown or "..." in shown else shown
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = json.dumps(value)
            if len(text) >= SHORTEST_SCRUBBED and text in self.secrets:
                return REDACTED
        return value

    @deep_enough()
    def log(self, data: bytes) -> bytes:
        """The agent's stderr with every known secret, quoted value and YAML block replaced (they
        may run past a line's end), then line by line with the other text patterns."""
        text = self.scrub(data.decode("utf-8", "surrogateescape"))
        text = self._in_text.block.sub(self._block_value, text)
        text = self._in_text.quoted.sub(self._quoted_value, text)
        lines = [self.text(line) for line in text.split("\n")]
        scrubbed: str = self.scrub("\n".join(lines))
        return scrubbed.encode("utf-8", "surrogateescape")


_GONE = object()


def _less(raw: Any, shown: Any, leave_out: bool) -> Any:
    """`shown` (the redacted form of `raw`) with every value redaction changed that is not an
    object or array replaced whole by the mark, or with `leave_out` left out of its container
    (`_GONE` when `shown` itself is one)."""
    if isinstance(raw, msgspec.Raw):
        raw = msgspec.json.decode(raw)
    if isinstance(shown, dict) and isinstance(raw, dict):
        kept = {}
        for key, item in shown.items():
            less = _less(raw[key], item, leave_out) if key in raw else _GONE if leave_out else item
            if less is not _GONE:
                kept[key] = less
        return kept
    if isinstance(shown, list) and isinstance(raw, list) and len(shown) == len(raw):
        return [less for less in (_less(was, item, leave_out) for was, item in zip(raw, shown, strict=True))
                if less is not _GONE]
    if shown == raw and type(shown) is type(raw):
        return shown
    return _GONE if leave_out else REDACTED


def _key_name(key: str) -> str:
    """A key as `--redact` compares it: surrounding spaces, case, compatibility forms (`ｔｏｋｅｎ`)
    and invisible characters (a zero-width space, a soft hyphen) do not count."""
    return key.strip().lower() if key.isascii() else _folded(key).strip()


def _folded(text: str) -> str:
    """`text` in NFKC, case-folded, without invisible characters (as `_key_name` compares keys)."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(char for char in text if unicodedata.category(char) != "Cf").casefold()


def _escaped(text: str) -> tuple[str, ...]:
    """`text` as JSON writes it in a string, in the forms encoders choose (`\\/`, `\\u003c`, `\\'`,
    `\\u00e4`, `\\u00E4`)."""
    kept = json.dumps(text, ensure_ascii=False)[1:-1]
    forms = [kept]
    if "/" in kept:   # (PHP)
        forms.append(kept.replace("/", "\\/"))
    if any(char in kept for char in "<>&"):   # (Go)
        forms.append(kept.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    if "'" in kept:
        forms.append(kept.replace("'", "\\'"))
    if not text.isascii():
        ascii_only = json.dumps(text)[1:-1]
        forms += (ascii_only, _HEX.sub(lambda found: found.group(0).upper().replace("\\U", "\\u"), ascii_only))
    return tuple(forms)


_ANSI = re.compile(r"\x1b(?:\[[0-?]*+[ -/]*+[@-~]|\][^\x07\x1b\n]*+(?:\x07|\x1b\\)|[@-Z\\-_])")
"""A terminal's escape sequence: a colour (`\\x1b[36m`), a title, a link."""
_HEX = re.compile(r"\\u[0-9a-f]{4}")


def _unescaped(text: str) -> str:
    """`text` with its JSON `\\uXXXX` and control character escapes (`\\t`) read, however many
    backslashes each has (JSON held in a string doubles them); itself, when it has none."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda found: chr(int(found.group(1), 16)) if found.group(1) else _CONTROLS[found.group(2)],
                       text)


_ESCAPE = re.compile(r"(?<!\\)\\++(?:u([0-9a-fA-F]{4})|([bfnrt]))")
"""(From the first backslash of a run only: from each of them, a run of 400,000 took 22 s.)"""
_CONTROLS = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PLACEHOLDERS = frozenset(("none", "null", "nil", "undefined", "true", "false", "string", "number", "integer",
                           "boolean", "object", "array", "changeme", "todo", "tbd", "xxx", "redacted", "secret",
                           "password", "token", "empty", "example"))
"""Values that stand for a value (a schema's type, a template's blank): removed where a key names
them, not looked for beyond (every `None` of later code would go)."""
_STRING_PREFIX = re.compile(r"(?i)[rbuf]{1,2}[\"']")
_AFTER_A_MARK = " \t,;.)]}\"'"
"""What may follow a mark that `key: value` finds there (a value already redacted, not more)."""
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*+)"')
_ESCAPED = 3
"""How many times over a removed string is remembered JSON-escaped."""
