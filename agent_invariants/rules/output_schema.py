"""output_schema (contract version 2): the shape of the run's final output."""
from __future__ import annotations

from typing import Any, ClassVar

from msgspec import UNSET, UnsetType

from agent_invariants.match.canonical import evidence_value
from agent_invariants.match.explained import MAX_LISTED
from agent_invariants.match.schema import ArgsSchema
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.terminal import NO_OUTPUT, TERMINAL_TYPES, Terminal

__all__ = ("OutputSchema", "OutputSchemaConfig")


class OutputSchemaConfig(RuleConfig, frozen=True, kw_only=True, tag="output_schema"):
    """Options of an output_schema rule."""

    since_version: ClassVar[int] = 2

    schema: dict[str, Any] | bool
    """A JSON Schema (2020-12) the final output must satisfy; local `$ref` only. Needs the jsonschema extra."""

    def __post_init__(self) -> None:
        super().__post_init__()
        ArgsSchema(self.schema, "schema")   # checked when the contract loads


class OutputSchema(Rule):
    """Fails when the run's final output does not have the shape its readers expect.

    ## What it checks
    The final output (the `output` of the last `run.completed` or `run.failed`) is validated
    against `schema`, a JSON Schema of draft 2020-12. At the terminal event:

    - `output_schema.output_missing` (status `unresolved`): no terminal event (then no event), or
      one without `output` (`"output": null` is an output, which the schema judges);
    - `output_schema.schema`: up to 20 `{pointer, message}` in `errors`, pointers into the event
      (`/output/total`).

    When the rule fails, every violation of another rule that read the final output
    (output_match, tool_calls' `matches_output_length`, conditions on paths, tool_args with
    `$from_output`) gets `"caused_by": "<this rule's id>"`: a wrong shape is often the one cause of
    several violations. Nothing is left out. `checked` is 1.

    ## Why it matters
    Whatever reads the agent's report (a dashboard, a ticket system, the next agent) expects a
    shape. A model change that renames `total` to `sum` breaks every reader, whatever the prose
    says.

    ## Failing trace
    With `{"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}}`:
    ```jsonl
    {"seq": 1, "type": "run.completed", "status": "completed", "output": {"sum": 45}}
    ```
    Violation at seq 1, `output_schema.schema`: `total` is a required property.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "run.completed", "status": "completed", "output": {"total": 45}}
    ```

    ## Options
    - `schema` (JSON Schema 2020-12, local `$ref` only; required): needs
      `pip install 'agent-invariants[jsonschema]'`.

    ## Known limits
    Formats (`"format": "email"`) are not asserted, as the draft's default says. Only the last
    terminal event's output is read. The validator's `unevaluatedProperties` looks again at every
    key for each key of an object (an output of 60,000 keys: 18 s); `additionalProperties`, which
    often says the same, costs each key once.
    """

    kind: ClassVar[str] = "output_schema"
    config_type: ClassVar[type[RuleConfig]] = OutputSchemaConfig
    tags: ClassVar[tuple[str, ...]] = ("output",)
    reason: ClassVar[str] = "schema"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"output_missing", "schema"})
    judges_output_shape: ClassVar[bool] = True

    def __init__(self, config: OutputSchemaConfig) -> None:
        super().__init__(config)
        self._schema = ArgsSchema(config.schema, "schema")
        self._terminal = Terminal()

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        return self._terminal.seen if event_type in TERMINAL_TYPES else None

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = 1
        output, terminal = self._terminal.output(), self._terminal.event
        seq, index = self._terminal.seq, self._terminal.position
        if output is NO_OUTPUT:
            if self.note_violation():
                self.keep(f"There is no final output to check: {self._terminal.no_output()}.", {}, seq, index,
                          reason="output_missing",
                          status="unresolved", pointer=UNSET if terminal is None else "/output")
            return self.result()
        errors = self._schema.errors(output, MAX_LISTED)
        if errors and self.note_violation():
            listed = [{"pointer": "/output" + entry["pointer"], "message": entry["message"]} for entry in errors]
            self.keep(f"The final output breaks the schema: {listed[0]['pointer'] or '/output'}: "
                      f"{listed[0]['message']}.", evidence_value({"errors": listed}), seq, index,
                      pointer=listed[0]["pointer"])
        return self.result()
