"""The HTML page in a real browser: headless Chromium (Debian's `chromium`, which `.ci/run`
installs) driven by Playwright, the page opened from disk with the network off.

It finds each violation's rule and line in the rendered text, clicks and types at the rule
filters and sees the timeline change, reads the page with scripts off and in dark mode, and takes
the screenshot the README shows (`AGENT_INVARIANTS_UPDATE_GOLDEN=1` writes it to `docs/`).
"""
from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import EXAMPLES, REPO


def _installed_by_ci() -> None:
    """`.ci/run` installs Chromium in the background, beside the Python install, and names a file
    that appears when the install has ended (`AGENT_INVARIANTS_CHROMIUM_INSTALLED`): wait for it,
    so that the browser test is not skipped because the install is still running."""
    ended = os.environ.get("AGENT_INVARIANTS_CHROMIUM_INSTALLED")
    deadline = time.monotonic() + 600
    while ended and not os.path.exists(ended) and time.monotonic() < deadline:
        time.sleep(0.5)


_installed_by_ci()
CHROMIUM = next((path for path in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if path and os.path.exists(path)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine: install Debian's chromium "
                                                         "package (`apt-get install chromium`; .ci/run does)")
# As root and in containers Chromium needs no sandbox; the rest keeps it from calling home.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--disable-quic"]
REFUND = EXAMPLES / "refund-desk"
SCREENSHOT = REPO / "docs" / "html-report.png"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


def make_page(cli, *args: str) -> tuple[Path, dict]:
    """The page and the JSON report of the same run."""
    result = cli(*args, "--format", "html", "--output", "page.html")
    assert result.returncode == 1, result.stderr
    report = json.loads(cli(*args, "--format", "json").stdout)
    return cli.cwd / "page.html", report


class Opened:
    """A page opened from disk in a context that cannot reach the network; every request and
    console message is kept."""

    def __init__(self, browser, path: Path, **context: object) -> None:
        self.context = browser.new_context(offline=True, **context)
        self.requests: list[str] = []
        self.console: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                           else route.abort())
        self.page = self.context.new_page()
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.goto(path.as_uri())

    def shown_seqs(self, table: str = "table.timeline") -> list[str]:
        return self.page.locator(f"{table} tbody tr:visible td:first-child").all_inner_texts()

    def close(self) -> None:
        self.context.close()


CHECK = ["check", "--contract", str(REFUND / "contract.json"), "--trace", str(REFUND / "candidate.jsonl")]


def test_each_violation_shows_its_rule_and_line_and_the_page_asks_the_network_for_nothing(browser, cli):
    path, report = make_page(cli, *CHECK)
    opened = Opened(browser, path)
    text = opened.page.inner_text("body")
    for violation in report["violations"]:
        assert violation["rule_id"] in text
        assert f"{report['trace']}:{violation['line']}" in text
    assert opened.requests == [path.as_uri()]
    assert opened.console == []   # a style or script the policy refused would be reported here
    opened.close()


def test_a_rule_filter_narrows_the_timeline_to_that_rule_and_clicking_again_shows_every_row(browser, cli):
    path, _ = make_page(cli, *CHECK)
    opened = Opened(browser, path)
    page = opened.page
    assert opened.shown_seqs() == [str(seq) for seq in range(1, 15)]
    button = page.locator("table.rules tr", has_text="stop-means-stop").get_by_role("button")
    button.click()
    assert opened.shown_seqs() == ["11", "12", "13"]
    assert button.get_attribute("aria-pressed") == "true"
    assert page.locator(".filter-status").inner_text() == \
        "Showing the 3 timeline rows with findings of the chosen rule."
    button.click()
    assert opened.shown_seqs() == [str(seq) for seq in range(1, 15)]
    assert button.get_attribute("aria-pressed") == "false"
    # from the keyboard: another rule's filter, then "Show every row"
    page.locator("table.rules tr", has_text="known-tools").get_by_role("button").focus()
    page.keyboard.press("Space")
    assert opened.shown_seqs() == ["11"]
    page.get_by_role("button", name="Show every row").focus()
    page.keyboard.press("Enter")
    assert opened.shown_seqs() == [str(seq) for seq in range(1, 15)]
    opened.close()


def test_compare_filters_the_regressions_in_the_lined_up_calls_and_the_timeline(browser, cli):
    path, _ = make_page(cli, "compare", "--contract", str(REFUND / "contract.json"), "--baseline",
                        str(REFUND / "baseline.jsonl"), "--candidate", str(REFUND / "candidate.jsonl"))
    opened = Opened(browser, path)
    page = opened.page
    assert opened.shown_seqs("table.paths") == ["3", "5", "9", "11", "14"]
    page.get_by_role("button", name="Only regressions").click()
    assert opened.shown_seqs("table.paths") == ["9", "14"]
    assert opened.shown_seqs("#s1c table.timeline") == ["6", "11", "13"]
    # a rule's filter narrows the candidate's timeline only: the lined-up calls and the baseline stay whole
    page.get_by_role("button", name="Show only the timeline rows of no-shell").click()
    assert opened.shown_seqs("#s1c table.timeline") == ["11"]
    assert opened.shown_seqs("table.paths") == ["3", "5", "9", "11", "14"]
    page.locator("#s1-baseline summary").click()
    assert len(opened.shown_seqs("#s1b table.timeline")) == 17
    assert page.locator(".filter-status").first.inner_text() == \
        "Showing the 1 timeline rows with findings of the chosen rule."
    assert opened.console == []
    opened.close()


def test_without_scripts_the_timeline_reads_the_same_and_the_filters_stay_hidden(browser, cli):
    path, report = make_page(cli, *CHECK)
    opened = Opened(browser, path, java_script_enabled=False)
    assert opened.shown_seqs() == [str(seq) for seq in range(1, 15)]
    assert opened.page.get_by_role("button").count() == 0   # hidden buttons are not in the accessibility tree
    assert report["violations"][0]["message"] in opened.page.inner_text("body")
    opened.close()


@pytest.mark.parametrize(("scheme", "background", "text"), [
    ("light", "rgb(255, 255, 255)", "rgb(31, 35, 40)"),
    ("dark", "rgb(13, 17, 23)", "rgb(230, 237, 243)"),
])
def test_the_page_follows_the_reader_light_or_dark_colour_scheme(browser, cli, scheme, background, text):
    path, _ = make_page(cli, *CHECK)
    opened = Opened(browser, path, color_scheme=scheme)
    colours = opened.page.evaluate("() => { const s = getComputedStyle(document.body); "
                                   "return [s.backgroundColor, s.color]; }")
    assert colours == [background, text]
    opened.close()


def test_a_screenshot_of_a_real_page(browser, cli, tmp_path):
    """The README's picture: the candidate's timeline, from the refused refunds to the calls after
    the run's stop, made from the example's files named as the README names them."""
    shutil.copytree(REFUND, cli.cwd / "examples" / "refund-desk")
    path, _ = make_page(cli, "check", "--contract", "examples/refund-desk/contract.json",
                        "--trace", "examples/refund-desk/candidate.jsonl")
    opened = Opened(browser, path, viewport={"width": 1000, "height": 800})
    top = opened.page.locator("#s1-timeline").bounding_box()["y"] - 12
    shot = tmp_path / "page.png"
    opened.page.screenshot(path=str(shot), full_page=True, clip={"x": 0, "y": top, "width": 1000, "height": 1250})
    opened.close()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == 1000 and int.from_bytes(data[20:24], "big") == 1250
    if os.environ.get("AGENT_INVARIANTS_UPDATE_GOLDEN"):
        SCREENSHOT.write_bytes(data)
    committed = SCREENSHOT.read_bytes()
    assert committed[:8] == b"\x89PNG\r\n\x1a\n" and len(committed) < 300_000
