"""The errors users see: bad input, named by file and line or JSON path.

Every problem with what a user gave us (a contract, a trace, an option) is an `InputError`. Its
`str()` is the one line the CLI prints after `agent-invariants: `, so the message must stand alone:
which file, where in it, what was expected. Anything else that escapes is a bug in this program.
"""

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
        prefix = source if line is None else f"{source}:{line}"
        super().__init__(f"{prefix}: {problem}")


class ContractError(InputError):
    """A contract that cannot be read or does not validate; `path` is a JSON path such as `$.rules[2].tool`."""

    def __init__(self, source: str, path: str | None, problem: str) -> None:
        self.source = source
        self.path = path
        self.problem = problem
        prefix = f"{source}: {path}" if path else source
        super().__init__(f"{prefix}: {problem}")
