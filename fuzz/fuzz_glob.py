#!/usr/bin/env python3
"""Fuzz target: glob matching against an independent model of contract v1's globs.

A glob is turned by the reference into an anchored JavaScript regex without flags: `*` is `.*`,
`?` is `.`, everything else literal. So `*` and `?` never match a line terminator (`\\n`, `\\r`,
U+2028, U+2029) and `?` matches one UTF-16 code unit (an emoji needs `??`). The model below is a
plain O(len(pattern) x len(subject)) dynamic programme over UTF-16 code units, written from the
glob semantics of contract v1 (see agent_invariants/globs.py docstring), not from its code.

The input bytes are split into a pattern and a subject over a small alphabet (letters, `*`, `?`,
line terminators, an astral character, regex metacharacters) so that matches are frequent.
Any disagreement, or any exception, is a finding.

Run:  python fuzz/fuzz_glob.py fuzz/work/glob -max_total_time=600 -rss_limit_mb=2048
"""
from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fuzzcommon  # noqa: E402

with atheris.instrument_imports():
    from agent_invariants.globs import compile_glob, glob_matches

ALPHABET = ["a", "b", "*", "?", "\n", "\u2028", "\r", "\U0001F600", "\ud83d", "\ude00", ".", "\\", "é", "a*", "*?",
            "ab", "$", "(", "[", " "]
LINE_TERMINATORS = set("\n\r\u2028\u2029")


def _units(text: str) -> list[str]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [chr(data[i] | data[i + 1] << 8) for i in range(0, len(data), 2)]


def model_match(pattern: str, subject: str) -> bool:
    """Does the whole `subject` match `pattern`? (reference semantics, dynamic programming)"""
    p, s = _units(pattern), _units(subject)
    # reach[j]: the first i pattern units can match the first j subject units
    reach = [True] + [False] * len(s)
    for token in p:
        nxt = [False] * (len(s) + 1)
        if token == "*":
            for j in range(len(s) + 1):
                nxt[j] = reach[j] or (j > 0 and nxt[j - 1] and s[j - 1] not in LINE_TERMINATORS)
        elif token == "?":
            for j in range(1, len(s) + 1):
                nxt[j] = reach[j - 1] and s[j - 1] not in LINE_TERMINATORS
        else:
            for j in range(1, len(s) + 1):
                nxt[j] = reach[j - 1] and s[j - 1] == token
        reach = nxt
    return reach[len(s)]


def _text(fdp: atheris.FuzzedDataProvider, count: int) -> str:
    return "".join(ALPHABET[fdp.ConsumeIntInRange(0, len(ALPHABET) - 1)] for _ in range(count))


def TestOneInput(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    pattern = _text(fdp, fdp.ConsumeIntInRange(1, 12))
    subjects = [_text(fdp, fdp.ConsumeIntInRange(0, 16)) for _ in range(3)]
    try:
        matcher = compile_glob(pattern)
        for subject in subjects:
            got = matcher(subject)
            if got != glob_matches(pattern, subject):
                raise _fuzzcommon.OracleMismatch("glob-cache", f"{pattern!r} ~ {subject!r}")
            want = model_match(pattern, subject)
            if got != want:
                raise _fuzzcommon.OracleMismatch(
                    "glob", f"{pattern!r} ~ {subject!r}: globs.py says {got}, the model says {want}")
    except Exception as exc:  # noqa: BLE001
        _fuzzcommon.finding(exc, data, "glob")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
