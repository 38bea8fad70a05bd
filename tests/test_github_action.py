"""The GitHub Action: `action.yml` has the structure GitHub requires of a composite action, and its
run steps, executed here with bash as the runner would (GITHUB_OUTPUT and GITHUB_STEP_SUMMARY in
temporary files), write the summary, the annotations, the SARIF file and the verdict."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from agent_invariants.github_action import main

from support import sarif_validator

REPO = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
EXAMPLE = REPO / "examples" / "refund-desk"


def test_action_yml_is_a_composite_action_with_the_documented_inputs():
    assert isinstance(ACTION["name"], str) and isinstance(ACTION["description"], str)
    inputs = ACTION["inputs"]
    assert list(inputs) == ["contract", "traces", "baseline", "format", "python-version", "upload-sarif",
                            "upload-html", "artifact-name", "category", "sarif-anchor", "fail-on", "max-line-bytes",
                            "no-lint"]
    for name, spec in inputs.items():
        assert isinstance(spec["description"], str) and spec["description"], name
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
    assert inputs["upload-sarif"]["default"] == "true" and inputs["fail-on"]["default"] == "error"
    assert inputs["traces"]["required"] is True
    for name, spec in ACTION["outputs"].items():
        assert set(spec) == {"description", "value"}, name
        assert re.fullmatch(r"\$\{\{ steps\.run\.outputs\.[a-z-]+ \}\}", spec["value"]), name
    runs = ACTION["runs"]
    assert runs["using"] == "composite"
    for step in runs["steps"]:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step["shell"] == "bash", step   # a composite action's run step must name its shell
    uses = [step["uses"] for step in runs["steps"] if "uses" in step]
    assert uses == ["actions/setup-python@v5", "github/codeql-action/upload-sarif@v4", "actions/upload-artifact@v4"]
    (upload,) = [step for step in runs["steps"] if step.get("uses", "").startswith("github/codeql-action")]
    assert upload["if"] == "${{ inputs.upload-sarif == 'true' && steps.run.outputs.sarif != '' }}"
    (artifact,) = [step for step in runs["steps"] if step.get("uses", "").startswith("actions/upload-artifact")]
    assert artifact["if"] == "${{ always() && inputs.upload-html == 'true' && steps.run.outputs.html != '' }}"
    assert artifact["with"] == {"name": "${{ inputs.artifact-name }}", "path": "${{ steps.run.outputs.html }}",
                                "if-no-files-found": "ignore"}
    assert inputs["artifact-name"]["default"] == "agent-invariants-report"
    assert upload["with"] == {"sarif_file": "${{ steps.run.outputs.sarif }}", "category": "${{ inputs.category }}"}
    assert (inputs["category"]["default"], inputs["sarif-anchor"]["default"]) == ("agent-invariants", "trace")
    # the extras a contract may need (YAML, JSON Schema rules, RE2), as the pre-commit hooks have them
    (install,) = [step["run"] for step in runs["steps"] if step["name"].startswith("Install")]
    assert install.endswith(' "$GITHUB_ACTION_PATH[yaml,jsonschema,re2]"')
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"yaml", "jsonschema", "re2"} <= set(extras)


def _steps(tmp_path: Path, inputs: dict[str, str]) -> tuple[int, str, dict[str, str], str]:
    """Run the action's steps after the install (the package is installed here) with bash, the
    `${{ inputs.* }}` and `${{ steps.run.outputs.* }}` expressions filled in as the runner would."""
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    values = {**defaults, **inputs}
    files = {"GITHUB_OUTPUT": tmp_path / "output", "GITHUB_STEP_SUMMARY": tmp_path / "summary.md"}
    env = {**os.environ, **{name: str(path) for name, path in files.items()}, "RUNNER_TEMP": str(tmp_path),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    outputs: dict[str, str] = {}
    log = ""
    code = 0
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or step["name"].startswith("Install"):
            continue
        step_env = {**env, **{name: _filled(str(value), values, outputs)
                               for name, value in step.get("env", {}).items()}}
        done = subprocess.run(["bash", "-c", step["run"]], cwd=REPO, env=step_env, capture_output=True, text=True,
                              timeout=120)
        log += done.stdout + done.stderr
        code = done.returncode
        if files["GITHUB_OUTPUT"].exists():
            outputs = dict(line.split("=", 1) for line in files["GITHUB_OUTPUT"].read_text().splitlines())
    summary = files["GITHUB_STEP_SUMMARY"].read_text() if files["GITHUB_STEP_SUMMARY"].exists() else ""
    return code, log, outputs, summary


def _filled(text: str, inputs: dict[str, str], outputs: dict[str, str]) -> str:
    text = re.sub(r"\$\{\{ inputs\.([a-z-]+) \}\}", lambda found: inputs[found.group(1)], text)
    return re.sub(r"\$\{\{ steps\.run\.outputs\.([a-z-]+) \}\}", lambda found: outputs.get(found.group(1), ""), text)


def test_a_failing_trace_fails_the_job_with_a_summary_annotations_and_sarif(tmp_path):
    code, log, outputs, summary = _steps(tmp_path, {"contract": "examples/refund-desk/contract.json",
                                                    "traces": "examples/refund-desk/candidate.jsonl"})
    assert code == 1
    assert (outputs["verdict"], outputs["exit-code"], outputs["step-exit"]) == ("fail", "1", "1")
    assert log.startswith("FAIL  refund-desk\n")
    assert "::error file=examples/refund-desk/candidate.jsonl,line=6," in log
    assert summary.startswith("## ❌ agent-invariants: refund-desk failed")
    sarif = json.loads(Path(outputs["sarif"]).read_text())
    sarif_validator().validate(sarif)
    assert sarif["runs"][0]["automationDetails"]["id"] == "agent-invariants/"
    assert len(sarif["runs"][0]["results"]) == 10
    page = Path(outputs["html"]).read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="s1-e10"' in page   # the timeline, read from the trace


def test_a_compare_fails_on_warnings_only_when_asked(tmp_path):
    contract = tmp_path / "contract.json"   # a warning both runs draw: compatible, yet a warning
    contract.write_text(json.dumps({"version": 1, "name": "drafts", "rules": [
        {"id": "no-drafts", "kind": "deny_tool", "tool": "mail.draft", "severity": "warning"}]}))
    trace = str(EXAMPLE / "baseline.jsonl")
    env = {**os.environ, "INPUT_CONTRACT": str(contract), "INPUT_BASELINE": trace, "INPUT_TRACES": trace,
           "RUNNER_TEMP": str(tmp_path)}
    assert main({**env, "INPUT_FAIL_ON": "error"}) == 0
    assert main({**env, "INPUT_FAIL_ON": "warning"}) == 1


def test_bad_input_fails_with_the_commands_message_and_never_hides_it(tmp_path, capsys):
    env = {**os.environ, "INPUT_CONTRACT": "missing.json", "INPUT_TRACES": "t.jsonl", "INPUT_FAIL_ON": "never",
           "GITHUB_OUTPUT": str(tmp_path / "output")}
    assert main(env) == 2
    assert capsys.readouterr().err.startswith("agent-invariants: missing.json: no such file")
    assert (tmp_path / "output").read_text() == "exit-code=2\nverdict=fail\nsarif=\nhtml=\n"
    assert main({**env, "INPUT_FAIL_ON": "sometimes"}) == 2
    assert "fail-on: 'sometimes' is none of error, warning, never" in capsys.readouterr().err


def test_a_batch_with_a_trace_it_cannot_read_reports_the_others_and_fails(tmp_path):
    """README: "a batch (several traces) with a trace that could not be read: the report of the
    others on stdout" (exit 2); the action shows them everywhere (log, annotations, summary, SARIF,
    page) and fails the step, whatever fail-on says."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "candidate.jsonl").write_bytes((EXAMPLE / "candidate.jsonl").read_bytes())
    (runs / "broken.jsonl").write_text('{"seq": 1, "type"\n')
    code, log, outputs, summary = _steps(tmp_path, {"contract": "examples/refund-desk/contract.json",
                                                    "traces": str(runs), "fail-on": "never"})
    assert code == 2
    assert (outputs["verdict"], outputs["exit-code"]) == ("fail", "2")
    assert f"agent-invariants: {runs}/broken.jsonl:1: invalid JSON" in log
    assert f"::error file={runs}/candidate.jsonl,line=6," in log
    assert "refund-desk failed" in summary
    assert len(json.loads(Path(outputs["sarif"]).read_text())["runs"][0]["results"]) == 10
    assert Path(outputs["html"]).read_text().startswith("<!DOCTYPE html>")


def test_a_batch_none_of_whose_traces_can_be_read_uploads_no_sarif(tmp_path):
    """Found by the sixth hunt: with every trace unreadable (two names from an unquoted path with a
    space), the action still wrote a SARIF file, with no result, and `upload-sarif` sent it: an
    upload without results for a category closes its open alerts. Nothing was checked: bad input,
    as for a single missing trace (no SARIF, no page)."""
    code, log, outputs, _ = _steps(tmp_path, {"contract": "examples/refund-desk/contract.json",
                                              "traces": "runs/my run.jsonl"})
    assert code == 2
    assert (outputs["exit-code"], outputs["verdict"], outputs["sarif"], outputs["html"]) == ("2", "fail", "", "")
    assert "agent-invariants: runs/my: no such file" in log


def test_fail_on_never_reports_and_passes(tmp_path):
    code, _, outputs, summary = _steps(tmp_path, {"contract": "examples/refund-desk/contract.json",
                                                  "traces": "examples/refund-desk/candidate.jsonl",
                                                  "fail-on": "never"})
    assert code == 0 and outputs["verdict"] == "pass" and outputs["exit-code"] == "1"
    assert "refund-desk failed" in summary


def test_an_unknown_format_is_refused_like_an_unknown_fail_on(tmp_path, capsys):
    env = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"),
           "INPUT_TRACES": str(EXAMPLE / "baseline.jsonl"), "INPUT_FORMAT": "yaml", "RUNNER_TEMP": str(tmp_path)}
    assert main(env) == 2
    assert capsys.readouterr().err == ("agent-invariants: format: 'yaml' is none of text, pretty, json, markdown, "
                                       "junit, sarif, github\n")


def test_a_bad_category_is_refused_by_the_inputs_name_before_anything_is_written(tmp_path, capsys):
    """Found by the sixth hunt: the category reached the command only for the SARIF file, after
    the log and the summary, and was refused as "Invalid value for '--category'", an option the
    workflow never wrote. It is checked with the other inputs, named as the action names it."""
    summary = tmp_path / "summary.md"
    env = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"),
           "INPUT_TRACES": str(EXAMPLE / "baseline.jsonl"), "INPUT_CATEGORY": "//", "RUNNER_TEMP": str(tmp_path),
           "GITHUB_STEP_SUMMARY": str(summary)}
    assert main(env) == 2
    err = capsys.readouterr().err
    assert err.startswith("agent-invariants: category: '//': name the category (as agent-invariants/nightly)")
    assert "--category" not in err and "refund-desk" not in summary.read_text()


def test_format_github_annotates_each_violation_once(tmp_path):
    code, log, _, _ = _steps(tmp_path, {"contract": "examples/refund-desk/contract.json",
                                        "traces": "examples/refund-desk/candidate.jsonl", "format": "github"})
    assert code == 1
    annotations = [line for line in log.splitlines() if line.startswith(("::error ", "::warning "))]
    assert len(annotations) == 10 == len(set(annotations))


def test_standard_input_is_refused_since_each_output_runs_the_command_again(tmp_path, capsys):
    """Read once, a pipe gave the verdict its events and every later report none: the outputs said
    fail while the log and the summary said passed."""
    for inputs in ({"INPUT_TRACES": "-"}, {"INPUT_TRACES": str(EXAMPLE / "candidate.jsonl"), "INPUT_CONTRACT": "-"}):
        env = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"), **inputs,
               "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path / "output")}
        assert main(env) == 2
        assert capsys.readouterr().err == ("agent-invariants: standard input (-) cannot be an input of the action, "
                                           "which runs the command once per output: name a file\n")
        assert (tmp_path / "output").read_text() == "exit-code=2\nverdict=fail\nsarif=\nhtml=\n"
        (tmp_path / "output").unlink()


def test_outputs_never_name_files_that_were_not_written(tmp_path, capsys):
    env = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"),
           "INPUT_TRACES": str(EXAMPLE / "candidate.jsonl"), "RUNNER_TEMP": str(tmp_path / "missing"),
           "GITHUB_OUTPUT": str(tmp_path / "output")}
    assert main(env) == 2
    assert capsys.readouterr().err.endswith("agent-invariants.sarif: cannot write: no such folder\n")
    assert (tmp_path / "output").read_text() == "exit-code=2\nverdict=fail\nsarif=\nhtml=\n"


def test_an_output_file_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, capsys):
    """Not a traceback and exit 1 ("violations"); the outputs go in one write, never half a line."""
    (tmp_path / "folder").mkdir()
    base = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"),
            "INPUT_TRACES": str(EXAMPLE / "candidate.jsonl"), "RUNNER_TEMP": str(tmp_path)}
    assert main({**base, "GITHUB_OUTPUT": str(tmp_path / "folder")}) == 2
    assert capsys.readouterr().err.endswith(f"agent-invariants: GITHUB_OUTPUT {tmp_path / 'folder'}: cannot write: "
                                            "Is a directory\n")
    assert main({**base, "GITHUB_STEP_SUMMARY": str(tmp_path / "folder"), "GITHUB_OUTPUT": str(tmp_path / "out")}) == 2
    assert capsys.readouterr().err.endswith(f"agent-invariants: GITHUB_STEP_SUMMARY {tmp_path / 'folder'}: cannot "
                                            "write: Is a directory\n")
    assert (tmp_path / "out").read_text() == "exit-code=2\nverdict=fail\nsarif=\nhtml=\n"
    (tmp_path / "file").write_text("")   # a RUNNER_TEMP that is no folder
    assert main({**base, "RUNNER_TEMP": str(tmp_path / "file"), "GITHUB_OUTPUT": str(tmp_path / "again")}) == 2
    assert capsys.readouterr().err.endswith(f"agent-invariants: {tmp_path / 'file' / 'agent-invariants.sarif'}: "
                                            "cannot write: Not a directory\n")
    assert (tmp_path / "again").read_text() == "exit-code=2\nverdict=fail\nsarif=\nhtml=\n"


def test_each_use_of_the_action_in_a_job_keeps_its_own_report_files(tmp_path):
    """A check beside a compare in one job: the first use's `sarif` and `html` outputs still name
    its own reports after the second use ran (the temporary folder is the job's)."""
    base = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"), "RUNNER_TEMP": str(tmp_path)}
    uses = [{"INPUT_TRACES": str(EXAMPLE / "candidate.jsonl"), "INPUT_CATEGORY": "check"},
            {"INPUT_TRACES": str(EXAMPLE / "candidate.jsonl"), "INPUT_BASELINE": str(EXAMPLE / "baseline.jsonl"),
             "INPUT_CATEGORY": "compare"},
            {"INPUT_TRACES": str(EXAMPLE / "baseline.jsonl"), "INPUT_CATEGORY": "third"}]
    outputs = []
    for number, (inputs, code) in enumerate(zip(uses, (1, 1, 0), strict=True)):
        assert main({**base, **inputs, "GITHUB_OUTPUT": str(tmp_path / f"output{number}")}) == code
        outputs.append(dict(line.split("=", 1) for line in (tmp_path / f"output{number}").read_text().splitlines()))
    assert [(Path(out["sarif"]).name, Path(out["html"]).name) for out in outputs] == [
        ("agent-invariants.sarif", "agent-invariants.html"), ("agent-invariants-2.sarif", "agent-invariants-2.html"),
        ("agent-invariants-3.sarif", "agent-invariants-3.html")]
    for out, category in zip(outputs, ("check", "compare", "third"), strict=True):
        sarif = json.loads(Path(out["sarif"]).read_text(encoding="utf-8"))
        assert sarif["runs"][0]["automationDetails"]["id"].split("/")[0] == category
        assert Path(out["html"]).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_baseline_is_split_as_traces_is(tmp_path, capsys):
    """`baseline: '"runs/base line.jsonl"'` names the file with a space, as `traces` would."""
    (tmp_path / "base line.jsonl").write_bytes((EXAMPLE / "baseline.jsonl").read_bytes())
    base = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"), "RUNNER_TEMP": str(tmp_path),
            "INPUT_TRACES": str(EXAMPLE / "candidate.jsonl"), "GITHUB_OUTPUT": str(tmp_path / "output")}
    assert main({**base, "INPUT_BASELINE": f'"{tmp_path / "base line.jsonl"}"'}) == 1
    assert "exit-code=1\n" in (tmp_path / "output").read_text()
    capsys.readouterr()
    assert main({**base, "INPUT_BASELINE": f"{tmp_path / 'base line.jsonl'}"}) == 2
    assert capsys.readouterr().err == ('agent-invariants: baseline names one run (a file or a folder); quote a path '
                                       'with a space, "runs/my run.jsonl"\n')


def test_the_notices_of_a_trace_reach_the_log(tmp_path, capsys):
    """An empty trace passes every rule; the check's warning saying so must not be dropped."""
    (tmp_path / "empty.jsonl").write_text("")
    env = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"),
           "INPUT_TRACES": str(tmp_path / "empty.jsonl"), "RUNNER_TEMP": str(tmp_path)}
    assert main(env) == 0
    assert f"agent-invariants: warning: {tmp_path / 'empty.jsonl'}: the trace has no events, so no rule saw " \
           "anything\n" in capsys.readouterr().err


def test_a_step_failing_on_warnings_alone_says_why(tmp_path):
    """Every report says PASS (the rule that broke is a warning): the log, an annotation and the
    summary say that fail-on: warning fails the step."""
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"version": 1, "name": "drafts", "rules": [
        {"id": "no-drafts", "kind": "deny_tool", "tool": "mail.draft", "severity": "warning"}]}))
    code, log, outputs, summary = _steps(tmp_path, {"contract": str(contract), "fail-on": "warning",
                                                    "traces": "examples/refund-desk/baseline.jsonl"})
    assert (code, outputs["verdict"], outputs["exit-code"]) == (1, "fail", "0")
    said = "1 warning, and fail-on is warning: the step fails"
    assert f"agent-invariants: {said}" in log.splitlines()
    assert f"::error title=agent-invariants::{said}" in log.splitlines()
    assert summary.startswith("## ✅ agent-invariants: drafts passed")
    assert summary.endswith(f"\n\n## ❌ agent-invariants: {said}\n\n")


def test_bad_input_is_an_annotation_and_a_summary_line_too(tmp_path):
    """The job's summary page was empty and the red step said nothing outside the raw log."""
    code, log, outputs, summary = _steps(tmp_path, {"contract": "missing_contract.json", "fail-on": "never",
                                                    "traces": "examples/refund-desk/baseline.jsonl"})
    assert (code, outputs["verdict"], outputs["exit-code"]) == (2, "fail", "2")
    assert "::error title=agent-invariants::missing\\_contract.json: no such file" not in log   # (not Markdown)
    assert "::error title=agent-invariants::missing_contract.json: no such file" in log.splitlines()
    assert summary == "\n## ⛔ agent-invariants: bad input\n\nmissing\\_contract.json: no such file\n\n"
    quoted = _steps(tmp_path, {"traces": "runs/o'brien.jsonl"})
    assert quoted[0] == 2 and "::error title=agent-invariants::traces: No closing quotation" in quoted[1]


def test_category_and_sarif_anchor_reach_the_sarif_file(tmp_path):
    code, _, outputs, _ = _steps(tmp_path, {"contract": "examples/refund-desk/contract.json",
                                            "traces": "examples/refund-desk/candidate.jsonl",
                                            "category": "agent-invariants/nightly", "sarif-anchor": "contract"})
    assert code == 1
    run = json.loads(Path(outputs["sarif"]).read_text())["runs"][0]
    assert run["automationDetails"]["id"] == "agent-invariants/nightly/"
    uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for result in run["results"]}
    assert uris == {"examples/refund-desk/contract.json"}
    bad = main({**os.environ, "INPUT_CONTRACT": "c.json", "INPUT_TRACES": "t.jsonl", "INPUT_SARIF_ANCHOR": "rule"})
    assert bad == 2


def test_a_log_that_takes_nothing_is_bad_input_with_its_outputs_written(tmp_path):
    """Standard output on a full disk: one line on stderr, exit 2 and the outputs (the annotation
    of the problem, written to the same full output, raised again and lost them)."""
    env = {**os.environ, "INPUT_CONTRACT": str(EXAMPLE / "contract.json"),
           "INPUT_TRACES": str(EXAMPLE / "candidate.jsonl"), "RUNNER_TEMP": str(tmp_path),
           "GITHUB_OUTPUT": str(tmp_path / "output")}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "agent_invariants.github_action"], env=env, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (2, "agent-invariants: cannot write the report: No space left on device\n")
    assert (tmp_path / "output").read_text() == "exit-code=2\nverdict=fail\nsarif=\nhtml=\n"


def test_without_a_contract_input_the_commands_own_default_is_read(tmp_path, capsys, monkeypatch):
    """The input's default was agent-invariants.json, so a repository with only a YAML contract
    failed ("agent-invariants.json: no such file") where the command reads agent-invariants.yaml
    (hunt 73). Left empty, the command looks as it does: .json, else .yaml, else .yml."""
    (tmp_path / "agent-invariants.yaml").write_text(
        "version: 1\nname: yaml-desk\nrules:\n  - {id: no-shell, kind: deny_tool, tool: shell}\n")
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "shell", "call_id": "c"}\n')
    monkeypatch.chdir(tmp_path)
    assert ACTION["inputs"]["contract"]["default"] == ""
    env = {**os.environ, "INPUT_TRACES": "t.jsonl", "GITHUB_OUTPUT": str(tmp_path / "output"),
           "RUNNER_TEMP": str(tmp_path)}
    env.pop("INPUT_CONTRACT", None)
    assert main(env) == 1
    assert capsys.readouterr().out.startswith("FAIL  yaml-desk\n")


def test_the_inputs_for_what_an_error_names_reach_the_command(tmp_path, capsys, monkeypatch):
    """A trace with a line over 1 MiB said to raise --max-line-bytes, and a contract lint refuses to
    pass --no-lint, which the action had no input for (hunt 73): it has both now."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "long", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    (tmp_path / "t.jsonl").write_text(json.dumps({"seq": 1, "type": "tool.call", "tool": "read", "call_id": "c",
                                                  "args": {"text": "x" * (1 << 20)}}) + "\n")
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "INPUT_CONTRACT": "c.json", "INPUT_TRACES": "t.jsonl",
           "GITHUB_OUTPUT": str(tmp_path / "output"), "RUNNER_TEMP": str(tmp_path)}
    assert main(env) == 2
    assert "raise it with --max-line-bytes" in capsys.readouterr().err
    assert main({**env, "INPUT_MAX_LINE_BYTES": "2097152"}) == 0
    assert capsys.readouterr().out.startswith("PASS  long\n")
    assert main({**env, "INPUT_MAX_LINE_BYTES": "2 MiB"}) == 2
    assert "max-line-bytes: '2 MiB' is no number of bytes" in capsys.readouterr().err
    assert main({**env, "INPUT_NO_LINT": "yes"}) == 2
    assert "no-lint: 'yes' is neither true nor false" in capsys.readouterr().err
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "unpassable", "rules": [
        {"id": "need", "kind": "require_event", "match": {"type": "tool.call", "tool": "a"}},
        {"id": "deny", "kind": "deny_tool", "tool": "a"}]}))
    assert main(env) == 2
    assert "(--no-lint to check anyway)" in capsys.readouterr().err
    assert main({**env, "INPUT_NO_LINT": "true"}) == 1
    assert capsys.readouterr().out.startswith("FAIL  unpassable\n")


def test_bad_input_in_a_file_is_annotated_on_that_file_and_line(tmp_path):
    """Found by an outside review of the Action: the annotation of bad input named the file and
    line in its text only, so it showed on the run, not on the file in the pull request. It is a
    file annotation now, when the problem names a file that is there; a problem of no file (or of
    a file that is missing) stays an annotation of the run."""
    trace = tmp_path / "bad trace.jsonl"
    trace.write_text('{"seq": 1, "type": "tool.call", "tool": "x"}\n{"seq": 2, "type": "tool.call", "tool": 5}\n')
    code, log, outputs, _ = _steps(tmp_path, {"contract": "examples/refund-desk/contract.json",
                                              "traces": f"'{trace}'"})
    assert (code, outputs["exit-code"]) == (2, "2")
    [annotation] = [line for line in log.splitlines() if line.startswith("::error ")]
    assert annotation.startswith(f"::error file={trace.as_posix()},line=2,title=agent-invariants::{trace}:2: $.tool")
    missing = _steps(tmp_path, {"contract": "missing_contract.json", "traces": "examples/refund-desk/baseline.jsonl"})
    assert "::error title=agent-invariants::missing_contract.json: no such file" in missing[1].splitlines()
