"""The Unicode classes `$regex` uses without the re2 extra are RE2's own (spec v2 §10 point 10).

Without google-re2, `\\p{Greek}` and `\\pL` are spelt out as ranges of code points, from the table in
`agent_invariants/match/unicode_tables.py`. It was written from RE2 itself, so a class holds the same
code points on either engine: Python's own tables are of another Unicode version, and hold the unassigned
code points in `\\pC`, which RE2's `C` does not. This test asks the installed RE2 again. When a release
of google-re2 brings a new Unicode version, it fails: write the table anew with

    .venv/bin/python tests/test_unicode_tables.py > agent_invariants/match/unicode_tables.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_invariants.match import unicode_tables

CATEGORIES = ("C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N", "Nd", "Nl",
              "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl", "Zp", "Zs")
SURROGATES = (0xD800, 0xDFFF)


def _re2_names() -> list[str]:
    """Every class name RE2 takes in `\\p{...}` but `Any`: the general categories, and the scripts
    (read from the strings of RE2's own library, each then tried)."""
    import re2

    library = next(Path(re2.__file__).parent.glob("_re2*"))
    words = set()
    for word in library.read_bytes().split(b"\0"):
        if 3 <= len(word) <= 40 and word[:1].isupper() and word.replace(b"_", b"").isalpha():
            words.add(word.decode("ascii"))
    options = re2.Options()
    options.log_errors = False
    scripts = []
    for word in sorted(words - {"Any"}):
        try:
            re2.compile(f"\\p{{{word}}}", options=options)
        except re2.error:
            continue
        scripts.append(word)
    return [*CATEGORIES, *scripts]


def re2_tables() -> dict[str, str]:
    """Each class as RE2 holds it, written as `unicode_tables` stores it. RE2 searches UTF-8, where
    no surrogate can be: the surrogates are `Cs` (and so `C`), as RE2's own table has them."""
    import re2

    options = re2.Options()
    options.log_errors = False
    texts = [(first, "".join(map(chr, range(first, last + 1))))
             for first, last in ((0, SURROGATES[0] - 1), (SURROGATES[1] + 1, 0x10FFFF))]
    tables = {}
    for name in _re2_names():
        search = re2.compile(f"\\p{{{name}}}+", options=options)
        found: list[tuple[int, int]] = []
        for first, text in texts:
            found += [(first + match.start(), first + match.end() - 1) for match in search.finditer(text)]
        if name in ("C", "Cs"):
            found = sorted([*found, SURROGATES])
        tables[name] = ",".join(f"{a:x}" if a == b else f"{a:x}-{b:x}" for a, b in found)
    return tables


def module_text(tables: dict[str, str]) -> str:
    """The module `unicode_tables` with these tables."""
    source = Path(unicode_tables.__file__).read_text(encoding="utf-8")
    head = source[:source.index("TABLES: dict[str, str] = {")]
    lines = [f"    {name!r}: {ranges!r}," for name, ranges in tables.items()]
    return head + "TABLES: dict[str, str] = {\n" + "\n".join(lines) + "\n}\n"


def test_the_tables_are_re2s() -> None:
    pytest.importorskip("re2")
    assert re2_tables() == unicode_tables.TABLES, (
        "RE2's Unicode classes changed: write them with "
        "`.venv/bin/python tests/test_unicode_tables.py > agent_invariants/match/unicode_tables.py`")


def test_a_class_reads_back_as_ranges_in_order() -> None:
    assert unicode_tables.ranges("Lt") == ((0x1C5, 0x1C5), (0x1C8, 0x1C8), (0x1CB, 0x1CB), (0x1F2, 0x1F2),
                                           (0x1F88, 0x1F8F), (0x1F98, 0x1F9F), (0x1FA8, 0x1FAF), (0x1FBC, 0x1FBC),
                                           (0x1FCC, 0x1FCC), (0x1FFC, 0x1FFC))
    assert unicode_tables.ranges("Greek")[:2] == ((0x370, 0x373), (0x375, 0x377))
    assert unicode_tables.ranges("Klingon") is None


if __name__ == "__main__":
    sys.stdout.write(module_text(re2_tables()))
