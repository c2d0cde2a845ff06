"""The console in a real browser: Debian's chromium and chromedriver (installed by
scripts/setup-browser.sh and .ci/run), driven by Selenium pointed at those binaries, over a real
`serve --transport http` with the example fleet (bootstrapped live) and the chaos test server
(the one that can drift): log in, see the servers, run a discover, open the audit entry it wrote
and the card version it links, lift a quarantine from the page as an admin (the operator's `jobs
run` carries it out), open Rift; every page at phone width; the whole walk by keyboard alone.

With ``CARTOGRAPH_SCREENSHOTS=DIR`` each page is saved as DIR/<page>.png (docs/console/ holds
the committed ones: ``CARTOGRAPH_SCREENSHOTS=docs/console scripts/test.sh tests/console``)."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from accesskit import CARTOGRAPH, session
from consolekit import Console, serve_console
from proxykit import call

TASK = "what time is it in Tokyo right now"
CHROMIUM = Path("/usr/bin/chromium")
DRIVER = Path("/usr/bin/chromedriver")
pytestmark = [
    pytest.mark.skipif(
        not (CHROMIUM.is_file() and DRIVER.is_file()),
        reason="chromium and chromedriver absent: run scripts/setup-browser.sh",
    ),
    pytest.mark.fleet,
]


@pytest.fixture(scope="module")
def console(
    golden_home: Path, example_config: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Console]:
    """The example fleet, bootstrapped live, beside the chaos test server (which can drift)."""
    base = tmp_path_factory.mktemp("browser")
    with serve_console(golden_home, base, fleet=example_config) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.implicitly_wait(5)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: Any, name: str) -> None:
    where = os.environ.get("CARTOGRAPH_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(where) / f"{name}.png"))


def text_of(driver: Any) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "main").text


def wait_for(driver: Any, *needles: str, timeout: float = 20) -> str:
    """The page's main text once it holds every needle (the browser may still be on the page
    before: a stale element, or chromedriver's "unhandled inspector error" while the page it
    read from is replaced, is read again until the timeout)."""
    from selenium.common.exceptions import (
        StaleElementReferenceException,
        TimeoutException,
        WebDriverException,
    )
    from selenium.webdriver.support.ui import WebDriverWait

    seen = {"text": ""}

    def ready(d: Any) -> bool:
        try:
            seen["text"] = text_of(d)
        except StaleElementReferenceException:
            return False
        except WebDriverException as exc:  # navigation in flight; anything else times out
            if "inspector error" not in str(exc):
                raise
            return False
        return all(n in seen["text"] for n in needles)

    try:
        WebDriverWait(driver, timeout).until(ready)
    except TimeoutException:
        raise AssertionError(
            f"{needles} never showed; the page says: {seen['text'][:500]}"
        ) from None
    return seen["text"]


def test_an_operator_walks_the_console(console: Console, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    d: Any = browser
    d.get(f"{console.base}/console")
    assert d.current_url.endswith("/console/login")
    d.find_element(By.ID, "token").send_keys("cg_000000000000_wrong", Keys.ENTER)
    wait_for(d, "was not accepted")
    shot(d, "login")
    d.find_element(By.ID, "token").send_keys(console.keys["ops"], Keys.ENTER)
    wait_for(d, "Servers", "everything", "filesystem", "git", "time", "chaos")
    assert "signed in as ops" in d.find_element(By.TAG_NAME, "header").text

    d.find_element(By.LINK_TEXT, "git").click()
    wait_for(d, "signed card text", "git_status")
    shot(d, "server")

    d.find_element(By.LINK_TEXT, "discover").click()
    wait_for(d, "Discover playground")
    d.find_element(By.ID, "task").send_keys(TASK, Keys.ENTER)
    ranked = wait_for(d, "signed card text that ranked it")
    assert d.find_element(By.XPATH, "//tbody/tr[1]/td[2]/a").text.startswith("time/")
    assert "dense" in ranked and "bm25" in ranked
    shot(d, "discover")

    async def agent() -> None:  # an agent's discover and the call it makes, over MCP
        async with session(f"{console.base}/mcp", console.keys["ops"]) as client:
            await client.call_tool("discover", {"task": TASK, "k": 3})
            result = await call(client, "time", "get_current_time", {"timezone": "Asia/Tokyo"})
            assert not result.is_error

    anyio.run(agent)
    d.find_element(By.LINK_TEXT, "audit").click()
    wait_for(d, "Audit trail", TASK, "time/get_current_time")
    shot(d, "audit")
    called = d.find_element(By.XPATH, "//tr[td[2][text()='call']]")
    offered = called.find_element(By.PARTIAL_LINK_TEXT, "discover d-")
    answer_id = offered.text.split()[-1]
    offered.click()  # the discover answer that offered the tool
    wait_for(d, f"Showing the discover answer {answer_id} only", TASK)
    entry = d.find_element(By.ID, answer_id)
    assert TASK in entry.text and "ops" in entry.text and "time/get_current_time" in entry.text
    link = entry.find_element(By.PARTIAL_LINK_TEXT, "card v")  # the exact card that ranked it
    version, tool = link.text.split("v")[-1], link.get_attribute("href").rsplit("#", 1)[1]
    link.click()
    wait_for(d, f"Card version {version}", "signed card text")
    assert d.current_url.endswith(f"/versions/{version}#{tool}")
    assert d.find_element(By.ID, tool).is_displayed()
    shot(d, "card-version")
    d.find_element(By.LINK_TEXT, "servers").click()
    row = wait_for(d, "Servers", "ready")  # the session the agent's call opened
    assert "verified" in row and "none failed" in row
    shot(d, "servers")


def test_a_quarantine_is_shown_and_an_admin_lifts_it_from_the_page(
    console: Console, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    async def drift() -> None:
        async with session(f"{console.base}/mcp", console.keys["ops"]) as client:
            await call(client, "chaos", "mutate", {"what": "description"})
            held = await call(client, "chaos", "echo", {"text": "now?"})
            assert held.is_error

    anyio.run(drift)
    d: Any = browser
    d.get(f"{console.base}/console/quarantine")
    wait_for(d, "chaos/echo")
    row = d.find_element(By.XPATH, "//tr[td[1]/a[text()='chaos/echo']]")
    command = row.find_elements(By.TAG_NAME, "code")[-1].text
    assert command.startswith("cartograph bootstrap --server chaos --config ")
    assert not row.find_elements(By.TAG_NAME, "button")  # ops may see, not act
    d.find_element(By.XPATH, "//button[text()='log out']").click()
    d.find_element(By.ID, "token").send_keys(console.keys["boss"], Keys.ENTER)
    wait_for(d, "Servers")
    d.get(f"{console.base}/console/quarantine")
    wait_for(d, "chaos/echo")
    shot(d, "quarantine")
    d.find_element(By.XPATH, "//tr[td[1]/a[text()='chaos/echo']]//button").click()
    wait_for(d, "Queued job", "reattest", "queued")
    done = subprocess.run(
        [
            CARTOGRAPH,
            "--home",
            str(console.home),
            "jobs",
            "run",
            "--config",
            shlex.split(command)[-1],
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    d.get(f"{console.base}/console/jobs")
    wait_for(d, "done", "bootstrap --server chaos")
    shot(d, "jobs")
    for _ in range(50):  # the serving proxy sees the new card within its poll interval
        d.get(f"{console.base}/console/quarantine")
        if "Nothing is quarantined" in text_of(d):
            break
    wait_for(d, "Nothing is quarantined")


def test_rift_and_phone_width(console: Console, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    d: Any = browser
    d.get(f"{console.base}/console/rift")
    wait_for(d, "tools in clusters", "HIGH", "diagnosis")
    assert d.find_elements(By.CSS_SELECTOR, "main svg[role=img]")  # the margin picture
    cluster = d.find_element(By.XPATH, "//tbody/tr[td[3]]")  # risk, members with margins, why
    assert " vs " in cluster.text and "query:" in cluster.text
    shot(d, "rift")
    d.set_window_size(390, 844)
    pages = (
        "/console",
        "/console/servers/everything",
        "/console/servers/git/tools/git_status",
        "/console/discover?task=read+a+file",
        "/console/audit",
        "/console/quarantine",
        "/console/rift",
        "/console/jobs",
        "/console/nowhere",
    )
    try:
        for path in pages:
            d.get(console.base + path)
            width = d.execute_script("return [document.body.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"{path} overflows at phone width: {width}"
            if path == "/console":
                shot(d, "servers-phone")
    finally:
        d.set_window_size(1280, 900)


def test_the_console_is_usable_by_keyboard_alone(console: Console, browser: Any) -> None:
    """Tab and Enter only: log in, reach a page through the navigation, run a discover, follow
    a result; the focused element always shows a visible outline."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    d: Any = browser
    d.delete_all_cookies()
    d.get(f"{console.base}/console/login")
    keys = ActionChains(d)

    def focused() -> Any:
        return d.switch_to.active_element

    def tab_to(label: str, limit: int = 40) -> Any:
        for _ in range(limit):
            keys.send_keys(Keys.TAB).perform()
            here = focused()
            name = here.text or here.get_attribute("name") or here.get_attribute("id")
            if name == label:
                outline = here.value_of_css_property("outline-style")
                assert outline not in ("none", ""), f"{label} has no focus outline"
                return here
        raise AssertionError(f"{label!r} is not reachable with Tab")

    assert focused().get_attribute("id") == "token"  # the key field has the focus
    keys.send_keys(console.keys["ops"], Keys.ENTER).perform()
    wait_for(d, "Servers")
    tab_to("discover")
    keys.send_keys(Keys.ENTER).perform()
    wait_for(d, "Discover playground")
    tab_to("task")
    keys.send_keys("convert a time between two timezones", Keys.ENTER).perform()
    wait_for(d, "signed card text that ranked it")
    first = d.find_element(By.XPATH, "//tbody/tr[1]/td[2]/a").text  # server/tool
    tab_to(first)
    keys.send_keys(Keys.ENTER).perform()
    server, tool = first.split("/")
    wait_for(d, "signed card text (what discover reads)", tool)
    assert d.current_url.endswith(f"/console/servers/{server}/tools/{tool}")
