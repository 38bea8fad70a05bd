"""The value layer of the version-2 match grammar: paths (§10 point 13), JSON equality (§2) and the
RFC 8785 canonical form, against the spec's words and the RFC's own examples."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.match.canonical import canonical
from agent_invariants.match.equality import json_equal
from agent_invariants.match.paths import NOT_FOUND, find, parse_path, pointer

from support import examples

DOCUMENT = {"items": [{"sku": "A1", "qty": 2}, {"sku": None}], "0": "key zero", "a.b": 1, "": "empty",
            "a/b": {"~": True}, "nested": {"0": ["x", "y"]}}


@pytest.mark.parametrize(("path", "expected"), [
    ("items.0.sku", "A1"),
    ("items.1.sku", None),                 # null is found
    ("items.1.qty", NOT_FOUND),
    ("items.2", NOT_FOUND),                # past the end
    ("items.01", NOT_FOUND),               # not a canonical index
    ("items.-1", NOT_FOUND),
    ("items.sku", NOT_FOUND),              # a name on an array
    ("0", "key zero"),                     # a number on an object is a key
    ("nested.0.1", "y"),
    ("items.0.sku.0", NOT_FOUND),          # nothing inside a string
    ("/items/0/qty", 2),
    ("/a.b", 1),
    ("/", "empty"),                        # the key ""
    ("/a~1b/~0", True),
    ("/items/1/sku", None),
    ("/items/00", NOT_FOUND),
])
def test_a_path_finds_what_point_13_says(path, expected):
    found = find(DOCUMENT, parse_path(path))
    assert (found, type(found)) == (expected, type(expected))


@pytest.mark.parametrize(("path", "reason"), [
    ("", "cannot be empty"),
    ("a..b", "empty segment"),
    ("a.", "empty segment"),
    (".a", "empty segment"),
    ("/a~2", "~ must be followed by 0 or 1"),
    ("/a~", "~ must be followed by 0 or 1"),
])
def test_what_is_not_a_path_says_why(path, reason):
    with pytest.raises(ValueError, match=reason):
        parse_path(path)


def test_pointers_name_places_with_escapes():
    assert pointer(()) == ""
    assert pointer(("args", "a/b", "~x", 0)) == "/args/a~1b/~0x/0"
    assert parse_path(pointer(("a/b", "~", ""))) == ("a/b", "~", "")


@pytest.mark.parametrize(("left", "right", "equal"), [
    (True, 1, False), (False, 0, False), (1, 1.0, True), ("1", 1, False), (None, None, True),
    (None, False, False), (0, -0.0, True), ([1, 2], [1, 2], True), ([1, 2], [2, 1], False),
    ([1], [1, 1], False), ({"a": 1}, {"a": 1.0}, True), ({"a": 1}, {"a": 1, "b": 2}, False),
    ({"a": {"b": [True]}}, {"a": {"b": [1]}}, False), ({}, [], False), ("", None, False),
    (2**53 + 1, 2**53, True),              # as doubles, the way JavaScript holds them
    (2**53 - 1, 2**53 - 2, False), (10**400, 10**400 + 1, True),
])
def test_equality_is_strict_about_types_and_structural(left, right, equal):
    assert json_equal(left, right) is equal
    assert json_equal(right, left) is equal


def test_the_rfc_8785_example_is_canonical():
    """RFC 8785, section 3.2.2: numbers, escapes and literals, keys sorted."""
    text = ('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
            r' "string": "\u20ac$\u000F\u000aA\u0027\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}')
    assert canonical(json.loads(text)) == (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')


def test_keys_sort_by_utf16_code_units():
    """RFC 8785, section 3.2.3: the emoji (D83D DE00) sorts before U+FB33."""
    keys = ["\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6"]
    out = canonical({key: 0 for key in keys})
    assert list(json.loads(out)) == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


@pytest.mark.parametrize(("number", "text"), [
    (0, "0"), (-0.0, "0"), (1.0, "1"), (-1.5, "-1.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
    (1e-7, "1e-7"), (0.000001, "0.000001"), (5e-324, "5e-324"), (2**53 + 1, "9007199254740992"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
])
def test_numbers_print_as_javascript_prints_them(number, text):
    assert canonical(number) == text


def test_what_has_no_canonical_form_says_so():
    for bad in (float("nan"), float("inf"), 10**400):
        with pytest.raises(ValueError):
            canonical(bad)
    assert canonical("\x00\x1f\x7f\u2028") == '"\\u0000\\u001f\x7f\u2028"'
    assert canonical("\ud800") == '"\\ud800"'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**60, 2**60) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=examples(300), deadline=None)
@given(value=json_values)
def test_the_canonical_form_reads_back_as_the_same_value_and_is_a_fixed_point(value):
    text = canonical(value)
    again = json.loads(text)
    assert json_equal(again, value)
    assert canonical(again) == text


bmp_text = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)))
plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53 + 1, 2**53 - 1) | bmp_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(bmp_text, inner, max_size=4),
    max_leaves=20)


@settings(max_examples=examples(150), deadline=None)
@given(value=plain_values)
def test_without_floats_or_astral_keys_the_canonical_form_is_pythons_compact_sorted_json(value):
    """An independent spelling: for integers in the safe range and keys whose code-point order is
    their UTF-16 order, Python's json module writes the same text (lower-case \\u escapes, the five
    short ones, nothing else escaped with ensure_ascii off)."""
    assert canonical(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
