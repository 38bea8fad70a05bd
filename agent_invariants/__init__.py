"""agent-invariants: check recorded AI-agent traces against a contract of operating rules.

    from agent_invariants import load_contract, check_trace, compare_traces

    contract = load_contract("agent-invariants.json")
    report = check_trace(contract, "run.jsonl")          # a path, bytes, or a list of events
    if not report.passed:
        for violation in report.violations:
            print(violation.rule_id, violation.line, violation.message)

    compat = compare_traces(contract, "baseline.jsonl", "candidate.jsonl")
    print(compat.compatible, [r.kind for r in compat.regressions])

Every verdict is a pure function of the inputs. Bad input raises `InputError` (a `ContractError`
or `TraceError`) whose message names the file and the line or JSON path.

Names are loaded on first use, so `import agent_invariants` (and the CLI's `--help`) stays fast.
"""
from __future__ import annotations

TYPE_CHECKING = False   # typing.TYPE_CHECKING without importing typing, which `--version` need not pay for

__version__ = "0.1.0"

_EXPORTS = {
    "load_contract": "agent_invariants.contract",
    "Contract": "agent_invariants.contract",
    "ComparePolicy": "agent_invariants.contract",
    "check_trace": "agent_invariants.api",
    "compare_traces": "agent_invariants.api",
    "compare_reports": "agent_invariants.compare",
    "summarize_trace": "agent_invariants.api",
    "Event": "agent_invariants.events",
    "TraceSource": "agent_invariants.reader",
    "TraceFile": "agent_invariants.reader",
    "EventList": "agent_invariants.reader",
    "iter_events": "agent_invariants.reader",
    "read_trace": "agent_invariants.reader",
    "CheckReport": "agent_invariants.report",
    "CompareReport": "agent_invariants.report",
    "RuleResult": "agent_invariants.report",
    "Violation": "agent_invariants.report",
    "Regression": "agent_invariants.report",
    "RuleChange": "agent_invariants.report",
    "TraceSummary": "agent_invariants.report",
    "InputError": "agent_invariants.errors",
    "ContractError": "agent_invariants.errors",
    "TraceError": "agent_invariants.errors",
    "RULE_KINDS": "agent_invariants.rules",
}

__all__ = (  # spelled out, so linters and type checkers see the public names
    "RULE_KINDS",
    "CheckReport",
    "ComparePolicy",
    "CompareReport",
    "Contract",
    "ContractError",
    "Event",
    "EventList",
    "InputError",
    "Regression",
    "RuleChange",
    "RuleResult",
    "TraceError",
    "TraceFile",
    "TraceSource",
    "TraceSummary",
    "Violation",
    "__version__",
    "check_trace",
    "compare_reports",
    "compare_traces",
    "iter_events",
    "load_contract",
    "read_trace",
    "summarize_trace",
)

if TYPE_CHECKING:
    from typing import Any

    from agent_invariants.api import check_trace, compare_traces, summarize_trace
    from agent_invariants.compare import compare_reports
    from agent_invariants.contract import ComparePolicy, Contract, load_contract
    from agent_invariants.errors import ContractError, InputError, TraceError
    from agent_invariants.events import Event
    from agent_invariants.reader import EventList, TraceFile, TraceSource, iter_events, read_trace
    from agent_invariants.report import (
        CheckReport,
        CompareReport,
        Regression,
        RuleChange,
        RuleResult,
        TraceSummary,
        Violation,
    )
    from agent_invariants.rules import RULE_KINDS


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_invariants' has no attribute {name!r}")
    from importlib import import_module  # here, not at the top: `--version` imports this package

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
