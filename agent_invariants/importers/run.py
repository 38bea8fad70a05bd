"""What an importer is given and gives back: the `Context` of one import, and its `Run`s.

An importer reads records and yields one `Run` per run it finds (an OpenTelemetry trace, an Agents
SDK trace, a LangSmith root run, an MCP session). The context tells it which runs are wanted, so
that it keeps the records of those only (memory per run, not per file), and counts what it skips.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from agent_invariants.importers.common import Timeline
    from agent_invariants.importers.profile import Profile

__all__ = ("ALL_RUNS", "Context", "Run")

ALL_RUNS = "all"
"""`--run all`: every run of the input."""


class Run(NamedTuple):
    """One run read from the input: its id and its events, to be written out in order."""

    run_id: str
    timeline: Timeline


class Context:
    """One import: the file's name (as given: it goes into `data.source`), the profile, the run
    wanted (None: whichever there is; `all`; or an id), and what was skipped."""

    def __init__(self, file: str, profile: Profile | None = None, run: str | None = None) -> None:
        self.file, self.profile, self.run = file, profile, run
        self.skipped = 0
        self.other_runs: list[str] = []
        self.hoist_elicitation = bool(profile is not None and profile.hoist_elicitation)

    def wants(self, run_id: str) -> bool:
        """Whether the records of this run are to be kept."""
        return self.run is None or self.run == ALL_RUNS or self.run == run_id

    def seen(self, run_id: str) -> None:
        """A run that is not wanted: its id is remembered, for the message if the wanted one is
        missing (at most 1,000 ids)."""
        if run_id not in self.other_runs and len(self.other_runs) < 1000:
            self.other_runs.append(run_id)

    def skip(self, count: int = 1) -> None:
        """A record of a kind the format's mapping does not use."""
        self.skipped += count
