"""Benchmark: decode floor, check and compare on generated traces; a Markdown table for the README.

    python -m bench                      # 10k, 100k and 1M events, 3 repetitions
    python -m bench --sizes 10k,100k     # quicker
    python -m bench --sizes 1m,10m       # flat memory at ten million events
    python -m bench --jobs-test          # --jobs 2 against --jobs 1 over 20 traces of 100k events

Traces and contracts are generated once into bench/out/ (gen_trace.py, seed 7) and reused.
Times are medians; "check / floor" compares two measurements made in the same process.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

# Agent Invariants v0.1.0 (Node 20) on the same machine class, seed-7 generated traces.
NODE_SECONDS = {"10k": 0.69, "100k": 4.83, "1m-compact": 166.0}


def events_of(size: str) -> int:
    number, unit = size[:-1] if size[-1] in "km" else size, size[-1] if size[-1] in "km" else ""
    return int(float(number) * {"k": 1_000, "m": 1_000_000, "": 1}[unit])


def generate(size: str, compact: bool = False) -> tuple[Path, Path]:
    OUT.mkdir(exist_ok=True)
    name = f"{size}{'-compact' if compact else ''}"
    trace, contract = OUT / f"trace-{name}.jsonl", OUT / f"contract-{name}.json"
    if not trace.exists() or not contract.exists():
        args = [sys.executable, str(HERE / "gen_trace.py"), "--events", str(events_of(size)), "--out", str(trace),
                "--contract", str(contract), "--seed", "7"] + (["--compact"] if compact else [])
        subprocess.run(args, check=True)
    return trace, contract


def worker(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench.worker", *args], cwd=HERE.parent, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def _seconds(value: float) -> str:
    """Seconds with three significant digits at most, so small traces do not show 0.00 s."""
    return f"{value:.2f} s" if value >= 1 else f"{value:.3g} s"


def cli_seconds(args: list[str], reps: int) -> float:
    """Median wall time of the real command, start-up included ("end to end")."""
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=HERE.parent,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def measure(sizes: list[str], reps: int) -> list[str]:
    rows = ["| events | size | decode floor | check | check / floor | events/s | MB/s | compare | compare / check "
            "| compare, one process | peak RSS check | peak RSS compare |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for size in sizes:
        trace, contract = generate(size)
        megabytes = trace.stat().st_size / 1e6
        times = worker("times", str(trace), str(contract), str(reps))
        rss_check = worker("rss", "check", str(trace), str(contract))["rss_mib"]
        rss_compare = worker("rss", "compare", str(trace), str(contract))["rss_mib"]
        count = events_of(size)
        rows.append(
            f"| {count:,} | {megabytes:,.0f} MB | {_seconds(times['floor'])} | {_seconds(times['check'])} | "
            f"{times['check'] / times['floor']:.2f}x | {count / times['check']:,.0f} | "
            f"{megabytes / times['check']:.0f} | "
            f"{_seconds(times['compare'])} | {times['compare'] / times['check']:.2f}x | "
            f"{_seconds(times['compare_one_process'])} ({times['compare_one_process'] / times['check']:.2f}x) | "
            f"{rss_check:.0f} MiB | {rss_compare:.0f} MiB |")
        print(rows[-1], flush=True)
    return rows


def versus_node(reps: int) -> list[str]:
    rows = ["| trace | Node tool | agent-invariants (end to end) | speed-up |", "|---|---:|---:|---:|"]
    for label, size, compact in (("10k", "10k", False), ("100k", "100k", False), ("1m-compact", "1m", True)):
        trace, contract = generate(size, compact)
        seconds = cli_seconds(["check", "--contract", str(contract), "--trace", str(trace), "--format", "json",
                               "--quiet"], reps)
        node = NODE_SECONDS[label]
        rows.append(f"| {label} | {node:.2f} s | {seconds:.2f} s | {node / seconds:.0f}x |")
        print(rows[-1], flush=True)
    return rows


def jobs_test(reps: int) -> list[str]:
    trace, contract = generate("100k")
    folder = OUT / "twenty-100k"
    if not folder.exists():
        folder.mkdir()
        for number in range(20):
            shutil.copy(trace, folder / f"run-{number:02d}.jsonl")
    rows = ["| 20 traces of 100k events | wall time | speed-up |", "|---|---:|---:|"]
    base = ["check", "--contract", str(contract), "--trace", str(folder), "--format", "json", "--quiet"]
    one = cli_seconds(base + ["--jobs", "1"], reps)
    two = cli_seconds(base + ["--jobs", "2"], reps)
    rows += [f"| `--jobs 1` | {one:.2f} s | 1.00x |", f"| `--jobs 2` | {two:.2f} s | {one / two:.2f}x |"]
    print("\n".join(rows[-2:]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10k,100k,1m", help="comma-separated sizes, e.g. 10k,1m,10m")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per measurement (median)")
    parser.add_argument("--node", action="store_true", help="also time the CLI end to end against the Node figures")
    parser.add_argument("--jobs-test", action="store_true", help="also time --jobs 1 against --jobs 2")
    args = parser.parse_args()
    sections = [f"Measured on: {machine()}", ""]
    sections += measure([size.strip().lower() for size in args.sizes.split(",") if size.strip()], args.reps)
    if args.node:
        sections += [""] + versus_node(args.reps)
    if args.jobs_test:
        sections += [""] + jobs_test(args.reps)
    print("\n" + "\n".join(sections))


if __name__ == "__main__":
    main()
