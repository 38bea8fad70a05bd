"""Generators of real framework exports, run by the importer tests."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ("written",)


def written(write: Callable[[str, Path], None], scenarios: Iterable[str], folder: Path,
            extension: str) -> dict[str, Path]:
    """Each scenario written by a generator's `write` into `folder`, by scenario name."""
    paths = {scenario: folder / f"{scenario}{extension}" for scenario in scenarios}
    for scenario, path in paths.items():
        write(scenario, path)
    return paths
