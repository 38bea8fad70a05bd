"""`--format html`: one self-contained page with each trace's timeline.

Read as a browser without scripts reads it (`html_page.parse`, which also fails on elements
closed out of order): what is drawn and folded, where each violation is pinned, that trace text
stays text, and that the page names nothing to load. The browser's own reading is
`test_html_browser.py`.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest
from html_page import Node, dangling, parse

from agent_invariants.render.html import MAX_LISTED
from agent_invariants.timeline import CONTEXT, MAX_PINNED, Timeline

from support import EXAMPLES, contract, events, jsonl

REFUND = EXAMPLES / "refund-desk"
SHORT = ["check", "--contract", str(REFUND / "contract.json"), "--trace", str(REFUND / "candidate.jsonl")]


def page_of(cli, *args: str, code: int = 1) -> tuple[str, Node]:
    """The page (every in-page link pointing at something drawn) and its tree."""
    result = cli(*args, "--format", "html")
    assert result.returncode == code, result.stderr
    page = parse(result.stdout)
    assert dangling(page) == []
    return result.stdout, page


def written_page(cli, *args: str, under: int = 5_000_000) -> Node:
    """The page a run writes with `--output` (exit 1): under `under` bytes, every in-page link
    pointing at something drawn."""
    result = cli(*args, "--format", "html", "--output", "p.html", timeout=300)
    assert result.returncode == 1, result.stderr
    data = (cli.cwd / "p.html").read_bytes()
    assert len(data) < under
    page = parse(data.decode())
    assert dangling(page) == []
    return page


def report_of(cli, *args: str) -> dict:
    return json.loads(cli(*args, "--format", "json").stdout)


def timeline_rows(section: Node) -> list[Node]:
    (table,) = section.all("table", cls="timeline")
    return table.all("tbody")[0].all("tr")


def cells(row: Node) -> list[str]:
    return [cell.text().strip() for cell in row.all("td")]


# -- a short trace: every event drawn, every violation pinned -----------------------------------------

def test_a_short_trace_is_drawn_whole_with_each_violation_pinned_at_its_event_and_line(cli):
    text, page = page_of(cli, *SHORT)
    report = report_of(cli, *SHORT)
    assert text.startswith("<!DOCTYPE html>\n") and text.endswith("</html>\n")
    assert "✗ failed" in page.all("header")[0].text()
    section = page.by_id("s1")
    rows = timeline_rows(section)
    assert [row.attrs["id"] for row in rows] == [f"s1-e{index}" for index in range(14)]
    assert [cells(row)[0] for row in rows] == [str(seq) for seq in range(1, 15)]
    pinned = {row.attrs["id"] for row in rows if "pinned" in (row.attrs.get("class") or "")}
    assert pinned == {f"s1-e{violation['event_index']}" for violation in report["violations"]}
    for violation in report["violations"]:
        row = section.by_id(f"s1-e{violation['event_index']}")
        assert cells(row)[1] == str(violation["line"])
        assert violation["rule_id"] in cells(row)[5] and violation["code"] in cells(row)[5]
    # the call and its result are paired both ways; marks say what a moment is in words
    assert "result at seq 7" in cells(section.by_id("s1-e5"))[4]
    assert "call at seq 6" in cells(section.by_id("s1-e6"))[4]
    assert "✗ failed" in cells(section.by_id("s1-e6"))[2]
    assert "■ stop" in cells(section.by_id("s1-e9"))[2]
    assert "⚑ claims completion" in cells(section.by_id("s1-e12"))[2]


def test_the_rule_table_says_each_status_in_words_and_offers_a_filter_for_each_failing_rule(cli):
    _, page = page_of(cli, *SHORT)
    report = report_of(cli, *SHORT)
    (table,) = page.by_id("s1").all("table", cls="rules")
    rows = table.all("tbody")[0].all("tr")
    assert [cells(row)[0] for row in rows] == [result["rule_id"] for result in report["results"]]
    for row, result in zip(rows, report["results"], strict=True):
        status = cells(row)[2]
        expected = "✓ passed" if result["passed"] else "⚠ warning" if result["severity"] == "warning" else "✗ error"
        assert status == expected
        buttons = row.all("button")
        assert len(buttons) == (0 if result["passed"] else 1)
        for button in buttons:   # shown by the script only: without it they would do nothing
            assert "hidden" in button.attrs and button.attrs["aria-pressed"] == "false"
    # a failing rule's name links to its first listed violation, which links to its event
    link = rows[1].all("a")[0].attrs["href"]
    violation = page.by_id(link[1:])
    assert "stop-means-stop" in violation.text()
    assert violation.all("a")[0].attrs["href"] == "#s1-e10"


def test_every_token_a_row_is_filtered_by_belongs_to_a_rule_of_the_table(cli):
    _, page = page_of(cli, *SHORT)
    section = page.by_id("s1")
    buttons = {button.attrs["data-rule"] for button in section.all("button") if button.attrs.get("data-rule")}
    used = {token for row in timeline_rows(section) for token in (row.attrs.get("data-rules") or "").split()}
    assert used == buttons


# -- nothing to load, nothing to run but its own script ------------------------------------------------

def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.mark.parametrize("args", [
    SHORT,
    ["compare", "--contract", str(REFUND / "contract.json"), "--baseline", str(REFUND / "baseline.jsonl"),
     "--candidate", str(REFUND / "candidate.jsonl")],
], ids=["check", "compare"])
def test_the_page_names_nothing_to_load_and_its_policy_allows_only_its_own_style_and_script(cli, args):
    text, page = page_of(cli, *args)
    (policy,) = [meta for meta in page.all("meta") if meta.attrs.get("http-equiv") == "Content-Security-Policy"]
    rules = dict(part.strip().split(" ", 1) for part in policy.attrs["content"].split(";"))
    assert rules["default-src"] == "'none'" and rules["img-src"] == "'none'" and rules["connect-src"] == "'none'"
    (style,) = page.all("style")
    (script,) = page.all("script")
    assert rules["style-src"] == _digest(style.children[0]) and rules["script-src"] == _digest(script.children[0])
    for node in page.walk():
        assert "src" not in node.attrs and "style" not in node.attrs
        assert not any(name.startswith("on") for name in node.attrs)
        assert node.attrs.get("href", "#").startswith("#")
    assert "url(" not in style.children[0] and "@import" not in style.children[0]
    assert not re.search(r"https?://", text)


def test_trace_text_stays_text_however_it_is_written(cli, write):
    hostile = ["<script>alert(1)</script>", "javascript:alert(1)", '"><img src=x onerror=alert(1)>',
               "pay\u202eyenom", "</style><style>body{display:none}</style>", "a\x1b[2Jb", "pay\u200bments"]
    write("c.json", contract({"id": "nothing-goes", "kind": "deny_tool", "tool": "*"}))
    write("t.jsonl", jsonl(events(*[{"type": "tool.call", "tool": tool, "call_id": tool,
                                     "approval_id": f"<b>{tool}</b>"} for tool in hostile])))
    text, page = page_of(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    assert len(page.all("script")) == 1 and len(page.all("style")) == 1
    assert page.all("img") == [] and page.all("b") == []
    assert "\u202e" not in text and "\x1b" not in text and "\u200b" not in text
    rows = timeline_rows(page.by_id("s1"))
    shown = [cells(row)[3] for row in rows]
    assert shown == ["<script>alert(1)</script>", "javascript:alert(1)", '"><img src=x onerror=alert(1)>',
                     "pay\\u202eyenom", "</style><style>body{display:none}</style>", "a\\x1b[2Jb", "pay\\u200bments"]
    assert "approval <b><script>alert(1)</script></b>" in cells(rows[0])[4]
    for node in page.walk():
        assert node.attrs.get("href", "#").startswith("#")


@pytest.mark.parametrize("char", ["\u206a", "\u206f", "\ufff9", "\ufffb", "\U0001d173", "\U0001bca0", "\U00013430",
                                  "\U000e0100", "\u180b", "\u2064"])
def test_a_format_character_that_shows_nothing_is_an_escape(cli, write, char):
    """'invisible characters shown as escapes': a tool name holding one reads as `pay\\u206a...`
    in its row, never as a name that looks like another; a drawn number sign stays itself."""
    write("c.json", contract({"id": "nothing-goes", "kind": "deny_tool", "tool": "*"}))
    write("t.jsonl", jsonl(events({"type": "tool.call", "tool": f"pay{char}ments"},
                                  {"type": "tool.call", "tool": "sum\u0600"})))
    text, page = page_of(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    assert char not in text
    escape = f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"
    assert [cells(row)[3] for row in timeline_rows(page.by_id("s1"))] == [f"pay{escape}ments", "sum\u0600"]


# -- a long trace: the neighbourhood of each finding, counted stretches elsewhere ---------------------

def test_a_long_trace_shows_its_ends_each_finding_with_its_neighbours_and_marked_events(cli, write):
    specs = [{"type": "agent.message"} for _ in range(1000)]
    specs[500] = {"type": "tool.call", "tool": "shell.exec", "call_id": "c1"}
    specs[700] = {"type": "approval.granted", "approval_id": "a1"}
    specs[800] = {"type": "tool.call", "tool": "kb.search", "call_id": "c2"}
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    write("t.jsonl", jsonl(events(*specs)))
    _, page = page_of(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    rows = timeline_rows(page.by_id("s1"))
    drawn = [row.attrs.get("id", "gap") for row in rows]
    assert drawn == ["s1-e0", "s1-e1", "s1-e2", "gap", *[f"s1-e{index}" for index in range(497, 504)], "gap",
                     "s1-e700", "gap", "s1-e997", "s1-e998", "s1-e999"]
    gaps = [cells(row) for row in rows if "gap" in (row.attrs.get("class") or "")]
    assert gaps[0][0] == "4–497" and gaps[0][2] == "⋯ 494 events folded: agent.message ×494"
    assert gaps[2][2] == "⋯ 296 events folded: agent.message ×295, tool.call ×1; tools: kb.search ×1"
    assert "◆ approval" in cells(page.by_id("s1-e700"))[2]
    note = page.by_id("s1-timeline")
    assert note.tag == "h3"
    assert "Traces of up to 400 events are drawn whole" in page.by_id("s1").text()


def test_a_million_event_trace_makes_a_page_under_five_megabytes(cli, tmp_path):
    """The worst text the limits allow on every drawn row: 500-character names that grow sixfold
    when escaped, on a denied call every thousand events and on each of its neighbours, so that
    the page's size limit, not the count of rows, is what stops the drawing."""
    name = '"&<>' * 125
    fat = {"type": "tool.result", "tool": name, "call_id": name, "result": {"note": name}}
    quiet = b'{"seq":%d,"type":"agent.message"}\n'
    with open(tmp_path / "t.jsonl", "wb") as out:
        for seq in range(1, 1_000_001):
            position = seq % 1000
            if position == 0:
                out.write(json.dumps({"seq": seq, "type": "tool.call", "tool": name, "call_id": name,
                                      "args": {"note": name}}).encode() + b"\n")
            elif position <= CONTEXT or position >= 1000 - CONTEXT:
                out.write(json.dumps({"seq": seq, **fat}).encode() + b"\n")
            else:
                out.write(quiet % seq)
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "nothing-goes", "kind": "deny_tool", "tool": "*"})))
    page = written_page(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    section = page.by_id("s1")
    rows = timeline_rows(section)
    assert "The page reached its size limit: the rest of this timeline, from event" in cells(rows[-1])[0]
    assert 1000 < len(rows) < (2 * CONTEXT + 2) * MAX_PINNED
    assert "1,000,000 events" in page.all("header")[0].text()


# -- compare and batches ------------------------------------------------------------------------------

def test_compare_lines_up_the_two_runs_tool_calls_and_marks_the_regressions(cli):
    args = ["compare", "--contract", str(REFUND / "contract.json"), "--baseline", str(REFUND / "baseline.jsonl"),
            "--candidate", str(REFUND / "candidate.jsonl")]
    _, page = page_of(cli, *args)
    section = page.by_id("s1")
    (paths,) = section.all("table", cls="paths")
    rows = [cells(row) for row in paths.all("tbody")[0].all("tr")]
    assert rows == [["3", "crm.lookup", "= same", "crm.lookup", "3"],
                    ["5", "kb.search", "− removed", "", ""],
                    ["9", "payments.refund", "= same ✗ regression", "payments.refund", "6"],
                    ["11", "crm.lookup", "≠ changed", "payments.refund", "8"],
                    ["14", "mail.draft", "≠ changed ✗ regression", "shell.exec", "11"]]
    # the candidate's timeline pins the regressions too; the baseline's is there, folded away
    assert "regression" in cells(section.by_id("s1c-e10"))[5]
    assert section.by_id("s1-baseline").tag == "details"
    assert len(timeline_rows(section.by_id("s1b"))) == 17   # every event of the baseline
    report = report_of(cli, *args)
    links = [a.attrs["href"] for li in section.all("ol")[0].all("li") for a in li.all("a")]
    assert links == [f"#s1c-e{regression['event_index']}" for regression in report["regressions"]
                     if "event_index" in regression]


def test_a_batch_starts_with_an_index_of_its_traces_readable_or_not(cli, write):
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    write("traces/a.jsonl", jsonl(events({"type": "tool.call", "tool": "shell.exec"})))
    write("traces/b.jsonl", jsonl(events({"type": "tool.call", "tool": "kb.search"})))
    write("traces/c.jsonl", "{not json\n")
    _, page = page_of(cli, "check", "--contract", "c.json", "--trace", "traces", code=2)
    assert page.all("header")[0].all("p")[0].text() == \
        "✗ failed 3 traces: 1 passed, 1 failed, 1 unreadable, 1 error, 0 warnings"
    index = page.all("nav")[0]
    rows = [cells(row) for row in index.all("tbody")[0].all("tr")]
    assert [row[:2] for row in rows] == [["traces/a.jsonl", "✗ failed"], ["traces/b.jsonl", "✓ passed"],
                                         ["traces/c.jsonl", "⊘ unreadable"]]
    assert [a.attrs["href"] for a in index.all("a")] == ["#s1", "#s2"]
    assert "no-shell" in cells(page.by_id("s1-e0"))[5]
    assert timeline_rows(page.by_id("s2"))[0].attrs.get("class") is None


def test_a_batch_index_of_more_than_1000_traces_names_those_that_failed_first(cli, write):
    """The index named the first 1,000 traces in file order: failing traces after them were named
    nowhere on the page. It still shows its rows in file order."""
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    for n in range(1003):
        write(f"traces/t{n:04d}.jsonl", jsonl(events({"type": "tool.call", "tool": "shell.exec" if n in (1, 1001)
                                                         else "kb.search"})))
    _, page = page_of(cli, "check", "--contract", "c.json", "--trace", "traces", code=1)
    rows = [cells(row)[:2] for row in page.all("nav")[0].all("tbody")[0].all("tr")]
    assert len(rows) == 1000 and rows[:3] == [["traces/t0000.jsonl", "✓ passed"], ["traces/t0001.jsonl", "✗ failed"],
                                              ["traces/t0002.jsonl", "✓ passed"]]
    assert rows[-1] == ["traces/t1001.jsonl", "✗ failed"] and ["traces/t0998.jsonl", "✓ passed"] in rows


# -- where no timeline can be drawn, the page says why ------------------------------------------------

def test_a_trace_on_standard_input_is_kept_for_the_page_and_the_copy_removed(cli, tmp_path):
    """Standard input can be read once: for the page, the check reads a private copy of it, which
    the page reads again and which is gone once the page is written (or the trace refused)."""
    spool = tmp_path / "spool"
    spool.mkdir()
    result = cli("check", "--contract", str(REFUND / "contract.json"), "--trace", "-", "--format", "html",
                 stdin=(REFUND / "candidate.jsonl").read_text(), env={"TMPDIR": str(spool)})
    assert result.returncode == 1, result.stderr
    section = parse(result.stdout).by_id("s1")
    assert "stdin" in section.all("h2")[0].text()
    assert [cells(row)[0] for row in timeline_rows(section)] == [str(seq) for seq in range(1, 15)]
    assert list(spool.iterdir()) == []
    refused = cli("check", "--contract", str(REFUND / "contract.json"), "--trace", "-", "--format", "html",
                  stdin='{"seq": 1}\n', env={"TMPDIR": str(spool)})
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("agent-invariants: <stdin>:1: ")
    assert list(spool.iterdir()) == []


def test_a_trace_that_changed_after_the_check_loses_its_timeline_rather_than_drawing_it_wrong():
    from agent_invariants import check_trace
    from agent_invariants.reader import TraceFile
    from agent_invariants.render import RenderOptions
    from agent_invariants.render.html import render
    from agent_invariants.timeline import Missing, collect

    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
    before = jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "shell.exec"})).encode()
    after = jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "shell.exec"}, start=5)).encode()
    report = check_trace(rules, TraceFile(before))
    timelines = collect(report, lambda check, path: TraceFile(after))
    assert timelines.of(report) == Missing("the trace changed after it was checked: check it again to see its "
                                           "timeline")
    assert "No timeline: the trace changed after it was checked" in render(report, RenderOptions(
        timelines=timelines))
    same = collect(report, lambda check, path: TraceFile(before))
    assert "shell.exec" in parse(render(report, RenderOptions(timelines=same))).by_id("s1-e1").text()


def test_an_imported_trace_shows_where_each_event_came_from(cli):
    source = EXAMPLES / "imports" / "langchain.runs.jsonl"
    args = ["check", "--contract", str(EXAMPLES / "imports" / "contract.json"), "--trace", str(source),
            "--input-format", "langsmith"]
    report = report_of(cli, *args)
    _, page = page_of(cli, *args)
    (violation,) = report["violations"]
    row = page.by_id(f"s1-e{violation['event_index']}")
    assert cells(row)[1] == str(violation["line"])
    assert f"span {violation['span_id']}" in cells(row)[4]
    assert "no-shell" in cells(row)[5]


@pytest.mark.parametrize("command", ["stability", "mutate"])
def test_reports_without_a_trace_to_draw_refuse_html(cli, command):
    args = [str(REFUND / "baseline.jsonl"), str(REFUND / "candidate.jsonl")] if command == "stability" else \
        ["--contract", str(REFUND / "contract.json"), "--trace", str(REFUND / "baseline.jsonl")]
    result = cli(command, *args, "--format", "html")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"agent-invariants: --format html: {command} reports as text, pretty, "
                                          "json, sarif, junit, markdown or github (html is for check, compare and "
                                          "record)"]


def test_the_page_is_the_same_byte_for_byte_each_time(cli, write):
    first = cli(*SHORT, "--format", "html").stdout
    assert cli(*SHORT, "--format", "html").stdout == first
    cli(*SHORT, "--format", "html", "--output", "page.html")
    assert Path(cli.cwd / "page.html").read_text(encoding="utf-8") == first


def test_an_imported_trace_on_standard_input_has_no_timeline_and_the_page_says_why(cli):
    source = EXAMPLES / "imports" / "langchain.runs.jsonl"
    result = cli("check", "--contract", str(EXAMPLES / "imports" / "contract.json"), "--trace", "-",
                 "--input-format", "langsmith", "--format", "html", stdin=source.read_text())
    assert result.returncode == 1, result.stderr
    assert "No timeline: standard input can be read only once" in parse(result.stdout).by_id("s1").text()


def test_a_recorded_run_shows_the_calls_the_harness_prevented(cli):
    record = EXAMPLES / "record"
    result = cli("record", "--contract", str(record / "contract.json"), "--fixtures", str(record / "fixtures.json"),
                 "--enforce", "--fake-clock", "--out", "run.jsonl", "--env", "AGENT_MODE=reckless", "--format", "html",
                 "--", "python3", str(record / "agent.py"))
    assert result.returncode == 1, result.stderr
    section = parse(result.stdout).by_id("s1")
    denied = [row for row in timeline_rows(section) if cells(row)[2].startswith("tool.denied")]
    assert denied and all("⊘ prevented" in cells(row)[2] for row in denied)
    facts = dict(zip([dt.text() for dt in section.all("dt")], [dd.text() for dd in section.all("dd")], strict=True))
    assert facts["Calls prevented"] == f"⊘ {len(denied)}"
    assert facts["Run"] == "fake-run"


def test_a_batch_of_comparisons_indexes_its_pairs_and_draws_each_pair(cli, write):
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    for folder, tool in (("base", "kb.search"), ("cand", "shell.exec")):
        write(f"{folder}/one.jsonl", jsonl(events({"type": "tool.call", "tool": "kb.search"})))
        write(f"{folder}/two.jsonl", jsonl(events({"type": "tool.call", "tool": "kb.search"},
                                                  {"type": "tool.call", "tool": tool})))
    text, page = page_of(cli, "compare", "--contract", "c.json", "--baseline", "base", "--candidate", "cand")
    assert page.all("header")[0].all("p")[0].text() == "✗ regression 2 pairs: 1 compatible, 1 regressed, 2 regressions"
    rows = [cells(row) for row in page.all("nav")[0].all("tbody")[0].all("tr")]
    assert [row[:2] for row in rows] == [["cand/one.jsonl", "✓ compatible"], ["cand/two.jsonl", "✗ regression"]]
    (paths,) = page.by_id("s2").all("table", cls="paths")
    assert [cells(row) for row in paths.all("tbody")[0].all("tr")] == [
        ["1", "kb.search", "= same", "kb.search", "1"],
        ["2", "kb.search", "≠ changed ✗ regression", "shell.exec", "2"]]


# -- the page's limits hold whatever the report holds --------------------------------------------------

def test_wide_characters_count_as_the_bytes_they_take(cli, write):
    """The budgets are in bytes: four-byte characters on every drawn row, each row broken by six
    or seven rules with long ids (156 failing rules taking turns), stay under the limit, and every
    link still points at something drawn."""
    emoji = "\U0001F600"
    rules = [{"id": "a" * 125 + f"{number:03d}", "kind": "deny_tool", "tool": "*"} for number in range(6)]
    rules += [{"id": "b" * 123 + f"{number:05d}", "kind": "deny_tool", "tool": f"*-b{number}"} for number in range(150)]
    write("c.json", {"version": 1, "name": "wide", "rules": rules})
    write("t.jsonl", "".join(json.dumps({"seq": seq, "type": "tool.call", "call_id": f"c{seq}",
                                         "tool": emoji * 200 + (f"-b{seq // 10}" if seq % 10 == 0 else "-n"),
                                         "args": {"k": emoji * 300}, "reason": emoji * 300},
                                        ensure_ascii=False) + "\n" for seq in range(1, 1501)))
    page = written_page(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    assert "The page reached its size limit" in page.by_id("s1").text()


def test_thousands_of_rules_fill_the_rule_table_only_up_to_its_limit(cli, write):
    write("c.json", {"version": 1, "name": "many", "rules": [
        {"id": "x" * 120 + f"{number:07d}", "kind": "deny_tool", "tool": f"t{number}"} for number in range(2000)]})
    write("t.jsonl", jsonl(events(*[{"type": "tool.call", "tool": f"t{number}"} for number in range(1000)])))
    section = written_page(cli, "check", "--contract", "c.json", "--trace", "t.jsonl").by_id("s1")
    assert re.search(r"[\d,]+ more rules are not shown: the page reached its size limit", section.text())
    # a thousand failing rules take turns: the limits of the page's words hold
    pinned = [row for row in timeline_rows(section) if "pinned" in (row.attrs.get("class") or "")]
    assert MAX_PINNED <= len(pinned) <= MAX_PINNED + 2 * CONTEXT   # a drawn neighbour shows its findings too
    assert len(section.all("ol", cls="violations")[0].all("li")) == MAX_LISTED
    assert "700 more events with findings are not drawn: each failing rule drew its first ones." in section.text()


def test_a_batch_lists_only_the_failing_rules_of_each_trace(cli, write):
    write("c.json", {"version": 1, "name": "many", "rules": [
        {"id": f"rule-{number:04d}", "kind": "deny_tool", "tool": f"t{number}"} for number in range(2000)]})
    for number in range(20):
        write(f"traces/{number:02d}.jsonl", jsonl(events({"type": "tool.call", "tool": f"t{number}"})))
    section = written_page(cli, "check", "--contract", "c.json", "--trace", "traces", under=1_000_000).by_id("s3")
    (table,) = section.all("table", cls="rules")
    assert [cells(row)[0] for row in table.all("tbody")[0].all("tr")] == ["rule-0002"]
    assert "1,999 more rules passed." in section.text()


def test_a_folded_stretch_names_its_most_common_tool_however_many_others_come_first(cli, write):
    decoys = [{"type": "tool.call", "tool": f"decoy{number:03d}"} for number in range(300)]
    specs = [{"type": "tool.call", "tool": "shell.exec"}, *decoys,
             *[{"type": "tool.call", "tool": "payments.refund"} for _ in range(5000)],
             {"type": "tool.call", "tool": "\u0000other"}, {"type": "tool.call", "tool": "shell.exec"}]
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    write("t.jsonl", jsonl(events(*specs)))
    _, page = page_of(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    (gap,) = [cells(row)[2] for row in timeline_rows(page.by_id("s1")) if "gap" in (row.attrs.get("class") or "")]
    # 300 names before it: past 256, the counts are bounds, and the common name is still there
    assert gap.startswith("⋯ 5,295 events folded: tool.call ×5,295; tools: payments.refund ×≥")
    assert gap.endswith(", other ×≤" + gap.rsplit("×≤", 1)[1])
    found = re.search(r"payments\.refund ×≥([\d,]+)", gap)
    assert found is not None and 5000 - 300 <= int(found.group(1).replace(",", "")) <= 5000


def test_a_tool_named_like_the_other_count_is_its_own_name(cli, write):
    specs = [{"type": "tool.call", "tool": "shell.exec"},
             *[{"type": "tool.call", "tool": "\u0000other"} for _ in range(100)],
             *[{"type": "tool.call", "tool": "kb.search"} for _ in range(3)],
             *[{"type": "tool.call", "tool": "\u0000other"} for _ in range(394)],
             {"type": "tool.call", "tool": "shell.exec"}]
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    write("t.jsonl", jsonl(events(*specs)))
    _, page = page_of(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    (gap,) = [cells(row)[2] for row in timeline_rows(page.by_id("s1")) if "gap" in (row.attrs.get("class") or "")]
    assert gap == "⋯ 491 events folded: tool.call ×491; tools: \\x00other ×488, kb.search ×3"


def test_calls_are_lined_up_along_a_longest_common_subsequence_quickly_on_the_worst_input(cli, write):
    """1,000 calls of one tool against the same tool alternating with another: the first 500 of
    each are lined up, 250 of them alike (the longest common subsequence), at once."""
    write("c.json", contract({"id": "no-b", "kind": "deny_tool", "tool": "b"}))
    write("base.jsonl", jsonl(events(*[{"type": "tool.call", "tool": "a"} for _ in range(1000)])))
    write("cand.jsonl", jsonl(events(*[{"type": "tool.call", "tool": "ab"[number % 2]} for number in range(1000)])))
    result = cli("compare", "--contract", "c.json", "--baseline", "base.jsonl", "--candidate", "cand.jsonl",
                 "--format", "html", timeout=30)
    assert result.returncode == 1, result.stderr
    (paths,) = parse(result.stdout).by_id("s1").all("table", cls="paths")
    rows = [cells(row) for row in paths.all("tbody")[0].all("tr")]
    assert [row[2].split(" ✗")[0] for row in rows].count("= same") == 250
    assert [row[1] for row in rows if row[0]] == ["a"] * 500
    assert [row[3] for row in rows if row[4]] == ["a", "b"] * 250


def test_a_trace_file_replaced_after_the_check_loses_its_timeline_even_with_the_same_seqs(tmp_path):
    """The CLI notes each trace's stamp (device, inode, size, times) before the check; a file
    replaced by another with the same count of events and the same seqs is still told apart."""
    import os

    from agent_invariants import check_trace
    from agent_invariants.timeline import Missing, collect, stamp

    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
    path = tmp_path / "t.jsonl"
    path.write_text(jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "shell.exec"})))
    stamps = {str(path): stamp(str(path))}
    report = check_trace(rules, str(path))
    assert isinstance(collect(report, stamps=stamps).of(report), Timeline)
    other = tmp_path / "other.jsonl"
    other.write_text(jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "harmless.tool"})))
    os.replace(other, path)
    assert collect(report, stamps=stamps).of(report) == Missing(
        "the trace changed after it was checked: check it again to see its timeline")


def test_a_trace_that_cannot_be_read_again_loses_its_timeline_with_the_reason():
    from agent_invariants import check_trace
    from agent_invariants.errors import TraceError
    from agent_invariants.reader import TraceFile
    from agent_invariants.timeline import Missing, collect

    report = check_trace(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}),
                         TraceFile(jsonl(events({"type": "tool.call", "tool": "shell.exec"})).encode()))

    def failing(check, path):
        raise TraceError("runs.otlp.jsonl", 7, "not a span")

    assert collect(report, failing).of(report) == Missing(
        "the trace could not be read again: runs.otlp.jsonl:7: not a span")


def test_a_batch_index_comes_first_and_sections_cannot_crowd_it_out(cli, write):
    """Twenty failing traces whose listed violations fill their budget, among 300 traces: the
    index still lists every trace."""
    write("c.json", contract({"id": "x" * 120, "kind": "deny_tool", "tool": "*"}))
    for number in range(300):
        write(f"traces/{number:03d}.jsonl", jsonl(events(*[{"type": "tool.call", "tool": "y" * 500}
                                                           for _ in range(100 if number < 20 else 0)],
                                                         {"type": "run.completed"})))
    page = written_page(cli, "check", "--contract", "c.json", "--trace", "traces")
    rows = page.all("nav")[0].all("tbody")[0].all("tr")
    assert [cells(row)[0] for row in rows] == [f"traces/{number:03d}.jsonl" for number in range(300)]
    assert "more violations are not listed" in page.by_id("s20").text()


def test_a_violation_of_the_whole_trace_is_shown_beside_the_timeline_and_listed(cli, write):
    write("c.json", contract({"id": "needs-outcome", "kind": "require_event", "match": {"type": "outcome.observed"},
                              "min": 1}))
    write("t.jsonl", jsonl(events({"type": "run.start"}, {"type": "run.completed"})))
    _, page = page_of(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    section = page.by_id("s1")
    (whole,) = [node for node in section.all("ul", cls="findings") if "require_event.min" in node.text()]
    assert whole.all("li")[0].text().startswith("✗ error needs-outcome require_event.min: ")
    assert all("pinned" not in (row.attrs.get("class") or "") for row in timeline_rows(section))
    assert "needs-outcome" in section.all("ol", cls="violations")[0].text()


def test_a_trace_behind_a_link_is_read_again_from_the_file_the_link_led_to(tmp_path):
    """The stamp names the file a link leads to: the second read takes that file even when the
    link is turned to another one (with the same seqs) in between, and a file replaced at that
    place loses the timeline."""
    import os

    from agent_invariants import check_trace
    from agent_invariants.timeline import Missing, collect, stamp

    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
    first, second, link = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "latest.jsonl"
    first.write_text(jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "shell.exec"})))
    second.write_text(jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "harmless.tool"})))
    link.symlink_to(first)
    stamps = {str(link): stamp(str(link))}
    report = check_trace(rules, str(link))
    link.unlink()
    link.symlink_to(second)
    drawn = collect(report, stamps=stamps).of(report)
    assert isinstance(drawn, Timeline) and [row.tool for row in drawn.rows] == [None, "shell.exec"]
    os.replace(second, first)   # another file where the link led
    assert collect(report, stamps=stamps).of(report) == Missing(
        "the trace changed after it was checked: check it again to see its timeline")


def test_past_the_kept_violations_the_count_of_undrawn_events_is_a_lower_bound(cli, write):
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    write("t.jsonl", jsonl(events(*[{"type": "tool.call", "tool": "shell.exec"} for _ in range(5000)])))
    notes = {}
    for cap in ("1000", "0"):   # the default keeps 1,000 violations; 0 keeps them all
        _, page = page_of(cli, "check", "--contract", "c.json", "--trace", "t.jsonl", "--max-violations", cap)
        notes[cap] = [note.text() for note in page.by_id("s1").all("p", cls="note") if "not drawn" in note.text()]
    assert notes == {"1000": ["At least 700 more events with findings are not drawn: each failing rule drew its first "
                              "ones."],
                     "0": ["4,700 more events with findings are not drawn: each failing rule drew its first ones."]}


def test_the_second_read_must_open_the_very_file_the_check_read(tmp_path):
    """The CLI stamps a single trace with the file its check opened (`TraceFile.opened`): when a
    link led the check to one file and the second read to another, even with the same seqs and
    the link turned back since, the timeline is dropped."""
    from agent_invariants import check_trace
    from agent_invariants.reader import TraceFile
    from agent_invariants.timeline import Missing, collect, stamp

    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "shell.exec"})))
    second.write_text(jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "harmless.tool"})))
    read = TraceFile(str(second))
    report = check_trace(rules, read)
    assert read.opened is not None and read.opened[1] == second.stat().st_ino
    before = stamp(str(first))
    assert before is not None
    stamps = {str(second): (before[0], *read.opened)}   # stamped as A, but the check opened B
    assert collect(report, stamps=stamps).of(report) == Missing(
        "the trace changed after it was checked: check it again to see its timeline")
    assert isinstance(collect(report, stamps={str(second): (str(second), *read.opened)}).of(report), Timeline)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -9)])
def test_a_signal_while_standard_input_is_copied_leaves_no_copy(tmp_path, signum, code):
    """The copy was removed on a bad trace and after the page, but not when SIGTERM or Ctrl-C came
    while the input was still being copied (outside review, hunt 22): README, exit 130 and 143
    leave no file. Nor does SIGKILL, which no handler sees: the copy has no name while it is
    read (`/proc/self/fd/N`)."""
    spool = tmp_path / "spool"
    spool.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_invariants", "check", "-c", str(REFUND / "contract.json"), "-t", "-",
         "-f", "html"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(spool)})
    assert process.stdin is not None
    process.stdin.write((REFUND / "candidate.jsonl").read_bytes())   # and more to come: the pipe stays open
    process.stdin.flush()
    deadline = time.monotonic() + 30
    while not _copies_open(process.pid, spool):   # the copy has begun
        assert time.monotonic() < deadline and process.poll() is None, process.stderr
        time.sleep(0.02)
    assert list(spool.iterdir()) == []   # open, but by no name
    process.send_signal(signum)
    output, errors = process.communicate(timeout=30)
    assert (process.returncode, output, errors) == (code, b"", b"")
    assert list(spool.iterdir()) == []


def _copies_open(pid: int, folder: Path) -> list[str]:
    """The copies of a trace in `folder` that process `pid` has open, by the names they had (not
    the file `tempfile` writes and removes to learn that a folder is writable)."""
    found = []
    for link in Path(f"/proc/{pid}/fd").iterdir():
        with suppress(OSError):
            target = os.readlink(link)
            if target.startswith(f"{folder}{os.sep}agent-invariants-trace-"):
                found.append(target)
    return found


def test_a_trace_in_a_pipe_is_kept_for_the_page_under_the_name_given(cli, tmp_path):
    import os
    import threading

    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    spool = tmp_path / "spool"
    spool.mkdir()

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as pipe:
            pipe.write((REFUND / "candidate.jsonl").read_text())

    writer = threading.Thread(target=feed)
    writer.start()
    result = cli("check", "--contract", str(REFUND / "contract.json"), "--trace", str(fifo), "--format", "html",
                 env={"TMPDIR": str(spool)})
    writer.join()
    assert result.returncode == 1, result.stderr
    section = parse(result.stdout).by_id("s1")
    assert section.all("h2")[0].all("code")[0].text() == str(fifo)
    assert len(timeline_rows(section)) == 14
    assert list(spool.iterdir()) == []
