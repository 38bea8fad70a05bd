"""`agent-invariants stability`, tested from the spec's words alone (spec v2 §0 for the terminal and the
final output, §5, and the §10 resolutions 51-55, which are binding where they differ from §5), through the
CLI on real trace files: the §5 example and its passing variant, the path notation, `--ignore` and
`--map`, present / absent-here / absent-below / unknown, type instability, which traces report, "not
measured", `--contract`, and bad input. A small reference model, written from the same text, is compared
with the library on random outputs.

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.stability import stability_of

import cli_zygote
from support import examples

SCHEMA = "agent-invariants/stability/v1"
ABSENT: Any = object()          # an event key left out
NO_TERMINAL: Any = object()     # a trace with no run.completed / run.failed at all


# -- helpers: traces, contracts, the CLI ----------------------------------------------------------

def events(output: Any = ABSENT, terminal: str | None = "run.completed",
           before: list[dict[str, Any]] | tuple[dict[str, Any], ...] = ()) -> list[dict[str, Any]]:
    """A run: `run.start`, the `before` events, then the terminal (none when `terminal` is None, or
    when `output` is NO_TERMINAL) carrying `output` unless it is ABSENT. `seq` is numbered 1, 2, …"""
    evs: list[dict[str, Any]] = [{"type": "run.start"}, *before]
    if terminal is not None and output is not NO_TERMINAL:
        last: dict[str, Any] = {"type": terminal}
        if output is not ABSENT:
            last["output"] = output
        evs.append(last)
    return [{"seq": i + 1, **e} for i, e in enumerate(evs)]


def write_trace(folder: Path, name: str, evs: list[dict[str, Any]]) -> str:
    """Writes a JSONL trace under `folder` and returns `name`, the path as given on the command line."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in evs), encoding="utf-8")
    return name


def write_outputs(folder: Path, *outputs: Any) -> list[str]:
    """One trace per output, t1.jsonl, t2.jsonl, … (NO_TERMINAL: a trace without terminal)."""
    return [write_trace(folder, f"t{i + 1}.jsonl", events(out)) for i, out in enumerate(outputs)]


def write_contract(folder: Path, contract: Any, name: str = "contract.json") -> str:
    (folder / name).write_text(json.dumps(contract), encoding="utf-8")
    return name


def deny_shell(severity: str | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}
    if severity is not None:
        rule["severity"] = severity
    return {"version": 1, "name": "stability-test", "rules": [rule]}


def shell_call(call_id: str = "c1") -> dict[str, Any]:
    return {"type": "tool.call", "tool": "shell.exec", "call_id": call_id}


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m agent_invariants stability *args`, run in `cwd`."""
    env = {**os.environ, "NO_COLOR": "1"}
    return cli_zygote.as_text(cli_zygote.run_python(["-m", "agent_invariants", "stability", *args], cwd, None, env,
                                                    timeout=120))


def stability(cwd: Path, traces: list[str], *options: str) -> tuple[int, dict[str, Any]]:
    """Runs `stability --format json` and returns (exit code, parsed report)."""
    proc = run_cli(cwd, *traces, *options, "--format", "json")
    assert proc.stdout.strip(), f"no report on stdout (exit {proc.returncode}): {proc.stderr}"
    report = json.loads(proc.stdout)
    check_report_form(report)
    return proc.returncode, report


def check_report_form(report: dict[str, Any]) -> None:
    """Point 55: the keys of the report, of each run and of each unstable entry."""
    assert set(report) == {"schema", "runs", "measured", "stable", "unstable"}
    assert report["schema"] == SCHEMA
    for run in report["runs"]:
        assert set(run) - {"check"} == {"trace", "reporting", "output_sha256"}
    for entry in report["unstable"]:
        assert set(entry) == {"path", "kind", "present_in", "absent_in", "unknown_in", "types"}
        assert len(entry["types"]) == len(report["runs"])


def entry(path: str, kind: str, present: Sequence[int], absent: Sequence[int] = (), unknown: Sequence[int] = (),
          types: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    """An `unstable` entry as point 55 writes it."""
    return {"path": path, "kind": kind, "present_in": list(present), "absent_in": list(absent),
            "unknown_in": list(unknown), "types": [list(t) for t in types]}


def sha(value: Any) -> str:
    """SHA-256 of the RFC 8785 form; exact for outputs of ASCII strings, integers, objects and arrays."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# -- a reference model, from §5 and points 51-53 --------------------------------------------------

IDENT = re.compile(r"[A-Za-z0-9_-]+")
ELEM = ("elem", None)
MAPPED = ("map", None)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def render(path: tuple[tuple[str, str | None], ...]) -> str:
    """Point 51: `$`; `k` / `P.k` for [A-Za-z0-9_-]+ keys, else `["k"]` / `P["k"]`; `P[]`; `P{}`."""
    if not path:
        return "$"
    text = ""
    for i, (step, key) in enumerate(path):
        if step == "member":
            assert key is not None
            if IDENT.fullmatch(key):
                text += key if i == 0 else "." + key
            else:
                text += "[" + json.dumps(key) + "]"
        else:
            text += "[]" if step == "elem" else "{}"
    return text


def shape(value: Any, maps: frozenset[str] = frozenset()) -> dict[tuple, set[str]]:
    """§5: path -> set of JSON types; array elements merge at `[]`, members of a mapped object at `{}`."""
    result: dict[tuple, set[str]] = {}

    def walk(v: Any, path: tuple) -> None:
        result.setdefault(path, set()).add(json_type(v))
        if isinstance(v, list):
            for item in v:
                walk(item, (*path, ELEM))
        elif isinstance(v, dict):
            mapped = render(path) in maps
            for k, item in v.items():
                walk(item, (*path, MAPPED if mapped else ("member", k)))

    walk(value, ())
    return result


def classify(path: tuple, trace_shape: dict[tuple, set[str]]) -> str:
    """Point 52: present, unknown, absent-here or absent-below, by the first missing step from the root."""
    if path in trace_shape:
        return "present"
    for i in range(1, len(path) + 1):
        if path[:i] in trace_shape:
            continue
        step, parent_types = path[i - 1], trace_shape[path[:i - 1]]
        if step == ELEM:
            return "unknown" if "array" in parent_types else "absent-below"
        if step == MAPPED:
            return "unknown" if "object" in parent_types else "absent-below"
        if i == len(path) and "object" in parent_types:
            return "absent-here"
        return "absent-below"
    raise AssertionError("unreachable: the root is always present in a reporting trace")


def model_unstable(outputs: list[Any], ignore: tuple[str, ...] = (), maps: tuple[str, ...] = ()) -> list[dict]:
    """The `unstable` list for runs whose final outputs are `outputs` (NO_TERMINAL: not reporting)."""
    reporting = [i for i, out in enumerate(outputs) if out is not NO_TERMINAL]
    if len(reporting) < 2:
        return []
    shapes = {i: shape(outputs[i], frozenset(maps)) for i in reporting}
    entries = []
    for path in set().union(*shapes.values()):
        if any(render(path[:j]) in ignore for j in range(len(path) + 1)):
            continue
        status = {i: classify(path, shapes[i]) for i in reporting}
        present = [i for i in reporting if status[i] == "present"]
        base = {
            "path": render(path),
            "present_in": present,
            "absent_in": [i for i in reporting if status[i].startswith("absent")],
            "unknown_in": [i for i in reporting if status[i] == "unknown"],
            "types": [sorted(shapes[i][path]) if i in shapes and path in shapes[i] else []
                      for i in range(len(outputs))],
        }
        if present and any(status[i] == "absent-here" for i in reporting):
            entries.append({**base, "kind": "presence"})
        if len({frozenset(shapes[i][path]) for i in present}) > 1:
            entries.append({**base, "kind": "type"})
    return sorted(entries, key=lambda e: (e["path"], e["kind"] != "presence"))


# -- the §5 example -------------------------------------------------------------------------------

SPEC_T1 = {"refunds": [{"id": "A9", "amount": 10}], "total": 10}
SPEC_T2 = {"refunds": [], "total": "0"}
SPEC_T3 = {"refunds": [{"id": "B2"}], "total": 0}
SPEC_UNSTABLE = [
    entry("refunds[].amount", "presence", [0], [2], [1], [["number"], [], []]),
    entry("total", "type", [0, 1, 2], types=[["number"], ["string"], ["number"]]),
]


def test_reference_model_reproduces_the_spec_example() -> None:
    assert model_unstable([SPEC_T1, SPEC_T2, SPEC_T3]) == SPEC_UNSTABLE


def test_spec_example_total_is_type_unstable_and_amount_presence_unstable_exit_1(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, SPEC_T1, SPEC_T2, SPEC_T3))
    assert code == 1
    assert report["measured"] is True and report["stable"] is False
    assert report["unstable"] == SPEC_UNSTABLE


def test_spec_example_passes_with_total_0_in_t2_and_an_amount_in_t3(tmp_path: Path) -> None:
    t2 = {"refunds": [], "total": 0}
    t3 = {"refunds": [{"id": "B2", "amount": 5}], "total": 0}
    code, report = stability(tmp_path, write_outputs(tmp_path, SPEC_T1, t2, t3))
    assert code == 0
    assert report["measured"] is True and report["stable"] is True
    assert report["unstable"] == []


# -- the report's runs ----------------------------------------------------------------------------

def test_runs_list_each_trace_as_given_with_reporting_and_output_sha256(tmp_path: Path) -> None:
    first = write_trace(tmp_path, "runs/first.jsonl", events({"a": [1, "x"], "b": 2}))
    second = write_trace(tmp_path, "runs/second.jsonl", events({"a": ["y", 3], "b": 4}))
    code, report = stability(tmp_path, [first, second])
    assert code == 0
    assert report["runs"] == [
        {"trace": "runs/first.jsonl", "reporting": True, "output_sha256": sha({"a": [1, "x"], "b": 2})},
        {"trace": "runs/second.jsonl", "reporting": True, "output_sha256": sha({"a": ["y", 3], "b": 4})},
    ]


def test_output_sha256_is_of_the_canonical_form_whatever_the_key_order(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"b": 1, "a": {"d": "x", "c": 2}},
                                                     {"a": {"c": 2, "d": "x"}, "b": 1}))
    assert code == 0
    expected = sha({"a": {"c": 2, "d": "x"}, "b": 1})
    assert [run["output_sha256"] for run in report["runs"]] == [expected, expected]


def test_output_sha256_writes_1_0_as_1_like_rfc_8785(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"n": 1.0}, {"n": 1}))
    assert code == 0
    assert [run["output_sha256"] for run in report["runs"]] == [sha({"n": 1}), sha({"n": 1})]


def test_no_check_key_in_runs_without_contract(tmp_path: Path) -> None:
    _, report = stability(tmp_path, write_outputs(tmp_path, {"a": 1}, {"a": 1}))
    assert all("check" not in run for run in report["runs"])


# -- point 51: path notation ----------------------------------------------------------------------

def test_root_type_change_is_reported_at_dollar(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, 1, "one"))
    assert code == 1
    assert report["unstable"] == [entry("$", "type", [0, 1], types=[["number"], ["string"]])]


def test_identifier_keys_are_dotted_and_other_keys_are_json_strings_in_brackets(tmp_path: Path) -> None:
    t1 = {"a-1_B": 1, "a.b": 1, "": 1, "x": {"k y": 1, "id": 1}}
    t2 = {"a-1_B": "s", "a.b": "s", "": "s", "x": {"k y": "s", "id": "s"}}
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2))
    assert code == 1
    types = [["number"], ["string"]]
    assert report["unstable"] == [
        entry('[""]', "type", [0, 1], types=types),
        entry('["a.b"]', "type", [0, 1], types=types),
        entry("a-1_B", "type", [0, 1], types=types),
        entry("x.id", "type", [0, 1], types=types),
        entry('x["k y"]', "type", [0, 1], types=types),
    ]


def test_root_array_elements_are_brackets_and_their_members_dotted(tmp_path: Path) -> None:
    t1 = [{"a": 1}, {"n": [1]}]
    t2 = [{"b": 1}, {"n": ["s"]}]
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2))
    assert code == 1
    assert report["unstable"] == [
        entry("[].a", "presence", [0], [1], types=[["number"], []]),
        entry("[].b", "presence", [1], [0], types=[[], ["number"]]),
        entry("[].n[]", "type", [0, 1], types=[["number"], ["string"]]),
    ]


def test_root_array_element_type_change_is_reported_at_brackets(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, [1, 2], [[3]]))
    assert code == 1
    assert report["unstable"] == [entry("[]", "type", [0, 1], types=[["number"], ["array"]])]


def test_entries_are_sorted_by_path_in_code_point_order(tmp_path: Path) -> None:
    t1 = {"a": 1, "Z": 1, "_": 1, "a-b": 1, "x y": 1, "b": {"c": 1}}
    t2 = {"a": "s", "Z": "s", "_": "s", "a-b": "s", "x y": "s", "b": {"c": "s"}}
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2))
    assert code == 1
    # 'Z' 0x5A < '[' 0x5B < '_' 0x5F < 'a' 0x61 < 'b' 0x62, and "a" < "a-b".
    assert [e["path"] for e in report["unstable"]] == ["Z", '["x y"]', "_", "a", "a-b", "b.c"]


# -- point 51: --ignore ---------------------------------------------------------------------------

IGNORE_T1 = {"meta": {"t": 1, "k y": 1, "l": [1], "u": {"v": 1}}, "metadata": 1}
IGNORE_T2 = {"meta": {"t": "s", "k y": "s", "l": ["s"]}, "metadata": "s"}


def test_without_ignore_every_path_below_meta_is_reported(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, IGNORE_T1, IGNORE_T2))
    assert code == 1
    types = [["number"], ["string"]]
    assert report["unstable"] == [
        entry("meta.l[]", "type", [0, 1], types=types),
        entry("meta.t", "type", [0, 1], types=types),
        entry("meta.u", "presence", [0], [1], types=[["object"], []]),
        entry('meta["k y"]', "type", [0, 1], types=types),
        entry("metadata", "type", [0, 1], types=types),
    ]


def test_ignore_silences_the_path_and_everything_below_it_but_not_a_sibling_sharing_its_prefix(
        tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, IGNORE_T1, IGNORE_T2), "--ignore", "meta")
    assert code == 1
    assert report["unstable"] == [entry("metadata", "type", [0, 1], types=[["number"], ["string"]])]


def test_ignore_accepts_a_leading_dollar_dot_and_repeats(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, IGNORE_T1, IGNORE_T2),
                             "--ignore", "$.meta", "--ignore", "$.metadata")
    assert code == 0
    assert report["stable"] is True and report["unstable"] == []


def test_ignore_a_nested_path_leaves_its_siblings_reported(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, IGNORE_T1, IGNORE_T2),
                             "--ignore", "meta.t", "--ignore", "meta.u", "--ignore", "metadata")
    assert code == 1
    assert [(e["path"], e["kind"]) for e in report["unstable"]] == [("meta.l[]", "type"), ('meta["k y"]', "type")]


def test_ignore_takes_bracketed_keys_and_array_paths(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, IGNORE_T1, IGNORE_T2),
                             "--ignore", 'meta["k y"]', "--ignore", "meta.l[]")
    assert code == 1
    assert [e["path"] for e in report["unstable"]] == ["meta.t", "meta.u", "metadata"]


def test_ignore_silences_a_presence_instability(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"a": 1, "debug": {"x": 1}}, {"a": 2}),
                             "--ignore", "debug")
    assert code == 0
    assert report["unstable"] == []


# -- point 51: --map ------------------------------------------------------------------------------

def test_without_map_object_keys_are_separate_paths(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"scores": {"alice": 1}}, {"scores": {"bob": 2}}))
    assert code == 1
    assert report["unstable"] == [
        entry("scores.alice", "presence", [0], [1], types=[["number"], []]),
        entry("scores.bob", "presence", [1], [0], types=[[], ["number"]]),
    ]


def test_map_merges_the_members_of_the_object_at_p_into_p_braces(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"scores": {"alice": 1}}, {"scores": {"bob": 2}}),
                             "--map", "scores")
    assert code == 0
    assert report["stable"] is True and report["unstable"] == []


def test_mapped_members_are_type_checked_at_p_braces(tmp_path: Path) -> None:
    traces = write_outputs(tmp_path, {"scores": {"alice": 1, "carol": 2}}, {"scores": {"bob": "x"}})
    code, report = stability(tmp_path, traces, "--map", "$.scores")
    assert code == 1
    assert report["unstable"] == [entry("scores{}", "type", [0, 1], types=[["number"], ["string"]])]


def test_map_applies_to_each_object_at_an_array_element_path(tmp_path: Path) -> None:
    t1 = {"users": [{"tags": {"red": 1}}, {"tags": {"blue": 2}}]}
    t2 = {"users": [{"tags": {"green": 3}}]}
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2), "--map", "users[].tags")
    assert code == 0
    assert report["unstable"] == []


def test_an_empty_mapped_object_makes_the_paths_below_it_unknown(tmp_path: Path) -> None:
    t1 = {"scores": {"alice": {"n": 1}}}
    t2 = {"scores": {}}
    t3 = {"scores": {"carol": {}}}
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2, t3), "--map", "scores")
    assert code == 1
    # scores{} is unknown in T2 (an object with no member), so only scores{}.n, absent-here in T3, is reported.
    assert report["unstable"] == [
        entry("scores{}.n", "presence", [0], [2], [1], [["number"], [], []]),
    ]


def test_an_empty_mapped_object_alone_is_stable(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"scores": {"alice": {"n": 1}}}, {"scores": {}}),
                             "--map", "scores")
    assert code == 0
    assert report["unstable"] == []


# -- point 52: present, absent-here, absent-below, unknown ----------------------------------------

def test_paths_under_an_empty_array_are_unknown_not_absent(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"items": [{"a": {"b": 1}}]}, {"items": []}))
    assert code == 0
    assert report["unstable"] == []


def test_array_element_shapes_merge(tmp_path: Path) -> None:
    t1 = {"xs": [{"a": 1}, {"b": 1}]}
    t2 = {"xs": [{"a": 2, "b": 2}]}
    t3 = {"xs": [{"a": 3}]}
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2, t3))
    assert code == 1
    assert report["unstable"] == [entry("xs[].b", "presence", [0, 1], [2], types=[["number"], ["number"], []])]


def test_only_the_topmost_absent_path_is_reported(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"a": {"b": {"c": 1}}, "k": 1}, {"k": 1}))
    assert code == 1
    assert report["unstable"] == [entry("a", "presence", [0], [1], types=[["object"], []])]


def test_absent_in_lists_absent_here_and_absent_below_traces(tmp_path: Path) -> None:
    t1 = {"a": {"b": {"c": 1}}}
    t2 = {}
    t3 = {"a": {}}
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2, t3))
    assert code == 1
    # a.b is absent-below in T2 (under the absent a) and absent-here in T3; a.b.c is never absent-here.
    assert report["unstable"] == [
        entry("a", "presence", [0, 2], [1], types=[["object"], [], ["object"]]),
        entry("a.b", "presence", [0], [1, 2], types=[["object"], [], []]),
    ]


def test_member_of_a_parent_that_is_not_an_object_there_is_absent_below(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"a": {"b": 1}}, {"a": 5}))
    assert code == 1
    assert report["unstable"] == [entry("a", "type", [0, 1], types=[["object"], ["number"]])]


def test_parent_whose_type_changes_to_null_counts_as_absent_when_another_trace_is_absent_here(
        tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"a": {"b": 1}}, {"a": None}, {"a": {}}))
    assert code == 1
    assert report["unstable"] == [
        entry("a", "type", [0, 1, 2], types=[["object"], ["null"], ["object"]]),
        entry("a.b", "presence", [0], [1, 2], types=[["number"], [], []]),
    ]


def test_array_elements_under_a_parent_that_is_never_an_array_there_are_absent_below(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"a": [1]}, {"a": {"x": 1}}))
    assert code == 1
    # a[] is absent-below in T2 (a is an object there), a.x absent-below in T1 (a is an array there).
    assert report["unstable"] == [entry("a", "type", [0, 1], types=[["array"], ["object"]])]


def test_member_absent_here_in_one_trace_and_unknown_in_another(tmp_path: Path) -> None:
    t1 = {"rows": [{"id": 1, "note": "x"}]}
    t2 = {"rows": []}
    t3 = {"rows": [{"id": 2}]}
    code, report = stability(tmp_path, write_outputs(tmp_path, t1, t2, t3))
    assert code == 1
    assert report["unstable"] == [entry("rows[].note", "presence", [0], [2], [1], [["string"], [], []])]


# -- point 53: type instability -------------------------------------------------------------------

def test_null_versus_number_is_type_unstable(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"v": None}, {"v": 3}))
    assert code == 1
    assert report["unstable"] == [entry("v", "type", [0, 1], types=[["null"], ["number"]])]


def test_integer_and_float_are_both_number(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"v": 1}, {"v": 1.0}, {"v": 2.5}))
    assert code == 0
    assert report["unstable"] == []


def test_type_sets_are_compared_as_sets_of_merged_elements(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"xs": [1, "a"]}, {"xs": ["b", 2, 3]}))
    assert code == 0
    assert report["unstable"] == []


def test_type_lists_are_sorted_per_run(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"xs": ["a", 1, None]}, {"xs": [True, 2]}))
    assert code == 1
    assert report["unstable"] == [
        entry("xs[]", "type", [0, 1], types=[["null", "number", "string"], ["boolean", "number"]]),
    ]


def test_a_path_can_have_a_presence_and_a_type_entry_presence_first(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"v": 1}, {"v": "s"}, {}))
    assert code == 1
    types = [["number"], ["string"], []]
    assert report["unstable"] == [
        entry("v", "presence", [0, 1], [2], types=types),
        entry("v", "type", [0, 1], [2], types=types),
    ]


# -- point 54: which traces report ----------------------------------------------------------------

def test_output_null_reports_with_shape_dollar_null(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, None, None))
    assert code == 0
    assert report["measured"] is True and report["stable"] is True
    assert report["runs"] == [
        {"trace": "t1.jsonl", "reporting": True, "output_sha256": hashlib.sha256(b"null").hexdigest()},
        {"trace": "t2.jsonl", "reporting": True, "output_sha256": hashlib.sha256(b"null").hexdigest()},
    ]


def test_output_null_against_an_object_is_a_root_type_change_only(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, None, {"a": 1}))
    assert code == 1
    assert report["unstable"] == [entry("$", "type", [0, 1], types=[["null"], ["object"]])]


def test_run_failed_terminal_with_output_reports(tmp_path: Path) -> None:
    failed = write_trace(tmp_path, "failed.jsonl", events({"v": 1}, terminal="run.failed"))
    done = write_trace(tmp_path, "done.jsonl", events({"v": "s"}))
    code, report = stability(tmp_path, [failed, done])
    assert code == 1
    assert [run["reporting"] for run in report["runs"]] == [True, True]
    assert report["unstable"] == [entry("v", "type", [0, 1], types=[["number"], ["string"]])]


def test_last_terminal_without_output_does_not_report_even_if_an_earlier_one_had_output(tmp_path: Path) -> None:
    earlier = [{"type": "run.completed", "output": {"v": "s", "extra": 1}}]
    first = write_trace(tmp_path, "t1.jsonl", events(ABSENT, terminal="run.failed", before=earlier))
    rest = [write_trace(tmp_path, f"t{i}.jsonl", events({"v": i})) for i in (2, 3)]
    code, report = stability(tmp_path, [first, *rest])
    assert code == 0
    assert report["measured"] is True and report["stable"] is True
    assert report["runs"][0] == {"trace": "t1.jsonl", "reporting": False, "output_sha256": None}
    assert report["unstable"] == []


def test_later_terminal_output_replaces_an_earlier_one(tmp_path: Path) -> None:
    earlier = [{"type": "run.completed", "output": {"v": "s"}}]
    first = write_trace(tmp_path, "t1.jsonl", events({"v": 1}, before=earlier))
    second = write_trace(tmp_path, "t2.jsonl", events({"v": 2}))
    code, report = stability(tmp_path, [first, second])
    assert code == 0
    assert report["runs"][0]["output_sha256"] == sha({"v": 1})


def test_indexes_count_non_reporting_runs_and_their_types_are_empty(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, NO_TERMINAL, {"v": 1}, {"v": "s"}))
    assert code == 1
    assert report["runs"][0] == {"trace": "t1.jsonl", "reporting": False, "output_sha256": None}
    assert report["unstable"] == [entry("v", "type", [1, 2], types=[[], ["number"], ["string"]])]


def test_trace_without_terminal_does_not_report(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, {"a": 1}, NO_TERMINAL, {"a": 1}))
    assert code == 0
    assert [run["reporting"] for run in report["runs"]] == [True, False, True]
    assert report["runs"][1]["output_sha256"] is None


# -- point 55: not measured -----------------------------------------------------------------------

def test_no_reporting_trace_is_not_measured_exit_2_with_the_report(tmp_path: Path) -> None:
    code, report = stability(tmp_path, write_outputs(tmp_path, NO_TERMINAL, NO_TERMINAL))
    assert code == 2
    assert report["measured"] is False and report["stable"] is False and report["unstable"] == []
    assert [run["reporting"] for run in report["runs"]] == [False, False]


def test_one_reporting_trace_is_not_measured_exit_2_never_a_pass(tmp_path: Path) -> None:
    traces = [write_trace(tmp_path, "t1.jsonl", events({"a": 1})),
              write_trace(tmp_path, "t2.jsonl", events(ABSENT)),
              write_trace(tmp_path, "t3.jsonl", events(NO_TERMINAL))]
    code, report = stability(tmp_path, traces)
    assert code == 2
    assert report["measured"] is False and report["stable"] is False and report["unstable"] == []
    assert report["runs"] == [
        {"trace": "t1.jsonl", "reporting": True, "output_sha256": sha({"a": 1})},
        {"trace": "t2.jsonl", "reporting": False, "output_sha256": None},
        {"trace": "t3.jsonl", "reporting": False, "output_sha256": None},
    ]


# -- point 55: --contract -------------------------------------------------------------------------

def test_contract_adds_each_runs_check_and_a_failing_check_makes_exit_1(tmp_path: Path) -> None:
    contract = write_contract(tmp_path, deny_shell())
    bad = write_trace(tmp_path, "bad.jsonl", events({"a": 1}, before=[shell_call()]))
    good = write_trace(tmp_path, "good.jsonl", events({"a": 2}))
    code, report = stability(tmp_path, [bad, good], "--contract", contract)
    assert code == 1
    assert report["stable"] is True and report["unstable"] == []
    assert report["runs"][0]["check"] == {"passed": False, "error_count": 1, "warning_count": 0}
    assert report["runs"][1]["check"] == {"passed": True, "error_count": 0, "warning_count": 0}


def test_contract_passing_everywhere_keeps_exit_0(tmp_path: Path) -> None:
    contract = write_contract(tmp_path, deny_shell())
    code, report = stability(tmp_path, write_outputs(tmp_path, {"a": 1}, {"a": 2}), "--contract", contract)
    assert code == 0
    assert [run["check"] for run in report["runs"]] == [{"passed": True, "error_count": 0, "warning_count": 0}] * 2


def test_contract_warning_only_does_not_raise_the_exit(tmp_path: Path) -> None:
    contract = write_contract(tmp_path, deny_shell(severity="warning"))
    warned = write_trace(tmp_path, "warned.jsonl", events({"a": 1}, before=[shell_call()]))
    clean = write_trace(tmp_path, "clean.jsonl", events({"a": 2}))
    code, report = stability(tmp_path, [warned, clean], "--contract", contract)
    assert code == 0
    assert report["runs"][0]["check"] == {"passed": True, "error_count": 0, "warning_count": 1}


def test_contract_checks_non_reporting_traces_too_and_not_measured_still_wins(tmp_path: Path) -> None:
    contract = write_contract(tmp_path, deny_shell())
    bad = write_trace(tmp_path, "bad.jsonl", events(NO_TERMINAL, before=[shell_call()]))
    good = write_trace(tmp_path, "good.jsonl", events({"a": 1}))
    code, report = stability(tmp_path, [bad, good], "--contract", contract)
    assert code == 2
    assert report["measured"] is False
    assert report["runs"][0]["check"] == {"passed": False, "error_count": 1, "warning_count": 0}
    assert report["runs"][1]["check"] == {"passed": True, "error_count": 0, "warning_count": 0}


def test_contract_failure_and_instability_give_exit_1(tmp_path: Path) -> None:
    contract = write_contract(tmp_path, deny_shell())
    bad = write_trace(tmp_path, "bad.jsonl", events({"a": 1}, before=[shell_call()]))
    other = write_trace(tmp_path, "other.jsonl", events({"a": "s"}))
    code, report = stability(tmp_path, [bad, other], "--contract", contract)
    assert code == 1
    assert report["unstable"] == [entry("a", "type", [0, 1], types=[["number"], ["string"]])]
    assert report["runs"][0]["check"]["passed"] is False


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", [
    '{"seq": 2, "type": "run.start"}\n{"seq": 1, "type": "run.completed", "output": 1}\n',
    '{"seq": 1, "type": "run.start"}\n{"seq": 2, "type": \n',
    '{"seq": 1}\n',
], ids=["seq-not-increasing", "bad-json", "no-type"])
def test_invalid_trace_is_exit_2_nothing_on_stdout_one_stderr_line_naming_it(tmp_path: Path, content: str) -> None:
    good = write_trace(tmp_path, "good.jsonl", events({"a": 1}))
    (tmp_path / "broken.jsonl").write_text(content, encoding="utf-8")
    assert_one_error_line(run_cli(tmp_path, good, "broken.jsonl", "--format", "json"), "broken.jsonl")


def test_missing_trace_file_is_exit_2_nothing_on_stdout_one_stderr_line_naming_it(tmp_path: Path) -> None:
    good = write_trace(tmp_path, "good.jsonl", events({"a": 1}))
    assert_one_error_line(run_cli(tmp_path, good, "missing.jsonl", "--format", "json"), "missing.jsonl")


def assert_one_error_line(proc: subprocess.CompletedProcess[str], name: str) -> None:
    """Exit 2, nothing on stdout, one stderr line naming the file."""
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0]


def test_invalid_contract_is_exit_2_nothing_on_stdout(tmp_path: Path) -> None:
    contract = write_contract(tmp_path, {"version": 1, "name": "x", "rules": [{"id": "r", "kind": "nope"}]})
    traces = write_outputs(tmp_path, {"a": 1}, {"a": 1})
    proc = run_cli(tmp_path, *traces, "--contract", contract, "--format", "json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1


# -- other formats and --output -------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_exit_code_is_the_same_in_other_formats(tmp_path: Path, fmt: str) -> None:
    proc = run_cli(tmp_path, *write_outputs(tmp_path, SPEC_T1, SPEC_T2, SPEC_T3), "--format", fmt)
    assert proc.returncode == 1
    assert proc.stdout.strip()


def test_output_option_writes_the_json_report_to_the_file(tmp_path: Path) -> None:
    traces = write_outputs(tmp_path, SPEC_T1, SPEC_T2, SPEC_T3)
    proc = run_cli(tmp_path, *traces, "--format", "json", "--output", "report.json")
    assert proc.returncode == 1
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    check_report_form(report)
    assert report["unstable"] == SPEC_UNSTABLE


# -- the library against the reference model ------------------------------------------------------

KEYS = ["a", "b", "x y"]
LEAVES = (st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([1.0, -0.5, 2.5])
          | st.sampled_from(["", "s"]))
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=8,
)
OUTPUTS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=3) | VALUES
RUNS = st.lists(st.tuples(st.integers(0, 11), OUTPUTS).map(lambda t: NO_TERMINAL if t[0] == 0 else t[1]),
                min_size=3, max_size=4)


@pytest.mark.slow
@settings(max_examples=examples(75), deadline=None)
@given(outputs=RUNS)
def test_the_library_agrees_with_the_reference_model(outputs: list[Any]) -> None:
    """In process (the library reads the same trace files the CLI would): the CLI's own exit
    codes and report form are pinned by the tests above."""
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        traces = [str(cwd / name) for name in write_outputs(cwd, *outputs)]
        report = msgspec.to_builtins(stability_of(traces))
    expected = model_unstable(outputs)
    measured = sum(out is not NO_TERMINAL for out in outputs) >= 2
    assert report["measured"] is measured
    assert report["unstable"] == expected
    assert report["stable"] is (measured and not expected)
