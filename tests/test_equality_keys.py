"""The key that indexes of JSON values file them under (`canonical_key`): two values meet under
one key exactly when they are JSON-equal (spec v2 §10, point 10), so a lookup in a set of keys
answers what comparing with each value would (`$in` against a reference, joins, `distinct`)."""
from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.match.canonical import canonical_key
from agent_invariants.match.equality import json_equal

from support import examples

HUGE = 10**400   # beyond any double: JavaScript reads it as Infinity

SCALARS = st.sampled_from([None, True, False, 0, 1, 1.0, -0.0, 2**53, 2**53 + 1, HUGE, 2 * HUGE, -HUGE, 1e308,
                           float("inf"), "1", "", "a", "é", "😀"])
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(["a", "b", "é"]), inner, max_size=3), max_leaves=8)


@settings(max_examples=examples(400), deadline=None)
@given(one=VALUES, other=VALUES)
def test_values_meet_under_one_key_exactly_when_json_equal(one: Any, other: Any) -> None:
    assert (canonical_key(one) == canonical_key(other)) is json_equal(one, other)


def test_containers_holding_integers_beyond_any_double_meet_as_json_equality_says() -> None:
    assert canonical_key({"n": HUGE, "m": 1}) == canonical_key({"m": 1.0, "n": 2 * HUGE})
    assert canonical_key([1, HUGE]) != canonical_key([1, -HUGE])
    deep, deeper = HUGE, 3 * HUGE
    for _ in range(498):   # as deep as a trace may nest
        deep, deeper = [deep], [deeper]
    assert canonical_key(deep) == canonical_key(deeper)
