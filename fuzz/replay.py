#!/usr/bin/env python3
"""Run inputs through a fuzz target's TestOneInput without fuzzing: reproduce, triage, measure.

    python fuzz/replay.py trace fuzz/artifacts/trace/crash-1234     # one input: full traceback
    python fuzz/replay.py contract fuzz/corpus/contract             # every file of a folder
    python -m coverage run --source=agent_invariants fuzz/replay.py trace fuzz/corpus/trace
    python -m coverage report

With several inputs it prints one line per input that fails (its signature) and a count per
signature; with FUZZ_SUPPRESS unset every non-InputError exception counts as a failure.
"""
from __future__ import annotations

import collections
import importlib
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _inputs(paths: list[str]) -> list[str]:
    """Files named, and the files under folders named (recursively; tracebacks, *.txt, skipped)."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            for folder, _dirs, names in sorted(os.walk(path)):
                found.extend(os.path.join(folder, name) for name in sorted(names)
                             if not name.endswith(".txt"))
        else:
            found.append(path)
    return found


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("trace", "contract", "yaml", "extends", "mcp", "v2"):
        print(__doc__)
        return 2
    harness = importlib.import_module(f"fuzz_{argv[0]}")
    import _fuzzcommon

    files = _inputs(argv[1:])
    counts: collections.Counter[str] = collections.Counter()
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            harness.TestOneInput(data)
        except Exception as exc:  # noqa: BLE001
            sig = _fuzzcommon.signature(exc)
            counts[sig] += 1
            if len(files) == 1:
                traceback.print_exc()
            else:
                print(f"{sig}\t{path}")
    print(f"{len(files)} inputs, {sum(counts.values())} failing")
    for sig, count in counts.most_common():
        print(f"  {count:6d}  {sig}")
    return 1 if counts else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
