"""Output formats: one module per format, each with one `render(report, options) -> str`.

Renderers only turn a report into text; they never decide a verdict or write files. Every format
takes the same `RenderOptions` and reads only the fields it has a use for, so a caller renders any
format the same way:

    renderer("sarif").render(report, RenderOptions(sources=sources, category="nightly"))
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agent_invariants.sources import Sources
    from agent_invariants.timeline import Timelines

__all__ = ("DEFAULTS", "FORMATS", "RenderOptions", "renderer")

# format name -> module under agent_invariants.render
FORMATS = {
    "text": "text",
    "pretty": "text",
    "json": "json",
    "sarif": "sarif",
    "junit": "junit",
    "markdown": "markdown",
    "github": "github",
    "html": "html",
}


@dataclass(frozen=True, kw_only=True)
class RenderOptions:
    """How to render, beyond the report itself. The defaults give the plain output."""

    color: bool = False
    """text: ANSI colours (the CLI asks when stdout is a terminal and NO_COLOR is unset)."""
    sources: Sources | None = None
    """sarif: what the input files tell beyond the report (URIs, rule lines, line lengths)."""
    anchor: Literal["trace", "contract"] = "trace"
    """sarif: locate results in the trace file, or at the rule in the contract."""
    category: str | None = None
    """sarif: `automationDetails.id`, to keep several uploads apart."""
    detail: Literal["quiet", "normal", "verbose"] = "normal"
    """text: `quiet` only the verdict and the totals; `normal` every rule of a single report but
    only the failing traces and rules of a batch; `verbose` everything."""
    timelines: Timelines | None = None
    """html: the events around each finding, read again from the trace files (`timeline.collect`)."""

    @property
    def outputs(self) -> dict[int, tuple[int, int | None]]:
        """A stability report's final output lines (and lengths) by run, as `sources` knows them."""
        return self.sources.outputs if self.sources is not None else {}


DEFAULTS = RenderOptions()
"""The plain output: no colour, and nothing known about the files beyond the report."""


def renderer(name: str) -> ModuleType:
    """The module that renders format `name` (imported on demand)."""
    return importlib.import_module(f"agent_invariants.render.{FORMATS[name]}")
