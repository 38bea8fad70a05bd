"""Hypothesis building blocks shared by the property tests and the rule-model tests.

Each test module keeps its own pools of tools, types and globs (the model tests use harder ones);
what is the same everywhere lives here."""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

VERDICTS = ["satisfied", "violated", "unknown", "retracted"]
EVIDENCE = ["externally_observed", "configured_verifier", "manual_attestation", "self_attestation"]

evidence_lists = st.lists(st.sampled_from(EVIDENCE), min_size=1, max_size=4, unique=True)


def optional(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """A value or None (None meaning: leave the key out)."""
    return st.none() | strategy


def drop_none(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if value is not None}


@st.composite
def require_event_fields(draw, matchers: st.SearchStrategy) -> dict[str, Any]:
    """The options of a require_event rule: a matcher, and a valid min/max (either may be absent)."""
    fields: dict[str, Any] = {"match": draw(matchers)}
    low = draw(optional(st.integers(0, 3)))
    if low is not None:
        fields["min"] = low
    if draw(st.booleans()):
        fields["max"] = (1 if low is None else low) + draw(st.integers(0, 2))
    return fields
