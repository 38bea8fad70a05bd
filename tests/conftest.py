"""Fixtures: run the real CLI in a subprocess, write input files into a temporary folder."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

class Cli:
    """Runs `python -m agent_invariants` in a subprocess, the way users run it."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def __call__(self, *args: str, stdin: str | bytes | None = None, env: dict[str, str] | None = None,
                 timeout: float = 60) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
        data = stdin.encode() if isinstance(stdin, str) else stdin
        proc = subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=self.cwd, input=data,
                              capture_output=True, env=full_env, timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                           proc.stderr.decode("utf-8", "replace"))


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


@pytest.fixture
def write(tmp_path: Path):
    """write(name, content) -> Path: content may be str, bytes, or a dict/list dumped as JSON."""

    def _write(name: str, content: Any) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
        return path

    return _write
