"""A faster `python -m agent_invariants` for the tests: a process that has imported the package
once forks a child per command, and the child runs the command as a fresh interpreter would.

Starting Python and importing the command line takes about 100 ms; the suite runs the CLI
thousands of times, so that start-up was most of its time. The zygote (one per test process,
started on first use) imports the package and what its commands import, then waits; for each
command it forks, and the child takes the test's folder, environment and three named pipes as
its working folder, environment and standard streams, rebuilds `sys.stdin`/`stdout`/`stderr` as a
fresh interpreter does, and runs `agent_invariants` as `-m` runs it (`runpy`). Output, exit code,
signals and timeouts come back as from `subprocess.run`. Nothing a command does can reach the next
one: each child starts from the zygote, which itself never runs a command.

`run_python` (which `Cli` in conftest and the test files' own helpers call) uses it for `python -m
agent_invariants ...` whose environment agrees with the zygote's on what an interpreter reads at
start-up (`PYTHON*`, the locale): any other needs a real start. `AGENT_INVARIANTS_TEST_SUBPROCESS=1`
turns it off, and `test_cli_zygote.py` holds it to the real thing.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

SERVER = Path(__file__).with_name("cli_zygote_server.py")


class Zygote:
    """The zygote of this test process, and the way to run one command through it."""

    def __init__(self) -> None:
        # `-c` with the server's text: sys.path[0] is then the current folder, as with `-m`
        self.env = os.environ.copy()
        self.process = subprocess.Popen([sys.executable, "-c", SERVER.read_text(encoding="utf-8")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.env)
        self.owner = os.getpid()
        self._replies = b""

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def close(self) -> None:
        if self.owner != os.getpid():
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def run(self, args: list[str], cwd: Path, stdin: bytes | None, env: dict[str, str],
            timeout: float, address_space: int | None = None) -> subprocess.CompletedProcess[bytes]:
        with tempfile.TemporaryDirectory(prefix="ainv-cli-") as folder:
            pipes = [os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")]
            for path in pipes:
                os.mkfifo(path)
            request = {"args": args, "cwd": str(cwd), "env": env, "pipes": pipes, "address_space": address_space}
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
            pid = int(self._reply(None))
            out: list[bytes] = []
            err: list[bytes] = []
            threads = [threading.Thread(target=_feed, args=(pipes[0], stdin or b""), daemon=True),
                       threading.Thread(target=_drain, args=(pipes[1], out), daemon=True),
                       threading.Thread(target=_drain, args=(pipes[2], err), daemon=True)]
            for thread in threads:
                thread.start()
            try:
                code = int(self._reply(timeout))
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)
                int(self._reply(None))
                for thread in threads:
                    thread.join(5)
                raise subprocess.TimeoutExpired(_command(args), timeout, b"".join(out), b"".join(err)) from None
            _join(threads, pipes)
        return subprocess.CompletedProcess(_command(args), code, b"".join(out), b"".join(err))

    def _reply(self, timeout: float | None) -> bytes:
        """The zygote's next line (a pid, then the exit code), waiting at most `timeout` seconds."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._replies:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired("agent-invariants", timeout or 0)
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("the CLI zygote ended")
            self._replies += chunk
        line, _, self._replies = self._replies.partition(b"\n")
        return line


def _command(args: list[str]) -> list[str]:
    """The command a real start would have run, as `subprocess` reports it."""
    return [sys.executable, "-m", "agent_invariants", *args]


def _join(threads: list[threading.Thread], pipes: list[str]) -> None:
    """Wait for the streams of a command that has ended. A child that died before opening its
    pipes leaves a thread waiting in `open`: opening the other end lets it go on."""
    for thread, path, flags in zip(threads, pipes, (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY), strict=True):
        thread.join(10)
        if thread.is_alive():
            with contextlib.suppress(OSError):
                os.close(os.open(path, flags | os.O_NONBLOCK))
            thread.join()


def _feed(path: str, data: bytes) -> None:
    """The command's standard input: `data`, then end of file (a command that never reads it
    still opens it, as every child does)."""
    try:
        with open(path, "wb") as pipe:
            pipe.write(data)
    except BrokenPipeError:
        pass   # the command ended without reading it all, as with a real pipe


def _drain(path: str, into: list[bytes]) -> None:
    with open(path, "rb") as pipe:
        while chunk := pipe.read(65536):
            into.append(chunk)


_zygote: Zygote | None = None


@atexit.register
def _stop() -> None:
    if _zygote is not None:
        _zygote.close()


def run_cli(args: list[str], cwd: Path, stdin: bytes | None, env: dict[str, str],
            timeout: float, address_space: int | None = None) -> subprocess.CompletedProcess[bytes]:
    """`python -m agent_invariants ARGS` in `cwd` with `env`, through this process's zygote."""
    return _the_zygote().run(args, cwd, stdin, env, timeout, address_space)


def run_python(args: list[str], cwd: Path, stdin: bytes | None = None, env: dict[str, str] | None = None,
               timeout: float = 60, address_space: int | None = None) -> subprocess.CompletedProcess[bytes]:
    """`python ARGS` in `cwd`, as `subprocess.run` with captured output runs it (`env` None: this
    process's environment; `address_space`: a cap on it, RLIMIT_AS, for the command). The CLI
    (`-m agent_invariants`) runs through the zygote when `env` agrees with the zygote's on what
    an interpreter reads at start-up; anything else starts a real interpreter."""
    full_env = os.environ.copy() if env is None else env
    if (args[:2] == ["-m", "agent_invariants"] and usable()
            and startup_settings(full_env) == startup_settings(_the_zygote().env)):
        return run_cli(args[2:], cwd, stdin, full_env, timeout, address_space)

    def cap() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run([sys.executable, *args], cwd=cwd, input=stdin, capture_output=True, env=full_env,
                          timeout=timeout, preexec_fn=cap if address_space is not None else None)


def as_text(proc: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[str]:
    """`proc` with its output as `subprocess.run(..., text=True)` would give it: decoded in the
    locale's encoding, line ends made `\n`."""
    encoding = locale.getpreferredencoding(False)

    def text(data: bytes) -> str:
        return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")

    return subprocess.CompletedProcess(proc.args, proc.returncode, text(proc.stdout), text(proc.stderr))


def startup_settings(env: Mapping[str, str]) -> dict[str, str]:
    """What of `env` an interpreter reads as it starts (its own settings and the locale, which
    chooses the standard streams' encoding): a forked command keeps the zygote's."""
    return {key: value for key, value in env.items()
            if key.startswith(("PYTHON", "LC_")) or key in ("LANG", "LANGUAGE")}


def _the_zygote() -> Zygote:
    global _zygote
    if _zygote is None or not _zygote.alive():
        if _zygote is not None:
            _zygote.close()
        _zygote = Zygote()
    return _zygote


def usable() -> bool:
    """Whether commands may run through a zygote here (fork and named pipes, not turned off)."""
    return hasattr(os, "fork") and hasattr(os, "mkfifo") and os.environ.get("AGENT_INVARIANTS_TEST_SUBPROCESS") != "1"


