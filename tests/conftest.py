"""Fixtures: run the real CLI in a child process (forked from a ready interpreter: cli_zygote), write
input files into a temporary folder.

Hypothesis profiles: `default` is Hypothesis' own settings (each test may ask for more examples);
`fast` tries few examples per test, for the fast tier (see the README's Development section):

    python -m pytest -m "not slow" --hypothesis-profile=fast
"""
from __future__ import annotations

import compileall
import gc
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import cli_zygote
import support

settings.register_profile("fast", max_examples=10)


def pytest_configure(config: pytest.Config) -> None:
    """Under the fast profile no property test tries more than its examples (`support.examples`;
    a test's own `max_examples` would otherwise win over the profile)."""
    if config.getoption("hypothesis_profile", None) == "fast":
        support.CAP = settings.get_profile("fast").max_examples
    if sys.dont_write_bytecode and config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        _rewrite_once(config)


def _rewrite_once(config: pytest.Config) -> None:
    """pytest rewrites the asserts of each test module as it imports it and keeps the result in
    `__pycache__`, unless PYTHONDONTWRITEBYTECODE is set: then each xdist worker rewrites every
    module anew, about fifteen seconds of each worker's collection in a fresh clone. So the main
    process, idle until the workers start, rewrites them once (in two processes) and writes that
    cache, which the workers read (pytest reads it whatever the variable says). This uses pytest's
    private functions: should they change, the workers rewrite the modules themselves, as before."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash.get(rewrite.assertstate_key, None)
        if state is None:   # (--assert=plain: nothing is rewritten)
            return
        files = sorted(Path(__file__).parent.glob("*.py"), key=lambda path: path.stat().st_size)
        child = os.fork() if hasattr(os, "fork") else -1
        try:
            for path in files if child == -1 else files[child == 0::2]:
                source_hash, code = rewrite._rewrite_test(path, config)
                cache = rewrite.get_cache_dir(path)
                cache.mkdir(exist_ok=True)
                rewrite._write_pyc(state, code, source_hash, cache / (path.name[:-3] + rewrite.PYC_TAIL))
        finally:
            if child == 0:
                os._exit(0)
            if child > 0:
                os.waitpid(child, 0)
    except Exception:   # (speed only: the workers rewrite what is missing)
        return


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores this process may run on. A fifth of the suite
    waits (on the CLI's children, MCP servers starting, `record`'s timers): on two cores, two
    workers kept them busy 70% of the time, and three ran the suite in 7m53s against 8m28s."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1

SESSION_MARK = "AGENT_INVARIANTS_TEST_SESSION"
"""Set for the whole test session (xdist workers inherit it): every agent `record` starts in a
test carries it, so the session can tell whether one of them was left running."""
os.environ.setdefault(SESSION_MARK, f"{os.getpid()}-{os.urandom(4).hex()}")


def agents_left(mark: str | None = None) -> list[int]:
    """Pids of agents (`AGENT_INVARIANTS_PROTOCOL=1`) of this test session that are still running
    (with `mark`, a `KEY=VALUE` in their environment, only those)."""
    wanted = {b"AGENT_INVARIANTS_PROTOCOL=1", f"{SESSION_MARK}={os.environ[SESSION_MARK]}".encode()}
    if mark is not None:
        wanted.add(mark.encode())
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = set(handle.read().split(b"\0"))
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if wanted <= environ and state != b"Z":
            found.append(int(entry))
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No agent that a test started through `record` may outlive the tests (checked once, by the
    main process: an xdist worker that finishes early would see another one's running agents)."""
    if hasattr(session.config, "workerinput"):
        return
    left = agents_left()
    if left:
        session.exitstatus = 1
        sys.stderr.write(f"\nagents left running after the tests: pids {left}\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (the modules, eleven thousand items, Hypothesis' strategies) lives as
    long as the session: frozen, it is no longer walked by every garbage collection that a test
    allocating much sets off (about a tenth of the time of such tests)."""
    gc.freeze()


PACKAGE = Path(__file__).resolve().parent.parent / "agent_invariants"


@pytest.fixture(scope="session", autouse=True)
def _interruptible() -> None:
    """A shell starts a background job with Ctrl-C (SIGINT) ignored, and a program inherits that:
    the CLI started by the tests would then ignore the Ctrl-C they send it. A Python handler is
    not inherited, so the CLI gets the default back."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _compiled_package() -> None:
    """Compile the package once: the tests start the CLI hundreds of times, and where
    PYTHONDONTWRITEBYTECODE is set (or the folder is new) each start would compile it anew."""
    compileall.compile_dir(PACKAGE, quiet=1)


@pytest.fixture(autouse=True)
def _startup_settings_kept() -> Iterator[None]:
    """No test may leave a change to what an interpreter reads at start-up (`PYTHON*`, the locale)
    in this process's environment: every later CLI run of its worker would then differ from the
    zygote's and start a real interpreter (Dask's process scheduler once set PYTHONHASHSEED and
    left it: the rest of that worker's CLI runs, a third of the suite, each took some 65 ms more
    of CPU)."""
    before = cli_zygote.startup_settings(os.environ)
    yield
    after = cli_zygote.startup_settings(os.environ)
    if after != before:
        changed = sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
        pytest.fail(f"the test left {', '.join(changed)} changed in the environment", pytrace=False)


class Cli:
    """Runs `python -m agent_invariants` in a subprocess, the way users run it."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def __call__(self, *args: str, stdin: str | bytes | None = None, env: dict[str, str] | None = None,
                 timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return self.python("-m", "agent_invariants", *args, stdin=stdin, env=env, timeout=timeout)

    def python(self, *args: str, stdin: str | bytes | None = None, env: dict[str, str] | None = None,
               timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Runs `python *args` as the CLI runs: this interpreter, in the test's folder. The CLI
        itself (`-m agent_invariants`) runs as a child forked from an interpreter that has
        imported it already (cli_zygote), which is the same but quicker, unless `env` changes what
        an interpreter reads at start-up."""
        full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
        data = stdin.encode() if isinstance(stdin, str) else stdin
        proc = cli_zygote.run_python(list(args), self.cwd, data, full_env, timeout)
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
