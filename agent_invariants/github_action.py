"""The run step of the GitHub Action (`action.yml`): check or compare, and report the way GitHub shows it.

    INPUT_CONTRACT=agent-invariants.json INPUT_TRACES="runs/" python -m agent_invariants.github_action

The action's inputs arrive as environment variables (`INPUT_CONTRACT`, `INPUT_TRACES`,
`INPUT_BASELINE`, `INPUT_FORMAT`, `INPUT_FAIL_ON`, `INPUT_CATEGORY`, `INPUT_SARIF_ANCHOR`;
`traces` and `baseline` are split as a shell splits words, so a path with a space is quoted:
`"runs/my run.jsonl"`).
The command runs once per output, each with
the same inputs: the report in `format` for the log, the Markdown summary appended to
`$GITHUB_STEP_SUMMARY`, workflow annotations (`--format github`) on the changed lines, a SARIF
file in `$RUNNER_TEMP` for code scanning, the HTML page there too (uploaded as an artifact, for a
reviewer to see the run; `agent-invariants.sarif` and `.html`, or `agent-invariants-2.sarif` and so
on when an earlier use of the action in the job wrote those), and the JSON report that decides the
verdict:

- `fail-on: error` (default): fail when an error-severity rule breaks (or the candidate regresses);
- `fail-on: warning`: also when any warning-severity rule breaks (in the candidate, for compare);
- `fail-on: never`: report only.

Bad input (a contract that does not validate, a missing trace, standard input, which a command run
once per output cannot read again, a `RUNNER_TEMP` that takes no file) always fails, with a one-line
message in the log, as an annotation and in the step's summary; so does a step that fails on
warnings alone (`fail-on: warning`), whose reports all say it passed. What the check says on stderr
of the traces (a misspelt event type, an empty trace) is shown in the log. `$GITHUB_OUTPUT` gets
`sarif` (the SARIF file), `html` (the page), `exit-code` (the command's: 0, 1 or 2) and `verdict`
(`pass` or `fail`), in one write; `sarif` and `html` are empty when the files were not written. The
step's own exit is 1 for `fail`, 2 for bad input. A batch with a trace that could not be read is
reported all the same, every output holding the others (as the command does), and fails the step
with exit 2.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ("ANCHORS", "FAIL_ON", "FORMATS", "main", "warnings_in")

FAIL_ON = ("error", "warning", "never")
ANCHORS = ("trace", "contract")
"""What `sarif-anchor` may name: where SARIF locates results (`--sarif-anchor`)."""
FORMATS = ("text", "pretty", "json", "markdown", "junit", "sarif", "github")
"""What `format` may name: the report printed in the log (the HTML page is always an artifact)."""


def main(environ: dict[str, str] | None = None) -> int:
    env = dict(os.environ if environ is None else environ)
    contract = env.get("INPUT_CONTRACT", "").strip()   # none: the command's own default (json, yaml, yml)
    try:
        traces = shlex.split(env.get("INPUT_TRACES", ""))
    except ValueError as exc:   # an unbalanced quote: `o'brien.jsonl`
        return _failed(env, f"traces: {exc} (the input is split as a shell splits words: quote a path holding a "
                            "quote or a space, \"runs/o'brien.jsonl\", and write paths with /)")
    try:
        baselines = shlex.split(env.get("INPUT_BASELINE", ""))
    except ValueError as exc:
        return _failed(env, f"baseline: {exc} (the input is split as a shell splits words, as traces is)")
    if len(baselines) > 1:
        return _failed(env, "baseline names one run (a file or a folder); quote a path with a space, "
                            "\"runs/my run.jsonl\"")
    baseline = baselines[0] if baselines else ""
    shown = env.get("INPUT_FORMAT", "").strip() or "text"
    fail_on = env.get("INPUT_FAIL_ON", "").strip() or "error"
    category = env.get("INPUT_CATEGORY", "").strip() or "agent-invariants"
    anchor = env.get("INPUT_SARIF_ANCHOR", "").strip() or "trace"
    longest = env.get("INPUT_MAX_LINE_BYTES", "").strip()
    no_lint = env.get("INPUT_NO_LINT", "").strip() or "false"
    if not traces:
        return _failed(env, "the traces input is empty: name trace files, folders or globs")
    if fail_on not in FAIL_ON:
        return _failed(env, f"fail-on: {fail_on!r} is none of {', '.join(FAIL_ON)}")
    if shown not in FORMATS:
        return _failed(env, f"format: {shown!r} is none of {', '.join(FORMATS)}")
    if anchor not in ANCHORS:
        return _failed(env, f"sarif-anchor: {anchor!r} is none of {', '.join(ANCHORS)}")
    from agent_invariants.cli_options import category_problem

    problem = category_problem(category)
    if problem is not None:
        return _failed(env, f"category: {problem}")
    if longest and not (longest.isascii() and longest.isdigit()):
        return _failed(env, f"max-line-bytes: {longest!r} is no number of bytes")
    if no_lint not in ("true", "false"):
        return _failed(env, f"no-lint: {no_lint!r} is neither true nor false")
    if baseline and len(traces) != 1:
        return _failed(env, "with a baseline, traces names one candidate (a file or a folder)")
    if "-" in (contract, baseline, *traces):
        return _failed(env, "standard input (-) cannot be an input of the action, which runs the command once per "
                         "output: name a file")
    given = (["--contract", contract] if contract else []) + (["--max-line-bytes", longest] if longest else []) + (
        ["--no-lint"] if no_lint == "true" else [])
    command = ["compare", *given, "--baseline", baseline, "--candidate", traces[0]] if baseline \
        else ["check", *given, *[arg for trace in traces for arg in ("--trace", trace)]]

    verdict = _run([*command, "--format", "json"], env)
    sys.stderr.write(verdict.stderr)   # bad input, or the notices of a trace (a misspelt type, an empty trace)
    report = _report(verdict)
    if report is None:   # bad input: nothing was checked
        return _failed(env, said=verdict.stderr)
    # (exit 2 with a report: a batch with a trace that could not be read; the others are reported
    # in every output all the same, and the step fails)
    try:
        sys.stdout.write(_run([*command, "--format", shown], env).stdout)
        if shown != "github":   # the report in the log is the annotations already
            sys.stdout.write(_run([*command, "--format", "github"], env).stdout)
    except OSError as exc:
        return _failed(env, f"cannot write the report: {exc.strerror or exc}")
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            _append(summary, _run([*command, "--format", "markdown"], env).stdout)
        except OSError as exc:
            return _failed(env, f"GITHUB_STEP_SUMMARY {summary}: cannot write: {exc.strerror or exc}")
    sarif, page = _report_files(Path(env.get("RUNNER_TEMP") or "."))
    files = (["--format", "sarif", "--category", category, "--sarif-anchor", anchor, "--output", str(sarif)],
             ["--format", "html", "--output", str(page)])
    for path, options in zip((sarif, page), files, strict=True):
        with contextlib.suppress(OSError):   # (so that the file there after the run is its own; what cannot be
            path.unlink(missing_ok=True)    # removed, the command cannot replace either, and says so)
        written = _run([*command, *options], env)
        if written.returncode == 2 and not path.is_file():   # (the check ran above: the file could not be written)
            sys.stderr.write(written.stderr)
            return _failed(env, said=written.stderr)
    failing = verdict.returncode == 2 or _failing(verdict.returncode, report, fail_on)
    if failing and verdict.returncode == 0:   # every report says it passed: say why the step fails
        count = warnings_in(report)
        said = f"{count} warning{'' if count == 1 else 's'}, and fail-on is warning: the step fails"
        _say(env, said, f"## ❌ agent-invariants: {said}")
    problem = _outputs(env, {"exit-code": str(verdict.returncode), "verdict": "fail" if failing else "pass",
                             "sarif": str(sarif), "html": str(page)})
    if problem:
        sys.stderr.write(f"agent-invariants: {problem}\n")
        return 2
    return 2 if verdict.returncode == 2 else 1 if failing else 0


def _report_files(folder: Path) -> tuple[Path, Path]:
    """The SARIF file and the HTML page of this use of the action: `agent-invariants.sarif` and
    `.html` in `folder`, or, when an earlier use in the job wrote those (a check beside a compare),
    `agent-invariants-2.sarif` and so on, so that each use's outputs still name its own reports."""
    for number in range(1, _MAX_USES + 1):
        stem = "agent-invariants" if number == 1 else f"agent-invariants-{number}"
        sarif, page = folder / f"{stem}.sarif", folder / f"{stem}.html"
        if not (os.path.lexists(sarif) or os.path.lexists(page)):
            break
    return sarif, page


_MAX_USES = 1000
"""Uses of the action in one job that get report files of their own (the last one's are reused)."""


def _report(verdict: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
    """The JSON report the command printed (also with exit 2, when a trace of a batch could not be
    read), or None when it printed none, or a batch none of whose traces could be read: bad input,
    nothing was checked (its SARIF, without a result, would close the category's open alerts)."""
    if verdict.returncode == 2 and not verdict.stdout.strip():
        return None
    try:
        found = json.loads(verdict.stdout)
    except ValueError:
        return None
    if not isinstance(found, dict) or (verdict.returncode == 2 and found.get("reports") == []):
        return None
    return found


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


def _outputs(env: dict[str, str], values: dict[str, str]) -> str | None:
    """Append the step's outputs to `$GITHUB_OUTPUT` in one write; the problem, if it cannot be
    written (the outputs then stay as they were, or end in a cut line a later step refuses)."""
    path = env.get("GITHUB_OUTPUT")
    if path:
        try:
            _append(path, "".join(f"{name}={value}\n" for name, value in values.items()))
        except OSError as exc:
            return f"GITHUB_OUTPUT {path}: cannot write: {exc.strerror or exc}"
    return None


def _append(path: str, text: str) -> None:
    """Append `text` to the file at `path` in one write (OSError when it cannot take all of it)."""
    data = text.encode("utf-8")
    handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        if os.write(handle, data) != len(data):
            raise OSError(f"only part of {len(data)} bytes was written")
    finally:
        os.close(handle)


def _failed(env: dict[str, str], message: str | None = None, said: str = "") -> int:
    """Bad input: exit 2, and outputs that say so; `message` in the log, or what the command
    `said` on stderr (in the log already), as an annotation and in the step's summary too (an
    empty summary page and a red step explain nothing)."""
    if message:
        _say(env, message, _bad_input(message, first=True))
    else:
        problems = [line.removeprefix("agent-invariants: ") for line in said.splitlines()
                    if line.startswith("agent-invariants: ") and not line.startswith("agent-invariants: warning:")]
        for at, line in enumerate(problems[:_MOST_SAID]):
            _say(env, line, _bad_input(line, first=at == 0), logged=True, at=_place(line))
    problem = _outputs(env, {"exit-code": "2", "verdict": "fail", "sarif": "", "html": ""})
    if problem:
        sys.stderr.write(f"agent-invariants: {problem}\n")
    return 2


_MOST_SAID = 10
"""The most lines of the command's stderr that become annotations and summary lines."""


def _say(env: dict[str, str], message: str, shown: str, *, logged: bool = False,
         at: tuple[str, int | None] | None = None) -> None:
    """Why the step fails, where a reader looks: the log (unless `logged` already), an
    annotation (on the file and line `at`, if any), and `shown` (Markdown) in the step's summary,
    after a blank line, so that it is no part of the report's last list item (what cannot be
    written there is left out)."""
    from agent_invariants.render.github import error

    if not logged:
        sys.stderr.write(f"agent-invariants: {message}\n")
    with contextlib.suppress(OSError):   # (standard output that takes nothing: said on stderr already)
        sys.stdout.write(error("agent-invariants", message, *(at or ())) + "\n")
        sys.stdout.flush()
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        with contextlib.suppress(OSError):
            _append(summary, f"\n{shown}\n\n")


def _place(problem: str) -> tuple[str, int | None] | None:
    """The file (and line) a line of bad input names at its start, `trace.jsonl:4: $.args: ...`
    or `contract.json: no such file`, when that file is there to annotate; else None (a problem
    of no file, or of a name the message had to escape)."""
    found = _NAMED.match(problem)
    if found is None or not Path(found["file"]).is_file():
        return None
    return found["file"], None if found["line"] is None else int(found["line"])


_NAMED = re.compile(r"(?P<file>[^\n]+?)(?::(?P<line>[0-9]+))?: ")
"""A problem's start: the name, and maybe the line, before the first `: ` (with a line, `:N: `)."""


def _bad_input(message: str, first: bool) -> str:
    """A line of bad input in the step's summary: the first under a heading that says so."""
    from agent_invariants.render.markdown import escaped

    return f"## ⛔ agent-invariants: bad input\n\n{escaped(message)}" if first else escaped(message)


if __name__ == "__main__":
    raise SystemExit(main())
