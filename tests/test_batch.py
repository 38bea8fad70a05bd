"""Several traces at once: the same per-trace verdicts as single runs, in any number of jobs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_invariants import check_trace, compare_traces, load_contract
from agent_invariants.batch import check_many, compare_many, expand_traces, named_traces, pair_traces
from agent_invariants.errors import TraceError

from support import EXAMPLES, contract, events, jsonl


@pytest.fixture
def runs(tmp_path):
    """A folder of traces: the bundled refund runs plus variations of the candidate."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(EXAMPLES / "refund-desk/baseline.jsonl", folder / "a-baseline.jsonl")
    shutil.copy(EXAMPLES / "refund-desk/candidate.jsonl", folder / "b-candidate.jsonl")
    lines = (EXAMPLES / "refund-desk/candidate.jsonl").read_text().splitlines()
    (folder / "c-no-shell.jsonl").write_text("\n".join(line for line in lines if "shell" not in line) + "\n")
    (folder / "d-commented.jsonl").write_text("# a comment\n\n" + "\n".join(lines[:9]) + "\n")
    (folder / "notes.txt").write_text("not a trace")
    shutil.copy(EXAMPLES / "refund-desk/contract.json", folder / "contract.json")
    return folder


def test_expand_walks_folders_and_globs_in_sorted_order_and_skips_the_contract(runs):
    paths = expand_traces([str(runs)], exclude=[str(runs / "contract.json")])
    assert [p.rsplit("/", 1)[1] for p in paths] == ["a-baseline.jsonl", "b-candidate.jsonl", "c-no-shell.jsonl",
                                                    "d-commented.jsonl"]
    matched = [str(runs / "b-candidate.jsonl"), str(runs / "c-no-shell.jsonl")]
    assert expand_traces([str(runs / "[bc]-*.jsonl")]) == matched
    with pytest.raises(TraceError, match="pattern matches no files"):
        expand_traces([str(runs / "*.nothing")])
    with pytest.raises(TraceError, match="standard input"):
        expand_traces(["-", str(runs)])


def test_a_folder_walk_and_a_glob_both_leave_hidden_files_and_folders_out(runs):
    (runs / ".hidden.jsonl").write_text((runs / "a-baseline.jsonl").read_text())
    (runs / ".git").mkdir()
    (runs / ".git" / "inside.jsonl").write_text((runs / "a-baseline.jsonl").read_text())
    (runs / "deeper").mkdir()
    (runs / "deeper" / "e.jsonl").write_text((runs / "a-baseline.jsonl").read_text())
    walked = expand_traces([str(runs)], exclude=[str(runs / "contract.json")])
    assert [path.removeprefix(str(runs) + "/") for path in walked] == [
        "a-baseline.jsonl", "b-candidate.jsonl", "c-no-shell.jsonl", "d-commented.jsonl", "deeper/e.jsonl"]
    assert expand_traces([str(runs / "**" / "*.jsonl")]) == walked


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_batch_gives_each_trace_the_same_report_as_a_single_run(runs, jobs):
    contract_doc = load_contract(EXAMPLES / "refund-desk/contract.json")
    paths = expand_traces([str(runs)], exclude=[str(runs / "contract.json")])
    batch = check_many(contract_doc, paths, jobs=jobs)
    assert [r.trace for r in batch.reports] == paths
    for path, report in zip(paths, batch.reports, strict=True):
        assert report == check_trace(contract_doc, path)
    assert batch.passed is False
    assert batch.error_count == sum(r.error_count for r in batch.reports)


def test_the_library_batch_takes_path_objects_any_iterable_and_a_contract_as_check_trace_does(runs):
    """README (The library): check_many(contract, paths, jobs=4) is the library side of several
    traces; check_trace takes a path object and a contract as a path or a mapping, so it does."""
    contract_path = EXAMPLES / "refund-desk/contract.json"
    names = [runs / "a-baseline.jsonl", runs / "b-candidate.jsonl"]
    expected = check_many(load_contract(contract_path), [str(name) for name in names])
    assert check_many(contract_path, names) == expected
    assert check_many(str(contract_path), (name for name in names), jobs=2) == expected
    pairs = compare_many(json.loads(contract_path.read_text()), [(names[0], names[1])])
    assert pairs == compare_many(load_contract(contract_path), [(str(names[0]), str(names[1]))])


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda c, p: check_many(c, p[0]), TypeError, "traces is a list of paths, not one path"),
    (lambda c, p: check_many(c, [p[0], 5]), TypeError, "traces holds int 5, not a path"),
    (lambda c, p: expand_traces(str(Path(p[0]).parent)), TypeError, "specs is a list of paths, not one path"),
    (lambda c, p: named_traces("/"), TypeError, "specs is a list of paths, not one path"),
    (lambda c, p: check_many(c, []), ValueError, "traces is empty: there is no trace to check"),
    (lambda c, p: compare_many(c, iter(())), ValueError, "pairs is empty: there is no pair to compare"),
    (lambda c, p: expand_traces(p, exclude=p[0]), TypeError, "exclude is a list of paths, not one path"),
    (lambda c, p: compare_many(c, [(p[0],)]), TypeError, "not a (baseline, candidate) pair of paths"),
    (lambda c, p: compare_many(c, [p[0]]), TypeError, "not a (baseline, candidate) pair of paths"),
    (lambda c, p: check_many(c, p, jobs=0), ValueError, "jobs must be an integer of at least 1, got 0"),
    (lambda c, p: check_many(c, p, jobs="x"), ValueError, "jobs must be an integer of at least 1, got 'x'"),
    (lambda c, p: compare_traces(c, p[0], p[1], jobs=2.5), ValueError, "jobs must be an integer of at least 1"),
])
def test_the_library_batch_says_what_it_was_given_wrong(runs, call, error, words):
    paths = [str(runs / "a-baseline.jsonl"), str(runs / "b-candidate.jsonl")]
    with pytest.raises(error) as raised:
        call(load_contract(EXAMPLES / "refund-desk/contract.json"), paths)
    assert words in str(raised.value)


def test_unreadable_traces_become_failures_and_the_rest_is_checked(runs):
    (runs / "e-broken.jsonl").write_text('{"seq": 1, "type": "x"}\n{"seq": 1, "type": "y"}\n')
    contract_doc = load_contract(EXAMPLES / "refund-desk/contract.json")
    batch = check_many(contract_doc, [str(runs / "a-baseline.jsonl"), str(runs / "e-broken.jsonl")], jobs=2)
    assert [r.trace for r in batch.reports] == [str(runs / "a-baseline.jsonl")]
    (failure,) = batch.failures
    assert failure.trace == str(runs / "e-broken.jsonl")
    assert "e-broken.jsonl:2:" in failure.error and "strictly increasing" in failure.error
    assert batch.passed is False


@pytest.mark.slow
def test_cli_batch_exit_codes_and_report(cli, runs):
    base = ("check", "--contract", str(runs / "contract.json"), "--format", "json", "--jobs", "2")
    result = cli(*base, "--trace", str(runs))
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "agent-invariants/check-batch/v1"
    assert report["traces"] == 4 and len(report["reports"]) == 4 and report["failures"] == []
    assert [r["passed"] for r in report["reports"]] == [True, False, False, False]
    single = json.loads(cli("check", "--contract", str(runs / "contract.json"), "--trace",
                            str(runs / "d-commented.jsonl"), "--format", "json").stdout)
    assert report["reports"][3] == single   # physical lines survive the batch path

    passing = cli(*base, "--trace", str(runs / "a-baseline.jsonl"), "--trace", str(runs / "a-baseline.jsonl"))
    assert passing.returncode == 0 and json.loads(passing.stdout)["passed"] is True

    broken = cli(*base, "--trace", str(runs / "a-baseline.jsonl"), "--trace", str(runs / "missing.jsonl"))
    assert broken.returncode == 2
    assert broken.stderr.strip() == f"agent-invariants: {runs / 'missing.jsonl'}: no such file"
    assert json.loads(broken.stdout)["failures"] == [{"trace": str(runs / "missing.jsonl"),
                                                      "error": f"{runs / 'missing.jsonl'}: no such file"}]


@pytest.mark.slow
def test_one_plain_file_keeps_the_single_report(cli, runs):
    result = cli("check", "--contract", str(runs / "contract.json"), "--trace", str(runs / "a-baseline.jsonl"),
                 "--format", "json")
    assert json.loads(result.stdout)["schema"] == "agent-invariants/check/v1"


@pytest.mark.slow
def test_jobs_do_not_change_the_output(cli, runs):
    outputs = {
        jobs: cli("check", "--contract", str(runs / "contract.json"), "--trace", str(runs), "--jobs", str(jobs),
                  "--format", fmt).stdout
        for jobs in (1, 2) for fmt in ("json",)
    }
    assert outputs[1] == outputs[2]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "markdown", "junit", "sarif", "github"])
def test_every_format_renders_a_batch(cli, runs, fmt):
    result = cli("check", "--contract", str(runs / "contract.json"), "--trace", str(runs), "--trace",
                 str(runs / "nope.jsonl"), "--format", fmt)
    assert result.returncode == 2
    # SARIF, GitHub annotations and (unless --verbose) text list failing traces only
    names = ("b-candidate.jsonl", "d-commented.jsonl", "nope.jsonl") if fmt in ("sarif", "github", "text") else \
        ("a-baseline.jsonl", "b-candidate.jsonl", "d-commented.jsonl", "nope.jsonl")
    for name in names:
        assert name in result.stdout
    if fmt == "sarif":
        log = json.loads(result.stdout)
        (run,) = log["runs"]
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
        assert {uri.rsplit("/", 1)[1] for uri in uris} == {"b-candidate.jsonl", "c-no-shell.jsonl", "d-commented.jsonl"}
        assert run["invocations"][0]["executionSuccessful"] is False
    if fmt == "text":
        last = result.stdout.rstrip().splitlines()[-1]
        assert last.startswith("FAIL  refund-desk  5 traces: 1 passed, 3 failed, 1 unreadable")


def test_compare_pairs_folders_by_file_name(tmp_path, write):
    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
    good = jsonl(events({"type": "tool.call", "tool": "kb.search"}))
    bad = jsonl(events({"type": "tool.call", "tool": "shell.exec"}))
    write("base/one.jsonl", good)
    write("base/two.jsonl", good)
    write("cand/one.jsonl", good)
    write("cand/two.jsonl", bad)
    pairs = pair_traces(named_traces([str(tmp_path / "base")]), named_traces([str(tmp_path / "cand")]))
    assert [(b.rsplit("/", 2)[-2:], c.rsplit("/", 2)[-2:]) for b, c in pairs] == [
        (["base", "one.jsonl"], ["cand", "one.jsonl"]), (["base", "two.jsonl"], ["cand", "two.jsonl"])]
    report = compare_many(load_contract(rules), pairs, jobs=2)
    assert [r.compatible for r in report.reports] == [True, False]
    assert report.reports[1] == compare_traces(rules, *pairs[1])
    write("cand/three.jsonl", good)
    with pytest.raises(TraceError, match="no baseline trace named 'three.jsonl'"):
        pair_traces(named_traces([str(tmp_path / "base")]), named_traces([str(tmp_path / "cand")]))


@pytest.mark.slow
def test_compare_pairs_nested_folders_by_relative_path(tmp_path, write, cli):
    """Two runs of one name in different subfolders pair with their own counterparts."""
    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
    good = jsonl(events({"type": "tool.call", "tool": "kb.search"}))
    bad = jsonl(events({"type": "tool.call", "tool": "shell.exec"}))
    write("c.json", json.dumps(rules))
    write("base/eu/run.jsonl", good)
    write("base/us/run.jsonl", good)
    write("cand/eu/run.jsonl", good)
    write("cand/us/run.jsonl", bad)
    result = cli("compare", "--contract", "c.json", "--baseline", "base", "--candidate", "cand",
                 "--format", "json", "--jobs", "1")
    assert result.returncode == 1, result.stderr
    reports = json.loads(result.stdout)["reports"]
    assert [(r["baseline"]["trace"], r["candidate"]["trace"], r["compatible"]) for r in reports] == [
        ("base/eu/run.jsonl", "cand/eu/run.jsonl", True), ("base/us/run.jsonl", "cand/us/run.jsonl", False)]


@pytest.mark.slow
def test_compare_refuses_two_baselines_of_one_name(tmp_path, write, cli):
    write("c.json", json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})))
    trace = jsonl(events({"type": "tool.call", "tool": "kb.search"}))
    for name in ("base/eu/run.jsonl", "base/us/run.jsonl", "cand/eu/run.jsonl"):
        write(name, trace)
    result = cli("compare", "--contract", "c.json", "--baseline", "base/*/run.jsonl", "--candidate", "cand",
                 "--format", "json")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == ("agent-invariants: base/us/run.jsonl: two baseline traces are named 'run.jsonl' "
                                     "(base/eu/run.jsonl and this one); a name must be unique among the baselines "
                                     "(folders pair by the path inside them, files and globs by the file name)")


def test_compare_takes_one_baseline_folder_named_twice_as_one(tmp_path, write, cli):
    """The same folder spelt two ways (`base`, `./base`) holds the same files, not two baselines
    of one name: as when it is spelt the same way twice."""
    write("c.json", json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})))
    trace = jsonl(events({"type": "tool.call", "tool": "kb.search"}))
    for name in ("base/run.jsonl", "cand/run.jsonl"):
        write(name, trace)
    for second in ("base", "./base", "base/"):
        result = cli("compare", "--contract", "c.json", "--baseline", "base", "--baseline", second,
                     "--candidate", "cand", "--quiet")
        assert (result.returncode, result.stderr) == (0, ""), second
        assert result.stdout == "COMPATIBLE  test-contract  1 pair: 1 compatible, 0 regressed · 0 regressions\n"
