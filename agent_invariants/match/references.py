"""Where references find their candidates (spec/v2-extensions.md §2; §10 points 3, 11, 12).

A rule whose match tree holds references owns one `Memory`. It is fed the calls and results of
the tools its `$from_result` references name, and keeps, per reference, only what resolving it can
read later: for each result (in trace order) the position, the keys of its call's args its
`where` reads, and what its steps give (the whole result when `where_result` must see it).
Results of other tools, results that failed (with `ok_only`, the default), result events without
a `result`, and with `call_index`, the results of the tool's other calls, are never kept.

`Memory.resolver(args, position, output)` then answers every reference of one subject (the call
under test at `position`):

- `$arg: p` -> the value at `p` in the subject's args; none when absent;
- `$from_output: p` -> the value at `p` in the final output; none without a terminal event,
  output or path;
- `$from_result` -> in five steps: the kept results strictly before the subject; the one of the
  `call_index`-th call of its tool (counted over the whole trace); those whose call's args match
  `where` (where `$arg` reads the subject: a join) and whose result matches `where_result`; the
  value at `path`, then `find` (first matching element), `select` (a path inside it) and
  `length`; every value left is a candidate. A result at which a step finds nothing adds none.

Work per checked call stays flat however many results a trace holds for the two common shapes: an
equality join (`where: {"id": {"$arg": "order"}}`) is looked up in an index of the kept results by
that key, and a reference without `where`, `where_result` or `call_index` keeps its candidates,
and their keys, as results come. Any other `where` or `where_result` is tried on each earlier
result of its tool for each call: results x calls, each try a step of `budget` (the MCP server's
bound on a check).
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any, NamedTuple

from msgspec import UNSET

from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.budget import spend
from agent_invariants.match.canonical import canonical_key
from agent_invariants.match.paths import NOT_FOUND, find
from agent_invariants.match.quick import Holds, quick
from agent_invariants.match.tree import Candidates, Node, Reference, Resolve, no_references, references_in
from agent_invariants.pairing import Calls, PairedCall
from agent_invariants.payloads import decoded

__all__ = ("NO_OUTPUT", "Memory")

NO_OUTPUT: Any = NOT_FOUND
"""The output of a trace with no terminal event, or a terminal event without `output`."""


class _Kept(NamedTuple):
    """One result kept for one reference."""

    position: int                 # of the result event
    args: Any                     # what `where` reads of the call's args (NOT_FOUND: none)
    value: Any                    # what `path`, `find`, `select`, `length` give; the whole result under `where_result`


class _Source:
    """One `$from_result` reference: its compiled operand and the results kept for it."""

    def __init__(self, operand: dict[str, Any]) -> None:
        self.operand = operand
        self.is_tool = compile_glob(operand["tool"])
        self.kept: list[_Kept] = []
        where = operand.get("where")
        self.where_keys = _literal_keys(where)
        self.join = _join_of(where)
        self.joined: dict[object, _Kept | list[_Kept]] = {}   # one result per key is the rule: no list
        # `where: {"id": {"$arg": "order"}}` alone is all in the index: no args kept, no test run
        self.join_only = self.join is not None and where is not None and len(where.value) == 1
        self.tests: dict[str, Holds] = {key: quick(operand[key]) for key in ("where", "where_result", "find")
                                        if key in operand}
        # Without call_index, and with a where and where_result that hold no reference (a $arg),
        # a result's candidate is the same for every subject: it is worked out once, kept in
        # order, and its key joins a set, so that "equal to some earlier result" costs one lookup
        # however many results there are (and no result is looked at again for each call).
        self.fixed = "call_index" not in operand and not any(
            next(references_in(operand[key]), None) is not None for key in ("where", "where_result") if key in operand)
        self.values = Candidates(keys=set())
        self.positions: list[int] = []
        # A join with nothing more to try or take out: each kept value before the subject is a candidate.
        self.plain_join = self.join_only and not operand.get("length") and not any(
            key in operand for key in ("where_result", "call_index", "find", "select"))
        self.ok_only: bool = operand["ok_only"]
        self.call_index: int | None = operand.get("call_index")
        self.glob: str = operand["tool"]
        self.shared: _Join | None = None   # a plain join's kept values, in the index it shares
        self.slot = 0                      # where its value is in each of that index's entries
        self._steps_of: dict[int, Any] = {}   # under `where_result`: a kept result's steps, by its position

    def keep(self, position: int, call_number: int, call_args: Any, result: Any) -> None:
        operand = self.operand
        if self.call_index is not None and call_number != self.call_index:
            return   # only the result of the `call_index`-th call is ever a candidate
        if self.fixed:
            if "where" in operand and not _holds(self.tests["where"], call_args, no_references):
                return
            if "where_result" in operand and not _holds(self.tests["where_result"], result, no_references):
                return
            value = _steps(operand, self.tests.get("find"), find(result, operand["path"]) if "path" in operand
                           else result)
            if value is not NOT_FOUND:
                self.values.add(value)
                self.positions.append(position)
            return
        if "where_result" in operand:
            value = result
        else:   # the steps read nothing of the subject: taken once here, not again for each call
            value = _steps(operand, self.tests.get("find"), find(result, operand["path"]) if "path" in operand
                           else result)
            if value is NOT_FOUND:
                return
        args = NOT_FOUND
        if "where" in operand and call_args is not NOT_FOUND and not self.join_only:
            keys = self.where_keys
            args = call_args if keys is None else {key: call_args[key] for key in keys if key in call_args}
        kept = _Kept(position, args, value)
        if self.join is None:
            self.kept.append(kept)
        elif isinstance(call_args, dict) and self.join[0] in call_args:
            key = canonical_key(call_args[self.join[0]])
            earlier = self.joined.get(key)
            if earlier is None:
                self.joined[key] = kept
            elif isinstance(earlier, list):
                earlier.append(kept)
            else:
                self.joined[key] = [earlier, kept]

    def candidates(self, subject_args: Any, position: int, resolve: Resolve) -> list[Any]:
        """The candidates for the subject at `position` with these args (a plain join's come from
        its shared index, which `_Resolver` asks directly)."""
        operand = self.operand
        if self.fixed:
            before = bisect_left(self.positions, position)
            return self.values if before == len(self.values) else Candidates(self.values[:before])
        if self.join is not None:
            wanted = find(subject_args, self.join[1]) if subject_args is not NOT_FOUND else NOT_FOUND
            if wanted is NOT_FOUND:
                return []
            bucket = self.joined.get(canonical_key(wanted))
            if bucket is None:
                return []
            pool: list[_Kept] = bucket if isinstance(bucket, list) else [bucket]
        else:
            pool = self.kept
        spend(len(pool))
        found: list[Any] = []
        for kept in pool:   # (with `call_index`, only that call's results were kept: `keep`)
            if kept.position >= position:
                break   # kept in trace order: the rest come after the subject
            if "where" in operand and not self.join_only and not _holds(self.tests["where"], kept.args, resolve):
                continue
            value = kept.value
            if "where_result" in operand:
                if not _holds(self.tests["where_result"], value, resolve):
                    continue
                value = self._stepped(kept)
            if value is not NOT_FOUND:
                found.append(value)
        return found

    def _stepped(self, kept: _Kept) -> Any:
        """What the steps after `where_result` give of a kept result: worked out the first time it
        passes, then kept (a `find` tried again for each call took calls x elements)."""
        found = self._steps_of.get(kept.position, _UNSTEPPED)
        if found is _UNSTEPPED:
            operand = self.operand
            found = self._steps_of[kept.position] = _steps(
                operand, self.tests.get("find"), find(kept.value, operand["path"]) if "path" in operand else kept.value)
        return found


class _Join:
    """The kept values of the plain joins (`where: {"id": {"$arg": "order"}}` alone, nothing taken
    out after `path`) on one key of one tool's calls: one index for all of them. A rule that
    compares two fields of one looked-up record names the lookup twice (`paid`, `currency`); each
    result is then indexed once, by its call's key, as `(position, value of each member...)`."""

    def __init__(self, first: _Source) -> None:
        assert first.join is not None
        self.key, self.subject_path = first.join   # the key of the call's args; the subject's path joined to it
        self.ok_only, self.glob, self.is_tool = first.ok_only, first.glob, first.is_tool
        self.paths: list[tuple[str, ...] | None] = []   # each member's `path` (None: the whole result)
        # when every path is one key: those keys (and as a set), and `take`, which reads them all
        # off an object result that holds them at once, in C (the usual case: no frame per member),
        # as a tuple of their values (the value, when there is one key: `one_key`)
        self.keys: tuple[str, ...] | None = ()
        self.key_set: frozenset[str] = frozenset()
        self.take: Callable[[dict[str, Any]], Any] | None = None
        self.one_key = False
        self.entries: dict[object, tuple[Any, ...] | list[tuple[Any, ...]]] = {}   # one per key is the rule
        # the subject last looked up (its args, its position) and its bucket: the members of one
        # join are resolved one after the other for the same subject, which is looked up once
        self._last: tuple[Any, int, Any] = (None, -1, None)
        # a key kept more than once, per member: its values so far with their equality keys, grown
        # as entries come, so that a subject after all of them (the usual one) neither copies nor
        # scans them (a key looked up 4,000 times made every later call compare with 4,000 values)
        self._pools: dict[tuple[int, int], _Pool] = {}

    def member(self, source: _Source) -> None:
        """Keep `source`'s values here too."""
        source.shared, source.slot = self, len(self.paths) + 1
        path = source.operand.get("path")
        self.paths.append(path)
        if self.keys is not None and path is not None and len(path) == 1:
            self.keys = (*self.keys, path[0])
            self.key_set, self.take, self.one_key = frozenset(self.keys), itemgetter(*self.keys), len(self.keys) == 1
        else:
            self.keys, self.take = None, None

    def keep(self, position: int, call_number: int, call_args: Any, result: Any) -> None:
        if not isinstance(call_args, dict) or self.key not in call_args:
            return
        if self.take is not None and result.__class__ is dict:
            held = result.keys()
            if held >= self.key_set:   # the usual result: every member has its value
                entry = (position, self.take(result)) if self.one_key else (position,) + self.take(result)
            elif held.isdisjoint(self.key_set):
                return   # no member has a value here
            else:
                entry = (position, *[result.get(key, NOT_FOUND) for key in self.keys])   # type: ignore[union-attr]
        else:
            entry = (position, *[result if path is None else find(result, path) for path in self.paths])
            if entry.count(NOT_FOUND) == len(self.paths):
                return   # no member has a value here
        key = call_args[self.key]
        if key.__class__ is not str:   # (a string is its own key: `canonical_key`, inlined)
            key = canonical_key(key)
        earlier = self.entries.get(key)
        if earlier is None:
            self.entries[key] = entry
        elif earlier.__class__ is list:
            earlier.append(entry)
        else:
            self.entries[key] = [earlier, entry]   # type: ignore[list-item]

    def values(self, slot: int, subject_args: Any, position: int) -> list[Any]:
        """The candidates of the member at `slot`: its values kept before `position` under the
        key the subject's args hold."""
        last_args, last_position, bucket = self._last
        if last_args is not subject_args or last_position != position:
            bucket = self._bucket(subject_args)
            self._last = (subject_args, position, bucket)
        if bucket is None:
            return []
        if bucket.__class__ is tuple:
            value = bucket[slot]
            return [value] if bucket[0] < position and value is not NOT_FOUND else []
        if bucket[-1][0] < position:   # every entry before the subject
            return self._pooled(bucket, slot)
        return [entry[slot] for entry in bucket if entry[0] < position and entry[slot] is not NOT_FOUND]

    def _pooled(self, bucket: list[tuple[Any, ...]], slot: int) -> Candidates:
        """The values of the member at `slot` in a bucket of several entries, as candidates with
        their equality keys, brought up to date with the entries added since last asked."""
        pool = self._pools.get((id(bucket), slot))
        if pool is None:
            pool = self._pools[id(bucket), slot] = _Pool(bucket)
        found = pool.found
        for entry in bucket[pool.seen:]:
            value = entry[slot]
            if value is not NOT_FOUND:
                found.add(value)
        pool.seen = len(bucket)
        return found

    def _bucket(self, subject_args: Any) -> tuple[Any, ...] | list[tuple[Any, ...]] | None:
        """The entries kept under the key the subject's args hold, or None."""
        wanted = find(subject_args, self.subject_path) if subject_args is not NOT_FOUND else NOT_FOUND
        return None if wanted is NOT_FOUND else self.entries.get(canonical_key(wanted))


class _Pool:
    """One member's values in one bucket of several entries, as candidates with their equality
    keys, and how many of the bucket's entries they take in. (It holds the bucket, whose id is
    its key: the id cannot be reused meanwhile.)"""

    __slots__ = ("bucket", "found", "seen")

    def __init__(self, bucket: list[tuple[Any, ...]]) -> None:
        self.bucket = bucket
        self.found = Candidates(keys=set())
        self.seen = 0


_UNSTEPPED: Any = object()
"""A kept result whose steps were not taken yet."""


def _steps(operand: dict[str, Any], finds: Holds | None, value: Any) -> Any:
    """`find`, `select` and `length` on the value at `path` (NOT_FOUND when a step fails)."""
    if value is NOT_FOUND:
        return NOT_FOUND
    if finds is not None:
        if not isinstance(value, list):
            return NOT_FOUND
        value = next((item for item in value if finds(item, no_references)), NOT_FOUND)
        if value is NOT_FOUND:
            return NOT_FOUND
    if "select" in operand:
        value = find(value, operand["select"])
        if value is NOT_FOUND:
            return NOT_FOUND
    if operand.get("length"):
        return len(value) if isinstance(value, list) else NOT_FOUND
    return value


def _holds(test: Holds, value: Any, resolve: Resolve) -> bool:
    return value is not NOT_FOUND and test(value, resolve)


def _literal_keys(where: Node | None) -> tuple[str, ...] | None:
    """The keys a literal-object `where` reads (the rest of the args need not be kept), or None
    when it may read anything."""
    if where is None or where.kind != "literal" or not isinstance(where.value, dict):
        return None
    return tuple(where.value)


def _join_of(where: Node | None) -> tuple[str, tuple[str, ...]] | None:
    """(key, path in the subject's args) of the first `"key": {"$arg": path}` of a literal
    `where`: results are then indexed by the value of that key."""
    if where is None or where.kind != "literal" or not isinstance(where.value, dict):
        return None
    for key, child in where.value.items():
        if child.kind == "reference" and child.value.name == "$arg":
            return key, child.value.operand
    return None


class Memory:
    """The results a rule's `$from_result` references may read, fed by the rule in trace order."""

    def __init__(self, tree: Node | None) -> None:
        self._sources: dict[int, _Source] = {}
        self._any = False
        alike: dict[object, _Source] = {}   # references written alike share one source: what it keeps, once
        for reference in references_in(tree):
            self._any = True
            if reference.name == "$from_result":
                written = canonical_key(reference.written)
                source = alike.get(written)
                if source is None:
                    source = alike[written] = _Source(reference.operand)
                self._sources[id(reference.operand)] = source
        self.globs = tuple(dict.fromkeys(source.operand["tool"] for source in self._sources.values()))
        # Calls are numbered (per glob) only for a `call_index`; then they are seen as they come,
        # and wait for their result by position. Otherwise what `where` reads of a call's args
        # comes with its result, from the check's pairing.
        self._numbers_calls = any("call_index" in source.operand for source in self._sources.values())
        self._calls: dict[str, int] = dict.fromkeys(self.globs, 0)   # calls seen per tool glob
        self._is_tool = {glob: compile_glob(glob) for glob in self.globs}
        self._waiting: dict[int, tuple[dict[str, int], Any]] = {}
        self._reads_args = any("where" in source.operand for source in self._sources.values())
        self._feeds = _feeds(alike.values())
        self._sources_of: dict[str, list[_Source | _Join]] = {}   # by a result's tool: the feeds of that tool

    def __bool__(self) -> bool:
        return bool(self._sources)

    @property
    def call_globs(self) -> tuple[str, ...]:
        """The globs of the tools whose calls the memory must see as they come (`route_call`):
        those of the references, when one counts calls (`call_index`); else none."""
        return self.globs if self._numbers_calls else ()

    def route_call(self, tool: str | Any) -> Callable[[Event, int], None] | None:
        """The handler of a `tool.call` with this tool: when a reference counts calls, the calls
        of a referenced tool are numbered and keep what `where` reads of their args; others are
        not looked at (the check's `pairing.Calls` pairs every call with its result, and hands
        the rule only the results of referenced tools, with their call's args: see
        `read_results`). `route_tools` of the rule names `call_globs`, so this is asked once per
        class of tools."""
        if self._numbers_calls and tool is not UNSET and any(is_tool(tool) for is_tool in self._is_tool.values()):
            return self.call
        return None

    def read_results(self, calls: Calls) -> None:
        """Ask the check's pairing for the results of the referenced tools' calls (with the
        call's args, when `where` reads them and calls are not numbered), and for the results
        without a call whose own tool is referenced."""
        calls.read_results(self.result, list(self.globs), orphans=True,
                           args=self._reads_args and not self._numbers_calls)

    def call(self, event: Event, index: int) -> None:
        """A `tool.call` of a referenced tool: numbered per glob it matches, waiting for its result."""
        tool = event.tool
        assert tool is not UNSET   # route_call sends only calls with a referenced tool here
        numbers = {}
        for glob, is_tool in self._is_tool.items():
            if is_tool(tool):
                numbers[glob] = self._calls[glob]
                self._calls[glob] += 1
        if event.call_id is UNSET:
            return   # no result will answer it
        args = decoded(event.args) if self._reads_args and event.args is not UNSET else NOT_FOUND
        self._waiting[index] = (numbers, args if isinstance(args, dict) else NOT_FOUND)

    def result(self, event: Event, index: int, call: PairedCall | None) -> None:
        """A `tool.result` of a referenced tool's call (or an orphan whose own `tool` is one): kept
        for each reference whose tool made the call."""
        numbers: dict[str, int]
        if call is None:
            tool, numbers, args = event.tool, _NO_NUMBERS, NOT_FOUND
        elif self._numbers_calls:
            tool = call.tool
            numbers, args = self._waiting.pop(call.position, (_NO_NUMBERS, NOT_FOUND))
        else:
            tool, numbers, args = call.tool, _NO_NUMBERS, NOT_FOUND
            if self._reads_args and call.args is not UNSET:
                args = decoded(call.args)
                if args.__class__ is not dict:
                    args = NOT_FOUND
        if tool is UNSET or event.result is UNSET:
            return
        sources = self._sources_of.get(tool)
        if sources is None:
            sources = self._sources_of_tool(tool)
        result = None
        for source in sources:
            if source.ok_only and event.ok is False:
                continue
            if result is None:
                result = (decoded(event.result),)
            source.keep(index, numbers.get(source.glob, -1), args, result[0])

    def _sources_of_tool(self, tool: str) -> list[_Source | _Join]:
        """The feeds whose tool glob matches `tool` (remembered for the next result)."""
        if len(self._sources_of) >= 4096:
            self._sources_of.clear()
        found = self._sources_of[tool] = [feed for feed in self._feeds if feed.is_tool(tool)]
        return found

    def resolver(self, args: Any, position: int, output: Any = NO_OUTPUT) -> Resolve:
        """The candidates of each reference for the subject at `position` whose args are `args`
        (NOT_FOUND when it has none), with the final output if known."""
        return _Resolver(self._sources, args, position, output)

    @property
    def references(self) -> bool:
        """Whether the tree holds any reference (`$arg` and `$from_output` included)."""
        return self._any


def _feeds(sources: Iterable[_Source]) -> list[_Source | _Join]:
    """What the results of the referenced tools are kept by: each reference, but the plain joins
    on the same key of the same tool's calls (and alike in `ok_only`), which share one `_Join`."""
    feeds: list[_Source | _Join] = []
    joins: dict[tuple[Any, ...], _Join] = {}
    for source in sources:
        if not source.plain_join:
            feeds.append(source)
            continue
        alike = (source.glob, source.ok_only, source.join)
        join = joins.get(alike)
        if join is None:
            join = joins[alike] = _Join(source)
            feeds.append(join)
        join.member(source)
    return feeds


_NO_NUMBERS: dict[str, int] = {}
"""The numbers of a call that is not counted (never changed)."""


class _Resolver:
    """The candidates of each reference for one subject, each found once. (An object, not a
    closure that passes itself on: a cycle would outlive the check, the collector being paused.)"""

    __slots__ = ("_args", "_found", "_output", "_position", "_sources")

    def __init__(self, sources: dict[int, _Source], args: Any, position: int, output: Any) -> None:
        self._sources, self._args, self._position, self._output = sources, args, position, output
        self._found: dict[int, list[Any]] = {}

    def __call__(self, reference: Reference) -> list[Any]:
        key = id(reference)
        found = self._found.get(key)
        if found is not None:
            return found
        name = reference.name
        if name == "$from_result":
            source = self._sources[id(reference.operand)]
            shared = source.shared   # a plain join's values: asked of its index directly (`candidates`, inlined)
            found = shared.values(source.slot, self._args, self._position) if shared is not None \
                else source.candidates(self._args, self._position, self)
        else:
            whole = self._args if name == "$arg" else self._output
            value = find(whole, reference.operand) if whole is not NOT_FOUND else NOT_FOUND
            found = [] if value is NOT_FOUND else [value]
        self._found[key] = found
        return found

