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
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

from agent_invariants.errors import ContractError

__all__ = ("PACK_PREFIX", "available_packs", "pack_path", "resolve_extends")

PACK_PREFIX = "agent-invariants:"
_PACK_KEYS = ("$schema", "name", "description", "extends", "rules")


def _pack_folder() -> Path:
    """Packs ship in the wheel as agent_invariants/packs; in a source checkout they are rules/."""
    shipped = Path(str(files("agent_invariants"))) / "packs"
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parent.parent / "rules"


def available_packs() -> list[str]:
    folder = _pack_folder()
    return sorted(path.stem for path in folder.glob("*.json")) if folder.is_dir() else []


def pack_path(name: str) -> Path | None:
    """The file of a shipped pack, or None: names are letters, digits, `-` and `_`, at most 100."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", name):
        return None
    path = _pack_folder() / f"{name}.json"
    return path if path.is_file() else None


Loader = Callable[[str, str], Any]   # (path, label) -> parsed document


def resolve_extends(document: dict, label: str, base: str, load: Loader, chain: tuple[str, ...] = ()) -> dict:
    """`document` with its `extends` replaced by the packs' rules merged before its own."""
    refs = document.get("extends")
    if refs is None:
        return document
    if not isinstance(refs, list) or not all(isinstance(ref, str) for ref in refs):
        raise ContractError(label, "$.extends", "expected an array of pack names or paths")
    rules: list[Any] = []
    for position, ref in enumerate(refs):
        where = f"$.extends[{position}]"
        path, shown = _locate(ref, base, label, where)
        key = os.path.realpath(path)
        if key in chain:
            cycle = " -> ".join([*(os.path.basename(step) for step in chain), os.path.basename(key)])
            raise ContractError(label, where, f"extends cycle: {cycle}")
        pack = load(path, shown)
        _check_pack(pack, shown)
        pack = resolve_extends(pack, shown, os.path.dirname(path), load, (*chain, key))
        _merge(rules, pack.get("rules", []))
    own = document.get("rules", [])
    _merge(rules, own if isinstance(own, list) else [])
    merged = {key: value for key, value in document.items() if key != "extends"}
    merged["rules"] = rules if isinstance(own, list) else own
    return merged


def _locate(ref: str, base: str, label: str, where: str) -> tuple[str, str]:
    if ref.startswith(PACK_PREFIX):
        name = ref[len(PACK_PREFIX):]
        path = pack_path(name)
        if path is None:
            raise ContractError(label, where, f"unknown pack {ref!r}; shipped packs: "
                                              + ", ".join(PACK_PREFIX + pack for pack in available_packs()))
        return str(path), ref
    path = os.path.join(base, ref)
    if not os.path.isfile(path):
        raise ContractError(label, where, f"pack file {ref!r} not found (looked for {path})")
    return path, path


def _check_pack(pack: Any, label: str) -> None:
    if not isinstance(pack, dict):
        raise ContractError(label, "$", "a pack must be a JSON object with `rules`")
    for key in pack:
        if key not in _PACK_KEYS:
            raise ContractError(label, f"$.{key}", f"unknown field in a pack (expected {', '.join(_PACK_KEYS)})")
    if not isinstance(pack.get("rules"), list):
        raise ContractError(label, "$.rules", "a pack needs a `rules` array")


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
