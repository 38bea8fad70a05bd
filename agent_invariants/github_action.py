"""The run step of the GitHub Action (`action.yml`): check or compare, and report the way GitHub shows it.

    INPUT_CONTRACT=agent-invariants.json INPUT_TRACES="runs/" python -m agent_invariants.github_action

The action's inputs arrive as environment variables (`INPUT_CONTRACT`, `INPUT_TRACES`,
`INPUT_BASELINE`, `INPUT_FORMAT`, `INPUT_FAIL_ON`). The command runs once per output, each with
the same inputs: the report in `format` for the log, the Markdown summary appended to
`$GITHUB_STEP_SUMMARY`, workflow annotations (`--format github`) on the changed lines, a SARIF
file in `$RUNNER_TEMP` for code scanning, the HTML page there too (uploaded as an artifact, for a
reviewer to see the run), and the JSON report that decides the verdict:

- `fail-on: error` (default): fail when an error-severity rule breaks (or the candidate regresses);
- `fail-on: warning`: also when any warning-severity rule breaks (in the candidate, for compare);
- `fail-on: never`: report only.

Bad input (a contract that does not validate, a missing trace) always fails, with the command's
one-line message. `$GITHUB_OUTPUT` gets `sarif` (the SARIF file), `html` (the page), `exit-code` (the command's:
0, 1 or 2) and `verdict` (`pass` or `fail`); the step's own exit is 1 for `fail`, 2 for bad input.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ("FAIL_ON", "FORMATS", "main", "warnings_in")

FAIL_ON = ("error", "warning", "never")
FORMATS = ("text", "pretty", "json", "markdown", "junit", "sarif", "github")
"""What `format` may name: the report printed in the log (the HTML page is always an artifact)."""


def main(environ: dict[str, str] | None = None) -> int:
    env = dict(os.environ if environ is None else environ)
    contract = env.get("INPUT_CONTRACT", "").strip() or "agent-invariants.json"
    traces = shlex.split(env.get("INPUT_TRACES", ""))
    baseline = env.get("INPUT_BASELINE", "").strip()
    shown = env.get("INPUT_FORMAT", "").strip() or "text"
    fail_on = env.get("INPUT_FAIL_ON", "").strip() or "error"
    if not traces:
        return _bad("the traces input is empty: name trace files, folders or globs")
    if fail_on not in FAIL_ON:
        return _bad(f"fail-on: {fail_on!r} is none of {', '.join(FAIL_ON)}")
    if shown not in FORMATS:
        return _bad(f"format: {shown!r} is none of {', '.join(FORMATS)}")
    if baseline and len(traces) != 1:
        return _bad("with a baseline, traces names one candidate (a file or a folder)")
    command = ["compare", "--contract", contract, "--baseline", baseline, "--candidate", traces[0]] if baseline \
        else ["check", "--contract", contract, *[arg for trace in traces for arg in ("--trace", trace)]]

    verdict = _run([*command, "--format", "json"], env)
    if verdict.returncode == 2:
        sys.stderr.write(verdict.stderr)
        _outputs(env, {"exit-code": "2", "verdict": "fail", "sarif": "", "html": ""})
        return 2
    sys.stdout.write(_run([*command, "--format", shown], env).stdout)
    if shown != "github":   # the report in the log is the annotations already
        sys.stdout.write(_run([*command, "--format", "github"], env).stdout)
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(_run([*command, "--format", "markdown"], env).stdout)
    folder = Path(env.get("RUNNER_TEMP") or ".")
    sarif, page = folder / "agent-invariants.sarif", folder / "agent-invariants.html"
    _run([*command, "--format", "sarif", "--category", "agent-invariants", "--output", str(sarif)], env)
    _run([*command, "--format", "html", "--output", str(page)], env)
    failing = _failing(verdict.returncode, json.loads(verdict.stdout), fail_on)
    _outputs(env, {"exit-code": str(verdict.returncode), "verdict": "fail" if failing else "pass",
                   "sarif": str(sarif), "html": str(page)})
    return 1 if failing else 0


def warnings_in(report: dict[str, Any]) -> int:
    """Warnings of a JSON report: of the candidate for a compare, of every trace of a batch."""
    if "candidate" in report:
        return int(report["candidate"]["warning_count"])
    if str(report.get("schema", "")).startswith("agent-invariants/compare-batch/"):
        return sum(warnings_in(section) for section in report.get("reports", []))
    return int(report.get("warning_count", 0))


def _failing(code: int, report: dict[str, Any], fail_on: str) -> bool:
    if fail_on == "never":
        return False
    return code != 0 or (fail_on == "warning" and warnings_in(report) > 0)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_invariants", *args], env={**env, "NO_COLOR": "1"},
                          capture_output=True, text=True, encoding="utf-8", errors="replace", check=False)


def _outputs(env: dict[str, str], values: dict[str, str]) -> None:
    path = env.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(f"{name}={value}\n" for name, value in values.items())


def _bad(message: str) -> int:
    sys.stderr.write(f"agent-invariants: {message}\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
