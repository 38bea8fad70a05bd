"""`stability T1 T2 … [--contract C] [--ignore P] [--map P]`, read from the spec alone: v2 §5 and the
resolutions §10.51–55 (path notation, `--ignore`/`--map`, present/absent/unknown and "topmost", type
instability, the final output and reporting traces, the report, "not measured", `--contract`, exits).

Each case writes one trace per run (`r0.jsonl`, `r1.jsonl`, …), runs the CLI with `--format json` and
compares the report's exact fields."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli

SCHEMA = "agent-invariants/stability/v1"
NO_OUTPUT: Any = object()
"""An output slot whose terminal carries no `output` key."""


def run_events(output: Any, *before: dict[str, Any], terminal: str = "run.completed") -> list[dict[str, Any]]:
    """A run: `run.start`, the events `before`, then a terminal carrying `output` (unless NO_OUTPUT)."""
    last: dict[str, Any] = {"type": terminal}
    if output is not NO_OUTPUT:
        last["output"] = output
    listed = [{"type": "run.start"}, *before, last]
    return [{"seq": i + 1, **event} for i, event in enumerate(listed)]


def write_events(tmp_path: Path, name: str, events: list[dict[str, Any]]) -> str:
    (tmp_path / name).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    return name


def write_runs(tmp_path: Path, outputs: list[Any]) -> list[str]:
    """One trace per output: `r<i>.jsonl` ending in a run.completed with that output."""
    return [write_events(tmp_path, f"r{i}.jsonl", run_events(output)) for i, output in enumerate(outputs)]


def stability_json(cli: Cli, traces: list[str], *options: str) -> tuple[int, dict[str, Any]]:
    """Runs `stability` with `--format json`; returns the exit code and the parsed report."""
    result = cli("stability", *traces, *options, "--format", "json")
    assert result.stdout, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


def shapes(cli: Cli, tmp_path: Path, outputs: list[Any], *options: str) -> tuple[int, list[dict[str, Any]]]:
    """Exit code and `unstable` list for runs ending in these outputs."""
    code, report = stability_json(cli, write_runs(tmp_path, outputs), *options)
    return code, report["unstable"]


def brief(unstable: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(entry["path"], entry["kind"]) for entry in unstable]


def entry(path: str, kind: str, present: list[int], absent: list[int], unknown: list[int],
          types: list[list[str]]) -> dict[str, Any]:
    return {"path": path, "kind": kind, "present_in": present, "absent_in": absent, "unknown_in": unknown,
            "types": types}


def sha256(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# -- §5 example ------------------------------------------------------------------------------------

T1 = {"refunds": [{"id": "A9", "amount": 10}], "total": 10}
T2 = {"refunds": [], "total": "0"}
T3 = {"refunds": [{"id": "B2"}], "total": 0}


def test_example_total_is_type_unstable_and_amount_presence_unstable(cli: Cli, tmp_path: Path) -> None:
    """§5 Example: "`total` is type-unstable; `refunds[].amount` is presence-unstable (absent in T3,
    unknown in T2); exit 1." Entries sorted by path (§10.55)."""
    code, unstable = shapes(cli, tmp_path, [T1, T2, T3])
    assert code == 1
    assert unstable == [
        entry("refunds[].amount", "presence", [0], [2], [1], [["number"], [], []]),
        entry("total", "type", [0, 1, 2], [], [], [["number"], ["string"], ["number"]]),
    ]


def test_example_passes_with_total_0_in_t2_and_an_amount_in_t3(cli: Cli, tmp_path: Path) -> None:
    """§5 Example: "It passes with `"total":0` in T2 and an `amount` in T3." """
    fixed_t2 = {"refunds": [], "total": 0}
    fixed_t3 = {"refunds": [{"id": "B2", "amount": 3}], "total": 0}
    code, report = stability_json(cli, write_runs(tmp_path, [T1, fixed_t2, fixed_t3]))
    assert code == 0
    assert (report["measured"], report["stable"], report["unstable"]) == (True, True, [])


# -- §5 Shape / §10.51 path notation ---------------------------------------------------------------

def test_root_path_is_dollar(cli: Cli, tmp_path: Path) -> None:
    """§5: "The root path is `$`." (§10.51: "the root is `$`")."""
    code, unstable = shapes(cli, tmp_path, [1, "one"])
    assert code == 1
    assert unstable == [entry("$", "type", [0, 1], [], [], [["number"], ["string"]])]


def test_root_array_elements_are_at_brackets(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "array elements are `P[]` (`[]` at the root)"."""
    assert brief(shapes(cli, tmp_path, [[1], ["a"]])[1]) == [("[]", "type")]


def test_member_below_root_is_dotted(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "a member k is `k` at the root and `P.k` below it when k matches `[A-Za-z0-9_-]+`"."""
    outputs = [{"Ab_9-z": {"k-0_Z": 1}}, {"Ab_9-z": {"k-0_Z": "1"}}]
    assert brief(shapes(cli, tmp_path, outputs)[1]) == [("Ab_9-z.k-0_Z", "type")]


def test_numeric_key_is_a_plain_member(cli: Cli, tmp_path: Path) -> None:
    """§10.51: a key of digits matches `[A-Za-z0-9_-]+`, so it is written `k` / `P.k`."""
    outputs = [{"0": {"1": 1}}, {"0": {"1": None}}]
    assert brief(shapes(cli, tmp_path, outputs)[1]) == [("0.1", "type")]


def test_key_with_a_dot_is_a_json_string_at_the_root(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "otherwise `P["k"]` (a JSON string)" — at the root `["a.b"]`."""
    outputs = [{"a.b": 1}, {"a.b": True}]
    assert brief(shapes(cli, tmp_path, outputs)[1]) == [('["a.b"]', "type")]


def test_key_with_a_space_below_the_root_is_a_json_string(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `P["k"]` below the root, no dot before the bracket."""
    outputs = [{"x": {"a b": 1}}, {"x": {"a b": "1"}}]
    assert brief(shapes(cli, tmp_path, outputs)[1]) == [('x["a b"]', "type")]


def test_key_with_a_quote_is_escaped_as_json(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `P["k"]` where `"k"` is a JSON string, so a quote is escaped."""
    outputs = [{'a"b': 1}, {'a"b': "1"}]
    assert brief(shapes(cli, tmp_path, outputs)[1]) == [('["a\\"b"]', "type")]


def test_empty_key_is_a_json_string(cli: Cli, tmp_path: Path) -> None:
    """§10.51: the empty key does not match `[A-Za-z0-9_-]+` → `[""]`."""
    assert brief(shapes(cli, tmp_path, [{"": 1}, {"": "1"}])[1]) == [('[""]', "type")]


def test_nested_arrays_are_double_brackets(cli: Cli, tmp_path: Path) -> None:
    """§10.51: array elements are `P[]`, so elements of elements are `P[][]`."""
    outputs = [{"m": [[1]]}, {"m": [["1"]]}]
    assert brief(shapes(cli, tmp_path, outputs)[1]) == [("m[][]", "type")]


def test_array_element_shapes_merge(cli: Cli, tmp_path: Path) -> None:
    """§5: "Array elements collapse to `[]`, and their shapes merge": x and y spread over two elements
    are both present, as in one element."""
    outputs = [{"a": [{"x": 1}, {"y": 2}]}, {"a": [{"x": 1, "y": 2}]}]
    assert shapes(cli, tmp_path, outputs) == (0, [])


def test_member_missing_from_every_element_is_absent(cli: Cli, tmp_path: Path) -> None:
    """§10.52: a[].y is present in run 0 (one element has it) and absent-here in run 1 (its parent
    a[] is an object there)."""
    outputs = [{"a": [{"x": 1}, {"y": 2}]}, {"a": [{"x": 1}]}]
    code, unstable = shapes(cli, tmp_path, outputs)
    assert code == 1
    assert unstable == [entry("a[].y", "presence", [0], [1], [], [["number"], []])]


# -- §10.53 type instability -----------------------------------------------------------------------

def test_integer_and_float_are_both_number(cli: Cli, tmp_path: Path) -> None:
    """§10.53: "1 and 1.0 are both number"."""
    assert shapes(cli, tmp_path, [{"n": 1}, {"n": 1.5}, {"n": 1.0}]) == (0, [])


def test_null_against_number_is_type_unstable(cli: Cli, tmp_path: Path) -> None:
    """§5: "*type*: its type sets differ, null vs number included"."""
    code, unstable = shapes(cli, tmp_path, [{"n": 1}, {"n": None}])
    assert code == 1
    assert unstable == [entry("n", "type", [0, 1], [], [], [["number"], ["null"]])]


def test_boolean_against_number_is_type_unstable(cli: Cli, tmp_path: Path) -> None:
    """§10.53: JSON types null, boolean, number, string, array, object: true is not a number."""
    assert brief(shapes(cli, tmp_path, [{"n": True}, {"n": 1}])[1]) == [("n", "type")]


def test_array_against_object_is_type_unstable_only_at_the_parent(cli: Cli, tmp_path: Path) -> None:
    """§10.53 type sets {array} vs {object}; §10.52: a[] in run 1 and a.b in run 0 are absent-below
    (a parent that never has the needed container type there), so no presence entry."""
    code, unstable = shapes(cli, tmp_path, [{"a": [1]}, {"a": {"b": 1}}])
    assert code == 1
    assert unstable == [entry("a", "type", [0, 1], [], [], [["array"], ["object"]])]


def test_type_sets_are_compared_as_sets(cli: Cli, tmp_path: Path) -> None:
    """§10.53: "the set of JSON types … of every value there, elements merged": order and multiplicity
    of elements do not matter."""
    assert shapes(cli, tmp_path, [[1, "a", 2], ["b", 3], ["c", 4, "d"]]) == (0, [])


def test_merged_type_sets_that_differ_are_unstable(cli: Cli, tmp_path: Path) -> None:
    """§10.53: elements merged — {null, number} at r[].x in run 0 against {number} in run 1."""
    outputs = [{"r": [{"x": 1}, {"x": None}]}, {"r": [{"x": 2}]}]
    code, unstable = shapes(cli, tmp_path, outputs)
    assert code == 1
    assert unstable == [entry("r[].x", "type", [0, 1], [], [], [["null", "number"], ["number"]])]


def test_types_list_all_six_json_types_sorted(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "`types` one sorted list per run" over the six JSON types of §5."""
    outputs = [["s", {}, [], 1, True, None], [1]]
    code, unstable = shapes(cli, tmp_path, outputs)
    assert code == 1
    assert unstable[0]["path"] == "[]"
    assert unstable[0]["types"] == [["array", "boolean", "null", "number", "object", "string"], ["number"]]


def test_types_are_compared_only_where_present(cli: Cli, tmp_path: Path) -> None:
    """§10.53: type-unstable "when the sets differ between two traces in which it is present": an
    absent run adds a presence entry, not a type entry."""
    code, unstable = shapes(cli, tmp_path, [{"a": 1}, {}, {"a": 2}])
    assert code == 1
    assert brief(unstable) == [("a", "presence")]


def test_presence_and_type_entries_at_one_path_presence_first(cli: Cli, tmp_path: Path) -> None:
    """§10.53: "a path may have both a presence and a type entry"; §10.55: "presence before type"."""
    code, unstable = shapes(cli, tmp_path, [{"a": 1}, {"a": "x"}, {}])
    assert code == 1
    assert brief(unstable) == [("a", "presence"), ("a", "type")]
    presence = unstable[0]
    assert presence == entry("a", "presence", [0, 1], [2], [], [["number"], ["string"], []])


def test_a_type_entry_carries_the_same_run_lists(cli: Cli, tmp_path: Path) -> None:
    """§10.55: every entry is `{path, kind, present_in, absent_in, unknown_in, types}`. Spec reading: the
    lists say where the path is present/absent/unknown, whatever the entry's kind."""
    unstable = shapes(cli, tmp_path, [{"a": 1}, {"a": "x"}, {}])[1]
    assert unstable[1] == entry("a", "type", [0, 1], [2], [], [["number"], ["string"], []])


# -- §5 Instability / §10.52 present, absent, unknown, topmost ---------------------------------------

def test_paths_under_an_empty_array_are_unknown_not_absent(cli: Cli, tmp_path: Path) -> None:
    """§5: "Paths under an empty array are *unknown*, not absent" — full vs empty list is stable."""
    code, report = stability_json(cli, write_runs(tmp_path, [{"r": [{"x": 1}]}, {"r": []}]))
    assert code == 0
    assert (report["stable"], report["unstable"]) == (True, [])


def test_paths_under_an_empty_nested_array_are_unknown(cli: Cli, tmp_path: Path) -> None:
    """§10.52: unknown when the first missing step is `[]` of a container that has that type but no
    element — also for an empty element array."""
    assert shapes(cli, tmp_path, [{"r": [[{"x": 1}]]}, {"r": [[]]}]) == (0, [])


def test_deep_path_under_an_empty_array_is_unknown_and_absent_here_elsewhere(cli: Cli, tmp_path: Path) -> None:
    """§10.52: r[].x.y is present in 0, unknown in 1 (first missing step `[]`), absent-here in 2."""
    outputs = [{"r": [{"x": {"y": 1}}]}, {"r": []}, {"r": [{"x": {}}]}]
    code, unstable = shapes(cli, tmp_path, outputs)
    assert code == 1
    assert unstable == [entry("r[].x.y", "presence", [0], [2], [1], [["number"], [], []])]


def test_only_the_topmost_absent_path_is_reported(cli: Cli, tmp_path: Path) -> None:
    """§5: "only the topmost absent path is reported"; §10.52: a.b and a.b.c are absent-below in run 1."""
    code, unstable = shapes(cli, tmp_path, [{"a": {"b": {"c": 1}}}, {}])
    assert code == 1
    assert unstable == [entry("a", "presence", [0], [1], [], [["object"], []])]


def test_member_missing_from_a_present_object_is_absent_here(cli: Cli, tmp_path: Path) -> None:
    """§10.52: "absent-here when the first missing step is the path itself, a member of a parent that
    is an object in that trace"."""
    code, unstable = shapes(cli, tmp_path, [{"a": {"b": 1}}, {"a": {}}])
    assert code == 1
    assert unstable == [entry("a.b", "presence", [0], [1], [], [["number"], []])]


def test_absent_in_lists_both_kinds_of_absence(cli: Cli, tmp_path: Path) -> None:
    """§10.52: "`absent_in` lists both kinds of absence": a.b absent-here in 1, absent-below in 2."""
    code, unstable = shapes(cli, tmp_path, [{"a": {"b": 1}}, {"a": {}}, {}])
    assert code == 1
    assert unstable == [
        entry("a", "presence", [0, 1], [2], [], [["object"], ["object"], []]),
        entry("a.b", "presence", [0], [1, 2], [], [["number"], [], []]),
    ]


def test_absent_below_alone_is_not_presence_unstable(cli: Cli, tmp_path: Path) -> None:
    """§10.52: presence-unstable needs a run where the path is absent-here: r[].x is present, unknown
    and absent-below (r missing) — only r is reported."""
    outputs = [{"r": [{"x": 1}]}, {"r": []}, {}]
    code, unstable = shapes(cli, tmp_path, outputs)
    assert code == 1
    assert unstable == [entry("r", "presence", [0, 1], [2], [], [["array"], ["array"], []])]


def test_member_under_a_parent_of_another_type_is_absent_below(cli: Cli, tmp_path: Path) -> None:
    """§10.52: "a parent that is an object in one run, a number or null in another": a.b is
    absent-below where a is 5 or null; only the type entry at a."""
    code, unstable = shapes(cli, tmp_path, [{"a": {"b": 1}}, {"a": 5}, {"a": None}])
    assert code == 1
    assert unstable == [entry("a", "type", [0, 1, 2], [], [], [["object"], ["number"], ["null"]])]


def test_member_under_an_element_of_another_type_is_absent_below(cli: Cli, tmp_path: Path) -> None:
    """§10.52: a[].x in run 1, where a[] holds only a number, is absent-below; a[] is type-unstable."""
    code, unstable = shapes(cli, tmp_path, [{"a": [{"x": 1}, 5]}, {"a": [5]}])
    assert code == 1
    assert unstable == [entry("a[]", "type", [0, 1], [], [], [["number", "object"], ["number"]])]


def test_null_output_against_an_object_is_a_root_type_change(cli: Cli, tmp_path: Path) -> None:
    """§10.54: `output: null` has shape {$: {null}}; §10.52: `a` is then absent-below."""
    code, unstable = shapes(cli, tmp_path, [{"a": 1}, None])
    assert code == 1
    assert unstable == [entry("$", "type", [0, 1], [], [], [["object"], ["null"]])]


def test_unknown_only_never_makes_a_path_unstable(cli: Cli, tmp_path: Path) -> None:
    """§5 "unknown, not absent": present in two runs, unknown in the third, with equal types."""
    assert shapes(cli, tmp_path, [{"r": [{"x": 1}]}, {"r": []}, {"r": [{"x": 2}]}]) == (0, [])


# -- §5 / §10.51 --map -----------------------------------------------------------------------------

BY_ID_0 = {"m": {"k1": {"s": 1}}}
BY_ID_1 = {"m": {"k2": {"s": 2}}}


def test_without_map_keys_of_an_id_object_are_paths(cli: Cli, tmp_path: Path) -> None:
    """§10.51 path notation: without --map, m.k1 and m.k2 are members that come and go."""
    code, unstable = shapes(cli, tmp_path, [BY_ID_0, BY_ID_1])
    assert code == 1
    assert brief(unstable) == [("m.k1", "presence"), ("m.k2", "presence")]


def test_map_collapses_the_keys_of_the_object_at_p(cli: Cli, tmp_path: Path) -> None:
    """§5: "`--map P` collapses the keys of the object at P to `{}`"."""
    assert shapes(cli, tmp_path, [BY_ID_0, BY_ID_1], "--map", "m") == (0, [])


def test_mapped_members_are_written_with_braces(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "mapped members `P{}`": a type change inside the map is at m{}.s."""
    outputs = [BY_ID_0, {"m": {"k2": {"s": "2"}}}]
    code, unstable = shapes(cli, tmp_path, outputs, "--map", "m")
    assert code == 1
    assert unstable == [entry("m{}.s", "type", [0, 1], [], [], [["number"], ["string"]])]


def test_mapped_members_merge(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "its members merge at `P{}`": s and t in different members are both present."""
    outputs = [{"m": {"a": {"s": 1}, "b": {"t": 1}}}, {"m": {"c": {"s": 1, "t": 2}}}]
    assert shapes(cli, tmp_path, outputs, "--map", "m") == (0, [])


def test_an_empty_map_makes_the_paths_below_unknown(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "an empty one makes the paths below it unknown, like an empty array"."""
    outputs = [{"m": {"a": {"s": 1}}}, {"m": {}}, {"m": {"b": {}}}]
    code, unstable = shapes(cli, tmp_path, outputs, "--map", "m")
    assert code == 1
    assert unstable == [entry("m{}.s", "presence", [0], [2], [1], [["number"], [], []])]


def test_map_applies_to_each_object_at_an_element_path(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "`--map` treats each object at P as a map" — P may lie under an array."""
    outputs = [{"r": [{"by": {"x": 1}}, {"by": {"y": 2}}]}, {"r": [{"by": {"z": 3}}]}]
    assert shapes(cli, tmp_path, outputs, "--map", "r[].by") == (0, [])


def test_map_accepts_a_leading_dollar_dot(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "`--ignore P` and `--map P` take that notation (a leading `$.` is accepted)"."""
    assert shapes(cli, tmp_path, [BY_ID_0, BY_ID_1], "--map", "$.m") == (0, [])


def test_map_repeats(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `--map` "may repeat"."""
    outputs = [{"m": {"a": 1}, "n": {"b": 1}}, {"m": {"c": 1}, "n": {"d": 1}}]
    assert shapes(cli, tmp_path, outputs, "--map", "m", "--map", "n") == (0, [])


def test_map_of_a_key_written_as_a_json_string(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `--map` takes the `["k"]` notation for keys outside `[A-Za-z0-9_-]+`."""
    outputs = [{"by id": {"a": 1}}, {"by id": {"b": 1}}]
    assert shapes(cli, tmp_path, outputs, "--map", '["by id"]') == (0, [])


def test_nested_map_below_a_mapped_member(cli: Cli, tmp_path: Path) -> None:
    """§10.51: mapped members are `P{}`, which `--map` takes as P for a map inside a map."""
    outputs = [{"m": {"a": {"x": {"p": 1}}}}, {"m": {"b": {"y": {"p": 2}}}}]
    assert shapes(cli, tmp_path, outputs, "--map", "m", "--map", "m{}") == (0, [])


# -- §5 / §10.51 --ignore --------------------------------------------------------------------------

def test_ignore_silences_a_type_unstable_path(cli: Cli, tmp_path: Path) -> None:
    """§5: "`--ignore` silences a path" — the example without `total`."""
    code, unstable = shapes(cli, tmp_path, [T1, T2, T3], "--ignore", "total")
    assert code == 1
    assert brief(unstable) == [("refunds[].amount", "presence")]


def test_ignore_repeats_and_gives_stable(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `--ignore` "may repeat"; §10.55: nothing unstable → stable, exit 0."""
    code, report = stability_json(cli, write_runs(tmp_path, [T1, T2, T3]),
                                  "--ignore", "total", "--ignore", "refunds[].amount")
    assert code == 0
    assert (report["measured"], report["stable"], report["unstable"]) == (True, True, [])


def test_ignore_silences_every_path_below(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "`--ignore` silences P and every path below it"."""
    code, unstable = shapes(cli, tmp_path, [T1, T2, T3], "--ignore", "refunds")
    assert code == 1
    assert brief(unstable) == [("total", "type")]


def test_ignore_element_path_silences_its_members(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `P[]` notation in --ignore; refunds[].amount lies below refunds[]."""
    assert brief(shapes(cli, tmp_path, [T1, T2, T3], "--ignore", "refunds[]")[1]) == [("total", "type")]


def test_ignore_accepts_a_leading_dollar_dot(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "a leading `$.` is accepted"."""
    code, unstable = shapes(cli, tmp_path, [T1, T2, T3], "--ignore", "$.refunds[].amount")
    assert code == 1
    assert brief(unstable) == [("total", "type")]


def test_ignore_does_not_silence_a_key_sharing_a_prefix(cli: Cli, tmp_path: Path) -> None:
    """§10.51: "P and every path below it" — `ab` is not below `a`."""
    code, unstable = shapes(cli, tmp_path, [{"a": 1, "ab": 1}, {"a": "x", "ab": "x"}], "--ignore", "a")
    assert code == 1
    assert brief(unstable) == [("ab", "type")]


def test_ignore_of_a_json_string_key(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `--ignore` takes the `["k"]` notation; `["a.b"]` is not `a.b`."""
    outputs = [{"a.b": 1, "a": {"b": 1}}, {"a.b": "1", "a": {"b": "1"}}]
    code, unstable = shapes(cli, tmp_path, outputs, "--ignore", '["a.b"]')
    assert code == 1
    assert brief(unstable) == [("a.b", "type")]


def test_ignore_of_a_mapped_member_path(cli: Cli, tmp_path: Path) -> None:
    """§10.51: --ignore takes the `P{}` paths that --map produces."""
    outputs = [{"m": {"k1": {"s": 1, "t": 1}}}, {"m": {"k2": {"s": "1", "t": 1}}}]
    assert shapes(cli, tmp_path, outputs, "--map", "m", "--ignore", "m{}.s") == (0, [])


def test_ignore_of_the_root_silences_everything(cli: Cli, tmp_path: Path) -> None:
    """§10.51: the root is `$` and --ignore silences P and every path below it."""
    assert shapes(cli, tmp_path, [T1, T2, T3], "--ignore", "$") == (0, [])


@pytest.mark.parametrize("bad", ["a..b", '["a', "a b", "a.", "[x]"])
def test_ignore_with_a_path_outside_the_notation_is_exit_2(cli: Cli, tmp_path: Path, bad: str) -> None:
    """§10.51 fixes the notation; v1 §7.5: bad usage is exit 2, message on stderr, stdout empty."""
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "--ignore", bad, "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("agent-invariants: ") and "Traceback" not in result.stderr


def test_map_with_a_path_outside_the_notation_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    """§10.51 / v1 §7.5, as for --ignore."""
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "--map", "m..n", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


# -- §10.55 sorting --------------------------------------------------------------------------------

def test_entries_sorted_by_path_in_code_point_order(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "entries sorted by path in code-point order" — `B` < `["` < `_` < `a-b` < `a.x` < `b`,
    and U+FF01 before U+1F600 (a UTF-16 order would swap those two)."""
    keys = ["b", "\U0001F600", "a-b", "_", "\uff01", "a b", "B"]
    first = {key: 1 for key in keys} | {"a": {"x": 1}}
    code, unstable = shapes(cli, tmp_path, [first, {"a": {}}])
    assert code == 1
    assert [e["path"] for e in unstable] == [
        "B", '["a b"]', '["\uff01"]', '["\U0001F600"]', "_", "a-b", "a.x", "b"]


# -- §10.54 reporting traces and the final output ----------------------------------------------------

def test_a_trace_without_terminal_is_not_reporting(cli: Cli, tmp_path: Path) -> None:
    """§10.54: a trace does not report "when there is no terminal"; §10.55: `output_sha256` null."""
    names = write_runs(tmp_path, [{"a": 1}, {"a": 1}])
    names.append(write_events(tmp_path, "r2.jsonl", run_events(NO_OUTPUT)[:-1]))
    code, report = stability_json(cli, names)
    assert code == 0
    assert report["runs"][2] == {"trace": "r2.jsonl", "reporting": False, "output_sha256": None}
    assert (report["measured"], report["stable"]) == (True, True)


def test_a_terminal_without_output_is_not_reporting(cli: Cli, tmp_path: Path) -> None:
    """§10.54: not reporting when "the terminal has no `output`"; §5: it is listed and excluded."""
    names = write_runs(tmp_path, [{"a": 1}, NO_OUTPUT, {"a": 1}])
    code, report = stability_json(cli, names)
    assert code == 0
    assert [run["reporting"] for run in report["runs"]] == [True, False, True]
    assert report["runs"][1]["output_sha256"] is None


def test_a_non_reporting_trace_is_excluded_from_the_comparison(cli: Cli, tmp_path: Path) -> None:
    """§5: "A trace without output is *not reporting*: it is listed and excluded" — its missing `a`
    makes nothing presence-unstable."""
    names = write_runs(tmp_path, [{"a": 1}, NO_OUTPUT, {"a": "x"}])
    code, report = stability_json(cli, names)
    assert code == 1
    assert report["unstable"] == [entry("a", "type", [0, 2], [], [], [["number"], [], ["string"]])]


def test_an_earlier_terminal_output_does_not_count(cli: Cli, tmp_path: Path) -> None:
    """§10.54: "(an earlier terminal's output does not count)"."""
    events = run_events(NO_OUTPUT, {"type": "run.completed", "output": {"a": 1}})
    names = [*write_runs(tmp_path, [{"a": 1}, {"a": 1}]), write_events(tmp_path, "late.jsonl", events)]
    code, report = stability_json(cli, names)
    assert code == 0
    assert report["runs"][2] == {"trace": "late.jsonl", "reporting": False, "output_sha256": None}


def test_the_last_terminal_gives_the_final_output(cli: Cli, tmp_path: Path) -> None:
    """§0/§10.54: the final output is the `output` of the last run.completed or run.failed."""
    events = run_events({"a": "late"}, {"type": "run.completed", "output": {"a": 1}})
    names = [*write_runs(tmp_path, [{"a": 1}]), write_events(tmp_path, "late.jsonl", events)]
    code, report = stability_json(cli, names)
    assert code == 1
    assert brief(report["unstable"]) == [("a", "type")]
    assert report["runs"][1]["output_sha256"] == sha256('{"a":"late"}')


def test_a_run_failed_terminal_with_output_reports(cli: Cli, tmp_path: Path) -> None:
    """§10.54: the terminal is "the last run.completed or run.failed"; its output is the final output."""
    failed = write_events(tmp_path, "failed.jsonl", run_events({"a": "x"}, terminal="run.failed"))
    code, report = stability_json(cli, [*write_runs(tmp_path, [{"a": 1}]), failed])
    assert code == 1
    assert report["runs"][1]["reporting"] is True
    assert brief(report["unstable"]) == [("a", "type")]


def test_a_run_failed_after_a_completed_output_hides_it(cli: Cli, tmp_path: Path) -> None:
    """§10.54: a later run.failed without `output` is the terminal, so the trace does not report."""
    events = run_events(NO_OUTPUT, {"type": "run.completed", "output": {"a": 1}}, terminal="run.failed")
    names = [*write_runs(tmp_path, [{"a": 1}, {"a": 1}]), write_events(tmp_path, "f.jsonl", events)]
    assert stability_json(cli, names)[1]["runs"][2]["reporting"] is False


def test_events_after_the_terminal_do_not_hide_its_output(cli: Cli, tmp_path: Path) -> None:
    """§0: the terminal is the last run.completed or run.failed, not the last event."""
    events = run_events({"a": 1}) + [{"seq": 9, "type": "telemetry.flush"}]
    names = [*write_runs(tmp_path, [{"a": 1}]), write_events(tmp_path, "tail.jsonl", events)]
    code, report = stability_json(cli, names)
    assert code == 0
    assert [run["reporting"] for run in report["runs"]] == [True, True]


def test_null_outputs_report_and_are_stable(cli: Cli, tmp_path: Path) -> None:
    """§10.54: "`output: null` included, shape `{$: {null}}`"."""
    code, report = stability_json(cli, write_runs(tmp_path, [None, None]))
    assert code == 0
    assert [run["reporting"] for run in report["runs"]] == [True, True]
    assert report["runs"][0]["output_sha256"] == sha256("null")
    assert (report["measured"], report["stable"]) == (True, True)


# -- §5 / §10.55 not measured ----------------------------------------------------------------------

def test_one_reporting_trace_is_not_measured(cli: Cli, tmp_path: Path) -> None:
    """§5: "With fewer than 2 reporting traces the verdict is "not measured", exit 2, and never a pass";
    §10.55: still printed, `measured: false`, `stable: false`, `unstable: []`."""
    code, report = stability_json(cli, write_runs(tmp_path, [{"a": 1}, NO_OUTPUT]))
    assert code == 2
    assert report == {
        "schema": SCHEMA,
        "runs": [
            {"trace": "r0.jsonl", "reporting": True, "output_sha256": sha256('{"a":1}')},
            {"trace": "r1.jsonl", "reporting": False, "output_sha256": None},
        ],
        "measured": False, "stable": False, "unstable": [],
    }


def test_no_reporting_trace_is_not_measured(cli: Cli, tmp_path: Path) -> None:
    """§10.55: zero reporting traces is fewer than two: printed, measured false, exit 2."""
    code, report = stability_json(cli, write_runs(tmp_path, [NO_OUTPUT, NO_OUTPUT]))
    assert code == 2
    assert (report["measured"], report["stable"], report["unstable"]) == (False, False, [])
    assert [run["reporting"] for run in report["runs"]] == [False, False]


def test_a_single_trace_argument_is_not_measured(cli: Cli, tmp_path: Path) -> None:
    """§10.55: fewer than two reporting traces → printed with `measured: false`, exit 2 (spec reading:
    one trace argument is such a case, not a usage error)."""
    code, report = stability_json(cli, write_runs(tmp_path, [{"a": 1}]))
    assert code == 2
    assert (report["measured"], report["stable"], report["unstable"]) == (False, False, [])


def test_not_measured_hides_a_shape_difference_among_too_few_runs(cli: Cli, tmp_path: Path) -> None:
    """§10.55: not measured → `unstable: []` even though the one reporting run differs from nothing."""
    names = write_runs(tmp_path, [NO_OUTPUT, {"a": [1, "x"]}, NO_OUTPUT])
    code, report = stability_json(cli, names)
    assert (code, report["measured"], report["unstable"]) == (2, False, [])


def test_two_reporting_traces_among_several_are_measured(cli: Cli, tmp_path: Path) -> None:
    """§5: two reporting traces are enough to measure."""
    code, report = stability_json(cli, write_runs(tmp_path, [NO_OUTPUT, 5, NO_OUTPUT, 6]))
    assert (code, report["measured"], report["stable"]) == (0, True, True)


# -- §10.55 the report -----------------------------------------------------------------------------

def test_report_has_exactly_the_spec_fields(cli: Cli, tmp_path: Path) -> None:
    """§10.55: `{schema, runs: [{trace, reporting, output_sha256, check?}], measured, stable, unstable}`
    — no `check` without --contract. Spec silent on `trace`: the path as given is asserted."""
    code, report = stability_json(cli, write_runs(tmp_path, [{"a": 1}, {"a": 2}]))
    assert code == 0
    assert report == {
        "schema": SCHEMA,
        "runs": [
            {"trace": "r0.jsonl", "reporting": True, "output_sha256": sha256('{"a":1}')},
            {"trace": "r1.jsonl", "reporting": True, "output_sha256": sha256('{"a":2}')},
        ],
        "measured": True, "stable": True, "unstable": [],
    }


def test_unstable_entry_has_exactly_the_spec_fields(cli: Cli, tmp_path: Path) -> None:
    """§5/§10.55: unstable entries are `{path, kind, present_in, absent_in, unknown_in, types}`."""
    unstable = shapes(cli, tmp_path, [{"a": 1}, {}])[1]
    assert [sorted(e) for e in unstable] == [sorted(["path", "kind", "present_in", "absent_in", "unknown_in",
                                                     "types"])]


def test_output_sha256_is_of_the_rfc8785_form(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "hex SHA-256 of the RFC 8785 output" — keys sorted, no spaces, `1.0` → `1`, `1e2` → `100`,
    non-ASCII raw, control characters escaped."""
    output = {"b": 1.0, "a": "é\n", "c": [1e2, 0.5, -0.0, True, None], "B": {"z": {}, "y": []}}
    canonical = '{"B":{"y":[],"z":{}},"a":"é\\n","b":1,"c":[100,0.5,0,true,null]}'
    _, report = stability_json(cli, write_runs(tmp_path, [output, output]))
    assert [run["output_sha256"] for run in report["runs"]] == [sha256(canonical)] * 2


def test_output_sha256_of_a_large_number_uses_exponent_form(cli: Cli, tmp_path: Path) -> None:
    """§10.55 RFC 8785 numbers (ECMAScript form): 1e21 → `1e+21`, 1e-7 → `1e-7`."""
    _, report = stability_json(cli, write_runs(tmp_path, [[1e21, 1e-7], [1e21, 1e-7]]))
    assert report["runs"][0]["output_sha256"] == sha256("[1e+21,1e-7]")


def test_indexes_are_zero_based_into_runs_including_non_reporting(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "indexes 0-based into `runs`", `types` "one sorted list per run (`[]` where not
    present)" — the non-reporting run 0 keeps its slot."""
    code, unstable = shapes(cli, tmp_path, [NO_OUTPUT, {"a": 1}, {"a": "x"}, {}])
    assert code == 1
    assert unstable == [
        entry("a", "presence", [1, 2], [3], [], [[], ["number"], ["string"], []]),
        entry("a", "type", [1, 2], [3], [], [[], ["number"], ["string"], []]),
    ]


def test_runs_keep_the_order_of_the_arguments(cli: Cli, tmp_path: Path) -> None:
    """§10.55: indexes point into `runs`, which follow the traces as given (spec reading)."""
    names = write_runs(tmp_path, [{"a": 1}, {"a": "x"}])
    _, report = stability_json(cli, list(reversed(names)))
    assert [run["trace"] for run in report["runs"]] == ["r1.jsonl", "r0.jsonl"]
    assert report["unstable"][0]["types"] == [["string"], ["number"]]


# -- §10.55 bad input ------------------------------------------------------------------------------

def test_a_missing_trace_is_exit_2_with_nothing_on_stdout(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "an unreadable or invalid trace or contract is exit 2 with nothing on stdout"."""
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "missing.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "missing.jsonl" in result.stderr


def test_an_invalid_json_line_is_exit_2_with_nothing_on_stdout(cli: Cli, tmp_path: Path) -> None:
    """§10.55: invalid trace → exit 2, nothing on stdout."""
    (tmp_path / "bad.jsonl").write_text('{"seq":1,"type":"run.start"}\n{"seq":2,\n', encoding="utf-8")
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "bad.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "bad.jsonl" in result.stderr


def test_a_decreasing_seq_is_exit_2_with_nothing_on_stdout(cli: Cli, tmp_path: Path) -> None:
    """§10.55 invalid trace; v1 §3.2.5: seq must be strictly increasing."""
    events = [{"seq": 2, "type": "run.start"}, {"seq": 1, "type": "run.completed", "output": 1}]
    names = [*write_runs(tmp_path, [1]), write_events(tmp_path, "seq.jsonl", events)]
    result = cli("stability", *names, "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_an_event_missing_its_type_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    """§10.55 invalid trace; v1 §3.1: `type` is required."""
    names = [*write_runs(tmp_path, [1]), write_events(tmp_path, "nt.jsonl", [{"seq": 1, "output": 1}])]
    result = cli("stability", *names, "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_an_invalid_trace_wins_over_not_measured(cli: Cli, tmp_path: Path) -> None:
    """§10.55: even when nothing could be measured, an invalid trace leaves stdout empty."""
    (tmp_path / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    result = cli("stability", *write_runs(tmp_path, [NO_OUTPUT]), "bad.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


# -- §5 / §10.55 --contract ------------------------------------------------------------------------

DENY_SHELL = {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}
SHELL_CALL = {"type": "tool.call", "tool": "shell.exec", "call_id": "c1"}


def write_contract_file(tmp_path: Path, *rules: dict[str, Any], version: int = 1) -> str:
    document = {"version": version, "name": "stab", "rules": list(rules)}
    (tmp_path / "c.json").write_text(json.dumps(document), encoding="utf-8")
    return "c.json"


def contract_runs(tmp_path: Path, outputs: list[Any], shell_in: set[int]) -> list[str]:
    """Runs ending in these outputs; those in `shell_in` call shell.exec first."""
    return [write_events(tmp_path, f"r{i}.jsonl", run_events(output, *([SHELL_CALL] if i in shell_in else [])))
            for i, output in enumerate(outputs)]


def test_contract_adds_each_run_check_and_passes(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "`runs[i].check` holds `{passed, error_count, warning_count}`"; all pass and stable → 0."""
    contract = write_contract_file(tmp_path, DENY_SHELL)
    code, report = stability_json(cli, contract_runs(tmp_path, [1, 2], set()), "--contract", contract)
    assert code == 0
    assert [run["check"] for run in report["runs"]] == [
        {"passed": True, "error_count": 0, "warning_count": 0}] * 2
    assert (report["measured"], report["stable"]) == (True, True)


def test_contract_error_in_a_stable_set_exits_1(cli: Cli, tmp_path: Path) -> None:
    """§5: "With `--contract`, each trace is also checked, and the worst exit wins"."""
    contract = write_contract_file(tmp_path, DENY_SHELL)
    code, report = stability_json(cli, contract_runs(tmp_path, [1, 2], {1}), "--contract", contract)
    assert code == 1
    assert report["stable"] is True
    assert [run["check"] for run in report["runs"]] == [
        {"passed": True, "error_count": 0, "warning_count": 0},
        {"passed": False, "error_count": 1, "warning_count": 0},
    ]


def test_contract_warning_only_passes_and_exits_0(cli: Cli, tmp_path: Path) -> None:
    """§10.55 "as `check` would": a warning-severity violation is counted and does not fail
    (v1 §5 `passed` iff error_count == 0; v1 §7.5 exit 0)."""
    contract = write_contract_file(tmp_path, {**DENY_SHELL, "severity": "warning"})
    code, report = stability_json(cli, contract_runs(tmp_path, [1, 2], {0, 1}), "--contract", contract)
    assert code == 0
    assert report["runs"][0]["check"] == {"passed": True, "error_count": 0, "warning_count": 1}


def test_contract_pass_with_unstable_shapes_exits_1(cli: Cli, tmp_path: Path) -> None:
    """§10.55: exit is "the maximum of the stability exit and every check's"."""
    contract = write_contract_file(tmp_path, DENY_SHELL)
    code, report = stability_json(cli, contract_runs(tmp_path, [1, "1"], set()), "--contract", contract)
    assert (code, report["stable"]) == (1, False)


def test_not_measured_with_a_failing_check_exits_2(cli: Cli, tmp_path: Path) -> None:
    """§10.55: max(2 for not measured, 1 for a failing check) = 2; the report is still printed."""
    contract = write_contract_file(tmp_path, DENY_SHELL)
    code, report = stability_json(cli, contract_runs(tmp_path, [1, NO_OUTPUT], {0}), "--contract", contract)
    assert code == 2
    assert report["measured"] is False
    assert report["runs"][0]["check"]["passed"] is False


def test_contract_checks_non_reporting_traces_too(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "with `--contract` every trace is also checked" — a non-reporting one included."""
    contract = write_contract_file(tmp_path, DENY_SHELL)
    code, report = stability_json(cli, contract_runs(tmp_path, [1, NO_OUTPUT, 1], {1}), "--contract", contract)
    assert code == 1
    assert report["runs"][1]["reporting"] is False
    assert report["runs"][1]["check"] == {"passed": False, "error_count": 1, "warning_count": 0}


def test_contract_with_a_version_2_output_rule(cli: Cli, tmp_path: Path) -> None:
    """§10.55: checked "as `check` would" — a v2 run_status rule sees each run's terminal."""
    rule = {"id": "done", "kind": "run_status", "equals": "completed"}
    contract = write_contract_file(tmp_path, rule, version=2)
    names = [*write_runs(tmp_path, [1]),
             write_events(tmp_path, "f.jsonl", run_events(1, terminal="run.failed"))]
    code, report = stability_json(cli, names, "--contract", contract)
    assert code == 1
    assert [run["check"]["passed"] for run in report["runs"]] == [True, False]


def test_an_invalid_contract_is_exit_2_with_nothing_on_stdout(cli: Cli, tmp_path: Path) -> None:
    """§10.55: "an unreadable or invalid trace or contract is exit 2 with nothing on stdout"."""
    contract = write_contract_file(tmp_path, {"id": "x", "kind": "no_such_kind"})
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "--contract", contract, "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "c.json" in result.stderr


def test_a_missing_contract_is_exit_2_with_nothing_on_stdout(cli: Cli, tmp_path: Path) -> None:
    """§10.55: unreadable contract → exit 2, nothing on stdout."""
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "--contract", "nope.json", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


LINT_REFUSED: list[dict[str, Any]] = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.exec"},
    {"id": "needs-shell", "kind": "tool_calls", "tool": "shell.exec", "min": 1},
]


def test_a_contract_refused_by_lint_is_exit_2_with_nothing_on_stdout(cli: Cli, tmp_path: Path) -> None:
    """§10.55: checked "as `check` would (lint refusal included)"; §10.8: a lint error is reported like a
    contract error (`lint <code>`, exit 2) — required_but_forbidden here."""
    contract = write_contract_file(tmp_path, *LINT_REFUSED, version=2)
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "--contract", contract, "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "lint required_but_forbidden" in result.stderr


def test_no_lint_checks_a_contract_lint_would_refuse(cli: Cli, tmp_path: Path) -> None:
    """§10.8: `--no-lint` skips the refusal of `check`; spec silent on stability's `--no-lint` (its
    --help offers it): asserted as the reading "as check would" with that option."""
    contract = write_contract_file(tmp_path, *LINT_REFUSED, version=2)
    code, report = stability_json(cli, write_runs(tmp_path, [1, 1]), "--contract", contract, "--no-lint")
    assert code == 1
    assert report["runs"][0]["check"] == {"passed": False, "error_count": 1, "warning_count": 0}


# -- further cases ---------------------------------------------------------------------------------

def test_member_of_a_parent_that_is_an_object_among_other_types_is_absent_here(cli: Cli, tmp_path: Path) -> None:
    """§10.52: absent-here needs "a parent that is an object in that trace" — `[]` holds an object and a
    number in run 1, so `[].x` is absent-here; §10.55: `[]` sorts before `[].x`."""
    code, unstable = shapes(cli, tmp_path, [[{"x": 1}], [{}, 1]])
    assert code == 1
    assert unstable == [
        entry("[]", "type", [0, 1], [], [], [["object"], ["number", "object"]]),
        entry("[].x", "presence", [0], [1], [], [["number"], []]),
    ]


def test_map_of_scalar_members_compares_their_merged_types(cli: Cli, tmp_path: Path) -> None:
    """§10.51/§10.53: the members of a mapped object merge at `P{}`, types merged."""
    outputs = [{"m": {"a": 1, "b": "x"}}, {"m": {"c": 2}}]
    code, unstable = shapes(cli, tmp_path, outputs, "--map", "m")
    assert code == 1
    assert unstable == [entry("m{}", "type", [0, 1], [], [], [["number", "string"], ["number"]])]


def test_map_of_array_elements_is_written_with_brackets_then_braces(cli: Cli, tmp_path: Path) -> None:
    """§10.51: elements are `P[]`, mapped members `P{}`: objects at r[] mapped → `r[]{}`."""
    outputs = [{"r": [{"a": 1}]}, {"r": [{"b": "1"}]}]
    code, unstable = shapes(cli, tmp_path, outputs, "--map", "r[]")
    assert code == 1
    assert brief(unstable) == [("r[]{}", "type")]


def test_map_path_holding_an_array_elsewhere_is_a_type_change_only(cli: Cli, tmp_path: Path) -> None:
    """§10.51: --map treats each *object* at P as a map; §10.52: `m{}` / `m[]` under a parent of the
    other container type are absent-below."""
    code, unstable = shapes(cli, tmp_path, [{"m": {"a": 1}}, {"m": [1]}], "--map", "m")
    assert code == 1
    assert unstable == [entry("m", "type", [0, 1], [], [], [["object"], ["array"]])]


def test_ignore_does_not_change_output_sha256(cli: Cli, tmp_path: Path) -> None:
    """§10.55: `output_sha256` is the hash of the output itself, whatever --ignore silences."""
    _, report = stability_json(cli, write_runs(tmp_path, [{"a": 1, "b": 2}, {"a": 1}]), "--ignore", "b")
    assert report["runs"][0]["output_sha256"] == sha256('{"a":1,"b":2}')


def test_output_sha256_sorts_keys_by_utf16_code_units(cli: Cli, tmp_path: Path) -> None:
    """§10.55 RFC 8785 §3.2.3: members sorted by UTF-16 code units (U+1F600 before U+FF01)."""
    output = {"\uff01": 2, "\U0001F600": 1}
    _, report = stability_json(cli, write_runs(tmp_path, [output, output]))
    assert report["runs"][0]["output_sha256"] == sha256('{"\U0001F600":1,"\uff01":2}')


def test_output_sha256_escapes_strings_as_rfc8785(cli: Cli, tmp_path: Path) -> None:
    """§10.55 RFC 8785 §3.2.2.2: control characters as \\b \\t \\n \\f \\r or lowercase \\u00xx; `"` and `\\`
    escaped; `/`, DEL and U+2028 raw."""
    output = "\b\t\n\f\r\x01\x1f\"\\/\x7f\u2028"
    canonical = '"\\b\\t\\n\\f\\r\\u0001\\u001f\\"\\\\/\x7f\u2028"'
    _, report = stability_json(cli, write_runs(tmp_path, [output, output]))
    assert report["runs"][0]["output_sha256"] == sha256(canonical)


def test_output_sha256_of_a_long_integer_uses_its_double_value(cli: Cli, tmp_path: Path) -> None:
    """§10.55 RFC 8785 §3.2.2.3: numbers are serialised as IEEE-754 doubles (ECMAScript form), so
    12345678901234567890 is written 12345678901234567000."""
    _, report = stability_json(cli, write_runs(tmp_path, [12345678901234567890, 1]))
    assert report["runs"][0]["output_sha256"] == sha256("12345678901234567000")


def test_key_with_a_control_character_is_a_json_string(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `P["k"]`, k a JSON string: a control character is escaped."""
    assert brief(shapes(cli, tmp_path, [{"\x01": 1}, {"\x01": "1"}])[1]) == [('["\\u0001"]', "type")]


def test_an_empty_trace_file_is_not_reporting(cli: Cli, tmp_path: Path) -> None:
    """§10.54 no terminal → not reporting; v1 §3.2: an empty file is a valid trace of zero events."""
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    code, report = stability_json(cli, [*write_runs(tmp_path, [1, 1]), "empty.jsonl"])
    assert code == 0
    assert report["runs"][2] == {"trace": "empty.jsonl", "reporting": False, "output_sha256": None}


def test_a_json_array_trace_reports(cli: Cli, tmp_path: Path) -> None:
    """§10.54 with v1 §3.2.3: a trace written as one JSON array is read like JSONL."""
    (tmp_path / "array.json").write_text(json.dumps(run_events({"a": "x"})), encoding="utf-8")
    code, report = stability_json(cli, [*write_runs(tmp_path, [{"a": 1}]), "array.json"])
    assert code == 1
    assert brief(report["unstable"]) == [("a", "type")]


@pytest.mark.parametrize(("outputs", "expected"), [([1, 2], 0), ([1, "2"], 1), ([1, NO_OUTPUT], 2)])
def test_text_format_has_the_same_exit_codes(cli: Cli, tmp_path: Path, outputs: list[Any], expected: int) -> None:
    """§5: "Exit 1 if unstable", not measured → exit 2, else 0 — whatever the format (default text)."""
    result = cli("stability", *write_runs(tmp_path, outputs))
    assert result.returncode == expected, result.stderr
    assert result.stdout


def test_a_key_named_dollar_is_not_the_root(cli: Cli, tmp_path: Path) -> None:
    """§10.51: `$` is the root; a member named `$` is outside `[A-Za-z0-9_-]+`, so `["$"]`, and
    `--ignore '["$"]'` silences only that member."""
    outputs = [{"$": 1, "x": 1}, {"$": "1", "x": "1"}]
    assert brief(shapes(cli, tmp_path, outputs)[1]) == [('["$"]', "type"), ("x", "type")]
    assert brief(shapes(cli, tmp_path, outputs, "--ignore", '["$"]')[1]) == [("x", "type")]


def test_an_empty_array_among_other_values_still_makes_its_elements_unknown(cli: Cli, tmp_path: Path) -> None:
    """§10.52: r[][] in run 1 — its container r[] is an array there (as well as a number) with no
    element, so it is unknown, not absent: only the type entry at r[]."""
    code, unstable = shapes(cli, tmp_path, [{"r": [[1]]}, {"r": [[], 5]}])
    assert code == 1
    assert unstable == [entry("r[]", "type", [0, 1], [], [], [["array"], ["array", "number"]])]


def test_a_non_empty_sibling_array_makes_a_missing_member_absent(cli: Cli, tmp_path: Path) -> None:
    """§10.52: r[].a[] holds an object in run 1, so r[].a[].x is absent-here there, not unknown, even
    though another `a` is empty."""
    outputs = [{"r": [{"a": [{"x": 1}]}]}, {"r": [{"a": []}, {"a": [{}]}]}]
    code, unstable = shapes(cli, tmp_path, outputs)
    assert code == 1
    assert unstable == [entry("r[].a[].x", "presence", [0], [1], [], [["number"], []])]


def test_v2_field_types_are_not_checked_without_a_contract(cli: Cli, tmp_path: Path) -> None:
    """§0: "Traces stay unversioned … They are type-checked only under v2": a numeric `status` is
    accepted by stability alone."""
    events = [{"seq": 1, "type": "run.completed", "status": 7, "output": 1}]
    names = [*write_runs(tmp_path, [1]), write_events(tmp_path, "s.jsonl", events)]
    assert stability_json(cli, names)[0] == 0


def test_v2_field_types_are_checked_with_a_version_2_contract(cli: Cli, tmp_path: Path) -> None:
    """§10.16: under version 2 a bad field type is an error at `file:line: $.field`; §10.55: invalid
    trace → exit 2, nothing on stdout."""
    contract = write_contract_file(tmp_path, DENY_SHELL, version=2)
    events = [{"seq": 1, "type": "run.completed", "status": 7, "output": 1}]
    names = [*write_runs(tmp_path, [1]), write_events(tmp_path, "s.jsonl", events)]
    result = cli("stability", *names, "--contract", contract, "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "s.jsonl:1: $.status" in result.stderr


def test_a_lint_warning_does_not_refuse_the_contract(cli: Cli, tmp_path: Path) -> None:
    """§10.55 "as `check` would"; §10.37: check acts only on error-level findings and prints nothing
    for warnings (unrequired_subject here), and a lint warning is no violation."""
    rule = {"id": "small", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$lt": 100}}}
    contract = write_contract_file(tmp_path, rule, version=2)
    result = cli("stability", *write_runs(tmp_path, [1, 1]), "--contract", contract, "--format", "json")
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout)["runs"][0]["check"] == {"passed": True, "error_count": 0, "warning_count": 0}
