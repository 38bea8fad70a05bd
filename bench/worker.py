"""Measurements made inside one process, so that ratios are not skewed by machine drift.

    python bench/worker.py times TRACE CONTRACT REPS      # JSON: median seconds of floor, check, compare
    python bench/worker.py rss {floor,check,compare} TRACE CONTRACT   # JSON: peak RSS in MiB
    python bench/worker.py serve     # one JSON request a line on stdin, one JSON answer a line on stdout

Run it by its file path with the checkout to measure first on PYTHONPATH, from a directory that
holds no `agent_invariants` (`python -m bench.worker` from a checkout imports that checkout's
package, whatever PYTHONPATH says). Every answer names the `agent_invariants/__init__.py` it
imported, so the caller can check. It uses only `load_contract`, `check_trace` and
`compare_traces` (with `jobs`), so it runs unchanged against older checkouts.

`serve` answers requests `{"jobs": [{"name": N, "op": "floor"|"check"|"compare"|"compare1",
"trace": T, "contract": C}, ...]}` with `{"times": {N: seconds}, "verdicts": {N: ...}}`, the
jobs run in the given order in this one process; the caller repeats requests and takes medians,
so that two checkouts can be measured rep by rep, each in its own long-lived process.

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
from typing import Any

import msgspec

import agent_invariants
from agent_invariants import check_trace, compare_traces, load_contract

PACKAGE = agent_invariants.__file__


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


def _count(item: Any) -> int:
    """Violations of a report or rule result, kept or not."""
    total = getattr(item, "violations_total", None)
    return total if isinstance(total, int) else len(item.violations)


def verdict(report: Any) -> dict[str, Any]:
    """A small summary of a check or compare report, to see that two checkouts agree."""
    if hasattr(report, "compatible"):
        return {"compatible": report.compatible, "regressions": len(report.regressions),
                "baseline": verdict(report.baseline), "candidate": verdict(report.candidate)}
    return {"passed": report.passed, "violations": _count(report),
            "failing": {result.rule_id: _count(result) for result in report.results if not result.passed}}


def serve() -> None:
    contracts: dict[str, Any] = {}
    jobs = os.cpu_count() or 1   # as the CLI runs compare: the baseline beside the candidate
    warm_up = [{"seq": 1, "type": "tool.call", "tool": "kb.search", "call_id": "c1"}]
    operations = {
        "floor": lambda contract, path: floor(path),
        "check": lambda contract, path: check_trace(contract, path),
        "compare": lambda contract, path: compare_traces(contract, path, path, jobs=jobs),
        "compare1": lambda contract, path: compare_traces(contract, path, path),
    }
    print(json.dumps({"package": PACKAGE}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        times: dict[str, float] = {}
        verdicts: dict[str, Any] = {}
        for job in request["jobs"]:
            contract = contracts.get(job["contract"])
            if contract is None:
                contract = contracts[job["contract"]] = load_contract(job["contract"])
                compare_traces(contract, warm_up, warm_up)   # imports and caches, outside the timings
            start = time.perf_counter()
            result = operations[job["op"]](contract, job["trace"])
            times[job["name"]] = time.perf_counter() - start
            verdicts[job["name"]] = None if job["op"] == "floor" else verdict(result)
            del result
        print(json.dumps({"package": PACKAGE, "times": times, "verdicts": verdicts}), flush=True)


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "serve":
        serve()
    elif mode == "times":
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
        print(json.dumps({name: statistics.median(values) for name, values in samples.items()} | {"package": PACKAGE}))
    elif mode == "rss":
        what, path, contract_path = argv[1], argv[2], argv[3]
        outcome = None
        if what == "floor":
            floor(path)
        else:
            contract = load_contract(contract_path)
            if what == "check":
                outcome = verdict(check_trace(contract, path))
            else:
                outcome = verdict(compare_traces(contract, path, path))
        print(json.dumps({"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "verdict": outcome,
                          "package": PACKAGE}))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
