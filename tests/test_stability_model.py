"""`stability` (spec v2 §5 with §10 points 51-55): an independent reference model of the report,
compared with the CLI on random traces, plus hand-written cases for every example and rule.

The model below is written from the spec text only:
- §5 Shape: a map from path to the set of JSON types there; root `$`; array elements collapse to
  `[]`; `--map P` collapses the keys of the object at P to `{}`.
- §10.51 path notation, `--ignore` (P and every path below it), `--map` (empty map = unknown below).
- §10.52 present / unknown / absent-here / absent-below per trace; presence instability.
- §10.53 type sets (1 and 1.0 are both number), a path may have a presence and a type entry.
- §10.54 the final output is the `output` of the last run.completed/run.failed.
- §10.55 report fields, 0-based indexes, `types` per run, ordering, "not measured", `--contract`.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import examples

Step = str  # a member name, or the markers below
ARRAY = "\x00[]"
MAP = "\x00{}"
PathT = tuple[Step, ...]
Event = dict[str, Any]
IDENT = re.compile(r"[A-Za-z0-9_-]+")
SCHEMA = "agent-invariants/stability/v1"
REPO = Path(__file__).resolve().parent.parent


# -- the reference model ---------------------------------------------------------------------------

def render(path: PathT) -> str:
    """§10.51: root `$`; member k is `k` at the root, `P.k` below, `P["k"]` unless k matches
    `[A-Za-z0-9_-]+`; array elements `P[]`, mapped members `P{}`."""
    if not path:
        return "$"
    out = ""
    for step in path:
        if step == ARRAY:
            out += "[]"
        elif step == MAP:
            out += "{}"
        elif IDENT.fullmatch(step):
            out += step if not out else "." + step
        else:
            # spec silent on escaping non-ASCII in the JSON string: written raw (RFC 8785 style)
            out += "[" + json.dumps(step, ensure_ascii=False) + "]"
    return out


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def shape(output: Any, maps: set[PathT]) -> dict[PathT, set[str]]:
    """§5 Shape (§10.53: elements merged, §10.51: each object at a mapped path merges at P{})."""
    result: dict[PathT, set[str]] = {}

    def walk(value: Any, path: PathT) -> None:
        result.setdefault(path, set()).add(json_type(value))
        if isinstance(value, list):
            for element in value:
                walk(element, (*path, ARRAY))
        elif isinstance(value, dict):
            for key, member in value.items():
                walk(member, (*path, MAP) if path in maps else (*path, key))

    walk(output, ())
    return result


def state(path: PathT, here: dict[PathT, set[str]]) -> str:
    """§10.52: present, unknown, absent-here or absent-below in one reporting trace."""
    if path in here:
        return "present"
    depth = next(i for i in range(len(path)) if path[: i + 1] not in here)
    parent_types, step = here[path[:depth]], path[depth]
    if step == ARRAY:
        return "unknown" if "array" in parent_types else "absent-below"
    if step == MAP:
        return "unknown" if "object" in parent_types else "absent-below"
    if depth == len(path) - 1 and "object" in parent_types:
        return "absent-here"
    return "absent-below"


def ignored(path: PathT, ignores: list[PathT]) -> bool:
    """§10.51: `--ignore` silences P and every path below it."""
    return any(path[: len(p)] == p for p in ignores)


def canonical(value: Any) -> str:
    """RFC 8785 for the values the tests use (BMP keys, integers and short binary fractions)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        assert math.isfinite(value)
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(v) for k, v in items) + "}"


def terminal(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """§0: the terminal is the last run.completed or run.failed."""
    found = [e for e in events if e["type"] in ("run.completed", "run.failed")]
    return found[-1] if found else None


def check_model(events: list[dict[str, Any]], rules: list[dict[str, Any]]) -> dict[str, Any]:
    """`check` of the two rule kinds the property test uses: run_status equals (§3.7; status by
    type when absent, `none` without terminal) and output_schema `required: [key]` (§3.7;
    `output_missing` counts like any violation, point 10.6)."""
    end = terminal(events)
    errors = warnings = 0
    for rule in rules:
        if rule["kind"] == "run_status":
            status = "none" if end is None else end.get("status", end["type"].split(".")[1])
            failed = status != rule["equals"]
        else:
            key = rule["schema"]["required"][0]
            failed = end is None or "output" not in end or not isinstance(end["output"], dict) \
                or key not in end["output"]
        if failed and rule["severity"] == "error":
            errors += 1
        elif failed:
            warnings += 1
    return {"passed": errors == 0, "error_count": errors, "warning_count": warnings}


def stability_model(traces: list[tuple[str, list[dict[str, Any]]]], ignores: list[PathT],
                    maps: list[PathT], rules: list[dict[str, Any]] | None) -> tuple[dict[str, Any], int]:
    """The whole report of §5 / §10.55 and the exit code."""
    runs: list[dict[str, Any]] = []
    shapes: dict[int, dict[PathT, set[str]]] = {}
    for index, (name, events) in enumerate(traces):
        end = terminal(events)
        reporting = end is not None and "output" in end
        run: dict[str, Any] = {"trace": name, "reporting": reporting, "output_sha256": None}
        if reporting:
            assert end is not None
            run["output_sha256"] = hashlib.sha256(canonical(end["output"]).encode()).hexdigest()
            shapes[index] = shape(end["output"], set(maps))
        if rules is not None:
            run["check"] = check_model(events, rules)
        runs.append(run)
    measured = len(shapes) >= 2
    unstable: list[dict[str, Any]] = []
    if measured:
        every = sorted({p for s in shapes.values() for p in s if not ignored(p, ignores)}, key=render)
        for path in every:
            states = {i: state(path, s) for i, s in shapes.items()}
            present = [i for i, v in states.items() if v == "present"]
            entry = {
                "path": render(path),
                "present_in": present,
                "absent_in": [i for i, v in states.items() if v.startswith("absent")],
                "unknown_in": [i for i, v in states.items() if v == "unknown"],
                "types": [sorted(shapes[i][path]) if i in present else [] for i in range(len(runs))],
            }
            if present and any(v == "absent-here" for v in states.values()):
                unstable.append({"kind": "presence", **entry})
            if len({frozenset(shapes[i][path]) for i in present}) > 1:
                unstable.append({"kind": "type", **entry})
        unstable.sort(key=lambda e: (e["path"], e["kind"] != "presence"))
    report = {"schema": SCHEMA, "runs": runs, "measured": measured,
              "stable": measured and not unstable, "unstable": unstable}
    code = 2 if not measured else 1 if unstable else 0
    if rules is not None:
        code = max([code] + [0 if r["check"]["passed"] else 1 for r in runs])
    return report, code


def normalise(report: dict[str, Any]) -> dict[str, Any]:
    """The product's entries with keys in the model's order (field order is not compared)."""
    data: dict[str, Any] = json.loads(json.dumps(report, sort_keys=True))
    return data


# -- helpers -----------------------------------------------------------------------------------------

def write_jsonl(folder: Path, name: str, events: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps({"seq": i + 1, **e}) + "\n" for i, e in enumerate(events))
    (folder / name).write_text(text, encoding="utf-8")


def done(output: Any) -> list[dict[str, Any]]:
    """A trace whose terminal run.completed carries `output`."""
    return [{"type": "run.start"}, {"type": "run.completed", "output": output}]


def run_stability(cli: Any, tmp_path: Path, outputs: list[list[dict[str, Any]]],
                  *options: str) -> tuple[dict[str, Any] | None, int, str]:
    names = []
    for index, events in enumerate(outputs):
        name = f"t{index}.jsonl"
        write_jsonl(tmp_path, name, events)
        names.append(name)
    result = cli("stability", *names, *options, "--format", "json")
    report = json.loads(result.stdout) if result.stdout.strip() else None
    return report, result.returncode, result.stderr


def unstable_of(cli: Any, tmp_path: Path, outputs: list[Any], *options: str) -> tuple[list[Any], int]:
    report, code, stderr = run_stability(cli, tmp_path, [done(o) for o in outputs], *options)
    assert report is not None, stderr
    return [(e["path"], e["kind"]) for e in report["unstable"]], code


# -- the property test -------------------------------------------------------------------------------

# Not generated (spec silent): duplicate keys inside one JSON object of a trace line, integers that
# a double cannot hold exactly (their RFC 8785 form), keys outside the BMP (hand cases cover them).
KEYS = ["a", "b", "id", "x y"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                    st.sampled_from([1.5, -0.25, 2.0]), st.sampled_from(["", "s", "é\n"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)), max_leaves=6)
small = st.dictionaries(st.sampled_from(["id", "b", "x y"]), st.one_of(
    st.sampled_from([1, 2, 2.5, None, "s"]), st.lists(st.sampled_from([1, True]), max_size=2)), min_size=1, max_size=2)
structured = st.fixed_dictionaries({}, optional={
    "a": st.one_of(st.lists(small, min_size=1, max_size=2),
                   st.dictionaries(st.sampled_from(["k1", "k2"]), small, max_size=2)),
    "b": st.one_of(st.dictionaries(st.sampled_from(["id", "k2"]), small, max_size=2), st.lists(scalars, max_size=2)),
    "x y": scalars})
generic = st.one_of(st.dictionaries(st.sampled_from([*KEYS, "a.b", "", "é", 'q"']), values, min_size=1, max_size=3),
                    st.dictionaries(st.sampled_from(KEYS), values, min_size=1, max_size=3),
                    st.dictionaries(st.sampled_from(KEYS), values, min_size=1, max_size=3), values)


def variant(draw: st.DrawFn, value: Any) -> Any:
    """A near copy of `value`: arrays emptied, members dropped, scalars changed now and then."""
    if isinstance(value, list):
        return [] if draw(st.integers(0, 2)) == 0 else [variant(draw, v) for v in value]
    if isinstance(value, dict):
        return {k: variant(draw, v) for k, v in value.items() if draw(st.integers(0, 4))}
    return draw(scalars) if draw(st.integers(0, 4)) == 0 else value


@st.composite
def trace_set(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """2..5 traces whose outputs are mostly variants of one base output."""
    base = draw(structured)
    return [draw(trace_events(base)) for _ in range(draw(st.integers(2, 5)))]


@st.composite
def trace_events(draw: st.DrawFn, base: Any) -> list[dict[str, Any]]:
    """Random traces: maybe no terminal, several terminals with or without an output (§10.54), a
    non-terminal event carrying an `output`, events after the terminal."""
    events: list[dict[str, Any]] = [{"type": "run.start"}]
    if draw(st.integers(0, 3)) == 0:
        events.append({"type": "agent.message", "output": draw(values)})
    terminals = draw(st.sampled_from([0, 1, 1, 1, 1, 1, 2, 3]))
    for number in range(terminals):
        event: dict[str, Any] = {"type": draw(st.sampled_from(["run.completed", "run.completed", "run.failed"]))}
        if draw(st.integers(0, 6 if number == terminals - 1 else 1)):
            choice = draw(st.integers(0, 5))
            event["output"] = variant(draw, base) if choice > 1 else draw(structured if choice else generic)
        if draw(st.booleans()):
            event["status"] = draw(st.sampled_from(["completed", "failed"]))
        events.append(event)
    if draw(st.integers(0, 3)) == 0:
        events.append({"type": "telemetry.flush"})
    return events


PATH_POOL: list[PathT] = [("a",), ("b",), ("x y",), ("a", ARRAY), ("a", "k1"), ("b", ARRAY), ("a", ARRAY, "id"),
                          ("a", MAP), ("a", MAP, "id"), ("b", "id"), ("a", ARRAY, "x y"), ("a.b",)]
MAP_POOL: list[PathT] = [("a",), ("a",), ("b",), ("a", "k1"), ("b", "id"), ("a", ARRAY), ("x y",), ("a", MAP)]


def cli_path(path: PathT, dollar: bool) -> str:
    text = render(path)
    return "$." + text if dollar and not text.startswith("[") else text


RULES: list[dict[str, Any]] = [
    {"id": "done", "kind": "run_status", "equals": "completed", "severity": "error"},
    {"id": "done-w", "kind": "run_status", "equals": "completed", "severity": "warning"},
    {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["a"]}, "severity": "error"},
    {"id": "shape-w", "kind": "output_schema", "schema": {"type": "object", "required": ["b"]},
     "severity": "warning"},
]
rule_lists = st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique_by=lambda r: str(r["id"]))


@settings(max_examples=examples(75), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(traces=trace_set(),
       ignores=st.lists(st.sampled_from(PATH_POOL), max_size=2),
       maps=st.lists(st.sampled_from(MAP_POOL), max_size=2),
       dollar=st.booleans(),
       rules=st.one_of(st.none(), rule_lists))
def test_report_matches_model(cli: Any, tmp_path: Path, traces: list[list[dict[str, Any]]],
                              ignores: list[PathT], maps: list[PathT], dollar: bool,
                              rules: list[dict[str, Any]] | None) -> None:
    """§5 / §10.51-55: the whole JSON report and the exit code equal the model's."""
    options: list[str] = []
    for path in ignores:
        options += ["--ignore", cli_path(path, dollar)]
    for path in maps:
        options += ["--map", cli_path(path, dollar)]
    if rules is not None:
        (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "m", "rules": rules}), encoding="utf-8")
        options += ["--contract", "c.json"]
    named = [(f"t{i}.jsonl", events) for i, events in enumerate(traces)]
    expected, expected_code = stability_model(named, ignores, maps, rules)
    report, code, stderr = run_stability(cli, tmp_path, traces, *options)
    assert report is not None, stderr
    assert normalise(report) == normalise(expected)
    assert code == expected_code


# -- §5 example ---------------------------------------------------------------------------------------

EXAMPLE = [{"refunds": [{"id": "A9", "amount": 10}], "total": 10},
           {"refunds": [], "total": "0"},
           {"refunds": [{"id": "B2"}], "total": 0}]


def test_spec_example_fails(cli: Any, tmp_path: Path) -> None:
    """§5 Example: `total` is type-unstable; `refunds[].amount` is presence-unstable (absent in T3,
    unknown in T2); exit 1."""
    report, code, _ = run_stability(cli, tmp_path, [done(o) for o in EXAMPLE])
    assert report is not None and code == 1
    assert report["measured"] is True and report["stable"] is False
    assert report["unstable"] == [
        {"path": "refunds[].amount", "kind": "presence", "present_in": [0], "absent_in": [2], "unknown_in": [1],
         "types": [["number"], [], []]},
        {"path": "total", "kind": "type", "present_in": [0, 1, 2], "absent_in": [], "unknown_in": [],
         "types": [["number"], ["string"], ["number"]]},
    ]


def test_spec_example_passes(cli: Any, tmp_path: Path) -> None:
    """§5 Example: "It passes with "total":0 in T2 and an amount in T3"."""
    fixed = [EXAMPLE[0], {"refunds": [], "total": 0}, {"refunds": [{"id": "B2", "amount": 3}], "total": 0}]
    report, code, _ = run_stability(cli, tmp_path, [done(o) for o in fixed])
    assert report is not None and code == 0
    assert (report["measured"], report["stable"], report["unstable"]) == (True, True, [])


def test_example_report_matches_published_schema(cli: Any, tmp_path: Path) -> None:
    """README: the JSON report `agent-invariants/stability/v1` has a schema; §10.55 fields."""
    document = json.loads((REPO / "schemas" / "stability-report-v1.schema.json").read_text(encoding="utf-8"))
    report, _, _ = run_stability(cli, tmp_path, [done(o) for o in EXAMPLE])
    assert report is not None and report["schema"] == SCHEMA
    jsonschema.Draft202012Validator(document).validate(report)


# -- shape and path notation (§5 Shape, §10.51) ------------------------------------------------------

def test_root_path_is_dollar(cli: Any, tmp_path: Path) -> None:
    """§5 "The root path is `$`"; §10.53 null vs number differ."""
    assert unstable_of(cli, tmp_path, [None, 3]) == ([("$", "type")], 1)


def test_root_array_elements_are_brackets(cli: Any, tmp_path: Path) -> None:
    """§10.51: array elements are `[]` at the root, members below them `[].k`."""
    assert unstable_of(cli, tmp_path, [[{"k": 1}], [{"k": "1"}]]) == ([("[].k", "type")], 1)


def test_member_needing_quotes(cli: Any, tmp_path: Path) -> None:
    """§10.51: a key not matching [A-Za-z0-9_-]+ is written `P["k"]` (`["k"]` at the root)."""
    found, code = unstable_of(cli, tmp_path, [{"a.b": 1, "o": {"x y": 1}}, {"a.b": "1", "o": {"x y": None}}])
    assert (found, code) == ([('["a.b"]', "type"), ('o["x y"]', "type")], 1)


def test_empty_key_is_quoted(cli: Any, tmp_path: Path) -> None:
    """§10.51: the empty key does not match `[A-Za-z0-9_-]+`, so it is `[""]`."""
    assert unstable_of(cli, tmp_path, [{"": 1}, {"": True}]) == ([('[""]', "type")], 1)


def test_nested_identifier_members_use_dots(cli: Any, tmp_path: Path) -> None:
    """§10.51: `P.k` below the root, with `-` and `_` allowed in k."""
    assert unstable_of(cli, tmp_path, [{"a": {"b-c_1": 1}}, {"a": {"b-c_1": []}}]) == ([("a.b-c_1", "type")], 1)


def test_sorted_by_code_point(cli: Any, tmp_path: Path) -> None:
    """§10.55: entries sorted by path in code-point order (`B` < `["x y"]` < `b`)."""
    found, _ = unstable_of(cli, tmp_path, [{"b": 1, "B": 1, "x y": 1}, {"b": "", "B": "", "x y": ""}])
    assert [p for p, _ in found] == ["B", '["x y"]', "b"]


# -- presence, unknown, topmost (§5 Instability, §10.52) --------------------------------------------

def test_only_topmost_absent_path(cli: Any, tmp_path: Path) -> None:
    """§5: "only the topmost absent path is reported": `a` absent in T2, `a.b` is not reported."""
    report, code, _ = run_stability(cli, tmp_path, [done({"a": {"b": 1}}), done({})])
    assert report is not None and code == 1
    assert report["unstable"] == [{"path": "a", "kind": "presence", "present_in": [0], "absent_in": [1],
                                   "unknown_in": [], "types": [["object"], []]}]


def test_empty_array_makes_paths_unknown(cli: Any, tmp_path: Path) -> None:
    """§5: paths under an empty array are unknown, not absent (Agent Doctor's false positive)."""
    assert unstable_of(cli, tmp_path, [{"r": [{"id": 1}]}, {"r": []}]) == ([], 0)


def test_parent_type_change_is_absent_below(cli: Any, tmp_path: Path) -> None:
    """§10.52: under a parent that is a number in T2, `a.b` is absent-below (not presence-unstable)
    and `a` is type-unstable."""
    assert unstable_of(cli, tmp_path, [{"a": {"b": 1}}, {"a": 5}]) == ([("a", "type")], 1)


def test_absent_in_lists_both_kinds(cli: Any, tmp_path: Path) -> None:
    """§10.52: "`absent_in` lists both kinds of absence" (absent-below in T1, absent-here in T2)."""
    report, _, _ = run_stability(cli, tmp_path, [done({"a": {"b": 1}}), done({"a": 5}), done({"a": {}})])
    assert report is not None
    entry = next(e for e in report["unstable"] if e["path"] == "a.b")
    assert (entry["kind"], entry["present_in"], entry["absent_in"], entry["unknown_in"]) == \
        ("presence", [0], [1, 2], [])


def test_array_in_place_of_object_is_absent_below(cli: Any, tmp_path: Path) -> None:
    """§10.52: an array where an object was: `a.b` absent-below (`a` never an object there)."""
    assert unstable_of(cli, tmp_path, [{"a": {"b": 1}}, {"a": [1]}]) == ([("a", "type")], 1)


def test_presence_and_type_on_one_path(cli: Any, tmp_path: Path) -> None:
    """§10.53 "a path may have both a presence and a type entry"; §10.55 presence before type."""
    report, _, _ = run_stability(cli, tmp_path, [done({"a": 1}), done({"a": "s"}), done({})])
    assert report is not None
    assert [(e["path"], e["kind"], e["present_in"], e["absent_in"]) for e in report["unstable"]] == \
        [("a", "presence", [0, 1], [2]), ("a", "type", [0, 1], [2])]


def test_topmost_absent_under_array_elements(cli: Any, tmp_path: Path) -> None:
    """§5/§10.52: `a[].b` missing from an element object is reported, `a[].b.c` below it is not."""
    assert unstable_of(cli, tmp_path, [{"a": [{"b": {"c": 1}}]}, {"a": [{}]}]) == ([("a[].b", "presence")], 1)


def test_unknown_under_nested_empty_array(cli: Any, tmp_path: Path) -> None:
    """§10.52: the first missing step is `[]` of an empty array -> unknown; absent-here in T2."""
    outs = [{"a": [{"b": [{"c": 1}]}]}, {"a": [{"b": []}]}, {"a": [{"b": [{}]}]}]
    report, code, _ = run_stability(cli, tmp_path, [done(o) for o in outs])
    assert report is not None and code == 1
    assert [(e["path"], e["kind"], e["present_in"], e["absent_in"], e["unknown_in"]) for e in report["unstable"]] \
        == [("a[].b[].c", "presence", [0], [2], [1])]


def test_type_entry_lists_unknown_runs(cli: Any, tmp_path: Path) -> None:
    """§10.52/§10.53: a type entry also lists where the path is unknown (empty array in T0)."""
    report, code, _ = run_stability(cli, tmp_path, [done({"x": []}), done({"x": [1]}), done({"x": ["a"]})])
    assert report is not None and code == 1
    assert report["unstable"] == [{"path": "x[]", "kind": "type", "present_in": [1, 2], "absent_in": [],
                                   "unknown_in": [0], "types": [[], ["number"], ["string"]]}]


# -- types (§10.53) ----------------------------------------------------------------------------------

def test_integer_and_float_are_one_type(cli: Any, tmp_path: Path) -> None:
    """§10.53: 1 and 1.0 are both number."""
    assert unstable_of(cli, tmp_path, [{"n": 1}, {"n": 1.5}]) == ([], 0)


def test_types_compared_as_sets(cli: Any, tmp_path: Path) -> None:
    """§10.53: type sets, elements merged: [1,"a"] and ["b",2,3] have the same set."""
    assert unstable_of(cli, tmp_path, [{"x": [1, "a"]}, {"x": ["b", 2, 3]}]) == ([], 0)


def test_type_set_difference_in_elements(cli: Any, tmp_path: Path) -> None:
    """§10.53: [1,"a"] vs [1]: `x[]` is type-unstable, types sorted per run."""
    report, _, _ = run_stability(cli, tmp_path, [done({"x": [1, "a"]}), done({"x": [1]})])
    assert report is not None
    assert report["unstable"] == [{"path": "x[]", "kind": "type", "present_in": [0, 1], "absent_in": [],
                                   "unknown_in": [], "types": [["number", "string"], ["number"]]}]


def test_boolean_vs_number(cli: Any, tmp_path: Path) -> None:
    """§10.53: boolean and number are different JSON types."""
    assert unstable_of(cli, tmp_path, [{"f": True}, {"f": 1}]) == ([("f", "type")], 1)


def test_types_list_is_sorted(cli: Any, tmp_path: Path) -> None:
    """§10.55: `types` is one sorted list per run; §10.53 the six JSON types, elements merged."""
    report, _, _ = run_stability(cli, tmp_path, [done({"x": [{}, "a", None, [], True, 1]}), done({"x": [1]})])
    assert report is not None
    assert report["unstable"][0]["types"] == [["array", "boolean", "null", "number", "object", "string"],
                                              ["number"]]


# -- --ignore and --map (§10.51) ---------------------------------------------------------------------

def test_ignore_silences_path_and_below(cli: Any, tmp_path: Path) -> None:
    """§10.51: `--ignore` silences P and every path below it; a sibling with P as a string prefix
    (`ab`) is not below P."""
    outs = [{"a": {"b": 1}, "ab": 1}, {"a": {"b": "1", "c": 1}, "ab": "1"}]
    assert unstable_of(cli, tmp_path, outs, "--ignore", "a") == ([("ab", "type")], 1)


def test_ignore_repeats_and_takes_dollar_prefix(cli: Any, tmp_path: Path) -> None:
    """§10.51: `--ignore` may repeat; a leading `$.` is accepted."""
    outs = [{"a": 1, "b": [{"c": 1}]}, {"a": "1", "b": [{"c": "1"}]}]
    assert unstable_of(cli, tmp_path, outs, "--ignore", "$.a", "--ignore", "b[].c") == ([], 0)


def test_ignore_quoted_path(cli: Any, tmp_path: Path) -> None:
    """§10.51: `--ignore` takes the report's notation, including `["k"]`."""
    assert unstable_of(cli, tmp_path, [{"x y": 1}, {"x y": "1"}], "--ignore", '["x y"]') == ([], 0)


def test_map_collapses_keys(cli: Any, tmp_path: Path) -> None:
    """§5/§10.51: `--map P` merges the members of the object at P at `P{}`: different ids are
    not presence-unstable, but a member's type still is."""
    outs = [{"m": {"A1": {"s": "ok"}}}, {"m": {"B2": {"s": 1}}}]
    assert unstable_of(cli, tmp_path, outs) == ([("m.A1", "presence"), ("m.B2", "presence")], 1)
    assert unstable_of(cli, tmp_path, outs, "--map", "m") == ([("m{}.s", "type")], 1)


def test_empty_map_makes_paths_unknown(cli: Any, tmp_path: Path) -> None:
    """§10.51: an empty map makes the paths below it unknown, like an empty array."""
    report, code, _ = run_stability(cli, tmp_path, [done({"m": {"A": {"s": 1}}}), done({"m": {}}),
                                                     done({"m": {"B": {}}})], "--map", "$.m")
    assert report is not None and code == 1
    assert report["unstable"] == [{"path": "m{}.s", "kind": "presence", "present_in": [0], "absent_in": [2],
                                   "unknown_in": [1], "types": [["number"], [], []]}]


def test_map_repeats_and_under_arrays(cli: Any, tmp_path: Path) -> None:
    """§10.51: `--map` may repeat; it treats *each* object at P (here under an array) as a map."""
    outs = [{"r": [{"k": {"x": 1}}, {"k": {"y": 2}}], "m": {"p": 1}}, {"r": [{"k": {"z": 3}}], "m": {"q": 2}}]
    assert unstable_of(cli, tmp_path, outs, "--map", "r[].k", "--map", "m") == ([], 0)


def test_map_on_non_object_is_absent_below(cli: Any, tmp_path: Path) -> None:
    """§10.52: `m{}` under a number (no object at m) is absent-below: only `m`'s type is reported."""
    assert unstable_of(cli, tmp_path, [{"m": {"A": {"s": 1}}}, {"m": 5}], "--map", "m") == ([("m", "type")], 1)


def test_quoted_keys_use_json_escapes(cli: Any, tmp_path: Path) -> None:
    """§10.51: `["k"]` holds k as a JSON string: a quote and a newline are escaped."""
    found, _ = unstable_of(cli, tmp_path, [{'q"b': 1, "n\nl": 1}, {'q"b': "1", "n\nl": "1"}])
    assert [p for p, _ in found] == ['["n\\nl"]', '["q\\"b"]']


def test_ignore_root_silences_everything(cli: Any, tmp_path: Path) -> None:
    """§10.51: the root is `$` and `--ignore P` silences P and every path below it (spec silent on
    whether `$` itself is a valid P; the product accepts it, which is the natural reading)."""
    assert unstable_of(cli, tmp_path, [{"a": 1}, {"a": "1", "b": 2}], "--ignore", "$") == ([], 0)


def test_map_root(cli: Any, tmp_path: Path) -> None:
    """§10.51: mapped members are `P{}`, so a mapped root object merges at `{}` (spec silent on `$`
    as P; the product accepts it)."""
    assert unstable_of(cli, tmp_path, [{"k1": {"s": 1}}, {"k2": {"s": "1"}}], "--map", "$") == \
        ([("{}.s", "type")], 1)


def test_bad_path_option_is_refused(cli: Any, tmp_path: Path) -> None:
    """§10.51 fixes the notation; a P that is not a path is bad usage (v1 §7.5: exit 2, message on
    stderr, stdout empty)."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    write_jsonl(tmp_path, "t1.jsonl", done(1))
    result = cli("stability", "t0.jsonl", "t1.jsonl", "--ignore", "a[", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert len(result.stderr.splitlines()) == 1 and "a[" in result.stderr


# -- reporting traces and the final output (§5, §10.54) ---------------------------------------------

def test_null_output_reports(cli: Any, tmp_path: Path) -> None:
    """§10.54: `output: null` reports, shape {$: {null}}."""
    report, code, _ = run_stability(cli, tmp_path, [done(None), done(None)])
    assert report is not None and code == 0
    assert [r["reporting"] for r in report["runs"]] == [True, True]
    null_hash = hashlib.sha256(b"null").hexdigest()
    assert [r["output_sha256"] for r in report["runs"]] == [null_hash, null_hash]


def test_run_failed_terminal_output_counts(cli: Any, tmp_path: Path) -> None:
    """§10.54: the terminal may be run.failed, and its output is the final output."""
    failed: list[Event] = [{"type": "run.start"}, {"type": "run.failed", "output": {"a": "x"}}]
    report, code, _ = run_stability(cli, tmp_path, [done({"a": 1}), failed])
    assert report is not None and code == 1
    assert [(e["path"], e["kind"]) for e in report["unstable"]] == [("a", "type")]


def test_last_terminal_without_output_does_not_report(cli: Any, tmp_path: Path) -> None:
    """§10.54: "an earlier terminal's output does not count"; the run is listed, excluded, and with
    fewer than two reporting traces: measured false, stable false, unstable [], exit 2."""
    late: list[Event] = [{"type": "run.completed", "output": {"a": 1}}, {"type": "run.failed"}]
    report, code, _ = run_stability(cli, tmp_path, [done({"a": 1}), late])
    assert code == 2 and report is not None
    assert report == {"schema": SCHEMA, "measured": False, "stable": False, "unstable": [], "runs": [
        {"trace": "t0.jsonl", "reporting": True, "output_sha256": hashlib.sha256(b'{"a":1}').hexdigest()},
        {"trace": "t1.jsonl", "reporting": False, "output_sha256": None}]}


def test_no_terminal_does_not_report(cli: Any, tmp_path: Path) -> None:
    """§10.54: no terminal -> not reporting, even when another event carries an `output`."""
    other: list[Event] = [{"type": "run.start"}, {"type": "agent.message", "output": {"a": 1}}]
    report, code, _ = run_stability(cli, tmp_path, [done({"a": 1}), other])
    assert report is not None and code == 2
    assert [r["reporting"] for r in report["runs"]] == [True, False]


def test_non_reporting_trace_is_left_out_of_indexes(cli: Any, tmp_path: Path) -> None:
    """§5 "listed and excluded"; §10.55 indexes into `runs`, `types` `[]` where not present."""
    report, code, _ = run_stability(cli, tmp_path, [done({"a": 1}), [{"type": "run.start"}], done({"a": "1"})])
    assert report is not None and code == 1
    assert report["unstable"] == [{"path": "a", "kind": "type", "present_in": [0, 2], "absent_in": [],
                                   "unknown_in": [], "types": [["number"], [], ["string"]]}]


def test_no_reporting_trace_at_all(cli: Any, tmp_path: Path) -> None:
    """§5: with fewer than 2 reporting traces: "not measured", exit 2, never a pass."""
    report, code, _ = run_stability(cli, tmp_path, [[{"type": "run.start"}], [{"type": "run.completed"}]])
    assert code == 2 and report is not None
    assert (report["measured"], report["stable"], report["unstable"]) == (False, False, [])


def test_output_sha256_is_of_canonical_form(cli: Any, tmp_path: Path) -> None:
    """§10.55: hex SHA-256 of the RFC 8785 output: sorted keys, `100.0` -> `100`, no spaces."""
    out = {"z": 100.0, "a": [1.5, "é"], "B": None}
    report, _, _ = run_stability(cli, tmp_path, [done(out), done(out)])
    assert report is not None
    digest = hashlib.sha256('{"B":null,"a":[1.5,"é"],"z":100}'.encode()).hexdigest()
    assert [r["output_sha256"] for r in report["runs"]] == [digest, digest]


def test_canonical_numbers_and_string_escapes(cli: Any, tmp_path: Path) -> None:
    """§10.55: RFC 8785 form: -0 -> 0, 1e21 -> 1e+21, 1e-7, 1E300 -> 1e+300, shortest round trip,
    control characters as \\u00xx, DEL and U+2028 raw."""
    line = ('{"seq":1,"type":"run.completed","output":[-0.0,1e21,1e-7,1E300,0.30000000000000004,'
            '123456789012345680000,5e-324,"\\u001f\\u007f\\u2028"]}\n')
    for name in ("t0.jsonl", "t1.jsonl"):
        (tmp_path / name).write_text(line, encoding="utf-8")
    result = cli("stability", "t0.jsonl", "t1.jsonl", "--format", "json")
    expected = '[0,1e+21,1e-7,1e+300,0.30000000000000004,123456789012345680000,5e-324,"\\u001f\x7f\u2028"]'
    digest = hashlib.sha256(expected.encode()).hexdigest()
    assert [r["output_sha256"] for r in json.loads(result.stdout)["runs"]] == [digest, digest]


def test_hash_sorts_keys_by_utf16_units(cli: Any, tmp_path: Path) -> None:
    """§10.55 RFC 8785: keys sorted by UTF-16 code units (U+1F600 is D83D DE00, before U+FF01)."""
    out = {"\uff01": 1, "\U0001F600": 1, "z": 1}
    report, _, _ = run_stability(cli, tmp_path, [done(out), done(out)])
    assert report is not None
    digest = hashlib.sha256('{"z":1,"\U0001F600":1,"\uff01":1}'.encode()).hexdigest()
    assert report["runs"][0]["output_sha256"] == digest


def test_paths_sorted_by_code_point_not_utf16(cli: Any, tmp_path: Path) -> None:
    """§10.55: entries sorted "in code-point order": U+FF01 before U+1F600 (UTF-16 would swap
    them). Spec silent on escaping non-ASCII inside `["k"]`; the product writes it raw, which is a
    valid JSON string."""
    found, _ = unstable_of(cli, tmp_path, [{"\uff01": 1, "\U0001F600": 1}, {"\uff01": "", "\U0001F600": ""}])
    assert [p for p, _ in found] == ['["\uff01"]', '["\U0001F600"]']


def test_dollar_prefix_before_quoted_and_array_steps(cli: Any, tmp_path: Path) -> None:
    """§10.51: "a leading `$.` is accepted" before any path, also `["k"]` and `[]` at the root."""
    outs = [{"x y": 1, "k": 1}, {"x y": "1", "k": 1}]
    assert unstable_of(cli, tmp_path, outs, "--ignore", '$.["x y"]') == ([], 0)
    assert unstable_of(cli, tmp_path, [[1], ["1"]], "--ignore", "$.[]") == ([], 0)


def test_single_trace_is_not_measured(cli: Any, tmp_path: Path) -> None:
    """§5: fewer than 2 reporting traces -> "not measured", exit 2; §10.55 the report is printed."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    result = cli("stability", "t0.jsonl", "--format", "json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert (report["measured"], report["stable"], len(report["runs"])) == (False, False, 1)


def test_empty_trace_file_does_not_report(cli: Any, tmp_path: Path) -> None:
    """v1 §3.2: an empty file is a valid trace with zero events; §10.54 no terminal -> not reporting."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    write_jsonl(tmp_path, "t1.jsonl", done(1))
    (tmp_path / "e.jsonl").write_text("", encoding="utf-8")
    result = cli("stability", "t0.jsonl", "e.jsonl", "t1.jsonl", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [r["reporting"] for r in report["runs"]] == [True, False, True] and report["stable"] is True


def test_stdin_only_once(cli: Any, tmp_path: Path) -> None:
    """CLI help: `-` for stdin, once: given twice it is refused (exit 2, one stderr line)."""
    result = cli("stability", "-", "-", "--format", "json", stdin="")
    assert (result.returncode, result.stdout) == (2, "")
    assert len(result.stderr.splitlines()) == 1


def test_stdin_trace(cli: Any, tmp_path: Path) -> None:
    """CLI help: `-` reads one trace from stdin; the report names it as given."""
    write_jsonl(tmp_path, "t0.jsonl", done({"a": 1}))
    text = "".join(json.dumps({"seq": i + 1, **e}) + "\n" for i, e in enumerate(done({"a": 2})))
    result = cli("stability", "t0.jsonl", "-", "--format", "json", stdin=text)
    assert result.returncode == 0, result.stderr
    assert [r["trace"] for r in json.loads(result.stdout)["runs"]] == ["t0.jsonl", "-"]


# -- --contract (§5, §10.55) -------------------------------------------------------------------------

def write_rules(tmp_path: Path, rules: list[dict[str, Any]]) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": rules}), encoding="utf-8")


def test_contract_check_fields_and_worst_exit(cli: Any, tmp_path: Path) -> None:
    """§10.55: `runs[i].check` holds {passed, error_count, warning_count}; the exit is the maximum of
    the stability exit (0 here) and every check's (1: T1 lacks `total`)."""
    write_rules(tmp_path, [{"id": "shape", "kind": "output_schema", "schema": {"required": ["total"]}},
                           {"id": "done", "kind": "run_status", "equals": "completed", "severity": "warning"}])
    failed: list[Event] = [{"type": "run.start"}, {"type": "run.failed", "output": {"n": 2}}]
    report, code, _ = run_stability(cli, tmp_path, [done({"n": 1, "total": 1}), failed, done({"n": 3})],
                                    "--contract", "c.json")
    assert report is not None and code == 1
    assert [r["check"] for r in report["runs"]] == [
        {"passed": True, "error_count": 0, "warning_count": 0},
        {"passed": False, "error_count": 1, "warning_count": 1},
        {"passed": False, "error_count": 1, "warning_count": 0}]
    assert report["stable"] is False  # `total` present in T0, absent-here in T1 and T2


def test_contract_warnings_keep_exit_zero(cli: Any, tmp_path: Path) -> None:
    """§10.55 + v1 §7.5: a check with only warnings exits 0, so a stable set stays 0."""
    write_rules(tmp_path, [{"id": "done", "kind": "run_status", "equals": "failed", "severity": "warning"}])
    report, code, _ = run_stability(cli, tmp_path, [done({"a": 1}), done({"a": 2})], "--contract", "c.json")
    assert report is not None and code == 0
    assert [r["check"]["warning_count"] for r in report["runs"]] == [1, 1]


def test_contract_not_measured_still_checks(cli: Any, tmp_path: Path) -> None:
    """§10.55: every trace is checked, not-reporting ones included; exit max(2, checks) = 2."""
    write_rules(tmp_path, [{"id": "shape", "kind": "output_schema", "schema": {"required": ["a"]}}])
    report, code, _ = run_stability(cli, tmp_path, [done({"a": 1}), [{"type": "run.start"}]], "--contract", "c.json")
    assert report is not None and code == 2
    assert [r["check"]["passed"] for r in report["runs"]] == [True, False]


def test_version_1_contract(cli: Any, tmp_path: Path) -> None:
    """§5: with `--contract` each trace is checked as `check` would, a version-1 contract too."""
    document = {"version": 1, "name": "v1", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}
    (tmp_path / "c.json").write_text(json.dumps(document), encoding="utf-8")
    shell: list[Event] = [{"type": "tool.call", "tool": "shell.exec"}, {"type": "run.completed", "output": 1}]
    report, code, _ = run_stability(cli, tmp_path, [done(1), shell], "--contract", "c.json")
    assert report is not None and code == 1 and report["stable"] is True
    assert [r["check"]["error_count"] for r in report["runs"]] == [0, 1]


def test_contract_lint_refusal(cli: Any, tmp_path: Path) -> None:
    """§10.55 "lint refusal included" + §4: a lint error is exit 2, nothing on stdout, one stderr
    line naming the contract; `--no-lint` checks anyway."""
    write_rules(tmp_path, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
                           {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1}])
    report, code, stderr = run_stability(cli, tmp_path, [done(1), done(1)], "--contract", "c.json")
    assert (report, code) == (None, 2)
    assert len(stderr.splitlines()) == 1 and "c.json" in stderr
    report, code, _ = run_stability(cli, tmp_path, [done(1), done(1)], "--contract", "c.json", "--no-lint")
    assert report is not None and code == 1
    assert [r["check"]["error_count"] for r in report["runs"]] == [1, 1]


# -- bad input (§10.55: unreadable or invalid trace or contract -> exit 2, nothing on stdout) -------

def assert_refused(cli: Any, args: list[str], name: str) -> None:
    result = cli("stability", *args, "--format", "json")
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and name in lines[0], lines
    assert "Traceback" not in result.stderr


def test_invalid_json_line(cli: Any, tmp_path: Path) -> None:
    """§10.55: an invalid trace is exit 2 with nothing on stdout."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    (tmp_path / "bad.jsonl").write_text('{"seq": 1, "type": "run.completed", "output": }\n', encoding="utf-8")
    assert_refused(cli, ["t0.jsonl", "bad.jsonl"], "bad.jsonl")


def test_seq_not_increasing(cli: Any, tmp_path: Path) -> None:
    """§10.55 + v1 §3.2 step 5: a seq order error makes the trace invalid."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    (tmp_path / "bad.jsonl").write_text('{"seq": 2, "type": "a"}\n{"seq": 1, "type": "run.completed"}\n',
                                        encoding="utf-8")
    assert_refused(cli, ["t0.jsonl", "bad.jsonl"], "bad.jsonl")


def test_missing_trace_file(cli: Any, tmp_path: Path) -> None:
    """§10.55: an unreadable trace is exit 2 with nothing on stdout."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    assert_refused(cli, ["t0.jsonl", "nope.jsonl"], "nope.jsonl")


def test_invalid_contract(cli: Any, tmp_path: Path) -> None:
    """§10.55: an invalid contract is exit 2 with nothing on stdout."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    write_jsonl(tmp_path, "t1.jsonl", done(1))
    write_rules(tmp_path, [{"id": "x", "kind": "no_such_kind"}])
    assert_refused(cli, ["t0.jsonl", "t1.jsonl", "--contract", "c.json"], "c.json")


def test_missing_contract_file(cli: Any, tmp_path: Path) -> None:
    """§10.55: an unreadable contract is exit 2 with nothing on stdout."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    write_jsonl(tmp_path, "t1.jsonl", done(1))
    assert_refused(cli, ["t0.jsonl", "t1.jsonl", "--contract", "none.json"], "none.json")


def test_invalid_output_type_under_v2_contract(cli: Any, tmp_path: Path) -> None:
    """§10.16: under a version-2 contract new fields are type-checked (a null `status`), and
    §10.55 makes that trace invalid: exit 2, nothing on stdout."""
    write_jsonl(tmp_path, "t0.jsonl", done(1))
    write_jsonl(tmp_path, "bad.jsonl", [{"type": "run.completed", "output": 1, "status": None}])
    write_rules(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}])
    assert_refused(cli, ["t0.jsonl", "bad.jsonl", "--contract", "c.json"], "bad.jsonl")
