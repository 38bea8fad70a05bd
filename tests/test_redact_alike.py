"""`--redact` remembers what a string gave while nothing new is learnt, so that an array of
100,000 alike strings is redacted once: the answers must be those of redacting every string anew."""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_invariants.record import redact
from agent_invariants.record.redact import Redactor

from support import examples

PIECES = ["token=", "token: ", "--token ", '"token": "', "VAL1", "VAL2", "a b", " ", "=", "note ", "k=1", '"', "\n",
          '{"token": "VAL3", "x": "token=', '"}', "["]
texts = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)
keys = st.sampled_from(["token", "x"])
values = st.recursive(texts | st.integers(0, 3),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=2),
                      max_leaves=8)


def redacted_each_anew(events: list[dict[str, Any]]) -> tuple[list[Any], set[str]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact, "_ALIKE_KEPT", 0)
        return redacted(events)


def redacted(events: list[dict[str, Any]]) -> tuple[list[Any], set[str]]:
    redactor = Redactor(["token"])
    shown = [redactor.event(event, shorter=shorter) for event in events for shorter in range(4)]
    return shown, redactor.secrets


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.lists(values, min_size=1, max_size=8), min_size=1, max_size=4))
@example([["VAL1--token token=token=token=token="], ["token=", "token=VAL1", "VAL1--token token=token=token=token="]])
def test_strings_redacted_again_give_what_redacting_them_anew_gives(arrays: list[list[Any]]) -> None:
    """Events whose args repeat strings while values are learnt between them (`token=VAL1` teaches
    `VAL1`, which a later `token=a VAL1` then holds), each redacted at every step of shortening."""
    events = [{"seq": seq, "type": "tool.call", "tool": "t", "args": {"v": array, "w": array[::-1]}}
              for seq, array in enumerate(arrays, 1)]
    assert redacted(events) == redacted_each_anew(events)


def test_an_array_of_alike_strings_is_redacted_as_each_alone() -> None:
    array = ["k=1", "token=VAL1 x", "token=VAL1 x", "VAL1", *["token=VAL1 x"] * 10_000, "token=VAL2", "token=VAL1 x"]
    shown, secrets = redacted([{"seq": 1, "type": "tool.call", "tool": "t", "args": {"v": array}}])
    assert (shown, secrets) == redacted_each_anew([{"seq": 1, "type": "tool.call", "tool": "t", "args": {"v": array}}])
    assert shown[0]["args"]["v"][:4] == ["k=1", "token=[redacted] x", "token=[redacted] x", "[redacted]"]
    assert {"VAL1", "VAL2"} <= secrets
