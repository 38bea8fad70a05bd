"""The rule kinds, one module each, registered here by their `kind` name: the twelve of contract
version 1, then those of version 2 (their config's `since_version` is 2).

Adding a kind means adding its module and one entry in `_ALL` (or a `register_kind` call, for a
kind that lives outside this package), then regenerating the schemas; the contract loader, the
engine, the docs (`agent-invariants explain`) and every renderer pick it up from `RULE_KINDS`.
The protocol a kind implements is in `rules.base`; docs/architecture.md shows a whole kind.
"""
from agent_invariants.rules.allow_tools import AllowTools
from agent_invariants.rules.approval_bound import ApprovalBound
from agent_invariants.rules.base import DEFAULT_MAX_VIOLATIONS, Rule, RuleConfig
from agent_invariants.rules.completion_requires_outcome import CompletionRequiresOutcome
from agent_invariants.rules.confidence_requires_outcome import ConfidenceRequiresOutcome
from agent_invariants.rules.deny_event import DenyEvent
from agent_invariants.rules.deny_tool import DenyTool
from agent_invariants.rules.event_budget import EventBudget
from agent_invariants.rules.failure_handled import FailureHandled
from agent_invariants.rules.forbidden_when import ForbiddenWhen
from agent_invariants.rules.latency_budget import LatencyBudget
from agent_invariants.rules.output_match import OutputMatch
from agent_invariants.rules.output_schema import OutputSchema
from agent_invariants.rules.precedence import Precedence
from agent_invariants.rules.require_approval import RequireApproval
from agent_invariants.rules.require_event import RequireEvent
from agent_invariants.rules.require_order import RequireOrder
from agent_invariants.rules.required_when import RequiredWhen
from agent_invariants.rules.result_size import ResultSize
from agent_invariants.rules.retry_limit import RetryLimit
from agent_invariants.rules.run_duration import RunDuration
from agent_invariants.rules.run_status import RunStatus
from agent_invariants.rules.stop_is_final import StopIsFinal
from agent_invariants.rules.tool_args import ToolArgs
from agent_invariants.rules.tool_calls import ToolCalls
from agent_invariants.rules.tool_order import ToolOrder
from agent_invariants.rules.tool_result_required import ToolResultRequired

__all__ = ("DEFAULT_MAX_VIOLATIONS", "RULE_KINDS", "Rule", "RuleConfig", "register_kind", "rule_configs", "rule_for")

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
    # contract version 2
    ToolArgs,
    ToolOrder,
    Precedence,
    ToolCalls,
    ApprovalBound,
    LatencyBudget,
    ResultSize,
    RunDuration,
    OutputMatch,
    OutputSchema,
    RunStatus,
    RequiredWhen,
    ForbiddenWhen,
    FailureHandled,
)


RULE_KINDS: dict[str, type[Rule]] = {}
"""Every rule kind by its `kind` name, in the order registered (the v1 kinds in `_ALL` order)."""


def register_kind(rule: type[Rule]) -> type[Rule]:
    """Add a rule kind to `RULE_KINDS`; refuses a kind registered twice, or a `config_type`
    tagged for another kind. Returns the class, so it also works as a class decorator."""
    if rule.kind in RULE_KINDS:
        raise RuntimeError(f"rule kind {rule.kind!r} is registered twice")
    if rule.config_type.__struct_config__.tag != rule.kind:
        raise RuntimeError(f"{rule.__name__}.config_type is tagged for another kind")
    RULE_KINDS[rule.kind] = rule
    return rule


def rule_configs() -> dict[str, type[RuleConfig]]:
    """The config struct of every registered kind, by kind: what a contract's rules decode to."""
    return {kind: rule.config_type for kind, rule in RULE_KINDS.items()}


for _kind in _ALL:
    register_kind(_kind)


def rule_for(config: RuleConfig, max_violations: int = DEFAULT_MAX_VIOLATIONS) -> Rule:
    """A fresh rule instance (with empty state) for one rule of a contract, keeping at most
    `max_violations` violations (0: all)."""
    rule = RULE_KINDS[config.kind](config)
    rule.limit_violations(max_violations)
    return rule
