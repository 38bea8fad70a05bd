"""The CLI zygote (see cli_zygote.py), run as `python -c <this file's text>`. It imports the whole
package (every module a command may import, but the pytest plugin, which no command imports) and
the standard library's and the dependencies' top-level modules that commands import later: a forked
`check` then spends 25 ms, not 60, and a SARIF report 30, not 90 (the suite runs the CLI thousands
of times). Importing ahead changes what a child has loaded, not what it does: no module of the
package reads the environment, the folder or the standard streams when imported, and a module
that forgot an import fails in a child as at a real start (a name is looked up in its own module).
What a fork cannot show, a command that only works because another module imported something
first, `test_cli_zygote.py` looks for: it runs every command and format at a real start too. Then,
for each request line (JSON: args, cwd, env, three named pipes and a cap on the address space), it
forks a child that runs `python -m agent_invariants ARGS` there, and answers the child's pid, then
its exit code (negative for a signal, as subprocess gives it)."""
import contextlib
import importlib
import io
import json
import os
import pkgutil
import resource
import runpy
import signal
import sys
import traceback

import agent_invariants

AHEAD_NOT = ("agent_invariants.__main__", "agent_invariants.pytest_plugin")
"""Not imported ahead: `__main__` runs the CLI; the pytest plugin imports pytest, which no command does."""
for _module in pkgutil.walk_packages(agent_invariants.__path__, "agent_invariants."):
    if _module.name not in AHEAD_NOT:
        importlib.import_module(_module.name)

LATER = ("mcp", "mcp_types", "orjson", "re2", "socket")
"""Top-level modules that no module of the package imports when it loads, but commands import as
they run (`record --mcp` and `serve` the MCP SDK, 0.8 s a run; the SDK and re2 are optional extras)."""
for _name in LATER:
    with contextlib.suppress(ImportError):
        importlib.import_module(_name)

_STREAMS = {name: (stream.encoding, stream.errors, stream.line_buffering)
            for name, stream in (("stdin", sys.__stdin__), ("stdout", sys.__stdout__), ("stderr", sys.__stderr__))}


def _stream(fd, name):
    """A text stream on `fd` as the interpreter makes its standard `name` at start-up."""
    encoding, errors, line_buffering = _STREAMS[name]
    raw = io.FileIO(fd, "r" if name == "stdin" else "w", closefd=False)
    buffered = io.BufferedReader(raw) if name == "stdin" else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, line_buffering=line_buffering)


def _child(request):
    """Become the command: its pipes as standard streams (every other inherited file closed, the
    zygote's request and reply pipes among them), its folder and environment, then run it."""
    flags_of = (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY)   # opened in this order: the test opens the other ends
    for target, (path, flags) in enumerate(zip(request["pipes"], flags_of, strict=True)):
        fd = os.open(path, flags)
        os.dup2(fd, target)
        os.close(fd)
    os.closerange(3, 1 << 16)
    if request.get("address_space") is not None:   # as a `preexec_fn` capping RLIMIT_AS would
        resource.setrlimit(resource.RLIMIT_AS, (request["address_space"], request["address_space"]))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin, sys.stdout, sys.stderr = (_stream(0, "stdin"), _stream(1, "stdout"), _stream(2, "stderr"))
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    sys.argv = ["-m", *request["args"]]
    code = 0
    try:
        runpy.run_module("agent_invariants", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:   # as the interpreter ends on one: the traceback, then death by SIGINT
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = 120   # what the interpreter gives when flushing its output at exit fails
    os._exit(code & 0xFF)


def _serve():
    control_in, control_out = os.dup(0), os.dup(1)
    requests = os.fdopen(control_in, "rb")
    replies = os.fdopen(control_out, "wb")
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                _child(request)
            finally:
                os._exit(1)
        replies.write(f"{pid}\n".encode())
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(f"{os.waitstatus_to_exitcode(status)}\n".encode())
        replies.flush()


if __name__ == "__main__":   # (`-c` runs it as __main__; pytest, given this file by name, only imports it)
    _serve()
