"""Match trees: what a version-2 rule expects of a JSON value (spec §2; §10 points 9-11).

A node is one of:

- a **literal**: an object matches as a subset (each of its keys must be present and match; with
  `exact`, the key sets must be equal too, at every level); an array needs the same length and
  matches by position; a scalar must be equal (`equality.json_equal`: `true` is not `1`);
- an **operator object**: only `$` keys, all of which must hold (`$regex`, `$in`, `$gt`, `$gte`,
  `$lt`, `$lte`, `$exists`, `$any_of`, `$contains`, `$literal`);
- a **reference**, an object with one key `$arg`, `$from_output` or `$from_result`: its value is
  a set of candidates, which the caller finds (`evaluate`'s `resolve`).

A key absent from the value is a mismatch, unless its node is `{"$exists": false}`; null is a value
like any other. A node whose reference finds no candidate (`no_candidates`), or more than one
distinct where one is needed (`ambiguous`), is *unresolved*: reported as such, never also as a
mismatch. Mistakes in a tree (an unknown or misplaced `$` key, `$` keys mixed with others, a bad
operand, a reference where the rule allows none, a tree over 32 levels or 10,000 nodes) are load
errors, `MatchError`, naming the JSON path of the mistake in the contract.

`$from_result` references nest at most four deep; the steps by which they find candidates are
`match.references`. `$regex` patterns are compiled by `match.regex`.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from agent_invariants.errors import suggest
from agent_invariants.jsonpos import member
from agent_invariants.jsontext import value_count
from agent_invariants.match.budget import spend
from agent_invariants.match.canonical import canonical_key
from agent_invariants.match.equality import as_double, json_equal
from agent_invariants.match.paths import parse_path, pointer
from agent_invariants.match.regex import RegexError, compile_search
from agent_invariants.rules.fields import GLOB_LIMIT, FieldProblem, check_text
from agent_invariants.validation import json_type

__all__ = ("ABSENT", "COMPARISONS", "REFERENCES", "Candidates", "MatchError", "Node", "Outcome", "Reference",
           "compares", "compile_tree", "distinct", "evaluate", "holds_equal", "holds_in", "is_number",
           "no_references", "references_in", "tree_size")

REFERENCES = frozenset({"$arg", "$from_output", "$from_result"})
OPERATORS = frozenset({"$regex", "$in", "$gt", "$gte", "$lt", "$lte", "$exists", "$any_of", "$contains", "$literal"})
_KNOWN_KEYS = sorted(OPERATORS | REFERENCES)
MAX_DEPTH = 32
MAX_NODES = 10_000
MAX_IN = 1000
MAX_CANDIDATES_SHOWN = 20
MAX_HOPS = 4

class MatchError(ValueError):
    """A mistake in a match tree, at `path` (a JSON path into the contract)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class _NotAllowed(MatchError):
    """A reference where the tree's place takes none (`find` says why none goes there)."""


class Reference(NamedTuple):
    """A reference node: its name (`$arg`, ...), its operand as compiled, and as written."""

    name: str
    operand: Any
    written: dict[str, Any]


class Node(NamedTuple):
    """A compiled node: `literal` (the value as written, its children compiled), `ops` (operator
    name -> compiled operand) or `reference`."""

    kind: str
    value: Any
    written: Any


def tree_size(node: Node) -> int:
    """How many steps trying `node` on a value takes, at most, about: its nodes as written, a
    `$in` list one (a set's lookup)."""
    return value_count(node.written, whole="$in")


class Candidates(list):  # type: ignore[type-arg]
    """A reference's candidates, with the set of their equality keys (`canonical_key`) when it is
    kept up to date, so that membership is one lookup (None: compare one by one), and how many
    of them are arrays (whose elements `$in` takes instead). Kept with their keys, they also keep
    their first `MAX_CANDIDATES_SHOWN` distinct values (`shown`), which a mismatch lists: finding
    them again on every call that fails took calls × candidates."""

    __slots__ = ("_members", "_shown_members", "arrays", "keys", "shown")

    def __init__(self, values: list[Any] = (), keys: set[object] | None = None) -> None:  # type: ignore[assignment]
        super().__init__()
        self.keys = keys
        self.arrays = 0
        self.shown: list[Any] = []
        self._members: set[object] | None = None
        self._shown_members: list[Any] = []
        if keys is None:
            self.extend(values)
        else:
            for value in values:
                self.add(value)

    def add(self, value: Any) -> None:
        """Append a candidate, and its key (the set is kept)."""
        self.append(value)
        key = canonical_key(value)
        _first_distinct(self.keys, self.shown, key, value)   # type: ignore[arg-type]
        if value.__class__ is list:
            self.arrays += 1
        if self._members is not None:
            self._member(value, key)

    def members(self) -> set[object]:
        """The keys of what `$in` takes from candidates kept with their keys: each candidate that
        is not an array, and each element of those that are. Built when first asked, then kept
        up to date (comparing a value with every element took calls × elements)."""
        if self._members is None:
            self._members = set()
            for candidate in self:
                self._member(candidate, canonical_key(candidate))
        return self._members

    def shown_members(self) -> list[Any]:
        """The first `MAX_CANDIDATES_SHOWN` distinct values of those `members` holds the keys of."""
        self.members()
        return self._shown_members

    def _member(self, value: Any, key: object) -> None:
        """What `$in` takes from one candidate (its elements, for an array), into `members`."""
        members = self._members
        assert members is not None
        if value.__class__ is not list:
            _first_distinct(members, self._shown_members, key, value)
            return
        for element in value:
            _first_distinct(members, self._shown_members, canonical_key(element), element)


def _first_distinct(keys: set[object], shown: list[Any], key: object, value: Any) -> None:
    """Add `key` to `keys`; a value whose key is new joins `shown` while it holds fewer than
    `MAX_CANDIDATES_SHOWN` (the first distinct values, in the order they came)."""
    if key not in keys:
        keys.add(key)
        if len(shown) < MAX_CANDIDATES_SHOWN:
            shown.append(value)


def _keyed(found: list[Any]) -> list[Any]:
    """The candidates `$in` reads, kept with their keys when they are one array, the one last
    seen: a reference joined on `$arg` gives the same looked-up array call after call, whose
    elements each call compared its value with (8,000 calls against 8,000 items took about 45 s).
    The array is held (one, at any time), so `is` cannot mistake another for it; the pair is
    replaced at once, so two threads cannot mix theirs."""
    global _LAST_ARRAY
    if len(found) != 1 or found.__class__ is not list or found[0].__class__ is not list:
        return found
    array, keyed = _LAST_ARRAY
    if array is not found[0]:
        keyed = Candidates(found, keys=set())
        _LAST_ARRAY = (found[0], keyed)
    return keyed


_LAST_ARRAY: tuple[Any, list[Any]] = (None, [])
"""The lone array candidate `$in` read last, and it as candidates kept with their keys."""


def _keys_for_in(found: list[Any]) -> set[object] | None:
    """The equality keys `$in` may look a value up in, when the candidates are kept with their
    keys (`Candidates.members`, or their own keys when none is an array); else None."""
    found = _keyed(found)
    if found.__class__ is Candidates and found.keys is not None:
        return found.members() if found.arrays else found.keys
    return None


def holds_in(actual: Any, found: list[Any]) -> bool:
    """`$in` a reference (point 11): whether `actual` equals a candidate that is not an array, or
    an element of one that is; one lookup when the candidates are kept with their keys."""
    keys = _keys_for_in(found)
    if keys is not None:
        return canonical_key(actual) in keys
    return any(json_equal(actual, element) for candidate in found
               for element in (candidate if isinstance(candidate, list) else [candidate]))


def _shown_for_in(found: list[Any]) -> list[Any]:
    """The first `MAX_CANDIDATES_SHOWN` distinct values `$in` takes from the candidates (as
    `_keys_for_in`), which a mismatch lists: kept as they came when the candidates keep their keys."""
    found = _keyed(found)
    if found.__class__ is Candidates and found.keys is not None:
        return found.shown_members()[:]
    return distinct([element for candidate in found
                     for element in (candidate if isinstance(candidate, list) else [candidate])], MAX_CANDIDATES_SHOWN)


def _contributes(found: list[Any]) -> bool:
    """Whether `$in` takes anything from these candidates (not only empty arrays)."""
    keys = _keys_for_in(found)
    if keys is not None:
        return bool(keys)
    return any(not isinstance(candidate, list) or candidate for candidate in found)


def holds_equal(actual: Any, found: list[Any]) -> bool:
    """Whether `actual` equals some candidate (JSON equality), by key when the set is kept."""
    if found.__class__ is Candidates and found.keys is not None:   # (a class test: getattr of a list's
        return canonical_key(actual) in found.keys                  # missing attribute raises inside)
    if len(found) == 1:
        return json_equal(actual, found[0])   # the usual join: one candidate, no generator
    return any(json_equal(actual, candidate) for candidate in found)


class Outcome(NamedTuple):
    """What evaluating a tree found: mismatches `{pointer, expected, actual?}` and unresolved
    references `{pointer, reference, reason}`; the value matches when both are empty. `resolved`
    says, for a mismatch (by its place in the list) of an operator object whose operands hold
    references, what they resolved to (`$lte is 49.9`): the evidence shows the node as written,
    and a message without the value would not say why the value failed."""

    mismatches: list[dict[str, Any]]
    unresolved: list[dict[str, Any]]
    resolved: dict[int, list[tuple[str, Any]]]


Resolve = Callable[[Reference], "list[Any] | str"]
"""The caller's finder of candidates: a list of values, or the reason there are none to use."""


def no_references(reference: Reference) -> list[Any]:
    """The `Resolve` of a tree compiled without references (a matcher's `args`, `find`)."""
    raise AssertionError(f"{reference.name} in a tree compiled to hold no reference")


def compile_tree(tree: Any, path: str = "$", *, allowed: frozenset[str] = frozenset()) -> Node:
    """A node from a match tree as written; `allowed` are the reference names the rule accepts
    here. Raises MatchError."""
    counter = [0, 0]   # nodes so far; $from_result references open around the node being compiled
    return _compile(tree, path, allowed, 1, counter, as_key_value=False)


def _compile(tree: Any, path: str, allowed: frozenset[str], depth: int, counter: list[int], *,
             as_key_value: bool) -> Node:
    counter[0] += 1
    if counter[0] > MAX_NODES:
        raise MatchError(path, f"a match tree may hold at most {MAX_NODES} nodes")
    if depth > MAX_DEPTH:
        raise MatchError(path, f"a match tree may be at most {MAX_DEPTH} levels deep")
    if isinstance(tree, dict):
        odd = next((key for key in tree if not isinstance(key, str)), None)
        if odd is not None:
            raise MatchError(path, f"object keys are strings, got {odd!r} (quote it in YAML)")
        dollar = [key for key in tree if key.startswith("$")]
        if not dollar:
            return Node("literal", {key: _compile(value, _child(path, key), allowed, depth + 1, counter,
                                                  as_key_value=True) for key, value in tree.items()}, tree)
        if len(dollar) != len(tree):
            raise MatchError(path, "an object mixes $ keys with other keys; escape a literal $ key with $literal")
        references = [key for key in dollar if key in REFERENCES]
        if references:
            if len(tree) != 1:
                raise MatchError(_child(path, references[0]), "a reference stands alone in its object")
            return _reference(references[0], tree, path, allowed, depth, counter)
        return Node("ops", {key: _operator(key, value, _child(path, key), allowed, depth, counter, as_key_value)
                            for key, value in tree.items()}, tree)
    if isinstance(tree, list):
        return Node("literal", [_compile(item, f"{path}[{at}]", allowed, depth + 1, counter, as_key_value=False)
                                for at, item in enumerate(tree)], tree)
    return Node("literal", _json_value(tree, path), tree)


def _json_value(value: Any, path: str) -> Any:
    """`value` if it is JSON (YAML also has dates, bytes and sets, which no trace can hold)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if not all(isinstance(key, str) for key in item):
                raise MatchError(path, "object keys are strings (quote them in YAML)")
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif item is not None and not isinstance(item, (str, int, float)):
            raise MatchError(path, f"{type(item).__name__} is no JSON value (quote it, as a YAML date: \"2024-01-01\")")
    return value


def _operator(name: str, operand: Any, path: str, allowed: frozenset[str], depth: int, counter: list[int],
              as_key_value: bool) -> Any:
    if name not in OPERATORS:
        raise MatchError(path, f"unknown operator {name}{suggest(name, _KNOWN_KEYS)}")
    if name == "$regex":
        return _regex(operand, path)
    if name == "$literal":
        return _json_value(operand, path)
    if name == "$exists":
        if not as_key_value:
            raise MatchError(path, "$exists may only be the value of a key (or of a branch of its $any_of)")
        if not isinstance(operand, bool):
            raise MatchError(path, "$exists takes true or false")
        return operand
    if name in ("$gt", "$gte", "$lt", "$lte"):
        if _is_reference(operand):
            return _compile(operand, path, allowed, depth + 1, counter, as_key_value=False)
        if not is_number(operand) or not math.isfinite(as_double(operand)):   # 2**1024 is beyond any double
            raise MatchError(path, f"{name} takes a finite number")
        return operand
    if name == "$in":
        if _is_reference(operand):
            return _compile(operand, path, allowed, depth + 1, counter, as_key_value=False)
        if not isinstance(operand, list) or len(operand) > MAX_IN:
            raise MatchError(path, f"$in takes a list of at most {MAX_IN} values, or a reference")
        return _json_value(operand, path)
    if name == "$any_of":
        if not isinstance(operand, list) or not 2 <= len(operand) <= 20:
            raise MatchError(path, "$any_of takes a list of 2 to 20 nodes")
        return [_compile(branch, f"{path}[{at}]", allowed, depth + 1, counter, as_key_value=as_key_value)
                for at, branch in enumerate(operand)]
    # $contains
    return _compile(operand, path, allowed, depth + 1, counter, as_key_value=False)


def _regex(operand: Any, path: str) -> Any:
    if not isinstance(operand, str):
        never = ", never a reference" if _is_reference(operand) else f", got {json_type(operand)}"
        raise MatchError(path, f"$regex takes a string (a pattern){never}")
    try:
        return compile_search(operand)
    except RegexError as exc:
        raise MatchError(path, f"$regex {exc}") from None


def _reference(name: str, tree: dict[str, Any], path: str, allowed: frozenset[str], depth: int,
               counter: list[int]) -> Node:
    where = _child(path, name)
    if name not in allowed:
        raise _NotAllowed(where, f"{name} is not allowed here")
    operand = tree[name]
    if name in ("$arg", "$from_output"):
        if not isinstance(operand, str):
            raise MatchError(where, f"{name} takes a path")
        try:
            return Node("reference", Reference(name, parse_path(operand), tree), tree)
        except ValueError as exc:
            raise MatchError(where, str(exc)) from None
    counter[1] += 1
    if counter[1] > MAX_HOPS:
        raise MatchError(where, f"references may nest at most {MAX_HOPS} $from_result deep")
    compiled = _from_result(operand, where, allowed, depth, counter)
    counter[1] -= 1
    return Node("reference", Reference(name, compiled, tree), tree)


_FROM_RESULT_KEYS = ("tool", "path", "call_index", "where", "where_result", "find", "select", "length", "ok_only")


def _from_result(operand: Any, path: str, allowed: frozenset[str], depth: int, counter: list[int]) -> dict[str, Any]:
    if not isinstance(operand, dict):
        raise MatchError(path, "$from_result takes an object")
    unknown = [key for key in operand if key not in _FROM_RESULT_KEYS]
    if unknown:
        raise MatchError(_child(path, unknown[0]),
                         f"unknown $from_result field{suggest(unknown[0], _FROM_RESULT_KEYS)}")
    tool = operand.get("tool")
    if not isinstance(tool, str):
        raise MatchError(_child(path, "tool"), "$from_result needs a tool (a glob)")
    try:
        tool = check_text(tool, "tool", GLOB_LIMIT)   # trimmed, as every glob is
    except FieldProblem as exc:
        raise MatchError(_child(path, "tool"), exc.problem) from None
    compiled: dict[str, Any] = {"tool": tool, "ok_only": True, "length": False}
    for key in ("path", "select"):
        if key in operand:
            if not isinstance(operand[key], str):
                raise MatchError(_child(path, key), f"{key} takes a path")
            try:
                compiled[key] = parse_path(operand[key])
            except ValueError as exc:
                whole = " (leave it out to mean the whole value)" if operand[key] == "" else ""
                raise MatchError(_child(path, key), f"{exc}{whole}") from None
    if "call_index" in operand:
        index = operand["call_index"]
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 1_000_000:
            raise MatchError(_child(path, "call_index"), "call_index takes an integer from 0 to 1000000")
        if "where" in operand or "where_result" in operand:
            raise MatchError(_child(path, "call_index"), "call_index cannot be combined with where or where_result")
        compiled["call_index"] = index
    for key in ("length", "ok_only"):
        if key in operand:
            if not isinstance(operand[key], bool):
                raise MatchError(_child(path, key), f"{key} takes true or false")
            compiled[key] = operand[key]
    nested = allowed | {"$from_result"}
    for key in ("where", "where_result"):
        if key in operand:
            compiled[key] = _compile(operand[key], _child(path, key), nested, depth + 1, counter, as_key_value=False)
    if "find" in operand:
        try:
            compiled["find"] = _compile(operand["find"], _child(path, "find"), frozenset(), depth + 1, counter,
                                        as_key_value=False)
        except _NotAllowed as exc:
            raise MatchError(exc.path, f"{exc.problem}: a find node picks an element by what it holds, without "
                                       "references") from None
    return compiled


def evaluate(node: Node, actual: Any, resolve: Resolve, *, exact: bool = False,
             ignore: Sequence[str] = ()) -> Outcome:
    """Match `actual` (a decoded JSON value) against a compiled tree. `exact`: key sets must be
    equal at every level, except the top-level keys named in `ignore`."""
    outcome = Outcome([], [], {})
    _match(node, actual, (), outcome, resolve, exact, frozenset(ignore))
    return outcome


_UNSAID: list[dict[str, Any]] = []
"""The mismatches of every quiet outcome, a try no one asks why of: `_mismatch` writes none to it,
so it holds nothing."""


def _quiet() -> Outcome:
    """An outcome whose mismatches are not said, only its unresolved references kept: the try of
    one element of a `$contains`, of which only whether it matches and what it could not resolve
    are read (its mismatches were each built with their pointers, about six times the cost of the
    quick test, for every element and every branch below it, and dropped)."""
    return Outcome(_UNSAID, [], {})


def _like(outcome: Outcome) -> Outcome:
    """A fresh outcome for a part of what `outcome` holds: quiet under a quiet one."""
    return _quiet() if outcome.mismatches is _UNSAID else Outcome([], [], {})


_FREE_KEYS = 16
_STEPS_PER_KEY = 2
"""What saying why an object breaks an exact literal costs for each of its keys, in steps (about a
microsecond each): a key the literal lacks is a mismatch with its pointer (a hundred rules against
an object of 500,000 keys took 48 s)."""

ABSENT: Any = object()
"""The value of a key the actual object lacks (only `$exists: false` accepts it)."""


def _match(node: Node, actual: Any, at: tuple[str | int, ...], outcome: Outcome, resolve: Resolve, exact: bool,
           ignore: frozenset[str]) -> bool:
    """Whether `actual` (or ABSENT) matches `node`; what does not is added to `outcome`."""
    if node.kind == "reference":
        found = _candidates(node.value, at, outcome, resolve)
        if found is None:
            return False
        if actual is not ABSENT and holds_equal(actual, found):
            return True
        return _mismatch(outcome, at, {"any_of": distinct(found, MAX_CANDIDATES_SHOWN)}, actual)
    if node.kind == "ops":
        return _ops(node, actual, at, outcome, resolve, exact)
    written = node.written
    if actual is ABSENT:
        return _mismatch(outcome, at, written, actual)
    if isinstance(node.value, dict):
        if not isinstance(actual, dict):
            return _mismatch(outcome, at, written, actual)
        good = True
        for key, child in node.value.items():
            good = _match(child, actual.get(key, ABSENT), (*at, key), outcome, resolve, exact, frozenset()) and good
        if exact:
            if len(actual) > _FREE_KEYS:   # (the MCP server's bound on a check: `budget`)
                spend(len(actual) * _STEPS_PER_KEY)
            for key in actual:
                if key not in node.value and key not in ignore:
                    good = _mismatch(outcome, (*at, key), _UNEXPECTED, actual[key]) and good
        return good
    if isinstance(node.value, list):
        if not isinstance(actual, list) or len(actual) != len(node.value):
            return _mismatch(outcome, at, written, actual)
        good = True
        for position, (child, item) in enumerate(zip(node.value, actual, strict=True)):
            good = _match(child, item, (*at, position), outcome, resolve, exact, frozenset()) and good
        return good
    return json_equal(actual, node.value) or _mismatch(outcome, at, written, actual)


def _ops(node: Node, actual: Any, at: tuple[str | int, ...], outcome: Outcome, resolve: Resolve,
         exact: bool) -> bool:
    """An operator object: every operator must hold; an unresolved one is reported alone."""
    trial = _like(outcome)
    resolved: list[tuple[str, Any]] = []
    failed = False
    for name, operand in node.value.items():
        if not _operator_holds(name, operand, actual, at, trial, resolve, exact, resolved):
            failed = True
    if trial.unresolved:
        outcome.unresolved.extend(trial.unresolved)
        return False
    if failed:
        if resolved:   # in the order `expected` shows the operators (canonical: sorted), an
            # `$any_of`'s branches in their order (`$any_of[2]` before `$any_of[10]`)
            outcome.resolved[len(outcome.mismatches)] = sorted(resolved, key=lambda pair: pair[0].partition("[")[0])
        return _mismatch(outcome, at, node.written, actual)
    return True


def _operator_holds(name: str, operand: Any, actual: Any, at: tuple[str | int, ...], trial: Outcome,
                    resolve: Resolve, exact: bool, resolved: list[tuple[str, Any]]) -> bool:
    """Whether one operator holds; a reference operand's value is added to `resolved`, as
    (operator, value), or for `$in` (operator, `{"any_of": [...]}`)."""
    if name == "$exists":
        return (actual is not ABSENT) is operand
    if name == "$any_of":   # its branches may hold $exists, so they see an absent key too
        branches = [_like(trial) for _ in operand]
        for branch, result in zip(operand, branches, strict=True):
            if _match(branch, actual, at, result, resolve, exact, frozenset()):
                return True
        if actual is not ABSENT:   # at an absent key, an operator no branch of which accepts absence is a
            trial.unresolved.extend(item for result in branches for item in result.unresolved)   # mismatch (point 9)
        for position, (branch, result) in enumerate(zip(operand, branches, strict=True)):
            resolved.extend(_branch_resolved(f"$any_of[{position}]", branch, result))
        return False
    if actual is ABSENT:
        return False
    if name == "$regex":
        return isinstance(actual, str) and operand(actual) is not None
    if name == "$literal":
        return json_equal(actual, operand)
    if name in ("$gt", "$gte", "$lt", "$lte"):
        bound = operand
        if isinstance(operand, Node):
            found = _candidates(operand.value, at, trial, resolve)
            if found is None:
                return False
            bounds = distinct(found, 2)   # one distinct candidate, or ambiguous: two are enough to tell
            if len(bounds) != 1:
                trial.unresolved.append({"pointer": pointer(at), "reference": operand.written, "reason": "ambiguous"})
                return False
            bound = bounds[0]
            resolved.append((name, bound))
            if not is_number(bound):
                return False
        return is_number(actual) and compares(COMPARISONS[name], actual, bound)
    if name == "$in":
        values = operand
        if isinstance(operand, Node):
            found = _candidates(operand.value, at, trial, resolve, contributing=True)
            if found is None:
                return False
            resolved.append((name, {"any_of": _shown_for_in(found)}))
            return holds_in(actual, found)
        return any(json_equal(actual, value) for value in values)
    # $contains
    items = actual if isinstance(actual, list) else []
    size = tree_size(operand)
    unresolved: dict[str, dict[str, Any]] = {}
    for position, item in enumerate(items):
        spend(size)   # (the MCP server's bound on a check: `budget`)
        result = _quiet()   # (of an item, only its unresolved references are read: `_absorb`)
        if _match(operand, item, (*at, position), result, resolve, exact, frozenset()):
            return True
        _absorb(result, at, unresolved)
    if not items:   # no item to try it on (or no array): its references are looked up all the same, as a
        result = Outcome([], [], {})   # reference that finds nothing is unresolved, never a mismatch (spec §2)
        for reference in references_in(operand, nested=False):
            _candidates(reference, at, result, resolve)
        _absorb(result, at, unresolved)
    trial.unresolved.extend(unresolved.values())
    return False


def _absorb(result: Outcome, at: tuple[str | int, ...], unresolved: dict[str, dict[str, Any]]) -> None:
    """The unresolved references of one try of a `$contains`, at the `$contains` itself: the same
    reference fails alike for every element, so each is kept once."""
    for entry in result.unresolved:
        entry = {**entry, "pointer": pointer(at)}
        unresolved.setdefault(repr(sorted(entry.items(), key=lambda pair: pair[0])), entry)


def references_in(node: Node | None, *, nested: bool = True) -> Iterator[Reference]:
    """Every reference in a compiled tree; with `nested`, those inside a `$from_result`'s `where`
    and `where_result` too (which it resolves itself)."""
    if node is None:
        return
    if node.kind == "reference":
        reference = node.value
        yield reference
        if nested and reference.name == "$from_result":
            yield from references_in(reference.operand.get("where"))
            yield from references_in(reference.operand.get("where_result"))
        return
    if node.kind == "ops":
        for name, operand in node.value.items():
            if isinstance(operand, Node):
                yield from references_in(operand, nested=nested)
            elif name == "$any_of":
                for branch in operand:
                    yield from references_in(branch, nested=nested)
        return
    children = node.value.values() if isinstance(node.value, dict) else node.value if isinstance(node.value, list) \
        else ()
    for child in children:
        yield from references_in(child, nested=nested)


def _branch_resolved(name: str, branch: Node, result: Outcome) -> list[tuple[str, Any]]:
    """What the references of a failed `$any_of` branch resolved to, named by their place in the
    branch (`$any_of[0].$lte`, or `$any_of[1]` for a branch that is a reference): a branch that is
    an operator object or a reference, at the `$any_of`'s own value (its one mismatch)."""
    if len(result.mismatches) != 1 or result.unresolved:
        return []
    if branch.kind == "reference":
        return [(name, result.mismatches[0]["expected"])]
    if branch.kind == "ops":
        return [(f"{name}.{inner}", value) for inner, value in result.resolved.get(0, [])]
    return []


def _candidates(reference: Reference, at: tuple[str | int, ...], outcome: Outcome, resolve: Resolve,
                contributing: bool = False) -> list[Any] | None:
    """The reference's candidates, or None after reporting why there are none (with
    `contributing`, for `$in`: also when they are only empty arrays, which contribute nothing)."""
    found = resolve(reference)
    if isinstance(found, str):
        outcome.unresolved.append({"pointer": pointer(at), "reference": reference.written, "reason": found})
        return None
    if not found or (contributing and not _contributes(found)):
        outcome.unresolved.append({"pointer": pointer(at), "reference": reference.written, "reason": "no_candidates"})
        return None
    return found


def distinct(values: list[Any], most: int | None = None) -> list[Any]:
    """The values without repeats (JSON equality), in order; the first `most` of them."""
    if len(values) == 1:
        return [values[0]]   # a copy: a reference's candidates may be a list that grows
    if values.__class__ is Candidates and values.keys is not None and most is not None \
            and most <= MAX_CANDIDATES_SHOWN:
        return values.shown[:most]   # (kept as they came)
    kept: list[Any] = []
    for value in values:
        if not any(json_equal(value, seen) for seen in kept):
            kept.append(value)
            if most is not None and len(kept) >= most:
                break
    return kept


_UNEXPECTED = {"$exists": False}
"""What a key of the value that an exact literal lacks was expected to be: absent."""


def _mismatch(outcome: Outcome, at: tuple[str | int, ...], expected: Any, actual: Any) -> bool:
    if outcome.mismatches is _UNSAID:
        return False
    entry: dict[str, Any] = {"pointer": pointer(at), "expected": expected}
    if actual is not ABSENT:
        entry["actual"] = actual
    outcome.mismatches.append(entry)
    return False


COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}
"""The comparison operators, on doubles."""


def compares(compare: Callable[[float, float], bool], actual: Any, bound: Any) -> bool:
    """Whether two JSON numbers compare so, as the doubles JavaScript reads (as equality compares
    them: 2^53 + 1 <= 2^53); finite numbers only (a value read as infinity, such as `1e400`,
    compares with nothing)."""
    value, limit = as_double(actual), as_double(bound)
    return math.isfinite(value) and math.isfinite(limit) and compare(value, limit)


def is_number(value: Any) -> bool:
    """A JSON number (a boolean is not one)."""
    kind = value.__class__
    return kind is int or kind is float


def _is_reference(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in REFERENCES


def _child(path: str, key: str) -> str:
    """The JSON path of a key, as the contract's line lookup spells them (`$.a.b`, `$.a["b.c"]`)."""
    return member(path, key)
