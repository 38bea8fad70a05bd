"""The quick yes: a compiled tree's test that a value surely matches, for the common case.

Most calls of a healthy agent match their rules. `tree.evaluate` walks the tree and builds the
report of what does not match, with JSON Pointers, as it goes: for a value that matches, all that
work is thrown away. `quick(node)` turns the tree once into nested functions that only answer
"matches", and `evaluate` runs only when the answer is no, to say why. Where only the answer
counts (a matcher's `args`, and `where`, `where_result` and `find` in references) `quick` is the
only judge, so the two must give the same answer on every value: tests/test_match_quick.py holds
them to it on every operator and on random trees.

    holds = quick(compile_tree({"order": {"$regex": "^A[0-9]+$"}}))
    holds({"order": "A9"}, resolve)     # True
    holds({"order": "B9"}, resolve)     # False: evaluate() will say why

False never means more than "not surely": an unresolved reference is a no here, too.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from agent_invariants.match.budget import charging, spend
from agent_invariants.match.equality import as_double, json_equal
from agent_invariants.match.tree import (
    ABSENT,
    COMPARISONS,
    Node,
    Reference,
    Resolve,
    compares,
    distinct,
    holds_equal,
    holds_in,
    is_number,
    tree_size,
)

__all__ = ("Holds", "quick")

Holds = Callable[[Any, Resolve], bool]
"""A compiled test: (value, or ABSENT for a missing key; the subject's resolver) -> surely matches."""

def quick(node: Node, *, exact: bool = False, ignore: Sequence[str] = ()) -> Holds:
    """The test of `node` (with `exact`, key sets must be equal at every level, but for the
    top-level keys in `ignore`)."""
    return _quick(node, exact, frozenset(ignore))


def _quick(node: Node, exact: bool, ignore: frozenset[str]) -> Holds:
    if node.kind == "reference":
        return _reference(node.value)
    if node.kind == "ops":
        return _all([_operator(name, operand, exact) for name, operand in node.value.items()])
    value = node.value
    if isinstance(value, dict):
        return _object(value, exact, ignore)
    if isinstance(value, list):
        return _array([_quick(child, exact, frozenset()) for child in value])
    return _scalar(value)


def _scalar(expected: Any) -> Holds:
    if isinstance(expected, str):
        return lambda actual, resolve: actual.__class__ is str and actual == expected
    if expected is None or isinstance(expected, bool):
        return lambda actual, resolve: actual is expected
    if is_number(expected):
        number = as_double(expected)
        return lambda actual, resolve: is_number(actual) and as_double(actual) == number
    return lambda actual, resolve: actual is not ABSENT and json_equal(actual, expected)


def _object(children: dict[str, Node], exact: bool, ignore: frozenset[str]) -> Holds:
    # A member that is one `$regex` (an id's shape, the usual check) is searched here, without a
    # call of its own; every other member has its test. (The tests are pure: order is free.)
    patterns = [(key, child.value["$regex"]) for key, child in children.items() if _regex_only(child)]
    tests = [(key, _quick(child, exact, frozenset())) for key, child in children.items() if not _regex_only(child)]
    allowed = frozenset(children) | ignore

    def holds(actual: Any, resolve: Resolve) -> bool:
        if actual.__class__ is not dict:
            return False
        for key, search in patterns:
            value = actual.get(key)   # (None when absent: no string either)
            if value.__class__ is not str or search(value) is None:
                return False
        for key, test in tests:
            if not test(actual.get(key, ABSENT), resolve):
                return False
        return not exact or allowed.issuperset(actual)   # (its keys, in C: no generator per value)

    return holds


def _regex_only(node: Node) -> bool:
    """Whether `node` is one `$regex` and nothing else."""
    return node.kind == "ops" and len(node.value) == 1 and "$regex" in node.value


def _array(tests: list[Holds]) -> Holds:
    size = len(tests)

    def holds(actual: Any, resolve: Resolve) -> bool:
        return (actual.__class__ is list and len(actual) == size
                and all(test(item, resolve) for test, item in zip(tests, actual, strict=True)))

    return holds


def _all(tests: list[Holds]) -> Holds:
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:   # a range (`$gt` and `$lte`): the usual case, without a generator
        first, second = tests
        return lambda actual, resolve: first(actual, resolve) and second(actual, resolve)
    return lambda actual, resolve: all(test(actual, resolve) for test in tests)


def _reference(reference: Reference) -> Holds:
    def holds(actual: Any, resolve: Resolve) -> bool:
        if actual is ABSENT:
            return False
        found = resolve(reference)
        return not isinstance(found, str) and holds_equal(actual, found)

    return holds


def _operator(name: str, operand: Any, exact: bool) -> Holds:
    if name == "$exists":
        return lambda actual, resolve: (actual is not ABSENT) is operand
    if name == "$any_of":
        branches = [_quick(branch, exact, frozenset()) for branch in operand]
        return lambda actual, resolve: any(branch(actual, resolve) for branch in branches)
    if name == "$regex":
        return lambda actual, resolve: actual.__class__ is str and operand(actual) is not None
    if name == "$literal":
        return lambda actual, resolve: actual is not ABSENT and json_equal(actual, operand)
    if name in COMPARISONS:
        return _comparison(COMPARISONS[name], operand)
    if name == "$in":
        return _in(operand)
    return _contains(operand, _quick(operand, exact, frozenset()))


def _contains(operand: Node, item: Holds) -> Holds:
    """`$contains`: an item of the array holds. Compiled under a budget (`budget.charging`: the
    MCP server's bound on a check), each item tried is as many steps as the tree has nodes,
    counted `_ITEMS` at a time; compiled outside one, nothing is counted."""
    if not charging():
        return lambda actual, resolve: actual.__class__ is list and any(item(element, resolve) for element in actual)
    size = tree_size(operand)

    def holds(actual: Any, resolve: Resolve) -> bool:
        if actual.__class__ is not list:
            return False
        if len(actual) <= _ITEMS:
            spend(len(actual) * size)
            return any(item(element, resolve) for element in actual)
        for start in range(0, len(actual), _ITEMS):
            spend(min(_ITEMS, len(actual) - start) * size)
            if any(item(element, resolve) for element in actual[start:start + _ITEMS]):
                return True
        return False

    return holds


_ITEMS = 16
"""The items of an array a `$contains` counts as tried before it tries them."""


def _in_candidates(reference: Reference) -> Holds:
    """`$in` a reference: equal to a candidate, or to an element of an array candidate."""
    def holds(actual: Any, resolve: Resolve) -> bool:
        if actual is ABSENT:
            return False
        found = resolve(reference)
        return not isinstance(found, str) and holds_in(actual, found)

    return holds


def _comparison(compare: Callable[[float, float], bool], operand: Any) -> Holds:
    if not isinstance(operand, Node):
        bound = as_double(operand)   # finite: the loader refuses any other

        def holds_bound(actual: Any, resolve: Resolve) -> bool:   # `compares`, the bound's double read once
            if not is_number(actual):
                return False
            value = as_double(actual)
            return math.isfinite(value) and compare(value, bound)

        return holds_bound
    reference = operand.value

    def holds(actual: Any, resolve: Resolve) -> bool:
        if not is_number(actual):
            return False
        found = resolve(reference)
        if isinstance(found, str):
            return False
        bounds = found if len(found) == 1 else distinct(found, 2)   # one distinct candidate, or ambiguous:
        return len(bounds) == 1 and is_number(bounds[0]) and compares(compare, actual, bounds[0])   # two tell

    return holds


def _in(operand: Any) -> Holds:
    if isinstance(operand, Node):
        return _in_candidates(operand.value)
    texts = frozenset(value for value in operand if isinstance(value, str))
    numbers = frozenset(as_double(value) for value in operand if is_number(value))
    others = [value for value in operand if not isinstance(value, str) and not is_number(value)]

    def holds(actual: Any, resolve: Resolve) -> bool:
        kind = actual.__class__
        if kind is str:
            return actual in texts
        if kind is int or kind is float:   # is_number, inlined: a value is tested against `$in` on every call
            return as_double(actual) in numbers
        return actual is not ABSENT and any(json_equal(actual, value) for value in others)

    return holds
