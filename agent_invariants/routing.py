"""Routing: which handlers see an event, learnt from the observers' `route` once per class of key.

The engine routes an event by (claims_completion, type, tool). A trace may name a new tool on
every call, so a new tool is first sorted into its class, by the globs the observers read tools
through (`route_tools`, joined in `globs.compile_glob_set`): the observers are asked once per
class, not once per tool.

A rule that judges only some types says which (`route_types`): for a new type, only the rules
whose type globs match it are asked (`_TypeFilter`), with those that say nothing. A contract may
hold thousands of rules, each on a type of its own, and a trace name a new type on every event.

A contract may also hold thousands of rules that each name a tool or a glob of their own (a
deny list, written one rule per tool). Asking all of them for each new class made a trace of as
many tools cost rules × tools `route` calls (10,000 of each: 25 s). An observer answers alike for
every present tool that none of its globs matches (its `route_tools` promises so), so `_Sieve`
asks each observer once for "none of mine", and then, for each new class, only the observers
whose globs match its tool, found in an index.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from itertools import chain
from typing import Any

from msgspec import UNSET, UnsetType

from agent_invariants.events import Event
from agent_invariants.globs import compile_glob_index, compile_glob_set
from agent_invariants.rules.base import Observer

__all__ = ("Router",)

ROUTE_CACHE_LIMIT = 65_536

Routes = dict[Any, dict[str, "_Tools | tuple[Observer, ...]"]]
"""The route cache: claims_completion -> type -> tool -> the handlers of such events; or
claims_completion -> type -> the handlers, where the tool makes no difference."""

Key = tuple[str, str | UnsetType, bool | UnsetType]
"""A routing key as `route` takes it: (type, tool, claims_completion)."""


class Router:
    """What the engine has learnt of the observers' routes, as `routes`: claims_completion ->
    type -> `_Tools` (the handlers per tool), or the handlers themselves where the tool makes no
    difference. A new (claims_completion, type) is learnt here; a new tool of a known one by its
    `_Tools`. Everything is forgotten when a handler says its
    rule's interests changed, and when `ROUTE_CACHE_LIMIT` routes have been learnt since the
    last time (a trace may name a new tool or type on every event)."""

    __slots__ = ("_classifiers", "_indexes", "_types", "learned", "observers", "routes")

    def __init__(self, observers: Sequence[Any]) -> None:
        self.observers = observers
        self.routes: Routes = {}
        self.learned = 0
        self._classifiers: dict[tuple[str, ...], Callable[[str], Hashable]] = {}
        self._indexes: dict[tuple[tuple[str, ...], tuple[int, ...]], tuple[Callable[[str], list[int]], list[int]]] = {}
        self._types = _TypeFilter(observers)

    def forget(self) -> None:
        self.routes.clear()
        self._classifiers.clear()
        self._indexes.clear()
        self.learned = 0

    def count_one(self) -> None:
        """Count a route learnt, first forgetting everything when the cache is full (what is
        being learnt still holds: it is handed back, and kept only if its dict is kept)."""
        if self.learned >= ROUTE_CACHE_LIMIT:
            self.forget()
        self.learned += 1

    def learn(self, event: Event) -> tuple[Observer, ...]:
        """The handlers for an event of a (claims_completion, type) not seen yet."""
        claims, event_type = event.claims_completion, event.type
        tools = _Tools(self, self._types.observers(event_type), event_type, claims)
        alike = tools.alike()
        if alike is None:
            self.routes.setdefault(claims, {})[event_type] = tools
            return tools[event.tool]
        self.count_one()
        self.routes.setdefault(claims, {})[event_type] = alike   # the tool makes no difference
        return alike

    def classifier(self, patterns: tuple[str, ...]) -> Callable[[str], Hashable]:
        """The class of a tool by these globs (`compile_glob_set`), built once per set: a trace
        may name a new type on every event, and most types' sets are alike."""
        found = self._classifiers.get(patterns)
        if found is None:
            found = self._classifiers[patterns] = compile_glob_set(patterns) if patterns else _present
        return found

    def index(self, patterns: tuple[str, ...], counts: tuple[int, ...]) -> tuple[Callable[[str], list[int]], list[int]]:
        """For the globs of the observers (`patterns`, `counts[i]` of them the i-th observer's): a
        function giving the numbers of the globs that a tool matches (`compile_glob_index`), and
        the observer of each glob; built once per set, as `classifier` is (a trace may name a new
        type on every event, and most types' sets are alike)."""
        found = self._indexes.get((patterns, counts))
        if found is None:
            owners = [position for position, count in enumerate(counts) for _ in range(count)]
            found = self._indexes[patterns, counts] = (compile_glob_index(patterns), owners)
        return found


class _Tools(dict[Any, tuple[Observer, ...]]):
    """The handlers of one (claims_completion, type) per tool. A tool not seen yet is sorted
    into its class by the globs every observer reads tools through (`route_tools`): absent, or
    present and matched by the same globs. The routes are asked for once per class, unless some
    observer reads the tool another way (then once per tool).

    Where no observer looks at the tool at all, not even at whether there is one, the handlers
    stand for the type itself (`alike`): the engine then looks up no tool for its events
    (tool.result with most contracts, and the types that carry no tool)."""

    __slots__ = ("_by_class", "_classify", "_claims", "_observers", "_router", "_sieve", "_type")

    def __init__(self, router: Router, observers: Sequence[Any], event_type: str, claims: bool | UnsetType) -> None:
        """The handlers of these observers (those that may want events of this type)."""
        super().__init__()
        self._router, self._observers, self._type, self._claims = router, observers, event_type, claims
        self._by_class: dict[object, tuple[Observer, ...]] = {}
        self._sieve: _Sieve | None = None
        globs: list[str] = []   # every observer's, in a row
        counts: list[int] = []  # how many each observer has
        for observer in observers:
            route_tools = getattr(observer, "route_tools", None)
            read = None if route_tools is None else route_tools(event_type, claims)
            if read is None:
                self._classify: Callable[[str], Hashable] | None = None
                break
            globs.extend(read)
            counts.append(len(read))
        else:
            patterns = tuple(globs)
            self._classify = router.classifier(patterns)
            if patterns:
                self._sieve = _Sieve(observers, *router.index(patterns, tuple(counts)), max(map(len, patterns)))

    def __missing__(self, tool: str | UnsetType) -> tuple[Observer, ...]:
        self._router.count_one()
        handlers = self[tool] = self._of_class(tool)
        return handlers

    def alike(self) -> tuple[Observer, ...] | None:
        """The handlers of every event of this type, when no observer looks at the tool, not
        even at whether there is one; else None."""
        if self._classify is not _present:
            return None
        handlers = self._of_class(UNSET)
        return handlers if handlers == self._of_class("-") else None

    def _of_class(self, tool: str | UnsetType) -> tuple[Observer, ...]:
        """The handlers of the tool's class, asked of the observers once per class."""
        classify = self._classify
        key: object = tool if classify is None or tool is UNSET else () if classify is _present else classify(tool)
        handlers = self._by_class.get(key)
        if handlers is None:
            routing_key = (self._type, tool, self._claims)
            sieve = self._sieve
            handlers = self._by_class[key] = handlers_of(self._observers, routing_key) \
                if sieve is None or tool is UNSET else sieve.handlers(routing_key, tool)
        return handlers


class _TypeFilter:
    """Which observers may want events of a type: those whose `route_types` globs match it (found
    through `globs.compile_glob_index`, not tried one by one), and those that declare none."""

    __slots__ = ("_always", "_matching", "_observers", "_owners")

    def __init__(self, observers: Sequence[Any]) -> None:
        self._observers = observers
        self._always: list[int] = []   # the observers without route_types
        self._owners: list[int] = []   # the observer of each glob
        globs: list[str] = []
        for position, observer in enumerate(observers):
            route_types = getattr(observer, "route_types", None)
            types = None if route_types is None else route_types()
            if types is None:
                self._always.append(position)
            for glob in types or ():
                globs.append(glob)
                self._owners.append(position)
        self._matching = compile_glob_index(globs) if globs else None

    def observers(self, event_type: str) -> Sequence[Any]:
        """The observers that may want events of this type, in their order."""
        if self._matching is None:
            return self._observers
        owners = self._owners
        positions = sorted({*self._always, *(owners[number] for number in self._matching(event_type))})
        return self._observers if len(positions) == len(self._observers) else \
            [self._observers[position] for position in positions]


class _Sieve:
    """For one (claims_completion, type): every observer's tool globs, indexed, and what each
    observer answers for a present tool that none of its globs matches (the same for every such
    tool, by `route_tools`' promise). The first class of tool asks every observer, as without a
    sieve, and keeps the answers of those its tool's globs leave out (the others are asked once
    more, with a tool no glob matches); each later class asks only the observers whose globs match
    its tool."""

    __slots__ = ("_matching", "_nobody", "_observers", "_owners", "_unmatched")

    def __init__(self, observers: Sequence[Any], matching: Callable[[str], list[int]], owners: list[int],
                 longest: int) -> None:
        """`matching` gives the numbers of the observers' globs (all in a row) that a tool
        matches, `owners` the observer of each, and `longest` is the longest glob's length."""
        self._observers = observers
        self._owners = owners
        self._matching = matching
        # Wildcards never match a line break, so line breaks past the length of every glob are
        # matched by none (checked all the same: without such a tool, every observer is asked).
        nobody = "\n" * (1 + longest)
        self._nobody = None if self._matching(nobody) else nobody
        self._unmatched: list[tuple[int, tuple[Observer, ...]]] | None = None   # learnt with the first class

    def handlers(self, key: Key, tool: str) -> tuple[Observer, ...]:
        """The handlers for a present tool: the observers whose globs match it are asked; the
        others answer as for any tool their globs do not match."""
        observers = self._observers
        owners = self._owners
        matched = {owners[number] for number in self._matching(tool)}
        if self._nobody is None or self._unmatched is None:
            answers = [(position, found) for position, observer in enumerate(observers)
                       if (found := answer(observer, key))]
            if self._nobody is not None:
                nobody_key = (key[0], self._nobody, key[2])
                self._unmatched = sorted([(position, found) for position, found in answers if position not in matched]
                                         + [(position, found) for position in matched
                                            if (found := answer(observers[position], nobody_key))])
            return tuple(chain.from_iterable(found for _, found in answers))
        parts = [(position, answer(observers[position], key)) for position in matched]
        parts += [(position, found) for position, found in self._unmatched if position not in matched]
        parts.sort(key=lambda part: part[0])   # in the observers' order
        return tuple(chain.from_iterable(found for _, found in parts))


def _present(tool: str) -> tuple[object, ...]:
    """The class of every present tool, where no observer reads tools through a glob."""
    return ()


def handlers_of(observers: Sequence[Any], key: Key) -> tuple[Observer, ...]:
    """Every handler the observers want for this routing key; a route may name several."""
    found: list[Observer] = []
    for observer in observers:
        handler = observer.route(*key)
        if handler is None:
            continue
        if type(handler) is tuple:
            found.extend(handler)
        else:
            found.append(handler)
    return tuple(found)


def answer(observer: Any, key: Key) -> tuple[Observer, ...]:
    """The handlers one observer wants for this routing key."""
    handler = observer.route(*key)
    return () if handler is None else handler if type(handler) is tuple else (handler,)
