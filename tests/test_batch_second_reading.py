"""Many traces at once, read from the README ("Many traces at once", "Exit codes", "No silent
passes"), spec v1 §7.5 / §8 and spec v2 §10 point 34 (a batch of runs with `--input-format`).

Every case names the sentence it checks. Traces are tiny; one module fixture writes the large
traces that the progress-line cases need.
"""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agent_invariants import load_contract
from agent_invariants.batch import check_many

BATCH_SCHEMA = "agent-invariants/check-batch/v1"
SINGLE_SCHEMA = "agent-invariants/check/v1"

OK = {"seq": 1, "type": "tool.call", "tool": "search"}
BAD = {"seq": 1, "type": "tool.call", "tool": "shell.exec"}
WARN = {"seq": 1, "type": "tool.call", "tool": "x.y"}

RULES: list[dict[str, Any]] = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "warn-x", "kind": "deny_tool", "tool": "x.*", "severity": "warning"},
]


def put(root: Path, name: str, *lines: dict[str, Any] | str) -> Path:
    """Write a trace file (dicts as JSON lines, strings raw) under `root`."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(params=[1, 2], ids=["v1", "v2"])
def version(request: pytest.FixtureRequest, tmp_path: Path) -> int:
    """Each case that takes it runs with a version-1 and a version-2 contract (`c.json`)."""
    number: int = request.param
    document = {"version": number, "name": "spec", "rules": RULES}
    (tmp_path / "c.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return number


@pytest.fixture
def contract_v1(tmp_path: Path) -> Path:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": 1, "name": "spec", "rules": RULES}), encoding="utf-8")
    return path


def as_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def traces_of(report: dict[str, Any]) -> list[str]:
    return [section["trace"] for section in report["reports"]]


def check(cli: Any, *args: str) -> subprocess.CompletedProcess[str]:
    result: subprocess.CompletedProcess[str] = cli("check", "--contract", "c.json", *args)
    return result


# -- which traces a batch holds ----------------------------------------------------------------------


def test_repeated_trace_is_a_batch_in_the_order_named(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "`--trace` may be repeated" … "one section per trace in the order they were named"."""
    put(tmp_path, "b.jsonl", OK)
    put(tmp_path, "a.jsonl", OK)
    result = check(cli, "--trace", "b.jsonl", "--trace", "a.jsonl", "--format", "json")
    report = as_json(result)
    assert (result.returncode, report["schema"]) == (0, BATCH_SCHEMA)
    assert traces_of(report) == ["b.jsonl", "a.jsonl"]
    assert report["contract"] == {"name": "spec", "version": version}


def test_folder_is_recursive_sorted_and_takes_three_extensions(cli: Any, tmp_path: Path, version: int) -> None:
    """README: a folder means "every `*.jsonl`, `*.json` and `*.ndjson` file in it, recursively,
    sorted"; other files are not traces."""
    put(tmp_path, "runs/z.ndjson", OK)
    put(tmp_path, "runs/b/two.jsonl", OK)
    put(tmp_path, "runs/a/one.json", OK)
    put(tmp_path, "runs/m.jsonl", OK)
    (tmp_path / "runs" / "notes.txt").write_text("not a trace\n", encoding="utf-8")
    (tmp_path / "runs" / "x.yaml").write_text("a: 1\n", encoding="utf-8")
    report = as_json(check(cli, "--trace", "runs/", "--format", "json"))
    assert traces_of(report) == ["runs/a/one.json", "runs/b/two.jsonl", "runs/m.jsonl", "runs/z.ndjson"]
    assert report["traces"] == 4


def test_folder_skips_the_contract_file_itself(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "the contract file itself is skipped" (a `.json` in the folder given)."""
    put(tmp_path, "runs/t.jsonl", OK)
    (tmp_path / "runs" / "c.json").write_text((tmp_path / "c.json").read_text(encoding="utf-8"), encoding="utf-8")
    result = cli("check", "--contract", "runs/c.json", "--trace", "runs/", "--format", "json")
    report = as_json(result)
    assert (result.returncode, traces_of(report), report["failures"]) == (0, ["runs/t.jsonl"], [])


def test_glob_with_double_star(cli: Any, tmp_path: Path, version: int) -> None:
    """README: `--trace` may name "a glob (`'runs/**/*.jsonl'`)": `**` spans any folders (none too),
    and only names the pattern matches are taken."""
    put(tmp_path, "runs/top.jsonl", OK)
    put(tmp_path, "runs/a/b/deep.jsonl", BAD)
    put(tmp_path, "runs/a/other.json", OK)
    result = check(cli, "--trace", "runs/**/*.jsonl", "--format", "json")
    report = as_json(result)
    assert sorted(traces_of(report)) == ["runs/a/b/deep.jsonl", "runs/top.jsonl"]
    assert result.returncode == 1


def test_one_plain_file_keeps_the_single_trace_report(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "One plain file keeps the single-trace output" (`agent-invariants/check/v1`)."""
    put(tmp_path, "t.jsonl", OK)
    report = as_json(check(cli, "--trace", "t.jsonl", "--format", "json"))
    assert report["schema"] == SINGLE_SCHEMA
    assert "reports" not in report


def test_each_section_is_the_single_run_report(cli: Any, tmp_path: Path, version: int) -> None:
    """README: each trace is checked "exactly as a single run would check it"."""
    put(tmp_path, "a.jsonl", OK)
    put(tmp_path, "b.jsonl", BAD, {"seq": 2, "type": "tool.call", "tool": "x.z"})
    batch = as_json(check(cli, "--trace", "a.jsonl", "--trace", "b.jsonl", "--format", "json"))
    for section, name in zip(batch["reports"], ["a.jsonl", "b.jsonl"], strict=True):
        assert section == as_json(check(cli, "--trace", name, "--format", "json"))


def test_a_trace_named_twice_is_checked_twice(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """Spec silent on duplicates; the product keeps one section per name given (the reading of
    "one section per trace in the order they were named")."""
    put(tmp_path, "t.jsonl", BAD)
    result = check(cli, "--trace", "t.jsonl", "--trace", "t.jsonl", "--format", "json")
    report = as_json(result)
    assert (traces_of(report), report["error_count"], result.returncode) == (["t.jsonl", "t.jsonl"], 2, 1)


def test_symlinked_file_in_a_folder_is_checked(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """Spec silent on symlinks; a link to a trace file is a trace file of the folder (a linked
    folder is not asserted either way)."""
    target = put(tmp_path, "elsewhere/real.jsonl", BAD)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "link.jsonl").symlink_to(target)
    result = check(cli, "--trace", "runs/", "--format", "json")
    assert (traces_of(as_json(result)), result.returncode) == (["runs/link.jsonl"], 1)


def test_a_link_in_a_folder_that_leads_nowhere_is_unreadable_not_left_out(cli: Any, tmp_path: Path,
                                                                          contract_v1: Path) -> None:
    """Found by the fifth hunt: a dangling link or a loop of links named like a trace was left out
    of a folder (and of a pattern) without a word, and the rest passed with exit 0; named directly
    it is "no such file". It is a trace that cannot be read: listed, said, exit 2. A FIFO or a
    folder named like a trace is still not one."""
    put(tmp_path, "runs/good.jsonl", OK)
    (tmp_path / "runs" / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    (tmp_path / "runs" / "loop-a.jsonl").symlink_to("loop-b.jsonl")
    (tmp_path / "runs" / "loop-b.jsonl").symlink_to("loop-a.jsonl")
    os.mkfifo(tmp_path / "runs" / "pipe.jsonl")
    (tmp_path / "runs" / "folder.jsonl").mkdir()
    for named in ("runs/", "runs/*.jsonl"):
        result = check(cli, "--trace", named, "--format", "json")
        assert result.returncode == 2
        assert traces_of(as_json(result)) == ["runs/good.jsonl"]
        assert result.stderr.splitlines() == [
            "agent-invariants: runs/dangling.jsonl: is a symbolic link that leads nowhere (its target is missing, "
            "or a loop)",
            "agent-invariants: runs/loop-a.jsonl: cannot open: Too many levels of symbolic links",
            "agent-invariants: runs/loop-b.jsonl: cannot open: Too many levels of symbolic links"]


@pytest.mark.parametrize("make", ["empty", "no-traces"])
def test_folder_without_traces_is_exit_2(cli: Any, tmp_path: Path, contract_v1: Path, make: str) -> None:
    """Spec silent on an empty folder; "No silent passes" and §7.5 (bad input: exit 2, one line
    on stderr, nothing on stdout) are the reasonable reading, and the product follows it."""
    (tmp_path / "runs").mkdir()
    if make == "no-traces":
        (tmp_path / "runs" / "readme.txt").write_text("x\n", encoding="utf-8")
    result = check(cli, "--trace", "runs/")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("agent-invariants: ") and "runs/" in result.stderr


def test_glob_matching_nothing_is_exit_2(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """Spec silent; a glob that matches no file checks nothing, so (No silent passes) exit 2."""
    result = check(cli, "--trace", "none/*.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "none/*.jsonl" in result.stderr


def test_file_name_not_utf8_is_a_failure_not_a_crash(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """A trace that cannot be read "is listed under `failures` and reported on stderr without
    stopping the others" (spec silent on how such a name is spelt; only that it is one failure)."""
    put(tmp_path, "runs/a.jsonl", OK)
    os.makedirs(tmp_path / "runs", exist_ok=True)
    with open(os.path.join(os.fsencode(tmp_path / "runs"), b"x\xff.jsonl"), "wb") as handle:
        handle.write(json.dumps(OK).encode() + b"\n")
    result = check(cli, "--trace", "runs/", "--format", "json")
    report = as_json(result)
    assert (result.returncode, traces_of(report), len(report["failures"])) == (2, ["runs/a.jsonl"], 1)
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("agent-invariants: ")


# -- the batch report --------------------------------------------------------------------------------


def test_batch_json_totals(cli: Any, tmp_path: Path, version: int) -> None:
    """README: the report holds one section per trace "plus an overall verdict"; counts over all."""
    put(tmp_path, "ok.jsonl", OK)
    put(tmp_path, "bad.jsonl", BAD)
    put(tmp_path, "warn.jsonl", WARN)
    result = check(cli, "--trace", "ok.jsonl", "--trace", "bad.jsonl", "--trace", "warn.jsonl", "--format", "json")
    report = as_json(result)
    assert result.returncode == 1
    assert (report["passed"], report["traces"], report["error_count"], report["warning_count"]) == (False, 3, 1, 1)
    assert [section["passed"] for section in report["reports"]] == [True, False, True]
    assert report["failures"] == []


def test_warnings_only_batch_passes(cli: Any, tmp_path: Path, version: int) -> None:
    """§7.5 / README exit codes: 0 "no error-severity violation (warnings allowed)", for a batch too."""
    put(tmp_path, "a.jsonl", WARN)
    put(tmp_path, "b.jsonl", OK)
    result = check(cli, "--trace", "a.jsonl", "--trace", "b.jsonl", "--format", "json")
    assert (result.returncode, as_json(result)["passed"]) == (0, True)


def test_unreadable_trace_is_listed_and_others_still_checked(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "A trace that cannot be read is listed under `failures` and reported on stderr without
    stopping the others, and the worst exit code wins (2 if any trace was unreadable)"; Exit codes:
    "the report of the others on stdout, each unreadable trace named on stderr"."""
    put(tmp_path, "a.jsonl", OK)
    put(tmp_path, "broken.jsonl", "not json")
    put(tmp_path, "c.jsonl", BAD)
    result = check(cli, "--trace", "a.jsonl", "--trace", "broken.jsonl", "--trace", "c.jsonl", "--format", "json")
    report = as_json(result)
    assert result.returncode == 2
    assert traces_of(report) == ["a.jsonl", "c.jsonl"]
    assert [failure["trace"] for failure in report["failures"]] == ["broken.jsonl"]
    assert report["passed"] is False
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-invariants: broken.jsonl")


def test_missing_file_in_a_batch_is_a_failure(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """A trace that cannot be read (here: absent) is a failure; the others are reported; exit 2."""
    put(tmp_path, "a.jsonl", OK)
    result = check(cli, "--trace", "a.jsonl", "--trace", "gone.jsonl", "--format", "json")
    report = as_json(result)
    assert (result.returncode, traces_of(report)) == (2, ["a.jsonl"])
    assert [failure["trace"] for failure in report["failures"]] == ["gone.jsonl"]


@pytest.mark.parametrize(
    ("contents", "code"),
    [((OK, OK), 0), ((OK, WARN), 0), ((OK, BAD), 1), ((BAD, "{"), 2), ((OK, "{"), 2)],
    ids=["all-pass", "warning", "one-fails", "fail-and-unreadable", "pass-and-unreadable"],
)
def test_worst_exit_code_wins(cli: Any, tmp_path: Path, contract_v1: Path,
                              contents: tuple[dict[str, Any] | str, ...], code: int) -> None:
    """README: "the worst exit code wins (2 if any trace was unreadable, else 1 if any failed)"."""
    args: list[str] = []
    for index, content in enumerate(contents):
        put(tmp_path, f"t{index}.jsonl", content)
        args += ["--trace", f"t{index}.jsonl"]
    assert check(cli, *args, "--format", "json").returncode == code


def test_strict_makes_an_empty_trace_a_failure_of_the_batch(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """No silent passes: with `--strict` an empty trace is bad input, "in a batch it is listed with
    the unreadable traces and the others are still reported" (exit 2)."""
    put(tmp_path, "a.jsonl", OK)
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    result = check(cli, "--trace", "a.jsonl", "--trace", "empty.jsonl", "--strict", "--format", "json")
    report = as_json(result)
    assert (result.returncode, traces_of(report)) == (2, ["a.jsonl"])
    assert [failure["trace"] for failure in report["failures"]] == ["empty.jsonl"]


def test_without_strict_an_empty_trace_is_only_a_warning(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """No silent passes: "Without `--strict` these are warnings and never change the exit code"."""
    put(tmp_path, "a.jsonl", OK)
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    result = check(cli, "--trace", "a.jsonl", "--trace", "empty.jsonl", "--format", "json")
    report = as_json(result)
    assert (result.returncode, traces_of(report), report["failures"]) == (0, ["a.jsonl", "empty.jsonl"], [])
    assert "warning" in result.stderr and "empty.jsonl" in result.stderr


def test_max_violations_applies_per_trace_and_counts_every_one(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README `--max-violations N`: each rule keeps its first N; "`error_count` … the exit code …
    still count every violation"; a rule's result gets `"truncated": true` and `"violations_total"`."""
    three = [{"seq": i, "type": "tool.call", "tool": "shell.x"} for i in (1, 2, 3)]
    put(tmp_path, "a.jsonl", *three)
    put(tmp_path, "b.jsonl", *three)
    result = check(cli, "--trace", "a.jsonl", "--trace", "b.jsonl", "--max-violations", "1", "--format", "json")
    report = as_json(result)
    assert (result.returncode, report["error_count"]) == (1, 6)
    for section in report["reports"]:
        rule = section["results"][0]
        assert (section["error_count"], len(rule["violations"])) == (3, 1)
        assert (rule["truncated"], rule["violations_total"]) == (True, 3)


def test_max_violations_text_says_how_many_were_left_out(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: text "end[s] the list with `… and N more (raise --max-violations to see them)`"."""
    three = [{"seq": i, "type": "tool.call", "tool": "shell.x"} for i in (1, 2, 3)]
    put(tmp_path, "a.jsonl", *three)
    put(tmp_path, "b.jsonl", *three)
    result = check(cli, "--trace", "a.jsonl", "--trace", "b.jsonl", "--max-violations", "1")
    assert result.stdout.count("… and 2 more (raise --max-violations to see them)") == 2


# -- --jobs --------------------------------------------------------------------------------------------


def test_report_is_byte_identical_for_every_jobs(cli: Any, tmp_path: Path, version: int) -> None:
    """README: traces are checked in parallel (`--jobs N`), the report in the order named: the
    output cannot depend on N."""
    names = []
    for index in range(7):
        put(tmp_path, f"t{index}.jsonl", [OK, BAD, WARN][index % 3])
        names += ["--trace", f"t{index}.jsonl"]
    outputs = {check(cli, *names, "--jobs", jobs, "--format", "json").stdout for jobs in ("1", "2", "5")}
    texts = {check(cli, *names, "--jobs", jobs, "--verbose").stdout for jobs in ("1", "3")}
    assert len(outputs) == 1 and len(texts) == 1


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_jobs_below_one_is_refused(cli: Any, tmp_path: Path, contract_v1: Path, jobs: str) -> None:
    """`--jobs N` counts processes (help: `[x>=1]`); 0, a negative or a word is bad usage: §7.5 exit 2,
    "one line … on stderr, nothing on stdout"."""
    put(tmp_path, "a.jsonl", OK)
    put(tmp_path, "b.jsonl", OK)
    result = check(cli, "--trace", "a.jsonl", "--trace", "b.jsonl", "--jobs", jobs)
    assert (result.returncode, result.stdout) == (2, "")
    assert len(result.stderr.splitlines()) == 1 and "--jobs" in result.stderr


# -- the text report -----------------------------------------------------------------------------------


def two_fail_one_pass(tmp_path: Path) -> list[str]:
    put(tmp_path, "ok.jsonl", OK)
    put(tmp_path, "bad.jsonl", BAD)
    put(tmp_path, "warn.jsonl", WARN)
    return ["--trace", "ok.jsonl", "--trace", "bad.jsonl", "--trace", "warn.jsonl"]


def test_text_shows_only_failing_traces_and_rules_then_totals(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "The text report of a batch shows only the failing traces, and in them only the failing
    rules, then one line with the totals (`FAIL  refund-desk  12 traces: 11 passed, 1 failed · 2 errors ·
    0 warnings`)"."""
    result = check(cli, *two_fail_one_pass(tmp_path))
    out = result.stdout
    assert result.returncode == 1
    assert "bad.jsonl" in out and "ok.jsonl" not in out and "warn.jsonl" not in out
    assert "no-shell" in out and "warn-x" not in out
    assert out.splitlines()[-1] == "FAIL  spec  3 traces: 2 passed, 1 failed · 1 error · 1 warning"


def test_text_of_a_passing_batch_is_the_totals_line(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: only failing traces are shown, then the totals line; with none failing, only that line."""
    put(tmp_path, "a.jsonl", OK)
    put(tmp_path, "b.jsonl", OK)
    result = check(cli, "--trace", "a.jsonl", "--trace", "b.jsonl")
    assert (result.returncode, result.stdout.strip().splitlines()) == (
        0, ["PASS  spec  2 traces: 2 passed, 0 failed · 0 errors · 0 warnings"])


def test_verbose_shows_every_trace_and_rule(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "`--verbose` shows every trace and rule"."""
    out = check(cli, *two_fail_one_pass(tmp_path), "--verbose").stdout
    for name in ("ok.jsonl", "bad.jsonl", "warn.jsonl"):
        assert name in out
    assert out.count("no-shell") >= 3 and out.count("warn-x") >= 3
    assert out.splitlines()[-1] == "FAIL  spec  3 traces: 2 passed, 1 failed · 1 error · 1 warning"


def test_quiet_shows_only_the_totals_line(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "`--quiet` only the totals line"."""
    result = check(cli, *two_fail_one_pass(tmp_path), "--quiet")
    assert (result.returncode, result.stdout) == (1, "FAIL  spec  3 traces: 2 passed, 1 failed · 1 error · 1 warning\n")


def test_quiet_with_an_unreadable_trace_shows_only_the_totals_line(cli: Any, tmp_path: Path,
                                                                  contract_v1: Path) -> None:
    """README: "`--quiet` only the totals line" (the unreadable trace is named on stderr)."""
    put(tmp_path, "a.jsonl", OK)
    put(tmp_path, "broken.jsonl", "not json")
    result = check(cli, "--trace", "a.jsonl", "--trace", "broken.jsonl", "--quiet")
    assert result.returncode == 2
    assert len(result.stdout.splitlines()) == 1, result.stdout
    assert "broken.jsonl" in result.stderr


def test_text_names_an_unreadable_trace_and_counts_it(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: the unreadable trace is listed (spec silent on the totals wording; the product says
    "1 unreadable", a reasonable reading of "listed under failures")."""
    put(tmp_path, "a.jsonl", OK)
    put(tmp_path, "broken.jsonl", "not json")
    result = check(cli, "--trace", "a.jsonl", "--trace", "broken.jsonl")
    assert result.returncode == 2
    assert "broken.jsonl" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("FAIL  spec  2 traces: 1 passed, 0 failed")


def test_text_failing_trace_shows_its_failing_warning_rule_too(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: a failing trace shows "only the failing rules": a failed warning rule is one of them
    (§7.1 marks it `!`), a passing rule is not shown."""
    put(tmp_path, "both.jsonl", BAD, {"seq": 2, "type": "tool.call", "tool": "x.b"})
    put(tmp_path, "ok.jsonl", OK)
    out = check(cli, "--trace", "both.jsonl", "--trace", "ok.jsonl").stdout
    assert "✗ no-shell" in out and "! warn-x" in out and "ok.jsonl" not in out


def test_max_warnings_counts_the_whole_batch(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: `--max-warnings N` is "exit 1 when the report has more than N warning violations";
    the report of a batch is all its traces (one warning each here, two in all)."""
    put(tmp_path, "a.jsonl", WARN)
    put(tmp_path, "b.jsonl", WARN)
    args = ("--trace", "a.jsonl", "--trace", "b.jsonl", "--format", "json")
    assert check(cli, *args, "--max-warnings", "1").returncode == 1
    assert check(cli, *args, "--max-warnings", "2").returncode == 0


def test_output_file_gets_the_others_when_one_is_unreadable(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README Exit codes: an unreadable trace in a batch still gives "the report of the others"
    (spec silent on `--output` here; the reasonable reading is that the file gets that report)."""
    put(tmp_path, "ok.jsonl", OK)
    put(tmp_path, "broken.jsonl", "[")
    result = check(cli, "--trace", "ok.jsonl", "--trace", "broken.jsonl", "--format", "json", "--output", "r.json")
    assert (result.returncode, result.stdout) == (2, "")
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert (traces_of(report), [f["trace"] for f in report["failures"]]) == (["ok.jsonl"], ["broken.jsonl"])


# -- every format renders a batch ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "pretty", "json", "sarif", "junit", "markdown", "github", "html"])
def test_every_format_renders_a_batch(cli: Any, tmp_path: Path, contract_v1: Path, fmt: str) -> None:
    """README: "every format renders it": exit 1 for the failing trace, which the report names."""
    put(tmp_path, "ok.jsonl", OK)
    put(tmp_path, "bad.jsonl", BAD)
    result = check(cli, "--trace", "ok.jsonl", "--trace", "bad.jsonl", "--format", fmt)
    assert (result.returncode, result.stderr) == (1, "")
    assert "bad.jsonl" in result.stdout


def test_sarif_batch_locates_results_in_their_trace(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: every format renders the batch; a SARIF result points at the trace file it comes from."""
    put(tmp_path, "ok.jsonl", OK)
    put(tmp_path, "bad.jsonl", BAD)
    log = as_json(check(cli, "--trace", "ok.jsonl", "--trace", "bad.jsonl", "--format", "sarif"))
    found = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
             for run in log["runs"] for r in run["results"]]
    assert found == [("no-shell", "bad.jsonl")]


def test_github_batch_annotates_then_totals(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README `--format github`: "one per violation … then the totals"."""
    put(tmp_path, "ok.jsonl", OK)
    put(tmp_path, "bad.jsonl", BAD)
    lines = check(cli, "--trace", "ok.jsonl", "--trace", "bad.jsonl", "--format", "github").stdout.splitlines()
    assert [line for line in lines if line.startswith("::")] == [
        "::error file=bad.jsonl,line=1,title=no-shell (deny_tool)::Denied tool called: shell.exec."]
    assert lines[-1] == "FAIL  spec  2 traces: 1 passed, 1 failed · 1 error · 0 warnings"


@pytest.mark.parametrize("fmt", ["json", "junit", "markdown", "sarif"])
def test_unreadable_trace_keeps_the_others_report_in_every_format(cli: Any, tmp_path: Path, contract_v1: Path,
                                                                  fmt: str) -> None:
    """README Exit codes: 2 for "a batch … with a trace that could not be read: the report of the
    others on stdout"."""
    put(tmp_path, "bad.jsonl", BAD)
    put(tmp_path, "broken.jsonl", "[")
    result = check(cli, "--trace", "bad.jsonl", "--trace", "broken.jsonl", "--format", fmt)
    assert result.returncode == 2
    assert "bad.jsonl" in result.stdout
    assert "broken.jsonl" in result.stderr


def test_output_file_gets_the_batch_report(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README `--output FILE` "gets the whole report": the same bytes as stdout, nothing on stdout."""
    put(tmp_path, "ok.jsonl", OK)
    put(tmp_path, "bad.jsonl", BAD)
    args = ("--trace", "ok.jsonl", "--trace", "bad.jsonl", "--format", "json")
    printed = check(cli, *args).stdout
    written = check(cli, *args, "--output", "r.json")
    assert (written.returncode, written.stdout) == (1, "")
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == printed


# -- compare with folders and globs --------------------------------------------------------------------


def pairs_of(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(section["baseline"]["trace"], section["candidate"]["trace"]) for section in report["reports"]]


def compare(cli: Any, *args: str) -> subprocess.CompletedProcess[str]:
    result: subprocess.CompletedProcess[str] = cli("compare", "--contract", "c.json", *args)
    return result


def test_compare_folders_pair_by_path_inside_the_folder(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "the path inside the folder given (`runs/a/one.jsonl` pairs with `runs-new/a/one.jsonl`)"."""
    put(tmp_path, "runs/a/one.jsonl", OK)
    put(tmp_path, "runs/b/one.jsonl", OK)
    put(tmp_path, "runs-new/a/one.jsonl", BAD)
    put(tmp_path, "runs-new/b/one.jsonl", OK)
    result = compare(cli, "--baseline", "runs/", "--candidate", "runs-new/", "--format", "json")
    report = as_json(result)
    assert result.returncode == 1
    assert pairs_of(report) == [("runs/a/one.jsonl", "runs-new/a/one.jsonl"),
                                ("runs/b/one.jsonl", "runs-new/b/one.jsonl")]
    assert [section["compatible"] for section in report["reports"]] == [False, True]
    assert report["compatible"] is False


def test_compare_globs_pair_by_file_name(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: "or the file name for files and globs"."""
    put(tmp_path, "old/x/one.jsonl", OK)
    put(tmp_path, "old/two.jsonl", OK)
    put(tmp_path, "new/one.jsonl", OK)
    put(tmp_path, "new/y/two.jsonl", OK)
    result = compare(cli, "--baseline", "old/**/*.jsonl", "--candidate", "new/**/*.jsonl", "--format", "json")
    assert sorted(pairs_of(as_json(result))) == [("old/two.jsonl", "new/y/two.jsonl"),
                                                 ("old/x/one.jsonl", "new/one.jsonl")]
    assert result.returncode == 0


def test_compare_one_baseline_goes_with_every_candidate(cli: Any, tmp_path: Path, version: int) -> None:
    """README: "one baseline goes with every candidate"."""
    put(tmp_path, "base.jsonl", OK)
    put(tmp_path, "new/a.jsonl", OK)
    put(tmp_path, "new/b.jsonl", BAD)
    result = compare(cli, "--baseline", "base.jsonl", "--candidate", "new/", "--format", "json")
    report = as_json(result)
    assert pairs_of(report) == [("base.jsonl", "new/a.jsonl"), ("base.jsonl", "new/b.jsonl")]
    assert result.returncode == 1


def test_compare_one_baseline_file_that_is_not_there_is_bad_input(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """One baseline file for a folder of candidates: a baseline that is not there is one line and
    exit 2, with nothing on stdout, not an unreadable pair per candidate (a "REGRESSION" headline)."""
    put(tmp_path, "new/a.jsonl", OK)
    put(tmp_path, "new/b.jsonl", OK)
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    dangling = "is a symbolic link that leads nowhere (its target is missing, or a loop)"
    for baseline, said in (("base.jsonl", "no such file"), ("gone.jsonl", dangling)):
        result = compare(cli, "--baseline", baseline, "--candidate", "new/", "--format", "json")
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"agent-invariants: {baseline}: {said}\n")


def test_compare_candidate_without_baseline_is_exit_2(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: "A candidate without a baseline of its name … is an error (exit 2)"; §7.5: stdout empty.
    (Two baselines: a folder holding one trace pairs by name too; only a baseline given as one
    file goes with every candidate.)"""
    put(tmp_path, "old/one.jsonl", OK)
    put(tmp_path, "old/two.jsonl", OK)
    put(tmp_path, "new/two.jsonl", OK)
    put(tmp_path, "new/one.jsonl", OK)
    put(tmp_path, "new/extra.jsonl", OK)
    result = compare(cli, "--baseline", "old/", "--candidate", "new/", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "extra.jsonl" in result.stderr


def test_compare_two_baselines_of_one_name_is_exit_2(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: "two baselines of one name, is an error (exit 2)"."""
    put(tmp_path, "old/a/one.jsonl", OK)
    put(tmp_path, "old/b/one.jsonl", OK)
    put(tmp_path, "new/one.jsonl", OK)
    result = compare(cli, "--baseline", "old/**/*.jsonl", "--candidate", "new/*.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "one.jsonl" in result.stderr


def test_compare_batch_unreadable_candidate_is_a_failure(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: an unreadable trace is listed under failures without stopping the others; exit 2."""
    put(tmp_path, "old/a.jsonl", OK)
    put(tmp_path, "old/b.jsonl", OK)
    put(tmp_path, "new/a.jsonl", OK)
    put(tmp_path, "new/b.jsonl", "garbage")
    result = compare(cli, "--baseline", "old/", "--candidate", "new/", "--format", "json")
    report = as_json(result)
    assert result.returncode == 2
    assert pairs_of(report) == [("old/a.jsonl", "new/a.jsonl")]
    assert [failure["trace"] for failure in report["failures"]] == ["new/b.jsonl"]


def test_compare_batch_names_an_unreadable_baseline_not_its_readable_candidate(cli: Any, tmp_path: Path,
                                                                               contract_v1: Path) -> None:
    """README: "A pair that cannot be compared lists the trace that cannot be read under `failures`:
    the baseline when it is the one, and then the candidate as well when it cannot be read either
    (the totals line counts such pairs as unreadable)"."""
    put(tmp_path, "old/a.jsonl", "garbage")
    put(tmp_path, "old/b.jsonl", "garbage2")
    put(tmp_path, "old/c.jsonl", OK)
    put(tmp_path, "new/a.jsonl", OK)
    put(tmp_path, "new/b.jsonl", '{"seq": 1}')
    put(tmp_path, "new/c.jsonl", OK)
    result = compare(cli, "--baseline", "old/", "--candidate", "new/", "--format", "json")
    report = as_json(result)
    assert result.returncode == 2
    assert pairs_of(report) == [("old/c.jsonl", "new/c.jsonl")]
    assert report["failures"] == [
        {"trace": "old/a.jsonl", "error": "old/a.jsonl:1: invalid JSON: invalid character (column 1)", "line": 1},
        {"trace": "old/b.jsonl", "error": "old/b.jsonl:1: invalid JSON: invalid character (column 1)", "line": 1},
        {"trace": "new/b.jsonl", "error": "new/b.jsonl:1: $: missing required field `type`", "line": 1},
    ]
    github = compare(cli, "--baseline", "old/", "--candidate", "new/", "--format", "github")
    assert github.stdout.splitlines()[:3] == [
        "::error file=old/a.jsonl,line=1,title=agent-invariants%3A bad input::old/a.jsonl:1: invalid JSON: invalid "
        "character (column 1)",
        "::error file=old/b.jsonl,line=1,title=agent-invariants%3A bad input::old/b.jsonl:1: invalid JSON: invalid "
        "character (column 1)",
        "::error file=new/b.jsonl,line=1,title=agent-invariants%3A bad input::new/b.jsonl:1: $: missing required field "
        "`type`"]
    sarif = json.loads(compare(cli, "--baseline", "old/", "--candidate", "new/", "--format", "sarif").stdout)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [note["locations"][0]["physicalLocation"]["region"] for note in notes] == [{"startLine": 1}] * 3
    junit = compare(cli, "--baseline", "old/", "--candidate", "new/", "--format", "junit").stdout
    unreadable = [case for case in ET.fromstring(junit).iter("testcase") if case.find("error") is not None]
    assert [(case.get("file"), case.get("line")) for case in unreadable] == [
        ("old/a.jsonl", "1"), ("old/b.jsonl", "1"), ("new/b.jsonl", "1")]
    assert result.stderr.splitlines() == [f"agent-invariants: {failure['error']}" for failure in report["failures"]]
    quiet = compare(cli, "--baseline", "old/", "--candidate", "new/", "--quiet")
    assert quiet.stdout == "REGRESSION  spec  3 pairs: 1 compatible, 0 regressed, 2 unreadable · 0 regressions\n"


def test_compare_batch_strict_names_the_baseline_with_notices(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    put(tmp_path, "old/a.jsonl", "")   # empty: a notice, bad input under --strict
    put(tmp_path, "new/a.jsonl", OK)
    put(tmp_path, "new/b.jsonl", OK)
    put(tmp_path, "old/b.jsonl", OK)
    report = as_json(compare(cli, "--baseline", "old/", "--candidate", "new/", "--strict", "--format", "json"))
    assert [failure["trace"] for failure in report["failures"]] == ["old/a.jsonl"]


def test_compare_batch_text_ends_with_totals(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """README: every format renders a batch; `--quiet` shows only the totals line (compare too)."""
    put(tmp_path, "old/a.jsonl", OK)
    put(tmp_path, "new/a.jsonl", OK)
    put(tmp_path, "old/b.jsonl", OK)
    put(tmp_path, "new/b.jsonl", OK)
    result = compare(cli, "--baseline", "old/", "--candidate", "new/", "--quiet")
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 1 and result.stdout.startswith("COMPATIBLE  spec  2 pairs")


def test_compare_batch_text_shows_only_the_rules_that_fail_on_a_side(cli: Any, tmp_path: Path,
                                                                     contract_v1: Path) -> None:
    """README: the text report of a batch shows only the failing traces, "and in them only the
    failing rules": a regressed pair's table of rules listed the rules that pass on both sides
    too (a check batch left them out); `--verbose` shows them all."""
    put(tmp_path, "old/a.jsonl", OK)
    put(tmp_path, "new/a.jsonl", BAD)
    put(tmp_path, "old/b.jsonl", OK)
    put(tmp_path, "new/b.jsonl", OK)
    result = compare(cli, "--baseline", "old/", "--candidate", "new/")
    assert result.returncode == 1
    rows = result.stdout.split("Rules (baseline -> candidate):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert rows == ["  no-shell  passed -> failed  new"]
    verbose = compare(cli, "--baseline", "old/", "--candidate", "new/", "--verbose")
    assert "  warn-x    passed -> passed  passing" in verbose.stdout


# -- --input-format: a batch of runs (spec v2 §10.34) -------------------------------------------------


def mcp_log(tmp_path: Path, name: str, sessions: list[tuple[str, str]]) -> None:
    """An MCP log (§10.35) with one session per (session id, tool called)."""
    lines: list[dict[str, Any]] = []
    def say(session: str, direction: str, msg: dict[str, Any], second: int) -> None:
        lines.append({"ts": f"2025-01-01T00:00:0{second}Z", "session": session, "dir": direction,
                      "msg": {"jsonrpc": "2.0", **msg}})

    for session, tool in sessions:
        say(session, "c2s", {"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}, 0)
        say(session, "s2c", {"id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "serverInfo": {"name": "s", "version": "1"}}}, 1)
        say(session, "c2s", {"id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {}}}, 2)
        say(session, "s2c", {"id": 2, "result": {"content": []}}, 3)
    put(tmp_path, name, *lines)


def test_several_runs_without_run_is_exit_2_listing_them(cli: Any, tmp_path: Path, version: int) -> None:
    """§10.34: "Without `--run`, an input with several runs is exit 2, and the message lists the run
    ids and both options"."""
    mcp_log(tmp_path, "log.jsonl", [("s1", "search"), ("s2", "shell.exec")])
    result = check(cli, "--trace", "log.jsonl", "--input-format", "mcp-log")
    assert (result.returncode, result.stdout) == (2, "")
    message = result.stderr
    assert all(part in message for part in ("s1", "s2", "--run", "all"))


def test_run_all_checks_every_run_as_a_batch(cli: Any, tmp_path: Path, version: int) -> None:
    """§10.34: "`--run all` checks every run as a batch (one section per run id, as a folder of traces
    would be)"."""
    mcp_log(tmp_path, "log.jsonl", [("s1", "search"), ("s2", "shell.exec")])
    result = check(cli, "--trace", "log.jsonl", "--input-format", "mcp-log", "--run", "all", "--format", "json")
    report = as_json(result)
    assert (result.returncode, report["schema"], report["traces"]) == (1, BATCH_SCHEMA, 2)
    assert [(section["run"], section["passed"]) for section in report["reports"]] == [("s1", True), ("s2", False)]


def test_run_all_with_one_unreadable_run_checks_the_others(cli: Any, tmp_path: Path, version: int) -> None:
    """§10.34: `--run all` is a batch "as a folder of traces would be": a run holding an event no
    trace may hold (a tool name of 600 characters) is that run's failure, at its line, and the
    other runs are still checked and reported; exit 2, as for a folder with an unreadable trace."""
    mcp_log(tmp_path, "log.jsonl", [("s1", "search"), ("s2", "x" * 600), ("s3", "shell.exec")])
    result = check(cli, "--trace", "log.jsonl", "--input-format", "mcp-log", "--run", "all", "--format", "json")
    report = json.loads(result.stdout)
    assert (result.returncode, report["traces"], report["passed"]) == (2, 3, False)
    assert [(section["run"], section["passed"]) for section in report["reports"]] == [("s1", True), ("s3", False)]
    assert report["failures"] == [{"trace": "log.jsonl", "line": 7, "error":
                                   "log.jsonl:7: $.tool: expected a string of at most 500 characters"}]


def test_run_all_text_is_a_batch_text(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """§10.34 + README: a batch of runs renders as a batch (failing sections, then the totals line)."""
    mcp_log(tmp_path, "log.jsonl", [("s1", "search"), ("s2", "shell.exec")])
    result = check(cli, "--trace", "log.jsonl", "--input-format", "mcp-log", "--run", "all", "--quiet")
    assert result.stdout == "FAIL  spec  2 traces: 1 passed, 1 failed · 1 error · 0 warnings\n"


def test_run_id_picks_one_run_single_report(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """§10.34: "`check` … with `--input-format` take[s] `--run ID` too": one run, one report."""
    mcp_log(tmp_path, "log.jsonl", [("s1", "search"), ("s2", "shell.exec")])
    result = check(cli, "--trace", "log.jsonl", "--input-format", "mcp-log", "--run", "s2", "--format", "json")
    report = as_json(result)
    assert (result.returncode, report["schema"], report["error_count"]) == (1, SINGLE_SCHEMA, 1)


def test_unknown_run_id_is_exit_2(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """§10.34 / §7.5: a run that is not in the input is bad input (exit 2, stdout empty)."""
    mcp_log(tmp_path, "log.jsonl", [("s1", "search"), ("s2", "shell.exec")])
    result = check(cli, "--trace", "log.jsonl", "--input-format", "mcp-log", "--run", "nope")
    assert (result.returncode, result.stdout) == (2, "")


def test_compare_run_all_pairs_by_run_id(cli: Any, tmp_path: Path, contract_v1: Path) -> None:
    """§10.34 (and `compare --help`): with `--run all`, compare pairs the runs by run id."""
    mcp_log(tmp_path, "old.jsonl", [("s1", "search"), ("s2", "search")])
    mcp_log(tmp_path, "new.jsonl", [("s2", "shell.exec"), ("s1", "search")])
    result = compare(cli, "--baseline", "old.jsonl", "--candidate", "new.jsonl", "--input-format", "mcp-log",
                     "--run", "all", "--format", "json")
    report = as_json(result)
    runs = [(section["baseline"]["run"], section["candidate"]["run"], section["compatible"])
            for section in report["reports"]]
    assert sorted(runs) == [("s1", "s1", True), ("s2", "s2", False)]
    assert result.returncode == 1


def test_summary_run_all_gives_each_run(cli: Any, tmp_path: Path) -> None:
    """§10.34: "`summary` with `--input-format` take[s] `--run ID` too, and `--run all`" every run
    (spec silent on the summary's shape; the product keys summaries by run id)."""
    mcp_log(tmp_path, "log.jsonl", [("s1", "search"), ("s2", "shell.exec")])
    result = cli("summary", "--trace", "log.jsonl", "--input-format", "mcp-log", "--run", "all")
    data = as_json(result)
    assert result.returncode == 0
    assert (data["s1"]["tools"], data["s2"]["tools"]) == (["search"], ["shell.exec"])


# -- the progress line ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slow_batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a contract and a trace large enough that eight checks of it take over half a
    second."""
    root = tmp_path_factory.mktemp("slow")
    (root / "c.json").write_text(json.dumps({"version": 1, "name": "spec", "rules": RULES}), encoding="utf-8")
    line = '{"seq":%d,"type":"tool.call","tool":"search"}\n'
    (root / "big.jsonl").write_text("".join(line % (i + 1) for i in range(300_000)), encoding="utf-8")
    return root


def run_slow(root: Path, *extra: str, terminal: bool) -> tuple[int, bytes]:
    """Check eight copies of the big trace with `--jobs 1`, stderr a terminal or a pipe; the report
    goes to a file so stdout stays out of the way."""
    args = [sys.executable, "-m", "agent_invariants", "check", "--contract", "c.json", "--jobs", "1",
            "--format", "json", "--output", "r.json", *(["--trace", "big.jsonl"] * 8), *extra]
    env = {**os.environ, "NO_COLOR": "1"}
    if not terminal:
        done = subprocess.run(args, cwd=root, capture_output=True, env=env, timeout=60)
        return done.returncode, done.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=slave, env=env)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    return proc.wait(timeout=60), data


def test_progress_line_on_a_terminal(slow_batch: Path) -> None:
    """README: "On a terminal, a progress line on stderr shows for runs that take more than half a
    second" (its wording is not specified; only that something is drawn)."""
    code, err = run_slow(slow_batch, terminal=True)
    assert code == 0 and err.strip() != b""


def test_no_progress_line_when_stderr_is_not_a_terminal(slow_batch: Path) -> None:
    """README: the progress line is "on a terminal" only: a pipe gets nothing."""
    assert run_slow(slow_batch, terminal=False) == (0, b"")


def test_quiet_turns_the_progress_line_off(slow_batch: Path) -> None:
    """README: "(`--quiet` turns it off too)"."""
    assert run_slow(slow_batch, "--quiet", terminal=True) == (0, b"")


# -- the library ---------------------------------------------------------------------------------------


def test_check_many_reports_in_order_with_failures(tmp_path: Path, contract_v1: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """README (The library): "`agent_invariants.batch.check_many(contract, paths, jobs=4)` is the
    library side of several traces": the same batch report as the CLI's JSON."""
    monkeypatch.chdir(tmp_path)
    put(tmp_path, "b.jsonl", BAD)
    put(tmp_path, "a.jsonl", OK)
    put(tmp_path, "broken.jsonl", "nope")
    contract = load_contract("c.json")
    data = msgspec.to_builtins(check_many(contract, ["b.jsonl", "a.jsonl", "broken.jsonl"], jobs=2))
    assert data["schema"] == BATCH_SCHEMA
    assert [section["trace"] for section in data["reports"]] == ["b.jsonl", "a.jsonl"]
    assert (data["passed"], data["error_count"]) == (False, 1)
    assert [failure["trace"] for failure in data["failures"]] == ["broken.jsonl"]


def test_check_many_same_for_every_jobs(tmp_path: Path, contract_v1: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README: the batch is checked in parallel, each trace as a single run: jobs changes nothing."""
    monkeypatch.chdir(tmp_path)
    names = []
    for index in range(5):
        put(tmp_path, f"t{index}.jsonl", [OK, BAD, WARN][index % 3])
        names.append(f"t{index}.jsonl")
    contract = load_contract("c.json")
    one = msgspec.json.encode(check_many(contract, names, jobs=1))
    assert msgspec.json.encode(check_many(contract, names, jobs=3)) == one


def test_check_many_takes_max_violations(tmp_path: Path, contract_v1: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README: "`check_trace`, `compare_traces` and the batch functions take `max_violations`"."""
    monkeypatch.chdir(tmp_path)
    put(tmp_path, "a.jsonl", *[{"seq": i, "type": "tool.call", "tool": "shell.x"} for i in (1, 2, 3)])
    report = check_many(load_contract("c.json"), ["a.jsonl"], max_violations=2)
    section = msgspec.to_builtins(report)["reports"][0]
    assert (section["error_count"], len(section["results"][0]["violations"])) == (3, 2)
