"""Patterns of the simple shapes run on Python's engine, and mean there what RE2 says they mean.

`linear_shape` names the patterns whose search by backtracking takes steps in proportion to the
text; `compile_search` runs those on Python's engine (a call into RE2 costs three times more). The
answers must be RE2's on every text, which `re2.search` gives here.
"""
from __future__ import annotations

import re

import pytest
import re2
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_invariants.match.linear_shape import linear_in_python
from agent_invariants.match.regex import compile_search

from support import examples

LINEAR = ["^A[0-9]+$", "^[a-z]+ [0-9]+$", "@competitor\\.", "^[^@]+@[^@]+$", "^\\d{3}-\\d{4}$", "^[\\w.]+$",
          "^ab?c$", "^a.*", "^$", "", "abc$", "^é+$", "^[a-c][x-z]{2,5}q?$", "^\\w+\\.$", "^x{3}x+$",
          "^.+\n$"]   # (the dot takes no line break)
NOT_LINEAR = [
    "^a*a*$",            # two stars that take the same letter
    "^(a+)+$",           # a group
    "^.*x$",             # the dot gives back an x
    "a+",                # not anchored, and repeated
    "a.c",               # not anchored, and not a plain literal
    "^[a-z]*[a-z]$",     # the star gives back the letter the last atom takes
    "^x?x$",             # the option gives back the x
    "^a?b*a$",           # through an optional atom: b* may be skipped, so a? meets the last a
    "^[[:alpha:]]+$",    # POSIX classes stay on RE2
    "^\\s+$",            # so do escapes beyond \\d and \\w
    "(?i)^a$",           # and flags
    "^a|b$",             # and alternation
    "^a+?$",             # and lazy repeats
    "^[]a]+$",           # and a class that starts with its bracket
    "^a{2}{3}$",         # and a repeat of a repeat
    "^\\w*_$",           # \w takes the underscore
    "^\\d+7$",           # \d takes the 7
    "^[^@]*a$",          # the negated class takes the a
    "^[a-c]+b$",         # the range takes the b
]


@pytest.mark.parametrize("pattern", LINEAR)
def test_a_simple_shape_is_linear(pattern: str) -> None:
    assert linear_in_python(pattern) is True


@pytest.mark.parametrize("pattern", NOT_LINEAR)
def test_any_other_pattern_is_left_to_re2(pattern: str) -> None:
    assert linear_in_python(pattern) is False


def test_a_linear_shape_runs_on_pythons_engine_and_the_rest_on_re2() -> None:
    assert isinstance(getattr(compile_search("^A[0-9]+$"), "__self__", None), re.Pattern)
    assert not isinstance(getattr(compile_search("^a*a*$"), "__self__", None), re.Pattern)


_ALPHABET = "ab1 @-.é_\n"
_ATOMS = st.one_of(
    st.sampled_from(["a", "b", "1", " ", "@", "é", "\\.", "\\-", "\\@", ".", "\\d", "\\w"]),
    st.builds(lambda negated, items: f"[{'^' if negated else ''}{''.join(items)}]", st.booleans(),
              st.lists(st.sampled_from(["a", "b", "a-c", "0-9", "é", "\\d", "\\w", "\\.", "@", " "]),
                       min_size=1, max_size=3)),
)
_REPEATS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,}", "{0,2}", "{1,3}"])


@st.composite
def _patterns(draw: st.DrawFn) -> str:
    body = "".join(draw(_ATOMS) + draw(_REPEATS) for _ in range(draw(st.integers(0, 5))))
    return ("^" if draw(st.booleans()) else "") + body + ("$" if draw(st.booleans()) else "")


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(_patterns(), st.lists(st.text(_ALPHABET, max_size=12), min_size=1, max_size=4))
@example("^[^@]+@[^@]+$", ["a@b", "a@@b", "@b", "a\n@b"])
@example("^[\\w.]+$", ["a.b_1", "a-b", "é"])
@example("^.+$", ["a\n", "\n", "é"])
def test_every_pattern_finds_what_re2_finds(pattern: str, texts: list[str]) -> None:
    search = compile_search(pattern)
    for text in texts:
        assert (search(text) is not None) is (re2.search(pattern, text) is not None), (pattern, text)
