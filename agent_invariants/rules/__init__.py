"""The rule kinds of contract v1, one module each, registered here by their `kind` name.

Adding a kind means adding its module and one entry in `_ALL`; the contract's tagged union, the
engine, the docs (`agent-invariants explain`) and every renderer pick it up from here.
"""
from agent_invariants.rules.allow_tools import AllowTools
from agent_invariants.rules.base import DEFAULT_MAX_VIOLATIONS, Rule, RuleConfig
from agent_invariants.rules.completion_requires_outcome import CompletionRequiresOutcome
from agent_invariants.rules.confidence_requires_outcome import ConfidenceRequiresOutcome
from agent_invariants.rules.deny_event import DenyEvent
from agent_invariants.rules.deny_tool import DenyTool
from agent_invariants.rules.event_budget import EventBudget
from agent_invariants.rules.require_approval import RequireApproval
from agent_invariants.rules.require_event import RequireEvent
from agent_invariants.rules.require_order import RequireOrder
from agent_invariants.rules.retry_limit import RetryLimit
from agent_invariants.rules.stop_is_final import StopIsFinal
from agent_invariants.rules.tool_result_required import ToolResultRequired

__all__ = ("DEFAULT_MAX_VIOLATIONS", "RULE_KINDS", "Rule", "RuleConfig", "rule_for")

_ALL: tuple[type[Rule], ...] = (
    DenyTool,
    AllowTools,
    RequireApproval,
    StopIsFinal,
    CompletionRequiresOutcome,
    RetryLimit,
    EventBudget,
    RequireOrder,
    RequireEvent,
    DenyEvent,
    ToolResultRequired,
    ConfidenceRequiresOutcome,
)


def _index(kinds: tuple[type[Rule], ...]) -> dict[str, type[Rule]]:
    registry: dict[str, type[Rule]] = {}
    for rule in kinds:
        if rule.kind in registry:
            raise RuntimeError(f"rule kind {rule.kind!r} is registered twice")
        if rule.config_type.__struct_config__.tag != rule.kind:
            raise RuntimeError(f"{rule.__name__}.config_type is tagged for another kind")
        registry[rule.kind] = rule
    return registry


RULE_KINDS: dict[str, type[Rule]] = _index(_ALL)


def rule_for(config: RuleConfig, max_violations: int = DEFAULT_MAX_VIOLATIONS) -> Rule:
    """A fresh rule instance (with empty state) for one rule of a contract, keeping at most
    `max_violations` violations (0: all)."""
    rule = RULE_KINDS[config.kind](config)
    rule.limit_violations(max_violations)
    return rule
