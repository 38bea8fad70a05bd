"""`stability` as a user meets it: the bundled example, every output format, the JSON report
against its schema, the library call, and bad input (one stderr line, exit 2, nothing on stdout).
The spec's own cases and a reference model are in test_stability_spec.py."""
from __future__ import annotations

import hashlib
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agent_invariants.stability import NO_OUTPUT, measure, parse_path, path_text, stability_of

import cli_zygote
from support import github_profile_problems, sarif_validator

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = [f"examples/report-shape/run-{n}.jsonl" for n in (1, 2, 3)]
SHAPE_OPTIONS = ["--map", "by_order", "--ignore", "debug"]


def run(*args: str, cwd: Path = REPO, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return cli_zygote.as_text(cli_zygote.run_python(["-m", "agent_invariants", "stability", *args], cwd,
                                                    None if stdin is None else stdin.encode(), timeout=120))


def trace(tmp_path: Path, name: str, output: Any = NO_OUTPUT, *, terminal: str = "run.completed") -> str:
    """A trace file ending with a terminal event carrying `output` (none when NO_OUTPUT)."""
    last: dict[str, Any] = {"seq": 2, "type": terminal}
    if output is not NO_OUTPUT:
        last["output"] = output
    (tmp_path / name).write_text(json.dumps({"seq": 1, "type": "run.start"}) + "\n" + json.dumps(last) + "\n")
    return name


def refused(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("agent-invariants: ")
    return line


# -- the bundled example --------------------------------------------------------------------------

def test_the_example_runs_one_and_two_are_stable():
    result = run(*EXAMPLE[:2], *SHAPE_OPTIONS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "STABLE  2 of 2 traces report an output, all of one shape"


def test_the_example_run_three_breaks_the_shape_in_text():
    result = run(*EXAMPLE, *SHAPE_OPTIONS)
    assert result.returncode == 1, result.stderr
    assert result.stdout == (
        "UNSTABLE  3 of 3 traces report an output · 2 unstable paths\n"
        "  ✗ refunds[].currency  presence  present in [0] · absent in [2] · unknown in [1] (under an empty array "
        "or map)\n"
        "  ✗ total  type  number in [0], [1] · string in [2]\n"
        "\n"
        "  [0] examples/report-shape/run-1.jsonl\n"
        "  [1] examples/report-shape/run-2.jsonl\n"
        "  [2] examples/report-shape/run-3.jsonl\n")


def test_without_map_the_order_ids_come_and_go():
    result = run(*EXAMPLE[:2], "--ignore", "$.debug", "--format", "json")
    assert result.returncode == 1
    assert [(entry["path"], entry["kind"]) for entry in json.loads(result.stdout)["unstable"]] == [
        ("by_order.A1042", "presence"), ("by_order.B2001", "presence")]


# -- formats --------------------------------------------------------------------------------------

def test_the_json_report_follows_its_schema_and_names_each_output_by_its_hash():
    result = run(*EXAMPLE, *SHAPE_OPTIONS, "--format", "json")
    report = json.loads(result.stdout)
    schema = json.loads((REPO / "schemas" / "stability-report-v1.schema.json").read_text())
    jsonschema.validate(report, schema)
    output = json.loads((REPO / EXAMPLE[0]).read_text().splitlines()[-1])["output"]
    canonical = json.dumps(output, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert report["runs"][0] == {"trace": EXAMPLE[0], "reporting": True,
                                 "output_sha256": hashlib.sha256(canonical.encode()).hexdigest()}
    assert report["measured"] is True and report["stable"] is False


def test_markdown_has_a_row_per_unstable_path_and_per_trace():
    lines = run(*EXAMPLE, *SHAPE_OPTIONS, "--format", "markdown").stdout.splitlines()
    assert lines[0] == "## ❌ agent-invariants stability: 2 unstable paths"
    assert "| `refunds[].currency` | presence | 0 | 2 | 1 | 0: string |" in lines
    assert "| `total` | type | 0, 1, 2 | – | – | 0: number; 1: number; 2: string |" in lines
    assert "| 2 | `examples/report-shape/run-3.jsonl` | yes |  |" in lines


@pytest.mark.parametrize(("fmt", "heading"), [
    ("text", "UNSTABLE  3 of 3 traces report an output · 1 unstable path"),
    ("markdown", "## ❌ agent-invariants stability: 1 unstable path"),
])
def test_a_path_unstable_in_presence_and_type_is_one_path_in_every_heading(tmp_path, fmt, heading):
    """README: every format renders the same report. `total` is missing from one run and a string
    in another: two entries (presence, type) of one unstable path, as text, Markdown and the page
    count it."""
    names = [trace(tmp_path, "a.jsonl", {"total": 1}), trace(tmp_path, "b.jsonl", {}),
             trace(tmp_path, "c.jsonl", {"total": "1"})]
    result = run(*names, "--format", fmt, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0] == heading


def test_junit_fails_one_test_case_per_unstable_path():
    suite = ET.fromstring(run(*EXAMPLE, *SHAPE_OPTIONS, "--format", "junit").stdout).find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == ["refunds[].currency (presence)", "total (type)"]
    failure = cases["total (type)"].find("failure")
    assert failure is not None and failure.get("type") == "type"
    assert "string in" not in (failure.text or "") and "examples/report-shape/run-3.jsonl: string" in failure.text


def test_junit_passes_a_stable_shape_and_errors_when_nothing_was_measured(tmp_path):
    stable = ET.fromstring(run(*EXAMPLE[:2], *SHAPE_OPTIONS, "--format", "junit").stdout)
    assert [(case.get("name"), list(case)) for case in stable.iter("testcase")] == [("output shape", [])]
    lone = ET.fromstring(run(EXAMPLE[0], "--format", "junit").stdout)
    (case,) = lone.iter("testcase")
    assert case.find("error") is not None


def test_junit_lists_fewer_unstable_paths_rather_than_pass_30_mb(tmp_path):
    """GitLab reads no JUnit file over 30 MB. 521 unstable paths, each naming the 100 traces
    that hold it and the 100 that do not (long names), made 32 MB: 100 are listed, and one more
    test counts the rest, as a rule's violations are listed."""
    for number in range(200):
        output = {f"k{key}": 1 for key in range(520)} if number % 2 else {"z": 1}
        trace(tmp_path, f"{number:03d}-{'n' * 190}.jsonl", output)
    names = sorted(path.name for path in tmp_path.iterdir())
    result = run(*names, "--format", "junit", cwd=tmp_path)
    assert result.returncode == 1 and len(result.stdout.encode()) < 30_000_000
    cases = list(ET.fromstring(result.stdout).iter("testcase"))
    assert [case.get("name") for case in cases][99:] == ["k188 (presence)", "… 421 more"]   # (code-point order)
    failure = cases[-1].find("failure")
    assert failure is not None and failure.get("message") == (
        "421 more unstable path entries (JUnit lists 100 here, not 1,000: GitLab reads no file over 30 MB; "
        "--format json lists every one)")


def test_output_goes_to_a_file_whole(tmp_path):
    result = run(*EXAMPLE, *SHAPE_OPTIONS, "--format", "json", "--output", str(tmp_path / "r.json"))
    assert result.returncode == 1 and result.stdout == ""
    assert json.loads((tmp_path / "r.json").read_text())["schema"] == "agent-invariants/stability/v1"


# -- reporting traces, stdin, contracts -------------------------------------------------------------

def test_a_trace_without_output_is_listed_and_below_two_nothing_is_measured(tmp_path):
    names = [trace(tmp_path, "a.jsonl", {"x": 1}), trace(tmp_path, "b.jsonl"), trace(tmp_path, "c.jsonl",
                                                                                     terminal="run.failed")]
    result = run(*names, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.splitlines() == ["NOT MEASURED  1 of 3 traces reports an output; 2 are needed", "",
                                          "  [0] a.jsonl", "  [1] b.jsonl  no output", "  [2] c.jsonl  no output"]
    # exit 2 says why on stderr too, where a pipeline looks when the report goes to a file
    assert result.stderr == "agent-invariants: not measured: 1 of 3 traces reports an output; 2 are needed\n"


def test_standard_input_can_be_one_trace_once(tmp_path):
    name = trace(tmp_path, "a.jsonl", {"x": 1})
    stdin = json.dumps({"seq": 1, "type": "run.completed", "output": {"x": "one"}}) + "\n"
    result = run(name, "-", "--format", "json", cwd=tmp_path, stdin=stdin)
    assert result.returncode == 1
    assert [entry["path"] for entry in json.loads(result.stdout)["unstable"]] == ["x"]
    assert "once" in refused(run("-", "-", cwd=tmp_path, stdin=stdin))


def test_with_a_contract_each_trace_is_checked_and_the_worst_exit_wins(tmp_path):
    contract = {"version": 2, "name": "c", "rules": [
        {"id": "total-is-a-number", "kind": "output_match", "match": {"total": {"$gte": 0}}}]}
    (tmp_path / "c.json").write_text(json.dumps(contract))
    names = [trace(tmp_path, "a.jsonl", {"total": 1}), trace(tmp_path, "b.jsonl", {"total": 2})]
    stable = run(*names, "--contract", "c.json", "--format", "json", cwd=tmp_path)
    assert stable.returncode == 0, stable.stderr
    assert [run_["check"] for run_ in json.loads(stable.stdout)["runs"]] == [
        {"passed": True, "error_count": 0, "warning_count": 0}] * 2
    names.append(trace(tmp_path, "c.jsonl", {"total": "3"}))
    worse = run(*names, "--contract", "c.json", "--format", "json", cwd=tmp_path)
    assert worse.returncode == 1
    assert json.loads(worse.stdout)["runs"][2]["check"] == {"passed": False, "error_count": 1, "warning_count": 0}
    lone = run(names[2], "--contract", "c.json", cwd=tmp_path)
    assert lone.returncode == 2   # not measured outweighs a failed check


def test_a_contract_lint_proves_unpassable_is_refused_unless_no_lint(tmp_path):
    names = [trace(tmp_path, "a.jsonl", {"x": 1}), trace(tmp_path, "b.jsonl", {"x": 1})]
    contract = str(REPO / "examples" / "lint" / "contract.json")
    line = refused(run(*names, "--contract", contract, cwd=tmp_path))
    assert "$.rules[1]: lint required_but_forbidden:" in line
    checked = run(*names, "--contract", contract, "--no-lint", "--format", "json", cwd=tmp_path)
    assert checked.returncode == 1   # stable, but each check fails: runs-the-tests never ran shell.exec
    assert [run_["check"]["passed"] for run_ in json.loads(checked.stdout)["runs"]] == [False, False]


# -- bad input ------------------------------------------------------------------------------------

def test_an_invalid_trace_is_one_line_naming_it(tmp_path):
    name = trace(tmp_path, "a.jsonl", {"x": 1})
    (tmp_path / "bad.jsonl").write_text('{"seq": 1, "type": "run.start"}\n{"seq": 2, "type": \n')
    assert "bad.jsonl:2" in refused(run(name, "bad.jsonl", cwd=tmp_path))
    assert "missing.jsonl" in refused(run(name, "missing.jsonl", cwd=tmp_path))


@pytest.mark.parametrize("key, written", [("k\x7f", "k\\u007f"), ("k\x85", "k\\u0085"), ("k\u200b", "k\\u200b"),
                                           ("k\U000e0001", "k\\udb40\\udc01"), ("k\n", "k\\n"),
                                           ("n\u00a0", "n\\u00a0"), ("n\u3000", "n\\u3000")])
@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_a_key_a_terminal_would_not_show_is_written_as_a_json_escape_that_ignore_takes(tmp_path, key, written, fmt):
    """A path's `["key"]` is a JSON string, which `--ignore` and `--map` take as the report writes
    it: a character that a terminal or a log would not show as itself (DEL, a C1 control, a
    zero-width space, an invisible tag) is a JSON escape (`\\u007f`), not `\\x7f`, which is none."""
    one, other = trace(tmp_path, "a.jsonl", {key: 1}), trace(tmp_path, "b.jsonl", {})
    result = run(one, other, "--format", fmt, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    path = f'["{written}"]'
    shown = json.loads(result.stdout)["unstable"][0]["path"] if fmt == "json" else result.stdout
    assert path in shown
    assert run(one, other, "--ignore", path, cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(("option", "value", "problem"), [
    ("--ignore", "a..b", "expected a key"),
    ("--map", 'a["b]', "not a JSON string"),
    ("--map", "a b", "expected ., [] or {}"),
])
def test_a_path_option_that_is_no_path_is_refused(tmp_path, option, value, problem):
    names = [trace(tmp_path, "a.jsonl", {"x": 1}), trace(tmp_path, "b.jsonl", {"x": 1})]
    line = refused(run(*names, option, value, cwd=tmp_path))
    assert f"{option} " in line and "not an output path" in line and problem in line


def test_an_empty_path_option_is_refused_as_an_empty_argument(tmp_path):
    """Before any command reads it: an empty value (an unset variable) is never a path."""
    names = [trace(tmp_path, "a.jsonl", {"x": 1}), trace(tmp_path, "b.jsonl", {"x": 1})]
    assert refused(run(*names, "--ignore", "", cwd=tmp_path)) == \
        "agent-invariants: an empty argument after --ignore (an unset variable?): name a file or value"


def test_sarif_points_at_the_final_output_of_the_run_that_breaks_the_shape():
    log = json.loads(run(*EXAMPLE, *SHAPE_OPTIONS, "--format", "sarif").stdout)
    assert list(sarif_validator().iter_errors(log)) == []
    assert github_profile_problems(log) == []
    (sarif_run,) = log["runs"]
    assert [rule["id"] for rule in sarif_run["tool"]["driver"]["rules"]] == ["stability.presence", "stability.type"]
    last_line = len((REPO / EXAMPLE[2]).read_text().splitlines())
    places = [(result["ruleId"], result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
               result["locations"][0]["physicalLocation"]["region"]["startLine"]) for result in sarif_run["results"]]
    assert places == [("stability.presence", EXAMPLE[2], last_line), ("stability.type", EXAMPLE[2], last_line)]
    assert sarif_run["results"][1]["message"]["text"] == (
        f"Output path total holds number in {EXAMPLE[0]}, {EXAMPLE[1]}; string in {EXAMPLE[2]}.")
    related = sarif_run["results"][0]["relatedLocations"]
    assert [place["physicalLocation"]["artifactLocation"]["uri"] for place in related] == EXAMPLE[:2]


def test_sarif_keeps_at_most_the_results_code_scanning_takes_and_says_how_many(tmp_path, monkeypatch):
    """ci-formats.md: a run of more than 25,000 results is rejected whole; one result per unstable
    path, so the run is cut there and its properties say how many there were (the limit is made 3
    here, so that the case stays small: 5 paths are missing from the second trace)."""
    from agent_invariants.render import sarif

    wide, narrow = tmp_path / "wide.jsonl", tmp_path / "narrow.jsonl"
    wide.write_text(json.dumps({"seq": 1, "type": "run.completed", "output": {f"k{n}": n for n in range(5)}}) + "\n")
    narrow.write_text(json.dumps({"seq": 1, "type": "run.completed", "output": {}}) + "\n")
    monkeypatch.setattr(sarif, "MAX_RESULTS", 3)
    log = json.loads(sarif.render(stability_of([str(wide), str(narrow)])))
    (sarif_run,) = log["runs"]
    assert [result["properties"]["path"] for result in sarif_run["results"]] == ["k0", "k1", "k2"]
    assert {key: sarif_run["properties"][key] for key in ("truncated", "resultCount")} == {
        "truncated": True, "resultCount": 5}
    assert list(sarif_validator().iter_errors(log)) == []


def test_sarif_is_the_same_whether_the_traces_are_named_absolute_or_relative(tmp_path):
    """As a check's SARIF: a message names each trace relative to the current folder, as its
    location does, so no absolute path of the runner gets into an alert's text; as a person reads
    the name, not percent-encoded as the location's URI is (`s%20a.jsonl`)."""
    names = [trace(tmp_path, "s a.jsonl", {"total": 1}), trace(tmp_path, "b.jsonl", {"total": "1"})]
    relative = run(*names, "--format", "sarif", cwd=tmp_path)
    absolute = run(*[str(tmp_path / name) for name in names], "--format", "sarif", cwd=tmp_path)
    assert relative.returncode == absolute.returncode == 1
    assert absolute.stdout == relative.stdout
    texts = [result["message"]["text"] for result in json.loads(relative.stdout)["runs"][0]["results"]]
    assert texts == ["Output path total holds number in s a.jsonl; string in b.jsonl."]


def test_sarif_says_when_nothing_was_measured():
    log = json.loads(run(EXAMPLE[0], "--format", "sarif").stdout)
    assert list(sarif_validator().iter_errors(log)) == []
    (sarif_run,) = log["runs"]
    assert sarif_run["results"] == [] and sarif_run["properties"]["stability"] == {"measured": False,
                                                                                   "stable": False}


def test_github_annotates_the_final_output_line_then_prints_the_text_report():
    lines = run(*EXAMPLE, *SHAPE_OPTIONS, "--format", "github").stdout.splitlines()
    last_line = len((REPO / EXAMPLE[2]).read_text().splitlines())
    assert lines[0].startswith(f"::error file={EXAMPLE[2]},line={last_line},title=stability%3A refunds[].currency "
                               "(presence)::Output path refunds[].currency is in the final output of ")
    assert lines[2] == "UNSTABLE  3 of 3 traces report an output · 2 unstable paths"


def test_an_input_named_as_the_output_is_refused_before_anything_is_read(tmp_path):
    names = [trace(tmp_path, "a.jsonl", {"x": 1}), trace(tmp_path, "b.jsonl", {"x": 1})]
    refused(run(*names, "--output", "b.jsonl", cwd=tmp_path))
    assert json.loads((tmp_path / "b.jsonl").read_text().splitlines()[-1])["output"] == {"x": 1}


def test_text_from_outputs_is_shown_inert(tmp_path):
    names = [trace(tmp_path, "a.jsonl", {"\x1b[31mred": 1}), trace(tmp_path, "b.jsonl", {})]
    result = run(*names, cwd=tmp_path)
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and '["\\u001b[31mred"]' in result.stdout


def test_deep_and_huge_outputs_are_measured(tmp_path):
    deep: Any = 1
    for _ in range(240):   # 480 levels: the reader takes 500
        deep = {"a": [deep]}
    wide = {"n": int("9" * 400)}   # beyond any double: no RFC 8785 form, hashed as written
    names = [trace(tmp_path, "a.jsonl", deep), trace(tmp_path, "b.jsonl", deep), trace(tmp_path, "c.jsonl", wide),
             trace(tmp_path, "d.jsonl", wide)]
    result = run(*names[:2], "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    wide_result = run(*names[2:], "--format", "json", cwd=tmp_path)
    assert wide_result.returncode == 0, wide_result.stderr
    raw = (tmp_path / "c.jsonl").read_text().splitlines()[-1].split('"output": ', 1)[1][:-1]
    assert json.loads(wide_result.stdout)["runs"][0]["output_sha256"] == hashlib.sha256(raw.encode()).hexdigest()


# -- the library ----------------------------------------------------------------------------------

def test_the_library_measures_outputs_and_files_alike(tmp_path):
    outputs = [{"total": 10}, {"total": "0"}, NO_OUTPUT]
    report = measure(outputs, ["a", "b", "c"])
    assert [(entry.path, entry.kind, entry.present_in, entry.types) for entry in report.unstable] == [
        ("total", "type", [0, 1], [["number"], ["string"], []])]
    assert report.runs[2].reporting is False and report.runs[2].output_sha256 is None
    names = [trace(tmp_path, name, output) for name, output in zip(("a", "b"), outputs, strict=False)]
    from_files = stability_of([str(tmp_path / name) for name in names])
    assert [(entry.path, entry.kind) for entry in from_files.unstable] == [("total", "type")]


@pytest.mark.parametrize("text", ["$", "total", "refunds[].amount", "by_order{}.state", '["a b"].c', "[]", "[][]",
                                  'x["y.z"][]{}', "a-b_c.D9"])
def test_paths_read_back_as_they_are_written(text):
    assert path_text(parse_path(text)) == text
    if text != "$":
        assert parse_path("$." + text if text[0] not in "[{" else "$" + text) == parse_path(text)


def test_explain_prints_the_manual():
    result = cli_zygote.as_text(cli_zygote.run_python(["-m", "agent_invariants", "explain", "stability"], Path.cwd()))
    assert result.returncode == 0
    assert result.stdout.startswith("stability: does the agent's final output keep its shape from run to run?")
    assert "## Present, absent and unknown" in result.stdout


def test_a_trace_that_fails_the_contract_says_so_in_every_format(tmp_path):
    """Point 55: with --contract the exit is the worst of the shape's and the checks'; every
    format says so beside the shape's verdict (a CI job failing on exit 1 while its JUnit passes
    every case, or its summary says stable, hides why)."""
    contract = tmp_path / "c.json"
    contract.write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    good = trace(tmp_path, "good.jsonl", {"total": 1})
    (tmp_path / "bad.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "shell"}\n'
                                        '{"seq": 2, "type": "run.completed", "output": {"total": 2}}\n')
    args = (good, "bad.jsonl", "--contract", str(contract))
    said = "bad.jsonl fails the contract: 1 error, 0 warnings (check it for the violations)."
    text = run(*args, cwd=tmp_path)
    assert text.returncode == 1
    assert text.stdout.splitlines()[0].endswith(" · 1 of 2 traces fails the contract")
    markdown = run(*args, "--format", "markdown", cwd=tmp_path).stdout.splitlines()[0]
    assert markdown == ("## ❌ agent-invariants stability: stable (2 traces report an output of one shape); 1 of 2 "
                        "traces fails the contract")
    junit = ET.fromstring(run(*args, "--format", "junit", cwd=tmp_path).stdout)
    failure = junit.find("testsuite/testcase[@name='check: bad.jsonl']/failure")
    assert failure is not None and failure.get("message") == said
    assert junit.find("testsuite/testcase[@name='check: good.jsonl']/failure") is None
    assert junit.find("testsuite/testcase[@name='check: bad.jsonl']").get("line") == "2"   # the final output's
    github = run(*args, "--format", "github", cwd=tmp_path).stdout.splitlines()
    assert f"::error file=bad.jsonl,line=2,title=stability%3A check::{said}" in github   # at the final output
    log = json.loads(run(*args, "--format", "sarif", cwd=tmp_path).stdout)
    assert list(sarif_validator().iter_errors(log)) == []
    (result,) = log["runs"][0]["results"]
    assert (result["ruleId"], result["message"]["text"]) == ("stability.check", said)
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2   # the final output's line


def test_a_trace_read_from_standard_input_is_placed_in_no_file(tmp_path):
    """`-` is no file: neither the JUnit case of its check nor its GitHub annotation names one
    (JUnit wrote `file="-"`), while the file beside it is placed at its final output."""
    contract = tmp_path / "c.json"
    contract.write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    good = trace(tmp_path, "good.jsonl", {"total": 1})
    bad = ('{"seq": 1, "type": "tool.call", "tool": "shell"}\n'
           '{"seq": 2, "type": "run.completed", "output": {"total": 2}}\n')
    args = (good, "-", "--contract", str(contract))
    junit = ET.fromstring(run(*args, "--format", "junit", cwd=tmp_path, stdin=bad).stdout)
    piped = junit.find("testsuite/testcase[@name='check: -']")
    assert piped is not None and piped.find("failure") is not None
    assert (piped.get("file"), piped.get("line")) == (None, None)
    beside = junit.find("testsuite/testcase[@name='check: good.jsonl']")
    assert (beside.get("file"), beside.get("line")) == ("good.jsonl", "2")
    github = run(*args, "--format", "github", cwd=tmp_path, stdin=bad).stdout.splitlines()
    said = "- fails the contract: 1 error, 0 warnings (check it for the violations)."
    assert f"::error title=stability%3A check::{said}" in github


def test_markdown_escapes_the_bar_between_the_types_of_one_trace_inside_its_table_cell(tmp_path):
    """A path of two types in one trace (an array of numbers and strings) listed them joined by
    `|`, which a Markdown table reads as a new cell: the row had a column too many."""
    first = trace(tmp_path, "a.jsonl", {"ids": [1, "two"]})
    second = trace(tmp_path, "b.jsonl", {"ids": [1, 2]})
    lines = run(first, second, "--format", "markdown", cwd=tmp_path).stdout.splitlines()
    (row,) = [line for line in lines if line.startswith("| `ids[]`")]
    assert row == "| `ids[]` | type | 0, 1 | – | – | 0: number\\|string; 1: number |"


def test_a_finding_is_shown_in_the_run_that_breaks_the_shape(tmp_path):
    """Of three runs, a path only the second has was shown in the first (one of the two that agree:
    the first run lacking it), and a type only the first holds in the second (hunt 70). The run
    shown is now the first of the fewest that agree; of two runs, as before, the one lacking the
    path, and the second for a type."""
    names = [trace(tmp_path, "r1.jsonl", {"a": "x"}), trace(tmp_path, "r2.jsonl", {"a": 1, "b": 1}),
             trace(tmp_path, "r3.jsonl", {"a": 2})]
    lines = run(*names, "--format", "github", cwd=tmp_path).stdout.splitlines()
    annotations = sorted(line.split("::")[1] for line in lines if line.startswith("::error"))
    assert annotations == ["error file=r1.jsonl,line=2,title=stability%3A a (type)",
                           "error file=r2.jsonl,line=2,title=stability%3A b (presence)"]
    two = run(names[0], names[1], "--format", "github", cwd=tmp_path).stdout.splitlines()
    assert sorted(line.split("::")[1] for line in two if line.startswith("::error")) == [
        "error file=r1.jsonl,line=2,title=stability%3A b (presence)",
        "error file=r2.jsonl,line=2,title=stability%3A a (type)"]


def measured_deep(bottoms: list[dict[str, object]], key: str, levels: int) -> tuple[Any, int]:
    """The stability report of outputs that hold each of `bottoms` `levels` objects deep (each
    under `key`), and the peak of the memory traced while it was measured."""
    import tracemalloc

    outputs = []
    for bottom in bottoms:
        value: object = bottom
        for _ in range(levels):
            value = {key: value}
        outputs.append(value)
    tracemalloc.start()
    try:
        report = measure(outputs, ["a", "b"])
        return report, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_deep_output_of_many_members_is_measured_in_memory_that_grows_with_its_paths_not_their_depth(tmp_path):
    """Found by a hunt for unbounded memory: each path was a tuple of all its steps, so 1 MB of
    output 450 levels deep (40,000 members and an array of 60,000 numbers at the bottom) held
    paths x depth, and every array item waited on the stack with its own copy of its path: two
    such traces took 8.7 s and 550 MB. A path is now one step below its parent's: 0.5 s and 72 MB.
    The report is the same (the model and the spec's cases say what it is)."""
    leaf: dict[str, object] = {f"k{number}": number for number in range(40_000)}
    leaf["arr"] = list(range(60_000))
    report, peak = measured_deep([leaf, dict(leaf, k7="seven")], "n", 440)
    assert [(entry.path, entry.kind, entry.types) for entry in report.unstable] == [
        ("n." * 440 + "k7", "type", [["number"], ["string"]])]
    assert peak < 60_000_000


def test_many_unstable_paths_deep_in_an_output_are_written_in_memory_that_grows_with_the_report():
    """Found by an outside check: 40,000 members 400 levels deep, numbers in one trace and strings
    in the other (a report of 51 MB), took 1.5 GB and 15 s: each entry kept a sort key of all its
    steps beside its text (26 KB each), and each text was made from the root down (400 steps for
    each path). Texts cut alike never tie (each ends with its path's hash), so the text alone
    orders them, and each text is made from its parent's: 0.4 GB (most of it the JSON report)
    and 2.5 s. Here 2,000 such members: the report's entries, not their depth, take the memory."""
    bottoms = [{f"x{number}": leaf(number) for number in range(2_000)} for leaf in (lambda number: number, str)]
    report, peak = measured_deep(bottoms, "ab", 400)
    prefix = "ab" + ".ab" * 332 + ".a"   # the first 1,000 characters of each path
    assert len(report.unstable) == 2_000
    assert all(entry.path.startswith(prefix + "…") and len(entry.path) == 1_017 for entry in report.unstable)
    assert [entry.path for entry in report.unstable] == sorted(entry.path for entry in report.unstable)
    whole = "ab" + ".ab" * 399 + ".x7"
    assert report.unstable.count(next(entry for entry in report.unstable if entry.path.endswith(
        hashlib.sha256(whole.encode()).hexdigest()[:16]))) == 1
    assert peak < 20_000_000
