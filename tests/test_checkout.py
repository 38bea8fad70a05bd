"""The tests run the code of this checkout, never another installed copy of the package.

The CLI tests start `python -m agent_invariants` in a temporary folder (the `cli` fixture), where
Python finds the package through the environment: only an editable install of this checkout (as
the README's test command makes) puts this checkout's code there.
"""
from __future__ import annotations

import re
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent / "agent_invariants"
# `python -v` names each source file it loads:
# "# code object from '/x/y.py'", or "# /x/__pycache__/y.pyc matches /x/y.py"
LOADED = re.compile(r"(/[^'\s]+\.py)(?=['\s]|$)")


def test_cli_subprocesses_import_the_package_of_this_checkout(cli):
    found = cli.python("-c", "import agent_invariants; print(agent_invariants.__file__)")
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).resolve() == CHECKOUT / "__init__.py"


def _loaded(stderr: str) -> set[Path]:
    """The package's source files that `python -v` says it loaded."""
    return {Path(path).resolve() for line in stderr.splitlines() if line.startswith("# ")
            for path in LOADED.findall(line) if "agent_invariants" in Path(path).parts}


def test_the_cli_runs_and_reports_the_version_of_this_checkout(cli):
    result = cli.python("-v", "-m", "agent_invariants", "--version")
    assert result.returncode == 0, result.stderr
    written = re.search(r'^__version__ = "([^"]+)"$', (CHECKOUT / "__init__.py").read_text(encoding="utf-8"), re.M)
    assert written is not None and result.stdout == f"{written.group(1)}\n"
    loaded = _loaded(result.stderr)
    assert {CHECKOUT / "__init__.py", CHECKOUT / "__main__.py", CHECKOUT / "entry.py"} <= loaded
    assert CHECKOUT / "cli.py" not in loaded   # the version needs no command-line framework
    assert all(path.is_relative_to(CHECKOUT) for path in loaded), sorted(map(str, loaded))
    listing = cli.python("-v", "-m", "agent_invariants", "explain")
    assert listing.returncode == 0, listing.stderr
    loaded = _loaded(listing.stderr)
    assert CHECKOUT / "cli.py" in loaded
    assert all(path.is_relative_to(CHECKOUT) for path in loaded), sorted(map(str, loaded))
