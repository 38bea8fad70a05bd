"""Benchmark: decode floor, check and compare on generated traces, stress cases and start-up; Markdown tables.

    python -m bench                      # every case (plain: 10k, 100k and 1M events), 3 repetitions
    python -m bench --cases plain --sizes 10k,100k    # quicker
    python -m bench --cases plain --sizes 1m,10m --no-compare   # flat memory at ten million events
    python -m bench --cases violations,new-tool,approval-ids,startup
    python -m bench --cases v2                          # contract version 2 against version 1
    python -m bench --cases import                      # convert 1M OTLP spans against reading 1M events
    python -m bench --cases quality                     # lint of 10,000 rules; mutate of 1,000 events
    python -m bench --against /tmp/old   # every figure twice: "before" (that checkout) and "now" (this one)
    python -m bench --jobs-test          # --jobs 2 against --jobs 1 over 20 traces of 100k events

Cases: plain (the generated trace at --sizes: floor, check, compare, peak RSS), violations (one
million), new-tool (a new tool name on every call), approval-ids (one million approval ids),
references (refunds checked against every earlier lookup's result), each of these four as time per
event against the plain 1M trace, import (`convert` of one million
OpenTelemetry spans, against `summary` of the plain 1M trace and against decoding the spans' JSON
alone), quality (`lint` of a contract of
10,000 rules, `mutate` of a 1,000-event trace into 500 mutants with one process and with two:
gen_quality.py) and startup (the real command).

Each table goes to stderr row by row as it is measured, and the whole report to stdout at the end
(`> bench.md` keeps the report alone). Traces and contracts are generated once into bench/out/
(gen_trace.py and gen_cases.py, seed 7) and reused. Times are medians; ratios compare
measurements made in the same process. With --against, the two checkouts take turns rep by rep
(this one first), each in its own process.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

# Agent Invariants v0.1.0 (Node 20) on the same machine class, seed-7 generated traces.
NODE_SECONDS = {"10k": 0.69, "100k": 4.83, "1m-compact": 166.0}

CASES = ("plain", "violations", "new-tool", "approval-ids", "references", "v2", "import", "quality", "html", "startup")
ALIASES = {"new-tool-per-call": "new-tool", "start-up": "startup"}
STRESS = ("violations", "new-tool", "approval-ids", "references")


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


def generate_v2(size: str) -> tuple[Path, dict[str, Path]]:
    """The --args trace of `size` (calls with args, results with results) and its contracts: the
    version-1 one, the version-2 one that adds tool_args rules with references, the one that adds
    a rule of each order kind and the one that adds a rule of each part-3 kind (gen_trace.py)."""
    OUT.mkdir(exist_ok=True)
    trace = OUT / f"trace-{size}-args.jsonl"
    contracts = {"v1": OUT / f"contract-{size}-args-v1.json", "v2": OUT / f"contract-{size}-v2.json",
                 "v2-order": OUT / f"contract-{size}-v2-order.json",
                 "v2-outcomes": OUT / f"contract-{size}-v2-outcomes.json"}
    if not (trace.exists() and all(path.exists() for path in contracts.values())):
        subprocess.run([sys.executable, str(HERE / "gen_trace.py"), "--events", str(events_of(size)), "--args",
                        "--out", str(trace), "--contract", str(contracts["v1"]), "--contract-v2", str(contracts["v2"]),
                        "--contract-v2-order", str(contracts["v2-order"]),
                        "--contract-v2-outcomes", str(contracts["v2-outcomes"]), "--seed", "7"], check=True)
    return trace, contracts


_VERSION_ROWS = {
    "v1": "version 1 (12 rules)",
    "v2": "version 2 (the same + 4 tool_args, 1 args matcher)",
    "v2-order": "version 2 (the same + tool_order, precedence, tool_calls, approval_bound)",
    "v2-outcomes": "version 2 (the same + one rule of each of the nine kinds of part 3)",
}


def versions(size: str, reps: int, workers: list[Worker]) -> list[str]:
    """Contract version 2 against version 1 on the same trace: the v1 rules alone, then with four
    tool_args rules (references to earlier results, regexes, exact mode) and an args matcher, then
    with one rule of each order kind, then with one rule of each part-3 kind. Measured for this
    checkout only (a checkout before version 2 cannot load the contracts)."""
    trace, contracts = generate_v2(size)
    now = [worker for worker in workers if worker.checkout.label == "now"]
    jobs = [job(name, "check", trace, contract) for name, contract in contracts.items()]
    times, verdicts = sample(now, jobs, reps)
    events = events_of(size)
    rows = ["| contract | events | check | µs per event | ÷ v1 | peak RSS check | verdict |",
            "|---|---:|---:|---:|---:|---:|---|"]
    _progress("\n".join(rows))
    for name, contract in contracts.items():
        memory, _ = rss(now[0].checkout, "check", trace, contract)
        seconds = times["now"][name]
        cells = [_VERSION_ROWS[name], f"{events:,}", _seconds(seconds), f"{seconds / events * 1e6:.2f}",
                 _ratio(seconds, times["now"]["v1"]), f"{memory:.0f} MiB", _verdict(verdicts["now"][name])]
        rows.append("| " + " | ".join(cells) + " |")
        _progress(rows[-1])
    return rows


def generate_case(case: str, size: str) -> tuple[Path, Path, int]:
    """The trace and contract of a stress case at `size` (violations, tools or approval ids), and its events."""
    OUT.mkdir(exist_ok=True)
    trace, contract = OUT / f"trace-{size}-{case}.jsonl", OUT / f"contract-{size}-{case}.json"
    count = events_of(size)
    if case == "new-tool":
        args = [str(HERE / "gen_trace.py"), "--events", str(count), "--unique-tools"]
        events = count
    else:
        args = [str(HERE / "gen_cases.py"), case, "--count", str(count)]
        events = 3 * (count * 2 // 3) if case == "references" else 2 * count   # (as gen_cases.py writes them)
    if not trace.exists() or not contract.exists():
        subprocess.run([sys.executable, *args, "--out", str(trace), "--contract", str(contract), "--seed", "7"],
                       check=True)
    return trace, contract, events


class Checkout:
    """A checkout of the project to measure: its package first on sys.path, run from bench/out/."""

    def __init__(self, label: str, root: Path) -> None:
        self.label = label
        self.root = root.resolve()
        if not (self.root / "agent_invariants" / "__init__.py").is_file():
            raise SystemExit(f"{self.root}: not a checkout of agent-invariants (no agent_invariants/__init__.py)")
        with open(self.root / "pyproject.toml", "rb") as handle:
            self.script = tomllib.load(handle)["project"]["scripts"]["agent-invariants"]
        # Byte code is written (start-up would otherwise compile every module on every run).
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.root), os.environ.get("PYTHONPATH")]))
        self.env = environment

    def command(self, args: list[str]) -> list[str]:
        """The console script `agent-invariants ARGS` as this checkout's pyproject.toml installs it."""
        module, function = self.script.split(":")
        return [sys.executable, "-c", f"import sys; sys.argv[0] = 'agent-invariants'; from {module} import "
                f"{function}; sys.exit({function}())", *args]

    def ensure(self, package: str) -> None:
        """Fail unless `package` (an agent_invariants/__init__.py) is this checkout's."""
        if not Path(package).resolve().is_relative_to(self.root):
            raise SystemExit(f"measuring {self.label} ({self.root}) imported {package} instead")

    def prepare(self) -> None:
        """Compile the package, and check that a command run here imports this checkout."""
        done = subprocess.run([sys.executable, "-m", "compileall", "-q", str(self.root / "agent_invariants")],
                              env=self.env, capture_output=True, text=True)
        if done.returncode:
            print(f"warning: compileall {self.root}: {done.stdout}{done.stderr}", file=sys.stderr)
        probe = subprocess.run([sys.executable, "-c", "import agent_invariants; print(agent_invariants.__file__)"],
                               cwd=OUT, env=self.env, check=True, capture_output=True, text=True)
        self.ensure(probe.stdout.strip())

    def describe(self) -> str:
        done = subprocess.run(["git", "-C", str(self.root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True)
        commit = f", commit {done.stdout.strip()}" if done.returncode == 0 else ""
        return f"{self.label}: {self.root}{commit} (console script {self.script})"


class Worker:
    """A `worker.py serve` process importing one checkout's package, started anew for each rep
    (`restart`): the same check's median moves by up to 4% from one process to the next, so one
    process per checkout would tilt all its reps alike."""

    def __init__(self, checkout: Checkout) -> None:
        self.checkout = checkout
        self._start()

    def _start(self) -> None:
        self.process = subprocess.Popen([sys.executable, str(HERE / "worker.py"), "serve"], cwd=OUT,
                                        env=self.checkout.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        self.checkout.ensure(self._read()["package"])

    def restart(self) -> None:
        self.close()
        self._start()

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the worker measuring {self.checkout.label} ended (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        self.checkout.ensure(answer["package"])
        return answer

    def ask(self, jobs: list[dict[str, str]]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jobs": jobs}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def job(name: str, op: str, trace: Path, contract: Path) -> dict[str, str]:
    return {"name": name, "op": op, "trace": str(trace), "contract": str(contract)}


def sample(workers: list[Worker], jobs: list[dict[str, str]], reps: int) -> tuple[dict[str, dict[str, float]],
                                                                                   dict[str, dict[str, Any]]]:
    """Median seconds of each job per checkout, the checkouts taking turns rep by rep; and the verdicts."""
    samples: dict[str, dict[str, list[float]]] = {w.checkout.label: {j["name"]: [] for j in jobs} for w in workers}
    verdicts: dict[str, dict[str, Any]] = {}
    for rep in range(reps):
        for worker in workers:
            if rep:
                worker.restart()
            answer = worker.ask(jobs)
            for name, seconds in answer["times"].items():
                samples[worker.checkout.label][name].append(seconds)
            verdicts[worker.checkout.label] = answer["verdicts"]
    medians = {label: {name: statistics.median(values) for name, values in by_name.items()}
               for label, by_name in samples.items()}
    return medians, verdicts


def rss(checkout: Checkout, what: str, trace: Path, contract: Path) -> tuple[float, Any]:
    """Peak RSS in MiB of one `what` (check or compare) in a fresh process, and its verdict."""
    done = subprocess.run([sys.executable, str(HERE / "worker.py"), "rss", what, str(trace), str(contract)],
                          cwd=OUT, env=checkout.env, check=True, capture_output=True, text=True)
    answer = json.loads(done.stdout)
    checkout.ensure(answer["package"])
    return answer["rss_mib"], answer["verdict"]


def _seconds(value: float) -> str:
    """Seconds with three significant digits at most, so small traces do not show 0.00 s."""
    return f"{value:.2f} s" if value >= 1 else f"{value:.3g} s"


def _ratio(now: float, before: float) -> str:
    return f"{now / before:.2f}" if before else ""


def _verdict(verdict: dict[str, Any] | None) -> str:
    if verdict is None:
        return ""
    if verdict["passed"]:
        return "pass"
    failing = ", ".join(f"{rule} {count:,}" for rule, count in verdict["failing"].items())
    return f"fail: {verdict['violations']:,} violations ({failing})"


def measure(sizes: list[str], reps: int, workers: list[Worker], compare: bool, notes: list[str]) -> list[str]:
    side_by_side = len(workers) > 1
    head = ["events", "size"] + (["checkout"] if side_by_side else []) + [
        "decode floor", "check", "check / floor", "events/s", "MB/s"]
    if compare:
        head += ["compare", "compare / check", "compare, one process"]
    head += ["peak RSS check"] + (["peak RSS compare"] if compare else [])
    rule = "|".join("---" if name == "checkout" else "---:" for name in head)
    rows = ["| " + " | ".join(head) + " |", f"|{rule}|"]
    _progress("\n".join(rows))
    for size in sizes:
        trace, contract = generate(size)
        megabytes = trace.stat().st_size / 1e6
        count = events_of(size)
        jobs = [job("floor", "floor", trace, contract), job("check", "check", trace, contract)]
        if compare:
            jobs += [job("compare", "compare", trace, contract),
                     job("compare_one_process", "compare1", trace, contract)]
        times, verdicts = sample(workers, jobs, reps)
        memory: dict[str, dict[str, float]] = {}
        for worker in workers:
            label = worker.checkout.label
            memory[label] = {"check": rss(worker.checkout, "check", trace, contract)[0]}
            if compare:
                memory[label]["compare"] = rss(worker.checkout, "compare", trace, contract)[0]
        for worker in reversed(workers):   # before, then now
            label = worker.checkout.label
            t, m = times[label], memory[label]
            cells = [f"{count:,}", f"{megabytes:,.0f} MB"] + ([label] if side_by_side else []) + [
                _seconds(t["floor"]), _seconds(t["check"]), f"{t['check'] / t['floor']:.2f}x",
                f"{count / t['check']:,.0f}", f"{megabytes / t['check']:.0f}"]
            if compare:
                cells += [_seconds(t["compare"]), f"{t['compare'] / t['check']:.2f}x",
                          f"{_seconds(t['compare_one_process'])} ({t['compare_one_process'] / t['check']:.2f}x)"]
            cells += [f"{m['check']:.0f} MiB"] + ([f"{m['compare']:.0f} MiB"] if compare else [])
            rows.append("| " + " | ".join(cells) + " |")
            _progress(rows[-1])
        if side_by_side:
            now, before = times["now"], times["before"]
            cells = ["", "", "now ÷ before", _ratio(now["floor"], before["floor"]),
                     _ratio(now["check"], before["check"]), "", "", ""]
            if compare:
                cells += [_ratio(now["compare"], before["compare"]), "",
                          _ratio(now["compare_one_process"], before["compare_one_process"])]
            cells += [_ratio(memory["now"]["check"], memory["before"]["check"])]
            if compare:
                cells += [_ratio(memory["now"]["compare"], memory["before"]["compare"])]
            rows.append("| " + " | ".join(cells) + " |")
            _progress(rows[-1])
            if verdicts["now"] != verdicts["before"]:
                notes.append(f"plain {size}: the verdicts differ: before {verdicts['before']}, now {verdicts['now']}")
    return rows


def stress(cases: list[str], size: str, reps: int, workers: list[Worker], notes: list[str]) -> list[str]:
    """Each case's check time per event against the plain trace of `size`, measured in the same process."""
    side_by_side = len(workers) > 1
    plain_trace, plain_contract = generate(size)
    files = {"plain": (plain_trace, plain_contract, events_of(size))}
    files |= {case: generate_case(case, size) for case in cases}
    jobs = [job(name, "check", trace, contract) for name, (trace, contract, _) in files.items()]
    times, verdicts = sample(workers, jobs, reps)
    head = ["case", "events"] + (["checkout"] if side_by_side else []) + [
        "check", "µs per event", "per event, case / plain", "peak RSS check", "verdict"]
    rows = ["| " + " | ".join(head) + " |",
            "|---|---:|" + ("---|" if side_by_side else "") + "---:|---:|---:|---:|---|"]
    _progress("\n".join(rows))
    for name, (trace, contract, events) in files.items():
        per_event: dict[str, float] = {}
        memory: dict[str, float] = {}
        for worker in workers:
            memory[worker.checkout.label], _ = rss(worker.checkout, "check", trace, contract)
        for worker in reversed(workers):   # before, then now
            label = worker.checkout.label
            per_event[label] = times[label][name] / events
            plain = times[label]["plain"] / files["plain"][2]
            cells = [name if name != "plain" else "plain (reference)", f"{events:,}"] + (
                [label] if side_by_side else []) + [
                _seconds(times[label][name]), f"{per_event[label] * 1e6:.2f}", f"{per_event[label] / plain:.2f}x",
                f"{memory[label]:.0f} MiB", _verdict(verdicts[label][name])]
            rows.append("| " + " | ".join(cells) + " |")
            _progress(rows[-1])
        if side_by_side:
            rows.append("| " + " | ".join(["", "", "now ÷ before", _ratio(times["now"][name], times["before"][name]),
                                             _ratio(per_event["now"], per_event["before"]), "",
                                             _ratio(memory["now"], memory["before"]), ""]) + " |")
            _progress(rows[-1])
            if verdicts["now"][name] != verdicts["before"][name]:
                notes.append(f"{name}: the verdicts differ: before {verdicts['before'][name]}, "
                             f"now {verdicts['now'][name]}")
    return rows


def cli_medians(runs: list[tuple[str, list[str], dict[str, str], set[int]]], reps: int) -> dict[str, float]:
    """Median wall time of each command (key, argv, environment, expected exit codes), taking turns run by run.

    Run from bench/out/, so that the current directory (first on sys.path for `-c`) holds no package.
    An unexpected exit code ends the benchmark: the measurement would be of something else.
    """
    samples: dict[str, list[float]] = {key: [] for key, *_ in runs}
    for _ in range(reps):
        for key, argv, environment, expected in runs:
            start = time.perf_counter()
            code = subprocess.run(argv, cwd=OUT, env=environment, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode
            samples[key].append(time.perf_counter() - start)
            if code not in expected:
                raise SystemExit(f"{key}: exit {code}, expected {sorted(expected)}: {shlex.join(argv)}")
    return {key: statistics.median(values) for key, values in samples.items()}


def startup(checkouts: list[Checkout], runs: int) -> list[str]:
    """The real command's start-up: --version, and check of a 3-event trace with the sample contract."""
    trace = OUT / "startup-3-events.jsonl"
    trace.write_text('{"seq": 1, "type": "tool.call", "tool": "kb.search", "call_id": "c1"}\n'
                     '{"seq": 2, "type": "tool.result", "tool": "kb.search", "call_id": "c1", "ok": true}\n'
                     '{"seq": 3, "type": "run.completed"}\n')
    contract = HERE.parent / "agent_invariants" / "samples" / "agent-invariants.json"
    commands = {"version": (["--version"], {0}),
                "check": (["check", "--contract", str(contract), "--trace", str(trace)], {0, 1})}
    plain_env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    runs_: list[tuple[str, list[str], dict[str, str], set[int]]] = [
        ("pass", [sys.executable, "-c", "pass"], plain_env, {0})]
    for name, (args, expected) in commands.items():
        runs_ += [(f"{name} {c.label}", c.command(args), c.env, expected) for c in checkouts]
    medians = cli_medians(runs_, runs)
    reference = medians["pass"]
    rows = [f"`python -c pass`, the machine's reference: {reference * 1000:.1f} ms (median of {runs} runs).", "",
            f"| start-up, median of {runs} | checkout | wall time | above `python -c pass` |", "|---|---|---:|---:|"]
    titles = {"version": "`agent-invariants --version`",
              "check": "`agent-invariants check` (3 events, the sample contract)"}
    for name in commands:
        for number, c in enumerate(reversed(checkouts)):   # before, then now
            seconds = medians[f"{name} {c.label}"]
            rows.append(f"| {titles[name] if number == 0 else ''} | {c.label} | {seconds * 1000:.1f} ms | "
                        f"{(seconds - reference) * 1000:+.1f} ms |")
        if len(checkouts) > 1:
            now, before = medians[f"{name} now"], medians[f"{name} before"]
            rows.append(f"| | now ÷ before | {_ratio(now, before)} | {_ratio(now - reference, before - reference)} |")
    _progress("\n".join(rows))
    return rows


def imports(size: str, reps: int) -> list[str]:
    """`convert --from otel` of SIZE spans (traces of 500) against `summary` of the plain trace of
    SIZE events, and the floor under convert: msgspec decoding the spans' JSON and dropping it. The
    time of each (median) and its peak RSS (the largest of the runs)."""
    spans = OUT / f"spans-{size}.otlp.jsonl"
    if not spans.exists():
        subprocess.run([sys.executable, str(HERE / "gen_spans.py"), "--spans", str(events_of(size)),
                        "--out", str(spans)], check=True)
    native, _ = generate(size)
    folder = OUT / "converted"
    now = Checkout("now", HERE.parent)
    commands = {"summary": now.command(["summary", "--trace", str(native)]),
                "convert": now.command(["convert", "--from", "otel", str(spans), "--out-dir", str(folder)]),
                "decode": [sys.executable, "-c", _DECODE_ONLY, str(spans)]}
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    peak: dict[str, int] = dict.fromkeys(commands, 0)
    for _ in range(reps):
        for name, args in commands.items():
            shutil.rmtree(folder, ignore_errors=True)
            start = time.perf_counter()
            process = subprocess.Popen(args, cwd=OUT, env=now.env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)
            seconds[name].append(time.perf_counter() - start)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"{name}: exit {os.waitstatus_to_exitcode(status)}: {shlex.join(args)}")
            peak[name] = max(peak[name], usage.ru_maxrss)
    shutil.rmtree(folder, ignore_errors=True)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    rows = [f"| {size} | wall time, median of {reps} | ÷ reading | peak RSS |", "|---|---:|---:|---:|",
            f"| `summary` of {events_of(size):,} native events | {_seconds(median['summary'])} | 1.00 | "
            f"{peak['summary'] / 1024:.0f} MiB |",
            f"| `convert --from otel` of {events_of(size):,} spans ({events_of(size) // 500:,} traces) | "
            f"{_seconds(median['convert'])} | {median['convert'] / median['summary']:.1f} | "
            f"{peak['convert'] / 1024:.0f} MiB |",
            f"| decoding the same spans' JSON alone (msgspec, nothing kept) | {_seconds(median['decode'])} | "
            f"{median['decode'] / median['summary']:.1f} | {peak['decode'] / 1024:.0f} MiB |"]
    _progress("\n".join(rows))
    return rows


_DECODE_ONLY = """\
import sys, msgspec
decode = msgspec.json.Decoder().decode
with open(sys.argv[1], "rb") as spans:
    for line in spans:
        decode(line)
"""
"""The import case's floor: what parsing the OTLP file's JSON costs, before any mapping."""


def quality(reps: int) -> list[str]:
    """The contract-quality commands, whole (start-up included): `lint` of 10,000 rules, and
    `mutate` of a 1,000-event trace (500 mutants) with --jobs 1 and --jobs 2."""
    lint_contract, trace, contract = OUT / "lint-10k.json", OUT / "mutate-1k.jsonl", OUT / "mutate-1k.json"
    if not (lint_contract.exists() and trace.exists() and contract.exists()):
        subprocess.run([sys.executable, str(HERE / "gen_quality.py"), "--out-dir", str(OUT)], check=True)
    now = Checkout("now", HERE.parent)
    mutate = ["mutate", "--contract", str(contract), "--trace", str(trace)]
    runs: list[tuple[str, list[str], dict[str, str], set[int]]] = [
        ("lint", now.command(["lint", "--contract", str(lint_contract)]), now.env, {0, 1}),
        ("mutate 1", now.command([*mutate, "--jobs", "1"]), now.env, {0}),
        ("mutate 2", now.command([*mutate, "--jobs", "2"]), now.env, {0})]
    medians = cli_medians(runs, reps)
    rows = [f"| contract quality, median of {reps} | wall time |", "|---|---:|",
            f"| `lint` of 10,000 rules (9 kinds on 1,111 tools) | {_seconds(medians['lint'])} |",
            f"| `mutate` of 1,000 events, 500 mutants, `--jobs 1` | {_seconds(medians['mutate 1'])} |",
            f"| `mutate` of 1,000 events, 500 mutants, `--jobs 2` | {_seconds(medians['mutate 2'])} |"]
    _progress("\n".join(rows))
    return rows


def html(size: str, reps: int) -> list[str]:
    """`check --format html` against `--format json` of the plain trace and of the violations case
    at SIZE: wall time (median), the page's size, and the time headless Chromium takes to load it
    from disk (median), where Chromium and Playwright are installed."""
    now = Checkout("now", HERE.parent)
    plain, plain_contract = generate(size)
    broken, broken_contract, broken_events = generate_case("violations", size)
    cases = {f"{events_of(size):,} events, passing": (plain, plain_contract),
             f"{broken_events:,} events, {events_of(size):,} violations": (broken, broken_contract)}
    rows = [f"| `check`, median of {reps} | `--format json` | `--format html` | page | loads in Chromium |",
            "|---|---:|---:|---:|---:|"]
    for label, (trace, contract) in cases.items():
        page = OUT / "page.html"
        args = ["check", "--contract", str(contract), "--trace", str(trace)]
        medians = cli_medians([("json", now.command([*args, "--format", "json"]), now.env, {0, 1}),
                               ("html", now.command([*args, "--format", "html", "--output", str(page)]), now.env,
                                {0, 1})], reps)
        rows.append(f"| {label} | {_seconds(medians['json'])} | {_seconds(medians['html'])} | "
                    f"{page.stat().st_size / 1e6:.2f} MB | {_page_load(page, reps)} |")
    _progress("\n".join(rows))
    return rows


def _page_load(page: Path, reps: int) -> str:
    """Median time from navigation to the load event, in headless Chromium, or why it was not measured."""
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "no Playwright"
    if chromium is None:
        return "no Chromium"
    flags = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    seconds = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=flags)
        for _ in range(reps):
            context = browser.new_context(offline=True)
            start = time.perf_counter()
            context.new_page().goto(page.as_uri())
            seconds.append(time.perf_counter() - start)
            context.close()
        browser.close()
    return _seconds(statistics.median(seconds))


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


def versus_node(checkouts: list[Checkout], reps: int) -> list[str]:
    side_by_side = len(checkouts) > 1
    shown = checkouts[::-1]   # before, then now
    columns = [f"agent-invariants {c.label}" if side_by_side else "agent-invariants (end to end)" for c in shown]
    rows = ["| trace | Node tool | " + " | ".join(columns) + " | speed-up |", "|---|---:|" + "---:|" * len(columns)
            + "---:|"]
    for label, size, compact in (("10k", "10k", False), ("100k", "100k", False), ("1m-compact", "1m", True)):
        trace, contract = generate(size, compact)
        args = ["check", "--contract", str(contract), "--trace", str(trace), "--format", "json", "--quiet"]
        medians = cli_medians([(c.label, c.command(args), c.env, {0, 1}) for c in checkouts], reps)
        node = NODE_SECONDS[label]
        cells = " | ".join(f"{medians[c.label]:.2f} s" for c in shown)
        rows.append(f"| {label} | {node:.2f} s | {cells} | {node / medians['now']:.0f}x |")
        _progress(rows[-1])
    return rows


def jobs_test(checkouts: list[Checkout], reps: int) -> list[str]:
    trace, contract = generate("100k")
    folder = OUT / "twenty-100k"
    if not folder.exists():
        folder.mkdir()
        for number in range(20):
            shutil.copy(trace, folder / f"run-{number:02d}.jsonl")
    side_by_side = len(checkouts) > 1
    rows = ["| 20 traces of 100k events | " + ("checkout | " if side_by_side else "") + "wall time | speed-up |",
            "|---|" + ("---|" if side_by_side else "") + "---:|---:|"]
    base = ["check", "--contract", str(contract), "--trace", str(folder), "--format", "json", "--quiet"]
    medians = cli_medians([(f"{jobs} {c.label}", c.command(base + ["--jobs", jobs]), c.env, {0, 1})
                           for jobs in ("1", "2") for c in checkouts], reps)
    for jobs in ("1", "2"):
        for c in reversed(checkouts):   # before, then now
            seconds = medians[f"{jobs} {c.label}"]
            title = f"`--jobs {jobs}`" if c is checkouts[-1] else ""
            rows.append(f"| {title} | " + (f"{c.label} | " if side_by_side else "") +
                        f"{seconds:.2f} s | {medians[f'1 {c.label}'] / seconds:.2f}x |")
    _progress("\n".join(rows[2:]))
    return rows


def _progress(text: str) -> None:
    """Rows as they are measured, on stderr: stdout gets the whole report once, at the end."""
    print(text, file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated, of {', '.join(CASES)} (default: all)")
    parser.add_argument("--sizes", default="10k,100k,1m", help="sizes of the plain table, e.g. 10k,1m,10m")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per measurement (median)")
    parser.add_argument("--no-compare", action="store_true", help="plain table: leave compare out")
    parser.add_argument("--against", metavar="PATH", type=Path,
                        help="another checkout of the project: every figure for it (before) and this one (now)")
    parser.add_argument("--node", action="store_true", help="also time the CLI end to end against the Node figures")
    parser.add_argument("--jobs-test", action="store_true", help="also time --jobs 1 against --jobs 2")
    # For testing the benchmark itself: the stress cases' size (default 1m) and start-up runs.
    parser.add_argument("--case-events", default="1m", help=argparse.SUPPRESS)
    parser.add_argument("--startup-runs", type=int, default=21,
                        help="the startup case: runs per figure, the median taken (default 21; --reps is not used)")
    args = parser.parse_args()
    cases = [ALIASES.get(name.strip().lower(), name.strip().lower()) for name in args.cases.split(",") if name.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    OUT.mkdir(exist_ok=True)
    checkouts = [Checkout("now", HERE.parent)] + ([Checkout("before", args.against)] if args.against else [])
    for checkout in checkouts:
        checkout.prepare()
    sections = [f"Measured on: {machine()}"] + ([c.describe() for c in checkouts] if args.against else []) + [""]
    notes: list[str] = []
    stress_cases = [case for case in STRESS if case in cases]
    workers: list[Worker] = []
    try:
        if "plain" in cases or stress_cases or "v2" in cases:
            workers = [Worker(c) for c in checkouts]
        if "plain" in cases:
            sizes = [size.strip().lower() for size in args.sizes.split(",") if size.strip()]
            sections += measure(sizes, args.reps, workers, not args.no_compare, notes) + [""]
        if stress_cases:
            sections += stress(stress_cases, args.case_events.strip().lower(), args.reps, workers, notes) + [""]
        if "v2" in cases:
            sections += versions(args.case_events.strip().lower(), args.reps, workers) + [""]
    finally:
        for worker in workers:
            worker.close()
    if "import" in cases:
        sections += imports(args.case_events.strip().lower(), args.reps) + [""]
    if "quality" in cases:
        sections += quality(args.reps) + [""]
    if "html" in cases:
        sections += html(args.case_events.strip().lower(), args.reps) + [""]
    if "startup" in cases:
        sections += startup(checkouts, args.startup_runs) + [""]
    if args.node:
        sections += versus_node(checkouts, args.reps) + [""]
    if args.jobs_test:
        sections += jobs_test(checkouts, args.reps) + [""]
    sections += [f"Note: {note}" for note in notes]
    print("\n" + "\n".join(sections).rstrip())


if __name__ == "__main__":
    main()
