"""Long arrays in the canonical form (RFC 8785): an array of integers or of plain strings is
written whole, and must read exactly as the same array written item by item."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.match.canonical import canonical

from support import examples

items = st.one_of(
    st.integers(-(2**53) - 3, 2**53 + 3), st.integers(-(10**30), 10**30), st.booleans(), st.none(),
    st.text(max_size=6), st.sampled_from(["a", "é", "\"", "\\", "\n", "\x00", "\ud800", "\U0001f600", "\u2028"]),
    st.floats(allow_nan=False, allow_infinity=False))
arrays = st.one_of(
    st.lists(st.integers(-(2**53) - 3, 2**53 + 3), min_size=14, max_size=40),
    st.lists(st.text(max_size=6), min_size=14, max_size=40),
    st.lists(items, min_size=14, max_size=40),
    st.lists(st.one_of(st.integers(-5, 5), st.booleans()), min_size=14, max_size=40))


def item_by_item(array: list[object]) -> str:
    return "[" + ",".join(canonical(item) for item in array) + "]"


@settings(max_examples=examples(200), deadline=None)
@given(arrays)
def test_a_long_array_reads_as_its_items_written_one_by_one(array):
    assert canonical(array) == item_by_item(array)
    assert canonical({"xs": array}) == '{"xs":' + item_by_item(array) + "}"


def test_the_forms_of_long_arrays():
    assert canonical(list(range(20))) == "[" + ",".join(map(str, range(20))) + "]"
    # an integer beyond 2^53 is the nearest double, as JavaScript reads it; a boolean is no integer
    assert canonical([2**53 + 1] * 16) == "[" + ",".join(["9007199254740992"] * 16) + "]"
    assert canonical([1] * 15 + [True]) == "[" + "1," * 15 + "true]"
    assert canonical(["a\n"] * 16) == "[" + ",".join(['"a\\n"'] * 16) + "]"
    assert canonical(["\ud800"] * 16) == "[" + ",".join(['"\\ud800"'] * 16) + "]"
    assert canonical(["é"] * 16) == "[" + ",".join(['"é"'] * 16) + "]"
