"""What the HTML page draws of a trace (`timeline`): the lining up of two runs' calls, and the
shares of the page's limits, held to their definitions on random inputs."""
from __future__ import annotations

from functools import cache

from hypothesis import given
from hypothesis import strategies as st

from agent_invariants.timeline import Call, align, take_turns

TOOLS = st.lists(st.sampled_from("abcd"), max_size=30)


def lcs_length(left: str, right: str) -> int:
    """The length of a longest common subsequence, by its recursive definition."""
    @cache
    def length(i: int, j: int) -> int:
        if i == len(left) or j == len(right):
            return 0
        if left[i] == right[j]:
            return 1 + length(i + 1, j + 1)
        return max(length(i + 1, j), length(i, j + 1))

    return length(0, 0)


@given(TOOLS, TOOLS)
def test_lining_up_keeps_both_runs_in_order_and_matches_as_many_calls_as_can_be(base, cand):
    steps = align([Call(i, i + 1, tool) for i, tool in enumerate(base)],
                  [Call(i, i + 1, tool) for i, tool in enumerate(cand)])
    assert [left.tool for _, left, _ in steps if left is not None] == base
    assert [right.tool for _, _, right in steps if right is not None] == cand
    for change, left, right in steps:
        assert (left is not None, right is not None) == {"same": (True, True), "changed": (True, True),
                                                         "removed": (True, False), "added": (False, True)}[change]
        if change == "same":
            assert left is not None and right is not None and left.tool == right.tool
    assert sum(change == "same" for change, _, _ in steps) == lcs_length("".join(base), "".join(cand))


@given(st.lists(st.lists(st.integers(0, 50), max_size=20), max_size=8), st.integers(0, 60))
def test_groups_take_turns_up_to_the_limit(groups, limit):
    chosen = take_turns(groups, limit)
    every = {item for group in groups for item in group}
    assert chosen <= every and len(chosen) == min(limit, len(every))
    if limit >= len(groups):   # room for one each: no group is left out, however long the others
        assert all(group[0] in chosen for group in groups if group)
