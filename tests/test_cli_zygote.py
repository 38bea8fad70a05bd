"""The tests' quick way of running the CLI (cli_zygote) gives what a real `python -m
agent_invariants` gives: the same stdout, stderr and exit code, byte for byte, for commands that
print, fail, read standard input, write files, and are killed by a timeout."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cli_zygote

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "refund-desk"

COMMANDS = [
    ["--version"],
    ["--help"],
    ["check", "--contract", "contract.json", "--trace", "baseline.jsonl"],
    ["check", "--contract", "contract.json", "--trace", "candidate.jsonl", "--format", "json"],
    ["compare", "--contract", "contract.json", "--baseline", "baseline.jsonl", "--candidate", "candidate.jsonl"],
    ["check", "--contract", "missing.json", "--trace", "baseline.jsonl"],
    ["check", "--contract", "contract.json", "--trace", "-", "--format", "sarif"],
    ["check", "--bogus-option"],
    ["explain", "tool_args"],
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in ("contract.json", "baseline.jsonl", "candidate.jsonl"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(args)[:40])
def test_a_forked_command_gives_what_a_real_start_gives(folder: Path, args: list[str]) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    stdin = (folder / "candidate.jsonl").read_bytes()
    real = subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=folder, input=stdin,
                          capture_output=True, env=env, timeout=60)
    forked = cli_zygote.run_cli(args, folder, stdin, env, 60)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)


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
