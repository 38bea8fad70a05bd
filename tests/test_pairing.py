"""Calls and results pair one to one (spec v2 §10, point 3), checked against a plain scan."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from agent_invariants.pairing import Pairing

from support import examples


def test_a_repeated_id_pairs_each_result_with_the_nearest_waiting_call():
    pairing: Pairing[str] = Pairing()
    pairing.call("c1", "first")
    pairing.call("c1", "second")
    assert pairing.result("c1") == "second"
    assert pairing.result("c1") == "first"
    assert pairing.result("c1") is None            # a third answer is an orphan
    assert pairing.waiting() == 0


def test_calls_without_an_id_wait_for_nothing_and_results_without_one_are_orphans():
    pairing: Pairing[str] = Pairing()
    pairing.call(UNSET, "no id")
    pairing.call("c2", "two")
    assert pairing.waiting() == 1
    assert pairing.result(UNSET) is None
    assert pairing.result("c9") is None
    assert pairing.result("c2") == "two"


def scanned(events: list[tuple[str, str | None]]) -> list[int | None]:
    """The reference: for each result, the position of the nearest earlier call with its id that
    no earlier result took, found by scanning back (None: an orphan)."""
    taken: set[int] = set()
    answers: list[int | None] = []
    for at, (kind, call_id) in enumerate(events):
        if kind != "result":
            continue
        found = None
        if call_id is not None:
            for back in range(at - 1, -1, -1):
                if events[back] == ("call", call_id) and back not in taken:
                    found = back
                    break
        if found is not None:
            taken.add(found)
        answers.append(found)
    return answers


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["call", "result"]), st.sampled_from(["a", "b", "c", None])), max_size=40))
def test_pairing_agrees_with_a_scan_back_for_the_nearest_waiting_call(events):
    pairing: Pairing[int] = Pairing()
    answers: list[int | None] = []
    for at, (kind, call_id) in enumerate(events):
        if kind == "call":
            pairing.call(UNSET if call_id is None else call_id, at)
        else:
            answers.append(pairing.result(UNSET if call_id is None else call_id))
    assert answers == scanned(events)
    assert pairing.waiting() == sum(1 for kind, call_id in events if kind == "call" and call_id is not None) - \
        sum(1 for answer in answers if answer is not None)
