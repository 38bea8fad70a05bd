"""Where each event of a trace file is: its physical line and, when asked for, that line's length.

Reports point every violation at the physical line of its event (`file:line`), and SARIF regions
end at the end of that line. Both are learnt while the trace is read once, and looked up after the
check for the few events that violations name, so nothing is read twice (a trace may be a pipe).

Lines are kept as runs: from event `start` on, event i sits on line `base + step * (i - start)`,
up to the next run. A JSONL trace without blank or comment lines is one run (step 1), a JSON array
on one line is one run (step 0), and a blank or comment line between two events starts a new run.
Lengths, when asked for, are one number per event. Past a fixed number, runs and lengths move to a
temporary file (`spill.SpillArray`), so memory stays flat whatever the mix of lines.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence

from agent_invariants.spill import SpillArray

__all__ = ("LineMap",)


class LineMap:
    """Physical lines (and optionally line lengths) of a trace's events, by event index."""

    def __init__(self, lengths: bool = False) -> None:
        self._starts = SpillArray()
        self._bases = SpillArray()
        self._steps = SpillArray()
        # the newest run, kept apart so it can still change: (start, base, step or None if unknown)
        self._run: tuple[int, int, int | None] | None = None
        self._lengths = SpillArray(keep=1 << 17) if lengths else None

    @property
    def keeps_lengths(self) -> bool:
        return self._lengths is not None

    def jump(self, index: int, line: int) -> None:
        """From event `index` on, events sit on consecutive lines starting at `line` (JSONL)."""
        run = self._run
        if run is not None and run[0] == index:   # several skipped lines before the same event
            self._run = (index, line, 1)
            return
        self._close()
        self._run = (index, line, 1)

    def place(self, index: int, line: int) -> None:
        """Event `index` sits on `line`; events come in order (JSON arrays, several to a line or
        several lines to an event)."""
        run = self._run
        if run is not None:
            start, base, step = run
            if step is None:
                if line >= base:   # the run's second event sets its step
                    self._run = (start, base, line - base)
                    return
            elif line == base + step * (index - start):
                return
        self._close()
        self._run = (index, line, None)

    def place_many(self, first: int, lines: list[int]) -> None:
        """`place` for events `first`, `first + 1`, ... on `lines`."""
        for index, line in enumerate(lines, first):
            self.place(index, line)

    def add_lengths(self, lengths: Iterable[int]) -> None:
        """The line lengths of the next events, in order (only when lengths are kept)."""
        assert self._lengths is not None
        self._lengths.extend(lengths if isinstance(lengths, list) else list(lengths))

    def lines(self, indices: Iterable[int]) -> dict[int, int]:
        """The physical line of each event index asked for (indices never placed are left out)."""
        wanted = sorted(set(indices))
        found: dict[int, int] = {}
        if not wanted:
            return found
        at = 0
        previous: tuple[int, int, int] | None = None   # the last run of the blocks read so far
        for starts, bases, steps in self._run_blocks():
            if not starts:
                continue
            # indices before this block's first run belong to the previous block's last run
            while at < len(wanted) and wanted[at] < starts[0]:
                _resolve(found, wanted[at], previous)
                at += 1
            last = len(starts) - 1
            while at < len(wanted) and wanted[at] < starts[last]:
                run = bisect_right(starts, wanted[at]) - 1
                _resolve(found, wanted[at], (starts[run], bases[run], steps[run]))
                at += 1
            previous = (starts[last], bases[last], steps[last])
        for index in wanted[at:]:
            _resolve(found, index, previous)
        return found

    def lengths(self, indices: Iterable[int]) -> dict[int, int]:
        """The line length of each event index asked for (empty when lengths are not kept)."""
        if self._lengths is None:
            return {}
        wanted = sorted(set(indices))
        found: dict[int, int] = {}
        at = 0
        first = 0   # index of the first event of the current block
        for block in self._lengths.blocks():
            end = first + len(block)
            while at < len(wanted) and wanted[at] < end:
                if wanted[at] >= first:
                    found[wanted[at]] = block[wanted[at] - first]
                at += 1
            first = end
        return found

    def close(self) -> None:
        """Give back the temporary file, if one was needed."""
        for spilled in (self._starts, self._bases, self._steps, self._lengths):
            if spilled is not None:
                spilled.close()

    def _close(self) -> None:
        """Store the newest run: it can no longer change."""
        if self._run is not None:
            start, base, step = self._run
            self._starts.append(start)
            self._bases.append(base)
            self._steps.append(0 if step is None else step)
            self._run = None

    def _run_blocks(self) -> Iterator[tuple[Sequence[int], Sequence[int], Sequence[int]]]:
        """The runs, a block at a time: their starts, bases and steps, the newest run last."""
        yield from zip(self._starts.blocks(), self._bases.blocks(), self._steps.blocks(), strict=True)
        if self._run is not None:
            start, base, step = self._run
            yield [start], [base], [0 if step is None else step]


def _resolve(found: dict[int, int], index: int, run: tuple[int, int, int] | None) -> None:
    if run is not None:
        start, base, step = run
        found[index] = base + step * (index - start)
