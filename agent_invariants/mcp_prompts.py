"""The MCP server's prompts: `write-contract` turns a description of an agent's rules into a v1
contract; `protect-behavior-change` (no arguments, the Node.js tool's prompt) asks for one for the
agent at hand before a change, then a comparison of runs from before and after it.

The rule reference in the prompts is built from each rule kind's manual (its summary line and its
`## Options`), and the compare policy's from the `ComparePolicy` struct, so it never goes stale.
The SDK is imported only to answer `prompts/list` and `prompts/get`.
"""
from __future__ import annotations

from typing import Any

__all__ = ("CHANGE_PROMPT_NAME", "PROMPT_NAME", "change_prompt", "contract_prompt", "prompt_answer", "prompt_list")

PROMPT_NAME = "write-contract"
CHANGE_PROMPT_NAME = "protect-behavior-change"
_WRITE_TITLE = "Write an agent-invariants contract"
_WRITE_DESCRIPTION = ("Turn a plain-language description of an AI agent's operating rules into a v1 "
                      "contract, validate it with the server's tools, and explain each rule.")
_CHANGE_TITLE = "Protect an agent's behaviour through a change"
_CHANGE_DESCRIPTION = ("Before changing an agent's model, prompt, memory or tools: encode its approval, "
                       "stop, retry and evidence expectations as a v1 contract, then compare a run from "
                       "before the change with one from after it.")


def prompt_list() -> list[Any]:
    """The two prompts as `prompts/list` shows them (the SDK's `Prompt` models)."""
    import mcp_types as types

    return [
        types.Prompt(
            name=PROMPT_NAME, title=_WRITE_TITLE, description=_WRITE_DESCRIPTION,
            arguments=[
                types.PromptArgument(name="rules", required=True, description=(
                    "The agent's rules in plain words: which tools it may or must not use, what needs "
                    "approval, what must come first, what must never happen after a stop, how often it may "
                    "retry, what counts as done.")),
                types.PromptArgument(name="name", required=False, description="The contract's name (optional)."),
            ],
        ),
        types.Prompt(name=CHANGE_PROMPT_NAME, title=_CHANGE_TITLE, description=_CHANGE_DESCRIPTION),
    ]


def prompt_answer(name: str, arguments: dict[str, str] | None) -> Any:
    """The answer to `prompts/get` (the SDK's `GetPromptResult`); an `MCPError` for an unknown
    prompt or a missing `rules` argument."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    if name == CHANGE_PROMPT_NAME:
        description, text = _CHANGE_DESCRIPTION, change_prompt()
    elif name != PROMPT_NAME:
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {name!r}; the prompts "
                                                          f"are {PROMPT_NAME!r} and {CHANGE_PROMPT_NAME!r}")
    else:
        arguments = arguments or {}
        rules = arguments.get("rules", "")
        if not rules.strip():
            raise MCPError(code=types.INVALID_PARAMS,
                           message="missing required argument `rules` (the agent's rules in plain words)")
        description = "Write an agent-invariants v1 contract from a description of the agent's rules."
        text = contract_prompt(rules, arguments.get("name") or None)
    return types.GetPromptResult(description=description,
                                 messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))])


def contract_prompt(rules: str, name: str | None = None) -> str:
    """The `write-contract` prompt: how to turn a description of an agent's rules into a v1 contract.
    The rule reference is built from each rule kind's own manual, so it never goes stale."""
    from agent_invariants.contract import ComparePolicy
    from agent_invariants.manual import option_lines, summary_line
    from agent_invariants.mcp_schemas import definitions
    from agent_invariants.rules import RULE_KINDS
    from agent_invariants.validation import since_version

    kinds = []
    for kind, rule in RULE_KINDS.items():
        if since_version(rule.config_type) > 1:
            continue   # (a version-1 contract that names one is refused: `needs "version": 2`)
        kinds.append(f"- `{kind}`: {summary_line(kind)}")
        kinds += [f"  {line}" for line in option_lines(kind)]
    policy = [f"- `{field}`: {spec['description']}"
              for field, spec in definitions(ComparePolicy)["ComparePolicy"]["properties"].items()]
    named = f' Name the contract "{name}".' if name else ""
    return f"""\
Write an agent-invariants contract (version 1) that encodes the operating rules of an AI agent \
described below.{named} agent-invariants checks recorded runs of the agent against the contract, \
deterministically, in CI and through this MCP server.

<rules>
{rules.strip()}
</rules>

A contract is one JSON object:
{{"version": 1, "name": "<agent or task name>", "description": "<optional>", "rules": [<rules>], \
"compare": {{<optional compare policy>}}}}

How to write it:
- One rule per expectation: {{"id": ..., "kind": ..., <options>}}. An id is a letter or digit, \
then up to 127 of A-Z a-z 0-9 . _ -, unique in the contract. Add "description" to say why the \
rule exists; add "severity": "warning" to a rule that should be reported but never fail a run.
- Tool names, event types, scopes and outcome ids are globs: `*` matches any run of characters, \
`?` one character, everything else is literal (never a regular expression). A glob never \
matches a missing value, not even `*`.
- Unknown keys are errors: use only the options listed here, and none marked "version 2" (a \
version-1 contract that uses one is refused).
- Encode what the description asks for, no more. If something cannot be expressed with these \
rule kinds (for example checks on tool arguments, or on time), say so rather than approximating.

Rule kinds:
{chr(10).join(kinds)}

Traces are lists of events with a strictly increasing `seq` and a `type`. Event types with a \
meaning: `tool.call` and `tool.result` (with `tool`, `call_id`, `call_signature`, `ok`), \
`approval.granted` (with `approval_id`, `approval_scope`, `approved`), `outcome.observed` (with \
`outcome_id`, `verdict`, `evidence_class`), `control.stop`, `run.completed`, `run.failed`, \
`telemetry.*`. Any event may carry `claims_completion` and `confidence`. Use the tool names and \
event types the agent really emits; if a recorded run is at hand, \
`agent_invariants_summarize_trace` lists its tools.

Compare policy (optional "compare" object; used when a changed agent's run is compared with a \
known-good run):
{chr(10).join(policy)}

Then:
1. Call `agent_invariants_validate_contract` with the contract and fix whatever it reports (the \
error names the JSON path) until it is valid.
2. If a recorded run is available, call `agent_invariants_check_trace` with the contract and its \
events, and make sure every violation is a real breach of the described rules, not a mistake in \
the contract.
3. Answer with the final contract in one JSON code block, then one line per rule saying which \
part of the description it encodes, then anything in the description you could not encode.
"""


_CHANGE_RULES = """\
The rules this agent must keep whatever changes in its model, prompt, memory or tools: which \
actions need an approval first (payments, refunds, deletions, deployments), that it does nothing \
after a stop or cancellation, which tools it must never use (shells, admin tools), how many \
attempts one call may take, that every call gets a result, and that it claims a task done only \
after an observed outcome proves it. Take the specifics from this conversation, the agent's \
instructions and its recorded runs; ask when an expectation is unclear."""


def change_prompt() -> str:
    """The `protect-behavior-change` prompt (the Node tool's, no arguments): write a contract for
    the agent at hand before changing it, then compare a run before the change with one after."""
    return contract_prompt(_CHANGE_RULES) + """
4. To check a change of model, prompt, memory or tools: record a run before it (the baseline) and \
one after it (the candidate) on the same task, call `agent_invariants_compare_traces` with the \
contract and both, and report every regression it lists. The change is safe to ship only when \
the result is compatible.
"""

