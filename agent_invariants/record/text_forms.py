"""The forms a key's value takes in text, as `--redact` reads them (`redact.Redactor.text`):
one compiled pattern per form, for the keys given.

    forms = TextForms(["token"])
    forms.bare.search("retry with token=abc then")   # group 2: 'abc'
    forms.named.search("GITHUB_TOKEN=x")             # None: `token` is a word, not a part of one

Whitespace is taken whole (`*+`, `++`), and before the key only after a quote: a key followed by a
long run of spaces and no `:` or `=` was tried at every split of the run, and from every space of
it (16,000 spaces 10 s, a line of a MiB hours). Key edges are ASCII letters, digits, `_` and `-`:
`access_token` is no `token`, `请设置token=v` names it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ("TextForms",)


class TextForms:
    """The compiled pattern of each form, for `keys` (as `redact._key_name` gives them)."""

    def __init__(self, keys: Iterable[str]) -> None:
        names = "|".join(re.escape(key) for key in sorted(keys, key=len, reverse=True))
        edge = "A-Za-z0-9_-"   # what may not touch a key
        # a key: quoted, in Markdown (`**key**`, `` `key` ``), subscripted (`cfg["key"]`, `[key]`)
        key = rf"(?:\\?[\"']\s*+|[*_`]{{1,2}})?(?:{names})(?:\s*+\\?[\"']|[*_`]{{1,2}})?(?:\s*+\])?"
        # a flag and what parts it from its value: `--key v`, `-key v`, `"--key" "v"`, `"--key", "v"`
        flag_form = rf"--?(?:{names})(?:\\?[\"'](?:\s*+,\s*+|\s++)|\s++)"
        # an assignment (`=`, `:`, `:=`), not a comparison (`==`, `=~`), an arrow function
        # (`key => key.trim()`) or a path (`Key::new`)
        assign = r"(?:=(?![=~>])|[:?+]=|:(?!:))"
        # a quoted value: "key": "v", 'key': 'v', key="v", --key "v", \"key\": \"v\" (JSON escaped
        # inside a string), key = """v""", key = b'v' (a string prefix stays), "key" => "v"; a
        # backslash and what follows it are the value's (`"ab\"cd"` is one value)
        self.quoted = re.compile(rf"(?i)((?<![{edge}])(?:(?:--?)?{key}\s*+(?:=>|{assign})\s*+|{flag_form})"
                                 rf"(?:[rbuf]{{1,2}}(?=[\"']))?)(\"\"\"|'''|\\?[\"'])((?:\\.|[^\\])*?)\2")
        # a YAML block: `key: |`, `key: >-`, `key: !tag |`, `- key: |`, or `key:` with lines below it:
        # the lines indented more than the key's
        lines = r"(?:\r?\n(?:(?P=indent)[ \t]++[^\r\n]*+|[ \t]*+(?=\r?\n|$)))"
        items = r"(?:\r?\n(?:(?P=indent)(?:[ \t]++|(?(dash)(?!)|-[ \t]))[^\r\n]*+|[ \t]*+(?=\r?\n|$)))"
        item = r"(?(dash)(?!)|-[ \t])"   # (a `- ` item at the key's indent, unless the key is one)
        self.block = re.compile(
            rf"(?im)^(?P<indent>[ \t]*+)(?P<head>(?P<dash>-[ \t]++)?(?<![{edge}]){key})[ \t]*+:[ \t]*+"
            rf"(?:[!&]\S*+[ \t]++)*+(?:[|>][-+0-9]{{0,2}}[ \t]*+(?:#[^\r\n]*+)?{lines}*+"
            rf"|(?:#[^\r\n]*+)?(?:\r?\n[ \t]*+(?=\r?\n))*+\r?\n(?P=indent)(?:[ \t]++\S|{item})[^\r\n]*+{items}*+)")
        # key: value (a YAML or header line: to the end of the line), key=value (to a separator),
        # --key value and --key=value, "key" => value, :key => value
        self.line = re.compile(rf"(?i)((?<![{edge}]){key}\s*+:(?![:=])[ \t]*+)([^\s\"'].*)")
        self.bare = re.compile(rf"(?i)((?<![{edge}])(?:(?:--?)?{key}\s*+[:?+]?=(?![=~>])\s*+(?![rbuf]{{1,2}}[\"'])"
                               rf"|{flag_form}|(?::(?:{names})|\\?[\"'](?:{names})\\?[\"'])\s*+=>\s*+)){_BARE_VALUE}")
        # a pair: ("key", "v"), ["key", "v"]; a table's row: | key | v |; a column: key<TAB>v
        self.pair = re.compile(rf"(?i)([(\[]\s*+(\\?[\"'])(?:{names})\2\s*+,\s*+)(\\?[\"'])"
                               rf"((?:\\.|(?!\3)[^\\])*+)\3(?=\s*+[)\]])")
        self.cell = re.compile(rf"(?im)(^[ \t]*+\|[ \t]*+[`*]{{0,2}}(?:{names})[`*]{{0,2}}[ \t]*+\|[ \t]*+)"
                               rf"([^|\r\n]*?)(?=[ \t]*+\|)")
        self.column = re.compile(rf"(?im)((?<![{edge}])(?:{names}) *+\t[ \t]*+)([^\t\r\n]+)")
        # an element: <key>v</key>
        self.element = re.compile(rf"(?i)(<(?:{names})(?:\s[^<>]*+)?>)([^<]++)(</(?:{names})\s*+>)")
        self.flag = re.compile(rf"(?i)(?<![{edge}])--?(?:{names})$")
        self.flag_value = re.compile(rf"(?is)(--?(?:{names})=)(.+)")
        # a flag whose value the patterns above did not take (`--key "never closed`)
        self.flag_left = re.compile(rf"(?i)(?<![{edge}]){flag_form}(?!\\?[\"']?\[redacted\])(?=\S)")
        # the key as a word (`token`, `--token`, `"token"`; not `access_token`, `x-token`, `tokens`)
        self.named = re.compile(rf"(?i)(?:(?<![{edge}])|(?<=(?<![{edge}])-)|(?<=(?<![{edge}])--)|(?<=(?<![{edge}])_)"
                                rf"|(?<=(?<![{edge}])__))(?:{names})(?:(?![{edge}])|(?=__?(?![{edge}])))")
        # a key's value that a report's message shows cut (`token=K01aX…`): too short a start to be
        # told for a remembered value's, but a key's value all the same
        self.cut_value = re.compile(rf"(?i)((?<![{edge}])(?:(?:--?)?{key}\s*+(?:=>?+|:)\s*+|{flag_form})(?:\\?[\"'])?)"
                                    rf"(?!\[redacted\])[^\s\"'\\…]+?(?=…|\.\.\.)")


_STOPS = r"\s\"'&;,)\]}"
_BARE_VALUE = (rf"(\[redacted\](?=[\s\"'&;]|[,)\]}}]*+(?:[\s\"'&;]|$))"
               rf"|(?:\[[^\s\[\]]*\]|\([^\s()]*\)|\{{[^\s{{}}]*\}}|[^{_STOPS}]|[,)\]}}]+(?=[^{_STOPS}]))+)")
"""The value of `key=value` or `--key value` in text: up to a space, a quote, `&` or `;`, or a
`,`, `)`, `]` or `}` that ends it (one followed by another stop, or by nothing: `{token=abc}`);
inside it, such a character is the value's own (`token=se]cret` goes whole), and so is a bracket
closing one the value opened (`--token [q]`). The mark itself is already a redacted value."""


