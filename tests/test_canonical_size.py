"""result_size's fast path: a JSON text written plainly is measured without decoding it, and must
weigh exactly what its canonical form (RFC 8785) weighs; any other text is left to the decoder."""
from __future__ import annotations

import json

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.match.canonical import canonical, plain_size

from support import examples

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=4), inner, max_size=4)),
                      max_leaves=12)


def canonical_bytes(text: bytes) -> int:
    return len(canonical(msgspec.json.decode(text)).encode("utf-8", "surrogatepass"))


@settings(max_examples=examples(300), deadline=None)
@given(values, st.sampled_from([(",", ":"), (", ", ": ")]), st.booleans())
def test_a_plain_text_weighs_what_its_canonical_form_weighs(value, separators, ascii_only):
    text = json.dumps(value, separators=separators, ensure_ascii=ascii_only).encode()
    size = plain_size(text)
    if size is not None:
        assert size == canonical_bytes(text)


def test_what_is_not_plain_is_left_to_the_decoder():
    for text in (b'{"a": 1}', b'{"a":1.0}', b"1E5", b"-0", b"12345678901234567", b'"\\u00e9"', b"[1,\n2]"):
        assert plain_size(text) is None, text
    for text, size in ((b'{"hits":["a","b"]}', 18), (b'{"e":true,"f":false,"n":null}', 29),
                       (b'"d\xc3\xa9j\xc3\xa0"', 8), (b"[-5,999999999999999]", 20)):
        assert plain_size(text) == size == canonical_bytes(text), text


def test_evidence_cut_again_past_the_total_counts_what_was_left_out_before():
    """Past `EVIDENCE_TOTAL`, evidence already cut is cut shorter: its marks of what it left out
    (an array's `"… 515 more"`, an object's `"…": "3 more keys"`) count in the new marks."""
    from agent_invariants.match.canonical import EVIDENCE_TOTAL, evidence_value, evidence_within_total
    from agent_invariants.report import Violation

    wide = {"list": list(range(5000)), "object": {f"k{n:05d}": [n] * 50 for n in range(600)}}
    once = evidence_value(wide)
    assert once["list"][-1].startswith("… ") and once["object"]["…"].endswith(" more keys")
    violations = [Violation(rule_id="r", rule_kind="tool_args", severity="error", message="m", evidence=once)
                  for _ in range(EVIDENCE_TOTAL // 10_000 + 2)]
    evidence_within_total(violations, lambda kind: True)
    assert violations[0].evidence == once
    last = violations[-1].evidence
    assert last != once
    kept = [item for item in last["list"] if isinstance(item, int)]
    assert kept == list(range(len(kept))) and last["list"][-1] == f"… {5000 - len(kept)} more"
    members = [key for key in last["object"] if key != "…"]
    assert last["object"]["…"] == f"{600 - len(members)} more keys"


wide_values = st.recursive(
    st.one_of(scalars, st.text(min_size=150, max_size=260)),
    lambda inner: st.one_of(st.lists(inner, max_size=6),
                            st.dictionaries(st.text(max_size=3), inner, max_size=6),
                            st.lists(st.integers(-(10**9), 10**9), min_size=40, max_size=400)),
    max_leaves=40)


@settings(max_examples=examples(150), deadline=None)
@given(wide_values, st.booleans())
def test_the_evidence_a_fingerprint_hashes_is_the_same_whether_the_total_cut_it_or_not(value, version_2):
    """SARIF fingerprints hash `evidence_cut` of a violation's evidence: of evidence the report's
    total left whole and of the same evidence it cut, the key must be one. A version-2 kind's
    evidence is in canonical form (`evidence_value`), and its cut too; a version-1 kind's is the
    Node tool's, and its cut keeps the order of its keys. Cutting again changes nothing."""
    from agent_invariants.match.canonical import (
        EVIDENCE_TOTAL,
        EVIDENCE_TOTAL_V1,
        evidence_cut,
        evidence_value,
        evidence_within_total,
    )
    from agent_invariants.report import Violation

    whole = evidence_value(value) if version_2 else {"tool": "t", "value": value, "allowed": ["a", "b"]}
    kind = "tool_args" if version_2 else "allow_tools"
    filler = ["x" * (EVIDENCE_TOTAL if version_2 else EVIDENCE_TOTAL_V1)]   # more than the kind's total
    violations = [Violation(rule_id="r", rule_kind=kind, severity="error", message="m", evidence=evidence)
                  for evidence in (filler, whole)]
    evidence_within_total(violations, lambda kind: kind == "tool_args")
    cut = violations[1].evidence
    assert evidence_cut(cut) == evidence_cut(whole)
    assert evidence_cut(cut, keep_order=not version_2) == cut
    if version_2:
        assert evidence_cut(whole) == cut
    else:
        assert [key for key in cut if key != "…"] == [key for key in whole if key in cut]   # in their order


numbers = st.one_of(st.integers(-(2**60), 2**60), st.floats(allow_nan=False, allow_infinity=False),
                    st.builds(lambda mantissa, exponent: mantissa * 10.0 ** exponent,
                              st.floats(-10, 10, allow_nan=False), st.integers(-8, 22)))


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(numbers, max_size=20))
def test_evidence_writes_every_number_as_its_canonical_form_does(items):
    """Evidence holds numbers as JavaScript writes them (`1e+21`, `1e-7`, `100` for 100.0, 2^60
    as the nearest double), the way canonical JSON spells them; most are kept as they are."""
    from agent_invariants._js import js_number_hook
    from agent_invariants.match.canonical import evidence_value

    assert msgspec.json.encode(evidence_value(items), enc_hook=js_number_hook).decode() == canonical(items)
