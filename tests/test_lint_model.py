"""A reference model of `lint --contract C [--strict]` (spec v2 §4 and §10 points 37-50), written
from the spec text alone, compared with the CLI on small random contracts; plus one hand-written
firing case and one near miss per code.

The model compares the multiset of (code, level, rule_ids) and the exit code. Pointers and messages
are checked only in the hand-written cases.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import examples

Rule = dict[str, Any]
Finding = tuple[str, str, tuple[str, ...]]

# The table of §4, in its row order (point 49 sorts by it); point 48 adds unrequired_subject.
CODES = (
    "required_but_forbidden", "count_contradiction", "order_contradiction", "self_precedence",
    "reference_to_forbidden", "dead_rule", "vacuous_distinct", "duplicate_rule", "shadowed_rule",
    "unschemaed_read", "v1_trap", "unrequired_subject",
)

# v1 §2.3: stop_is_final's default allowed_after.
DEFAULT_ALLOWED_AFTER = ["run.completed", "run.failed", "telemetry.*"]


# -- glob algebra (§4 "Glob algebra", point 38) ----------------------------------------------------

def normalise(glob: str) -> str:
    """Trim, then each run of wildcards becomes its `?`s followed by one `*` if it held any."""
    glob = glob.strip()
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob[i] in "*?":
            j = i
            while j < len(glob) and glob[j] in "*?":
                j += 1
            run = glob[i:j]
            out.append("?" * run.count("?") + ("*" if "*" in run else ""))
            i = j
        else:
            out.append(glob[i])
            i += 1
    return "".join(out)


def is_literal(glob: str) -> bool:
    """Point 38: literal when, trimmed, it holds neither `*` nor `?`."""
    return "*" not in glob and "?" not in glob


def subsumes(q: str, p: str) -> bool:
    """Point 38: normalised q matches normalised p read as symbols (`?` any symbol but `*`)."""
    qs, ps = normalise(q), normalise(p)
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(qs):
            result = j == len(ps)
        elif qs[i] == "*":
            result = go(i + 1, j) or (j < len(ps) and go(i, j + 1))
        elif j == len(ps):
            result = False
        elif qs[i] == "?":
            result = ps[j] != "*" and go(i + 1, j + 1)
        else:
            result = ps[j] == qs[i] and go(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return go(0, 0)


def matches(glob: str, name: str) -> bool:
    """A glob against a literal name (literal names hold no wildcard, so this is subsumes)."""
    return subsumes(glob, name)


def intersects(p: str, q: str) -> bool:
    """§4: exact; `*` absorbs any symbol of the other pattern."""
    ps, qs = normalise(p), normalise(q)
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(ps) and j == len(qs):
            result = True
        elif i < len(ps) and ps[i] == "*":
            result = go(i + 1, j) or (j < len(qs) and go(i, j + 1))
        elif j < len(qs) and qs[j] == "*":
            result = go(i, j + 1) or (i < len(ps) and go(i + 1, j))
        elif i == len(ps) or j == len(qs):
            result = False
        else:
            result = (ps[i] == qs[j] or "?" in (ps[i], qs[j])) and go(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return go(0, 0)


# -- requirements and bounds (points 38-40) --------------------------------------------------------

@dataclass(frozen=True)
class Requirement:
    """A rule asking for `n` calls of tools matching `glob`."""
    rule: int
    glob: str
    n: int
    counts_for_glob: bool  # tool_calls.min, call-matcher require_event.min, call_index + 1
    unnamed: bool = False  # a require_event naming no tool: calls without a name (no glob matches one) meet it


@dataclass(frozen=True)
class Bound:
    """An upper bound on calls (point 39)."""
    rule: int
    value: int
    glob: str  # coverage: `*` for event_budget
    per_tool: bool  # retry_limit group_by tool
    max_events: bool
    call_cap: bool  # tool_calls.max / call-matcher require_event.max / max_tool_calls (point 44)
    successful: bool = False  # tool_calls.max with count: successful bounds only S(t)
    unnamed: bool = False  # counts calls without a tool name too (event_budget, require_event.max naming no tool)


def is_call_matcher(match: dict[str, Any]) -> bool:
    return match.get("type") == "tool.call" and isinstance(match.get("tool"), str)


def requirements(rules: list[Rule]) -> list[Requirement]:
    found: list[Requirement] = []
    for i, rule in enumerate(rules):
        kind = rule["kind"]
        if kind == "tool_calls" and "min" in rule:
            found.append(Requirement(i, rule["tool"].strip(), rule["min"], True))
        elif kind == "require_event" and rule["match"].get("type") == "tool.call":
            # without `tool` it counts every call, named or not (`*` matches no missing tool, v1 §2.7)
            found.append(Requirement(i, rule["match"].get("tool", "*").strip(), rule.get("min", 1), True,
                                     unnamed="tool" not in rule["match"]))
        elif kind == "tool_order":
            # point 38: entries equal to t count towards R(t); a glob entry is a requirement on that
            # glob for point 48 only (point 40's list of glob requirements leaves tool_order out)
            entries = [t.strip() for t in rule["tools"]]
            for name in dict.fromkeys(entries):
                found.append(Requirement(i, name, entries.count(name), False))
        elif kind == "tool_args" and "call_index" in rule:
            found.append(Requirement(i, rule["tool"].strip(), rule["call_index"] + 1, True))
    if any(rule["kind"] == "allow_tools" and rule.get("severity", "error") == "error" for rule in rules):
        # an allow_tools fails every unnamed call (v1 §4.2): a passing trace meets them with named calls
        found = [Requirement(q.rule, q.glob, q.n, q.counts_for_glob) for q in found]
    return found


def bounds(rules: list[Rule]) -> list[Bound]:
    found: list[Bound] = []
    for i, rule in enumerate(rules):
        kind = rule["kind"]
        if kind == "tool_calls" and "max" in rule:
            successful = rule.get("count", "calls") == "successful"
            found.append(Bound(i, rule["max"], rule["tool"].strip(), False, False, not successful, successful))
        elif kind == "require_event" and "max" in rule:
            match = rule["match"]
            if set(match) <= {"type", "tool"} and matches(match.get("type", "*"), "tool.call"):
                found.append(Bound(i, rule["max"], match.get("tool", "*").strip(), False, False, True,
                                   unnamed="tool" not in match))
        elif kind == "event_budget":
            if "max_tool_calls" in rule:
                found.append(Bound(i, rule["max_tool_calls"], "*", False, False, True, unnamed=True))
            if "max_events" in rule:
                found.append(Bound(i, rule["max_events"], "*", False, True, False, unnamed=True))
        elif kind == "retry_limit" and rule.get("group_by") == "tool":
            found.append(Bound(i, rule["max_attempts"], rule.get("tool", "*").strip(), True, False, False))
    return found


class Model:
    """What lint must find in `rules` (already valid)."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.ids = [rule["id"] for rule in rules]
        self.error = [rule.get("severity", "error") == "error" for rule in rules]
        self.reqs = requirements(rules)
        self.bounds = bounds(rules)
        self.literals = sorted({q.glob for q in self.reqs if is_literal(q.glob)})
        self.findings: list[tuple[str, bool, tuple[int, ...]]] = []

    # R(t), the rule giving it, and R over error-severity rules only (point 37)
    def r(self, tool: str, only_error: bool = False) -> int:
        values = [q.n for q in self.reqs if q.glob == tool and (self.error[q.rule] or not only_error)]
        return max(values, default=0)

    def s(self, tool: str, only_error: bool = False) -> tuple[int, int]:
        """S(t), the largest `count: successful` min on t, and the first rule giving it."""
        found = [(-rule["min"], i) for i, rule in enumerate(self.rules)
                 if rule["kind"] == "tool_calls" and rule.get("count") == "successful" and "min" in rule
                 and rule["tool"].strip() == tool and (self.error[i] or not only_error)]
        if not found:
            return 0, -1
        n, i = min(found)
        return -n, i

    def giver(self, tool: str) -> int:
        best = self.r(tool)
        return min(q.rule for q in self.reqs if q.glob == tool and q.n == best)

    def add(self, code: str, error: bool, *rule_indexes: int) -> None:
        self.findings.append((code, error, tuple(sorted(set(rule_indexes)))))

    def pairs(self, code: str) -> set[frozenset[int]]:
        return {frozenset(ids) for c, _, ids in self.findings if c == code}

    def run(self) -> list[Finding]:
        self.required_but_forbidden()
        self.count_contradiction()
        self.order_contradiction()
        self.self_precedence()
        self.reference_to_forbidden()
        self.dead_rule()
        self.vacuous_distinct()
        duplicates = self.duplicate_rule()
        self.shadowed_rule(duplicates)
        self.unschemaed_read()
        self.v1_trap()
        self.unrequired_subject()
        return sorted(
            (code, "error" if error else "warning", tuple(self.ids[i] for i in ids))
            for code, error, ids in self.findings
        )

    # point 40: forbidding rules of a literal tool
    def forbidders(self, tool: str) -> list[int]:
        return [i for i, rule in enumerate(self.rules) if self.forbids(i, rule, tool)]

    def zero_bound(self, i: int, tool: str) -> bool:
        return any(b.rule == i and b.value == 0 and not b.successful and matches(b.glob, tool) for b in self.bounds)

    def forbids(self, i: int, rule: Rule, tool: str) -> bool:
        denied = rule["kind"] == "deny_tool" and matches(rule["tool"], tool)
        left_out = rule["kind"] == "allow_tools" and self.error[i] and not any(
            matches(p, tool) for p in rule["tools"])
        return denied or left_out or self.zero_bound(i, tool)

    def required_but_forbidden(self) -> None:
        for tool in self.literals:
            if self.r(tool) < 1:
                continue
            for f in self.forbidders(tool):
                self.add("required_but_forbidden", self.error[f] and self.r(tool, True) >= 1,
                         f, self.giver(tool))

    def count_holds(self, b: Bound, only_error: bool) -> tuple[bool, set[int]]:
        """Point 40's three conditions for bound b; the contributing rules."""
        reqs = [q for q in self.reqs if self.error[q.rule] or not only_error]
        if b.successful:
            needs = [(t, *self.s(t, only_error)) for t in self.literals if matches(b.glob, t)]
            needs = [(t, n, i) for t, n, i in needs if n >= 1]
            if sum(n for _, n, _ in needs) > b.value:
                return True, {i for _, _, i in needs}
            return False, set()
        covered = [t for t in self.literals if matches(b.glob, t) and self.r(t, only_error) >= 1]
        if b.per_tool:
            over = [t for t in covered if self.r(t, only_error) > b.value]
            return bool(over), {self.giver(t) for t in over}
        if sum(self.r(t, only_error) for t in covered) > b.value:
            return True, {self.giver(t) for t in covered}
        # spec ambiguous: when only single requirements exceed the bound, the product names one, the
        # first in contract order: a requirement on a non-literal glob the coverage subsumes, or
        # (against max_events) any require_event.min
        singles = [q.rule for q in reqs if q.counts_for_glob and not is_literal(q.glob)
                   and q.n > b.value and subsumes(b.glob, q.glob) and (b.unnamed or not q.unnamed)]
        if b.max_events:
            singles += [i for i, rule in enumerate(self.rules) if rule["kind"] == "require_event"
                        and (self.error[i] or not only_error) and rule.get("min", 1) > b.value]
        if singles:
            return True, {min(singles)}
        return False, set()

    def sum_holds(self, b: Bound, only_error: bool) -> bool:
        covered = [t for t in self.literals if matches(b.glob, t)]
        return not b.per_tool and not b.successful and sum(self.r(t, only_error) for t in covered) > b.value

    def count_contradiction(self) -> None:
        for b in self.bounds:
            if b.value < 1:
                continue
            held, contributors = self.count_holds(b, False)
            if held:
                error = self.error[b.rule] and self.count_holds(b, True)[0]
                self.add("count_contradiction", error, b.rule, *contributors)

    def order_edges(self) -> list[tuple[int, str, str]]:
        """Point 41: A→B rules."""
        edges: list[tuple[int, str, str]] = []
        for i, rule in enumerate(self.rules):
            if rule["kind"] not in ("precedence", "require_order"):
                continue
            before, after = rule["before"], rule["after"]
            if set(after) != {"type", "tool"} or after["type"] != "tool.call" or not is_call_matcher(before):
                continue
            a, b = before["tool"].strip(), after["tool"].strip()
            if a != b and is_literal(a) and is_literal(b):
                edges.append((i, a, b))
        return edges

    def order_contradiction(self) -> None:
        edges = self.order_edges()
        for x, (i, a, b) in enumerate(edges):
            for j, c, d in edges[x + 1:]:
                if (c, d) == (b, a):
                    error = self.error[i] and self.error[j] and self.r(a, True) + self.r(b, True) >= 1
                    self.add("order_contradiction", error, i, j)
        for k, rule in enumerate(self.rules):
            if rule["kind"] != "tool_order" or rule.get("mode") != "exact":
                continue
            entries = [t.strip() for t in rule["tools"]]
            for i, a, b in edges:
                if b in entries and not any(intersects(e, a) for e in entries[:entries.index(b)]):
                    self.add("order_contradiction", self.error[k] and self.error[i], k, i)

    def self_precedence(self) -> None:
        for i, rule in enumerate(self.rules):
            if rule["kind"] not in ("precedence", "require_order") or rule["before"] != rule["after"]:
                continue
            match = rule["after"]
            error = False
            if set(match) == {"type", "tool"} and is_call_matcher(match) and is_literal(match["tool"]):
                error = self.r(match["tool"].strip(), True) >= 1
            error = error or any(
                other["kind"] == "require_event" and other["match"] == match
                and other.get("min", 1) >= 1 and self.error[j]
                for j, other in enumerate(self.rules))
            self.add("self_precedence", self.error[i] and error, i)

    def reference_forbidders(self, glob: str, subject: str) -> list[int]:
        """Point 42: what makes a `$from_result` tool glob name a forbidden tool."""
        found: list[int] = []
        for f, rule in enumerate(self.rules):
            kind = rule["kind"]
            denied = kind == "deny_tool" and subsumes(rule["tool"], glob)
            left_out = kind == "allow_tools" and self.error[f] and not any(
                intersects(glob, p) for p in rule["tools"])
            capped = is_literal(glob) and self.zero_bound(f, glob)
            ordered_after = False
            if kind == "tool_order" and rule.get("mode") == "exact" and subject and is_literal(subject):
                entries = [t.strip() for t in rule["tools"]]
                if subject in entries:
                    last_subject = max(k for k, e in enumerate(entries) if e == subject)
                    ordered_after = all(k > last_subject for k, e in enumerate(entries) if intersects(e, glob))
            if denied or left_out or capped or ordered_after:
                found.append(f)
        return found

    def reference_to_forbidden(self) -> None:
        for i, rule in enumerate(self.rules):
            if rule["kind"] == "tool_args":
                subject = rule["tool"].strip()
                required = is_literal(subject) and self.r(subject, True) >= 1
            elif rule["kind"] == "output_match":
                subject, required = "", "when" not in rule
            else:
                continue
            for glob, in_any_of in references(rule.get("match")):
                for f in self.reference_forbidders(glob, subject):
                    error = required and not in_any_of and self.error[i] and self.error[f]
                    self.add("reference_to_forbidden", error, i, f)

    def dead_glob(self, rule: Rule) -> str | None:
        """Point 43: the glob of a rule whose every violation needs a matching call."""
        kind = rule["kind"]
        if kind in ("deny_tool", "require_approval", "retry_limit", "tool_result_required", "approval_bound",
                    "result_size", "failure_handled", "forbidden_when"):
            return str(rule.get("tool", "*"))
        if kind == "latency_budget" and "percentile" not in rule:
            return str(rule.get("tool", "*"))
        if kind == "tool_args" and "call_index" not in rule:
            return str(rule["tool"])
        if kind == "tool_calls" and "max" in rule and "min" not in rule and "matches_output_length" not in rule:
            return str(rule["tool"])
        return None

    def dead_rule(self) -> None:
        blocked = self.pairs("required_but_forbidden") | self.pairs("reference_to_forbidden")
        self.dead: set[int] = set()
        for d, rule in enumerate(self.rules):
            glob = self.dead_glob(rule)
            if glob is None:
                continue
            for f, other in enumerate(self.rules):
                if f == d or not self.error[f]:
                    continue
                if other["kind"] == "allow_tools":
                    forbids = not any(intersects(glob, p) for p in other["tools"])
                elif other["kind"] == "deny_tool" and rule["kind"] != "deny_tool":
                    forbids = subsumes(other["tool"], glob)
                else:
                    forbids = False
                if forbids and frozenset((f, d)) not in blocked:
                    self.add("dead_rule", False, f, d)
                    self.dead.add(d)

    def vacuous_distinct(self) -> None:
        for i, rule in enumerate(self.rules):
            if rule["kind"] != "tool_args" or "distinct" not in rule:
                continue
            glob = rule["tool"].strip()
            candidates = [
                b for b in self.bounds
                if (is_literal(glob) and not b.successful and matches(b.glob, glob))
                or (b.call_cap and subsumes(b.glob, glob))
            ]
            if candidates:
                smallest = min(candidates, key=lambda b: (b.value, b.rule))
                if smallest.value < 2:
                    self.add("vacuous_distinct", False, i, smallest.rule)

    def duplicate_rule(self) -> set[frozenset[int]]:
        pairs: set[frozenset[int]] = set()
        forms = [canonical(rule) for rule in self.rules]
        for j, form in enumerate(forms):
            first = forms.index(form)
            if first < j:
                self.add("duplicate_rule", False, first, j)
            pairs.update(frozenset((k, j)) for k in range(j) if forms[k] == form)
        return pairs

    def shadows(self, a: int, b: int) -> bool:
        """Point 45: every violation B can raise implies one of A's."""
        ra, rb = self.rules[a], self.rules[b]
        if ra["kind"] != rb["kind"]:
            return False
        kind = ra["kind"]
        if kind == "deny_tool":
            return subsumes(ra["tool"], rb["tool"])
        if kind == "deny_event":
            ma, mb = ra["match"], rb["match"]
            return set(ma) <= set(mb) and all(
                subsumes(ma[k], mb[k]) if k in ("type", "tool", "outcome_id") else ma[k] == mb[k]
                for k in ma)
        if kind == "tool_calls":
            return ("max" in ra and "max" in rb and "min" not in rb and "matches_output_length" not in rb
                    and ra["tool"].strip() == rb["tool"].strip()
                    and ra.get("count", "calls") == rb.get("count", "calls") and ra["max"] <= rb["max"])
        if kind == "retry_limit":
            return bool(ra.get("tool", "*").strip() == rb.get("tool", "*").strip()
                        and ra.get("group_by", "call_signature") == rb.get("group_by", "call_signature")
                        and ra["max_attempts"] <= rb["max_attempts"])
        if kind == "event_budget":
            metrics = ("max_events", "max_tool_calls", "max_tool_failures")
            return all(m in ra and ra[m] <= rb[m] for m in metrics if m in rb)
        return False

    def shadowed_rule(self, duplicates: set[frozenset[int]]) -> None:
        for a in range(len(self.rules)):
            for b in range(len(self.rules)):
                if a == b or frozenset((a, b)) in duplicates or (not self.error[a] and self.error[b]):
                    continue
                if self.shadows(a, b):
                    self.add("shadowed_rule", False, a, b)
        for i, rule in enumerate(self.rules):
            if rule["kind"] != "allow_tools":
                continue
            patterns = rule["tools"]
            for j, p in enumerate(patterns):
                for k, q in enumerate(patterns):
                    if k != j and subsumes(q, p) and (not subsumes(p, q) or k < j):
                        self.add("shadowed_rule", False, i)
                        break

    def unschemaed_read(self) -> None:
        required = set()
        for rule in self.rules:
            if rule["kind"] == "output_schema":
                required |= required_paths(rule["schema"])
        for i, rule in enumerate(self.rules):
            paths = list(condition_paths(rule.get("when")))
            if "matches_output_length" in rule:
                paths.append(rule["matches_output_length"])
            for path in dict.fromkeys(paths):
                if path not in required:
                    self.add("unschemaed_read", False, i)

    def v1_trap(self) -> None:
        for i, rule in enumerate(self.rules):
            if rule["kind"] == "allow_tools":
                for pattern in rule["tools"]:
                    if normalise(pattern) == "*":
                        self.add("v1_trap", False, i)
            elif rule["kind"] == "require_approval" and "scope" in rule:
                self.add("v1_trap", False, i)
            elif rule["kind"] == "stop_is_final":
                stop = rule.get("stop_type", "control.stop")
                after = rule.get("allowed_after", DEFAULT_ALLOWED_AFTER)
                if not any(subsumes(p, stop) for p in after):
                    self.add("v1_trap", False, i)

    def call_required(self, glob: str) -> bool:
        # spec silent on what "a requirement on a glob" is here: a glob entry of a tool_order counts
        return any(matches(glob, t) and self.r(t) >= 1 for t in self.literals) or any(
            q.n >= 1 and not q.unnamed and subsumes(glob, q.glob) for q in self.reqs)

    def unrequired_subject(self) -> None:
        for i, rule in enumerate(self.rules):
            if i in self.dead:
                continue
            kind = rule["kind"]
            if kind == "tool_args" and "call_index" not in rule:
                required = self.call_required(rule["tool"].strip())
            elif kind in ("approval_bound", "result_size") or (kind == "latency_budget" and "percentile" not in rule):
                required = self.call_required(rule.get("tool", "*").strip())
            elif kind == "precedence":
                after = rule["after"]
                literal = (set(after) == {"type", "tool"} and is_call_matcher(after)
                           and is_literal(after["tool"].strip()))
                required = (literal and self.r(after["tool"].strip()) >= 1) or any(
                    other["kind"] == "require_event" and other["match"] == after and other.get("min", 1) >= 1
                    for other in self.rules)
            else:
                continue
            if not required:
                self.add("unrequired_subject", False, i)


def references(node: Any, in_any_of: bool = False) -> Iterator[tuple[str, bool]]:
    """The `$from_result` tool globs of a match tree, and whether each sits in an `$any_of`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$from_result":
                yield value["tool"].strip(), in_any_of
            else:
                yield from references(value, in_any_of or key == "$any_of")
    elif isinstance(node, list):
        for item in node:
            yield from references(item, in_any_of)


def condition_paths(condition: Any) -> Iterator[str]:
    if not isinstance(condition, dict):
        return
    if "path" in condition:   # a JSON Pointer (`/x/y`) read as the dot path it names (`x.y`)
        path = condition["path"]
        yield ".".join(step.replace("~1", "/").replace("~0", "~") for step in path[1:].split("/")) \
            if path.startswith("/") else path
    for key in ("any_of", "all_of"):
        for branch in condition.get(key, []):
            yield from condition_paths(branch)


def required_paths(schema: dict[str, Any], prefix: str = "") -> set[str]:
    """Point 46 for object schemas: dot paths every valid output must hold."""
    found: set[str] = set()
    for key in schema.get("required", []):
        sub = schema.get("properties", {}).get(key)
        if sub is None:
            continue
        path = f"{prefix}{key}"
        found.add(path)
        found |= required_paths(sub, path + ".")
    return found


KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "tool_calls": {"count": "calls"},
    "require_event": {"min": 1},
    "retry_limit": {"tool": "*", "group_by": "call_signature"},
    "tool_order": {"mode": "subsequence"},
    "precedence": {"scope": "each"},
    "tool_args": {"mode": "subset"},
    "stop_is_final": {"stop_type": "control.stop", "allowed_after": DEFAULT_ALLOWED_AFTER},
}


def canonical(rule: Rule) -> str:
    """Point 44: defaults filled in, id/description/severity dropped."""
    body = {k: v for k, v in rule.items() if k not in ("id", "description", "severity")}
    body = {**KIND_DEFAULTS.get(rule["kind"], {}), **body}
    return json.dumps(trimmed(body), sort_keys=True)


def trimmed(node: Any) -> Any:
    if isinstance(node, str):
        return node.strip()
    if isinstance(node, dict):
        return {k: trimmed(v) for k, v in node.items()}
    if isinstance(node, list):
        return [trimmed(v) for v in node]
    return node


def model(rules: list[Rule]) -> list[Finding]:
    return Model(rules).run()


def expected_exit(found: list[Finding], strict: bool) -> int:
    """Point 50: 1 on an error-level finding, or on any finding with --strict; else 0."""
    if any(level == "error" for _, level, _ in found) or (strict and found):
        return 1
    return 0


# -- running the CLI -------------------------------------------------------------------------------

Cli = Callable[..., Any]


def lint(cli: Cli, tmp_path: Path, rules: list[Rule], *flags: str, version: int = 2) -> tuple[int, dict[str, Any]]:
    document = {"version": version, "name": "spec", "rules": rules}
    (tmp_path / "c.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    result = cli("lint", "--contract", "c.json", "--format", "json", *flags)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def observed(report: dict[str, Any]) -> list[Finding]:
    return sorted((f["code"], f["level"], tuple(f["rule_ids"])) for f in report["findings"])


def codes(report: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    return [(f["code"], f["level"], f["rule_ids"]) for f in report["findings"]]


def tc(rule_id: str, tool: str, **fields: Any) -> Rule:
    return {"id": rule_id, "kind": "tool_calls", "tool": tool, **fields}


def deny(rule_id: str, tool: str, **fields: Any) -> Rule:
    return {"id": rule_id, "kind": "deny_tool", "tool": tool, **fields}


def allow(rule_id: str, *tools: str, **fields: Any) -> Rule:
    return {"id": rule_id, "kind": "allow_tools", "tools": list(tools), **fields}


def call(tool: str) -> dict[str, str]:
    return {"type": "tool.call", "tool": tool}


def order(rule_id: str, kind: str, before: str, after: str, **fields: Any) -> Rule:
    return {"id": rule_id, "kind": kind, "before": call(before), "after": call(after), **fields}


def from_result(tool: str) -> dict[str, Any]:
    return {"$from_result": {"tool": tool}}


# -- hand-written cases: one FIRE and one NEAR-MISS per code ----------------------------------------

@dataclass(frozen=True)
class Case:
    name: str
    spec: str  # the spec words the case checks
    rules: list[Rule]
    expected: list[tuple[str, str, list[str]]]  # in report order
    version: int = 2


CASES = [
    # required_but_forbidden
    Case("rbf_fire", "§4 example: deny_tool shell.* with tool_calls shell.exec min 1",
         [deny("no-shell", "shell.*"), tc("must-exec", "shell.exec", min=1)],
         [("required_but_forbidden", "error", ["no-shell", "must-exec"])]),
    Case("rbf_near", "§4 example: without either rule lint exits 0 (deny b.* leaves a alone)",
         [deny("no-b", "b.*"), tc("must-a", "a", min=1)], []),
    Case("rbf_allow", "point 40: an error-severity allow_tools none of whose patterns matches t",
         [allow("only-b", "b"), tc("must-a", "a", min=1)],
         [("required_but_forbidden", "error", ["only-b", "must-a"])]),
    Case("rbf_cap0", "point 40: a covering bound of 0 gives required_but_forbidden, no count_contradiction",
         [{"id": "must-a", "kind": "require_event", "match": call("a")}, tc("no-a", "a*", max=0)],
         [("required_but_forbidden", "error", ["must-a", "no-a"])]),
    Case("rbf_warning_level", "point 37: resting on a warning-severity rule, the code is level warning",
         [deny("no-a", "a", severity="warning"), tc("must-a", "a", min=1)],
         [("required_but_forbidden", "warning", ["no-a", "must-a"])]),
    Case("rbf_order_entry", "point 38: entries of a tool_order count towards R(t)",
         [{"id": "flow", "kind": "tool_order", "tools": ["a", "b"]}, deny("no-b", "b")],
         [("required_but_forbidden", "error", ["flow", "no-b"])]),
    Case("rbf_warn_allow_near", "point 40: only an error-severity allow_tools forbids",
         [allow("only-b", "b", severity="warning"), tc("must-a", "a", min=1)], []),
    # count_contradiction
    Case("cc_fire", "point 40: the sum of R(t) over the literal tools a bound covers exceeds it",
         [tc("two-a", "a", min=2), tc("one-b", "b", min=1), {"id": "budget", "kind": "event_budget",
                                                               "max_tool_calls": 2}],
         [("count_contradiction", "error", ["two-a", "one-b", "budget"])]),
    Case("cc_near", "point 40: a sum equal to the bound is no contradiction",
         [tc("one-a", "a", min=1), tc("one-b", "b", min=1), {"id": "budget", "kind": "event_budget",
                                                               "max_tool_calls": 2}], []),
    Case("cc_call_index", "§4: call_index ≥ max",
         [{"id": "third", "kind": "tool_args", "tool": "a", "call_index": 2, "match": {"x": 1}},
          tc("two", "a", max=2)],
         [("count_contradiction", "error", ["third", "two"])]),
    Case("cc_retry_per_tool_near", "point 39: retry_limit group_by tool compares tool by tool, never a sum",
         [tc("one-a", "a", min=1), tc("one-b", "b", min=1),
          {"id": "retry", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"}], []),
    Case("cc_retry_per_tool", "point 39: R(t) > max_attempts for one tool",
         [tc("two-a", "a", min=2), {"id": "retry", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"}],
         [("count_contradiction", "error", ["two-a", "retry"])]),
    Case("cc_max_events", "point 40: any require_event.min exceeds max_events",
         [{"id": "msgs", "kind": "require_event", "match": {"type": "agent.message"}, "min": 3},
          {"id": "budget", "kind": "event_budget", "max_events": 2}],
         [("count_contradiction", "error", ["msgs", "budget"])]),
    Case("cc_glob_requirement", "point 40: a requirement on a glob h exceeds a bound whose coverage subsumes h",
         [tc("three-a", "a*", min=3), tc("two", "*", max=2)],
         [("count_contradiction", "error", ["three-a", "two"])]),
    Case("cc_other_key_near", "point 39: a matcher with any other key (ok) bounds nothing",
         [tc("two-a", "a", min=2), {"id": "ok1", "kind": "require_event",
                                     "match": {"type": "tool.call", "tool": "a", "ok": True}, "min": 0, "max": 1}],
         []),
    # order_contradiction
    Case("oc_fire", "point 41: A→B and B→A with R(A)+R(B) ≥ 1 is an error",
         [order("ab", "require_order", "a", "b"), order("ba", "require_order", "b", "a"), tc("must-a", "a", min=1)],
         [("order_contradiction", "error", ["ab", "ba"])]),
    Case("oc_unrequired_warning", "point 41: A→B with B→A and nothing required is a warning",
         [order("ab", "require_order", "a", "b"), order("ba", "require_order", "b", "a")],
         [("order_contradiction", "warning", ["ab", "ba"])]),
    Case("oc_near", "point 41: the after must be exactly {type, tool}: an extra key on after does not count",
         [order("ab", "require_order", "a", "b"),
          {"id": "ba", "kind": "require_order", "before": call("b"),
           "after": {"type": "tool.call", "tool": "a", "ok": True}}, tc("must-a", "a", min=1)], []),
    Case("oc_exact_order", "point 41: an exact tool_order with no entry intersecting A before B, with A→B",
         [{"id": "flow", "kind": "tool_order", "tools": ["b", "a"], "mode": "exact"},
          order("ab", "require_order", "a", "b")],
         [("order_contradiction", "error", ["flow", "ab"])]),
    Case("oc_exact_order_near", "point 41: an entry before B that intersects A (a*) removes the contradiction",
         [{"id": "flow", "kind": "tool_order", "tools": ["a*", "b"], "mode": "exact"},
          order("ab", "require_order", "a", "b")], []),
    # self_precedence
    Case("sp_fire", "point 42: before = after on a required literal call is an error",
         [order("aa", "precedence", "a", "a"), tc("must-a", "a", min=1)],
         [("self_precedence", "error", ["aa"])]),
    Case("sp_warning", "§4: self_precedence is a warning when R = 0",
         [order("aa", "require_order", "a", "a")], [("self_precedence", "warning", ["aa"])]),
    Case("sp_near", "§4: before ≠ after is no self_precedence",
         [order("ab", "require_order", "a", "b")], []),
    # reference_to_forbidden
    Case("rtf_fire", "point 42: $from_result on a denied tool; subject required, not in $any_of → error",
         [{"id": "ref", "kind": "tool_args", "tool": "b", "call_index": 0, "match": {"x": from_result("a")}},
          deny("no-a", "a")],
         [("reference_to_forbidden", "error", ["ref", "no-a"])]),
    Case("rtf_any_of_warning", "point 42: inside an $any_of branch the level is warning",
         [{"id": "ref", "kind": "tool_args", "tool": "b", "call_index": 0,
           "match": {"x": {"$any_of": [from_result("a"), 1]}}}, deny("no-a", "a")],
         [("reference_to_forbidden", "warning", ["ref", "no-a"])]),
    Case("rtf_near", "point 42: a deny_tool that does not subsume the glob (a vs a*) forbids nothing",
         [{"id": "ref", "kind": "tool_args", "tool": "b", "call_index": 0, "match": {"x": from_result("a*")}},
          deny("no-a", "a")], []),
    Case("rtf_exact_order", "point 42: an exact order that puts every g entry after the subject",
         [{"id": "flow", "kind": "tool_order", "tools": ["b", "a"], "mode": "exact"},
          {"id": "ref", "kind": "tool_args", "tool": "b", "call_index": 0, "match": {"x": from_result("a")}}],
         [("reference_to_forbidden", "error", ["flow", "ref"])]),
    # dead_rule
    Case("dead_fire", "point 43: a tool_calls with max only on a tool an error deny_tool subsumes",
         [deny("no-a", "a*"), tc("cap-a", "ab", max=3)], [("dead_rule", "warning", ["no-a", "cap-a"])]),
    Case("dead_near", "point 43: a tool_calls with min on a denied tool is not dead (it fires)",
         [deny("no-a", "a*"), tc("cap-a", "ab*", min=1, max=3)], []),
    Case("dead_allow", "§4: the glob intersects no pattern of an error-severity allow_tools",
         [allow("only-b", "b"), {"id": "appr", "kind": "require_approval", "tool": "a"}],
         [("dead_rule", "warning", ["only-b", "appr"])]),
    Case("dead_warning_deny_near", "point 43: the forbidding deny_tool must have severity error",
         [deny("no-a", "a*", severity="warning"), tc("cap-a", "ab", max=3)], []),
    # vacuous_distinct
    Case("vd_fire", "§4: distinct on a tool with max < 2",
         [{"id": "uniq", "kind": "tool_args", "tool": "a", "distinct": ["x"]}, tc("once", "a", max=1),
          tc("must-a", "a", min=1)],
         [("vacuous_distinct", "warning", ["uniq", "once"])]),
    Case("vd_near", "§4: distinct on a tool with max 2 is fine",
         [{"id": "uniq", "kind": "tool_args", "tool": "a", "distinct": ["x"]}, tc("twice", "a", max=2),
          tc("must-a", "a", min=1)], []),
    # duplicate_rule
    Case("dup_fire", "point 44: defaults filled in (count: calls), id/description/severity ignored",
         [tc("one", "a", max=1), tc("two", " a ", max=1, count="calls", severity="warning", description="d")],
         [("duplicate_rule", "warning", ["one", "two"])]),
    Case("dup_near", "point 44: a different count is no duplicate (nor shadowed: count differs)",
         [tc("one", "a", max=1), tc("two", "a", max=1, count="successful")], []),
    # shadowed_rule
    Case("shadow_fire", "point 45: deny_tool whose glob subsumes another's",
         [deny("wide", "a*"), deny("narrow", "ab")], [("shadowed_rule", "warning", ["wide", "narrow"])]),
    Case("shadow_severity_near", "point 45: A's severity must be ≥ B's",
         [deny("wide", "a*", severity="warning"), deny("narrow", "ab")], []),
    Case("shadow_cap", "point 45 / README example: a smaller max on the same glob",
         [tc("one", "a", max=1), tc("two", "a", max=2)], [("shadowed_rule", "warning", ["one", "two"])]),
    Case("shadow_cap_min_near", "point 45: a B that sets a min is not shadowed",
         [tc("one", "a", max=1), tc("two", "a", min=1, max=2)], []),
    Case("shadow_allow_pattern", "point 45: a pattern subsumed by another of the same allow_tools list",
         [allow("known", "a*", "ab")], [("shadowed_rule", "warning", ["known"])]),
    Case("shadow_event_budget", "point 45: the same event_budget metric, A's max ≤ B's",
         [{"id": "small", "kind": "event_budget", "max_events": 5},
          {"id": "big", "kind": "event_budget", "max_events": 9}],
         [("shadowed_rule", "warning", ["small", "big"])]),
    # unschemaed_read
    Case("unschemaed_fire", "point 46: with no output_schema, every condition path warns",
         [{"id": "rw", "kind": "required_when", "tool": "a", "when": {"path": "x", "non_empty": True}}],
         [("unschemaed_read", "warning", ["rw"])]),
    Case("unschemaed_one_per_path", "point 46: one warning per (rule, path), the path however it is written",
         [{"id": "rw", "kind": "required_when", "tool": "a", "when": {"any_of": [
             {"path": "x.y", "equals": 1}, {"path": "/x/y", "equals": 2}]}}],
         [("unschemaed_read", "warning", ["rw"])]),
    Case("unschemaed_near", "point 46: a path the output_schema requires",
         [{"id": "rw", "kind": "required_when", "tool": "a", "when": {"path": "x", "non_empty": True}},
          {"id": "shape", "kind": "output_schema",
           "schema": {"type": "object", "required": ["x"], "properties": {"x": {"type": "array"}}}}], []),
    Case("unschemaed_length", "point 46: a matches_output_length path not required",
         [tc("len", "a", matches_output_length="y"),
          {"id": "shape", "kind": "output_schema",
           "schema": {"type": "object", "properties": {"y": {"type": "array"}}}}],
         [("unschemaed_read", "warning", ["len"])]),
    # v1_trap
    Case("trap_allow_star", "point 47: an allow_tools pattern whose normalised form is * (** too)",
         [allow("any", "**")], [("v1_trap", "warning", ["any"])]),
    Case("trap_scope", "§4: require_approval with scope",
         [{"id": "appr", "kind": "require_approval", "tool": "a", "scope": "s"}],
         [("v1_trap", "warning", ["appr"])]),
    Case("trap_stop_default", "point 47: the default allowed_after omits control.stop",
         [{"id": "stop", "kind": "stop_is_final"}], [("v1_trap", "warning", ["stop"])], version=1),
    Case("trap_stop_near", "point 47: an allowed_after with a pattern subsuming the stop type",
         [{"id": "stop", "kind": "stop_is_final", "allowed_after": ["control.*", "run.completed"]}], [],
         version=1),
    # unrequired_subject
    Case("unreq_fire", "point 48: a tool_args whose subject nothing requires",
         [{"id": "args", "kind": "tool_args", "tool": "a", "match": {"x": 1}}],
         [("unrequired_subject", "warning", ["args"])]),
    Case("unreq_near", "point 48: a requirement on a glob the subject subsumes (a* over ab)",
         [{"id": "args", "kind": "tool_args", "tool": "a*", "match": {"x": 1}}, tc("must-ab", "ab", min=1)], []),
    Case("unreq_precedence", "point 48: a precedence whose after is required is fine",
         [order("ab", "precedence", "a", "b"), {"id": "must-b", "kind": "require_event", "match": call("b")}], []),
    # more rows of the table and of points 39-48
    Case("dup_point44_example", "point 44: retry_limit {max_attempts: 2} equals the same rule with tool: \"*\"",
         [{"id": "r1", "kind": "retry_limit", "max_attempts": 2},
          {"id": "r2", "kind": "retry_limit", "max_attempts": 2, "tool": "*"}],
         [("duplicate_rule", "warning", ["r1", "r2"])]),
    Case("vd_glob_budget", "point 44: an event_budget.max_tool_calls bounds any glob",
         [{"id": "uniq", "kind": "tool_args", "tool": "a*", "distinct": ["x"]},
          {"id": "budget", "kind": "event_budget", "max_tool_calls": 1}, tc("must", "ab", min=1)],
         [("vacuous_distinct", "warning", ["uniq", "budget"])]),
    Case("vd_successful_near", "point 39/44: a count: successful max does not bound calls",
         [{"id": "uniq", "kind": "tool_args", "tool": "a", "distinct": ["x"]},
          tc("once", "a", max=1, count="successful"), tc("must-a", "a", min=1)], []),
    Case("cc_successful", "point 39: a count: successful max bounds S(t), the largest successful min",
         [tc("two-ok", "a", min=2, count="successful"), tc("one-ok", "a*", max=1, count="successful")],
         [("count_contradiction", "error", ["two-ok", "one-ok"])]),
    Case("cc_successful_near", "point 39: a count: successful max does not bound plain calls",
         [tc("two", "a", min=2), tc("one-ok", "a*", max=1, count="successful")], []),
    Case("sp_event_matcher", "point 42: an equal matcher with require_event.min ≥ 1 makes it an error",
         [{"id": "msg", "kind": "require_order", "before": {"type": "agent.message"},
           "after": {"type": "agent.message"}},
          {"id": "need", "kind": "require_event", "match": {"type": "agent.message"}}],
         [("self_precedence", "error", ["msg"])]),
    Case("oc_before_extra_key", "point 41: extra keys on before are allowed (they only make it stricter)",
         [{"id": "ab", "kind": "require_order", "before": {"type": "tool.call", "tool": "a", "ok": True},
           "after": call("b")}, order("ba", "require_order", "b", "a"), tc("must-b", "b", min=1)],
         [("order_contradiction", "error", ["ab", "ba"])]),
    Case("oc_warning_requirer", "point 37: the rule that makes a tool required counts for the level",
         [order("ab", "require_order", "a", "b"), order("ba", "require_order", "b", "a"),
          tc("must-a", "a", min=1, severity="warning")],
         [("order_contradiction", "warning", ["ab", "ba"])]),
    Case("rtf_allow", "point 42: a glob that intersects no pattern of an error-severity allow_tools",
         [allow("only-b", "b"), {"id": "ref", "kind": "tool_args", "tool": "b", "call_index": 0,
                                  "match": {"x": from_result("a*")}}],
         [("reference_to_forbidden", "error", ["only-b", "ref"])]),
    Case("rtf_output_match", "point 42: an output_match without `when` is a required subject",
         [deny("no-a", "a"), {"id": "out", "kind": "output_match", "match": {"total": from_result("a")}}],
         [("reference_to_forbidden", "error", ["no-a", "out"])]),
    Case("rtf_output_match_when", "point 42: with `when` the output_match subject is not required: warning",
         [deny("no-a", "a"), {"id": "out", "kind": "output_match", "match": {"total": from_result("a")},
                              "when": {"path": "x", "non_empty": True},
                              }, {"id": "shape", "kind": "output_schema",
                                  "schema": {"type": "object", "required": ["x"], "properties": {"x": {}}}}],
         [("reference_to_forbidden", "warning", ["no-a", "out"])]),
    Case("dead_pair_gives_rbf_only", "point 43: a pair that gives required_but_forbidden gives no dead_rule",
         [deny("no-a", "a"), {"id": "third", "kind": "tool_args", "tool": "a", "call_index": 0, "match": {"x": 1}}],
         [("required_but_forbidden", "error", ["no-a", "third"])]),
    Case("dead_no_unrequired", "point 48: a rule with a dead_rule finding gets no unrequired_subject",
         [deny("no-a", "a*"), {"id": "size", "kind": "result_size", "tool": "ab", "max_bytes": 10}],
         [("dead_rule", "warning", ["no-a", "size"])]),
    Case("dead_forbidden_when", "point 43: forbidden_when is judged on calls",
         [allow("only-b", "b"), {"id": "fw", "kind": "forbidden_when", "tool": "a",
                                  "when": {"path": "x", "non_empty": True}},
          {"id": "shape", "kind": "output_schema",
           "schema": {"type": "object", "required": ["x"], "properties": {"x": {}}}}],
         [("dead_rule", "warning", ["only-b", "fw"])]),
    Case("dead_required_when_near", "point 43: a required_when on a denied tool is not dead",
         [deny("no-a", "a"), {"id": "rw", "kind": "required_when", "tool": "a",
                              "when": {"path": "x", "non_empty": True}},
          {"id": "shape", "kind": "output_schema",
           "schema": {"type": "object", "required": ["x"], "properties": {"x": {}}}}], []),
    Case("shadow_deny_event", "point 45: A's matcher keys a subset of B's, glob keys subsuming",
         [{"id": "wide", "kind": "deny_event", "match": {"tool": "a*"}},
          {"id": "narrow", "kind": "deny_event", "match": {"type": "tool.call", "tool": "ab"}}],
         [("shadowed_rule", "warning", ["wide", "narrow"])]),
    Case("shadow_deny_event_near", "point 45: a B without A's key is not shadowed",
         [{"id": "wide", "kind": "deny_event", "match": {"type": "tool.call", "tool": "a*"}},
          {"id": "narrow", "kind": "deny_event", "match": {"tool": "ab"}}], []),
    Case("unschemaed_nested", "point 46: any_of/all_of paths count, one warning per (rule, path)",
         [{"id": "rw", "kind": "required_when", "tool": "a",
           "when": {"any_of": [{"path": "x", "non_empty": True}, {"path": "y", "non_empty": True}]}},
          tc("must-a", "a", min=0)],
         [("unschemaed_read", "warning", ["rw"]), ("unschemaed_read", "warning", ["rw"])]),
    Case("unschemaed_nested_required", "point 46: a nested path required key by key",
         [{"id": "rw", "kind": "required_when", "tool": "a", "when": {"path": "x.z", "non_empty": True}},
          {"id": "shape", "kind": "output_schema",
           "schema": {"type": "object", "required": ["x"],
                      "properties": {"x": {"type": "object", "required": ["z"], "properties": {"z": {}}}}}}], []),
    Case("trap_custom_stop", "point 47: a stop_type that allowed_after does not subsume",
         [{"id": "stop", "kind": "stop_is_final", "stop_type": "halt", "allowed_after": ["control.*"]}],
         [("v1_trap", "warning", ["stop"])]),
    Case("trap_allow_near", "point 47: an allow_tools pattern a* is no trap",
         [allow("some", "a*")], []),
    Case("unreq_latency", "point 48: a latency_budget without percentile whose calls nothing requires",
         [{"id": "fast", "kind": "latency_budget", "tool": "a", "max_ms": 100}],
         [("unrequired_subject", "warning", ["fast"])]),
    Case("unreq_latency_percentile_near", "point 48: latency_budget with percentile is exempt",
         [{"id": "fast", "kind": "latency_budget", "tool": "a", "max_ms": 100, "percentile": 95}], []),
    Case("unreq_failure_handled_near", "point 48: failure_handled is exempt",
         [{"id": "fh", "kind": "failure_handled", "tool": "a", "within_events": 2}], []),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_hand_written_case(cli: Cli, tmp_path: Path, case: Case) -> None:
    """Each case states its spec sentence; the model must agree with the expectation too."""
    exit_code, report = lint(cli, tmp_path, case.rules, version=case.version)
    assert codes(report) == case.expected
    assert exit_code == (1 if any(level == "error" for _, level, _ in case.expected) else 0)
    assert model(case.rules) == sorted((c, lv, tuple(ids)) for c, lv, ids in case.expected)


# -- the property test -----------------------------------------------------------------------------

GLOBS = ["a", "b", "ab", "a*", "*", "b?", "?b"]
LITERALS = ["a", "b", "ab"]
PATHS = ["x", "y", "x.z"]

glob_st = st.sampled_from(GLOBS)
literal_st = st.sampled_from(LITERALS)
small = st.integers(0, 3)


@st.composite
def tool_calls_st(draw: st.DrawFn) -> Rule:
    rule: Rule = {"kind": "tool_calls", "tool": draw(glob_st)}
    shape = draw(st.sampled_from(["min", "max", "both", "length"]))
    if shape in ("min", "both"):
        rule["min"] = draw(small)
    if shape in ("max", "both"):
        rule["max"] = draw(st.integers(rule.get("min", 0), 3))
    if shape == "length":
        rule["matches_output_length"] = draw(st.sampled_from(PATHS))
    elif draw(st.integers(0, 4)) == 0:
        rule["count"] = "successful"
    return rule


@st.composite
def require_event_st(draw: st.DrawFn) -> Rule:
    match = draw(st.sampled_from([
        call(draw(glob_st)), {"type": "tool.call"}, {"tool": draw(glob_st)}, {"type": "agent.message"},
    ]))
    rule: Rule = {"kind": "require_event", "match": match}
    if draw(st.booleans()):
        rule["min"] = draw(small)
    if draw(st.booleans()):
        rule["max"] = draw(st.integers(rule.get("min", 1), 4))
    return rule


@st.composite
def event_budget_st(draw: st.DrawFn) -> Rule:
    metrics = draw(st.sampled_from([["max_tool_calls"], ["max_events"], ["max_tool_calls", "max_events"]]))
    rule: Rule = {"kind": "event_budget", **{m: draw(st.integers(0, 4)) for m in metrics}}
    return rule


@st.composite
def retry_limit_st(draw: st.DrawFn) -> Rule:
    rule: Rule = {"kind": "retry_limit", "max_attempts": draw(st.integers(1, 3))}
    if draw(st.booleans()):
        rule["tool"] = draw(glob_st)
    if draw(st.integers(0, 3)):
        rule["group_by"] = "tool"
    return rule


@st.composite
def order_st(draw: st.DrawFn) -> Rule:
    kind = draw(st.sampled_from(["precedence", "require_order"]))
    tool_st = st.sampled_from(["a", "b", "a", "b", "ab", "a*"])
    return {"kind": kind, "before": call(draw(tool_st)), "after": call(draw(tool_st))}


@st.composite
def tool_order_st(draw: st.DrawFn) -> Rule:
    tools = draw(st.lists(glob_st, min_size=1, max_size=3))
    rule: Rule = {"kind": "tool_order", "tools": tools}
    mode = draw(st.sampled_from([None, "exact", "exact", "subsequence", "any_order"]))
    if mode:
        rule["mode"] = mode
    return rule


@st.composite
def tool_args_st(draw: st.DrawFn) -> Rule:
    rule: Rule = {"kind": "tool_args", "tool": draw(glob_st)}
    shape = draw(st.sampled_from(["index", "ref", "any_of", "plain", "distinct"]))
    if shape == "index":
        rule["call_index"] = draw(st.integers(0, 2))
    if shape in ("index", "ref"):
        rule["match"] = {"x": from_result(draw(glob_st))}
    elif shape == "any_of":
        rule["match"] = {"x": {"$any_of": [from_result(draw(glob_st)), 1]}}
    elif shape == "plain":
        rule["match"] = {"x": 1}
    else:
        rule["distinct"] = ["x"]
    return rule


@st.composite
def output_rules_st(draw: st.DrawFn) -> Rule:
    shape = draw(st.sampled_from(["required_when", "schema"]))
    if shape == "required_when":
        return {"kind": "required_when", "tool": draw(glob_st),
                "when": {"path": draw(st.sampled_from(PATHS)), "non_empty": True}}
    required = draw(st.lists(st.sampled_from(["x", "y"]), unique=True))
    properties: dict[str, Any] = {"x": {"type": "object", "required": ["z"], "properties": {"z": {}}}, "y": {}}
    return {"kind": "output_schema", "schema": {"type": "object", "required": required, "properties": properties}}


@st.composite
def v1_misc_st(draw: st.DrawFn) -> Rule:
    shape = draw(st.sampled_from(["approval", "stop", "deny_event", "result_required"]))
    if shape == "approval":
        rule: Rule = {"kind": "require_approval", "tool": draw(glob_st)}
        if draw(st.booleans()):
            rule["scope"] = "s"
        return rule
    if shape == "stop":
        rule = {"kind": "stop_is_final"}
        after = draw(st.sampled_from([None, [], ["control.*"], ["*"], ["run.completed"]]))
        if after is not None:
            rule["allowed_after"] = after
        return rule
    if shape == "deny_event":
        match = draw(st.sampled_from([call(draw(glob_st)), {"tool": draw(glob_st)}, {"type": "tool.call"}]))
        return {"kind": "deny_event", "match": match}
    return {"kind": "tool_result_required", "tool": draw(glob_st)}


@st.composite
def v2_misc_st(draw: st.DrawFn) -> Rule:
    shape = draw(st.sampled_from(["approval_bound", "latency", "size", "failure", "forbidden_when",
                                  "output_match"]))
    tool = draw(glob_st)
    if shape == "approval_bound":
        return {"kind": "approval_bound", "tool": tool}
    if shape == "latency":
        rule: Rule = {"kind": "latency_budget", "tool": tool, "max_ms": 100}
        if draw(st.booleans()):
            rule["percentile"] = 95
        return rule
    if shape == "size":
        return {"kind": "result_size", "tool": tool, "max_bytes": 10}
    if shape == "failure":
        return {"kind": "failure_handled", "tool": tool, "within_events": 2}
    if shape == "forbidden_when":
        return {"kind": "forbidden_when", "tool": tool,
                "when": {"path": draw(st.sampled_from(PATHS)), "non_empty": True}}
    ref = from_result(tool)
    rule = {"kind": "output_match", "match": {"x": draw(st.sampled_from([ref, {"$any_of": [ref, 1]}]))}}
    if draw(st.booleans()):
        rule["when"] = {"path": draw(st.sampled_from(PATHS)), "non_empty": True}
    return rule


V1_KINDS = [
    st.builds(lambda g: deny("", g), glob_st),
    st.builds(lambda ts: {"kind": "allow_tools", "tools": ts}, st.lists(glob_st, min_size=1, max_size=3)),
    require_event_st(), event_budget_st(), retry_limit_st(), v1_misc_st(),
    st.builds(lambda a, b: order("", "require_order", a, b), literal_st, literal_st),
]
V2_KINDS = V1_KINDS + [tool_calls_st(), tool_calls_st(), order_st(), order_st(), tool_order_st(), tool_args_st(),
                       tool_args_st(), output_rules_st(), v2_misc_st(), v2_misc_st()]


@st.composite
def contract_st(draw: st.DrawFn) -> tuple[int, list[Rule]]:
    version = draw(st.sampled_from([2, 2, 2, 1]))
    kinds = V2_KINDS if version == 2 else V1_KINDS
    rules = draw(st.lists(st.one_of(kinds), min_size=1, max_size=5))
    out: list[Rule] = []
    for i, rule in enumerate(rules):
        severity = draw(st.sampled_from([None, None, "warning"]))
        head: Rule = {"id": f"r{i}"}
        if severity:
            head["severity"] = severity
        out.append({**head, **{k: v for k, v in rule.items() if k != "id"}})
    return version, out


@settings(max_examples=examples(75), derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(contract=contract_st(), strict=st.booleans())
def test_lint_agrees_with_the_model(cli: Cli, tmp_path: Path, contract: tuple[int, list[Rule]],
                                    strict: bool) -> None:
    """§4 table and points 37-50: the findings (code, level, rule_ids) and the exit code."""
    version, rules = contract
    reference = Model(rules)
    expected = reference.run()
    flags = ("--strict",) if strict else ()
    exit_code, report = lint(cli, tmp_path, rules, *flags, version=version)
    assert observed(report) == expected
    assert exit_code == expected_exit(expected, strict)
    assert report["errors"] == sum(level == "error" for _, level, _ in expected)
    assert report["warnings"] == sum(level == "warning" for _, level, _ in expected)
    # point 49: sorted by the lowest rule index named, then the code's row in the table
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    keys = [(min(index[i] for i in f["rule_ids"]), CODES.index(f["code"])) for f in report["findings"]]
    assert keys == sorted(keys)


def test_lint_findings_are_sorted(cli: Cli, tmp_path: Path) -> None:
    """Point 49: sorted by the lowest rule index named, then the code's row in the table, then pointer."""
    rules = [tc("must-ab", "ab", min=1), deny("no-a", "a*"), deny("no-ab", "ab"),
             {"id": "stop", "kind": "stop_is_final"}, allow("any", "*")]
    _, report = lint(cli, tmp_path, rules)
    keys = []
    for finding in report["findings"]:
        low = min(rules.index(next(r for r in rules if r["id"] == i)) for i in finding["rule_ids"])
        keys.append((low, CODES.index(finding["code"]), finding["pointer"]))
    assert keys == sorted(keys)
    assert [f["code"] for f in report["findings"]] == [
        "required_but_forbidden", "required_but_forbidden", "shadowed_rule", "v1_trap", "v1_trap"]


# -- output shape, pointers, options and exit codes (§4 "Output", points 49-50) -----------------------

SHELL = [deny("no-shell", "shell.*"), tc("must-exec", "shell.exec", min=1)]


def test_json_report_shape(cli: Cli, tmp_path: Path) -> None:
    """Point 50: {schema, contract: {name, version}, errors, warnings, findings: [{code, level,
    rule_ids, pointer, message}]} and no `interface` without --interface."""
    exit_code, report = lint(cli, tmp_path, SHELL)
    assert exit_code == 1
    assert set(report) == {"schema", "contract", "errors", "warnings", "findings"}
    assert report["schema"] == "agent-invariants/lint/v1"
    assert report["contract"] == {"name": "spec", "version": 2}
    assert (report["errors"], report["warnings"]) == (1, 0)
    (finding,) = report["findings"]
    assert set(finding) == {"code", "level", "rule_ids", "pointer", "message"}
    assert finding["pointer"] == "/rules/1/tool"  # §4 example: the requirement's field
    assert finding["message"]


def test_text_line_as_in_the_example(cli: Cli, tmp_path: Path) -> None:
    """§4 example / point 50: `<level> <code> [<ids>] <pointer>: <message>`, then a count line."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": SHELL}), encoding="utf-8")
    result = cli("lint", "--contract", "c.json")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("error required_but_forbidden [no-shell, must-exec] /rules/1/tool: ")
    assert len(lines) == 2 and "1 error" in lines[1]


def test_no_finding_exits_0(cli: Cli, tmp_path: Path) -> None:
    """§4 example: without either rule, lint exits 0."""
    for rules in ([SHELL[0]], [SHELL[1]]):
        exit_code, report = lint(cli, tmp_path, rules)
        assert (exit_code, report["findings"], report["errors"], report["warnings"]) == (0, [], 0, 0)


@pytest.mark.parametrize("strict", [False, True])
def test_strict_makes_warnings_exit_1(cli: Cli, tmp_path: Path, strict: bool) -> None:
    """§4: lint exits 1 on errors (and on warnings with --strict), 0 otherwise."""
    flags = ("--strict",) if strict else ()
    exit_code, report = lint(cli, tmp_path, [deny("wide", "a*"), deny("narrow", "ab")], *flags)
    assert codes(report) == [("shadowed_rule", "warning", ["wide", "narrow"])]
    assert exit_code == (1 if strict else 0)


def test_strict_without_findings_exits_0(cli: Cli, tmp_path: Path) -> None:
    """§4: --strict adds warnings only; a clean contract still exits 0."""
    assert lint(cli, tmp_path, [deny("no-a", "a")], "--strict")[0] == 0


def test_invalid_contract_exits_2_with_empty_stdout(cli: Cli, tmp_path: Path) -> None:
    """§4 / point 50: an invalid contract is exit 2 with nothing on stdout."""
    bad = {"version": 2, "name": "spec", "rules": [tc("x", "a", min=2, max=1)]}
    (tmp_path / "c.json").write_text(json.dumps(bad), encoding="utf-8")
    result = cli("lint", "--contract", "c.json", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_version_1_contract_is_linted(cli: Cli, tmp_path: Path) -> None:
    """Point 37: lint accepts both versions, with the same exit codes."""
    rules = [deny("no-a", "a"), {"id": "must-a", "kind": "require_event", "match": call("a")}]
    exit_code, report = lint(cli, tmp_path, rules, version=1)
    assert report["contract"] == {"name": "spec", "version": 1}
    assert (exit_code, codes(report)) == (1, [("required_but_forbidden", "error", ["no-a", "must-a"])])


@pytest.mark.parametrize(("rules", "pointer"), [
    ([tc("one-a", "a", min=2), {"id": "budget", "kind": "event_budget", "max_tool_calls": 1}],
     "/rules/1/max_tool_calls"),
    ([allow("known", "a*", "ab")], "/rules/0/tools/1"),
    ([{"id": "args", "kind": "tool_args", "tool": "a", "match": {"x": 1}}], "/rules/0"),
])
def test_pointer(cli: Cli, tmp_path: Path, rules: list[Rule], pointer: str) -> None:
    """Point 49: the bound's field for count_contradiction; `/rules/i/tools/j` for a shadowed
    allow_tools pattern (point 45); `/rules/i` for unrequired_subject (point 48)."""
    _, report = lint(cli, tmp_path, rules)
    assert [f["pointer"] for f in report["findings"]] == [pointer]


def test_interface_lists_read_paths(cli: Cli, tmp_path: Path) -> None:
    """Point 46: --interface adds interface: [{path, rules, required}] sorted by path; it changes
    neither the findings nor the exit code."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "a", "when": {"path": "x", "non_empty": True}},
             tc("len", "a", matches_output_length="y"),
             {"id": "shape", "kind": "output_schema",
              "schema": {"type": "object", "required": ["x"], "properties": {"x": {"type": "array"}}}}]
    plain_exit, plain = lint(cli, tmp_path, rules)
    exit_code, report = lint(cli, tmp_path, rules, "--interface")
    assert report["interface"] == [{"path": "x", "rules": ["rw"], "required": True},
                                   {"path": "y", "rules": ["len"], "required": False}]
    assert (exit_code, report["findings"]) == (plain_exit, plain["findings"])
    assert codes(report) == [("unschemaed_read", "warning", ["len"])]


def test_sarif_one_result_per_finding_at_the_pointer_line(cli: Cli, tmp_path: Path) -> None:
    """Point 50: SARIF has one result per finding, ruleId the code, its level, a region at the
    contract file's line of the pointer."""
    rules = [deny("no-shell", "shell.*"), tc("must-exec", "shell.exec", min=1), deny("narrow", "shell.x")]
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": rules}, indent=2),
                                     encoding="utf-8")
    result = cli("lint", "--contract", "c.json", "--format", "sarif")
    assert result.returncode == 1
    results = json.loads(result.stdout)["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("required_but_forbidden", "error"), ("shadowed_rule", "warning")]
    lines = (tmp_path / "c.json").read_text(encoding="utf-8").splitlines()
    first = results[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert '"shell.exec"' in lines[first - 1]  # /rules/1/tool


def test_check_refuses_a_v2_contract_with_a_lint_error(cli: Cli, tmp_path: Path) -> None:
    """§4 / point 8: check refuses v2 contracts with lint errors (exit 2) unless --no-lint."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": SHELL}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"shell.exec"}\n', encoding="utf-8")
    refused = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "required_but_forbidden" in refused.stderr
    assert cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--no-lint").returncode == 1


def test_check_never_refuses_a_v1_contract(cli: Cli, tmp_path: Path) -> None:
    """§4: v1 contracts are never refused."""
    rules = [deny("no-a", "a"), {"id": "must-a", "kind": "require_event", "match": call("a")}]
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "spec", "rules": rules}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"a"}\n', encoding="utf-8")
    assert cli("check", "--contract", "c.json", "--trace", "t.jsonl").returncode == 1


def test_check_ignores_warning_findings(cli: Cli, tmp_path: Path) -> None:
    """Point 37: check acts only on error-level findings and prints nothing for warnings."""
    rules = [deny("wide", "a*"), deny("narrow", "ab")]
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": rules}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"b"}\n', encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert (result.returncode, result.stderr) == (0, "")


# -- product bugs (reported) ------------------------------------------------------------------------

def test_a_warning_rule_beside_an_error_proof_leaves_count_contradiction_an_error(cli: Cli, tmp_path: Path) -> None:
    """Point 37: an error-level condition is level error when every rule it rests on has severity
    error; it is a warning only "when it holds only with a warning-severity rule involved". Here
    `e` (a* min 2) and `cap` (max 1), both errors, are a count_contradiction without `w`."""
    rules = [tc("w", "a", min=2, severity="warning"), tc("e", "a*", min=2), tc("cap", "*", max=1)]
    exit_code, report = lint(cli, tmp_path, rules)
    assert [level for _, level, _ in codes(report)] == ["error"]
    assert exit_code == 1


def test_tool_order_glob_entries_are_no_count_requirement(cli: Cli, tmp_path: Path) -> None:
    """Point 40: count_contradiction holds for a sum of R(t) over literal tools, a single
    requirement on a glob h (tool_calls.min, a call-matcher require_event.min, call_index + 1), or a
    require_event.min over max_events; point 38: R(t) counts entries equal to a literal t only."""
    rules: list[Rule] = [{"id": "flow", "kind": "tool_order", "tools": ["a*", "a*"]},
                         {"id": "budget", "kind": "event_budget", "max_tool_calls": 1}]
    _, report = lint(cli, tmp_path, rules)
    assert codes(report) == []


def test_one_required_but_forbidden_per_rule_and_tool(cli: Cli, tmp_path: Path) -> None:
    """Point 40: required_but_forbidden — one finding per (forbidding rule, tool t) with R(t) ≥ 1."""
    rules = [tc("must", "ab", min=1), {"id": "none", "kind": "event_budget", "max_tool_calls": 0, "max_events": 0}]
    _, report = lint(cli, tmp_path, rules)
    assert codes(report) == [("required_but_forbidden", "error", ["must", "none"])]
