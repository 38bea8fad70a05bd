"""Paths in reports of a deep output of long keys: the texts of all its paths together grow with
the square of its size (two 0.8 MB traces made 160 MB of stability report, 321 MB of JUnit, and ran
the GitHub format out of memory; mutate's ids and lint's interface the same). A path longer than
1,000 characters is written cut, `…`, with a hash of the whole, so that paths (and a mutant's ids)
stay apart; `--show-mutant` still takes a cut id. Reports stay in the order of the paths."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

DEPTH, KEY = 60, 200


def _deep(leaf: Any) -> dict[str, Any]:
    """An output nested DEPTH deep, each level's key KEY characters long and a leaf `v` at each."""
    output: dict[str, Any] = {"v": leaf}
    for level in range(DEPTH):
        output = {f"k{level:02d}" * (KEY // 3): output, "v": leaf}
    return output


def _write(tmp_path: Path, name: str, output: Any) -> str:
    (tmp_path / name).write_text(json.dumps({"seq": 1, "type": "run.completed", "output": output}) + "\n")
    return name


@pytest.mark.parametrize("fmt", ["json", "text", "junit", "sarif", "github", "markdown"])
def test_stability_writes_each_path_cut_at_1000_characters(cli: Cli, tmp_path: Path, fmt: str) -> None:
    runs = [_write(tmp_path, "a.jsonl", _deep(1)), _write(tmp_path, "b.jsonl", _deep("s"))]
    result = cli("stability", *runs, "--format", fmt)
    assert result.returncode == 1, result.stderr
    assert len(result.stdout) < 300_000   # (uncut: the 61 paths' texts alone were 370,000 characters)
    if fmt == "json":
        paths = [entry["path"] for entry in json.loads(result.stdout)["unstable"]]
        assert len(paths) == DEPTH + 1 and paths == sorted(paths)
        cut = [path for path in paths if "…" in path]
        assert len(cut) > DEPTH // 2 and all(re.fullmatch(r".{1000}…[0-9a-f]{16}", path, re.S) for path in cut)
        assert all(len(path) <= 1000 for path in paths if path not in cut)


def test_lint_interface_writes_each_path_cut_at_1000_characters(cli: Cli, tmp_path: Path) -> None:
    match: Any = {"leaf": 1}
    for level in range(30):   # (a match tree is at most 32 levels deep)
        match = {f"k{level:02d}" * (KEY // 3): match}
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "deep", "rules": [
        {"id": "out", "kind": "output_match", "match": match}]}))
    result = cli("lint", "--interface", "--format", "json", "-c", "c.json")
    assert result.returncode == 0, result.stderr
    paths = [read["path"] for read in json.loads(result.stdout)["interface"]]
    assert len(paths) == 32 and all(len(path) <= 1017 for path in paths)
    assert paths[0] == "$" and sum("…" in path for path in paths) == 26   # (5 keys: 994 characters; 6 on: cut)
    assert len(result.stdout) < 300_000


def test_mutant_ids_cut_a_long_pointer_and_keep_a_hash_of_it(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "m", "rules": [
        {"id": "o", "kind": "run_status", "equals": "completed"}]}))
    trace = _write(tmp_path, "t.jsonl", _deep(1))
    result = cli("mutate", "-c", "c.json", "-t", trace, "--format", "json", "--jobs", "1")
    assert result.returncode == 0, result.stderr
    ids = [mutant["id"] for mutant in json.loads(result.stdout)["mutants"] if mutant["operator"] == "misreport_output"]
    assert len(ids) == len(set(ids)) == DEPTH + 1
    cut = [ident for ident in ids if "…" in ident]
    assert cut and all(re.fullmatch(r"misreport_output:1:.{1000}…[0-9a-f]{16}", ident, re.S) for ident in cut)
    assert all(len(ident) <= len("misreport_output:1:") + 1000 for ident in ids if ident not in cut)
    shown = cli("mutate", "-c", "c.json", "-t", trace, "--show-mutant", cut[-1])
    assert shown.returncode == 0, shown.stderr
    changed = [path for path, value in _leaves(json.loads(shown.stdout)["output"]) if value != 1]
    assert len(changed) == 1   # the one leaf its id names: the cut pointer starts the leaf's
    assert ("/" + "/".join(changed[0])).startswith(cut[-1].removeprefix("misreport_output:1:").split("…")[0])


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if not isinstance(value, dict):
        return [(path, value)]
    return [leaf for key, member in value.items() for leaf in _leaves(member, (*path, key))]


def test_stability_keeps_paths_cut_alike_apart_by_a_hash(cli: Cli, tmp_path: Path) -> None:
    """Found by a spec-words reading of stability: two paths that share their first 1,000
    characters were written as one text, twice, so the report could not tell them apart. A cut
    path ends with a hash of the whole now (as a mutant's id does); the whole path still works as
    `--ignore`."""
    key = "k" * 1100
    runs = [_write(tmp_path, "a.jsonl", {key + "A": 1, key + "B": 1}),
            _write(tmp_path, "b.jsonl", {key + "A": "x", key + "B": "y"})]
    result = cli("stability", *runs, "--format", "json")
    assert result.returncode == 1, result.stderr
    paths = [entry["path"] for entry in json.loads(result.stdout)["unstable"]]
    assert len(paths) == len(set(paths)) == 2
    assert all(re.fullmatch("k{1000}…[0-9a-f]{16}", path) for path in paths)
    quiet = cli("stability", *runs, "--ignore", key + "A", "--ignore", key + "B")
    assert quiet.returncode == 0, quiet.stderr
