"""Output formats: one module per format, each with one `render(report, ...) -> str`.

Renderers only turn a report into text; they never decide a verdict or write files.
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ("FORMATS", "renderer")

# format name -> module under agent_invariants.render
FORMATS = {
    "text": "text",
    "pretty": "text",
    "json": "json",
    "sarif": "sarif",
    "junit": "junit",
    "markdown": "markdown",
}


def renderer(name: str) -> ModuleType:
    """The module that renders format `name` (imported on demand)."""
    return importlib.import_module(f"agent_invariants.render.{FORMATS[name]}")
