"""Measurements made inside one process, so that ratios are not skewed by machine drift.

    python -m bench.worker times TRACE CONTRACT REPS      # JSON: median seconds of floor, check, compare
    python -m bench.worker rss {floor,check,compare} TRACE CONTRACT   # JSON: peak RSS in MiB

`compare` is timed as the CLI runs it (the baseline checked in a second process when there are
two CPUs or more) and in one process; its RSS is measured in one process.

The "decode floor" streams the trace and decodes every line into a generic msgspec struct, doing
nothing else: no checker can be faster, so check time is reported as a multiple of it.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time

import msgspec

from agent_invariants import check_trace, compare_traces, load_contract


class FloorEvent(msgspec.Struct, gc=False):
    seq: int | float
    type: str
    time: str | None = None
    run_id: str | None = None
    tool: str | None = None
    call_id: str | None = None
    call_signature: str | None = None
    approval_id: str | None = None
    approval_scope: str | None = None
    approved: bool | None = None
    ok: bool | None = None
    outcome_id: str | None = None
    verdict: str | None = None
    evidence_class: str | None = None
    claims_completion: bool | None = None
    confidence: float | None = None
    data: msgspec.Raw = msgspec.Raw()


def floor(path: str) -> int:
    decode = msgspec.json.Decoder(FloorEvent).decode
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                decode(line)
                count += 1
    return count


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "times":
        path, contract_path, reps = argv[1], argv[2], int(argv[3])
        contract = load_contract(contract_path)
        warm_up = [{"seq": 1, "type": "tool.call", "tool": "kb.search", "call_id": "c1"}]
        compare_traces(contract, warm_up, warm_up)   # imports and caches, outside the timings
        jobs = os.cpu_count() or 1   # as the CLI runs compare: the baseline beside the candidate
        samples: dict[str, list[float]] = {"floor": [], "check": [], "compare": [], "compare_one_process": []}
        for _ in range(reps):   # interleaved, so drift hits all alike
            samples["floor"].append(timed(lambda: floor(path)))
            samples["check"].append(timed(lambda: check_trace(contract, path)))
            samples["compare"].append(timed(lambda: compare_traces(contract, path, path, jobs=jobs)))
            samples["compare_one_process"].append(timed(lambda: compare_traces(contract, path, path)))
        print(json.dumps({name: statistics.median(values) for name, values in samples.items()}))
    elif mode == "rss":
        what, path, contract_path = argv[1], argv[2], argv[3]
        if what == "floor":
            floor(path)
        else:
            contract = load_contract(contract_path)
            if what == "check":
                check_trace(contract, path)
            else:
                compare_traces(contract, path, path)
        print(json.dumps({"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
