"""Glob matching against a model written from spec/v1-semantics.md §2.7 (and difference 17): `*`
takes any run of UTF-16 code units but line terminators, `?` exactly one such unit, everything
else is literal, and the pattern matches the whole subject."""
from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.globs import compile_glob, glob_matches

from support import examples

LINE_TERMINATORS = {"\n", "\r", "\u2028", "\u2029"}


def units(text: str) -> list[str]:
    """The UTF-16 code units of `text`, one string each."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[at:at + 2].decode("utf-16-le", "surrogatepass") for at in range(0, len(data), 2)]


def model(pattern: str, subject: str) -> bool:
    p, s = units(pattern), units(subject)

    @cache
    def match(i: int, j: int) -> bool:
        if i == len(p):
            return j == len(s)
        if p[i] == "*":
            return match(i + 1, j) or (j < len(s) and s[j] not in LINE_TERMINATORS and match(i, j + 1))
        if j == len(s):
            return False
        if p[i] == "?":
            return s[j] not in LINE_TERMINATORS and match(i + 1, j + 1)
        return p[i] == s[j] and match(i + 1, j + 1)

    return match(0, 0)


ALPHABET = ["a", "b", ".", "é", "😀", "\n", "\u2028", "\r"]
patterns = st.lists(st.sampled_from([*ALPHABET, "*", "*", "?"]), min_size=1, max_size=7).map("".join)
subjects = st.lists(st.sampled_from(ALPHABET), max_size=8).map("".join)


@settings(max_examples=examples(500), deadline=None)
@given(pattern=patterns, subject=subjects)
def test_a_glob_matches_exactly_what_the_model_says(pattern, subject):
    assert compile_glob(pattern)(subject) is model(pattern, subject)


@settings(max_examples=examples(500), deadline=None)
@given(pattern=st.lists(st.sampled_from(["a", "b", "é", "😀", "\n", "\u2028", "*", "**", "?", "??", "*?*", "ab?"]),
                        min_size=1, max_size=12).map("".join),
       subject=st.lists(st.sampled_from(["a", "b", "é", "😀", "\n", "\u2028", "ab", "ba"]), max_size=14).map("".join))
def test_runs_of_wildcards_and_pieces_mixing_literals_and_question_marks_match_as_the_model_says(pattern, subject):
    """Runs of wildcards holding a star are matched as their `?`s and one star, and pieces that mix
    literals and `?` by their literal runs: both must keep the model's answers."""
    assert compile_glob(pattern)(subject) is model(pattern, subject)


@given(prefix=st.lists(st.sampled_from(ALPHABET), max_size=4).map("".join), subject=subjects)
def test_a_literal_prefix_and_one_trailing_star_match_as_the_model_says(prefix, subject):
    assert compile_glob(prefix + "*")(subject) is model(prefix + "*", subject)


def test_a_trailing_star_takes_no_line_terminator_after_the_prefix():
    assert glob_matches("payments.*", "payments.refund")
    assert glob_matches("payments.*", "payments.")
    assert not glob_matches("payments.*", "payments.re\nfund")
    assert not glob_matches("payments.*", "payments.re\u2028fund")
    assert not glob_matches("payments.*", "payment")
    assert glob_matches("a\n*", "a\nb")   # a line terminator in the pattern is literal
    assert not glob_matches("*", "x\ry")
    assert glob_matches("é*", "éa") and glob_matches("?*", "😀") and not glob_matches("?", "😀")
