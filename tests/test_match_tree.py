"""Match trees (spec v2 §2; §10 points 9-11), written from the spec's words: literals, each
operator, references with candidate sets, and the load errors."""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.match.tree import (
    REFERENCES,
    Candidates,
    MatchError,
    Reference,
    compile_tree,
    distinct,
    evaluate,
)

from support import examples

ALL = frozenset({"$arg", "$from_output", "$from_result"})


def outcome(tree: Any, actual: Any, candidates: dict[str, Any] | None = None, **options: Any):
    """Evaluate `tree` on `actual`; references find `candidates[name]` (a list, or a reason)."""
    def resolve(reference: Reference) -> Any:
        return (candidates or {}).get(reference.name, "no_candidates")
    return evaluate(compile_tree(tree, allowed=ALL), actual, resolve, **options)


def matches(tree: Any, actual: Any, candidates: dict[str, Any] | None = None, **options: Any) -> bool:
    found = outcome(tree, actual, candidates, **options)
    return not found.mismatches and not found.unresolved


# -- literals -------------------------------------------------------------------------------------

def test_objects_match_as_subsets_and_exact_mode_wants_equal_key_sets():
    assert matches({"a": 1}, {"a": 1, "b": 2})
    assert not matches({"a": 1}, {"a": 1, "b": 2}, exact=True)
    assert matches({"a": {"c": 1}}, {"a": {"c": 1}, "b": 2}, exact=True, ignore=["b"])
    assert not matches({"a": {"c": 1}}, {"a": {"c": 1, "d": 2}, "b": 2}, exact=True, ignore=["b", "d"])


def test_arrays_need_the_same_length_and_match_by_position():
    assert matches([1, {"a": 2}], [1, {"a": 2, "b": 3}])
    assert not matches([1, 2], [2, 1])
    assert not matches([1], [1, 1])


def test_scalars_are_equal_strictly_by_json_type():
    assert not matches({"n": 1}, {"n": True})
    assert matches({"n": 1}, {"n": 1.0})
    assert not matches({"n": "1"}, {"n": 1})


def test_an_absent_key_is_a_mismatch_without_actual_and_null_is_present():
    found = outcome({"order": "A1"}, {})
    assert found.mismatches == [{"pointer": "/order", "expected": "A1"}] and found.unresolved == []
    assert matches({"x": None}, {"x": None})
    assert matches({"x": {"$exists": True}}, {"x": None})
    assert matches({"x": {"$exists": False}}, {})
    assert not matches({"x": {"$exists": False}}, {"x": None})


def test_an_any_of_at_an_absent_key_is_a_mismatch_whatever_its_references_find():
    """Point 9: an operator node at an absent key is a mismatch; only `$exists: false` (point 11: in
    a branch too) accepts absence. A reference in a branch is not what fails here: the key is."""
    tree = {"a": {"$any_of": [1, {"$from_result": {"tool": "t"}}]}}
    found = outcome(tree, {"b": 1})
    assert found.mismatches == [{"pointer": "/a", "expected": tree["a"]}] and found.unresolved == []
    assert matches({"a": {"$any_of": [{"$exists": False}, {"$from_result": {"tool": "t"}}]}}, {})
    present = outcome(tree, {"a": 2})   # present: the reference that found nothing is what is unresolved
    assert present.mismatches == [] and [entry["reason"] for entry in present.unresolved] == ["no_candidates"]


def test_a_mismatch_names_the_place_the_node_as_written_and_the_actual_value():
    found = outcome({"items": [{"sku": {"$regex": "^A"}}]}, {"items": [{"sku": "B7"}]})
    assert found.mismatches == [{"pointer": "/items/0/sku", "expected": {"$regex": "^A"}, "actual": "B7"}]


# -- operators ------------------------------------------------------------------------------------

def test_regex_searches_strings_only_unanchored():
    assert matches({"$regex": "[0-9]+"}, "order A123 now")
    assert not matches({"$regex": "^A[0-9]+$"}, "A12x")
    assert not matches({"$regex": "1"}, 1)          # a non-string is a mismatch, never coerced


def test_in_compares_each_value_by_json_equality():
    assert matches({"$in": ["a", 1]}, 1.0)
    assert not matches({"$in": [1]}, True)


def test_comparisons_take_finite_numbers_only():
    assert matches({"$gt": 1, "$lte": 3}, 3)
    assert not matches({"$gt": 1}, "100")
    assert not matches({"$gte": 0}, False)


def test_any_of_matches_when_a_branch_does():
    assert matches({"$any_of": [{"$regex": "^A"}, {"$in": [7]}]}, 7)
    assert not matches({"$any_of": [{"$regex": "^A"}, {"$in": [7]}]}, 8)


def test_contains_needs_an_element_that_matches():
    assert matches({"$contains": {"sku": "A1"}}, [{"sku": "B"}, {"sku": "A1", "qty": 2}])
    assert not matches({"$contains": {"sku": "A1"}}, [{"sku": "B"}])
    assert not matches({"$contains": 1}, {"0": 1})


def test_literal_takes_its_operand_as_a_value_with_structural_equality():
    assert matches({"$literal": {"$regex": "x"}}, {"$regex": "x"})
    assert not matches({"$literal": {"a": 1}}, {"a": 1, "b": 2})   # not a subset match


def test_operators_in_one_object_must_all_hold():
    assert not matches({"$gt": 1, "$lt": 2}, 5)


# -- references -----------------------------------------------------------------------------------

def test_equality_with_a_reference_passes_if_any_candidate_equals():
    assert matches({"amount": {"$from_result": {"tool": "get"}}}, {"amount": 10}, {"$from_result": [12, 10]})
    found = outcome({"amount": {"$from_result": {"tool": "get", "path": "paid"}}}, {"amount": 12},
                    {"$from_result": [10]})
    assert found.mismatches == [{"pointer": "/amount", "expected": {"any_of": [10]}, "actual": 12}]


def test_no_candidates_and_ambiguity_are_unresolved_never_also_a_mismatch():
    found = outcome({"amount": {"$arg": "x"}}, {"amount": 1}, {"$arg": []})
    assert found.mismatches == []
    assert found.unresolved == [{"pointer": "/amount", "reference": {"$arg": "x"}, "reason": "no_candidates"}]
    found = outcome({"n": {"$gt": {"$from_result": {"tool": "t"}}}}, {"n": 5}, {"$from_result": [1, 2]})
    assert found.mismatches == [] and [item["reason"] for item in found.unresolved] == ["ambiguous"]
    assert matches({"n": {"$gt": {"$from_result": {"tool": "t"}}}}, {"n": 5}, {"$from_result": [1, 1.0]})


def test_in_with_a_reference_takes_the_elements_of_array_candidates():
    assert matches({"$in": {"$from_result": {"tool": "list"}}}, "b", {"$from_result": [["a", "b"], "c"]})
    assert matches({"$in": {"$from_result": {"tool": "list"}}}, "c", {"$from_result": [["a", "b"], "c"]})
    found = outcome({"$in": {"$from_result": {"tool": "list"}}}, "c", {"$from_result": [[]]})
    assert [item["reason"] for item in found.unresolved] == ["no_candidates"]


def test_any_of_is_unresolved_only_when_no_branch_matches_and_one_is_unresolved():
    tree = {"$any_of": [{"$arg": "a"}, {"$regex": "^x"}]}
    assert matches(tree, "xyz", {"$arg": []})
    found = outcome(tree, "abc", {"$arg": []})
    assert found.mismatches == [] and [item["reason"] for item in found.unresolved] == ["no_candidates"]
    found = outcome(tree, "abc", {"$arg": ["q"]})
    assert len(found.mismatches) == 1 and found.unresolved == []


# -- load errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("tree", "where", "problem"), [
    ({"a": {"$regx": "x"}}, "$.a.$regx", "unknown operator $regx (did you mean '$regex'?)"),
    ({"a": {"$in": [1], "b": 2}}, "$.a", "mixes $ keys with other keys"),
    ({"a": {"$regex": "(a)\\1"}}, "$.a.$regex", "a backreference"),
    ({"a": {"$regex": "(?=a)"}}, "$.a.$regex", "a lookaround"),
    ({"a": {"$regex": "(?>a)"}}, "$.a.$regex", "an atomic group"),
    ({"a": {"$regex": "a*+"}}, "$.a.$regex", "a possessive quantifier"),
    ({"a": {"$regex": "x" * 501}}, "$.a.$regex", "at most 500 characters"),
    ({"a": {"$regex": {"$arg": "p"}}}, "$.a.$regex", "takes a string"),
    ({"a": {"$gt": True}}, "$.a.$gt", "takes a finite number"),
    ({"a": {"$lte": 2**1024}}, "$.a.$lte", "takes a finite number"),   # beyond any double, as JavaScript reads it
    ({"a": {"$gt": -(10**400)}}, "$.a.$gt", "takes a finite number"),
    ({"a": {"$in": "ab"}}, "$.a.$in", "takes a list"),
    ({"a": {"$any_of": [1]}}, "$.a.$any_of", "2 to 20"),
    ({"$exists": True}, "$.$exists", "may only be the value of a key"),
    ([{"$exists": True}], "$[0].$exists", "may only be the value of a key"),
    ({"a": {"$contains": {"$exists": True}}}, "$.a.$contains.$exists", "may only be the value of a key"),
    ({"a": {"$arg": "x", "$gt": 1}}, "$.a.$arg", "stands alone"),
    ({"a": {"$from_result": {"tool": "t", "call_index": 0, "where": {}}}}, "$.a.$from_result.call_index",
     "cannot be combined"),
    ({"a": {"$from_result": {"tol": "t"}}}, "$.a.$from_result.tol", "did you mean 'tool'?"),
    ({"a": {"$from_result": {"tool": "t", "find": {"x": {"$arg": "y"}}}}}, "$.a.$from_result.find.x.$arg",
     "not allowed here"),
    # a key that is not plain is a JSON string in brackets, so that no path reads two ways
    ({"a.b": {"$regx": "x"}}, '$["a.b"].$regx', "did you mean '$regex'?"),
    ({"a": {"b": {"$regx": "x"}}}, "$.a.b.$regx", "did you mean '$regex'?"),
    ({"": {"c[0]": {"$gt": "x"}}}, '$[""]["c[0]"].$gt', "takes a finite number"),
    ({"order id": {"say \"hi\"": {"$in": 1}}}, '$["order id"]["say \\"hi\\""].$in', "takes a list"),
    ({"montant_dû-2": {"$in": 1}}, "$.montant_dû-2.$in", "takes a list"),
])
def test_mistakes_in_a_tree_are_load_errors_naming_their_place(tree, where, problem):
    with pytest.raises(MatchError) as error:
        compile_tree(tree, allowed=ALL)
    assert error.value.path == where
    assert problem in error.value.problem


def test_references_are_refused_where_the_rule_allows_none():
    with pytest.raises(MatchError, match=r"\$\.args\.\$from_output: \$from_output is not allowed here"):
        compile_tree({"$from_output": "total"}, "$.args", allowed=frozenset({"$arg"}))


def test_exists_may_stand_in_the_any_of_branches_of_a_key_value():
    assert matches({"a": {"$any_of": [{"$exists": False}, {"$gt": 3}]}}, {})
    assert matches({"a": {"$any_of": [{"$exists": False}, {"$gt": 3}]}}, {"a": 4})


def test_trees_deeper_than_32_levels_or_over_10000_nodes_are_refused():
    deep: Any = 1
    for _ in range(32):
        deep = {"k": deep}
    with pytest.raises(MatchError, match="32 levels"):
        compile_tree(deep)
    with pytest.raises(MatchError, match="10000 nodes"):
        compile_tree({"a": list(range(10_001))})


@pytest.mark.parametrize("pattern", [r"\\1", r"[(?=]", r"[\]]+", r"(?:a)+?", r"(?i)A", r"a{2,3}", r"x\0"])
def test_what_only_looks_like_a_python_only_feature_is_a_pattern(pattern):
    compile_tree({"$regex": pattern})


# -- candidates kept as they come -----------------------------------------------------------------

_scalars = st.one_of(st.integers(-3, 3), st.sampled_from([1.0, -0.0, 0.5, "a", "b", True, False, None]))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@given(found=st.lists(_values, max_size=40), actual=_values,
       tree=st.sampled_from([{"$from_result": {"tool": "t"}}, {"$in": {"$from_result": {"tool": "t"}}},
                             {"$lte": {"$from_result": {"tool": "t"}}}]))
@settings(max_examples=examples(150), deadline=None)
def test_candidates_kept_with_their_keys_are_judged_and_shown_as_a_plain_list(found: list[Any], actual: Any,
                                                                             tree: Any) -> None:
    """A reference's candidates kept as results come (`Candidates` with their equality keys, as a
    check keeps them) give the outcome the same values as a plain list give: the verdict, and the
    first 20 distinct candidates a mismatch lists (kept as they come, not found again per call)."""
    kept = Candidates(keys=set())
    for value in found:
        kept.add(value)
    plain = outcome({"x": tree}, {"x": actual}, {"$from_result": list(found)} if found else {})
    assert outcome({"x": tree}, {"x": actual}, {"$from_result": kept} if found else {}) == plain
    assert distinct(kept, 20) == distinct(list(found), 20)
    elements = [element for value in found for element in (value if isinstance(value, list) else [value])]
    assert kept.shown_members() == distinct(elements, 20)


def test_a_reference_inside_find_is_refused_saying_find_holds_none() -> None:
    """Point 12 names `$arg` and `$from_output` as load errors in `find`; a `$from_result` there is
    refused too, and the message says why (it said only "not allowed here": hunt 74)."""
    tree = {"q": {"$from_result": {"tool": "get", "path": "items", "find": {"sku": {"$from_result": {"tool": "pick"}}},
                                   "select": "qty"}}}
    with pytest.raises(MatchError) as refused:
        compile_tree(tree, "$", allowed=REFERENCES)
    assert str(refused.value) == ("$.q.$from_result.find.sku.$from_result: $from_result is not allowed here: a find "
                                  "node picks an element by what it holds, without references")
