"""Hostile surroundings for the CLI: odd --output targets, closed or full standard streams, odd
files in traced folders, signals, and text that would act on a terminal or forge a log line.

Each case runs the real CLI in a subprocess and checks the exit code, the one escaped line on
stderr where there is an error, that no traceback is shown, and that no file is left behind.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support import contract, events, jsonl

RULES = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
BAD = jsonl(events({"type": "tool.call", "tool": "shell.exec", "call_id": "c"}))
GOOD = jsonl(events({"type": "tool.call", "tool": "fs.read", "call_id": "c"}))
ENV = {**os.environ, "NO_COLOR": "1"}


def run(folder: Path, *args: str, **options) -> subprocess.CompletedProcess[str]:
    """The CLI in `folder`; `options` go to subprocess.run (descriptors, preexec_fn, ...)."""
    options.setdefault("stdout", subprocess.PIPE)
    options.setdefault("stderr", subprocess.PIPE)
    options.setdefault("timeout", 60)
    result = subprocess.run([sys.executable, "-m", "agent_invariants", *args], check=False, cwd=folder, env=ENV,
                            **options)
    out = result.stdout.decode("utf-8", "replace") if result.stdout is not None else ""
    err = result.stderr.decode("utf-8", "replace") if result.stderr is not None else ""
    assert "Traceback" not in err, err
    return subprocess.CompletedProcess(result.args, result.returncode, out, err)


def one_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    """Exit 2, nothing on stdout, and exactly `message` as the one line on stderr."""
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"agent-invariants: {message}\n")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding contract.json and a failing trace.jsonl."""
    (tmp_path / "contract.json").write_text(json.dumps(RULES))
    (tmp_path / "trace.jsonl").write_text(BAD)
    return tmp_path


CHECK = ("check", "--contract", "contract.json", "--trace", "trace.jsonl")


def names(path: Path) -> list[str]:
    return sorted(os.listdir(path))


SLOW_RULES = contract(*[{"id": f"r{i}", "kind": "deny_tool", "tool": f"*q{i}*"} for i in range(40)])


def slow_runs(folder: Path, count: int, *sides: str, size: int = 20000) -> None:
    """slow.json, and folders `sides` of `count` links each to slow.jsonl: forty globs against
    `size` distinct tool names (each matched afresh), some tenths of a second per trace."""
    (folder / "slow.json").write_text(json.dumps(SLOW_RULES))
    trace = folder / "slow.jsonl"
    trace.write_text(jsonl(events(*[{"type": "tool.call", "tool": f"tool{n}"} for n in range(size)])))
    for side in sides:
        (folder / side).mkdir()
        for number in range(count):
            (folder / side / f"t{number:02}.jsonl").symlink_to(trace)


# ----------------------------------------------------------------------------------------------
# --output


@pytest.mark.slow
def test_output_to_a_device_writes_in_place_and_never_replaces_it(folder):
    """`-o /dev/null` used to rename a temporary file over the device."""
    before = os.stat("/dev/null")
    assert stat.S_ISCHR(before.st_mode), "/dev/null was already replaced by something else"
    assert run(folder, *CHECK, "-o", "/dev/null").returncode == 1
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    expected = run(folder, *CHECK).stdout
    to_stdout = run(folder, *CHECK, "-o", "/dev/stdout")
    to_stderr = run(folder, *CHECK, "-o", "/dev/stderr")
    assert (to_stdout.returncode, to_stdout.stdout, to_stdout.stderr) == (1, expected, "")
    assert (to_stderr.returncode, to_stderr.stdout, to_stderr.stderr) == (1, "", expected)
    assert names(folder) == ["contract.json", "trace.jsonl"]


@pytest.mark.slow
def test_output_to_a_fifo_is_written_in_place(folder):
    os.mkfifo(folder / "report.fifo")
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append((folder / "report.fifo").read_bytes()))
    reader.start()
    result = run(folder, *CHECK, "-o", "report.fifo")
    reader.join(timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")
    assert received == [run(folder, *CHECK).stdout.encode()]
    assert stat.S_ISFIFO(os.lstat(folder / "report.fifo").st_mode)
    assert names(folder) == ["contract.json", "report.fifo", "trace.jsonl"]


@pytest.mark.slow
def test_output_to_stdout_redirected_to_a_file_writes_at_its_offset_like_the_shell(folder):
    """Replacing the file behind /dev/stdout would lose what the shell writes after us."""
    cli = f"{sys.executable} -m agent_invariants {' '.join(CHECK)} -o /dev/stdout"
    command = f"{{ echo before; {cli}; echo after; }} > log"
    subprocess.run(command, check=False, shell=True, cwd=folder, env=ENV, timeout=60)
    assert (folder / "log").read_text() == "before\n" + run(folder, *CHECK).stdout + "after\n"


@pytest.mark.slow
def test_output_through_a_symlink_replaces_the_target_and_keeps_the_link(folder):
    (folder / "reports").mkdir()
    (folder / "report.txt").symlink_to("reports/latest.txt")   # dangling until the first run
    for _ in range(2):
        assert run(folder, *CHECK, "-o", "report.txt").returncode == 1
        assert os.readlink(folder / "report.txt") == "reports/latest.txt"
        assert (folder / "reports/latest.txt").read_text() == run(folder, *CHECK).stdout
    assert names(folder / "reports") == ["latest.txt"]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_output_file_gets_the_mode_the_umask_gives(folder, umask, mode):
    """mkstemp makes 0600 files; a report is an ordinary file."""
    assert run(folder, *CHECK, "-o", "report.txt", preexec_fn=lambda: os.umask(umask)).returncode == 1
    assert stat.S_IMODE(os.stat(folder / "report.txt").st_mode) == mode


@pytest.mark.slow
def test_an_existing_output_file_keeps_its_mode(folder):
    report = folder / "report.txt"
    report.write_text("old")
    report.chmod(0o640)
    assert run(folder, *CHECK, "-o", "report.txt").returncode == 1
    assert stat.S_IMODE(os.stat(report).st_mode) == 0o640
    assert report.read_text() == run(folder, *CHECK).stdout


@pytest.mark.slow
def test_output_into_a_missing_folder_or_onto_a_folder_is_refused(folder):
    """A missing folder is not created: a typo should not scatter reports."""
    (folder / "out").mkdir()
    one_error(run(folder, *CHECK, "-o", "missing/report.txt"), "missing/report.txt: cannot write: no such folder")
    one_error(run(folder, *CHECK, "-o", "out"), "out: is a directory")
    one_error(run(folder, *CHECK, "-o", "trace.jsonl/report.txt"),
              "trace.jsonl/report.txt: cannot write: Not a directory")
    assert names(folder) == ["contract.json", "out", "trace.jsonl"] and names(folder / "out") == []


@pytest.mark.parametrize("report", ["text", "json", "junit", "sarif", "markdown", "github", "html"])
def test_evidence_nested_as_deep_as_a_trace_may_is_reported_in_every_format(folder, report):
    """An output nested 500 levels in all (the event is the first) fails an output_match; its
    evidence holds the value, and no format may give up on it (SARIF recursed and crashed)."""
    deep: object = 1
    for _ in range(497):
        deep = {"b": deep}
    (folder / "deep.json").write_text(json.dumps(
        {"version": 2, "name": "deep", "rules": [{"id": "o", "kind": "output_match", "match": {"a": 1}}]}))
    (folder / "good.jsonl").write_text(json.dumps({"seq": 1, "type": "run.completed", "output": {"a": 1}}) + "\n")
    (folder / "deep.jsonl").write_text(json.dumps({"seq": 1, "type": "run.completed", "output": {"a": deep}}) + "\n")
    checked = run(folder, "check", "-c", "deep.json", "-t", "deep.jsonl", "-f", report)
    compared = run(folder, "compare", "-c", "deep.json", "-b", "good.jsonl", "-k", "deep.jsonl", "-f", report)
    assert (checked.returncode, compared.returncode) == (1, 1)
    assert "The final output does not match: /output/a expected 1" in checked.stdout
    assert compared.stdout


def test_junit_attributes_show_line_breaks_and_overrides_from_the_input_escaped(folder):
    """A name is an attribute a test runner's page shows on one line: a line break or a
    bidirectional override from the contract or trace shows as `\\n`, `\\u202e` there, as in the
    text report (the failure's body keeps the message as the JSON report gives it)."""
    import xml.etree.ElementTree as ET

    (folder / "odd.json").write_text(json.dumps({"version": 1, "name": "desk\u202e\nx", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}))
    result = run(folder, "check", "-c", "odd.json", "-t", "trace.jsonl", "-f", "junit")
    assert result.returncode == 1
    suite = ET.fromstring(result.stdout).find("testsuite")
    assert suite is not None
    assert suite.get("name") == "desk\\u202e\\nx · trace.jsonl"
    [case] = suite.iter("testcase")
    assert case.get("name") == "no-shell"
    failure = case.find("failure")
    assert failure is not None
    assert failure.text == "trace.jsonl:1 seq 1: [deny_tool.denied] Denied tool called: shell.exec."


@pytest.mark.parametrize("number, read_as", [("1e400", "Infinity"), ("9" * 5000, "Infinity"), ("-1e400", "-Infinity")])
def test_a_number_beyond_any_double_is_named_so_in_a_mismatch(folder, number, read_as):
    """JavaScript reads it as Infinity, which `$gt` (finite numbers only) never holds for; JSON
    has no Infinity, so the evidence shows null, and the message says what the number was."""
    (folder / "gt.json").write_text(json.dumps({"version": 2, "name": "gt", "rules": [
        {"id": "n", "kind": "tool_args", "tool": "t", "match": {"n": {"$gt": 5}}}]}))
    (folder / "big.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "t", "args": {"n": ' + number + "}}\n")
    result = run(folder, "check", "-c", "gt.json", "-t", "big.jsonl", "-f", "json")
    assert result.returncode == 1
    [violation] = json.loads(result.stdout)["violations"]
    assert violation["message"] == ("Args of t at seq 1 do not match: /args/n expected {\"$gt\":5}, got a number "
                                    f"beyond any double (read as {read_as}).")
    assert violation["evidence"]["mismatches"][0]["actual"] is None


@pytest.mark.parametrize("number, read_as", [("1e400", "Infinity"), ("9" * 5000, "Infinity"), ("-1e400", "-Infinity")])
def test_a_candidate_beyond_any_double_is_named_so_in_a_mismatch(folder, number, read_as):
    """Found by a spec-words reading of the grammar: a result holding such a number, the candidate
    of a reference, was shown as `expected any of [null]`, which names another value (evidence,
    JSON, holds null: it has no Infinity); the message writes it as JavaScript does."""
    (folder / "ref.json").write_text(json.dumps({"version": 2, "name": "ref", "rules": [
        {"id": "r", "kind": "tool_args", "tool": "t", "match": {"a": {"$from_result": {"tool": "g", "path": "v"}}}}]}))
    (folder / "big.jsonl").write_text(
        '{"seq": 1, "type": "tool.call", "tool": "g", "call_id": "g1", "args": {}}\n'
        '{"seq": 2, "type": "tool.result", "call_id": "g1", "ok": true, "result": {"v": [' + number + ', null]}}\n'
        '{"seq": 3, "type": "tool.call", "tool": "t", "call_id": "c", "args": {"a": 1}}\n')
    result = run(folder, "check", "-c", "ref.json", "-t", "big.jsonl", "-f", "json")
    assert result.returncode == 1
    [violation] = json.loads(result.stdout)["violations"]
    assert violation["message"] == (f"Args of t at seq 3 do not match: /args/a expected any of [[{read_as},null]], "
                                    "got 1.")
    assert violation["evidence"]["mismatches"][0]["expected"] == {"any_of": [[None, None]]}


def test_output_dash_is_standard_output_not_a_file_named_dash(folder):
    """`-` is standard input for the inputs; for `--output` it is standard output."""
    expected = run(folder, *CHECK)
    assert expected.returncode == 1
    result = run(folder, *CHECK, "-o", "-")
    assert (result.returncode, result.stdout) == (1, expected.stdout)
    summary = run(folder, "summary", "-t", "trace.jsonl", "-o", "-")
    assert (summary.returncode, summary.stdout) == (0, run(folder, "summary", "-t", "trace.jsonl").stdout)
    assert names(folder) == ["contract.json", "trace.jsonl"]


@pytest.mark.parametrize("args, message", [
    (("-o", ""), "an empty argument after -o (an unset variable?): name a file or value"),
    (("--output=",), "--output: the value is empty"),
], ids=["short", "equals"])
def test_an_empty_option_value_is_named_not_read_as_the_current_folder(folder, args, message):
    one_error(run(folder, *CHECK, *args), message)
    one_error(run(folder, "check", "-c", "", "-t", "trace.jsonl"),
              "an empty argument after -c (an unset variable?): name a file or value")
    one_error(run(folder, "validate", ""),
              "an empty argument after validate (an unset variable?): name a file or value")
    assert names(folder) == ["contract.json", "trace.jsonl"]


def test_output_onto_a_file_whose_folder_takes_no_new_files_says_so():
    """/proc/version exists, but no temporary file can be made beside it to replace it."""
    result = run(Path("/tmp"), "summary", "-t", str(Path(__file__).parent.parent / "agent_invariants" / "samples"
                                                        / "agent-trace.jsonl"), "-o", "/proc/version")
    one_error(result, "/proc/version: cannot write: its folder takes no new files")


def test_a_sarif_root_that_is_no_folder_is_named_as_such(folder):
    """Without this, every file was said to lie "outside" a root that does not exist."""
    sarif = (*CHECK, "-f", "sarif", "--sarif-root")
    one_error(run(folder, *sarif, "missing"), "--sarif-root missing: no such folder")
    one_error(run(folder, *sarif, "trace.jsonl"), "--sarif-root trace.jsonl: not a folder")
    assert run(folder, *sarif, ".").returncode == 1


@pytest.mark.parametrize("value, problem", [
    ("nan", 'must be a number, got "nan"'), ("inf", 'must be a number, got "inf"'), ("x", 'must be a number, got "x"'),
    ("2", "must be 1.0 or less, got 2"), ("-0.5", "must be 0.0 or more, got -0.5"),
])
def test_a_bad_min_score_is_worded_like_the_other_option_errors(folder, value, problem):
    one_error(run(folder, "mutate", "-c", "contract.json", "-t", "trace.jsonl", "--min-score", value),
              f"Invalid value for '--min-score': {problem} (try 'agent-invariants mutate --help')")


@pytest.mark.slow
def test_output_onto_an_input_is_refused_and_the_input_kept(folder):
    """`-o trace.jsonl` is a typo for `-t`; writing there would destroy the trace."""
    one_error(run(folder, "check", "-c", "contract.json", "-t", ".", "-o", "trace.jsonl"),
              "trace.jsonl: is also an input (./trace.jsonl); refusing to overwrite it")
    (folder / "link.jsonl").symlink_to("trace.jsonl")
    one_error(run(folder, *CHECK, "-o", "trace.jsonl"),
              "trace.jsonl: is also an input (trace.jsonl); refusing to overwrite it")
    one_error(run(folder, *CHECK, "-o", "contract.json"),
              "contract.json: is also an input (contract.json); refusing to overwrite it")
    one_error(run(folder, "check", "-c", "contract.json", "-t", "link.jsonl", "-o", "trace.jsonl"),
              "trace.jsonl: is also an input (link.jsonl); refusing to overwrite it")
    one_error(run(folder, "summary", "-t", "trace.jsonl", "-o", "link.jsonl"),
              "link.jsonl: is also an input (trace.jsonl); refusing to overwrite it")
    assert (folder / "trace.jsonl").read_text() == BAD
    assert json.loads((folder / "contract.json").read_text()) == RULES


def test_output_onto_an_unpaired_trace_of_a_compared_folder_is_refused_and_the_trace_kept(folder):
    """A trace in a folder given to compare is an input even when no trace of the other side
    pairs with it."""
    for side in ("base", "cand"):
        (folder / side).mkdir()
        (folder / side / "one.jsonl").write_text(GOOD)
    (folder / "base" / "alone.jsonl").write_text(BAD)
    one_error(run(folder, "compare", "-c", "contract.json", "-b", "base", "-k", "cand", "-o", "base/alone.jsonl"),
              "base/alone.jsonl: is also an input (base/alone.jsonl); refusing to overwrite it")
    assert (folder / "base" / "alone.jsonl").read_text() == BAD


@pytest.mark.slow
def test_output_onto_a_profile_or_a_corpus_trace_is_refused_and_the_input_kept(folder):
    """A mapping profile and the traces of `mutate --corpus` are inputs too: `-o` there replaced
    them with the report (exit 0), and the next run failed on them."""
    profile = {"rules": [{"when": {"name": "review"}, "emit": {"type": "approval.granted"}}]}
    (folder / "review.profile.json").write_text(json.dumps(profile))
    spans = Path(__file__).resolve().parents[1] / "examples" / "imports" / "pydantic-ai-review.otlp.jsonl"
    for command in (["convert", str(spans)], ["summary", "-t", str(spans), "--input-format", "auto"],
                    ["check", "-c", "contract.json", "-t", str(spans), "--input-format", "auto"],
                    ["compare", "-c", "contract.json", "-b", str(spans), "-k", str(spans), "--input-format", "auto"]):
        one_error(run(folder, *command, "--profile", "review.profile.json", "-o", "review.profile.json"),
                  "review.profile.json: is also an input (review.profile.json); refusing to overwrite it")
    assert json.loads((folder / "review.profile.json").read_text()) == profile
    (folder / "corpus").mkdir()
    (folder / "corpus" / "good.jsonl").write_text(GOOD)
    one_error(run(folder, "mutate", "-c", "contract.json", "-t", "trace.jsonl", "--corpus", "corpus",
                  "-o", "corpus/good.jsonl"),
              "corpus/good.jsonl: is also an input (corpus/good.jsonl); refusing to overwrite it")
    assert (folder / "corpus" / "good.jsonl").read_text() == GOOD


@pytest.mark.slow
def test_output_onto_a_pack_the_contract_extends_is_refused_and_the_pack_kept(folder):
    """A pack named in `extends` is read as the contract is: `-o` there replaced it (exit 0)."""
    pack = {"name": "pack", "rules": [{"id": "no-x", "kind": "deny_tool", "tool": "x"}]}
    (folder / "packs").mkdir()
    (folder / "packs" / "pack.json").write_text(json.dumps(pack))
    (folder / "extending.json").write_text(json.dumps({"version": 1, "name": "e", "extends": ["packs/pack.json"],
                                                       "rules": []}))
    for command in (["validate"], ["lint"], ["check", "-t", "trace.jsonl"], ["mutate", "-t", "trace.jsonl"],
                    ["compare", "-b", "trace.jsonl", "-k", "trace.jsonl"], ["stability", "trace.jsonl", "trace.jsonl"]):
        one_error(run(folder, *command, "-c", "extending.json", "-o", "packs/pack.json"),
                  "packs/pack.json: is also an input (packs/pack.json); refusing to overwrite it")
    assert json.loads((folder / "packs" / "pack.json").read_text()) == pack


@pytest.mark.slow
def test_stability_and_convert_read_standard_input_once(folder):
    """As check and mutate do: the contract and a trace cannot both come from standard input
    (stability judged the emptied stream as a trace without output), nor two inputs of convert
    (it said the second was empty)."""
    one_error(run(folder, "stability", "-c", "-", "-", "trace.jsonl", input=(folder / "contract.json").read_bytes()),
              "the contract and a trace cannot both be read from standard input (-)")
    one_error(run(folder, "convert", "--from", "mcp-log", "-", "-", input=b""),
              "- (standard input) can be read once: give it as one input at most")


@pytest.mark.slow
def test_a_write_error_names_the_file_and_leaves_the_old_report_whole(folder):
    """/dev/full fails every write; a file-size limit makes a regular file fail half-way, as a
    full disk would (Python ignores SIGXFSZ, so the write reports EFBIG)."""
    one_error(run(folder, *CHECK, "-o", "/dev/full"), "/dev/full: cannot write: No space left on device")
    (folder / "report.txt").write_text("the previous report\n")
    limited = run(folder, *CHECK, "-f", "json", "-o", "report.txt",
                  preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200)))
    one_error(limited, "report.txt: cannot write: File too large")
    assert (folder / "report.txt").read_text() == "the previous report\n"
    assert names(folder) == ["contract.json", "report.txt", "trace.jsonl"]


# ----------------------------------------------------------------------------------------------
# standard streams: full, closed, broken


EVERY_COMMAND = [
    pytest.param(CHECK, id="check"),
    pytest.param(("compare", "-c", "contract.json", "-b", "trace.jsonl", "-k", "trace.jsonl"), id="compare"),
    pytest.param(("check", "-c", "contract.json", "-t", "."), id="check-batch"),
    pytest.param(("validate", "-c", "contract.json"), id="validate"),
    pytest.param(("summary", "-t", "trace.jsonl"), id="summary"),
    pytest.param(("explain",), id="explain"),
    pytest.param(("explain", "deny_tool"), id="explain-kind"),
    pytest.param(("init", "new"), id="init"),
    pytest.param(("--version",), id="--version"),
    pytest.param(("--help",), id="--help"),
    pytest.param(("check", "--help"), id="check--help"),
    pytest.param((), id="no-arguments"),
]


@pytest.mark.parametrize("args", EVERY_COMMAND)
def test_a_full_stdout_is_exit_2_with_one_line(folder, args):
    with open("/dev/full", "wb") as full:
        one_error(run(folder, *args, stdout=full), "standard output: cannot write: No space left on device")


@pytest.mark.slow
@pytest.mark.parametrize("args", EVERY_COMMAND)
def test_a_closed_stdout_is_exit_2_with_one_line(folder, args):
    """Started with `>&-`, Python has no sys.stdout at all."""
    one_error(run(folder, *args, stdout=None, preexec_fn=lambda: os.close(1)), "standard output is closed")


@pytest.mark.parametrize("output", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "link-to-stdout"])
@pytest.mark.parametrize("args", [CHECK, ("validate", "-c", "contract.json"), ("summary", "-t", "trace.jsonl")],
                         ids=["check", "validate", "summary"])
def test_an_output_naming_a_closed_stdout_is_exit_2_with_one_line(folder, args, output):
    """`-o /dev/stdout` after `>&-` wrote the report to the null device the closed descriptor is
    held on, and said nothing: exit 1 or 0, the report gone (outside review)."""
    (folder / "link-to-stdout").symlink_to("/dev/stdout")
    one_error(run(folder, *args, "-o", output, stdout=None, preexec_fn=lambda: os.close(1)),
              f"{output}: cannot write: it is standard output, which the command was started without")


def test_an_output_naming_a_closed_stderr_is_exit_2(folder):
    """Said with the exit code alone: stderr is closed too."""
    result = run(folder, *CHECK, "-o", "/dev/stderr", stderr=None, preexec_fn=lambda: os.close(2))
    assert (result.returncode, result.stdout) == (2, "")


def test_the_null_device_named_as_output_is_written_with_stdout_closed(folder):
    """Only a name that leads to the closed descriptor is refused: `-o /dev/null` is what it says."""
    result = run(folder, *CHECK, "-o", "/dev/null", stdout=None, preexec_fn=lambda: os.close(1))
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")


@pytest.mark.slow
@pytest.mark.parametrize("args", EVERY_COMMAND)
def test_a_pipe_closed_before_writing_is_exit_2_never_1(folder, args):
    """Exit 1 means "violations found" to CI; a reader that went away is not that."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        one_error(run(folder, *args, stdout=writer), "standard output: cannot write: Broken pipe")
    finally:
        os.close(writer)


@pytest.mark.slow
def test_a_pipe_closed_while_writing_is_exit_2(folder):
    """`agent-invariants check ... | head -c 10` with a report far larger than a pipe holds."""
    (folder / "trace.jsonl").write_text(jsonl(events(*[{"type": "tool.call", "tool": "shell.x"}] * 5000)))
    process = subprocess.Popen([sys.executable, "-m", "agent_invariants", *CHECK, "-f", "json"], cwd=folder,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout.read(10) == b'{\n  "schem'
    process.stdout.close()
    _, errors = process.communicate(timeout=60)
    assert (process.returncode, errors) == (2, b"agent-invariants: standard output: cannot write: Broken pipe\n")


@pytest.mark.slow
def test_a_closed_stderr_keeps_errors_off_stdout(folder):
    result = run(folder, "check", "-c", "contract.json", "-t", "missing.jsonl", stderr=None,
                 preexec_fn=lambda: os.close(2))
    assert (result.returncode, result.stdout) == (2, "")


@pytest.mark.slow
@pytest.mark.parametrize("args", [("check", "-c", "contract.json", "-t", "-"), ("summary", "-t", "-")])
def test_a_closed_stdin_is_an_error_not_an_empty_trace(folder, args):
    """An empty trace would pass; with `<&-` there is no trace at all."""
    result = run(folder, *args, stdin=None, preexec_fn=lambda: os.close(0))
    one_error(result, "<stdin>: cannot read: standard input is closed")


@pytest.mark.slow
def test_a_progress_display_whose_terminal_goes_away_does_not_stop_the_run(folder):
    """The progress line goes to a terminal; closing the terminal mid-run makes its writes fail."""
    slow_runs(folder, 10, "runs")
    terminal, stderr = os.openpty()
    process = subprocess.Popen([sys.executable, "-m", "agent_invariants", "check", "-c", "slow.json",
                                "-t", "runs", "-j", "2", "-f", "json"], cwd=folder, env=ENV,
                               stdout=subprocess.PIPE, stderr=stderr)
    os.close(stderr)
    assert b"checking traces" in os.read(terminal, 1000)   # the display started
    os.close(terminal)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    assert json.loads(output)["traces"] == 10


# ----------------------------------------------------------------------------------------------
# folder walks and globs


@pytest.mark.parametrize("args", [("check", "--contract", "gone", "--trace", "trace.jsonl"),
                                  ("check", "--contract", "contract.json", "--trace", "gone"),
                                  ("validate", "--contract", "gone"), ("summary", "--trace", "gone"),
                                  ("convert", "--from", "otel", "gone")])
def test_a_file_named_by_a_link_that_leads_nowhere_is_called_that(folder, args):
    """The link is there, the file it names is not: "no such file" would send the user looking
    for a file that is in plain sight."""
    (folder / "gone").symlink_to(folder / "moved-away.json")
    one_error(run(folder, *args), "gone: is a symbolic link that leads nowhere (its target is missing, or a loop)")


@pytest.mark.parametrize(("encoding", "name"), [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize("marked", [True, False])
@pytest.mark.parametrize("args", [("check", "--contract", "wide", "--trace", "trace.jsonl"),
                                  ("check", "--contract", "contract.json", "--trace", "wide"),
                                  ("convert", "--from", "otel", "wide")])
def test_a_utf_16_or_32_file_is_named_so(folder, encoding, name, big_endian, marked, args):
    """Windows PowerShell 5 writes redirected output as UTF-16: "invalid UTF-8 at byte 1" would
    leave the user guessing why a file that opens fine in an editor cannot be read. Told by its
    byte order mark, or without one by the NUL bytes of its first character."""
    text = (folder / ("contract.json" if args[2] == "wide" else "trace.jsonl")).read_text()
    codec = f"{encoding}-{'be' if big_endian else 'le'}"
    mark = "\ufeff".encode(codec) if marked else b""
    (folder / "wide").write_bytes(mark + text.encode(codec))
    told = f"it starts with a {name} byte order mark" if marked else \
        f"its first character is {'two' if name == 'UTF-16' else 'four'} bytes"
    one_error(run(folder, *args), f"wide:1: is {name} text ({told}), not UTF-8: "
                                  f"save it as UTF-8 (e.g. iconv -f {name} -t UTF-8)")


@pytest.mark.slow
def test_folder_walks_take_regular_files_only(folder):
    """A FIFO named like a trace used to block the batch; sockets are skipped too; a link to a
    regular file is followed; a link back up the tree is not walked. A broken link named like a
    trace was skipped as well, without a word, until the fifth hunt: it is now a trace that cannot
    be read, said on stderr, and the batch exits 2."""
    runs = folder / "runs"
    (runs / "sub").mkdir(parents=True)
    (runs / "a.jsonl").write_text(GOOD)
    os.mkfifo(runs / "fifo.jsonl")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(runs / "sub" / "socket.jsonl"))
    (runs / "broken.jsonl").symlink_to("nowhere.jsonl")
    (runs / "linked.jsonl").symlink_to("../trace.jsonl")
    (runs / "sub" / "up").symlink_to("..")
    try:
        for spec in ("runs", "runs/**/*.jsonl", "runs/*.jsonl"):
            result = run(folder, "check", "-c", "contract.json", "-t", spec, "-f", "json", timeout=30)
            assert result.returncode == 2, result.stderr
            assert result.stderr == ("agent-invariants: runs/broken.jsonl: is a symbolic link that leads nowhere "
                                     "(its target is missing, or a loop)\n")
            assert [report["trace"] for report in json.loads(result.stdout)["reports"]] == [
                "runs/a.jsonl", "runs/linked.jsonl"]
    finally:
        listener.close()


@pytest.mark.slow
def test_a_recursive_glob_does_not_follow_symlink_loops(folder):
    """Two links back to `.` made glob's `**` walk exponential (2^40 paths)."""
    runs = folder / "runs"
    (runs / "deep").mkdir(parents=True)
    (runs / "deep" / "b.jsonl").write_text(GOOD)
    (runs / "a.jsonl").write_text(GOOD)
    (runs / "left").symlink_to(".")
    (runs / "right").symlink_to(".")
    started = time.monotonic()
    result = run(folder, "check", "-c", "contract.json", "-t", "runs/**/*.jsonl", "-f", "json")
    assert time.monotonic() - started < 30
    assert result.returncode == 0, result.stderr
    assert [report["trace"] for report in json.loads(result.stdout)["reports"]] == ["runs/a.jsonl",
                                                                                   "runs/deep/b.jsonl"]


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_is_named_and_refused(folder):
    """Its undecodable bytes cannot go into a JSON report; the others are still checked."""
    (folder / "runs").mkdir()
    (folder / "runs" / "ok.jsonl").write_text(GOOD)
    Path(os.fsdecode(bytes(folder / "runs") + b"/bad\xff.jsonl")).write_text(GOOD)
    result = run(folder, "check", "-c", "contract.json", "-t", "runs", "-f", "json")
    assert result.returncode == 2
    assert result.stderr == ("agent-invariants: runs/bad\\udcff.jsonl: file name is not valid UTF-8; "
                             "rename the file to read it\n")
    report = json.loads(result.stdout)
    assert [r["trace"] for r in report["reports"]] == ["runs/ok.jsonl"]
    assert [f["trace"] for f in report["failures"]] == ["runs/bad\\udcff.jsonl"]


def test_every_command_refuses_a_file_name_that_is_not_utf8_before_reading_it(folder):
    """`mutate -f json` and `convert` read such a file and failed with a traceback when their
    output named it; `record --out` ran the agent, wrote the trace, and refused it afterwards."""
    bad = os.fsdecode(b"bad\xff.jsonl")
    (folder / bad).write_text(GOOD)
    said = "agent-invariants: bad\\udcff.jsonl: file name is not valid UTF-8; rename the file to read it\n"
    for args in (["mutate", "-c", "contract.json", "-t", bad, "-f", "json"], ["convert", bad]):
        result = run(folder, *args)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", said), args
    # a contract so named is read, as the Node tool read it: no report quotes a contract's path
    named = os.fsdecode(b"c\xff.json")
    os.rename(folder / "contract.json", folder / named)
    assert run(folder, "check", "-c", named, "-t", "trace.jsonl", "-f", "json").returncode == 1
    os.rename(folder / named, folder / "contract.json")
    ran = folder / "ran"
    (folder / "fixtures.json").write_text('{"version": 1, "tools": {}}')
    result = run(folder, "record", "-c", "contract.json", "--fixtures", "fixtures.json", "--out",
                 os.fsdecode(b"t\xff.jsonl"), "--", sys.executable, "-c", f"open({str(ran)!r}, 'w')")
    assert (result.returncode, result.stderr) == (2, "agent-invariants: t\\udcff.jsonl: file name is not valid "
                                                     "UTF-8, which the report could not name: choose another\n")
    assert not ran.exists() and sorted(os.listdir(folder)) == ["bad\udcff.jsonl", "contract.json", "fixtures.json",
                                                               "trace.jsonl"]


# ----------------------------------------------------------------------------------------------
# devices as traces, --jobs


def peak_memory(folder: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run the CLI from a small wrapper that prints the child's peak memory (bytes) on stdout and
    passes its stderr and exit code through."""
    wrapper = ("import resource, subprocess, sys\n"
               "done = subprocess.run([sys.executable, '-m', 'agent_invariants', *sys.argv[1:]])\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
               "sys.exit(done.returncode)\n")
    measured = subprocess.run([sys.executable, "-c", wrapper, *args], check=False, cwd=folder, env=ENV,
                              capture_output=True, text=True, timeout=60)
    assert "Traceback" not in measured.stderr, measured.stderr
    return measured, int(measured.stdout)


@pytest.mark.slow
def test_dev_zero_as_a_trace_is_bounded_by_the_line_limit(folder):
    result, memory = peak_memory(folder, "check", "-c", "contract.json", "-t", "/dev/zero")
    assert result.returncode == 2
    assert result.stderr.startswith("agent-invariants: /dev/zero:1: line is at least ")
    assert "over the 1,048,576-byte limit" in result.stderr and len(result.stderr.splitlines()) == 1
    assert memory < 150 << 20, memory


@pytest.mark.slow
def test_dev_urandom_as_a_trace_is_one_error_naming_it(folder):
    result = run(folder, "check", "-c", "contract.json", "-t", "/dev/urandom", timeout=30)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("agent-invariants: /dev/urandom:") and len(result.stderr.splitlines()) == 1


@pytest.mark.slow
def test_jobs_zero_is_a_usage_error(folder):
    result = run(folder, "check", "-c", "contract.json", "-t", ".", "--jobs", "0")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("agent-invariants: Invalid value for '--jobs'") and result.stderr.count("\n") == 1


def processes(*, parent: int | None = None, group: int | None = None) -> list[str]:
    """Ids of the processes (zombies included) with this parent or in this process group."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                _, parent_id, group_id = handle.read().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if str(parent) == parent_id or str(group) == group_id:
            found.append(entry)
    return found


@pytest.mark.slow
def test_huge_jobs_start_a_bounded_number_of_workers(folder):
    """--jobs 100000 on 20 traces once started 20 processes (on 100000 traces, 100000)."""
    slow_runs(folder, 20, "runs", size=5000)
    process = subprocess.Popen([sys.executable, "-m", "agent_invariants", "check", "-c", "slow.json",
                                "-t", "runs", "-j", "100000", "-f", "json", "-o", "report.json"], cwd=folder,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = []
    while process.poll() is None:
        seen.append(len(processes(parent=process.pid)))
        time.sleep(0.05)
    assert process.communicate(timeout=60) == (b"", b"") and process.returncode == 0
    assert json.loads((folder / "report.json").read_text())["traces"] == 20
    assert 1 <= max(seen) <= 4 * os.cpu_count(), seen


# ----------------------------------------------------------------------------------------------
# Ctrl-C and SIGTERM


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("args", [
    pytest.param(("check", "-c", "slow.json", "-t", "runs", "-j", "2"), id="check"),
    pytest.param(("compare", "-c", "slow.json", "-b", "runs", "-k", "other", "-j", "2"), id="compare"),
])
def test_a_signal_stops_a_batch_at_once_leaving_no_file_or_process(folder, args, signum, code):
    """The workers used to finish the whole queue first; the signal reaches the whole group, as
    Ctrl-C at a terminal does."""
    slow_runs(folder, 40, "runs", "other")
    before = names(folder)
    process = subprocess.Popen([sys.executable, "-m", "agent_invariants", *args, "-f", "json", "-o", "report.json"],
                               cwd=folder, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    time.sleep(1.5)   # the workers are busy: the batch takes several seconds
    assert process.poll() is None, "the batch ended before the signal: make the traces longer"
    sent = time.monotonic()
    os.killpg(process.pid, signum)
    output, errors = process.communicate(timeout=30)
    assert time.monotonic() - sent < 5
    assert (process.returncode, output, errors) == (code, b"", b"")
    assert names(folder) == before
    time.sleep(0.2)
    assert processes(group=process.pid) == []


@pytest.mark.slow
def test_ctrl_c_outside_a_batch_exits_130(folder):
    """Ctrl-C while the reader waits for a FIFO's writer: 130, nothing printed, no traceback."""
    os.mkfifo(folder / "pipe.jsonl")
    process = subprocess.Popen([sys.executable, "-m", "agent_invariants", "check", "-c", "contract.json",
                                "-t", "pipe.jsonl"], cwd=folder, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(1)
    assert process.poll() is None
    os.killpg(process.pid, signal.SIGINT)
    assert process.communicate(timeout=30) == (b"", b"") and process.returncode == 130


@pytest.mark.slow
def test_ctrl_c_during_a_side_by_side_compare_exits_130(folder):
    """A baseline of 8 MiB or more is checked in a second process beside the candidate."""
    slow_runs(folder, 0, size=160000)
    assert os.path.getsize(folder / "slow.jsonl") > 8 << 20
    with subprocess.Popen([sys.executable, "-m", "agent_invariants", "compare", "-c", "slow.json",
                           "-b", "slow.jsonl", "-k", "slow.jsonl", "-j", "2"], cwd=folder, env=ENV,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True) as process:
        deadline = time.monotonic() + 10   # the signal goes as soon as the second process is there
        while len(processes(group=process.pid)) < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process.poll() is None, "the compare ended before the signal: make it slower"
        sent = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)
        assert process.communicate(timeout=30) == (b"", b"") and process.returncode == 130
    assert time.monotonic() - sent < 5
    time.sleep(0.2)
    assert processes(group=process.pid) == []


# ----------------------------------------------------------------------------------------------
# terminal and log injection


HOSTILE = "x\x1b[2J\x1b]0;title\x07\r\nagent-invariants: all good\u202e\u2066\x9b"
SHOWN = "x\\x1b[2J\\x1b]0;title\\x07\\r\\nagent-invariants: all good\\u202e\\u2066\\x9b"


def test_hostile_file_names_from_a_folder_are_escaped_on_stderr_and_in_text(folder):
    (folder / "runs").mkdir()
    (folder / "runs" / f"{HOSTILE}.jsonl").write_text("not json\n")
    (folder / "runs" / "ok.jsonl").write_text(GOOD)
    result = run(folder, "check", "-c", "contract.json", "-t", "runs")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"agent-invariants: runs/{SHOWN}.jsonl:1: invalid JSON")
    assert f"ERROR  runs/{SHOWN}.jsonl\n" in result.stdout
    assert not any(char in result.stdout for char in "\x1b\x07\r\u202e\u2066\x9b")


def test_hostile_contract_keys_stay_one_escaped_line_each_and_are_cut(folder):
    rules = [{"id": "a", "kind": "deny_tool", "tool": "x", HOSTILE: 1},
             {"id": "b", "kind": "deny_tool", "tool": "x", "k" * 5000: 1}]
    (folder / "contract.json").write_text(json.dumps(contract(*rules)))
    result = run(folder, "validate", "-c", "contract.json")
    assert (result.returncode, result.stdout) == (2, "")
    first, second = result.stderr.splitlines()
    allowed = "expected one of: id, severity, description, tool"
    # a key that is not plain is written as a JSON string in brackets, and the line escaped after
    key = '"x\\u001b[2J\\u001b]0;title\\u0007\\r\\nagent-invariants: all good\\u202e\\u2066\\x9b"'
    assert first == f"agent-invariants: contract.json:1: $.rules[0][{key}]: unknown field; {allowed}"
    path = "$.rules[1]." + "k" * 5000
    assert second == f"agent-invariants: contract.json:1: {path[:200]}…: unknown field; {allowed}"


@pytest.mark.slow
def test_hostile_names_in_options_and_arguments_are_escaped(folder):
    missing = run(folder, "check", "-c", f"{HOSTILE}.json", "-t", "trace.jsonl")
    one_error(missing, f"{SHOWN}.json: no such file")
    fmt = run(folder, *CHECK, "--format", HOSTILE)
    assert (fmt.returncode, fmt.stdout) == (2, "") and fmt.stderr.count("\n") == 1
    assert SHOWN in fmt.stderr and "\x1b" not in fmt.stderr
    kind = run(folder, "explain", HOSTILE)
    assert (kind.returncode, kind.stdout) == (2, "") and kind.stderr.count("\n") == 1 and "\x1b" not in kind.stderr
    output = run(folder, *CHECK, "-o", f"missing-{HOSTILE}/report.txt")
    one_error(output, f"missing-{SHOWN}/report.txt: cannot write: no such folder")


def test_harmless_non_ascii_names_are_kept_as_they_are(folder):
    name = "café-日本-🎉.jsonl"
    one_error(run(folder, "check", "-c", "contract.json", "-t", name), f"{name}: no such file")


# ----------------------------------------------------------------------------------------------
# init


@pytest.mark.slow
def test_init_refuses_a_dangling_symlink_and_a_path_under_a_file(folder):
    (folder / "new").mkdir()
    (folder / "new" / "agent-invariants.json").symlink_to("/nowhere/else")
    one_error(run(folder, "init", "new"), "new/agent-invariants.json: already exists; refusing to overwrite it "
              "(remove it, or give another folder)")
    assert names(folder / "new") == ["agent-invariants.json"]
    one_error(run(folder, "init", "trace.jsonl/new"), "trace.jsonl/new: cannot write: Not a directory")
    assert names(folder) == ["contract.json", "new", "trace.jsonl"]


def test_init_that_cannot_write_its_files_leaves_no_folder_it_made(folder):
    """A full disk (here a file size limit of 0): no file, and no empty folder made for them."""
    import resource

    def no_room() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    one_error(run(folder, "init", "a/b", preexec_fn=no_room), "a/b/agent-invariants.json: cannot write: File too large")
    assert names(folder) == ["contract.json", "trace.jsonl"]


def test_init_escapes_the_folder_it_names(folder):
    result = run(folder, "init", "x\x1b[31m")
    assert result.returncode == 0 and "\x1b" not in result.stdout
    assert result.stdout.splitlines()[0] == "Created x\\x1b[31m/agent-invariants.json"


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_a_side_by_side_compare_is_130_and_silent(folder):
    """The worker checking the baseline ignores Ctrl-C and is ended by the parent; it used to die
    of it with a traceback, or the parent waited for its whole check (found by a sweep of delays)."""
    slow_runs(folder, 0, size=160000)
    for delay in (0.2, 0.35, 0.5, 0.65, 0.8):
        process = subprocess.Popen([sys.executable, "-m", "agent_invariants", "compare", "-c", "slow.json",
                                    "-b", "slow.jsonl", "-k", "slow.jsonl", "-j", "2"], cwd=folder, env=ENV,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGINT)
        assert process.communicate(timeout=30) == (b"", b"") and process.returncode == 130, delay
        time.sleep(0.2)
        assert processes(group=process.pid) == [], delay


def test_convert_lists_only_the_formats_it_converts_from(folder):
    """native is no format to convert from: the choices a wrong --from is told are the others."""
    choices = "'auto', 'otel', 'openinference', 'openai-agents', 'langsmith', 'mcp-log'"
    for given in ("native", "mcp"):
        one_error(run(folder, "convert", "--from", given, "in.jsonl"),
                  f"Invalid value for '--from': '{given}' is not one of {choices}. "
                  "(try 'agent-invariants convert --help')")


def test_an_output_path_ending_with_a_slash_is_a_folder_not_a_file_to_write(folder):
    """`-o reports/` wrote a file named `reports` (a path keeps no trailing slash), and over an
    existing file of that name; the shell refuses such a name for a file. As for a folder, a bad
    contract is said first (README: "a bad contract or trace is reported first")."""
    (folder / "existing").write_text("kept\n")
    for name in ("reports/", "existing/"):
        one_error(run(folder, *CHECK, "-o", name), f"{name}: names a folder (it ends with a slash): name the file "
                                                   "to write")
    assert not (folder / "reports").exists() and (folder / "existing").read_text() == "kept\n"
    one_error(run(folder, *CHECK, "-o", "reports/."), "reports/.: names a folder: name the file to write")
    (folder / "bad.json").write_text('{"version": 1')
    said = run(folder, "check", "-c", "bad.json", "-t", "trace.jsonl", "-o", "reports/")
    assert said.returncode == 2 and said.stderr.startswith("agent-invariants: bad.json:")
    (folder / "fixtures.json").write_text('{"version": 1, "tools": {}}')   # record: refused before the agent runs
    one_error(run(folder, "record", "-c", "contract.json", "--fixtures", "fixtures.json", "--out", "run.jsonl",
                  "-o", "reports/", "--", sys.executable, "-c", "open('ran', 'w')"),
              "reports/: names a folder (it ends with a slash): name the file to write")
    assert not (folder / "ran").exists() and not (folder / "run.jsonl").exists()


def test_a_seq_that_is_a_large_float_is_written_as_json_stringify_writes_it(folder):
    """Found by a spec-words reading of compare: a `seq` of 1e300 (a whole number, so a valid
    seq) was written `1e300` in the JSON report, where the Node tool's JSON.stringify writes
    `1e+300`; 1e16 likewise, which JavaScript writes in full. The text formats already did."""
    (folder / "c.json").write_text(json.dumps({"version": 1, "name": "t", "rules": [
        {"id": "d", "kind": "deny_tool", "tool": "shell.*"}]}))
    (folder / "t.jsonl").write_text('{"seq": 1e16, "type": "tool.call", "tool": "shell.a"}\n'
                                    '{"seq": 1e300, "type": "tool.call", "tool": "shell.b"}\n')
    result = run(folder, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "json")
    assert result.returncode == 1
    assert result.stdout.count('"event_seq": 10000000000000000,') == 2   # (each violation is listed twice)
    assert result.stdout.count('"event_seq": 1e+300,') == 2
    # (and wherever else a report names such a seq: stop_is_final's evidence)
    (folder / "s.json").write_text(json.dumps({"version": 1, "name": "t", "rules": [
        {"id": "s", "kind": "stop_is_final"}]}))
    (folder / "s.jsonl").write_text('{"seq": 1e300, "type": "control.stop"}\n'
                                    '{"seq": 1e301, "type": "tool.call", "tool": "b"}\n')
    stopped = run(folder, "check", "-c", "s.json", "-t", "s.jsonl", "-f", "json")
    assert stopped.returncode == 1
    assert '"stop_seq": 1e+300' in stopped.stdout and '"event_seq": 1e+301,' in stopped.stdout
