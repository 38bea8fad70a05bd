"""JSON Schema (2020-12) on a call's args, through the `jsonschema` extra (spec §3.1).

The validator is the reference implementation, `jsonschema`, imported only when a contract has a
`schema`: without the extra that contract is a load error that says how to install it. Only local
references (`"$ref": "#/$defs/..."`) are allowed, so checking a trace never reads a file or the
network; a schema that is itself invalid is a load error naming its JSON path, and so is one with a
reference that leads nowhere (each is looked up where it stands) or whose references go round in a
circle, applying the schema to the same value again (`$ref`, `allOf` and the like, wherever they
stand; recursion into a part of the value, as a tree schema has, is no circle).
`pattern` and `patternProperties` (and `additionalProperties`, which reads them) use the same RE2
patterns as `$regex` (`match.regex`), so trace text cannot make a check backtrack for hours;
`uniqueItems` looks items up by their canonical form, where the validator compares every pair.
A `$schema` naming another draft is a load error, not read as 2020-12 without a word.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import math
import re
import threading
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import msgspec

from agent_invariants._safe import VALUE_LIMIT, inert
from agent_invariants.jsonpos import member
from agent_invariants.jsontext import deep_enough, show, value_count
from agent_invariants.match.budget import charging, spend
from agent_invariants.match.canonical import canonical, canonical_key, evidence_value
from agent_invariants.match.paths import pointer
from agent_invariants.match.regex import RegexError, compile_search
from agent_invariants.match.subschemas import held
from agent_invariants.rules.fields import FieldProblem

__all__ = ("ArgsSchema",)

_REFERENCE_KEYS = ("$ref", "$dynamicRef")
_DRAFT = "https://json-schema.org/draft/2020-12/schema"
"""The meta-schema a `$schema` may name (with or without a trailing `#`): a schema written for
another draft means other things by the same keywords (`items` as a list, `dependencies`)."""


class ArgsSchema:
    """A checked, compiled schema; `errors(args, most)` lists how the args break it."""

    def __init__(self, schema: dict[str, Any] | bool, field: str) -> None:
        try:
            from jsonschema import Draft202012Validator, SchemaError
        except ImportError:
            raise FieldProblem(field, "a schema needs the jsonschema extra: "
                                      "pip install 'agent-invariants[jsonschema]'") from None
        other = next(_other_drafts(schema, field), None)
        if other is not None:
            raise FieldProblem(other[0], f"only JSON Schema 2020-12 is read ({show(_DRAFT)}), got {show(other[1])}")
        for where, reference in _references(schema, field):
            if not reference.startswith("#"):
                raise FieldProblem(where, f"only local references (starting with #) are allowed, got {reference!r}")
        try:
            with deep_enough():   # (the meta-schema walks a schema some ten frames a level)
                Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = field + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in exc.path)
            raise FieldProblem(where, f"not a valid JSON Schema: {inert(exc.message, VALUE_LIMIT)}") from None
        evaluated = _has_key(schema, "unevaluatedProperties")
        for where, text in _patterns(schema, field):
            try:
                compile_search(text)
            except RegexError as exc:
                raise FieldProblem(where, f"the pattern {exc}") from None
            if evaluated and where.endswith(".patternProperties") and not _PLAIN.fullmatch(text):
                raise FieldProblem(where, f"the pattern {show(text)}: beside unevaluatedProperties, the validator "
                                          "searches patternProperties with Python's engine, whose meaning and time "
                                          "differ from RE2's: use plain text, maybe after ^")
        found = _reference_problem(schema, field)
        if found is not None:
            raise FieldProblem(found[0], f"the schema cannot be used: {found[1]}")
        self._validator = _validator_type(charging())(schema, registry=_no_retrieval())
        for sample in _SAMPLES:
            problem = self._unusable(sample)
            if problem is not None:
                raise FieldProblem(field, f"the schema cannot be used: {problem}")

    def errors(self, args: Any, most: int) -> list[dict[str, str]]:
        """The first `most` errors, as `{pointer, message}` with pointers into the args, in the
        validator's order (which the schema's own order decides)."""
        found: list[dict[str, str]] = []
        try:
            with deep_enough(), _references_budget(args):
                errors = list(itertools.islice(self._validator.iter_errors(args), most))
            for error in errors:
                found.append({"pointer": pointer(tuple(error.absolute_path)),
                              "message": inert(_in_json(error), VALUE_LIMIT)})
        except _unusable_errors() as exc:
            found.append({"pointer": "", "message": f"the schema cannot be applied: {_why(exc)}"})
        return found

    def _unusable(self, sample: Any) -> str | None:
        try:
            with deep_enough(), _references_budget(sample):
                for _ in self._validator.iter_errors(sample):
                    pass
        except _unusable_errors() as exc:
            return _why(exc)
        return None


def _in_json(error: Any) -> str:
    """The validator's message with the values it quotes written as JSON, as the rest of a report
    writes them: `null is not of type "object"`, not Python's `None is not of type 'object'`. The
    values are the error's instance, the schema's value for the keyword, and (for `required` and
    `additionalProperties`) the property names; each is replaced where its Python form is first
    found (numbers are spelt alike, and left as they are). Only the start of the message is kept
    (a report shows `VALUE_LIMIT` characters of it), and only small values are looked for, so a
    huge instance costs no more than the validator's own message did; a large instance that the
    message starts with is written as JSON too, its start."""
    message: str = error.message
    instance = error.instance
    if isinstance(instance, (dict, list)) and len(instance) > _LOOKED_FOR:
        python = repr(instance)
        if message.startswith(python):
            with contextlib.suppress(TypeError, ValueError):   # (something that is not JSON: kept as it is)
                spelled = canonical(evidence_value(instance))
                message = (spelled if len(spelled) <= _LARGE_SHOWN else spelled[:_LARGE_SHOWN] + "…") + \
                    message[len(python):]
    message = message[:_KEPT]
    value = error.validator_value
    quoted: list[Any] = [error.instance, value, *(value[:_LOOKED_FOR] if isinstance(value, list) else ())]
    if isinstance(error.instance, dict):
        quoted += itertools.islice(error.instance, _LOOKED_FOR)
    quoted += [word for word in ("object", "array", "string", "number", "integer", "boolean", "null")
               if repr(word) in message]
    for item in quoted:
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            continue
        if isinstance(item, (dict, list)) and len(item) > _LOOKED_FOR:
            continue
        python = repr(item)
        if item is None or isinstance(item, bool):   # a bare word: only where a message starts with it
            if not message.startswith(python):        # (`True` may be inside a string quoted later)
                continue
        elif len(python) > len(message) or python not in message:
            continue
        try:
            spelled = canonical(item)
        except (TypeError, ValueError):   # holds something that is not JSON: kept as it is
            continue
        if not _same(msgspec.json.decode(spelled), item):   # (an integer beyond 2^53: its double is
            continue                                          # another number, and Python's is JSON)
        message = message.replace(python, spelled, 1)
    return message


_LARGE_SHOWN = 100
"""How much of a large instance's JSON a message shows."""
_KEPT = 4 * VALUE_LIMIT
"""The start of a validator's message that is kept (and spelt in JSON)."""
_LOOKED_FOR = 100
"""The most items of a list, keys of an object, or members of a value looked for in a message."""


class _TooManyReferences(Exception):
    """A schema's references were followed more often than one value warrants (`_references_budget`)."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


_BUDGET = threading.local()
"""For the value being validated in this thread (`value`): how many more references it may follow
(`left`, of `limit`). (A circle of `$ref`s was refused when the schema loaded; one through
`$dynamicRef` meets this bound.)"""

_REFERENCES_PER_VALUE = 1_000
_REFERENCES_PER_NODE = 100


@contextlib.contextmanager
def _references_budget(value: Any) -> Iterator[None]:
    """Bound the references followed to validate `value`: 1,000 and 100 per node of the value.
    References that branch into each other (`allOf` of two references to a definition that does
    the same, twenty deep) are no circle, but are followed 2**20 times for one value: without a
    bound, a small schema would hang the check, or a server that takes contracts. The value's
    nodes are counted only once the first 1,000 are spent (most values never get there)."""
    _BUDGET.left = _BUDGET.limit = _REFERENCES_PER_VALUE
    _BUDGET.value = value
    try:
        yield
    finally:
        _BUDGET.left = _BUDGET.value = None


_SAMPLES: tuple[Any, ...] = ({}, [], "", 0, None)
"""Values a schema is tried on when it loads, to find references that lead nowhere or loop."""


@functools.cache
def _unusable_errors() -> tuple[type[BaseException], ...]:
    """What a schema that cannot be applied raises: asked when a schema is used, so that the
    `referencing` package (some 50 ms to import) loads only for contracts that have one."""
    try:
        from referencing.exceptions import Unresolvable
    except ImportError:   # without the extra no schema loads, so nothing is tried
        return (RecursionError, _TooManyReferences)
    return (Unresolvable, RecursionError, _TooManyReferences)


def _no_retrieval() -> Any:
    """A registry that retrieves nothing: the validator's default one fetches a reference it cannot
    find in the schema with `urlopen` (file and network alike). Every reference here is local, so
    this only makes sure of it."""
    from referencing import Registry

    return Registry()


def _reference_problem(schema: dict[str, Any] | bool, field: str) -> tuple[str, str] | None:
    """Where and why the schema's references cannot be followed, or None: a `$ref` or
    `$dynamicRef` that leads nowhere, at its own path (each is looked up where it stands, under
    the `$id`s around it, whether or not a value would reach it: trying sample values finds only
    what they reach; a `$dynamicRef` starts where a `$ref` would go, so one that leads nowhere so
    fails on every value that reaches it), or a circle (`_circle`), at `field`."""
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    root = DRAFT202012.create_resource(schema)
    schemas = list(_schemas(root, _no_retrieval().resolver_with_root(root)))
    for contents, resolver in schemas:
        for keyword in _REFERENCE_KEYS:
            reference = contents.get(keyword)
            if isinstance(reference, str):
                try:
                    resolver.lookup(reference)
                except Unresolvable as exc:
                    return f"{_path_of(contents, schema, field)}.{keyword}", _why(exc)
    circle = _circle(schemas)
    return None if circle is None else (field, circle)


def _path_of(target: dict[str, Any], schema: Any, field: str) -> str:
    """The JSON path of the object `target` (itself, not an equal one) inside `schema`."""
    stack: list[tuple[Any, str]] = [(schema, field)]
    while stack:
        value, path = stack.pop()
        if value is target:
            return path
        if isinstance(value, dict):
            stack.extend((item, member(path, key)) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{position}]") for position, item in enumerate(value))
    return field   # (not reached: every subschema stands somewhere in the schema)


_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas")
"""The keywords that apply subschemas to the value itself, as `$ref` does, not to a part of it."""


def _circle(schemas: list[tuple[dict[str, Any], Any]]) -> str | None:
    """Why the schema cannot be applied to some value, or None: a circle of references that
    apply the schema to the same value again (`$ref`, and the keywords of `_IN_PLACE`) recurses
    without end, wherever it stands (under `properties`, it is reached only by a value with that
    key: found here, when the contract loads, all the same). `schemas` are its subschemas, each
    with its resolver, and their references all lead somewhere. Depth first, without recursion."""
    done: set[int] = set()
    for start, start_resolver in schemas:
        if id(start) in done:
            continue
        open_now: set[int] = {id(start)}
        stack = [(start, iter(_applied(start, start_resolver)))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                open_now.discard(id(node))
                done.add(id(node))
                continue
            target, target_resolver = child
            if id(target) in open_now:
                return "its references go round in a circle"
            if id(target) not in done:
                open_now.add(id(target))
                stack.append((target, iter(_applied(target, target_resolver))))
    return None


def _schemas(root: Any, resolver: Any) -> Iterator[tuple[dict[str, Any], Any]]:
    """Every subschema that is an object, with the resolver of where it stands."""
    stack = [(root, resolver)]
    while stack:
        resource, at = stack.pop()
        if isinstance(resource.contents, dict):
            yield resource.contents, at
        stack.extend((sub, at.in_subresource(sub)) for sub in resource.subresources())


def _applied(contents: dict[str, Any], resolver: Any) -> Iterator[tuple[dict[str, Any], Any]]:
    """The subschemas (objects) that `contents` applies to the value itself: its `$ref`'s target
    (a reference that leads nowhere was refused before) and those of the `_IN_PLACE` keywords."""
    from referencing.jsonschema import DRAFT202012

    reference = contents.get("$ref")
    if isinstance(reference, str):
        found = resolver.lookup(reference)
        if isinstance(found.contents, dict):
            yield found.contents, found.resolver
    for keyword in _IN_PLACE:
        value = contents.get(keyword)
        if keyword == "dependentSchemas":
            value = list(value.values()) if isinstance(value, dict) else None
        for subschema in value if isinstance(value, list) else [value]:
            if isinstance(subschema, dict):
                yield subschema, resolver.in_subresource(DRAFT202012.create_resource(subschema))


_NAMED = ("PointerToNowhere", "NoSuchAnchor")


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "its references go round in a circle"
    if isinstance(exc, _TooManyReferences):
        return (f"its references were followed more than {exc.limit:,} times for one value, the most allowed "
                f"({_REFERENCES_PER_VALUE:,}, and {_REFERENCES_PER_NODE} for each node of the value)")
    # jsonschema wraps what the `referencing` package raised; that package's own error is caused by a KeyError
    cause = next((item for item in (exc, exc.__cause__) if type(item).__name__ in _NAMED), exc.__cause__ or exc)
    kind = type(cause).__name__
    if kind == "PointerToNowhere":
        what = f": the schema has nothing at {show('#' + str(getattr(cause, 'ref', '')))}"
    elif kind == "NoSuchAnchor":
        what = f": the schema has no anchor {show(str(getattr(cause, 'anchor', '')))}"
    else:
        what = f" ({show(str(getattr(cause, 'ref', '')))})"
    return inert(f"a reference cannot be resolved{what}", VALUE_LIMIT)


@functools.cache
def _validator_type(charged: bool) -> Any:
    """Draft 2020-12, with `pattern` and `patternProperties` searched by RE2 patterns (made once: a
    class is a reference cycle, and one made per rule was left to the collector after each check).
    `charged`: each keyword applied to a value spends `_STEPS_PER_KEYWORD` steps of the budget the
    schema was compiled under (`budget.charging`: twenty rules whose schema walks the 900,000
    values of a call's args took 33 s on the MCP server)."""
    from jsonschema import Draft202012Validator, ValidationError, validators
    from jsonschema._utils import equal  # (as `_same`, bound once: it runs for each value checked)

    def pattern(validator: Any, text: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and _search(text)(instance) is None:
            yield ValidationError(f"{instance!r} does not match {text!r}")

    def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for text, subschema in patterns.items():
            search = _search(text)
            for key, value in instance.items():
                if search(key) is not None:
                    yield from validator.descend(value, subschema, path=key, schema_path=text)

    def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
        # the validator's own compares every pair of objects: 10,000 of them took minutes; only
        # items whose equality keys meet are compared, as the validator would (`_same`)
        if unique and validator.is_type(instance, "array"):
            seen: dict[object, list[int]] = {}
            for position, item in enumerate(instance):
                alike = seen.setdefault(_key(item), [])
                first = next((earlier for earlier in alike if equal(instance[earlier], item)), None)
                if first is not None:   # (named by its items: the whole array may be megabytes)
                    yield ValidationError(f"has non-unique elements: items {first} and {position} are equal")
                    return
                alike.append(position)

    def enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Any:
        # the validator's own compares the value with each member (an enum of 100,000 objects:
        # 0.46 s a value); only members whose equality key is the value's are compared
        if not any(equal(member, instance) for member in _enum_keys(enums).get(_key(instance), ())):
            yield ValidationError(f"{instance!r} is not one of {_listed(enums)}")

    def additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Any:
        # the validator's own finds the keys no `patternProperties` pattern names with Python's
        # engine, all the patterns joined: `^(a+)+b$` took 35 s on a key of 30 characters
        if not validator.is_type(instance, "object"):
            return
        named = schema.get("properties", {})
        searches = [_search(text) for text in schema.get("patternProperties", {})]
        extras = [key for key in instance if key not in named and all(search(key) is None for search in searches)]
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], additional, path=extra)
        elif not additional and extras:
            listed = ", ".join(repr(each) for each in sorted(extras))
            if "patternProperties" in schema:
                patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
                yield ValidationError(f"{listed} {'does' if len(extras) == 1 else 'do'} not match any of the "
                                      f"regexes: {patterns}")
            else:
                yield ValidationError(f"Additional properties are not allowed ({listed} "
                                      f"{'was' if len(extras) == 1 else 'were'} unexpected)")

    def multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Any:
        # A number past any double is judged exactly: an integer (10**400) as itself, against a
        # fractional divisor or by one past any double (the validator divides as doubles and
        # overflows); one written with a fraction or an exponent (1e400) is read as infinity,
        # which is a multiple of nothing.
        if instance.__class__ is float and not math.isfinite(instance):
            yield ValidationError(f"a number past any double (read as infinity) is not a multiple of {divisor!r}")
            return
        try:
            failed = any(True for _ in Draft202012Validator.VALIDATORS["multipleOf"](validator, divisor, instance,
                                                                                    schema))
        except OverflowError:
            failed = Fraction(instance) % Fraction(divisor) != 0
        if failed:
            yield ValidationError(f"{_number(instance)} is not a multiple of {_number(divisor)}")

    def counted(keyword: Any) -> Any:
        def follow(validator: Any, reference: Any, instance: Any, schema: Any) -> Any:
            left = getattr(_BUDGET, "left", None)
            if left is None:
                yield from keyword(validator, reference, instance, schema)
                return
            if left <= 0 and _BUDGET.limit == _REFERENCES_PER_VALUE:   # the per-node share, counted now
                more = _REFERENCES_PER_NODE * value_count(_BUDGET.value)
                _BUDGET.limit += more
                left += more
            if left <= 0:
                raise _TooManyReferences(_BUDGET.limit)
            _BUDGET.left = left - 1
            yield from keyword(validator, reference, instance, schema)
        return follow

    def spending(keyword: Any) -> Any:
        def applied(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
            spend(_STEPS_PER_KEYWORD)
            return keyword(validator, value, instance, schema)
        return applied

    keywords = {**Draft202012Validator.VALIDATORS,
                "pattern": pattern, "patternProperties": pattern_properties, "uniqueItems": unique_items,
                "multipleOf": multiple_of, "additionalProperties": additional_properties, "enum": enum,
                **{name: counted(Draft202012Validator.VALIDATORS[name]) for name in _REFERENCE_KEYS}}
    return validators.extend(Draft202012Validator,
                             {name: spending(keyword) for name, keyword in keywords.items()} if charged else keywords)


def _enum_keys(enums: Any) -> dict[object, list[Any]]:
    """An `enum`'s members by their equality keys, worked out once per enum (kept with it, so that
    its id is not reused meanwhile; at most `_ENUMS_KEPT` enums, the server loading contracts
    one after another)."""
    found = _ENUMS.get(id(enums))
    if found is None or found[0] is not enums:
        if len(_ENUMS) >= _ENUMS_KEPT:
            _ENUMS.clear()
        members: dict[object, list[Any]] = {}
        for member in enums if isinstance(enums, list) else ():
            members.setdefault(_key(member), []).append(member)
        found = _ENUMS[id(enums)] = (enums, members)
    return found[1]


def _key(value: Any) -> object:
    """A key under which values the validator calls equal meet: `canonical_key`, but a number as
    itself, which Python compares exactly (1 is 1.0; 2^53 + 1 is not 2^53, though one double
    stands for both), so that a list of large integers does not pile up under one key."""
    return ("x", value) if value.__class__ is int or value.__class__ is float else canonical_key(value)


def _same(one: Any, two: Any) -> bool:
    """Whether two values are equal as the validator has it (`const` too): numbers exactly, as
    Python compares them (2^53 + 1 is not 2^53, which a double cannot tell apart). Values that
    are equal so always share their key (`_key`), which only narrows the search."""
    from jsonschema._utils import equal

    return bool(equal(one, two))


def _listed(enums: Any) -> str:
    """`repr(enums)` as far as a message keeps it (`_KEPT`): the members of a large enum are not
    all written out for each value that is none of them (100,000 of them: 3 MB a value)."""
    if not isinstance(enums, list):
        return repr(enums)
    shown, size = [], 0
    for each in enums:
        shown.append(repr(each))
        size += len(shown[-1]) + 2
        if size > _KEPT:
            return "[" + ", ".join(shown) + ", ...]"
    return "[" + ", ".join(shown) + "]"


_ENUMS: dict[int, tuple[Any, dict[object, list[Any]]]] = {}
_ENUMS_KEPT = 1024


_STEPS_PER_KEYWORD = 6
"""What the validator's application of one keyword to one value costs, in steps (about a
microsecond each)."""


def _number(value: int | float) -> str:
    """A number for a message: an integer of hundreds of digits by its length, not spelt out."""
    spelled = repr(value)
    return spelled if len(spelled) <= 24 else f"an integer of {len(spelled.lstrip('-')):,} digits"


_SEARCHES: dict[tuple[str, bool], Any] = {}


def _search(text: str) -> Any:
    """The compiled search of a schema pattern (checked when the schema loaded), one that counts
    its steps under a budget (`budget.charging`: one compiled outside it would not)."""
    key = (text, charging())
    found = _SEARCHES.get(key)
    if found is None:
        if len(_SEARCHES) >= 1000:
            _SEARCHES.clear()
        found = _SEARCHES[key] = compile_search(text)
    return found


_PLAIN = re.compile(r"\^?[^\\^$.|?*+()\[\]{}]*")
"""A pattern both engines search alike and in linear time: plain text, maybe after `^`."""


def _has_key(schema: Any, key: str) -> bool:
    """Whether `key` is a key of an object anywhere in the schema (without recursion: a schema may
    nest as deep as a contract)."""
    pending = [schema]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            if key in value:
                return True
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _patterns(schema: Any, path: str) -> Iterator[tuple[str, str]]:
    """(JSON path, pattern) of each `pattern` value and `patternProperties` key, at any depth."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                yield f"{path}.pattern", value
            elif key == "patternProperties" and isinstance(value, dict):
                for text in value:
                    yield f"{path}.patternProperties", text
            if isinstance(value, (dict, list)):
                yield from _patterns(value, member(path, key))
    elif isinstance(schema, list):
        for position, item in enumerate(schema):
            yield from _patterns(item, f"{path}[{position}]")


def _other_drafts(schema: Any, path: str) -> Iterator[tuple[str, str]]:
    """(JSON path, value) of each `$schema` that names another draft than 2020-12, at the root or
    in a subschema (a resource with its own `$id` may name its own draft, which the validator then
    partly follows); a keyword's value that is data (`const`, an `x-` extension) is not looked into."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        at = member(path, key)
        if key == "$schema" and isinstance(value, str) and value not in (_DRAFT, _DRAFT + "#"):
            yield at, value
        holds = held(key, value)
        if holds == "one":
            yield from _other_drafts(value, at)
        elif holds == "list":
            for position, item in enumerate(value):
                yield from _other_drafts(item, f"{at}[{position}]")
        elif holds == "map":
            for name, item in value.items():
                yield from _other_drafts(item, member(at, name))


def _references(schema: Any, path: str) -> Iterator[tuple[str, str]]:
    """(JSON path, reference) of each `$ref` and `$dynamicRef` that is a string, at any depth."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in _REFERENCE_KEYS and isinstance(value, str):
                yield member(path, key), value
            else:
                yield from _references(value, member(path, key))
    elif isinstance(schema, list):
        for position, item in enumerate(schema):
            yield from _references(item, f"{path}[{position}]")
