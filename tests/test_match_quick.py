"""The quick yes of a match tree agrees with the full evaluation: a value surely matches exactly
when evaluating it finds neither a mismatch nor an unresolved reference."""
from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.match.quick import quick
from agent_invariants.match.tree import Reference, compile_tree, evaluate

from support import examples

KEYS = ["a", "b", "c"]
SCALARS = st.sampled_from([None, True, False, 0, 1, 1.0, 1.5, 2, -1.5, -2, 2**53 + 1, "x", "1", "", "ab"])
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3), max_leaves=8)
CANDIDATES = {"a": [], "b": [1], "c": [1, 1.0, 2], "d": [[1, "x"], "y"]}


def references() -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from([{"$arg": key} for key in CANDIDATES])


def operators(node: st.SearchStrategy[Any], as_key_value: bool) -> st.SearchStrategy[dict[str, Any]]:
    single = st.one_of(
        st.builds(lambda pattern: {"$regex": pattern}, st.sampled_from(["^a", "b$", "[0-9]", "x|y", ""])),
        st.builds(lambda values: {"$in": values}, st.lists(SCALARS, max_size=4)),
        st.builds(lambda reference: {"$in": reference}, references()),
        st.builds(lambda name, bound: {name: bound}, st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
                  st.sampled_from([0, 1, 1.5, -2]) | references()),
        st.builds(lambda value: {"$literal": value}, VALUES),
        st.builds(lambda item: {"$contains": item}, node),
        st.builds(lambda branches: {"$any_of": branches}, st.lists(node, min_size=2, max_size=3)),
        *([st.builds(lambda flag: {"$exists": flag}, st.booleans())] if as_key_value else []),
    )
    return st.lists(single, min_size=1, max_size=2).map(lambda parts: {k: v for part in parts for k, v in part.items()})


def trees() -> st.SearchStrategy[Any]:
    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        key_values = st.one_of(inner, operators(inner, as_key_value=True))
        return st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), key_values, max_size=3),
                         operators(inner, as_key_value=False), references())
    return st.recursive(SCALARS, extend, max_leaves=6)


def resolve(reference: Reference) -> list[Any]:
    return CANDIDATES[reference.operand[0]]


@settings(max_examples=examples(300), deadline=None)
@given(tree=trees(), value=VALUES, exact=st.booleans(), absent=st.booleans())
def test_the_quick_yes_agrees_with_the_evaluation(tree, value, exact, absent):
    node = compile_tree({"a": tree}, allowed=frozenset({"$arg"}))   # under a key, where $exists may stand
    actual = {} if absent else {"a": value}
    outcome = evaluate(node, actual, resolve, exact=exact)
    surely = quick(node, exact=exact)(actual, resolve)
    assert surely == (not outcome.mismatches and not outcome.unresolved), (tree, actual, outcome)


@settings(max_examples=examples(600), deadline=None)
@given(tree=operators(SCALARS, as_key_value=True), value=SCALARS | st.lists(SCALARS, max_size=2), absent=st.booleans())
def test_the_quick_yes_agrees_on_every_operator_of_one_key(tree, value, absent):
    node = compile_tree({"a": tree}, allowed=frozenset({"$arg"}))
    actual = {} if absent else {"a": value}
    outcome = evaluate(node, actual, resolve)
    assert quick(node)(actual, resolve) == (not outcome.mismatches and not outcome.unresolved), (tree, actual)


PLAIN = [None, True, False, 0, 1, 1.0, 1.5, 2, -1.5, 2**53 + 1, "x", "1", "ab", [], [1], [1, "x"], {"a": 1}, {}]
ONE_KEY = [
    *({name: bound} for name in ("$gt", "$gte", "$lt", "$lte") for bound in (0, 1, 1.5, {"$arg": "b"},
                                                                             {"$arg": "c"}, {"$arg": "a"})),
    *({"$in": values} for values in ([1, "x"], [True], [None, 2**53 + 1], [], [[1]], {"$arg": "d"}, {"$arg": "c"})),
    *({"$regex": pattern} for pattern in ("^a", "1", "")),
    {"$exists": True}, {"$exists": False}, {"$literal": {"$x": 1}}, {"$literal": 1},
    {"$contains": 1}, {"$contains": {"$gt": 1}}, {"$contains": {"$arg": "b"}},
    {"$any_of": [1, "x"]}, {"$any_of": [{"$exists": False}, {"$gt": 1}]}, {"$any_of": [{"$arg": "a"}, 2]},
    {"$arg": "b"}, {"$arg": "c"}, {"$arg": "a"}, 1, 1.0, "x", None, True, [1], {"a": 1}, {},
]


def test_the_quick_yes_agrees_on_every_operator_and_value():
    for tree in ONE_KEY:
        node = compile_tree({"a": tree}, allowed=frozenset({"$arg"}))
        for actual in [{}, *({"a": value} for value in PLAIN)]:
            for exact in (False, True):
                outcome = evaluate(node, actual, resolve, exact=exact)
                expected = not outcome.mismatches and not outcome.unresolved
                assert quick(node, exact=exact)(actual, resolve) == expected, (tree, actual, exact)


def test_an_absent_key_matches_only_exists_false():
    holds = quick(compile_tree({"a": {"$exists": False}}))
    assert holds({}, resolve) is True
    assert holds({"a": None}, resolve) is False
    assert quick(compile_tree({"a": None}))({}, resolve) is False
