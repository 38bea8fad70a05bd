"""The `agent-invariants/lint/v1` report: what lint found in a contract."""
from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ("CODES", "LINT_SCHEMA", "ContractName", "Finding", "Read", "LintReport")

LINT_SCHEMA = "agent-invariants/lint/v1"

CODES = ("required_but_forbidden", "count_contradiction", "order_contradiction", "self_precedence",
         "reference_to_forbidden", "dead_rule", "vacuous_distinct", "duplicate_rule", "shadowed_rule",
         "unschemaed_read", "v1_trap", "unrequired_subject")
"""Every code, in the order findings of one rule are listed."""


class Finding(msgspec.Struct, kw_only=True):
    """One thing lint proved about the contract's rules."""

    code: str
    """What was found, e.g. `required_but_forbidden`."""
    level: Literal["error", "warning"]
    """`error`: no trace can pass (every rule it rests on has severity error); `warning`: a rule
    that can never fire, or that is redundant."""
    rule_ids: list[str]
    """The rules it rests on, in contract order."""
    pointer: str
    """JSON pointer (RFC 6901) into the contract (after `extends`) at the field that conflicts."""
    message: str
    """What is wrong, in a sentence."""


class ContractName(msgspec.Struct, kw_only=True):
    name: str
    version: int


class Read(msgspec.Struct, kw_only=True):
    """An output path the contract reads (`--interface`)."""

    path: str
    """The path, as `stability` writes paths (`refunds[].amount`; `$` is the whole output)."""
    rules: list[str]
    """The rules that read it, in contract order."""
    required: bool
    """Whether an output_schema rule requires a value there."""


class LintReport(msgspec.Struct, kw_only=True):
    """The agent-invariants/lint/v1 report (`lint --format json`)."""

    schema: str
    """Always `agent-invariants/lint/v1`."""
    contract: ContractName
    """The contract linted."""
    errors: int
    """Findings of level error."""
    warnings: int
    """Findings of level warning."""
    findings: list[Finding]
    """Sorted by the lowest rule index they name, then the code (in the order of the codes
    table), then pointer."""
    truncated: bool | UnsetType = UNSET
    """True when lint stopped at 10,000 findings, or at about 4 million characters of them (a
    contract of thousands of rules that shadow each other): the counts are of the findings
    listed, and the contract has more."""
    interface: list[Read] | UnsetType = UNSET
    """With `--interface`: every output path the contract reads, sorted by path."""
