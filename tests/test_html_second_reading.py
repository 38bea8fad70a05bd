"""`--format html`, read from the README ("See the run: `--format html`", the action's HTML
artifact, the `--output` and batch paragraphs) and v1-semantics §7.5 (exit codes), as tests.

Each test quotes the sentence it checks. The page is read with `html.parser` (tests/html_page.py)."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.html_page import Node, dangling, parse
from tests.support import EXAMPLES, jsonl

REFUND = EXAMPLES / "refund-desk"
RECORD = EXAMPLES / "record"
IMPORTS = EXAMPLES / "imports"

HOSTILE = ("a\u202eb\u200b</script><img src=x onerror=alert(1)>\"'&\u2028\u2029\x00\ud800"
           "<!-- <script>x</script>")


def run(cli: Any, *args: str, stdin: str | bytes | None = None) -> tuple[int, str]:
    """The command with `--format html`: its exit code and the page on stdout."""
    result = cli(*args, "--format", "html", stdin=stdin)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout


def text_exit(cli: Any, *args: str, stdin: str | bytes | None = None) -> int:
    return int(cli(*args, "--format", "text", stdin=stdin).returncode)


def put(folder: Path, name: str, content: Any) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return name


def contract(*rules: dict[str, Any], version: int = 1, name: str = "spec") -> dict[str, Any]:
    return {"version": version, "name": name, "rules": list(rules)}


def calls(*tools: str) -> str:
    return jsonl([{"seq": i + 1, "type": "tool.call", "tool": tool} for i, tool in enumerate(tools)])


def rows(root: Node, section: str = "s1") -> list[Node]:
    """The timeline rows drawn for one trace (their ids are `<section>-e<n>`)."""
    return [node for node in root.all("tr") if re.fullmatch(rf"{section}-e\d+", node.attrs.get("id") or "")]


def refund_check(cli: Any) -> tuple[int, str]:
    return run(cli, "check", "--contract", str(REFUND / "contract.json"),
               "--trace", str(REFUND / "candidate.jsonl"))


def csp(root: Node) -> str:
    metas = [m for m in root.all("meta") if (m.attrs.get("http-equiv") or "").lower() == "content-security-policy"]
    assert len(metas) == 1
    return metas[0].attrs.get("content") or ""


# -- exit codes: those of the text format (v1-semantics §7.5) ------------------------------------

@pytest.mark.parametrize(("tools", "code"), [(("ok",), 0), (("bad",), 1)])
def test_check_exit_code_equals_text(cli: Any, tmp_path: Path, tools: tuple[str, ...], code: int) -> None:
    """§7.5: 0 with no error violation, 1 with one; the page's exit is the text format's."""
    put(tmp_path, "c.json", contract({"id": "no-bad", "kind": "deny_tool", "tool": "bad"}))
    put(tmp_path, "t.jsonl", calls(*tools))
    args = ("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert run(cli, *args)[0] == text_exit(cli, *args) == code


def test_bad_contract_exits_2_with_nothing_on_stdout(cli: Any, tmp_path: Path) -> None:
    """§7.5: anything thrown exits 2, stdout empty — in html as in text."""
    put(tmp_path, "c.json", {"version": 1, "name": "x", "rules": [{"id": "a", "kind": "nope"}]})
    put(tmp_path, "t.jsonl", calls("ok"))
    code, page = run(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    assert (code, page) == (2, "")


def test_compare_exit_code_equals_text(cli: Any) -> None:
    """§7.5: compare exits 1 with a regression, whatever the format."""
    args = ("compare", "--contract", str(REFUND / "contract.json"), "--baseline", str(REFUND / "baseline.jsonl"),
            "--candidate", str(REFUND / "candidate.jsonl"))
    assert run(cli, *args)[0] == text_exit(cli, *args) == 1


# -- one self-contained page -----------------------------------------------------------------------

def test_page_is_one_well_formed_utf8_document(cli: Any) -> None:
    """'writes one self-contained page': a doctype, one html element, nesting closed, UTF-8."""
    code, page = refund_check(cli)
    assert code == 1
    assert page.lower().startswith("<!doctype html>")
    root = parse(page)
    assert len(root.all("html")) == 1 and len(root.all("body")) == 1
    assert any((m.attrs.get("charset") or "").lower() == "utf-8" for m in root.all("meta"))


def test_csp_forbids_every_request(cli: Any) -> None:
    """'a Content-Security-Policy forbids every request'."""
    policy = csp(parse(refund_check(cli)[1]))
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    assert directives["default-src"] == ["'none'"]
    for name in ("connect-src", "img-src", "font-src", "form-action", "base-uri"):
        assert directives.get(name, ["'none'"]) == ["'none'"], name


def test_csp_names_the_one_style_and_script_by_hash(cli: Any) -> None:
    """'runs only its own inline script: ... names the one style sheet and script by hash'."""
    page = refund_check(cli)[1]
    policy = csp(parse(page))
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(scripts) == 1 and len(styles) == 1
    for body, directive in ((scripts[0], "script-src"), (styles[0], "style-src")):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert re.search(rf"{directive} 'sha256-{re.escape(digest)}'(;|$)", policy), directive


def test_page_loads_nothing(cli: Any) -> None:
    """'The page loads nothing': no src, no external link, every href an in-page anchor."""
    root = parse(refund_check(cli)[1])
    for node in root.walk():
        assert "src" not in node.attrs, node.tag
        assert node.tag not in ("link", "iframe", "img", "object", "embed", "base", "form")
        assert (node.attrs.get("href") or "#").startswith("#"), node.attrs
    assert dangling(root) == []


def test_every_violation_links_to_its_event_row(cli: Any) -> None:
    """'the trace as a timeline with each violation pinned to its event and its line'."""
    root = parse(refund_check(cli)[1])
    items = root.all("li")
    listed = [li for li in root.all("ol", "violations")[0].children if isinstance(li, Node)]
    assert len(listed) == 10 and items
    for item in listed:
        link = item.all("a")[0]
        row = root.by_id((link.attrs.get("href") or "#")[1:])
        assert row.tag == "tr"
        rule = item.all("code")[0].text()
        assert rule in row.text()
        line = re.search(r":(\d+)", link.text())
        assert line and f"{line.group(1)}" in [td.text() for td in row.all("td")]


def test_every_event_of_a_short_trace_is_a_row(cli: Any) -> None:
    """'Traces of up to 400 events are drawn whole' (candidate.jsonl has 14 events)."""
    assert len(rows(parse(refund_check(cli)[1]))) == 14


@pytest.mark.parametrize(("seq", "mark"), [(5, "approval"), (10, "stop"), (14, "run end"),
                                           (13, "claims completion"), (7, "failed")])
def test_events_are_marked_in_words(cli: Any, seq: int, mark: str) -> None:
    """'approvals, stops, outcomes, completion claims, failed results ... and the run's end are
    marked in words, not colour alone'."""
    row = rows(parse(refund_check(cli)[1]))[seq - 1]
    assert mark in row.text()


def test_an_asked_a_refused_and_a_revoked_approval_are_not_marked_as_approvals(cli: Any, tmp_path: Path) -> None:
    """Each approval event is marked for what it is: a request was marked "◆ approval", as a grant is."""
    events = [{"seq": 1, "type": "approval.requested", "approval_id": "a1"},
              {"seq": 2, "type": "approval.granted", "approval_id": "a1"},
              {"seq": 3, "type": "approval.granted", "approval_id": "a2", "approved": False},
              {"seq": 4, "type": "approval.revoked", "approval_id": "a1"}]
    trace = put(tmp_path, "t.jsonl", jsonl(events))
    spec = put(tmp_path, "c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell"}))
    code, page = run(cli, "check", "--contract", str(tmp_path / spec), "--trace", str(tmp_path / trace))
    assert code == 0
    assert [[mark.text() for mark in row.all("span") if "mark" in (mark.attrs.get("class") or "")]
            for row in rows(parse(page))] == [["◇ approval asked"], ["◆ approval"], ["◆ approval refused"],
                                              ["◇ approval revoked"]]


def test_calls_and_results_are_paired(cli: Any) -> None:
    """'Calls and their results are paired': the call names its result's seq and back."""
    drawn = rows(parse(refund_check(cli)[1]))
    assert "seq 4" in drawn[2].text() and "seq 3" in drawn[3].text()


def test_each_failing_rule_has_a_filter_button_and_passing_ones_none(cli: Any) -> None:
    """'Each failing rule's button narrows the timeline to that rule's events'."""
    root = parse(refund_check(cli)[1])
    table = root.all("table", "rules")[0]
    for tr in table.all("tr")[1:]:
        failing = "passed" not in tr.text()
        assert bool(tr.all("button")) == failing, tr.text()


def test_page_reads_without_scripts(cli: Any) -> None:
    """'Without scripts, the page reads the same (only the filter buttons need them)': the
    verdict, rules and violations are in the markup, not written by the script."""
    root = parse(refund_check(cli)[1])
    text = root.text()
    assert "failed" in root.all("h1")[0].text()
    assert "refunds-need-approval" in text and "Denied tool called: shell.exec." in text


# -- escaping ---------------------------------------------------------------------------------------

def hostile_page(cli: Any, tmp_path: Path) -> tuple[int, bytes]:
    put(tmp_path, "c.json", contract({"id": "known", "kind": "allow_tools", "tools": ["x"]}))
    event = {"seq": 1, "type": "tool.call", "tool": HOSTILE, "args": {"q": HOSTILE, HOSTILE: "</script>"}}
    (tmp_path / "t.jsonl").write_text(json.dumps(event) + "\n", encoding="utf-8")
    out = tmp_path / "p.html"
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "html", "--output", "p.html")
    return result.returncode, out.read_bytes()


def test_hostile_text_keeps_the_page_valid_utf8(cli: Any, tmp_path: Path) -> None:
    """'the page must stay valid UTF-8': a lone surrogate and NUL from the trace included."""
    code, data = hostile_page(cli, tmp_path)
    assert code == 1
    data.decode("utf-8", "strict")
    assert b"\x00" not in data


def test_hostile_text_adds_no_element(cli: Any, tmp_path: Path) -> None:
    """'Every text from a trace or contract is escaped': no img, one script, one style."""
    root = parse(hostile_page(cli, tmp_path)[1].decode())
    assert root.all("img") == []
    assert len(root.all("script")) == 1 and len(root.all("style")) == 1
    for node in root.walk():
        assert not any(name.startswith("on") for name in node.attrs), node.tag


def test_hostile_text_shows_invisible_characters_as_escapes(cli: Any, tmp_path: Path) -> None:
    """'control, bidirectional and invisible characters shown as escapes (`\\u202e`, `\\u200b`)'."""
    data = hostile_page(cli, tmp_path)[1]
    text = parse(data.decode()).text()
    for char in ("\u202e", "\u200b", "\u2028", "\u2029"):
        assert char.encode() not in data
        assert f"\\u{ord(char):04x}" in text
    assert "</script><img src=x onerror=alert(1)>\"'&" in text


def test_hostile_text_builds_no_link(cli: Any, tmp_path: Path) -> None:
    """'no link is built from it': every href still names an element of the page."""
    root = parse(hostile_page(cli, tmp_path)[1].decode())
    assert dangling(root) == []
    assert all(re.fullmatch(r"#[\w-]+", node.attrs.get("href") or "#x") for node in root.walk())


def test_contract_name_is_escaped_in_title_and_heading(cli: Any, tmp_path: Path) -> None:
    """'Every text from a trace or contract is escaped'."""
    put(tmp_path, "c.json", contract({"id": "a", "kind": "deny_tool", "tool": "x"}, name="n</title><b>x"))
    put(tmp_path, "t.jsonl", calls("ok"))
    code, page = run(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")
    root = parse(page)
    assert code == 0 and root.all("b") == []
    assert "n</title><b>x" in root.all("title")[0].text()


# -- determinism -----------------------------------------------------------------------------------

def test_same_inputs_give_byte_identical_pages_in_any_folder(cli: Any, tmp_path: Path) -> None:
    """Determinism: same inputs, byte-identical page; no absolute path, no random id."""
    pages = []
    for folder in ("one", "two"):
        where = tmp_path / folder
        shutil.copytree(REFUND, where)
        cli.cwd = where
        pages.append(run(cli, "check", "--contract", "contract.json", "--trace", "candidate.jsonl")[1])
    assert pages[0] == pages[1]
    assert str(tmp_path) not in pages[0]


def test_page_holds_no_timestamp(cli: Any, tmp_path: Path) -> None:
    """Determinism: a trace without times gives a page without a date or clock time."""
    put(tmp_path, "c.json", contract({"id": "a", "kind": "deny_tool", "tool": "x"}))
    put(tmp_path, "t.jsonl", calls("ok", "x"))
    page = run(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")[1]
    assert not re.search(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}:\d{2}", parse(page).text())


# -- --output ----------------------------------------------------------------------------------------

def test_output_writes_the_same_page_and_nothing_on_stdout(cli: Any, tmp_path: Path) -> None:
    """'report to stdout or to O (then nothing on stdout)' (v1 §8); the page is the same."""
    shutil.copytree(REFUND, tmp_path / "r")
    args = ("check", "--contract", "r/contract.json", "--trace", "r/candidate.jsonl", "--format", "html")
    to_file = cli(*args, "--output", "report.html")
    assert (to_file.returncode, to_file.stdout) == (1, "")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == cli(*args).stdout


def test_output_onto_the_trace_is_refused(cli: Any, tmp_path: Path) -> None:
    """'one of the command's own input files (a trace or the contract) is refused before anything
    is read' — exit 2, the trace untouched."""
    shutil.copytree(REFUND, tmp_path / "r")
    before = (tmp_path / "r/candidate.jsonl").read_bytes()
    result = cli("check", "--contract", "r/contract.json", "--trace", "r/candidate.jsonl", "--format", "html",
                 "--output", "r/candidate.jsonl")
    assert result.returncode == 2 and result.stdout == ""
    assert (tmp_path / "r/candidate.jsonl").read_bytes() == before


# -- standard input, pipes, imported traces ---------------------------------------------------------

def test_single_check_from_stdin_draws_its_timeline(cli: Any, tmp_path: Path) -> None:
    """'A single `check` of a trace on standard input ... first copies it to a private temporary
    file ... which the check reads and the page reads again'."""
    put(tmp_path, "c.json", contract({"id": "a", "kind": "deny_tool", "tool": "x"}))
    code, page = run(cli, "check", "--contract", "c.json", "--trace", "-", stdin=calls("ok", "x", "ok"))
    assert code == 1
    root = parse(page)
    assert len(rows(root)) == 3 and dangling(root) == []


def test_compare_with_candidate_on_stdin_has_no_timeline_and_says_why(cli: Any, tmp_path: Path) -> None:
    """'Elsewhere (`compare`, ...) such a trace gets a page without a timeline, saying why'."""
    shutil.copytree(REFUND, tmp_path / "r")
    args = ("compare", "--contract", "r/contract.json", "--baseline", "r/baseline.jsonl", "--candidate", "-")
    stdin = (REFUND / "candidate.jsonl").read_text(encoding="utf-8")
    code, page = run(cli, *args, stdin=stdin)
    assert code == text_exit(cli, *args, stdin=stdin) == 1
    root = parse(page)
    candidate = [n for n in root.walk() if re.fullmatch(r"s1c-e\d+", n.attrs.get("id") or "")]
    assert candidate == [] and dangling(root) == []
    assert re.search(r"standard input|stdin|pipe|read once|once", root.text(), re.I)


def test_imported_trace_shows_line_and_span(cli: Any) -> None:
    """'An imported trace (`--input-format`) shows, on each event, its line and span'."""
    args = ("check", "--contract", str(IMPORTS / "contract.json"), "--trace",
            str(IMPORTS / "pydantic-ai.otlp.jsonl"), "--input-format", "otel")
    code, page = run(cli, *args)
    assert code == text_exit(cli, *args)
    drawn = rows(parse(page))
    assert drawn and all("span" in row.text() for row in drawn)


def test_imported_trace_on_stdin_has_no_timeline(cli: Any) -> None:
    """'Elsewhere (..., `--input-format`) such a trace gets a page without a timeline, saying why'."""
    stdin = (IMPORTS / "pydantic-ai.otlp.jsonl").read_text(encoding="utf-8")
    args = ("check", "--contract", str(IMPORTS / "contract.json"), "--trace", "-", "--input-format", "otel")
    code, page = run(cli, *args, stdin=stdin)
    assert code == text_exit(cli, *args, stdin=stdin)
    root = parse(page)
    assert rows(root) == [] and dangling(root) == []


# -- compare ----------------------------------------------------------------------------------------

def compare_page(cli: Any) -> Node:
    return parse(run(cli, "compare", "--contract", str(REFUND / "contract.json"), "--baseline",
                     str(REFUND / "baseline.jsonl"), "--candidate", str(REFUND / "candidate.jsonl"))[1])


def test_compare_folds_the_baseline_away(cli: Any) -> None:
    """'then shows the candidate's timeline ..., and the baseline's below (folded away)'."""
    root = compare_page(cli)
    folds = root.all("details")
    assert len(folds) == 1 and "open" not in folds[0].attrs
    assert "baseline" in folds[0].text().lower()


def test_compare_marks_added_dropped_changed_calls(cli: Any) -> None:
    """'marks added, dropped and changed calls and the regressions' (baseline calls kb.search,
    the candidate shell.exec)."""
    text = compare_page(cli).text()
    assert "kb.search" in text and "shell.exec" in text
    assert re.search(r"removed|dropped", text) and "changed" in text and "regression" in text


def test_compare_regressions_link_to_candidate_events(cli: Any) -> None:
    """'the candidate's timeline with its regressions pinned': each link lands on a drawn row."""
    root = compare_page(cli)
    assert dangling(root) == []
    links = [a for a in root.all("a") if "candidate.jsonl" in a.text()]
    assert links and all(root.by_id((a.attrs["href"] or "#")[1:]).tag == "tr" for a in links)


# -- batches -------------------------------------------------------------------------------------------

def batch(tmp_path: Path, count: int, failing: set[int], events: int = 1) -> None:
    put(tmp_path, "c.json", contract({"id": "no-bad", "kind": "deny_tool", "tool": "bad"},
                                     {"id": "other", "kind": "deny_tool", "tool": "zz"}))
    for i in range(1, count + 1):
        tools = ["ok"] * (events - 1) + ["bad" if i in failing else "ok"]
        put(tmp_path, f"runs/t{i:02}.jsonl", calls(*tools))


def test_batch_draws_the_failing_trace_among_the_first_20(cli: Any, tmp_path: Path) -> None:
    """'A batch ... starts with an index of them; the first 20 are drawn in detail, failing ones
    first': with 22 traces and the last one failing, it is drawn; 20 are drawn."""
    batch(tmp_path, 22, {22})
    args = ("check", "--contract", "c.json", "--trace", "runs")
    code, page = run(cli, *args)
    assert code == text_exit(cli, *args) == 1
    root = parse(page)
    index = root.all("nav")
    assert index and all(f"runs/t{i:02}.jsonl" in index[0].text() for i in range(1, 23))
    drawn = root.all("section", "trace")
    assert len(drawn) == 20
    assert any("t22.jsonl" in section.all("h2")[0].text() for section in drawn)
    assert dangling(root) == []


def test_batch_lists_only_failing_rules(cli: Any, tmp_path: Path) -> None:
    """'each listing only its failing rules'."""
    batch(tmp_path, 2, {2})
    root = parse(run(cli, "check", "--contract", "c.json", "--trace", "runs")[1])
    listed = [tr.text() for table in root.all("table", "rules") for tr in table.all("tr")[1:]]
    assert len(listed) == 1 and "no-bad" in listed[0]


def test_batch_shares_the_whole_trace_allowance_among_the_traces_drawn(cli: Any, tmp_path: Path) -> None:
    """'A batch shares these limits out among the traces it draws in detail: each of n traces is
    drawn whole up to 400 ÷ n events (at least 100)'. Two traces of 150 events: whole; five: not."""
    batch(tmp_path, 2, {2}, events=150)
    root = parse(run(cli, "check", "--contract", "c.json", "--trace", "runs")[1])
    assert len(rows(root, "s2")) == 150
    batch(tmp_path, 5, {5}, events=150)
    root = parse(run(cli, "check", "--contract", "c.json", "--trace", "runs")[1])
    assert len(rows(root, "s5")) < 150


def test_batch_with_unreadable_trace_exits_like_text(cli: Any, tmp_path: Path) -> None:
    """'the worst exit code wins (2 if any trace was unreadable ...)' — html as text."""
    batch(tmp_path, 2, {2})
    put(tmp_path, "runs/t03.jsonl", "{not json\n")
    args = ("check", "--contract", "c.json", "--trace", "runs")
    assert run(cli, *args)[0] == text_exit(cli, *args) == 2


def test_compare_batch_draws_each_pair(cli: Any, tmp_path: Path) -> None:
    """'A batch (several traces or pairs) starts with an index of them'; exit as text."""
    batch(tmp_path, 2, set())
    for i in (1, 2):
        put(tmp_path, f"new/t{i:02}.jsonl", calls("ok") if i == 1 else calls("bad"))
    args = ("compare", "--contract", "c.json", "--baseline", "runs", "--candidate", "new")
    code, page = run(cli, *args)
    assert code == text_exit(cli, *args) == 1
    root = parse(page)
    assert root.all("nav") and dangling(root) == []


# -- contract versions, --partial, record ---------------------------------------------------------

def test_version_2_contract(cli: Any, tmp_path: Path) -> None:
    """`check --format html` of a version-2 contract: same exit as text, violation linked."""
    put(tmp_path, "c.json", contract({"id": "no-bad", "kind": "deny_tool", "tool": "bad"}, version=2))
    put(tmp_path, "t.jsonl", calls("ok", "bad"))
    args = ("check", "--contract", "c.json", "--trace", "t.jsonl")
    code, page = run(cli, *args)
    assert code == text_exit(cli, *args) == 1
    root = parse(page)
    assert dangling(root) == [] and "no-bad" in rows(root)[1].text()


def test_partial_inconclusive_does_not_fail(cli: Any, tmp_path: Path) -> None:
    """`--partial`: what only the end of a run decides is 'inconclusive' and does not fail; the
    page's exit is the text's (0). Spec silent on the page's wording: 'inconclusive' is expected."""
    put(tmp_path, "c.json", contract({"id": "done", "kind": "require_event", "match": {"type": "run.completed"}},
                                     version=2))
    put(tmp_path, "t.jsonl", calls("ok"))
    args = ("check", "--contract", "c.json", "--trace", "t.jsonl", "--partial")
    code, page = run(cli, *args)
    assert code == text_exit(cli, *args) == 0
    assert "inconclusive" in parse(page).text()


@pytest.mark.skipif(sys.platform == "win32", reason="record is POSIX only")
def test_record_draws_the_prevented_call(cli: Any, tmp_path: Path) -> None:
    """'`record --format html` draws the run it recorded, with the calls it prevented'."""
    result = cli("record", "--contract", str(RECORD / "contract.json"), "--fixtures",
                 str(RECORD / "fixtures.json"), "--enforce", "--fake-clock", "--out", "r.jsonl",
                 "--env", "AGENT_MODE=reckless", "--format", "html", "--", sys.executable, str(RECORD / "agent.py"))
    assert result.returncode == 1, result.stderr
    drawn = rows(parse(result.stdout))
    assert any("tool.denied" in row.text() and "prevented" in row.text() for row in drawn)


def test_stability_refuses_html(cli: Any) -> None:
    """'Every `--format` of `check` but `html` works' (stability): bad usage, exit 2 (§7.5)."""
    runs = [str(EXAMPLES / "report-shape" / f"run-{i}.jsonl") for i in (1, 2)]
    result = cli("stability", *runs, "--format", "html")
    assert result.returncode == 2 and result.stdout == ""


# -- long traces and many violations ------------------------------------------------------------

def long_trace(tmp_path: Path, total: int, bad_at: tuple[int, ...] = ()) -> None:
    put(tmp_path, "c.json", contract({"id": "no-bad", "kind": "deny_tool", "tool": "bad"}))
    put(tmp_path, "t.jsonl", calls(*["bad" if i + 1 in bad_at else "ok" for i in range(total)]))


@pytest.mark.parametrize(("total", "whole"), [(400, True), (401, False)])
def test_up_to_400_events_drawn_whole(cli: Any, tmp_path: Path, total: int, whole: bool) -> None:
    """'Traces of up to 400 events are drawn whole; a longer one shows its first and last 3 events
    ... every other stretch is one row that counts its events'."""
    long_trace(tmp_path, total)
    root = parse(run(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")[1])
    drawn = [int(row.all("td")[0].text()) for row in rows(root)]
    if whole:
        assert drawn == list(range(1, 401))
    else:
        assert drawn == [1, 2, 3, 399, 400, 401]
        assert re.search(r"398", root.all("table", "timeline")[0].text())


def test_finding_in_a_long_trace_drawn_with_3_either_side(cli: Any, tmp_path: Path) -> None:
    """'each event a finding points at ... with 3 events on either side'."""
    long_trace(tmp_path, 1000, bad_at=(500,))
    root = parse(run(cli, "check", "--contract", "c.json", "--trace", "t.jsonl")[1])
    drawn = [int(row.all("td")[0].text()) for row in rows(root)]
    assert drawn == [1, 2, 3, *range(497, 504), 998, 999, 1000]
    assert dangling(root) == []


def test_many_violations_page_stays_small_and_says_what_it_left_out(cli: Any, tmp_path: Path) -> None:
    """'A page stays under 5 MB whatever the report holds ... past them the page says what it
    left out, and it links only to what it drew'."""
    total = 20_000
    long_trace(tmp_path, total, bad_at=tuple(range(1, total + 1)))
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "html",
                 "--max-violations", "0", "--output", "p.html")
    assert result.returncode == 1
    data = (tmp_path / "p.html").read_bytes()
    assert len(data) < 5_000_000
    root = parse(data.decode())
    assert dangling(root) == []
    listed = root.all("ol", "violations")[0].all("li")
    assert 0 < len(listed) < total
    assert re.search(r"left out|not (drawn|listed|shown)|more", root.text())


def test_rule_table_bytes_are_bounded_and_the_page_says_so(cli: Any, tmp_path: Path) -> None:
    """'at most ... 0.5 MB of rule tables ... counted in bytes; past them the page says what it left
    out'. Spec ambiguous on MB: read as MiB (524,288 bytes), the rows of the table counted."""
    rules = [{"id": f"rule-{i:05}-{'x' * 100}", "kind": "deny_tool", "tool": "t*"} for i in range(4000)]
    put(tmp_path, "c.json", contract(*rules))
    put(tmp_path, "t.jsonl", calls("t1", "t2"))
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "html", "--output", "p.html")
    assert result.returncode == 1
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    body = re.search(r'<table class="rules">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert body and len(body.group(1).encode()) <= 524_288
    root = parse(page)
    assert dangling(root) == [] and re.search(r"rules are not shown|left out", root.text())


# -- pipes and determinism of the other pages ----------------------------------------------------

def bash(cli: Any, command: str) -> subprocess.CompletedProcess[str]:
    """`command` through bash (for a process substitution: a trace that is a pipe)."""
    exe = f"{sys.executable} -m agent_invariants"
    return subprocess.run(["bash", "-c", command.replace("AI", exe)], cwd=cli.cwd, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"})


@pytest.mark.skipif(shutil.which("bash") is None or not Path("/dev/fd").exists(), reason="needs bash and /dev/fd")
def test_pipe_in_a_batch_gets_no_timeline_and_says_why(cli: Any, tmp_path: Path) -> None:
    """'Elsewhere (..., several traces, ...) such a trace gets a page without a timeline, saying
    why' — the file beside it keeps its timeline."""
    batch(tmp_path, 2, {2})
    result = bash(cli, "AI check --contract c.json --trace runs/t01.jsonl --trace <(cat runs/t02.jsonl) "
                       "--format html")
    assert result.returncode == 1, result.stderr
    root = parse(result.stdout)
    assert len(rows(root, "s1")) == 1 and rows(root, "s2") == []
    assert "No timeline" in root.by_id("s2").text() and dangling(root) == []


@pytest.mark.skipif(shutil.which("bash") is None or not Path("/dev/fd").exists(), reason="needs bash and /dev/fd")
def test_single_check_of_a_pipe_draws_its_timeline(cli: Any, tmp_path: Path) -> None:
    """'A single `check` of a trace on standard input or in a pipe ... first copies it to a private
    temporary file'."""
    batch(tmp_path, 1, {1}, events=3)
    result = bash(cli, "AI check --contract c.json --trace <(cat runs/t01.jsonl) --format html")
    assert result.returncode == 1, result.stderr
    assert len(rows(parse(result.stdout))) == 3


@pytest.mark.parametrize("command", ["compare", "batch"])
def test_compare_and_batch_pages_are_deterministic(cli: Any, tmp_path: Path, command: str) -> None:
    """Determinism: same inputs, byte-identical page, in any folder; no absolute path."""
    pages = []
    for folder in ("one", "two"):
        cli.cwd = tmp_path / folder
        cli.cwd.mkdir()
        batch(cli.cwd, 3, {2})
        put(cli.cwd, "new/t01.jsonl", calls("bad"))
        if command == "compare":
            args: tuple[str, ...] = ("compare", "--contract", "c.json", "--baseline", "runs/t01.jsonl",
                                     "--candidate", "new/t01.jsonl")
        else:
            args = ("check", "--contract", "c.json", "--trace", "runs", "--jobs", "2")
        pages.append(run(cli, *args)[1])
    assert pages[0] == pages[1] and pages[0]
    assert str(tmp_path) not in pages[0]


def test_compare_lines_up_the_first_500_calls_and_escapes_tools(cli: Any, tmp_path: Path) -> None:
    """'the page lines up the two runs' first 500 tool calls side by side ... marks added, dropped
    and changed calls and the regressions'; a hostile tool name stays text."""
    hostile = "a\u202eb</td><img src=x onerror=1>"
    put(tmp_path, "c.json", contract({"id": "d", "kind": "deny_tool", "tool": "bad"}))
    put(tmp_path, "b.jsonl", calls(*["ok"] * 600))
    put(tmp_path, "n.jsonl", calls(*[hostile if i == 3 else "ok" for i in range(1, 601)]))
    args = ("compare", "--contract", "c.json", "--baseline", "b.jsonl", "--candidate", "n.jsonl")
    code, page = run(cli, *args)
    assert code == text_exit(cli, *args) == 1
    root = parse(page)
    assert root.all("img") == [] and dangling(root) == []
    table = root.all("table", "paths")[0]
    firsts = [tr.all("td")[0].text() for tr in table.all("tr") if tr.all("td")]
    seqs = [int(cell) for cell in firsts if cell.isdigit()]
    assert max(seqs) == 500
    changed = [tr.text() for tr in table.all("tr") if "a\\u202eb</td><img src=x onerror=1>" in tr.text()]
    assert len(changed) == 1 and "changed" in changed[0] and "regression" in changed[0]
