"""retry_limit stays exact when its group counts move to disk (many distinct call signatures)."""
import random
from unittest import mock

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agent_invariants.tally as tally
from agent_invariants import check_trace
from agent_invariants.spill import Partitions

from support import contract, examples


def random_calls(rng: random.Random, size: int) -> list[dict]:
    trace = []
    for seq in range(size):
        if rng.random() < 0.15:
            trace.append({"seq": seq, "type": "agent.message"})
            continue
        tool = rng.choice(["kb.search", "crm.lookup", "payments.refund"])
        call = {"seq": seq, "type": "tool.call", "tool": tool}
        if rng.random() < 0.8:
            call["call_signature"] = f"{tool}:{rng.randint(0, size // 3)}"
        trace.append(call)
    return trace


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("group_by", ["call_signature", "tool"])
def test_spilled_counts_give_the_same_report(monkeypatch, seed, group_by):
    rng = random.Random(seed)
    rules = contract({"id": "retries", "kind": "retry_limit", "max_attempts": rng.randint(1, 4), "group_by": group_by})
    trace = random_calls(rng, rng.randint(50, 600))
    in_memory = msgspec.json.encode(check_trace(rules, trace))
    monkeypatch.setattr(tally, "DEFAULT_MAX_GROUPS", rng.randint(0, 20))
    spilled = msgspec.json.encode(check_trace(rules, trace))
    assert spilled == in_memory


def test_spill_orders_groups_by_first_appearance_across_memory_and_disk(monkeypatch):
    monkeypatch.setattr(tally, "DEFAULT_MAX_GROUPS", 2)
    # groups a, b are counted in memory, then spill; c first appears on disk; a and c overflow
    calls = ["a", "b", "a", "c", "x", "c", "a", "c"]
    trace = [{"seq": i, "type": "tool.call", "tool": "t", "call_signature": sig} for i, sig in enumerate(calls)]
    report = check_trace(contract({"id": "r", "kind": "retry_limit", "max_attempts": 2}), trace)
    assert [(v.evidence["group"], v.evidence["attempts"], v.event_seq) for v in report.violations] == [
        ("a", 3, 6), ("c", 3, 7)]


def test_spill_leaves_no_temporary_files(monkeypatch, tmp_path):
    monkeypatch.setattr(tally, "DEFAULT_MAX_GROUPS", 3)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    trace = [{"seq": i, "type": "tool.call", "tool": "t", "call_signature": str(i % 50)} for i in range(400)]
    report = check_trace(contract({"id": "r", "kind": "retry_limit", "max_attempts": 5}), trace)
    assert len(report.violations) == 50
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seed", range(6))
def test_a_violation_cap_keeps_the_same_first_groups_in_memory_and_on_disk(monkeypatch, seed):
    rng = random.Random(seed)
    rules = contract({"id": "retries", "kind": "retry_limit", "max_attempts": 1})
    trace = random_calls(rng, 400)
    cap = rng.randint(1, 5)
    in_memory = check_trace(rules, trace, max_violations=cap)
    monkeypatch.setattr(tally, "DEFAULT_MAX_GROUPS", rng.randint(0, 20))
    spilled = check_trace(rules, trace, max_violations=cap)
    assert msgspec.json.encode(spilled) == msgspec.json.encode(in_memory)
    everything = check_trace(rules, trace, max_violations=0)
    assert spilled.results[0].violations_total == len(everything.violations) > cap
    assert spilled.violations == everything.violations[:cap]


def plain_overflows(members: list[tuple[str, int]], limit: int) -> list[tuple[str, int, int, int]]:
    """The reference: counts in a plain dict; (group, count, seq, index) of each group with more
    than `limit` members, its seq and index those of member limit + 1, by first appearance."""
    counts: dict[str, int] = {}
    excess: dict[str, tuple[int, int]] = {}
    for index, (group, seq) in enumerate(members):
        counts[group] = counts.get(group, 0) + 1
        if counts[group] == limit + 1:
            excess[group] = (seq, index)
    return [(group, count, *excess[group]) for group, count in counts.items() if count > limit]


@settings(max_examples=examples(300), deadline=None)
@given(groups=st.lists(st.sampled_from(["a", "b", "c", "d", "é", "e" * 40, "f\n", "", "a:1", "a:2"])
                      | st.integers(0, 60).map(str), max_size=80),
       limit=st.integers(1, 4), max_groups=st.integers(0, 12), keep=st.none() | st.integers(0, 5),
       partitions=st.sampled_from([1, 2, 3, 256]), batch=st.sampled_from([1, 3, 1024]),
       max_characters=st.none() | st.integers(0, 120))
def test_the_tally_counts_as_a_plain_dict_on_either_side_of_the_spill(groups, limit, max_groups, keep, partitions,
                                                                      batch, max_characters):
    """Few partitions put many groups in each (the first `keep` of each partition compete for
    the report, and once `keep` are held a partition's groups ranked after the last of them are
    left out unread); many groups of a few members each make later partitions hold some groups
    that rank before that and some after it; small batches hand members to the partitions while
    others are still held."""
    members = [(group, 1000 + number * 2) for number, group in enumerate(groups)]
    with mock.patch.object(tally, "_PARTITIONS", partitions), mock.patch.object(tally, "_MEMBER_BATCH", batch):
        counter = tally.GroupTally(limit, max_groups=max_groups, max_characters=max_characters)
        for index, (group, seq) in enumerate(members):
            counter.add(group, seq, index)
        assert counter.members == len(members)
        expected = plain_overflows(members, limit)
        found = counter.finish(keep=keep)
    assert counter.overflowed == len(expected)
    assert [(o.group, o.count, o.seq, o.index) for o in found] == expected[:keep]


def test_a_partition_read_again_after_more_records_holds_them_too():
    """Partitions keeps the last partition it read, undecoded, for a second look at other
    columns: records added since must not be left out of the next read."""
    parts = Partitions(kinds=1, count=2, flush_every=3)
    try:
        for seq in range(5):
            parts.add(0, "g", seq, seq * 10)
        number = parts.number("g")
        assert parts.read_columns(0, number, 1) == [[0, 1, 2, 3, 4]]
        assert parts.read_columns(0, number, 2, 0) == [[0, 10, 20, 30, 40], ["g"] * 5]
        parts.add(0, "g", 5, 50)
        assert parts.read_columns(0, number, 1) == [[0, 1, 2, 3, 4, 5]]
        assert parts.read_columns(0, 1 - number, 0) == [[]]
        assert parts.read(0, number)[-1] == ("g", 5, 50)
    finally:
        parts.close()
