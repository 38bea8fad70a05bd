"""A rule kind's manual: the docstring of its class, read one way by every surface (and a
command's, `stability`, the docstring of its module).

The docstring is the user's manual: a one-line summary, then `## What it checks`, `## Why it
matters`, `## Failing trace`, `## Passing trace`, `## Options` and `## Known limits`. `explain`
prints it, SARIF makes it each rule's help, and the MCP server quotes its summary and options in
its schemas and its `write-contract` prompt. All of them read it here, so none can read it
differently from the others.
"""
from __future__ import annotations

import inspect
import re
from functools import cache

from agent_invariants.rules import RULE_KINDS

__all__ = ("command_manual", "manual", "option_lines", "section", "summary_line")


@cache
def manual(kind: str) -> str:
    """The manual of rule kind `kind`: its class docstring, dedented (the kind's name if it has none).
    Kept once read: SARIF reads it four times for each rule of a contract."""
    return inspect.cleandoc(RULE_KINDS[kind].__doc__ or kind)


def command_manual(command: str) -> str:
    """The manual of a command that lives in a module or package of its own (`stability`, `lint`):
    its docstring."""
    import importlib

    return inspect.cleandoc(importlib.import_module(f"agent_invariants.{command}").__doc__ or command)


def summary_line(kind: str) -> str:
    """The first line of the manual: what the kind does, in one sentence."""
    return manual(kind).splitlines()[0]


def section(kind: str, title: str) -> str:
    """The text under `## <title>` in the manual, up to the next heading; "" when it has none."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", manual(kind), re.DOTALL | re.MULTILINE)
    return found.group(1).strip() if found else ""


def option_lines(kind: str) -> list[str]:
    """The non-blank lines of the `## Options` section (one bullet per option, and their follow-ups)."""
    return [line.rstrip() for line in section(kind, "Options").splitlines() if line.strip()]
