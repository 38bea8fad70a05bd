"""Hostile contracts and packs: each is refused in bounded time and memory with one clear line
(exit 2, nothing on stdout, no traceback), and the limits leave real contracts alone.

The resource tests run the CLI under a small wrapper that caps the child's address space (so a
regression fails instead of eating the machine) and reports its peak resident memory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from agent_invariants import ContractError, load_contract
from agent_invariants.contract import ContractLines, contract_lines, read_contract

from support import contract

MIB = 1 << 20
LIMIT = 16 * MIB
RULE = {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}

_MEASURE = """
import json, resource, subprocess, sys
cap = 2 << 30
child = subprocess.run([sys.executable, "-m", "agent_invariants", *sys.argv[1:]], capture_output=True,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
print(json.dumps({"code": child.returncode, "stdout": child.stdout.decode("utf-8", "replace"),
                  "stderr": child.stderr.decode("utf-8", "replace"),
                  "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


class Run(NamedTuple):
    code: int
    stdout: str
    stderr: str
    peak_mib: float
    seconds: float


def measured(cwd: Path, *args: str, stdin: bytes | None = None) -> Run:
    """The CLI run with `args`: exit code, output, peak memory (MiB) and wall time."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"}, check=True)
    seconds = time.monotonic() - started
    return Run(**json.loads(proc.stdout), seconds=seconds)


def refused(run: Run, message: str, *, exact: bool = False) -> None:
    """Exit 2, nothing on stdout, one stderr line `agent-invariants: ...` holding (or being) `message`."""
    assert run.code == 2, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr, run.stderr
    (line,) = run.stderr.splitlines()
    if exact:
        assert line == f"agent-invariants: {message}"
    else:
        assert line.startswith("agent-invariants: ") and message in line, line


def padded(size: int) -> bytes:
    """A valid contract of exactly `size` bytes (trailing spaces are JSON whitespace)."""
    data = json.dumps(contract(RULE)).encode()
    return data + b" " * (size - len(data))


def rules(count: int, start: int = 0, **extra) -> list[dict]:
    return [{"id": f"r{i}", "kind": "deny_tool", "tool": f"t{i}.*", **extra} for i in range(start, start + count)]


# --- the size limit: files, devices, FIFOs ----------------------------------------------------

@pytest.mark.slow
def test_a_contract_of_16_mib_loads_and_one_byte_more_is_refused(cli, write):
    write("contract.json", padded(LIMIT))
    assert cli("validate", "--contract", "contract.json").returncode == 0
    write("contract.json", padded(LIMIT + 1))
    result = cli("validate", "--contract", "contract.json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == ["agent-invariants: contract.json: larger than the 16 MiB limit for contracts"]


@pytest.mark.slow
@pytest.mark.parametrize("command", [["validate"], ["check", "--trace", "-"]])
def test_dev_zero_as_a_contract_is_read_only_to_the_limit(tmp_path, command):
    run = measured(tmp_path, command[0], "--contract", "/dev/zero", *command[1:], stdin=b"")
    refused(run, "/dev/zero: larger than the 16 MiB limit for contracts", exact=True)
    assert run.peak_mib < 200 and run.seconds < 20


@pytest.mark.slow
def test_an_endless_stream_on_dev_stdin_is_read_only_to_the_limit(tmp_path):
    run = measured(tmp_path, "validate", "--contract", "/dev/stdin", stdin=b" " * (LIMIT + 4 * MIB))
    refused(run, "/dev/stdin: larger than the 16 MiB limit for contracts", exact=True)
    assert run.peak_mib < 200


def feed_fifo(path: Path, data: bytes, repeat: int = 1) -> threading.Thread:
    """Write `data` `repeat` times into the FIFO at `path` from a thread; stops when the reader goes."""

    def feed() -> None:
        try:
            with open(path, "wb") as stream:
                stream.writelines(data for _ in range(repeat))
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return writer


@pytest.mark.slow
def test_a_fifo_contract_is_read_once_and_only_to_the_limit(tmp_path):
    fifo = tmp_path / "contract.json"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, json.dumps(contract(RULE)).encode())
    run = measured(tmp_path, "validate", "--contract", "contract.json")
    writer.join(10)
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["contract"]["rules"] == [RULE]

    writer = feed_fifo(fifo, b" " * MIB, repeat=64)
    run = measured(tmp_path, "validate", "--contract", "contract.json")
    writer.join(10)
    refused(run, "contract.json: larger than the 16 MiB limit for contracts", exact=True)
    assert run.peak_mib < 200 and not writer.is_alive()


def test_one_read_serves_both_loading_and_the_lines_of_the_rules(tmp_path):
    """A FIFO can be read only once: the source of `read_contract` holds the bytes for both."""
    fifo = tmp_path / "contract.json"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, b'{"version": 1, "name": "x",\n "extends": ["agent-invariants:payments"],\n "rules": [\n'
                             b'  {"id": "a", "kind": "deny_tool", "tool": "x"},\n'
                             b'  {"id": "b", "kind": "deny_tool", "tool": "y"}],\n "compare": {}}\n')
    source = read_contract(fifo)
    writer.join(10)
    assert [rule.id for rule in load_contract(source).rules][-2:] == ["a", "b"]
    assert contract_lines(source) == ContractLines({"a": 4, "b": 5}, 6)   # pack rules are not in this file
    yaml_file = tmp_path / "contract.yaml"
    yaml_file.write_text("version: 1\nname: x\nrules:\n  - id: a\n    kind: deny_tool\n    tool: x\n"
                         "  - {id: b, kind: deny_tool, tool: y}\n")
    assert contract_lines(read_contract(yaml_file)) == ContractLines({"a": 4, "b": 7}, None)


@pytest.mark.slow
def test_a_directory_or_a_missing_file_is_named(cli, tmp_path):
    (tmp_path / "folder.json").mkdir()
    for path, problem in [("folder.json", "is a directory, not a contract file"), ("missing.json", "no such file")]:
        result = cli("validate", "--contract", path)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr.splitlines() == [f"agent-invariants: {path}: {problem}"]


def test_a_pack_path_naming_a_device_or_fifo_is_not_opened(write, tmp_path):
    os.mkfifo(tmp_path / "fifo.json")
    for ref in ["/dev/zero", "fifo.json"]:
        path = write("contract.json", contract(extends=[ref]))
        with pytest.raises(ContractError) as caught:
            load_contract(path)
        assert caught.value.problem.startswith(f"pack file {ref!r} is not a regular file (looked for ")


def test_a_pack_path_that_is_a_link_to_nowhere_is_called_that_not_missing(write, tmp_path):
    """A pack file that is a symbolic link in a loop, or to a missing file, exists as a name in
    its folder: "not found" sent the user looking for a file they could see."""
    (tmp_path / "loop.json").symlink_to("loop.json")
    (tmp_path / "dangling.json").symlink_to("gone.json")
    for ref in ["loop.json", "dangling.json"]:
        path = write("contract.json", contract(extends=[ref]))
        with pytest.raises(ContractError) as caught:
            load_contract(path)
        assert caught.value.problem.startswith(f"pack file {ref!r} is a symbolic link that leads nowhere (its target "
                                               "is missing, or a loop) (looked for ")


def test_a_pack_over_the_limit_is_refused_by_its_name(write):
    pack = write("big-pack.json", padded(LIMIT + 1))
    path = write("contract.json", contract(extends=["big-pack.json"]))
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert str(caught.value) == f"{pack}: larger than the 16 MiB limit for packs"


# --- the rule cap, before the expensive work ---------------------------------------------------

@pytest.mark.slow
def test_a_hundred_thousand_rules_are_refused_before_any_rule_is_checked(tmp_path, write):
    """Every rule is also wrong: checked one by one, they would give 100,000 more lines."""
    write("contract.json", contract(*rules(100_000, tol="x")))
    run = measured(tmp_path, "validate", "--contract", "contract.json")
    refused(run, "contract.json:4: $.rules: at most 10,000 rules are allowed (1..10000 in all, counting those "
                 "from extends), got 100,000", exact=True)
    assert run.seconds < 20 and run.peak_mib < 400


@pytest.mark.slow
def test_ten_thousand_rules_from_the_contract_and_its_packs_load_and_one_more_does_not(write):
    write("pack.json", {"rules": rules(4_000)})
    write("more.json", {"rules": rules(1, start=10_000)})
    path = write("contract.json", contract(*rules(6_000, start=4_000), extends=["pack.json"]))
    assert len(load_contract(path).rules) == 10_000
    path = write("contract.json", contract(*rules(6_000, start=4_000), extends=["pack.json", "more.json"]))
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert (caught.value.path, caught.value.problem) == (
        "$.extends[1]", "more than 10,000 rules with the packs loaded through extends (at most 10,000 rules in all)")


def test_the_rules_of_a_pack_are_counted_before_they_are_checked(write):
    """The second pack's rules are all wrong, but the count refuses it first."""
    write("a.json", {"rules": rules(6_000)})
    write("b.json", {"rules": rules(6_000, start=6_000, tol="x")})
    path = write("contract.json", contract(extends=["a.json", "b.json"]))
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert (caught.value.path, len(caught.value.problems)) == ("$.extends[1]", 1)


@pytest.mark.slow
def test_a_contract_of_many_problems_lists_the_first_hundred(tmp_path, write):
    write("contract.json", contract(*rules(10_000, tol="x", severity="fatal")))
    run = measured(tmp_path, "validate", "--contract", "contract.json")
    assert (run.code, run.stdout) == (2, "")
    lines = run.stderr.splitlines()
    assert len(lines) == 101 and run.seconds < 20
    assert lines[0] == "agent-invariants: contract.json:9: $.rules[0].tol: unknown field (did you mean 'tool'?)"
    assert lines[-1] == "agent-invariants: contract.json: more problems not listed (the first 100 are)"


@pytest.mark.slow
def test_a_list_of_millions_is_refused_quickly_and_pointed_at_in_bounded_memory(tmp_path, write):
    """The error names the line of the list; finding it once mapped every one of its items."""
    items = ",".join(["1"] * 3_000_000)
    write("contract.json", '{"version": 1, "name": "x",\n"rules": [{"id": "a", "kind": "allow_tools",\n'
                           f'"tools": [{items}]}}]}}')
    run = measured(tmp_path, "validate", "--contract", "contract.json")
    refused(run, "contract.json:3: $.rules[0].tools: expected an array of at most 1000 items, got [1,1,1")
    assert run.seconds < 20 and run.peak_mib < 300


# --- YAML aliases -----------------------------------------------------------------------------

BILLION_LAUGHS = "\n".join(
    ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    + ["version: 1", "name: lol", "rules: []"]) + "\n"


@pytest.mark.slow
def test_a_billion_laughs_yaml_is_refused_at_the_alias_that_passes_the_limit(tmp_path, write):
    write("contract.yaml", BILLION_LAUGHS)
    run = measured(tmp_path, "validate", "--contract", "contract.yaml")
    # a5 holds 597,871 nodes; the first *a5 (line 7) brings the count past a million
    refused(run, "contract.yaml:7: YAML aliases expand past the limit of 1,000,000 nodes", exact=True)
    assert run.seconds < 20 and run.peak_mib < 200


def test_a_yaml_alias_inside_its_own_anchor_is_refused(write):
    path = write("contract.yaml", "version: 1\nname: x\nrules: &loop\n  - *loop\n")
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert str(caught.value) == f"{path}:4: the YAML alias *loop repeats a node that contains it"


@pytest.mark.slow
def test_a_yaml_document_of_more_than_a_million_nodes_is_refused(write):
    path = write("contract.yaml", "version: 1\nname: x\nrules: []\ndescription: [" + "a," * 1_000_000 + "]\n")
    with pytest.raises(ContractError) as caught:
        load_contract(path)
    assert str(caught.value) == f"{path}:4: the YAML document grows past the limit of 1,000,000 nodes"


def test_yaml_anchors_aliases_and_merge_keys_still_work(write):
    path = write("contract.yaml", """\
version: 1
name: anchors
rules:
  - &shell {id: no-shell, kind: deny_tool, tool: "shell.*"}
  - {<<: *shell, id: no-sudo, tool: "sudo.*"}
  - {id: known, kind: allow_tools, tools: &tools [fs.read, fs.write]}
  - {id: known-again, kind: allow_tools, tools: *tools, severity: warning}
""")
    assert [rule.to_dict() for rule in load_contract(path).rules] == [
        RULE,
        {"id": "no-sudo", "kind": "deny_tool", "tool": "sudo.*"},
        {"id": "known", "kind": "allow_tools", "tools": ["fs.read", "fs.write"]},
        {"id": "known-again", "kind": "allow_tools", "severity": "warning", "tools": ["fs.read", "fs.write"]},
    ]


# --- extends: fan-out, depth, and servers that read no files -----------------------------------

@pytest.mark.slow
def test_an_extends_fan_out_is_refused_at_the_256th_pack(tmp_path, write):
    """Eight packs that each name eight more, six levels deep: 299,592 loads without the cap."""
    for level in range(6):
        names = [f"p{level + 1}-{k}.json" for k in range(8)] if level < 5 else []
        for k in range(8):
            write(f"p{level}-{k}.json", {"extends": names, "rules": [RULE]})
    write("contract.json", contract(extends=[f"p0-{k}.json" for k in range(8)]))
    run = measured(tmp_path, "validate", "--contract", "contract.json")
    refused(run, "contract.json:6: $.extends[0]: more than 256 packs loaded through extends (limit)", exact=True)
    assert run.seconds < 20


def test_extends_may_go_16_levels_deep_and_no_deeper(write):
    def chain(levels: int) -> Path:
        for level in range(1, levels + 1):
            write(f"p{level}.json", {"extends": [f"p{level + 1}.json"] if level < levels else [],
                                     "rules": [RULE | {"id": f"r{level}"}]})
        return write("contract.json", contract(extends=["p1.json"]))

    assert len(load_contract(chain(16)).rules) == 16
    with pytest.raises(ContractError) as caught:
        load_contract(chain(17))
    error = caught.value
    assert (Path(error.source).name, error.path) == ("p16.json", "$.extends[0]")
    assert error.problem == "packs extend packs more than 16 levels deep (limit)"


def test_without_pack_paths_a_path_in_extends_is_refused_unseen(write, tmp_path):
    """Whether the file exists or not, the answer is the same: nothing about the disk leaks."""
    write("pack.json", {"rules": [RULE]})
    problems = set()
    for ref in ["pack.json", "missing.json", str(tmp_path / "pack.json"), "../../etc/passwd"]:
        with pytest.raises(ContractError) as caught:
            load_contract(contract(extends=["agent-invariants:payments", ref]), pack_paths=False)
        assert caught.value.path == "$.extends[1]"
        problems.add(caught.value.problem)
    assert problems == {"packs can only be named as agent-invariants:<pack> here; files are not read"}
    assert len(load_contract(contract(extends=["agent-invariants:payments"]), pack_paths=False).rules) == 3


def test_an_unknown_shipped_pack_shows_no_path_of_the_machine():
    for pack_paths in (True, False):
        with pytest.raises(ContractError) as caught:
            load_contract(contract(extends=["agent-invariants:../../payments"]), pack_paths=pack_paths)
        assert caught.value.problem.startswith("unknown pack 'agent-invariants:../../payments'; shipped packs: "
                                               "agent-invariants:completion-needs-evidence, ")
        assert "/" not in caught.value.problem.removeprefix("unknown pack 'agent-invariants:../../payments'")
