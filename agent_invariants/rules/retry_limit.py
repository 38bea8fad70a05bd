"""retry_limit: no group of tool calls may run more than max_attempts times."""
from typing import Annotated, ClassVar, Literal, cast

from msgspec import UNSET, Meta, UnsetType

from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.report import RuleResult, TraceSummary, Violation
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob
from agent_invariants.tally import GroupTally

__all__ = ("RetryLimit", "RetryLimitConfig")


class RetryLimitConfig(RuleConfig, frozen=True, kw_only=True, tag="retry_limit"):
    """Options of a retry_limit rule."""

    tool: Glob | UnsetType = UNSET
    """Which calls count (default `*`: every call that names a tool)."""
    max_attempts: Annotated[int, Meta(ge=1, le=10_000)]
    """The most calls one group may make."""
    group_by: Literal["tool", "call_signature"] | UnsetType = UNSET
    """Group calls by tool name, or by `call_signature` (the default; falls back to the tool name)."""


class RetryLimit(Rule):
    """Fails when the same call is made more often than allowed: retry storms and loops.

    ## What it checks
    Takes every `tool.call` whose `tool` matches `tool` (`checked` counts them) and groups them:
    by `call_signature` (or, for a call without one, by its tool name) unless `group_by` is
    `tool`. Each group with more than `max_attempts` calls is one violation, located at the first
    call over the limit: `Retry group refund:order-7 ran 4 times; max_attempts is 3.` Groups are
    reported in the order they first appeared.

    ## Why it matters
    An agent that retries a payment, an e-mail or a search in a loop costs money and trust. The
    limit keeps a new model from quietly hammering a tool.

    ## Failing trace
    With `{"id": "retries", "kind": "retry_limit", "max_attempts": 2}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:refunds"}
    {"seq": 2, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:refunds"}
    {"seq": 3, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:refunds"}
    ```
    Violation at seq 3: `Retry group kb:refunds ran 3 times; max_attempts is 2.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:refunds"}
    {"seq": 2, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:shipping"}
    ```

    ## Options
    - `max_attempts` (integer 1..10000, required).
    - `tool` (glob, default `*`): which calls count.
    - `group_by` (`call_signature` or `tool`, default `call_signature`).

    Under `record --enforce`, every call of a group beyond the limit is denied.

    ## Known limits
    Counts every call of a group in the whole trace, not consecutive retries, and ignores whether
    calls failed. Signatures and tool names share one key space, so a signature equal to a tool
    name joins that tool's group. Calls without a `tool` are never counted. Up to 400,000 distinct
    groups are counted in memory (about 50 MiB; fewer when their signatures hold more than 24 million
    characters in all); past that the counts move to a temporary file, so
    memory stays flat, and the answer is the same.
    """

    kind: ClassVar[str] = "retry_limit"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = RetryLimitConfig
    tags: ClassVar[tuple[str, ...]] = ("reliability", "cost")
    reason: ClassVar[str] = "exceeded"

    def __init__(self, config: RetryLimitConfig) -> None:
        super().__init__(config)
        self._pattern = "*" if config.tool is UNSET else config.tool
        self._counted = compile_glob(self._pattern)
        self._max = config.max_attempts
        self._by_tool = config.group_by == "tool"
        self._attempts = GroupTally(config.max_attempts)   # exact, spills to disk past many groups

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._pattern,) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.call" and tool is not UNSET and self._counted(tool):
            return self._call_by_tool if self._by_tool else self._call
        return None

    # Handlers are kept this short because most events of a trace are calls; `checked` is the
    # tally's member count.
    def _call(self, event: Event, index: int) -> None:
        group = event.call_signature
        self._attempts.add(cast(str, event.tool) if group is UNSET else group, event.seq, index)

    def _call_by_tool(self, event: Event, index: int) -> None:
        self._attempts.add(cast(str, event.tool), event.seq, index)   # routed: the call has a tool

    def denies(self, result: RuleResult, call: Event, index: int) -> bool:
        """Under `record --enforce`, every call of a group beyond `max_attempts` is denied, not
        only the first one over: its group is among the violations (the enforcing run keeps all)."""
        return self._group_violation(result, call) is not None

    def denial(self, result: RuleResult, call: Event, index: int) -> str:
        """The message of the call's own group (the violation sits at the group's first call over
        the bound; another group may have broken it earlier)."""
        violation = self._group_violation(result, call)
        return super().denial(result, call, index) if violation is None else violation.message

    def _group_violation(self, result: RuleResult, call: Event) -> Violation | None:
        if call.tool is UNSET or not self._counted(call.tool):
            return None
        group = call.tool if self._by_tool or call.call_signature is UNSET else call.call_signature
        return next((violation for violation in result.violations
                     if violation.evidence is not UNSET and violation.evidence["group"] == group), None)

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = self._attempts.members
        overflows = self._attempts.finish(keep=self.cap)   # the first ones, by first appearance
        for over in overflows[:self.note_violations(self._attempts.overflowed)]:
            self.keep(f"Retry group {over.group} ran {over.count} times; max_attempts is {self._max}.",
                      {"group": over.group, "attempts": over.count, "max_attempts": self._max}, over.seq, over.index)
        return self.result()
