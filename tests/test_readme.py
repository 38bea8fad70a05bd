"""The README says what the tool does: its runnable commands run (and print what it shows), its
contracts and rules validate, its trace reads, and every option it names exists.

A command block preceded by `<!-- runnable -->` is run, each command from a copy of `examples/`;
a text block preceded by `<!-- output -->` right after one is the first command's output, up to a
line `...` where the README stops showing it.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"(?:<!-- (?P<mark>runnable|output) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.S | re.M)
BLOCKS = [(m["mark"], m["lang"], m["body"]) for m in BLOCK.finditer(README)]
RUNNABLE = [(body, following[2] if following and following[0] == "output" else None)
            for (mark, _, body), following in zip(BLOCKS, BLOCKS[1:] + [None], strict=True) if mark == "runnable"]


def commands(block: str) -> list[list[str]]:
    """The block's commands, each split as the shell would (`\\` continues a line)."""
    return [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def test_the_readme_has_runnable_commands_with_their_output():
    assert len(RUNNABLE) >= 2
    assert any(output is not None for _, output in RUNNABLE)


@pytest.mark.parametrize(("block", "output"), RUNNABLE, ids=[f"block{n}" for n in range(len(RUNNABLE))])
def test_runnable_commands_run_and_print_what_the_readme_shows(cli, tmp_path, block, output):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    for number, argv in enumerate(commands(block)):
        assert argv[0].endswith("agent-invariants"), argv
        result = cli(*argv[1:])
        assert result.returncode in (0, 1), result.stderr   # 2 would be a usage or input error
        if number == 0 and output is not None:
            shown = output.splitlines()
            if shown[-1] == "...":
                assert result.stdout.splitlines()[:len(shown) - 1] == shown[:-1]
            else:
                assert result.stdout == output


def test_the_library_example_runs_as_written_from_a_checkout(tmp_path):
    """The first snippet of "The library" names the bundled example's files, so that it runs as
    it stands from the checkout's folder (placeholder names made a reader's first try fail)."""
    library = README.split("## The library", 1)[1]
    snippet = next(body for _, lang, body in BLOCKS if lang == "python" and body in library)
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    result = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("refunds-need-approval 6 Tool payments.refund was called without"), lines[0]
    assert lines[-1].startswith("False ['new_rule_failure'"), lines[-1]


def test_the_ray_example_writes_every_report(tmp_path):
    """The Ray Data example's `check_batch`, run on a batch as Ray hands it (Ray itself is not
    needed): a report whose evidence holds a number JavaScript writes otherwise (`1e+21`) made
    `msgspec.json.encode` raise (outside reader); the example writes the JSON report."""
    snippet = next(body for _, lang, body in BLOCKS if lang == "python" and "ray.data" in body)
    function = snippet.split("def check_batch", 1)[1].split("\n\n", 1)[0]
    imports = "\n".join(line for line in snippet.splitlines() if line.startswith(("import ", "from ")))
    (tmp_path / "ray.py").write_text("")   # (imported, never used: only `check_batch` runs)
    (tmp_path / "agent-invariants.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "small", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$lte": 100}}}]}))
    trace = b'{"seq": 1, "type": "tool.call", "tool": "refund", "args": {"amount": 1e21}}\n'
    program = (f"{imports}\ncontract = load_contract('agent-invariants.json')\ndef check_batch{function}\n"
               f"out = check_batch({{'path': ['t.jsonl'], 'bytes': [{trace!r}]}})\n"
               "print(out['passed'], '1e+21' in out['report'][0])\n")
    result = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60, check=False)
    assert (result.returncode, result.stdout) == (0, "[False] True\n"), result.stderr


JSON_BLOCKS = [json.loads(body) for _, lang, body in BLOCKS if lang == "json"]
CONTRACTS = [block for block in JSON_BLOCKS if isinstance(block, dict) and "rules" in block and "version" in block]
RULES = [block for block in JSON_BLOCKS if isinstance(block, dict) and "kind" in block and "id" in block]


def test_every_contract_and_rule_of_the_readme_validates(cli, write):
    assert CONTRACTS and len(RULES) >= 12
    for number, contract in enumerate(CONTRACTS):
        write(f"contract{number}.json", json.dumps(contract))
        result = cli("validate", "-c", f"contract{number}.json")
        assert result.returncode == 0, (contract, result.stderr)
    write("rules.json", json.dumps({"version": 2, "name": "readme", "rules": RULES}))   # every kind, both versions
    result = cli("validate", "-c", "rules.json")
    assert result.returncode == 0, result.stderr


def test_the_readme_trace_reads(cli, write):
    (trace,) = [body for _, lang, body in BLOCKS if lang == "jsonl"]
    write("trace.jsonl", trace)
    result = cli("summary", "-t", "trace.jsonl")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["events"] == len(trace.splitlines())


# Options the README names that belong to other programs (pip, pytest, Python, the GitHub Action).
OTHER_PROGRAMS = {"--hypothesis-profile", "--junitxml", "--rootdir", "--ignore-glob",   # pytest's
                  "--agent-invariants-contract", "--agent-invariants-no-lint"}   # the last two: our pytest plugin
COMMANDS = ("check", "compare", "validate", "summary", "explain", "init", "serve", "convert", "stability", "lint",
            "mutate", "record")


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z](?![\w-])", help_text))


def test_every_option_the_readme_names_exists_and_every_option_is_documented(cli):
    offered = _options(cli("--help").stdout)
    for command in COMMANDS:
        offered |= _options(cli(command, "--help").stdout)
    bench = subprocess.run([sys.executable, "-m", "bench", "--help"], cwd=REPO, capture_output=True, text=True,
                           timeout=60)
    offered |= _options(bench.stdout)   # the Performance section shows the benchmark's commands
    named = _options(README)
    assert named - offered - OTHER_PROGRAMS == set()
    for command in COMMANDS:
        assert _options(cli(command, "--help").stdout) - named == set(), command
