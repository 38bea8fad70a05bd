"""Rule packs: reusable lists of rules a contract pulls in with `extends`.

    {"version": 1, "name": "refund-desk",
     "extends": ["agent-invariants:payments", "packs/house-rules.json"],
     "rules": [{"id": "payments.need-approval", "kind": "require_approval", "tool": "payments.*",
                "within_events": 5}]}

An entry is a pack shipped with agent-invariants (`agent-invariants:<name>`, see `rules/` in the
repository) or a path relative to the file that names it. A pack is a JSON object with `rules`
and optionally `name`, `description` and its own `extends`. Packs are read in order; a rule whose
id is already known replaces the earlier one in place (so a later pack overrides an earlier one,
and the contract's own rules override every pack), and new ids are appended. A cycle or a
missing pack is an error naming the `extends` entry.

A few lines of `extends` could otherwise make the loader read thousands of files (eight packs
that each name eight packs, six levels deep, are 299,592 loads), so the depth, the number of pack
loads and the rules they bring are capped, and each pack file has the contract size limit.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from agent_invariants._paths import DANGLING, inside
from agent_invariants.contract_source import (
    ContractSource,
    contract_error,
    first_problems,
    is_yaml,
    parse,
    read_limited,
)
from agent_invariants.errors import ContractError, closest, did_you_mean, suggest
from agent_invariants.jsonpos import member
from agent_invariants.validation import MAX_RULES, NEEDS_VERSION_2, Problem, rule_problems

__all__ = ("MAX_EXTENDS_DEPTH", "MAX_PACK_LOADS", "PACK_PREFIX", "available_packs", "pack_path", "resolve_extends")

PACK_PREFIX = "agent-invariants:"
_PACK_KEYS = ("$schema", "name", "description", "extends", "rules")

MAX_EXTENDS_DEPTH = 16
"""How deep packs may extend packs below a contract (a contract's own packs are level 1)."""

MAX_PACK_LOADS = 256
"""Pack files one contract may load through `extends` in all, a file named again counting again."""


def _pack_folder() -> Path:
    """Packs ship in the wheel as agent_invariants/packs; in a source checkout they are rules/."""
    package = Path(__file__).resolve().parent   # (importlib.resources would cost a short check 2 ms)
    shipped = package / "packs"
    if shipped.is_dir():
        return shipped
    return package.parent / "rules"


def available_packs() -> list[str]:
    folder = _pack_folder()
    return sorted(path.stem for path in folder.glob("*.json")) if folder.is_dir() else []


def pack_path(name: str) -> Path | None:
    """The file of a shipped pack, or None: names are letters, digits, `-` and `_`, at most 100."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", name):
        return None
    path = _pack_folder() / f"{name}.json"
    return path if path.is_file() else None


def resolve_extends(document: dict[str, Any], label: str, base: str, rule_types: dict[str, type], *,
                    pack_paths: bool = True, files: list[str] | None = None,
                    source: ContractSource | None = None) -> dict[str, Any]:
    """`document` (a contract, already checked) with its `extends` replaced by the packs' rules
    merged before its own. Each pack is read with the contract size limit and its rules are
    checked in its own file. With `pack_paths` false only shipped packs may be named: an entry
    that is a path is refused without a look at the filesystem. The path of each pack file read is
    added to `files`, when given (an output must not replace one). The problems of the contract's
    own entries (a pack not found, a cycle…) are reported together, each with its line in
    `source`; a problem inside a pack file is reported in that file."""
    own = document.get("rules")
    version = 1 if document.get("version") == 1 else 2   # (checked already: 1 or 2)
    extends = _Extends(rule_types, pack_paths, len(own) if isinstance(own, list) else 0, files, version)
    return extends.merged(document, label, base, source=source)


class _Limit(ContractError):
    """A total of the contract's packs passed (`MAX_PACK_LOADS`, `MAX_RULES`): no later entry is tried."""


class _Entry(NamedTuple):
    """An `extends` entry of the contract itself: the file and the JSON path (`$.extends[2]`)."""

    label: str
    path: str


class _Extends:
    """One contract's packs, loaded within the limits: `MAX_EXTENDS_DEPTH` levels,
    `MAX_PACK_LOADS` pack files and `MAX_RULES` rules in all. The first two are counted as packs
    are named, the rules as each pack is read (before its rules are checked), so a limit stops
    the work where it is passed. Passing the depth is reported where the pack is named; the
    totals are the contract's, so passing them is reported at the contract's own entry that led
    there."""

    def __init__(self, rule_types: dict[str, type], pack_paths: bool, own_rules: int,
                 files: list[str] | None, version: int) -> None:
        self.rule_types = rule_types
        self.version = version   # the contract's: a pack's rules are read as its own are
        self.pack_paths = pack_paths
        self.files = files
        self.packs_loaded = 0
        self.rules_loaded = own_rules   # every rule read counts, even one a later rule replaces

    def merged(self, document: dict[str, Any], label: str, base: str, chain: tuple[str, ...] = (),
               entry: _Entry | None = None, source: ContractSource | None = None) -> dict[str, Any]:
        """`document` with its packs' rules merged before its own. For the contract itself
        (`entry` None), every entry is tried and their problems raised together."""
        refs = document.get("extends")
        if refs is None:
            return document
        if not isinstance(refs, list) or not all(isinstance(ref, str) for ref in refs):
            raise ContractError(label, "$.extends", "expected an array of pack names or paths")
        rules: list[Any] = []
        problems: list[Problem] = []
        for position, ref in enumerate(refs):
            try:
                self._add_entry(rules, position, ref, label, base, chain, entry)
            except ContractError as error:
                if entry is not None or error.source != label:   # a pack's own problem: in its file
                    raise
                problems += [Problem(path or "$", problem) for path, problem, _ in error.problems]
                if isinstance(error, _Limit):
                    break   # the totals are passed: no later entry can load
        if problems:
            raise contract_error(label, problems, source)
        own = document.get("rules", [])
        _merge(rules, own if isinstance(own, list) else [])
        merged = {key: value for key, value in document.items() if key != "extends"}
        merged["rules"] = rules if isinstance(own, list) else own
        return merged

    def _add_entry(self, rules: list[Any], position: int, ref: str, label: str, base: str,
                   chain: tuple[str, ...], entry: _Entry | None) -> None:
        """Merge into `rules` the rules of the pack `ref` (the `extends` entry at `position`)."""
        where = f"$.extends[{position}]"
        if len(chain) == MAX_EXTENDS_DEPTH:
            raise ContractError(label, where, f"packs extend packs more than {MAX_EXTENDS_DEPTH} levels deep "
                                              "(limit)")
        path, shown = _locate(ref, base, label, where, self.pack_paths)
        if self.files is not None:
            self.files.append(path)
        key = os.path.realpath(path)
        if key in chain:
            cycle = " -> ".join([*(os.path.basename(step) for step in chain), os.path.basename(key)])
            raise ContractError(label, where, f"extends cycle: {cycle}")
        through = entry or _Entry(label, where)
        pack = self.merged(self._load(path, shown, through), shown, os.path.dirname(path), (*chain, key), through)
        _merge(rules, pack["rules"])

    def _load(self, path: str, label: str, entry: _Entry) -> dict[str, Any]:
        """The pack at `path`, parsed and checked; `entry` is the contract's `extends` entry
        it is loaded through, where the totals are reported."""
        self.packs_loaded += 1
        if self.packs_loaded > MAX_PACK_LOADS:
            raise _Limit(entry.label, entry.path, f"more than {MAX_PACK_LOADS} packs loaded through extends (limit)")
        source = ContractSource(read_limited(path, label, "packs"), label, os.path.dirname(path), is_yaml(path))
        pack: dict[str, Any] = parse(source)   # any JSON, but `_pack_problems` refuses all but an object
        problems = first_problems(_pack_problems(pack))
        if problems:
            raise contract_error(label, problems, source)
        self.rules_loaded += len(pack["rules"])
        if self.rules_loaded > MAX_RULES:
            raise _Limit(entry.label, entry.path, f"more than {MAX_RULES:,} rules with the packs loaded "
                                                  f"through extends (at most {MAX_RULES:,} rules in all)")
        problems = first_problems(problem for position, rule in enumerate(pack["rules"])
                                  for problem in rule_problems(rule, self.rule_types, f"$.rules[{position}]",
                                                               self.version))
        if problems:   # (a pack has no version: the contract that extends it says which)
            raise contract_error(label, [problem._replace(message=f"{problem.message} in the contract that extends "
                                                                  "this pack")
                                         if problem.message.endswith(NEEDS_VERSION_2) else problem
                                         for problem in problems], source)
        return pack


def _locate(ref: str, base: str, label: str, where: str, pack_paths: bool) -> tuple[str, str]:
    """The file of the pack `ref` names, and how messages name it."""
    if ref.startswith(PACK_PREFIX):
        name = ref[len(PACK_PREFIX):]
        shipped = pack_path(name)
        if shipped is None:
            raise ContractError(label, where, f"unknown pack {ref!r}{_meant(ref)}; shipped packs: "
                                              + ", ".join(_shipped()))
        return str(shipped), ref
    if not pack_paths:
        raise ContractError(label, where, f"packs can only be named as {PACK_PREFIX}<pack> here; files are not "
                                          f"read{_meant(ref)}")
    path = os.path.join(base, ref)
    if not os.path.isfile(path):   # a folder, FIFO or device is never opened
        missing = "is not a regular file" if os.path.exists(path) else \
            DANGLING if os.path.islink(path) else \
            "not found"
        raise ContractError(label, where, f"pack file {ref!r} {missing} (looked for {_shown(path)}){_meant(ref)}")
    return path, _shown(path)


def _shown(path: str) -> str:
    """A pack file as messages name it: relative to the current folder when it is inside it
    (`packs/base.json`, as the user would name it), else the whole path, without `..` steps."""
    return inside(path) or os.path.abspath(path)


def _shipped() -> list[str]:
    return [PACK_PREFIX + pack for pack in available_packs()]


def _meant(ref: str) -> str:
    """"Did you mean" a shipped pack, for an entry close to one's name (`agent-invariants:payment`,
    `agent-invariants/payments`, or the bare `payments`, which is read as a path). Names are
    compared without the prefix, which every pack shares; a path into folders is no pack's name."""
    name = ref.removeprefix(PACK_PREFIX).removeprefix("agent-invariants/").removesuffix(".json")
    close = None if "/" in name or "\\" in name else closest(name, available_packs())
    return did_you_mean(None if close is None else PACK_PREFIX + close)


def _pack_problems(pack: Any) -> Iterator[Problem]:
    """Problems of the shape of a pack (its rules are checked once they are counted)."""
    if not isinstance(pack, dict):
        yield Problem("$", "a pack must be a JSON object with `rules`")
        return
    for key in pack:
        if key not in _PACK_KEYS:
            yield Problem(member("$", key), f"unknown field in a pack{suggest(key, _PACK_KEYS)}; expected one of: "
                                      f"{', '.join(_PACK_KEYS)}")
    if not isinstance(pack.get("rules"), list):
        yield Problem("$.rules", "a pack needs a `rules` array")


def _merge(rules: list[Any], more: list[Any]) -> None:
    """Append `more` to `rules`; a rule with an id already present replaces it where it stands."""
    position = {rule.get("id"): index for index, rule in enumerate(rules) if isinstance(rule, dict)}
    for rule in more:
        rule_id = rule.get("id") if isinstance(rule, dict) else None
        if isinstance(rule_id, str) and rule_id in position:
            rules[position[rule_id]] = rule
        else:
            if isinstance(rule_id, str):
                position[rule_id] = len(rules)
            rules.append(rule)
