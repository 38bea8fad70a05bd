"""Every rule kind's docstring is its user manual: fixed sections, runnable examples, all options documented."""
from __future__ import annotations

import inspect
import json
import re

import msgspec
import pytest

from agent_invariants import check_trace
from agent_invariants.rules import RULE_KINDS

from support import contract

SPEC_KINDS = {
    "deny_tool", "allow_tools", "require_approval", "stop_is_final", "completion_requires_outcome",
    "retry_limit", "event_budget", "require_order", "require_event", "deny_event", "tool_result_required",
    "confidence_requires_outcome",
}
SECTIONS = ("What it checks", "Why it matters", "Failing trace", "Passing trace", "Options", "Known limits")
SHARED_FIELDS = {"id", "severity", "description"}

KINDS = sorted(RULE_KINDS)
RULE_IN_BACKTICKS = re.compile(r"With `(\{.*?\})`:", re.DOTALL)
JSONL_BLOCK = re.compile(r"```jsonl\n(.*?)```", re.DOTALL)
VIOLATION_AT = re.compile(r"[Vv]iolation at seq (\d+)")
LEADING_NAME = re.compile(r"`(\w+)`(?: \([^()]*\))?")


def contract_of(rule: dict) -> dict:
    """The contract of one rule, at the version its kind needs."""
    return contract(rule, version=getattr(RULE_KINDS[rule["kind"]].config_type, "since_version", 1))


def sections(kind: str) -> dict[str, str]:
    doc = inspect.getdoc(RULE_KINDS[kind]) or ""
    parts = re.split(r"^## (.+?)\s*$", doc, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def example(section: str) -> bytes:
    blocks = JSONL_BLOCK.findall(section)
    assert len(blocks) == 1, "expected exactly one ```jsonl block"
    return blocks[0].encode("utf-8")


def failing_rule(kind: str) -> dict:
    found = RULE_IN_BACKTICKS.findall(sections(kind)["Failing trace"])
    assert len(found) == 1, "expected one contract rule in backticks after 'With'"
    rule = json.loads(found[0])
    assert rule["kind"] == kind
    return rule


def option_names(section: str) -> list[str]:
    """Backticked names leading each `- ` bullet: "- `a`, `b` (...)" and "- `a` (...), `b` (...)" give a, b."""
    bullets: list[str] = []
    for line in section.splitlines():
        if line.startswith("- "):
            bullets.append(line[2:])
        elif bullets and line.startswith(" "):
            bullets[-1] += " " + line.strip()
    names = []
    for rest in bullets:
        while match := LEADING_NAME.match(rest):
            names.append(match[1])
            rest = rest[match.end():]
            if not rest.startswith(", "):
                break
            rest = rest[2:]
    return names


def test_registry_holds_every_spec_kind():
    assert set(RULE_KINDS) >= SPEC_KINDS   # a kind added later joins them without a change here
    for kind, rule in RULE_KINDS.items():
        assert rule.kind == kind


@pytest.mark.parametrize("kind", KINDS)
def test_docstring_has_the_sections_in_order(kind):
    doc = inspect.getdoc(RULE_KINDS[kind]) or ""
    headings = re.findall(r"^## (.+?)\s*$", doc, flags=re.MULTILINE)
    assert tuple(headings) == SECTIONS
    for name, body in sections(kind).items():
        assert body.strip(), f"section {name!r} is empty"


@pytest.mark.parametrize("kind", KINDS)
def test_failing_example_fails_its_rule(kind):
    rule = failing_rule(kind)
    failing = sections(kind)["Failing trace"]
    report = check_trace(contract_of(rule), example(failing))
    (result,) = report.results
    assert (result.rule_id, result.rule_kind) == (rule["id"], kind)
    assert result.passed is False and result.violations
    assert report.passed is (rule.get("severity") == "warning")
    stated = [int(seq) for seq in VIOLATION_AT.findall(failing)]
    if stated:
        assert [v.event_seq for v in result.violations] == stated


QUOTED_MESSAGE = re.compile(r"(?:[Vv]iolation at seq \d+(?: \([^()]*\))?|[Vv]iolation, not tied to an event)"
                            r": `([^`]+)`")


@pytest.mark.parametrize("kind", KINDS)
def test_message_quoted_under_the_failing_trace_is_the_one_given(kind):
    failing = sections(kind)["Failing trace"]
    quoted = [" ".join(text.split()) for text in QUOTED_MESSAGE.findall(failing)]
    report = check_trace(contract_of(failing_rule(kind)), example(failing))
    assert set(quoted) <= {violation.message for violation in report.violations}


def test_every_manual_quotes_the_message_of_its_failing_trace():
    assert [kind for kind in sorted(SPEC_KINDS) if not QUOTED_MESSAGE.search(sections(kind)["Failing trace"])] == []


@pytest.mark.parametrize("kind", KINDS)
def test_passing_example_passes_the_failing_examples_rule(kind):
    rule = failing_rule(kind)
    passing = sections(kind)["Passing trace"]
    assert not RULE_IN_BACKTICKS.search(passing), "the passing trace reuses the failing section's rule"
    report = check_trace(contract_of(rule), example(passing))
    (result,) = report.results
    assert result.rule_kind == kind
    assert result.passed is True and result.violations == []
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


@pytest.mark.parametrize("kind", KINDS)
def test_options_section_matches_config_fields(kind):
    fields = {field.encode_name for field in msgspec.structs.fields(RULE_KINDS[kind].config_type)}
    assert fields >= SHARED_FIELDS
    documented = option_names(sections(kind)["Options"])
    assert documented, "no `- `name`` bullets in ## Options"
    assert len(documented) == len(set(documented)), "an option is documented twice"
    assert set(documented) <= fields - SHARED_FIELDS, f"not config fields: {set(documented) - fields}"
    assert fields - SHARED_FIELDS <= set(documented), f"undocumented: {fields - SHARED_FIELDS - set(documented)}"


def test_option_parser_reads_leading_names_only():
    section = ("- `a`, `b` (integers): see `not_me`.\n"
               "- `c` (glob, default `x`), `d` (glob). `not_me_either`\n"
               "- `e` (list of 1..4 of p, q,\n"
               "  r; default p).\n"
               "  - text with `nested` is a continuation\n"
               "Free text `nope`.\n")
    assert option_names(section) == ["a", "b", "c", "d", "e"]
