"""Temporary files for state that must not grow in memory with the trace.

Some facts are needed only at the end of a check but accrue with every event of a long trace: the
counts of retry_limit's groups, precedence's keys, the physical line and length of each event.
Past a fixed amount they move to one anonymous temporary file. The file is unlinked as soon as it exists (or has no
name at all), so nothing is left behind however the process ends.

Any problem with the temporary folder (missing, read-only, full) is a `SpillError`, an
`InputError` the CLI reports on one line with exit 2, never a traceback:

    agent-invariants: cannot use a temporary file in /tmp: No space left on device (set TMPDIR to a writable folder with room)
"""  # noqa: E501 (the message above is one line, as printed)
from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

import msgspec

from agent_invariants.errors import InputError

__all__ = ("Partitions", "SpillArray", "SpillError", "SpillFile")


class SpillError(InputError):
    """The temporary folder cannot hold what a check had to set aside."""

    def __init__(self, error: OSError) -> None:
        import tempfile  # here and below: most checks never spill (start-up)

        reason = error.strerror or str(error)
        super().__init__(f"cannot use a temporary file in {tempfile.gettempdir()}: {reason} "
                         "(set TMPDIR to a writable folder with room)")


class SpillFile:
    """An anonymous temporary file written in blocks and read back by (offset, size)."""

    def __init__(self) -> None:
        import tempfile

        try:
            # open for as long as this object lives (closed by close()), so no `with`
            self._file = tempfile.TemporaryFile(prefix="agent-invariants-")  # noqa: SIM115
        except OSError as exc:
            raise SpillError(exc) from None
        self.size = 0

    def write(self, data: bytes) -> tuple[int, int]:
        """Append `data`; return where it went, as (offset, size)."""
        try:
            self._file.write(data)
        except OSError as exc:
            self.close()
            raise SpillError(exc) from None
        offset = self.size
        self.size += len(data)
        return offset, len(data)

    def read(self, spans: Sequence[int]) -> bytes:
        """The blocks at `spans` (offset, size, offset, size, ...), one after the other."""
        try:
            self._file.flush()
            descriptor = self._file.fileno()
            return b"".join([os.pread(descriptor, spans[at + 1], spans[at]) for at in range(0, len(spans), 2)])
        except OSError as exc:
            self.close()
            raise SpillError(exc) from None

    def close(self) -> None:
        self._file.close()


class SpillArray:
    """An append-only array of integers holding at most `keep` of them in memory; older blocks of
    `keep` go to a `SpillFile`. Read back in order with `blocks()`."""

    def __init__(self, typecode: str = "q", keep: int = 1 << 16) -> None:
        self.typecode = typecode
        self.keep = keep
        self._tail = array(typecode)
        self._file: SpillFile | None = None
        self._blocks: list[tuple[int, int]] = []   # (offset, size) of each spilled block
        self._spilled = 0

    def __len__(self) -> int:
        return self._spilled + len(self._tail)

    def append(self, value: int) -> None:
        self._tail.append(value)
        if len(self._tail) >= self.keep:
            self._spill()

    def extend(self, values: array[int] | list[int]) -> None:
        self._tail.extend(values)
        if len(self._tail) >= self.keep:
            self._spill()

    def blocks(self) -> Iterator[array[int]]:
        """The values in order, a block at a time."""
        for offset, size in self._blocks:
            block = array(self.typecode)
            if size:
                assert self._file is not None   # a block is listed once it is in the file
                block.frombytes(self._file.read((offset, size)))
            yield block
        yield self._tail

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _spill(self) -> None:
        if self._file is None:
            self._file = SpillFile()
        self._blocks.append(self._file.write(self._tail.tobytes()))
        self._spilled += len(self._tail)
        self._tail = array(self.typecode)


_BLOCKS = msgspec.json.Decoder(list[list[Any]])   # a block: a list of columns
_BLOCKS_UNREAD = msgspec.json.Decoder(list[msgspec.Raw])   # its columns, not looked into yet
_COLUMN = msgspec.json.Decoder(list[Any])


class Partitions:
    """Records (tuples of JSON values) set aside in one `SpillFile`, each in one of `count`
    partitions chosen by the hash of its first item (a group's or key's text), so that state
    keyed by that text can be settled a partition at a time, in bounded memory.

    Records are of `kinds` kinds (say, the state at the time of the spill, and the events that
    came after); all records of a kind have the same length. They are buffered and written out
    in blocks, one line of JSON per kind and partition, by columns: `[[text, text, ...], [seq,
    seq, ...], ...]`. Where each partition's blocks are is kept in memory (a few numbers per
    block). `read(kind, number)` gives one partition's records of one kind in the order they were
    added; `read_columns` only some items of each, leaving the other columns undecoded. (Columns
    decode three times faster than the same records as rows, and a partition may hold millions.)
    """

    def __init__(self, kinds: int = 1, count: int = 256, flush_every: int = 1 << 14) -> None:
        self.count = count
        self.added = [0] * kinds   # records added, per kind
        self._file = SpillFile()
        self._flush_every = flush_every
        self._encoder = msgspec.json.Encoder()
        # per kind and partition: the (offset, size) of each block, flat in an array of int64
        self._blocks = [[array("q") for _ in range(count)] for _ in range(kinds)]
        self._last_unread: tuple[tuple[int, int, int] | None, list[list[msgspec.Raw]]] = (None, [])
        self._pending: list[list[list[tuple[Any, ...]]]] = [[[] for _ in range(count)] for _ in range(kinds)]
        self._buffered = 0

    def number(self, text: str) -> int:
        """The partition of the records whose first item is `text`."""
        return hash(text) % self.count

    def add(self, kind: int, *record: Any) -> None:
        """Set a record aside; its first item (a str) chooses its partition."""
        self._pending[kind][hash(record[0]) % self.count].append(record)
        self.added[kind] += 1
        self._buffered += 1
        if self._buffered >= self._flush_every:
            self.flush()

    def add_many(self, kind: int, records: Iterable[tuple[Any, ...]]) -> None:
        """`add` for many records of one kind at once: one call, not one per record, for state
        that moves to disk in bulk or members buffered by the caller."""
        pending, count, flush_every = self._pending[kind], self.count, self._flush_every
        records = iter(records)
        while chunk := list(islice(records, flush_every - self._buffered)):
            for record in chunk:
                pending[hash(record[0]) % count].append(record)
            self.added[kind] += len(chunk)
            self._buffered += len(chunk)
            if self._buffered >= flush_every:
                self.flush()

    def flush(self) -> None:
        """Write out every buffered record."""
        for blocks, pending in zip(self._blocks, self._pending, strict=True):
            for number, records in enumerate(pending):
                if records:
                    columns = self._encoder.encode(list(zip(*records, strict=True)))
                    blocks[number].extend(self._file.write(columns + b"\n"))
                    records.clear()
        self._buffered = 0

    def read(self, kind: int, number: int) -> list[tuple[Any, ...]]:
        """The records of one kind in partition `number`, in the order they were added."""
        records: list[tuple[Any, ...]] = []
        for columns in _BLOCKS.decode_lines(self._data(kind, number)):
            records += zip(*columns, strict=True)
        return records

    def read_columns(self, kind: int, number: int, *wanted: int) -> list[list[Any]]:
        """Items `wanted` of each record of one kind in partition `number` (a list per item, in
        the order the records were added)."""
        values: list[list[Any]] = [[] for _ in wanted]
        for columns in self._unread(kind, number):
            for found, column in zip(values, wanted, strict=True):
                found += _COLUMN.decode(columns[column])
        return values

    def _unread(self, kind: int, number: int) -> list[list[msgspec.Raw]]:
        """The blocks of one kind in partition `number`, each a list of its undecoded columns.
        The last partition asked for is kept until another is, or a record is added: a caller
        that reads some columns first, and the others only if it must, reads the file once."""
        key = (kind, number, self.added[kind])
        if self._last_unread[0] != key:
            self._last_unread = (None, [])   # let the previous one go first
            self._last_unread = (key, _BLOCKS_UNREAD.decode_lines(self._data(kind, number)))
        return self._last_unread[1]

    def _data(self, kind: int, number: int) -> bytes:
        """The blocks of one kind in partition `number`, a line each."""
        if self._buffered:
            self.flush()
        return self._file.read(self._blocks[kind][number])

    def close(self) -> None:
        self._last_unread = (None, [])
        self._file.close()
