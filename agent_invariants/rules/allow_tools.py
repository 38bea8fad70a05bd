"""allow_tools: every tool call must be to a listed tool."""
from typing import Annotated, Any, ClassVar

from msgspec import UNSET, Meta, UnsetType

from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob

__all__ = ("AllowTools", "AllowToolsConfig")


class AllowToolsConfig(RuleConfig, frozen=True, kw_only=True, tag="allow_tools"):
    """Options of an allow_tools rule."""

    tools: Annotated[list[Glob], Meta(min_length=1, max_length=1000)]
    """The allowlist: a call must match at least one of these globs."""


class AllowTools(Rule):
    """Fails when the agent calls a tool that is not on the allowlist.

    ## What it checks
    Every `tool.call` is checked (`checked` counts all of them); a call whose `tool` matches none
    of the `tools` globs is a violation at that event. A call with no `tool` at all always
    violates, even with `["*"]`: `Tool call has no tool field, so it is outside the allowlist.`

    ## Why it matters
    A new model or prompt that starts using tools nobody reviewed is a change in what the agent can
    do. An allowlist turns "it found another tool" into a failing check.

    ## Failing trace
    With `{"id": "known-tools", "kind": "allow_tools", "tools": ["kb.*", "crm.lookup"]}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "kb.search"}
    {"seq": 2, "type": "tool.call", "tool": "crm.delete"}
    ```
    Violation at seq 2: `Tool is outside the allowlist: crm.delete.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "kb.search"}
    {"seq": 2, "type": "tool.call", "tool": "crm.lookup"}
    ```

    ## Options
    - `tools` (list of 1..1000 globs, required): the allowed tools.

    ## Known limits
    Only `tool.call` events are looked at; the tool named on a `tool.result` is not.
    """

    kind: ClassVar[str] = "allow_tools"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = AllowToolsConfig
    tags: ClassVar[tuple[str, ...]] = ("security", "tools")
    reason: ClassVar[str] = "not_allowed"
    config: AllowToolsConfig

    def __init__(self, config: AllowToolsConfig) -> None:
        super().__init__(config)
        self._allowed = [compile_glob(pattern) for pattern in config.tools]

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return tuple(self.config.tools) if event_type == "tool.call" else ()

    def route_types(self) -> tuple[str, ...]:
        return ("tool.call",)

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type != "tool.call":
            return None
        if tool is not UNSET and any(allowed(tool) for allowed in self._allowed):
            return None   # allowed: nothing to do; `checked` comes from the summary's call count
        return self._other_call

    def _other_call(self, event: Event, index: int) -> None:
        if not self.note_violation():
            return
        evidence: dict[str, Any] = {"allowed": self.config.tools}
        if event.tool is UNSET:
            message = "Tool call has no tool field, so it is outside the allowlist."
        else:
            evidence = {"tool": event.tool, **evidence}
            message = f"Tool is outside the allowlist: {event.tool}."
        self.keep(message, evidence, event.seq, index)

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = summary.tool_calls   # every tool.call is checked, allowed or not
        return self.result()
