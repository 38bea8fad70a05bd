"""`record --enforce`: may this call go ahead? Asked of the rules themselves, before it is answered.

A call is denied when an error-severity rule of a safety kind, run by the ordinary evaluator over
the trace so far (the call included, as the last event), puts a violation that is not
`inconclusive` at the call (spec v2 §10 point 74). The kinds are the `enforced` ones: deny_tool,
allow_tools, require_approval, approval_bound, tool_calls, retry_limit, stop_is_final, tool_args,
deny_event, require_order and precedence; each says in `Rule.denies` how it decides (tool_calls
and retry_limit deny every call beyond their bound, and a tool_args rule that reads the final
output never denies, its violations being liveness). Warning rules are never enforced.

The evaluator runs over the whole trace so far for each call, exactly as the spec defines the
decision, but only with the rules that could put a violation at this call (`Rule.may_deny`): a
rule that does not route a `tool.call` of this tool to a handler never learns the call's position,
so it cannot; a precedence rule judges only the calls its `after` may match, a tool_args rule
only those of its `tool`. A call that no enforced rule may deny is answered at once. Otherwise
each decision reads every event so far (telemetry and messages too): a run of n such calls and
nothing else costs about n²/2 event visits of the rules asked (a few microseconds each):
1,000 calls that a precedence rule with `correlate` judges take about 2.3 s under `--enforce`
against 0.3 s without, 2,000 about 7.5 s; the run timeout still bounds the whole.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from agent_invariants._js import utf16_len
from agent_invariants.contract import Contract
from agent_invariants.engine import run_check
from agent_invariants.events import Event
from agent_invariants.reader import TraceFile
from agent_invariants.rules import RULE_KINDS, rule_for

MAX_LINE = 1024 * 1024
"""The line limit the trace is read with: `record` writes no line longer."""

__all__ = ("Denial", "Enforcer")

MAX_REASON = 500
"""The longest denial reason, in UTF-16 units as trace strings are measured (so also at most 500
code points, as the spec asks)."""


def _cut(text: str) -> str:
    """The longest start of `text` within MAX_REASON UTF-16 units (astral characters count twice)."""
    units = 0
    for at, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > MAX_REASON:
            return text[:at]
    return text


MAX_RULE_IDS = 5_000
"""The most rule ids a denial lists (`data.rule_ids`): rule ids are at most 128 ASCII characters,
so 5,000 of them keep the `tool.denied` line well within a trace line (10,000 would not fit)."""


class Denial(NamedTuple):
    """Why a call was denied: `<rule_id>: <message>` of the first firing rule, and the firing
    rules (the first MAX_RULE_IDS, in contract order, and how many more fired)."""

    reason: str
    rule_ids: list[str]
    left_out: int = 0

    def data(self) -> dict[str, Any]:
        """The `data` of the `tool.denied` event."""
        if not self.left_out:
            return {"rule_ids": self.rule_ids}
        return {"rule_ids": self.rule_ids, "rule_ids_left_out": self.left_out}


class Enforcer:
    """Judges calls against the enforced rules of a contract."""

    def __init__(self, contract: Contract) -> None:
        self._contract = contract
        self._configs = [config for config in contract.rules
                         if config.effective_severity == "error" and RULE_KINDS[config.kind].enforced]
        self._probes = [rule_for(config, 1) for config in self._configs]   # asked for routes only
        self._contracts: dict[tuple[int, ...], Contract] = {}

    def judge(self, trace: str, call: Event) -> Denial | None:
        """Run the enforced rules that could fire at `call` over the trace file, whose last event it is."""
        asked = tuple(at for at, probe in enumerate(self._probes) if probe.may_deny(call))
        if not asked:
            return None
        contract = self._contracts.get(asked)
        if contract is None:
            contract = self._contracts[asked] = msgspec.structs.replace(
                self._contract, rules=[self._configs[at] for at in asked])
        # (the field names of the first events are sampled for the report's notices: no decision reads them)
        source = TraceFile(trace, max_line_bytes=MAX_LINE, sample_fields=False)
        checked = run_check(contract, source, max_violations=0, partial=True)
        index = checked.report.summary.events - 1
        firing = [(rule, result) for rule, result in zip(checked.rules, checked.report.results, strict=True)
                  if rule.denies(result, call, index)]
        if not firing:
            return None
        rule, result = firing[0]
        reason = f"{rule.id}: {rule.denial(result, call, index)}"
        if utf16_len(reason) > MAX_REASON:
            reason = _cut(reason)
        return Denial(reason, [rule.id for rule, _ in firing[:MAX_RULE_IDS]], max(len(firing) - MAX_RULE_IDS, 0))
