"""The errors users see: bad input, named by file and line or JSON path.

Every problem with what a user gave us (a contract, a trace, an option) is an `InputError`. Its
`str()` is the one line the CLI prints after `agent-invariants: `, so the message must stand alone:
which file, where in it, what was expected. Anything else that escapes is a bug in this program.

The parts that come from the user (a file name, a JSON path holding a key, a problem echoing a
value) are escaped and cut by `_safe.inert` (a path after 200 characters, the rest after 1000), so
each problem stays one printable line that cannot forge another. The attributes (`source`,
`path`, `problem`, `problems`) keep the raw text.
"""
from agent_invariants._safe import TEXT_LIMIT, VALUE_LIMIT, inert

__all__ = ("ContractError", "InputError", "TraceError")


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
