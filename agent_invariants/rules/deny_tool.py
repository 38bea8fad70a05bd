"""deny_tool: the agent must never call a matching tool."""
from typing import ClassVar

from msgspec import UnsetType

from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob

__all__ = ("DenyTool", "DenyToolConfig")


class DenyToolConfig(RuleConfig, frozen=True, kw_only=True, tag="deny_tool"):
    """Options of a deny_tool rule."""

    tool: Glob
    """Tools the agent must never call."""


class DenyTool(Rule):
    """Fails when the agent calls a tool the contract forbids.

    ## What it checks
    Every `tool.call` whose `tool` matches the glob is a violation at that event. `checked` counts
    the matching calls.

    ## Why it matters
    A shell, an admin API or a production database must stay out of reach, whatever the prompt says.

    ## Failing trace
    With `{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "fs.read"}
    {"seq": 2, "type": "tool.call", "tool": "shell.exec"}
    ```
    Violation at seq 2: `Denied tool called: shell.exec.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "fs.read"}
    {"seq": 2, "type": "tool.call", "tool": "sandbox.exec"}
    ```

    ## Options
    - `tool` (glob, required): the tools to deny.

    ## Known limits
    Reads the tool name, never the arguments. A `tool.call` without a `tool` never matches, not
    even `*`; pair with allow_tools to catch those. `tool.result` events are not looked at.
    """

    kind: ClassVar[str] = "deny_tool"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = DenyToolConfig
    tags: ClassVar[tuple[str, ...]] = ("security", "tools")
    reason: ClassVar[str] = "denied"
    checked_nothing_is_normal = True   # checked counts the denied calls

    def __init__(self, config: DenyToolConfig) -> None:
        super().__init__(config)
        self._pattern = config.tool
        self._denied = compile_glob(config.tool)

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._pattern,) if event_type == "tool.call" else ()

    def route_types(self) -> tuple[str, ...]:
        return ("tool.call",)

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.call" and isinstance(tool, str) and self._denied(tool):
            return self._denied_call
        return None

    def _denied_call(self, event: Event, index: int) -> None:
        self.checked += 1
        if self.note_violation():
            self.keep(f"Denied tool called: {event.tool}.", {"tool": event.tool}, event.seq, index)
