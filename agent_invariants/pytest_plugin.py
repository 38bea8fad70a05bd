"""The pytest plugin: each recorded trace of a test suite is a test item, checked against a contract.

    pytest --agent-invariants-contract agent-invariants.json runs/

or, once, in pyproject.toml (paths relative to that file; `traces` are globs, default every
`*.jsonl` pytest finds):

    [tool.agent-invariants]
    contract = "agent-invariants.json"
    traces = ["runs/**/*.jsonl"]
    max_line_bytes = 1048576   # the longest line a trace may have (the default: 1 MiB)

Every `*.jsonl` file under the paths pytest collects (and matching `traces`, when given) becomes one
item named after the file, so `-k refund` selects by name and `--junitxml` writes one test case per
trace. A trace that breaks an error-severity rule fails with the text report (the file and line of
each violation); warnings pass. A contract that does not validate stops the session before any test
runs (a usage error); an unreadable trace fails its own item with the one-line message the command
prints. What the checks warn of (an empty trace, a misspelt event type, a rule that checked nothing)
is listed at the end of the session (and is a user property of the item, in `--junitxml` too), and
so is a `traces` glob (or folder) that names no file at all when pytest collects what it does by
default (no paths given). Neither changes an outcome, even with warnings made errors; but a glob
that names traces pytest does not collect (its `testpaths` leave them out, `norecursedirs` names
their folder, a hidden one holds them, a link leads nowhere) stops the session, a usage error (under
xdist too, before any test runs); run from a folder that does not hold them, or ignored on purpose
(`--ignore`, a conftest's `collect_ignore`), each is only said, as is a trace under a path given on
the command line that no glob names (under xdist, the workers tell the controller). Globs read as
the command's do: `*` within a folder, `**/` across any. Without a contract (neither the option nor
the table) the plugin collects nothing; a table with other keys, or `traces` without a contract, is
a usage error. A version-2 contract that lint proves no trace can pass stops the session, as `check`
refuses it (`--agent-invariants-no-lint`, or `no_lint = true`, checks it). The plugin ships with the
package (entry point `pytest11`); `-p no:agent_invariants` turns it off. For checks inside your own
tests, see `agent_invariants.testing`.
"""
from __future__ import annotations

import fnmatch
import os
import posixpath
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agent_invariants._paths import inside
from agent_invariants._safe import TEXT_LIMIT, inert, log_safe
from agent_invariants.errors import InputError

__all__ = ("TraceItem",)

_SETTINGS = pytest.StashKey["_Settings | None"]()


class _Settings(NamedTuple):
    contract: Path
    traces: tuple[str, ...] | None   # globs relative to `root`; None: every *.jsonl
    plain: tuple[str, ...]   # each of `traces` in its plain form (`_relative`), worked out once
    root: Path
    max_line_bytes: int | None   # None: the library's default
    no_lint: bool   # check a version-2 contract that lint refuses
    loaded: list[Any]   # the loaded contract, once the session starts
    matched: set[str]   # the `traces` globs some collected file matched
    unmatched: list[str]   # the `traces` globs no collected file matched, to list at the end
    passed_over: dict[str, str]   # trace -> why it was not checked, though under a path given or named, to list
    collected: set[str]   # the traces collected, by their real paths (before -k deselects any)
    stops: list[str]   # under xdist, on the controller: why a worker's collection stops the session


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agent-invariants", "checking agent traces against a contract")
    group.addoption("--agent-invariants-contract", metavar="PATH", default=None,
                    help="Collect every *.jsonl trace under the given paths as a test, checked against this "
                         "contract (or set contract and traces in [tool.agent-invariants] of pyproject.toml).")
    group.addoption("--agent-invariants-no-lint", action="store_true", default=False,
                    help="Check a version-2 contract even when lint proves that no trace can pass it (by default "
                         "the session stops, as `check` refuses it; no_lint = true in the table does the same).")


def pytest_configure(config: pytest.Config) -> None:
    settings = config.stash[_SETTINGS] = _settings(config)
    if settings is None:
        return
    from agent_invariants.contract import load_contract, read_contract

    try:   # (named from the folder pytest runs in, as the items' traces are: no machine path in messages)
        source = read_contract(settings.contract, label=_shown(settings.contract, config.invocation_params.dir))
        loaded = load_contract(source)
        if loaded.version == 2 and not settings.no_lint:   # refused as `check` refuses it
            from agent_invariants.lint import refuse_unpassable

            refuse_unpassable(loaded, source.label, source, skip="--agent-invariants-no-lint")
        settings.loaded.append(loaded)
    except InputError as exc:
        raise _refused(f"agent-invariants: {exc}") from None
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Controller(settings), "agent-invariants-controller")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    settings = parent.config.stash.get(_SETTINGS, None)
    if settings is None or file_path.suffix != ".jsonl":
        return None
    if file_path.name.startswith(".") and not parent.session.isinitpath(file_path):
        return None   # a hidden file, as the command's folder walk passes it over (named, it is taken)
    if settings.traces is not None and not parent.session.isinitpath(file_path):   # (a trace named on the
        relative = _under(file_path, settings.root)                                 # command line is taken)
        if relative is None:
            return None
        found = [pattern for pattern, plain in zip(settings.traces, settings.plain, strict=True)
                 if _matches(relative, plain, settings.root)]
        if not found:
            if _under_a_path_given(file_path, parent.config):   # said
                settings.passed_over[relative] = "under a path given, but named by no traces glob: not checked " \
                                                 "(name the file, or add a glob)"
            return None
        settings.matched.update(found)
    settings.collected.add(os.path.realpath(file_path))
    return _TraceFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)   # (under xdist, before the worker tells the controller it has collected)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Only when pytest collected what it does by default (paths given on the command line leave
    globs out on purpose): a `traces` glob that names a trace outside the `testpaths` pytest
    collects from stops the session, a usage error, rather than pass having checked none of them;
    one that names no trace pytest collected (a typo, a trace ignored) is said at the end. An
    xdist worker cannot stop the session (its usage error was the controller's INTERNALERROR): it
    reports a failed collection, and the controller stops (`pytest_xdist_node_collection_finished`)."""
    settings = session.config.stash.get(_SETTINGS, None)
    if settings is None or settings.traces is None or session.config.args_source is pytest.Config.ArgsSource.ARGS:
        return
    stop = _collection_stop(session, settings)
    if stop is None:
        return
    if not hasattr(session.config, "workerinput"):
        raise _refused(stop)
    session.config.hook.pytest_collectreport(report=pytest.CollectReport(
        nodeid="", outcome="failed", longrepr=log_safe(stop), result=[]))


def _collection_stop(session: pytest.Session, settings: _Settings) -> str | None:
    """Why the collection stops the session, or None (the globs that matched nothing noted)."""
    for pattern in settings.traces or ():
        if session.config.args_source is pytest.Config.ArgsSource.TESTPATHS:   # (some of its traces may be in)
            left_out = _left_out(pattern, settings.root, session.config)
            if left_out is not None:
                return (f"{_STOP}traces glob {pattern!r} names {inert(left_out, TEXT_LIMIT)}, outside the testpaths "
                        "pytest collects from: add its folder to testpaths, or give the paths on the command line")
        missed = _not_collected(pattern, settings, session)
        if missed is not None and os.path.islink(settings.root / missed) and not os.path.exists(settings.root / missed):
            return (f"{_STOP}traces glob {pattern!r} names {inert(missed, TEXT_LIMIT)}, a link that leads nowhere, "
                    "which pytest passes over (under a path given too): fix the link or remove it")
        if missed is not None:
            return (f"{_STOP}traces glob {pattern!r} names {inert(missed, TEXT_LIMIT)}, which pytest did not collect "
                    "(in a folder it does not recurse into, or a hidden one): give the paths on the command line")
        if pattern not in settings.matched:
            settings.unmatched.append(pattern)
    return None


_STOP = "agent-invariants: pyproject.toml: [tool.agent-invariants] "
"""How a collection that stops the session starts to say why."""


class _Controller:
    """Registered where tests may run in xdist workers (not in a worker): a worker's failed
    collection that stops the session is noted as its report arrives, and the session stops, a
    usage error, when the worker says it has collected (before any test runs)."""

    def __init__(self, settings: _Settings) -> None:
        self.settings = settings

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and isinstance(report.longrepr, str) and report.longrepr.startswith(_STOP):
            self.settings.stops.append(report.longrepr)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Any) -> None:
        if self.settings.stops:
            raise _refused(self.settings.stops[0])


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under xdist, a worker's collection is its own: what it has to say goes to the controller,
    which writes the section (`pytest_testnodedown`)."""
    settings = session.config.stash.get(_SETTINGS, None)
    output = getattr(session.config, "workeroutput", None)
    if settings is not None and output is not None:
        output[_SAID] = {"unmatched": settings.unmatched, "passed_over": settings.passed_over}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist's controller hears from a worker that ended: its globs that matched nothing and its
    traces not checked (every worker collects the whole suite: each is kept once)."""
    settings = node.config.stash.get(_SETTINGS, None)
    said = getattr(node, "workeroutput", {}).get(_SAID)
    if settings is None or said is None:
        return
    settings.unmatched.extend(pattern for pattern in said["unmatched"] if pattern not in settings.unmatched)
    for path, why in said["passed_over"].items():
        settings.passed_over.setdefault(path, why)


_SAID = "agent_invariants_said"
"""The key of what a worker has to say in xdist's `workeroutput`."""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """What the checks warned of, and the globs that matched nothing, in a section of their own:
    not pytest warnings, which a suite that makes warnings errors would turn into failures."""
    settings = terminalreporter.config.stash.get(_SETTINGS, None)
    if settings is None:
        return
    lines = [f"traces glob {pattern!r} matched no .jsonl file pytest collected" for pattern in settings.unmatched]
    passed_over = list(settings.passed_over.items())
    lines += [f"{inert(path, TEXT_LIMIT)}: {why}" for path, why in passed_over[:_MOST_PASSED_OVER]]
    if len(settings.passed_over) > _MOST_PASSED_OVER:
        lines.append(f"and {len(settings.passed_over) - _MOST_PASSED_OVER} more traces not checked")
    noticed = [(report.nodeid, position, value) for reports in terminalreporter.stats.values() for report in reports
               if getattr(report, "when", None) == "call"   # (from every worker, under xdist)
               for position, (name, value) in enumerate(getattr(report, "user_properties", ())) if name == _NOTICED]
    lines += [value for _, _, value in sorted(noticed)]   # by trace: workers finish in any order
    if lines:
        terminalreporter.section("agent-invariants")
        for line in lines:
            terminalreporter.write_line(log_safe(f"agent-invariants: {line}"))


_MOST_PASSED_OVER = 20
"""Traces not checked that the section lists by name (then how many more)."""

_NOTICED = "agent-invariants notice"
"""The user property of an item that holds one thing its check warned of."""


def _refused(message: str) -> pytest.UsageError:
    """A usage error, its names unable to spell a CI runner's command (`##[`) in a job's log."""
    return pytest.UsageError(log_safe(message))


class _TraceFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        # (a line break or an escape sequence in a file's name would reach the terminal and the
        # JUnit file as it is: shown escaped, as every report of ours shows names; and `[` too,
        # which pytest reads in a test id as the start of parameters: pytest 9's --lf then never
        # found the item again, and a runner reads `##[` in a log line as its command)
        yield TraceItem.from_parent(self, name=inert(self.path.name, TEXT_LIMIT).replace("[", "\\x5b"))


class _Failed(Exception):
    """A trace that broke the contract: its text report."""


class TraceItem(pytest.Item):
    """One trace checked against the contract."""

    def runtest(self) -> None:
        from agent_invariants.api import check_trace
        from agent_invariants.notices import notice_lines
        from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES
        from agent_invariants.render import RenderOptions, text

        settings = self.config.stash[_SETTINGS]
        assert settings is not None
        report = check_trace(settings.loaded[0], _shown(self.path, self.config.invocation_params.dir),
                             max_line_bytes=settings.max_line_bytes or DEFAULT_MAX_LINE_BYTES)
        # an empty trace passes every rule: what the check warned of goes with the item's report
        self.user_properties.extend((_NOTICED, line) for line in notice_lines([report], strict=False)[0])
        if not report.passed:
            raise _Failed(text.render(report, RenderOptions(color=False)).rstrip("\n"))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, _Failed):
            return str(excinfo.value)
        if isinstance(excinfo.value, InputError):
            return log_safe(f"agent-invariants: {excinfo.value}")
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[os.PathLike[str] | str, int | None, str]:
        return self.path, None, f"agent-invariants check of {self.name}"


def _shown(path: Path, here: Path) -> str:
    """The trace's path as the report names it: from the folder pytest was run in, when inside it
    (so `runs/a.jsonl:6` is clickable and no report holds an absolute path)."""
    return inside(path, here) or str(path)


def _settings(config: pytest.Config) -> _Settings | None:
    """The contract and trace globs from the command line, else from pyproject.toml; None for neither."""
    option = config.getoption("--agent-invariants-contract", default=None)
    table = _table(config.rootpath / "pyproject.toml")
    traces = table.get("traces")
    if isinstance(traces, str):
        traces = [traces]
    if traces is not None and not (isinstance(traces, list) and all(isinstance(glob, str) for glob in traces)):
        raise _refused("agent-invariants: pyproject.toml: [tool.agent-invariants] traces must be a glob "
                       "or a list of globs")
    globs = None if traces is None else tuple(traces)
    longest = table.get("max_line_bytes")
    if longest is not None and (not isinstance(longest, int) or isinstance(longest, bool) or longest < 1):
        raise _refused("agent-invariants: pyproject.toml: [tool.agent-invariants] max_line_bytes must be an "
                       "integer of at least 1")
    no_lint = bool(config.getoption("--agent-invariants-no-lint", default=False) or table.get("no_lint", False))
    if option is not None:
        if not option.strip():   # (resolved, it would be the folder pytest runs in: "is a directory")
            raise _refused("agent-invariants: --agent-invariants-contract is empty: name the contract file")
        return _made(Path(option).resolve(), globs, config.rootpath, longest, no_lint)
    contract = table.get("contract")
    if contract is None:
        if globs is not None:
            raise _refused("agent-invariants: pyproject.toml: [tool.agent-invariants] traces needs a "
                           "contract (or --agent-invariants-contract)")
        return None
    if not isinstance(contract, str):
        raise _refused("agent-invariants: pyproject.toml: [tool.agent-invariants] contract must be a path")
    return _made((config.rootpath / contract).resolve(), globs, config.rootpath, longest, no_lint)


def _made(contract: Path, globs: tuple[str, ...] | None, root: Path, longest: int | None, no_lint: bool) -> _Settings:
    plain = tuple(_relative(pattern, root) for pattern in globs or ())
    for pattern, relative in zip(globs or (), plain, strict=True):
        if relative == ".." or relative.startswith("../") or os.path.isabs(relative):
            raise _refused(f"agent-invariants: pyproject.toml: [tool.agent-invariants] traces glob "
                           f"{pattern!r} reaches outside the rootdir: write it relative to the rootdir "
                           "(runs/*.jsonl), where pytest collects")
    return _Settings(contract, globs, plain, root, longest, no_lint, [], set(), [], {}, set(), [])


def _table(pyproject: Path) -> dict[str, Any]:
    try:
        with open(pyproject, "rb") as handle:
            document = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):   # none, or broken: pytest itself says so when it reads it
        return {}
    tool = document.get("tool", {})
    if not isinstance(tool, dict) or "agent-invariants" not in tool:
        return {}
    table = tool["agent-invariants"]
    if not isinstance(table, dict):
        raise _refused("agent-invariants: pyproject.toml: [tool.agent-invariants] must be a table")
    unknown = sorted(set(table) - {"contract", "traces", "max_line_bytes", "no_lint"})
    if unknown:
        raise _refused(f"agent-invariants: pyproject.toml: [tool.agent-invariants] has an unknown key "
                       f"{unknown[0]!r} (expected contract, traces, max_line_bytes, no_lint)")
    if not isinstance(table.get("no_lint", False), bool):
        raise _refused("agent-invariants: pyproject.toml: [tool.agent-invariants] no_lint must be true or "
                       "false")
    return table


def _under_a_path_given(path: Path, config: pytest.Config) -> bool:
    """Whether `path` is under a path given on the command line (pytest also offers the files of
    the folders above one, the root folder's among them, which no one gave)."""
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return False
    found = os.path.abspath(path)
    return any(_within(found, top) for top in _tops(config))


def _under(path: Path, root: Path) -> str | None:
    """`path` relative to `root`, with forward slashes, as found (a link under root that leads
    elsewhere is under root), else resolved; None when it is not under root."""
    for inner, outer in ((path, root), (path.resolve(), root.resolve())):
        try:
            return inner.relative_to(outer).as_posix()
        except ValueError:
            continue
    return None


def _matches(relative: str, pattern: str, root: Path) -> bool:
    """Whether the trace at `relative` (from `root`) is one the glob names, as the command's globs
    (`glob`'s) do: name by name, `*`, `?` and `[...]` within one name, a name `**` for any
    folders (none too), a hidden name only by a pattern that starts with a dot; or under the
    folder it names."""
    if pattern == "." or _named_by(tuple(relative.split("/")), tuple(pattern.split("/"))):
        return True
    return relative.startswith(pattern + "/") and (root / pattern).is_dir()


def _named_by(names: tuple[str, ...], patterns: tuple[str, ...]) -> bool:
    """Whether the names of a path match the names of a pattern, one by one (`**`: any number)."""
    if not patterns:
        return not names
    first, rest = patterns[0], patterns[1:]
    if first == "**":
        return any(_named_by(names[at:], rest) for at in range(len(names) + 1)
                   if not any(name.startswith(".") for name in names[:at]))
    return bool(names) and (not names[0].startswith(".") or first.startswith(".")) \
        and fnmatch.fnmatchcase(names[0], first) and _named_by(names[1:], rest)


def _relative(pattern: str, root: Path) -> str:
    """A `traces` glob as relative to `root`, in its plain form (`./runs//a/../*.jsonl` is
    `runs/*.jsonl`; `.` or nothing is the root itself), without `root` when it is written out."""
    pattern = posixpath.normpath(pattern or ".")
    for base in {str(root), str(root.resolve())}:
        if pattern == base.rstrip("/"):
            return "."
        if pattern.startswith(base.rstrip("/") + "/"):
            return pattern[len(base.rstrip("/")) + 1:]
    return pattern


def _named(pattern: str, root: Path) -> list[str]:
    """The traces the glob names, as `--trace` reads it (none when it names nothing)."""
    import glob

    from agent_invariants.batch import expand_traces

    spec = pattern if os.path.isabs(pattern) else os.path.join(glob.escape(str(root)), pattern)
    try:
        return [path for path in expand_traces([spec]) if path.endswith(".jsonl")]
    except InputError:   # it names nothing
        return []


def _not_collected(pattern: str, settings: _Settings, session: pytest.Session) -> str | None:
    """A trace the glob names that pytest did not collect, though it looked where the trace is
    (a folder `norecursedirs` names, by default a hidden one or `build`, or a link that leads
    nowhere), as a path from the root; None when there is none. Without paths on the command
    line, such a trace would go unchecked. Out of its reach on purpose, it is only said: outside
    the folder pytest was run in (no testpaths), or ignored (`--ignore`, `--ignore-glob`, a
    conftest's `collect_ignore` or `collect_ignore_glob`, a `pytest_ignore_collect` hook)."""
    config = session.config
    here = os.path.realpath(config.invocation_params.dir)
    for path in _named(pattern, settings.root):
        found = os.path.realpath(path)
        if found in settings.collected:
            continue
        shown = _under(Path(os.path.abspath(path)), settings.root) or path
        if _ignored(Path(os.path.abspath(path)), settings.root, session):
            settings.passed_over.setdefault(shown, f"named by traces glob {pattern!r}, but left out of the collection "
                                            "(--ignore, --ignore-glob, a conftest): not checked")
        elif config.args_source is pytest.Config.ArgsSource.INVOCATION_DIR and not _within(found, here):
            settings.passed_over.setdefault(shown, f"named by traces glob {pattern!r}, but outside the folder pytest "
                                            "was run in: not checked")
        else:
            return shown
    return None


def _ignored(path: Path, root: Path, session: pytest.Session) -> bool:
    """Whether pytest's `pytest_ignore_collect` hooks (those of the conftests on the way, as pytest
    asks them) leave out the trace or a folder on its way from `root`, but for `norecursedirs`
    (which pytest answers there too: its default leaves out every hidden folder and `build`,
    where traces are often written); such a folder given to `--ignore` or `--ignore-glob` is
    ignored on purpose all the same."""
    config = session.config
    patterns = config.getini("norecursedirs")
    here = config.invocation_params.dir
    ignored = {Path(os.path.abspath(here / given)) for given in config.getoption("ignore") or ()}
    globs = [str(here / given) for given in config.getoption("ignore_glob") or ()]
    for place in [path, *path.parents]:
        if place == root or root not in place.parents:
            return False
        if not session.gethookproxy(place).pytest_ignore_collect(collection_path=place, config=config):
            continue
        if not (place.is_dir() and any(fnmatch.fnmatch(place.name, pattern) for pattern in patterns)) \
                or place in ignored or any(fnmatch.fnmatch(str(place), glob) for glob in globs):
            return True
    return False


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _left_out(pattern: str, root: Path, config: pytest.Config) -> str | None:
    """A trace the glob names (as `--trace` would) outside every path pytest collects from, as
    a path from `root`; None when there is none."""
    tops = _tops(config)
    for path in _named(pattern, root):
        found = os.path.abspath(path)
        if os.path.isfile(found) and not any(_within(found, top) for top in tops):
            return _under(Path(found), root) or found
    return None


def _tops(config: pytest.Config) -> list[str]:
    """The paths pytest collects from (given on the command line, or its `testpaths`), absolute,
    without a node id's `::` part."""
    return [os.path.abspath(os.path.join(config.invocation_params.dir, top.split("::")[0])) for top in config.args]
