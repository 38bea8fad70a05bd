"""`agent-invariants explain [KIND]`: the rule kinds' manuals, from their own docstrings.

The docstring of each rule class is its manual (what it checks, why it matters, a failing and a
passing trace, options, known limits), read through `manual`; SARIF help and this command print
the same text, so they cannot drift apart. The field table is made from the kind's config struct.
"""
from __future__ import annotations

from typing import Any

import msgspec

from agent_invariants.manual import command_manual, manual, summary_line
from agent_invariants.rules import RULE_KINDS
from agent_invariants.rules.base import RuleConfig
from agent_invariants.schemas import describe_fields, structs_of
from agent_invariants.validation import suggest

__all__ = ("TOPICS", "explain_kind", "list_kinds")

TOPICS = ("match", "lint", "mutate", "stability", "record")
"""What `explain` explains besides the rule kinds: `match`, the grammar of match trees, the
commands that judge a contract or runs rather than one trace (`lint`, `mutate`, `stability`),
and `record`, the harness that runs an agent."""


def list_kinds() -> str:
    """Each rule kind with the summary line of its manual."""
    width = max(map(len, RULE_KINDS))
    lines = [f"{kind.ljust(width)}  {summary_line(kind)}" for kind in RULE_KINDS]
    lines += ["", "agent-invariants explain KIND prints a kind's manual; agent-invariants explain match, the",
              "grammar of the match trees of contract version 2; agent-invariants explain lint, mutate,",
              "stability and record, the manuals of those commands."]
    return "\n".join(lines) + "\n"


def explain_kind(kind: str) -> str:
    """The manual of `kind`: its docstring, then a table of its fields; or the manual of a topic
    (`match`). KeyError if unknown."""
    if kind == "match":
        return _match_manual()
    if kind in ("lint", "mutate", "stability", "record"):
        return f"{kind}: {command_manual(kind)}\n"
    if kind not in RULE_KINDS:
        raise KeyError(f"unknown rule kind or topic {kind!r}{suggest(kind, [*RULE_KINDS, *TOPICS])}; "
                       f"expected one of: {', '.join([*RULE_KINDS, *TOPICS])}")
    lines = [f"{kind}: {manual(kind)}", "", "## Fields"]
    for name, required, kind_of_value, description in _fields(RULE_KINDS[kind].config_type):
        lines.append(f"- `{name}` ({kind_of_value}{', required' if required else ''}): {description}")
    lines += ["", "## On a trace cut short (--partial)", _cut_short(kind)]
    return "\n".join(lines) + "\n"


_CUT_SHORT = {
    "tool_args": "With `call_index`, `tool_args.call_missing` is inconclusive; in a rule that reads the final "
                 "output (`$from_output`), every violation is. The rest is judged.",
    "latency_budget": "With `percentile`, both codes are inconclusive. Without, every violation is judged (the "
                      "spec makes the per-call budget a safety part): a call whose result has not come yet is "
                      "`duration_unresolved`.",
    "failure_handled": "A failure whose window the trace ends in (or whose retry's result has not come) is "
                       "inconclusive; one whose window passed is judged.",
}
"""What `--partial` leaves undecided, for the kinds whose answer depends on their options or events."""


def _cut_short(kind: str) -> str:
    """Which of a kind's codes `--partial` reports as inconclusive."""
    if kind in _CUT_SHORT:
        return _CUT_SHORT[kind]
    reasons = sorted(RULE_KINDS[kind].liveness_reasons)
    if not reasons:
        return "Every violation is judged: what already happened decides it."
    return ("Inconclusive (more events may yet satisfy them): "
            + ", ".join(f"`{kind}.{reason}`" for reason in reasons) + ". The rest is judged.")


def _match_manual() -> str:
    """The grammar of match trees: the `match` package's docstring, without its note on the code."""
    import inspect

    import agent_invariants.match as grammar

    text = inspect.cleandoc(grammar.__doc__ or "")
    return "match: " + text.split("\n## Code\n")[0].rstrip() + "\n"


def _fields(config: type[RuleConfig]) -> list[tuple[str, bool, str, str]]:
    schema = msgspec.json.schema(config)
    definitions = schema["$defs"]
    describe_fields(definitions, structs_of(config))
    own = definitions[config.__name__]
    required = set(own.get("required", []))
    rows = [("kind", True, "string", f"`{config.__struct_config__.tag}`")]
    for name, spec in own["properties"].items():
        if name == "kind":
            continue
        rows.append((name, name in required, _value_kind(spec), spec.get("description", "")))
    return rows


def _value_kind(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " | ".join(f"`{value}`" for value in spec["enum"])
    if "$ref" in spec:
        return "event matcher" if spec["$ref"].endswith("EventMatcher") else "object"
    kind: str = spec.get("type", "value")
    if kind == "array":
        item = _value_kind(spec.get("items", {}))
        bounds = _bounds(spec.get("minItems"), spec.get("maxItems"))
        return f"list of {item}{f' ({bounds} items)' if bounds else ''}"
    if kind in ("integer", "number"):
        bounds = _number_bounds(spec)
        return f"{kind} {bounds}" if bounds else kind
    return kind


def _number_bounds(spec: dict[str, Any]) -> str:
    """`1..10`, `0..`, or, for a number that must be over its least value, `> 0` or `> 0, <= 100`."""
    over, high = spec.get("exclusiveMinimum"), spec.get("maximum")
    if over is None:
        return _bounds(spec.get("minimum"), high)
    return f"> {over}" if high is None else f"> {over}, <= {high}"


def _bounds(low: Any, high: Any) -> str:
    if low is None and high is None:
        return ""
    return f"{'' if low is None else low}..{'' if high is None else high}"

