#!/usr/bin/env python3
"""Fuzz target: a contract and the packs it extends, as files.

The input is cut at each line `---` into up to four files in a scratch folder: `contract.json`,
then `a.json`, `b.json` and `sub/c.json`, so packs can name each other (`a.json`, `../a.json`,
`sub/c.json`), themselves (a cycle), a missing file, a shipped pack (`agent-invariants:payments`),
or one pack many times (the caps: 16 levels, 256 pack loads). `load_contract` reads the contract
by path.

Findings: an exception other than `InputError`, a hang or runaway memory, and an `OracleMismatch`:
when the contract loads, its rule ids in order must be what an independent model of `extends`
gives, written from the documented semantics (packs in order, depth first; a rule whose id is
already known replaces the earlier one where it stands, new ids are appended, the contract's own
rules come last; a pack that extends itself through others is a cycle; more than 16 levels or 256
loads is refused). The model decodes the files with Python's `json` (NaN and Infinity refused,
lone surrogate escapes read as U+FFFD, as the tool reads them), so JSON dialect questions stay out.

Run:  python fuzz/fuzz_extends.py fuzz/work/extends fuzz/corpus/extends -dict=fuzz/extends.dict \\
          -max_total_time=1800 -rss_limit_mb=2048 -timeout=30
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fuzzcommon  # noqa: E402  (not instrumented: it is the harness, not the target)

with atheris.instrument_imports():

    from agent_invariants import InputError, load_contract
    from agent_invariants.packs import MAX_EXTENDS_DEPTH, MAX_PACK_LOADS, PACK_PREFIX, pack_path

NAMES = ("contract.json", "a.json", "b.json", os.path.join("sub", "c.json"))
FOLDER = tempfile.mkdtemp(prefix="fuzz-extends-")
os.makedirs(os.path.join(FOLDER, "sub"), exist_ok=True)


class ModelError(Exception):
    """The model refuses the files (a cycle, a missing pack, a cap, a shape it cannot merge)."""


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is no JSON number")


def _mended(value: object) -> object:
    """JSON as the tool reads it: a lone surrogate escape (which `json` keeps, and msgspec
    refuses) is U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_mended(item) for item in value]
    if isinstance(value, dict):
        return {_mended(key): _mended(item) for key, item in value.items()}
    return value


def _model_rules(path: str, chain: tuple[str, ...], state: dict[str, int], depth: int) -> list[dict]:
    """The merged rules of the document at `path` (the contract, or a pack `depth` levels down)."""
    try:
        with open(path, "rb") as handle:
            document = _mended(json.loads(handle.read().decode("utf-8"), parse_constant=_no_constant))
    except (OSError, UnicodeError, ValueError, RecursionError):
        raise ModelError(f"cannot read {path}") from None
    if not isinstance(document, dict):
        raise ModelError("not an object")
    refs = document.get("extends", [])
    own = document.get("rules", [])
    if not isinstance(refs, list) or not isinstance(own, list):
        raise ModelError("extends or rules of the wrong shape")
    merged: list[dict] = []
    for ref in refs:
        if not isinstance(ref, str):
            raise ModelError("an extends entry that is not a string")
        if ref.startswith(PACK_PREFIX):
            found = pack_path(ref[len(PACK_PREFIX):])
            if found is None:
                raise ModelError("unknown shipped pack")
            target = str(found)
        else:
            target = os.path.join(os.path.dirname(path), ref)
            if not os.path.isfile(target):
                raise ModelError("missing pack")
        key = os.path.realpath(target)
        if key in chain:
            raise ModelError("cycle")
        if depth + 1 > MAX_EXTENDS_DEPTH:
            raise ModelError("too deep")
        state["loads"] += 1
        if state["loads"] > MAX_PACK_LOADS:
            raise ModelError("too many loads")
        _merge(merged, _model_rules(target, (*chain, key), state, depth + 1))
    _merge(merged, own)
    return merged


def _merge(rules: list, more: list) -> None:
    for rule in more:
        rule_id = rule.get("id") if isinstance(rule, dict) else None
        at = next((i for i, old in enumerate(rules) if isinstance(old, dict) and isinstance(rule_id, str)
                   and old.get("id") == rule_id), None)
        if at is None:
            rules.append(rule)
        else:
            rules[at] = rule


def _write_files(data: bytes) -> str:
    parts = data.split(b"\n---\n")[:len(NAMES)]
    for name in NAMES:
        path = os.path.join(FOLDER, name)
        if os.path.exists(path):
            os.unlink(path)
    for name, part in zip(NAMES, parts, strict=False):   # the data may hold fewer parts
        with open(os.path.join(FOLDER, name), "wb") as handle:
            handle.write(part)
    return os.path.join(FOLDER, NAMES[0])


def TestOneInput(data: bytes) -> None:
    try:
        path = _write_files(data)
        try:
            contract = load_contract(path)
        except InputError:
            return
        try:
            expected = [rule.get("id") for rule in _model_rules(path, (os.path.realpath(path),), {"loads": 0}, 0)]
        except ModelError as exc:
            raise _fuzzcommon.OracleMismatch("extends-model", f"loaded, but the model says: {exc}") from None
        found = [rule.id for rule in contract.rules]
        if found != expected:
            raise _fuzzcommon.OracleMismatch("extends-model", f"rules {found[:20]} but the model gives {expected[:20]}")
    except Exception as exc:  # noqa: BLE001 - everything but InputError is a finding
        _fuzzcommon.finding(exc, data, "extends")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
