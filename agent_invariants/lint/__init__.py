"""what a contract's rules say about each other, before any trace is read.

    agent-invariants lint --contract agent-invariants.json

A contract that no trace can pass, or whose rules can never fire, looks fine until the day it
matters. `lint` reads the rules alone and reports what they imply together:

    error required_but_forbidden [no-shell, must-exec] /rules/1/tool: shell.exec must be called (must-exec needs 1 call), but no-shell (deny_tool) denies it.

## Levels
- *error*: a proof that no trace can pass, resting only on rules of severity error;
- *warning*: a rule that can never fire or is redundant, or an error-level condition that rests
  on a warning-severity rule (a warning never fails a trace).

## What it finds
Errors (each a warning when it rests on a warning-severity rule):
- `required_but_forbidden`: a tool some rule requires (R(t) >= 1: `tool_calls.min`, a
  `require_event` on `tool.call`, a `tool_order` entry, `tool_args.call_index`) that a
  `deny_tool` denies, an error-severity `allow_tools` leaves out, or a cap of 0 forbids.
- `count_contradiction`: more calls required of the tools a cap covers than it allows
  (`tool_calls.max`, a `require_event.max` on calls, `event_budget.max_tool_calls` or
  `max_events`, `retry_limit.max_attempts` with `group_by: tool`, tool by tool).
- `order_contradiction`: A before B and B before A (`precedence` or `require_order` on literal
  calls), an error when either tool is required (else a warning: both are then forbidden); or an
  exact `tool_order` that calls B before any A while a rule needs A first.
- `self_precedence`: an order rule whose before and after are the same matcher: such events can
  never occur (an error when they are required).
- `reference_to_forbidden`: a `$from_result` on a tool no call may make (an error when the rule's
  subject is required and the reference is not inside `$any_of`).
Warnings:
- `dead_rule`: a rule on calls of a tool that an error-severity `allow_tools` or `deny_tool` forbids.
- `vacuous_distinct`: `tool_args.distinct` on a tool capped below 2 calls.
- `duplicate_rule`: a rule equal to an earlier one (id, description and severity aside, defaults
  filled in).
- `shadowed_rule`: a rule whose every violation another of at least its severity raises (a
  `deny_tool` under a wider one, a `deny_event` with more keys, a larger cap on the same glob, a
  pattern of an `allow_tools` list that another pattern of the list already allows).
- `unschemaed_read`: an output path a condition or `matches_output_length` reads that no
  `output_schema` requires (without it, the rule is unresolved rather than failing).
- `v1_trap`: `allow_tools` with `*`; `require_approval` with `scope` (the grant needs both the
  id and the scope); a `stop_is_final` whose `allowed_after` leaves out its own stop type.
- `unrequired_subject`: a `tool_args`, `precedence`, `approval_bound`, `latency_budget` or
  `result_size` whose calls nothing requires: a run without them passes it as vacuous.

`--interface` also lists every path of the final output the rules read (conditions, lengths,
output_match trees, `$from_output`) and whether an `output_schema` requires it.

## In check and compare
`check`, `compare` and the MCP check tools lint a version-2 contract and refuse it when lint finds
an error, each error shown like a contract error at its rule (`contract.json:7: $.rules[1]: lint
required_but_forbidden: ...`, exit 2): a contract no trace can pass would otherwise fail every
trace for a reason the report does not name. `--no-lint` (`no_lint` in MCP) checks anyway.
Version-1 contracts are never refused. The library's `check_trace` does not lint: call
`agent_invariants.lint.lint_contract` (or `lint_refusal`) first.

Globs are compared as patterns: two intersect when some name matches both (exact); one covers
another when every name the second matches, the first matches too (never claimed wrongly).

## Output and exit
Text prints `<level> <code> [<rule ids>] <pointer>: <message>` per finding, then the counts;
`--format sarif` gives one result per finding at the contract file's line; `--format json` prints `agent-invariants/lint/v1`: `{schema, contract: {name, version}, errors,
warnings, findings: [{code, level, rule_ids, pointer, message}]}`. Findings are sorted by the first
rule they name, then the code (in the order of the table above), then pointer; pointers are JSON
pointers into the contract after `extends`. Exit 1 when a finding is an error (with `--strict`,
when there is any finding), 2 for an invalid contract (nothing on stdout), else 0. Both contract
versions are linted. Pairs of rules can be findings: lint stops at 10,000 findings (codes in the
order of the table), or once they hold about 4 million characters, says so, and marks the report
`truncated: true`.
"""  # noqa: E501 (the finding above is one line, as printed)
from __future__ import annotations

from msgspec import UNSET

from agent_invariants.contract import Contract, ContractSource, contract_lines
from agent_invariants.errors import ContractError
from agent_invariants.lint.codes import findings
from agent_invariants.lint.facts import Facts
from agent_invariants.lint.interface import interface
from agent_invariants.lint.report import LINT_SCHEMA, ContractName, Finding, LintReport

__all__ = ("Finding", "LintReport", "lint_contract", "lint_refusal", "refuse_unpassable")


def lint_contract(contract: Contract, *, with_interface: bool = False) -> LintReport:
    """What lint finds in a loaded contract (and, `with_interface`, the output paths it reads)."""
    facts = Facts.of(contract.rules)
    found, stopped = findings(facts)
    errors = sum(1 for finding in found if finding.level == "error")
    return LintReport(schema=LINT_SCHEMA, contract=ContractName(name=contract.name, version=contract.version),
                      errors=errors, warnings=len(found) - errors, findings=found,
                      truncated=True if stopped else UNSET, interface=interface(facts) if with_interface else UNSET)


def lint_refusal(contract: Contract, label: str, source: ContractSource | None = None, *,
                 skip: str = "--no-lint") -> ContractError | None:
    """What `check`, `compare` and the MCP check tools refuse a version-2 contract for (unless told
    not to lint): its error-level findings, each reported like a contract error at its rule,
    `contract.json:7: $.rules[1]: lint required_but_forbidden: ...` (`skip` names the way to
    check anyway). None when there is none, and
    always for a version-1 contract (the reference tool never refused one)."""
    if contract.version != 2:
        return None
    errors = [finding for finding in lint_contract(contract).findings if finding.level == "error"]
    if not errors:
        return None
    lines = {} if source is None else contract_lines(source).rules
    own = {rule_id: position for position, rule_id in enumerate(lines)}   # the file's own rules (packs add more)
    items: list[tuple[str | None, str, int | None]] = []
    for finding in errors:
        index = int(finding.pointer.split("/")[2])
        rule_id = contract.rules[index].id
        problem = f"lint {finding.code}: {finding.message} ({skip} to check anyway)"
        if source is None:   # (a mapping: its rules as loaded)
            items.append((f"$.rules[{index}]", problem, None))
        elif rule_id in lines:   # its place in the file, not among the rules its packs bring
            items.append((f"$.rules[{own[rule_id]}]", problem, lines[rule_id]))
        else:
            items.append(("$.extends", f"rule {rule_id} of a pack: {problem}", None))
    (path, problem, line), *more = items
    return ContractError(label, path, problem, line, more)


def refuse_unpassable(contract: Contract, label: str, source: ContractSource | None = None, *,
                      skip: str = "--no-lint") -> Contract:
    """The contract, unless `lint_refusal` refuses it: then that error is raised."""
    refusal = lint_refusal(contract, label, source, skip=skip)
    if refusal is not None:
        raise refusal
    return contract
