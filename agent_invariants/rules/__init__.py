"""The rule kinds, one module each, registered here by their `kind` name: the twelve of contract
version 1, then those of version 2 (their config's `since_version` is 2).

Adding a kind means adding its module and one entry in `_BUILT_IN` (or a `register_kind` call, for
a kind that lives outside this package), then regenerating the schemas; the contract loader, the
engine, the docs (`agent-invariants explain`) and every renderer pick it up from `RULE_KINDS`.
The protocol a kind implements is in `rules.base`; docs/architecture.md shows a whole kind.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agent_invariants.rules.base import DEFAULT_MAX_VIOLATIONS, Rule, RuleConfig
from agent_invariants.validation import since_version

__all__ = ("DEFAULT_MAX_VIOLATIONS", "KEPT_IN_ALL", "RULE_KINDS", "Rule", "RuleConfig", "in_order", "kind_class",
           "kept_per_rule", "of_version_2", "register_kind", "registered_outside", "rule_configs", "rule_for")

_BUILT_IN: dict[str, str] = {
    "deny_tool": "DenyTool",
    "allow_tools": "AllowTools",
    "require_approval": "RequireApproval",
    "stop_is_final": "StopIsFinal",
    "completion_requires_outcome": "CompletionRequiresOutcome",
    "retry_limit": "RetryLimit",
    "event_budget": "EventBudget",
    "require_order": "RequireOrder",
    "require_event": "RequireEvent",
    "deny_event": "DenyEvent",
    "tool_result_required": "ToolResultRequired",
    "confidence_requires_outcome": "ConfidenceRequiresOutcome",
    # contract version 2
    "tool_args": "ToolArgs",
    "tool_order": "ToolOrder",
    "precedence": "Precedence",
    "tool_calls": "ToolCalls",
    "approval_bound": "ApprovalBound",
    "latency_budget": "LatencyBudget",
    "result_size": "ResultSize",
    "run_duration": "RunDuration",
    "output_match": "OutputMatch",
    "output_schema": "OutputSchema",
    "run_status": "RunStatus",
    "required_when": "RequiredWhen",
    "forbidden_when": "ForbiddenWhen",
    "failure_handled": "FailureHandled",
}
"""The kinds of this package, each the class of that name in the module named after the kind, in
the order they are listed everywhere (the twelve of version 1 first). A module is imported when
a contract first names its kind, or when every kind is asked for (`RULE_KINDS`): a check of a
contract of five kinds does not pay for the others."""

_POSITION = {kind: position for position, kind in enumerate(_BUILT_IN)}

_KINDS: dict[str, type[Rule]] = {}
"""The kinds imported so far, and those registered from outside the package: `RULE_KINDS`."""

_IMPORTED: set[str] = set()
"""The package's kinds imported once: one taken out of `RULE_KINDS` since stays out."""

if TYPE_CHECKING:
    RULE_KINDS: dict[str, type[Rule]]


def kind_class(kind: str) -> type[Rule] | None:
    """The class of a kind by its name (importing its module the first time), or None."""
    found = _KINDS.get(kind)
    if found is None and kind in _BUILT_IN and kind not in _IMPORTED:
        module = importlib.import_module(f"{__name__}.{kind}")
        found = _KINDS[kind] = getattr(module, _BUILT_IN[kind])
        _IMPORTED.add(kind)
    return found


def of_version_2(kind: str) -> bool:
    """Whether `kind` came with contract version 2. Its evidence holds values of the trace in
    canonical form (`match.canonical`), keys in canonical order; the version-1 kinds' evidence is
    the Node tool's, whose keys keep their order when a report cuts it."""
    found = kind_class(kind)
    return found is not None and since_version(found.config_type) > 1


def _every_kind() -> dict[str, type[Rule]]:
    """Every kind, all imported, in order: the package's as listed, then the others as registered."""
    in_package = [kind for kind in _KINDS if kind in _BUILT_IN]
    if len(_IMPORTED) < len(_BUILT_IN) or in_package != sorted(in_package, key=_POSITION.__getitem__):
        for kind in _BUILT_IN:
            kind_class(kind)
        others = [(kind, rule) for kind, rule in _KINDS.items() if kind not in _BUILT_IN]
        ordered = {kind: _KINDS[kind] for kind in _BUILT_IN if kind in _KINDS}
        _KINDS.clear()
        _KINDS.update(ordered)
        _KINDS.update(others)
    return _KINDS


def __getattr__(name: str) -> Any:
    """On first use: `RULE_KINDS` (every rule kind by its `kind` name, in order, the package's all
    imported), the kind classes by name (`from agent_invariants.rules import ToolArgs`) and the
    kinds' modules (`agent_invariants.rules.tool_args`)."""
    if name == "RULE_KINDS":
        return _every_kind()
    if name in _BUILT_IN:
        return importlib.import_module(f"{__name__}.{name}")
    kind = next((kind for kind, class_name in _BUILT_IN.items() if class_name == name), None)
    if kind is not None:
        return getattr(importlib.import_module(f"{__name__}.{kind}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register_kind(rule: type[Rule]) -> type[Rule]:
    """Add a rule kind to `RULE_KINDS`; refuses a kind registered twice (or named as one of the
    package's), or a `config_type` tagged for another kind. Returns the class, so it also works
    as a class decorator."""
    if rule.kind in _KINDS or rule.kind in _BUILT_IN:
        raise RuntimeError(f"rule kind {rule.kind!r} is registered twice")
    if rule.config_type.__struct_config__.tag != rule.kind:
        raise RuntimeError(f"{rule.__name__}.config_type is tagged for another kind")
    _KINDS[rule.kind] = rule
    return rule


def in_order(kinds: Iterable[str]) -> list[str]:
    """Known kinds sorted as `RULE_KINDS` lists them (without importing the others)."""
    registered = {kind: position for position, kind in enumerate(_KINDS)}
    return sorted(kinds, key=lambda kind: (0, _POSITION[kind]) if kind in _POSITION else (1, registered.get(kind, 0)))


def registered_outside() -> tuple[str, ...]:
    """The kinds registered so far from outside the package (`register_kind`), in order."""
    return tuple(kind for kind in _KINDS if kind not in _BUILT_IN)


def rule_configs() -> dict[str, type[RuleConfig]]:
    """The config struct of every registered kind, by kind: what a contract's rules decode to."""
    return {kind: rule.config_type for kind, rule in _every_kind().items()}


KEPT_IN_ALL = 100_000
"""The most violations all rules of one check keep together, unless 100 times `max_violations`
is more (`kept_per_rule`)."""


def kept_per_rule(max_violations: int, rules: int, in_all: int | None = None) -> int:
    """How many violations each of `rules` rules keeps when asked to keep `max_violations` (0:
    all): that many, but all rules together keep no more than `in_all` (by default KEPT_IN_ALL
    or 100 times `max_violations`, whichever is more), shared evenly (one each at least). A
    contract of up to a hundred rules keeps what it asks; one of 10,000 rules that all fail on
    every event kept 10 million violations, about 19 GB. So a larger `max_violations` still
    keeps more, and 0 keeps all. (The MCP server asks for less in all: its `MAX_KEPT`.)"""
    if max_violations.__class__ is not int or max_violations <= 0 or rules == 0:
        return max_violations   # (0: all; a value that is no count is refused by `Rule.limit_violations`)
    if in_all is None:
        in_all = max(KEPT_IN_ALL, 100 * max_violations)
    return min(max_violations, max(1, in_all // rules))


def rule_for(config: RuleConfig, max_violations: int = DEFAULT_MAX_VIOLATIONS) -> Rule:
    """A fresh rule instance (with empty state) for one rule of a contract, keeping at most
    `max_violations` violations (0: all)."""
    kind = kind_class(config.kind)
    if kind is None:
        raise KeyError(config.kind)   # a kind registered in another process, or taken out since
    rule = kind(config)
    rule.limit_violations(max_violations)
    return rule
