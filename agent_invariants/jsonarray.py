"""A trace that is one JSON array, read as a stream: its items' bytes, a chunk at a time.

    [
      {"seq": 1, "type": "tool.call", "tool": "kb.search"},
      {"seq": 2, "type": "tool.result", "tool": "kb.search", "ok": true}
    ]

The array is never held whole: only the items not yet handed out, each at most `max_item_bytes`
long, stay in memory, so a 2 GB array or an endless stream of items is read like JSONL. Each item
comes with the physical line where it starts, and the `LineMap` learns the same (and, when it keeps
them, the length of that line, known once the line ends).

Finding where items end without parsing everything twice: a stretch of the buffer that ends with
`}` followed by `,` and `{` (or by `]`) is offered to msgspec as an array of its own. If that
parses, the stretch is exactly the next complete items: a cut inside a string or a nested value
leaves an unterminated string or an unclosed bracket, which cannot parse. When no such stretch
parses (a huge item, a syntax error, hostile content), one item is delimited exactly by a small
tokenizer that tracks strings and brackets, resuming where it stopped when more data arrives.
Syntax errors are `ArrayError(line, message)`; what an item holds is for the reader to judge.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

import msgspec

from agent_invariants._js import MORE, first_significant, replace_lone_surrogates, utf16_len_of_utf8
from agent_invariants.errors import RAISE_LINE_LIMIT
from agent_invariants.jsontext import always_matching, nested_too_deep, syntax_error
from agent_invariants.linemap import LineMap

__all__ = ("ArrayError", "Piece", "Stretch", "scan_array")

_SPACE = always_matching(rb"[ \t\r\n]*")          # JSON's whitespace, the only kind inside an array
_SEPARATOR = always_matching(rb"[ \t\r\n]*,?[ \t\r\n]*")
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
# what an item is made of: runs of anything but brackets (strings whole), then single brackets;
# a `"` alone is a string that is not closed yet
_TOKEN = re.compile(rb'(?:[^"\[\]{}]+|' + _STRING + rb')+|"|[\[\]{}]', re.DOTALL)
# a scalar item (number, string, literal) runs up to the next `,` or `]` outside strings
_SCALAR = always_matching(rb'(?:[^"\[\]{},]+|' + _STRING + rb')*', re.DOTALL)
_CUT_TRIES = 3        # stretches offered to msgspec per chunk before the exact tokenizer takes over
_CUT_LOOKS = 64       # `}` looked at per chunk while searching for such stretches
_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")
_LF, _CR, _QUOTE, _COMMA, _OPEN_BRACE, _CLOSE_BRACKET = 0x0A, 0x0D, 0x22, 0x2C, 0x7B, 0x5D

_decode_items = msgspec.json.Decoder(list[msgspec.Raw]).decode


class Stretch(NamedTuple):
    """Complete items that msgspec parsed as one array: each item (a `msgspec.Raw` of its bytes,
    lone surrogate escapes already read as U+FFFD), the line it starts on, and the text of them
    all (`region`, for checks that look at every byte at once)."""

    items: list[msgspec.Raw]
    lines: list[int]
    region: bytes


Piece = tuple[int, bytes] | Stretch
"""What the scanner hands out: one item with its line, or a stretch of items."""


class ArrayError(Exception):
    """The array itself is malformed (not an item in it): where, and what is wrong."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def scan_array(head: bytes, start: int, chunks: Iterator[bytes], *, line: int, lines: LineMap,
               max_item_bytes: int, max_depth: int) -> Iterator[list[Piece]]:
    """The items of the array whose `[` is at `head[start]` (on physical line `line`), one list
    per chunk read, of (line, item bytes) and of `Stretch`es of items found together. Raises
    `ArrayError` for a malformed array, an item over `max_item_bytes` or nesting deeper than
    `max_depth` (the array counts as a level)."""
    return _Scanner(head, start, chunks, line, lines, max_item_bytes, max_depth).run()


class _Scanner:
    def __init__(self, head: bytes, start: int, chunks: Iterator[bytes], line: int, lines: LineMap,
                 max_item_bytes: int, max_depth: int) -> None:
        self.buf = head
        self.pos = start + 1          # after the `[`
        self.chunks = chunks
        self.ended = False            # no more chunks
        self.line = line              # physical line at offset `counted`
        self.counted = start
        self.lines = lines
        self.max_item = max_item_bytes
        self.max_depth = max_depth
        self.index = 0                # items handed out so far
        self.expect = "first"         # first (item or `]`), item (after a comma), next (`,` or `]`)
        self.pending: tuple[int, int, int] | None = None   # an item being delimited: start, resume, depth
        self.bulk = True              # whether to try msgspec on a stretch (until it fails in this chunk)
        # line lengths: where the current line starts in `buf`, how much of it was dropped already
        # (UTF-16 units, and whether that part ended with a CR), and how many items wait for its end
        self.keep_lengths = lines.keeps_lengths
        self.line_start = head.rfind(b"\n", 0, start) + 1
        self.carried = 0
        self.carried_cr = False
        self.waiting = 0

    def run(self) -> Iterator[list[Piece]]:
        while True:
            found: list[Piece] = []
            try:
                done = self._scan(found)
            except ArrayError:
                if found:   # the items before the problem first: one of them may be bad already
                    yield found
                raise
            if found:
                yield found
            if done:
                self._finish()
                return
            if self.ended:
                raise self._error(len(self.buf), "the JSON array ends before it is complete (a `]` is missing)")
            self._more()   # at the end of the input, scan once more: an unfinished item explains itself

    # -- reading -----------------------------------------------------------------------------------

    def _more(self) -> bool:
        """Drop what was handed out, append the next chunk; False at the end of the input."""
        if self.ended:
            return False
        for chunk in self.chunks:
            if chunk:
                break
        else:
            self.ended = True
            return False
        self._drop(self.pos if self.pending is None else self.pending[0])
        # An unfinished item holds every byte read since it started: past the limit, it is too long
        # (what the new chunk adds may end it and start the next items, so it does not count).
        if self.pending is not None and len(self.buf) - self.pending[0] > self.max_item + 1:
            raise self._error(self.pending[0], f"item {self.index} is more than {self.max_item:,} bytes, "
                                               f"over the limit {RAISE_LINE_LIMIT}")
        self.buf += chunk
        self.bulk = True
        return True

    def _drop(self, upto: int) -> None:
        """Forget `buf[:upto]`; every offset kept moves back by `upto`."""
        if upto <= 0:
            return
        self._count_to(upto)
        if self.keep_lengths and self.line_start < upto:
            part = self.buf[self.line_start:upto]
            self.carried += utf16_len_of_utf8(part)
            self.carried_cr = part.endswith(b"\r")
            self.line_start = upto
        self.buf = self.buf[upto:]
        self.pos -= upto
        self.counted -= upto
        self.line_start -= upto
        if self.pending is not None:
            begin, resume, depth = self.pending
            self.pending = (begin - upto, resume - upto, depth)

    # -- scanning --------------------------------------------------------------------------------

    def _scan(self, found: list[Piece]) -> bool:
        """Hand out every complete item in the buffer; True once the closing `]` was read."""
        buf = self.buf
        while True:
            pending = self.pending
            if pending is not None:
                end = self._delimit(pending)
                if end is None:
                    return False
                begin = pending[0]
                self.pending = None
                self._hand_out(found, begin, buf[begin:end])
                self.pos = end
                self.expect = "next"
                continue
            pos = _SPACE(buf, self.pos).end()
            if pos >= len(buf):
                self.pos = pos
                return False
            char = buf[pos]
            if self.expect == "next":
                if char == _COMMA:
                    self.pos = pos + 1
                    self.expect = "item"
                    continue
                if char == _CLOSE_BRACKET:
                    self.pos = pos + 1
                    return True
                raise self._error(pos, f"expected ',' or ']' after item {self.index - 1}")
            if char == _CLOSE_BRACKET:
                if self.expect == "item":
                    raise self._error(pos, "expected an item after ',' (a trailing comma is not allowed)")
                self.pos = pos + 1
                return True
            if char == _COMMA:
                raise self._error(pos, "expected an item, got ','")
            if char == _OPEN_BRACE and self.bulk:
                if self._in_bulk(found, pos):
                    continue
                self.bulk = False   # not again before more data arrives: a retry would cost as much
            self.pending = (pos, pos, 0)

    def _in_bulk(self, found: list[Piece], pos: int) -> bool:
        """Hand out the longest run of complete items from `pos` that msgspec parses as an array
        of its own (see the module docstring); False when none is found cheaply."""
        buf = self.buf
        limit = len(buf)
        tries = looks = 0
        while tries < _CUT_TRIES and looks < _CUT_LOOKS:
            looks += 1
            close = buf.rfind(b"}", pos, limit)
            if close < 0:
                return False
            limit = close
            after = _SPACE(buf, close + 1).end()
            if after >= len(buf):
                continue
            if buf[after] == _COMMA:
                following = _SPACE(buf, after + 1).end()
                if following >= len(buf) or buf[following] != _OPEN_BRACE:
                    continue
            elif buf[after] != _CLOSE_BRACKET:
                continue
            tries += 1
            self._region = replace_lone_surrogates(buf[pos:close + 1])
            try:
                items = _decode_items(b"[" + self._region + b"]")
            except (msgspec.DecodeError, RecursionError):
                continue
            self._hand_out_stretch(found, pos, close, items)
            self.pos = close + 1
            self.expect = "next"
            return True
        return False

    def _hand_out_stretch(self, found: list[Piece], pos: int, close: int, items: list[msgspec.Raw]) -> None:
        """The items msgspec found in `buf[pos:close + 1]`, as one `Stretch` (the line of each is
        counted here, between item starts; a stretch without line breaks is on one line)."""
        buf = self.buf
        if self.keep_lengths:   # line lengths are settled item by item
            begin = pos
            for item in items:
                begin = _SEPARATOR(buf, begin).end()
                self._hand_out(found, begin, buf[begin:begin + len(item)])
                begin += len(item)
            return
        if max(map(len, items)) > self.max_item:
            begin = pos
            for item in items:   # name the item over the limit
                begin = _SEPARATOR(buf, begin).end()
                self._hand_out([], begin, buf[begin:begin + len(item)])
                begin += len(item)
        starts = []
        begin = pos
        for item in items:
            begin = _SEPARATOR(buf, begin).end()
            starts.append(begin)
            begin += len(item)
        self._count_to(pos)
        line = self.line
        if buf.find(b"\n", pos, close) < 0:
            lines = [line] * len(items)
        else:
            lines = []
            before = pos
            for start in starts:
                line += buf.count(b"\n", before, start)
                before = start
                lines.append(line)
        self._count_to(starts[-1])
        self.lines.place_many(self.index, lines)
        self.index += len(items)
        found.append(Stretch(items, lines, self._region))

    def _delimit(self, pending: tuple[int, int, int]) -> int | None:
        """End of the `pending` item, found token by token; None if the buffer ends first."""
        buf = self.buf
        begin, resume, depth = pending
        if buf[begin] not in _OPENERS:
            end = _SCALAR(buf, begin).end()
            if end >= len(buf) or buf[end] == _QUOTE:   # more of it may follow
                self._need_more(begin, len(buf))
                return None
            return end
        for token in _TOKEN.finditer(buf, resume):
            at = token.start()
            char = buf[at]
            if char in _OPENERS:
                depth += 1
                if depth + 1 > self.max_depth:
                    raise self._error(at, f"invalid JSON: {nested_too_deep(self.max_depth - 1)}")
            elif char in _CLOSERS:
                depth -= 1
                if depth == 0:
                    return token.end()
            elif char == _QUOTE and token.end() - at == 1:   # a string not closed yet: read more, look again
                self.pending = (begin, at, depth)
                self._need_more(begin, at)
                return None
        self.pending = (begin, len(buf), depth)
        self._need_more(begin, len(buf))
        return None

    def _need_more(self, begin: int, at: int) -> None:
        """Nothing (read more), or at the end of the input the reason why the unfinished item at
        `begin` is bad: msgspec's own finding when it has one, since it knows the grammar, not
        just brackets."""
        if not self.ended:
            return
        found = syntax_error(self.buf[begin:])
        if found is not None:
            offset, reason = found
            raise self._error(begin + offset, f"item {self.index}: invalid JSON: {reason}")
        raise self._error(at, "the JSON array ends before it is complete (an item or a `]` is missing)")

    def _hand_out(self, found: list[Piece], begin: int, item: bytes) -> None:
        """One complete item at `buf[begin]`: note its line, hand it out."""
        if len(item) > self.max_item:
            raise self._error(begin, f"item {self.index} is {len(item):,} bytes, over the "
                                     f"{self.max_item:,}-byte limit {RAISE_LINE_LIMIT}")
        self._count_to(begin)
        self.lines.place(self.index, self.line)
        if self.keep_lengths:
            self.waiting += 1
        found.append((self.line, item))
        self.index += 1

    # -- lines -------------------------------------------------------------------------------------

    def _count_to(self, offset: int) -> None:
        """Move the line count to `offset`; lines that end on the way settle their waiting items."""
        if offset <= self.counted:
            return
        buf = self.buf
        newlines = buf.count(b"\n", self.counted, offset)
        if newlines:
            if self.keep_lengths:
                self._line_ended(buf.find(b"\n", self.counted, offset))
                self.line_start = buf.rfind(b"\n", self.counted, offset) + 1
            self.line += newlines
        self.counted = offset

    def _line_ended(self, end: int) -> None:
        """The current line ends at `buf[end]`: its length goes to the items that start on it."""
        if self.waiting:
            part = self.buf[self.line_start:end]
            cr = part.endswith(b"\r") if part else self.carried_cr
            length = self.carried + utf16_len_of_utf8(part) - cr
            for _ in range(0, self.waiting, 1 << 16):
                count = min(self.waiting, 1 << 16)
                self.lines.add_lengths([length] * count)
                self.waiting -= count
        self.carried = 0
        self.carried_cr = False

    def _finish(self) -> None:
        """After the `]`: only whitespace may follow (JavaScript's trim set, as the reference reads
        the file); the last line ends with the input."""
        while True:
            start = first_significant(self.buf[self.pos:], final=self.ended)
            if start is not None and start != MORE:
                raise self._error(self.pos + start, "unexpected content after the JSON array")
            if self.ended:
                break
            # all whitespace so far; keep only what may be a character cut in two, and read on
            self.pos = len(self.buf) if start is None else max(self.pos, len(self.buf) - 3)
            self._more()
        self._count_to(len(self.buf))
        if self.keep_lengths:
            self._line_ended(len(self.buf))

    def _error(self, offset: int, message: str) -> ArrayError:
        self._count_to(min(offset, len(self.buf)))
        return ArrayError(self.line, message)
