"""`record --repeat N --out-dir D`: N runs of the agent, each checked, and whether their reports keep their shape.

The agent runs N times (1..1000), one after another, with the same fixtures and a fresh clock;
run i writes `D/run-<i>.jsonl` (every file is claimed before the first run). Each run is checked
as a single `record` run is; then `stability` compares the shapes of their final outputs, as the
rules saw them (raw: a redacted output may hide a change of shape). The report is one
`check-batch/v1` report holding every run's report and a `stability` member; the exit is the
worst: a behaviour failure (1, or `--safety-exit N`) outranks a harness or measurement one (2).
An interrupt ends the whole batch.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from msgspec import UNSET

from agent_invariants.contract_source import ContractSource, read_contract
from agent_invariants.errors import InputError
from agent_invariants.record import Recorded, RecordOptions, exit_code, record, refuse_file_of_run, refuse_report_at
from agent_invariants.record.writer import claim_file
from agent_invariants.report import CheckBatchReport

__all__ = ("MAX_REPEAT", "Repeated", "repeat", "repeat_exit_code")

MAX_REPEAT = 1000
"""The most runs `--repeat` makes."""


class Repeated(NamedTuple):
    """`--repeat`: every run's report, and the stability of their final outputs, as one batch report."""

    report: CheckBatchReport
    runs: list[Recorded]

    @property
    def output_lines(self) -> dict[int, tuple[int, int | None]]:
        """The line of each run's final output in its trace, by run (`Sources.outputs`: where
        SARIF results and GitHub annotations of an unstable path point)."""
        return {number: (run.output_line, None) for number, run in enumerate(self.runs) if run.output_line is not None}


def repeat(contract: str | os.PathLike[str] | ContractSource, command: Sequence[str], times: int, out_dir: str,
           options: RecordOptions | None = None, warn: Callable[[str], None] | None = None) -> Repeated:
    """Run the agent `times` times (same fixtures, a fresh clock each), each trace written to
    `out_dir/run-<i>.jsonl` and checked, then `stability` over their final outputs (spec v2 §10
    point 87). Every trace file is claimed before the first run starts, and so is a
    `--write-tool-snapshot`, which the first run writes (each run still compares its servers'
    tools with a `--tool-snapshot`)."""
    from agent_invariants.report import CHECK_BATCH_SCHEMA, ContractRef

    options = options or RecordOptions()
    if not 1 <= times <= MAX_REPEAT:
        raise InputError(f"--repeat must be 1..{MAX_REPEAT}, got {times}")
    if options.out is not None:
        raise InputError("--repeat writes its traces into --out-dir as run-<i>.jsonl; --out does not apply")
    source = contract if isinstance(contract, ContractSource) else read_contract(contract)
    outs = [os.path.join(out_dir, f"run-{number}.jsonl") for number in range(1, times + 1)]
    files: list[str | None] = [*outs, *(f"{out}.stderr.log" for out in outs)]
    refuse_report_at(options.report, files)   # before any run
    for out in outs:
        claim_file(out, options.force)
        claim_file(f"{out}.stderr.log", options.force)
    if options.write_tool_snapshot is not None:   # written by the first run, claimed for all of them
        refuse_file_of_run("--write-tool-snapshot", options.write_tool_snapshot, files, "the snapshot")
        claim_file(options.write_tool_snapshot, options.force)
    runs: list[Recorded] = []
    for number, out in enumerate(outs):
        once = options._replace(out=out) if not number else options._replace(out=out, write_tool_snapshot=None)
        runs.append(record(source, command, once, warn, fixture_warnings=number == 0))
        if runs[-1].report.record is not UNSET and runs[-1].report.record.ended_by == "interrupted":
            break   # an interrupt ends the whole batch, not one run
    outs = outs[:len(runs)]
    reports = [run.report for run in runs]
    loaded = runs[0].loaded
    report = CheckBatchReport(
        schema=CHECK_BATCH_SCHEMA, contract=ContractRef(name=loaded.name, version=loaded.version),
        passed=all(one.passed for one in reports), traces=len(runs),
        error_count=sum(one.error_count for one in reports), warning_count=sum(one.warning_count for one in reports),
        reports=reports, failures=[], stability=_stability([run.output for run in runs], outs))
    return Repeated(report, runs)


def _stability(outputs: list[tuple[Any, bytes | None]], traces: list[str]) -> Any:
    """Stability over the runs' raw final outputs (a redacted one may hide a change of shape)."""
    from agent_invariants.stability import measure, output_sha256

    return measure([output for output, _ in outputs], traces,
                   hashes=[None if raw is None else output_sha256(output, raw) for output, raw in outputs])


def repeat_exit_code(repeated: Repeated, safety_exit: int = 1) -> int:
    """The worst of the runs' exits and of stability's (1 unstable, 2 not measured): a behaviour
    failure (1, or `safety_exit`) outranks a harness or measurement one (2)."""
    codes = [exit_code(run, safety_exit) for run in repeated.runs]
    stability: Any = repeated.report.stability
    codes.append(2 if not stability.measured else 0 if stability.stable else 1)
    behaviour = [code for code in codes if code not in (0, 2)]
    if behaviour:
        return safety_exit if safety_exit in behaviour else 1
    return 2 if 2 in codes else 0
