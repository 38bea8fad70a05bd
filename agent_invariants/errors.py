"""The errors users see: bad input, named by file and line or JSON path.

Every problem with what a user gave us (a contract, a trace, an option) is an `InputError`. Its
`str()` is the one line the CLI prints after `agent-invariants: `, so the message must stand alone:
which file, where in it, what was expected. Anything else that escapes is a bug in this program.

The parts that come from the user (a file name, a JSON path holding a key, a problem echoing a
value) are escaped and cut by `_safe.inert` (a path after 200 characters, the rest after 1000), so
each problem stays one printable line that cannot forge another. The attributes (`source`,
`path`, `problem`, `problems`) keep the raw text.

The words problems share live here too, so that every message says them alike: "did you mean"
for a name close to a known one (`suggest`), and the choices of a value that must be one of a few
(`unknown_value`), as in `unknown value "warn" (did you mean 'warning'?); expected one of: error, warning`.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence

from agent_invariants._safe import TEXT_LIMIT, VALUE_LIMIT, inert

__all__ = ("RAISE_LINE_LIMIT", "ContractError", "InputError", "TraceError", "closest", "did_you_mean", "suggest",
           "unknown_value")

RAISE_LINE_LIMIT = "(raise it with --max-line-bytes, or max_line_bytes in the library and the pytest table)"
"""How a line over the limit says where the limit is set, whichever way the trace was read."""


class InputError(Exception):
    """Bad input from the user: the CLI prints it on one line and exits 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class TraceError(InputError):
    """A trace that cannot be read or has an invalid event.

    `source` names the trace (a path, `<stdin>`, or `events[3]` for an item of an in-memory list)
    and `line` the physical line in the file, when there is one.
    """

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        super().__init__(f"{_where(source, line)}: {_shown(problem)}")


class ContractError(InputError):
    """A contract that cannot be read or does not validate.

    `path` is the JSON path of the (first) problem, such as `$.rules[2].tool`, and `line` its line
    in the file when known. `problems` lists every problem found, as (path, problem, line); the
    message has one line for each: `contract.json:14: $.rules[2].tool: must not be empty`.
    """

    def __init__(self, source: str, path: str | None, problem: str, line: int | None = None,
                 more: list[tuple[str | None, str, int | None]] | None = None) -> None:
        self.source = source
        self.path = path
        self.problem = problem
        self.line = line
        self.problems = [(path, problem, line), *(more or [])]
        super().__init__("\n".join(_contract_line(source, *item) for item in self.problems))


def _contract_line(source: str, path: str | None, problem: str, line: int | None) -> str:
    where = _where(source, line)
    if not path:
        return f"{where}: {_shown(problem)}"
    return f"{where}: {inert(path, VALUE_LIMIT)}: {_shown(problem)}"   # a path's tail may be any key


def _where(source: str, line: int | None) -> str:
    return _shown(source) if line is None else f"{_shown(source)}:{line}"


def _shown(text: str) -> str:
    return inert(text, TEXT_LIMIT)


def suggest(word: object, choices: Sequence[str]) -> str:
    """` (did you mean 'x'?)` when `word` is close to one of `choices`, else nothing."""
    return did_you_mean(closest(word, choices))


def did_you_mean(close: str | None) -> str:
    """` (did you mean 'x'?)` for a name `close` to what was written, nothing for None."""
    return f" (did you mean {close!r}?)" if close else ""


def closest(word: object, choices: Sequence[str]) -> str | None:
    """The one of `choices` closest to `word`, if close enough to be what was meant."""
    # A word over three times as long as every choice cannot reach the cutoff (the similarity is
    # at most 2 * shorter / both lengths); difflib would still index all of it, for each choice.
    if not isinstance(word, str) or len(word) > 3 * max(map(len, choices), default=0):
        return None
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close and word != word.lower():   # `$REGEX`, `Tool`: the case alone is wrong
        lowered = {choice.lower(): choice for choice in choices}
        close = [lowered[found] for found in difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)]
    return close[0] if close else None


def unknown_value(shown: str, value: object, choices: Sequence[str], what: str = "value") -> str:
    """The problem of a value that is none of `choices` (`shown` is how the message shows it):
    `unknown value "warn" (did you mean 'warning'?); expected one of: error, warning`."""
    return f"unknown {what} {shown}{suggest(value, choices)}; expected one of: {', '.join(choices)}"
