"""The style sheet and the script the HTML page carries inline (it loads nothing).

The page's Content-Security-Policy names both by their SHA-256 hash, so the browser runs this
script and no other, applies this style sheet and no `style` attribute, and fetches nothing.
The script only adds the rule filters: with scripts off, the page shows the same timeline, and
the filter buttons stay hidden.
"""
from __future__ import annotations

import base64
import hashlib

__all__ = ("SCRIPT", "STYLE", "csp")

STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa;
  --line: #d1d9e0; --bad: #b3261e; --bad-bg: #ffebe9; --warn: #7a4b00; --warn-bg: #fff8c5;
  --good: #116329; --good-bg: #dafbe1; --note: #0550ae; --note-bg: #ddf4ff; --focus: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23; --line: #3d444d;
    --bad: #ff8182; --bad-bg: #3c1618; --warn: #e3b341; --warn-bg: #332701; --good: #56d364;
    --good-bg: #0f2d19; --note: #79c0ff; --note-bg: #0c2d4a; --focus: #58a6ff; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 90rem; padding: 1rem 1.5rem 3rem; color: var(--fg); background: var(--bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 0.9em; overflow-wrap: break-word; }
h1 { font-size: 1.5rem; margin: 0.5rem 0; }
h2 { font-size: 1.25rem; margin: 2rem 0 0.5rem; padding-top: 1rem; border-top: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.5rem 0 0.5rem; }
a { color: var(--note); }
a:focus-visible, button:focus-visible, summary:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.verdict { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 1rem; font-weight: 600; }
.good { color: var(--good); background: var(--good-bg); }
.bad { color: var(--bad); background: var(--bad-bg); }
.warn { color: var(--warn); background: var(--warn-bg); }
.info { color: var(--note); background: var(--note-bg); }
.muted, .note { color: var(--muted); }
.note { font-size: 0.9em; max-width: 60rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); }
th { background: var(--panel); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
.timeline td { font-size: 0.92em; }
.timeline td.tool { min-width: 9rem; }
.timeline td.detail { min-width: 12rem; }
.timeline td.found { min-width: 22rem; }
.timeline tr.pinned { border-left: 4px solid var(--bad); }
.timeline tr.pinned.warning { border-left-color: var(--warn); }
.timeline tr.gap td { color: var(--muted); background: var(--panel); font-style: italic; }
.timeline tr.result td.kind { padding-left: 1.5rem; }
.mark { display: inline-block; margin: 0.1rem 0.3rem 0.1rem 0; padding: 0 0.4rem; border-radius: 0.3rem;
  font-size: 0.85em; border: 1px solid var(--line); white-space: nowrap; }
ul.findings { list-style: none; margin: 0; padding: 0; }
ul.findings li { margin: 0.1rem 0; }
.finding { padding: 0 0.4rem; border-radius: 0.3rem; }
.detail { color: var(--muted); overflow-wrap: break-word; }
.paths td.same { color: var(--muted); }
.paths tr.added td, .paths tr.removed td, .paths tr.changed td { background: var(--warn-bg); }
.paths tr.regression td { background: var(--bad-bg); }
.filters { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; margin: 0.5rem 0; }
button { font: inherit; color: var(--fg); background: var(--panel); border: 1px solid var(--line);
  border-radius: 0.4rem; padding: 0.15rem 0.6rem; cursor: pointer; }
button[aria-pressed="true"] { color: var(--bg); background: var(--fg); }
[hidden] { display: none !important; }
ol.violations li { margin: 0.3rem 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
"""

SCRIPT = """
"use strict";
// A filter shows the rows of one rule (or, "reg", the regressions) in the tables that take it:
// a timeline ("all") takes every filter, the lined-up calls ("reg") only the regressions'.
for (const section of document.querySelectorAll("section.trace")) {
  const buttons = Array.from(section.querySelectorAll("button[data-rule]"));
  const tables = Array.from(section.querySelectorAll("table[data-filter]"));
  const status = section.querySelector(".filter-status");
  const show = (rule) => {
    let shown = 0;
    for (const table of tables) {
      const applies = rule === "" || table.dataset.filter === "all" || rule === "reg";
      for (const row of table.tBodies[0].rows) {
        const keep = !applies || rule === "" || (row.dataset.rules || "").split(" ").includes(rule);
        row.hidden = !keep;
        if (keep && table.dataset.filter === "all") shown += 1;
      }
    }
    for (const button of buttons) {
      button.setAttribute("aria-pressed", String(rule !== "" && button.dataset.rule === rule));
    }
    if (status) {
      status.textContent = rule === "" ? "Showing every row of the timeline."
        : "Showing the " + shown + " timeline rows with findings of the chosen rule.";
    }
  };
  for (const button of buttons) {
    button.hidden = false;
    button.addEventListener("click", () => {
      show(button.getAttribute("aria-pressed") === "true" || button.dataset.rule === "" ? "" : button.dataset.rule);
    });
  }
  for (const bar of section.querySelectorAll(".filters")) {
    bar.hidden = false;
  }
}
"""


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def csp() -> str:
    """The page's policy: nothing is fetched, and only this style sheet and script apply."""
    return (f"default-src 'none'; style-src {_digest(STYLE)}; script-src {_digest(SCRIPT)}; img-src 'none'; "
            "font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")
