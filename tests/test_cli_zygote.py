"""The tests' quick way of running the CLI (cli_zygote) gives what a real `python -m
agent_invariants` gives: the same stdout, stderr, exit code and files, byte for byte, for every
command and report format, for commands that print, fail, read standard input, write files, and
are killed by a timeout. The zygote has imported the whole package ahead: a command that only works
because of that (a module that uses another it never imported) fails its real start here."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cli_zygote

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXAMPLE = EXAMPLES / "refund-desk"

COMMANDS = [   # (exit code, args): the code shows the command really ran
    (0, ["--version"]),
    (0, ["--help"]),
    (0, ["check", "--contract", "contract.json", "--trace", "baseline.jsonl"]),
    *((1, ["check", "--contract", "contract.json", "--trace", "candidate.jsonl", "--format", fmt])
      for fmt in ("json", "junit", "sarif", "markdown", "html")),
    (1, ["compare", "--contract", "contract.json", "--baseline", "baseline.jsonl", "--candidate", "candidate.jsonl"]),
    (1, ["compare", "--contract", "contract.json", "--baseline", "baseline.jsonl", "--candidate", "candidate.jsonl",
         "--format", "sarif"]),
    (2, ["check", "--contract", "missing.json", "--trace", "baseline.jsonl"]),
    (1, ["check", "--contract", "contract.json", "--trace", "-", "--format", "sarif"]),
    (2, ["check", "--bogus-option"]),
    (0, ["validate", "--contract", "contract.json"]),
    (1, ["lint", "--contract", "lint/contract.json"]),
    (0, ["summary", "--trace", "candidate.jsonl"]),
    (1, ["stability", "report-shape/run-1.jsonl", "report-shape/run-2.jsonl", "report-shape/run-3.jsonl"]),
    (0, ["mutate", "--contract", "contract.json", "--trace", "baseline.jsonl"]),
    *((0, ["convert", f"imports/{name}"]) for name in ("pydantic-ai.otlp.jsonl", "agents-openinference.otlp.jsonl",
                                                       "agents-sdk.agents.jsonl", "langchain.runs.jsonl",
                                                       "mcp-session.mcp.jsonl")),
    (1, ["check", "--contract", "imports/contract.json", "--trace", "imports/langchain.runs.jsonl",
         "--input-format", "auto"]),
    (0, ["explain"]),
    (0, ["explain", "tool_args"]),
    (0, ["explain", "match"]),
    (0, ["init", "made"]),
    (0, ["serve"]),   # (standard input holds trace lines: each is answered as an invalid request)
    (0, ["record", "--contract", "record/contract.json", "--fixtures", "record/fixtures.json", "--enforce",
         "--fake-clock", "--out", "refund.jsonl", "--", sys.executable, "record/agent.py"]),
]


def _folder(path: Path) -> Path:
    """The refund-desk example, with the other examples the commands read beside it."""
    path.mkdir()
    for name in ("contract.json", "baseline.jsonl", "candidate.jsonl"):
        shutil.copy(EXAMPLE / name, path / name)
    for name in ("lint", "report-shape", "imports", "record"):
        shutil.copytree(EXAMPLES / name, path / name)
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return _folder(tmp_path / "folder")


@pytest.mark.parametrize(("code", "args"), COMMANDS, ids=[" ".join(args)[:40] for _, args in COMMANDS])
def test_a_forked_command_gives_what_a_real_start_gives(tmp_path: Path, code: int, args: list[str]) -> None:
    """Each in a folder of its own, so the files each writes are compared too."""
    env = {**os.environ, "NO_COLOR": "1"}
    stdin = (EXAMPLE / "candidate.jsonl").read_bytes()
    real_folder, forked_folder = _folder(tmp_path / "real"), _folder(tmp_path / "forked")
    real = subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=real_folder, input=stdin,
                          capture_output=True, env=env, timeout=60)
    forked = cli_zygote.run_cli(args, forked_folder, stdin, env, 60)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert _files(forked_folder) == _files(real_folder)
    assert real.returncode == code, real.stderr


def test_files_are_written_in_the_commands_folder(folder: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    done = cli_zygote.run_cli(["check", "-c", "contract.json", "-t", "baseline.jsonl", "--output", "r.json",
                               "--format", "json"], folder, None, env, 60)
    assert (done.returncode, done.stdout) == (0, b"")
    assert (folder / "r.json").read_text(encoding="utf-8").startswith("{")


def test_the_environment_is_the_commands_own(folder: Path) -> None:
    """NO_COLOR is the one variable the tests set; without it, and on no terminal, text has no colour
    either way: the difference shows in GitHub's annotations, whose format reads the environment."""
    env = {**os.environ, "NO_COLOR": "1", "GITHUB_ACTIONS": "true"}
    args = ["check", "-c", "contract.json", "-t", "candidate.jsonl"]
    real = subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=folder, capture_output=True,
                          env=env, timeout=60)
    forked = cli_zygote.run_cli(args, folder, None, env, 60)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)


def test_a_command_past_its_timeout_is_killed_and_the_next_one_runs(folder: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    os.mkfifo(folder / "never.jsonl")   # a named pipe nobody writes: opening it waits for ever
    with pytest.raises(subprocess.TimeoutExpired):
        cli_zygote.run_cli(["summary", "--trace", "never.jsonl"], folder, None, env, 0.5)
    done = cli_zygote.run_cli(["--version"], folder, None, env, 60)
    assert done.returncode == 0 and done.stdout.strip()
